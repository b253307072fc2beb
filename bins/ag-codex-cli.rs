//! ag-codex-cli: hand a coding task to Codex CLI (the tool `codex_cli`).

fn main() -> std::process::ExitCode {
    ag::tool_protocol::tool_main::<ag::tools::cli_agent::CodexCliTool>()
}
