//! Shortening the conversation: near the context window (the runner asks
//! before each model call) and on a `compact` command. The older part goes
//! into a summary made by a model call, or a marker (`--compact never`).

use std::io;

use tokio_util::sync::CancellationToken;

use super::control::Control;
use super::runner::{Agent, Turns};
use super::window;
use crate::agent::setup::args::CompactMode;
use crate::protocol::{AgentEvent, StopReason, Usage, UserContent};

impl Agent {
    /// Compacts now, for a `compact` command: as if the conversation had
    /// just reached the compaction threshold (or the window, if that is
    /// smaller). Says so in an `error` event when there is too little to
    /// replace.
    /// The steers sent while it ran come back, to run as prompts.
    pub async fn compact_now(&mut self, control: &Control) -> io::Result<Vec<UserContent>> {
        let cancel = control.begin();
        // Measured as split_point measures, so that the recent share kept
        // is a share of this conversation, whatever the usage reported.
        let tokens = window::text_tokens(&self.messages);
        let as_if = (tokens as f64 / window::THRESHOLD) as u64;
        let window = match self.settings.context_window.filter(|w| *w > 0) {
            Some(w) => w.min(as_if),
            None => as_if,
        };
        let mut turns = Turns {
            new: Vec::new(),
            usage: Usage::default(),
            turn: 0,
        };
        let before = self.messages.len();
        let result = self.compact(window, &mut turns, &cancel).await;
        let steers = control.end();
        result?;
        if self.messages.len() == before {
            self.emitter.emit(AgentEvent::error(
                "compact: nothing to compact yet; the conversation is only the latest turn",
            ))?;
        }
        Ok(steers)
    }

    /// Replaces the older part of the conversation by a summary (or a
    /// marker), keeping the recent turns, and records it in a `compaction` event.
    pub(in crate::agent) async fn compact(
        &mut self,
        window: u64,
        turns: &mut Turns,
        cancel: &CancellationToken,
    ) -> io::Result<()> {
        let tokens_before = window::estimate_tokens(&self.messages);
        let keep = (window as f64 * window::KEEP_SHARE) as u64;
        let Some(cut) = window::split_point(&self.messages, keep) else {
            return Ok(());
        };
        let older = &self.messages[..cut];
        let facts = window::facts(older);
        let mut usage = Usage::default();
        let mut method = "prune";
        let summary_text = match self.settings.compact {
            CompactMode::Never => None,
            CompactMode::Auto => {
                // The transcript sent for summary stays well inside the window.
                let max_chars = (window as usize).saturating_mul(2);
                let req = window::summary_request(&self.settings.model, older, max_chars);
                let mut ignore = |_: crate::protocol::LlmEvent| {};
                let reply = self.model.stream(&req, &mut ignore, cancel).await;
                usage = reply.usage.clone();
                match reply.stop_reason {
                    StopReason::Stop | StopReason::Length if !reply.text().trim().is_empty() => {
                        method = "summary";
                        Some(reply.text())
                    }
                    _ => {
                        self.emitter.emit(AgentEvent::error(format!(
                            "the summary for compaction failed ({}); dropping the older turns instead",
                            reply.error_message.as_deref().unwrap_or("no text")
                        )))?;
                        None
                    }
                }
            }
        };
        turns.usage.add(&usage);
        let summary = window::summary_message(summary_text.as_deref(), cut, &facts);
        let kept = self.messages.len() - cut;
        let mut next = vec![summary.clone()];
        next.extend(self.messages.drain(cut..));
        self.messages = next;
        self.emitter.emit(AgentEvent::Compaction {
            summary,
            kept,
            replaced: cut,
            tokens_before,
            method: method.to_string(),
            usage,
        })
    }
}
