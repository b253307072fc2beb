//! The MCP client library (`ag::mcp::client`) against ag-mcp: over stdio
//! (the server started from a command line in its own process group) and
//! over streamable HTTP (ag-mcp behind a small HTTP bridge); listing,
//! calling, cancelling, a server that dies, and restarting it once.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ag::mcp::client::{ConnectOptions, McpClient, McpError, SERVER_GONE};
use ag::proc::{Signal, foreign_group_alive, process_alive, signal_process};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::bin;
use crate::util::{Env, run_args};

const HANG: Duration = Duration::from_secs(30);

fn options(env: &Env) -> ConnectOptions {
    ConnectOptions {
        cwd: Some(env.path().to_path_buf()),
        ..ConnectOptions::default()
    }
}

async fn connect(env: &Env, spec: &str) -> McpClient {
    match McpClient::connect_with(spec, options(env)).await {
        Ok(c) => c,
        Err(e) => panic!("cannot connect to `{spec}`: {e}"),
    }
}

/// Waits until `path` holds `n` pids, one a line.
async fn pids(path: &std::path::Path, n: usize) -> Vec<u32> {
    let deadline = Instant::now() + HANG;
    loop {
        let pids: Vec<u32> = std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if pids.len() >= n {
            return pids;
        }
        assert!(
            Instant::now() < deadline,
            "{} never got {n} pids",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn all_gone(pids: &[u32]) {
    let deadline = Instant::now() + HANG;
    while foreign_group_alive(pids[0]) || pids.iter().any(|p| process_alive(*p)) {
        assert!(Instant::now() < deadline, "processes {pids:?} survived");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn ag_mcps_tools_come_back_as_the_same_definitions_and_results() {
    let env = Env::new();
    env.write("notes.txt", "alpha\nbeta\n");
    let spec = format!("{} --tools read,ls", bin!("ag-mcp"));
    let client = connect(&env, &spec).await;
    assert_eq!(client.name(), "ag-mcp");
    assert_eq!(client.spec(), spec);
    let defs: Vec<Value> = [bin!("ag-read"), bin!("ag-ls")]
        .iter()
        .map(|b| run_args(&env, b, &["--schema"]).ok().json())
        .collect();
    let tools: Vec<Value> = client
        .tools()
        .iter()
        .map(|t| serde_json::to_value(t).unwrap())
        .collect();
    // ag tool -> MCP -> ag tool loses nothing.
    assert_eq!(tools, defs);

    let cancel = CancellationToken::new();
    let r = client
        .call("read", &json!({"file_path": "notes.txt"}), &cancel)
        .await;
    assert!(!r.is_error, "{r:?}");
    assert!(
        r.output.contains("alpha") && r.output.contains("beta"),
        "{r:?}"
    );
    assert!(r.details["hash"].as_str().unwrap().starts_with("xxh3:"));
    assert_eq!(r.id, None);

    let r = client
        .call("read", &json!({"file_path": "missing.txt"}), &cancel)
        .await;
    assert!(r.is_error);
    assert_eq!(r.error_code.as_deref(), Some("read.not_found"), "{r:?}");

    let r = client
        .call("read", &json!(["not", "an object"]), &cancel)
        .await;
    assert!(r.is_error);
    assert_eq!(r.error_code.as_deref(), Some("call.invalid_arguments"));
    assert!(r.output.contains("an array"), "{}", r.output);

    let r = client.call("nosuch", &json!({}), &cancel).await;
    assert!(r.is_error);
    assert_eq!(r.error_code.as_deref(), Some("mcp.call_failed"));
    assert!(r.output.contains("unknown tool `nosuch`"), "{}", r.output);
    assert!(client.gone().is_none());
    client.close().await;
}

#[tokio::test]
async fn a_cancelled_call_is_aborted_and_the_server_ends_the_tool() {
    let env = Env::new();
    let client = Arc::new(connect(&env, &format!("{} --tools bash", bin!("ag-mcp"))).await);
    let cancel = CancellationToken::new();
    let call = {
        let (client, cancel) = (client.clone(), cancel.clone());
        tokio::spawn(async move {
            client
                .call(
                    "bash",
                    &json!({"command": "echo $$ > pids; sleep 60 & echo $! >> pids; sleep 60"}),
                    &cancel,
                )
                .await
        })
    };
    let pids = pids(&env.join("pids"), 2).await;
    cancel.cancel();
    let r = call.await.unwrap();
    assert!(r.is_error);
    assert_eq!(r.error_code.as_deref(), Some("call.aborted"), "{r:?}");
    // ag-mcp got `notifications/cancelled` and ended the call's groups.
    all_gone(&pids).await;
    let r = client
        .call(
            "bash",
            &json!({"command": "echo still here"}),
            &CancellationToken::new(),
        )
        .await;
    assert!(!r.is_error, "{r:?}");
    assert!(r.output.starts_with("still here\n"), "{r:?}");
}

#[tokio::test]
async fn a_dead_server_is_reported_and_restarted_once() {
    let env = Env::new();
    // `exec` makes the recorded shell pid the server's own.
    let spec = format!("echo $$ >> server.pid; exec {} --tools ls", bin!("ag-mcp"));
    let mut client = connect(&env, &spec).await;
    let cancel = CancellationToken::new();
    let ls = json!({"path": "."});
    assert!(!client.call("ls", &ls, &cancel).await.is_error);

    let first = pids(&env.join("server.pid"), 1).await[0];
    assert!(signal_process(first, Signal::SIGKILL));
    let r = client.call("ls", &ls, &cancel).await;
    assert!(r.is_error);
    assert_eq!(r.error_code.as_deref(), Some(SERVER_GONE), "{r:?}");
    assert!(r.output.contains("killed by SIGKILL"), "{}", r.output);
    assert!(r.output.contains("`ag-mcp`"), "{}", r.output);
    assert!(client.gone().unwrap().contains("SIGKILL"));

    assert!(client.can_restart());
    client.restart().await.unwrap();
    assert!(client.gone().is_none());
    let r = client.call("ls", &ls, &cancel).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(client.tools().len(), 1);

    let second = pids(&env.join("server.pid"), 2).await[1];
    assert_ne!(first, second);
    assert!(signal_process(second, Signal::SIGKILL));
    let r = client.call("ls", &ls, &cancel).await;
    assert_eq!(r.error_code.as_deref(), Some(SERVER_GONE), "{r:?}");
    assert!(!client.can_restart());
    let e = client.restart().await.unwrap_err();
    assert_eq!(e.code(), "mcp.restart_limit");
    assert!(matches!(e, McpError::RestartLimit { .. }));
}

#[tokio::test]
async fn a_server_that_cannot_start_says_why() {
    let env = Env::new();
    let e = McpClient::connect_with("echo 'no config found' >&2; exit 3", options(&env))
        .await
        .err()
        .unwrap();
    assert_eq!(e.code(), "mcp.startup");
    assert!(e.to_string().contains("no config found"), "{e}");

    let e = McpClient::connect_with("/no/such/server --stdio", options(&env))
        .await
        .err()
        .unwrap();
    assert_eq!(e.code(), "mcp.startup");
    assert!(e.to_string().contains("/no/such/server"), "{e}");

    let e = McpClient::connect("  ").await.err().unwrap();
    assert_eq!(e.code(), "mcp.spec");
}

#[tokio::test]
async fn close_ends_the_servers_whole_process_group() {
    let env = Env::new();
    let spec = format!(
        "sleep 60 & echo $! > bg.pid; echo $$ > server.pid; exec {} --tools ls",
        bin!("ag-mcp")
    );
    let client = connect(&env, &spec).await;
    let server = pids(&env.join("server.pid"), 1).await[0];
    let bg = pids(&env.join("bg.pid"), 1).await[0];
    assert!(process_alive(server) && process_alive(bg));
    client.close().await;
    all_gone(&[server, bg]).await;
}

/// ag-mcp behind a minimal streamable-HTTP endpoint (JSON responses, no
/// SSE, no session): each POSTed message goes to ag-mcp's stdin, and a
/// request is answered with ag-mcp's response to it.
pub struct Bridge {
    pub url: String,
    server: Child,
}

type Pipes = Arc<Mutex<(ChildStdin, BufReader<ChildStdout>)>>;

impl Bridge {
    fn start(env: &Env, args: &[&str]) -> Bridge {
        Bridge::start_with(env, args, None)
    }

    /// A bridge that answers 401 to a request without the header `need`
    /// (a header line, `Name: value`, compared without regard to the
    /// name's case).
    pub fn start_with(env: &Env, args: &[&str], need: Option<&str>) -> Bridge {
        let need = need.map(|n| {
            let (k, v) = n.split_once(':').unwrap();
            (k.trim().to_ascii_lowercase(), v.trim().to_string())
        });
        let mut cmd = env.cmd(bin!("ag-mcp"));
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut server = cmd.spawn().unwrap();
        let pipes: Pipes = Arc::new(Mutex::new((
            server.stdin.take().unwrap(),
            BufReader::new(server.stdout.take().unwrap()),
        )));
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { return };
                let pipes = pipes.clone();
                let need = need.clone();
                std::thread::spawn(move || {
                    let _ = serve_one(conn, &pipes, need.as_ref());
                });
            }
        });
        Bridge { url, server }
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

fn serve_one(
    conn: TcpStream,
    pipes: &Pipes,
    need: Option<&(String, String)>,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut conn = conn;
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut length = 0usize;
    let mut has_needed = need.is_none();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h)?;
        if h.trim().is_empty() {
            break;
        }
        if let (Some((name, value)), Some((k, v))) = (need, h.split_once(':'))
            && k.trim().eq_ignore_ascii_case(name)
            && v.trim() == value
        {
            has_needed = true;
        }
        if let Some((k, v)) = h.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    if !has_needed {
        return conn.write_all(
            b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
    }
    if !request_line.starts_with("POST ") {
        return conn.write_all(
            b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
    }
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let mut guard = pipes.lock().unwrap();
    let (stdin, stdout) = &mut *guard;
    stdin.write_all(&body)?;
    stdin.write_all(b"\n")?;
    stdin.flush()?;
    if message.get("id").is_none() || message.get("method").is_none() {
        return conn
            .write_all(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    }
    loop {
        let mut line = String::new();
        if stdout.read_line(&mut line)? == 0 {
            // ag-mcp is gone: so is the connection.
            return Ok(());
        }
        let answer: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        if answer.get("id") == message.get("id") && answer.get("method").is_none() {
            let text = line.trim_end();
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                text.len()
            );
            conn.write_all(head.as_bytes())?;
            return conn.write_all(text.as_bytes());
        }
    }
}

#[tokio::test]
async fn a_streamable_http_server_is_listed_and_called_by_url() {
    let env = Env::new();
    env.write("notes.txt", "over http\n");
    let bridge = Bridge::start(&env, &["--tools", "read,grep"]);
    let client = connect(&env, &bridge.url).await;
    assert_eq!(client.name(), "ag-mcp");
    let names: Vec<&str> = client.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["read", "grep"]);
    let cancel = CancellationToken::new();
    let r = client
        .call("read", &json!({"file_path": "notes.txt"}), &cancel)
        .await;
    assert!(r.output.contains("over http"), "{r:?}");
    let r = client
        .call("read", &json!({"file_path": "nope.txt"}), &cancel)
        .await;
    assert_eq!(r.error_code.as_deref(), Some("read.not_found"), "{r:?}");

    // The server goes away: calls say so.
    drop(bridge);
    let r = client.call("grep", &json!({"pattern": "x"}), &cancel).await;
    assert!(r.is_error);
    assert_eq!(r.error_code.as_deref(), Some(SERVER_GONE), "{r:?}");
    assert!(client.gone().is_some());
}

#[tokio::test]
async fn an_unreachable_url_is_a_startup_error() {
    let env = Env::new();
    // A port that was free a moment ago: nothing listens there.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let e = McpClient::connect_with(&url, options(&env))
        .await
        .err()
        .unwrap();
    assert_eq!(e.code(), "mcp.startup", "{e}");
    assert!(e.to_string().contains(&url), "{e}");
}

#[tokio::test]
async fn a_dropped_client_still_ends_the_server() {
    let env = Env::new();
    // A server whose process outlives the end of its stdin.
    let spec = format!(
        "echo $$ > server.pid; {} --tools ls; sleep 60",
        bin!("ag-mcp")
    );
    let client = connect(&env, &spec).await;
    let server = pids(&env.join("server.pid"), 1).await[0];
    drop(client);
    all_gone(&[server]).await;
}

#[tokio::test]
async fn an_http_servers_headers_go_with_every_request() {
    let env = Env::new();
    let bridge = Bridge::start_with(&env, &["--tools", "ls"], Some("X-Api-Key: k-123"));
    let e = McpClient::connect_with(&bridge.url, options(&env))
        .await
        .err()
        .unwrap();
    assert_eq!(e.code(), "mcp.startup", "{e}");
    let with = ConnectOptions {
        headers: vec![("X-Api-Key".into(), "k-123".into())],
        ..options(&env)
    };
    let client = McpClient::connect_with(&bridge.url, with).await.unwrap();
    let r = client
        .call("ls", &json!({}), &CancellationToken::new())
        .await;
    assert!(!r.is_error, "{r:?}");
}
