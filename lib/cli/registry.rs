//! Every binary's clap command, for the man pages and shell completions
//! that are generated from them.

use clap::Command;

use super::tool_command;
use crate::tools;

/// The command of every binary, in the order the README lists them.
pub fn all_commands() -> Vec<Command> {
    vec![
        tool_command::<tools::read::ReadTool>(),
        tool_command::<tools::write::WriteTool>(),
        tool_command::<tools::edit::EditTool>(),
        tool_command::<tools::patch::PatchTool>(),
        tool_command::<tools::delete::DeleteTool>(),
        tool_command::<tools::bash::BashTool>(),
        tool_command::<tools::grep::GrepTool>(),
        tool_command::<tools::find::FindTool>(),
        tool_command::<tools::ls::LsTool>(),
        tool_command::<tools::todo::TodoTool>(),
        tool_command::<tools::git::GitTool>(),
        tool_command::<tools::notify::NotifyTool>(),
        <crate::gate::cli::Args as clap::CommandFactory>::command(),
        <crate::mcp::cli::Args as clap::CommandFactory>::command(),
        crate::llm::cli::command(),
        <crate::agent::cli::Args as clap::CommandFactory>::command(),
        <crate::session::cli::Args as clap::CommandFactory>::command(),
    ]
}
