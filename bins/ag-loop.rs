//! ag-loop: the agent loop; prompts in, events out, tools as subprocesses.

fn main() -> std::process::ExitCode {
    ag::agent::cli::main()
}
