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

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

use super::cdp::{self, CdpError, Event, Sender};
use super::confine::Rules;
use super::launch::Chromium;
use super::wire::{Reply, Request};
use super::{BrowserAction as A, BrowserArgs, keys, snapshot};

/// How long one protocol command may take.
const COMMAND_LIMIT: Duration = Duration::from_secs(30);
/// How long a navigation may take to load.
const LOAD_LIMIT: Duration = Duration::from_secs(20);
/// How long a click or a key may keep the page busy before the result is
/// taken anyway.
const SETTLE_LIMIT: Duration = Duration::from_secs(3);
/// Requests quiet this long count as settled.
const QUIET: Duration = Duration::from_millis(60);
/// Console lines and failed requests kept between two looks.
const KEEP: usize = 500;
/// The longest result of `evaluate`, in characters.
const MAX_VALUE_CHARS: usize = 20_000;
/// The tallest full-page screenshot, in CSS pixels.
const MAX_FULL_HEIGHT: f64 = 16_384.0;

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
                Ok(r) => {
                    reply = Some(r);
                    break;
                }
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

/// What the pages said and did, kept by the event handler.
#[derive(Default)]
struct Shared {
    rules: Rules,
    console: VecDeque<String>,
    failed: VecDeque<String>,
    /// Requests refused by the rules since the last call: (url, reason).
    refused: Vec<(String, String)>,
    /// requestId → "GET url", for the failed requests' lines.
    requests: HashMap<String, String>,
    /// Requests in flight, for settling.
    in_flight: usize,
    last_request: Option<Instant>,
    /// Per session: how many loads ended, whether the main frame loads.
    loads: HashMap<String, u64>,
    loading: HashMap<String, bool>,
    dialogs: Vec<String>,
    downloads: Vec<String>,
    /// Pages the pages opened (window.open, target=_blank), not yet tabs.
    opened: Vec<String>,
    /// Targets that went away.
    closed: Vec<String>,
}

fn push(list: &mut VecDeque<String>, line: String) {
    if list.len() >= KEEP {
        list.pop_front();
    }
    list.push_back(line);
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

impl Browser {
    async fn start(exe: &std::path::Path, cancel: &CancellationToken) -> Result<Browser, String> {
        let chromium = Chromium::start(exe, cancel).await?;
        let shared: Arc<Mutex<Shared>> = Arc::default();
        let changed = Arc::new(Notify::new());
        let (s, n) = (shared.clone(), changed.clone());
        let cdp = cdp::connect(&chromium.ws_url, move |ev, tx| on_event(ev, tx, &s, &n))
            .await
            .map_err(|e| e.0)?;
        let mut b = Browser {
            chromium: Some(chromium),
            exe: exe.to_path_buf(),
            cdp,
            shared,
            changed,
            tabs: Vec::new(),
            current: 0,
            next_tab: 1,
            cancel: cancel.clone(),
        };
        b.setup().await.map_err(|e| e.0)?;
        Ok(b)
    }

    /// The browser-wide settings, and the first tab.
    async fn setup(&mut self) -> Result<(), CdpError> {
        // Every request of every target pauses here first (see confine.rs).
        self.cmd(
            "Fetch.enable",
            json!({"patterns": [{"urlPattern": "*"}]}),
            None,
        )
        .await?;
        self.cmd("Target.setDiscoverTargets", json!({"discover": true}), None)
            .await?;
        let targets = self.cmd("Target.getTargets", json!({}), None).await?;
        let first = targets["targetInfos"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["type"] == "page"))
            .and_then(|t| t["targetId"].as_str())
            .map(String::from);
        let target = match first {
            Some(t) => t,
            None => self.new_target().await?,
        };
        self.attach(target).await?;
        Ok(())
    }

    async fn new_target(&self) -> Result<String, CdpError> {
        let r = self
            .cmd("Target.createTarget", json!({"url": "about:blank"}), None)
            .await?;
        Ok(r["targetId"].as_str().unwrap_or_default().to_string())
    }

    /// Attaches to a page target as a new tab, made current.
    async fn attach(&mut self, target: String) -> Result<(), CdpError> {
        let r = self
            .cmd(
                "Target.attachToTarget",
                json!({"targetId": target, "flatten": true}),
                None,
            )
            .await?;
        let session = r["sessionId"].as_str().unwrap_or_default().to_string();
        let s = Some(session.as_str());
        for (method, params) in [
            ("Page.enable", json!({})),
            ("Runtime.enable", json!({})),
            ("Network.enable", json!({})),
            ("Log.enable", json!({})),
            ("Page.setLifecycleEventsEnabled", json!({"enabled": true})),
        ] {
            self.cmd(method, params, s).await?;
        }
        let downloads = self
            .shared
            .lock()
            .map(|s| s.rules.workspace.clone())
            .unwrap_or_default();
        if !downloads.as_os_str().is_empty() {
            let _ = self
                .cmd(
                    "Browser.setDownloadBehavior",
                    json!({"behavior": "allow", "downloadPath": downloads, "eventsEnabled": true}),
                    None,
                )
                .await;
        }
        self.tabs.push(Tab {
            id: self.next_tab,
            target,
            session,
            refs: HashMap::new(),
        });
        self.next_tab += 1;
        self.current = self.tabs.len() - 1;
        Ok(())
    }

    async fn cmd(
        &self,
        method: &str,
        params: Value,
        session: Option<&str>,
    ) -> Result<Value, CdpError> {
        self.cdp.call(method, params, session, COMMAND_LIMIT).await
    }

    /// A command to the current tab.
    async fn page(&self, method: &str, params: Value) -> Result<Value, CdpError> {
        let s = self.tabs.get(self.current).map(|t| t.session.clone());
        self.cmd(method, params, s.as_deref()).await
    }

    /// Closes the browser politely, then ends its group.
    async fn close(mut self) {
        let _ = self
            .cdp
            .call("Browser.close", json!({}), None, Duration::from_secs(2))
            .await;
        if let Some(c) = self.chromium.take() {
            c.stop().await;
        }
    }

    /// One call: its line in, the reply out.
    async fn serve(&mut self, line: &str) -> Reply {
        let req: Request = match serde_json::from_str(line) {
            Ok(r) => r,
            Err(e) => {
                return Reply::error(
                    "browser.bad_request",
                    format!("the call could not be read: {e}"),
                );
            }
        };
        let mut restarted = None;
        if self.chromium.as_ref().is_none_or(Chromium::ended) {
            let said = self
                .chromium
                .as_ref()
                .and_then(|c| c.stderr_tail.lock().ok().map(|t| t.join("\n")))
                .unwrap_or_default();
            match self.restart().await {
                Ok(()) => restarted = Some(said),
                Err(e) => {
                    return Reply::error(
                        "browser.crashed",
                        format!("the browser had ended and could not start again: {e}"),
                    );
                }
            }
        }
        if let Ok(mut s) = self.shared.lock() {
            s.rules = req.rules.clone();
            s.refused.clear();
        }
        self.adopt_opened().await;
        let mut reply = match self.act(&req).await {
            Ok(r) => r,
            Err(Fail(code, message)) => Reply::error(code, message),
        };
        if let Some(said) = restarted {
            reply.notes.insert(
                0,
                format!(
                    "The browser had ended{}; a new one was started, with one empty tab: earlier pages and tabs are gone.",
                    if said.trim().is_empty() { String::new() } else { format!(" ({})", said.lines().last().unwrap_or_default()) }
                ),
            );
        }
        self.add_news(&mut reply, req.args.action);
        reply
    }

    async fn restart(&mut self) -> Result<(), String> {
        if let Some(c) = self.chromium.take() {
            c.stop().await;
        }
        let fresh = Browser::start(&self.exe, &self.cancel).await?;
        let old = std::mem::replace(self, fresh);
        drop(old);
        Ok(())
    }

    /// Tabs the pages opened since the last call become tabs (not current).
    async fn adopt_opened(&mut self) {
        let (opened, closed) = match self.shared.lock() {
            Ok(mut s) => (std::mem::take(&mut s.opened), std::mem::take(&mut s.closed)),
            Err(_) => return,
        };
        if !closed.is_empty() {
            let current = self.tabs.get(self.current).map(|t| t.id);
            self.tabs.retain(|t| !closed.contains(&t.target));
            self.current = current
                .and_then(|id| self.tabs.iter().position(|t| t.id == id))
                .unwrap_or(self.tabs.len().saturating_sub(1));
        }
        for target in opened {
            if self.tabs.iter().any(|t| t.target == target) {
                continue;
            }
            let keep = self.current;
            if self.attach(target).await.is_ok() {
                self.current = keep;
            }
        }
        if self.tabs.is_empty()
            && let Ok(t) = self.new_target().await
        {
            let _ = self.attach(t).await;
        }
    }

    /// Notes of what happened beside the action: refused requests, new
    /// console lines and failures, dialogs, downloads.
    fn add_news(&self, reply: &mut Reply, action: A) {
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

    async fn act(&mut self, req: &Request) -> Done {
        let a = &req.args;
        match a.action {
            A::Navigate => {
                let raw = a.url.as_deref().unwrap_or_default();
                let url = super::confine::url_of(raw, &req.cwd)
                    .map_err(|m| Fail("browser.bad_request", m))?;
                if let Some(why) = req.rules.refusal(&url) {
                    return Err(Fail(
                        "browser.refused",
                        format!("{url} was not opened: {why}"),
                    ));
                }
                self.navigate(&url).await?;
                self.page_state(req, None).await
            }
            A::Back => {
                let h = self.page("Page.getNavigationHistory", json!({})).await?;
                let i = h["currentIndex"].as_i64().unwrap_or(0);
                let Some(entry) = h["entries"]
                    .as_array()
                    .and_then(|e| e.get((i - 1).max(0) as usize))
                    .filter(|_| i > 0)
                else {
                    return Err(Fail(
                        "browser.no_history",
                        "there is no page to go back to in this tab".into(),
                    ));
                };
                let before = self.loads();
                self.page(
                    "Page.navigateToHistoryEntry",
                    json!({"entryId": entry["id"]}),
                )
                .await?;
                self.wait_load(before, LOAD_LIMIT).await;
                self.page_state(req, None).await
            }
            A::Reload => {
                let before = self.loads();
                self.page("Page.reload", json!({})).await?;
                self.wait_load(before, LOAD_LIMIT).await;
                self.page_state(req, None).await
            }
            A::Snapshot => self.page_state(req, None).await,
            A::Click | A::Hover => {
                let (x, y) = self.center(a).await?;
                let before = self.activity();
                self.page(
                    "Input.dispatchMouseEvent",
                    json!({"type": "mouseMoved", "x": x, "y": y}),
                )
                .await?;
                if a.action == A::Hover {
                    self.settle(before).await;
                    return Ok(Reply {
                        text: format!("Hovered over {}.", r(a)),
                        details: json!({"ref": r(a)}),
                        ..Reply::default()
                    });
                }
                for kind in ["mousePressed", "mouseReleased"] {
                    self.page(
                        "Input.dispatchMouseEvent",
                        json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
                    )
                    .await?;
                }
                self.settle(before).await;
                self.page_state(req, Some(format!("Clicked {}.", r(a))))
                    .await
            }
            A::Type => {
                let node = self.node_of(a)?;
                let object = self.object_of(node).await?;
                self.page("DOM.focus", json!({"backendNodeId": node}))
                    .await
                    .map_err(|e| {
                        Fail("browser.not_visible", format!("cannot focus {}: {e}", r(a)))
                    })?;
                // Select what the field holds, so that the text replaces it.
                self.page("Runtime.callFunctionOn", json!({
                    "objectId": object,
                    "functionDeclaration": "function(){ if (typeof this.select === 'function') { this.select(); } else if (this.isContentEditable) { const r = document.createRange(); r.selectNodeContents(this); const s = getSelection(); s.removeAllRanges(); s.addRange(r); } }",
                })).await?;
                let before = self.activity();
                let text = a.text.as_deref().unwrap_or_default();
                if text.is_empty() {
                    self.key("Delete").await?;
                } else {
                    self.page("Input.insertText", json!({"text": text})).await?;
                }
                if a.submit {
                    self.key("Enter").await?;
                }
                self.settle(before).await;
                let did = format!(
                    "Typed {} characters into {}{}.",
                    text.chars().count(),
                    r(a),
                    if a.submit { " and pressed Enter" } else { "" }
                );
                self.page_state(req, Some(did)).await
            }
            A::Press => {
                let key = a.key.as_deref().unwrap_or_default();
                let before = self.activity();
                self.key(key).await?;
                self.settle(before).await;
                self.page_state(req, Some(format!("Pressed {key}."))).await
            }
            A::Select => {
                let node = self.node_of(a)?;
                let object = self.object_of(node).await?;
                let before = self.activity();
                let v = self.page("Runtime.callFunctionOn", json!({
                    "objectId": object,
                    "arguments": [{"value": a.values}],
                    "returnByValue": true,
                    "functionDeclaration": "function(wanted){ if (this.tagName !== 'SELECT') return {error: 'not a select: ' + this.tagName.toLowerCase()}; const opts = [...this.options]; const missing = wanted.filter(w => !opts.some(o => o.value === w || o.label.trim() === w || o.textContent.trim() === w)); if (missing.length) return {missing, options: opts.map(o => o.label.trim() || o.value)}; const picked = []; for (const o of opts) { o.selected = wanted.some(w => o.value === w || o.label.trim() === w || o.textContent.trim() === w) && (this.multiple || picked.length === 0); if (o.selected) picked.push(o.label.trim() || o.value); } this.dispatchEvent(new Event('input', {bubbles: true})); this.dispatchEvent(new Event('change', {bubbles: true})); return {picked}; }",
                })).await?;
                let v = &v["result"]["value"];
                if let Some(e) = v["error"].as_str() {
                    return Err(Fail(
                        "browser.not_a_select",
                        format!(
                            "{} is {e}; select works on a <select>: for another list, click its option",
                            r(a)
                        ),
                    ));
                }
                if let Some(missing) = v["missing"].as_array() {
                    return Err(Fail(
                        "browser.no_such_option",
                        format!(
                            "{} has no option {}; its options are {}",
                            r(a),
                            join_json(missing),
                            join_json(v["options"].as_array().map(Vec::as_slice).unwrap_or(&[]))
                        ),
                    ));
                }
                self.settle(before).await;
                let picked = join_json(v["picked"].as_array().map(Vec::as_slice).unwrap_or(&[]));
                self.page_state(req, Some(format!("Selected {picked} in {}.", r(a))))
                    .await
            }
            A::Wait => self.wait(a).await,
            A::Screenshot => self.screenshot(a).await,
            A::Console => Ok(self.console()),
            A::Evaluate => self.evaluate(a).await,
            A::TabList => Ok(self.tab_list().await),
            A::TabOpen => {
                let url = match a.url.as_deref().filter(|u| !u.trim().is_empty()) {
                    Some(raw) => {
                        let url = super::confine::url_of(raw, &req.cwd)
                            .map_err(|m| Fail("browser.bad_request", m))?;
                        if let Some(why) = req.rules.refusal(&url) {
                            return Err(Fail(
                                "browser.refused",
                                format!("{url} was not opened: {why}"),
                            ));
                        }
                        Some(url)
                    }
                    None => None,
                };
                let t = self.new_target().await?;
                self.attach(t).await?;
                if let Some(url) = url {
                    self.navigate(&url).await?;
                }
                let id = self.tabs[self.current].id;
                self.page_state(req, Some(format!("Opened tab {id}, now the current tab.")))
                    .await
            }
            A::TabSwitch => {
                let i = self.tab_index(a.tab)?;
                self.current = i;
                let target = self.tabs[i].target.clone();
                let _ = self
                    .cmd("Target.activateTarget", json!({"targetId": target}), None)
                    .await;
                self.page_state(
                    req,
                    Some(format!("Tab {} is the current tab.", self.tabs[i].id)),
                )
                .await
            }
            A::TabClose => {
                let i = self.tab_index(a.tab)?;
                let tab = self.tabs.remove(i);
                let _ = self
                    .cmd("Target.closeTarget", json!({"targetId": tab.target}), None)
                    .await;
                if self.tabs.is_empty() {
                    let t = self.new_target().await?;
                    self.attach(t).await?;
                } else if self.current >= i {
                    self.current = self.current.saturating_sub(1).min(self.tabs.len() - 1);
                }
                let mut reply = self.tab_list().await;
                reply.text = format!("Closed tab {}.\n{}", tab.id, reply.text);
                Ok(reply)
            }
        }
    }

    fn tab_index(&self, tab: Option<u32>) -> Result<usize, Fail> {
        let n = tab.unwrap_or(0);
        self.tabs.iter().position(|t| t.id == n).ok_or_else(|| {
            let ids: Vec<String> = self.tabs.iter().map(|t| t.id.to_string()).collect();
            Fail(
                "browser.no_such_tab",
                format!("there is no tab {n}; the tabs are {}", ids.join(", ")),
            )
        })
    }

    async fn tab_list(&self) -> Reply {
        let mut lines = Vec::new();
        let mut tabs = Vec::new();
        for (i, t) in self.tabs.iter().enumerate() {
            let info = self
                .cmd("Target.getTargetInfo", json!({"targetId": t.target}), None)
                .await
                .unwrap_or_default();
            let url = info["targetInfo"]["url"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let title = info["targetInfo"]["title"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let mark = if i == self.current { " (current)" } else { "" };
            lines.push(format!("{}{mark}: {title} — {url}", t.id));
            tabs.push(
                json!({"tab": t.id, "url": url, "title": title, "current": i == self.current}),
            );
        }
        Reply {
            text: lines.join("\n"),
            details: json!({"tabs": tabs}),
            ..Reply::default()
        }
    }

    async fn navigate(&mut self, url: &str) -> Result<(), Fail> {
        let before = self.loads();
        let r = self.page("Page.navigate", json!({"url": url})).await?;
        if let Some(err) = r["errorText"].as_str() {
            let refused = self
                .shared
                .lock()
                .ok()
                .and_then(|s| s.refused.iter().find(|(_, _)| true).cloned());
            return Err(match refused {
                Some((u, why)) => Fail(
                    "browser.refused",
                    format!("{url} was not opened: the request to {u} was refused: {why}"),
                ),
                None => Fail(
                    "browser.navigation_failed",
                    format!("{url} did not load: {err}"),
                ),
            });
        }
        if r["isDownload"].as_bool() == Some(true) {
            return Ok(());
        }
        if r["loaderId"].is_string() {
            self.wait_load(before, LOAD_LIMIT).await;
        }
        Ok(())
    }

    fn session(&self) -> String {
        self.tabs
            .get(self.current)
            .map(|t| t.session.clone())
            .unwrap_or_default()
    }

    fn loads(&self) -> u64 {
        let s = self.session();
        self.shared
            .lock()
            .map(|sh| sh.loads.get(&s).copied().unwrap_or(0))
            .unwrap_or(0)
    }

    /// Waits until the current tab's load count passes `before`.
    async fn wait_load(&self, before: u64, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let notified = self.changed.notified();
            if self.loads() > before {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return false;
            }
        }
    }

    /// A mark of the page's activity before an input: the loads so far.
    fn activity(&self) -> u64 {
        self.loads()
    }

    /// Waits for what an input set off: a navigation's load, or requests
    /// to go quiet, at most [`SETTLE_LIMIT`].
    async fn settle(&self, loads_before: u64) {
        let start = tokio::time::Instant::now();
        let deadline = start + SETTLE_LIMIT;
        // A frame for the page's handlers to run and start what they start.
        let _ = self.page("Runtime.evaluate", json!({"expression": "new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)))", "awaitPromise": true})).await;
        loop {
            let notified = self.changed.notified();
            let s = self.session();
            let (loading, in_flight, last) = match self.shared.lock() {
                Ok(sh) => (
                    sh.loading.get(&s).copied().unwrap_or(false),
                    sh.in_flight,
                    sh.last_request,
                ),
                Err(_) => return,
            };
            let navigated = self.loads() > loads_before;
            let quiet = in_flight == 0 && last.is_none_or(|t| t.elapsed() >= QUIET);
            if !loading && (quiet || navigated) {
                return;
            }
            let tick = tokio::time::Instant::now() + QUIET;
            if tokio::time::timeout_at(deadline.min(tick), notified)
                .await
                .is_err()
                && tokio::time::Instant::now() >= deadline
            {
                return;
            }
        }
    }

    async fn key(&self, spec: &str) -> Result<(), Fail> {
        let press = keys::parse(spec).map_err(|m| Fail("browser.bad_key", m))?;
        self.page("Input.dispatchKeyEvent", press.down).await?;
        self.page("Input.dispatchKeyEvent", press.up).await?;
        Ok(())
    }

    fn node_of(&self, a: &BrowserArgs) -> Result<i64, Fail> {
        let want = r(a);
        let want = want
            .trim()
            .trim_start_matches("ref=")
            .trim_matches(['[', ']']);
        let tab = &self.tabs[self.current];
        tab.refs.get(want).copied().ok_or_else(|| {
            Fail(
                "browser.unknown_ref",
                if tab.refs.is_empty() {
                    format!("`{want}` is not a ref of this page: there is no snapshot of it yet. Take one with the snapshot action, then use a ref it shows")
                } else {
                    format!("`{want}` is not a ref of the latest snapshot (it has e1 to e{}); the page may have changed: take a new snapshot and use a ref it shows", tab.refs.len())
                },
            )
        })
    }

    async fn object_of(&self, node: i64) -> Result<String, Fail> {
        let r = self
            .page("DOM.resolveNode", json!({"backendNodeId": node}))
            .await
            .map_err(|e| {
                Fail(
                    "browser.unknown_ref",
                    format!("the element is gone from the page ({e}); take a new snapshot"),
                )
            })?;
        Ok(r["object"]["objectId"]
            .as_str()
            .unwrap_or_default()
            .to_string())
    }

    /// The middle of an element, scrolled into view, in viewport pixels.
    async fn center(&self, a: &BrowserArgs) -> Result<(f64, f64), Fail> {
        let node = self.node_of(a)?;
        let _ = self
            .page("DOM.scrollIntoViewIfNeeded", json!({"backendNodeId": node}))
            .await;
        let q = self.page("DOM.getContentQuads", json!({"backendNodeId": node})).await.map_err(|e| {
            Fail("browser.not_visible", format!("{} has no place on the page ({e}); it may be hidden or gone: take a new snapshot", r(a)))
        })?;
        let quad: Vec<f64> = q["quads"]
            .as_array()
            .and_then(|qs| qs.first())
            .and_then(Value::as_array)
            .map(|p| p.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default();
        if quad.len() < 8 {
            return Err(Fail(
                "browser.not_visible",
                format!(
                    "{} is not visible on the page (it has no box); it may be hidden",
                    r(a)
                ),
            ));
        }
        let x = (quad[0] + quad[2] + quad[4] + quad[6]) / 4.0;
        let y = (quad[1] + quad[3] + quad[5] + quad[7]) / 4.0;
        Ok((x, y))
    }

    /// The page after an action: what was done, the URL and title, and the
    /// snapshot (a page of it), whose refs become the tab's.
    async fn page_state(&mut self, req: &Request, did: Option<String>) -> Done {
        let tree = self.page("Accessibility.getFullAXTree", json!({})).await?;
        let nodes = tree["nodes"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        let snap = snapshot::render(nodes);
        let info = {
            let target = self.tabs[self.current].target.clone();
            self.cmd("Target.getTargetInfo", json!({"targetId": target}), None)
                .await
                .unwrap_or_default()
        };
        let url = info["targetInfo"]["url"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let title = info["targetInfo"]["title"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let tab = self.tabs[self.current].id;
        self.tabs[self.current].refs = snap.refs;
        let total = snap.lines.len();
        let offset = req.args.offset.unwrap_or(1) as usize;
        if offset > total.max(1) {
            return Err(Fail(
                "browser.bad_offset",
                format!(
                    "offset {offset} is past the end of the snapshot, which is {total} lines; use an offset from 1 to {}",
                    total.max(1)
                ),
            ));
        }
        let max = req.budget.map_or(snapshot::MAX_CHARS, |b| {
            crate::tools::budget::for_body(b)
                .saturating_sub(600)
                .clamp(1_000, snapshot::MAX_CHARS)
        });
        let (body, next) = snapshot::page(&snap.lines, offset, max);
        let mut text = String::new();
        if let Some(d) = &did {
            text.push_str(d);
            text.push('\n');
        }
        text.push_str(&format!("Page: {url}\nTitle: {title}\n"));
        if tabs_note(self.tabs.len()) {
            text.push_str(&format!("Tab {tab} of {}\n", self.tabs.len()));
        }
        text.push_str("Snapshot:\n");
        text.push_str(&body);
        let mut reply = Reply {
            text,
            details: json!({"url": url, "title": title, "tab": tab, "lines": total, "refs": self.tabs[self.current].refs.len()}),
            ..Reply::default()
        };
        if let Some(n) = next {
            let last = n - 1;
            reply.notes.push(format!(
                "The snapshot is {total} lines; this shows lines {offset}-{last} (at most {max} characters a result). Call snapshot with offset={n} to read on."
            ));
            reply.notes_first = true;
            reply.details["next_offset"] = json!(n);
        }
        Ok(reply)
    }

    async fn wait(&self, a: &BrowserArgs) -> Done {
        let limit =
            Duration::from_secs_f64(a.timeout.unwrap_or(10.0).clamp(0.0, super::MAX_WAIT_SECS));
        let deadline = Instant::now() + limit;
        let node = match &a.element {
            Some(_) => Some(self.node_of(a)?),
            None => None,
        };
        loop {
            let found = match (&a.text, node) {
                (Some(t), _) => {
                    let v = self.page("Runtime.evaluate", json!({
                        "expression": format!("(document.body ? document.body.innerText : '').includes({})", json!(t)),
                        "returnByValue": true,
                    })).await;
                    v.ok()
                        .and_then(|v| v["result"]["value"].as_bool())
                        .unwrap_or(false)
                }
                (None, Some(n)) => self
                    .page("DOM.getContentQuads", json!({"backendNodeId": n}))
                    .await
                    .ok()
                    .and_then(|q| q["quads"].as_array().map(|a| !a.is_empty()))
                    .unwrap_or(false),
                (None, None) => true,
            };
            let what = match &a.text {
                Some(t) => format!("the text {}", json!(t)),
                None => r(a),
            };
            if found {
                return Ok(Reply {
                    text: format!("Found {what}."),
                    details: json!({"found": true}),
                    ..Reply::default()
                });
            }
            if Instant::now() >= deadline {
                return Err(Fail(
                    "browser.timeout",
                    format!(
                        "{what} did not show within {} s; take a snapshot to see what the page shows",
                        limit.as_secs_f64()
                    ),
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn screenshot(&self, a: &BrowserArgs) -> Done {
        let mut params = json!({"format": "png"});
        let what;
        if a.element.is_some() {
            let node = self.node_of(a)?;
            let _ = self
                .page("DOM.scrollIntoViewIfNeeded", json!({"backendNodeId": node}))
                .await;
            let b = self
                .page("DOM.getBoxModel", json!({"backendNodeId": node}))
                .await
                .map_err(|e| {
                    Fail(
                        "browser.not_visible",
                        format!("{} has no box to take a picture of ({e})", r(a)),
                    )
                })?;
            let m = self.page("Page.getLayoutMetrics", json!({})).await?;
            let (sx, sy) = (
                m["cssVisualViewport"]["pageX"].as_f64().unwrap_or(0.0),
                m["cssVisualViewport"]["pageY"].as_f64().unwrap_or(0.0),
            );
            let q: Vec<f64> = b["model"]["border"]
                .as_array()
                .map(|p| p.iter().filter_map(Value::as_f64).collect())
                .unwrap_or_default();
            if q.len() < 8 {
                return Err(Fail(
                    "browser.not_visible",
                    format!("{} is not visible", r(a)),
                ));
            }
            let xs = [q[0], q[2], q[4], q[6]];
            let ys = [q[1], q[3], q[5], q[7]];
            let (x0, x1) = (
                xs.iter().cloned().fold(f64::MAX, f64::min),
                xs.iter().cloned().fold(f64::MIN, f64::max),
            );
            let (y0, y1) = (
                ys.iter().cloned().fold(f64::MAX, f64::min),
                ys.iter().cloned().fold(f64::MIN, f64::max),
            );
            if x1 - x0 < 1.0 || y1 - y0 < 1.0 {
                return Err(Fail(
                    "browser.not_visible",
                    format!("{} has no size on the page", r(a)),
                ));
            }
            params["clip"] = json!({"x": x0 + sx, "y": y0 + sy, "width": x1 - x0, "height": y1 - y0, "scale": 1});
            params["captureBeyondViewport"] = json!(true);
            what = format!("element {}", r(a));
        } else if a.full_page {
            let m = self.page("Page.getLayoutMetrics", json!({})).await?;
            let w = m["cssContentSize"]["width"].as_f64().unwrap_or(1280.0);
            let h = m["cssContentSize"]["height"]
                .as_f64()
                .unwrap_or(800.0)
                .min(MAX_FULL_HEIGHT);
            params["clip"] = json!({"x": 0, "y": 0, "width": w, "height": h, "scale": 1});
            params["captureBeyondViewport"] = json!(true);
            what = "whole page".to_string();
        } else {
            what = "viewport".to_string();
        }
        let shot = self.page("Page.captureScreenshot", params).await?;
        let data = shot["data"].as_str().unwrap_or_default().to_string();
        let bytes = data.len() / 4 * 3;
        Ok(Reply {
            text: format!(
                "Screenshot of the {what} (PNG, {}).",
                crate::tools::bash::human_bytes(bytes as u64)
            ),
            details: json!({"screenshot": what, "bytes": bytes, "mime_type": "image/png"}),
            png: Some(data),
            ..Reply::default()
        })
    }

    fn console(&self) -> Reply {
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

    async fn evaluate(&self, a: &BrowserArgs) -> Done {
        let expr = a.expression.as_deref().unwrap_or_default();
        let r = self
            .page(
                "Runtime.evaluate",
                json!({
                    "expression": expr,
                    "awaitPromise": true,
                    "returnByValue": true,
                    "userGesture": true,
                    "replMode": true,
                }),
            )
            .await?;
        if let Some(ex) = r.get("exceptionDetails") {
            let msg = ex["exception"]["description"]
                .as_str()
                .or_else(|| ex["text"].as_str())
                .unwrap_or("an exception");
            return Err(Fail(
                "browser.script_error",
                format!("the script threw: {}", clip(msg, 2_000)),
            ));
        }
        let result = &r["result"];
        let text = match result.get("value") {
            Some(v) => serde_json::to_string_pretty(v).unwrap_or_default(),
            None => result["description"]
                .as_str()
                .or_else(|| result["type"].as_str())
                .unwrap_or("undefined")
                .to_string(),
        };
        Ok(Reply {
            text: clip(&text, MAX_VALUE_CHARS),
            details: json!({"type": result["type"]}),
            ..Reply::default()
        })
    }
}

fn tabs_note(n: usize) -> bool {
    n > 1
}

/// The call's ref, for messages.
fn r(a: &BrowserArgs) -> String {
    a.element.clone().unwrap_or_default()
}

fn join_json(v: &[Value]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut c: String = s.chars().take(max).collect();
    c.push_str(&format!("\n[cut at {max} characters]"));
    c
}

/// The event handler, on the connection's reading task.
fn on_event(ev: Event, tx: &Sender, shared: &Mutex<Shared>, changed: &Notify) {
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
