//! ag-loop against a scripted llama.cpp-style server that the tests start:
//! `GET /props` (with its n_ctx, or its error bodies) answers the context
//! window the model table lacks, asked once per session; an
//! `exceed_context_size_error` answer leads to a compaction and a retry.

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::bin;
use crate::util::{Env, run};

/// One scripted answer to a chat request.
#[derive(Clone)]
enum Chat {
    /// Text.
    Text(&'static str),
    /// One tool call: name and arguments.
    Tool(&'static str, Value),
    /// An HTTP error with this JSON body.
    Error(u16, Value),
}

/// What `/props` answers: a status and a body.
#[derive(Clone)]
struct Props(u16, Value);

struct LlamaServer {
    port: u16,
    /// (method, path, body) of every request.
    seen: Arc<Mutex<Vec<(String, String, Value)>>>,
}

impl LlamaServer {
    fn start(props: Props, chats: Vec<Chat>) -> LlamaServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let chats = Arc::new(Mutex::new(chats.into_iter()));
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let (log, chats, props) = (log.clone(), chats.clone(), props.clone());
                std::thread::spawn(move || serve(conn, &log, &chats, &props));
            }
        });
        LlamaServer { port, seen }
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    fn paths(&self) -> Vec<String> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .map(|(m, p, _)| format!("{m} {p}"))
            .collect()
    }

    fn chat_bodies(&self) -> Vec<Value> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, p, _)| p.ends_with("/chat/completions"))
            .map(|(_, _, b)| b.clone())
            .collect()
    }
}

fn chunk(delta: Value, finish: Option<&str>) -> String {
    let v = json!({"id": "chatcmpl-l", "object": "chat.completion.chunk", "model": "qwen",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {v}\n\n")
}

fn stream(chat: &Chat) -> String {
    let mut body = chunk(json!({"role": "assistant", "content": null}), None);
    let finish = match chat {
        Chat::Text(t) => {
            body.push_str(&chunk(json!({"content": t}), None));
            "stop"
        }
        Chat::Tool(name, args) => {
            body.push_str(&chunk(
                json!({"tool_calls": [{"index": 0, "id": "zBYeZGGAO1cFRv0wXc1MnIKzcvDeCTA3", "type": "function",
                    "function": {"name": name, "arguments": args.to_string()}}]}),
                None,
            ));
            "tool_calls"
        }
        Chat::Error(..) => unreachable!(),
    };
    body.push_str(&chunk(json!({}), Some(finish)));
    let usage = json!({"choices": [], "object": "chat.completion.chunk",
        "usage": {"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129}});
    body.push_str(&format!("data: {usage}\n\ndata: [DONE]\n\n"));
    body
}

fn respond(out: &mut TcpStream, status: u16, ctype: &str, body: &str) -> bool {
    let head = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    out.write_all(head.as_bytes()).is_ok() && out.write_all(body.as_bytes()).is_ok()
}

fn serve(
    conn: TcpStream,
    log: &Mutex<Vec<(String, String, Value)>>,
    chats: &Mutex<std::vec::IntoIter<Chat>>,
    props: &Props,
) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut out = conn;
    loop {
        let Some((method, path, body)) = crate::util::read_http_request(&mut reader) else {
            return;
        };
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        log.lock()
            .unwrap()
            .push((method.clone(), path.clone(), body));
        let ok = match (method.as_str(), path.as_str()) {
            ("GET", "/props") => {
                respond(&mut out, props.0, "application/json", &props.1.to_string())
            }
            ("POST", "/v1/chat/completions") => match chats.lock().unwrap().next() {
                Some(Chat::Error(status, body)) => {
                    respond(&mut out, status, "application/json", &body.to_string())
                }
                Some(chat) => respond(&mut out, 200, "text/event-stream", &stream(&chat)),
                None => respond(
                    &mut out,
                    200,
                    "text/event-stream",
                    &stream(&Chat::Text("(end)")),
                ),
            },
            // llama.cpp's own answer to a path it does not serve.
            _ => respond(
                &mut out,
                404,
                "application/json",
                r#"{"error":{"code":404,"message":"File Not Found","type":"not_found_error"}}"#,
            ),
        };
        if !ok {
            return;
        }
    }
}

fn llamacpp_props(n_ctx: u64) -> Props {
    Props(
        200,
        json!({"default_generation_settings": {"n_ctx": n_ctx, "params": {"n_predict": -1}},
            "total_slots": 1, "model_path": "/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            "chat_template": "...", "build_info": "b6000"}),
    )
}

fn ag_loop(env: &Env, server: &LlamaServer, extra: &[&str]) -> std::process::Command {
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "-m",
        "llamacpp/qwen2.5-coder-1.5b",
        "--base-url",
        &server.base(),
        "--json",
        "--no-gate",
    ])
    .args(extra)
    .env("AG_LLM_RETRY_BASE_MS", "1")
    .env("AG_LLM_RETRY_MAX_MS", "20");
    c
}

#[test]
fn the_window_is_asked_of_llamacpp_once_per_session_and_said_where_from() {
    let env = Env::new();
    let server = LlamaServer::start(
        llamacpp_props(4096),
        vec![Chat::Text("one"), Chat::Text("two")],
    );
    // Two text answers: the first call is left free (a 4096 window asks
    // for a call first, and a text answer would go back; evidence.rs).
    let r = run(
        ag_loop(
            &env,
            &server,
            &["--tools", "read", "--first-call", "auto", "first", "second"],
        ),
        None,
    );
    r.ok();
    let props = server
        .paths()
        .iter()
        .filter(|p| p.as_str() == "GET /props")
        .count();
    assert_eq!(props, 1, "asked once for two prompts\n{r}");
    assert!(r.stderr().contains("4096 tokens"), "{r}");
    assert!(
        r.stderr().contains("default_generation_settings.n_ctx"),
        "{r}"
    );
    assert!(r.stderr().contains("/props"), "{r}");
    // An assistant message_start claims no stop reason before anything is generated.
    let starts: Vec<Value> = r
        .json_lines()
        .into_iter()
        .filter(|e| e["type"] == "message_start" && e["message"]["role"] == "assistant")
        .collect();
    assert_eq!(starts.len(), 2);
    for s in &starts {
        assert!(s["message"].get("stop_reason").is_none(), "{s}");
    }
    let ends: Vec<Value> = r
        .json_lines()
        .into_iter()
        .filter(|e| e["type"] == "message_end" && e["message"]["role"] == "assistant")
        .collect();
    assert_eq!(ends[0]["message"]["stop_reason"], "stop");
    // The output limit follows from the window: a quarter of it.
    let bodies = server.chat_bodies();
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0]["max_tokens"], 1024, "{}", bodies[0]);
    // The session header records the figure and its source.
    let sessions = env.join(".home/.ag/sessions");
    let file = walk(&sessions)
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .expect("a session file");
    let header: Value = serde_json::from_str(
        std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        header["config"]["context_window"]["tokens"], 4096,
        "{header}"
    );
    assert!(
        header["config"]["context_window"]["source"]
            .as_str()
            .unwrap()
            .contains("/props")
    );
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn big_file(env: &Env) {
    let big: String = (0..300)
        .map(|i| format!("line {i} of a file that fills the context\n"))
        .collect();
    env.write("big.txt", big);
}

#[test]
fn a_window_from_props_makes_the_loop_compact() {
    let env = Env::new();
    big_file(&env);
    let server = LlamaServer::start(
        llamacpp_props(3000),
        vec![
            Chat::Tool("read", json!({"file_path": "big.txt"})),
            Chat::Tool("read", json!({"file_path": "big.txt", "offset": 2})),
            Chat::Text("finished"),
        ],
    );
    let r = run(
        ag_loop(
            &env,
            &server,
            &[
                "--tools",
                "read",
                "--compact",
                "never",
                "--no-session",
                "count",
            ],
        ),
        None,
    );
    r.ok();
    let events = r.json_lines();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert!(
        kinds.contains(&"compaction"),
        "no compaction with the window /props gave: {kinds:?}\n{}",
        r.stderr()
    );
    assert_eq!(events.last().unwrap()["outcome"], "finished");
}

#[test]
fn props_error_bodies_leave_the_window_unknown_and_say_so() {
    for props in [
        Props(
            404,
            json!({"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}}),
        ),
        Props(
            503,
            json!({"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}),
        ),
        Props(200, json!({"default_generation_settings": {"n_ctx": 0}})),
    ] {
        let env = Env::new();
        let server = LlamaServer::start(props, vec![Chat::Text("hello")]);
        let r = run(ag_loop(&env, &server, &["--no-session", "hi"]), None);
        r.ok();
        assert!(r.stderr().contains("context window"), "{r}");
        assert!(r.stderr().contains("unknown"), "{r}");
        // No guessed output limit without a window.
        assert!(server.chat_bodies()[0].get("max_tokens").is_none());
    }
}

#[test]
fn llamacpp_context_overflow_compacts_and_retries_once() {
    let env = Env::new();
    big_file(&env);
    let overflow = json!({"error": {"code": 400,
        "message": "request (7002 tokens) exceeds the available context size (4096 tokens), try increasing it",
        "type": "exceed_context_size_error", "n_prompt_tokens": 7002, "n_ctx": 4096}});
    let server = LlamaServer::start(
        // Room enough that the estimate does not compact first: only the
        // overflow answer can start the compaction.
        llamacpp_props(6000),
        vec![
            Chat::Tool("read", json!({"file_path": "big.txt"})),
            Chat::Error(400, overflow),
            Chat::Text("finished after compaction"),
        ],
    );
    let r = run(
        ag_loop(
            &env,
            &server,
            &[
                "--tools",
                "read",
                "--compact",
                "never",
                "--no-session",
                "count",
            ],
        ),
        None,
    );
    r.ok();
    let events = r.json_lines();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert!(
        kinds.contains(&"compaction"),
        "the overflow was not recognised: {kinds:?}\n{}",
        r.stderr()
    );
    let end = events.last().unwrap();
    assert_eq!(end["outcome"], "finished", "{end}");
    assert_eq!(server.chat_bodies().len(), 3);
}
