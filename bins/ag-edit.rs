//! ag-edit: change a file in place: exact replacements, batches, line ranges.

fn main() -> std::process::ExitCode {
    ag::tools::mains::edit()
}
