//! A call's progress lines, turned into `tool_execution_update` events:
//! each cut, and only so many per call. The loop emits them (see
//! `run/updates.rs`).

use serde_json::Value;
use tokio::sync::mpsc;

use crate::protocol::{AgentEvent, ToolProgress};

/// Updates a call may send: enough for an hour of a busy build at
/// ag-bash's pace; past it the call's progress is left out (its result
/// still comes).
pub const MAX_UPDATES: usize = 10_000;
/// Characters of one update's text kept (the end, where the latest is).
pub const MAX_UPDATE_CHARS: usize = 8_000;

/// Turns a call's progress lines into `tool_execution_update` events, each
/// cut to [`MAX_UPDATE_CHARS`] and at most [`MAX_UPDATES`] of them, for a
/// tool that reports more than a person can read.
pub(in crate::agent) fn progress_sink(
    id: &str,
    name: &str,
    events: mpsc::UnboundedSender<AgentEvent>,
) -> impl Fn(ToolProgress) + Send + Sync + use<> {
    let (id, name) = (id.to_string(), name.to_string());
    let sent = std::sync::atomic::AtomicUsize::new(0);
    move |p: ToolProgress| {
        let ToolProgress::Progress {
            output, details, ..
        } = p;
        let n = sent.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let output = match n.cmp(&MAX_UPDATES) {
            std::cmp::Ordering::Less => tail_chars(output, MAX_UPDATE_CHARS),
            std::cmp::Ordering::Equal => format!(
                "[more progress of this call is left out: it sent more than {MAX_UPDATES} updates; its result will follow]"
            ),
            std::cmp::Ordering::Greater => return,
        };
        let details = if n < MAX_UPDATES {
            details
        } else {
            Value::Null
        };
        let _ = events.send(AgentEvent::ToolExecutionUpdate {
            tool_call_id: id.clone(),
            tool_name: name.clone(),
            output,
            details,
        });
    }
}

/// The last `max` characters of `text`, saying what was cut before them.
fn tail_chars(text: String, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text;
    }
    let tail: String = text.chars().skip(total - max).collect();
    format!("[... {} characters cut ...]\n{tail}", total - max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn drain(rx: &mut mpsc::UnboundedReceiver<AgentEvent>) -> Vec<AgentEvent> {
        let mut out = Vec::new();
        while let Ok(e) = rx.try_recv() {
            out.push(e);
        }
        out
    }

    #[test]
    fn progress_becomes_updates_of_its_call_cut_and_counted() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let sink = progress_sink("c1", "bash", tx);
        sink(ToolProgress::Progress {
            id: None,
            output: "step 1".into(),
            details: json!({"lines": 1}),
        });
        sink(ToolProgress::Progress {
            id: None,
            output: "x".repeat(MAX_UPDATE_CHARS + 10),
            details: Value::Null,
        });
        let got = drain(&mut rx);
        let AgentEvent::ToolExecutionUpdate {
            tool_call_id,
            tool_name,
            output,
            details,
        } = &got[0]
        else {
            panic!("{got:?}")
        };
        assert_eq!((tool_call_id.as_str(), tool_name.as_str()), ("c1", "bash"));
        assert_eq!(output, "step 1");
        assert_eq!(details, &json!({"lines": 1}));
        let AgentEvent::ToolExecutionUpdate { output, .. } = &got[1] else {
            panic!("{got:?}")
        };
        assert!(
            output.starts_with("[... 10 characters cut ...]\n"),
            "{output}"
        );
        assert!(output.ends_with(&"x".repeat(MAX_UPDATE_CHARS)));
    }

    #[test]
    fn a_call_that_reports_too_much_is_cut_off_with_a_last_word() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let sink = progress_sink("c1", "noisy", tx);
        for i in 0..MAX_UPDATES + 50 {
            sink(ToolProgress::Progress {
                id: None,
                output: format!("{i}"),
                details: Value::Null,
            });
        }
        let got = drain(&mut rx);
        assert_eq!(got.len(), MAX_UPDATES + 1);
        let AgentEvent::ToolExecutionUpdate { output, .. } = got.last().unwrap() else {
            panic!()
        };
        assert!(
            output.contains("more progress of this call is left out"),
            "{output}"
        );
    }
}
