//! Progress lines, both sides. A tool reports how a long call goes by
//! writing [`ToolProgress`] lines to its stderr, and only when its caller
//! asked for them by setting [`PROGRESS_ENV`] (ag-loop does for every call):
//! stdout keeps one result per call, so the tool's output stays what every
//! other caller (a pipeline, ag-mcp, a person) expects, and stderr was
//! already where progress goes. The caller ([`super::exec`]) reads stderr
//! line by line as it comes and takes the lines that parse as progress;
//! any other stderr line is a log line, kept for the message of a failed
//! call as before.

use std::sync::Mutex;

use serde_json::Value;

use crate::protocol::{PROGRESS_ENV, ToolProgress};

/// The longest progress line a caller takes, in bytes; a longer one is
/// skipped. A tool keeps its lines far shorter (ag-bash: a few KiB).
pub const MAX_LINE_BYTES: usize = 64 * 1024;
/// Bytes of stderr a caller reads for progress lines in one call; past it
/// no more progress is taken (stderr is still captured for messages).
pub const MAX_TOTAL_BYTES: u64 = 16 * 1024 * 1024;

/// The id of the call being served, for the progress lines it writes.
static CALL_ID: Mutex<Option<String>> = Mutex::new(None);

/// Whether the caller asked for progress lines.
pub fn wanted() -> bool {
    std::env::var_os(PROGRESS_ENV).is_some_and(|v| !v.is_empty() && v != "0")
}

/// Sets the id of the call now being served (the JSONL loop does, for
/// each call).
pub(super) fn set_call_id(id: Option<String>) {
    if let Ok(mut cur) = CALL_ID.lock() {
        *cur = id;
    }
}

/// The progress line for `output` and `details`, as a tool writes it (with
/// its newline), for the call now being served.
pub fn line(output: &str, details: Value) -> Vec<u8> {
    let record = ToolProgress::Progress {
        id: CALL_ID.lock().ok().and_then(|c| c.clone()),
        output: output.to_string(),
        details,
    };
    let mut bytes = serde_json::to_vec(&record).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// Reports progress of the call being served, when the caller asked for
/// it; a caller that stopped reading costs nothing but the report.
pub fn report(output: &str, details: Value) {
    if wanted() {
        let _ = crate::cli::stderr_line(&line(output, details));
    }
}

/// A line of a tool's stderr read as progress: `None` for a log line.
pub fn parse(line: &[u8]) -> Option<ToolProgress> {
    let trimmed = line.trim_ascii();
    if !trimmed.starts_with(b"{") {
        return None;
    }
    serde_json::from_slice(trimmed).ok()
}

/// A tool's stderr without its progress lines, for the message of a call
/// that failed.
pub fn without_progress(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|l| parse(l.as_bytes()).is_none())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_progress_line_round_trips_and_log_lines_are_not_progress() {
        set_call_id(Some("c7".into()));
        let l = line("step 2 of 3", json!({"step": 2}));
        set_call_id(None);
        assert!(l.ends_with(b"\n"));
        let p = parse(&l).unwrap();
        assert_eq!(
            p,
            ToolProgress::Progress {
                id: Some("c7".into()),
                output: "step 2 of 3".into(),
                details: json!({"step": 2}),
            }
        );
        assert!(parse(b"warning: something").is_none());
        assert!(parse(b"{\"type\":\"other\"}").is_none());
        assert!(parse(b"{not json").is_none());
        let stderr = format!("log one\n{}log two", String::from_utf8_lossy(&l));
        assert_eq!(without_progress(&stderr), "log one\nlog two");
    }
}
