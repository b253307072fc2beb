//! ag-patch: apply unified diffs and begin/end patches across files, all or nothing.

fn main() -> std::process::ExitCode {
    ag::tool_protocol::tool_main::<ag::tools::patch::PatchTool>()
}
