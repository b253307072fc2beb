//! What stops a run of many tasks: SIGINT, SIGTERM or SIGHUP. Every engine
//! listens for the three the same way and ends an interrupted run the same
//! way: the summary of the results so far, a note of what became of the
//! tasks that had not ended, and the signal's exit status.

use std::time::Duration;

use tokio::signal::unix::SignalKind;

use super::BIN;
use super::results::Summary;
use crate::cli::{ExitStatus, Signal, note};

/// The three signals, listened for from the moment this is made.
pub struct Stops {
    interrupt: Signal,
    terminate: Signal,
    hangup: Signal,
}

impl Stops {
    /// Listens from now on.
    pub fn listen() -> Self {
        Self {
            interrupt: Signal::new(SignalKind::interrupt()),
            terminate: Signal::new(SignalKind::terminate()),
            hangup: Signal::new(SignalKind::hangup()),
        }
    }

    /// The next of them to come, as its number.
    pub async fn next(&mut self) -> i32 {
        tokio::select! {
            () = self.interrupt.recv() => 2,
            () = self.terminate.recv() => 15,
            () = self.hangup.recv() => 1,
        }
    }

    /// Waits `poll` between two looks at the tasks; the signal that came
    /// meanwhile, at once, if one did.
    pub async fn pause(&mut self, poll: Duration) -> Option<i32> {
        // A signal first: after the process was stopped and continued,
        // both may be ready, and the run must end rather than look again.
        tokio::select! {
            biased;
            sig = self.next() => Some(sig),
            () = tokio::time::sleep(poll) => None,
        }
    }
}

/// How a run stopped by signal `sig` ends: the summary line, the note
/// "interrupted; `what`", and the signal's exit status.
pub fn interrupted(summary: &Summary, sig: i32, what: &str) -> ExitStatus {
    let _ = summary.print();
    note(BIN, &format!("interrupted; {what}"));
    ExitStatus::Signal(sig)
}
