//! ag-lsp: the project's language servers, kept warm for the session.

fn main() -> std::process::ExitCode {
    ag::tools::mains::lsp()
}
