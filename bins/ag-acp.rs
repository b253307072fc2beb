//! ag-acp: ag as an Agent Client Protocol agent over stdio, for editors.

fn main() -> std::process::ExitCode {
    ag::acp::main()
}
