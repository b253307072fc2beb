//! ag-ls: a directory as a tree.

fn main() -> std::process::ExitCode {
    ag::tool_protocol::tool_main::<ag::tools::ls::LsTool>()
}
