//! What ag-llm sends, and what it makes of real streams: the output limit
//! on every API, tool definitions in other agents' shapes, and llama.cpp's
//! recorded tool call replayed end to end.

use serde_json::{Value, json};

use crate::llm_server::*;
use crate::util::{Env, run};

/// The body ag-llm sent for `model` (the server answers an error, so the
/// call ends after one request).
fn sent_body(env: &Env, model: &str, extra: &[&str]) -> Value {
    let server = Server::start(vec![Reply::Body(
        400,
        vec![("content-type", "application/json".into())],
        br#"{"error":{"message":"scripted refusal"}}"#.to_vec(),
    )]);
    let base = server.url("/v1");
    let mut args = vec!["-m", model, "--base-url", &base, "--api-key", "k", "hi"];
    args.extend_from_slice(extra);
    let r = run(ag_llm(env, &args), None);
    r.expect_code(1);
    let seen = server.seen();
    assert_eq!(seen.len(), 1, "{r}");
    seen[0].body.clone()
}

#[test]
fn the_models_output_limit_is_sent_on_every_api() {
    let env = Env::new();
    // Chat Completions: the table's limit, where only --max-tokens went before.
    let b = sent_body(&env, "groq/llama-3.3-70b-versatile", &[]);
    assert_eq!(b["max_tokens"], 32768, "{b}");
    let b = sent_body(&env, "deepseek/deepseek-chat", &[]);
    assert_eq!(b["max_tokens"], 8192, "{b}");
    // Responses, Gemini and Anthropic.
    let b = sent_body(&env, "openai/gpt-4.1", &[]);
    assert_eq!(b["max_output_tokens"], 32768, "{b}");
    let b = sent_body(&env, "google/gemini-2.5-pro", &[]);
    assert_eq!(b["generationConfig"]["maxOutputTokens"], 65536, "{b}");
    let b = sent_body(&env, "anthropic/claude-sonnet-4-5", &[]);
    assert_eq!(b["max_tokens"], 64000, "{b}");
    // --max-tokens still wins.
    let b = sent_body(
        &env,
        "groq/llama-3.3-70b-versatile",
        &["--max-tokens", "77"],
    );
    assert_eq!(b["max_tokens"], 77, "{b}");
}

#[test]
fn models_json_limits_reach_chat_completions() {
    let env = Env::new();
    env.write(
        ".home/.ag/models.json",
        json!({"providers": {
            "local": {"base_url": "http://127.0.0.1:9/v1", "models": [
                {"id": "coder", "max_output": 1234},
                {"id": "windowed", "context_window": 8192}
            ]},
            "openai": {"api": "openai-chat"}
        }})
        .to_string(),
    );
    let b = sent_body(&env, "local/coder", &[]);
    assert_eq!(b["max_tokens"], 1234, "{b}");
    // A window without a limit: a quarter of it, leaving room for the prompt.
    let b = sent_body(&env, "local/windowed", &[]);
    assert_eq!(b["max_tokens"], 2048, "{b}");
    // OpenAI over Chat Completions spells it max_completion_tokens.
    let b = sent_body(&env, "openai/gpt-4o", &[]);
    assert_eq!(b["max_completion_tokens"], 16384, "{b}");
    assert!(b.get("max_tokens").is_none(), "{b}");
}

#[test]
fn a_model_no_table_knows_gets_no_guessed_limit() {
    let env = Env::new();
    // A guess could be more than the model allows; the server's default applies.
    let b = sent_body(&env, "groq/some-new-model", &[]);
    assert!(b.get("max_tokens").is_none(), "{b}");
    let b = sent_body(&env, "llamacpp/qwen2.5-coder-1.5b", &[]);
    assert!(b.get("max_tokens").is_none(), "{b}");
    // Anthropic requires one.
    let b = sent_body(&env, "anthropic/claude-new-model", &[]);
    assert_eq!(b["max_tokens"], 8192, "{b}");
}

fn realmodel(name: &str) -> Vec<u8> {
    std::fs::read(
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/realmodel")
            .join(name),
    )
    .unwrap()
}

#[test]
fn tool_definitions_in_openai_and_anthropic_shapes_need_no_label() {
    let env = Env::new();
    let schema =
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]});
    let tools = json!([
        {"name": "flat", "description": "OpenAI's own shape", "parameters": schema},
        {"type": "function", "function": {"name": "wrapped", "description": "as Chat Completions sends it", "parameters": schema}},
        {"name": "anthropic", "description": "Anthropic's shape", "input_schema": schema},
        {"name": "bare"}
    ]);
    env.write("tools.json", tools.to_string());
    let server = Server::start(vec![
        sse(fixture("openai__chat_text_basic.sse")),
        sse(fixture("openai__chat_text_basic.sse")),
    ]);
    let base = server.url("/v1");
    let r = run(
        ag_llm(
            &env,
            &[
                "-m",
                "llamacpp/qwen",
                "--base-url",
                &base,
                "--tools",
                "tools.json",
                "hi",
            ],
        ),
        None,
    );
    r.ok();
    // The same definitions inside a JSON request on stdin.
    let request = json!({"model": "llamacpp/qwen", "messages": [{"role": "user", "content": "hi"}], "tools": tools});
    let r = run(
        ag_llm(&env, &["--base-url", &base]),
        Some(request.to_string().as_bytes()),
    );
    r.ok();
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    for s in &seen {
        let sent = s.body["tools"].as_array().unwrap();
        let names: Vec<&str> = sent
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["flat", "wrapped", "anthropic", "bare"]);
        for t in &sent[..3] {
            assert_eq!(t["function"]["parameters"], schema, "{t}");
        }
        assert_eq!(
            sent[1]["function"]["description"],
            "as Chat Completions sends it"
        );
        assert_eq!(sent[3]["function"]["parameters"]["type"], "object");
    }
}

#[test]
fn llamacpp_recorded_tool_call_replays_with_arguments_and_cached_usage() {
    let env = Env::new();
    let recorded: Value =
        serde_json::from_slice(&realmodel("llamacpp_tool_call.request.json")).unwrap();
    let server = Server::start(vec![sse(realmodel("llamacpp_tool_call.sse"))]);
    let base = server.url("/v1");
    // The request as the recording holds it: OpenAI-shaped tools, no labels.
    let request = json!({
        "model": "llamacpp/qwen2.5-coder-1.5b",
        "messages": recorded["request"]["messages"],
        "tools": recorded["request"]["tools"],
    });
    let r = run(
        ag_llm(&env, &["--base-url", &base]),
        Some(request.to_string().as_bytes()),
    );
    r.ok();
    let evs = events(&r);
    let start = evs.iter().find(|e| e["type"] == "tool_call_start").unwrap();
    assert_eq!(start["id"], "zBYeZGGAO1cFRv0wXc1MnIKzcvDeCTA3");
    assert_eq!(start["name"], "read");
    // Arguments came in many small deltas; they arrive whole and parsed.
    assert!(
        evs.iter()
            .filter(|e| e["type"] == "tool_call_delta")
            .count()
            > 5
    );
    let end = evs.iter().find(|e| e["type"] == "tool_call_end").unwrap();
    assert_eq!(
        end["arguments"],
        json!({"file_path": "calc.py", "offset": 1, "limit": 100})
    );
    let done = evs.last().unwrap();
    assert_eq!(done["type"], "done");
    let msg = &done["message"];
    assert_eq!(msg["stop_reason"], "tool_use");
    assert_eq!(msg["content"].as_array().unwrap().len(), 1);
    assert_eq!(msg["content"][0]["type"], "tool_call");
    // 430 prompt tokens of which 18 came from llama.cpp's cache.
    assert_eq!(msg["usage"]["input"], 412);
    assert_eq!(msg["usage"]["cache_read"], 18);
    assert_eq!(msg["usage"]["output"], 36);
    // What was sent matches what ag-llm sent when it was recorded.
    let sent = &server.seen()[0].body;
    assert_eq!(sent["tools"], recorded["request"]["tools"]);
    assert_eq!(sent["messages"], recorded["request"]["messages"]);
}
