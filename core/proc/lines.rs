//! Stdout cut into lines for [`super::Command::stream_lines`]: each line
//! and the whole stream within their limits, handed over as they come to a
//! [`Lines`] reader, which may lag (stdout then waits) or go away (the rest
//! is dropped).

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use tokio::sync::{Notify, mpsc};

use super::CaptureLimit;

/// Lines read but not yet taken, in bytes, past which stdout is not read
/// until the reader catches up (the child then waits on its pipe).
pub(super) const QUEUE_MAX: u64 = 16 * 1024 * 1024;

/// What a stream of lines may carry.
#[derive(Debug, Clone)]
pub struct LineLimits {
    /// The longest line in bytes, its newline aside. A longer one is not
    /// kept: the stream gives [`LineError::TooLong`] in its place.
    pub max_line: usize,
    /// Bytes of stdout in all (`None`: no limit). Past it the stream gives
    /// [`LineError::TooMuch`] and then ends; the rest is read and dropped.
    pub max_total: Option<u64>,
    /// What is kept of stderr (for messages).
    pub stderr: CaptureLimit,
}

/// A line the stream could not give.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// A line was longer than [`LineLimits::max_line`]; it was skipped.
    #[error("it printed a line longer than {max} bytes")]
    TooLong {
        /// The limit.
        max: usize,
    },
    /// The output passed [`LineLimits::max_total`]; nothing more comes.
    #[error("it printed more than {max} bytes")]
    TooMuch {
        /// The limit.
        max: u64,
    },
}

/// One item of a stream: a line without its newline, or why one is missing.
pub type Line = Result<Vec<u8>, LineError>;

/// Stdout of a streamed command, line by line; `None` at its end (the
/// command ended, or [`LineError::TooMuch`] came). Dropping it is fine: the
/// rest of the output is read and dropped, so the command never waits on
/// its pipe.
pub struct Lines {
    pub(super) rx: mpsc::UnboundedReceiver<Line>,
    pub(super) queued: Arc<AtomicU64>,
    /// Told when the backlog falls back under [`QUEUE_MAX`], so that the
    /// paused stdout is read again.
    pub(super) resumed: Arc<Notify>,
}

impl Lines {
    /// The next line, when it comes.
    pub async fn next(&mut self) -> Option<Line> {
        std::future::poll_fn(|cx| self.poll_next(cx)).await
    }

    /// The next line, for hand-written futures and readers.
    pub fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Line>> {
        let next = self.rx.poll_recv(cx);
        if let Poll::Ready(Some(Ok(line))) = &next {
            let size = line.len() as u64 + 1;
            let before = self.queued.fetch_sub(size, Ordering::SeqCst);
            if before > QUEUE_MAX && before - size <= QUEUE_MAX {
                // A stored permit if the child's loop is not waiting yet:
                // the wake-up is never lost.
                self.resumed.notify_one();
            }
        }
        next
    }
}

/// Cuts stdout into lines, within the limits, and hands them to [`Lines`].
pub(super) struct Splitter {
    max_line: usize,
    max_total: Option<u64>,
    /// The line being read.
    partial: Vec<u8>,
    /// The line being read is too long: drop it up to its newline.
    skipping: bool,
    total: u64,
    /// Past the total: everything is dropped.
    over: bool,
    /// `None` once the reader is gone.
    tx: Option<mpsc::UnboundedSender<Line>>,
    queued: Arc<AtomicU64>,
    /// Told by [`Lines`] when a backlog is taken down (see [`Splitter::backlogged`]).
    pub(super) resumed: Arc<Notify>,
    /// Lines to send, in order (only ever a few, between two sends).
    out: VecDeque<Line>,
}

impl Splitter {
    pub(super) fn new(
        limits: &LineLimits,
        tx: mpsc::UnboundedSender<Line>,
        queued: Arc<AtomicU64>,
        resumed: Arc<Notify>,
    ) -> Self {
        Splitter {
            max_line: limits.max_line,
            max_total: limits.max_total,
            partial: Vec::new(),
            skipping: false,
            total: 0,
            over: false,
            tx: Some(tx),
            queued,
            resumed,
            out: VecDeque::new(),
        }
    }

    /// Whether the reader lags so far behind that stdout should wait.
    pub(super) fn backlogged(&self) -> bool {
        self.tx.as_ref().is_some_and(|tx| !tx.is_closed())
            && self.queued.load(Ordering::SeqCst) > QUEUE_MAX
    }

    pub(super) fn push(&mut self, mut bytes: &[u8]) {
        if self.over {
            return;
        }
        if let Some(max) = self.max_total {
            let room = max.saturating_sub(self.total);
            if bytes.len() as u64 > room {
                bytes = &bytes[..room as usize];
                self.over = true;
            }
        }
        self.total += bytes.len() as u64;
        while !bytes.is_empty() {
            let newline = memchr::memchr(b'\n', bytes);
            let piece = &bytes[..newline.unwrap_or(bytes.len())];
            if !self.skipping {
                if self.partial.len() + piece.len() > self.max_line {
                    self.skipping = true;
                    self.partial = Vec::new();
                    self.out
                        .push_back(Err(LineError::TooLong { max: self.max_line }));
                } else {
                    self.partial.extend_from_slice(piece);
                }
            }
            match newline {
                Some(i) => {
                    if !std::mem::take(&mut self.skipping) {
                        let line = std::mem::take(&mut self.partial);
                        self.out.push_back(Ok(line));
                    }
                    bytes = &bytes[i + 1..];
                }
                None => bytes = &[],
            }
        }
        if self.over
            && let Some(max) = self.max_total
        {
            self.out.push_back(Err(LineError::TooMuch { max }));
            // The stream ends here: the reader sees `None` next.
            self.send();
            self.tx = None;
        }
        self.send();
    }

    /// At the end of output: a last line without a newline still counts.
    pub(super) fn finish(&mut self) {
        if !self.over && !self.skipping && !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.out.push_back(Ok(line));
        }
        self.send();
        self.tx = None;
    }

    fn send(&mut self) {
        let Some(tx) = &self.tx else {
            self.out.clear();
            return;
        };
        while let Some(line) = self.out.pop_front() {
            let size = line.as_ref().map_or(0, |l| l.len() as u64 + 1);
            self.queued.fetch_add(size, Ordering::SeqCst);
            if tx.send(line).is_err() {
                // The reader is gone: the rest is read and dropped.
                self.tx = None;
                self.out.clear();
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(chunks: &[&[u8]], max_line: usize, max_total: Option<u64>) -> Vec<Line> {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let limits = LineLimits {
            max_line,
            max_total,
            stderr: CaptureLimit::new(0),
        };
        let mut s = Splitter::new(&limits, tx, Arc::new(AtomicU64::new(0)), Arc::default());
        for c in chunks {
            s.push(c);
        }
        s.finish();
        let mut out = Vec::new();
        while let Ok(l) = rx.try_recv() {
            out.push(l);
        }
        out
    }

    fn ok(s: &str) -> Line {
        Ok(s.as_bytes().to_vec())
    }

    #[test]
    fn lines_are_the_same_however_the_output_is_cut() {
        let data = b"ab\n\ncdef\nthis line is too long\ngh\nlast";
        let want = [
            ok("ab"),
            ok(""),
            ok("cdef"),
            Err(LineError::TooLong { max: 8 }),
            ok("gh"),
            ok("last"),
        ];
        for size in 1..=data.len() {
            let chunks: Vec<&[u8]> = data.chunks(size).collect();
            assert_eq!(split(&chunks, 8, None), want, "chunks of {size}");
        }
    }

    #[test]
    fn the_total_ends_the_stream_and_a_gone_reader_is_no_error() {
        let got = split(&[b"12\n34\n56\n78\n"], 100, Some(7));
        assert_eq!(
            got,
            [ok("12"), ok("34"), Err(LineError::TooMuch { max: 7 })]
        );
        // Exactly at the limit is still within it.
        let got = split(&[b"12\n34\n"], 100, Some(6));
        assert_eq!(got, [ok("12"), ok("34")]);
        let (tx, rx) = mpsc::unbounded_channel();
        drop(rx);
        let limits = LineLimits {
            max_line: 10,
            max_total: None,
            stderr: CaptureLimit::new(0),
        };
        let mut s = Splitter::new(&limits, tx, Arc::new(AtomicU64::new(0)), Arc::default());
        s.push(b"a\nb\n");
        assert!(!s.backlogged());
        s.finish();
    }
}
