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
//!
//! [`CheckpointState`] is what the run keeps of them (whether they are on,
//! where, the turns counted so far), apart from the recording so that the
//! agent's settings can hold it.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::runner::Agent;
use crate::checkpoint::{Checkpoints, Error, Place};
use crate::protocol::AgentEvent;

/// Tools that never change the working tree.
pub(in crate::agent) const READ_ONLY: &[&str] =
    &["read", "grep", "find", "ls", "todo", "notify", "ask"];

/// Checkpoints of one ag-loop run.
#[derive(Debug, Default)]
pub struct CheckpointState {
    /// Set when checkpoints are on and not yet refused.
    pub(in crate::agent) want: Option<Wanted>,
    /// Found on first use.
    pub(in crate::agent) open: Option<Checkpoints>,
    /// `turn_start` events of the session so far.
    pub(in crate::agent) turns: u64,
    /// The last turn whose tools may have changed files, when none has
    /// been recorded after it.
    pub(in crate::agent) dirty: Option<u64>,
}

#[derive(Debug)]
pub(in crate::agent) struct Wanted {
    pub(in crate::agent) cwd: PathBuf,
    pub(in crate::agent) session_id: String,
    pub(in crate::agent) home: PathBuf,
    pub(in crate::agent) max_file_bytes: u64,
}

impl CheckpointState {
    /// Checkpoints off (`--no-checkpoints`, `checkpoints = false`, or no session).
    pub fn off() -> CheckpointState {
        CheckpointState::default()
    }

    /// Checkpoints of the session `session_id` (its file at `session`, whose
    /// turns are counted) for the working directory `cwd`.
    pub fn on(
        cwd: &Path,
        session_id: &str,
        session: Option<&Path>,
        max_file_bytes: u64,
    ) -> CheckpointState {
        CheckpointState {
            want: Some(Wanted {
                cwd: cwd.to_path_buf(),
                session_id: session_id.to_string(),
                home: crate::session::ag_home(),
                max_file_bytes,
            }),
            open: None,
            turns: session.map(count_turns).unwrap_or(0),
            dirty: None,
        }
    }

    /// Opens the checkpoints on first use; `Err` once with why they are off.
    pub(in crate::agent) fn get(&mut self) -> Result<Option<&Checkpoints>, Error> {
        if self.open.is_none() {
            let Some(w) = &self.want else {
                return Ok(None);
            };
            let home = w.home.canonicalize().unwrap_or_else(|_| w.home.clone());
            match Place::find(&w.cwd, &home) {
                Ok(place) => {
                    // Many checkpoints in one process: worth watching the
                    // tree rather than asking git to look at all of it.
                    self.open = Some(
                        Checkpoints::new(place, &w.session_id, &home, w.max_file_bytes).watching(),
                    );
                }
                Err(e) => {
                    self.want = None;
                    return Err(e);
                }
            }
        }
        Ok(self.open.as_ref())
    }
}

/// The `turn_start` events of a session file.
pub(in crate::agent) fn count_turns(path: &Path) -> u64 {
    #[derive(serde::Deserialize)]
    struct Kind {
        #[serde(rename = "type")]
        kind: String,
    }
    let mut n = 0;
    if let Ok(mut reader) = crate::session::Reader::open(path) {
        let _ = reader.for_each_line_of_unchecked::<Kind>(&["\"turn_start\""], |_, k| {
            if k.kind == "turn_start" {
                n += 1;
            }
        });
    }
    n
}

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
        self.emitter.emit(event)
    }
}
