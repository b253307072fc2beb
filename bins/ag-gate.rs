//! ag-gate: the default gate in front of every tool call: allow, deny or ask.

fn main() -> std::process::ExitCode {
    ag::gate::cli::main()
}
