//! What a language server found after a change: `details.diagnostics` of
//! an ag-write, ag-edit or ag-patch result, and of ag-lsp's `diagnostics`.
//! The front ends read it to show the errors beside the change.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The language servers' findings on the files a call changed or named.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChangeDiagnostics {
    /// One entry per file, in the order the call named them; an entry for
    /// an earlier change whose diagnostics came after its result has
    /// `late: true`.
    pub files: Vec<FileDiagnostics>,
}

/// Whether the errors of a file are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DiagnosticsStatus {
    /// The server checked the change: `new` and `existing` are its answer.
    Checked,
    /// The server did not answer within the wait; its answer comes with a
    /// later call's result, as a `late` entry.
    Pending,
    /// No answer will come: the server did not start, hung or ended
    /// (`reason` says which).
    Unavailable,
}

/// One file's errors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileDiagnostics {
    /// The file, as the call named it (relative to the working directory
    /// when it lies below it).
    pub path: String,
    /// The language server's name in the configuration (`python`,
    /// `typescript`, ...).
    pub server: String,
    /// Whether the errors are known.
    pub status: DiagnosticsStatus,
    /// The errors the change brought in (for ag-lsp `diagnostics`: all of
    /// the file's errors), by line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub new: Vec<Diagnostic>,
    /// How many errors were there before the change and still are: counted,
    /// not listed.
    #[serde(default)]
    pub existing: u32,
    /// The entry is for an earlier call, whose wait ran out.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub late: bool,
    /// Why the status is `pending` or `unavailable`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One error a language server reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Diagnostic {
    /// The line, from 1.
    pub line: u32,
    /// The column, from 1, in characters.
    pub column: u32,
    /// What the server says.
    pub message: String,
    /// `error` or `warning` (only errors are reported after a change).
    pub severity: String,
    /// The server's code for it, when it gives one (`reportAttributeAccessIssue`,
    /// `2322`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

impl ChangeDiagnostics {
    /// The diagnostics in a tool result's details, if it has any.
    pub fn from_details(details: &serde_json::Value) -> Option<ChangeDiagnostics> {
        let d = details.get("diagnostics")?;
        serde_json::from_value::<ChangeDiagnostics>(d.clone())
            .ok()
            .filter(|d| !d.files.is_empty())
    }

    /// One short line per file and one per new error (at most `max` of
    /// those in all), for a front end to show beside a change:
    /// `main.py:7:14: error: ...`, `main.py: no new errors (python)`.
    pub fn summary(&self, max: usize) -> Vec<String> {
        let mut out = Vec::new();
        let mut listed = 0;
        for f in &self.files {
            let late = if f.late {
                " (late, an earlier change)"
            } else {
                ""
            };
            match f.status {
                DiagnosticsStatus::Checked if f.new.is_empty() => {
                    out.push(format!("{}: no new errors ({}){late}", f.path, f.server))
                }
                DiagnosticsStatus::Checked => {
                    for d in &f.new {
                        if listed == max {
                            out.push(format!("{}: ... and more", f.path));
                            break;
                        }
                        listed += 1;
                        out.push(format!(
                            "{}:{}:{}: {}: {}{late}",
                            f.path,
                            d.line,
                            d.column,
                            d.severity,
                            d.message.split_whitespace().collect::<Vec<_>>().join(" ")
                        ));
                    }
                }
                DiagnosticsStatus::Pending => out.push(format!(
                    "{}: diagnostics pending ({}){late}",
                    f.path, f.server
                )),
                DiagnosticsStatus::Unavailable => out.push(format!(
                    "{}: diagnostics unavailable: {}{late}",
                    f.path,
                    f.reason.as_deref().unwrap_or("no reason given")
                )),
            }
        }
        out
    }

    /// How many new errors the files have.
    pub fn new_errors(&self) -> usize {
        self.files.iter().map(|f| f.new.len()).sum()
    }
}
