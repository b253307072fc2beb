//! ag-ls: a directory as a tree.

fn main() -> std::process::ExitCode {
    ag::tools::mains::ls()
}
