//! The other coding agents that seed 003 makes tools of the agent
//! (`claude_code_cli`, `gemini_cli`, `codex_cli`): which command each
//! wraps, how its tool runs, and which of them the `full` tool set adds
//! (those whose command is installed). A tool list may also name one
//! outright.
//!
//! Each tool is an ag binary (`ag-claude-code-cli`, ...; see
//! [`crate::tools::cli_agent`]). The wrapped agent talks to its provider
//! with its own key, so its calls get what every other tool is refused:
//! the network, its provider's key variables (ag-loop withholds all
//! provider keys from tools) and its own state directories to write
//! (see [`CliAgent::state_paths`]).

use std::path::PathBuf;

use crate::tool_protocol::ToolProgram;

/// A CLI coding agent offered as a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CliAgent {
    /// The tool's name, as seed 003 gives it.
    pub tool: &'static str,
    /// The agent's command, looked for on `PATH`.
    pub command: &'static str,
    /// The ag tool binary that wraps it, without `ag-`.
    binary: &'static str,
    /// The key variables it is handed, when ag-loop has them.
    pub keys: &'static [&'static str],
    /// Where it keeps its configuration and state: a variable that names
    /// the directory, else the directory under `$HOME`, and files beside it
    /// in `$HOME` that it rewrites.
    state: (&'static str, &'static str, &'static [&'static str]),
}

impl CliAgent {
    /// The agent's tool, when its name is one.
    pub fn find(tool: &str) -> Option<&'static CliAgent> {
        CLI_AGENTS.iter().find(|a| a.tool == tool)
    }

    /// The key variables set in this process, to hand to the agent.
    pub fn key_env(&self) -> Vec<(String, String)> {
        self.keys
            .iter()
            .filter_map(|k| {
                std::env::var(k)
                    .ok()
                    .filter(|v| !v.is_empty())
                    .map(|v| (k.to_string(), v))
            })
            .collect()
    }

    /// The directory where the agent keeps its configuration and state
    /// (`$CLAUDE_CONFIG_DIR` or `~/.claude`, `$CODEX_HOME` or `~/.codex`,
    /// `~/.gemini`), and the files in `$HOME` it rewrites that exist
    /// (`~/.claude.json`): what its sandbox lets it write.
    pub fn state_paths(&self) -> Vec<PathBuf> {
        let (var, dir, files) = self.state;
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        let mut out = Vec::new();
        let named = (!var.is_empty())
            .then(|| std::env::var_os(var))
            .flatten()
            .filter(|v| !v.is_empty());
        match named {
            Some(d) => out.push(PathBuf::from(d)),
            None => out.extend(home.as_ref().map(|h| h.join(dir))),
        }
        if let Some(h) = &home {
            out.extend(files.iter().map(|f| h.join(f)).filter(|p| p.is_file()));
        }
        out
    }
}

/// Every CLI agent ag knows, in the order `full` offers them.
pub const CLI_AGENTS: &[CliAgent] = &[
    CliAgent {
        tool: "claude_code_cli",
        command: "claude",
        binary: "claude-code-cli",
        keys: &[
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDE_CODE_OAUTH_TOKEN",
        ],
        state: ("CLAUDE_CONFIG_DIR", ".claude", &[".claude.json"]),
    },
    CliAgent {
        tool: "gemini_cli",
        command: "gemini",
        binary: "gemini-cli",
        keys: &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
        state: ("", ".gemini", &[]),
    },
    CliAgent {
        tool: "codex_cli",
        command: "codex",
        binary: "codex-cli",
        keys: &["OPENAI_API_KEY", "CODEX_API_KEY"],
        state: ("CODEX_HOME", ".codex", &[]),
    },
];

/// The program that serves the tool `tool`, when it is a CLI agent's and
/// its ag binary is installed; `None` for every other tool.
pub fn program(tool: &str) -> Option<ToolProgram> {
    let agent = CliAgent::find(tool)?;
    ToolProgram::ag(agent.binary)
}

/// The CLI agent tools that `full` adds: those whose command is on `PATH`
/// and whose tool ag can run.
pub fn installed() -> Vec<String> {
    CLI_AGENTS
        .iter()
        .filter(|a| on_path(a.command) && program(a.tool).is_some())
        .map(|a| a.tool.to_string())
        .collect()
}

/// Whether `command` is an executable file in a directory of `PATH`.
fn on_path(command: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| {
        std::fs::metadata(dir.join(command))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_cli_agents_are_answered_for() {
        assert!(program("read").is_none());
        assert!(
            CliAgent::find("claude_code_cli")
                .is_some_and(|a| a.keys.contains(&"ANTHROPIC_API_KEY"))
        );
        assert!(CLI_AGENTS.iter().any(|a| a.tool == "codex_cli"));
        assert!(on_path("sh"));
        assert!(!on_path("no-such-command-anywhere"));
    }
}
