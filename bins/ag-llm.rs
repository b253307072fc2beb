//! ag-llm: one model call, any provider, streamed as JSONL.

fn main() -> std::process::ExitCode {
    ag::llm::cli::main()
}
