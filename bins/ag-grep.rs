//! ag-grep: search file contents for a regular expression.

fn main() -> std::process::ExitCode {
    ag::tools::mains::grep()
}
