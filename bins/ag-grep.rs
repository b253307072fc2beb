//! ag-grep: search file contents for a regular expression.

fn main() -> std::process::ExitCode {
    ag::tool_protocol::tool_main::<ag::tools::grep::GrepTool>()
}
