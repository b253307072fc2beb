//! A session file read as the numbered sequence of its events: the offset
//! of an event is how many events come before it in the file. Both ways of
//! reading it, the replay of what a client missed and the tail that follows
//! a live session, cut lines and tell events from the rest (the header, a
//! blank line, a torn or corrupt line) with the same code, so an offset
//! names the same event either way and the seam between them has no gap
//! and no duplicate. Only whole lines count: the last line of a file that
//! ag-loop is writing counts once its newline is there.
//!
//! The tail reads the file, not ag-loop's stdout: ag-loop appends each event
//! to the file before it prints it, so the file is never behind, and a line
//! another writer adds (`ag-session rewind --force` records a checkpoint)
//! takes its place in the numbering too.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::sync::Arc;

/// Bytes read at a time.
const CHUNK: usize = 64 * 1024;

/// Whether a line of a session file, after its header, is an event: a JSON
/// object with a `type` and a `timestamp`. Event types this build does not
/// know (from a newer ag-loop) count too.
pub fn is_event(line: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Head {
        #[serde(rename = "type")]
        kind: String,
        #[allow(dead_code)]
        timestamp: String,
    }
    matches!(serde_json::from_slice::<Head>(line), Ok(h) if h.kind != "session")
}

/// Cuts bytes into lines and numbers the events among them.
#[derive(Debug, Default)]
struct Lines {
    /// A line not yet ended.
    partial: Vec<u8>,
    /// The header (the first line that is not blank) was passed.
    past_header: bool,
    /// Events seen: the offset of the next one.
    count: u64,
}

impl Lines {
    /// Takes bytes read; calls `f` with each event completed, its offset
    /// and the line with its newline.
    fn feed(&mut self, mut bytes: &[u8], mut f: impl FnMut(u64, &[u8])) {
        while let Some(nl) = memchr::memchr(b'\n', bytes) {
            let (head, rest) = bytes.split_at(nl + 1);
            bytes = rest;
            if self.partial.is_empty() {
                self.line(head, &mut f);
            } else {
                let mut line = std::mem::take(&mut self.partial);
                line.extend_from_slice(head);
                self.line(&line, &mut f);
            }
        }
        self.partial.extend_from_slice(bytes);
    }

    fn line(&mut self, line: &[u8], f: &mut impl FnMut(u64, &[u8])) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        if !self.past_header {
            self.past_header = true;
            return;
        }
        if is_event(line) {
            f(self.count, line);
            self.count += 1;
        }
    }
}

/// A live session's file, followed as it grows.
#[derive(Debug)]
pub struct Tail {
    file: File,
    lines: Lines,
    buf: Vec<u8>,
}

impl Tail {
    /// Opens a session file and passes over what it already holds.
    pub fn open(path: &Path) -> io::Result<Tail> {
        let file = File::open(path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot open session `{}`: {e}", path.display()),
            )
        })?;
        let mut tail = Tail {
            file,
            lines: Lines::default(),
            buf: vec![0; CHUNK],
        };
        tail.read_new(|_, _| {})?;
        Ok(tail)
    }

    /// The offset of the next event.
    pub fn count(&self) -> u64 {
        self.lines.count
    }

    /// Reads what was appended since, calling `f` with each new event.
    pub fn read_new(&mut self, mut f: impl FnMut(u64, &[u8])) -> io::Result<()> {
        loop {
            let n = match self.file.read(&mut self.buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if n == 0 {
                return Ok(());
            }
            self.lines.feed(&self.buf[..n], &mut f);
        }
    }

    /// The new events, each as a shared line with its newline.
    pub fn take_new(&mut self) -> io::Result<Vec<(u64, Arc<[u8]>)>> {
        let mut out = Vec::new();
        self.read_new(|n, line| out.push((n, Arc::from(line))))?;
        Ok(out)
    }
}

/// Calls `f` with each event of the file whose offset is in `from..to`,
/// in order, until `f` returns false; returns the offset after the last
/// event given.
pub fn replay(
    path: &Path,
    from: u64,
    to: u64,
    mut f: impl FnMut(u64, &[u8]) -> bool,
) -> io::Result<u64> {
    let mut next = from;
    if from >= to {
        return Ok(next);
    }
    let mut file = File::open(path).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot open session `{}`: {e}", path.display()),
        )
    })?;
    let mut lines = Lines::default();
    let mut buf = vec![0; CHUNK];
    let mut stop = false;
    while !stop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        lines.feed(&buf[..n], |i, line| {
            if stop || i < from || i >= to {
                stop |= i + 1 >= to;
                return;
            }
            if f(i, line) {
                next = i + 1;
            } else {
                stop = true;
            }
            stop |= i + 1 >= to;
        });
    }
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn ev(n: u32) -> String {
        format!(
            "{{\"type\":\"notify\",\"timestamp\":\"t\",\"message\":\"{n}\",\"level\":\"info\"}}\n"
        )
    }

    #[test]
    fn the_header_blank_torn_and_foreign_lines_are_not_events() {
        assert!(is_event(ev(1).as_bytes()));
        assert!(!is_event(br#"{"type":"session","timestamp":"t","id":"x"}"#));
        assert!(!is_event(b"{\"type\":\"notify\""));
        assert!(!is_event(br#"{"type":"notify"}"#));
        assert!(!is_event(b"[1,2]"));
        // A type this build does not know is still an event.
        assert!(is_event(br#"{"type":"from_the_future","timestamp":"t"}"#));
    }

    #[test]
    fn the_tail_counts_what_is_there_then_numbers_what_is_appended() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        let mut f = File::create(&p).unwrap();
        write!(
            f,
            "{{\"type\":\"session\",\"timestamp\":\"t\"}}\n\n{}",
            ev(0)
        )
        .unwrap();
        // A torn line, closed off later by the next writer.
        write!(f, "{{\"type\":\"no").unwrap();
        let mut tail = Tail::open(&p).unwrap();
        assert_eq!(tail.count(), 1);
        write!(f, "\n{}", ev(1)).unwrap();
        // Half of a line: not yet an event.
        let second = ev(2);
        f.write_all(&second.as_bytes()[..10]).unwrap();
        let got = tail.take_new().unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, 1);
        assert_eq!(&*got[0].1, ev(1).as_bytes());
        f.write_all(&second.as_bytes()[10..]).unwrap();
        let got = tail.take_new().unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].0, &*got[0].1), (2, second.as_bytes()));
        assert_eq!(tail.count(), 3);
    }

    #[test]
    fn replay_gives_exactly_the_range_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        let mut text = String::from("{\"type\":\"session\",\"timestamp\":\"t\"}\n");
        for n in 0..50 {
            text.push_str(&ev(n));
            if n % 7 == 0 {
                text.push_str("not json\n");
            }
        }
        std::fs::write(&p, &text).unwrap();
        let mut got = Vec::new();
        let next = replay(&p, 10, 20, |i, line| {
            got.push((i, line.to_vec()));
            true
        })
        .unwrap();
        assert_eq!(next, 20);
        assert_eq!(got.len(), 10);
        for (k, (i, line)) in got.iter().enumerate() {
            assert_eq!(*i, 10 + k as u64);
            assert_eq!(line, ev(10 + k as u32).as_bytes());
        }
        // Past the end: what there is.
        assert_eq!(replay(&p, 45, 100, |_, _| true).unwrap(), 50);
        // Stopped early.
        assert_eq!(replay(&p, 0, 50, |i, _| i < 3).unwrap(), 3);
        assert_eq!(replay(&p, 5, 5, |_, _| true).unwrap(), 5);
    }
}
