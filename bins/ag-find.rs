//! ag-find: find files by glob, most recently modified first.

fn main() -> std::process::ExitCode {
    ag::tool::tool_main::<ag::tools::find::FindTool>()
}
