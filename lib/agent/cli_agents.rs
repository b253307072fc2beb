//! The other coding agents that seed 003 makes tools of the agent
//! (`claude_code_cli`, `gemini_cli`, `codex_cli`): which command each
//! wraps, how its tool runs, and which of them the `full` tool set adds
//! (those whose command is installed). A tool list may also name one
//! outright.
//!
//! How a CLI agent's tool runs is [`program`]'s answer. Until ag ships the
//! wrapper for an agent, `program` has none for it, so `full` is `minimal`
//! and naming the tool is the usual "no such tool" error.

use crate::tool_protocol::ToolProgram;

/// A CLI coding agent offered as a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CliAgent {
    /// The tool's name, as seed 003 gives it.
    pub tool: &'static str,
    /// The agent's command, looked for on `PATH`.
    pub command: &'static str,
}

/// Every CLI agent ag knows, in the order `full` offers them.
pub const CLI_AGENTS: &[CliAgent] = &[
    CliAgent {
        tool: "claude_code_cli",
        command: "claude",
    },
    CliAgent {
        tool: "gemini_cli",
        command: "gemini",
    },
    CliAgent {
        tool: "codex_cli",
        command: "codex",
    },
];

/// The program that serves the tool `tool`, when it is a CLI agent's and
/// ag has its wrapper; `None` for every other tool.
pub fn program(tool: &str) -> Option<ToolProgram> {
    let _agent = CLI_AGENTS.iter().find(|a| a.tool == tool)?;
    // The wrapper that serves these tools is not part of ag yet.
    None
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
        assert!(CLI_AGENTS.iter().any(|a| a.tool == "codex_cli"));
        assert!(on_path("sh"));
        assert!(!on_path("no-such-command-anywhere"));
    }
}
