//! What other tasks (the stdin reader, signal handlers) use to steer a
//! running prompt: interrupt it, queue steering messages, ask to quit.
//!
//! Prompts are numbered as they are queued, so that an `interrupt` line
//! stops the prompt it follows even when that prompt has not begun yet
//! (`ag-loop < prompts.jsonl` reads every line at once): the outcome does
//! not depend on how fast the lines arrive.
//!
//! A steer is never lost: it is delivered before the running prompt's next
//! model call, or handed back as a prompt when the run is over.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use crate::protocol::UserContent;

/// Shared control state of one ag-loop process.
#[derive(Default)]
pub struct Control {
    current: Mutex<Current>,
    /// The number of the last prompt queued (from 1).
    queued: AtomicU64,
    steer: Mutex<VecDeque<UserContent>>,
    approvals: Mutex<Vec<(String, tokio::sync::oneshot::Sender<Answer>)>>,
    /// `ask` calls waiting for an answer on stdin, oldest first.
    questions: Mutex<Vec<(String, tokio::sync::oneshot::Sender<String>)>>,
    /// Set once no approval can arrive any more (stdin ended or is not read).
    input_closed: std::sync::atomic::AtomicBool,
    /// Cancelled when the whole process should stop.
    pub quit: CancellationToken,
}

/// The run under way, and the interrupts owed to prompts not yet begun.
#[derive(Default)]
struct Current {
    /// The running work's token.
    token: Option<CancellationToken>,
    /// The token was made by [`Control::take_prompt`] and not yet handed
    /// to the run by [`Control::begin`].
    unclaimed: bool,
    /// The number of the last prompt taken.
    taken: u64,
    /// A prompt to be interrupted as soon as it is taken.
    interrupt_at: Option<u64>,
}

impl Control {
    /// A fresh control.
    pub fn new() -> Self {
        Self::default()
    }

    /// Numbers a prompt as it is queued.
    pub fn queue_prompt(&self) -> u64 {
        self.queued.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// The prompt numbered `n` (`None`: a steer run as a prompt, which
    /// was never queued) is about to run: from here on an interrupt stops
    /// it, and it starts interrupted when one came for it already.
    pub fn take_prompt(&self, n: Option<u64>) {
        if let Ok(mut cur) = self.current.lock() {
            let token = self.quit.child_token();
            if let Some(n) = n {
                if cur.interrupt_at == Some(n) {
                    cur.interrupt_at = None;
                    token.cancel();
                }
                cur.taken = n;
            }
            cur.token = Some(token);
            cur.unclaimed = true;
        }
    }

    /// Starts a run (of the prompt taken, or of a `compact`) and returns its
    /// cancellation token.
    pub fn begin(&self) -> CancellationToken {
        let Ok(mut cur) = self.current.lock() else {
            return self.quit.child_token();
        };
        if cur.unclaimed
            && let Some(t) = cur.token.clone()
        {
            cur.unclaimed = false;
            return t;
        }
        let token = self.quit.child_token();
        cur.token = Some(token.clone());
        cur.unclaimed = false;
        token
    }

    /// Ends the current run (or a taken prompt that did not run) and
    /// returns the steering messages it left undelivered (they arrived
    /// after its last turn). Under the same lock as [`Control::steer`], so
    /// that a steer lands either in the run's queue, and is handed back
    /// here, or after it, as a prompt: never in between, where nobody
    /// would take it.
    pub fn end(&self) -> Vec<UserContent> {
        let mut cur = self.current.lock().unwrap_or_else(|p| p.into_inner());
        cur.token = None;
        cur.unclaimed = false;
        self.take_steering()
    }

    /// Interrupts the running prompt. Returns false when nothing was running
    /// (or it was already interrupted).
    pub fn interrupt(&self) -> bool {
        match self.current.lock() {
            Ok(cur) => match cur.token.as_ref() {
                Some(t) if !t.is_cancelled() => {
                    t.cancel();
                    true
                }
                _ => false,
            },
            Err(_) => false,
        }
    }

    /// An `interrupt` line: stops the running prompt or, when none runs
    /// yet, the next queued one as soon as it begins. False when there is
    /// nothing to stop.
    pub fn interrupt_in_order(&self) -> bool {
        let Ok(mut cur) = self.current.lock() else {
            return false;
        };
        match cur.token.as_ref() {
            Some(t) if !t.is_cancelled() => {
                t.cancel();
                true
            }
            Some(_) => false,
            None if cur.taken < self.queued.load(Ordering::SeqCst) => {
                cur.interrupt_at = Some(cur.taken + 1);
                true
            }
            None => false,
        }
    }

    /// True while a prompt runs.
    pub fn busy(&self) -> bool {
        self.current
            .lock()
            .map(|c| c.token.is_some())
            .unwrap_or(false)
    }

    /// Queues a steering message for the running prompt, delivered before
    /// its next model call. With nothing running, the content is handed
    /// back: it is the next prompt.
    pub fn steer(&self, content: UserContent) -> Option<UserContent> {
        let cur = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if cur.token.is_none() {
            return Some(content);
        }
        self.steer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push_back(content);
        None
    }

    /// True when steering messages wait for the next model call.
    pub fn has_steering(&self) -> bool {
        self.steer.lock().map(|q| !q.is_empty()).unwrap_or(false)
    }

    /// Registers a call waiting for approval; the receiver gets the answer.
    pub fn await_approval(&self, tool_call_id: &str) -> tokio::sync::oneshot::Receiver<Answer> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        // With no input left, the sender is dropped at once: the call is refused.
        if !self.input_closed.load(std::sync::atomic::Ordering::SeqCst)
            && let Ok(mut waiting) = self.approvals.lock()
        {
            waiting.push((tool_call_id.to_string(), tx));
        }
        rx
    }

    /// No more commands will arrive: calls waiting for approval are
    /// refused, and questions go on as if nobody were there.
    pub fn close_input(&self) {
        self.input_closed
            .store(true, std::sync::atomic::Ordering::SeqCst);
        if let Ok(mut waiting) = self.approvals.lock() {
            waiting.clear();
        }
        if let Ok(mut waiting) = self.questions.lock() {
            waiting.clear();
        }
    }

    /// Registers an `ask` call waiting for an answer on stdin; `None` when
    /// no more input can come.
    pub fn await_answer(
        &self,
        tool_call_id: &str,
    ) -> Option<tokio::sync::oneshot::Receiver<String>> {
        if self.input_closed.load(std::sync::atomic::Ordering::SeqCst) {
            return None;
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.questions
            .lock()
            .ok()?
            .push((tool_call_id.to_string(), tx));
        Some(rx)
    }

    /// True while a question waits for an answer.
    pub fn awaiting_answer(&self) -> bool {
        self.questions
            .lock()
            .map(|w| w.iter().any(|(_, tx)| !tx.is_closed()))
            .unwrap_or(false)
    }

    /// Delivers an `answer` command. Returns false when no question with
    /// that id waits.
    pub fn answer(&self, tool_call_id: &str, text: String) -> bool {
        let tx = self.questions.lock().ok().and_then(|mut w| {
            w.retain(|(_, tx)| !tx.is_closed());
            let i = w.iter().position(|(id, _)| id == tool_call_id)?;
            Some(w.remove(i).1)
        });
        tx.is_some_and(|tx| tx.send(text).is_ok())
    }

    /// Answers the question that has waited longest (a line typed while it
    /// waits).
    pub fn answer_oldest(&self, text: String) -> bool {
        let tx = self.questions.lock().ok().and_then(|mut w| {
            w.retain(|(_, tx)| !tx.is_closed());
            (!w.is_empty()).then(|| w.remove(0).1)
        });
        tx.is_some_and(|tx| tx.send(text).is_ok())
    }

    /// True while a call waits for approval.
    pub fn awaiting_approval(&self) -> bool {
        self.approvals
            .lock()
            .map(|w| w.iter().any(|(_, tx)| !tx.is_closed()))
            .unwrap_or(false)
    }

    /// Answers the call that has waited longest (a `y`/`n` typed at a prompt).
    pub fn approve_oldest(&self, answer: Answer) -> bool {
        let tx = self.approvals.lock().ok().and_then(|mut w| {
            w.retain(|(_, tx)| !tx.is_closed());
            (!w.is_empty()).then(|| w.remove(0).1)
        });
        tx.is_some_and(|tx| tx.send(answer).is_ok())
    }

    /// Delivers an approval. Returns false when no call with that id waits.
    pub fn approve(&self, tool_call_id: &str, answer: Answer) -> bool {
        let tx = self.approvals.lock().ok().and_then(|mut w| {
            let i = w.iter().position(|(id, _)| id == tool_call_id)?;
            Some(w.remove(i).1)
        });
        match tx {
            Some(tx) => tx.send(answer).is_ok(),
            None => false,
        }
    }

    /// Takes the queued steering messages.
    pub fn take_steering(&self) -> Vec<UserContent> {
        self.steer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
            .collect()
    }
}

/// In a subagent: ends the run as SIGTERM would once the parent ag-loop
/// is gone (killed outright, so that it could not stop this one). The
/// parent's watchdog cannot find a child ag-loop, which hides its own
/// environment; this one then stops its own tools, and its watchdog
/// nothing is left.
pub fn watch_parent(control: Arc<Control>) {
    let Some(parent) = std::env::var(crate::agent::delegation::subagent::PARENT_ENV)
        .ok()
        .and_then(|p| p.parse::<i32>().ok())
    else {
        return;
    };
    tokio::spawn(async move {
        loop {
            if nix::unistd::getppid().as_raw() != parent {
                control.interrupt();
                control.quit.cancel();
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interrupt_before_its_prompt_begins_stops_that_prompt_alone() {
        let c = Control::new();
        let (one, two) = (c.queue_prompt(), c.queue_prompt());
        // Read before the first prompt was taken: it is owed to prompt 1.
        assert!(c.interrupt_in_order());
        c.take_prompt(Some(one));
        assert!(c.begin().is_cancelled());
        c.end();
        c.take_prompt(Some(two));
        assert!(!c.begin().is_cancelled());
        c.end();
        // Nothing queued, nothing running: nothing to stop.
        assert!(!c.interrupt_in_order());
    }

    #[test]
    fn an_interrupt_stops_a_running_prompt_and_a_taken_one() {
        let c = Control::new();
        let n = c.queue_prompt();
        c.take_prompt(Some(n));
        // Taken, not yet begun (its identity is being loaded).
        assert!(c.interrupt_in_order());
        let t = c.begin();
        assert!(t.is_cancelled());
        c.end();
        let m = c.queue_prompt();
        c.take_prompt(Some(m));
        let t = c.begin();
        assert!(c.busy() && !t.is_cancelled());
        assert!(c.interrupt());
        assert!(t.is_cancelled());
        assert!(!c.interrupt(), "already interrupted");
        c.end();
        assert!(!c.busy());
        // A compaction begins without a prompt.
        assert!(!c.begin().is_cancelled());
        c.end();
    }
}

/// A person's answer to an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Not approved.
    No,
    /// Approved, this once.
    Yes,
    /// Approved, and the like for the rest of the session.
    Always,
}

impl Answer {
    /// The answer an `approval` command or a typed word gives.
    pub fn from_command(approved: bool, always: bool) -> Self {
        match (approved, always) {
            (false, _) => Answer::No,
            (true, false) => Answer::Yes,
            (true, true) => Answer::Always,
        }
    }

    /// The answer a typed word gives: y, n or a (always); None for any other.
    pub fn from_word(word: &str) -> Option<Self> {
        match word.trim().to_lowercase().as_str() {
            "y" | "yes" => Some(Answer::Yes),
            "a" | "always" => Some(Answer::Always),
            "n" | "no" => Some(Answer::No),
            _ => None,
        }
    }
}
