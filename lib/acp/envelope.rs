//! A line from the editor, judged before the SDK parses it. The SDK answers
//! every message it cannot take as a request with `"id": null`: params that
//! are a string, a `jsonrpc` other than "2.0", a `method` that is a number,
//! nesting past serde_json's 128 levels, a line past ag-acp's length limit.
//! An editor's call then never resolves, as no answer names it. Here a
//! request whose `id` can be read gets its error with that id, and a
//! message that names the field; everything else goes on to the SDK as it
//! came (text that is not JSON is a parse error with a null id there, as
//! JSON-RPC says: an id read from a fragment may be another request's).
//!
//! The line is read as ag-mcp reads its own (`crate::mcp::wire::scan`):
//! the members of the top-level object, their depth measured on a stack
//! rather than by recursion, their bytes not decoded, so that neither
//! nesting 100,000 levels deep nor bytes that are not UTF-8 hide the id.

use serde_json::{Value, json};

use crate::mcp::wire::scan::{Member, scan_object};

/// -32600: not a valid request.
pub const INVALID_REQUEST: i32 = -32600;
/// -32602: the params do not fit.
pub const INVALID_PARAMS: i32 = -32602;

/// How deep a member's value may nest: serde_json refuses a document
/// nested 128 levels, and the message object is the first of them.
pub const MAX_DEPTH: usize = 126;

/// The byte order mark some writers put before a line.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// What to do with one line.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Hand it to the SDK, as this text.
    Pass(String),
    /// Answer it here with this error line (the SDK never sees it).
    Answer(String),
    /// Nothing: a response too long to read (see [`judge_long`]) that
    /// names no request of ag-acp's.
    Drop,
}

/// Judges one line (without its newline).
pub fn judge(line: &[u8]) -> Verdict {
    let line = line.strip_prefix(BOM).unwrap_or(line);
    let (members, scanned) = scan_object(line);
    if scanned.is_err() {
        return pass(line);
    }
    let last = |key: &str| members.iter().rev().find(|m| m.key == key);
    // Notifications and responses are the SDK's: JSON-RPC answers neither.
    let (Some(id), Some(method)) = (last("id"), last("method")) else {
        return pass(line);
    };
    let Some(id) = usable_id(id) else {
        return pass(line);
    };
    let answer = |code: i32, message: String| Verdict::Answer(error_line(&id, code, &message));
    for m in &members {
        let code = if m.key == "params" {
            INVALID_PARAMS
        } else {
            INVALID_REQUEST
        };
        if let Err(e) = std::str::from_utf8(m.value) {
            return answer(
                code,
                format!(
                    "`{}` holds bytes that are not UTF-8 (after its first {} bytes); JSON text must be UTF-8",
                    m.key,
                    e.valid_up_to()
                ),
            );
        }
        if m.depth > MAX_DEPTH {
            return answer(
                code,
                format!(
                    "`{}` nests {} levels deep; ag-acp takes at most {MAX_DEPTH}",
                    m.key, m.depth
                ),
            );
        }
    }
    if last("result").is_some() || last("error").is_some() {
        return answer(
            INVALID_REQUEST,
            "invalid request: a message with `method` and `id` is a request, which has no `result` or `error`".into(),
        );
    }
    let version = last("jsonrpc").map(|m| serde_json::from_slice::<Value>(m.value));
    if !matches!(version, Some(Ok(Value::String(ref v))) if v == "2.0") {
        let what = match last("jsonrpc") {
            None => "it is missing".to_string(),
            Some(m) => format!("not {}", shown(m)),
        };
        return answer(
            INVALID_REQUEST,
            format!("invalid request: `jsonrpc` must be \"2.0\", {what}"),
        );
    }
    if kind(method.value) != "a string" {
        return answer(
            INVALID_REQUEST,
            format!(
                "invalid request: `method` must be a string (the method's name), not {}",
                kind(method.value)
            ),
        );
    }
    if let Some(params) = last("params")
        && !matches!(kind(params.value), "an object" | "an array" | "null")
    {
        return answer(
            INVALID_REQUEST,
            format!(
                "invalid request: `params` must be an object (or left out), not {}",
                kind(params.value)
            ),
        );
    }
    if id.as_number().is_some_and(|n| n.as_i64().is_none()) {
        return answer(
            INVALID_REQUEST,
            format!("invalid request: `id` must be a string or an integer, not {id}"),
        );
    }
    pass(line)
}

/// The verdict on a line longer than the limit, from its first bytes
/// `kept`: a request is answered with the id read there (or a null one);
/// a response to one of ag-acp's requests becomes an error response to it,
/// so that the request does not wait for ever.
pub fn judge_long(kept: &[u8], limit: usize) -> Verdict {
    let kept = kept.strip_prefix(BOM).unwrap_or(kept);
    let (members, _) = scan_object(kept);
    let has = |key: &str| members.iter().any(|m| m.key == key);
    let id = members
        .iter()
        .rev()
        .find(|m| m.key == "id")
        .and_then(usable_id);
    let limit = size(limit);
    if !has("method") && (has("result") || has("error")) {
        return match id {
            Some(id) => Verdict::Pass(error_line(
                &id,
                INVALID_REQUEST,
                &format!(
                    "the editor's answer was longer than {limit}, ag-acp's limit for one message, and was dropped"
                ),
            )),
            None => Verdict::Drop,
        };
    }
    Verdict::Answer(error_line(
        &id.unwrap_or(Value::Null),
        INVALID_REQUEST,
        &format!(
            "invalid request: the line is longer than {limit}, ag-acp's limit for one message; send a large file as a resource link (the model reads it with its tools) rather than embedded"
        ),
    ))
}

/// A limit as a person reads it.
fn size(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// A JSON-RPC error response.
pub fn error_line(id: &Value, code: i32, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

/// The line as text for the SDK. Bytes that are not UTF-8 outside a
/// request's members (which [`judge`] answers) become U+FFFD, so that a
/// notification with one still arrives.
fn pass(line: &[u8]) -> Verdict {
    Verdict::Pass(String::from_utf8_lossy(line).into_owned())
}

/// The id of a request, when it is one JSON-RPC allows (a string or a
/// number) and it can be read.
fn usable_id(m: &Member<'_>) -> Option<Value> {
    if !m.complete || !matches!(kind(m.value), "a string" | "a number") {
        return None;
    }
    match serde_json::from_slice(m.value) {
        Ok(v @ (Value::String(_) | Value::Number(_))) => Some(v),
        _ => None,
    }
}

/// What kind of JSON value these bytes begin, without parsing it.
fn kind(value: &[u8]) -> &'static str {
    match value.first() {
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

/// A member's value as the editor wrote it, cut short when long.
fn shown(m: &Member<'_>) -> String {
    let text = String::from_utf8_lossy(m.value);
    match text.char_indices().nth(40) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::TransportFrame;

    fn answer(line: &[u8]) -> (Value, i64, String) {
        match judge(line) {
            Verdict::Answer(l) => {
                let v: Value = serde_json::from_str(&l).unwrap();
                (
                    v["id"].clone(),
                    v["error"]["code"].as_i64().unwrap(),
                    v["error"]["message"].as_str().unwrap().to_string(),
                )
            }
            other => panic!(
                "expected an answer to {}, got {other:?}",
                String::from_utf8_lossy(line)
            ),
        }
    }

    /// Whether the SDK takes the line as a well-formed message.
    fn sdk_takes(line: &str) -> bool {
        matches!(TransportFrame::parse_json(line), TransportFrame::Single(_))
    }

    fn nested(depth: usize) -> String {
        format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn a_bad_envelope_with_a_usable_id_is_answered_with_that_id_and_the_field() {
        for (line, id, code, field) in [
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"session/list","params":""}"#,
                json!(1),
                INVALID_REQUEST,
                "`params`",
            ),
            (
                r#"{"jsonrpc":"1.0","id":"a","method":"session/list","params":{}}"#,
                json!("a"),
                INVALID_REQUEST,
                "`jsonrpc`",
            ),
            (
                r#"{"id":"a","method":"session/list"}"#,
                json!("a"),
                INVALID_REQUEST,
                "`jsonrpc`",
            ),
            (
                r#"{"jsonrpc":"2.0","id":2,"method":5,"params":{}}"#,
                json!(2),
                INVALID_REQUEST,
                "`method`",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1.5,"method":"session/list"}"#,
                json!(1.5),
                INVALID_REQUEST,
                "`id`",
            ),
            (
                r#"{"jsonrpc":"2.0","id":3,"method":"session/list","result":{}}"#,
                json!(3),
                INVALID_REQUEST,
                "`result`",
            ),
        ] {
            let (got_id, got_code, message) = answer(line.as_bytes());
            assert_eq!((got_id, got_code), (id, code as i64), "{line}");
            assert!(message.contains(field), "{line}: {message}");
            // Each is one the SDK would have answered with a null id.
            assert!(!sdk_takes(line), "{line}");
        }
    }

    #[test]
    fn nesting_past_serde_jsons_limit_keeps_the_id_wherever_it_stands() {
        let deep = nested(100_000);
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":"deep","method":"session/prompt","params":{{"x":{deep}}}}}"#
        );
        let (id, code, message) = answer(line.as_bytes());
        assert_eq!((id, code), (json!("deep"), INVALID_PARAMS as i64));
        assert!(
            message.contains("`params`") && message.contains("levels deep"),
            "{message}"
        );
        // The id after the deep member.
        let line = format!(r#"{{"jsonrpc":"2.0","method":"session/list","extra":{deep},"id":7}}"#);
        assert_eq!(
            answer(line.as_bytes()).0,
            json!(7),
            "the id after the deep member"
        );
        // The limit is the SDK's own: one level more is what it refuses.
        let at = |d: usize| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}}"#,
                nested(d)
            )
        };
        assert!(sdk_takes(&at(MAX_DEPTH)));
        assert!(matches!(judge(at(MAX_DEPTH).as_bytes()), Verdict::Pass(_)));
        assert!(!sdk_takes(&at(MAX_DEPTH + 1)));
        assert_eq!(
            answer(at(MAX_DEPTH + 1).as_bytes()).1,
            INVALID_PARAMS as i64
        );
    }

    #[test]
    fn bytes_that_are_not_utf8_in_a_request_are_named_not_replaced() {
        let line = b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"session/prompt\",\"params\":{\"prompt\":\"caf\xe9\"}}";
        let (id, code, message) = answer(line);
        assert_eq!((id, code), (json!(5), INVALID_PARAMS as i64));
        assert!(message.contains("not UTF-8"), "{message}");
        // In a notification they are the SDK's (as U+FFFD).
        let line = b"{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{\"sessionId\":\"\xff\"}}";
        assert!(matches!(judge(line), Verdict::Pass(t) if t.contains('\u{fffd}')));
    }

    #[test]
    fn good_messages_and_unreadable_ones_go_to_the_sdk_unchanged() {
        for line in [
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#,
            r#"{"jsonrpc":"2.0","id":"x","method":"session/list","params":null}"#,
            r#"{"jsonrpc":"2.0","id":"x","method":"session/list"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"session/list"}"#,
            r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{"outcome":{"outcome":"cancelled"}}}"#,
        ] {
            assert_eq!(judge(line.as_bytes()), Verdict::Pass(line.into()), "{line}");
            assert!(sdk_takes(line), "{line}");
        }
        // Not JSON, a batch, an id that cannot be echoed: the SDK's
        // answers with a null id are right for these.
        for line in [
            "not json",
            "[1, 2]",
            r#"{"jsonrpc":"2.0","id":1,"method":"#,
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"session/list"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"session/list","params":{"a":tru}}"#,
        ] {
            assert_eq!(judge(line.as_bytes()), Verdict::Pass(line.into()), "{line}");
        }
        // A byte order mark is left off.
        assert_eq!(
            judge(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/list\"}"),
            Verdict::Pass(r#"{"jsonrpc":"2.0","id":1,"method":"session/list"}"#.into())
        );
    }

    #[test]
    fn an_over_long_line_is_answered_with_the_id_from_its_start() {
        let Verdict::Answer(l) = judge_long(
            br#"{"jsonrpc":"2.0","id":42,"method":"session/prompt","params":{"prompt":[{"type":"image","data":"AAAA"#,
            64 << 20,
        ) else {
            panic!()
        };
        let v: Value = serde_json::from_str(&l).unwrap();
        assert_eq!(v["id"], 42);
        assert_eq!(v["error"]["code"], INVALID_REQUEST);
        assert!(
            v["error"]["message"].as_str().unwrap().contains("64 MiB"),
            "{v}"
        );
        // Without an id in its start: a null one.
        let Verdict::Answer(l) =
            judge_long(br#"{"jsonrpc":"2.0","method":"x","params":{"a":"#, 1000)
        else {
            panic!()
        };
        assert!(l.contains("\"id\":null") && l.contains("1000 bytes"), "{l}");
        // The editor's answer to ag-acp's request: an error for that
        // request, which the SDK then resolves.
        let Verdict::Pass(l) = judge_long(
            br#"{"jsonrpc":"2.0","id":3,"result":{"content":"aaaa"#,
            64 << 20,
        ) else {
            panic!()
        };
        assert!(sdk_takes(&l), "{l}");
        assert!(l.contains("\"id\":3") && l.contains("64 MiB"), "{l}");
        assert_eq!(
            judge_long(br#"{"jsonrpc":"2.0","result":{"content":"aaaa"#, 64 << 20),
            Verdict::Drop
        );
    }
}
