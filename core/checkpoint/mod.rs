//! Checkpoints: the working tree recorded as git commits on a ref of ag's
//! own, `refs/ag/checkpoints/<session-id>`, and put back on request, without
//! ever touching the user's HEAD, index, stash, branches or other refs.
//!
//! Recording goes through a private index, one per session, kept under
//! `$AG_HOME/checkpoints/index/<place>/<session-id>`: `git add -A` into it
//! (untracked files included, ignored files left out, files over a size
//! limit left out with a note), `write-tree`, and `commit-tree` whose parent
//! is the session's previous checkpoint. git's stat cache in that index is
//! what makes a checkpoint of a large tree with one changed file cheap, so
//! the index is kept across turns rather than rebuilt; a new session's index
//! starts as a copy of the newest one of the same place. A tree that did not
//! change since the last checkpoint costs no commit. The last checkpoint's
//! commit and tree are cached beside the index (`head.rs`), checked by git
//! on every use, so that a checkpoint need not read the ref first.
//!
//! A session that watches the tree (ag-loop, `watch.rs`) takes its
//! checkpoints after the first without git: `in_process.rs` edits the last
//! tree at the paths the watches named and writes the objects and the ref
//! itself. What it cannot take goes the git way above, with a note; the
//! private index then lags, so the git way looks at the whole tree.
//!
//! A directory that is not in a git working tree gets a shadow repository,
//! `$AG_HOME/checkpoints/repos/<place>` (bare, run with `--git-dir` and
//! `--work-tree`). A bare repository, or a directory inside a `.git`
//! directory, is refused. A repository mid-merge or mid-rebase, a linked
//! worktree and a submodule's own working tree work like any other: only
//! objects and ag's ref are added to the repository. `$AG_HOME`, when it lies
//! inside the working tree, is never recorded nor restored.
//!
//! Restoring writes the files that differ between the current tree and a
//! checkpoint straight from the stored blobs (no filters, modes kept,
//! symlinks as symlinks), removes the files that the checkpoint does not
//! have, and never writes through a symlinked directory.

mod changes;
mod git;
mod head;
mod in_process;
mod record;
mod restore;
mod run_lock;
mod watch;

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

pub use changes::Changes;
pub use git::EMPTY_TREE;
pub use record::Recorded;
pub use restore::Restored;
pub use run_lock::{RUN_PREFIX, RunLock};

use git::Git;

/// The default size above which a file is left out of a checkpoint.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// The size limit set in a config file (`checkpoint_max_file_size`, the
/// key ag-loop reads too), else the default: for `ag-session`, which takes
/// checkpoints outside ag-loop and reads only this key of the file. An
/// unreadable file or value gives the default.
pub fn configured_max_file_bytes(config: &Path) -> u64 {
    #[derive(serde::Deserialize)]
    struct Limit {
        checkpoint_max_file_size: Option<u64>,
    }
    std::fs::read_to_string(config)
        .ok()
        .and_then(|text| toml::from_str::<Limit>(&text).ok())
        .and_then(|l| l.checkpoint_max_file_size)
        .unwrap_or(DEFAULT_MAX_FILE_BYTES)
}

/// The prefix of every checkpoint ref.
pub const REF_PREFIX: &str = "refs/ag/checkpoints/";

/// What can go wrong with checkpoints.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// This directory cannot have checkpoints, and why.
    #[error("{0}")]
    Refused(String),
    /// git is not installed.
    #[error("git is not installed (there is no `git` on PATH); checkpoints need it")]
    NoGit,
    /// A git command failed.
    #[error("`{command}` failed: {said}")]
    Git {
        /// The command.
        command: String,
        /// What git said.
        said: String,
    },
    /// A file system step failed.
    #[error("cannot {action} `{}`: {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

impl Error {
    /// A stable code for messages and events.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Refused(_) => "checkpoint.refused",
            Error::NoGit => "checkpoint.no_git",
            Error::Git { .. } => "checkpoint.git",
            Error::Io { .. } => "checkpoint.io",
        }
    }

    pub(crate) fn io(action: &'static str, path: &Path, source: std::io::Error) -> Error {
        Error::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Where checkpoints of a directory live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The top of the working tree that is recorded.
    pub work_tree: PathBuf,
    /// The repository that holds the objects and the ref.
    pub git_dir: PathBuf,
    /// True for a shadow repository under `$AG_HOME/checkpoints/repos`.
    pub shadow: bool,
}

impl Place {
    /// The place of `cwd`: its git working tree, else a shadow repository
    /// (created on first use) under `home` (`$AG_HOME`).
    pub fn find(cwd: &Path, home: &Path) -> Result<Place, Error> {
        let cwd = cwd
            .canonicalize()
            .map_err(|e| Error::io("resolve", cwd, e))?;
        let ran = git::plain(
            &cwd,
            &[
                "rev-parse",
                "--is-bare-repository",
                "--is-inside-git-dir",
                "--absolute-git-dir",
            ],
        )?;
        if !ran.success() {
            if ran.stderr.contains("not a git repository") {
                return Place::shadow(&cwd, home);
            }
            return Err(git::check(ran, &["rev-parse"])
                .err()
                .unwrap_or(Error::NoGit));
        }
        let text = ran.text();
        let lines: Vec<&str> = text.lines().collect();
        if lines.first() == Some(&"true") {
            return Err(Error::Refused(format!(
                "`{}` is a bare git repository: it has no working tree to record; run ag-loop in a working tree (a clone, or `git worktree add`)",
                cwd.display()
            )));
        }
        if lines.get(1) == Some(&"true") {
            return Err(Error::Refused(format!(
                "`{}` is inside a git directory, not a working tree; run ag-loop in the working tree",
                cwd.display()
            )));
        }
        let git_dir = PathBuf::from(lines.get(2).copied().unwrap_or_default());
        let top = git::plain(&cwd, &["rev-parse", "--show-toplevel"])?;
        let top = git::check(top, &["rev-parse", "--show-toplevel"])?.text();
        if top.is_empty() {
            return Err(Error::Refused(format!(
                "`{}` has no git working tree",
                cwd.display()
            )));
        }
        Ok(Place {
            work_tree: PathBuf::from(top),
            git_dir,
            shadow: false,
        })
    }

    fn shadow(cwd: &Path, home: &Path) -> Result<Place, Error> {
        let user_home = std::env::var_os("HOME").map(PathBuf::from);
        if cwd == Path::new("/")
            || user_home.is_some_and(|h| h.canonicalize().is_ok_and(|h| h == cwd))
        {
            return Err(Error::Refused(format!(
                "`{}` is not a git working tree, and recording all of it (the root or the home directory) would be too slow; run ag-loop in a project directory",
                cwd.display()
            )));
        }
        let git_dir = home.join("checkpoints").join("repos").join(key(cwd));
        if !git_dir.join("HEAD").is_file() {
            std::fs::create_dir_all(&git_dir).map_err(|e| Error::io("create", &git_dir, e))?;
            let dir = git_dir.to_string_lossy().into_owned();
            let args = ["init", "-q", "--bare", "--template=", dir.as_str()];
            git::check(git::plain(&git_dir, &args)?, &args)?;
        }
        Ok(Place {
            work_tree: cwd.to_path_buf(),
            git_dir,
            shadow: true,
        })
    }

    /// A short name for this place's files under `$AG_HOME/checkpoints`.
    pub fn key(&self) -> String {
        key(&self.work_tree)
    }
}

/// `<last component>-<hash of the whole path>`: readable and unique.
fn key(dir: &Path) -> String {
    let name: String = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let hash = xxhash_rust::xxh3::xxh3_64(dir.as_os_str().as_encoded_bytes());
    format!("{name}-{hash:016x}")
}

/// One session's checkpoints in one place.
#[derive(Debug, Clone)]
pub struct Checkpoints {
    /// Where they live.
    pub place: Place,
    /// The session.
    pub session_id: String,
    /// Files larger than this are left out.
    pub max_file_bytes: u64,
    git: Git,
    /// Paths (relative to the work tree) never recorded nor restored.
    excluded: Vec<String>,
    /// Pathspecs leaving out those of `excluded` that .gitignore does not
    /// already leave out (git refuses a pathspec naming an ignored path).
    specs: std::sync::OnceLock<Vec<String>>,
    /// Set by [`Checkpoints::watching`]: the watches on the working tree
    /// and what in-process snapshots need, shared by the clones of these
    /// checkpoints.
    watch: Option<std::sync::Arc<std::sync::Mutex<Live>>>,
}

/// The environment variable that makes every checkpoint go through git
/// processes, as before checkpoints were taken in-process: for comparing
/// the two, and for a repository where the in-process way is suspected.
pub const WITH_GIT_ENV: &str = "AG_CHECKPOINT_WITH_GIT";

/// A watching session's state between snapshots.
#[derive(Debug)]
struct Live {
    watching: Watching,
    direct: Direct,
    /// The tree of the last snapshot: what the watches' list of changes is
    /// relative to, and so the base of an in-process snapshot.
    last_tree: Option<String>,
    /// False once a snapshot was taken in-process (or a git one failed):
    /// the private index lags behind the tree, so the git way must then
    /// look at everything rather than at the watches' list.
    index_in_step: bool,
}

/// Whether snapshots are taken in-process (see `in_process.rs`).
#[derive(Debug)]
enum Direct {
    /// Not tried yet: the store is opened on first use.
    Untried,
    On(in_process::Store),
    /// Never in this session, and why (`noted`: the reason was given once).
    Off {
        why: String,
        noted: bool,
    },
}

/// Where watching the working tree stands.
#[derive(Debug)]
enum Watching {
    /// The first snapshot starts it.
    NotYet,
    On(watch::Watch),
    /// inotify is not to be had: every snapshot asks git about everything.
    Unavailable,
}

impl Checkpoints {
    /// The checkpoints of `session_id` in `place`, with ag's files under
    /// `home` (`$AG_HOME`).
    pub fn new(place: Place, session_id: &str, home: &Path, max_file_bytes: u64) -> Checkpoints {
        let index = home
            .join("checkpoints")
            .join("index")
            .join(place.key())
            .join(session_id);
        let mut excluded = Vec::new();
        // ag's own files (sessions, this index) change on every event.
        let home = home.canonicalize().unwrap_or_else(|_| home.to_path_buf());
        if let Ok(rel) = home.strip_prefix(&place.work_tree)
            && !rel.as_os_str().is_empty()
        {
            excluded.push(rel.to_string_lossy().into_owned());
        }
        Checkpoints {
            git: Git {
                git_dir: place.git_dir.clone(),
                work_tree: place.work_tree.clone(),
                index: Some(index),
            },
            place,
            session_id: session_id.to_string(),
            max_file_bytes,
            excluded,
            specs: std::sync::OnceLock::new(),
            watch: None,
        }
    }

    /// The same checkpoints, with the working tree watched from the first
    /// snapshot on, so that later ones ask git only about what changed
    /// (see `watch.rs`): for a caller that takes many, ag-loop.
    ///
    /// Snapshots after the first are then taken in-process from the
    /// watches' list (see `in_process.rs`), unless [`WITH_GIT_ENV`] is set
    /// to anything but `0`.
    pub fn watching(self) -> Checkpoints {
        let forced = std::env::var_os(WITH_GIT_ENV).is_some_and(|v| !v.is_empty() && v != "0");
        self.watching_with(!forced)
    }

    /// [`Checkpoints::watching`], in-process snapshots on or off.
    pub(crate) fn watching_with(mut self, in_process: bool) -> Checkpoints {
        let direct = if in_process {
            Direct::Untried
        } else {
            Direct::Off {
                why: format!("{WITH_GIT_ENV} is set"),
                noted: true,
            }
        };
        self.watch = Some(std::sync::Arc::new(std::sync::Mutex::new(Live {
            watching: Watching::NotYet,
            direct,
            last_tree: None,
            index_in_step: true,
        })));
        self
    }

    /// What changed since the last snapshot, as far as the watches tell:
    /// `None` to look at everything (no watches, their first use, or a
    /// list that could be incomplete).
    #[cfg(test)]
    fn changed_since_last(&self) -> Option<Vec<PathBuf>> {
        let cell = self.watch.as_ref()?;
        let mut live = cell.lock().unwrap_or_else(|e| e.into_inner());
        self.changed_since(&mut live)
    }

    /// What changed since the last snapshot, with the state locked.
    fn changed_since(&self, live: &mut Live) -> Option<Vec<PathBuf>> {
        let state = &mut live.watching;
        match state {
            Watching::On(w) => match w.take() {
                watch::Changes::All => None,
                watch::Changes::Only(paths) => Some(paths),
            },
            Watching::Unavailable => None,
            Watching::NotYet => {
                // Tracked files that .gitignore would leave out live in
                // directories the walk skips.
                let ignored_tracked = self
                    .git
                    .ok(&[
                        "ls-files",
                        "-z",
                        "--cached",
                        "--ignored",
                        "--exclude-standard",
                    ])
                    .map(|r| r.stdout)
                    .unwrap_or_default();
                let dirs: std::collections::BTreeSet<PathBuf> = ignored_tracked
                    .split(|b| *b == 0)
                    .filter(|p| !p.is_empty())
                    .filter_map(|p| {
                        Path::new(std::ffi::OsStr::from_bytes(p))
                            .parent()
                            .map(Path::to_path_buf)
                    })
                    .collect();
                *state = match watch::Watch::start(
                    &self.place.work_tree,
                    &self.place.git_dir,
                    self.excluded.iter().map(PathBuf::from).collect(),
                    dirs,
                ) {
                    Some(w) => Watching::On(w),
                    None => Watching::Unavailable,
                };
                None
            }
        }
    }

    /// `refs/ag/checkpoints/<session-id>`.
    pub fn ref_name(&self) -> String {
        format!("{REF_PREFIX}{}", self.session_id)
    }

    /// The session's latest checkpoint and its tree, if it has one.
    pub fn head(&self) -> Result<Option<(String, String)>, Error> {
        let name = self.ref_name();
        let ran = self.git.ok(&[
            "for-each-ref",
            "--format=%(objectname) %(tree)",
            name.as_str(),
        ])?;
        let text = ran.text();
        for line in text.lines() {
            if let Some((commit, tree)) = line.split_once(' ')
                && !tree.is_empty()
            {
                return Ok(Some((commit.to_string(), tree.to_string())));
            }
        }
        Ok(None)
    }

    /// Points the session's ref at `commit` (a checkpoint of another
    /// session, when a rewind forks one), so that its next checkpoint has
    /// it as parent and keeps it alive.
    pub fn set_head(&self, commit: &str) -> Result<(), Error> {
        let name = self.ref_name();
        self.remember(None);
        self.git.ok(&["update-ref", name.as_str(), commit])?;
        Ok(())
    }

    /// The tree of a commit.
    pub fn tree_of(&self, commit: &str) -> Result<String, Error> {
        let spec = format!("{commit}^{{tree}}");
        Ok(self
            .git
            .ok(&["rev-parse", "--verify", "-q", spec.as_str()])?
            .text())
    }

    /// The trees of these commits (an empty string for one not stored).
    pub fn trees_of(&self, commits: &[String]) -> Result<Vec<String>, Error> {
        if commits.is_empty() {
            return Ok(Vec::new());
        }
        let input: String = commits.iter().map(|c| format!("{c}^{{tree}}\n")).collect();
        let ran = self.git.ok_with(
            &["cat-file", "--batch-check=%(objectname) %(objecttype)"],
            input.into_bytes(),
        )?;
        Ok(ran
            .text()
            .lines()
            .map(|l| match l.split_once(' ') {
                Some((id, "tree")) => id.to_string(),
                _ => String::new(),
            })
            .collect())
    }

    /// Whether `commit` is stored in the repository.
    pub fn exists(&self, commit: &str) -> Result<bool, Error> {
        let spec = format!("{commit}^{{commit}}");
        Ok(self.git.run(&["cat-file", "-e", spec.as_str()])?.success())
    }

    /// A unified diff between two trees (`--stat` first when `stat`).
    pub fn diff(&self, from: &str, to: &str, stat: bool, patch: bool) -> Result<String, Error> {
        let mut args = vec![
            "diff-tree",
            "-r",
            "--no-ext-diff",
            "--no-textconv",
            "--no-color",
            "--no-renames",
        ];
        if stat {
            // --summary: a mode change or a new file says so beside the counts.
            args.push("--stat=100");
            args.push("--summary");
        }
        if patch {
            args.push("-p");
            args.push("--binary");
        }
        args.push(from);
        args.push(to);
        Ok(String::from_utf8_lossy(&self.git.ok(&args)?.stdout).into_owned())
    }

    /// Removes the session's ref and private index (pruning a session); a
    /// repository that is gone leaves only the index to remove.
    pub fn remove(&self) -> Result<(), Error> {
        if self.place.git_dir.exists() {
            let name = self.ref_name();
            let ran = self.git.run(&["update-ref", "-d", name.as_str()])?;
            if !ran.success() && self.head()?.is_some() {
                git::check(ran, &["update-ref", "-d"])?;
            }
        }
        self.remember(None);
        if let Some(index) = &self.git.index {
            match std::fs::remove_file(index) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(Error::io("remove", index, e));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Every checkpoint ref of the repository (of any session).
    pub fn refs(&self) -> Result<Vec<String>, Error> {
        let ran = self
            .git
            .ok(&["for-each-ref", "--format=%(refname)", REF_PREFIX])?;
        Ok(ran.text().lines().map(str::to_string).collect())
    }

    /// The pathspecs that leave ag's files out.
    fn exclude_specs(&self) -> Result<Vec<String>, Error> {
        if let Some(specs) = self.specs.get() {
            return Ok(specs.clone());
        }
        let mut specs = Vec::new();
        for p in &self.excluded {
            let ignored = self
                .git
                .run(&["check-ignore", "-q", "--no-index", "--", p.as_str()])?;
            if !ignored.success() {
                specs.push(format!(":(exclude,literal){p}"));
            }
        }
        Ok(self.specs.get_or_init(|| specs).clone())
    }

    fn is_excluded(&self, path: &str) -> bool {
        self.excluded.iter().any(|e| {
            path == e
                || path
                    .strip_prefix(e.as_str())
                    .is_some_and(|r| r.starts_with('/'))
        })
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod in_process_tests;
