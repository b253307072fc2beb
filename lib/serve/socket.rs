//! The Unix socket: clients connect, send JSONL requests and ag-loop
//! commands, and read the attached session's events and the broker's
//! messages. Each connection has a reader (its lines, handled in order)
//! and a writer (the replies and the attached session's feed, one line at
//! a time, flushed when nothing more is ready).
//!
//! Everything waiting for the writer counts against the connection's one
//! budget (`--client-buffer`), the feed's queue and the replies alike: a
//! client that sends requests and reads none of their answers is dropped
//! at the same bound as one that stops reading a busy session. A dropped
//! connection is read no more (the client's writes fail), and is closed
//! once the `dropped` message is out, or after a grace period when the
//! client reads nothing at all.

use std::io;
use std::os::fd::AsFd;
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
use super::hub::{Attachment, Budget};
use super::live::Live;
use crate::llm::keys::Redactor;
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

/// What an attach waiting for the writer counts against the budget: its
/// queue and client in the session's hub, and the `attached` line to come.
/// A client that sends attach after attach and reads nothing is dropped
/// by this count before the hub fills with its clients.
const ATTACH_COST: usize = 1024;

/// What a detach waiting for the writer counts: the line it will answer.
const DETACH_COST: usize = 256;

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
    /// A reply: its line, keys hidden.
    Reply(Vec<u8>),
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
    /// The client holds more than its budget: say so, and close.
    Drop,
}

/// The way from a connection's reader to its writer. Each item carries
/// what it counts against the budget, given back when the writer takes it.
#[derive(Clone)]
struct Link {
    tx: mpsc::UnboundedSender<(Ctl, usize)>,
    budget: Budget,
    redactor: Arc<Redactor>,
}

impl Link {
    /// Queues a reply for the writer.
    fn reply(&self, m: &ServeMessage) {
        let line = encode(m, &self.redactor);
        let cost = line.len();
        self.send(Ctl::Reply(line), cost);
    }

    /// Queues `ctl`, or, when the budget has no room for it, drops the
    /// client: nothing more is queued but the `dropped` message. False
    /// when `ctl` was not queued.
    fn send(&self, ctl: Ctl, cost: usize) -> bool {
        if self.budget.take(cost) {
            self.tx.send((ctl, cost)).is_ok()
        } else {
            self.budget.drop_client();
            false
        }
    }
}

/// A message as the line a client reads.
fn encode(m: &ServeMessage, redactor: &Redactor) -> Vec<u8> {
    let mut line = serde_json::to_vec(m).unwrap_or_default();
    redactor.json_line(&mut line);
    line.push(b'\n');
    line
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
    // A second handle on the socket, to stop reading a dropped client.
    let read_side = stream
        .as_fd()
        .try_clone_to_owned()
        .map(std::os::unix::net::UnixStream::from)
        .ok();
    let (read, write) = stream.into_split();
    let (ctl_tx, ctl_rx) = mpsc::unbounded_channel();
    let budget = Budget::new(broker.client_buffer());
    let link = Link {
        tx: ctl_tx,
        budget: budget.clone(),
        redactor: broker.redactor_arc(),
    };
    let shared: Shared = Arc::new(Mutex::new(None));
    let closed = CancellationToken::new();
    let writer = tokio::spawn(write_loop(
        write,
        ctl_rx,
        shared.clone(),
        closed.clone(),
        broker.clone(),
        budget.clone(),
    ));
    let mut reader = BufReader::new(read);
    let mut line = Vec::new();
    loop {
        line.clear();
        // A line as long as the longest one keeps its memory only while
        // it is handled.
        line.shrink_to(WRITE_CHUNK);
        let got = tokio::select! {
            r = read_line(&mut reader, &mut line) => r,
            _ = closed.cancelled() => break,
            _ = budget.dropped().cancelled() => break,
        };
        let len = match got {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if len > MAX_LINE {
            link.reply(&refused(format!(
                "a line of {len} bytes is longer than the {MAX_LINE} bytes a line may have; skipped"
            )));
        } else {
            handle(&line, &broker, &shared, &link).await;
        }
        if budget.is_dropped() {
            break;
        }
    }
    let dropped = budget.is_dropped();
    if dropped {
        // Its requests are read no more: its writes fail at once rather
        // than fill the socket, and the writer says why once what it was
        // owed is out.
        if let Some(s) = &read_side {
            let _ = s.shutdown(std::net::Shutdown::Read);
        }
        let _ = link.tx.send((Ctl::Drop, 0));
    }
    // The writer leaves the session when the channel closes.
    drop(link);
    let _ = writer.await;
    if dropped {
        // What it sent before it was cut off is thrown away: a Unix socket
        // closed with unread data gives its peer a reset where it should
        // read the end. No more comes once reading is shut down.
        let mut sink = [0u8; 8192];
        while matches!(reader.get_ref().try_read(&mut sink), Ok(n) if n > 0) {}
    }
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

async fn handle(raw: &[u8], broker: &Arc<Broker>, shared: &Shared, link: &Link) {
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
            Ok(req) => request(req, broker, shared, link).await,
            Err(e) => link.reply(&refused(format!("bad `{k}` request: {e}"))),
        }
        return;
    }
    let reply = command(text, value, shared);
    if let Err(message) = reply {
        link.reply(&refused(message));
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

async fn request(req: ServeRequest, broker: &Arc<Broker>, shared: &Shared, link: &Link) {
    let reply = |m: ServeMessage| link.reply(&m);
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
                attach_live(&live, 0, client.as_deref(), shared, link);
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
            link,
        ) {
            Ok(()) => {}
            Err(e) => reply(refused(e.to_string())),
        },
        ServeRequest::Detach => {
            link.send(Ctl::Detach, DETACH_COST);
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
                        attach_live(&live, 0, base, shared, link);
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
    link: &Link,
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
            replay_ended(&l.id, &l.path, from, client, shared, link)?;
            return Ok(());
        }
        Found::Ended(f) => {
            replay_ended(&f.id, &f.path, from, client, shared, link)?;
            return Ok(());
        }
    };
    attach_live(&live, from, client, shared, link);
    Ok(())
}

fn attach_live(live: &Arc<Live>, from: u64, client: Option<&str>, shared: &Shared, link: &Link) {
    // Its queue counts against the connection's budget, with the replies.
    let att = live
        .hub
        .attach_with(client.unwrap_or("socket"), link.budget.clone());
    let client = att.client;
    set_current(
        shared,
        Some(Current {
            live: live.clone(),
            client,
            name: att.name.clone(),
        }),
    );
    let queued = link.send(
        Ctl::Attach {
            live: Some(live.clone()),
            session: live.id.clone(),
            path: live.path.clone(),
            from,
            live_from: att.live_from,
            state: att.state,
            name: att.name.clone(),
            attachment: Some(att),
        },
        ATTACH_COST,
    );
    if !queued {
        // Dropped: the session keeps no client for it.
        live.hub.detach(client);
        forget(shared, live, client);
    }
}

/// Attaching to a session that does not run here: its file, then its end.
fn replay_ended(
    id: &str,
    path: &Path,
    from: u64,
    client: Option<&str>,
    shared: &Shared,
    link: &Link,
) -> Result<(), ServeError> {
    let count = super::tail::Tail::open(path)
        .map_err(|e| ServeError::Failed(e.to_string()))?
        .count();
    set_current(shared, None);
    link.send(
        Ctl::Attach {
            live: None,
            attachment: None,
            session: id.to_string(),
            path: path.to_path_buf(),
            from,
            live_from: count,
            state: SessionState::Ended,
            name: client.unwrap_or("socket").to_string(),
        },
        ATTACH_COST,
    );
    Ok(())
}

/// The session a writer follows.
struct Following {
    live: Option<Arc<Live>>,
    client: u64,
    session: String,
    path: std::path::PathBuf,
    feed: Feed,
    /// The offset after the last event written.
    next: u64,
}

async fn write_loop(
    write: OwnedWriteHalf,
    mut ctl: mpsc::UnboundedReceiver<(Ctl, usize)>,
    shared: Shared,
    closed: CancellationToken,
    broker: Arc<Broker>,
    budget: Budget,
) {
    let mut out = Out {
        write,
        buf: Vec::with_capacity(WRITE_CHUNK),
        redactor: broker.redactor_arc(),
        dropped: budget.dropped().clone(),
    };
    let mut following: Option<Following> = None;
    let result: io::Result<()> = async {
        loop {
            tokio::select! {
                biased;
                c = ctl.recv() => {
                    let Some((c, cost)) = c else { break };
                    budget.give(cost);
                    match c {
                        Ctl::Reply(line) => {
                            out.buf.extend_from_slice(&line);
                            out.flush().await?;
                        }
                        Ctl::Detach => match following.take() {
                            Some(f) => leave(f, &mut out, &shared).await?,
                            None => {
                                out.message(&refused("not attached to a session".into()));
                                out.flush().await?;
                            }
                        },
                        Ctl::Attach { live, attachment, session, path, from, live_from, state, name } => {
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
                            out.flush().await?;
                            let (client, queue) = match attachment {
                                Some(a) => (a.client, Some(a.queue)),
                                None => (0, None),
                            };
                            following = Some(Following {
                                live,
                                client,
                                session,
                                path: path.clone(),
                                feed: Feed::new(path, from, live_from, queue, broker.redactor_arc()),
                                next: from,
                            });
                        }
                        Ctl::Drop => {
                            let (session, offset) = match following.take() {
                                Some(f) => {
                                    let at = (f.session.clone(), f.next);
                                    leave_quietly(f);
                                    at
                                }
                                None => (String::new(), 0),
                            };
                            out.message(&ServeMessage::Dropped {
                                session,
                                offset,
                                reason: format!(
                                    "this client left more than {} bytes unread (replies to its requests and the events of its session; ag-serve --client-buffer), so it is let go and its requests are read no more: connect again, attach from `offset`, and read what comes back",
                                    budget.limit()
                                ),
                            });
                            out.flush().await?;
                            return Ok(());
                        }
                    }
                }
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
                out.flush().await?;
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
                out.flush().await?;
                return Ok(Step::Over);
            }
        }
        if out.buf.len() >= WRITE_CHUNK {
            out.flush().await?;
        }
        item = match f.feed.try_next() {
            Some(i) => Some(i),
            None => {
                out.flush().await?;
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
        return out.flush().await;
    };
    let offset = live.hub.detach(f.client);
    forget(shared, &live, f.client);
    while let Some(item) = f.feed.next().await {
        match item {
            Item::Event(n, line) if n < offset => {
                out.buf.extend_from_slice(&line);
                if out.buf.len() >= WRITE_CHUNK {
                    out.flush().await?;
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
    out.flush().await
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
    redactor: Arc<Redactor>,
    /// Cancelled when the client is dropped.
    dropped: CancellationToken,
}

impl Out {
    fn message(&mut self, m: &ServeMessage) {
        self.buf.extend_from_slice(&encode(m, &self.redactor));
    }

    /// Writes what is gathered; once the client is dropped, one that takes
    /// nothing for [`DROP_GRACE`] is given up on.
    async fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let give_up = async {
            self.dropped.cancelled().await;
            tokio::time::sleep(DROP_GRACE).await;
        };
        let r = tokio::select! {
            r = self.write.write_all(&self.buf) => r,
            _ = give_up => Err(io::Error::new(io::ErrorKind::TimedOut, "the client reads nothing")),
        };
        self.buf.clear();
        // A reply or a chunk far larger than usual keeps its memory only
        // while it is written.
        self.buf.shrink_to(WRITE_CHUNK);
        r
    }
}
