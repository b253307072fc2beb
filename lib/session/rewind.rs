//! `ag-session rewind ID --turn N`: the working tree put back as it was
//! before turn N (from the session's checkpoints), and the conversation
//! forked at that point into a new session whose `parent` is ID, so that
//! `ag-loop --session NEW` goes on from there. `--files-only` and
//! `--conversation-only` do one half.
//!
//! A rewind refuses, listing what would be lost, when the tree changed after
//! the session's last checkpoint; `--force` first records those changes as a
//! checkpoint of the session, so that the rewind itself can be undone.

use std::path::PathBuf;

use super::checkpoints::{Failed, Timeline, ag_home, fail};
use super::reader::Reader;
use super::store::Store;
use super::writer::Writer;
use crate::checkpoint::Checkpoints;
use crate::cli::ExitStatus;

/// Which halves of a rewind to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Halves {
    /// Files and conversation.
    Both,
    /// The working tree only; no new session.
    Files,
    /// A new session only; no file is touched.
    Conversation,
}

/// What a rewind did: stdout (the new session's id) and notes for stderr.
#[derive(Debug, Default)]
pub struct Rewound {
    /// The new session's id, when one was made.
    pub new_id: Option<String>,
    /// What was done, a line each.
    pub notes: Vec<String>,
}

/// Rewinds session `id` to before turn `n`.
pub fn rewind(
    store: &Store,
    id: &str,
    n: u64,
    halves: Halves,
    force: bool,
) -> Result<Rewound, Failed> {
    let t = Timeline::read(store, id)?;
    t.check_turn(n)?;
    let mut out = Rewound::default();
    let mut new_head: Option<String> = None;
    if halves != Halves::Conversation {
        new_head = Some(rewind_files(&t, n, force, halves, &mut out.notes)?);
    } else if let Ok(cp) = t.checkpoints()
        && let Ok(Some((head, _))) = cp.head()
    {
        // The tree stays as it is: the new session goes on from the last one.
        new_head = Some(head);
    }
    if halves != Halves::Files {
        let new_id = fork_before(store, &t, n)?;
        if let Some(head) = new_head
            && let Ok(cp) = t.checkpoints()
        {
            let new = Checkpoints::new(cp.place.clone(), &new_id, &ag_home(), cp.max_file_bytes);
            new.set_head(&head).map_err(fail)?;
        }
        out.notes.push(format!(
            "session {new_id} holds the conversation before turn {n}; continue it with `ag-loop --session {new_id}`"
        ));
        out.new_id = Some(new_id);
    }
    Ok(out)
}

/// Puts the tree back; returns the checkpoint the tree now matches.
fn rewind_files(
    t: &Timeline,
    n: u64,
    force: bool,
    halves: Halves,
    notes: &mut Vec<String>,
) -> Result<String, Failed> {
    let Some(target) = t.mark_for(n) else {
        return Err((
            ExitStatus::Failure,
            format!(
                "session {} has no checkpoints, so its files cannot be rewound (no turn ran a tool that may change files, or it ran with --no-checkpoints); --conversation-only forks the conversation alone",
                t.header.id
            ),
        ));
    };
    let cp = t.checkpoints()?;
    let Some((_, head_tree)) = cp.head().map_err(fail)? else {
        return Err(fail(format!(
            "the ref `{}` is gone from `{}` (was the session pruned?), so its checkpoints cannot be found",
            cp.ref_name(),
            cp.place.git_dir.display()
        )));
    };
    if !cp.exists(&target.id).map_err(fail)? {
        return Err(fail(format!(
            "checkpoint {} is not in `{}` any more",
            target.id,
            cp.place.git_dir.display()
        )));
    }
    let now = cp.snapshot().map_err(fail)?;
    // Nothing is lost when the tree now is one of the session's checkpoints
    // (the last one, or one an earlier rewind went back to).
    let ids: Vec<String> = t.marks.iter().map(|m| m.id.clone()).collect();
    let known = cp.trees_of(&ids).map_err(fail)?;
    if now.tree != head_tree && !known.contains(&now.tree) {
        let lost = cp.changes(&head_tree, &now.tree).map_err(fail)?;
        if !force {
            return Err((
                ExitStatus::Failure,
                format!(
                    "the working tree changed after the session's last checkpoint, and a rewind would lose these changes:\n{}\nhint: `--force` records them as a checkpoint first (so that this rewind can be undone), then rewinds",
                    indent(&lost.lines())
                ),
            ));
        }
        let r = cp
            .record(&format!(
                "ag checkpoint: session {}, before rewinding to turn {n}",
                t.header.id
            ))
            .map_err(fail)?;
        t.append_mark(&cp, &r)?;
        notes.push(format!(
            "recorded the changes made since the last checkpoint as checkpoint {}",
            r.commit
        ));
    }
    let target_tree = cp.tree_of(&target.id).map_err(fail)?;
    let restored = cp.restore(&now.tree, &target_tree).map_err(|e| {
        fail(format!(
            "{e}\nhint: the tree may be partly rewound; its state before this rewind is a checkpoint of the session (`ag-session checkpoints {}` lists them), so a rewind with --force puts it back",
            t.header.id
        ))
    })?;
    let lines = restored.changes.lines();
    notes.push(if lines.is_empty() {
        format!("the working tree was already as before turn {n}")
    } else {
        format!(
            "restored the working tree as before turn {n} (checkpoint {}):\n{}",
            target.id,
            indent(&lines)
        )
    });
    for s in restored.skipped {
        notes.push(format!("not restored: {s}"));
    }
    if halves == Halves::Files {
        // The session's last checkpoint is the tree it now has.
        let r = cp
            .record(&format!(
                "ag checkpoint: session {}, rewound to turn {n}",
                t.header.id
            ))
            .map_err(fail)?;
        t.append_mark(&cp, &r)?;
    }
    Ok(target.id.clone())
}

fn indent(lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A new session holding the events before turn `n`; when turn `n` is the
/// first of its prompt, the prompt is left out too, so that the next prompt
/// takes its place.
fn fork_before(store: &Store, t: &Timeline, n: u64) -> Result<String, Failed> {
    let cut = match t.turn_starts.get((n - 1) as usize) {
        // One past the last turn: the whole conversation.
        None => usize::MAX,
        Some(&start) => {
            let run_start = t.agent_starts.iter().rev().find(|a| **a < start).copied();
            match run_start {
                Some(a) if !t.turn_starts.iter().any(|s| *s > a && *s < start) => a,
                _ => start,
            }
        }
    };
    let cwd = PathBuf::from(&t.header.cwd);
    let (new, _) = store
        .create(&cwd, t.header.config.clone(), Some(t.header.id.clone()))
        .map_err(fail)?;
    let mut writer = Writer::open(&new.path).map_err(fail)?;
    let mut reader = Reader::open(&t.file.path).map_err(fail)?;
    reader.header().map_err(fail)?;
    let mut err = None;
    reader
        .for_each_event(|line, rec| {
            if line < cut
                && err.is_none()
                && let Err(e) = writer.append(&rec)
            {
                err = Some(e);
            }
        })
        .map_err(fail)?;
    if let Some(e) = err {
        return Err(fail(e));
    }
    Ok(new.id)
}
