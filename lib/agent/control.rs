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

    /// Takes the queued steering messages.
    pub fn take_steering(&self) -> Vec<UserContent> {
        self.steer
            .lock()
            .map(|mut q| q.drain(..).collect())
            .unwrap_or_default()
    }
}
