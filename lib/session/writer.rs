//! Appending to a session file: one whole line per write, under an
//! exclusive `flock`, flushed line by line; a torn last line left by a crash
//! is closed off before anything is appended after it.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};

/// An open session file that lines are appended to.
pub struct Writer {
    file: Option<File>,
    path: PathBuf,
    /// Whether the file's end was checked for a torn line. Only a crash
    /// leaves one, and live writers append whole lines under the lock, so
    /// one check when the file is first written suffices.
    checked: bool,
    /// The session's one-writer lock, held as long as the writer lives.
    lock: Option<super::SessionLock>,
}

impl Writer {
    /// Opens an existing session file for appending.
    pub fn open(path: &Path) -> io::Result<Writer> {
        let file = OpenOptions::new()
            .append(true)
            .read(true)
            .open(path)
            .map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("cannot open session `{}`: {e}", path.display()),
                )
            })?;
        Ok(Writer {
            file: Some(file),
            path: path.to_path_buf(),
            checked: false,
            lock: None,
        })
    }

    /// Keeps the session's lock for as long as this writer lives: the
    /// process writing is the session's one writer until it ends.
    pub fn holding(mut self, lock: super::SessionLock) -> Writer {
        self.lock = Some(lock);
        self
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record as a line.
    pub fn append<T: serde::Serialize>(&mut self, record: &T) -> io::Result<()> {
        let mut line = serde_json::to_vec(record).map_err(io::Error::other)?;
        line.push(b'\n');
        self.append_line(&line)
    }

    /// Appends raw bytes that already form one line ending in `\n`.
    pub fn append_line(&mut self, line: &[u8]) -> io::Result<()> {
        let file = self
            .file
            .take()
            .ok_or_else(|| io::Error::other("session writer was closed after an error"))?;
        let mut locked = Flock::lock(file, FlockArg::LockExclusive).map_err(|(_, e)| {
            io::Error::other(format!("cannot lock `{}`: {e}", self.path.display()))
        })?;
        let result = write_locked(&mut locked, line, !self.checked);
        self.checked = true;
        let file = locked.unlock().map_err(|(_, e)| {
            io::Error::other(format!("cannot unlock `{}`: {e}", self.path.display()))
        })?;
        self.file = Some(file);
        result.map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot append to `{}`: {e}", self.path.display()),
            )
        })
    }
}

fn write_locked(file: &mut File, line: &[u8], check_end: bool) -> io::Result<()> {
    // A crash mid-line leaves a last line without a newline; end it so that
    // the new record starts on a line of its own.
    if check_end {
        close_torn_line(file)?;
    }
    // O_APPEND and one write per line: readers never see half a record
    // from a live writer.
    file.write_all(line)?;
    file.flush()
}

fn close_torn_line(file: &mut File) -> io::Result<()> {
    let len = file.seek(SeekFrom::End(0))?;
    if len > 0 {
        file.seek(SeekFrom::Start(len - 1))?;
        let mut last = [0u8; 1];
        file.read_exact(&mut last)?;
        if last[0] != b'\n' {
            file.write_all(b"\n")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torn_last_line_is_closed_off() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        std::fs::write(&p, "{\"type\":\"session\"}\n{\"torn").unwrap();
        let mut w = Writer::open(&p).unwrap();
        w.append(&serde_json::json!({"a": 1})).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text, "{\"type\":\"session\"}\n{\"torn\n{\"a\":1}\n");
    }

    #[test]
    fn two_writers_never_interleave() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        std::fs::write(&p, "").unwrap();
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let p = p.clone();
                std::thread::spawn(move || {
                    let mut w = Writer::open(&p).unwrap();
                    for i in 0..200 {
                        w.append(&serde_json::json!({"t": t, "i": i, "pad": "x".repeat(5000)}))
                            .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text.lines().count(), 800);
        for line in text.lines() {
            serde_json::from_str::<serde_json::Value>(line).unwrap();
        }
    }
}
