//! What other tasks (the stdin reader, signal handlers) use to steer a
//! running prompt: interrupt it, queue steering messages, ask to quit.

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
    /// `ask` calls waiting for an answer on stdin, oldest first.
    questions: Mutex<Vec<(String, tokio::sync::oneshot::Sender<String>)>>,
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

    /// Ends the current run.
    pub fn end(&self) {
        if let Ok(mut cur) = self.current.lock() {
            *cur = None;
        }
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

    /// Queues a steering message for after the current tool batch.
    pub fn steer(&self, content: UserContent) {
        if let Ok(mut q) = self.steer.lock() {
            q.push_back(content);
        }
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
            .map(|mut q| q.drain(..).collect())
            .unwrap_or_default()
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
