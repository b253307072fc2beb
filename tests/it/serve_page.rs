//! ag-serve over HTTP: what is refused without the token, from another
//! site or under another host name; and the web page in a real headless
//! Chromium (Debian's `chromium`, driven through the DevTools protocol by
//! tests/fixtures/serve/page.mjs with node's own modules), against a
//! session of a scripted model: the printed URL opened, the live stream,
//! a prompt sent, a call approved, a rewind, screenshots, a reload, and
//! another local server that gets nothing of the token. Then, as hostile
//! callers: connections that send a header a byte at a time, or nothing,
//! by the hundred; and rewinds of one session sent at once. chromium and
//! node are required: scripts/test installs them.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::model_server::{ModelServer, Turn};
use crate::serve::{Serve, model_args};
use crate::util::Env;

/// Result lines of a `ag-fanout` run: task fix-1 failed, then ran again.
const FANOUT: &str = r#"{"type":"result","id":"fix-1","line":1,"dir":"/src/a","model":"x/y","outcome":"model_error","exit":1,"session":"s1","cost":0.01,"diff":"","seconds":3.5,"error":"the model failed"}
{"type":"result","id":"fix-2","line":2,"dir":"/src/b","model":"x/y","outcome":"finished","exit":0,"session":"s2","cost":0.02,"diff":"","seconds":4.0,"error":null}
{"type":"result","id":"fix-1","line":1,"dir":"/src/a","model":"x/y","outcome":"finished","exit":0,"session":"s3","cost":0.03,"diff":"+new line","seconds":5.25,"error":null}
{"type":"summary","tasks":2,"outcomes":{"finished":2},"cost":0.05,"failed":0}
"#;

/// A key the machine holds, which nothing the page gets may show.
const KEY: &str = "sk-page-test-0123456789abcdef";

/// One HTTP/1.1 request; the status, the head and the body.
fn http(port: u16, request: &str) -> (u16, String, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, head.to_string(), body.to_string())
}

fn get(port: u16, path: &str, headers: &[&str]) -> (u16, String, String) {
    let mut req = format!("GET {path} HTTP/1.1\r\nConnection: close\r\n");
    for h in headers {
        req.push_str(h);
        req.push_str("\r\n");
    }
    req.push_str("\r\n");
    http(port, &req)
}

fn post(port: u16, path: &str, headers: &[&str], body: &str) -> (u16, String, String) {
    let mut req = format!(
        "POST {path} HTTP/1.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    for h in headers {
        req.push_str(h);
        req.push_str("\r\n");
    }
    req.push_str("\r\n");
    req.push_str(body);
    http(port, &req)
}

/// The printed URL, its port and its token.
fn printed_url(serve: &Serve) -> (String, u16, String) {
    let line = serve.wait_for_line("the web page: ");
    let url = line
        .split("the web page: ")
        .nth(1)
        .unwrap()
        .trim()
        .to_string();
    let port = url
        .trim_start_matches("http://127.0.0.1:")
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    // The token is in the fragment, which a browser never sends.
    let token = url.split("token=").nth(1).unwrap().to_string();
    (url, port, token)
}

#[test]
fn nothing_is_served_without_the_token_from_another_site_or_under_another_name() {
    let env = Env::new();
    let server = ModelServer::start(vec![Turn::Text("hi")]);
    env.write("results.jsonl", FANOUT);
    let serve = Serve::start(
        &env,
        &["--http", "127.0.0.1:0", "--fanout", "results.jsonl"],
    );
    let (_, port, token) = printed_url(&serve);
    let host = format!("Host: 127.0.0.1:{port}");
    let bearer = format!("Authorization: Bearer {token}");
    // The token file is the owner's only, and holds what was printed.
    let file = env.join(".home/.ag/serve/token");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), token);
    let mut c = serve.connect();
    c.send(&json!({"type": "start", "args": model_args(&server)}));
    let id = c.until("attached")["session"].as_str().unwrap().to_string();

    // Without the token: nothing but the page itself, which holds
    // nothing of this machine.
    for path in [
        "/api/sessions",
        "/api/fanout",
        &format!("/api/sessions/{id}/events"),
        "/nothing-here",
    ] {
        let (status, _, body) = get(port, path, &[&host]);
        assert_eq!(status, 401, "{path}: {body}");
        assert!(!body.contains(&id), "{path}: {body}");
        assert!(body.contains("token"), "{path}: {body}");
    }
    for path in ["/", "/page.js", "/page.css"] {
        let (status, head, body) = get(port, path, &[&host]);
        assert_eq!(status, 200, "{path}: {body}");
        assert!(
            !body.contains(&id) && !body.contains(&token) && !head.contains(&token),
            "{path}: {head}{body}"
        );
        // Under another name it is refused all the same.
        let (status, _, _) = get(port, path, &[&format!("Host: evil.example:{port}")]);
        assert_eq!(status, 403, "{path}");
    }
    let (status, _, _) = get(port, "/api/sessions?token=wrong", &[&host]);
    assert_eq!(status, 401);
    // With the token but from another site's page.
    let with = format!("/api/sessions?token={token}");
    let (status, _, body) = get(port, &with, &[&host, "Origin: http://evil.example"]);
    assert_eq!(status, 403, "{body}");
    assert!(!body.contains(&id), "{body}");
    let (status, _, _) = get(port, &with, &[&host, "Sec-Fetch-Site: cross-site"]);
    assert_eq!(status, 403);
    let (status, _, _) = post(
        port,
        &format!("/api/sessions/{id}/commands?token={token}"),
        &[&host, "Origin: http://evil.example"],
        r#"{"type":"prompt","content":"FORGED"}"#,
    );
    assert_eq!(status, 403);
    // Under another name for this address (DNS rebinding).
    let (status, _, body) = get(port, &with, &[&format!("Host: evil.example:{port}")]);
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("DNS rebinding"), "{body}");
    // The right way in.
    let (status, _, body) = get(port, &with, &[&host]);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(&id), "{body}");
    let (status, head, body) = get(port, &format!("/?token={token}"), &[&host]);
    assert_eq!(status, 200);
    assert!(body.contains("<script src=\"/page.js\""), "{body}");
    let head = head.to_ascii_lowercase();
    // No cookie: a browser would send it to every port of this host.
    assert!(!head.contains("set-cookie"), "{head}");
    assert!(
        head.contains("content-security-policy: default-src 'none'"),
        "{head}"
    );
    assert!(head.contains("referrer-policy: no-referrer"), "{head}");
    for cookie in [
        format!("Cookie: ag_serve_token_{port}={token}"),
        format!("Cookie: token={token}"),
    ] {
        let (status, _, _) = get(port, "/api/sessions", &[&host, &cookie]);
        assert_eq!(status, 401, "{cookie}");
    }
    // The fanout results: the last line of each task, its diff as a size.
    let (status, _, body) = get(port, "/api/fanout", &[&host, &bearer]);
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{v}");
    assert_eq!(results[0]["id"], "fix-2");
    assert_eq!(results[1]["outcome"], "finished");
    assert_eq!(results[1]["diff_bytes"], 9);
    assert!(results[1].get("diff").is_none());
    assert_eq!(v["summary"]["tasks"], 2);
    let (status, _, body) = post(
        port,
        &format!("/api/sessions/{id}/commands"),
        &[&host, &bearer, &format!("Origin: http://127.0.0.1:{port}")],
        r#"{"type":"nonsense"}"#,
    );
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("prompt"), "{body}");
    // The forged prompt never reached the session.
    c.send(&json!({"type": "prompt", "content": "real"}));
    c.until("agent_end");
    let text = std::fs::read_to_string(
        c.seen.iter().find(|v| v["type"] == "attached").unwrap()["path"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert!(!text.contains("FORGED"));
    // The event stream goes on after Last-Event-ID: the id of an event is
    // the offset after it.
    let events: Vec<&str> = text.lines().skip(1).collect();
    assert!(events.len() > 4);
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "GET /api/sessions/{id}/events HTTP/1.1\r\n{host}\r\n{bearer}\r\nLast-Event-ID: 3\r\n\r\n"
    )
    .unwrap();
    let mut got = String::new();
    let mut buf = [0u8; 65536];
    while !got.contains(&format!("id: {}\n", events.len())) {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "the stream ended: {got}");
        got.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let mut ids = Vec::new();
    let mut datas = Vec::new();
    for line in got.lines() {
        if let Some(i) = line.strip_prefix("id: ") {
            ids.push(i.trim().parse::<usize>().unwrap());
        }
        if let Some(d) = line.strip_prefix("data: ")
            && d.contains("\"timestamp\"")
        {
            datas.push(d.to_string());
        }
    }
    assert_eq!(ids, (4..=events.len()).collect::<Vec<_>>(), "{got}");
    assert_eq!(datas, events[3..], "{got}");
    assert!(
        got.contains("event: serve\ndata: {\"type\":\"attached\""),
        "{got}"
    );
    // A non-loopback address needs its flag.
    let r = crate::util::run_args(
        &env,
        crate::bin!("ag-serve"),
        &["--http", "0.0.0.0:0", "--socket", "/nonexistent/x"],
    );
    r.expect_code(2);
    assert!(r.stderr().contains("--allow-remote"), "{}", r.stderr());
}

/// Another HTTP server on this host, at another port, as any local process
/// may run: it answers every request with a small page, and keeps what
/// each request sent it (its head).
struct Elsewhere {
    port: u16,
    heads: Arc<Mutex<Vec<String>>>,
}

impl Elsewhere {
    fn start() -> Elsewhere {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let heads: Arc<Mutex<Vec<String>>> = Arc::default();
        let kept = heads.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let kept = kept.clone();
                std::thread::spawn(move || {
                    stream
                        .set_read_timeout(Some(Duration::from_secs(30)))
                        .unwrap();
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut head = String::new();
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                            break;
                        }
                        head.push_str(&line);
                    }
                    kept.lock().unwrap().push(head);
                    let body = "<!doctype html><title>elsewhere</title><p>elsewhere</p>";
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                });
            }
        });
        Elsewhere { port, heads }
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

fn chromium() -> String {
    for c in ["chromium", "chromium-browser"] {
        if Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return c.to_string();
        }
    }
    panic!(
        "chromium is not installed: scripts/test installs it (Debian: apt-get install chromium)"
    );
}

#[test]
fn the_page_in_a_real_browser_streams_sends_approves_and_rewinds() {
    let browser = chromium();
    assert!(
        Command::new("node").arg("--version").output().is_ok(),
        "node is not installed: scripts/test installs it (Debian: apt-get install nodejs)"
    );
    let env = Env::new();
    env.write("build1/out.o", "x");
    let answer = format!(
        "Removed build1. The key you asked about is {KEY}.\n\n**Done**, in two steps:\n\n- looked\n- removed\n\n```\nrm -rf build1\n```"
    );
    env.write("notes.md", "# Notes\n\nstatus: draft\n");
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("bash", json!({"command": "rm -rf build1"}))]),
        Turn::Tools(vec![(
            "edit",
            json!({"file_path": "notes.md", "old_string": "status: draft", "new_string": "status: final"}),
        )]),
        Turn::Owned(answer),
    ]);
    env.write("results.jsonl", FANOUT);
    let serve = Serve::start_with(
        &env,
        &["--http", "127.0.0.1:0", "--fanout", "results.jsonl"],
        &[("OPENAI_API_KEY", KEY)],
    );
    let (url, _, token) = printed_url(&serve);
    let elsewhere = Elsewhere::start();
    let mut args = model_args(&server);
    args.extend(["--tools", "bash,edit", "--sandbox", "off"].map(String::from));
    let mut watcher = serve.connect();
    watcher.send(&json!({"type": "start", "args": args, "client": "watcher"}));
    let attached = watcher.until("attached");
    let path = attached["path"].as_str().unwrap().to_string();

    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("serve-page");
    std::fs::create_dir_all(&out).unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/serve/page.mjs");
    let run = Command::new("node")
        .arg(&script)
        .arg(&url)
        .arg(&out)
        .arg(format!("http://127.0.0.1:{}/elsewhere", elsewhere.port))
        .env("CHROMIUM", &browser)
        .env("CHROMIUM_PROFILES", &out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "page.mjs failed:\n{stderr}\n{stdout}");
    let saw: Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(saw["errors"], json!([]), "the page threw: {saw}");
    assert_eq!(
        saw["tokenLeft"], false,
        "the token stayed in the address bar"
    );
    assert_eq!(saw["asking"], "needs approval", "{saw}");
    assert!(saw["markdown"]["strong"].as_u64().unwrap() >= 1, "{saw}");
    assert!(saw["markdown"]["items"].as_u64().unwrap() >= 2, "{saw}");
    assert!(saw["markdown"]["code"].as_u64().unwrap() >= 1, "{saw}");
    // The edit's diff, coloured.
    assert!(saw["markdown"]["added"].as_u64().unwrap() >= 1, "{saw}");
    assert!(saw["markdown"]["removed"].as_u64().unwrap() >= 1, "{saw}");
    // The key never reached the page.
    let text = saw["markdown"]["text"].as_str().unwrap();
    assert!(!text.contains(KEY), "the page shows the key: {text}");
    assert!(text.contains("redacted"), "{text}");
    assert_eq!(saw["fanoutRows"], 2, "{saw}");
    // Loaded again without the token in its address, the page goes on.
    let reloaded = &saw["reloaded"];
    assert!(
        !reloaded["href"].as_str().unwrap().contains("token"),
        "{reloaded}"
    );
    assert!(
        reloaded["status"]
            .as_str()
            .unwrap()
            .starts_with("connected as"),
        "{reloaded}"
    );
    // The browser that opened the page went to another server on this
    // host: it sent that server nothing of the token, and the other
    // server's page sees nothing of it.
    let heads = elsewhere.heads();
    assert!(
        heads.iter().any(|h| h.starts_with("GET /elsewhere ")),
        "the browser never reached the other server: {heads:?}"
    );
    for head in &heads {
        assert!(
            !head.contains(&token),
            "the token reached another server on this host:\n{head}"
        );
    }
    let away = saw["away"].to_string();
    assert!(!away.contains(&token), "{away}");
    for shot in saw["screenshots"].as_array().unwrap() {
        let bytes = std::fs::read(shot.as_str().unwrap()).unwrap();
        assert!(
            bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000,
            "{shot}"
        );
    }

    // The other client saw the page's prompt and who approved the call.
    let answered = watcher.until("approval_answered");
    assert!(
        answered["by"].as_str().unwrap().starts_with("page-"),
        "{answered}"
    );
    let file = std::fs::read_to_string(&path).unwrap();
    assert!(file.contains("\"content\":\"clean the build\""), "{file}");
    // The rewind put the file back and went on in a new session whose
    // parent is the first.
    assert!(
        env.join("build1/out.o").exists(),
        "the rewind did not restore build1"
    );
    let new_id = saw["newId"].as_str().unwrap();
    assert_ne!(new_id, saw["oldId"].as_str().unwrap());
    let mut c = serve.connect();
    c.send(&json!({"type": "list"}));
    let list = c.until("sessions");
    let new = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == new_id)
        .unwrap_or_else(|| panic!("{list}"));
    assert_eq!(new["state"], "idle", "{list}");
    let new_path = new["path"].as_str().unwrap();
    let header: Value = serde_json::from_str(
        std::fs::read_to_string(new_path)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(header["parent"], saw["oldId"], "{header}");
}

/// Whether the server closed `s` within `bound`: reading it gives the end,
/// or a reset, rather than a response. Returns what was read first.
fn closed_within(s: &mut TcpStream, bound: Duration) -> Result<Vec<u8>, String> {
    let deadline = Instant::now() + bound;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!(
                "still open after {bound:?}; it sent: {}",
                String::from_utf8_lossy(&got)
            ));
        }
        s.set_read_timeout(Some(left)).unwrap();
        match s.read(&mut buf) {
            Ok(0) => return Ok(got),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return Ok(got),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Reads one response with a Content-Length off a kept-alive connection:
/// its status and body.
fn response(s: &mut TcpStream) -> (u16, String) {
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut reader = BufReader::new(s.try_clone().unwrap());
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line == "\r\n" || line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().unwrap();
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).unwrap();
    let code = status.split_whitespace().nth(1).unwrap().parse().unwrap();
    (code, String::from_utf8_lossy(&body).into_owned())
}

#[test]
fn slow_and_idle_connections_are_closed_and_a_flood_of_them_leaves_the_token_holder_in() {
    let env = Env::new();
    // Few descriptors, as on a small machine: the flood below is more
    // connections than ag-serve could hold open at once.
    let serve = Serve::start_limited(
        &env,
        96,
        &[
            "--http",
            "127.0.0.1:0",
            "--http-header-timeout",
            "2",
            "--http-idle-timeout",
            "3",
        ],
    );
    let note = serve.wait_for_line("HTTP connections at once");
    assert!(note.contains("at most 24 "), "{note}");
    let (_, port, token) = printed_url(&serve);
    let host = format!("Host: 127.0.0.1:{port}");
    let bearer = format!("Authorization: Bearer {token}");
    let bound = Duration::from_secs(30);
    let server = ModelServer::start(vec![Turn::Text("hi")]);

    // A connection that sends nothing is closed, without a response.
    let mut silent = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let got = closed_within(&mut silent, bound).unwrap();
    assert!(got.is_empty(), "{}", String::from_utf8_lossy(&got));

    // One that sends its head a byte at a time is closed all the same: the
    // head has 2 s in all, however often its bytes come.
    let mut slow = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let head = format!("GET /api/sessions HTTP/1.1\r\n{host}\r\n{bearer}\r\nX-Pad: ");
    let started = Instant::now();
    let mut sent = 0;
    let closed = loop {
        assert!(
            started.elapsed() < bound,
            "a head sent a byte at a time kept its connection for {bound:?}"
        );
        let byte = head.as_bytes().get(sent).copied().unwrap_or(b'x');
        if slow.write_all(&[byte]).is_err() {
            break Vec::new();
        }
        sent += 1;
        match closed_within(&mut slow, Duration::from_millis(100)) {
            Ok(got) => break got,
            Err(e) if e.starts_with("still open") => {}
            Err(e) => panic!("{e}"),
        }
    };
    assert!(closed.is_empty(), "{}", String::from_utf8_lossy(&closed));

    // One kept alive after its answer is closed once it sits idle.
    let mut idle = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        idle,
        "GET /api/sessions HTTP/1.1\r\n{host}\r\n{bearer}\r\n\r\n"
    )
    .unwrap();
    let (status, body) = response(&mut idle);
    assert_eq!(status, 200, "{body}");
    let got = closed_within(&mut idle, bound).unwrap();
    assert!(got.is_empty(), "{}", String::from_utf8_lossy(&got));

    // A flood: 200 connections that send nothing or part of a head, more
    // than the 96 descriptors ag-serve has. The token holder still gets in,
    // over HTTP and over the socket.
    let mut flood = Vec::new();
    for n in 0..200 {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        if n % 2 == 0 {
            s.write_all(format!("GET / HTTP/1.1\r\n{host}\r\n").as_bytes())
                .unwrap();
        }
        flood.push(s);
    }
    let (status, _, body) = get(port, "/api/sessions", &[&host, &bearer]);
    assert_eq!(status, 200, "{body}");
    let mut c = serve.connect();
    c.send(&json!({"type": "list"}));
    c.until("sessions");
    // An event stream of the token holder's outlives the flood: it is the
    // last a new connection would push out.
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.send(&json!({"type": "start", "args": model_args(&server)}));
    let id = c.until("attached")["session"].as_str().unwrap().to_string();
    write!(
        stream,
        "GET /api/sessions/{id}/events HTTP/1.1\r\n{host}\r\n{bearer}\r\n\r\n"
    )
    .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    stream.set_read_timeout(Some(bound)).unwrap();
    let mut line = String::new();
    while !line.contains("\"attached\"") {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "the stream ended");
    }
    let mut more = Vec::new();
    for _ in 0..100 {
        more.push(TcpStream::connect(("127.0.0.1", port)).unwrap());
    }
    // Every connection of the floods is closed within the bound.
    let deadline = Instant::now() + Duration::from_secs(60);
    for (n, mut s) in flood.into_iter().chain(more).enumerate() {
        let left = deadline.saturating_duration_since(Instant::now());
        closed_within(&mut s, left.max(Duration::from_millis(1)))
            .unwrap_or_else(|e| panic!("connection {n} of the flood: {e}"));
    }
    // The stream still runs: ending the session reaches it.
    c.send(&json!({"type": "end", "session": id}));
    while !line.contains("\"session_ended\"") {
        line.clear();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "the event stream was closed by the flood"
        );
    }
}

#[test]
fn rewinds_of_one_session_sent_at_once_run_one_and_refuse_the_others() {
    let env = Env::new();
    // The session works in `work`; what the test needs to hold the first
    // rewind lies outside it, where no checkpoint sees it.
    env.write("work/notes.md", "status: draft\n");
    let server = ModelServer::start(vec![
        Turn::Tools(vec![(
            "edit",
            json!({"file_path": "notes.md", "old_string": "draft", "new_string": "final"}),
        )]),
        Turn::Text("edited"),
    ]);
    // ag-loop, whose end waits for the test: the first rewind is under
    // way (the session it ends has not yet ended) for as long as the test
    // needs to send the others.
    let release = env.join("release");
    let wrapper = env.write(
        "slow-end-ag-loop",
        format!(
            "#!/bin/sh\n\"{}\" \"$@\"\nstatus=$?\nwhile [ ! -e \"{}\" ]; do sleep 0.05; done\nexit $status\n",
            crate::bin!("ag-loop"),
            release.display()
        ),
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let serve = Serve::start(
        &env,
        &[
            "--http",
            "127.0.0.1:0",
            "--ag-loop",
            wrapper.to_str().unwrap(),
        ],
    );
    let (_, port, token) = printed_url(&serve);
    let mut args = model_args(&server);
    args.extend(["--tools", "edit"].map(String::from));
    let mut c = serve.connect();
    c.send(&json!({"type": "start", "cwd": "work", "args": args, "prompt": "finish the notes"}));
    let id = c.until("attached")["session"].as_str().unwrap().to_string();
    let turn = c.until("checkpoint")["turn"].clone();
    c.until("agent_end");
    c.send(&json!({"type": "detach"}));
    c.until("detached");

    // Three rewinds of it at once.
    let (tx, rx) = std::sync::mpsc::channel();
    let barrier = Arc::new(std::sync::Barrier::new(3));
    for _ in 0..3 {
        let (tx, barrier, id, token) = (tx.clone(), barrier.clone(), id.clone(), token.clone());
        let body = json!({ "turn": turn }).to_string();
        std::thread::spawn(move || {
            barrier.wait();
            let r = post(
                port,
                &format!("/api/sessions/{id}/rewind"),
                &[
                    &format!("Host: 127.0.0.1:{port}"),
                    &format!("Authorization: Bearer {token}"),
                ],
                &body,
            );
            let _ = tx.send(r);
        });
    }
    // Two are refused while the first is under way.
    let mut refused = Vec::new();
    for _ in 0..2 {
        let (status, _, body) = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("no answer to a rewind sent while another was under way");
        assert_eq!(status, 409, "{body}");
        refused.push(body);
    }
    for body in &refused {
        assert!(
            body.contains(&format!("a rewind of session {id} is under way")),
            "{body}"
        );
    }
    // And one over the socket too.
    c.send(&json!({"type": "rewind", "session": id, "turn": turn}));
    let r = c.until("refused");
    assert!(
        r["message"].as_str().unwrap().contains("is under way"),
        "{r}"
    );
    std::fs::write(&release, "").unwrap();
    let (status, _, body) = rx
        .recv_timeout(Duration::from_secs(120))
        .expect("the rewind under way never answered");
    assert_eq!(status, 200, "{body}");
    let done: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(done["rewound"], id.as_str());
    let new = done["session"].as_str().unwrap();
    assert_eq!(
        std::fs::read_to_string(env.join("work/notes.md")).unwrap(),
        "status: draft\n"
    );
    // One new session, one ag-loop: the old one ended, the new one runs.
    c.send(&json!({"type": "list"}));
    let list = c.until("sessions");
    let sessions = list["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2, "{list}");
    let live: Vec<&Value> = sessions.iter().filter(|s| s["state"] != "ended").collect();
    assert_eq!(live.len(), 1, "{list}");
    assert_eq!(live[0]["id"], new, "{list}");
    // Once it is over, the session may be rewound again.
    let (status, _, body) = post(
        port,
        &format!("/api/sessions/{id}/rewind"),
        &[
            &format!("Host: 127.0.0.1:{port}"),
            &format!("Authorization: Bearer {token}"),
        ],
        &json!({ "turn": turn }).to_string(),
    );
    assert_eq!(status, 200, "{body}");
    let again: Value = serde_json::from_str(&body).unwrap();
    assert_ne!(again["session"], new, "{again}");
}
