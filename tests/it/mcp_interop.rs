//! MCP against implementations not written here: ag-mcp driven by the
//! official TypeScript SDK's client, and ag's MCP client using the
//! reference server `@modelcontextprotocol/server-everything` over stdio and
//! streamable HTTP. The packages are installed by `scripts/mcp-interop`
//! (which needs node and the npm registry; scripts/test runs it); without
//! them each test fails, saying what to run. The tests themselves never
//! reach the network.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ag::mcp::client::{ConnectOptions, McpClient};
use ag::proc::{foreign_group_alive, process_alive};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::bin;
use crate::util::{Env, run};

const HANG: Duration = Duration::from_secs(30);

/// Where scripts/mcp-interop installed the packages, if it did and node
/// is there to run them.
fn interop() -> PathBuf {
    let dir = std::env::var_os("AG_MCP_INTEROP_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcp-interop"));
    let ready = ["sdk", "server-everything"].iter().all(|p| {
        dir.join("node_modules/@modelcontextprotocol")
            .join(p)
            .join("package.json")
            .is_file()
    });
    let node = Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ready && node,
        "the MCP reference packages are not installed in {} (or node is missing): run scripts/mcp-interop, or scripts/test, which runs it",
        dir.display()
    );
    dir
}

fn package(dir: &Path, name: &str) -> PathBuf {
    dir.join("node_modules/@modelcontextprotocol").join(name)
}

fn everything(dir: &Path) -> String {
    package(dir, "server-everything")
        .join("dist/index.js")
        .display()
        .to_string()
}

/// Runs the TypeScript SDK client on a plan; its output lines.
fn sdk_client(env: &Env, dir: &Path, args: &[&str], calls: Value) -> Vec<Value> {
    let plan = json!({
        "sdk": package(dir, "sdk"),
        "command": bin!("ag-mcp"),
        "args": args,
        "cwd": env.path(),
        "calls": calls,
    });
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/sdk-client.mjs");
    let mut cmd = env.cmd("node");
    cmd.arg(script);
    let r = run(cmd, Some(plan.to_string().as_bytes()));
    r.ok();
    r.json_lines()
}

fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn ag_mcp_answers_the_typescript_sdk_client() {
    let dir = interop();
    let env = Env::new();
    env.write("notes.txt", "from the sdk\n");
    let out = sdk_client(
        &env,
        &dir,
        &["--tools", "read,bash"],
        json!([
            {"name": "read", "arguments": {"file_path": "notes.txt"}},
            {"name": "read", "arguments": {"file_path": "missing.txt"}},
            {"name": "bash", "arguments": {"command": "echo $$ > pids; sleep 60 & echo $! >> pids; touch ready; sleep 60"},
             "abort_when": env.join("ready")},
            {"name": "bash", "arguments": {"command": "echo after"}},
        ]),
    );
    assert_eq!(out.len(), 6, "{out:?}");
    assert_eq!(out[0]["server"]["name"], "ag-mcp");
    let names: Vec<&str> = out[1]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    // A binary's name serves all of its tools, one per job.
    assert_eq!(
        names,
        [
            "read",
            "bash",
            "bash_background",
            "job_output",
            "job_stop",
            "job_list"
        ]
    );

    let read = &out[2]["result"];
    assert!(text(read).contains("from the sdk"), "{read}");
    // What a client gets: the file's text as content, no structured content
    // to show in its place, and the details where models do not look.
    assert!(read.get("structuredContent").is_none(), "{read}");
    assert!(read["_meta"]["ag/details"]["hash"].is_string(), "{read}");
    assert!(
        out[1]["tools"][0].get("outputSchema").is_none(),
        "{}",
        out[1]
    );
    let missing = &out[3]["result"];
    assert_eq!(missing["isError"], true, "{missing}");

    // The SDK's abort sends notifications/cancelled: the command's groups end.
    assert!(out[4].get("error").is_some(), "{:?}", out[4]);
    let pids: Vec<u32> = std::fs::read_to_string(env.join("pids"))
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    let deadline = Instant::now() + HANG;
    while foreign_group_alive(pids[0]) || pids.iter().any(|p| process_alive(*p)) {
        assert!(
            Instant::now() < deadline,
            "{pids:?} survived the cancellation"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(text(&out[5]["result"]).starts_with("after"), "{:?}", out[5]);
}

async fn check_everything(client: &McpClient) {
    let names: Vec<&str> = client.tools().iter().map(|t| t.name.as_str()).collect();
    for n in [
        "echo",
        "get-sum",
        "get-tiny-image",
        "get-structured-content",
    ] {
        assert!(names.contains(&n), "{n} missing from {names:?}");
    }
    let echo = client.tools().iter().find(|t| t.name == "echo").unwrap();
    assert_eq!(echo.label, "Echo Tool");
    assert_eq!(echo.parameters["type"], "object");
    assert!(echo.parameters["properties"]["message"].is_object());

    let cancel = CancellationToken::new();
    let r = client
        .call("echo", &json!({"message": "hi"}), &cancel)
        .await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.output, "Echo: hi");
    let r = client
        .call("get-sum", &json!({"a": 2, "b": 3}), &cancel)
        .await;
    assert!(r.output.contains('5'), "{r:?}");
    let r = client.call("get-tiny-image", &json!({}), &cancel).await;
    assert_eq!(r.images.len(), 1, "{r:?}");
    assert_eq!(r.images[0].mime_type, "image/png");
    let r = client
        .call(
            "get-structured-content",
            &json!({"location": "Chicago"}),
            &cancel,
        )
        .await;
    assert!(r.details["temperature"].is_number(), "{r:?}");
    // Its own validation failure comes back as an error result.
    let r = client.call("get-sum", &json!({"a": "two"}), &cancel).await;
    assert!(r.is_error, "{r:?}");
}

#[tokio::test]
async fn the_client_uses_server_everything_over_stdio() {
    let dir = interop();
    let spec = format!("node {} stdio", everything(&dir));
    let client = McpClient::connect(&spec).await.unwrap();
    assert!(client.name().contains("everything"), "{}", client.name());
    check_everything(&client).await;

    // A long operation, cancelled: aborted, and the server goes on.
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        stop.cancel();
    });
    let r = client
        .call(
            "trigger-long-running-operation",
            &json!({"duration": 60, "steps": 60}),
            &cancel,
        )
        .await;
    assert_eq!(r.error_code.as_deref(), Some("call.aborted"), "{r:?}");
    let r = client
        .call(
            "echo",
            &json!({"message": "again"}),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(r.output, "Echo: again");
    client.close().await;
}

/// server-everything's streamable-HTTP transport on a free port.
struct HttpEverything(Child);

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_http(dir: &Path) -> (HttpEverything, u16) {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new("node")
        .arg(everything(dir))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let server = HttpEverything(child);
    // It says so on stderr once it listens.
    let mut said = String::new();
    let mut lines = BufReader::new(stderr).lines();
    for line in lines.by_ref() {
        let line = line.unwrap();
        said.push_str(&line);
        said.push('\n');
        if line.contains("listening") {
            // Keep draining, so that its logging never blocks on a full pipe.
            std::thread::spawn(move || lines.for_each(drop));
            return (server, port);
        }
    }
    panic!("server-everything did not start:\n{said}");
}

#[tokio::test]
async fn the_client_uses_server_everything_over_streamable_http() {
    let dir = interop();
    let (_server, port) = start_http(&dir);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let client = McpClient::connect_with(&url, ConnectOptions::default())
        .await
        .unwrap();
    check_everything(&client).await;
    client.close().await;
}
