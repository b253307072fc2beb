//! ag-session: list, show, resume, fork, export and account sessions.

fn main() -> std::process::ExitCode {
    ag::session::cli::main()
}
