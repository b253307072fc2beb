//! ag-mcp given the requests a fuzzer or a confused client sends: invalid
//! UTF-8, params of the wrong type, nesting past any parser's depth,
//! unknown methods, text that is not JSON. Each request that is JSON gets
//! exactly one response with its id and the JSON-RPC 2.0 error code that
//! says what is wrong; text that is not JSON gets a parse error with a null
//! id (never an id read from the fragment); and the session goes on.

use serde_json::{Value, json};

use crate::mcp::{Session, text};
use crate::util::Env;

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;

/// Sends each line, then a ping; returns every line ag-mcp printed up to
/// the ping's response, which is checked and left out.
fn answers(s: &mut Session, lines: &[Vec<u8>]) -> Vec<Value> {
    for l in lines {
        s.send_raw(l);
    }
    s.send(json!({"jsonrpc": "2.0", "id": "last", "method": "ping"}));
    let mut got = s.lines_until(json!("last"));
    let ping = got.pop().unwrap();
    assert_eq!(ping["result"], json!({}), "{ping}");
    got
}

/// The one response to request `id`, which must be an error with `code`.
fn only_error(got: &[Value], id: Value, code: i64) -> String {
    let mine: Vec<&Value> = got.iter().filter(|m| m["id"] == id).collect();
    assert_eq!(mine.len(), 1, "responses to {id} in {got:#?}");
    let m = mine[0];
    assert_eq!(m["jsonrpc"], "2.0", "{m}");
    assert_eq!(m["error"]["code"], code, "{m}");
    m["error"]["message"].as_str().unwrap().to_string()
}

fn deep(levels: usize) -> String {
    format!("{}0{}", "[".repeat(levels), "]".repeat(levels))
}

#[test]
fn each_malformed_request_gets_one_answer_with_its_id_and_the_right_code() {
    let env = Env::new();
    env.write("notes.txt", "alpha\n");
    let (mut s, _) = Session::ready(&env, &["--tools", "read"]);
    let lines: Vec<Vec<u8>> = vec![
        // Invalid UTF-8 in a file name: no response at all before.
        b"{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":\"read\",\"arguments\":{\"file_path\":\"caf\xe9.txt\"}}}".to_vec(),
        // A string for params: answered without the id before.
        br#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":""}"#.to_vec(),
        // A number for arguments: "method not found: tools/call" before.
        br#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"read","arguments":5}}"#.to_vec(),
        // 100,000 levels deep, the id after the depth.
        format!(
            r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"read","arguments":{{"file_path":{}}}}},"id":"deep"}}"#,
            deep(100_000)
        )
        .into_bytes(),
        br#"{"jsonrpc":"2.0","id":13,"method":"no/such/method","params":{}}"#.to_vec(),
        br#"{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":7}}"#.to_vec(),
        br#"{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"read","arguments":{"file_path":nul}}}"#.to_vec(),
        br#"{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"read","arguments":{"file_path":"notes.txt"}"#.to_vec(),
    ];
    let got = answers(&mut s, &lines);
    let m = only_error(&got, json!(10), INVALID_PARAMS);
    assert!(m.contains("UTF-8"), "{m}");
    let m = only_error(&got, json!(11), INVALID_REQUEST);
    assert!(m.contains("params"), "{m}");
    let m = only_error(&got, json!(12), INVALID_PARAMS);
    assert!(m.contains("arguments"), "{m}");
    let m = only_error(&got, json!("deep"), INVALID_PARAMS);
    assert!(m.contains("deep"), "{m}");
    let m = only_error(&got, json!(13), METHOD_NOT_FOUND);
    assert!(m.contains("no/such/method"), "{m}");
    only_error(&got, json!(14), INVALID_PARAMS);
    // A bad literal, and a line cut short after the id: not JSON, so a
    // parse error with a null id each, not the ids of the fragments.
    let parse_errors = got
        .iter()
        .filter(|m| m["id"].is_null() && m["error"]["code"] == PARSE_ERROR)
        .count();
    assert_eq!(parse_errors, 2, "{got:#?}");
    assert!(
        !got.iter().any(|m| m["id"] == 15 || m["id"] == 16),
        "{got:#?}"
    );
    assert_eq!(got.len(), lines.len(), "{got:#?}");
    // The session goes on.
    let r = s.call(20, "read", json!({"file_path": "notes.txt"}));
    assert!(text(&r).contains("alpha"), "{r}");
    assert_eq!(s.finish(), Some(0));
}

#[test]
fn lines_with_no_readable_id_get_a_null_id_and_notifications_get_nothing() {
    let env = Env::new();
    let (mut s, _) = Session::ready(&env, &["--tools", "read"]);
    let lines: Vec<Vec<u8>> = vec![
        b"this is not json".to_vec(),
        br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.to_vec(),
        br#"{"jsonrpc":"2.0","id":{"not":"an id"},"method":"ping"}"#.to_vec(),
        // Notifications, malformed or unknown, are never answered.
        b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"\xff\"}}".to_vec(),
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#.to_vec(),
        br#"{"jsonrpc":"2.0","method":"notifications/whatever"}"#.to_vec(),
        b"".to_vec(),
    ];
    let got = answers(&mut s, &lines);
    let codes: Vec<(Value, Value)> = got
        .iter()
        .map(|m| (m["id"].clone(), m["error"]["code"].clone()))
        .collect();
    assert_eq!(
        codes,
        [
            (Value::Null, json!(PARSE_ERROR)),
            (Value::Null, json!(INVALID_REQUEST)),
            (Value::Null, json!(INVALID_REQUEST)),
        ],
        "{got:#?}"
    );
    assert_eq!(s.finish(), Some(0));
}

#[test]
fn a_malformed_request_before_initialize_is_answered_and_the_handshake_still_works() {
    let env = Env::new();
    let mut s = Session::start(&env, &["--tools", "read"]);
    s.send_raw(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":"soon"}"#);
    let r = s.response(json!(0));
    assert_eq!(r["error"]["code"], INVALID_REQUEST, "{r}");
    s.send_raw(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5}}"#);
    let r = s.response(json!(1));
    assert_eq!(r["error"]["code"], INVALID_PARAMS, "{r}");
    // The specification's own initialize, word for word.
    s.send(json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {"roots": {"listChanged": true}, "sampling": {}, "elicitation": {}},
        "clientInfo": {"name": "ExampleClient", "title": "Example Client Display Name", "version": "1.0.0"}
    }}));
    let r = s.response(json!(2));
    assert_eq!(r["result"]["serverInfo"]["name"], "ag-mcp", "{r}");
    s.notify("notifications/initialized", json!({}));
    let r = s.request(3, "tools/list", json!({"cursor": "optional-cursor-value"}));
    assert_eq!(r["result"]["tools"][0]["name"], "read", "{r}");
    assert_eq!(s.finish(), Some(0));
}

#[test]
fn a_line_past_the_limit_is_answered_with_its_id_without_being_kept() {
    let env = Env::new();
    let (mut s, _) = Session::ready(&env, &["--tools", "write"]);
    let mut line = br#"{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"write","arguments":{"file_path":"big.txt","content":""#.to_vec();
    line.resize(line.len() + (65 << 20), b'a');
    line.extend_from_slice(br#""}}}"#);
    let got = answers(&mut s, &[line]);
    let m = only_error(&got, json!("big"), INVALID_REQUEST);
    assert!(m.contains("64 MiB"), "{m}");
    assert!(!env.path().join("big.txt").exists());
    assert_eq!(s.finish(), Some(0));
}

#[test]
fn a_truncated_line_is_a_parse_error_with_a_null_id_not_the_fragments_id() {
    // The line of the issue: a fragment whose `"id": 1` would collide with
    // a real request 1 (an `initialize`, in the fuzz run that found it).
    let env = Env::new();
    let input =
        b"{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"ping\"}\n{\"jsonrpc\": \"2.0\", \"id\": 1\n";
    let r = crate::util::run(env.cmd(crate::bin!("ag-mcp")), Some(input));
    let got = r.json_lines();
    assert_eq!(got.len(), 2, "{r}");
    assert_eq!(got[0]["id"], 12, "{r}");
    assert_eq!(got[0]["result"], json!({}), "{r}");
    assert_eq!(got[1]["id"], Value::Null, "{r}");
    assert_eq!(got[1]["error"]["code"], PARSE_ERROR, "{r}");
    assert!(
        got[1]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("parse error"),
        "{r}"
    );
}
