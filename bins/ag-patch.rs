//! ag-patch: apply unified diffs and begin/end patches across files, all or nothing.

fn main() -> std::process::ExitCode {
    ag::tools::mains::patch()
}
