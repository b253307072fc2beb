//! What a call of ag-browser says to its warm server and what the server
//! answers: one JSON line each way over the helper's socket
//! ([`crate::proc::warm`]). Both ends are the same binary, so the shapes
//! are this module's alone.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::BrowserArgs;
use super::confine::Rules;

/// One call, as the server gets it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request {
    /// The call's arguments.
    pub args: BrowserArgs,
    /// What the browser may load (the newest call's rules are in force).
    pub rules: Rules,
    /// The caller's working directory, for relative file paths.
    pub cwd: std::path::PathBuf,
    /// Characters the result may take (`AG_OUTPUT_BUDGET`), if bounded.
    pub budget: Option<usize>,
}

/// The server's answer.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Reply {
    /// The text for the model.
    pub text: String,
    /// Notes about it.
    #[serde(default)]
    pub notes: Vec<String>,
    /// Whether the notes must be read first (a cut snapshot).
    #[serde(default)]
    pub notes_first: bool,
    /// Structured details.
    #[serde(default)]
    pub details: Value,
    /// A PNG, base64.
    #[serde(default)]
    pub png: Option<String>,
    /// Set when the call failed: its stable code.
    #[serde(default)]
    pub error_code: Option<String>,
}

impl Reply {
    /// A failure.
    pub fn error(code: &str, message: impl Into<String>) -> Reply {
        Reply {
            text: message.into(),
            error_code: Some(code.to_string()),
            ..Reply::default()
        }
    }
}
