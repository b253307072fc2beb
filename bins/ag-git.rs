//! ag-git: git status, diff, commit and log as structured results.

fn main() -> std::process::ExitCode {
    ag::tools::mains::git()
}
