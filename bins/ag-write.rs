//! ag-write: create or replace a file atomically.

fn main() -> std::process::ExitCode {
    ag::tool_protocol::tool_main::<ag::tools::write::WriteTool>()
}
