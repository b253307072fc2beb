//! ag-llm against HTTP servers on 127.0.0.1 replaying real provider
//! streams: each API's text, tool calls, thinking and usage and the
//! request it was sent, errors mid-stream and over HTTP, retries, abort.

use std::io::{BufRead, BufReader, Read};
use std::process::Stdio;

use serde_json::{Value, json};

use crate::llm_server::*;
use crate::util::{Env, run};

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
    // No key needed? DeepSeek needs one: a set-up error before any request or event.
    r.expect_code(2);
    assert!(server.seen().is_empty());
    assert_eq!(r.stdout(), "");
    assert!(r.stderr().contains("DEEPSEEK_API_KEY"), "{r}");

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
fn reasoning_off_asks_openai_for_the_least_the_model_takes() {
    let env = Env::new();
    for (model, sent) in [
        ("gpt-5-mini", "minimal"),
        ("gpt-5.1", "none"),
        ("o4-mini", "low"),
    ] {
        let server = Server::start(vec![sse(fixture(
            "openai__responses_multistep_step1_reasoning_function_call.sse",
        ))]);
        let base = server.url("/v1");
        let model = format!("openai/{model}");
        let args = [
            "-m",
            &model,
            "--base-url",
            &base,
            "--reasoning",
            "off",
            "--json",
            "hi",
        ];
        let mut c = ag_llm(&env, &args);
        c.env("OPENAI_API_KEY", "ok-1");
        run(c, None).ok();
        assert_eq!(
            server.seen()[0].body["reasoning"]["effort"],
            sent,
            "{model}"
        );
    }
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
