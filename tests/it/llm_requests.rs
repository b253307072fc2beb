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
