//! ag-read: a text file with line numbers, paginated.

fn main() -> std::process::ExitCode {
    ag::tools::mains::read()
}
