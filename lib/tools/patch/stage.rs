//! The files a patch touches, staged in memory: each as it was on disk and
//! as the patch leaves it, so that every hunk of every file is checked
//! before anything is written. Then the commit: new contents written
//! atomically (each only if the file still holds what was read), then
//! deletions; if any step fails, the steps already made are undone, so a
//! patch changes all its files or none.

use std::collections::HashMap;
use std::fs::Metadata;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use crate::fsutil::{BINARY_PROBE, has_content, looks_binary, write_atomic};
use crate::tool::{Context, ToolError};
use crate::tools::edit::MAX_FILE_BYTES;
use crate::tools::fileops::{Target, resolve_target, write_failed};
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
    /// Where a symlink at the path pointed, when the path was one.
    pub link: Option<PathBuf>,
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
    /// Where each hunk went: (hunk number from 1, 1-based line, offset from
    /// the header's line number, how loosely it matched).
    pub hunks: Vec<(usize, usize, Option<isize>, Fuzz)>,
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
}

/// One step of a commit, to undo if a later one fails.
enum Done {
    Written { idx: usize, dirs: Vec<PathBuf> },
    Mode { idx: usize, old: u32 },
    Removed { idx: usize },
}

impl<'a> Stage<'a> {
    /// An empty stage.
    pub fn new(ctx: &'a Context) -> Stage<'a> {
        Stage {
            ctx,
            entries: Vec::new(),
            by_path: HashMap::new(),
        }
    }

    /// The context paths resolve in.
    pub fn ctx(&self) -> &'a Context {
        self.ctx
    }

    /// The entry of `path`, read from disk the first time it is named.
    pub fn entry(&mut self, path: &str) -> Result<usize, ToolError> {
        let target = resolve_target(self.ctx, path, "patch")?;
        if let Some(&i) = self
            .by_path
            .get(&target.path)
            .or_else(|| self.by_path.get(&target.real))
        {
            return Ok(i);
        }
        let entry = load(target)?;
        let i = self.entries.len();
        self.by_path.insert(entry.target.path.clone(), i);
        self.by_path.insert(entry.target.real.clone(), i);
        self.entries.push(entry);
        Ok(i)
    }

    /// Writes every change, or none.
    pub fn commit(&self) -> Result<(), ToolError> {
        let mut done = Vec::new();
        match self.commit_steps(&mut done) {
            Ok(()) => Ok(()),
            Err(mut e) => {
                let failed = self.undo(done);
                if failed.is_empty() {
                    e.message.push_str(
                        " The files written before the failure were restored: nothing was changed.",
                    );
                } else {
                    e.message.push_str(&format!(
                        " Restoring the files written before the failure failed for {}: check them (git status) before going on.",
                        failed.join(", ")
                    ));
                }
                Err(e)
            }
        }
    }

    fn commit_steps(&self, done: &mut Vec<Done>) -> Result<(), ToolError> {
        for (idx, e) in self.entries.iter().enumerate() {
            let Some(bytes) = &e.current else { continue };
            let real = &e.target.real;
            if e.current != e.original {
                let dirs = make_parents(real, e.shown())?;
                let like = e.meta.as_ref().or(e.like.as_ref());
                let original = e.original.as_deref();
                let unchanged = || match original {
                    Some(o) => has_content(real, o),
                    None => Ok(std::fs::symlink_metadata(real).is_err()),
                };
                let res = write_atomic(real, like, bytes, unchanged).map_err(|err| {
                    write_failed("patch.changed_on_disk", "patch.io", e.shown(), err)
                });
                if let Err(err) = res {
                    remove_dirs(&dirs);
                    return Err(err);
                }
                done.push(Done::Written { idx, dirs });
            }
            if let Some(mode) = e.mode {
                let old = std::fs::metadata(real)
                    .map(|m| m.permissions().mode() & 0o7777)
                    .unwrap_or(0o644);
                std::fs::set_permissions(real, std::fs::Permissions::from_mode(mode)).map_err(
                    |err| {
                        ToolError::new(
                            "patch.io",
                            format!("cannot set the mode of `{}`: {err}.", e.shown()),
                        )
                    },
                )?;
                done.push(Done::Mode { idx, old });
            }
        }
        for (idx, e) in self.entries.iter().enumerate() {
            let (None, Some(original)) = (&e.current, &e.original) else {
                continue;
            };
            match has_content(&e.target.real, original) {
                Ok(true) => {}
                Ok(false) => {
                    return Err(ToolError::new(
                        "patch.changed_on_disk",
                        format!(
                            "`{}` was changed by someone else while the patch was being applied; it was left as it is.",
                            e.shown()
                        ),
                    ));
                }
                Err(err) => {
                    return Err(ToolError::new(
                        "patch.io",
                        format!("cannot read `{}`: {err}.", e.shown()),
                    ));
                }
            }
            // A symlink is removed itself, never what it points to.
            std::fs::remove_file(&e.target.path).map_err(|err| {
                ToolError::new("patch.io", format!("cannot delete `{}`: {err}.", e.shown()))
            })?;
            done.push(Done::Removed { idx });
        }
        Ok(())
    }

    /// Undoes steps, last first; returns the paths that could not be restored.
    fn undo(&self, done: Vec<Done>) -> Vec<String> {
        let mut failed = Vec::new();
        for step in done.into_iter().rev() {
            let (idx, res) = match step {
                Done::Written { idx, dirs } => {
                    let e = &self.entries[idx];
                    let res = match &e.original {
                        Some(o) => write_atomic(&e.target.real, e.meta.as_ref(), o, || Ok(true))
                            .map_err(|err| io::Error::other(err.to_string())),
                        None => std::fs::remove_file(&e.target.real),
                    };
                    remove_dirs(&dirs);
                    (idx, res)
                }
                Done::Mode { idx, old } => (
                    idx,
                    std::fs::set_permissions(
                        &self.entries[idx].target.real,
                        std::fs::Permissions::from_mode(old),
                    ),
                ),
                Done::Removed { idx } => {
                    let e = &self.entries[idx];
                    let res = match (&e.link, &e.original) {
                        (Some(to), _) => std::os::unix::fs::symlink(to, &e.target.path),
                        (None, Some(o)) => {
                            write_atomic(&e.target.path, e.meta.as_ref(), o, || Ok(true))
                                .map_err(|err| io::Error::other(err.to_string()))
                        }
                        (None, None) => Ok(()),
                    };
                    (idx, res)
                }
            };
            if res.is_err() {
                failed.push(format!("`{}`", self.entries[idx].shown()));
            }
        }
        failed
    }
}

/// Reads what a path holds, with the checks that need no patch.
fn load(target: Target) -> Result<Entry, ToolError> {
    let shown = target.shown.clone();
    let link = std::fs::symlink_metadata(&target.path)
        .ok()
        .filter(|m| m.file_type().is_symlink())
        .and_then(|_| std::fs::read_link(&target.path).ok());
    let (kind, meta) = match std::fs::metadata(&target.real) {
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
        Err(e) => {
            return Err(ToolError::new(
                "patch.io",
                format!("cannot open `{shown}`: {e}"),
            ));
        }
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
        let content = std::fs::read(&target.real)
            .map_err(|e| ToolError::new("patch.io", format!("cannot read `{shown}`: {e}")))?;
        binary = looks_binary(&content[..content.len().min(BINARY_PROBE)]);
        original = Some(content);
    }
    Ok(Entry {
        target,
        kind,
        current: original.clone(),
        original,
        meta,
        link,
        binary,
        mode: None,
        like: None,
        moved_from: None,
        moved_to: None,
        notes: Vec::new(),
        hunks: Vec::new(),
    })
}

/// Creates the missing directories above `path`; returns them, deepest
/// first, so that an undo can remove them.
fn make_parents(path: &std::path::Path, shown: &str) -> Result<Vec<PathBuf>, ToolError> {
    let mut missing = Vec::new();
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d.as_os_str().is_empty() || d.exists() {
            break;
        }
        missing.push(d.to_path_buf());
        dir = d.parent();
    }
    if let Some(top) = missing.first() {
        std::fs::create_dir_all(top).map_err(|e| {
            ToolError::new(
                "patch.io",
                format!(
                    "cannot create the directory `{}` for `{shown}`: {e}.",
                    top.display()
                ),
            )
        })?;
    }
    Ok(missing)
}

fn remove_dirs(dirs: &[PathBuf]) {
    for d in dirs {
        let _ = std::fs::remove_dir(d);
    }
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
        assert!(err.message.contains("restored"), "{}", err.message);
        assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"a\n");
        assert_eq!(
            std::fs::read(dir.path().join("b.txt")).unwrap(),
            b"theirs\n"
        );
        assert!(!dir.path().join("new").exists());
    }
}
