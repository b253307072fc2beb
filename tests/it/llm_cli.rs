//! ag-llm's command line: a JSON request on stdin, record and replay,
//! the model table and config, usage errors, a closed stdout.

use std::io::Read;
use std::process::Stdio;

use serde_json::{Value, json};

use crate::llm_server::*;
use crate::util::{Env, Run, run};

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

    // A set-up error: exit 2, before any event.
    let r = run(ag_llm(&env, &["-m", "nosuch/model", "--json", "x"]), None);
    r.expect_code(2);
    assert_eq!(r.stdout(), "");
    assert!(
        r.stderr()
            .contains("unknown provider `nosuch` in `nosuch/model`"),
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
