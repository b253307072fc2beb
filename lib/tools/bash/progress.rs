//! ag-bash's progress: the lines of a running command, sent as they come
//! as progress lines on stderr (see [`crate::tool_protocol::progress`])
//! when the caller asked for them. A thread of its own writes them, so the
//! loop that drains the command's output never waits on a slow reader:
//! pieces of output are handed over through a bounded queue, and what does
//! not fit is dropped (and said). The [`Throttle`] decides what goes out:
//! at most one update per [`INTERVAL`], each with the latest
//! [`MAX_LINES`] lines (cleaned of colours and carriage-return redraws) in
//! at most [`MAX_UPDATE_BYTES`], and no more once [`MAX_TOTAL_BYTES`] have
//! gone out. The result itself is not affected: it carries the output as
//! always.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, SyncSender, TrySendError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::render::clean;
use crate::tool_protocol::progress;

/// The least time between two updates.
pub const INTERVAL: Duration = Duration::from_millis(250);
/// Lines an update carries at most: the latest ones.
pub const MAX_LINES: usize = 20;
/// Bytes of text an update carries at most: the end of it.
pub const MAX_UPDATE_BYTES: usize = 4096;
/// Bytes of progress text a call sends in all; then it stops saying so.
pub const MAX_TOTAL_BYTES: usize = 1024 * 1024;
/// Bytes of an unfinished line kept (its end).
const MAX_PARTIAL: usize = 16 * 1024;
/// Pieces of output waiting for the thread before more are dropped.
const QUEUE: usize = 256;

/// What the next update will carry, and when it may go.
#[derive(Debug, Default)]
pub struct Throttle {
    /// Complete lines not sent yet (the latest [`MAX_LINES`]).
    pending: Vec<String>,
    /// Lines left out of the pending ones since the last update.
    skipped: usize,
    /// The unfinished line, as bytes.
    partial: Vec<u8>,
    /// The unfinished line as last sent, so that it is not sent twice.
    partial_sent: Option<String>,
    /// When the last update went out.
    last: Option<Instant>,
    /// Bytes of text sent so far.
    sent: usize,
    /// The cap was reached: nothing more goes out.
    done: bool,
}

impl Throttle {
    /// Takes a piece of the command's output.
    pub fn push(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while let Some(i) = memchr::memchr(b'\n', rest) {
            self.partial.extend_from_slice(&rest[..i]);
            let line = std::mem::take(&mut self.partial);
            self.partial_sent = None;
            self.line(String::from_utf8_lossy(&clean(&line)).into_owned());
            rest = &rest[i + 1..];
        }
        self.partial.extend_from_slice(rest);
        if self.partial.len() > MAX_PARTIAL {
            let cut = self.partial.len() - MAX_PARTIAL;
            self.partial.drain(..cut);
        }
    }

    /// Some output never reached the thread: what comes next is not the
    /// continuation of the unfinished line.
    pub fn lost(&mut self) {
        self.partial.clear();
        self.partial_sent = None;
        self.skipped += 1;
    }

    fn line(&mut self, line: String) {
        self.pending.push(line);
        if self.pending.len() > MAX_LINES {
            self.pending.remove(0);
            self.skipped += 1;
        }
    }

    /// The unfinished line as a terminal shows it, when it is new.
    fn fresh_partial(&self) -> Option<String> {
        if self.partial.is_empty() {
            return None;
        }
        let shown = String::from_utf8_lossy(&clean(&self.partial)).into_owned();
        (!shown.trim().is_empty() && self.partial_sent.as_ref() != Some(&shown)).then_some(shown)
    }

    /// How long from `now` until the next update is due (zero: now);
    /// `None` with nothing new to send.
    pub fn wait(&self, now: Instant) -> Option<Duration> {
        if self.done
            || (self.pending.is_empty() && self.skipped == 0 && self.fresh_partial().is_none())
        {
            return None;
        }
        // The first news goes out at once.
        Some(self.last.map_or(Duration::ZERO, |t| {
            (t + INTERVAL).saturating_duration_since(now)
        }))
    }

    /// The update to send at `now`, if one is due: its text and details.
    pub fn take(&mut self, now: Instant) -> Option<(String, Value)> {
        if !self.wait(now)?.is_zero() {
            return None;
        }
        let mut lines = std::mem::take(&mut self.pending);
        let complete = lines.len();
        let partial = self.fresh_partial();
        if let Some(p) = &partial {
            lines.push(p.clone());
            self.partial_sent = partial.clone();
        }
        let mut text = lines.join("\n");
        if text.len() > MAX_UPDATE_BYTES {
            let mut cut = text.len() - MAX_UPDATE_BYTES;
            while !text.is_char_boundary(cut) {
                cut += 1;
            }
            text.drain(..cut);
        }
        let mut details = json!({ "lines": complete });
        if self.skipped > 0 {
            details["skipped"] = json!(self.skipped);
        }
        if partial.is_some() {
            details["partial"] = json!(true);
        }
        self.skipped = 0;
        self.last = Some(now);
        self.sent += text.len();
        if self.sent >= MAX_TOTAL_BYTES {
            self.done = true;
            text.push_str(&format!(
                "\n[no more progress from this command: {} KiB of it were shown; the result will carry its output]",
                MAX_TOTAL_BYTES / 1024
            ));
            details["last"] = json!(true);
        }
        Some((text, details))
    }
}

/// The thread that writes a call's progress lines.
pub struct Reporter {
    tx: Option<SyncSender<Vec<u8>>>,
    lost: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Reporter {
    /// Starts the thread, when the caller asked for progress.
    pub fn start() -> Option<Reporter> {
        if !progress::wanted() {
            return None;
        }
        let (tx, rx) = mpsc::sync_channel::<Vec<u8>>(QUEUE);
        let lost = Arc::new(AtomicBool::new(false));
        let seen = lost.clone();
        let thread = std::thread::Builder::new()
            .name("ag-bash-progress".into())
            .spawn(move || {
                let mut throttle = Throttle::default();
                loop {
                    if seen.swap(false, Ordering::SeqCst) {
                        throttle.lost();
                    }
                    let now = Instant::now();
                    if let Some((text, details)) = throttle.take(now) {
                        progress::report(&text, details);
                    }
                    let next = match throttle.wait(Instant::now()) {
                        None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
                        Some(d) => rx.recv_timeout(d),
                    };
                    match next {
                        Ok(chunk) => throttle.push(&chunk),
                        Err(RecvTimeoutError::Timeout) => {}
                        // The command is over: its result follows.
                        Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
            })
            .ok()?;
        Some(Reporter {
            tx: Some(tx),
            lost,
            thread: Some(thread),
        })
    }

    /// What the run loop calls with each piece of output; it never waits.
    pub fn tap(&self) -> impl FnMut(&[u8]) + Send + 'static + use<> {
        let tx = self.tx.clone();
        let lost = self.lost.clone();
        move |bytes: &[u8]| {
            if let Some(tx) = &tx
                && let Err(TrySendError::Full(_)) = tx.try_send(bytes.to_vec())
            {
                lost.store(true, Ordering::SeqCst);
            }
        }
    }

    /// The command ended: the thread stops, and no progress line follows.
    pub fn finish(mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_news_goes_at_once_then_at_most_once_an_interval() {
        let mut t = Throttle::default();
        let start = Instant::now();
        assert_eq!(t.wait(start), None);
        t.push(b"one\ntwo\n");
        let (text, details) = t.take(start).unwrap();
        assert_eq!(text, "one\ntwo");
        assert_eq!(details, json!({"lines": 2}));
        t.push(b"three\n");
        assert!(t.take(start + INTERVAL / 2).is_none(), "too soon");
        assert_eq!(t.wait(start + INTERVAL / 2), Some(INTERVAL / 2));
        let (text, _) = t.take(start + INTERVAL).unwrap();
        assert_eq!(text, "three");
        // Nothing new: nothing due.
        assert_eq!(t.wait(start + INTERVAL), None);
    }

    #[test]
    fn only_the_latest_lines_go_and_the_rest_are_counted() {
        let mut t = Throttle::default();
        let now = Instant::now();
        for i in 0..100 {
            t.push(format!("line {i}\n").as_bytes());
        }
        let (text, details) = t.take(now).unwrap();
        assert_eq!(text.lines().count(), MAX_LINES);
        assert!(text.ends_with("line 99"), "{text}");
        assert_eq!(details["skipped"], 100 - MAX_LINES);
        // Long lines: the end of the text, within the byte cap.
        t.push(format!("{}\n", "x".repeat(3 * MAX_UPDATE_BYTES)).as_bytes());
        let (text, _) = t.take(now + INTERVAL).unwrap();
        assert_eq!(text.len(), MAX_UPDATE_BYTES);
    }

    #[test]
    fn an_unfinished_line_shows_as_a_terminal_would_once() {
        let mut t = Throttle::default();
        let now = Instant::now();
        t.push(b"\x1b[32mDownloading 10%\rDownloading 50%");
        let (text, details) = t.take(now).unwrap();
        assert_eq!(text, "Downloading 50%");
        assert_eq!(details["partial"], true);
        assert_eq!(t.wait(now), None, "the same partial line is not sent again");
        t.push(b"\rDownloading 100%\ndone\n");
        let (text, details) = t.take(now + INTERVAL).unwrap();
        assert_eq!(text, "Downloading 100%\ndone");
        assert_eq!(details, json!({"lines": 2}));
    }

    #[test]
    fn the_total_is_capped_and_the_last_update_says_so() {
        let mut t = Throttle::default();
        let mut now = Instant::now();
        let mut updates = 0;
        let line = format!("{}\n", "y".repeat(MAX_UPDATE_BYTES));
        loop {
            t.push(line.as_bytes());
            match t.take(now) {
                Some((text, details)) if details.get("last").is_some() => {
                    assert!(text.contains("no more progress"), "{text}");
                    break;
                }
                Some(_) => updates += 1,
                None => panic!("an update was due"),
            }
            now += INTERVAL;
        }
        assert_eq!(updates, MAX_TOTAL_BYTES / MAX_UPDATE_BYTES - 1);
        t.push(line.as_bytes());
        assert_eq!(t.wait(now), None);
        assert!(t.take(now + INTERVAL).is_none());
    }

    #[test]
    fn lost_output_is_counted_and_breaks_the_line() {
        let mut t = Throttle::default();
        t.push(b"half a li");
        t.lost();
        t.push(b"ne\n");
        let (text, details) = t.take(Instant::now()).unwrap();
        assert_eq!(text, "ne");
        assert_eq!(details["skipped"], 1);
    }
}
