//! Structured output for ag-loop (`--output-schema`): the schema found among
//! the flag, the `--agent` identity and the config file, loaded and checked
//! before the first event, and the judgement of each final answer: valid
//! (its value goes into `agent_end` as `output`), wrong with a retry left
//! (the model is told every problem, as for a tool call, and asked again),
//! or wrong for the last time (the run ends as `invalid_output`, exit 1).
//!
//! The schema reaches the provider natively where the model supports it
//! (see [`crate::llm::structured`]); the answer is judged here either way.
//! Which source gives the schema (flag, identity, config) is weighed here
//! rather than in [`super::settings`], since a relative path is read from the
//! directory of the file that named it, which only set-up knows.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::args::Args;
use crate::agent::config::error::SetupError;
use crate::agent::config::file::Config;
use crate::agent::config::identity::Identity;
use crate::llm::structured::OutputSchema;

/// Retries after a final answer that does not match, when nobody says.
pub const DEFAULT_RETRIES: u32 = 2;

/// Where an output schema was given: the text (a file or inline JSON) and
/// the directory a relative file is read from.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaSource {
    /// A path, or inline JSON starting with `{`.
    pub spec: String,
    /// The directory relative paths start from: the process's for the flag,
    /// the config file's or the identity file's for theirs.
    pub base: PathBuf,
    /// Who gave it, for messages (`--output-schema`, `config `...``).
    pub origin: String,
}

/// A run's output contract: the compiled schema and the retries allowed.
#[derive(Debug)]
pub struct OutputSpec {
    /// The schema.
    pub schema: OutputSchema,
    /// Answers after the first that a wrong answer may be followed by.
    pub retries: u32,
}

impl OutputSpec {
    /// Loads and checks the schema; a broken one is a set-up error with the reason.
    pub fn load(source: &SchemaSource, retries: u32) -> Result<OutputSpec, SetupError> {
        let schema = OutputSchema::load(&source.spec, &source.base).map_err(|reason| {
            SetupError::OutputSchema {
                origin: source.origin.clone(),
                reason,
            }
        })?;
        Ok(OutputSpec { schema, retries })
    }

    /// Judges a final answer; `wrong_so_far` counts this run's earlier
    /// answers that did not match.
    pub fn judge(&self, answer: &str, wrong_so_far: u32) -> Judgement {
        let problems = match self.schema.check(answer) {
            Ok(value) => return Judgement::Valid(value),
            Err(p) => p,
        };
        let list = format!("- {}", problems.join("\n- "));
        if wrong_so_far >= self.retries {
            let tries = wrong_so_far + 1;
            return Judgement::Invalid(format!(
                "the final answer did not match the output schema after {tries} attempt{}:\n{list}",
                if tries == 1 { "" } else { "s" }
            ));
        }
        let left = self.retries - wrong_so_far;
        Judgement::Retry(format!(
            "Your final answer does not match the required output schema:\n{list}\n\
Answer again with exactly one JSON value valid against the schema and nothing else (no prose, no markdown \
fence). You may call tools first if you need more information. {left} more attempt{} allowed.\n\n\
The schema:\n{}",
            if left == 1 { " is" } else { "s are" },
            self.schema.schema
        ))
    }
}

/// What becomes of a final answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Judgement {
    /// It is valid: this value is the run's output.
    Valid(Value),
    /// It is wrong and a retry is left: this message goes to the model.
    Retry(String),
    /// It is wrong and no retry is left: the reason the run failed.
    Invalid(String),
}

/// The run's output contract from the flags, the `--agent` identity and
/// the config file (read from `config_path`); `None` when none gives a schema.
pub fn from_setup(
    args: &Args,
    config: &Config,
    ident: Option<&Identity>,
    config_path: &Path,
) -> Result<Option<OutputSpec>, SetupError> {
    let source = choose(
        args.output_schema.as_deref(),
        ident.and_then(|i| Some((i.output_schema.as_deref()?, i.path.as_path()))),
        config.output_schema.as_deref().map(|s| (s, config_path)),
    );
    let retries = args
        .output_retries
        .or(config.output_retries)
        .unwrap_or(DEFAULT_RETRIES);
    source.map(|s| OutputSpec::load(&s, retries)).transpose()
}

/// The schema given by the flag, else the identity, else the config file.
pub fn choose(
    flag: Option<&str>,
    ident: Option<(&str, &Path)>,
    config: Option<(&str, &Path)>,
) -> Option<SchemaSource> {
    if let Some(spec) = flag {
        return Some(SchemaSource {
            spec: spec.to_string(),
            base: std::env::current_dir().unwrap_or_default(),
            origin: "--output-schema".into(),
        });
    }
    let from = |(spec, file): (&str, &Path), what: &str| SchemaSource {
        spec: spec.to_string(),
        base: file.parent().map(Path::to_path_buf).unwrap_or_default(),
        origin: format!("`output_schema` of {what} `{}`", file.display()),
    };
    ident
        .map(|i| from(i, "agent"))
        .or_else(|| config.map(|c| from(c, "config")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spec(retries: u32) -> OutputSpec {
        let source = SchemaSource {
            spec: json!({"type": "object", "properties": {"ok": {"type": "boolean"}},
                         "required": ["ok"]})
            .to_string(),
            base: PathBuf::from("/"),
            origin: "--output-schema".into(),
        };
        OutputSpec::load(&source, retries).unwrap()
    }

    #[test]
    fn valid_then_retries_then_invalid() {
        let s = spec(2);
        assert_eq!(
            s.judge("{\"ok\": true}", 0),
            Judgement::Valid(json!({"ok": true}))
        );
        let Judgement::Retry(msg) = s.judge("{\"ok\": 1}", 0) else {
            panic!("a retry was left")
        };
        assert!(msg.contains("at `/ok`"), "{msg}");
        assert!(msg.contains("2 more attempts are allowed"), "{msg}");
        let Judgement::Retry(msg) = s.judge("yes", 1) else {
            panic!("a retry was left")
        };
        assert!(msg.contains("1 more attempt is allowed"), "{msg}");
        let Judgement::Invalid(why) = s.judge("{}", 2) else {
            panic!("no retry was left")
        };
        assert!(why.contains("after 3 attempts"), "{why}");
        assert!(why.contains("ok"), "{why}");
        // No retries at all: the first wrong answer ends the run.
        assert!(matches!(spec(0).judge("{}", 0), Judgement::Invalid(_)));
    }

    #[test]
    fn the_flag_wins_then_the_identity_then_the_config() {
        let ident = Some(("a.json", Path::new("/agents/rev.md")));
        let config = Some(("{}", Path::new("/home/.ag/config.toml")));
        assert_eq!(
            choose(Some("s.json"), ident, config).unwrap().spec,
            "s.json"
        );
        let i = choose(None, ident, config).unwrap();
        assert_eq!(
            (i.spec.as_str(), i.base.as_path()),
            ("a.json", Path::new("/agents"))
        );
        let c = choose(None, None, config).unwrap();
        assert_eq!(c.base, Path::new("/home/.ag"));
        assert!(choose(None, None, None).is_none());
    }

    #[test]
    fn a_broken_schema_names_where_it_came_from() {
        let source = SchemaSource {
            spec: "{\"type\": 3}".into(),
            base: PathBuf::from("/"),
            origin: "--output-schema".into(),
        };
        let e = OutputSpec::load(&source, 2).unwrap_err().to_string();
        assert!(e.starts_with("--output-schema: "), "{e}");
        assert!(e.contains("not a valid JSON Schema"), "{e}");
    }
}
