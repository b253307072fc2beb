//! A tiny HTTP server on 127.0.0.1 for ag-llm's tests: it answers
//! scripted replies (real provider streams and error bodies from
//! `tests/fixtures/wire/`) in order and keeps what each request carried.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::bin;
use crate::util::{Env, Run};

pub(crate) fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/wire")
            .join(name),
    )
    .unwrap()
}

/// How the server answers one request.
#[derive(Clone)]
pub(crate) enum Reply {
    /// A status, headers and a whole body, then the connection closes.
    Body(u16, Vec<(&'static str, String)>, Vec<u8>),
    /// An SSE body's first bytes, then the connection stays open (until the client goes).
    Hang(Vec<u8>),
    /// Accept and close without answering.
    Drop,
    /// Read the request, then send nothing at all (until the client goes).
    Silent,
    /// Read the request, stay silent this long, then answer as `Body`.
    Late(std::time::Duration, Box<Reply>),
}

pub(crate) fn sse(body: Vec<u8>) -> Reply {
    Reply::Body(
        200,
        vec![("content-type", "text/event-stream".into())],
        body,
    )
}

/// An error body from a `.json` wire fixture: `{http_status, headers, body, body_raw}`.
pub(crate) fn http_error(name: &str) -> Reply {
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
pub(crate) struct Seen {
    pub(crate) path: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Value,
}

impl Seen {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A server answering the scripted replies in order (a 500 once they run out).
pub(crate) struct Server {
    pub(crate) port: u16,
    pub(crate) seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    pub(crate) fn start(replies: Vec<Reply>) -> Server {
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

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

pub(crate) fn read_request(conn: &mut TcpStream) -> Option<Seen> {
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

pub(crate) fn answer(mut conn: TcpStream, reply: Reply) {
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
        Reply::Silent => {
            let mut buf = [0u8; 64];
            while matches!(conn.read(&mut buf), Ok(n) if n > 0) {}
        }
        Reply::Late(wait, reply) => {
            std::thread::sleep(wait);
            answer(conn, *reply);
        }
    }
}

/// ag-llm in `env` with short retry waits.
pub(crate) fn ag_llm(env: &Env, args: &[&str]) -> std::process::Command {
    let mut c = env.cmd(bin!("ag-llm"));
    c.args(args)
        .env("AG_LLM_RETRY_BASE_MS", "1")
        .env("AG_LLM_RETRY_MAX_MS", "20");
    c
}

pub(crate) fn events(r: &Run) -> Vec<Value> {
    let lines = r.json_lines();
    assert!(!lines.is_empty(), "no events\n{r}");
    lines
}

pub(crate) fn last(r: &Run) -> Value {
    events(r).pop().unwrap()
}
