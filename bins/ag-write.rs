//! ag-write: create or replace a file atomically.

fn main() -> std::process::ExitCode {
    ag::tools::mains::write()
}
