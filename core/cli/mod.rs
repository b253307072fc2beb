//! The bottom layer every binary shares: exit statuses and the writers of
//! stdout and stderr (diagnostics as `bin: error: ...`). It imports nothing
//! above it; the tool binaries' shell is `tool_protocol::binary`.

mod exit;
mod output;
mod runtime;

pub use exit::ExitStatus;
pub use output::{Stdout, error_line, note, print_json, stderr_line, warn};
pub use runtime::{Signal, runtime, start, working_dir};
