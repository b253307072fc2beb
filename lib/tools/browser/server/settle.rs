//! Waiting for the page: a navigation's load, or the requests an input
//! set off going quiet, each within a bound, so that the snapshot after
//! an action shows what the action did.

use std::time::Duration;

use serde_json::json;

use super::Browser;

/// How long a navigation may take to load.
pub(super) const LOAD_LIMIT: Duration = Duration::from_secs(20);
/// How long a click or a key may keep the page busy before the result is
/// taken anyway.
const SETTLE_LIMIT: Duration = Duration::from_secs(3);
/// Requests quiet this long count as settled.
const QUIET: Duration = Duration::from_millis(60);

impl Browser {
    pub(super) fn loads(&self) -> u64 {
        let s = self.session();
        self.shared
            .lock()
            .map(|sh| sh.loads.get(&s).copied().unwrap_or(0))
            .unwrap_or(0)
    }

    /// Waits until the current tab's load count passes `before`.
    pub(super) async fn wait_load(&self, before: u64, limit: Duration) -> bool {
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
    pub(super) fn activity(&self) -> u64 {
        self.loads()
    }

    /// Waits for what an input set off: a navigation's load, or requests
    /// to go quiet, at most [`SETTLE_LIMIT`].
    pub(super) async fn settle(&self, loads_before: u64) {
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
}
