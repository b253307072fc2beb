//! The element a ref of the latest snapshot names: its DOM node, its
//! object in the page, and where to click it.

use serde_json::{Value, json};

use super::super::BrowserArgs;
use super::actions::r;
use super::{Browser, Fail};

impl Browser {
    pub(super) fn node_of(&self, a: &BrowserArgs) -> Result<i64, Fail> {
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

    pub(super) async fn object_of(&self, node: i64) -> Result<String, Fail> {
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
    pub(super) async fn center(&self, a: &BrowserArgs) -> Result<(f64, f64), Fail> {
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
}
