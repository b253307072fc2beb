//! A scripted model on 127.0.0.1 speaking OpenAI Chat Completions with
//! keep-alive: each request is answered with the next scripted turn as a
//! real SSE stream, and the server counts connections and keeps requests.

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use serde_json::{Value, json};

/// One scripted answer.
#[derive(Clone)]
pub enum Turn {
    /// Plain text.
    Text(&'static str),
    /// Tool calls: (name, arguments).
    Tools(Vec<(&'static str, Value)>),
    /// The model declines: its words as `refusal` deltas, as OpenAI sends
    /// them, then `finish_reason` `stop`.
    Refusal(&'static str),
    /// A turn that waits at a point of its answer until the test releases
    /// it: the test then knows where ag-loop stands.
    Held(Box<Turn>, HoldAt, Release),
    /// Plain text made at run time (a long answer).
    Owned(String),
    /// No answer: the request is held until the client goes away (a model
    /// call in flight when its caller is killed).
    Stall,
}

/// Where a held turn waits.
#[derive(Clone, Copy)]
pub enum HoldAt {
    /// With the request read and nothing answered yet.
    Start,
    /// After the headers and the first piece of the answer.
    MidStream,
}

/// What a held turn waits for.
#[derive(Clone, Default)]
pub struct Release(Arc<(Mutex<bool>, Condvar)>);

impl Release {
    /// Lets the held turn go on.
    pub fn release(&self) {
        *self.0.0.lock().unwrap() = true;
        self.0.1.notify_all();
    }

    fn wait(&self) {
        let mut released = self.0.0.lock().unwrap();
        while !*released {
            released = self.0.1.wait(released).unwrap();
        }
    }
}

pub struct ModelServer {
    pub port: u16,
    pub requests: Arc<Mutex<Vec<Value>>>,
    pub connections: Arc<AtomicUsize>,
}

fn chunk(delta: Value, finish: Option<&str>) -> String {
    let v = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "scripted",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {v}\n\n")
}

pub fn sse(turn: &Turn, n: usize) -> String {
    let mut body = chunk(json!({"role": "assistant", "content": ""}), None);
    let finish = match turn {
        Turn::Held(turn, ..) => return sse(turn, n),
        Turn::Text(_) | Turn::Owned(_) | Turn::Stall => {
            let t = match turn {
                Turn::Text(t) => t,
                Turn::Owned(t) => t.as_str(),
                _ => "",
            };
            // In pieces, as a real stream.
            for piece in t.as_bytes().chunks(7) {
                body.push_str(&chunk(
                    json!({"content": String::from_utf8_lossy(piece)}),
                    None,
                ));
            }
            "stop"
        }
        Turn::Tools(calls) => {
            for (i, (name, args)) in calls.iter().enumerate() {
                let text = args.to_string();
                let (a, b) = text.split_at(text.len() / 2);
                body.push_str(&chunk(
                    json!({"tool_calls": [{"index": i, "id": format!("call_{n}_{i}"), "type": "function",
                        "function": {"name": name, "arguments": a}}]}),
                    None,
                ));
                body.push_str(&chunk(
                    json!({"tool_calls": [{"index": i, "function": {"arguments": b}}]}),
                    None,
                ));
            }
            "tool_calls"
        }
        Turn::Refusal(t) => {
            for piece in t.as_bytes().chunks(7) {
                body.push_str(&chunk(
                    json!({"refusal": String::from_utf8_lossy(piece)}),
                    None,
                ));
            }
            "stop"
        }
    };
    body.push_str(&chunk(json!({}), Some(finish)));
    let usage = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [],
        "usage": {"prompt_tokens": 100 + n, "completion_tokens": 10, "total_tokens": 110 + n}});
    body.push_str(&format!("data: {usage}\n\ndata: [DONE]\n\n"));
    body
}

impl ModelServer {
    pub fn start(turns: Vec<Turn>) -> ModelServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicUsize::new(0));
        let next = Arc::new(AtomicUsize::new(0));
        let turns = Arc::new(turns);
        let (reqs, conns) = (requests.clone(), connections.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                conns.fetch_add(1, Ordering::SeqCst);
                let (reqs, next, turns) = (reqs.clone(), next.clone(), turns.clone());
                std::thread::spawn(move || serve(conn, &reqs, &next, &turns));
            }
        });
        ModelServer {
            port,
            requests,
            connections,
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// ag-loop in `env` pointed at this server (`-m ollama/scripted
    /// --base-url ...`), events as JSONL; the caller adds its own flags.
    pub fn ag_loop(&self, env: &crate::util::Env) -> std::process::Command {
        let mut c = env.cmd(crate::bin!("ag-loop"));
        c.args([
            "-m",
            "ollama/scripted",
            "--base-url",
            &self.base_url(),
            "--json",
        ]);
        c
    }

    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

fn serve(conn: TcpStream, reqs: &Mutex<Vec<Value>>, next: &AtomicUsize, turns: &[Turn]) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut out = conn;
    loop {
        let Some((_, path, body)) = crate::util::read_http_request(&mut reader) else {
            return;
        };
        // Only model calls take a turn; ag-loop's other questions (a local
        // server's context window) get what a plain OpenAI server answers:
        // its list of models, and 404 for the rest.
        if path.ends_with("/models") {
            let body = r#"{"object":"list","data":[{"id":"scripted","object":"model"}]}"#;
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            if out.write_all(head.as_bytes()).is_err() || out.write_all(body.as_bytes()).is_err() {
                return;
            }
            continue;
        }
        if !path.ends_with("/chat/completions") {
            let nf = "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n";
            if out.write_all(nf.as_bytes()).is_err() {
                return;
            }
            continue;
        }
        reqs.lock()
            .unwrap()
            .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
        let n = next.fetch_add(1, Ordering::SeqCst);
        let text = match turns.get(n) {
            Some(Turn::Stall) => {
                // Held until the client hangs up.
                let mut byte = [0u8; 1];
                let _ = std::io::Read::read(reader.get_mut(), &mut byte);
                return;
            }
            Some(t) => sse(t, n),
            None => sse(&Turn::Text("(script ended)"), n),
        };
        let sent = match turns.get(n) {
            Some(Turn::Held(_, HoldAt::Start, release)) => {
                release.wait();
                respond_sse(&mut out, &text)
            }
            Some(Turn::Held(_, HoldAt::MidStream, release)) => {
                respond_held(&mut out, &text, release)
            }
            _ => respond_sse(&mut out, &text),
        };
        if !sent {
            return;
        }
    }
}

/// Writes the headers and the first two events of a response (the role,
/// then the first piece), waits for `release`, then writes the rest.
fn respond_held(out: &mut impl Write, text: &str, release: &Release) -> bool {
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n",
        text.len()
    );
    let cut = text
        .match_indices("\n\n")
        .nth(1)
        .map_or(text.len(), |(at, _)| at + 2);
    let first = out.write_all(head.as_bytes()).is_ok()
        && out.write_all(&text.as_bytes()[..cut]).is_ok()
        && out.flush().is_ok();
    if !first {
        return false;
    }
    release.wait();
    out.write_all(&text.as_bytes()[cut..]).is_ok() && out.flush().is_ok()
}

/// Writes one event-stream response (with its length, for keep-alive);
/// false when the client is gone.
pub fn respond_sse(out: &mut impl Write, text: &str) -> bool {
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n",
        text.len()
    );
    let ok = out.write_all(head.as_bytes()).is_ok() && out.write_all(text.as_bytes()).is_ok();
    ok && out.flush().is_ok()
}

/// What a chat request says of its conversation, for servers that answer
/// by it (several agents at once, each with a script of its own).
pub struct Conversation {
    /// The text of its first user message (the task).
    pub first: String,
    /// Tool results in it so far.
    pub results: usize,
    /// Its last message is a tool result.
    pub after_tool: bool,
}

/// A message's text: a string, or its text parts joined.
pub fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// A server on 127.0.0.1 handing each chat request's body to `handle`,
/// with the connection to answer on and its reader (to wait on the
/// client); any other path gets 404. `handle` returns false to drop the
/// connection. Returns the port.
pub fn chat_server<F>(handle: F) -> u16
where
    F: Fn(&[u8], &mut TcpStream, &mut BufReader<TcpStream>) -> bool + Send + Sync + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = Arc::new(handle);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { continue };
            let handle = handle.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let mut out = conn;
                while let Some((_, path, body)) = crate::util::read_http_request(&mut reader) {
                    if !path.ends_with("/chat/completions") {
                        let nf = "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n";
                        if out.write_all(nf.as_bytes()).is_err() {
                            return;
                        }
                        continue;
                    }
                    if !handle(&body, &mut out, &mut reader) {
                        return;
                    }
                }
            });
        }
    });
    port
}

/// A model server on 127.0.0.1 answering each chat request by `answer`
/// (given the connection too, to see whether its client went away);
/// `None` holds the request until the client goes away (a model call in
/// flight when the run is stopped). Returns its port.
pub fn conversation_server<F>(answer: F) -> u16
where
    F: Fn(&Conversation, &TcpStream) -> Option<Turn> + Send + Sync + 'static,
{
    chat_server(move |body, out, reader| {
        let req: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let msgs = req["messages"].as_array().cloned().unwrap_or_default();
        let conversation = Conversation {
            first: msgs
                .iter()
                .find(|m| m["role"] == "user")
                .map(|m| text_of(&m["content"]))
                .unwrap_or_default(),
            results: msgs.iter().filter(|m| m["role"] == "tool").count(),
            after_tool: msgs.last().is_some_and(|m| m["role"] == "tool"),
        };
        match answer(&conversation, out) {
            // n = 0: every answer reports the same usage.
            Some(turn) => respond_sse(out, &sse(&turn, 0)),
            None => {
                let mut byte = [0u8; 1];
                let _ = std::io::Read::read(reader.get_mut(), &mut byte);
                false
            }
        }
    })
}
