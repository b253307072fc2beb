//! A cancel handle: stops a running command from another thread (ag-loop's
//! interrupt) or from a signal handler, and wakes the run loop at once
//! through a self-pipe instead of making it poll a flag.

use std::io::{self, PipeReader, PipeWriter, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use nix::fcntl::{FcntlArg, OFlag, fcntl};

use super::signals;

/// Why a run was cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelReason {
    /// [`Cancel::cancel`] was called.
    Requested,
    /// The process received this termination signal (see
    /// [`super::TerminationGuard`]).
    Signal(i32),
}

/// A cloneable handle that cancels the runs it is given to. Cancelling is
/// sticky: a cancelled handle cancels every later run at once.
#[derive(Debug, Clone)]
pub struct Cancel {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    requested: AtomicBool,
    /// Set while a [`super::TerminationGuard`] forwards signals to this handle.
    guarded: AtomicBool,
    read: PipeReader,
    write: PipeWriter,
}

impl Cancel {
    /// A new handle, not cancelled.
    pub fn new() -> io::Result<Cancel> {
        let (read, write) = io::pipe()?;
        // Neither end may block: the writer runs in signal handlers and the
        // reader is drained in the run loop.
        set_nonblocking(read.as_fd())?;
        set_nonblocking(write.as_fd())?;
        Ok(Cancel {
            inner: Arc::new(Inner {
                requested: AtomicBool::new(false),
                guarded: AtomicBool::new(false),
                read,
                write,
            }),
        })
    }

    /// Cancels: the run using this handle stops its process group (SIGTERM,
    /// then SIGKILL after the grace period) and returns what it has.
    pub fn cancel(&self) {
        // The byte is never read back: the pipe stays readable, so every run
        // using this handle (now or later) wakes up, however many share it.
        if !self.inner.requested.swap(true, Ordering::SeqCst) {
            let _ = (&self.inner.write).write(&[1]);
        }
    }

    /// Whether the handle was cancelled, by a call or a forwarded signal.
    pub fn is_cancelled(&self) -> bool {
        self.reason().is_some()
    }

    /// Why the handle was cancelled, if it was.
    pub fn reason(&self) -> Option<CancelReason> {
        if self.inner.requested.load(Ordering::SeqCst) {
            return Some(CancelReason::Requested);
        }
        if self.inner.guarded.load(Ordering::SeqCst) {
            return signals::termination_signal().map(CancelReason::Signal);
        }
        None
    }

    pub(crate) fn set_guarded(&self, on: bool) {
        self.inner.guarded.store(on, Ordering::SeqCst);
    }

    /// The end the run loop polls.
    pub(crate) fn wake_fd(&self) -> BorrowedFd<'_> {
        self.inner.read.as_fd()
    }

    /// The end a signal handler writes to.
    pub(crate) fn wake_write_raw(&self) -> RawFd {
        self.inner.write.as_raw_fd()
    }
}

/// Shared with the run loop's pipes.
pub(crate) fn set_nonblocking(fd: BorrowedFd<'_>) -> io::Result<()> {
    let flags = fcntl(fd, FcntlArg::F_GETFL).map_err(io::Error::from)?;
    let flags = OFlag::from_bits_retain(flags) | OFlag::O_NONBLOCK;
    fcntl(fd, FcntlArg::F_SETFL(flags)).map_err(io::Error::from)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancel_is_sticky_and_shared_by_clones() {
        let c = Cancel::new().unwrap();
        let other = c.clone();
        assert!(!c.is_cancelled());
        other.cancel();
        assert!(c.is_cancelled());
        assert_eq!(c.reason(), Some(CancelReason::Requested));
        // Cancelling again never blocks the caller.
        for _ in 0..100_000 {
            c.cancel();
        }
    }
}
