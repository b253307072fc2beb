//! `ag-session checkpoints`, `diff`, `checkpoint` and `prune`: a session's
//! checkpoints as its file records them (the `checkpoint` events, see
//! [`crate::checkpoint`]), looked at, added to, and removed with the
//! session. Rewinding to one is `rewind.rs`'s.

use std::path::{Path, PathBuf};

use super::reader::Reader;
use super::store::{SessionFile, Store};
use super::writer::Writer;
use crate::checkpoint::{Checkpoints, Place};
use crate::cli::ExitStatus;
use crate::protocol::{AgentEvent, AgentEventRecord, SessionHeader};

/// A failure: the exit status and the message.
pub type Failed = (ExitStatus, String);

pub(super) fn fail(e: impl std::fmt::Display) -> Failed {
    (ExitStatus::Failure, e.to_string())
}

/// One `checkpoint` event of a session.
#[derive(Debug, Clone)]
pub struct Mark {
    /// The commit.
    pub id: String,
    /// The turn it was taken before.
    pub turn: u64,
    /// When.
    pub timestamp: String,
    /// Where.
    pub place: Place,
}

/// What a session file says about turns and checkpoints.
#[derive(Debug)]
pub struct Timeline {
    /// The session.
    pub file: SessionFile,
    /// Its header.
    pub header: SessionHeader,
    /// The line of each `turn_start` in the file.
    pub turn_starts: Vec<usize>,
    /// The line of each `agent_start`.
    pub agent_starts: Vec<usize>,
    /// The checkpoints in order.
    pub marks: Vec<Mark>,
}

impl Timeline {
    /// Reads a session's turns and checkpoints.
    pub fn read(store: &Store, id: &str) -> Result<Timeline, Failed> {
        Timeline::of(store.find(id).map_err(fail)?)
    }

    /// Reads the turns and checkpoints of a session file.
    pub fn of(file: SessionFile) -> Result<Timeline, Failed> {
        let mut reader = Reader::open(&file.path).map_err(fail)?;
        let header = reader
            .header()
            .map_err(fail)?
            .ok_or_else(|| fail(format!("`{}` has no session header", file.path.display())))?;
        let home = checkpoint_home();
        let (mut turn_starts, mut agent_starts, mut marks) = (Vec::new(), Vec::new(), Vec::new());
        // Only these lines are parsed: a long session is mostly updates.
        let kinds = ["\"turn_start\"", "\"agent_start\"", "\"checkpoint\""];
        reader
            .for_each_event_of(&kinds, |line, rec| match rec.event {
                AgentEvent::TurnStart => turn_starts.push(line),
                AgentEvent::AgentStart { .. } => agent_starts.push(line),
                AgentEvent::Checkpoint {
                    id,
                    turn,
                    work_tree,
                    git_dir,
                    ..
                } => {
                    let git_dir = PathBuf::from(git_dir);
                    marks.push(Mark {
                        id,
                        turn,
                        timestamp: rec.timestamp,
                        place: Place {
                            shadow: git_dir.starts_with(home.join("repos")),
                            work_tree: PathBuf::from(work_tree),
                            git_dir,
                        },
                    });
                }
                _ => {}
            })
            .map_err(fail)?;
        Ok(Timeline {
            file,
            header,
            turn_starts,
            agent_starts,
            marks,
        })
    }

    /// The turns of the session.
    pub fn turns(&self) -> u64 {
        self.turn_starts.len() as u64
    }

    /// The session's checkpoints where its last checkpoint was taken, or
    /// where its directory would have them.
    pub fn checkpoints(&self) -> Result<Checkpoints, Failed> {
        let home = ag_home();
        let place = match self.marks.last() {
            Some(m) => m.place.clone(),
            None => Place::find(Path::new(&self.header.cwd), &home).map_err(fail)?,
        };
        Ok(Checkpoints::new(
            place,
            &self.header.id,
            &home,
            max_file_bytes(),
        ))
    }

    /// The checkpoint holding the tree as it was before turn `n`: the last
    /// one taken at or before it, else (the turns before were read-only)
    /// the first one after it.
    pub fn mark_for(&self, n: u64) -> Option<&Mark> {
        self.marks
            .iter()
            .rev()
            .find(|m| m.turn <= n)
            .or_else(|| self.marks.iter().find(|m| m.turn > n))
    }

    /// Checks that turn `n` exists, or is one past the last (the tree the
    /// session left).
    pub fn check_turn(&self, n: u64) -> Result<(), Failed> {
        if n == 0 || n > self.turns() + 1 {
            return Err((
                ExitStatus::Input,
                format!(
                    "session {} has {} turn(s); give --turn between 1 and {} (one past the last is the tree the session left)",
                    self.header.id,
                    self.turns(),
                    self.turns() + 1
                ),
            ));
        }
        Ok(())
    }

    /// Appends a `checkpoint` event for a checkpoint that ag-session took.
    pub fn append_mark(
        &self,
        cp: &Checkpoints,
        r: &crate::checkpoint::Recorded,
    ) -> Result<(), Failed> {
        let mut writer = Writer::open(&self.file.path).map_err(fail)?;
        let record = AgentEventRecord {
            timestamp: super::now(),
            event: cp.event(r, self.turns() + 1),
        };
        writer.append(&record).map_err(fail)
    }
}

/// `$AG_HOME`, resolved, as checkpoints name it.
pub fn ag_home() -> PathBuf {
    let home = super::ag_home();
    home.canonicalize().unwrap_or(home)
}

fn checkpoint_home() -> PathBuf {
    ag_home().join("checkpoints")
}

/// The size limit of the config file, as ag-loop used it.
fn max_file_bytes() -> u64 {
    crate::checkpoint::configured_max_file_bytes(&super::ag_home().join("config.toml"))
}

fn short(id: &str) -> &str {
    id.get(..10).unwrap_or(id)
}

/// `ag-session checkpoints ID`: one line per checkpoint and the diffstat
/// from the one before.
pub fn list(store: &Store, id: &str) -> Result<String, Failed> {
    let t = Timeline::read(store, id)?;
    if t.marks.is_empty() {
        return Ok(format!(
            "session {} has no checkpoints (no turn of it ran a tool that may change files, or it ran with --no-checkpoints)\n",
            t.header.id
        ));
    }
    let cp = t.checkpoints()?;
    let mut text = String::new();
    let mut prev: Option<&str> = None;
    for m in &t.marks {
        let stamp: String = m.timestamp.chars().take(19).collect();
        text.push_str(&format!(
            "turn {:<4} {}  {}",
            m.turn,
            short(&m.id),
            stamp.replace('T', " ")
        ));
        let from = match prev {
            Some(p) => Some(p.to_string()),
            // The first one: against its parent (a forked session's), if any.
            None => {
                let parent = format!("{}^", m.id);
                cp.tree_of(&parent)
                    .ok()
                    .filter(|t| !t.is_empty())
                    .map(|_| parent)
            }
        };
        match from {
            Some(f) if f == m.id => text.push_str("  (no change)\n"),
            Some(f) => {
                let stat = cp.diff(&f, &m.id, true, false).map_err(fail)?;
                if stat.trim().is_empty() {
                    text.push_str("  (no change)\n");
                } else {
                    text.push('\n');
                    for line in stat.lines() {
                        text.push_str(&format!("    {}\n", line.trim_start()));
                    }
                }
            }
            None => text.push_str("  (the first)\n"),
        }
        prev = Some(&m.id);
    }
    Ok(text)
}

/// `ag-session diff ID [--turn N] [--to M]`: a unified diff from the tree
/// before turn N (default: the last checkpoint) to the one before turn M
/// (default: the working tree now).
pub fn diff(store: &Store, id: &str, from: Option<u64>, to: Option<u64>) -> Result<String, Failed> {
    let t = Timeline::read(store, id)?;
    let Some(last) = t.marks.last() else {
        return Err(fail(format!("session {} has no checkpoints", t.header.id)));
    };
    let pick = |n: Option<u64>| -> Result<Option<String>, Failed> {
        match n {
            None => Ok(None),
            Some(n) => {
                t.check_turn(n)?;
                Ok(t.mark_for(n).map(|m| m.id.clone()))
            }
        }
    };
    let cp = t.checkpoints()?;
    let from = pick(from)?.unwrap_or_else(|| last.id.clone());
    let to = match pick(to)? {
        Some(id) => id,
        None => cp.snapshot().map_err(fail)?.tree,
    };
    cp.diff(&from, &to, false, true).map_err(fail)
}

/// `ag-session checkpoint ID`: records the working tree now as a
/// checkpoint of the session, and prints its id.
pub fn record_now(store: &Store, id: &str) -> Result<String, Failed> {
    let t = Timeline::read(store, id)?;
    let cp = t.checkpoints()?;
    let r = cp
        .record(&format!(
            "ag checkpoint: session {}, by ag-session",
            t.header.id
        ))
        .map_err(fail)?;
    if r.new || t.marks.last().is_none_or(|m| m.id != r.commit) {
        t.append_mark(&cp, &r)?;
    }
    Ok(format!("{}\n", r.commit))
}

/// Removes the checkpoints of a session that is being deleted: its ref,
/// its private index, and a shadow repository no session uses any more.
pub fn forget(file: &SessionFile) -> Result<(), Failed> {
    let Ok(t) = Timeline::of(file.clone()) else {
        return Ok(());
    };
    let mut places: Vec<Place> = t.marks.iter().map(|m| m.place.clone()).collect();
    places.dedup();
    let home = ag_home();
    for place in places {
        let cp = Checkpoints::new(place.clone(), &t.header.id, &home, 0);
        cp.remove().map_err(fail)?;
        if place.shadow && place.git_dir.exists() && cp.refs().map_err(fail)?.is_empty() {
            std::fs::remove_dir_all(&place.git_dir).map_err(fail)?;
        }
    }
    Ok(())
}

/// [`forget`], with a failure only warned about: a session is deleted even
/// when its checkpoints cannot be (git gone, repository moved).
pub fn forget_or_warn(file: &SessionFile) {
    if let Err((_, message)) = forget(file) {
        crate::cli::warn(
            "ag-session",
            &format!(
                "the checkpoints of session {} were not removed: {message}",
                file.id
            ),
        );
    }
}

/// A duration as `30d`, `12h`, `2w`, `90m` or `45s`.
pub fn parse_age(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (n, unit) = text.split_at(split);
    let n: u64 = n
        .parse()
        .map_err(|_| format!("`{text}` is not an age such as 30d, 12h, 2w"))?;
    let secs = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" | "" => 86400,
        "w" => 7 * 86400,
        _ => return Err(format!("`{text}`: the unit is one of s, m, h, d, w")),
    };
    Ok(std::time::Duration::from_secs(n.saturating_mul(secs)))
}

/// `ag-session prune --older-than AGE`: deletes the sessions not written to
/// for AGE (their files, their `.d` directories) and their checkpoints.
pub fn prune(store: &Store, age: std::time::Duration, dry_run: bool) -> Result<String, Failed> {
    let cutoff = std::time::SystemTime::now()
        .checked_sub(age)
        .unwrap_or(std::time::UNIX_EPOCH);
    let mut text = String::new();
    for f in store.list_all().map_err(fail)? {
        let modified = f.path.metadata().and_then(|m| m.modified()).map_err(fail)?;
        if modified > cutoff {
            continue;
        }
        // A run idle for that long still owns its session.
        if let Some(holder) = super::SessionLock::holder(&f.path) {
            text.push_str(&format!("kept {} (in use by {holder})\n", f.path.display()));
            continue;
        }
        if !dry_run {
            forget_or_warn(&f);
            let dir = f.path.with_extension("d");
            if dir.is_dir() {
                std::fs::remove_dir_all(&dir).map_err(fail)?;
            }
            std::fs::remove_file(&f.path).map_err(fail)?;
            let _ = std::fs::remove_file(super::lock_path(&f.path));
        }
        text.push_str(&format!(
            "{} {}\n",
            if dry_run { "would delete" } else { "deleted" },
            f.path.display()
        ));
    }
    Ok(text)
}
