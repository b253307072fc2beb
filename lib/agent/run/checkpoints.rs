//! ag-loop's side of checkpoints (issue 20): before a turn's tool calls,
//! when any of them may change files (any tool but the read-only ones), the
//! working tree is recorded (see [`crate::checkpoint`]) and a `checkpoint`
//! event says so; at the end of a run whose tools may have changed files it
//! is recorded once more (numbered as the turn after the last one that
//! changed files), so that the session's last checkpoint is the tree the
//! agent left. Tools running in parallel in one turn are all covered by
//! the checkpoint taken before the turn.
//!
//! Turns are numbered over the whole session file (every `turn_start`,
//! those of earlier runs included), which is how `ag-session rewind --turn`
//! counts them. A directory that cannot have checkpoints (a bare
//! repository, no git installed) gets one `error` event and none after.

use serde_json::Value;
use std::io;
use std::path::PathBuf;

use super::checkpoint_ledger::READ_ONLY;
use super::evidence;
use super::runner::Agent;
use crate::protocol::{AgentEvent, Message};

impl Agent {
    /// Counts a `turn_start` just emitted.
    pub(in crate::agent) fn note_turn_start(&mut self) {
        self.settings.checkpoints.turns += 1;
    }

    /// Records the tree before a turn's tool calls, unless all of them are
    /// read-only.
    pub(in crate::agent) async fn checkpoint_before_tools(
        &mut self,
        calls: &[(String, String, Value)],
    ) -> io::Result<()> {
        if calls
            .iter()
            .all(|(_, name, _)| READ_ONLY.contains(&name.as_str()))
        {
            return Ok(());
        }
        let turn = self.settings.checkpoints.turns;
        self.record_checkpoint(turn).await?;
        self.settings.checkpoints.dirty = Some(turn);
        Ok(())
    }

    /// Records the tree the run leaves, when its tools may have changed it:
    /// the tree before the turn after the last one that changed files.
    pub(in crate::agent) async fn checkpoint_at_end(&mut self) -> io::Result<()> {
        match self.settings.checkpoints.dirty.take() {
            Some(turn) => self.record_checkpoint(turn + 1).await,
            None => Ok(()),
        }
    }

    async fn record_checkpoint(&mut self, turn: u64) -> io::Result<()> {
        let cp = match self.settings.checkpoints.get() {
            Ok(Some(cp)) => cp.clone(),
            Ok(None) => return Ok(()),
            Err(e) => {
                return self.emitter.emit(AgentEvent::error(format!(
                    "checkpoints are off for this run: {e}"
                )));
            }
        };
        // git may take a while on a large tree (a session's first
        // checkpoint): off the runtime's thread, so that stdin and signals
        // are still read meanwhile.
        let message = format!("ag checkpoint: session {}, turn {turn}", cp.session_id);
        let recorded = tokio::task::spawn_blocking(move || {
            let r = cp.record(&message);
            (cp, r)
        })
        .await
        .map_err(|e| io::Error::other(format!("the checkpoint task failed: {e}")))?;
        let (cp, result) = recorded;
        let event = match result {
            Ok(r) => cp.event(&r, turn),
            Err(e) => AgentEvent::error(format!("the checkpoint before turn {turn} failed: {e}")),
        };
        // Back, with what it learnt on the way (the pathspecs it checked).
        self.settings.checkpoints.open = Some(cp);
        if let AgentEvent::Checkpoint {
            added,
            changed,
            deleted,
            more,
            work_tree,
            ..
        } = &event
        {
            let p = &mut self.settings.checkpoints.prompt;
            let listed =
                !added.is_empty() || !changed.is_empty() || !deleted.is_empty() || *more > 0;
            p.changed |= p.taken > 0 && listed;
            p.taken += 1;
            p.work_tree = Some(PathBuf::from(work_tree));
        }
        self.emitter.emit(event)
    }

    /// The statement to send back when this prompt's bash calls would have
    /// written files of the working tree and its checkpoints, one taken
    /// now for the tree the tools left, show no change (see evidence.rs);
    /// `None` otherwise, and always without checkpoints.
    pub(in crate::agent) async fn writes_without_change(
        &mut self,
        new: &[Message],
    ) -> io::Result<Option<String>> {
        let Some(work_tree) = self.settings.checkpoints.prompt.work_tree.clone() else {
            return Ok(None);
        };
        let writes = evidence::bash_writes(new, &work_tree);
        if writes.is_empty() {
            return Ok(None);
        }
        self.checkpoint_at_end().await?;
        let p = &self.settings.checkpoints.prompt;
        if p.taken < 2 || p.changed {
            return Ok(None);
        }
        Ok(Some(evidence::writes_without_change(&writes)))
    }
}
