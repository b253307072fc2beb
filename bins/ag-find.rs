//! ag-find: find files by glob, most recently modified first.

fn main() -> std::process::ExitCode {
    ag::tool_protocol::tool_main::<ag::tools::find::FindTool>()
}
