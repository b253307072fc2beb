//! ag-loop's config file, `$AG_HOME/config.toml` (or `--config FILE`):
//! defaults for what the command line can say, so that a user need not
//! repeat them. Flags given on the command line win; lists (`mcp`, `gate`,
//! `after`, `tool`) are added to.
//!
//! ```toml
//! model = "anthropic/claude-sonnet-4-5"
//! tools = ["full"]
//! mcp = ["npx -y @modelcontextprotocol/server-filesystem .", "https://mcp.example.com/mcp"]
//! gate = ["ag-gate --approval dangerous"]
//! after = []
//! tool = ["my-tool --flag"]
//! max_turns = 100
//! temperature = 0.2
//! max_failed_calls = 8
//! pass_env = ["OPENAI_API_KEY"]
//! idle_timeout = 300
//! sandbox = "auto"
//! sandbox_mode = "workspace-write"
//! allow_net = false
//! allow_hosts = ["docs.rs", "*.rust-lang.org"]
//! sandbox_write = ["~/.cargo"]
//! mcp_unconfined = false
//! output_schema = "answer.schema.json"
//! output_retries = 2
//! checkpoints = true
//! checkpoint_max_file_size = 10485760
//! workspace = "ssh://me@build-box/home/me/project"
//! ask_cmd = "scripts/auto-answer"
//! ask_default = "go with your best judgement"
//! ask_timeout = 600
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::error::SetupError;

/// The settings a config file may hold.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The model, `provider/model`.
    pub model: Option<String>,
    /// A tool set name or tool names.
    pub tools: Option<Vec<String>>,
    /// MCP servers: `CMD ARGS` or URLs.
    #[serde(default)]
    pub mcp: Vec<String>,
    /// Gates, in order.
    #[serde(default)]
    pub gate: Vec<String>,
    /// After-hooks, in order.
    #[serde(default)]
    pub after: Vec<String>,
    /// Extra tool commands.
    #[serde(default)]
    pub tool: Vec<String>,
    /// Model calls per prompt.
    pub max_turns: Option<u32>,
    /// Sampling temperature of every model call (`--temperature`).
    pub temperature: Option<f64>,
    /// Failed tool calls in a row that stop a prompt's run (0: no limit).
    pub max_failed_calls: Option<u32>,
    /// Provider key variables that tools, gates and hooks inherit anyway.
    #[serde(default)]
    pub pass_env: Vec<String>,
    /// Seconds a model response may stay silent before the attempt is
    /// retried (0: wait forever); a provider's `idle_timeout` in
    /// models.json wins over it.
    pub idle_timeout: Option<f64>,
    // The sandbox (issue 19).
    /// Confine tool calls: auto, require or off.
    pub sandbox: Option<crate::sandbox::Enforcement>,
    /// What confined calls may write: workspace-write or read-only.
    pub sandbox_mode: Option<crate::sandbox::Mode>,
    /// Let confined calls use the network.
    pub allow_net: Option<bool>,
    /// Hosts `fetch` reaches without asking (added to `--allow-host`).
    #[serde(default)]
    pub allow_hosts: Vec<String>,
    /// More directories confined calls may write (added to `--sandbox-write`).
    #[serde(default)]
    pub sandbox_write: Vec<PathBuf>,
    /// Start MCP stdio servers outside the sandbox.
    pub mcp_unconfined: Option<bool>,
    // Structured output (--output-schema).
    /// A JSON Schema the final answer must match: a file (relative to this
    /// config file's directory) or inline JSON starting with `{`.
    pub output_schema: Option<String>,
    /// Retries after a final answer that does not match the schema.
    pub output_retries: Option<u32>,
    // Checkpoints (issue 20).
    /// `false` turns checkpoints off, as `--no-checkpoints` does.
    pub checkpoints: Option<bool>,
    /// Files larger than this many bytes are left out of checkpoints.
    pub checkpoint_max_file_size: Option<u64>,
    // Tools in another workspace (issue 22).
    /// Run the ag tools in this workspace (`--workspace URI`).
    pub workspace: Option<String>,
    // Questions (issue 31).
    /// A program that answers the model's questions first (`--ask-cmd`).
    pub ask_cmd: Option<String>,
    /// The answer when no person answers (`--ask-default`).
    pub ask_default: Option<String>,
    /// Seconds a person's answer is waited for (`--ask-timeout`).
    pub ask_timeout: Option<f64>,
}

/// The largest config file read.
const MAX_CONFIG: usize = 1024 * 1024;

/// The default config file.
pub fn default_path() -> PathBuf {
    crate::session::ag_home().join("config.toml")
}

/// Reads a config file; a missing default file is an empty config.
pub fn load(path: Option<&Path>) -> Result<Config, SetupError> {
    let (path, explicit) = match path {
        Some(p) => (p.to_path_buf(), true),
        None => (default_path(), false),
    };
    // The person's own file, read as any file that is not a project's
    // (wherever its links lead), but a regular file of bounded size: a
    // config is a few lines, and one that is not cannot be cut and still
    // mean what it says.
    let text = match crate::fsutil::read_small_text(&path, MAX_CONFIG, None) {
        Ok(t) if t.cut_from.is_some() => {
            return Err(SetupError::ConfigRead {
                path,
                source: std::io::Error::other(format!(
                    "it is larger than the {} a config file may have; a config is a few lines of settings",
                    crate::tools::bash::human_bytes(MAX_CONFIG as u64)
                )),
            });
        }
        Ok(t) => t.text,
        Err(e) if e.is_missing() && !explicit => {
            return Ok(Config::default());
        }
        Err(crate::fsutil::SmallTextError::Io(source)) => {
            return Err(SetupError::ConfigRead { path, source });
        }
        Err(e) => {
            return Err(SetupError::ConfigRead {
                path,
                source: std::io::Error::other(e),
            });
        }
    };
    toml::from_str(&text).map_err(|e| SetupError::ConfigParse {
        path,
        source: Box::new(e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects_unknown_keys() {
        let c: Config =
            toml::from_str("model = \"a/b\"\nmcp = [\"srv --x\"]\nmax_turns = 3\n").unwrap();
        assert_eq!(c.model.as_deref(), Some("a/b"));
        assert_eq!(c.mcp, vec!["srv --x"]);
        assert_eq!(c.max_turns, Some(3));
        assert!(toml::from_str::<Config>("modle = \"x\"").is_err());
        let c: Config = toml::from_str("pass_env = [\"OPENAI_API_KEY\"]\n").unwrap();
        assert_eq!(c.pass_env, vec!["OPENAI_API_KEY"]);
    }
}
