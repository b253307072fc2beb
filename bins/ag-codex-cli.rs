//! ag-codex-cli: hand a coding task to Codex CLI (the tool `codex_cli`).

fn main() -> std::process::ExitCode {
    ag::tools::mains::codex_cli()
}
