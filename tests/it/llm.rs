//! ag-llm end to end, against HTTP servers on 127.0.0.1 started by the
//! tests that replay real provider streams: each API's text, tool calls,
//! thinking and usage, errors mid-stream and over HTTP, retries, abort,
//! record and replay, and the command line itself.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::bin;
use crate::util::{Env, Run, run};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/wire")
            .join(name),
    )
    .unwrap()
}

/// How the server answers one request.
#[derive(Clone)]
enum Reply {
    /// A status, headers and a whole body, then the connection closes.
    Body(u16, Vec<(&'static str, String)>, Vec<u8>),
    /// An SSE body's first bytes, then the connection stays open (until the client goes).
    Hang(Vec<u8>),
    /// Accept and close without answering.
    Drop,
}

fn sse(body: Vec<u8>) -> Reply {
    Reply::Body(
        200,
        vec![("content-type", "text/event-stream".into())],
        body,
    )
}

/// An error body from a `.json` wire fixture: `{http_status, headers, body, body_raw}`.
fn http_error(name: &str) -> Reply {
    let v: Value = serde_json::from_slice(&fixture(name)).unwrap();
    let status = v["http_status"].as_u64().unwrap() as u16;
    let body = match v["body_raw"].as_str() {
        Some(raw) => raw.as_bytes().to_vec(),
        None => v["body"].to_string().into_bytes(),
    };
    let mut headers = vec![("content-type", "application/json".to_string())];
    if let Some(h) = v["headers"].as_object() {
        for (k, val) in h {
            if k == "x-should-retry" {
                headers.push(("x-should-retry", val.as_str().unwrap().to_string()));
            }
        }
    }
    Reply::Body(status, headers, body)
}

/// A request as the server saw it.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A server answering the scripted replies in order (a 500 once they run out).
struct Server {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    fn start(replies: Vec<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            let mut replies = replies.into_iter();
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { continue };
                let reply = replies.next().unwrap_or(Reply::Body(
                    500,
                    vec![],
                    b"{\"error\":{\"message\":\"no more replies\"}}".to_vec(),
                ));
                if !matches!(reply, Reply::Drop) {
                    match read_request(&mut conn) {
                        Some(s) => log.lock().unwrap().push(s),
                        None => continue,
                    }
                }
                std::thread::spawn(move || answer(conn, reply));
            }
        });
        Server { port, seen }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn read_request(conn: &mut TcpStream) -> Option<Seen> {
    let mut reader = BufReader::new(conn.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let path = line.split_whitespace().nth(1)?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        headers.push((k.trim().to_string(), v.trim().to_string()));
    }
    let len: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    Some(Seen {
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}

fn answer(mut conn: TcpStream, reply: Reply) {
    match reply {
        Reply::Body(status, headers, body) => {
            let mut head = format!("HTTP/1.1 {status} X\r\nconnection: close\r\n");
            for (k, v) in headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str("\r\n");
            let _ = conn.write_all(head.as_bytes());
            // In pieces, so the client sees a stream.
            for piece in body.chunks(100) {
                if conn.write_all(piece).is_err() {
                    return;
                }
                let _ = conn.flush();
            }
        }
        Reply::Hang(body) => {
            let _ = conn.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n",
            );
            let _ = conn.write_all(&body);
            let _ = conn.flush();
            // Hold the connection until the client closes it.
            let mut buf = [0u8; 64];
            while matches!(conn.read(&mut buf), Ok(n) if n > 0) {}
        }
        Reply::Drop => {}
    }
}

/// ag-llm in `env` with short retry waits.
fn ag_llm(env: &Env, args: &[&str]) -> std::process::Command {
    let mut c = env.cmd(bin!("ag-llm"));
    c.args(args)
        .env("AG_LLM_RETRY_BASE_MS", "1")
        .env("AG_LLM_RETRY_MAX_MS", "20");
    c
}

fn events(r: &Run) -> Vec<Value> {
    let lines = r.json_lines();
    assert!(!lines.is_empty(), "no events\n{r}");
    lines
}

fn last(r: &Run) -> Value {
    events(r).pop().unwrap()
}

#[test]
fn chat_completions_text_streams_plain() {
    let env = Env::new();
    let server = Server::start(vec![sse(fixture("openai__chat_text_basic.sse"))]);
    let base = server.url("/v1");
    let r = run(
        ag_llm(
            &env,
            &[
                "-m",
                "deepseek/deepseek-chat",
                "--base-url",
                &base,
                "--api-key",
                "k-123",
                "hello",
            ],
        ),
        None,
    );
    r.ok();
    assert_eq!(
        r.stdout(),
        "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, I recommend checking a reliable weather website or a weather app.\n"
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].path, "/v1/chat/completions");
    assert_eq!(seen[0].header("authorization"), Some("Bearer k-123"));
    assert_eq!(seen[0].body["model"], "deepseek-chat");
    assert_eq!(seen[0].body["stream"], true);
    assert_eq!(seen[0].body["stream_options"]["include_usage"], true);
    assert_eq!(
        seen[0].body["messages"],
        json!([{"role": "user", "content": "hello"}])
    );
}

#[test]
fn chat_completions_events_usage_and_cost() {
    let env = Env::new();
    let server = Server::start(vec![sse(fixture("deepseek__chat_reasoning_text.sse"))]);
    let base = server.url("/v1");
    let r = run(
        ag_llm(
            &env,
            &[
                "-m",
                "deepseek/deepseek-reasoner",
                "--base-url",
                &base,
                "--json",
                "count the r's",
            ],
        ),
        None,
    );
    // No key needed? DeepSeek needs one: the call is refused before any request.
    r.expect_code(1);
    assert!(server.seen().is_empty());
    let ev = last(&r);
    assert_eq!(ev["type"], "error");
    assert!(
        ev["error"].as_str().unwrap().contains("DEEPSEEK_API_KEY"),
        "{ev}"
    );

    let mut c = ag_llm(
        &env,
        &[
            "-m",
            "deepseek/deepseek-reasoner",
            "--base-url",
            &base,
            "--json",
            "count the r's",
        ],
    );
    c.env("DEEPSEEK_API_KEY", "dk");
    let r = run(c, None);
    r.ok();
    let evs = events(&r);
    assert_eq!(
        evs[0],
        json!({"type": "start", "model": "deepseek/deepseek-reasoner"})
    );
    assert!(evs.iter().any(|e| e["type"] == "thinking_delta"));
    let done = evs.last().unwrap();
    assert_eq!(done["type"], "done");
    let msg = &done["message"];
    assert_eq!(msg["content"][0]["type"], "thinking");
    assert_eq!(
        msg["content"][1]["text"],
        "The word \"strawberry\" contains three \"r\"s."
    );
    assert_eq!(msg["stop_reason"], "stop");
    assert_eq!(msg["usage"]["input"], 18);
    assert_eq!(msg["usage"]["output"], 219);
    let cost = msg["usage"]["cost"]["total"].as_f64().unwrap();
    let want = (18.0 * 0.28 + 219.0 * 0.42) / 1e6;
    assert!((cost - want).abs() < 1e-12, "{cost} vs {want}");
    assert_eq!(msg["model"], "deepseek/deepseek-reasoner");
    assert_eq!(msg["api"], "openai-chat");
    assert_eq!(
        evs.iter()
            .filter(|e| e["type"] == "done" || e["type"] == "error")
            .count(),
        1
    );
}

#[test]
fn chat_completions_parallel_tool_calls_with_tools_file() {
    let env = Env::new();
    let server = Server::start(vec![sse(fixture("openai__chat_parallel_tool_calls.sse"))]);
    let base = server.url("/v1");
    env.write(
        "tools.jsonl",
        concat!(
            "{\"name\":\"GetWeatherArgs\",\"label\":\"Weather\",\"description\":\"weather\",\"parameters\":{\"type\":\"object\",\"properties\":{}}}\n",
            "{\"name\":\"get_stock_price\",\"description\":\"stocks\",\"parameters\":{\"type\":\"object\"}}\n"
        ),
    );
    let r = run(
        ag_llm(
            &env,
            &[
                "-m",
                "ollama/llama3",
                "--base-url",
                &base,
                "--tools",
                "tools.jsonl",
                "--json",
                "weather and stocks",
            ],
        ),
        None,
    );
    r.ok();
    let evs = events(&r);
    let starts: Vec<&Value> = evs
        .iter()
        .filter(|e| e["type"] == "tool_call_start")
        .collect();
    assert_eq!(starts.len(), 2);
    assert_eq!(starts[0]["id"], "call_JMW1whyEaYG438VE1OIflxA2");
    let msg = &evs.last().unwrap()["message"];
    assert_eq!(msg["stop_reason"], "tool_use");
    assert_eq!(
        msg["content"][1]["arguments"],
        json!({"ticker": "AAPL", "exchange": "NASDAQ"})
    );
    let body = &server.seen()[0].body;
    assert_eq!(body["tools"][1]["function"]["name"], "get_stock_price");
    assert_eq!(body["tools"][0]["type"], "function");
    // Ollama needs no key, and none is sent.
    assert_eq!(server.seen()[0].header("authorization"), None);
}

#[test]
fn anthropic_thinking_signature_usage_and_request_shape() {
    let env = Env::new();
    let server = Server::start(vec![sse(fixture(
        "anthropic__thinking_signature_unicode.sse",
    ))]);
    let base = server.url("");
    let mut c = ag_llm(
        &env,
        &[
            "-m",
            "anthropic/claude-sonnet-4-5",
            "--base-url",
            &base,
            "--reasoning",
            "high",
            "--system",
            "be brief",
            "--json",
        ],
    );
    c.env("ANTHROPIC_API_KEY", "ak-1");
    let r = run(c, Some(b"what is 925 / 5?"));
    r.ok();
    let msg = &last(&r)["message"];
    assert_eq!(msg["content"][0]["type"], "thinking");
    assert!(
        msg["content"][0]["signature"]
            .as_str()
            .unwrap()
            .starts_with("EvQB")
    );
    assert_eq!(msg["content"][1]["text"], "925 ÷ 5 = 185");
    assert_eq!(msg["usage"]["input"], 69);
    assert_eq!(msg["usage"]["output"], 53);
    let seen = &server.seen()[0];
    assert_eq!(seen.path, "/v1/messages");
    assert_eq!(seen.header("x-api-key"), Some("ak-1"));
    assert_eq!(seen.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(seen.body["thinking"]["type"], "enabled");
    assert!(
        seen.body["max_tokens"].as_u64().unwrap()
            > seen.body["thinking"]["budget_tokens"].as_u64().unwrap()
    );
    assert_eq!(seen.body["system"][0]["cache_control"]["type"], "ephemeral");
    let user = &seen.body["messages"][0];
    assert_eq!(user["content"][0]["text"], "what is 925 / 5?");
    assert_eq!(user["content"][0]["cache_control"]["type"], "ephemeral");
}

#[test]
fn responses_reasoning_and_tool_call() {
    let env = Env::new();
    let server = Server::start(vec![sse(fixture(
        "openai__responses_multistep_step1_reasoning_function_call.sse",
    ))]);
    let base = server.url("/v1");
    let mut c = ag_llm(
        &env,
        &[
            "-m",
            "openai/gpt-5.1-codex-max",
            "--base-url",
            &base,
            "--json",
            "compute",
        ],
    );
    c.env("OPENAI_API_KEY", "ok-1");
    let r = run(c, None);
    r.ok();
    let msg = &last(&r)["message"];
    assert_eq!(msg["stop_reason"], "tool_use");
    let call = msg["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "tool_call")
        .unwrap();
    assert_eq!(call["id"], "call_AB6AaRZ1FYZB2RwS6A5vbdqn");
    assert_eq!(call["arguments"], json!({"a": 12, "b": 7, "op": "add"}));
    let seen = &server.seen()[0];
    assert_eq!(seen.path, "/v1/responses");
    assert_eq!(seen.body["store"], false);
    assert_eq!(seen.body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(seen.body["reasoning"]["summary"], "auto");
}

#[test]
fn gemini_function_call_gets_an_id() {
    let env = Env::new();
    let server = Server::start(vec![sse(fixture("gemini__single_function_call_part.sse"))]);
    let base = server.url("/v1beta");
    let mut c = ag_llm(
        &env,
        &[
            "-m",
            "google/gemini-3-pro-preview",
            "--base-url",
            &base,
            "--json",
            "weather?",
        ],
    );
    c.env("GEMINI_API_KEY", "gk-1");
    let r = run(c, None);
    r.ok();
    let msg = &last(&r)["message"];
    let call = msg["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "tool_call")
        .unwrap();
    assert!(call["id"].as_str().unwrap().starts_with("call_"));
    assert_eq!(call["arguments"], json!({"location": "San Francisco"}));
    assert_eq!(msg["stop_reason"], "tool_use");
    let seen = &server.seen()[0];
    assert_eq!(
        seen.path,
        "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse"
    );
    assert_eq!(seen.header("x-goog-api-key"), Some("gk-1"));
    assert_eq!(
        seen.body["contents"][0],
        json!({"role": "user", "parts": [{"text": "weather?"}]})
    );
}

/// An Anthropic stream whose first text is followed by an `error` event.
fn anthropic_error_after_text() -> Vec<u8> {
    let full = String::from_utf8(fixture("anthropic__text_with_ping.sse")).unwrap();
    let cut = full.find("event: content_block_stop").unwrap();
    let mut body = full[..cut].to_string();
    body.push_str("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n");
    body.into_bytes()
}

#[test]
fn mid_stream_error_after_output_is_reported_with_partial_content() {
    let env = Env::new();
    let server = Server::start(vec![sse(anthropic_error_after_text())]);
    let base = server.url("");
    let r = run(
        ag_llm(
            &env,
            &[
                "-m",
                "anthropic/claude-haiku-4-5",
                "--base-url",
                &base,
                "--api-key",
                "x",
                "--json",
                "hi",
            ],
        ),
        None,
    );
    r.expect_code(1);
    let ev = last(&r);
    assert_eq!(ev["type"], "error");
    assert!(ev["error"].as_str().unwrap().contains("Overloaded"), "{ev}");
    assert_eq!(ev["message"]["stop_reason"], "error");
    assert!(
        ev["message"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Hello!")
    );
    // Output had streamed: no retry.
    assert_eq!(server.seen().len(), 1);
}

#[test]
fn mid_stream_error_before_output_is_retried() {
    let env = Env::new();
    let early = b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":1}}}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n".to_vec();
    let server = Server::start(vec![
        sse(early),
        sse(fixture("anthropic__text_with_ping.sse")),
    ]);
    let base = server.url("");
    let r = run(
        ag_llm(
            &env,
            &[
                "-m",
                "anthropic/claude-haiku-4-5",
                "--base-url",
                &base,
                "--api-key",
                "x",
                "--json",
                "hi",
            ],
        ),
        None,
    );
    r.ok();
    let evs = events(&r);
    assert_eq!(evs.iter().filter(|e| e["type"] == "start").count(), 1);
    assert_eq!(evs.last().unwrap()["type"], "done");
    assert_eq!(server.seen().len(), 2);
}

#[test]
fn http_401_is_not_retried_and_the_key_never_shows() {
    let env = Env::new();
    let server = Server::start(vec![http_error("openai__error_401_invalid_api_key.json")]);
    let base = server.url("/v1");
    let key = "sk-proj-SECRETSECRET1234";
    let r = run(
        ag_llm(
            &env,
            &[
                "-m",
                "openai/gpt-4o",
                "--base-url",
                &base,
                "--api-key",
                key,
                "hi",
            ],
        ),
        None,
    );
    r.expect_code(1);
    assert_eq!(server.seen().len(), 1);
    let err = r.stderr();
    assert!(err.contains("Incorrect API key provided"), "{err}");
    assert!(
        err.contains("hint:") && err.contains("OPENAI_API_KEY"),
        "{err}"
    );
    assert!(
        !err.contains("SECRET") && !r.stdout().contains("SECRET"),
        "{r}"
    );
    assert_eq!(
        server.seen()[0].header("authorization"),
        Some(&*format!("Bearer {key}"))
    );
}

#[test]
fn overloaded_and_rate_limited_calls_are_retried() {
    let env = Env::new();
    let server = Server::start(vec![
        http_error("anthropic__error_529_overloaded.json"),
        Reply::Body(
            429,
            vec![("retry-after", "0".into())],
            b"{\"error\":{\"type\":\"rate_limit_error\",\"message\":\"slow down\"}}".to_vec(),
        ),
        Reply::Drop,
        sse(fixture("anthropic__haiku_tool_use_stream_a.sse")),
    ]);
    let base = server.url("");
    let r = run(
        ag_llm(
            &env,
            &[
                "-m",
                "anthropic/claude-haiku-4-5",
                "--base-url",
                &base,
                "--api-key",
                "x",
                "--json",
                "weather",
            ],
        ),
        None,
    );
    r.ok();
    let msg = &last(&r)["message"];
    assert_eq!(msg["stop_reason"], "tool_use");
    assert_eq!(
        msg["content"][0]["arguments"],
        json!({"location": "San Francisco, CA", "units": "f"})
    );
    assert_eq!(
        server.seen().len(),
        3,
        "the dropped connection is not logged"
    );
}

#[test]
fn retries_run_out_with_a_clear_error() {
    let env = Env::new();
    let server = Server::start(vec![
        http_error("gemini__error_429_resource_exhausted_retry_info.json"),
        http_error("gemini__error_429_resource_exhausted_retry_info.json"),
        http_error("gemini__error_429_resource_exhausted_retry_info.json"),
    ]);
    let base = server.url("/v1beta");
    let mut c = ag_llm(
        &env,
        &[
            "-m",
            "google/gemini-2.5-flash",
            "--base-url",
            &base,
            "--api-key",
            "x",
            "--json",
            "hi",
        ],
    );
    c.env("AG_LLM_RETRIES", "2");
    let r = run(c, None);
    r.expect_code(1);
    assert_eq!(server.seen().len(), 3);
    let ev = last(&r);
    assert_eq!(ev["type"], "error");
    let e = ev["error"].as_str().unwrap();
    assert!(
        e.contains("429") && e.contains("RESOURCE_EXHAUSTED") && e.contains("quota"),
        "{e}"
    );
}

#[test]
fn sigterm_aborts_with_the_partial_content() {
    let env = Env::new();
    let full = String::from_utf8(fixture("anthropic__text_with_ping.sse")).unwrap();
    let cut = full.find("event: content_block_stop").unwrap();
    let server = Server::start(vec![Reply::Hang(full.as_bytes()[..cut].to_vec())]);
    let base = server.url("");
    let mut c = ag_llm(
        &env,
        &[
            "-m",
            "anthropic/claude-haiku-4-5",
            "--base-url",
            &base,
            "--api-key",
            "x",
            "--json",
            "hi",
        ],
    );
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "stream ended early: {lines:?}"
        );
        let v: Value = serde_json::from_str(&line).unwrap();
        let text = v["type"] == "text_delta";
        lines.push(v);
        if text {
            break;
        }
    }
    // Deltas are written as they arrive: the whole answer is not needed first.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    let done: Value = serde_json::from_str(rest.lines().last().unwrap()).unwrap();
    assert_eq!(done["type"], "done");
    assert_eq!(done["message"]["stop_reason"], "aborted");
    assert!(
        done["message"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Hello!")
    );
}

#[test]
fn json_request_on_stdin_and_continuation_across_providers() {
    let env = Env::new();
    let server = Server::start(vec![sse(fixture("openai__chat_text_basic.sse"))]);
    let base = server.url("/v1");
    let request = json!({
        "model": "ollama/qwen3",
        "system": "sys",
        "max_tokens": 100,
        "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "model": "anthropic/claude-sonnet-4-5", "api": "anthropic", "stop_reason": "tool_use", "content": [
                {"type": "thinking", "thinking": "let me look", "signature": "sig"},
                {"type": "tool_call", "id": "toolu_01|weird id", "name": "get_weather", "arguments": {"city": "Paris"}}
            ]},
            {"role": "tool_result", "tool_call_id": "toolu_01|weird id", "tool_name": "get_weather", "content": [{"type": "text", "text": "sunny"}], "is_error": false},
            {"role": "assistant", "stop_reason": "aborted", "content": [{"type": "tool_call", "id": "lost", "name": "x", "arguments": {}}]},
            {"role": "user", "content": "thanks"}
        ]
    });
    let r = run(
        ag_llm(&env, &["--base-url", &base]),
        Some(request.to_string().as_bytes()),
    );
    r.ok();
    assert_eq!(last(&r)["type"], "done");
    let body = &server.seen()[0].body;
    assert_eq!(body["max_tokens"], 100);
    let msgs = body["messages"].as_array().unwrap();
    assert_eq!(msgs[0], json!({"role": "system", "content": "sys"}));
    // Anthropic's thinking became text; the id was made acceptable, the same on both sides.
    assert!(msgs[2]["content"].as_str().unwrap().contains("let me look"));
    let id = msgs[2]["tool_calls"][0]["id"].as_str().unwrap();
    assert!(
        id.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
        "{id}"
    );
    assert_eq!(msgs[3]["tool_call_id"], id);
    assert_eq!(msgs[3]["content"], "sunny");
    // The aborted turn is left out.
    assert_eq!(msgs.len(), 5);
    assert_eq!(msgs[4], json!({"role": "user", "content": "thanks"}));
}

#[test]
fn record_then_replay_without_network() {
    let env = Env::new();
    let server = Server::start(vec![sse(fixture("gemini__thinking_text.sse"))]);
    let base = server.url("/v1beta");
    let args = [
        "-m",
        "google/gemini-2.5-pro",
        "--base-url",
        &base,
        "--api-key",
        "x",
        "--json",
        "count",
    ];
    let mut rec = args.to_vec();
    rec.extend(["--record", "rec"]);
    let first = run(ag_llm(&env, &rec), None);
    first.ok();
    // Replay against a port nobody listens on, and with no key.
    let dead = "http://127.0.0.1:9/v1beta";
    let second = run(
        ag_llm(
            &env,
            &[
                "-m",
                "google/gemini-2.5-pro",
                "--base-url",
                dead,
                "--json",
                "count",
                "--replay",
                "rec",
            ],
        ),
        None,
    );
    second.ok();
    let strip = |r: &Run| {
        let mut v = last(r);
        v["message"]["timestamp"] = Value::Null;
        v
    };
    assert_eq!(strip(&first), strip(&second));
    assert_eq!(server.seen().len(), 1);
    let other = run(
        ag_llm(
            &env,
            &[
                "-m",
                "google/gemini-2.5-pro",
                "--json",
                "other prompt",
                "--replay",
                "rec",
            ],
        ),
        None,
    );
    other.expect_code(1);
    assert!(
        last(&other)["error"]
            .as_str()
            .unwrap()
            .contains("no recording")
    );
}

#[test]
fn unknown_models_of_known_providers_work_and_unknown_providers_do_not() {
    let env = Env::new();
    let server = Server::start(vec![sse(fixture(
        "openai__chat_text_usage_obfuscation.sse",
    ))]);
    let base = server.url("/v1");
    let r = run(
        ag_llm(
            &env,
            &[
                "-m",
                "vllm/brand-new-model",
                "--base-url",
                &base,
                "--json",
                "x",
            ],
        ),
        None,
    );
    r.ok();
    let msg = &last(&r)["message"];
    assert_eq!(msg["usage"]["output"], 300);
    assert_eq!(msg["usage"]["cost"]["total"], 0.0);

    let r = run(ag_llm(&env, &["-m", "nosuch/model", "x"]), None);
    r.expect_code(1);
    assert!(
        r.stderr().contains("unknown model `nosuch/model`"),
        "{}",
        r.stderr()
    );
}

#[test]
fn config_adds_a_provider_and_list_models_shows_it() {
    let env = Env::new();
    let server = Server::start(vec![sse(fixture("openai__chat_single_tool_call.sse"))]);
    env.write(
        ".home/.ag/models.json",
        json!({"providers": {"mybox": {
            "base_url": server.url("/api"),
            "api": "openai-chat",
            "api_key_env": "MYBOX_KEY",
            "models": [{"id": "coder", "context_window": 32768, "max_output": 4096, "prices": {"input": 1.0, "output": 2.0}}]
        }}})
        .to_string(),
    );
    let list = run(ag_llm(&env, &["--list-models"]), None);
    list.ok();
    assert!(list.stdout().contains("mybox/coder"), "{}", list.stdout());
    assert!(list.stdout().contains("anthropic/claude-sonnet-4-5"));
    let mut c = ag_llm(&env, &["-m", "mybox/coder", "--json", "weather"]);
    c.env("MYBOX_KEY", "mk");
    let r = run(c, None);
    r.ok();
    let seen = &server.seen()[0];
    assert_eq!(seen.path, "/api/chat/completions");
    assert_eq!(seen.header("authorization"), Some("Bearer mk"));
    let msg = &last(&r)["message"];
    assert_eq!(msg["content"][0]["name"], "GetWeatherArgs");
    let cost = msg["usage"]["cost"]["total"].as_f64().unwrap();
    assert!((cost - (76.0 * 1.0 + 24.0 * 2.0) / 1e6).abs() < 1e-12);
}

#[test]
fn usage_errors() {
    let env = Env::new();
    let r = run(ag_llm(&env, &["hello"]), None);
    r.expect_code(2);
    assert!(r.stderr().contains("no model"), "{}", r.stderr());
    let r = run(
        ag_llm(&env, &["-m", "openai/gpt-4o"]),
        Some(b"{\"messages\": 5}"),
    );
    r.expect_code(2);
    assert!(r.stderr().contains("not a valid request"), "{}", r.stderr());
    let r = run(ag_llm(&env, &["--reasoning", "extreme"]), None);
    r.expect_code(2);
    let r = run(ag_llm(&env, &["--help"]), None);
    r.ok();
    assert!(r.stdout().contains("--list-models"));
}

#[test]
fn an_error_body_with_status_200_is_an_error_and_an_empty_one_is_retried() {
    let env = Env::new();
    let server = Server::start(vec![
        Reply::Body(200, vec![], Vec::new()),
        Reply::Body(
            200,
            vec![("content-type", "application/json".into())],
            b"{\"error\": {\"message\": \"model is loading\"}}".to_vec(),
        ),
    ]);
    let base = server.url("/v1");
    let r = run(
        ag_llm(&env, &["-m", "llamacpp/any", "--base-url", &base, "hi"]),
        None,
    );
    r.expect_code(1);
    assert!(r.stderr().contains("model is loading"), "{r}");
    assert_eq!(server.seen().len(), 2);
}

#[test]
fn a_closed_stdout_ends_the_call_quietly() {
    let env = Env::new();
    let mut body = String::new();
    for _ in 0..20_000 {
        body.push_str(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"more text \"}}]}\n\n",
        );
    }
    body.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
    let server = Server::start(vec![sse(body.into_bytes())]);
    let base = server.url("/v1");
    let mut c = ag_llm(
        &env,
        &["-m", "ollama/x", "--base-url", &base, "--json", "hi"],
    );
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    out.read_exact(&mut first).unwrap();
    drop(out); // like `ag-llm ... | head -c 16`
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}

#[test]
fn list_models_as_json_lines() {
    let env = Env::new();
    let mut c = ag_llm(&env, &["--list-models", "--json"]);
    c.env("ANTHROPIC_API_KEY", "x");
    let r = run(c, None);
    r.ok();
    let lines = r.json_lines();
    let sonnet = lines
        .iter()
        .find(|m| m["model"] == "anthropic/claude-sonnet-4-5")
        .unwrap();
    assert_eq!(sonnet["api"], "anthropic");
    assert_eq!(sonnet["key"], "set");
    assert!(sonnet["context_window"].as_u64().unwrap() > 0);
    let gpt = lines.iter().find(|m| m["provider"] == "openai").unwrap();
    assert_eq!(gpt["key"], "missing");
    // Nothing about the key itself.
    assert!(!r.stdout().contains("\"x\""));
}
