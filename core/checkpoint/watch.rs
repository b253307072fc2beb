//! Knowing what changed since the last checkpoint without looking at every
//! file. `git status` over a large tree is mostly one lstat(2) per tracked
//! file and a read of every directory, which is the floor of a checkpoint
//! that asks git what changed (30 ms for 10,000 files here). ag-loop lives
//! for the whole session, so it can instead be told: an inotify watch on
//! every directory of the working tree that git looks at (the ones
//! .gitignore leaves in, and those holding tracked files it would ignore)
//! collects the names of what was created, written, removed, renamed or
//! had its mode changed, and the next checkpoint asks `git status` about
//! those names only.
//!
//! Whenever that list could be incomplete, the answer is "look at
//! everything" ([`Changes::All`]): the first time, when the kernel's queue
//! overflowed, when a `.gitignore` or `.git/info/exclude` changed (an
//! ignored file may have become visible without being touched), when a
//! directory could not be watched (the watch limit), and when the list is
//! long enough that one full status costs less. Files changed through
//! mmap(2) alone, or on a network file system by another machine, send no
//! event; ag-session's own checkpoints (a forced rewind) never use this.

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};

/// More changed names than this: one full status is cheaper.
const MOST: usize = 2000;

/// What the next snapshot should look at.
#[derive(Debug, PartialEq, Eq)]
pub enum Changes {
    /// Everything: the list could be incomplete.
    All,
    /// Only these paths (relative to the work tree; a directory stands for
    /// all beneath it). Empty: nothing changed.
    Only(Vec<PathBuf>),
}

/// The watches on one working tree.
#[derive(Debug)]
pub struct Watch {
    inotify: Inotify,
    work_tree: PathBuf,
    /// Paths (relative to the work tree) never watched: ag's own files.
    skip: Vec<PathBuf>,
    /// Each watched directory, relative to the work tree ("" for the top).
    dirs: HashMap<WatchDescriptor, PathBuf>,
    /// The watch on the repository's `info` directory (its `exclude`).
    info: Option<WatchDescriptor>,
    changed: BTreeSet<PathBuf>,
    /// Set when what was collected may miss a change.
    incomplete: bool,
    /// Set when a directory could not be watched: every answer is `All`.
    given_up: bool,
}

/// What a watched directory reports.
fn mask() -> AddWatchFlags {
    AddWatchFlags::IN_MODIFY
        | AddWatchFlags::IN_ATTRIB
        | AddWatchFlags::IN_CLOSE_WRITE
        | AddWatchFlags::IN_CREATE
        | AddWatchFlags::IN_DELETE
        | AddWatchFlags::IN_MOVED_FROM
        | AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_DELETE_SELF
        | AddWatchFlags::IN_MOVE_SELF
        | AddWatchFlags::IN_DONT_FOLLOW
        | AddWatchFlags::IN_ONLYDIR
}

impl Watch {
    /// Watches the directories of `work_tree` that git looks at, and the
    /// directories of `tracked_dirs` (those of tracked files that
    /// .gitignore would leave out), leaving out `skip`; `git_dir`'s
    /// `info/exclude` is watched too. `None` where inotify is not to be
    /// had.
    pub fn start(
        work_tree: &Path,
        git_dir: &Path,
        skip: Vec<PathBuf>,
        tracked_dirs: impl IntoIterator<Item = PathBuf>,
    ) -> Option<Watch> {
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).ok()?;
        let info = inotify
            .add_watch(
                &git_dir.join("info"),
                AddWatchFlags::IN_CREATE
                    | AddWatchFlags::IN_CLOSE_WRITE
                    | AddWatchFlags::IN_MOVED_TO
                    | AddWatchFlags::IN_DELETE
                    | AddWatchFlags::IN_ONLYDIR,
            )
            .ok();
        let mut w = Watch {
            inotify,
            work_tree: work_tree.to_path_buf(),
            skip,
            dirs: HashMap::new(),
            info,
            changed: BTreeSet::new(),
            incomplete: false,
            given_up: false,
        };
        w.add_tree(Path::new(""));
        for d in tracked_dirs {
            if !w.dirs.values().any(|v| *v == d) {
                w.add_dir(&d);
            }
        }
        Some(w)
    }

    /// Watches `rel` and every directory beneath it that git looks at.
    fn add_tree(&mut self, rel: &Path) {
        let top = self.work_tree.join(rel);
        // A new directory is walked from its parent, so that .gitignore can
        // leave it out itself (a build's new `target/`, thousands of
        // directories that git never looks at).
        let (root, only) = match top.parent() {
            Some(parent) if !rel.as_os_str().is_empty() => {
                (parent.to_path_buf(), Some(top.clone()))
            }
            _ => (top.clone(), None),
        };
        let skip: Vec<PathBuf> = self.skip.iter().map(|s| self.work_tree.join(s)).collect();
        let walk = ignore::WalkBuilder::new(&root)
            .standard_filters(false)
            .git_ignore(true)
            .git_exclude(true)
            .git_global(true)
            .parents(true)
            .require_git(false)
            .follow_links(false)
            .filter_entry(move |e| {
                e.file_name() != ".git"
                    && !skip.iter().any(|s| e.path().starts_with(s))
                    && only
                        .as_ref()
                        .is_none_or(|t| e.depth() == 0 || e.path().starts_with(t))
            })
            .build();
        for entry in walk.flatten() {
            if !entry.file_type().is_some_and(|t| t.is_dir())
                || (entry.path() == root && root != top)
            {
                continue;
            }
            let Ok(rel) = entry.path().strip_prefix(&self.work_tree) else {
                continue;
            };
            let rel = rel.to_path_buf();
            self.add_dir(&rel);
        }
    }

    fn add_dir(&mut self, rel: &Path) {
        match self.inotify.add_watch(&self.work_tree.join(rel), mask()) {
            Ok(wd) => {
                self.dirs.insert(wd, rel.to_path_buf());
            }
            // Gone meanwhile, or a symlink now: its parent's event says so.
            Err(Errno::ENOENT | Errno::ENOTDIR) => {}
            // The watch limit (ENOSPC) or anything else: no list can be
            // trusted from now on.
            Err(_) => self.given_up = true,
        }
    }

    /// Forgets the watches of `rel` and beneath: a directory renamed keeps
    /// its watches, which would go on reporting it under its old name; its
    /// new name is watched afresh.
    fn forget_tree(&mut self, rel: &Path) {
        let gone: Vec<WatchDescriptor> = self
            .dirs
            .iter()
            .filter(|(_, d)| d.starts_with(rel))
            .map(|(wd, _)| *wd)
            .collect();
        for wd in gone {
            self.dirs.remove(&wd);
            let _ = self.inotify.rm_watch(wd);
        }
    }

    /// Reads what the kernel has queued.
    fn drain(&mut self) {
        loop {
            let events = match self.inotify.read_events() {
                Ok(e) => e,
                Err(Errno::EAGAIN) => return,
                Err(Errno::EINTR) => continue,
                Err(_) => {
                    self.incomplete = true;
                    return;
                }
            };
            for e in events {
                if e.mask.contains(AddWatchFlags::IN_Q_OVERFLOW) {
                    self.incomplete = true;
                    continue;
                }
                if Some(e.wd) == self.info {
                    // .git/info/exclude written: what is ignored may differ.
                    self.incomplete = true;
                    continue;
                }
                let Some(dir) = self.dirs.get(&e.wd).cloned() else {
                    continue;
                };
                if e.mask.contains(AddWatchFlags::IN_IGNORED) {
                    self.dirs.remove(&e.wd);
                    continue;
                }
                let Some(name) = e.name else {
                    // The directory itself went (its parent reports it too).
                    self.changed.insert(dir);
                    continue;
                };
                if name.as_bytes() == b".gitignore" {
                    self.incomplete = true;
                }
                let rel = dir.join(&name);
                if self.skip.iter().any(|s| rel.starts_with(s)) || name == OsStr::new(".git") {
                    continue;
                }
                if e.mask.contains(AddWatchFlags::IN_ISDIR) {
                    if e.mask.contains(AddWatchFlags::IN_MOVED_FROM) {
                        self.forget_tree(&rel);
                    }
                    if e.mask
                        .intersects(AddWatchFlags::IN_CREATE | AddWatchFlags::IN_MOVED_TO)
                    {
                        // Files made in it before its watch was added are
                        // covered by naming the whole directory.
                        self.add_tree(&rel);
                    }
                }
                self.changed.insert(rel);
            }
        }
    }

    /// What changed since the last call, and starts collecting afresh.
    pub fn take(&mut self) -> Changes {
        self.drain();
        let changed = std::mem::take(&mut self.changed);
        let all = self.given_up
            || std::mem::take(&mut self.incomplete)
            || changed.len() > MOST
            // The top itself went.
            || changed.contains(Path::new(""));
        if all {
            return Changes::All;
        }
        // A directory named stands for all beneath it.
        let mut out: Vec<PathBuf> = Vec::with_capacity(changed.len());
        for p in changed {
            if !out.last().is_some_and(|d| p.starts_with(d)) {
                out.push(p);
            }
        }
        Changes::Only(out)
    }
}
