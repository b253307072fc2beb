//! ag-claude-code-cli: hand a coding task to Claude Code (the tool `claude_code_cli`).

fn main() -> std::process::ExitCode {
    ag::tools::mains::claude_code_cli()
}
