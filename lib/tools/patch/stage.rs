//! The files a patch touches, staged in memory: each as it was on disk and
//! as the patch leaves it, so that every hunk of every file is checked
//! before anything is written. Then the commit, all or nothing even under
//! SIGKILL, through the journal ([`super::journal`]).

use std::collections::{HashMap, HashSet};
use std::fs::Metadata;
use std::io;
use std::path::PathBuf;

use super::journal::{self, Put, Remove};
use crate::fsutil::{BINARY_PROBE, looks_binary};
use crate::tool_protocol::{Context, ToolError};
use crate::tools::edit::MAX_FILE_BYTES;
use crate::tools::fileops::{Target, io_failed, resolve_target};
use crate::tools::matching::ladder::Step;
use crate::tools::matching::seek::Fuzz;

/// What a path held when the patch first named it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Nothing.
    Missing,
    /// A regular file (possibly through a symlink).
    File,
    /// A directory.
    Dir,
    /// A device, socket or pipe.
    Other,
}

/// One path the patch touches.
#[derive(Debug)]
pub struct Entry {
    /// The path resolved.
    pub target: Target,
    /// What it was.
    pub kind: Kind,
    /// Its content then (files only).
    pub original: Option<Vec<u8>>,
    /// Its metadata then.
    pub meta: Option<Metadata>,
    /// Whether the content has a NUL in its first bytes.
    pub binary: bool,
    /// The content the patch leaves (`None`: no file).
    pub current: Option<Vec<u8>>,
    /// Permission bits to set after writing.
    pub mode: Option<u32>,
    /// Metadata whose permissions a new file takes (a moved file's).
    pub like: Option<Metadata>,
    /// The entry this file was moved from.
    pub moved_from: Option<usize>,
    /// The entry this file was moved to.
    pub moved_to: Option<usize>,
    /// Notes for the result.
    pub notes: Vec<String>,
    /// Where each hunk went (each part, for a hunk that elided lines).
    pub hunks: Vec<HunkPlace>,
}

/// Where one hunk (or one part of a hunk around its `...` lines) went.
#[derive(Debug, Clone)]
pub struct HunkPlace {
    /// The hunk's number, from 1.
    pub hunk: usize,
    /// The 1-based line it starts at.
    pub line: usize,
    /// Lines from where the header's line number said.
    pub offset: Option<isize>,
    /// How loosely its lines matched.
    pub fuzz: Fuzz,
    /// The ladder's further steps it took (edge whitespace, escapes,
    /// elision).
    pub steps: Vec<Step>,
}

impl Entry {
    /// The path as the model sees it.
    pub fn shown(&self) -> &str {
        &self.target.shown
    }

    /// Whether the commit has anything to do for it.
    pub fn changed(&self) -> bool {
        self.current != self.original || self.mode.is_some()
    }
}

/// The staged files.
pub struct Stage<'a> {
    ctx: &'a Context,
    /// Every path touched, in the order the patch first named it.
    pub entries: Vec<Entry>,
    by_path: HashMap<PathBuf, usize>,
    /// Directories already looked at for a journal.
    journals_seen: HashSet<PathBuf>,
    /// Notes about interrupted patches finished on the way.
    pub recovered: Vec<String>,
}

impl<'a> Stage<'a> {
    /// The working directory paths are shown from.
    pub fn cwd(&self) -> &std::path::Path {
        &self.ctx.cwd
    }

    /// An empty stage.
    pub fn new(ctx: &'a Context) -> Stage<'a> {
        Stage {
            ctx,
            entries: Vec::new(),
            by_path: HashMap::new(),
            journals_seen: HashSet::new(),
            recovered: Vec::new(),
        }
    }

    /// The context paths resolve in.
    pub fn ctx(&self) -> &'a Context {
        self.ctx
    }

    /// The entry of `path`, read from disk the first time it is named.
    pub fn entry(&mut self, path: &str) -> Result<usize, ToolError> {
        let target = resolve_target(self.ctx, path, "patch")?;
        // A patch that a stopped run left half done is finished before
        // any file below its directory is read.
        let done = journal::recover_above(self.ctx, &target.real, &mut self.journals_seen)?;
        self.recovered.extend(done);
        if let Some(&i) = self
            .by_path
            .get(&target.path)
            .or_else(|| self.by_path.get(&target.real))
        {
            return Ok(i);
        }
        let entry = load(self.ctx, target)?;
        let i = self.entries.len();
        self.by_path.insert(entry.target.path.clone(), i);
        self.by_path.insert(entry.target.real.clone(), i);
        self.entries.push(entry);
        Ok(i)
    }

    /// Writes every change, or none, even if the process is killed
    /// halfway (see [`super::journal`]).
    pub fn commit(&self) -> Result<(), ToolError> {
        let mut puts = Vec::new();
        let mut removes = Vec::new();
        for e in &self.entries {
            match (&e.current, &e.original) {
                (Some(bytes), original) if e.changed() => puts.push(Put {
                    real: &e.target.real,
                    shown: e.shown(),
                    bytes,
                    like: e.meta.as_ref().or(e.like.as_ref()),
                    mode: e.mode,
                    original: original.as_deref(),
                }),
                (None, Some(original)) => removes.push(Remove {
                    path: &e.target.path,
                    real: &e.target.real,
                    shown: e.shown(),
                    original,
                }),
                _ => {}
            }
        }
        journal::commit(self.ctx, &puts, &removes)
    }
}

/// Reads what a path holds, with the checks that need no patch.
fn load(ctx: &Context, target: Target) -> Result<Entry, ToolError> {
    let shown = target.shown.clone();
    let (kind, meta) = match ctx.metadata(&target.real) {
        Ok(m) if m.is_file() => (Kind::File, Some(m)),
        Ok(m) if m.is_dir() => (Kind::Dir, Some(m)),
        Ok(m) => (Kind::Other, Some(m)),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            (Kind::Missing, None)
        }
        Err(e) => return Err(io_failed("patch.io", "open", &shown, e)),
    };
    let mut original = None;
    let mut binary = false;
    if kind == Kind::File {
        let len = meta.as_ref().map_or(0, Metadata::len);
        if len > MAX_FILE_BYTES {
            return Err(ToolError::new(
                "patch.too_large",
                format!(
                    "`{shown}` is {} MiB, more than the {} MiB ag-patch loads; change it with a streaming tool through bash.",
                    len / 1024 / 1024,
                    MAX_FILE_BYTES / 1024 / 1024
                ),
            ));
        }
        let content = ctx
            .read(&target.real)
            .map_err(|e| io_failed("patch.io", "read", &shown, e))?;
        binary = looks_binary(&content[..content.len().min(BINARY_PROBE)]);
        original = Some(content);
    }
    Ok(Entry {
        target,
        kind,
        current: original.clone(),
        original,
        meta,
        binary,
        mode: None,
        like: None,
        moved_from: None,
        moved_to: None,
        notes: Vec::new(),
        hunks: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_commit_restores_what_it_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Context {
            cwd: dir.path().to_path_buf(),
            root: None,
        };
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        std::fs::write(dir.path().join("b.txt"), "b\n").unwrap();
        let mut stage = Stage::new(&ctx);
        let a = stage.entry("a.txt").unwrap();
        let b = stage.entry("b.txt").unwrap();
        let n = stage.entry("new/dir/n.txt").unwrap();
        stage.entries[a].current = Some(b"A\n".to_vec());
        stage.entries[n].current = Some(b"n\n".to_vec());
        stage.entries[b].current = None;
        // Someone changes b.txt after it was read: its deletion fails.
        std::fs::write(dir.path().join("b.txt"), "theirs\n").unwrap();
        let err = stage.commit().unwrap_err();
        assert_eq!(err.code, "patch.changed_on_disk");
        assert!(
            err.message.contains("Nothing was changed"),
            "{}",
            err.message
        );
        assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"a\n");
        assert_eq!(
            std::fs::read(dir.path().join("b.txt")).unwrap(),
            b"theirs\n"
        );
        assert!(!dir.path().join("new").exists());
    }
}
