//! The DevTools protocol as ag speaks it: JSON messages over one WebSocket
//! to Chromium. A command is `{id, method, params, sessionId}` and its
//! reply carries the same id; everything else is an event. One task reads
//! the socket, hands each reply to the command waiting for it and each
//! event to the browser's event handler, which may answer at once
//! ([`Sender::fire`]) without waiting: that is how a paused request is let
//! through or refused while no call is running.
//!
//! Only the domains ag uses are spoken, as plain JSON (`serde_json`): a
//! generated binding of the whole protocol would cost more to build than
//! all of ag-browser.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

/// The largest message read from Chromium: a full-page screenshot of a
/// long page, base64, fits.
const MAX_MESSAGE: usize = 256 * 1024 * 1024;

/// A command that failed: Chromium's error, or the connection's end.
#[derive(Debug, Clone)]
pub struct CdpError(pub String);

impl std::fmt::Display for CdpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// An event: its method, its params, and the session (tab) it came from.
pub struct Event {
    /// `Page.loadEventFired`, ...
    pub method: String,
    /// Its parameters.
    pub params: Value,
    /// The session it belongs to; `None` for the browser's own.
    pub session: Option<String>,
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, CdpError>>>>>;

/// Sends commands; cheap to clone.
#[derive(Clone)]
pub struct Sender {
    out: mpsc::UnboundedSender<Message>,
    pending: Pending,
    next: Arc<AtomicU64>,
}

impl Sender {
    /// Sends a command and waits for its reply, at most `limit`.
    pub async fn call(
        &self,
        method: &str,
        params: Value,
        session: Option<&str>,
        limit: Duration,
    ) -> Result<Value, CdpError> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        if let Ok(mut p) = self.pending.lock() {
            p.insert(id, tx);
        }
        self.send(id, method, params, session)?;
        match tokio::time::timeout(limit, rx).await {
            Ok(Ok(r)) => r,
            Ok(Err(_)) => Err(CdpError("the browser closed its connection".into())),
            Err(_) => {
                if let Ok(mut p) = self.pending.lock() {
                    p.remove(&id);
                }
                Err(CdpError(format!(
                    "the browser did not answer {method} within {} s",
                    limit.as_secs_f64()
                )))
            }
        }
    }

    /// Sends a command without waiting for its reply (which is dropped).
    pub fn fire(&self, method: &str, params: Value, session: Option<&str>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let _ = self.send(id, method, params, session);
    }

    fn send(
        &self,
        id: u64,
        method: &str,
        params: Value,
        session: Option<&str>,
    ) -> Result<(), CdpError> {
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        self.out
            .send(Message::text(msg.to_string()))
            .map_err(|_| CdpError("the browser's connection is closed".into()))
    }
}

/// Connects to Chromium's DevTools endpoint and starts the tasks that
/// write and read the socket; `on_event` is called with every event, on
/// the reading task, in order.
pub async fn connect(
    url: &str,
    mut on_event: impl FnMut(Event, &Sender) + Send + 'static,
) -> Result<Sender, CdpError> {
    let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE));
    let (ws, _) = tokio_tungstenite::connect_async_with_config(url, Some(config), true)
        .await
        .map_err(|e| CdpError(format!("cannot connect to the browser at {url}: {e}")))?;
    let (mut sink, mut stream) = ws.split();
    let (out, mut out_rx) = mpsc::unbounded_channel::<Message>();
    let pending: Pending = Arc::default();
    let sender = Sender {
        out,
        pending: pending.clone(),
        next: Arc::new(AtomicU64::new(1)),
    };
    tokio::spawn(async move {
        while let Some(m) = out_rx.recv().await {
            if sink.send(m).await.is_err() {
                break;
            }
        }
        let _ = sink.close().await;
    });
    let events = sender.clone();
    tokio::spawn(async move {
        while let Some(Ok(m)) = stream.next().await {
            let Message::Text(text) = m else { continue };
            let Ok(v) = serde_json::from_str::<Value>(text.as_str()) else {
                continue;
            };
            if let Some(id) = v.get("id").and_then(Value::as_u64) {
                let waiter = pending.lock().ok().and_then(|mut p| p.remove(&id));
                if let Some(tx) = waiter {
                    let r = match v.get("error") {
                        Some(e) => Err(CdpError(
                            e.get("message")
                                .and_then(Value::as_str)
                                .unwrap_or("the browser refused the command")
                                .to_string(),
                        )),
                        None => Ok(v.get("result").cloned().unwrap_or(Value::Null)),
                    };
                    let _ = tx.send(r);
                }
                continue;
            }
            let Some(method) = v.get("method").and_then(Value::as_str) else {
                continue;
            };
            on_event(
                Event {
                    method: method.to_string(),
                    params: v.get("params").cloned().unwrap_or(Value::Null),
                    session: v.get("sessionId").and_then(Value::as_str).map(String::from),
                },
                &events,
            );
        }
        // The waiters learn the connection is gone.
        if let Ok(mut p) = pending.lock() {
            p.clear();
        }
    });
    Ok(sender)
}
