//! ag-read: a text file with line numbers, paginated.

fn main() -> std::process::ExitCode {
    ag::cli::tool_main::<ag::tools::read::ReadTool>()
}
