//! ag-gemini-cli: hand a coding task to Gemini CLI (the tool `gemini_cli`).

fn main() -> std::process::ExitCode {
    ag::tool_protocol::tool_main::<ag::tools::cli_agent::GeminiCliTool>()
}
