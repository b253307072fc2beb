//! Structured output (`--output-schema`): ag-loop and ag-llm against a
//! scripted server speaking each API's wire shape (OpenAI Responses, Chat
//! Completions, Anthropic Messages, Gemini). A native answer, an invalid
//! answer then a valid retry, answers still invalid after the retries,
//! tools before the answer; the structured-output field each API receives;
//! the fallback to the system prompt; broken schemas; `--quiet` output.

use serde_json::{Value, json};

use crate::bin;
use crate::llm_server::{Reply, Server, sse};
use crate::util::{Env, Run, run};

/// What the scripted model says in one turn.
enum Say {
    Text(&'static str),
    Call(&'static str, Value),
}

/// The four wire shapes, each with a model that takes schemas natively
/// alongside tools.
const APIS: &[(&str, &str)] = &[
    ("responses", "openai/gpt-5"),
    ("chat", "vllm/qwen3-coder"),
    ("anthropic", "anthropic/claude-sonnet-4-5"),
    ("gemini", "google/gemini-3-pro-preview"),
];

fn frames(lines: &[(Option<&str>, Value)]) -> Vec<u8> {
    let mut out = String::new();
    for (event, data) in lines {
        if let Some(e) = event {
            out.push_str(&format!("event: {e}\n"));
        }
        out.push_str(&format!("data: {data}\n\n"));
    }
    out.into_bytes()
}

/// One turn as the API streams it.
fn stream(api: &str, say: &Say) -> Vec<u8> {
    match (api, say) {
        ("chat", Say::Text(t)) => {
            let mut b = frames(&[
                (
                    None,
                    json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": t}}]}),
                ),
                (
                    None,
                    json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                              "usage": {"prompt_tokens": 10, "completion_tokens": 5}}),
                ),
            ]);
            b.extend_from_slice(b"data: [DONE]\n\n");
            b
        }
        ("chat", Say::Call(name, args)) => {
            let mut b = frames(&[
                (
                    None,
                    json!({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
                    {"index": 0, "id": "call_1", "type": "function",
                     "function": {"name": name, "arguments": args.to_string()}}]}}]}),
                ),
                (
                    None,
                    json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
                              "usage": {"prompt_tokens": 10, "completion_tokens": 5}}),
                ),
            ]);
            b.extend_from_slice(b"data: [DONE]\n\n");
            b
        }
        ("responses", Say::Text(t)) => frames(&[
            (
                Some("response.output_item.added"),
                json!({"type": "response.output_item.added",
                "output_index": 0, "item": {"type": "message", "id": "m1", "role": "assistant", "content": []}}),
            ),
            (
                Some("response.output_text.delta"),
                json!({"type": "response.output_text.delta",
                "output_index": 0, "content_index": 0, "delta": t}),
            ),
            (
                Some("response.output_item.done"),
                json!({"type": "response.output_item.done",
                "output_index": 0, "item": {"type": "message", "id": "m1", "role": "assistant",
                "content": [{"type": "output_text", "text": t}]}}),
            ),
            (
                Some("response.completed"),
                json!({"type": "response.completed", "response": {
                "status": "completed", "usage": {"input_tokens": 10, "output_tokens": 5}}}),
            ),
        ]),
        ("responses", Say::Call(name, args)) => frames(&[
            (
                Some("response.output_item.added"),
                json!({"type": "response.output_item.added",
                "output_index": 0, "item": {"type": "function_call", "id": "fc1", "call_id": "call_1",
                "name": name, "arguments": ""}}),
            ),
            (
                Some("response.function_call_arguments.delta"),
                json!({"type": "response.function_call_arguments.delta",
                "output_index": 0, "delta": args.to_string()}),
            ),
            (
                Some("response.output_item.done"),
                json!({"type": "response.output_item.done",
                "output_index": 0, "item": {"type": "function_call", "id": "fc1", "call_id": "call_1",
                "name": name, "arguments": args.to_string()}}),
            ),
            (
                Some("response.completed"),
                json!({"type": "response.completed", "response": {
                "status": "completed", "usage": {"input_tokens": 10, "output_tokens": 5}}}),
            ),
        ]),
        ("anthropic", say) => {
            let (block, delta, stop) = match say {
                Say::Text(t) => (
                    json!({"type": "text", "text": ""}),
                    json!({"type": "text_delta", "text": t}),
                    "end_turn",
                ),
                Say::Call(name, args) => (
                    json!({"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}),
                    json!({"type": "input_json_delta", "partial_json": args.to_string()}),
                    "tool_use",
                ),
            };
            frames(&[
                (
                    Some("message_start"),
                    json!({"type": "message_start", "message": {"id": "msg_1",
                    "usage": {"input_tokens": 10, "output_tokens": 1}}}),
                ),
                (
                    Some("content_block_start"),
                    json!({"type": "content_block_start", "index": 0, "content_block": block}),
                ),
                (
                    Some("content_block_delta"),
                    json!({"type": "content_block_delta", "index": 0, "delta": delta}),
                ),
                (
                    Some("content_block_stop"),
                    json!({"type": "content_block_stop", "index": 0}),
                ),
                (
                    Some("message_delta"),
                    json!({"type": "message_delta", "delta": {"stop_reason": stop},
                    "usage": {"output_tokens": 5}}),
                ),
                (Some("message_stop"), json!({"type": "message_stop"})),
            ])
        }
        ("gemini", say) => {
            let part = match say {
                Say::Text(t) => json!({"text": t}),
                Say::Call(name, args) => json!({"functionCall": {"name": name, "args": args}}),
            };
            frames(&[(
                None,
                json!({"candidates": [{"content": {"role": "model", "parts": [part]},
                "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5}}),
            )])
        }
        _ => unreachable!("no api {api}"),
    }
}

fn server(api: &str, turns: &[Say]) -> Server {
    Server::start(turns.iter().map(|s| sse(stream(api, s))).collect())
}

const SCHEMA: &str = r#"{"title": "Verdict", "type": "object",
  "properties": {"answer": {"type": "integer"}, "why": {"type": "string"}},
  "required": ["answer", "why"], "additionalProperties": false}"#;

/// ag-loop against `server` with the schema in `schema.json`.
fn ag_loop(env: &Env, server: &Server, model: &str, extra: &[&str]) -> Run {
    env.write("schema.json", SCHEMA);
    env.write("notes.txt", "the answer is 42\n");
    let base = server.url("/v1");
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "-m",
        model,
        "--base-url",
        &base,
        "--api-key",
        "k",
        "--tools",
        "read",
    ])
    .args(["--output-schema", "schema.json", "--no-session"])
    .args(extra)
    .env("AG_CONTEXT_WINDOW", "100000")
    .env("AG_LLM_RETRY_BASE_MS", "1")
    .env("AG_LLM_RETRY_MAX_MS", "5");
    run(c, None)
}

fn agent_end(r: &Run) -> Value {
    r.json_lines()
        .into_iter()
        .rfind(|e| e["type"] == "agent_end")
        .unwrap_or_else(|| panic!("no agent_end\n{r}"))
}

/// The structured-output field of a request body, as its API names it.
fn native_field(api: &str, body: &Value) -> Value {
    match api {
        "responses" => body["text"]["format"].clone(),
        "chat" => body["response_format"].clone(),
        "anthropic" => body["output_config"]["format"].clone(),
        "gemini" => json!({
            "mime": body["generationConfig"]["responseMimeType"],
            "schema": body["generationConfig"]["responseJsonSchema"],
        }),
        _ => unreachable!(),
    }
}

/// The field each API documents, with the schema as given.
fn expected_field(api: &str) -> Value {
    let schema: Value = serde_json::from_str(SCHEMA).unwrap();
    match api {
        "responses" => {
            json!({"type": "json_schema", "name": "Verdict", "schema": schema, "strict": true})
        }
        "chat" => json!({"type": "json_schema", "json_schema":
            {"name": "Verdict", "schema": schema, "strict": true}}),
        "anthropic" => json!({"type": "json_schema", "schema": schema}),
        "gemini" => json!({"mime": "application/json", "schema": schema}),
        _ => unreachable!(),
    }
}

#[test]
fn a_native_answer_on_every_api_is_the_output_and_each_api_gets_its_own_field() {
    for (api, model) in APIS {
        let env = Env::new();
        let s = server(api, &[Say::Text(r#"{"answer": 42, "why": "the notes"}"#)]);
        let r = ag_loop(&env, &s, model, &["--json", "what is the answer?"]);
        r.ok();
        let end = agent_end(&r);
        assert_eq!(end["outcome"], "finished", "{api}\n{r}");
        assert_eq!(
            end["output"],
            json!({"answer": 42, "why": "the notes"}),
            "{api}\n{r}"
        );
        let seen = s.seen();
        assert_eq!(seen.len(), 1, "{api}\n{r}");
        assert_eq!(
            native_field(api, &seen[0].body),
            expected_field(api),
            "{api}"
        );
        // Hosted APIs show the model the schema themselves; a Chat
        // Completions server (llama.cpp, vLLM, Ollama) may only constrain
        // decoding, so it gets the schema in the system prompt as well.
        assert_eq!(
            seen[0]
                .body
                .to_string()
                .contains("JSON Schema of the final answer"),
            *api == "chat",
            "{api}: {}",
            seen[0].body
        );
        // Anthropic's structured outputs are generally available: no beta header.
        if *api == "anthropic" {
            assert_eq!(seen[0].header("anthropic-beta"), None);
        }
    }
}

#[test]
fn tools_run_before_the_answer_and_every_request_keeps_the_schema() {
    for (api, model) in APIS {
        let env = Env::new();
        let s = server(
            api,
            &[
                Say::Call("read", json!({"file_path": "notes.txt"})),
                Say::Text(r#"{"answer": 42, "why": "notes.txt says so"}"#),
            ],
        );
        let r = ag_loop(&env, &s, model, &["--json", "what do the notes say?"]);
        r.ok();
        let events = r.json_lines();
        let ran = events
            .iter()
            .find(|e| e["type"] == "tool_execution_end")
            .unwrap_or_else(|| panic!("{api}: no tool ran\n{r}"));
        assert!(
            ran["output"].as_str().unwrap().contains("the answer is 42"),
            "{api}\n{r}"
        );
        assert_eq!(agent_end(&r)["output"]["answer"], 42, "{api}\n{r}");
        let seen = s.seen();
        assert_eq!(seen.len(), 2, "{api}\n{r}");
        for req in &seen {
            assert_eq!(native_field(api, &req.body), expected_field(api), "{api}");
            assert!(
                req.body.to_string().contains("\"read\""),
                "{api}: tools are offered"
            );
        }
        assert!(
            seen[1].body.to_string().contains("the answer is 42"),
            "{api}"
        );
    }
}

#[test]
fn an_invalid_answer_is_sent_back_with_its_errors_and_the_retry_counts() {
    for (api, model) in APIS {
        let env = Env::new();
        let s = server(
            api,
            &[
                Say::Text("```json\n{\"answer\": \"forty-two\", \"why\": \"notes\"}\n```"),
                Say::Text("```json\n{\"answer\": 42, \"why\": \"notes\"}\n```"),
            ],
        );
        let r = ag_loop(&env, &s, model, &["--json", "what is the answer?"]);
        r.ok();
        let end = agent_end(&r);
        // The fence is tolerated; the value is what counts.
        assert_eq!(
            end["output"],
            json!({"answer": 42, "why": "notes"}),
            "{api}\n{r}"
        );
        let seen = s.seen();
        assert_eq!(seen.len(), 2, "{api}\n{r}");
        let second = seen[1].body.to_string();
        assert!(
            second.contains("does not match the required output schema"),
            "{api}: {second}"
        );
        assert!(second.contains("at `/answer`"), "{api}: {second}");
        // The retry is in the conversation the run added.
        let said: Vec<&str> = end["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "user")
            .filter_map(|m| m["content"].as_str())
            .collect();
        assert_eq!(said.len(), 2, "{api}\n{r}");
        assert!(
            said[1].contains("2 more attempts are allowed"),
            "{api}: {said:?}"
        );
    }
}

#[test]
fn answers_still_invalid_after_the_retries_end_as_invalid_output_with_exit_1() {
    for (api, model) in APIS {
        let env = Env::new();
        let bad = || Say::Text(r#"{"answer": 42}"#);
        let s = server(api, &[bad(), bad(), bad(), bad()]);
        let r = ag_loop(&env, &s, model, &["--json", "what is the answer?"]);
        r.expect_code(1);
        let end = agent_end(&r);
        assert_eq!(end["outcome"], "invalid_output", "{api}\n{r}");
        assert!(end.get("output").is_none(), "{api}\n{r}");
        assert!(r.stderr().contains("after 3 attempts"), "{api}\n{r}");
        assert!(
            r.stderr().contains("why"),
            "{api}: names the missing field\n{r}"
        );
        // The first answer and two retries: no fourth call.
        assert_eq!(s.seen().len(), 3, "{api}\n{r}");
    }
    // --output-retries 0: the first wrong answer ends the run; --quiet prints nothing.
    let env = Env::new();
    let s = server("chat", &[Say::Text("not json"), Say::Text("{}")]);
    let r = ag_loop(
        &env,
        &s,
        "vllm/qwen3-coder",
        &["--quiet", "--output-retries", "0", "what?"],
    );
    r.expect_code(1);
    assert_eq!(r.stdout(), "", "{r}");
    assert!(r.stderr().contains("not one JSON value"), "{r}");
    assert_eq!(s.seen().len(), 1, "{r}");
}

#[test]
fn quiet_prints_exactly_the_value_on_one_line_for_a_pipe() {
    let env = Env::new();
    let s = server(
        "chat",
        &[Say::Text(
            "\n{\n  \"why\": \"a\\nb\",\n  \"answer\": 7\n}\n",
        )],
    );
    let r = ag_loop(&env, &s, "vllm/qwen3-coder", &["--quiet", "what?"]);
    r.ok();
    let out = r.stdout();
    assert_eq!(out.lines().count(), 1, "{r}");
    assert!(out.ends_with('\n'), "{r}");
    let v: Value = serde_json::from_str(out.trim_end()).unwrap();
    assert_eq!(v, json!({"why": "a\nb", "answer": 7}));
    // A run that ends without a valid answer prints nothing a pipe could
    // take for one: here the prose answer is sent back, and the turn limit
    // ends the run before the retry.
    let env = Env::new();
    let s = server("chat", &[Say::Text("I think it is 42.")]);
    let r = ag_loop(
        &env,
        &s,
        "vllm/qwen3-coder",
        &["--quiet", "--max-turns", "1", "what?"],
    );
    r.expect_code(1);
    assert_eq!(r.stdout(), "", "{r}");
}

#[test]
fn without_native_support_the_schema_is_in_the_system_prompt_and_still_checked() {
    // Groq refuses structured output with streaming and tools.
    let env = Env::new();
    let s = server("chat", &[Say::Text(r#"{"answer": 1, "why": "w"}"#)]);
    let r = ag_loop(
        &env,
        &s,
        "groq/llama-3.3-70b-versatile",
        &["--json", "what?"],
    );
    r.ok();
    assert_eq!(agent_end(&r)["output"]["answer"], 1, "{r}");
    let body = &s.seen()[0].body;
    assert!(body.get("response_format").is_none(), "{body}");
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("JSON Schema of the final answer"),
        "{system}"
    );
    assert!(
        system.contains("\"additionalProperties\":false"),
        "{system}"
    );
}

/// The body ag-llm sends for `model` with `extra` flags (the server answers
/// 404, which is neither retried nor taken for a refused schema field, so
/// the call ends after one request).
fn llm_body(env: &Env, model: &str, extra: &[&str]) -> Value {
    let s = Server::start(vec![Reply::Body(
        404,
        vec![("content-type", "application/json".into())],
        br#"{"error":{"message":"scripted refusal"}}"#.to_vec(),
    )]);
    let base = s.url("/v1");
    let mut c = env.cmd(bin!("ag-llm"));
    c.args(["-m", model, "--base-url", &base, "--api-key", "k", "hi"])
        .args(extra)
        .env("AG_LLM_RETRY_BASE_MS", "1");
    let r = run(c, None);
    r.expect_code(1);
    let seen = s.seen();
    assert_eq!(seen.len(), 1, "{r}");
    seen[0].body.clone()
}

#[test]
fn schemas_outside_an_api_s_rules_are_sent_loosely_or_prompted_never_rewritten() {
    let env = Env::new();
    let tool = json!({"name": "read", "description": "Read a file",
        "parameters": {"type": "object", "properties": {"p": {"type": "string"}}}});
    env.write("tools.json", json!([tool]).to_string());
    // Open objects and optional fields: OpenAI's strict mode would refuse them.
    let open = json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}});
    env.write("open.json", open.to_string());
    let b = llm_body(&env, "openai/gpt-5", &["--output-schema", "open.json"]);
    assert_eq!(
        b["text"]["format"],
        json!({"type": "json_schema", "name": "answer", "schema": open, "strict": false})
    );
    let b = llm_body(&env, "ollama/qwen3", &["--output-schema", "open.json"]);
    assert_eq!(b["response_format"]["json_schema"]["strict"], false);
    assert_eq!(b["response_format"]["json_schema"]["schema"], open);
    // Anthropic's subset has no `minimum` and wants closed objects: prompted.
    let b = llm_body(
        &env,
        "anthropic/claude-sonnet-4-5",
        &["--output-schema", "open.json"],
    );
    assert!(b.get("output_config").is_none(), "{b}");
    let system = b["system"][0]["text"].as_str().unwrap();
    assert!(system.contains("\"minimum\":1"), "{system}");
    // Claude before 4.5 has no structured outputs.
    let b = llm_body(
        &env,
        "anthropic/claude-opus-4-1",
        &["--output-schema", SCHEMA],
    );
    assert!(b.get("output_config").is_none(), "{b}");
    // Gemini 2.5: natively without tools, in the prompt with them.
    let b = llm_body(
        &env,
        "google/gemini-2.5-flash",
        &["--output-schema", "open.json"],
    );
    assert_eq!(b["generationConfig"]["responseJsonSchema"], open, "{b}");
    let b = llm_body(
        &env,
        "google/gemini-2.5-flash",
        &["--output-schema", "open.json", "--tools", "tools.json"],
    );
    assert!(
        b["generationConfig"].get("responseJsonSchema").is_none(),
        "{b}"
    );
    let system = b["systemInstruction"]["parts"][0]["text"].as_str().unwrap();
    assert!(
        system.contains("JSON Schema of the final answer"),
        "{system}"
    );
    // models.json turns it off (or on) per model and per Chat Completions provider.
    env.write(
        ".home/.ag/models.json",
        json!({"providers": {
            "google": {"models": [{"id": "gemini-2.5-flash", "structured_output": "yes"}]},
            "vllm": {"compat": {"structured_output": false}}
        }})
        .to_string(),
    );
    let b = llm_body(
        &env,
        "google/gemini-2.5-flash",
        &["--output-schema", "open.json", "--tools", "tools.json"],
    );
    assert_eq!(b["generationConfig"]["responseJsonSchema"], open, "{b}");
    let b = llm_body(&env, "vllm/x", &["--output-schema", "open.json"]);
    assert!(b.get("response_format").is_none(), "{b}");
}

#[test]
fn ag_llm_checks_the_answer_against_the_schema() {
    let env = Env::new();
    env.write("schema.json", SCHEMA);
    let call = |text: &'static str| {
        let s = server("chat", &[Say::Text(text)]);
        let base = s.url("/v1");
        let mut c = env.cmd(bin!("ag-llm"));
        c.args([
            "-m",
            "llamacpp/m",
            "--base-url",
            &base,
            "--output-schema",
            "schema.json",
            "hi",
        ]);
        let r = run(c, None);
        (r, s.seen())
    };
    let (r, seen) = call(r#"{"answer": 1, "why": "w"}"#);
    r.ok();
    assert_eq!(
        seen[0].body["response_format"]["json_schema"]["name"],
        "Verdict"
    );
    // A request on stdin may carry the schema itself.
    let s = server("chat", &[Say::Text(r#"{"answer": 2, "why": "w"}"#)]);
    let request = json!({"model": "llamacpp/m", "base_url": s.url("/v1"),
        "messages": [{"role": "user", "content": "hi"}],
        "output_schema": serde_json::from_str::<Value>(SCHEMA).unwrap()});
    let r = run(
        env.cmd(bin!("ag-llm")),
        Some(request.to_string().as_bytes()),
    );
    r.ok();
    assert_eq!(s.seen()[0].body["response_format"]["type"], "json_schema");
    let (r, _) = call(r#"{"answer": "one"}"#);
    r.expect_code(1);
    assert!(
        r.stderr().contains("does not match the output schema"),
        "{r}"
    );
    assert!(r.stderr().contains("at `/answer`"), "{r}");
}

#[test]
fn a_broken_schema_is_a_set_up_error_before_any_event() {
    let env = Env::new();
    env.write("bad.json", r#"{"type": "objekt"}"#);
    env.write("notjson.json", "{type: object}");
    let cases: &[(&[&str], &str)] = &[
        (&["--output-schema", "bad.json"], "not a valid JSON Schema"),
        (&["--output-schema", "notjson.json"], "is not JSON"),
        (
            &["--output-schema", "missing.json"],
            "cannot read the output schema",
        ),
        (
            &["--output-schema", r#"{"properties": 3}"#],
            "not a valid JSON Schema",
        ),
    ];
    for (flags, says) in cases {
        // Nothing listens there: set-up must fail before any model call.
        let mut c = env.cmd(bin!("ag-loop"));
        c.args([
            "-m",
            "vllm/x",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--no-session",
        ])
        .args(*flags)
        .arg("hi")
        .env("AG_CONTEXT_WINDOW", "1000");
        let r = run(c, None);
        r.expect_code(2);
        assert_eq!(r.stdout(), "", "{r}");
        assert!(r.stderr().contains(says), "{flags:?}\n{r}");
        assert!(r.stderr().contains("--output-schema"), "{r}");
        let mut c = env.cmd(bin!("ag-llm"));
        c.args(["-m", "vllm/x", "--base-url", "http://127.0.0.1:9/v1"])
            .args(*flags)
            .arg("hi");
        let r = run(c, None);
        r.expect_code(2);
        assert!(r.stderr().contains(says), "{flags:?}\n{r}");
    }
    // The config file's schema is read relative to the config file.
    env.write("conf/config.toml", "output_schema = \"bad.json\"\n");
    env.write("conf/bad.json", "[]");
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "-m",
        "vllm/x",
        "--no-session",
        "--config",
        "conf/config.toml",
        "hi",
    ])
    .env("AG_CONTEXT_WINDOW", "1000");
    let r = run(c, None);
    r.expect_code(2);
    assert!(r.stderr().contains("config.toml"), "{r}");
    assert!(r.stderr().contains("is an object, not an array"), "{r}");
}

#[test]
fn an_identity_gives_the_schema_and_the_session_keeps_the_output() {
    let env = Env::new();
    env.write(".git/HEAD", "ref: refs/heads/main\n");
    env.write(
        ".ag/agents/judge.md",
        "---\noutput_schema: verdict.json\n---\nYou judge.\n",
    );
    env.write(".ag/agents/verdict.json", SCHEMA);
    let s = server("chat", &[Say::Text(r#"{"answer": 5, "why": "w"}"#)]);
    let base = s.url("/v1");
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "-m",
        "vllm/x",
        "--base-url",
        &base,
        "--agent",
        "judge",
        "--tools",
        "chat",
    ])
    .args(["--quiet", "what?"])
    .env("AG_CONTEXT_WINDOW", "100000");
    let r = run(c, None);
    r.ok();
    assert_eq!(r.stdout(), "{\"answer\":5,\"why\":\"w\"}\n", "{r}");
    assert_eq!(
        s.seen()[0].body["response_format"]["json_schema"]["name"],
        "Verdict"
    );
    let mut c = env.cmd(bin!("ag-session"));
    c.args(["latest"]);
    let id = run(c, None);
    id.ok();
    let mut c = env.cmd(bin!("ag-session"));
    c.args(["show", id.stdout().trim()]);
    let shown = run(c, None);
    shown.ok();
    assert!(
        shown
            .stdout()
            .contains("output: {\"answer\":5,\"why\":\"w\"}"),
        "{shown}"
    );
}

#[test]
fn a_server_that_refuses_the_schema_field_gets_it_in_the_prompt_from_then_on() {
    let env = Env::new();
    env.write("schema.json", SCHEMA);
    env.write("notes.txt", "the answer is 42\n");
    let s = Server::start(vec![
        Reply::Body(
            400,
            vec![("content-type", "application/json".into())],
            br#"{"error":{"message":"unknown field: response_format","type":"invalid_request_error"}}"#
                .to_vec(),
        ),
        sse(stream("chat", &Say::Call("read", json!({"file_path": "notes.txt"})))),
        sse(stream("chat", &Say::Text(r#"{"answer": 42, "why": "notes"}"#))),
    ]);
    let r = ag_loop(&env, &s, "vllm/old", &["--json", "what?"]);
    r.ok();
    assert_eq!(agent_end(&r)["output"]["answer"], 42, "{r}");
    let seen = s.seen();
    assert_eq!(seen.len(), 3, "{r}");
    assert!(seen[0].body.get("response_format").is_some());
    for later in &seen[1..] {
        assert!(
            later.body.get("response_format").is_none(),
            "{}",
            later.body
        );
        let system = later.body["messages"][0]["content"].as_str().unwrap();
        assert!(
            system.contains("JSON Schema of the final answer"),
            "{system}"
        );
    }
    assert_eq!(
        r.stderr()
            .matches("refused the request with the output schema")
            .count(),
        1,
        "{r}"
    );
}
