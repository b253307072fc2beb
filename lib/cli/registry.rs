//! Every binary's clap command, for the man pages and shell completions
//! that are generated from them.

use clap::Command;

use super::tool_command;
use crate::tools;

/// The command of every binary, in the order the README lists them.
pub fn all_commands() -> Vec<Command> {
    vec![
        tool_command::<tools::read::ReadTool>(),
        crate::llm::cli::command(),
    ]
}
