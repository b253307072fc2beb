//! Session files: a header line, then ag-loop's events.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::AgentEventRecord;

/// The first line of a session file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionHeader {
    /// Always `session`.
    #[serde(rename = "type")]
    pub kind: SessionTag,
    /// The format version (currently 1).
    pub version: u32,
    /// The session's id (a UUID).
    pub id: String,
    /// When the session began (RFC 3339, UTC).
    pub timestamp: String,
    /// The working directory it ran in.
    pub cwd: String,
    /// The agent's settings (model, tools, ...); never secrets.
    #[serde(default)]
    pub config: Value,
    /// The id of the session this one was forked from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
}

/// The tag of a session header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SessionTag {
    /// A session header.
    Session,
}

/// One line of a session file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SessionRecord {
    /// The first line.
    Header(SessionHeader),
    /// Every later line: an event as ag-loop printed it.
    Event(AgentEventRecord),
}
