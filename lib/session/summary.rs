//! What `list` and `stats` show of a session: first prompt, message count,
//! tokens and cost, read in one streaming pass.

use std::collections::BTreeMap;
use std::io;

use serde::Serialize;

use super::reader::{Damage, Reader};
use super::store::SessionFile;
use crate::protocol::{AgentEvent, Message, Usage};

/// One session in `list`.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// The session id.
    pub id: String,
    /// The session file.
    pub path: String,
    /// When it began.
    pub timestamp: String,
    /// The working directory it ran in.
    pub cwd: String,
    /// The session it was forked from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// The first user prompt.
    pub first_prompt: String,
    /// Completed messages.
    pub messages: u64,
    /// Tokens and cost summed over the assistant messages.
    pub usage: Usage,
    /// Damaged lines found.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub damage: Vec<String>,
}

/// Reads a session's summary.
pub fn summarize(file: &SessionFile) -> io::Result<Summary> {
    let mut reader = Reader::open(&file.path)?;
    let header = reader.header()?;
    let mut s = Summary {
        id: header
            .as_ref()
            .map(|h| h.id.clone())
            .unwrap_or_else(|| file.id.clone()),
        path: file.path.display().to_string(),
        timestamp: header
            .as_ref()
            .map(|h| h.timestamp.clone())
            .unwrap_or_default(),
        cwd: header.as_ref().map(|h| h.cwd.clone()).unwrap_or_default(),
        parent: header.as_ref().and_then(|h| h.parent.clone()),
        first_prompt: String::new(),
        messages: 0,
        usage: Usage::default(),
        damage: Vec::new(),
    };
    reader.for_each_event_of(&["\"message_end\""], |_, rec| {
        if let AgentEvent::MessageEnd { message } = rec.event {
            s.messages += 1;
            match message {
                Message::User { content, .. } if s.first_prompt.is_empty() => {
                    s.first_prompt = content.text();
                }
                Message::Assistant(a) => s.usage.add(&a.usage),
                _ => {}
            }
        }
    })?;
    s.damage = reader.damage.iter().map(Damage::to_string).collect();
    Ok(s)
}

impl Summary {
    /// Reads a session's summary.
    pub fn of(file: &SessionFile) -> io::Result<Summary> {
        summarize(file)
    }
}

/// Tokens and cost of one model on one day.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DayModelStats {
    /// The day (UTC), `YYYY-MM-DD`.
    pub day: String,
    /// The model.
    pub model: String,
    /// Assistant messages.
    pub calls: u64,
    /// Tokens and cost.
    pub usage: Usage,
}

/// Usage per day and model over some sessions.
pub fn stats(files: &[SessionFile]) -> io::Result<Vec<DayModelStats>> {
    let mut table: BTreeMap<(String, String), DayModelStats> = BTreeMap::new();
    for file in files {
        let mut reader = Reader::open(&file.path)?;
        let _ = reader.header()?;
        reader.for_each_event_of(&["\"message_end\""], |_, rec| {
            if let AgentEvent::MessageEnd {
                message: Message::Assistant(a),
            } = rec.event
            {
                let day = a
                    .timestamp
                    .as_deref()
                    .unwrap_or(&rec.timestamp)
                    .chars()
                    .take(10)
                    .collect::<String>();
                let model = a.model.clone().unwrap_or_else(|| "unknown".into());
                let entry = table
                    .entry((day.clone(), model.clone()))
                    .or_insert_with(|| DayModelStats {
                        day,
                        model,
                        ..Default::default()
                    });
                entry.calls += 1;
                entry.usage.add(&a.usage);
            }
        })?;
    }
    Ok(table.into_values().collect())
}
