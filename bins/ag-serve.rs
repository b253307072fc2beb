//! ag-serve: keeps ag-loop sessions alive apart from any one client.

fn main() -> std::process::ExitCode {
    ag::serve::main()
}
