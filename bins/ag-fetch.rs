//! ag-fetch: one URL read for the model, a web page as markdown.

fn main() -> std::process::ExitCode {
    ag::tools::mains::fetch()
}
