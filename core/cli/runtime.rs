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

/// A Unix signal that a front end waits for (SIGTERM, SIGHUP) in a
/// `select!`: when the handler cannot be installed, it never arrives,
/// rather than failing the binary's start.
pub struct Signal(Option<tokio::signal::unix::Signal>);

impl Signal {
    /// Listens for `kind` from now on.
    pub fn new(kind: tokio::signal::unix::SignalKind) -> Self {
        Self(tokio::signal::unix::signal(kind).ok())
    }

    /// Waits for the next one.
    pub async fn recv(&mut self) {
        match &mut self.0 {
            Some(s) => {
                s.recv().await;
            }
            None => std::future::pending().await,
        }
    }
}

/// The working directory, or the error printed for `bin` and the status
/// to exit with.
pub fn working_dir(bin: &str) -> Result<std::path::PathBuf, ExitStatus> {
    std::env::current_dir().map_err(|e| {
        error_line(
            bin,
            &format!("cannot read the working directory: {e}"),
            None,
        );
        ExitStatus::Input
    })
}

/// A front end's start: its flags read (a usage error printed for `bin`,
/// with the exit code to return) and its runtime made.
pub fn start<A: clap::Parser>(bin: &str) -> Result<(A, Runtime), std::process::ExitCode> {
    let args = A::try_parse().map_err(|e| ExitStatus::from_clap(e, bin).code())?;
    let runtime = runtime(bin).map_err(ExitStatus::code)?;
    Ok((args, runtime))
}
