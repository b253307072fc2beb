//! A session as `list` shows it: a live one from what its hub has seen, an
//! ended one from its file (read once, and again only when the file
//! changed: a listing every few seconds does not reread every session).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use serde_json::Value;

use super::hub::{Seen, observe_message};
use super::live::Live;
use crate::protocol::{SessionInfo, SessionState};
use crate::session::Reader;

/// A live session's entry.
pub fn of_live(live: &Live) -> SessionInfo {
    let (seen, next, clients) = live.hub.snapshot();
    SessionInfo {
        id: live.id.clone(),
        state: live.hub.state(),
        cwd: live.cwd.display().to_string(),
        path: live.path.display().to_string(),
        model: seen.model,
        cost: seen.cost,
        last_activity: seen.last_activity,
        first_prompt: seen.first_prompt,
        events: Some(next),
        clients,
        resumable: false,
    }
}

/// An ended session's entry, with the size and time of its file when read.
type Read = (u64, Option<SystemTime>, SessionInfo);

/// Ended sessions' entries, by file.
#[derive(Default)]
pub struct Cache {
    entries: Mutex<HashMap<PathBuf, Read>>,
}

impl Cache {
    /// The entry of an ended session, or `None` when its file is gone.
    pub fn of_ended(&self, id: &str, path: &Path) -> Option<SessionInfo> {
        let meta = std::fs::metadata(path).ok()?;
        let (len, modified) = (meta.len(), meta.modified().ok());
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((l, m, info)) = entries.get(path)
            && *l == len
            && *m == modified
        {
            return Some(info.clone());
        }
        let info = read_ended(id, path, modified)?;
        entries.insert(path.to_path_buf(), (len, modified, info.clone()));
        Some(info)
    }
}

fn read_ended(id: &str, path: &Path, modified: Option<SystemTime>) -> Option<SessionInfo> {
    let mut reader = Reader::open(path).ok()?;
    let header = reader.header().ok().flatten();
    let mut seen = Seen {
        model: header
            .as_ref()
            .and_then(|h| h.config.get("model"))
            .and_then(Value::as_str)
            .map(str::to_string),
        ..Seen::default()
    };
    // Only the lines that say something here are parsed.
    let _ =
        reader.for_each_line_of_unchecked(&["\"message_end\"", "\"settings\""], |_, v: Value| {
            if let Some(kind) = v.get("type").and_then(Value::as_str) {
                observe_message(&mut seen, kind, &v);
            }
        });
    let last_activity = modified.map(|m| {
        let ts = jiff::Timestamp::try_from(m).unwrap_or_default();
        format!("{ts:.3}")
    });
    Some(SessionInfo {
        id: header
            .as_ref()
            .map(|h| h.id.clone())
            .unwrap_or_else(|| id.to_string()),
        state: SessionState::Ended,
        cwd: header.map(|h| h.cwd).unwrap_or_default(),
        path: path.display().to_string(),
        model: seen.model,
        cost: seen.cost,
        last_activity,
        first_prompt: seen.first_prompt,
        events: None,
        clients: 0,
        resumable: true,
    })
}
