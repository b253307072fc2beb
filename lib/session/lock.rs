//! One live writer per session: a process that runs a session (ag-loop,
//! `ag-session append`) holds a lock on `<session>.lock` beside its file
//! for as long as it runs. A second one is refused at once, naming the
//! first, or waits for it. Appends are whole lines either way (see
//! [`super::Writer`]), but two runs that each append their turns to one
//! conversation leave tool results away from their calls, which no
//! provider accepts.
//!
//! The lock is a POSIX record lock (`fcntl`), not `flock`: the kernel says
//! which process holds it (`F_GETLK`), so the refusal can name it, and
//! releases it when that process ends, however it ends (`kill -9`
//! included); it is never inherited by the tools a run starts.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, fcntl};
use nix::libc;

/// A held session lock; dropping it (or the process ending) releases it.
#[derive(Debug)]
pub struct SessionLock {
    // Closing the file releases the lock.
    _file: File,
}

/// The process that holds a session's lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// Its process id (0 when the kernel could not say: a process of
    /// another PID namespace).
    pub pid: i32,
    /// Its program name (`/proc/PID/comm`), when it can be read.
    pub program: Option<String>,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.program {
            _ if self.pid <= 0 => write!(f, "a process of another PID namespace"),
            Some(p) => write!(f, "{p} (pid {})", self.pid),
            None => write!(f, "process {}", self.pid),
        }
    }
}

/// Why a session could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process runs the session.
    #[error("session `{}` is in use by {holder}, which is still running; a session has one writer at a time", session.display())]
    InUse {
        /// The session file.
        session: PathBuf,
        /// Who holds it.
        holder: Holder,
    },
    /// The lock file could not be opened or locked.
    #[error("cannot lock session `{}`: {source}", session.display())]
    Io {
        /// The session file.
        session: PathBuf,
        /// The cause.
        source: io::Error,
    },
}

/// The lock file of a session file: `<stem>.lock` beside it.
pub fn lock_path(session: &Path) -> PathBuf {
    session.with_extension("lock")
}

impl SessionLock {
    /// Takes the lock of `session`, or fails at once when another process
    /// holds it.
    pub fn try_acquire(session: &Path) -> Result<SessionLock, LockError> {
        let file = open(session)?;
        loop {
            match fcntl(&file, FcntlArg::F_SETLK(&whole_file(libc::F_WRLCK))) {
                Ok(_) => return Ok(SessionLock { _file: file }),
                Err(Errno::EAGAIN | Errno::EACCES) => {}
                Err(Errno::EINTR) => continue,
                Err(e) => return Err(io_error(session, e)),
            }
            // Held: by whom? It may have been let go of meanwhile; then try again.
            if let Some(holder) = holder(&file) {
                return Err(LockError::InUse {
                    session: session.to_path_buf(),
                    holder,
                });
            }
        }
    }

    /// Takes the lock of `session`, waiting for the process that holds it
    /// to end; `waiting` is told who that is before the wait.
    pub fn acquire_waiting(
        session: &Path,
        waiting: impl FnOnce(&Holder),
    ) -> Result<SessionLock, LockError> {
        match Self::try_acquire(session) {
            Err(LockError::InUse { holder, .. }) => waiting(&holder),
            other => return other,
        }
        let file = open(session)?;
        loop {
            match fcntl(&file, FcntlArg::F_SETLKW(&whole_file(libc::F_WRLCK))) {
                Ok(_) => return Ok(SessionLock { _file: file }),
                Err(Errno::EINTR) => continue,
                Err(e) => return Err(io_error(session, e)),
            }
        }
    }

    /// Who holds the lock of `session` now, if anyone.
    pub fn holder(session: &Path) -> Option<Holder> {
        File::open(lock_path(session)).ok().and_then(|f| holder(&f))
    }
}

fn open(session: &Path) -> Result<File, LockError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(lock_path(session))
        .map_err(|source| LockError::Io {
            session: session.to_path_buf(),
            source,
        })
}

fn io_error(session: &Path, e: Errno) -> LockError {
    LockError::Io {
        session: session.to_path_buf(),
        source: io::Error::from(e),
    }
}

/// A lock request over the whole file.
fn whole_file(kind: libc::c_int) -> libc::flock {
    libc::flock {
        l_type: kind as libc::c_short,
        l_whence: libc::SEEK_SET as libc::c_short,
        l_start: 0,
        l_len: 0,
        l_pid: 0,
    }
}

/// The process holding a write lock on `file`, asked of the kernel.
fn holder(file: &File) -> Option<Holder> {
    let mut probe = whole_file(libc::F_WRLCK);
    fcntl(file, FcntlArg::F_GETLK(&mut probe)).ok()?;
    if probe.l_type == libc::F_UNLCK as libc::c_short {
        return None;
    }
    let program = (probe.l_pid > 0)
        .then(|| std::fs::read_to_string(format!("/proc/{}/comm", probe.l_pid)).ok())
        .flatten()
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty());
    Some(Holder {
        pid: probe.l_pid,
        program,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_file_sits_beside_the_session() {
        assert_eq!(
            lock_path(Path::new("/s/2026_abc.jsonl")),
            Path::new("/s/2026_abc.lock")
        );
    }

    #[test]
    fn a_free_session_is_taken_and_has_no_holder_after() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("s.jsonl");
        std::fs::write(&session, "").unwrap();
        assert_eq!(SessionLock::holder(&session), None);
        let lock = SessionLock::try_acquire(&session).unwrap();
        // POSIX locks do not conflict within one process: the holder is
        // only seen from another (tests/it/session_writers.rs).
        drop(lock);
        assert_eq!(SessionLock::holder(&session), None);
    }
}
