//! The tool binaries' `main`s. They live in the library, not in `bins/`, so
//! that each tool's generic [`tool_main`] is compiled once here, within the
//! library's code units, rather than again in every binary: that repeated
//! work was a tenth of a cold `cargo install`.

use std::process::ExitCode;

use crate::protocol::ToolDefinition;
use crate::tool_protocol::{definition as of, tool_main};

/// What `ag-<tool> --schema` prints, without starting the binary: ag-loop
/// and ag-mcp take it for the tool binaries installed beside them, which
/// are the same build (see [`crate::tool_protocol::exec::load_schemas`]).
/// `None` for a name that is not one of ag's tool binaries.
pub fn definition(tool: &str) -> Option<ToolDefinition> {
    use super::*;
    Some(match tool {
        "bash" => of::<bash::BashTool>(),
        "browser" => of::<browser::BrowserTool>(),
        "claude-code-cli" => of::<cli_agent::ClaudeCodeTool>(),
        "codex-cli" => of::<cli_agent::CodexCliTool>(),
        "gemini-cli" => of::<cli_agent::GeminiCliTool>(),
        "delete" => of::<delete::DeleteTool>(),
        "edit" => of::<edit::EditTool>(),
        "fetch" => of::<fetch::FetchTool>(),
        "find" => of::<find::FindTool>(),
        "git" => of::<git::GitTool>(),
        "grep" => of::<grep::GrepTool>(),
        "ls" => of::<ls::LsTool>(),
        "lsp" => of::<lsp::LspTool>(),
        "notify" => of::<notify::NotifyTool>(),
        "patch" => of::<patch::PatchTool>(),
        "read" => of::<read::ReadTool>(),
        "todo" => of::<todo::TodoTool>(),
        "write" => of::<write::WriteTool>(),
        _ => return None,
    })
}

/// ag-bash, which is also the supervisor of its own background jobs.
pub fn bash() -> ExitCode {
    if let Some(code) = super::bash::supervisor_main() {
        return code;
    }
    tool_main::<super::bash::BashTool>()
}

/// ag-browser, which is also its own warm server (the browser kept for
/// the session, see [`super::browser::server`]).
pub fn browser() -> ExitCode {
    if let Some(code) = crate::proc::warm::serve_main(super::browser::server::make) {
        return code;
    }
    tool_main::<super::browser::BrowserTool>()
}

/// ag-claude-code-cli.
pub fn claude_code_cli() -> ExitCode {
    tool_main::<super::cli_agent::ClaudeCodeTool>()
}

/// ag-codex-cli.
pub fn codex_cli() -> ExitCode {
    tool_main::<super::cli_agent::CodexCliTool>()
}

/// ag-gemini-cli.
pub fn gemini_cli() -> ExitCode {
    tool_main::<super::cli_agent::GeminiCliTool>()
}

/// ag-delete.
pub fn delete() -> ExitCode {
    tool_main::<super::delete::DeleteTool>()
}

/// ag-edit.
pub fn edit() -> ExitCode {
    tool_main::<super::edit::EditTool>()
}

/// ag-fetch.
pub fn fetch() -> ExitCode {
    tool_main::<super::fetch::FetchTool>()
}

/// ag-find.
pub fn find() -> ExitCode {
    tool_main::<super::find::FindTool>()
}

/// ag-git.
pub fn git() -> ExitCode {
    tool_main::<super::git::GitTool>()
}

/// ag-grep.
pub fn grep() -> ExitCode {
    tool_main::<super::grep::GrepTool>()
}

/// ag-ls.
pub fn ls() -> ExitCode {
    tool_main::<super::ls::LsTool>()
}

/// ag-lsp, which is also the warm host of the session's language servers.
pub fn lsp() -> ExitCode {
    if let Some(code) = super::lsp::host::serve_main() {
        return code;
    }
    tool_main::<super::lsp::LspTool>()
}

/// ag-notify.
pub fn notify() -> ExitCode {
    tool_main::<super::notify::NotifyTool>()
}

/// ag-patch.
pub fn patch() -> ExitCode {
    tool_main::<super::patch::PatchTool>()
}

/// ag-read.
pub fn read() -> ExitCode {
    tool_main::<super::read::ReadTool>()
}

/// ag-todo.
pub fn todo() -> ExitCode {
    tool_main::<super::todo::TodoTool>()
}

/// ag-write.
pub fn write() -> ExitCode {
    tool_main::<super::write::WriteTool>()
}
