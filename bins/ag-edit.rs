//! ag-edit: change a file in place: exact replacements, batches, line ranges.

fn main() -> std::process::ExitCode {
    ag::tool_protocol::tool_main::<ag::tools::edit::EditTool>()
}
