//! Bounded capture of a child's output: the first bytes and the last bytes
//! are kept, what lies between is only counted (and optionally written to
//! a spill file), so memory stays fixed however much a command prints.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;

/// How much of a stream to keep.
#[derive(Debug, Clone)]
pub struct CaptureLimit {
    /// Bytes kept in memory in all: head plus tail.
    pub max_bytes: usize,
    /// Of those, bytes kept from the start; the rest is kept from the end
    /// (the end of a failing build matters most).
    pub head_bytes: usize,
    /// When set, once the output overflows the limit the whole output (up
    /// to `spill_max` bytes) is written to a new file in this directory.
    pub spill_dir: Option<PathBuf>,
    /// Largest spill file.
    pub spill_max: u64,
}

impl CaptureLimit {
    /// Keeps `max_bytes`, a quarter of them from the start.
    pub fn new(max_bytes: usize) -> CaptureLimit {
        CaptureLimit {
            max_bytes,
            head_bytes: max_bytes / 4,
            spill_dir: None,
            spill_max: 64 * 1024 * 1024,
        }
    }

    /// Keeps the first `max_bytes` only: for an answer, which comes first.
    pub fn head_only(max_bytes: usize) -> CaptureLimit {
        CaptureLimit {
            head_bytes: max_bytes,
            ..CaptureLimit::new(max_bytes)
        }
    }

    /// Spills the full output to a file in `dir` when it overflows.
    pub fn spill_to(mut self, dir: PathBuf) -> CaptureLimit {
        self.spill_dir = Some(dir);
        self
    }
}

/// What was captured of one stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    /// The first bytes; all of them when nothing was cut.
    pub head: Vec<u8>,
    /// The last bytes, after the cut; empty when nothing was cut.
    pub tail: Vec<u8>,
    /// Bytes the stream carried in all.
    pub total_bytes: u64,
    /// Newlines the stream carried in all.
    pub total_lines: u64,
    /// The spill file holding the full output, when one was written.
    pub spill: Option<PathBuf>,
    /// False when the spill file stops short of the full output (it reached
    /// its size limit or could not be written).
    pub spill_complete: bool,
}

impl Captured {
    /// Bytes left out between head and tail.
    pub fn cut_bytes(&self) -> u64 {
        self.total_bytes
            .saturating_sub((self.head.len() + self.tail.len()) as u64)
    }

    /// Whether anything was left out.
    pub fn truncated(&self) -> bool {
        self.cut_bytes() > 0
    }

    /// Head and tail as text (invalid UTF-8 replaced), with a line marking
    /// the cut between them: for messages.
    pub fn lossy(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if self.truncated() {
            text.push_str(&format!(
                "\n[... {} bytes left out ...]\n",
                self.cut_bytes()
            ));
            text.push_str(&String::from_utf8_lossy(&self.tail));
        }
        text
    }

    /// Newlines left out between head and tail.
    pub fn cut_lines(&self) -> u64 {
        let kept = bytecount::count(&self.head, b'\n') + bytecount::count(&self.tail, b'\n');
        self.total_lines.saturating_sub(kept as u64)
    }
}

/// The capture in progress.
pub(crate) struct Capture {
    limit: CaptureLimit,
    head: Vec<u8>,
    /// The last bytes: a plain vector until it first overflows `tail_cap`,
    /// then a ring of exactly `tail_cap` bytes whose oldest byte is at
    /// `tail_pos`.
    tail: Vec<u8>,
    tail_cap: usize,
    tail_pos: usize,
    wrapped: bool,
    total: u64,
    lines: u64,
    spill: Option<Spill>,
    spill_failed: bool,
}

struct Spill {
    file: File,
    path: PathBuf,
    written: u64,
    complete: bool,
}

impl Capture {
    pub(crate) fn new(limit: CaptureLimit) -> Capture {
        let head_cap = limit.head_bytes.min(limit.max_bytes);
        let tail_cap = limit.max_bytes - head_cap;
        Capture {
            head: Vec::new(),
            tail: Vec::new(),
            tail_cap,
            tail_pos: 0,
            wrapped: false,
            total: 0,
            lines: 0,
            spill: None,
            spill_failed: false,
            limit: CaptureLimit {
                head_bytes: head_cap,
                ..limit
            },
        }
    }

    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let kept_before = self.head.len() + self.tail.len();
        let overflows = kept_before + bytes.len() > self.limit.max_bytes;
        // Spill before anything is dropped: at that moment head and tail
        // still hold the whole output so far.
        if overflows && self.spill.is_none() && !self.spill_failed {
            self.start_spill();
        }
        self.spill_write(bytes);
        self.total += bytes.len() as u64;
        self.lines += bytecount::count(bytes, b'\n') as u64;

        let room = self.limit.head_bytes - self.head.len();
        if room > 0 {
            let n = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
        if bytes.is_empty() || self.tail_cap == 0 {
            return;
        }
        let cap = self.tail_cap;
        if bytes.len() >= cap {
            // Only the end of this chunk survives.
            self.tail.clear();
            self.tail.extend_from_slice(&bytes[bytes.len() - cap..]);
            self.tail_pos = 0;
            self.wrapped = true;
        } else if !self.wrapped && self.tail.len() + bytes.len() <= cap {
            self.tail.extend_from_slice(bytes);
        } else if !self.wrapped {
            // First overflow: keep the newest `cap` bytes, oldest first.
            let keep = cap - bytes.len();
            let mut ring = Vec::with_capacity(cap);
            ring.extend_from_slice(&self.tail[self.tail.len() - keep..]);
            ring.extend_from_slice(bytes);
            self.tail = ring;
            self.tail_pos = 0;
            self.wrapped = true;
        } else {
            let first = bytes.len().min(cap - self.tail_pos);
            self.tail[self.tail_pos..self.tail_pos + first].copy_from_slice(&bytes[..first]);
            let rest = &bytes[first..];
            self.tail[..rest.len()].copy_from_slice(rest);
            self.tail_pos = (self.tail_pos + bytes.len()) % cap;
        }
    }

    fn ordered_tail(&self) -> Vec<u8> {
        if !self.wrapped {
            return self.tail.clone();
        }
        let mut out = Vec::with_capacity(self.tail.len());
        out.extend_from_slice(&self.tail[self.tail_pos..]);
        out.extend_from_slice(&self.tail[..self.tail_pos]);
        out
    }

    fn start_spill(&mut self) {
        let Some(dir) = self.limit.spill_dir.clone() else {
            return;
        };
        let made = std::fs::create_dir_all(&dir).and_then(|()| {
            tempfile::Builder::new()
                .prefix("ag-output-")
                .suffix(".log")
                .tempfile_in(&dir)
                .and_then(|t| t.keep().map_err(|e| e.error))
        });
        let (file, path) = match made {
            Ok(fp) => fp,
            Err(_) => {
                self.spill_failed = true;
                return;
            }
        };
        let mut spill = Spill {
            file,
            path,
            written: 0,
            complete: true,
        };
        let head = std::mem::take(&mut self.head);
        let tail = self.ordered_tail();
        spill_write(&mut spill, &head, self.limit.spill_max);
        spill_write(&mut spill, &tail, self.limit.spill_max);
        self.head = head;
        self.spill = Some(spill);
    }

    fn spill_write(&mut self, bytes: &[u8]) {
        let max = self.limit.spill_max;
        if let Some(spill) = self.spill.as_mut() {
            spill_write(spill, bytes, max);
        }
    }

    pub(crate) fn finish(self) -> Captured {
        let tail = if self.tail_cap == 0 {
            Vec::new()
        } else {
            self.ordered_tail()
        };
        let (spill, spill_complete) = match self.spill {
            Some(mut s) => {
                let _ = s.file.flush();
                (Some(s.path), s.complete)
            }
            None => (None, false),
        };
        let mut out = Captured {
            head: self.head,
            tail,
            total_bytes: self.total,
            total_lines: self.lines,
            spill,
            spill_complete,
        };
        if out.cut_bytes() == 0 {
            // Nothing was cut: one piece reads simpler.
            let tail = std::mem::take(&mut out.tail);
            out.head.extend_from_slice(&tail);
        }
        out
    }
}

fn spill_write(spill: &mut Spill, bytes: &[u8], max: u64) {
    if !spill.complete {
        return;
    }
    let room = max.saturating_sub(spill.written);
    let n = (bytes.len() as u64).min(room) as usize;
    if spill.file.write_all(&bytes[..n]).is_err() || n < bytes.len() {
        spill.complete = false;
    }
    spill.written += n as u64;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(max: usize, head: usize, chunks: &[&[u8]]) -> Captured {
        let mut c = Capture::new(CaptureLimit {
            max_bytes: max,
            head_bytes: head,
            spill_dir: None,
            spill_max: 0,
        });
        for ch in chunks {
            c.push(ch);
        }
        c.finish()
    }

    #[test]
    fn small_output_is_kept_whole() {
        let c = capture(100, 25, &[b"hello ", b"world\n"]);
        assert_eq!(c.head, b"hello world\n");
        assert!(c.tail.is_empty());
        assert!(!c.truncated());
        assert_eq!(c.total_lines, 1);
    }

    #[test]
    fn keeps_head_and_tail_in_any_chunking() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        for size in [1, 3, 7, 10, 64, 999, 10_000] {
            let chunks: Vec<&[u8]> = data.chunks(size).collect();
            let c = capture(100, 30, &chunks);
            assert_eq!(c.head, &data[..30], "chunk {size}");
            assert_eq!(c.tail, &data[data.len() - 70..], "chunk {size}");
            assert_eq!(c.cut_bytes(), 10_000 - 100);
            assert_eq!(c.total_bytes, 10_000);
        }
    }

    #[test]
    fn exactly_full_is_not_truncated() {
        let c = capture(10, 4, &[b"0123456", b"789"]);
        assert_eq!(c.head, b"0123456789");
        assert!(!c.truncated());
        let c = capture(10, 4, &[b"0123456", b"789", b"A"]);
        assert_eq!(c.head, b"0123");
        assert_eq!(c.tail, b"56789A");
        assert_eq!(c.cut_bytes(), 1);
    }

    #[test]
    fn counts_cut_lines_and_spills_everything() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Capture::new(CaptureLimit {
            max_bytes: 20,
            head_bytes: 5,
            spill_dir: Some(dir.path().to_path_buf()),
            spill_max: 1 << 20,
        });
        let mut all = Vec::new();
        for i in 0..100 {
            let line = format!("line {i}\n");
            all.extend_from_slice(line.as_bytes());
            c.push(line.as_bytes());
        }
        let out = c.finish();
        assert!(out.truncated());
        assert_eq!(out.total_lines, 100);
        let kept = bytecount::count(&out.head, b'\n') + bytecount::count(&out.tail, b'\n');
        assert_eq!(out.cut_lines(), 100 - kept as u64);
        let spilled = std::fs::read(out.spill.as_ref().unwrap()).unwrap();
        assert_eq!(spilled, all);
        assert!(out.spill_complete);
    }

    #[test]
    fn spill_stops_at_its_limit() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Capture::new(CaptureLimit {
            max_bytes: 10,
            head_bytes: 2,
            spill_dir: Some(dir.path().to_path_buf()),
            spill_max: 50,
        });
        for _ in 0..20 {
            c.push(b"0123456789");
        }
        let out = c.finish();
        assert!(!out.spill_complete);
        assert_eq!(std::fs::metadata(out.spill.unwrap()).unwrap().len(), 50);
    }
}
