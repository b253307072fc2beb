//! ag-find: find files by glob, most recently modified first.

fn main() -> std::process::ExitCode {
    ag::tools::mains::find()
}
