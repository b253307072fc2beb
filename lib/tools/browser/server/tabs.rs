//! The browser and its tabs: Chromium started and connected, the
//! browser-wide settings, a tab per page target (the pages' own
//! `window.open` included), and the tab actions.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::super::cdp::{self, CdpError};
use super::super::launch::Chromium;
use super::super::wire::{Reply, Request};
use super::events::{Shared, on_event};
use super::{Browser, Done, Fail, Tab};

/// How long one protocol command may take.
const COMMAND_LIMIT: Duration = Duration::from_secs(30);

impl Browser {
    pub(super) async fn start(
        exe: &std::path::Path,
        cancel: &CancellationToken,
    ) -> Result<Browser, String> {
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
    pub(super) async fn setup(&mut self) -> Result<(), CdpError> {
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

    pub(super) async fn new_target(&self) -> Result<String, CdpError> {
        let r = self
            .cmd("Target.createTarget", json!({"url": "about:blank"}), None)
            .await?;
        Ok(r["targetId"].as_str().unwrap_or_default().to_string())
    }

    /// Attaches to a page target as a new tab, made current.
    pub(super) async fn attach(&mut self, target: String) -> Result<(), CdpError> {
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

    pub(super) async fn cmd(
        &self,
        method: &str,
        params: Value,
        session: Option<&str>,
    ) -> Result<Value, CdpError> {
        self.cdp.call(method, params, session, COMMAND_LIMIT).await
    }

    /// A command to the current tab.
    pub(super) async fn page(&self, method: &str, params: Value) -> Result<Value, CdpError> {
        let s = self.tabs.get(self.current).map(|t| t.session.clone());
        self.cmd(method, params, s.as_deref()).await
    }

    /// Closes the browser politely, then ends its group.
    pub(super) async fn close(mut self) {
        let _ = self
            .cdp
            .call("Browser.close", json!({}), None, Duration::from_secs(2))
            .await;
        if let Some(c) = self.chromium.take() {
            c.stop().await;
        }
    }

    pub(super) async fn restart(&mut self) -> Result<(), String> {
        if let Some(c) = self.chromium.take() {
            c.stop().await;
        }
        let fresh = Browser::start(&self.exe, &self.cancel).await?;
        let old = std::mem::replace(self, fresh);
        drop(old);
        Ok(())
    }

    /// Tabs the pages opened since the last call become tabs (not current).
    pub(super) async fn adopt_opened(&mut self) {
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
    pub(super) fn tab_index(&self, tab: Option<u32>) -> Result<usize, Fail> {
        let n = tab.unwrap_or(0);
        self.tabs.iter().position(|t| t.id == n).ok_or_else(|| {
            let ids: Vec<String> = self.tabs.iter().map(|t| t.id.to_string()).collect();
            Fail(
                "browser.no_such_tab",
                format!("there is no tab {n}; the tabs are {}", ids.join(", ")),
            )
        })
    }

    /// A tab's URL and title, as the browser has them now; empty when it
    /// cannot say (the tab is closing).
    pub(super) async fn url_and_title(&self, target: &str) -> (String, String) {
        let info = self
            .cmd("Target.getTargetInfo", json!({"targetId": target}), None)
            .await
            .unwrap_or_default();
        let text = |field: &str| {
            info["targetInfo"][field]
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        (text("url"), text("title"))
    }

    pub(super) async fn tab_list(&self) -> Reply {
        let mut lines = Vec::new();
        let mut tabs = Vec::new();
        for (i, t) in self.tabs.iter().enumerate() {
            let (url, title) = self.url_and_title(&t.target).await;
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

    /// tab_open: a new tab, made current, at the call's `url` if any.
    pub(super) async fn tab_open(&mut self, req: &Request) -> Done {
        let a = &req.args;
        let url = match a.url.as_deref().filter(|u| !u.trim().is_empty()) {
            Some(raw) => {
                let url = super::super::confine::url_of(raw, &req.cwd)
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

    /// tab_switch: makes the call's `tab` current.
    pub(super) async fn tab_switch(&mut self, req: &Request) -> Done {
        let a = &req.args;
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

    /// tab_close: closes the call's `tab`; the last one closed leaves an
    /// empty tab.
    pub(super) async fn tab_close(&mut self, req: &Request) -> Done {
        let a = &req.args;
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

    pub(super) fn session(&self) -> String {
        self.tabs
            .get(self.current)
            .map(|t| t.session.clone())
            .unwrap_or_default()
    }
}

/// Whether a result names its tab: only when there is more than one.
pub(super) fn tabs_note(n: usize) -> bool {
    n > 1
}
