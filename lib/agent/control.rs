//! What other tasks (the stdin reader, signal handlers) use to steer a
//! running prompt: interrupt it, queue steering messages, ask to quit.
//! A steer is never lost: it is delivered before the running prompt's next
//! model call, or handed back as a prompt when the run is over.

use std::collections::VecDeque;
use std::sync::Mutex;

use tokio_util::sync::CancellationToken;

use crate::protocol::UserContent;

/// Shared control state of one ag-loop process.
#[derive(Default)]
pub struct Control {
    current: Mutex<Option<CancellationToken>>,
    steer: Mutex<VecDeque<UserContent>>,
    approvals: Mutex<Vec<(String, tokio::sync::oneshot::Sender<Answer>)>>,
    /// Set once no approval can arrive any more (stdin ended or is not read).
    input_closed: std::sync::atomic::AtomicBool,
    /// Cancelled when the whole process should stop.
    pub quit: CancellationToken,
}

impl Control {
    /// A fresh control.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts a prompt run and returns its cancellation token.
    pub fn begin(&self) -> CancellationToken {
        let token = self.quit.child_token();
        if let Ok(mut cur) = self.current.lock() {
            *cur = Some(token.clone());
        }
        token
    }

    /// Ends the current run and returns the steering messages it left
    /// undelivered (they arrived after its last turn). Under the same lock
    /// as [`Control::steer`], so that a steer lands either in the run's
    /// queue, and is handed back here, or after it, as a prompt: never in
    /// between, where nobody would take it.
    pub fn end(&self) -> Vec<UserContent> {
        let mut cur = self.current.lock().unwrap_or_else(|p| p.into_inner());
        *cur = None;
        self.take_steering()
    }

    /// Interrupts the running prompt. Returns false when nothing was running
    /// (or it was already interrupted).
    pub fn interrupt(&self) -> bool {
        match self.current.lock() {
            Ok(cur) => match cur.as_ref() {
                Some(t) if !t.is_cancelled() => {
                    t.cancel();
                    true
                }
                _ => false,
            },
            Err(_) => false,
        }
    }

    /// True while a prompt runs.
    pub fn busy(&self) -> bool {
        self.current.lock().map(|c| c.is_some()).unwrap_or(false)
    }

    /// Queues a steering message for the running prompt, delivered before
    /// its next model call. With nothing running, the content is handed
    /// back: it is the next prompt.
    pub fn steer(&self, content: UserContent) -> Option<UserContent> {
        let cur = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if cur.is_none() {
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

    /// No more commands will arrive: calls waiting for approval are refused.
    pub fn close_input(&self) {
        self.input_closed
            .store(true, std::sync::atomic::Ordering::SeqCst);
        if let Ok(mut waiting) = self.approvals.lock() {
            waiting.clear();
        }
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
