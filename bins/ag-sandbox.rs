//! ag-sandbox: runs a command confined by the kernel (Landlock, seccomp).

fn main() -> std::process::ExitCode {
    ag::sandbox::cli::main()
}
