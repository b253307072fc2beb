//! Where ag-serve keeps its files: `$AG_HOME/serve/`, a directory only its
//! owner may enter (mode 0700), holding the socket (0600), the HTTP token
//! (0600), the lock that keeps a second broker out, and the list of the
//! sessions it ran. The directory's mode is what guards the socket between
//! its creation and its chmod, and the token file is written whole before
//! anyone can open it.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};

/// ag-serve's files.
#[derive(Debug, Clone)]
pub struct Paths {
    /// `$AG_HOME/serve`.
    pub dir: PathBuf,
    /// The Unix socket clients connect to.
    pub socket: PathBuf,
    /// The HTTP token.
    pub token: PathBuf,
    /// Held by the running broker.
    pub lock: PathBuf,
    /// The sessions ag-serve ran, one JSON line each.
    pub registry: PathBuf,
}

impl Paths {
    /// The files under `home` (`$AG_HOME`); `socket` replaces the default socket.
    pub fn new(home: &Path, socket: Option<PathBuf>) -> Paths {
        let dir = home.join("serve");
        Paths {
            socket: socket.unwrap_or_else(|| dir.join("socket")),
            token: dir.join("token"),
            lock: dir.join("lock"),
            registry: dir.join("sessions.jsonl"),
            dir,
        }
    }

    /// Makes the directory, or tightens an existing one, to mode 0700.
    pub fn make_dir(&self) -> io::Result<()> {
        fs::create_dir_all(&self.dir).map_err(|e| with_path(e, "cannot create", &self.dir))?;
        fs::set_permissions(&self.dir, fs::Permissions::from_mode(0o700))
            .map_err(|e| with_path(e, "cannot set the mode of", &self.dir))
    }

    /// Takes the broker's lock, or says that another broker holds it.
    pub fn lock(&self) -> io::Result<Flock<File>> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&self.lock)
            .map_err(|e| with_path(e, "cannot open", &self.lock))?;
        Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|(_, e)| {
            if e == nix::errno::Errno::EWOULDBLOCK {
                io::Error::new(
                    io::ErrorKind::AddrInUse,
                    format!(
                        "another ag-serve runs with `{}` (it holds `{}`)",
                        self.dir.display(),
                        self.lock.display()
                    ),
                )
            } else {
                with_path(io::Error::from(e), "cannot lock", &self.lock)
            }
        })
    }

    /// Writes a new token, readable by its owner only.
    pub fn write_token(&self, token: &str) -> io::Result<()> {
        let tmp = self.dir.join(".token.tmp");
        let _ = fs::remove_file(&tmp);
        let mut f = OpenOptions::new()
            .create_new(true)
            .write(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(|e| with_path(e, "cannot create", &tmp))?;
        f.write_all(format!("{token}\n").as_bytes())
            .and_then(|()| f.sync_all())
            .map_err(|e| with_path(e, "cannot write", &tmp))?;
        fs::rename(&tmp, &self.token).map_err(|e| with_path(e, "cannot write", &self.token))
    }
}

fn with_path(e: io::Error, action: &str, path: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("{action} `{}`: {e}", path.display()))
}

/// A new token: 32 random bytes, as hex.
pub fn new_token() -> String {
    // Two v4 uuids are 244 random bits from the OS's generator.
    let a = uuid::Uuid::new_v4();
    let b = uuid::Uuid::new_v4();
    format!("{}{}", a.simple(), b.simple())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directory_and_token_are_the_owners_only_and_a_second_broker_is_kept_out() {
        let home = tempfile::tempdir().unwrap();
        let p = Paths::new(home.path(), None);
        p.make_dir().unwrap();
        let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&p.dir), 0o700);
        let t = new_token();
        assert_eq!(t.len(), 64);
        assert_ne!(t, new_token());
        p.write_token(&t).unwrap();
        assert_eq!(mode(&p.token), 0o600);
        assert_eq!(fs::read_to_string(&p.token).unwrap().trim(), t);
        let held = p.lock().unwrap();
        let e = p.lock().unwrap_err();
        assert!(e.to_string().contains("another ag-serve"), "{e}");
        drop(held);
        p.lock().unwrap();
    }
}
