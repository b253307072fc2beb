//! ag-bash: a shell command with a time limit, an output cap and clean
//! cancellation; also the supervisor of its own background jobs.

fn main() -> std::process::ExitCode {
    ag::tools::mains::bash()
}
