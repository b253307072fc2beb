//! ag-git: git status, diff, commit and log as structured results.

fn main() -> std::process::ExitCode {
    ag::tool_protocol::tool_main::<ag::tools::git::GitTool>()
}
