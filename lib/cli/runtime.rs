//! The async runtime a binary runs on.

use tokio::runtime::{Builder, Runtime};

use super::{ExitStatus, error_line};

/// A single-threaded runtime with I/O and timers: every ag binary waits on
/// pipes and sockets rather than computing, and one thread keeps start-up
/// short. When it cannot be made, the error is printed for `bin` and the
/// status to exit with is returned.
pub fn runtime(bin: &str) -> Result<Runtime, ExitStatus> {
    Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            error_line(bin, &format!("cannot start the async runtime: {e}"), None);
            ExitStatus::Input
        })
}
