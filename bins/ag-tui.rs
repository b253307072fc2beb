//! ag-tui: the interactive terminal front end over ag-loop's event stream.

fn main() -> std::process::ExitCode {
    ag::tui::main()
}
