//! What the model sees of the page: the accessibility snapshot after an
//! action (URL, title, a page of the tree, its refs kept for the next
//! call), and the screenshot.

use serde_json::{Value, json};

use super::super::wire::{Reply, Request};
use super::super::{BrowserArgs, snapshot};
use super::actions::r;
use super::tabs::tabs_note;
use super::{Browser, Done, Fail};

/// The tallest full-page screenshot, in CSS pixels.
const MAX_FULL_HEIGHT: f64 = 16_384.0;

impl Browser {
    /// The page after an action: what was done, the URL and title, and the
    /// snapshot (a page of it), whose refs become the tab's.
    pub(super) async fn page_state(&mut self, req: &Request, did: Option<String>) -> Done {
        let tree = self.page("Accessibility.getFullAXTree", json!({})).await?;
        let nodes = tree["nodes"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        let snap = snapshot::render(nodes);
        let target = self.tabs[self.current].target.clone();
        let (url, title) = self.url_and_title(&target).await;
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

    pub(super) async fn screenshot(&self, a: &BrowserArgs) -> Done {
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
}
