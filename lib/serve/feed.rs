//! What one attached client is sent, in order: the events it missed, read
//! from the session file on a blocking thread in bounded chunks, then what
//! its queue in the hub brings (see `hub.rs` for why the two meet without a
//! gap or a duplicate). The socket's connections and the HTTP event
//! streams both read a feed; they differ only in how they write it.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::mpsc;

use super::hub::{Out, Queue};
use super::tail;
use crate::llm::keys::Redactor;
use crate::protocol::ServeMessage;

/// Bytes of replayed events handed over at a time.
const CHUNK: usize = 256 * 1024;

/// One thing to send.
#[derive(Debug)]
pub enum Item {
    /// An event and its offset (the line with its newline).
    Event(u64, Arc<[u8]>),
    /// A message of the broker's.
    Message(Arc<ServeMessage>),
    /// The client fell behind and was let go at this offset.
    Dropped(u64),
    /// Nothing more comes: the session ended, or the replay of an ended
    /// session is over.
    End,
}

type Chunk = io::Result<Vec<(u64, Arc<[u8]>)>>;

/// A client's events: the replay, then the live queue.
pub struct Feed {
    replay: Option<mpsc::Receiver<Chunk>>,
    pending: std::vec::IntoIter<(u64, Arc<[u8]>)>,
    queue: Option<Queue>,
    /// Events below this offset were asked not to be sent (a `from` past
    /// the events the file held when the client attached).
    from: u64,
    ended: bool,
    /// What no line sent may carry.
    redactor: Arc<Redactor>,
}

impl Feed {
    /// The events of the file at `path` from `from` up to `live_from`,
    /// then those of `queue` (none: the feed ends after the file's), with
    /// `redactor`'s secrets hidden (ag-loop hid the keys it knew when it
    /// wrote them; these are the keys of the machine ag-serve runs on).
    pub fn new(
        path: PathBuf,
        from: u64,
        live_from: u64,
        queue: Option<Queue>,
        redactor: Arc<Redactor>,
    ) -> Feed {
        let replay = (from < live_from).then(|| {
            let (tx, rx) = mpsc::channel::<Chunk>(2);
            tokio::task::spawn_blocking(move || read(&path, from, live_from, &tx));
            rx
        });
        Feed {
            replay,
            pending: Vec::new().into_iter(),
            queue,
            from,
            ended: false,
            redactor,
        }
    }

    fn event(&self, n: u64, line: Arc<[u8]>) -> Item {
        if self.redactor.is_empty() {
            return Item::Event(n, line);
        }
        let mut owned = line.to_vec();
        if self.redactor.json_line(&mut owned) {
            Item::Event(n, Arc::from(owned))
        } else {
            Item::Event(n, line)
        }
    }

    /// The next thing to send; `None` after [`Item::End`] or
    /// [`Item::Dropped`].
    pub async fn next(&mut self) -> Option<Item> {
        loop {
            if let Some((n, line)) = self.pending.next() {
                return Some(self.event(n, line));
            }
            if let Some(rx) = &mut self.replay {
                match rx.recv().await {
                    Some(Ok(chunk)) => self.pending = chunk.into_iter(),
                    Some(Err(e)) => {
                        self.replay = None;
                        return Some(Item::Message(Arc::new(ServeMessage::Refused {
                            message: format!("cannot replay the session: {e}"),
                        })));
                    }
                    None => self.replay = None,
                }
                continue;
            }
            if self.ended {
                return None;
            }
            let out = match &mut self.queue {
                Some(q) => q.next().await,
                None => None,
            };
            if let Some(item) = self.take(out) {
                return Some(item);
            }
        }
    }

    /// The next thing if it is there now (live events only), to write
    /// several before a flush.
    pub fn try_next(&mut self) -> Option<Item> {
        if let Some((n, line)) = self.pending.next() {
            return Some(self.event(n, line));
        }
        if self.replay.is_some() || self.ended {
            return None;
        }
        loop {
            let out = self.queue.as_mut()?.try_next()?;
            if let Some(item) = self.take(Some(out)) {
                return Some(item);
            }
        }
    }

    /// What a queue item becomes; `None` for one to skip.
    fn take(&mut self, out: Option<Out>) -> Option<Item> {
        match out {
            Some(Out::Event(n, _)) if n < self.from => None,
            Some(Out::Event(n, line)) => Some(self.event(n, line)),
            Some(Out::Message(m)) => Some(Item::Message(m)),
            Some(Out::Dropped(n)) => {
                self.ended = true;
                Some(Item::Dropped(n))
            }
            Some(Out::Ended) | None => {
                self.ended = true;
                Some(Item::End)
            }
        }
    }
}

fn read(path: &std::path::Path, from: u64, to: u64, tx: &mpsc::Sender<Chunk>) {
    let mut chunk = Vec::new();
    let mut bytes = 0;
    let mut gone = false;
    let r = tail::replay(path, from, to, |n, line| {
        bytes += line.len();
        chunk.push((n, Arc::from(line)));
        if bytes >= CHUNK {
            bytes = 0;
            gone = tx.blocking_send(Ok(std::mem::take(&mut chunk))).is_err();
        }
        !gone
    });
    if gone {
        return;
    }
    let _ = match r {
        Ok(_) => tx.blocking_send(Ok(chunk)),
        Err(e) => tx.blocking_send(Err(e)),
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::hub::{Hub, Seen};

    fn ev(n: u64) -> String {
        format!(
            "{{\"type\":\"notify\",\"timestamp\":\"t\",\"message\":\"{n}\",\"level\":\"info\"}}\n"
        )
    }

    #[tokio::test]
    async fn the_replay_and_the_live_events_meet_without_gap_or_duplicate() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        let mut text = String::from("{\"type\":\"session\",\"timestamp\":\"t\"}\n");
        // Long enough for several chunks.
        for n in 0..5000 {
            text.push_str(&ev(n));
        }
        std::fs::write(&p, &text).unwrap();
        let hub = Hub::new("s".into(), 5000, Seen::default(), 1 << 30);
        let att = hub.attach("t");
        assert_eq!(att.live_from, 5000);
        for n in 5000..5010 {
            hub.publish(&[(n, Arc::from(ev(n).as_bytes()))]);
        }
        hub.end(ServeMessage::Ending {
            session: "s".into(),
        });
        let mut feed = Feed::new(
            p.clone(),
            17,
            att.live_from,
            Some(att.queue),
            Arc::default(),
        );
        let mut offsets = Vec::new();
        let mut ended = false;
        while let Some(item) = feed.next().await {
            match item {
                Item::Event(n, line) => {
                    assert_eq!(&*line, ev(n).as_bytes());
                    offsets.push(n);
                }
                Item::End => ended = true,
                Item::Message(_) => {}
                Item::Dropped(n) => panic!("dropped at {n}"),
            }
        }
        assert!(ended);
        assert_eq!(offsets, (17..5010).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn a_from_past_the_file_skips_the_live_events_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        std::fs::write(
            &p,
            format!("{{\"type\":\"session\",\"timestamp\":\"t\"}}\n{}", ev(0)),
        )
        .unwrap();
        let hub = Hub::new("s".into(), 1, Seen::default(), 1 << 20);
        let att = hub.attach("t");
        let mut r = Redactor::default();
        r.add("sk-this-is-a-secret", "KEY");
        let mut feed = Feed::new(p, 3, att.live_from, Some(att.queue), Arc::new(r));
        for n in 1..5 {
            hub.publish(&[(n, Arc::from(ev(n).as_bytes()))]);
        }
        hub.publish(&[(
            5,
            Arc::from(
                &b"{\"type\":\"notify\",\"timestamp\":\"t\",\"message\":\"sk-this-is-a-secret\",\"level\":\"info\"}\n"[..],
            ),
        )]);
        assert!(matches!(feed.next().await, Some(Item::Event(3, _))));
        assert!(matches!(feed.try_next(), Some(Item::Event(4, _))));
        match feed.try_next() {
            Some(Item::Event(5, line)) => {
                let text = String::from_utf8_lossy(&line);
                assert!(
                    text.contains("[KEY redacted]") && !text.contains("sk-this"),
                    "{text}"
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(feed.try_next().is_none());
    }
}
