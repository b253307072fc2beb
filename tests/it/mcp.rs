//! ag-mcp spoken to as an MCP client does: JSON-RPC lines on its stdin and
//! stdout (`initialize`, `tools/list`, `tools/call`, `notifications/cancelled`),
//! with the real ag tools behind it.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use ag::proc::{Signal, foreign_group_alive, process_alive, signal_process};
use serde_json::{Value, json};

use crate::bin;
use crate::util::{Env, run_args};

/// Longer than anything here should take; only a hang reaches it.
const HANG: Duration = Duration::from_secs(30);

/// A running ag-mcp and the lines it printed.
pub struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Every stdout line seen so far, for failure messages.
    seen: Vec<String>,
}

impl Session {
    pub fn start(env: &Env, args: &[&str]) -> Session {
        Session::start_program(env, bin!("ag-mcp"), args)
    }

    /// Starts `program` (a copy of ag-mcp elsewhere).
    pub fn start_program(env: &Env, program: &str, args: &[&str]) -> Session {
        let mut cmd: Command = env.cmd(program);
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Session {
            stdin: child.stdin.take(),
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Starts ag-mcp and completes the handshake.
    pub fn ready(env: &Env, args: &[&str]) -> (Session, Value) {
        Session::ready_program(env, bin!("ag-mcp"), args)
    }

    /// Starts `program` and completes the handshake.
    pub fn ready_program(env: &Env, program: &str, args: &[&str]) -> (Session, Value) {
        let mut s = Session::start_program(env, program, args);
        let init = s.request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "ag-test", "version": "0"}}),
        );
        s.notify("notifications/initialized", json!({}));
        (s, init)
    }

    pub fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends these bytes as they are, and a newline.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Every line ag-mcp prints until the response to request `id`, that
    /// response included.
    pub fn lines_until(&mut self, id: Value) -> Vec<Value> {
        let deadline = Instant::now() + HANG;
        let mut out = Vec::new();
        loop {
            let Some(m) = self.next(deadline) else {
                panic!(
                    "ag-mcp closed stdout; it printed:\n{}",
                    self.seen.join("\n")
                )
            };
            let done = m.get("id") == Some(&id) && m.get("method").is_none();
            out.push(m);
            if done {
                return out;
            }
        }
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The next stdout line as JSON, or None when stdout closed.
    fn next(&mut self, deadline: Instant) -> Option<Value> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(left) {
            Ok(line) => {
                self.seen.push(line.clone());
                Some(serde_json::from_str(&line).unwrap_or_else(|e| {
                    panic!("ag-mcp printed a line that is not JSON ({e}): {line}")
                }))
            }
            Err(RecvTimeoutError::Disconnected) => None,
            Err(RecvTimeoutError::Timeout) => {
                panic!(
                    "no answer from ag-mcp; it printed:\n{}",
                    self.seen.join("\n")
                )
            }
        }
    }

    /// The response to request `id` (other messages are skipped).
    pub fn response(&mut self, id: Value) -> Value {
        let deadline = Instant::now() + HANG;
        loop {
            let Some(m) = self.next(deadline) else {
                panic!(
                    "ag-mcp closed stdout; it printed:\n{}",
                    self.seen.join("\n")
                )
            };
            if m.get("id") == Some(&id) && m.get("method").is_none() {
                return m;
            }
        }
    }

    /// Sends a request and returns its response.
    pub fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(json!(id))
    }

    /// `tools/call`, and its result.
    pub fn call(&mut self, id: u64, name: &str, arguments: Value) -> Value {
        let r = self.request(
            id,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        );
        r.get("result")
            .cloned()
            .unwrap_or_else(|| panic!("tools/call {name} failed: {r}"))
    }

    /// Closes stdin and waits for the exit status.
    pub fn finish(mut self) -> Option<i32> {
        drop(self.stdin.take());
        self.wait()
    }

    fn wait(&mut self) -> Option<i32> {
        let deadline = Instant::now() + HANG;
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                return st.code();
            }
            assert!(Instant::now() < deadline, "ag-mcp did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The text of a result's content blocks.
pub fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Waits until `path` holds `n` pids, one a line.
fn pids(path: &std::path::Path, n: usize) -> Vec<u32> {
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
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits until none of the processes, nor the first one's group, is left.
fn all_gone(pids: &[u32]) {
    let deadline = Instant::now() + HANG;
    while foreign_group_alive(pids[0]) || pids.iter().any(|p| process_alive(*p)) {
        assert!(Instant::now() < deadline, "processes {pids:?} survived");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn initialize_answers_with_the_server_and_its_tool_capability() {
    let env = Env::new();
    let (s, init) = Session::ready(&env, &["--tools", "read"]);
    let result = &init["result"];
    assert_eq!(result["serverInfo"]["name"], "ag-mcp", "{init}");
    assert_eq!(result["protocolVersion"], "2025-06-18", "{init}");
    assert!(result["capabilities"]["tools"].is_object(), "{init}");
    assert!(
        result["instructions"].as_str().unwrap().contains("read"),
        "{init}"
    );
    assert_eq!(s.finish(), Some(0));
}

#[test]
fn tools_list_gives_each_tools_schema_as_its_input_schema() {
    let env = Env::new();
    let (mut s, _) = Session::ready(&env, &["--tools", "read,grep,ls"]);
    let list = s.request(2, "tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["read", "grep", "ls"], "{list}");
    for (tool, bin) in tools
        .iter()
        .zip([bin!("ag-read"), bin!("ag-grep"), bin!("ag-ls")])
    {
        let def = run_args(&env, bin, &["--schema"]).ok().json();
        assert_eq!(tool["inputSchema"], def["parameters"]);
        assert_eq!(tool["description"], def["description"]);
        assert_eq!(tool["title"], def["label"]);
        assert_eq!(tool["annotations"]["readOnlyHint"], true);
    }
}

#[test]
fn the_default_tools_are_the_installed_ag_tools() {
    let env = Env::new();
    let (mut s, _) = Session::ready(&env, &[]);
    let list = s.request(2, "tools/list", json!({}));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for n in [
        "read",
        "write",
        "edit",
        "delete",
        "bash",
        "grep",
        "find",
        "ls",
        "git_status",
        "git_diff",
        "git_log",
        "git_commit",
    ] {
        assert!(names.contains(&n), "{n} missing from {names:?}");
    }
    // Tools of an ag session are left out, and so are the background-job
    // tools and the multiplexed `git` (issue 34).
    for n in ["todo", "git", "bash_background", "job_list"] {
        assert!(!names.contains(&n), "{n} in {names:?}");
    }
    let write = &list["result"]["tools"][1];
    assert!(write.get("annotations").is_none(), "{write}");
    // A git tool that only looks says so; one that commits does not.
    let tool = |name: &str| {
        list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(tool("git_status")["annotations"]["readOnlyHint"], true);
    assert!(tool("git_commit").get("annotations").is_none());
    // Every field of an offered tool is one of its mode's.
    assert_eq!(
        tool("git_commit")["inputSchema"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["message", "paths"]
    );
}

/// `--tools bash` serves ag-bash whole, as one tool per job; a call in
/// ag-bash's own shape still lands, as the tool its fields choose, with a
/// note that names that tool.
#[test]
fn a_binarys_name_serves_all_its_tools_and_its_own_shape_still_lands() {
    let env = Env::new();
    let (mut s, _) = Session::ready(&env, &["--tools", "bash"]);
    let list = s.request(2, "tools/list", json!({}));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "bash",
            "bash_background",
            "job_output",
            "job_stop",
            "job_list"
        ]
    );
    let r = s.call(3, "bash", json!({"list_jobs": true}));
    assert_eq!(r["isError"], false, "{r}");
    assert!(text(&r).contains("this call ran as `job_list` {}"), "{r}");
    let r = s.call(4, "job_list", json!({}));
    assert_eq!(r["isError"], false, "{r}");
    assert!(!text(&r).contains("ran as"), "{r}");
    // `job_output` needs its job.
    let r = s.call(5, "job_output", json!({"lines": 5}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(text(&r).contains("`job`"), "{r}");
}

#[test]
fn a_call_runs_the_tool_and_returns_text_and_details() {
    let env = Env::new();
    env.write("notes.txt", "alpha\nbeta\n");
    let (mut s, _) = Session::ready(&env, &["--tools", "read,write"]);
    let r = s.call(2, "read", json!({"file_path": "notes.txt"}));
    assert_eq!(r["isError"], false, "{r}");
    assert!(text(&r).contains("alpha"), "{r}");
    assert!(text(&r).contains("beta"), "{r}");
    // The text is what the model reads: MCP clients show it the structured
    // content instead when there is some, so the details are in `_meta`.
    assert!(r.get("structuredContent").is_none(), "{r}");
    let hash = r["_meta"]["ag/details"]["hash"].as_str().unwrap();
    assert!(hash.starts_with("xxh3:"), "{r}");
    // Files change as the tools say.
    let r = s.call(
        3,
        "write",
        json!({"file_path": "out/new.txt", "content": "hi\n"}),
    );
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(env.read("out/new.txt"), b"hi\n");
}

#[test]
fn a_failed_call_is_an_error_result_with_the_tools_code() {
    let env = Env::new();
    let (mut s, _) = Session::ready(&env, &["--tools", "read"]);
    let r = s.call(2, "read", json!({"file_path": "missing.txt"}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(text(&r).contains("missing.txt"), "{r}");
    assert_eq!(r["_meta"]["ag/error_code"], "read.not_found", "{r}");
    // Arguments that do not match the schema never reach the tool (`path`
    // would: it is seed 003's name for `file_path`).
    let r = s.call(3, "read", json!({"filename": "x"}));
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(r["_meta"]["ag/error_code"], "call.invalid_arguments");
    assert!(text(&r).contains("file_path"), "{r}");
    // An unknown tool is a protocol error naming the tools there are.
    let r = s.request(4, "tools/call", json!({"name": "nope", "arguments": {}}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(
        r["error"]["message"].as_str().unwrap().contains("read"),
        "{r}"
    );
}

#[test]
fn text_only_leaves_the_details_out() {
    let env = Env::new();
    env.write("a.txt", "x\n");
    let (mut s, _) = Session::ready(&env, &["--tools", "read", "--text-only"]);
    let r = s.call(2, "read", json!({"file_path": "a.txt"}));
    assert!(text(&r).contains('x'), "{r}");
    assert!(r.get("structuredContent").is_none(), "{r}");
    assert!(r.get("_meta").is_none(), "{r}");
}

#[test]
fn no_tool_declares_an_output_schema_and_no_result_is_structured_content() {
    let env = Env::new();
    env.write("a.txt", "the file's own text\n");
    let (mut s, _) = Session::ready(&env, &[]);
    let list = s.request(2, "tools/list", json!({}));
    for tool in list["result"]["tools"].as_array().unwrap() {
        assert!(tool.get("outputSchema").is_none(), "{tool}");
    }
    for (id, name, args) in [
        (3, "read", json!({"file_path": "a.txt"})),
        (4, "ls", json!({})),
        (5, "grep", json!({"pattern": "own"})),
        (6, "find", json!({"pattern": "*.txt"})),
        (7, "bash", json!({"command": "echo from bash"})),
        (8, "read", json!({"file_path": "missing.txt"})),
    ] {
        let r = s.call(id, name, args);
        assert!(r.get("structuredContent").is_none(), "{name}: {r}");
        assert_eq!(r["content"][0]["type"], "text", "{name}: {r}");
    }
    let r = s.call(9, "read", json!({"file_path": "a.txt"}));
    assert!(text(&r).contains("the file's own text"), "{r}");
}

/// A tool written as a shell script: answers `--schema`, and runs `body`
/// for a call.
fn script_tool(env: &Env, name: &str, body: &str) -> String {
    let def = json!({"name": name, "label": name, "description": format!("the {name} tool"),
        "parameters": {"type": "object", "properties": {}}});
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = --schema ]; then echo '{def}'; exit 0; fi\nread -r line\n{body}\n"
    );
    let path = env.write(&format!("tools/{name}"), script);
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path.display().to_string()
}

#[test]
fn a_tool_that_crashes_is_an_error_result_and_the_server_goes_on() {
    let env = Env::new();
    let crash = script_tool(
        &env,
        "crash",
        "echo 'about to fall over' >&2; kill -SEGV $$",
    );
    let echo = script_tool(
        &env,
        "hello",
        r#"echo '{"output":"hello there","details":{"n":1},"is_error":false}'"#,
    );
    let (mut s, _) = Session::ready(
        &env,
        &["--tools", "none", "--tool", &crash, "--tool", &echo],
    );
    let r = s.call(2, "crash", json!({}));
    assert_eq!(r["isError"], true, "{r}");
    let t = text(&r);
    assert!(t.contains("`crash` ended"), "{t}");
    assert!(t.contains("about to fall over"), "{t}");
    let r = s.call(3, "hello", json!({}));
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(text(&r), "hello there");
    assert_eq!(r["_meta"]["ag/details"], json!({"n": 1}));
    assert_eq!(s.finish(), Some(0));
}

#[test]
fn cancelling_a_call_ends_its_whole_process_group() {
    let env = Env::new();
    let (mut s, _) = Session::ready(&env, &["--tools", "bash"]);
    s.send(
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "bash",
        "arguments": {"command": "echo $$ > pids; sleep 60 & echo $! >> pids; sleep 60"}}}),
    );
    let pids = pids(&env.join("pids"), 2);
    s.notify(
        "notifications/cancelled",
        json!({"requestId": 7, "reason": "the user changed their mind"}),
    );
    all_gone(&pids);
    // The server is still there, and it does not answer the cancelled call.
    let pong = s.request(8, "ping", json!({}));
    assert!(pong.get("result").is_some(), "{pong}");
    drop(s.stdin.take());
    let deadline = Instant::now() + HANG;
    while let Some(m) = s.next(deadline) {
        assert_ne!(
            m.get("id"),
            Some(&json!(7)),
            "answered a cancelled call: {m}"
        );
    }
    assert_eq!(s.wait(), Some(0));
}

#[test]
fn sigterm_ends_the_running_calls_before_the_server_exits() {
    let env = Env::new();
    let (mut s, _) = Session::ready(&env, &["--tools", "bash"]);
    s.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "bash",
        "arguments": {"command": "echo $$ > pids; sleep 60 & echo $! >> pids; sleep 60"}}}),
    );
    let pids = pids(&env.join("pids"), 2);
    assert!(signal_process(s.child.id(), Signal::SIGTERM));
    assert_eq!(s.wait(), Some(128 + 15));
    // The server waited for the call's groups to end before it exited.
    for pid in &pids {
        assert!(!process_alive(*pid), "pid {pid} survived ag-mcp");
    }
    assert!(!foreign_group_alive(pids[0]));
}

#[test]
fn list_prints_the_mcp_definitions_and_a_missing_tool_is_a_usage_error() {
    let env = Env::new();
    let r = run_args(&env, bin!("ag-mcp"), &["--list", "--tools", "ls,find"]);
    let lines = r.ok().json_lines();
    assert_eq!(lines.len(), 2, "{r}");
    assert_eq!(lines[0]["name"], "ls");
    assert_eq!(lines[1]["name"], "find");
    assert!(lines[0]["inputSchema"]["properties"].is_object());
    // What is served: the offered tools named, not their binary's whole
    // definition.
    let r = run_args(
        &env,
        bin!("ag-mcp"),
        &["--list", "--tools", "git_status,git_commit"],
    );
    let lines = r.ok().json_lines();
    let names: Vec<&str> = lines.iter().map(|l| l["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["git_status", "git_commit"], "{r}");
    assert_eq!(
        lines[1]["inputSchema"]["required"],
        json!(["message"]),
        "{r}"
    );

    let r = run_args(&env, bin!("ag-mcp"), &["--tools", "read,nosuch"]);
    r.expect_code(2);
    assert!(r.stderr().contains("ag-mcp: error: tool `nosuch`"), "{r}");
    assert!(r.stdout().is_empty(), "{r}");

    let r = run_args(&env, bin!("ag-mcp"), &["--tool", "false"]);
    r.expect_code(2);
    assert!(r.stderr().contains("--schema failed"), "{r}");
}

#[test]
fn root_confines_the_ag_tools() {
    let env = Env::new();
    env.write("inside/a.txt", "in\n");
    env.write("outside.txt", "out\n");
    let (mut s, _) = Session::ready(&env, &["--tools", "read", "--root", "inside"]);
    let r = s.call(2, "read", json!({"file_path": "inside/a.txt"}));
    assert_eq!(r["isError"], false, "{r}");
    let r = s.call(3, "read", json!({"file_path": "outside.txt"}));
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(r["_meta"]["ag/error_code"], "path.outside_root", "{r}");
}

#[test]
fn cwd_sets_where_relative_paths_resolve() {
    let env = Env::new();
    env.write("project/src/lib.rs", "pub fn f() {}\n");
    env.write("elsewhere.txt", "x\n");
    let (mut s, init) = Session::ready(&env, &["-C", "project", "--root", ".", "--tools", "read"]);
    let instructions = init["result"]["instructions"].as_str().unwrap();
    assert!(instructions.contains("project"), "{instructions}");
    let r = s.call(2, "read", json!({"file_path": "src/lib.rs"}));
    assert!(text(&r).contains("pub fn f"), "{r}");
    // --root is seen from -C's directory too.
    let r = s.call(3, "read", json!({"file_path": "../elsewhere.txt"}));
    assert_eq!(r["_meta"]["ag/error_code"], "path.outside_root", "{r}");

    let r = run_args(&env, bin!("ag-mcp"), &["--cwd", "nowhere"]);
    r.expect_code(2);
    assert!(r.stderr().contains("cannot work in `nowhere`"), "{r}");
}

#[test]
fn a_default_tool_that_cannot_be_loaded_is_left_out_with_a_warning() {
    let env = Env::new();
    // ag-mcp looks beside itself first: a copy with an ag-read there that
    // cannot run (no execute bit), so it is asked `--schema` and fails.
    let dir = env.join("bin");
    std::fs::create_dir(&dir).unwrap();
    std::fs::copy(bin!("ag-mcp"), dir.join("ag-mcp")).unwrap();
    std::os::unix::fs::symlink(bin!("ag-ls"), dir.join("ag-ls")).unwrap();
    let broken = env.write(
        "bin/ag-read",
        "#!/bin/sh\necho 'ag-read: broken' >&2\nexit 1\n",
    );
    std::fs::set_permissions(&broken, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let mcp = dir.join("ag-mcp").display().to_string();
    let r = crate::util::run_args(&env, &mcp, &["--list"]);
    let names: Vec<String> = r
        .ok()
        .json_lines()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert!(names.contains(&"ls".to_string()), "{r}");
    assert!(!names.contains(&"read".to_string()), "{r}");
    assert!(
        r.stderr()
            .contains("ag-mcp: warning: left out: tool `ag-read`: cannot run it"),
        "{r}"
    );
    // Asked for by name, it is an error.
    run_args(&env, &mcp, &["--tools", "read,ls"]).expect_code(2);
}

#[test]
fn a_tool_beside_the_server_is_taken_as_its_own_build_and_fails_on_its_call() {
    let env = Env::new();
    // A tool binary beside ag-mcp is the same build, so its definition is
    // ag's own and it is not started to list it; one that is broken all
    // the same fails on its call, with its own words.
    let dir = env.join("bin");
    std::fs::create_dir(&dir).unwrap();
    std::fs::copy(bin!("ag-mcp"), dir.join("ag-mcp")).unwrap();
    let broken = env.write(
        "bin/ag-read",
        "#!/bin/sh\necho 'ag-read: broken' >&2\nexit 1\n",
    );
    std::fs::set_permissions(&broken, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    env.write("a.txt", "one\n");
    let mcp = dir.join("ag-mcp").display().to_string();
    let r = crate::util::run_args(&env, &mcp, &["--list", "--tools", "read"]);
    let listed = r.ok().json_lines();
    assert_eq!(listed.len(), 1, "{r}");
    assert_eq!(listed[0]["name"], "read", "{r}");
    let (mut s, _) = Session::ready_program(&env, &mcp, &["--tools", "read"]);
    let r = s.call(2, "read", json!({"path": "a.txt"}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(r.to_string().contains("ag-read: broken"), "{r}");
    s.finish();
}

#[test]
fn the_server_keeps_the_stale_edit_guard_and_never_asks_the_client_for_a_hash() {
    let env = Env::new();
    env.write("a.txt", "one\ntwo\n");
    env.write("b.txt", "bee\n");
    let (mut s, _) = Session::ready(&env, &["--tools", "read,edit,write,delete"]);
    // The client's model sees the text, never a hash: no tool offers it.
    let list = s.request(2, "tools/list", json!({}));
    for tool in list["result"]["tools"].as_array().unwrap() {
        assert!(
            tool["inputSchema"]["properties"]
                .get("expected_hash")
                .is_none(),
            "{tool}"
        );
    }
    s.call(3, "read", json!({"file_path": "a.txt"}));
    // Someone changes the file after the model read it.
    env.write("a.txt", "one\nTWO\n");
    let r = s.call(
        4,
        "edit",
        json!({"file_path": "a.txt", "old_string": "one", "new_string": "1"}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(env.read("a.txt"), b"one\nTWO\n");
    // After reading again the edit goes through; a guessed hash is dropped.
    s.call(5, "read", json!({"file_path": "a.txt"}));
    let r = s.call(
        6,
        "edit",
        json!({"file_path": "a.txt", "old_string": "one", "new_string": "1",
               "expected_hash": "xxh3:00000000000000000000000000000000"}),
    );
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(env.read("a.txt"), b"1\nTWO\n");
    // A delete of a file that changed since it was read is refused too.
    s.call(7, "read", json!({"file_path": "b.txt"}));
    env.write("b.txt", "changed\n");
    let r = s.call(8, "delete", json!({"path": "b.txt"}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(env.join("b.txt").exists());
}
