//! The gate's config file (TOML): a default approval mode, allow and deny
//! lists of tools, and rules that match a bash command by regex or a path
//! by pattern and allow, ask or deny. Loaded once at start-up; its regexes
//! are compiled then, and only when the file has rules.
//!
//! ```toml
//! approval = "dangerous"
//! allow = ["read", "grep", "find", "ls"]
//! deny = ["web_fetch"]
//!
//! [[rule]]
//! command = '^npm publish\b'
//! action = "deny"
//! reason = "releases are published by CI"
//!
//! [[rule]]
//! tool = ["write", "edit"]
//! path = ".env*"
//! action = "ask"
//! reason = "secrets file"
//! ```

use std::path::{Path, PathBuf};

use regex::Regex;
use serde::Deserialize;

use super::Finding;
use super::glob::PathPattern;

/// The name of the default config file under `$AG_HOME`.
pub const FILE_NAME: &str = "gate.toml";

/// A failure to load the config file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("cannot read the config file `{path}`: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid TOML or has unknown keys.
    #[error("the config file `{path}` is invalid: {message}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// A rule cannot be used.
    #[error("rule {index} of `{path}` is invalid: {message}")]
    Rule {
        /// The file.
        path: PathBuf,
        /// The rule's number, from 1.
        index: usize,
        /// What is wrong.
        message: String,
    },
}

/// What a rule does to the calls it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Let the call run without asking, even when the classifier flags it
    /// (a deny rule or the deny list still wins).
    Allow,
    /// Ask a person first.
    Ask,
    /// Refuse the call; the reason goes to the model.
    Deny,
}

/// When a person is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Approval {
    /// Never ask: allow everything that is not denied.
    Never,
    /// Ask for the calls the classifier flags and the `ask` rules match.
    Dangerous,
    /// Ask for every call that the allow list and `allow` rules do not cover.
    Always,
}

/// The file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    approval: Option<Approval>,
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
    #[serde(default)]
    rule: Vec<RawRule>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    tool: Option<OneOrMany>,
    command: Option<String>,
    path: Option<String>,
    action: Action,
    reason: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

/// A loaded config.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// The approval mode when `--approval` is not given.
    pub approval: Option<Approval>,
    /// Tools always allowed.
    pub allow: Vec<String>,
    /// Tools always denied.
    pub deny: Vec<String>,
    /// The rules, in file order.
    pub rules: Vec<Rule>,
}

/// One rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The tools it applies to; empty for every tool.
    pub tools: Vec<String>,
    /// A regex matched against the bash command and each command in it.
    pub command: Option<Regex>,
    /// A pattern matched against the paths the call names or writes.
    pub path: Option<PathPattern>,
    /// What it does.
    pub action: Action,
    /// The reason a decision carries.
    pub reason: String,
}

impl Rule {
    /// True when the rule applies to calls of `tool`.
    pub fn applies_to(&self, tool: &str) -> bool {
        self.tools.is_empty() || self.tools.iter().any(|t| t == tool || t == "*")
    }

    /// True when the call matches every condition the rule has: the
    /// command regex matches the whole command or one of the commands in
    /// it, the path pattern matches one of the paths.
    pub fn matches(
        &self,
        tool: &str,
        command: Option<&str>,
        segments: &[String],
        paths: &[PathBuf],
        cwd: &Path,
    ) -> bool {
        if !self.applies_to(tool) {
            return false;
        }
        let command_ok = self.command.as_ref().is_none_or(|re| {
            command.is_some_and(|c| re.is_match(c)) || segments.iter().any(|s| re.is_match(s))
        });
        let path_ok = self
            .path
            .as_ref()
            .is_none_or(|p| paths.iter().any(|path| p.matches(path, cwd)));
        command_ok && path_ok
    }

    /// True when this (allow) rule covers a finding: its regex matches the
    /// command the finding is about and its pattern the path.
    pub fn covers(&self, finding: &Finding, segments: &[String], cwd: &Path) -> bool {
        let command_ok = self.command.as_ref().is_none_or(|re| {
            finding
                .segment
                .and_then(|i| segments.get(i))
                .is_some_and(|s| re.is_match(s))
        });
        let path_ok = self.path.as_ref().is_none_or(|p| {
            finding
                .path
                .as_ref()
                .is_some_and(|path| p.matches(path, cwd))
        });
        command_ok && path_ok
    }
}

/// `$AG_HOME/gate.toml` (`AG_HOME` defaults to `~/.ag`), when it exists.
pub fn default_path() -> Option<PathBuf> {
    Some(crate::session::ag_home().join(FILE_NAME)).filter(|p| p.is_file())
}

/// Reads and checks a config file; `~/` in path patterns means `home`.
pub fn load(path: &Path, home: Option<&Path>) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text, path, home)
}

/// Parses config text; `path` names the file in errors.
pub fn parse(text: &str, path: &Path, home: Option<&Path>) -> Result<Config, ConfigError> {
    let raw: RawConfig = toml::from_str(text).map_err(|e| ConfigError::Syntax {
        path: path.to_path_buf(),
        message: e.message().to_string(),
    })?;
    let mut rules = Vec::with_capacity(raw.rule.len());
    for (i, r) in raw.rule.into_iter().enumerate() {
        let rule_error = |message: String| ConfigError::Rule {
            path: path.to_path_buf(),
            index: i + 1,
            message,
        };
        let mut tools: Vec<String> = match r.tool {
            None => Vec::new(),
            Some(OneOrMany::One(t)) => vec![t],
            Some(OneOrMany::Many(ts)) => ts,
        };
        tools = tools.iter().filter_map(|t| tool_name(t)).collect();
        // A command regex is about bash unless the rule says otherwise.
        if tools.is_empty() && r.command.is_some() {
            tools.push("bash".into());
        }
        let command = match &r.command {
            None => None,
            Some(re) => Some(
                Regex::new(re)
                    .map_err(|e| rule_error(format!("`command` is not a valid regex: {e}")))?,
            ),
        };
        let pattern = match &r.path {
            None => None,
            Some(p) => Some(PathPattern::new(p, home).map_err(rule_error)?),
        };
        let reason = match r.reason.filter(|s| !s.trim().is_empty()) {
            Some(reason) => reason,
            None => {
                let what = match (&r.command, &r.path) {
                    (Some(c), _) => format!("command `{c}`"),
                    (None, Some(p)) => format!("path `{p}`"),
                    (None, None) => format!("tool `{}`", tools.join(",")),
                };
                format!("gate rule {} ({what})", i + 1)
            }
        };
        rules.push(Rule {
            tools,
            command,
            path: pattern,
            action: r.action,
            reason,
        });
    }
    Ok(Config {
        approval: raw.approval,
        allow: raw.allow.iter().filter_map(|t| tool_name(t)).collect(),
        deny: raw.deny.iter().filter_map(|t| tool_name(t)).collect(),
        rules,
    })
}

/// A tool name as rules and lists use it: trimmed, `ag-` prefix removed
/// (`ag-bash` and `bash` are the same tool); None when empty.
pub fn tool_name(name: &str) -> Option<String> {
    let name = name.trim();
    let name = name.strip_prefix("ag-").unwrap_or(name);
    (!name.is_empty()).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> Result<Config, ConfigError> {
        parse(text, Path::new("gate.toml"), Some(Path::new("/home/me")))
    }

    #[test]
    fn a_full_config_loads() {
        let c = parse_str(
            r#"
approval = "always"
allow = ["read", "ag-grep", " "]
deny = ["web_fetch"]

[[rule]]
command = '^npm publish\b'
action = "deny"
reason = "releases are published by CI"

[[rule]]
tool = ["write", "edit"]
path = "~/.ssh"
action = "ask"

[[rule]]
tool = "*"
action = "allow"
"#,
        )
        .unwrap();
        assert_eq!(c.approval, Some(Approval::Always));
        assert_eq!(c.allow, vec!["read", "grep"]);
        assert_eq!(c.deny, vec!["web_fetch"]);
        assert_eq!(c.rules.len(), 3);
        assert_eq!(c.rules[0].tools, vec!["bash"]);
        assert_eq!(c.rules[0].reason, "releases are published by CI");
        assert_eq!(c.rules[1].reason, "gate rule 2 (path `~/.ssh`)");
        let cwd = Path::new("/work/p");
        let segs = vec!["cd web".to_string(), "npm publish --tag x".to_string()];
        assert!(c.rules[0].matches(
            "bash",
            Some("cd web && npm publish --tag x"),
            &segs,
            &[],
            cwd
        ));
        assert!(!c.rules[0].matches(
            "bash",
            Some("npm run publish"),
            &["npm run publish".into()],
            &[],
            cwd
        ));
        assert!(!c.rules[0].matches("write", None, &segs, &[], cwd));
        let key = PathBuf::from("/home/me/.ssh/id_rsa");
        assert!(c.rules[1].matches("edit", None, &[], std::slice::from_ref(&key), cwd));
        assert!(!c.rules[1].matches("read", None, &[], &[key], cwd));
        assert!(c.rules[2].matches("anything", None, &[], &[], cwd));
    }

    #[test]
    fn mistakes_are_reported_with_their_place() {
        let e = parse_str("aproval = \"never\"").unwrap_err().to_string();
        assert!(e.contains("aproval"), "{e}");
        let e = parse_str("approval = \"sometimes\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("sometimes"), "{e}");
        let e = parse_str("[[rule]]\ncommand = 'a('\naction = \"deny\"")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("rule 1 of `gate.toml` is invalid: `command` is not a valid regex"),
            "{e}"
        );
        let e = parse_str("[[rule]]\npath = 'a['\naction = \"deny\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("rule 1"), "{e}");
        let e = parse_str("[[rule]]\naction = \"maybe\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("maybe"), "{e}");
        assert!(parse_str("").unwrap().rules.is_empty());
    }
}
