//! Termination signals (SIGINT, SIGTERM, SIGHUP) turned into a cancellation
//! while a command runs, so that Ctrl-C or ag-loop's SIGTERM stops the
//! command's whole process group and the caller still reports a result.
//! Outside a [`TerminationGuard`] the signals keep their default action:
//! with nothing running there is nothing to clean up.
//!
//! It needs `unsafe`: signal handlers must be installed with sigaction, and
//! may only call async-signal-safe functions. `unsafe` is in this layer
//! alone: confine.rs, secrets.rs, tree.rs and watchdog.rs need it too, each
//! for a reason its comments give.
#![allow(unsafe_code)]

use std::io;
use std::sync::atomic::{AtomicI32, Ordering};

use nix::errno::Errno;
use nix::libc;
use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};

use super::Cancel;

/// The signals that end a run.
const SIGNALS: [Signal; 3] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP];

/// The write end of the wake pipe of the guarded cancel handle, or -1.
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);
/// The first termination signal received while guarded, or 0.
static RECEIVED: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    // Only atomics and write(2) here: both are async-signal-safe.
    let saved = Errno::last_raw();
    let _ = RECEIVED.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
    let fd = WAKE_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        let byte = [1u8];
        // SAFETY: write(2) is async-signal-safe; the buffer is a live local;
        // `fd` is the non-blocking write end of the guarded handle's pipe,
        // kept open by the guard for as long as WAKE_FD holds it.
        unsafe {
            libc::write(fd, byte.as_ptr().cast(), 1);
        }
    }
    Errno::set_raw(saved);
}

/// The termination signal this process received while a guard was
/// installed, if any. Callers use it to exit with 128+N after reporting.
pub fn termination_signal() -> Option<i32> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        n => Some(n),
    }
}

/// While alive, SIGINT, SIGTERM and SIGHUP cancel the given handle instead
/// of killing the process. Dropping it restores the previous actions. A
/// signal the process was started with ignored (`nohup`, `&` in a script)
/// stays ignored.
pub struct TerminationGuard {
    previous: Vec<(Signal, SigAction)>,
    cancel: Cancel,
}

impl TerminationGuard {
    /// Installs the handlers. Only one guard should be alive at a time: the
    /// newest one receives the signals.
    pub fn install(cancel: &Cancel) -> io::Result<TerminationGuard> {
        cancel.set_guarded(true);
        WAKE_FD.store(cancel.wake_write_raw(), Ordering::SeqCst);
        let mut guard = TerminationGuard {
            previous: Vec::with_capacity(SIGNALS.len()),
            cancel: cancel.clone(),
        };
        let action = SigAction::new(
            SigHandler::Handler(on_signal),
            SaFlags::SA_RESTART,
            SigSet::empty(),
        );
        for sig in SIGNALS {
            // SAFETY: `on_signal` only touches atomics and calls write(2).
            let old = unsafe { sigaction(sig, &action) }.map_err(io::Error::from)?;
            if matches!(old.handler(), SigHandler::SigIgn) {
                // SAFETY: restores the action that was there a moment ago.
                unsafe { sigaction(sig, &old) }.map_err(io::Error::from)?;
                continue;
            }
            guard.previous.push((sig, old));
        }
        Ok(guard)
    }
}

impl Drop for TerminationGuard {
    fn drop(&mut self) {
        for (sig, old) in self.previous.drain(..) {
            // SAFETY: puts back the action saved by `install`.
            let _ = unsafe { sigaction(sig, &old) };
        }
        // Only after the handlers are gone may the pipe be closed.
        WAKE_FD.store(-1, Ordering::SeqCst);
        self.cancel.set_guarded(false);
    }
}
