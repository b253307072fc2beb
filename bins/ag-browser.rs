//! ag-browser: a headless Chromium the agent drives (seed 003's
//! browser_automation), kept warm for the session.

fn main() -> std::process::ExitCode {
    ag::tools::mains::browser()
}
