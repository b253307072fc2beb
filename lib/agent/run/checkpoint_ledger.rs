//! The ledger of a run's checkpoints (run/checkpoints.rs takes them):
//! whether they are on, where, the turns counted so far and the last turn
//! that may have changed files. Apart from the taking so that the agent's
//! settings can hold it without depending on the agent.
//!
//! A run that keeps no session (`--no-session`) still takes them in a git
//! working tree, for the evidence alone (what `bash` changed, in `work` and
//! for the send-back of writes that changed nothing): on a ref of its own,
//! `refs/ag/checkpoints/run-<uuid>`, which is removed with its private index
//! when the run ends. Without a repository such a run takes none (a shadow
//! repository would outlive it), and a directory that cannot have them is
//! passed over without a word. Such a run holds a lock while it lives; one
//! killed outright (SIGKILL) leaves its ref, which the next run without a
//! session in the same repository and with the same `$AG_HOME` removes.

use std::path::{Path, PathBuf};

use crate::checkpoint::{Checkpoints, Error, Place};

/// Tools that never change the working tree. The git tools that look are
/// among them: a `git_status` beside a patch that failed is no sign that a
/// change may have landed (a small model's answer after both was taken).
pub(in crate::agent) const READ_ONLY: &[&str] = &[
    "read",
    "grep",
    "find",
    "ls",
    "todo",
    "notify",
    "ask",
    "fetch",
    "git_status",
    "git_diff",
    "git_log",
];

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
    /// The checkpoints of the prompt under way.
    pub(in crate::agent) prompt: PromptRecord,
    /// A run's own checkpoints, without a session: removed at its end.
    pub(in crate::agent) ephemeral: bool,
    /// The lock that says the run's own checkpoints are in use; after
    /// `open` in the order of fields, so dropped after them.
    held: Option<crate::checkpoint::RunLock>,
}

/// What the checkpoints of one prompt showed, for the evidence a final
/// answer is weighed against (run/evidence.rs).
#[derive(Debug, Default)]
pub(in crate::agent) struct PromptRecord {
    /// Checkpoints taken during the prompt.
    pub(in crate::agent) taken: u32,
    /// Whether one after the first listed a change: the first is the tree
    /// before the prompt's first tools, and its lists are what changed
    /// before them.
    pub(in crate::agent) changed: bool,
    /// The work tree the checkpoints record.
    pub(in crate::agent) work_tree: Option<PathBuf>,
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
            prompt: PromptRecord::default(),
            ephemeral: false,
            held: None,
        }
    }

    /// Checkpoints of a run that keeps no session, for the evidence alone:
    /// on a ref of the run's own, removed when the state is dropped.
    pub fn for_run(cwd: &Path, max_file_bytes: u64) -> CheckpointState {
        let id = format!("{}{}", crate::checkpoint::RUN_PREFIX, uuid::Uuid::now_v7());
        let mut state = CheckpointState::on(cwd, &id, None, max_file_bytes);
        state.ephemeral = true;
        state
    }

    /// Opens the checkpoints on first use; `Err` once with why they are off.
    pub(in crate::agent) fn get(&mut self) -> Result<Option<&Checkpoints>, Error> {
        if self.open.is_none() {
            let Some(w) = &self.want else {
                return Ok(None);
            };
            let home = w.home.canonicalize().unwrap_or_else(|_| w.home.clone());
            match Place::find(&w.cwd, &home) {
                Ok(place) if self.ephemeral && place.shadow => {
                    self.want = None;
                    return Ok(None);
                }
                Err(_) if self.ephemeral => {
                    self.want = None;
                    return Ok(None);
                }
                Ok(place) => {
                    // Many checkpoints in one process: worth watching the
                    // tree rather than asking git to look at all of it.
                    let cp =
                        Checkpoints::new(place, &w.session_id, &home, w.max_file_bytes).watching();
                    if self.ephemeral {
                        // Without the lock another run would take these
                        // for abandoned: then none at all.
                        let Ok(held) = cp.hold() else {
                            self.want = None;
                            return Ok(None);
                        };
                        self.held = Some(held);
                        cp.remove_abandoned_runs();
                    }
                    self.open = Some(cp);
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

impl Drop for CheckpointState {
    fn drop(&mut self) {
        if self.ephemeral
            && let Some(cp) = &self.open
            && let Err(e) = cp.remove()
        {
            // The lock file stays, so that the next run's sweep finds
            // these checkpoints (it looks only where a lock file is).
            if let Some(held) = &mut self.held {
                held.leave_for_sweep();
            }
            crate::cli::warn(
                "ag-loop",
                &format!(
                    "cannot remove the run's checkpoints ({e}); the next run without a session here removes them, and `git update-ref -d refs/ag/checkpoints/{}` in `{}` does now",
                    cp.session_id,
                    cp.place.work_tree.display()
                ),
            );
        }
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
