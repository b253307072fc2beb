//! ag-grep: search file contents for a regular expression.

fn main() -> std::process::ExitCode {
    ag::tool::tool_main::<ag::tools::grep::GrepTool>()
}
