//! The checkpoints of a run that keeps no session last as long as the run
//! and are removed at its end. A run killed outright (SIGKILL, the OOM
//! killer) cannot remove them, and no session names them for `ag-session
//! prune`, so the run holds a lock for as long as it lives: an exclusive
//! `flock` on `<index>.alive` beside its private index, which the kernel
//! lets go of however the process ends. The next such run in the same
//! place, with the same `$AG_HOME`, removes the run checkpoints whose lock
//! nobody holds.
//!
//! A run takes its lock before its first checkpoint makes the ref, so a
//! ref without a held lock is never one being made.

use std::fs::File;
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};

use super::{Checkpoints, Error};

/// How the id of a run's own checkpoints starts (`run-<uuid>`).
pub const RUN_PREFIX: &str = "run-";
/// What the lock file's name adds to the index's.
const ALIVE: &str = ".alive";

/// The lock a run holds on its checkpoints; dropped, it removes its file
/// and lets go.
#[derive(Debug)]
pub struct RunLock {
    path: PathBuf,
    _held: Flock<File>,
    /// Whether the file stays when the lock goes: the run could not remove
    /// its checkpoints, and the file is how the next run finds them.
    left_for_sweep: bool,
}

impl RunLock {
    /// Leaves the lock file in place when the lock is let go, for the
    /// next run's sweep to find the checkpoints this run could not remove.
    pub fn leave_for_sweep(&mut self) {
        self.left_for_sweep = true;
    }
}

impl Drop for RunLock {
    fn drop(&mut self) {
        // Removed while still held: a run sweeping now finds no file, and
        // the ref went first. Left, the lock goes as the file closes.
        if !self.left_for_sweep {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl Checkpoints {
    /// The lock file of these checkpoints.
    fn alive_path(&self) -> Option<PathBuf> {
        let index = self.git.index.as_ref()?;
        let mut path = index.clone().into_os_string();
        path.push(ALIVE);
        Some(PathBuf::from(path))
    }

    /// Takes the lock that says these checkpoints' run is alive; before
    /// the first checkpoint.
    pub fn hold(&self) -> Result<RunLock, Error> {
        let Some(path) = self.alive_path() else {
            return Err(Error::Refused(
                "checkpoints without a private index cannot be held".into(),
            ));
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
        }
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io("create", &path, e))?;
        let held = Flock::lock(file, FlockArg::LockExclusiveNonblock)
            .map_err(|(_, e)| Error::io("lock", &path, e.into()))?;
        Ok(RunLock {
            path,
            _held: held,
            left_for_sweep: false,
        })
    }

    /// Removes the checkpoints of this place's other runs whose lock
    /// nobody holds: their refs, private indexes and lock files. Only runs
    /// with a lock file here are looked at: a run of another `$AG_HOME`
    /// (another user, a container) keeps its lock elsewhere, and its ref
    /// is not this run's to judge. Returns how many runs' checkpoints were
    /// removed; what cannot be looked at is left as it is.
    pub fn remove_abandoned_runs(&self) -> usize {
        let Some(own) = self.git.index.clone() else {
            return 0;
        };
        let Some(dir) = own.parent() else {
            return 0;
        };
        let own = own.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let mut removed = 0;
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(id) = name.strip_suffix(ALIVE) else {
                continue;
            };
            if !is_run_id(id) || id == own {
                continue;
            }
            let other = self.of_run(id, dir);
            if other.abandoned() && other.remove().is_ok() {
                let _ = std::fs::remove_file(entry.path());
                removed += 1;
            }
        }
        removed
    }

    /// The checkpoints of the run `id` of the same place.
    fn of_run(&self, id: &str, dir: &Path) -> Checkpoints {
        let mut other = Checkpoints {
            session_id: id.to_string(),
            specs: std::sync::OnceLock::new(),
            watch: None,
            ..self.clone()
        };
        other.git.index = Some(dir.join(id));
        other
    }

    /// Whether no process holds these checkpoints' lock file (its run
    /// ended without removing them); a file gone since is no one's.
    fn abandoned(&self) -> bool {
        let Some(path) = self.alive_path() else {
            return false;
        };
        let Ok(file) = File::options().write(true).open(&path) else {
            return false;
        };
        // Held by this process only for the removal; let go when dropped.
        Flock::lock(file, FlockArg::LockExclusiveNonblock).is_ok()
    }
}

/// Whether `id` names a run's own checkpoints (`run-` and a UUID), never
/// a session's.
fn is_run_id(id: &str) -> bool {
    id.strip_prefix(RUN_PREFIX)
        .is_some_and(|rest| uuid::Uuid::parse_str(rest).is_ok())
}
