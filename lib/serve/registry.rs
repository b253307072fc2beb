//! The sessions ag-serve ran, remembered across its restarts: one JSON line
//! per start or resume in `$AG_HOME/serve/sessions.jsonl`, so that a broker
//! started again (after a crash or a `kill -9`) lists them as ended and
//! resumable. Lines are appended whole under `O_APPEND`; a torn last line
//! is skipped when read.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// How many entries are read back, newest first.
const KEEP: usize = 200;

/// One session ag-serve ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The session's id.
    pub id: String,
    /// Its file.
    pub path: String,
    /// Its working directory.
    pub cwd: String,
    /// When ag-serve started it (RFC 3339).
    pub started: String,
}

/// The registry file.
#[derive(Debug, Clone)]
pub struct Registry {
    path: PathBuf,
}

impl Registry {
    /// The registry at `path`.
    pub fn new(path: &Path) -> Registry {
        Registry {
            path: path.to_path_buf(),
        }
    }

    /// Records a session.
    pub fn add(&self, entry: &Entry) -> io::Result<()> {
        let mut line = serde_json::to_vec(entry).map_err(io::Error::other)?;
        line.push(b'\n');
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&self.path)
            .map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("cannot open `{}`: {e}", self.path.display()),
                )
            })?;
        f.write_all(&line)
    }

    /// The sessions recorded, each once, newest first (at most 200).
    pub fn entries(&self) -> Vec<Entry> {
        let Ok(text) = std::fs::read_to_string(&self.path) else {
            return Vec::new();
        };
        let mut out: Vec<Entry> = Vec::new();
        for line in text.lines().rev() {
            let Ok(e) = serde_json::from_str::<Entry>(line) else {
                continue;
            };
            if !out.iter().any(|o| o.id == e.id) {
                out.push(e);
                if out.len() == KEEP {
                    break;
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_come_back_once_each_newest_first_and_torn_lines_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let r = Registry::new(&dir.path().join("s.jsonl"));
        assert!(r.entries().is_empty());
        let e = |id: &str| Entry {
            id: id.into(),
            path: format!("/s/{id}.jsonl"),
            cwd: "/w".into(),
            started: "t".into(),
        };
        r.add(&e("a")).unwrap();
        r.add(&e("b")).unwrap();
        r.add(&e("a")).unwrap();
        let mut f = OpenOptions::new()
            .append(true)
            .open(dir.path().join("s.jsonl"))
            .unwrap();
        f.write_all(b"{\"id\":\"c\",\"pa").unwrap();
        let ids: Vec<String> = r.entries().into_iter().map(|e| e.id).collect();
        assert_eq!(ids, ["a", "b"]);
    }
}
