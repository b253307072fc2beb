//! ag-notify: tell the person something without ending the turn.

fn main() -> std::process::ExitCode {
    ag::tools::mains::notify()
}
