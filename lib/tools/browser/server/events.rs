//! What the pages said and did, kept between calls: the DevTools events
//! handled on the connection's reading task (every request judged by the
//! rules, console lines, failed requests, loads, dialogs, downloads,
//! tabs the pages opened), the notes a reply gets of them, and the
//! console action that reads them out.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Instant;

use serde_json::{Value, json};
use tokio::sync::Notify;

use super::super::BrowserAction as A;
use super::super::cdp::{Event, Sender};
use super::super::confine::Rules;
use super::super::wire::Reply;
use super::Browser;
use super::actions::clip;

/// Console lines and failed requests kept between two looks.
const KEEP: usize = 500;

/// What the pages said and did, kept by the event handler.
#[derive(Default)]
pub(super) struct Shared {
    pub(super) rules: Rules,
    pub(super) console: VecDeque<String>,
    pub(super) failed: VecDeque<String>,
    /// Requests refused by the rules since the last call: (url, reason).
    pub(super) refused: Vec<(String, String)>,
    /// requestId → "GET url", for the failed requests' lines.
    pub(super) requests: HashMap<String, String>,
    /// Requests in flight, for settling.
    pub(super) in_flight: usize,
    pub(super) last_request: Option<Instant>,
    /// Per session: how many loads ended, whether the main frame loads.
    pub(super) loads: HashMap<String, u64>,
    pub(super) loading: HashMap<String, bool>,
    pub(super) dialogs: Vec<String>,
    pub(super) downloads: Vec<String>,
    /// Pages the pages opened (window.open, target=_blank), not yet tabs.
    pub(super) opened: Vec<String>,
    /// Targets that went away.
    pub(super) closed: Vec<String>,
}

fn push(list: &mut VecDeque<String>, line: String) {
    if list.len() >= KEEP {
        list.pop_front();
    }
    list.push_back(line);
}

impl Browser {
    /// Notes of what happened beside the action: refused requests, new
    /// console lines and failures, dialogs, downloads.
    pub(super) fn add_news(&self, reply: &mut Reply, action: A) {
        let Ok(mut s) = self.shared.lock() else {
            return;
        };
        let refused: Vec<(String, String)> = std::mem::take(&mut s.refused);
        for (url, why) in refused.iter().take(5) {
            reply
                .notes
                .push(format!("Refused a request to {url}: {why}"));
        }
        if refused.len() > 5 {
            reply
                .notes
                .push(format!("{} more requests were refused.", refused.len() - 5));
        }
        for d in std::mem::take(&mut s.dialogs) {
            reply
                .notes
                .push(format!("The page opened a dialog, which was accepted: {d}"));
        }
        for d in std::mem::take(&mut s.downloads) {
            reply.notes.push(d);
        }
        if action != A::Console {
            let (c, f) = (s.console.len(), s.failed.len());
            if c + f > 0 {
                let mut what = Vec::new();
                if c > 0 {
                    what.push(format!(
                        "{c} console message{}",
                        if c == 1 { "" } else { "s" }
                    ));
                }
                if f > 0 {
                    what.push(format!(
                        "{f} failed request{}",
                        if f == 1 { "" } else { "s" }
                    ));
                }
                reply.notes.push(format!(
                    "{} since the last look; the console action shows them.",
                    what.join(" and ")
                ));
            }
        }
    }

    pub(super) fn console(&self) -> Reply {
        let Ok(mut s) = self.shared.lock() else {
            return Reply::default();
        };
        let console: Vec<String> = s.console.drain(..).collect();
        let failed: Vec<String> = s.failed.drain(..).collect();
        let mut text = String::new();
        if console.is_empty() && failed.is_empty() {
            text.push_str("No console messages and no failed requests since the last look.");
        }
        if !console.is_empty() {
            text.push_str(&format!("Console ({}):\n", console.len()));
            for l in &console {
                text.push_str(l);
                text.push('\n');
            }
        }
        if !failed.is_empty() {
            text.push_str(&format!("Failed requests ({}):\n", failed.len()));
            for l in &failed {
                text.push_str(l);
                text.push('\n');
            }
        }
        Reply {
            text,
            details: json!({"console": console, "failed_requests": failed}),
            ..Reply::default()
        }
    }
}

/// The event handler, on the connection's reading task.
pub(super) fn on_event(ev: Event, tx: &Sender, shared: &Mutex<Shared>, changed: &Notify) {
    let p = &ev.params;
    let Ok(mut s) = shared.lock() else { return };
    match ev.method.as_str() {
        "Fetch.requestPaused" => {
            let url = p["request"]["url"].as_str().unwrap_or_default();
            let id = p["requestId"].clone();
            match s.rules.refusal(url) {
                Some(why) => {
                    s.refused.push((clip(url, 300), why));
                    tx.fire(
                        "Fetch.failRequest",
                        json!({"requestId": id, "errorReason": "BlockedByClient"}),
                        ev.session.as_deref(),
                    );
                }
                None => tx.fire(
                    "Fetch.continueRequest",
                    json!({"requestId": id}),
                    ev.session.as_deref(),
                ),
            }
        }
        "Runtime.consoleAPICalled" => {
            let args: Vec<String> = p["args"]
                .as_array()
                .map(|a| a.iter().map(remote_text).collect())
                .unwrap_or_default();
            let kind = p["type"].as_str().unwrap_or("log");
            push(
                &mut s.console,
                format!("[{kind}] {}", clip(&args.join(" "), 2_000)),
            );
        }
        "Runtime.exceptionThrown" => {
            let d = &p["exceptionDetails"];
            let msg = d["exception"]["description"]
                .as_str()
                .or_else(|| d["text"].as_str())
                .unwrap_or("exception");
            push(&mut s.console, format!("[pageerror] {}", clip(msg, 2_000)));
        }
        "Log.entryAdded" => {
            let e = &p["entry"];
            // Network errors are the failed requests' lines already.
            if e["source"] != "network" {
                push(
                    &mut s.console,
                    format!(
                        "[{}] {}",
                        e["level"].as_str().unwrap_or("log"),
                        clip(e["text"].as_str().unwrap_or_default(), 2_000)
                    ),
                );
            }
        }
        "Network.requestWillBeSent" => {
            if s.requests.len() > 10_000 {
                s.requests.clear();
                s.in_flight = 0;
            }
            let id = p["requestId"].as_str().unwrap_or_default().to_string();
            let line = format!(
                "{} {}",
                p["request"]["method"].as_str().unwrap_or("GET"),
                clip(p["request"]["url"].as_str().unwrap_or_default(), 300)
            );
            // A redirect reuses the id: still one request in flight.
            if s.requests.insert(id, line).is_none() {
                s.in_flight += 1;
            }
            s.last_request = Some(Instant::now());
        }
        "Network.responseReceived" => {
            let status = p["response"]["status"].as_i64().unwrap_or(0);
            if status >= 400 {
                let id = p["requestId"].as_str().unwrap_or_default();
                let what = s.requests.get(id).cloned().unwrap_or_else(|| {
                    clip(p["response"]["url"].as_str().unwrap_or_default(), 300)
                });
                let text = p["response"]["statusText"].as_str().unwrap_or_default();
                push(
                    &mut s.failed,
                    format!("{what}: {status} {text}").trim_end().to_string(),
                );
            }
        }
        "Network.loadingFinished" | "Network.loadingFailed" => {
            let id = p["requestId"].as_str().unwrap_or_default();
            let what = s.requests.remove(id);
            if what.is_some() {
                s.in_flight = s.in_flight.saturating_sub(1);
            }
            s.last_request = Some(Instant::now());
            if ev.method == "Network.loadingFailed" && p["canceled"].as_bool() != Some(true) {
                let what = what.unwrap_or_else(|| "a request".into());
                let why = if p["blockedReason"] == "inspector"
                    || p["errorText"] == "net::ERR_BLOCKED_BY_CLIENT"
                {
                    "refused: not allowed by the browser's rules".to_string()
                } else {
                    p["errorText"].as_str().unwrap_or("failed").to_string()
                };
                push(&mut s.failed, format!("{what}: {why}"));
            }
        }
        "Page.loadEventFired" => {
            if let Some(sess) = &ev.session {
                *s.loads.entry(sess.clone()).or_insert(0) += 1;
            }
        }
        "Page.frameStartedLoading" | "Page.frameStoppedLoading" => {
            // The main frame's id is its target's id; frames inside do not
            // hold the page's state up.
            if let Some(sess) = &ev.session
                && p["frameId"].as_str().is_some_and(|f| !f.is_empty())
            {
                let started = ev.method == "Page.frameStartedLoading";
                if started || s.loading.contains_key(sess) {
                    s.loading.insert(sess.clone(), started);
                }
            }
        }
        "Page.javascriptDialogOpening" => {
            let kind = p["type"].as_str().unwrap_or("alert");
            s.dialogs.push(format!(
                "{kind}: {}",
                clip(p["message"].as_str().unwrap_or_default(), 500)
            ));
            tx.fire(
                "Page.handleJavaScriptDialog",
                json!({"accept": true}),
                ev.session.as_deref(),
            );
        }
        "Browser.downloadWillBegin" => {
            s.downloads.push(format!(
                "A download began: {}",
                p["suggestedFilename"].as_str().unwrap_or_default()
            ));
        }
        "Browser.downloadProgress" => {
            if p["state"] == "completed" {
                s.downloads
                    .push("A download completed into the working directory.".to_string());
            }
        }
        "Target.targetCreated" => {
            let info = &p["targetInfo"];
            if info["type"] == "page"
                && info["openerId"].is_string()
                && let Some(t) = info["targetId"].as_str()
            {
                s.opened.push(t.to_string());
            }
        }
        "Target.targetDestroyed" => {
            if let Some(t) = p["targetId"].as_str() {
                s.closed.push(t.to_string());
            }
        }
        _ => return,
    }
    drop(s);
    changed.notify_waiters();
}

/// A console argument as text: its value, else its description.
fn remote_text(v: &Value) -> String {
    match v.get("value") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => v["description"]
            .as_str()
            .or_else(|| v["type"].as_str())
            .unwrap_or_default()
            .to_string(),
    }
}
