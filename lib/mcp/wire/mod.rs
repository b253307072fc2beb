//! ag-mcp's stdio transport: one JSON-RPC message per line, checked before
//! rmcp sees it. rmcp drops lines it cannot parse (invalid UTF-8, nesting
//! past serde_json's depth limit), answers some without their `id`, and
//! takes a known method with malformed params for an unknown method. A
//! client then waits forever for a response, or gets one it cannot match.
//! Here every request that is JSON gets exactly one response with its
//! `id`, and the error codes mean what JSON-RPC 2.0 says: -32700 the text
//! is not JSON (always with `"id": null`: an id read from a fragment may be
//! another request's, and a second answer to it would confuse the client),
//! -32600 not a valid request, -32601 no such method, -32602 the params do
//! not fit the method. Notifications and responses are never answered,
//! however malformed.

use std::collections::VecDeque;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, InitializeRequestParams,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

use scan::{Member, scan_object};

use crate::protocol::json_kind;

// Shared with ag-acp (`crate::acp::envelope`), which reads its lines the same way.
pub mod scan;

/// The longest line taken. No real request comes near it; past it, the
/// line is answered without being held in memory.
pub const MAX_LINE: usize = 64 << 20;

/// How much of an over-long line is kept to find its `id` in.
const KEPT_OF_LONG_LINE: usize = 64 << 10;

/// serde_json refuses values nested deeper than 128 levels; a member is
/// judged against a little less, as it sits inside the message object.
const MAX_DEPTH: usize = 126;

pub const PARSE_ERROR: i32 = -32700;
pub const INVALID_REQUEST: i32 = -32600;
pub const METHOD_NOT_FOUND: i32 = -32601;
pub const INVALID_PARAMS: i32 = -32602;

/// The requests of the MCP specification that a client sends a server.
/// One of these whose params rmcp could not take is an invalid-params
/// error, not an unknown method.
const MCP_REQUESTS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "logging/setLevel",
    "server/discover",
    "subscriptions/listen",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
];

/// What to do with one line.
#[derive(Debug)]
pub enum Verdict {
    /// A well-formed message for rmcp.
    Pass(Box<ClientJsonRpcMessage>),
    /// An error response to send, to this `id` (`null` when none could be
    /// read).
    Answer {
        id: Value,
        code: i32,
        message: String,
    },
    /// Nothing to answer: a blank line, or a malformed notification or
    /// response (JSON-RPC never answers those).
    Drop,
}

impl Verdict {
    fn answer(id: &Value, code: i32, message: impl Into<String>) -> Verdict {
        Verdict::Answer {
            id: id.clone(),
            code,
            message: message.into(),
        }
    }

    /// The response line for an answer.
    pub fn response_line(id: &Value, code: i32, message: &str) -> String {
        let mut line =
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
                .to_string();
        line.push('\n');
        line
    }
}

/// Why a member's value cannot be taken, if it cannot: bytes that are not
/// UTF-8, nesting past the depth limit, or text that is not JSON (the last
/// is a parse error; the others are about a value that is JSON in shape).
enum Unreadable {
    NotUtf8(usize),
    TooDeep(usize),
    NotJson(String),
}

fn read_member(m: &Member<'_>) -> Result<Value, Unreadable> {
    if !m.complete {
        return Err(Unreadable::NotJson("the value does not end".into()));
    }
    if let Err(e) = std::str::from_utf8(m.value) {
        return Err(Unreadable::NotUtf8(e.valid_up_to()));
    }
    if m.depth > MAX_DEPTH {
        return Err(Unreadable::TooDeep(m.depth));
    }
    serde_json::from_slice(m.value).map_err(|e| Unreadable::NotJson(e.to_string()))
}

fn describe(key: &str, why: &Unreadable) -> String {
    match why {
        Unreadable::NotUtf8(at) => format!(
            "`{key}` holds bytes that are not UTF-8 (after its first {at} bytes); JSON text must be UTF-8"
        ),
        Unreadable::TooDeep(depth) => {
            format!("`{key}` nests {depth} levels deep; ag-mcp takes at most {MAX_DEPTH}")
        }
        Unreadable::NotJson(e) => format!("`{key}` is not JSON: {e}"),
    }
}

/// The `id` of a request, if its member can be read and is one JSON-RPC
/// allows (a string or a number).
fn read_id(members: &[Member<'_>]) -> Option<Value> {
    let m = members.iter().rev().find(|m| m.key == "id")?;
    match read_member(m) {
        Ok(v @ (Value::String(_) | Value::Number(_))) => Some(v),
        _ => None,
    }
}

/// Whether what was read of a message is a response (the client's answer
/// to a request of the server's): never answered.
fn is_response(members: &[Member<'_>]) -> bool {
    let has = |key: &str| members.iter().any(|m| m.key == key);
    !has("method") && (has("result") || has("error"))
}

/// Judges one line (without its newline).
pub fn judge(line: &[u8]) -> Verdict {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Drop;
    }
    let (members, scanned) = scan_object(line);
    let has = |key: &str| members.iter().any(|m| m.key == key);
    if let Err(e) = scanned {
        // Not a JSON object. JSON-RPC answers text it cannot parse with a
        // null id, whatever id a fragment seems to hold: `{"id": 1` cut
        // short is no request 1. A response of the client's (to a server
        // request) is never answered.
        if serde_json::from_slice::<serde::de::IgnoredAny>(line).is_ok() {
            return Verdict::answer(
                &Value::Null,
                INVALID_REQUEST,
                "a JSON-RPC message is one JSON object (MCP has no batches since 2025-06-18)",
            );
        }
        if is_response(&members) {
            return Verdict::Drop;
        }
        return Verdict::answer(&Value::Null, PARSE_ERROR, format!("parse error: {e}"));
    }
    if !has("method") || !has("id") {
        // A notification, or the client's response to a server request:
        // handed on if well-formed, and never answered.
        return match strict(&members) {
            Ok(msg) => Verdict::Pass(Box::new(msg)),
            Err(_) => Verdict::Drop,
        };
    }
    let Some(id) = read_id(&members) else {
        return Verdict::answer(
            &Value::Null,
            INVALID_REQUEST,
            "invalid request: `id` must be a string or a number",
        );
    };
    judge_request(&id, &members)
}

/// Judges a request whose id is known.
fn judge_request(id: &Value, members: &[Member<'_>]) -> Verdict {
    let mut object = Map::new();
    for m in members {
        match read_member(m) {
            Ok(v) => {
                object.insert(m.key.clone(), v);
            }
            Err(why) => {
                let code = match (&why, m.key.as_str()) {
                    // The line is not JSON after all: no id is trusted.
                    (Unreadable::NotJson(_), _) => {
                        return Verdict::answer(
                            &Value::Null,
                            PARSE_ERROR,
                            format!("parse error: {}", describe(&m.key, &why)),
                        );
                    }
                    (_, "params") => INVALID_PARAMS,
                    _ => INVALID_REQUEST,
                };
                return Verdict::answer(id, code, describe(&m.key, &why));
            }
        }
    }
    if object.get("jsonrpc") != Some(&json!("2.0")) {
        return Verdict::answer(
            id,
            INVALID_REQUEST,
            "invalid request: `jsonrpc` must be \"2.0\"",
        );
    }
    let Some(method) = object
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return Verdict::answer(
            id,
            INVALID_REQUEST,
            "invalid request: `method` must be a string",
        );
    };
    match object.get("params") {
        // Some clients send `null` for no params.
        Some(Value::Null) => {
            object.remove("params");
        }
        None | Some(Value::Object(_) | Value::Array(_)) => {}
        Some(other) => {
            return Verdict::answer(
                id,
                INVALID_REQUEST,
                format!(
                    "invalid request: `params` must be an object (or left out), not {}",
                    json_kind(other)
                ),
            );
        }
    }
    if id.as_number().is_some_and(|n| n.as_i64().is_none()) {
        return Verdict::answer(
            id,
            INVALID_REQUEST,
            "invalid request: `id` must be a string or an integer",
        );
    }
    let params = object.get("params").cloned();
    let known = MCP_REQUESTS.contains(&method.as_str());
    let not_found = || {
        Verdict::answer(
            id,
            METHOD_NOT_FOUND,
            format!(
                "method not found: `{method}`; ag-mcp serves initialize, ping, tools/list and tools/call"
            ),
        )
    };
    // rmcp takes a method whose params do not fit its type for a custom
    // method, or refuses the message when they are not an object.
    match serde_json::from_value::<ClientJsonRpcMessage>(Value::Object(object)) {
        Ok(ClientJsonRpcMessage::Request(r))
            if matches!(r.request, ClientRequest::CustomRequest(_)) =>
        {
            if known {
                Verdict::answer(id, INVALID_PARAMS, params_fault(&method, params))
            } else {
                not_found()
            }
        }
        Ok(msg) => Verdict::Pass(Box::new(msg)),
        Err(_) if known => Verdict::answer(id, INVALID_PARAMS, params_fault(&method, params)),
        Err(_) if params.is_some() => not_found(),
        Err(e) => Verdict::answer(id, INVALID_REQUEST, format!("invalid request: {e}")),
    }
}

/// What is wrong with the params of an MCP request that rmcp refused.
fn params_fault(method: &str, params: Option<Value>) -> String {
    let params = params.unwrap_or(Value::Object(Map::new()));
    let why = match method {
        _ if !params.is_object() => format!("params must be an object, not {}", json_kind(&params)),
        "tools/call" => match params.get("arguments") {
            Some(a) if !a.is_object() && !a.is_null() => format!(
                "`arguments` must be an object of the tool's arguments, not {}",
                json_kind(a)
            ),
            _ => serde_json::from_value::<CallToolRequestParams>(params)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default(),
        },
        "initialize" => serde_json::from_value::<InitializeRequestParams>(params)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default(),
        _ => String::new(),
    };
    if why.is_empty() {
        format!("invalid params for `{method}`: they do not have the shape MCP gives them")
    } else {
        format!("invalid params for `{method}`: {why}")
    }
}

/// A notification or response, parsed strictly.
fn strict(members: &[Member<'_>]) -> Result<ClientJsonRpcMessage, ()> {
    let mut object = Map::new();
    for m in members {
        object.insert(m.key.clone(), read_member(m).map_err(|_| ())?);
    }
    serde_json::from_value(Value::Object(object)).map_err(|_| ())
}

/// The verdict on a line longer than [`MAX_LINE`], from its first bytes.
fn judge_long(kept: &[u8]) -> Verdict {
    let (members, _) = scan_object(kept);
    if is_response(&members) {
        return Verdict::Drop;
    }
    let id = read_id(&members).unwrap_or(Value::Null);
    Verdict::answer(
        &id,
        INVALID_REQUEST,
        format!(
            "invalid request: the line is longer than {} MiB, ag-mcp's limit",
            MAX_LINE >> 20
        ),
    )
}

/// Writes one line and flushes, holding the writer meanwhile so that lines
/// never interleave.
async fn write_line<W: AsyncWrite + Unpin>(
    write: Arc<Mutex<Option<W>>>,
    line: String,
) -> std::io::Result<()> {
    let mut guard = write.lock().await;
    let Some(w) = guard.as_mut() else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotConnected,
            "the transport is closed",
        ));
    };
    w.write_all(line.as_bytes()).await?;
    w.flush().await
}

/// A line as read: whole, or too long (only its first bytes kept).
enum Line {
    Whole,
    TooLong,
    End,
}

/// The transport: reads and judges lines, hands good messages to rmcp,
/// and answers the others itself through the same writer.
pub struct LineTransport<R, W> {
    read: BufReader<R>,
    /// The line being read; kept across cancelled reads (rmcp polls
    /// `receive` in a `select!`).
    line: Vec<u8>,
    /// The current line passed [`MAX_LINE`]; its rest is being skipped.
    skipping: bool,
    write: Arc<Mutex<Option<W>>>,
    /// Answers being written; awaited before the transport ends, so that
    /// none is lost.
    answers: VecDeque<JoinHandle<()>>,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub fn new(read: R, write: W) -> Self {
        LineTransport {
            read: BufReader::new(read),
            line: Vec::new(),
            skipping: false,
            write: Arc::new(Mutex::new(Some(write))),
            answers: VecDeque::new(),
        }
    }

    /// Reads up to the next newline. Cancel-safe: what was read stays in
    /// `self.line`.
    async fn read_line(&mut self) -> std::io::Result<Line> {
        loop {
            let chunk = self.read.fill_buf().await?;
            if chunk.is_empty() {
                // A last line without its newline is still a message.
                return Ok(if self.line.is_empty() && !self.skipping {
                    Line::End
                } else if self.skipping {
                    self.skipping = false;
                    Line::TooLong
                } else {
                    Line::Whole
                });
            }
            let newline = chunk.iter().position(|&b| b == b'\n');
            let take = newline.map_or(chunk.len(), |i| i + 1);
            if !self.skipping {
                let room = MAX_LINE.saturating_sub(self.line.len());
                if take > room {
                    let keep = KEPT_OF_LONG_LINE.saturating_sub(self.line.len());
                    self.line.extend_from_slice(&chunk[..keep.min(take)]);
                    self.line.truncate(KEPT_OF_LONG_LINE);
                    self.skipping = true;
                } else {
                    self.line.extend_from_slice(&chunk[..take]);
                }
            }
            self.read.consume(take);
            if newline.is_some() {
                return Ok(if std::mem::take(&mut self.skipping) {
                    Line::TooLong
                } else {
                    Line::Whole
                });
            }
        }
    }

    async fn drain_answers(&mut self) {
        while let Some(h) = self.answers.pop_front() {
            let _ = h.await;
        }
    }
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let line = serde_json::to_string(&item)
            .map(|mut l| {
                l.push('\n');
                l
            })
            .map_err(std::io::Error::other);
        let write = line.map(|l| write_line(self.write.clone(), l));
        async move { write?.await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            self.answers.retain(|h| !h.is_finished());
            let kind = match self.read_line().await {
                Ok(k) => k,
                Err(_) => Line::End,
            };
            let verdict = match kind {
                Line::End => {
                    self.drain_answers().await;
                    return None;
                }
                Line::Whole => {
                    let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
                    judge(line.strip_suffix(b"\r").unwrap_or(line))
                }
                Line::TooLong => judge_long(&self.line),
            };
            self.line.clear();
            match verdict {
                Verdict::Pass(msg) => return Some(*msg),
                Verdict::Drop => {}
                Verdict::Answer { id, code, message } => {
                    let line = Verdict::response_line(&id, code, &message);
                    // Spawned, so that a cancelled `receive` cannot cut a
                    // response in half.
                    let write = write_line(self.write.clone(), line);
                    self.answers.push_back(tokio::spawn(async move {
                        let _ = write.await;
                    }));
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.drain_answers().await;
        let w = self.write.lock().await.take();
        if let Some(mut w) = w {
            w.flush().await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &[u8]) -> (Value, i32, String) {
        match judge(line) {
            Verdict::Answer { id, code, message } => (id, code, message),
            other => panic!(
                "expected an answer to {}, got {other:?}",
                String::from_utf8_lossy(line)
            ),
        }
    }

    fn passes(line: &str) -> ClientJsonRpcMessage {
        match judge(line.as_bytes()) {
            Verdict::Pass(m) => *m,
            other => panic!("expected {line} to pass, got {other:?}"),
        }
    }

    fn nested(depth: usize) -> String {
        format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn the_specifications_messages_pass() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{}},"clientInfo":{"name":"ExampleClient","title":"Example Client Display Name","version":"1.0.0"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"optional-cursor-value"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"New York"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"123","reason":"User requested cancellation"}}"#,
            r#"{"jsonrpc":"2.0","id":"123","method":"ping"}"#,
            "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\",\"params\":null}",
            r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
        ] {
            passes(line);
        }
    }

    #[test]
    fn invalid_utf8_in_the_arguments_is_invalid_params_with_the_id() {
        let line = b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"read\",\"arguments\":{\"file_path\":\"caf\xe9\"}}}";
        let (id, code, message) = answer(line);
        assert_eq!((id, code), (json!(5), INVALID_PARAMS));
        assert!(message.contains("not UTF-8"), "{message}");
        // Elsewhere than in the params, the request itself is invalid.
        let line = b"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools/\xffcall\"}";
        assert_eq!(answer(line).0, json!("a"));
        assert_eq!(answer(line).1, INVALID_REQUEST);
        // And the id after the bad bytes is still found.
        let line = b"{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"\xc3\x28\"},\"id\":9}";
        assert_eq!(answer(line).0, json!(9));
    }

    #[test]
    fn params_that_are_not_an_object_keep_the_id() {
        let (id, code, message) =
            answer(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":""}"#);
        assert_eq!((id, code), (json!(2), INVALID_REQUEST));
        assert!(message.contains("`params` must be an object"), "{message}");
        let (id, code, _) =
            answer(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":[1]}"#);
        assert_eq!((id, code), (json!(2), INVALID_PARAMS));
    }

    #[test]
    fn arguments_that_are_not_an_object_are_invalid_params_not_an_unknown_method() {
        let (id, code, message) = answer(
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":5}}"#,
        );
        assert_eq!((id, code), (json!(3), INVALID_PARAMS));
        assert!(
            message.contains("`arguments` must be an object"),
            "{message}"
        );
        let (_, code, message) =
            answer(br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":7}}"#);
        assert_eq!(code, INVALID_PARAMS);
        assert!(message.contains("tools/call"), "{message}");
        let (_, code, _) = answer(
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":5}}"#,
        );
        assert_eq!(code, INVALID_PARAMS);
    }

    #[test]
    fn an_unknown_method_is_method_not_found_and_names_it() {
        let (id, code, message) = answer(br#"{"jsonrpc":"2.0","id":4,"method":"nope"}"#);
        assert_eq!((id, code), (json!(4), METHOD_NOT_FOUND));
        assert!(message.contains("`nope`"), "{message}");
    }

    #[test]
    fn a_request_nested_a_hundred_thousand_levels_keeps_its_id() {
        let deep = nested(100_000);
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{{"name":"read","arguments":{{"x":{deep}}}}}}}"#
        );
        let (id, code, message) = answer(line.as_bytes());
        assert_eq!((id, code), (json!("deep"), INVALID_PARAMS));
        assert!(message.contains("levels deep"), "{message}");
        // Deep in another member, after the id.
        let line = format!(r#"{{"id":1,"jsonrpc":"2.0","method":"ping","extra":{deep}}}"#);
        assert_eq!(answer(line.as_bytes()).1, INVALID_REQUEST);
        // Just inside the limit it is taken.
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"read","arguments":{{"x":{}}}}}}}"#,
            nested(MAX_DEPTH - 2)
        );
        passes(&line);
    }

    #[test]
    fn text_that_is_not_json_is_a_parse_error_with_a_null_id() {
        // The id of a fragment may be another request's: never echoed.
        for line in [
            &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"[..],
            br#"{"jsonrpc": "2.0", "id": 1"#,
            b"not json",
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"a":tru}}"#,
            br#"{"id":1,"method":"x"} {"id":2}"#,
        ] {
            let (id, code, _) = answer(line);
            assert_eq!(
                (id, code),
                (Value::Null, PARSE_ERROR),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        // A notification cut short cannot be told from a request whose id
        // was to come: answered, with a null id.
        let (id, code, _) =
            answer(br#"{"jsonrpc":"2.0","method":"notifications/initialized","params":5"#);
        assert_eq!((id, code), (Value::Null, PARSE_ERROR));
        let (id, code, _) = answer(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
        assert_eq!((id, code), (Value::Null, INVALID_REQUEST));
    }

    #[test]
    fn a_request_without_a_usable_id_or_version_is_invalid() {
        let (id, code, _) = answer(br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#);
        assert_eq!((id, code), (Value::Null, INVALID_REQUEST));
        let (id, code, _) = answer(br#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#);
        assert_eq!((id, code), (Value::Null, INVALID_REQUEST));
        let (id, code, _) = answer(br#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#);
        assert_eq!((id, code), (json!(1), INVALID_REQUEST));
        let (id, code, _) = answer(br#"{"id":1,"method":"ping"}"#);
        assert_eq!((id, code), (json!(1), INVALID_REQUEST));
        let (id, code, _) = answer(br#"{"jsonrpc":"2.0","id":1,"method":5}"#);
        assert_eq!((id, code), (json!(1), INVALID_REQUEST));
        // An id rmcp cannot hold is still echoed as it came.
        let (id, code, _) = answer(br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#);
        assert_eq!((id, code), (json!(1.5), INVALID_REQUEST));
    }

    #[test]
    fn malformed_notifications_and_responses_are_never_answered() {
        for line in [
            &b""[..],
            b"   ",
            b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":\"\xff\"}",
            br#"{"jsonrpc":"2.0","id":1,"result":"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{},"error":{}}"#,
        ] {
            assert!(
                matches!(judge(line), Verdict::Drop),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn an_over_long_line_is_answered_with_the_id_from_its_start() {
        let (id, code, message) = match judge_long(br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"write","arguments":{"content":"aaaa"#) {
            Verdict::Answer { id, code, message } => (id, code, message),
            other => panic!("{other:?}"),
        };
        assert_eq!((id, code), (json!(42), INVALID_REQUEST));
        assert!(message.contains("64 MiB"), "{message}");
        assert!(matches!(
            judge_long(br#"{"jsonrpc":"2.0","id":3,"result":{"a":"aaaa"#),
            Verdict::Drop
        ));
    }
}
