//! The planner fallback for code sketches (seed 001's "Analyze and Plan
//! Changes" step): when a sketch cannot be placed deterministically, a
//! model is shown the numbered file, the instructions and the sketch, and
//! answers with line-range edits `[{start_line, end_line, replacement}]`.
//! The plan is checked here (shape, markers copied into the code) and then
//! validated and applied by the caller like any line-range edit.
//!
//! The call goes to `ag-llm` over its JSONL protocol (found as tools are:
//! beside this executable, then on `PATH`), so that ag-edit carries no
//! model client of its own: the request goes in on stdin, and the `done`
//! or `error` event that ends the stream is the answer. The model is
//! `--planner MODEL` (or the call's `planner`, or `AG_EDIT_PLANNER`), its
//! base URL `--planner-base-url` (or `AG_EDIT_PLANNER_BASE_URL`). ag-llm
//! reads its provider key from the environment ag-edit was given.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use super::sketch::is_marker;
use crate::proc::{self, Cancel, CaptureLimit, Input, Output, TerminationGuard};
use crate::protocol::{
    AssistantMessage, ContentBlock, LlmEvent, LlmRequest, Message, StopReason, ToolDefinition,
    UserContent,
};
use crate::tool_protocol::find_tool_binary;
use crate::tools::matching::lines::LineEdit;

/// Lines of a file shown to the planner at most.
const MAX_LINES: usize = 20_000;
/// Tokens the plan may take.
const MAX_TOKENS: u64 = 16_384;
/// The whole planner call at most: ag-llm's own idle timeout (300 s of
/// silence) ends a stalled stream sooner; this bounds a slow one.
const TIME_LIMIT: Duration = Duration::from_secs(600);
/// ag-llm's event stream kept at most. The answer is the last line, so
/// nearly all of it is kept from the end.
const MAX_EVENTS: usize = 32 * 1024 * 1024;
/// Of those, bytes kept from the start.
const EVENTS_HEAD: usize = 64 * 1024;
/// ag-llm's stderr kept, for its set-up errors (no key, unknown model).
const MAX_STDERR: usize = 16 * 1024;

/// Which model plans, and where it is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planner {
    /// `provider/model`.
    pub model: String,
    /// A base URL replacing the provider's.
    pub base_url: Option<String>,
}

impl Planner {
    /// The planner configured by the call or flags, else the environment.
    pub fn configured(model: Option<&str>, base_url: Option<&str>) -> Option<Planner> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let model = model
            .map(str::to_string)
            .filter(|m| !m.trim().is_empty())
            .or_else(|| env("AG_EDIT_PLANNER"))?;
        let base_url = base_url
            .map(str::to_string)
            .or_else(|| env("AG_EDIT_PLANNER_BASE_URL"));
        Some(Planner { model, base_url })
    }
}

const SYSTEM: &str = "You apply code edits. You get a file with numbered lines, an instruction, and a code sketch: \
the new code, where comment lines such as `// ... existing code ...` stand for unchanged code that was left out. \
Work out which lines of the file the sketch changes and answer by calling `apply_edits` once with line-range edits: \
each replaces lines start_line..end_line (1-based, inclusive, numbered as shown) with `replacement`, the complete \
new text of those lines without line numbers and without any `... existing code ...` comments. To insert without \
replacing, set end_line = start_line - 1 (the text goes before start_line). Edits must not overlap. Change only \
what the sketch changes; keep everything else.";

/// Asks the planner for line edits that apply `sketch` to `content`.
/// `why` says why the deterministic placement failed. The error is a
/// message for the model that called edit.
pub fn plan(
    planner: &Planner,
    shown: &str,
    content: &[u8],
    instructions: Option<&str>,
    sketch: &str,
    why: &str,
) -> Result<Vec<LineEdit>, String> {
    let text = String::from_utf8_lossy(content);
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() > MAX_LINES {
        return Err(format!(
            "the file has {} lines, more than the {MAX_LINES} the planner is shown",
            lines.len()
        ));
    }
    let mut numbered = String::with_capacity(text.len() + lines.len() * 8);
    for (i, l) in lines.iter().enumerate() {
        numbered.push_str(&format!(
            "{:>6}\t{}\n",
            i + 1,
            l.trim_start_matches('\u{feff}')
        ));
    }
    let prompt = format!(
        "File `{shown}` ({} lines):\n{numbered}\nInstruction: {}\n\nCode sketch:\n```\n{sketch}\n```\n\n\
         Placing the sketch by its unchanged lines failed: {why}\nCall apply_edits with the edits.",
        lines.len(),
        instructions.unwrap_or("(none given; follow the sketch)")
    );
    let req = LlmRequest {
        model: planner.model.clone(),
        system: Some(SYSTEM.to_string()),
        messages: vec![Message::User {
            content: UserContent::Text(prompt),
            timestamp: None,
        }],
        tools: vec![tool()],
        max_tokens: Some(MAX_TOKENS),
        temperature: Some(0.0),
        base_url: planner.base_url.clone(),
        ..Default::default()
    };
    let answer = ask_llm(planner, &req)?;
    let edits = answer
        .content
        .iter()
        .find_map(|b| match b {
            ContentBlock::ToolCall { arguments, .. } => Some(from_value(arguments)),
            _ => None,
        })
        .unwrap_or_else(|| from_text(&answer.text()))
        .map_err(|e| format!("the planner `{}` gave no usable plan: {e}", planner.model))?;
    check(&edits).map_err(|e| format!("the planner `{}` gave a bad plan: {e}", planner.model))?;
    Ok(edits)
}

/// Runs `ag-llm` on `req` and returns the answer of its `done` event. The
/// error says why there is no answer, for the model that called edit.
fn ask_llm(planner: &Planner, req: &LlmRequest) -> Result<AssistantMessage, String> {
    let failed = |why: String| format!("the planner `{}` failed: {why}", planner.model);
    let program = find_tool_binary("llm").ok_or_else(|| {
        failed("`ag-llm` is neither beside ag-edit nor on PATH; install it with ag-edit".into())
    })?;
    let request =
        serde_json::to_vec(req).map_err(|e| failed(format!("cannot write the request: {e}")))?;
    let cancel = Cancel::new().map_err(|e| failed(format!("cannot run ag-llm: {e}")))?;
    // An interrupt to ag-edit (ag-loop ending the call) ends ag-llm too.
    let _guard = TerminationGuard::install(&cancel)
        .map_err(|e| failed(format!("cannot run ag-llm: {e}")))?;
    let mut cmd = proc::Command::new(&program)
        .arg("--json")
        .stdin(Input::Bytes(request))
        .timeout(TIME_LIMIT)
        .cancel(&cancel)
        .output(Output::Separate {
            stdout: CaptureLimit {
                head_bytes: EVENTS_HEAD,
                ..CaptureLimit::new(MAX_EVENTS)
            },
            stderr: CaptureLimit::head_only(MAX_STDERR),
        });
    if let Some(url) = &planner.base_url {
        cmd = cmd.arg("--base-url").arg(url);
    }
    let outcome = cmd
        .run()
        .map_err(|e| failed(format!("cannot run `{}`: {e}", program.display())))?;
    let stderr = String::from_utf8_lossy(&outcome.stderr.head);
    let said = stderr
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| l.strip_prefix("ag-llm: ").unwrap_or(l).to_string());
    if outcome.stopped == Some(proc::Stop::Timeout) {
        return Err(failed(format!(
            "no answer within {} s",
            TIME_LIMIT.as_secs()
        )));
    }
    if outcome.stopped.is_some() {
        return Err(failed("the call was cancelled".into()));
    }
    let last = last_event(&outcome.stdout.tail, &outcome.stdout.head);
    match last {
        // An interrupted ag-llm ends with `done`, stop reason `aborted`.
        Some(LlmEvent::Done { message })
            if matches!(
                message.stop_reason,
                StopReason::Error | StopReason::Refusal | StopReason::Aborted
            ) =>
        {
            Err(failed(first_line(
                message.error_message.as_deref().unwrap_or("no answer"),
            )))
        }
        Some(LlmEvent::Done { message }) => Ok(message),
        Some(LlmEvent::Error { error, .. }) => Err(failed(first_line(&error))),
        _ => Err(failed(match said {
            Some(line) => line,
            None => format!("ag-llm ended ({}) without an answer", outcome.status),
        })),
    }
}

/// The last event of the stream: the last line of the tail, or of the head
/// when nothing was cut.
fn last_event(tail: &[u8], head: &[u8]) -> Option<LlmEvent> {
    let bytes = if tail.is_empty() { head } else { tail };
    let text = String::from_utf8_lossy(bytes);
    let line = text.lines().rev().find(|l| !l.trim().is_empty())?;
    serde_json::from_str(line).ok()
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

fn tool() -> ToolDefinition {
    ToolDefinition {
        name: "apply_edits".into(),
        label: "Apply Edits".into(),
        description: "Apply line-range edits to the file.".into(),
        parameters: json!({
            "type": "object",
            "properties": {"edits": {"type": "array", "items": {
                "type": "object",
                "properties": {
                    "start_line": {"type": "integer", "minimum": 1},
                    "end_line": {"type": "integer", "minimum": 0},
                    "replacement": {"type": "string"}
                },
                "required": ["start_line", "end_line", "replacement"]
            }}},
            "required": ["edits"]
        }),
    }
}

#[derive(Deserialize)]
struct Wrapped {
    edits: Vec<LineEdit>,
}

/// Edits from a tool call's arguments (`{"edits": [...]}` or the array).
fn from_value(v: &Value) -> Result<Vec<LineEdit>, String> {
    if v.is_array() {
        return serde_json::from_value(v.clone()).map_err(|e| e.to_string());
    }
    serde_json::from_value::<Wrapped>(v.clone())
        .map(|w| w.edits)
        .map_err(|e| e.to_string())
}

/// Edits from a text answer: the JSON array (or `{"edits": ...}` object)
/// in it, possibly inside a code fence.
fn from_text(text: &str) -> Result<Vec<LineEdit>, String> {
    let candidates = [
        text.find('[').zip(text.rfind(']')),
        text.find('{').zip(text.rfind('}')),
    ];
    for (a, b) in candidates.into_iter().flatten() {
        if a < b
            && let Ok(v) = serde_json::from_str::<Value>(&text[a..=b])
            && let Ok(edits) = from_value(&v)
        {
            return Ok(edits);
        }
    }
    Err("no JSON list of {start_line, end_line, replacement} in the answer".into())
}

/// A plan must change something and must not write the sketch's markers
/// into the file.
fn check(edits: &[LineEdit]) -> Result<(), String> {
    if edits.is_empty() {
        return Err("it has no edits".into());
    }
    for e in edits {
        if let Some(l) = e.replacement.lines().find(|l| is_marker(l)) {
            return Err(format!(
                "the replacement of {} holds the marker line `{}`, which would be written into the file",
                e.describe(),
                l.trim()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_from_calls_and_text() {
        let v = json!({"edits": [{"start_line": 2, "end_line": 2, "replacement": "x"}]});
        assert_eq!(from_value(&v).unwrap()[0].start_line, 2);
        let t =
            "Here:\n```json\n[{\"start_line\": 1, \"end_line\": 0, \"replacement\": \"a\"}]\n```";
        assert_eq!(from_text(t).unwrap()[0].end_line, 0);
        assert!(from_text("no plan").is_err());
        assert!(check(&[]).is_err());
        let marker = LineEdit {
            start_line: 1,
            end_line: 1,
            replacement: "a\n// ... existing code ...\n".into(),
        };
        assert!(check(&[marker]).unwrap_err().contains("marker"));
    }

    #[test]
    fn configured_from_the_call_or_the_environment() {
        assert_eq!(
            Planner::configured(Some("ollama/x"), Some("http://h/v1")),
            Some(Planner {
                model: "ollama/x".into(),
                base_url: Some("http://h/v1".into())
            })
        );
        assert_eq!(
            Planner::configured(Some(" "), None).map(|p| p.model),
            std::env::var("AG_EDIT_PLANNER")
                .ok()
                .filter(|v| !v.trim().is_empty())
        );
    }
}
