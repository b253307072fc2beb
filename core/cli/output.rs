//! The one place that writes to stdout and stderr.
#![allow(clippy::print_stderr)]

use std::io::{self, Write};
use std::process::ExitCode;

use super::ExitStatus;

/// Standard output, flushed per record.
pub struct Stdout(io::Stdout);

impl Stdout {
    /// The process's standard output.
    pub fn new() -> Self {
        Stdout(io::stdout())
    }

    /// Writes all bytes and flushes.
    pub fn write_all_flush(&mut self, bytes: &[u8]) -> io::Result<()> {
        let mut lock = self.0.lock();
        lock.write_all(bytes)?;
        lock.flush()
    }
}

impl Default for Stdout {
    fn default() -> Self {
        Self::new()
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// Prints `bin: error: message` and an optional `hint:` line on stderr.
pub fn error_line(bin: &str, message: &str, hint: Option<&str>) {
    let mut err = io::stderr().lock();
    let _ = writeln!(err, "{bin}: error: {message}");
    if let Some(h) = hint {
        let _ = writeln!(err, "hint: {h}");
    }
}

/// Prints `bin: warning: message` on stderr.
pub fn warn(bin: &str, message: &str) {
    let _ = writeln!(io::stderr().lock(), "{bin}: warning: {message}");
}

/// Writes one whole line to stderr in a single write, so that a reader
/// never sees it torn by another writer's text (tools' progress lines).
pub fn stderr_line(line: &[u8]) -> io::Result<()> {
    let mut err = io::stderr().lock();
    err.write_all(line)?;
    err.flush()
}

/// Prints `bin: note: message` on stderr: something the user should know
/// about the output, kept apart from it.
pub fn note(bin: &str, message: &str) {
    let _ = writeln!(io::stderr().lock(), "{bin}: note: {message}");
}

/// Prints one JSON value as a line on stdout.
pub fn print_json<S: serde::Serialize>(bin: &str, value: &S) -> ExitCode {
    let mut line = match serde_json::to_vec(value) {
        Ok(l) => l,
        Err(e) => {
            error_line(bin, &format!("cannot encode the result: {e}"), None);
            return ExitStatus::Input.code();
        }
    };
    line.push(b'\n');
    match Stdout::new().write_all_flush(&line) {
        Ok(()) => ExitStatus::Success.code(),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitStatus::Success.code(),
        Err(e) => {
            error_line(bin, &format!("cannot write the output: {e}"), None);
            ExitStatus::Input.code()
        }
    }
}
