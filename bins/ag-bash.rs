//! ag-bash: a shell command with a time limit, an output cap and clean
//! cancellation; also the supervisor of its own background jobs.

fn main() -> std::process::ExitCode {
    if let Some(code) = ag::tools::bash::supervisor_main() {
        return code;
    }
    ag::tool_protocol::tool_main::<ag::tools::bash::BashTool>()
}
