//! ag-mcp: serves ag's tools to any MCP client over stdio.

fn main() -> std::process::ExitCode {
    ag::mcp::cli::main()
}
