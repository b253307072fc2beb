//! What a JSON line on ag-loop's stdin that is no command was most likely
//! meant as, written as the command that does it, with the caller's own
//! values: seed 003's worker messages (`WORKER_TASK`, `WORKER_STEER`,
//! `WORKER_ANSWER`), pi's
//! RPC names (`abort`, `set_thinking_level`, `message` for the text), a
//! bare message object, a field under another name.

use serde_json::{Value, json};

/// The command `line` most likely meant, when one is clear.
pub fn corrected(line: &Value) -> Option<Value> {
    let obj = line.as_object()?;
    let text = ["content", "prompt", "message", "text"]
        .iter()
        .find_map(|k| obj.get(*k).filter(|v| v.is_string() || v.is_array()))
        .cloned();
    let kind = obj
        .get("type")
        .and_then(Value::as_str)
        .map(str::to_ascii_lowercase);
    let with_text = |kind: &str| text.clone().map(|t| json!({"type": kind, "content": t}));
    match kind.as_deref() {
        // `{"role":"user","content":...}`, or a bare `{"prompt": ...}`.
        None => with_text("prompt"),
        Some("worker_task" | "user" | "task" | "user_message" | "prompt" | "message") => {
            with_text("prompt")
        }
        Some("worker_steer" | "steer" | "follow_up" | "followup") => with_text("steer"),
        Some("abort" | "cancel" | "stop" | "worker_abort" | "worker_cancel") => {
            Some(json!({"type": "interrupt"}))
        }
        Some(
            "set_thinking_level" | "set_reasoning" | "set_thinking" | "thinking" | "reasoning",
        ) => {
            let level = ["level", "reasoning", "effort", "thinking", "value"]
                .iter()
                .find_map(|k| obj.get(*k).and_then(Value::as_str))?;
            let level = level.to_ascii_lowercase();
            let level = match level.as_str() {
                "none" | "minimal" | "false" => "off",
                "xhigh" | "max" => "high",
                other => other,
            };
            matches!(level, "off" | "low" | "medium" | "high")
                .then(|| json!({"type": "set_reasoning", "level": level}))
        }
        Some("worker_answer" | "answer") => {
            let id = ["toolCallId", "tool_call_id", "id"]
                .iter()
                .find_map(|k| obj.get(*k).and_then(Value::as_str))?;
            let answer = ["answer", "content", "text"]
                .iter()
                .find_map(|k| obj.get(*k).and_then(Value::as_str))?;
            Some(json!({"type": "answer", "tool_call_id": id, "answer": answer}))
        }
        Some("set_model" | "model" | "switch_model") => {
            let id = ["model", "modelId", "model_id", "id"]
                .iter()
                .find_map(|k| obj.get(*k).and_then(Value::as_str))?;
            let model = match obj.get("provider").and_then(Value::as_str) {
                Some(p) if !id.contains('/') => format!("{p}/{id}"),
                _ => id.to_string(),
            };
            Some(json!({"type": "set_model", "model": model}))
        }
        Some(_) => None,
    }
}

/// The message of the `error` event for a JSON line that is no command.
pub fn message(n: usize, line: &str, error: &serde_json::Error) -> String {
    let parsed: Option<Value> = serde_json::from_str(line).ok();
    let fix = parsed.as_ref().and_then(corrected);
    match fix {
        Some(fix) => format!("stdin line {n}: not a command ({error}), skipped; write it as {fix}"),
        None => format!(
            "stdin line {n}: not a command ({error}), skipped; expected {{\"type\":\"prompt\",\"content\":...}} (or seed 002's {{\"type\":\"message\",...}}), steer, interrupt, approval, answer, compact, set_model or set_reasoning, or a plain text line"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(line: &str) -> Option<String> {
        corrected(&serde_json::from_str(line).unwrap()).map(|v| v.to_string())
    }

    #[test]
    fn other_protocols_lines_get_their_command() {
        assert_eq!(
            fix(r#"{"type":"WORKER_STEER","prompt":"use the new API"}"#).as_deref(),
            Some(r#"{"type":"steer","content":"use the new API"}"#)
        );
        assert_eq!(
            fix(r#"{"type":"WORKER_TASK","sessionId":"s","taskId":"t","prompt":"fix it"}"#)
                .as_deref(),
            Some(r#"{"type":"prompt","content":"fix it"}"#)
        );
        assert_eq!(
            fix(r#"{"type":"prompt","message":"hi"}"#).as_deref(),
            Some(r#"{"type":"prompt","content":"hi"}"#)
        );
        assert_eq!(
            fix(r#"{"role":"user","content":"hi"}"#).as_deref(),
            Some(r#"{"type":"prompt","content":"hi"}"#)
        );
        assert_eq!(
            fix(r#"{"type":"abort"}"#).as_deref(),
            Some(r#"{"type":"interrupt"}"#)
        );
        assert_eq!(
            fix(r#"{"type":"set_thinking_level","level":"minimal"}"#).as_deref(),
            Some(r#"{"type":"set_reasoning","level":"off"}"#)
        );
        assert_eq!(
            fix(r#"{"type":"set_model","provider":"anthropic","modelId":"claude-sonnet-4-5"}"#)
                .as_deref(),
            Some(r#"{"type":"set_model","model":"anthropic/claude-sonnet-4-5"}"#)
        );
        // Nothing clear to offer.
        assert_eq!(
            fix(r#"{"type":"WORKER_ANSWER","toolCallId":"call_3","answer":"yes"}"#).as_deref(),
            Some(r#"{"type":"answer","tool_call_id":"call_3","answer":"yes"}"#)
        );
        assert_eq!(fix(r#"{"type":"WORKER_HEARTBEAT"}"#), None);
        assert_eq!(fix(r#"{"type":"set_reasoning","level":"hard"}"#), None);
        assert_eq!(fix(r#"{"type":"steer"}"#), None);
    }

    #[test]
    fn the_message_shows_the_line_to_write() {
        let line = r#"{"type":"WORKER_STEER","prompt":"stop"}"#;
        let e = serde_json::from_str::<crate::protocol::AgentCommand>(line).unwrap_err();
        let m = message(3, line, &e);
        assert!(m.starts_with("stdin line 3: not a command"), "{m}");
        assert!(
            m.ends_with(r#"write it as {"type":"steer","content":"stop"}"#),
            "{m}"
        );
    }
}
