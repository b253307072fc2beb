//! The Unix socket: clients connect, send JSONL requests and ag-loop
//! commands, and read the attached session's events and the broker's
//! messages. Each connection has a reader (its lines, handled in order)
//! and a writer (the replies and the attached session's feed, one line at
//! a time, flushed when nothing more is ready). A connection that is
//! dropped for falling behind is closed once the `dropped` message is out,
//! or after a grace period when the client reads nothing at all.

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::OwnedWriteHalf;
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::broker::{Broker, Found, ServeError};
use super::feed::{Feed, Item};
use super::hub::Attachment;
use super::live::Live;
use crate::protocol::{AgentCommand, ServeMessage, ServeRequest, SessionState};

/// The longest line a client may send.
const MAX_LINE: usize = 16 << 20;

/// How long a dropped client that reads nothing keeps its connection. The
/// kernel may already hold part of a line for it: closing sooner would tear
/// that line and lose the `dropped` message behind it, which a client that
/// paused for a while (a busy machine, a suspended terminal) comes back to
/// read. It is detached from the session all the while; the connection
/// costs a descriptor and one write's buffer.
const DROP_GRACE: Duration = Duration::from_secs(600);

/// Bytes gathered before a write.
const WRITE_CHUNK: usize = 64 * 1024;

/// The request types of ag-serve (every other `type` is ag-loop's).
const REQUESTS: &[&str] = &["list", "start", "attach", "detach", "end", "rewind"];

/// Binds the socket at `path` (mode 0600), replacing one left by a broker
/// that is gone (the caller holds the broker's lock).
pub fn listen(path: &Path) -> io::Result<UnixListener> {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(io::Error::new(
                e.kind(),
                format!("cannot remove the old socket `{}`: {e}", path.display()),
            ));
        }
    }
    let listener = UnixListener::bind(path).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot listen on `{}`: {e}", path.display()),
        )
    })?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot set the mode of `{}`: {e}", path.display()),
        )
    })?;
    Ok(listener)
}

/// Accepts connections until `stop` is cancelled.
pub async fn serve(listener: UnixListener, broker: Arc<Broker>, stop: CancellationToken) {
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    tokio::spawn(connection(stream, broker.clone()));
                }
                Err(e) => {
                    crate::cli::warn("ag-serve", &format!("cannot accept a connection: {e}"));
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            _ = stop.cancelled() => return,
        }
    }
}

/// What the reader tells the writer.
enum Ctl {
    /// A reply.
    Reply(ServeMessage),
    /// Follow this session from `from` (leaving the one followed before).
    Attach {
        live: Option<Arc<Live>>,
        attachment: Option<Attachment>,
        session: String,
        path: std::path::PathBuf,
        from: u64,
        live_from: u64,
        state: SessionState,
        name: String,
    },
    /// Leave the session followed, and say so.
    Detach,
}

/// The session a connection is attached to, for its commands.
#[derive(Clone)]
struct Current {
    live: Arc<Live>,
    client: u64,
    name: String,
}

type Shared = Arc<Mutex<Option<Current>>>;

fn current(shared: &Shared) -> Option<Current> {
    shared.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

fn set_current(shared: &Shared, value: Option<Current>) {
    *shared.lock().unwrap_or_else(|p| p.into_inner()) = value;
}

async fn connection(stream: UnixStream, broker: Arc<Broker>) {
    let (read, write) = stream.into_split();
    let (ctl_tx, ctl_rx) = mpsc::unbounded_channel();
    let shared: Shared = Arc::new(Mutex::new(None));
    let closed = CancellationToken::new();
    let writer = tokio::spawn(write_loop(
        write,
        ctl_rx,
        shared.clone(),
        closed.clone(),
        broker.clone(),
    ));
    let mut reader = BufReader::new(read);
    let mut line = Vec::new();
    loop {
        line.clear();
        let got = tokio::select! {
            r = read_line(&mut reader, &mut line) => r,
            _ = closed.cancelled() => break,
        };
        let len = match got {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if len > MAX_LINE {
            let _ = ctl_tx.send(Ctl::Reply(refused(format!(
                "a line of {len} bytes is longer than the {MAX_LINE} bytes a line may have; skipped"
            ))));
            continue;
        }
        handle(&line, &broker, &shared, &ctl_tx).await;
    }
    // The writer leaves the session when the channel closes.
    drop(ctl_tx);
    let _ = writer.await;
}

/// Reads one line into `line`, keeping at most [`MAX_LINE`] bytes of it;
/// returns its whole length (0 at the end of the input).
async fn read_line(
    reader: &mut BufReader<tokio::net::unix::OwnedReadHalf>,
    line: &mut Vec<u8>,
) -> io::Result<usize> {
    let mut seen = 0usize;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(seen);
        }
        let (take, done) = match memchr::memchr(b'\n', buf) {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let room = (MAX_LINE + 1).saturating_sub(line.len());
        line.extend_from_slice(&buf[..take.min(room)]);
        seen += take;
        reader.consume(take);
        if done {
            return Ok(seen);
        }
    }
}

fn refused(message: String) -> ServeMessage {
    ServeMessage::Refused { message }
}

async fn handle(
    raw: &[u8],
    broker: &Arc<Broker>,
    shared: &Shared,
    ctl: &mpsc::UnboundedSender<Ctl>,
) {
    let text = raw.trim_ascii();
    if text.is_empty() {
        return;
    }
    let value = serde_json::from_slice::<Value>(text).ok();
    let kind = value
        .as_ref()
        .and_then(|v| v.get("type"))
        .and_then(Value::as_str)
        .map(str::to_string);
    if let (Some(v), Some(k)) = (&value, &kind)
        && REQUESTS.contains(&k.as_str())
    {
        match serde_json::from_value::<ServeRequest>(v.clone()) {
            Ok(req) => request(req, broker, shared, ctl).await,
            Err(e) => {
                let _ = ctl.send(Ctl::Reply(refused(format!("bad `{k}` request: {e}"))));
            }
        }
        return;
    }
    let reply = command(text, value, shared);
    if let Err(message) = reply {
        let _ = ctl.send(Ctl::Reply(refused(message)));
    }
}

/// An ag-loop command for the attached session: checked, then passed on
/// as the client wrote it.
fn command(text: &[u8], value: Option<Value>, shared: &Shared) -> Result<(), String> {
    let Some(cur) = current(shared) else {
        return Err(
            "not attached to a session: send {\"type\":\"attach\",\"session\":ID} or {\"type\":\"start\"} first"
                .to_string(),
        );
    };
    let mut line = text.to_vec();
    line.push(b'\n');
    let command = match value {
        // A line that is not JSON is a prompt, as on ag-loop's stdin.
        None => {
            if std::str::from_utf8(text).is_err() {
                return Err("a line that is not UTF-8 is not a prompt; send text".into());
            }
            None
        }
        Some(v) => match serde_json::from_value::<AgentCommand>(v) {
            Ok(c) => Some(c),
            Err(e) => {
                return Err(format!(
                    "not a command ({e}); send one of ag-loop's commands (prompt, steer, interrupt, approval, compact) or one of ag-serve's requests ({})",
                    REQUESTS.join(", ")
                ));
            }
        },
    };
    deliver(&cur.live, &cur.name, command.as_ref(), line)
}

/// Passes a command line to a live session: an approval only when no one
/// answered it first.
pub fn deliver(
    live: &Live,
    by: &str,
    command: Option<&AgentCommand>,
    line: Vec<u8>,
) -> Result<(), String> {
    let gone = || {
        format!(
            "session {} has ended; attach with \"resume\":true to go on with it",
            live.id
        )
    };
    if let Some(AgentCommand::Approval {
        tool_call_id,
        approved,
        always,
    }) = command
    {
        return live
            .hub
            .answer_approval(tool_call_id, *approved, *always, by, || live.send(line))
            .map_err(|e| {
                if live.has_ended() {
                    gone()
                } else {
                    e.to_string()
                }
            });
    }
    if live.send(line) { Ok(()) } else { Err(gone()) }
}

async fn request(
    req: ServeRequest,
    broker: &Arc<Broker>,
    shared: &Shared,
    ctl: &mpsc::UnboundedSender<Ctl>,
) {
    let reply = |m: ServeMessage| {
        let _ = ctl.send(Ctl::Reply(m));
    };
    match req {
        ServeRequest::List { all } => {
            let b = broker.clone();
            match tokio::task::spawn_blocking(move || b.list(all)).await {
                Ok(sessions) => reply(ServeMessage::Sessions { sessions }),
                Err(e) => reply(refused(format!("cannot list the sessions: {e}"))),
            }
        }
        ServeRequest::Start {
            cwd,
            args,
            prompt,
            client,
        } => match broker.start(cwd.as_deref(), &args) {
            Ok(live) => {
                attach_live(&live, 0, client.as_deref(), shared, ctl);
                if let Some(content) = prompt {
                    let cmd = AgentCommand::Prompt {
                        content,
                        attachments: Vec::new(),
                        data: Vec::new(),
                    };
                    if let Ok(mut line) = serde_json::to_vec(&cmd) {
                        line.push(b'\n');
                        live.send(line);
                    }
                }
            }
            Err(e) => reply(refused(e.to_string())),
        },
        ServeRequest::Attach {
            session,
            from,
            resume,
            args,
            client,
        } => match attach(
            broker,
            &session,
            from,
            resume,
            &args,
            client.as_deref(),
            shared,
            ctl,
        ) {
            Ok(()) => {}
            Err(e) => reply(refused(e.to_string())),
        },
        ServeRequest::Detach => {
            let _ = ctl.send(Ctl::Detach);
        }
        ServeRequest::End { session } => {
            let live = match session {
                Some(s) => match broker.find(&s) {
                    Ok(Found::Live(l)) => Some(l),
                    Ok(Found::Ended(f)) => {
                        reply(refused(format!("session {} is not running", f.id)));
                        return;
                    }
                    Err(e) => {
                        reply(refused(e.to_string()));
                        return;
                    }
                },
                None => current(shared).map(|c| c.live),
            };
            match live {
                Some(l) => {
                    let attached_here = current(shared).is_some_and(|c| Arc::ptr_eq(&c.live, &l));
                    broker.end(&l);
                    if !attached_here {
                        reply(ServeMessage::Ending {
                            session: l.id.clone(),
                        });
                    }
                }
                None => reply(refused(
                    "not attached to a session: name the session to end".into(),
                )),
            }
        }
        ServeRequest::Rewind {
            session,
            turn,
            force,
        } => {
            let cur = current(shared);
            let Some(wanted) = session.or_else(|| cur.as_ref().map(|c| c.live.id.clone())) else {
                reply(refused(
                    "not attached to a session: name the session to rewind".into(),
                ));
                return;
            };
            match broker.rewind(&wanted, turn, force).await {
                Ok((old_id, live, notes)) => {
                    let was_on_it = cur.is_some_and(|c| c.live.id == old_id);
                    reply(ServeMessage::Rewound {
                        session: old_id,
                        new_session: live.id.clone(),
                        notes,
                    });
                    // A client on the session rewound follows the new one.
                    if was_on_it {
                        let name = current(shared).map(|c| c.name);
                        let base = name
                            .as_deref()
                            .and_then(|n| n.rsplit_once('#'))
                            .map(|(b, _)| b);
                        attach_live(&live, 0, base, shared, ctl);
                    }
                }
                Err(e) => reply(refused(e.to_string())),
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn attach(
    broker: &Arc<Broker>,
    session: &str,
    from: u64,
    resume: bool,
    args: &[String],
    client: Option<&str>,
    shared: &Shared,
    ctl: &mpsc::UnboundedSender<Ctl>,
) -> Result<(), ServeError> {
    let live = match broker.find(session)? {
        Found::Live(l) if !l.has_ended() => l,
        Found::Live(l) if resume => broker.resume(
            crate::session::SessionFile {
                id: l.id.clone(),
                path: l.path.clone(),
                stamp: String::new(),
            },
            args,
        )?,
        Found::Ended(f) if resume => broker.resume(f, args)?,
        Found::Live(l) => {
            replay_ended(&l.id, &l.path, from, client, shared, ctl)?;
            return Ok(());
        }
        Found::Ended(f) => {
            replay_ended(&f.id, &f.path, from, client, shared, ctl)?;
            return Ok(());
        }
    };
    attach_live(&live, from, client, shared, ctl);
    Ok(())
}

fn attach_live(
    live: &Arc<Live>,
    from: u64,
    client: Option<&str>,
    shared: &Shared,
    ctl: &mpsc::UnboundedSender<Ctl>,
) {
    let att = live.hub.attach(client.unwrap_or("socket"));
    set_current(
        shared,
        Some(Current {
            live: live.clone(),
            client: att.client,
            name: att.name.clone(),
        }),
    );
    let _ = ctl.send(Ctl::Attach {
        live: Some(live.clone()),
        session: live.id.clone(),
        path: live.path.clone(),
        from,
        live_from: att.live_from,
        state: att.state,
        name: att.name.clone(),
        attachment: Some(att),
    });
}

/// Attaching to a session that does not run here: its file, then its end.
fn replay_ended(
    id: &str,
    path: &Path,
    from: u64,
    client: Option<&str>,
    shared: &Shared,
    ctl: &mpsc::UnboundedSender<Ctl>,
) -> Result<(), ServeError> {
    let count = super::tail::Tail::open(path)
        .map_err(|e| ServeError::Failed(e.to_string()))?
        .count();
    set_current(shared, None);
    let _ = ctl.send(Ctl::Attach {
        live: None,
        attachment: None,
        session: id.to_string(),
        path: path.to_path_buf(),
        from,
        live_from: count,
        state: SessionState::Ended,
        name: client.unwrap_or("socket").to_string(),
    });
    Ok(())
}

/// The session a writer follows.
struct Following {
    live: Option<Arc<Live>>,
    client: u64,
    session: String,
    path: std::path::PathBuf,
    feed: Feed,
    dropped: CancellationToken,
    /// The offset after the last event written.
    next: u64,
}

async fn write_loop(
    write: OwnedWriteHalf,
    mut ctl: mpsc::UnboundedReceiver<Ctl>,
    shared: Shared,
    closed: CancellationToken,
    broker: Arc<Broker>,
) {
    let mut out = Out {
        write,
        buf: Vec::with_capacity(WRITE_CHUNK),
        redactor: broker.redactor_arc(),
    };
    let mut following: Option<Following> = None;
    let result: io::Result<()> = async {
        loop {
            tokio::select! {
                biased;
                c = ctl.recv() => match c {
                    None => break,
                    Some(Ctl::Reply(m)) => {
                        out.message(&m);
                        out.flush(None).await?;
                    }
                    Some(Ctl::Detach) => match following.take() {
                        Some(f) => leave(f, &mut out, &shared).await?,
                        None => {
                            out.message(&refused("not attached to a session".into()));
                            out.flush(None).await?;
                        }
                    },
                    Some(Ctl::Attach { live, attachment, session, path, from, live_from, state, name }) => {
                        if let Some(f) = following.take() {
                            leave_quietly(f);
                        }
                        out.message(&ServeMessage::Attached {
                            session: session.clone(),
                            path: path.display().to_string(),
                            from,
                            live_from,
                            state,
                            client: name,
                        });
                        out.flush(None).await?;
                        let (client, queue, dropped) = match attachment {
                            Some(a) => (a.client, Some(a.queue), a.dropped),
                            None => (0, None, CancellationToken::new()),
                        };
                        following = Some(Following {
                            live,
                            client,
                            session,
                            path: path.clone(),
                            feed: Feed::new(path, from, live_from, queue, broker.redactor_arc()),
                            dropped,
                            next: from,
                        });
                    }
                },
                item = next_item(&mut following) => {
                    let step = match following.as_mut() {
                        Some(f) => write_items(f, item, &mut out).await?,
                        None => Step::Go,
                    };
                    match step {
                        Step::Go => {}
                        Step::Close => return Ok(()),
                        Step::Over => {
                            if let Some(done) = following.take()
                                && let Some(live) = &done.live
                            {
                                forget(&shared, live, done.client);
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }
    .await;
    if let Some(f) = following.take() {
        leave_quietly(f);
    }
    let _ = result;
    closed.cancel();
}

/// What the writer does after writing a feed's items.
enum Step {
    /// Goes on.
    Go,
    /// The feed is over (the session ended); the connection stays.
    Over,
    /// The client was dropped: the connection is closed.
    Close,
}

/// Writes `item` and whatever else of the feed is ready, then flushes.
async fn write_items(f: &mut Following, item: Option<Item>, out: &mut Out) -> io::Result<Step> {
    let mut item = item;
    loop {
        match item {
            Some(Item::Event(n, line)) => {
                f.next = n + 1;
                out.buf.extend_from_slice(&line);
            }
            Some(Item::Message(m)) => out.message(&m),
            Some(Item::Dropped(n)) => {
                out.message(&ServeMessage::Dropped {
                    session: f.session.clone(),
                    offset: n,
                    reason: "this client fell too far behind the session (its buffer is full); attach again from `offset` to go on".into(),
                });
                out.flush(Some(&f.dropped)).await?;
                // Closed, so that a client that stopped reading learns it
                // when it reads again.
                return Ok(Step::Close);
            }
            Some(Item::End) | None => {
                if f.live.is_none() {
                    out.message(&ServeMessage::SessionEnded {
                        session: f.session.clone(),
                        offset: f.next,
                        status: "not running".into(),
                        stderr: None,
                        resumable: f.path.is_file(),
                    });
                }
                out.flush(None).await?;
                return Ok(Step::Over);
            }
        }
        if out.buf.len() >= WRITE_CHUNK {
            out.flush(Some(&f.dropped)).await?;
        }
        item = match f.feed.try_next() {
            Some(i) => Some(i),
            None => {
                out.flush(Some(&f.dropped)).await?;
                return Ok(Step::Go);
            }
        };
    }
}

async fn next_item(following: &mut Option<Following>) -> Option<Item> {
    match following {
        Some(f) => f.feed.next().await,
        None => std::future::pending().await,
    }
}

/// Leaves the session: what was already queued is written, then `detached`
/// with the offset of the first event not written.
async fn leave(mut f: Following, out: &mut Out, shared: &Shared) -> io::Result<()> {
    let Some(live) = f.live.clone() else {
        out.message(&ServeMessage::Detached {
            session: f.session.clone(),
            offset: f.next,
        });
        return out.flush(None).await;
    };
    let offset = live.hub.detach(f.client);
    forget(shared, &live, f.client);
    while let Some(item) = f.feed.next().await {
        match item {
            Item::Event(n, line) if n < offset => {
                out.buf.extend_from_slice(&line);
                if out.buf.len() >= WRITE_CHUNK {
                    out.flush(None).await?;
                }
            }
            Item::Event(..) => {}
            Item::Message(m) => out.message(&m),
            Item::Dropped(_) | Item::End => break,
        }
    }
    out.message(&ServeMessage::Detached {
        session: f.session.clone(),
        offset,
    });
    out.flush(None).await
}

fn leave_quietly(f: Following) {
    if let Some(live) = &f.live {
        live.hub.detach(f.client);
    }
}

/// Clears the connection's session if it is still this one.
fn forget(shared: &Shared, live: &Arc<Live>, client: u64) {
    let mut cur = shared.lock().unwrap_or_else(|p| p.into_inner());
    if cur
        .as_ref()
        .is_some_and(|c| Arc::ptr_eq(&c.live, live) && c.client == client)
    {
        *cur = None;
    }
}

/// A connection's write side, with the bytes gathered for the next write.
struct Out {
    write: OwnedWriteHalf,
    buf: Vec<u8>,
    /// What no message may carry (a refusal may quote a request).
    redactor: Arc<crate::llm::keys::Redactor>,
}

impl Out {
    fn message(&mut self, m: &ServeMessage) {
        if let Ok(mut line) = serde_json::to_vec(m) {
            self.redactor.json_line(&mut line);
            line.push(b'\n');
            self.buf.extend_from_slice(&line);
        }
    }

    /// Writes what is gathered; once `dropped` is cancelled, a client that
    /// takes nothing for [`DROP_GRACE`] is given up on.
    async fn flush(&mut self, dropped: Option<&CancellationToken>) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let give_up = async {
            match dropped {
                Some(d) => {
                    d.cancelled().await;
                    tokio::time::sleep(DROP_GRACE).await;
                }
                None => std::future::pending().await,
            }
        };
        let r = tokio::select! {
            r = self.write.write_all(&self.buf) => r,
            _ = give_up => Err(io::Error::new(io::ErrorKind::TimedOut, "the client reads nothing")),
        };
        self.buf.clear();
        r
    }
}
