//! ag-todo: the session's task list.

fn main() -> std::process::ExitCode {
    ag::tools::mains::todo()
}
