//! ag-acp's stdio as the SDK's line transport, with what the SDK's own
//! stdio adapter lacks: each line from the editor is judged first
//! ([`super::envelope`]), so that a request the SDK would answer with
//! `"id": null` is answered here with its id; a line longer than
//! [`MAX_LINE`] is never held in memory whole (its start tells who to
//! answer); and the notifications waiting to be written are counted
//! ([`Outbox`]), so that while the editor does not read, ag-acp stops
//! reading ag-loop instead of queueing without end (ag-loop then waits on
//! its pipe).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::{Sink, Stream};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, Notify};

use super::envelope::{self, Verdict};

/// The longest message line read from the editor. Images come base64
/// encoded inside prompts, so this is generous.
pub const MAX_LINE: usize = 64 << 20;

/// How much of a line over [`MAX_LINE`] is kept to find its `id` in.
const KEPT_OF_LONG_LINE: usize = 64 << 10;

/// Notifications queued and not yet written, past which session output
/// waits.
pub const MAX_QUEUED: usize = 1024;

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

/// The writer both directions share: the SDK's messages, and the answers
/// given here to lines the SDK never sees. A line is written whole under
/// the lock, so that two never interleave.
type Writer<W> = Arc<Mutex<W>>;

async fn write_line<W: AsyncWrite + Unpin>(w: &Mutex<W>, mut line: String) -> std::io::Result<()> {
    line.push('\n');
    let mut w = w.lock().await;
    w.write_all(line.as_bytes()).await?;
    w.flush().await
}

/// The transport over `reader` and `writer`: the SDK's outgoing lines and
/// its incoming ones, judged.
pub fn lines<R, W>(
    reader: R,
    writer: W,
    outbox: Outbox,
) -> (
    impl Sink<String, Error = std::io::Error> + Send + 'static,
    impl Stream<Item = std::io::Result<String>> + Send + 'static,
)
where
    R: AsyncBufRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let writer: Writer<W> = Arc::new(Mutex::new(writer));
    (
        outgoing(writer.clone(), outbox),
        incoming(reader, writer, MAX_LINE),
    )
}

/// stdin and stdout as [`lines`] reads and writes them.
pub fn stdio(
    outbox: Outbox,
) -> (
    impl Sink<String, Error = std::io::Error> + Send + 'static,
    impl Stream<Item = std::io::Result<String>> + Send + 'static,
) {
    lines(
        BufReader::with_capacity(64 << 10, tokio::io::stdin()),
        tokio::io::stdout(),
        outbox,
    )
}

/// The editor's lines that the SDK is to see; the others are answered
/// through `writer` on the way.
fn incoming<R, W>(
    reader: R,
    writer: Writer<W>,
    max: usize,
) -> impl Stream<Item = std::io::Result<String>> + Send + 'static
where
    R: AsyncBufRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    futures::stream::unfold((reader, writer), move |(mut r, writer)| async move {
        loop {
            let verdict = match read_line(&mut r, max).await {
                Ok(Some(Line::Whole(line))) => envelope::judge(&line),
                Ok(Some(Line::TooLong(kept))) => envelope::judge_long(&kept, max),
                Ok(None) => return None,
                Err(e) => return Some((Err(e), (r, writer))),
            };
            match verdict {
                Verdict::Pass(text) => return Some((Ok(text), (r, writer))),
                Verdict::Answer(answer) => {
                    if let Err(e) = write_line(&writer, answer).await {
                        return Some((Err(e), (r, writer)));
                    }
                }
                Verdict::Drop => {}
            }
        }
    })
}

/// A line as read: whole, or over the limit (only its start kept).
#[derive(Debug, PartialEq)]
enum Line {
    Whole(Vec<u8>),
    TooLong(Vec<u8>),
}

/// Reads one line without its newline (or `\r\n`); None at the end of
/// input. A line over `max` bytes is read to its end, keeping only its
/// first [`KEPT_OF_LONG_LINE`] bytes.
async fn read_line<R: AsyncBufRead + Unpin>(
    r: &mut R,
    max: usize,
) -> std::io::Result<Option<Line>> {
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
        if !over && line.len() + chunk.len() > max {
            over = true;
            if line.len() > KEPT_OF_LONG_LINE {
                line.truncate(KEPT_OF_LONG_LINE);
                line.shrink_to_fit();
            }
        }
        if over {
            let keep = KEPT_OF_LONG_LINE
                .saturating_sub(line.len())
                .min(chunk.len());
            line.extend_from_slice(&chunk[..keep]);
        } else {
            line.extend_from_slice(chunk);
        }
        let used = found.unwrap_or(buf.len());
        r.consume(used);
        if found.is_some() {
            break;
        }
    }
    if over {
        return Ok(Some(Line::TooLong(line)));
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Some(Line::Whole(line)))
}

/// Lines to the shared writer, each flushed as written and counted off
/// the outbox.
fn outgoing<W: AsyncWrite + Unpin + Send + 'static>(
    writer: Writer<W>,
    outbox: Outbox,
) -> impl Sink<String, Error = std::io::Error> + Send + 'static {
    futures::sink::unfold(
        (writer, outbox),
        |(writer, outbox), line: String| async move {
            write_line(&writer, line).await?;
            outbox.written();
            Ok::<_, std::io::Error>((writer, outbox))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    use futures::StreamExt;
    use tokio::io::AsyncReadExt;

    async fn read_all(input: &[u8], max: usize) -> Vec<Line> {
        let mut r = BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        while let Some(l) = read_line(&mut r, max).await.unwrap() {
            out.push(l);
        }
        out
    }

    fn whole(s: &[u8]) -> Line {
        Line::Whole(s.to_vec())
    }

    #[tokio::test]
    async fn lines_are_cut_at_newlines_across_buffer_ends() {
        assert_eq!(
            read_all(b"{\"a\":1}\r\n\nlast", 100).await,
            [whole(b"{\"a\":1}"), whole(b""), whole(b"last")]
        );
    }

    #[tokio::test]
    async fn an_overlong_line_keeps_its_start_and_the_next_is_read() {
        let mut input = vec![b'x'; 50];
        input.extend_from_slice(b"\nok\n");
        assert_eq!(
            read_all(&input, 10).await,
            [Line::TooLong(vec![b'x'; 50]), whole(b"ok")]
        );
        // Only the start is kept of a line longer than that.
        let mut input = vec![b'y'; KEPT_OF_LONG_LINE * 3];
        input.push(b'\n');
        let got = read_all(&input, KEPT_OF_LONG_LINE).await;
        assert_eq!(got, [Line::TooLong(vec![b'y'; KEPT_OF_LONG_LINE])]);
    }

    #[tokio::test]
    async fn bytes_that_are_not_utf8_do_not_stop_the_reader() {
        assert_eq!(
            read_all(b"a\xffb\nc\n", 100).await,
            [whole(b"a\xffb"), whole(b"c")]
        );
    }

    #[tokio::test]
    async fn a_bad_request_is_answered_with_its_id_and_the_sdk_sees_the_rest() {
        let input: &[u8] =
            b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"session/list\",\"params\":\"\"}\n\
            {\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"session/list\"}\n";
        let long = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"session/prompt\",\"params\":\"{}\"}}\n",
            "a".repeat(300)
        );
        let (out, mut editor) = tokio::io::duplex(1 << 16);
        let writer = Arc::new(Mutex::new(out));
        let input = [input, long.as_bytes()].concat();
        let seen: Vec<String> = incoming(BufReader::new(std::io::Cursor::new(input)), writer, 200)
            .map(Result::unwrap)
            .collect()
            .await;
        assert_eq!(
            seen,
            [r#"{"jsonrpc":"2.0","id":10,"method":"session/list"}"#]
        );
        let mut written = vec![0; 4096];
        let n = editor.read(&mut written).await.unwrap();
        let answers: Vec<serde_json::Value> = written[..n]
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        assert_eq!(answers.len(), 2, "{answers:?}");
        assert_eq!(answers[0]["id"], 9);
        assert_eq!(answers[0]["error"]["code"], -32600);
        assert_eq!(answers[1]["id"], 11);
        assert!(
            answers[1]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("longer than"),
            "{answers:?}"
        );
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
