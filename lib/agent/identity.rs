//! Agent identities: markdown files whose front matter chooses the name,
//! role, model, reasoning, tools and sandbox, and whose body becomes the system
//! prompt. Looked up in the project's `.ag/agents/` (from the working
//! directory up to the repository root), then `$AG_HOME/agents/`.

use std::path::{Path, PathBuf};

use super::error::SetupError;

/// A loaded identity.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Identity {
    /// The name (the file's stem unless the front matter says otherwise).
    pub name: String,
    /// A one-line role, for `--list-agents`.
    pub role: Option<String>,
    /// `provider/model`.
    pub model: Option<String>,
    /// Reasoning effort (`off`, `low`, `medium`, `high`).
    pub reasoning: Option<String>,
    /// A tool set name or a list of tool names.
    pub tools: Option<Vec<String>>,
    /// The body: the system prompt.
    pub prompt: String,
    /// Where it was found.
    pub path: PathBuf,
    // The sandbox (issue 19): the front matter's words, checked by
    // `super::sandbox::resolve`.
    /// `sandbox`: auto, require or off.
    pub sandbox: Option<String>,
    /// `sandbox_mode`: workspace-write or read-only.
    pub sandbox_mode: Option<String>,
    /// `allow_net`: true or false.
    pub allow_net: Option<String>,
    /// Structured output: a JSON Schema file (relative to the identity's
    /// directory) or inline JSON that the final answer must match.
    pub output_schema: Option<String>,
    // Tools in another workspace (issue 22).
    /// `workspace`: a workspace URI; only a personal identity's counts.
    pub workspace: Option<String>,
}

/// The directories searched, first match wins.
pub fn search_dirs(cwd: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        dirs.push(d.join(".ag/agents"));
        if d.join(".git").exists() {
            break;
        }
        dir = d.parent();
    }
    dirs.push(crate::session::ag_home().join("agents"));
    dirs
}

/// Finds and loads an identity by name.
pub fn load(cwd: &Path, name: &str) -> Result<Identity, SetupError> {
    for dir in search_dirs(cwd) {
        let p = dir.join(format!("{name}.md"));
        if p.is_file() {
            let text = std::fs::read_to_string(&p).map_err(|source| SetupError::IdentityRead {
                path: p.clone(),
                source,
            })?;
            return parse(name, &text, &p);
        }
    }
    Err(SetupError::NoIdentity {
        name: name.to_string(),
        dirs: search_dirs(cwd),
    })
}

/// Every identity that can be found, nearest first, each name once.
pub fn list(cwd: &Path) -> Vec<Identity> {
    let mut out: Vec<Identity> = Vec::new();
    for dir in search_dirs(cwd) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect();
        paths.sort();
        for p in paths {
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            if out.iter().any(|i| i.name == stem) {
                continue;
            }
            if let Ok(text) = std::fs::read_to_string(&p)
                && let Ok(id) = parse(&stem, &text, &p)
            {
                out.push(id);
            }
        }
    }
    out
}

/// Parses `---` front matter of `key: value` lines, then the body.
pub fn parse(stem: &str, text: &str, path: &Path) -> Result<Identity, SetupError> {
    let mut id = Identity {
        name: stem.to_string(),
        path: path.to_path_buf(),
        ..Default::default()
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        id.prompt = text.trim().to_string();
        return Ok(id);
    };
    let Some(end) = rest.find("\n---") else {
        return Err(SetupError::IdentityUnclosed(path.to_path_buf()));
    };
    let (front, body) = rest.split_at(end);
    id.prompt = body.trim_start_matches("\n---").trim().to_string();
    for (n, line) in front.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(SetupError::IdentityLine {
                path: path.to_path_buf(),
                line: n + 2,
            });
        };
        let value = value
            .trim()
            .trim_matches('"')
            .trim_matches('\'')
            .to_string();
        match key.trim() {
            "name" => id.name = value,
            "role" | "description" => id.role = Some(value),
            "model" => id.model = Some(value),
            "reasoning" => id.reasoning = Some(value),
            "output_schema" => id.output_schema = Some(value),
            "tools" | "toolset" => {
                let list = value.trim_start_matches('[').trim_end_matches(']');
                id.tools = Some(
                    list.split(',')
                        .map(|s| s.trim().trim_matches('"').trim_matches('\'').to_string())
                        .filter(|s| !s.is_empty())
                        .collect(),
                );
            }
            "sandbox" => id.sandbox = Some(value),
            "sandbox_mode" | "sandbox-mode" => id.sandbox_mode = Some(value),
            "allow_net" | "allow-net" => id.allow_net = Some(value),
            "workspace" => id.workspace = Some(value),
            other => {
                return Err(SetupError::IdentityKey {
                    path: path.to_path_buf(),
                    line: n + 2,
                    key: other.to_string(),
                });
            }
        }
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_and_body() {
        let text = "---\nname: reviewer\nrole: reviews diffs\nmodel: openai/gpt-4o\ntools: [read, grep]\n---\nYou review code.\n";
        let id = parse("r", text, Path::new("r.md")).unwrap();
        assert_eq!(id.name, "reviewer");
        assert_eq!(id.model.as_deref(), Some("openai/gpt-4o"));
        assert_eq!(id.tools, Some(vec!["read".to_string(), "grep".to_string()]));
        assert_eq!(id.prompt, "You review code.");
        assert!(parse("r", "---\nbogus: 1\n---\nx", Path::new("r.md")).is_err());
        assert_eq!(
            parse("plain", "Just a prompt", Path::new("p.md"))
                .unwrap()
                .prompt,
            "Just a prompt"
        );
    }
}
