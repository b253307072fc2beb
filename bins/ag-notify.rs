//! ag-notify: tell the person something without ending the turn.

fn main() -> std::process::ExitCode {
    ag::tool_protocol::tool_main::<ag::tools::notify::NotifyTool>()
}
