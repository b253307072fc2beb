//! ag-read: a text file with line numbers, paginated.

fn main() -> std::process::ExitCode {
    ag::tool_protocol::tool_main::<ag::tools::read::ReadTool>()
}
