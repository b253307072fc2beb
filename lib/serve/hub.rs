//! One live session's fan-out: the clients attached to it, the offset of
//! its next event, and what its events say about it (working, waiting for
//! an approval, idle; its model, cost and last activity). Every event goes
//! to every client through that client's own queue, never waiting for
//! one: a queue past its bound drops its client, which is told where it
//! left off. An approval request is answered once: the first answer goes
//! to ag-loop and every client is told who gave it; a later one is refused.
//!
//! What a client is owed counts against one [`Budget`]: on the socket the
//! connection's replies share it with the feed, so that a client that
//! asks and never reads is dropped at the same bound as one that stops
//! reading a busy session.
//!
//! Attaching takes the hub's lock to note the offset where live events
//! begin for the new client and to add it in one step: every event before
//! that offset is in the file (ag-loop writes it there first), every event
//! from it on comes through the queue.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde::Deserialize;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::protocol::{ServeMessage, SessionState};

/// What a client's queue carries.
#[derive(Debug, Clone)]
pub enum Out {
    /// An event, with its offset, as the session file holds it (newline included).
    Event(u64, Arc<[u8]>),
    /// A message of the broker's.
    Message(Arc<ServeMessage>),
    /// The client was let go at this offset (a `dropped` message follows
    /// nothing more).
    Dropped(u64),
    /// The session ended; nothing more comes.
    Ended,
}

impl Out {
    /// What the item counts against its client's bound (the end markers
    /// are never counted: they come once, after everything else).
    fn size(&self) -> usize {
        match self {
            Out::Event(_, line) => line.len(),
            Out::Message(m) => message_size(m),
            Out::Dropped(_) | Out::Ended => 0,
        }
    }
}

/// The bytes a message takes as a line.
pub fn message_size(m: &ServeMessage) -> usize {
    serde_json::to_vec(m).map_or(0, |v| v.len() + 1)
}

/// The bytes the broker holds for one client, against its bound
/// (`--client-buffer`): the items queued for it and not yet taken by its
/// writer. A client past the bound is dropped: the token is cancelled,
/// and whoever writes to it gives up on it.
#[derive(Clone)]
pub struct Budget {
    held: Arc<AtomicUsize>,
    limit: usize,
    dropped: CancellationToken,
}

impl Budget {
    /// A budget of `limit` bytes, nothing held.
    pub fn new(limit: usize) -> Budget {
        Budget {
            held: Arc::new(AtomicUsize::new(0)),
            limit,
            dropped: CancellationToken::new(),
        }
    }

    /// Counts `size` more bytes held; false (nothing counted) when that
    /// would pass the bound or the client was already dropped. One item
    /// larger than the bound still goes to a client that holds nothing,
    /// so that no line is too long to ever be sent.
    pub fn take(&self, size: usize) -> bool {
        if self.dropped.is_cancelled() {
            return false;
        }
        self.held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                (held == 0 || held.saturating_add(size) <= self.limit)
                    .then(|| held.saturating_add(size))
            })
            .is_ok()
    }

    /// Counts `size` bytes as no longer held (its writer took them).
    pub fn give(&self, size: usize) {
        let _ = self
            .held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                Some(held.saturating_sub(size))
            });
    }

    /// The bytes held now.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Acquire)
    }

    /// The bound.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Marks the client dropped.
    pub fn drop_client(&self) {
        self.dropped.cancel();
    }

    /// Whether the client was dropped.
    pub fn is_dropped(&self) -> bool {
        self.dropped.is_cancelled()
    }

    /// Cancelled when the client is dropped.
    pub fn dropped(&self) -> &CancellationToken {
        &self.dropped
    }
}

/// The receiving end of a client's queue.
pub struct Queue {
    /// The items.
    rx: mpsc::UnboundedReceiver<Out>,
    /// What its items count against.
    budget: Budget,
}

impl Queue {
    /// The next item; the caller has written the one before.
    pub async fn next(&mut self) -> Option<Out> {
        let out = self.rx.recv().await?;
        self.budget.give(out.size());
        Some(out)
    }

    /// The next item if one is there now.
    pub fn try_next(&mut self) -> Option<Out> {
        let out = self.rx.try_recv().ok()?;
        self.budget.give(out.size());
        Some(out)
    }
}

impl Drop for Queue {
    /// What was never taken is no longer held: a socket connection keeps
    /// its budget when it leaves one session for another.
    fn drop(&mut self) {
        self.rx.close();
        while let Ok(out) = self.rx.try_recv() {
            self.budget.give(out.size());
        }
    }
}

struct Client {
    id: u64,
    name: String,
    tx: mpsc::UnboundedSender<Out>,
    budget: Budget,
}

impl Client {
    /// Queues `out`, or drops the client when its budget has no room (a
    /// `Dropped` at `offset`, the first event it will not get, ends its
    /// queue); false once the client is gone.
    fn offer(&self, out: &Out, offset: u64) -> bool {
        if !self.budget.take(out.size()) {
            let _ = self.tx.send(Out::Dropped(offset));
            self.budget.drop_client();
            return false;
        }
        self.tx.send(out.clone()).is_ok()
    }
}

/// An approval request and who answered it.
#[derive(Debug, Clone)]
struct Pending {
    answered_by: Option<String>,
}

/// What the events said about the session.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    /// Between `agent_start` and `agent_end`.
    pub working: bool,
    /// The model that answered last, or the one asked for.
    pub model: Option<String>,
    /// Cost so far (assistant messages).
    pub cost: f64,
    /// The timestamp of the last event.
    pub last_activity: Option<String>,
    /// The first prompt.
    pub first_prompt: Option<String>,
}

struct Inner {
    next: u64,
    clients: Vec<Client>,
    pending: HashMap<String, Pending>,
    seen: Seen,
    ended: bool,
    next_client: u64,
}

/// A live session's clients and state.
pub struct Hub {
    /// The session's id.
    pub session: String,
    /// The bytes a client may have queued before it is dropped.
    limit: usize,
    inner: Mutex<Inner>,
}

/// What [`Hub::attach`] gives: the client's number and queue, and the
/// offset where its live events begin.
pub struct Attachment {
    /// The client's number in this hub.
    pub client: u64,
    /// Its name as the others see it.
    pub name: String,
    /// Its queue.
    pub queue: Queue,
    /// The first offset that comes through the queue.
    pub live_from: u64,
    /// The state when it attached.
    pub state: SessionState,
    /// What it is owed counts against this; its token is cancelled when
    /// it is dropped for falling behind: a writer stuck on a client that
    /// reads nothing gives up on it then.
    pub budget: Budget,
}

/// Why an approval was not passed on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApprovalError {
    /// Someone answered first.
    #[error("the approval of `{tool_call_id}` was already answered by {by}")]
    Answered {
        /// The call.
        tool_call_id: String,
        /// Who answered.
        by: String,
    },
    /// Nothing asks about that call.
    #[error("no approval waits for `{0}`; the `approval_request` events name the calls that wait")]
    NotWaiting(String),
}

impl Hub {
    /// A hub whose next event has offset `next`, with `seen` from the
    /// events before.
    pub fn new(session: String, next: u64, seen: Seen, limit: usize) -> Hub {
        Hub {
            session,
            limit,
            inner: Mutex::new(Inner {
                next,
                clients: Vec::new(),
                pending: HashMap::new(),
                seen,
                ended: false,
                next_client: 1,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves consistent data (each
        // step is one assignment); go on with it.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds a client (named `name`, numbered to tell two of one name
    /// apart) with a budget of its own. A client of an ended session gets
    /// its queue already closed.
    pub fn attach(&self, name: &str) -> Attachment {
        self.attach_with(name, Budget::new(self.limit))
    }

    /// Adds a client whose queue counts against `budget`, which it may
    /// share with what else is held for it (a socket connection's replies).
    pub fn attach_with(&self, name: &str, budget: Budget) -> Attachment {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut inner = self.lock();
        let id = inner.next_client;
        inner.next_client += 1;
        let name = format!("{name}#{id}");
        let state = state_of(&inner);
        if inner.ended {
            let _ = tx.send(Out::Ended);
        } else {
            inner.clients.push(Client {
                id,
                name: name.clone(),
                tx,
                budget: budget.clone(),
            });
        }
        Attachment {
            client: id,
            name,
            queue: Queue {
                rx,
                budget: budget.clone(),
            },
            live_from: inner.next,
            state,
            budget,
        }
    }

    /// Removes a client; returns the offset of the next event, which it
    /// will not get.
    pub fn detach(&self, client: u64) -> u64 {
        let mut inner = self.lock();
        inner.clients.retain(|c| c.id != client);
        inner.next
    }

    /// Hands new events (in order, numbered by the tail) to every client.
    pub fn publish(&self, events: &[(u64, Arc<[u8]>)]) {
        let mut inner = self.lock();
        for (offset, line) in events {
            observe(&mut inner, line);
            inner.next = offset + 1;
            let out = Out::Event(*offset, line.clone());
            inner.clients.retain(|c| c.offer(&out, *offset));
        }
    }

    /// Sends a message of the broker's to every client (a client with no
    /// room for it is dropped, as for an event: a client can make the
    /// broker announce again and again, by asking to end a session).
    pub fn announce(&self, message: ServeMessage) {
        let out = Out::Message(Arc::new(message));
        let mut inner = self.lock();
        let next = inner.next;
        inner.clients.retain(|c| c.offer(&out, next));
    }

    /// Marks the session ended: every client gets `message`, then the end
    /// of its queue.
    pub fn end(&self, message: ServeMessage) {
        let mut inner = self.lock();
        inner.ended = true;
        inner.seen.working = false;
        inner.pending.clear();
        let out = Out::Message(Arc::new(message));
        for c in inner.clients.drain(..) {
            let _ = c.tx.send(out.clone());
            let _ = c.tx.send(Out::Ended);
        }
    }

    /// Takes an approval answer from client `by`: passes it on with `send`
    /// (under the lock, so that answers reach ag-loop in the order they
    /// were taken) and tells every client, or says why not.
    pub fn answer_approval(
        &self,
        tool_call_id: &str,
        approved: bool,
        always: bool,
        by: &str,
        send: impl FnOnce() -> bool,
    ) -> Result<(), ApprovalError> {
        let mut inner = self.lock();
        let Some(p) = inner.pending.get_mut(tool_call_id) else {
            return Err(ApprovalError::NotWaiting(tool_call_id.to_string()));
        };
        if let Some(first) = &p.answered_by {
            return Err(ApprovalError::Answered {
                tool_call_id: tool_call_id.to_string(),
                by: first.clone(),
            });
        }
        if !send() {
            return Err(ApprovalError::NotWaiting(tool_call_id.to_string()));
        }
        p.answered_by = Some(by.to_string());
        let out = Out::Message(Arc::new(ServeMessage::ApprovalAnswered {
            session: self.session.clone(),
            tool_call_id: tool_call_id.to_string(),
            approved,
            always,
            by: by.to_string(),
        }));
        let next = inner.next;
        inner.clients.retain(|c| c.offer(&out, next));
        Ok(())
    }

    /// The session's state.
    pub fn state(&self) -> SessionState {
        state_of(&self.lock())
    }

    /// What the events said, the offset of the next event, and the number
    /// of clients.
    pub fn snapshot(&self) -> (Seen, u64, u32) {
        let inner = self.lock();
        (
            inner.seen.clone(),
            inner.next,
            inner.clients.len().try_into().unwrap_or(u32::MAX),
        )
    }

    /// The name of a client.
    pub fn client_name(&self, client: u64) -> Option<String> {
        self.lock()
            .clients
            .iter()
            .find(|c| c.id == client)
            .map(|c| c.name.clone())
    }
}

fn state_of(inner: &Inner) -> SessionState {
    if inner.ended {
        SessionState::Ended
    } else if inner.pending.values().any(|p| p.answered_by.is_none()) {
        SessionState::WaitingForApproval
    } else if inner.seen.working {
        SessionState::Working
    } else {
        SessionState::Idle
    }
}

/// The fields of an event that the state depends on.
#[derive(Deserialize)]
struct Head {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    tool_call_id: Option<String>,
}

fn observe(inner: &mut Inner, line: &[u8]) {
    let Ok(head) = serde_json::from_slice::<Head>(line) else {
        return;
    };
    if head.timestamp.is_some() {
        inner.seen.last_activity = head.timestamp;
    }
    observe_kind(
        &mut inner.seen,
        &mut inner.pending,
        &head.kind,
        head.tool_call_id,
        line,
    );
}

/// What one event changes; also run over a session's file when it is
/// resumed, so that a live session starts from what its past says.
fn observe_kind(
    seen: &mut Seen,
    pending: &mut HashMap<String, Pending>,
    kind: &str,
    tool_call_id: Option<String>,
    line: &[u8],
) {
    match kind {
        "agent_start" => seen.working = true,
        "agent_end" => {
            seen.working = false;
            pending.clear();
        }
        "interrupted" => pending.clear(),
        "approval_request" => {
            if let Some(id) = tool_call_id {
                pending.insert(id, Pending { answered_by: None });
            }
        }
        "tool_execution_end" => {
            if let Some(id) = tool_call_id {
                pending.remove(&id);
            }
        }
        "message_end" | "settings" => {
            if let Ok(v) = serde_json::from_slice::<Value>(line) {
                observe_message(seen, kind, &v);
            }
        }
        _ => {}
    }
}

/// What a `message_end` or `settings` event says: the model, the cost, the
/// first prompt.
pub(super) fn observe_message(seen: &mut Seen, kind: &str, v: &Value) {
    if kind == "settings" {
        if let Some(m) = v.get("model").and_then(Value::as_str) {
            seen.model = Some(m.to_string());
        }
        return;
    }
    let Some(message) = v.get("message") else {
        return;
    };
    match message.get("role").and_then(Value::as_str) {
        Some("assistant") => {
            if let Some(m) = message.get("model").and_then(Value::as_str) {
                seen.model = Some(m.to_string());
            }
            if let Some(c) = message.pointer("/usage/cost/total").and_then(Value::as_f64) {
                seen.cost += c;
            }
        }
        Some("user") if seen.first_prompt.is_none() => {
            seen.first_prompt = message.get("content").map(content_text);
        }
        _ => {}
    }
}

/// The text of a user message's content (a string, or blocks).
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// What a session's past events say (for a session resumed, or listed
/// after it ended): read once over its file.
pub fn seen_in(path: &std::path::Path) -> std::io::Result<(Seen, u64)> {
    let mut seen = Seen::default();
    let mut pending = HashMap::new();
    let mut count = 0;
    super::tail::replay(path, 0, u64::MAX, |i, line| {
        count = i + 1;
        if let Ok(head) = serde_json::from_slice::<Head>(line) {
            if head.timestamp.is_some() {
                seen.last_activity = head.timestamp;
            }
            observe_kind(&mut seen, &mut pending, &head.kind, head.tool_call_id, line);
        }
        true
    })?;
    // A run cut short in the file is not running now.
    seen.working = false;
    Ok((seen, count))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(s: &str) -> Arc<[u8]> {
        Arc::from(format!("{s}\n").as_bytes())
    }

    #[tokio::test]
    async fn every_client_gets_every_event_and_the_state_follows() {
        let hub = Hub::new("s".into(), 5, Seen::default(), 1 << 20);
        let mut a = hub.attach("a");
        let mut b = hub.attach("b");
        assert_eq!((a.live_from, b.live_from), (5, 5));
        assert_eq!(a.state, SessionState::Idle);
        hub.publish(&[
            (5, line(r#"{"type":"agent_start","timestamp":"t1"}"#)),
            (6, line(r#"{"type":"approval_request","timestamp":"t2","tool_call_id":"c1","tool_name":"bash","arguments":{},"reason":"r"}"#)),
        ]);
        assert_eq!(hub.state(), SessionState::WaitingForApproval);
        for q in [&mut a.queue, &mut b.queue] {
            assert!(matches!(q.next().await, Some(Out::Event(5, _))));
            assert!(matches!(q.next().await, Some(Out::Event(6, _))));
        }
        // One answer goes through, the second is refused naming the first.
        let mut sent = 0;
        hub.answer_approval("c1", true, false, &a.name, || {
            sent += 1;
            true
        })
        .unwrap();
        let e = hub
            .answer_approval("c1", false, false, &b.name, || {
                sent += 1;
                true
            })
            .unwrap_err();
        assert_eq!(sent, 1);
        assert!(e.to_string().contains("a#1"), "{e}");
        assert_eq!(hub.state(), SessionState::Working);
        for q in [&mut a.queue, &mut b.queue] {
            match q.next().await {
                Some(Out::Message(m)) => assert!(
                    matches!(&*m, ServeMessage::ApprovalAnswered { by, approved: true, .. } if by == "a#1")
                ),
                other => panic!("{other:?}"),
            }
        }
        assert!(matches!(
            hub.answer_approval("nope", true, false, "x", || true),
            Err(ApprovalError::NotWaiting(_))
        ));
        hub.publish(&[(7, line(r#"{"type":"agent_end","timestamp":"t3","messages":[],"outcome":"finished","usage":{}}"#))]);
        assert_eq!(hub.state(), SessionState::Idle);
        assert_eq!(hub.snapshot().0.last_activity.as_deref(), Some("t3"));
        assert_eq!(hub.detach(a.client), 8);
        assert_eq!(hub.snapshot().2, 1);
    }

    #[tokio::test]
    async fn a_client_past_its_bound_is_dropped_with_its_offset_and_the_rest_go_on() {
        let hub = Hub::new("s".into(), 0, Seen::default(), 100);
        let mut slow = hub.attach("slow");
        let mut fast = hub.attach("fast");
        let ev = line(&format!(
            r#"{{"type":"notify","timestamp":"t","message":"{}","level":"info"}}"#,
            "x".repeat(20)
        ));
        for i in 0..10 {
            hub.publish(&[(i, ev.clone())]);
            // The fast one keeps up.
            assert!(matches!(fast.queue.next().await, Some(Out::Event(n, _)) if n == i));
        }
        let mut got = Vec::new();
        while let Some(o) = slow.queue.next().await {
            got.push(o);
        }
        let events = got.iter().filter(|o| matches!(o, Out::Event(..))).count() as u64;
        assert!((1..10).contains(&events), "{events}");
        assert!(
            matches!(got.last(), Some(Out::Dropped(n)) if *n == events),
            "{got:?}"
        );
        assert_eq!(hub.snapshot().2, 1);
    }

    #[tokio::test]
    async fn what_else_a_client_holds_counts_against_its_feed_and_is_given_back() {
        let hub = Hub::new("s".into(), 0, Seen::default(), 100);
        let budget = Budget::new(100);
        let mut a = hub.attach_with("a", budget.clone());
        // 80 bytes of replies wait for the writer: the next event does not fit.
        assert!(budget.take(80));
        let ev = line(&format!(
            r#"{{"type":"notify","timestamp":"t","message":"{}","level":"info"}}"#,
            "x".repeat(10)
        ));
        hub.publish(&[(0, ev.clone())]);
        assert!(budget.is_dropped());
        assert!(matches!(a.queue.next().await, Some(Out::Dropped(0))));
        assert_eq!(hub.snapshot().2, 0);
        // Nothing more is taken once dropped.
        assert!(!budget.take(1));

        // A queue dropped with items in it gives their bytes back.
        let budget = Budget::new(1000);
        let b = hub.attach_with("b", budget.clone());
        hub.publish(&[(1, ev.clone()), (2, ev.clone())]);
        assert_eq!(budget.held(), 2 * ev.len());
        hub.detach(b.client);
        drop(b);
        assert_eq!(budget.held(), 0);
        // One line longer than the bound still goes to a client holding nothing.
        let small = Budget::new(10);
        assert!(small.take(500));
        assert!(!small.take(1));
        small.give(500);
        assert!(small.take(1));
    }

    #[tokio::test]
    async fn the_end_reaches_every_client_and_a_late_one_sees_it_at_once() {
        let hub = Hub::new("s".into(), 3, Seen::default(), 1000);
        let mut a = hub.attach("a");
        hub.end(ServeMessage::Ending {
            session: "s".into(),
        });
        assert!(matches!(a.queue.next().await, Some(Out::Message(_))));
        assert!(matches!(a.queue.next().await, Some(Out::Ended)));
        let mut late = hub.attach("late");
        assert_eq!(late.state, SessionState::Ended);
        assert!(matches!(late.queue.next().await, Some(Out::Ended)));
    }
}
