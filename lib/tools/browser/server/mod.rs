//! The warm server behind ag-browser's calls ([`crate::proc::warm`]): it
//! starts Chromium, keeps the connection, the tabs and what the pages
//! said (console, failed requests), and answers one call at a time.
//!
//! Chromium, the DevTools connection and the event handling run on one
//! tokio runtime, on a thread of their own that runs all the time, so that
//! a page's requests are judged and its console is read between calls
//! too; the warm server's handler only passes each call to that thread and
//! waits for the answer. Dropping the handler ends the loop, closes the
//! browser and removes its profile.
//!
//! The rooms: this module holds the handler and the browser's state;
//! `tabs` starts the browser and keeps its tabs, `actions` reads a call
//! and does it, `refs` finds the element a ref names, `settle` waits for
//! what an input set off, `look` takes the snapshot and the screenshot,
//! and `events` keeps what the pages said and did.

mod actions;
mod events;
mod look;
mod refs;
mod settle;
mod tabs;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

use super::cdp::{CdpError, Sender};
use super::launch::Chromium;
use super::wire::Reply;
use events::Shared;

/// Builds the warm server's handler: starts Chromium now, so that a
/// browser that cannot start says why to the call that started the
/// server.
pub fn make() -> Result<impl FnMut(&str) -> String, String> {
    let exe = super::launch::find()?;
    let (jobs, mut rx) = mpsc::unbounded_channel::<(String, std::sync::mpsc::Sender<String>)>();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(), String>>();
    // Cancelled when the server ends: a request under way is dropped.
    let stop = CancellationToken::new();
    let stopped = stop.clone();
    let thread = std::thread::Builder::new()
        .name("browser".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(r) => r,
                Err(e) => {
                    let _ = ready_tx.send(Err(format!("cannot start the async runtime: {e}")));
                    return;
                }
            };
            runtime.block_on(async move {
                let cancel = CancellationToken::new();
                let mut browser = match Browser::start(&exe, &cancel).await {
                    Ok(b) => b,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let _ = ready_tx.send(Ok(()));
                loop {
                    let job = tokio::select! {
                        job = rx.recv() => job,
                        () = stopped.cancelled() => None,
                    };
                    let Some((line, answer)) = job else { break };
                    let reply = tokio::select! {
                        reply = browser.serve(&line) => reply,
                        () = stopped.cancelled() => break,
                    };
                    let text = serde_json::to_string(&reply).unwrap_or_else(|e| {
                        format!(r#"{{"text":"cannot encode the reply: {e}","error_code":"browser.protocol"}}"#)
                    });
                    let _ = answer.send(text);
                }
                browser.close().await;
                cancel.cancel();
            });
        })
        .map_err(|e| format!("cannot start the browser's thread: {e}"))?;
    match ready_rx.recv() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            let _ = thread.join();
            return Err(e);
        }
        Err(_) => {
            let _ = thread.join();
            return Err("the browser's thread ended as it started".into());
        }
    }
    let mut handler = Handler {
        jobs: Some(jobs),
        thread: Some(thread),
        stop,
    };
    Ok(move |line: &str| handler.call(line))
}

/// The warm server's side of the browser thread.
struct Handler {
    jobs: Option<mpsc::UnboundedSender<(String, std::sync::mpsc::Sender<String>)>>,
    thread: Option<std::thread::JoinHandle<()>>,
    stop: CancellationToken,
}

impl Handler {
    fn call(&mut self, line: &str) -> String {
        let (tx, rx) = std::sync::mpsc::channel();
        let sent = self
            .jobs
            .as_ref()
            .is_some_and(|j| j.send((line.to_string(), tx)).is_ok());
        let mut reply = None;
        while sent && reply.is_none() {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(r) => reply = Some(r),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    // The session is over: nobody waits for this answer.
                    if crate::proc::warm::ending() {
                        self.stop.cancel();
                        break;
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        reply.unwrap_or_else(|| {
            serde_json::to_string(&Reply::error(
                "browser.crashed",
                "the browser's thread has ended; the next call starts a new browser",
            ))
            .unwrap_or_default()
        })
    }
}

impl Drop for Handler {
    fn drop(&mut self) {
        // The loop ends when its channel closes; it closes the browser.
        self.jobs = None;
        self.stop.cancel();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One tab: its target, its session, and the refs of its latest snapshot.
struct Tab {
    id: u32,
    target: String,
    session: String,
    refs: HashMap<String, i64>,
}

/// The browser and its tabs.
struct Browser {
    chromium: Option<Chromium>,
    exe: std::path::PathBuf,
    cdp: Sender,
    shared: Arc<Mutex<Shared>>,
    changed: Arc<Notify>,
    tabs: Vec<Tab>,
    current: usize,
    next_tab: u32,
    cancel: CancellationToken,
}

/// A failed action: its code and message.
struct Fail(&'static str, String);

impl From<CdpError> for Fail {
    fn from(e: CdpError) -> Self {
        Fail("browser.protocol", e.0)
    }
}

type Done = Result<Reply, Fail>;
