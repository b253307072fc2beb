//! What running calls report while they run, between their
//! `tool_execution_start` and `tool_execution_end`: `tool_execution_update`
//! events (made in [`crate::agent::calls::progress`]) and the `question` of an `ask`
//! call. The calls send them through a channel; the loop emits them as
//! they come and, when a call ends, all it sent before its end.

use std::io;

use tokio::sync::{mpsc, oneshot};

use super::control::Control;
use super::runner::Agent;
use crate::protocol::AgentEvent;

impl Agent {
    /// Where the answer to an `ask` call comes from, when the client on
    /// stdin can give one: registered before the call starts, so that a
    /// quick answer is not missed.
    pub(in crate::agent) fn answer_slot(
        &self,
        name: &str,
        id: &str,
        control: &Control,
    ) -> Option<oneshot::Receiver<String>> {
        let asks = self.tools.get(name).is_some_and(|t| t.is_ask());
        (asks && self.settings.questions.person == crate::agent::calls::ask::Person::Stdin)
            .then(|| control.await_answer(id))
            .flatten()
    }

    /// Runs one call, emitting its progress and questions as they come.
    pub(in crate::agent) async fn pump<T>(
        &mut self,
        call: impl Future<Output = T>,
        updates: &mut mpsc::UnboundedReceiver<AgentEvent>,
    ) -> io::Result<T> {
        tokio::pin!(call);
        loop {
            tokio::select! {
                biased;
                Some(event) = updates.recv() => self.emitter.emit(event)?,
                r = &mut call => {
                    self.flush_updates(updates)?;
                    return Ok(r);
                }
            }
        }
    }

    /// Emits what the calls reported and is still queued.
    pub(in crate::agent) fn flush_updates(
        &mut self,
        updates: &mut mpsc::UnboundedReceiver<AgentEvent>,
    ) -> io::Result<()> {
        while let Ok(event) = updates.try_recv() {
            self.emitter.emit(event)?;
        }
        Ok(())
    }
}
