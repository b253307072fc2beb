//! ag-acp's stdio as the SDK's line transport, with two bounds the SDK's
//! own stdio adapter lacks: a line from the editor longer than
//! [`MAX_LINE`] is dropped (answered as a parse error, never held in
//! memory whole), and the notifications waiting to be written are counted
//! ([`Outbox`]), so that while the editor does not read, ag-acp stops
//! reading ag-loop instead of queueing without end (ag-loop then waits on
//! its pipe).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::{Sink, Stream};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Notify;

/// The longest message line read from the editor. Images come base64
/// encoded inside prompts, so this is generous.
pub const MAX_LINE: usize = 64 << 20;

/// Notifications queued and not yet written, past which session output
/// waits.
pub const MAX_QUEUED: usize = 1024;

/// What a line over [`MAX_LINE`] is replaced with: not JSON, so the SDK
/// answers it with a parse error, as it would the line itself.
const OVERLONG: &str = "(a message line longer than 64 MiB was dropped)";

/// Counts the messages queued for stdout and not yet written.
#[derive(Clone, Default)]
pub struct Outbox(Arc<Inner>);

#[derive(Default)]
struct Inner {
    queued: AtomicUsize,
    written: Notify,
}

impl Outbox {
    /// One more message queued.
    pub fn add(&self) {
        self.0.queued.fetch_add(1, Ordering::AcqRel);
    }

    /// A line was written. Responses are written without being counted,
    /// so the count stops at zero.
    fn written(&self) {
        let _ = self
            .0
            .queued
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
        self.0.written.notify_waiters();
    }

    /// Messages queued now.
    pub fn queued(&self) -> usize {
        self.0.queued.load(Ordering::Acquire)
    }

    /// Waits until fewer than [`MAX_QUEUED`] messages wait to be written.
    pub async fn room(&self) {
        loop {
            let written = self.0.written.notified();
            tokio::pin!(written);
            written.as_mut().enable();
            if self.queued() < MAX_QUEUED {
                return;
            }
            written.await;
        }
    }
}

/// The editor's lines, each cut at [`MAX_LINE`].
pub fn incoming<R: AsyncBufRead + Unpin + Send + 'static>(
    reader: R,
) -> impl Stream<Item = std::io::Result<String>> + Send + 'static {
    futures::stream::unfold(reader, |mut r| async move {
        match read_line(&mut r, MAX_LINE).await {
            Ok(Some(line)) => Some((Ok(line), r)),
            Ok(None) => None,
            Err(e) => Some((Err(e), r)),
        }
    })
}

/// stdin as [`incoming`] reads it.
pub fn stdin() -> impl Stream<Item = std::io::Result<String>> + Send + 'static {
    incoming(BufReader::with_capacity(64 << 10, tokio::io::stdin()))
}

/// Reads one line without its newline; None at the end of input. A line
/// over `max` bytes is read to its end and dropped, and [`OVERLONG`] is
/// given in its place. Bytes that are not UTF-8 become U+FFFD (the JSON
/// parser then says what is wrong).
async fn read_line<R: AsyncBufRead + Unpin>(
    r: &mut R,
    max: usize,
) -> std::io::Result<Option<String>> {
    let mut line: Vec<u8> = Vec::new();
    let mut over = false;
    let mut any = false;
    loop {
        let buf = r.fill_buf().await?;
        if buf.is_empty() {
            if !any {
                return Ok(None);
            }
            break;
        }
        any = true;
        let (chunk, found) = match memchr::memchr(b'\n', buf) {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !over {
            if line.len() + chunk.len() > max {
                over = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = found.unwrap_or(buf.len());
        r.consume(used);
        if found.is_some() {
            break;
        }
    }
    if over {
        return Ok(Some(OVERLONG.to_string()));
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Some(match String::from_utf8(line) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }))
}

/// Lines to `w`, each flushed as written and counted off the outbox.
pub fn outgoing<W: AsyncWrite + Unpin + Send + 'static>(
    w: W,
    outbox: Outbox,
) -> impl Sink<String, Error = std::io::Error> + Send + 'static {
    futures::sink::unfold(
        (w, outbox),
        |(mut w, outbox), mut line: String| async move {
            line.push('\n');
            w.write_all(line.as_bytes()).await?;
            w.flush().await?;
            outbox.written();
            Ok::<_, std::io::Error>((w, outbox))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], max: usize) -> Vec<String> {
        let mut r = BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        while let Some(l) = read_line(&mut r, max).await.unwrap() {
            out.push(l);
        }
        out
    }

    #[tokio::test]
    async fn lines_are_cut_at_newlines_across_buffer_ends() {
        assert_eq!(
            lines(b"{\"a\":1}\r\n\nlast", 100).await,
            ["{\"a\":1}", "", "last"]
        );
    }

    #[tokio::test]
    async fn an_overlong_line_is_replaced_and_the_next_is_read() {
        let mut input = vec![b'x'; 50];
        input.extend_from_slice(b"\nok\n");
        assert_eq!(lines(&input, 10).await, [OVERLONG, "ok"]);
    }

    #[tokio::test]
    async fn bytes_that_are_not_utf8_do_not_stop_the_reader() {
        assert_eq!(lines(b"a\xffb\nc\n", 100).await, ["a\u{fffd}b", "c"]);
    }

    #[tokio::test]
    async fn the_outbox_waits_for_room() {
        let o = Outbox::default();
        for _ in 0..MAX_QUEUED {
            o.add();
        }
        let waiting = tokio::spawn({
            let o = o.clone();
            async move { o.room().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        o.written();
        waiting.await.unwrap();
        // Uncounted writes stop at zero.
        for _ in 0..MAX_QUEUED + 5 {
            o.written();
        }
        assert_eq!(o.queued(), 0);
    }
}
