//! The session directory: `$AG_HOME/sessions/--<cwd with / as ->--/`
//! `<UTC timestamp>_<uuid>.jsonl`, finding a session by a unique prefix or
//! suffix of its id, and the shortest prefix that finds it.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::protocol::{SessionHeader, SessionTag};

/// What can go wrong finding or making a session.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No session matches.
    #[error("no session matches `{0}`; `ag-session list --all` shows the sessions there are")]
    NotFound(String),
    /// Several sessions match a prefix or suffix.
    #[error("`{prefix}` is ambiguous; give more of the id. It matches:\n{}", candidates.join("\n"))]
    Ambiguous {
        /// The prefix or suffix given.
        prefix: String,
        /// The ids it matches.
        candidates: Vec<String>,
    },
    /// A file system error, with the path.
    #[error("{action} `{path}`: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
}

impl StoreError {
    fn io(action: &'static str, path: &Path, source: io::Error) -> Self {
        StoreError::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}

/// The root of all sessions.
#[derive(Debug, Clone)]
pub struct Store {
    /// `$AG_HOME/sessions`.
    pub root: PathBuf,
}

/// One session file found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFile {
    /// The session's id (the uuid in the file name).
    pub id: String,
    /// The file.
    pub path: PathBuf,
    /// The timestamp part of the file name, which sorts by time.
    pub stamp: String,
}

/// `$AG_HOME`, defaulting to `~/.ag`.
pub fn ag_home() -> PathBuf {
    if let Some(h) = std::env::var_os("AG_HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(h);
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    home.join(".ag")
}

/// The directory name for a working directory: `/a/b` becomes `--a-b--`.
pub fn cwd_dir_name(cwd: &Path) -> String {
    let s = cwd.to_string_lossy();
    let trimmed = s.trim_start_matches('/');
    format!("--{}--", trimmed.replace(['/', '\\', ':'], "-"))
}

impl Store {
    /// The store under `$AG_HOME`.
    pub fn from_env() -> Self {
        Store {
            root: ag_home().join("sessions"),
        }
    }

    /// The directory of a working directory's sessions.
    pub fn dir_for(&self, cwd: &Path) -> PathBuf {
        self.root.join(cwd_dir_name(cwd))
    }

    /// Creates a new session file holding only its header, and returns it.
    pub fn create(
        &self,
        cwd: &Path,
        config: serde_json::Value,
        parent: Option<String>,
    ) -> Result<(SessionFile, SessionHeader), StoreError> {
        let dir = self.dir_for(cwd);
        fs::create_dir_all(&dir).map_err(|e| StoreError::io("cannot create", &dir, e))?;
        let id = uuid::Uuid::now_v7().to_string();
        let now = jiff::Timestamp::now();
        let timestamp = format!("{now:.3}");
        let stamp = timestamp.replace([':', '.'], "-");
        let path = dir.join(format!("{stamp}_{id}.jsonl"));
        let header = SessionHeader {
            kind: SessionTag::Session,
            version: 1,
            id: id.clone(),
            timestamp,
            cwd: cwd.to_string_lossy().into_owned(),
            config,
            parent,
        };
        let mut line = serde_json::to_vec(&header).map_err(|e| {
            StoreError::io("cannot encode the header of", &path, io::Error::other(e))
        })?;
        line.push(b'\n');
        // create_new: a session file is never overwritten.
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| StoreError::io("cannot create", &path, e))?;
        io::Write::write_all(&mut file, &line)
            .map_err(|e| StoreError::io("cannot write", &path, e))?;
        file.sync_data()
            .map_err(|e| StoreError::io("cannot sync", &path, e))?;
        Ok((SessionFile { id, path, stamp }, header))
    }

    /// The sessions of one working directory, newest first.
    pub fn list_dir(&self, cwd: &Path) -> Result<Vec<SessionFile>, StoreError> {
        let mut out = scan_dir(&self.dir_for(cwd))?;
        out.sort_by(|a, b| b.stamp.cmp(&a.stamp));
        Ok(out)
    }

    /// Every session, newest first.
    pub fn list_all(&self) -> Result<Vec<SessionFile>, StoreError> {
        let mut out = Vec::new();
        let entries = match fs::read_dir(&self.root) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(StoreError::io("cannot read", &self.root, e)),
        };
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                out.extend(scan_dir(&entry.path())?);
            }
        }
        out.sort_by(|a, b| b.stamp.cmp(&a.stamp));
        Ok(out)
    }

    /// The newest session of a working directory.
    pub fn latest(&self, cwd: &Path) -> Result<Option<SessionFile>, StoreError> {
        Ok(self.list_dir(cwd)?.into_iter().next())
    }

    /// Finds a session by id, unique id prefix or suffix (`list` shows a
    /// prefix; the last characters of an id work too), or path to its file.
    pub fn find(&self, wanted: &str) -> Result<SessionFile, StoreError> {
        let as_path = Path::new(wanted);
        if wanted.ends_with(".jsonl") && as_path.is_file() {
            return Ok(file_of(as_path).unwrap_or(SessionFile {
                id: wanted.to_string(),
                path: as_path.to_path_buf(),
                stamp: String::new(),
            }));
        }
        let wanted_lower = wanted.to_lowercase();
        let mut matches: Vec<SessionFile> = self
            .list_all()?
            .into_iter()
            .filter(|s| {
                !wanted.is_empty()
                    && (s.id.starts_with(&wanted_lower) || s.id.ends_with(&wanted_lower))
            })
            .collect();
        match matches.len() {
            0 => Err(StoreError::NotFound(wanted.to_string())),
            1 => Ok(matches.swap_remove(0)),
            _ => {
                if let Some(exact) = matches.iter().find(|s| s.id == wanted_lower) {
                    return Ok(exact.clone());
                }
                Err(StoreError::Ambiguous {
                    prefix: wanted.to_string(),
                    candidates: matches
                        .iter()
                        .map(|s| format!("  {}  {}", s.id, s.path.display()))
                        .collect(),
                })
            }
        }
    }
}

/// The shortest prefix of each of `shown` (at least [`SHORT_ID`]
/// characters, never ending in `-`) that [`Store::find`] takes for that
/// session and no other among `all`: one that is neither the prefix nor the
/// suffix of another id. uuid v7 ids begin with their creation time, so
/// sessions begun within a minute share their first 8 characters.
pub fn short_ids(shown: &[&str], all: &[&str]) -> Vec<String> {
    shown
        .iter()
        .map(|id| {
            let others: Vec<&str> = all.iter().copied().filter(|o| o != id).collect();
            let mut n = SHORT_ID.min(id.len());
            loop {
                let p = &id[..n];
                let clash = others.iter().any(|o| o.starts_with(p) || o.ends_with(p));
                if n >= id.len() || (!clash && !p.ends_with('-')) {
                    return p.to_string();
                }
                n += 1;
                while n < id.len() && !id.is_char_boundary(n) {
                    n += 1;
                }
            }
        })
        .collect()
}

/// The fewest characters of an id that `list` shows.
pub const SHORT_ID: usize = 8;

fn scan_dir(dir: &Path) -> Result<Vec<SessionFile>, StoreError> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(StoreError::io("cannot read", dir, e)),
    };
    Ok(entries
        .flatten()
        .filter_map(|e| file_of(&e.path()))
        .collect())
}

/// Parses `<stamp>_<uuid>.jsonl`.
fn file_of(path: &Path) -> Option<SessionFile> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(".jsonl")?;
    let (stamp, id) = stem.rsplit_once('_')?;
    Some(SessionFile {
        id: id.to_string(),
        path: path.to_path_buf(),
        stamp: stamp.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_prefixes() {
        assert_eq!(cwd_dir_name(Path::new("/home/u/proj")), "--home-u-proj--");
        let dir = tempfile::tempdir().unwrap();
        let store = Store {
            root: dir.path().join("sessions"),
        };
        let (a, _) = store
            .create(Path::new("/x"), serde_json::json!({}), None)
            .unwrap();
        let (b, _) = store
            .create(Path::new("/y"), serde_json::json!({}), None)
            .unwrap();
        assert_eq!(store.find(&a.id[..]).unwrap().path, a.path);
        assert_eq!(store.find(&b.id[..30]).unwrap().path, b.path);
        // uuid v7 ids made in the same millisecond share a long prefix.
        assert!(matches!(store.find("0"), Err(StoreError::Ambiguous { .. })));
        assert!(matches!(store.find("zzz"), Err(StoreError::NotFound(_))));
        // A suffix finds it too, in any case.
        assert_eq!(store.find(&a.id[28..]).unwrap().path, a.path);
        assert_eq!(store.find(&b.id[30..].to_uppercase()).unwrap().path, b.path);
        assert_eq!(store.list_all().unwrap().len(), 2);
        assert_eq!(store.latest(Path::new("/x")).unwrap().unwrap().id, a.id);
    }

    #[test]
    fn short_ids_are_the_shortest_prefix_that_finds_only_that_session() {
        let a = "0195f0ab-1111-7000-8000-00000000aaaa";
        let b = "0195f0ab-2222-7000-8000-00000000bbbb";
        let c = "77770000-3333-7000-8000-0000000195f0";
        let all = [a, b, c];
        assert_eq!(
            short_ids(&[a, b, c], &all),
            ["0195f0ab-1", "0195f0ab-2", "77770000"]
        );
        // A prefix that is another id's suffix would find both.
        let d = "0195f0ab-2222-7000-8000-0000abcdef12";
        let e = "abcdef12-0000-7000-8000-000000000000";
        assert_eq!(short_ids(&[e], &[d, e]), ["abcdef12-0"]);
        assert_eq!(short_ids(&[a], &[a]), ["0195f0ab"]);
    }
}
