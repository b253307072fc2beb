//! ag-todo: the session's task list.

fn main() -> std::process::ExitCode {
    ag::tool_protocol::tool_main::<ag::tools::todo::TodoTool>()
}
