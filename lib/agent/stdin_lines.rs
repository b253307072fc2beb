//! ag-loop's stdin, read with bounds: a line is at most [`MAX_LINE`]
//! bytes (a longer one is skipped to its end and reported, never held
//! whole), and the prompts waiting to run hold at most [`QUEUE_BYTES`]
//! together. A pipe that sends more waits until the prompts ahead of it
//! have started, so a million-line prompts file costs memory for the few
//! prompts queued ahead, not for the file, and no prompt is dropped.

use std::sync::Arc;

use tokio::io::{AsyncBufRead, AsyncBufReadExt};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The longest line taken: a prompt with images as base64 fits.
pub const MAX_LINE: usize = 64 * 1024 * 1024;
/// The bytes of the prompts queued and not yet started.
pub const QUEUE_BYTES: usize = 256 * 1024 * 1024;
/// The budget is counted in units of this many bytes.
const UNIT: usize = 1024;

/// One line of stdin.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line, without its newline.
    Whole(Vec<u8>),
    /// A line over [`MAX_LINE`], skipped; its length.
    TooLong(u64),
}

/// Reads the next line of `reader` within `max` bytes; `None` at the end.
/// A last line without a newline is a line.
pub async fn next_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    max: usize,
) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut skipped: Option<u64> = None;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(match skipped {
                Some(n) => Some(Line::TooLong(n)),
                None if line.is_empty() => None,
                None => Some(Line::Whole(line)),
            });
        }
        let (part, end) = match buf.iter().position(|&b| b == b'\n') {
            Some(at) => (&buf[..at], Some(at + 1)),
            None => (buf, None),
        };
        match &mut skipped {
            Some(n) => *n += part.len() as u64,
            None if line.len() + part.len() > max => {
                skipped = Some((line.len() + part.len()) as u64);
                line = Vec::new();
            }
            None => line.extend_from_slice(part),
        }
        let used = end.unwrap_or(buf.len());
        reader.consume(used);
        if end.is_some() {
            return Ok(Some(match skipped {
                Some(n) => Line::TooLong(n),
                None => Line::Whole(line),
            }));
        }
    }
}

/// The room the queued prompts may take.
#[derive(Clone)]
pub struct Budget {
    room: Arc<Semaphore>,
    units: u32,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget::new(QUEUE_BYTES)
    }
}

impl Budget {
    /// A budget of `bytes`.
    pub fn new(bytes: usize) -> Budget {
        let units = u32::try_from(bytes / UNIT).unwrap_or(u32::MAX).max(1);
        Budget {
            room: Arc::new(Semaphore::new(units as usize)),
            units,
        }
    }

    /// Waits until a prompt of `bytes` fits, and holds its room until the
    /// returned permit is dropped (when the prompt is taken to run). A
    /// prompt larger than the whole budget waits for an empty queue.
    pub async fn hold(&self, bytes: usize) -> Option<OwnedSemaphorePermit> {
        let units = u32::try_from(bytes / UNIT)
            .unwrap_or(u32::MAX)
            .clamp(1, self.units);
        self.room.clone().acquire_many_owned(units).await.ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], max: usize) -> Vec<Line> {
        let mut r = tokio::io::BufReader::with_capacity(8, input);
        let mut out = Vec::new();
        while let Some(l) = next_line(&mut r, max).await.unwrap() {
            out.push(l);
        }
        out
    }

    #[tokio::test]
    async fn lines_are_cut_at_newlines_and_a_long_one_is_skipped_whole() {
        let got = lines(b"one\n\ntoo long a line\ntwo\nlast", 10).await;
        assert_eq!(
            got,
            vec![
                Line::Whole(b"one".to_vec()),
                Line::Whole(Vec::new()),
                Line::TooLong(15),
                Line::Whole(b"two".to_vec()),
                Line::Whole(b"last".to_vec()),
            ]
        );
        assert_eq!(lines(b"0123456789abc", 10).await, vec![Line::TooLong(13)]);
        assert!(lines(b"", 10).await.is_empty());
    }

    #[tokio::test]
    async fn a_full_budget_holds_the_next_prompt_until_one_is_taken() {
        let budget = Budget::new(4 * UNIT);
        let first = budget.hold(3 * UNIT).await.unwrap();
        let waiting = {
            let b = budget.clone();
            tokio::spawn(async move { b.hold(2 * UNIT).await.is_some() })
        };
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "the queue is full");
        drop(first);
        assert!(waiting.await.unwrap());
    }
}
