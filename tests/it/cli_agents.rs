//! Seed 003's CLI agent tools end to end, with the real `claude` and
//! `codex` CLIs from npm (installed by `scripts/cli-agents`, which
//! scripts/test runs; without them each test fails, saying what to run).
//! ag-loop, under its default sandbox (required here, so that the test
//! cannot pass unconfined), talks to one scripted model that calls the
//! tool; the wrapped agent talks to a second scripted server, in its own
//! provider's protocol, with the key ag-loop withholds from other tools.
//! Nothing reaches the network.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::model_server::{ModelServer, Turn};
use crate::util::{Env, run};

/// Where scripts/cli-agents installed the CLIs' `node_modules/.bin`.
fn agents_bin() -> PathBuf {
    let dir = std::env::var_os("AG_CLI_AGENTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/cli-agents"));
    let bin = dir.join("node_modules/.bin");
    assert!(
        bin.join("claude").is_file() && bin.join("codex").is_file(),
        "Claude Code and Codex are not installed in {}: run scripts/cli-agents, or scripts/test, which runs it",
        dir.display()
    );
    bin
}

/// One request the agent's server got: its path, headers and body.
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

/// A scripted provider for the wrapped agent: every model request gets
/// `answer` as the whole reply, in Anthropic Messages (`/v1/messages`,
/// streamed or not) or OpenAI Responses (`/v1/responses`); anything else
/// is a 404 (the agents' optional side requests).
struct AgentServer {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl AgentServer {
    fn start(answer: &'static str) -> AgentServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let log = log.clone();
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(conn.try_clone().unwrap());
                    let mut out = conn;
                    while let Some(req) = read_request(&mut reader) {
                        log.lock().unwrap().push(req.clone());
                        if !reply(&mut out, &req, answer) {
                            return;
                        }
                    }
                });
            }
        });
        AgentServer { port, seen }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn model_requests(&self) -> Vec<Seen> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.path.ends_with("/messages") || s.path.ends_with("/responses"))
            .cloned()
            .collect()
    }
}

fn read_request(reader: &mut impl BufRead) -> Option<Seen> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
    let mut headers = Vec::new();
    let mut len = 0usize;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                len = v.trim().parse().unwrap_or(0);
            }
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    let path = path.split('?').next().unwrap_or("").to_string();
    Some(Seen {
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}

fn event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

fn reply(out: &mut impl Write, req: &Seen, answer: &str) -> bool {
    let (kind, body) = if req.path.ends_with("/v1/messages") {
        let model = req.body["model"].as_str().unwrap_or("scripted").to_string();
        if req.body["stream"] == true {
            let usage = json!({"input_tokens": 50, "output_tokens": 1});
            let body = [
                event("message_start", json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": model, "content": [], "stop_reason": null, "usage": usage}})),
                event("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})),
                event("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": answer}})),
                event("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
                event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 7}})),
                event("message_stop", json!({"type": "message_stop"})),
            ]
            .concat();
            ("text/event-stream", body)
        } else {
            let body = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": model,
                "content": [{"type": "text", "text": answer}], "stop_reason": "end_turn",
                "stop_sequence": null, "usage": {"input_tokens": 50, "output_tokens": 7}});
            ("application/json", body.to_string())
        }
    } else if req.path.ends_with("/v1/responses") {
        let item = json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": answer, "annotations": []}]});
        let usage = json!({"input_tokens": 50, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 7, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 57});
        let body = [
            event("response.created", json!({"type": "response.created", "response": {"id": "resp_1"}})),
            event("response.output_item.added", json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}})),
            event("response.output_text.delta", json!({"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "item_id": "msg_1", "delta": answer})),
            event("response.output_item.done", json!({"type": "response.output_item.done", "output_index": 0, "item": item})),
            event("response.completed", json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed", "output": [item], "usage": usage}})),
        ]
        .concat();
        ("text/event-stream", body)
    } else {
        let nf = "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n";
        return out.write_all(nf.as_bytes()).is_ok();
    };
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    out.write_all(head.as_bytes()).is_ok()
        && out.write_all(body.as_bytes()).is_ok()
        && out.flush().is_ok()
}

/// ag-loop in `env/proj` (its workspace, so that `$HOME` lies outside
/// it), under the default sandbox, with only `tool` (a CLI agent tool)
/// and the agents' CLIs on PATH.
fn ag_loop(env: &Env, model: &ModelServer, tool: &str) -> std::process::Command {
    std::fs::create_dir_all(env.join("proj")).unwrap();
    let mut c = model.ag_loop(env);
    c.current_dir(env.join("proj"));
    let path = std::env::join_paths(std::iter::once(agents_bin()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    c.env("PATH", path);
    c.args([
        "--tools",
        tool,
        "--sandbox",
        "require",
        "--no-session",
        "delegate this",
    ]);
    c
}

/// The `tool_execution_end` of the run, which must be the only one.
fn the_end(events: &[Value]) -> Value {
    let ends: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_execution_end")
        .collect();
    assert_eq!(ends.len(), 1, "{events:#?}");
    ends[0].clone()
}

#[test]
fn claude_code_answers_through_the_default_sandbox_with_its_key() {
    let bin = agents_bin();
    let env = Env::new();
    let agent = AgentServer::start("CLAUDE-SAYS: the add function is fixed.");
    let model = ModelServer::start(vec![
        Turn::Tools(vec![(
            "claude_code_cli",
            json!({"prompt": "Fix the add function", "workingDirectory": "."}),
        )]),
        Turn::Text("Claude Code fixed it."),
    ]);
    let mut c = ag_loop(&env, &model, "claude_code_cli");
    c.env("ANTHROPIC_BASE_URL", agent.url())
        .env("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    let r = run(c, None);
    r.ok();
    let end = the_end(&r.json_lines());
    assert_eq!(end["is_error"], false, "{end}\n{}", r.stderr());
    assert_eq!(
        end["output"], "CLAUDE-SAYS: the add function is fixed.",
        "{end}"
    );
    assert_eq!(end["details"]["agent"], "claude", "{end}");
    assert!(end["details"]["duration_ms"].is_u64(), "{end}");
    assert!(end["details"]["cost_usd"].is_number(), "{end}");
    // Claude reached its server with the key ag-loop withholds from tools.
    let asked = agent.model_requests();
    assert!(!asked.is_empty(), "claude made no model request");
    assert!(
        asked
            .iter()
            .all(|s| s.header("x-api-key") == Some("sk-ant-test-0123456789")),
        "{asked:?}"
    );
    assert!(
        asked
            .iter()
            .any(|s| s.body.to_string().contains("Fix the add function")),
        "{asked:?}"
    );
    // The answer came back to ag-loop's own model as the tool result.
    let reqs = model.requests();
    assert_eq!(reqs.len(), 2);
    assert!(
        reqs[1]["messages"]
            .to_string()
            .contains("CLAUDE-SAYS: the add function is fixed."),
        "{}",
        reqs[1]
    );
    // Claude wrote its own state in $HOME, outside the workspace: the
    // sandbox let it write there.
    let state = std::fs::read_dir(env.join(".home/.claude"))
        .unwrap()
        .count();
    assert!(state > 0, "claude wrote nothing in ~/.claude");
    drop(bin);
}

#[test]
fn codex_answers_through_the_default_sandbox_with_its_key() {
    agents_bin();
    let env = Env::new();
    let agent = AgentServer::start("CODEX-SAYS: done, tests pass.");
    env.write(
        ".home/.codex/config.toml",
        format!(
            "model = \"scripted\"\nmodel_provider = \"scripted\"\n\n[model_providers.scripted]\nname = \"scripted\"\nbase_url = \"{}/v1\"\nwire_api = \"responses\"\nenv_key = \"OPENAI_API_KEY\"\n",
            agent.url()
        ),
    );
    let model = ModelServer::start(vec![
        Turn::Tools(vec![("codex_cli", json!({"prompt": "Run the tests"}))]),
        Turn::Text("Codex ran them."),
    ]);
    let mut c = ag_loop(&env, &model, "codex_cli");
    c.env("OPENAI_API_KEY", "sk-openai-test-0123456789");
    let r = run(c, None);
    r.ok();
    let end = the_end(&r.json_lines());
    assert_eq!(end["is_error"], false, "{end}\n{}", r.stderr());
    assert_eq!(end["output"], "CODEX-SAYS: done, tests pass.", "{end}");
    assert_eq!(end["details"]["agent"], "codex", "{end}");
    assert!(end["details"]["duration_ms"].is_u64(), "{end}");
    assert!(end["details"]["usage"]["output_tokens"].is_u64(), "{end}");
    let asked = agent.model_requests();
    assert!(!asked.is_empty(), "codex made no model request");
    assert!(
        asked
            .iter()
            .all(|s| s.header("authorization") == Some("Bearer sk-openai-test-0123456789")),
        "{asked:?}"
    );
    let reqs = model.requests();
    assert!(
        reqs[1]["messages"]
            .to_string()
            .contains("CODEX-SAYS: done, tests pass."),
        "{}",
        reqs[1]
    );
}

#[test]
fn full_offers_the_agents_on_path_and_a_missing_one_is_not_offered() {
    agents_bin();
    let env = Env::new();
    let model = ModelServer::start(vec![Turn::Text("hi")]);
    let mut c = ag_loop(&env, &model, "full");
    // `claude` and `codex` are on PATH (the test's), `gemini` is not.
    c.env("AG_NO_DESKTOP_NOTIFY", "1");
    let r = run(c, None);
    r.ok();
    let tools: Vec<String> = model.requests()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(tools.contains(&"claude_code_cli".to_string()), "{tools:?}");
    assert!(tools.contains(&"codex_cli".to_string()), "{tools:?}");
    let gemini_on_path = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .any(|d| d.join("gemini").is_file());
    assert_eq!(
        tools.contains(&"gemini_cli".to_string()),
        gemini_on_path,
        "{tools:?}"
    );
}

#[test]
fn a_failing_agent_is_an_error_with_what_it_said() {
    // The real claude, pointed at a server that is not there.
    agents_bin();
    let env = Env::new();
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://127.0.0.1:{}", closed.local_addr().unwrap().port());
    drop(closed);
    let model = ModelServer::start(vec![
        Turn::Tools(vec![("claude_code_cli", json!({"prompt": "Fix it"}))]),
        Turn::Text("it failed"),
    ]);
    let mut c = ag_loop(&env, &model, "claude_code_cli");
    c.env("ANTHROPIC_BASE_URL", url)
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_MAX_RETRIES", "0")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    let r = run(c, None);
    let end = the_end(&r.json_lines());
    assert_eq!(end["is_error"], true, "{end}");
    assert!(
        end["output"]
            .as_str()
            .unwrap()
            .starts_with("Claude Code failed"),
        "{end}"
    );
}
