//! ag-ls: a directory as a tree.

fn main() -> std::process::ExitCode {
    ag::tool::tool_main::<ag::tools::ls::LsTool>()
}
