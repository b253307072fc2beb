//! One call: its line read, the browser restarted if it had ended, the
//! action done, and the news of the pages added to the reply.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::super::keys;
use super::super::launch::Chromium;
use super::super::wire::{Reply, Request};
use super::super::{BrowserAction as A, BrowserArgs};
use super::settle::LOAD_LIMIT;
use super::{Browser, Done, Fail};

/// The longest result of `evaluate`, in characters.
const MAX_VALUE_CHARS: usize = 20_000;

impl Browser {
    /// One call: its line in, the reply out.
    pub(super) async fn serve(&mut self, line: &str) -> Reply {
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

    pub(super) async fn act(&mut self, req: &Request) -> Done {
        let a = &req.args;
        match a.action {
            A::Navigate => {
                let raw = a.url.as_deref().unwrap_or_default();
                let url = super::super::confine::url_of(raw, &req.cwd)
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
            A::TabOpen => self.tab_open(req).await,
            A::TabSwitch => self.tab_switch(req).await,
            A::TabClose => self.tab_close(req).await,
        }
    }

    pub(super) async fn navigate(&mut self, url: &str) -> Result<(), Fail> {
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

    pub(super) async fn key(&self, spec: &str) -> Result<(), Fail> {
        let press = keys::parse(spec).map_err(|m| Fail("browser.bad_key", m))?;
        self.page("Input.dispatchKeyEvent", press.down).await?;
        self.page("Input.dispatchKeyEvent", press.up).await?;
        Ok(())
    }

    pub(super) async fn wait(&self, a: &BrowserArgs) -> Done {
        let limit = Duration::from_secs_f64(
            a.timeout
                .unwrap_or(10.0)
                .clamp(0.0, super::super::MAX_WAIT_SECS),
        );
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

    pub(super) async fn evaluate(&self, a: &BrowserArgs) -> Done {
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

/// The call's ref, for messages.
pub(super) fn r(a: &BrowserArgs) -> String {
    a.element.clone().unwrap_or_default()
}

fn join_json(v: &[Value]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `s` cut to `max` characters, with a note that it was.
pub(super) fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut c: String = s.chars().take(max).collect();
    c.push_str(&format!("\n[cut at {max} characters]"));
    c
}
