//! ag-delete: delete a file, a symlink, or a directory when asked.

fn main() -> std::process::ExitCode {
    ag::tools::mains::delete()
}
