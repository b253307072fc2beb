//! ag-gemini-cli: hand a coding task to Gemini CLI (the tool `gemini_cli`).

fn main() -> std::process::ExitCode {
    ag::tools::mains::gemini_cli()
}
