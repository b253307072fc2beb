//! When a run acts, for the synchronous run loop (`run.rs`) and the async
//! one (`child.rs`) alike: SIGTERM to the group on a timeout or a cancel,
//! or to what is left of it once the command has exited and its pipes stay
//! open past the drain; SIGKILL after the grace period; giving up a short
//! while after that. The loops feed it what they observe (the exit, the
//! cancel reason, whether output pipes are open) and sleep until
//! [`Clock::next_wake`].

use std::time::{Duration, Instant};

use nix::unistd::Pid;

use super::{CancelReason, Command, Stop, tree};

/// How long a run keeps waiting after SIGKILL for the group to go and the
/// pipes to close (a process outside the group may hold them).
pub(super) const FINAL_WAIT: Duration = Duration::from_millis(500);
/// How often a run looks whether stopped leftovers are gone.
const LEFTOVER_TICK: Duration = Duration::from_millis(10);

/// The run's clocks and what they lead to: SIGTERM on timeout or cancel,
/// or to leftovers once the command has exited; SIGKILL after the grace
/// period; giving up a short while after that.
pub(super) struct Clock {
    pub(super) pgid: Pid,
    pub(super) timeout_at: Option<Instant>,
    pub(super) grace: Duration,
    pub(super) cancel_grace: Duration,
    pub(super) drain: Duration,
    pub(super) kill_leftovers: bool,
    /// When the command itself was seen to exit.
    pub(super) exited_at: Option<Instant>,
    pub(super) stop: Option<Stop>,
    pub(super) term_at: Option<Instant>,
    pub(super) kill_at: Option<Instant>,
    pub(super) leftovers: bool,
}

impl Clock {
    /// The clocks of a run of `cmd` started at `start`, whose group is `pgid`.
    pub(super) fn new(cmd: &Command, pgid: Pid, start: Instant) -> Clock {
        Clock {
            pgid,
            timeout_at: cmd.timeout.map(|t| start + t),
            grace: cmd.grace,
            cancel_grace: cmd.cancel_grace.unwrap_or(cmd.grace),
            drain: cmd.drain,
            kill_leftovers: cmd.kill_leftovers,
            exited_at: None,
            stop: None,
            term_at: None,
            kill_at: None,
            leftovers: false,
        }
    }

    fn terminate(&mut self, now: Instant) {
        if self.term_at.is_none() {
            tree::terminate(self.pgid);
            self.term_at = Some(now);
        }
    }

    fn grace(&self) -> Duration {
        match self.stop {
            Some(Stop::Cancelled(_)) => self.cancel_grace,
            _ => self.grace,
        }
    }

    /// Acts on the time and the state of the run (cancel reason, whether
    /// output pipes are still open); true when the run is over.
    pub(super) fn tick(
        &mut self,
        now: Instant,
        cancelled: Option<CancelReason>,
        open: bool,
    ) -> bool {
        if self.stop.is_none() {
            if let Some(reason) = cancelled {
                self.stop = Some(Stop::Cancelled(reason));
            } else if self.exited_at.is_none() && self.timeout_at.is_some_and(|t| now >= t) {
                self.stop = Some(Stop::Timeout);
            }
            if self.stop.is_some() {
                self.terminate(now);
            }
        }
        if let Some(exited) = self.exited_at {
            if !open {
                if !self.kill_leftovers || !tree::group_alive(self.pgid) {
                    return true;
                }
                if self.term_at.is_none() {
                    self.leftovers = true;
                    self.terminate(now);
                }
            } else if self.term_at.is_none() {
                // Background children hold the pipes: read on briefly.
                if now >= exited + self.drain {
                    if !self.kill_leftovers {
                        return true;
                    }
                    self.leftovers = true;
                    self.terminate(now);
                }
            } else if !tree::group_alive(self.pgid) {
                // Whoever still holds the pipes is outside the group: no
                // signal of ours reaches it, so waiting is pointless.
                return true;
            }
        }
        if let Some(t) = self.term_at
            && self.kill_at.is_none()
            && now >= t + self.grace()
        {
            tree::kill_group(self.pgid);
            self.kill_at = Some(now);
        }
        self.kill_at.is_some_and(|k| now >= k + FINAL_WAIT)
    }

    /// When `tick` must run next (None: only when something happens).
    pub(super) fn next_wake(&self, now: Instant) -> Option<Instant> {
        let waiting_for_leftovers = self.exited_at.is_some() && self.term_at.is_some();
        [
            self.timeout_at
                .filter(|_| self.stop.is_none() && self.exited_at.is_none()),
            self.exited_at
                .filter(|_| self.term_at.is_none())
                .map(|e| e + self.drain),
            self.term_at
                .filter(|_| self.kill_at.is_none())
                .map(|t| t + self.grace()),
            self.kill_at.map(|k| k + FINAL_WAIT),
            waiting_for_leftovers.then_some(now + LEFTOVER_TICK),
        ]
        .into_iter()
        .flatten()
        .min()
    }
}
