//! ag-acp driven by ACP clients not written here, against the scripted
//! model server: the official TypeScript SDK's ClientSideConnection (a
//! small node script, tests/fixtures/acp/sdk-client.mjs) and acpx, the
//! headless ACP command-line client. Every message ag-acp writes is checked
//! against the stable v1 JSON Schema the ACP project publishes. The
//! packages are installed by `scripts/acp-interop` (scripts/test runs it);
//! without them each test fails, saying what to run. Then ag-acp attacked
//! over raw JSON-RPC lines: junk in every field, a prompt while another
//! runs, a client that stops reading, a client that goes away mid-call.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::time::{Duration, Instant};

use ag::proc::process_alive;
use serde_json::{Value, json};

use crate::bin;
use crate::model_server::{ModelServer, Turn};
use crate::util::{Env, run};

const HANG: Duration = Duration::from_secs(60);

/// Where scripts/acp-interop installed the clients, if it did and node is
/// there to run them.
fn interop() -> PathBuf {
    let dir = std::env::var_os("AG_ACP_INTEROP_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/acp-interop"));
    let ready = [
        "@agentclientprotocol/sdk/dist/acp.js",
        "acpx/dist/cli.js",
        "acp-schema/schema/v1/schema.json",
    ]
    .iter()
    .all(|p| dir.join("node_modules").join(p).is_file());
    let node = Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ready && node,
        "the ACP clients are not installed in {} (or node is missing): run scripts/acp-interop, or scripts/test, which runs it",
        dir.display()
    );
    dir
}

/// ag-acp's arguments for a model server: the model, then ag-loop's flags.
fn acp_args(model: &ModelServer, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    a.extend(
        [
            "-m",
            "ollama/scripted",
            "--",
            "--base-url",
            &model.base_url(),
            "--sandbox",
            "off",
        ]
        .map(String::from),
    );
    a
}

/// What the SDK client printed per step, and the lines both ways.
struct Sdk {
    steps: Vec<Value>,
    log: Vec<(String, Value)>,
    /// ag-acp's stderr (and node's).
    stderr: String,
}

impl Sdk {
    /// The first output of this op.
    fn op(&self, op: &str) -> &Value {
        self.ops(op)
            .into_iter()
            .next()
            .unwrap_or_else(|| panic!("no `{op}` step: {:#?}", self.steps))
    }

    fn ops(&self, op: &str) -> Vec<&Value> {
        self.steps.iter().filter(|s| s["op"] == op).collect()
    }
}

/// Runs the SDK client's steps against ag-acp in `env`.
fn sdk_client(env: &Env, dir: &Path, args: &[String], steps: Value) -> Sdk {
    let log = env.join(".home/acp-log.jsonl");
    let _ = std::fs::remove_file(&log);
    let plan = json!({
        "sdk": dir.join("node_modules/@agentclientprotocol/sdk"),
        "command": bin!("ag-acp"),
        "args": args,
        "cwd": env.path(),
        "log": log,
        "steps": steps,
    });
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/acp/sdk-client.mjs");
    let mut cmd = env.cmd("node");
    cmd.arg(script);
    let r = run(cmd, Some(plan.to_string().as_bytes()));
    r.ok();
    let steps = r.json_lines();
    assert_eq!(
        steps.last().map(|s| s["result"].clone()),
        Some(json!(0)),
        "ag-acp did not exit 0 when its stdin closed\n{r}"
    );
    let log = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let msg = serde_json::from_str(v["line"].as_str().unwrap())
                .unwrap_or_else(|_| Value::String(v["line"].as_str().unwrap().into()));
            (v["from"].as_str().unwrap().to_string(), msg)
        })
        .collect();
    Sdk {
        steps,
        log,
        stderr: r.stderr(),
    }
}

/// The updates of a step, as their `update` objects.
fn updates(step: &Value) -> Vec<&Value> {
    step["updates"]
        .as_array()
        .unwrap_or_else(|| panic!("no updates: {step}"))
        .iter()
        .map(|u| &u["update"])
        .collect()
}

fn of_kind<'a>(updates: &[&'a Value], kind: &str) -> Vec<&'a Value> {
    updates
        .iter()
        .copied()
        .filter(|u| u["sessionUpdate"] == kind)
        .collect()
}

/// The text of the agent's message chunks, joined.
fn answer_text(updates: &[&Value]) -> String {
    of_kind(updates, "agent_message_chunk")
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}

/// Checks each message against the published stable v1 schema: the message
/// as a whole against the schema's agent (or client) messages, and a
/// response's result, a notification's and a request's params against the
/// type of their method.
fn check_schema(dir: &Path, log: &[(String, Value)]) {
    let path = dir.join("node_modules/acp-schema/schema/v1/schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let defs = schema["$defs"].clone();
    // The types ACP has not made stable yet (session/fork's).
    let unstable = dir.join("node_modules/acp-schema/schema/v1/schema.unstable.json");
    let unstable: Value =
        serde_json::from_str(&std::fs::read_to_string(unstable).unwrap()).unwrap();
    let mut validators = HashMap::new();
    let mut check = |def: &str, v: &Value, what: &str| {
        let validator = validators.entry(def.to_string()).or_insert_with(|| {
            let s = if def == "Agent" || def == "Client" {
                let mut s = schema.clone();
                let i = if def == "Agent" { 0 } else { 1 };
                let one = schema["anyOf"][i].clone();
                s.as_object_mut().unwrap().remove("anyOf");
                for (k, val) in one.as_object().unwrap() {
                    s[k] = val.clone();
                }
                s
            } else if defs.get(def).is_some() {
                json!({"$schema": schema["$schema"], "$defs": defs, "$ref": format!("#/$defs/{def}")})
            } else {
                json!({"$schema": unstable["$schema"], "$defs": unstable["$defs"], "$ref": format!("#/$defs/{def}")})
            };
            jsonschema::validator_for(&s).unwrap()
        });
        let errors: Vec<String> = validator
            .iter_errors(v)
            .map(|e| format!("{e} at {}", e.instance_path))
            .collect();
        assert!(
            errors.is_empty(),
            "{what} does not match {def}: {errors:?}\n{v}"
        );
    };
    let mut methods: HashMap<String, String> = HashMap::new();
    for (from, msg) in log {
        if from == "client" {
            if let (Some(id), Some(m)) = (msg.get("id"), msg["method"].as_str()) {
                methods.insert(id.to_string(), m.to_string());
            }
            continue;
        }
        check("Agent", msg, "a message from ag-acp");
        if let Some(method) = msg["method"].as_str() {
            let def = match method {
                "session/update" => "SessionNotification",
                "session/request_permission" => "RequestPermissionRequest",
                "elicitation/create" => "CreateElicitationRequest",
                "$/cancel_request" => "CancelRequestNotification",
                "fs/read_text_file" => "ReadTextFileRequest",
                "fs/write_text_file" => "WriteTextFileRequest",
                "terminal/create" => "CreateTerminalRequest",
                "terminal/output" => "TerminalOutputRequest",
                "terminal/wait_for_exit" => "WaitForTerminalExitRequest",
                "terminal/kill" => "KillTerminalRequest",
                "terminal/release" => "ReleaseTerminalRequest",
                other => panic!("ag-acp sent `{other}`: {msg}"),
            };
            check(def, &msg["params"], method);
        } else if let Some(result) = msg.get("result") {
            let method = methods
                .get(&msg["id"].to_string())
                .unwrap_or_else(|| panic!("an answer to no request: {msg}"));
            let def = match method.as_str() {
                "initialize" => "InitializeResponse",
                "session/new" => "NewSessionResponse",
                "session/load" => "LoadSessionResponse",
                "session/resume" => "ResumeSessionResponse",
                "session/list" => "ListSessionsResponse",
                "session/close" => "CloseSessionResponse",
                "session/prompt" => "PromptResponse",
                "session/set_mode" => "SetSessionModeResponse",
                // Unstable in ACP: checked against the unstable schema.
                "session/fork" => "ForkSessionResponse",
                other => panic!("an answer to `{other}`: {msg}"),
            };
            check(def, result, method);
        } else {
            check("Error", &msg["error"], "an error");
        }
    }
}

fn pid_in(env: &Env, file: &str) -> u32 {
    std::fs::read_to_string(env.join(file))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

fn wait_gone(pid: u32) {
    let deadline = Instant::now() + HANG;
    while process_alive(pid) {
        assert!(Instant::now() < deadline, "process {pid} outlived its call");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_sdk_client_runs_a_session_read_edit_bash_permissions_cancel_and_junk() {
    let dir = interop();
    let env = Env::new();
    env.write("notes.txt", "one\ntwo\n");
    let model = ModelServer::start(vec![
        // 1: read, edit, bash, answer.
        Turn::Tools(vec![("read", json!({"file_path": "notes.txt"}))]),
        Turn::Tools(vec![(
            "edit",
            json!({"file_path": "notes.txt", "old_string": "two", "new_string": "TWO"}),
        )]),
        Turn::Tools(vec![("bash", json!({"command": "cat notes.txt"}))]),
        Turn::Text("Edited notes.txt."),
        // 2 (ask-always): a write, allowed.
        Turn::Tools(vec![(
            "write",
            json!({"file_path": "allowed.txt", "content": "yes\n"}),
        )]),
        Turn::Text("wrote it"),
        // 3: a write, rejected.
        Turn::Tools(vec![(
            "write",
            json!({"file_path": "rejected.txt", "content": "no\n"}),
        )]),
        Turn::Text("did not write it"),
        // 4 (auto): a command cancelled mid-call.
        Turn::Tools(vec![(
            "bash",
            json!({"command": "echo $$ > bash.pid; touch started; sleep 60"}),
        )]),
        // 5: the conversation goes on.
        Turn::Text("still here"),
        // 6: after the junk.
        Turn::Text("and still here"),
    ]);
    let mcp = json!([{
        "name": "extra",
        "command": bin!("ag-mcp"),
        "args": ["--tools", "grep"],
        "env": [{"name": "AG_ACP_TEST", "value": "1"}],
    }]);
    let started = env.join("started");
    let out = sdk_client(
        &env,
        &dir,
        &acp_args(&model, &[]),
        json!([
            {"op": "initialize"},
            {"op": "new", "cwd": env.path(), "mcpServers": mcp},
            {"op": "prompt", "text": "read, edit and check notes.txt"},
            {"op": "set_mode", "modeId": "ask-always"},
            {"op": "prompt", "text": "write allowed.txt", "permission": "allow"},
            {"op": "prompt", "text": "write rejected.txt", "permission": "reject"},
            {"op": "set_mode", "modeId": "auto"},
            {"op": "prompt", "text": "run it", "cancel_when": started},
            {"op": "prompt", "text": "are you there?"},
            {"op": "raw", "id": "raw-1", "line": "{\"jsonrpc\":\"2.0\",\"id\":\"raw-1\",\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"x\",\"prompt\":\"not a list\"}}"},
            {"op": "raw", "id": null, "line": "{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": "},
            {"op": "raw", "id": "raw-2", "line": "{\"jsonrpc\":\"2.0\",\"id\":\"raw-2\",\"method\":\"session/teleport\",\"params\":{}}"},
            {"op": "prompt", "text": "and now?"},
            {"op": "close"},
        ]),
    );

    // initialize: what ag announces.
    let init = &out.op("initialize")["result"];
    assert_eq!(init["protocolVersion"], 1, "{init}");
    let caps = &init["agentCapabilities"];
    assert_eq!(caps["loadSession"], true);
    assert_eq!(caps["promptCapabilities"]["image"], true);
    assert_eq!(caps["promptCapabilities"]["embeddedContext"], true);
    assert_eq!(caps["mcpCapabilities"]["http"], true);
    assert_eq!(init["agentInfo"]["name"], "ag");

    // session/new: an ag session, its modes, its MCP server.
    let new = &out.op("new")["result"];
    let id = new["sessionId"].as_str().unwrap();
    assert_eq!(new["modes"]["currentModeId"], "ask");
    assert_eq!(
        crate::util::run_args(&env, bin!("ag-session"), &["path", id]).code(),
        Some(0),
        "session/new's id is not an ag session"
    );
    let first = &model.requests()[0];
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        tools.iter().filter(|t| t.contains("grep")).count() >= 2,
        "the MCP server's grep is not offered beside ag's: {tools:?}"
    );

    // The prompt: read, edit (a diff), bash.
    let prompts = out.ops("prompt");
    let p = prompts[0];
    assert_eq!(p["result"]["stopReason"], "end_turn", "{p}");
    let u = updates(p);
    let calls = of_kind(&u, "tool_call");
    let kinds: Vec<&str> = calls.iter().map(|c| c["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["read", "edit", "execute"], "{p}");
    let notes = env.join("notes.txt").display().to_string();
    assert_eq!(calls[0]["locations"][0]["path"], notes.as_str());
    let done = of_kind(&u, "tool_call_update");
    assert!(done.iter().all(|d| d["status"] == "completed"), "{done:?}");
    let diff = &done[1]["content"][0];
    assert_eq!(diff["type"], "diff", "{diff}");
    assert_eq!(diff["path"], notes.as_str());
    assert_eq!(diff["oldText"], "one\ntwo\n");
    assert_eq!(diff["newText"], "one\nTWO\n");
    assert!(
        done[2]["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("TWO"),
        "{}",
        done[2]
    );
    assert_eq!(answer_text(&u), "Edited notes.txt.");
    assert_eq!(
        String::from_utf8_lossy(&env.read("notes.txt")),
        "one\nTWO\n"
    );

    // Permissions, both ways.
    let allowed = prompts[1];
    assert_eq!(allowed["result"]["stopReason"], "end_turn", "{allowed}");
    let asked = &allowed["permissions"][0]["request"];
    let options: Vec<&str> = asked["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        options,
        ["allow_once", "allow_always", "reject_once"],
        "{asked}"
    );
    assert_eq!(asked["toolCall"]["kind"], "edit");
    assert_eq!(String::from_utf8_lossy(&env.read("allowed.txt")), "yes\n");
    let rejected = prompts[2];
    assert_eq!(rejected["permissions"][0]["answer"], "reject", "{rejected}");
    assert!(!env.join("rejected.txt").exists());
    let r = updates(rejected);
    assert_eq!(of_kind(&r, "tool_call_update")[0]["status"], "failed");

    // Cancel mid-call: the prompt ends cancelled, the command is gone,
    // and the conversation goes on.
    let cancelled = prompts[3];
    assert_eq!(
        cancelled["result"]["stopReason"], "cancelled",
        "{cancelled}"
    );
    wait_gone(pid_in(&env, "bash.pid"));
    let again = prompts[4];
    assert_eq!(answer_text(&updates(again)), "still here", "{again}");
    let after_cancel = model.requests()[9].clone();
    let messages = after_cancel["messages"].as_array().unwrap();
    assert!(
        messages.iter().any(|m| m["role"] == "tool"),
        "the cancelled call has no result in the next request: {after_cancel}"
    );

    // Malformed requests: errors with the codes the spec gives; the
    // session goes on.
    let raws = out.ops("raw");
    assert_eq!(raws[0]["result"]["error"]["code"], -32602, "{}", raws[0]);
    assert_eq!(raws[1]["result"]["error"]["code"], -32700, "{}", raws[1]);
    assert_eq!(raws[2]["result"]["error"]["code"], -32601, "{}", raws[2]);
    let last = prompts[5];
    assert_eq!(answer_text(&updates(last)), "and still here", "{last}");
    assert!(out.op("close").get("result").is_some());

    check_schema(&dir, &out.log);
}

#[test]
fn a_finished_session_loads_replayed_in_order_and_goes_on() {
    let dir = interop();
    let env = Env::new();
    env.write("a.txt", "alpha\n");
    let model = ModelServer::start(vec![
        Turn::Tools(vec![("read", json!({"file_path": "a.txt"}))]),
        Turn::Text("It says alpha."),
        Turn::Text("Second answer."),
        Turn::Text("Third answer, after loading."),
    ]);
    let args = acp_args(&model, &[]);
    let first = sdk_client(
        &env,
        &dir,
        &args,
        json!([
            {"op": "initialize"},
            {"op": "new", "cwd": env.path()},
            {"op": "prompt", "text": "what is in a.txt?"},
            {"op": "prompt", "text": "and then?"},
        ]),
    );
    let id = first.op("new")["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let second = sdk_client(
        &env,
        &dir,
        &args,
        json!([
            {"op": "initialize"},
            {"op": "list", "cwd": env.path()},
            {"op": "load", "sessionId": id, "cwd": env.path()},
            {"op": "prompt", "text": "and now?"},
            {"op": "prompt", "text": "/cost"},
        ]),
    );
    let listed = &second.op("list")["result"]["sessions"];
    assert_eq!(listed[0]["sessionId"], id.as_str(), "{listed}");
    assert_eq!(listed[0]["title"], "what is in a.txt?");

    let load = second.op("load");
    assert!(load.get("result").is_some(), "{load}");
    let u = updates(load);
    let shape: Vec<String> = u
        .iter()
        .filter(|u| u["sessionUpdate"] != "usage_update")
        .map(|u| {
            let kind = u["sessionUpdate"].as_str().unwrap();
            match kind {
                "user_message_chunk" | "agent_message_chunk" => {
                    format!("{kind}: {}", u["content"]["text"].as_str().unwrap())
                }
                "tool_call" => format!("tool_call: {}", u["kind"].as_str().unwrap()),
                "tool_call_update" => {
                    format!("tool_call_update: {}", u["status"].as_str().unwrap())
                }
                other => other.to_string(),
            }
        })
        .collect();
    assert_eq!(
        shape,
        [
            "user_message_chunk: what is in a.txt?",
            "tool_call: read",
            "tool_call_update: completed",
            "agent_message_chunk: It says alpha.",
            "user_message_chunk: and then?",
            "agent_message_chunk: Second answer.",
        ],
        "{load}"
    );
    // The replay came before the answer to session/load.
    let load_at = second
        .log
        .iter()
        .position(|(from, m)| {
            from == "agent"
                && m.get("result").is_some()
                && m["result"].get("modes").is_some()
                && m["result"].get("sessionId").is_none()
        })
        .unwrap();
    let last_replayed = second
        .log
        .iter()
        .rposition(|(_, m)| {
            m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
                && m["params"]["update"]["content"]["text"] == "Second answer."
        })
        .unwrap();
    assert!(last_replayed < load_at);

    // It goes on where it was: the model sees the whole conversation.
    let p = second.op("prompt");
    assert_eq!(answer_text(&updates(p)), "Third answer, after loading.");
    let req = &model.requests()[3];
    let texts = req["messages"].to_string();
    assert!(
        texts.contains("what is in a.txt?") && texts.contains("Second answer."),
        "{req}"
    );
    let cost = second.ops("prompt")[1];
    assert!(
        answer_text(&updates(cost)).contains("output tokens"),
        "{cost}"
    );
    check_schema(&dir, &first.log);
    check_schema(&dir, &second.log);
}

/// acpx with its own flags and ag-acp's; its NDJSON output. `status` is
/// acpx's exit status: 0, or 5 when it denied a permission.
fn acpx(
    env: &Env,
    dir: &Path,
    policy: &str,
    args: &[String],
    prompt: &str,
    status: i32,
) -> Vec<Value> {
    let agent = std::iter::once(bin!("ag-acp").to_string())
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    let mut cmd = env.cmd("node");
    cmd.arg(dir.join("node_modules/acpx/dist/cli.js"))
        .arg("--cwd")
        .arg(env.path())
        .args(["--format", "json", policy, "--timeout", "60", "--agent"])
        .arg(agent)
        .args(["exec", prompt]);
    let r = run(cmd, None);
    r.expect_code(status);
    r.json_lines()
}

#[test]
fn acpx_runs_a_prompt_that_edits_and_is_refused_when_it_denies() {
    let dir = interop();
    let env = Env::new();
    env.write("f.txt", "old\n");
    let model = ModelServer::start(vec![
        Turn::Tools(vec![(
            "edit",
            json!({"file_path": "f.txt", "old_string": "old", "new_string": "new"}),
        )]),
        Turn::Tools(vec![("bash", json!({"command": "cat f.txt"}))]),
        Turn::Text("done"),
        Turn::Tools(vec![(
            "write",
            json!({"file_path": "g.txt", "content": "g\n"}),
        )]),
        Turn::Text("refused, then"),
    ]);
    let out = acpx(
        &env,
        &dir,
        "--approve-all",
        &acp_args(&model, &[]),
        "edit f.txt",
        0,
    );
    let updates: Vec<&Value> = out
        .iter()
        .filter(|m| m["method"] == "session/update")
        .map(|m| &m["params"]["update"])
        .collect();
    let diff = of_kind(&updates, "tool_call_update")
        .into_iter()
        .find_map(|u| {
            u["content"]
                .as_array()?
                .iter()
                .find(|c| c["type"] == "diff")
        })
        .unwrap_or_else(|| panic!("no diff: {out:#?}"));
    assert_eq!(diff["newText"], "new\n");
    let end = out
        .iter()
        .find_map(|m| m["result"]["stopReason"].as_str())
        .unwrap();
    assert_eq!(end, "end_turn");
    assert_eq!(String::from_utf8_lossy(&env.read("f.txt")), "new\n");

    let out = acpx(
        &env,
        &dir,
        "--deny-all",
        &acp_args(&model, &["--mode", "ask-always"]),
        "write g.txt",
        5,
    );
    assert!(
        out.iter()
            .any(|m| m["method"] == "session/request_permission"),
        "{out:#?}"
    );
    assert!(!env.join("g.txt").exists());
    // acpx prints the messages both ways: what ag-acp wrote is checked.
    let log: Vec<(String, Value)> = out
        .iter()
        .map(|m| {
            let agent = match m["method"].as_str() {
                Some(method) => {
                    method.starts_with("session/update") || method == "session/request_permission"
                }
                None => m["result"].get("outcome").is_none(),
            };
            let from = if agent { "agent" } else { "client" };
            (from.to_string(), m.clone())
        })
        .collect();
    check_schema(&dir, &log);
}

/// ag-acp over raw JSON-RPC lines, for what no client library would send.
struct Raw {
    child: Child,
    stderr: PathBuf,
    stdin: Option<ChildStdin>,
    rx: mpsc::Receiver<Value>,
    seen: Vec<Value>,
    /// While set, nothing more is read from ag-acp's stdout.
    paused: Arc<(Mutex<bool>, Condvar)>,
}

impl Raw {
    fn start(env: &Env, args: &[String]) -> Raw {
        let mut cmd = env.cmd(bin!("ag-acp"));
        // Its diagnostics, shown when a wait fails.
        let stderr = std::fs::File::create(env.join(".home/ag-acp.stderr")).unwrap();
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr);
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        let paused = Arc::new((Mutex::new(false), Condvar::new()));
        let gate = paused.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let (lock, cvar) = &*gate;
                let mut p = lock.lock().unwrap();
                while *p {
                    p = cvar.wait(p).unwrap();
                }
                drop(p);
                let Ok(line) = line else { return };
                let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                    panic!("ag-acp wrote a line that is not JSON ({e}): {line}")
                });
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        Raw {
            child,
            stderr: env.join(".home/ag-acp.stderr"),
            stdin,
            rx,
            seen: Vec::new(),
            paused,
        }
    }

    /// Stops reading ag-acp's stdout (its pipe fills up), or reads again.
    fn pause(&self, on: bool) {
        let (lock, cvar) = &*self.paused;
        *lock.lock().unwrap() = on;
        cvar.notify_all();
    }

    fn send(&mut self, line: &str) {
        self.send_bytes(line.as_bytes());
    }

    fn send_bytes(&mut self, line: &[u8]) {
        let s = self.stdin.as_mut().unwrap();
        s.write_all(line).unwrap();
        s.write_all(b"\n").unwrap();
        s.flush().unwrap();
    }

    fn request(&mut self, id: Value, method: &str, params: Value) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
    }

    /// Reads until a message matches; every message read is kept.
    fn until(&mut self, what: &str, f: impl Fn(&Value) -> bool) -> Value {
        self.until_within(HANG, what, f)
    }

    fn until_within(&mut self, limit: Duration, what: &str, f: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let v = self.rx.recv_timeout(left).unwrap_or_else(|_| {
                panic!(
                    "no {what} in time; saw {:#?}\nag-acp's stderr:\n{}",
                    self.seen,
                    std::fs::read_to_string(&self.stderr).unwrap_or_default()
                )
            });
            self.seen.push(v.clone());
            if f(&v) {
                return v;
            }
        }
    }

    fn answer(&mut self, id: Value) -> Value {
        self.until(&format!("answer to {id}"), |m| {
            m.get("method").is_none() && m["id"] == id
        })
    }

    /// The answer to `id`, read already or still to come.
    fn answer_seen_or_next(&mut self, id: Value) -> Value {
        let seen = self
            .seen
            .iter()
            .find(|m| m.get("method").is_none() && m["id"] == id);
        match seen {
            Some(a) => a.clone(),
            None => self.answer(id),
        }
    }

    /// Closes stdin, waits for the exit status and keeps what ag-acp
    /// wrote meanwhile.
    fn finish_reading(&mut self) -> i32 {
        drop(self.stdin.take());
        let deadline = Instant::now() + HANG;
        let code = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s.code().unwrap_or(-1);
            }
            assert!(
                Instant::now() < deadline,
                "ag-acp did not exit when its stdin closed"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        // The reader thread ends with ag-acp's stdout.
        while let Ok(v) = self.rx.recv_timeout(HANG) {
            self.seen.push(v);
        }
        code
    }

    /// How many answers each id got.
    fn answers_per_id(&self) -> HashMap<String, usize> {
        let mut n = HashMap::new();
        for m in self.seen.iter().filter(|m| m.get("method").is_none()) {
            *n.entry(m["id"].to_string()).or_default() += 1;
        }
        n
    }

    fn start_session(&mut self, env: &Env) -> String {
        self.request(
            json!(0),
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        );
        self.answer(json!(0));
        self.request(
            json!(1),
            "session/new",
            json!({"cwd": env.path(), "mcpServers": []}),
        );
        let r = self.answer(json!(1));
        r["result"]["sessionId"].as_str().unwrap().to_string()
    }

    fn prompt(&mut self, id: Value, session: &str, text: &str) {
        self.request(
            id,
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        );
    }

    /// Closes stdin and waits for the exit status.
    fn finish(mut self) -> i32 {
        drop(self.stdin.take());
        let deadline = Instant::now() + HANG;
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s.code().unwrap_or(-1);
            }
            assert!(
                Instant::now() < deadline,
                "ag-acp did not exit when its stdin closed"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn agent_text(seen: &[Value]) -> String {
    seen.iter()
        .filter(|m| m["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|m| m["params"]["update"]["content"]["text"].as_str())
        .collect()
}

#[test]
fn junk_in_every_field_is_answered_with_an_error_and_the_session_goes_on() {
    let env = Env::new();
    env.write("file.txt", "x");
    let model = ModelServer::start(vec![Turn::Text("fine")]);
    let mut acp = Raw::start(&env, &acp_args(&model, &[]));
    let sid = acp.start_session(&env);
    let cases: Vec<(&str, Value, i64)> = vec![
        ("session/new", json!({"cwd": 5, "mcpServers": []}), -32602),
        (
            "session/new",
            json!({"cwd": "relative/dir", "mcpServers": []}),
            -32602,
        ),
        (
            "session/new",
            json!({"cwd": env.join("file.txt"), "mcpServers": []}),
            -32602,
        ),
        (
            "session/new",
            json!({"cwd": env.path(), "mcpServers": "all"}),
            -32602,
        ),
        (
            "session/new",
            json!({"cwd": env.path(), "mcpServers": [{"name": "x", "command": "", "args": [], "env": []}]}),
            -32602,
        ),
        (
            "session/new",
            json!({"cwd": env.path(), "mcpServers": [{"name": "x", "command": "a", "args": [], "env": [{"name": "A B", "value": "1"}]}]}),
            -32602,
        ),
        (
            "session/new",
            json!({"cwd": env.path(), "mcpServers": [{"type": "sse", "name": "s", "url": "http://127.0.0.1:1", "headers": []}]}),
            -32602,
        ),
        ("session/new", json!(null), -32602),
        (
            "session/load",
            json!({"sessionId": "no-such-session", "cwd": env.path(), "mcpServers": []}),
            -32002,
        ),
        (
            "session/load",
            json!({"sessionId": 3, "cwd": env.path(), "mcpServers": []}),
            -32602,
        ),
        (
            "session/prompt",
            json!({"sessionId": "no-such-session", "prompt": []}),
            -32002,
        ),
        (
            "session/prompt",
            json!({"sessionId": sid, "prompt": "text"}),
            -32602,
        ),
        (
            "session/prompt",
            json!({"sessionId": sid, "prompt": [{"type": "hologram"}]}),
            -32602,
        ),
        (
            "session/prompt",
            json!({"sessionId": sid, "prompt": []}),
            -32602,
        ),
        (
            "session/prompt",
            json!({"sessionId": sid, "prompt": [{"type": "audio", "data": "AA", "mimeType": "audio/wav"}]}),
            -32602,
        ),
        (
            "session/prompt",
            json!({"sessionId": sid, "prompt": [{"type": "text", "text": "/rewind zero"}]}),
            -32602,
        ),
        (
            "session/set_mode",
            json!({"sessionId": sid, "modeId": "yolo"}),
            -32602,
        ),
        (
            "session/set_mode",
            json!({"sessionId": sid, "modeId": ["ask"]}),
            -32602,
        ),
        ("session/list", json!({"cursor": "zzz"}), -32602),
        ("session/close", json!({"sessionId": "nope"}), -32002),
        ("session/fly", json!({}), -32601),
    ];
    for (i, (method, params, code)) in cases.iter().enumerate() {
        let id = json!(format!("junk-{i}"));
        acp.request(id.clone(), method, params.clone());
        let a = acp.answer(id);
        assert_eq!(a["error"]["code"], *code, "{method} {params}: {a}");
        assert!(
            a["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{a}"
        );
    }
    // Envelopes: not JSON, a batch, no method, an id that is an object,
    // a notification with junk; none stops the connection.
    for line in [
        "not json",
        "[1, 2]",
        "{\"jsonrpc\":\"2.0\",\"id\":\"x\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"session/list\",\"params\":{}}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{\"sessionId\":[]}}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{\"sessionId\":\"unknown\"}}",
    ] {
        acp.send(line);
    }
    // A cwd-relative error names the call's own value.
    let bad = acp
        .seen
        .iter()
        .find(|m| m["id"] == "junk-1")
        .unwrap()
        .clone();
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap()
            .contains("relative/dir"),
        "{bad}"
    );
    acp.prompt(json!("ok"), &sid, "still there?");
    let a = acp.answer(json!("ok"));
    assert_eq!(a["result"]["stopReason"], "end_turn", "{a}");
    assert_eq!(agent_text(&acp.seen), "fine");
    assert_eq!(acp.finish(), 0);
}

#[test]
fn a_prompt_sent_while_another_runs_waits_its_turn() {
    let env = Env::new();
    let model = ModelServer::start(vec![
        Turn::Tools(vec![(
            "bash",
            json!({"command": "touch first-running; while [ ! -e go ]; do sleep 0.05; done"}),
        )]),
        Turn::Text("first done"),
        Turn::Text("second done"),
    ]);
    let mut acp = Raw::start(&env, &acp_args(&model, &["--mode", "auto"]));
    let sid = acp.start_session(&env);
    acp.prompt(json!("p1"), &sid, "first");
    let deadline = Instant::now() + HANG;
    while !env.join("first-running").exists() {
        assert!(Instant::now() < deadline, "the first prompt did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    acp.prompt(json!("p2"), &sid, "second");
    env.write("go", "");
    let a1 = acp.answer(json!("p1"));
    assert_eq!(a1["result"]["stopReason"], "end_turn", "{a1}");
    let text_before = agent_text(&acp.seen);
    assert_eq!(text_before, "first done");
    let a2 = acp.answer(json!("p2"));
    assert_eq!(a2["result"]["stopReason"], "end_turn", "{a2}");
    assert_eq!(agent_text(&acp.seen), "first donesecond done");
    // The second prompt reached the model after the first one's answer.
    let last = model.requests()[2]["messages"].to_string();
    assert!(
        last.contains("first done") && last.contains("second"),
        "{last}"
    );
    assert_eq!(acp.finish(), 0);
}

#[test]
fn a_client_that_stops_reading_holds_ag_loop_back_and_loses_nothing() {
    let env = Env::new();
    // About 175k text deltas: ag-loop's events for them (some 20 MB) are
    // more than ag-acp holds (16 MB of ag-loop's lines, 1024 updates).
    // Numbered lines: the same line over and over would be cut as a loop.
    let long: &'static str = Box::leak(
        (0..47_000)
            .map(|i| format!("line {i:07} of the answer\n"))
            .collect::<String>()
            .into_boxed_str(),
    );
    let model = ModelServer::start(vec![Turn::Text(long)]);
    let mut acp = Raw::start(&env, &acp_args(&model, &[]));
    let sid = acp.start_session(&env);
    acp.pause(true);
    acp.prompt(json!("big"), &sid, "talk");
    // Not reading: ag-acp stops reading ag-loop, which stops before its
    // end (no agent_end in the session file once the stream is well under
    // way and the file no longer grows), and ag-acp's memory stays small.
    let file = crate::util::run_args(&env, bin!("ag-session"), &["path", &sid]).stdout();
    let file = PathBuf::from(file.trim());
    let mut last = 0;
    let deadline = Instant::now() + HANG;
    loop {
        std::thread::sleep(Duration::from_secs(1));
        let size = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
        if size == last && size > 4 << 20 {
            break;
        }
        last = size;
        assert!(
            Instant::now() < deadline,
            "the session file did not stop growing ({size} bytes)"
        );
    }
    let events = std::fs::read_to_string(&file).unwrap();
    assert!(
        !events.contains("\"agent_end\""),
        "ag-loop ran to its end while nobody read ag-acp"
    );
    let status = std::fs::read_to_string(format!("/proc/{}/status", acp.child.id())).unwrap();
    let rss_kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    assert!(
        rss_kb < 100_000,
        "ag-acp holds {rss_kb} kB while nobody reads it"
    );
    // Reading again: everything arrives, in order, then the answer (a
    // debug build takes its time over 140k updates).
    acp.pause(false);
    let a = acp.until_within(Duration::from_secs(600), "the answer", |m| {
        m.get("method").is_none() && m["id"] == "big"
    });
    assert_eq!(a["result"]["stopReason"], "end_turn");
    assert_eq!(agent_text(&acp.seen), long);
    assert_eq!(acp.finish(), 0);
}

#[test]
fn a_client_gone_mid_call_leaves_no_process_behind() {
    let env = Env::new();
    let model = ModelServer::start(vec![Turn::Tools(vec![(
        "bash",
        json!({"command": "echo $$ > bash.pid; touch started; sleep 60"}),
    )])]);
    let mut acp = Raw::start(&env, &acp_args(&model, &["--mode", "auto"]));
    let sid = acp.start_session(&env);
    acp.prompt(json!("p"), &sid, "run it");
    let deadline = Instant::now() + HANG;
    while !env.join("started").exists() {
        assert!(Instant::now() < deadline, "the command did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let bash = pid_in(&env, "bash.pid");
    assert_eq!(acp.finish(), 0);
    wait_gone(bash);
}

#[test]
fn slash_commands_compact_rewind_and_cost() {
    let env = Env::new();
    let model = ModelServer::start(vec![
        Turn::Tools(vec![(
            "write",
            json!({"file_path": "made.txt", "content": "made\n"}),
        )]),
        Turn::Text("made it"),
        Turn::Text("second"),
        // The summary /compact asks for.
        Turn::Text("Summary: a file was made."),
        Turn::Text("after the rewind"),
    ]);
    let mut acp = Raw::start(&env, &acp_args(&model, &["--mode", "auto"]));
    let sid = acp.start_session(&env);
    acp.prompt(json!("p1"), &sid, "make a file");
    assert_eq!(acp.answer(json!("p1"))["result"]["stopReason"], "end_turn");
    assert!(env.join("made.txt").exists());
    acp.prompt(json!("p2"), &sid, "and again");
    assert_eq!(acp.answer(json!("p2"))["result"]["stopReason"], "end_turn");

    acp.prompt(json!("c"), &sid, "/compact");
    let a = acp.answer(json!("c"));
    assert_eq!(a["result"]["stopReason"], "end_turn", "{a}");
    assert!(
        agent_text(&acp.seen).contains("compacted"),
        "{:#?}",
        acp.seen
    );

    acp.prompt(json!("cost"), &sid, "/cost");
    acp.answer(json!("cost"));
    assert!(agent_text(&acp.seen).contains("output tokens"));

    // Before the first prompt: the file it made is gone again, and the
    // session goes on in the fork.
    acp.prompt(json!("r"), &sid, "/rewind 1");
    let a = acp.answer(json!("r"));
    assert_eq!(a["result"]["stopReason"], "end_turn", "{a}");
    let text = agent_text(&acp.seen);
    assert!(text.contains("Rewound to before turn 1"), "{text}");
    assert!(!env.join("made.txt").exists(), "{text}");
    acp.prompt(json!("p3"), &sid, "where are we?");
    assert_eq!(acp.answer(json!("p3"))["result"]["stopReason"], "end_turn");
    let last = model.requests().last().unwrap()["messages"].to_string();
    assert!(
        !last.contains("make a file"),
        "the rewound prompt is still there: {last}"
    );
    assert_eq!(acp.finish(), 0);
}

#[test]
fn an_editor_that_never_answers_a_permission_request_is_taken_to_refuse() {
    let env = Env::new();
    let model = ModelServer::start(vec![
        Turn::Tools(vec![(
            "write",
            json!({"file_path": "unasked.txt", "content": "x\n"}),
        )]),
        Turn::Text("not written"),
    ]);
    let mut acp = Raw::start(
        &env,
        &acp_args(
            &model,
            &["--mode", "ask-always", "--permission-timeout", "1"],
        ),
    );
    let sid = acp.start_session(&env);
    acp.prompt(json!("p"), &sid, "write it");
    let asked = acp.until("the permission request", |m| {
        m["method"] == "session/request_permission"
    });
    // Never answered: the request is withdrawn, the call refused, and the
    // prompt ends as usual.
    let id = asked["id"].clone();
    acp.until("the request withdrawn", |m| {
        m["method"] == "$/cancel_request" && m["params"]["requestId"] == id
    });
    let a = acp.answer(json!("p"));
    assert_eq!(a["result"]["stopReason"], "end_turn", "{a}");
    assert!(!env.join("unasked.txt").exists());
    let failed = acp
        .seen
        .iter()
        .any(|m| m["params"]["update"]["status"] == "failed");
    assert!(failed, "{:#?}", acp.seen);
    assert_eq!(acp.finish(), 0);
}

#[test]
fn a_refusal_ends_the_prompt_with_the_refusal_stop_reason() {
    let env = Env::new();
    let model = ModelServer::start(vec![
        Turn::Refusal("I can't help with that."),
        Turn::Text("fine then"),
    ]);
    let mut acp = Raw::start(&env, &acp_args(&model, &["--mode", "auto"]));
    let sid = acp.start_session(&env);
    acp.prompt(json!("p1"), &sid, "do something bad");
    let a = acp.answer(json!("p1"));
    // Neither an error answer nor end_turn: the editor says the model
    // declined.
    assert_eq!(a["result"]["stopReason"], "refusal", "{a}");
    assert!(a.get("error").is_none(), "{a}");
    // The session goes on.
    acp.prompt(json!("p2"), &sid, "something else");
    assert_eq!(acp.answer(json!("p2"))["result"]["stopReason"], "end_turn");
    assert!(agent_text(&acp.seen).contains("fine then"));
    assert_eq!(acp.finish(), 0);
}

/// The text of the tool results in the model server's request `n`.
fn tool_results(model: &ModelServer, n: usize) -> String {
    model.requests()[n]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_models_questions_are_elicitation_forms_the_sdk_client_fills_in() {
    let dir = interop();
    let env = Env::new();
    let choices = json!({"question": "Which database?", "options": ["PostgreSQL", "SQLite"]});
    let model = ModelServer::start(vec![
        // 1: a choice, chosen.
        Turn::Tools(vec![("ask", choices.clone())]),
        Turn::Text("SQLite it is"),
        // 2: a free-text question.
        Turn::Tools(vec![("ask", json!({"question": "Which port?"}))]),
        Turn::Text("port noted"),
        // 3: choices, but the person writes their own answer.
        Turn::Tools(vec![("ask", choices.clone())]),
        Turn::Text("own answer noted"),
        // 4: declined.
        Turn::Tools(vec![("ask", choices)]),
        Turn::Text("deciding myself"),
    ]);
    let out = sdk_client(
        &env,
        &dir,
        &acp_args(&model, &[]),
        json!([
            {"op": "initialize", "elicitation": true},
            {"op": "new", "cwd": env.path()},
            {"op": "prompt", "text": "set up the database", "elicit": {"choice": "SQLite"}},
            {"op": "prompt", "text": "and the port", "elicit": {"answer": "5432"}},
            {"op": "prompt", "text": "again", "elicit": {"choice": "SQLite", "answer": "MariaDB"}},
            {"op": "prompt", "text": "once more", "elicit": "decline"},
        ]),
    );
    let prompts = out.ops("prompt");
    assert_eq!(prompts.len(), 4, "{:#?}", out.steps);
    for p in &prompts {
        assert_eq!(p["result"]["stopReason"], "end_turn", "{p}");
        // Asked by a form, not shown as a notice, nor as a permission.
        assert_eq!(p["elicitations"].as_array().unwrap().len(), 1, "{p}");
        assert!(p["permissions"].as_array().unwrap().is_empty(), "{p}");
        assert!(!answer_text(&updates(p)).contains("the agent asks"), "{p}");
    }
    let form = &prompts[0]["elicitations"][0]["request"];
    assert_eq!(form["mode"], "form");
    assert_eq!(form["sessionId"], out.op("new")["result"]["sessionId"]);
    // Tied to the ask call the editor was shown.
    let call = of_kind(&updates(prompts[0]), "tool_call")[0]["toolCallId"].clone();
    assert_eq!(form["toolCallId"], call);
    assert_eq!(
        form["requestedSchema"]["properties"]["choice"]["oneOf"][0]["const"],
        "PostgreSQL"
    );
    let free = &prompts[1]["elicitations"][0]["request"];
    assert!(
        free["requestedSchema"]["properties"]
            .get("choice")
            .is_none()
    );
    assert!(tool_results(&model, 1).contains("The user answered: SQLite"));
    assert!(tool_results(&model, 3).contains("The user answered: 5432"));
    assert!(tool_results(&model, 5).contains("The user answered: MariaDB"));
    let declined = tool_results(&model, 7);
    assert!(declined.contains("the user gave no answer"), "{declined}");
    check_schema(&dir, &out.log);
}

#[test]
fn without_forms_a_question_with_choices_is_a_permission_request() {
    let dir = interop();
    let env = Env::new();
    let model = ModelServer::start(vec![
        Turn::Tools(vec![(
            "ask",
            json!({"question": "Which database?", "options": ["PostgreSQL", "SQLite"]}),
        )]),
        Turn::Text("SQLite it is"),
    ]);
    let out = sdk_client(
        &env,
        &dir,
        &acp_args(&model, &[]),
        json!([
            {"op": "initialize"},
            {"op": "new", "cwd": env.path()},
            {"op": "prompt", "text": "set up the database", "permission": {"choose": "SQLite"}},
        ]),
    );
    let p = out.op("prompt");
    assert_eq!(p["result"]["stopReason"], "end_turn", "{p}");
    assert!(p["elicitations"].as_array().unwrap().is_empty(), "{p}");
    let asked = &p["permissions"][0]["request"];
    let names: Vec<&str> = asked["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["PostgreSQL", "SQLite"], "{asked}");
    assert!(
        asked["toolCall"]["title"]
            .as_str()
            .unwrap()
            .contains("Which database?"),
        "{asked}"
    );
    assert!(tool_results(&model, 1).contains("The user answered: SQLite"));
    check_schema(&dir, &out.log);
}

#[test]
fn a_forked_session_goes_on_with_the_conversation_and_leaves_the_original_alone() {
    let dir = interop();
    let env = Env::new();
    let model = ModelServer::start(vec![Turn::Text("one"), Turn::Text("two, in the fork")]);
    let out = sdk_client(
        &env,
        &dir,
        &acp_args(&model, &[]),
        json!([
            {"op": "initialize"},
            {"op": "new", "cwd": env.path()},
            {"op": "prompt", "text": "first words"},
            {"op": "fork", "cwd": env.path()},
            {"op": "prompt", "text": "second words"},
            {"op": "fork", "sessionId": "no-such-session", "cwd": env.path()},
        ]),
    );
    let init = out.op("initialize");
    assert!(
        init["result"]["agentCapabilities"]["sessionCapabilities"]["fork"].is_object(),
        "{init}"
    );
    let original = out.op("new")["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let forks = out.ops("fork");
    let forked = forks[0]["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(forked, original);
    assert!(forks[0]["result"]["modes"].is_object(), "{}", forks[0]);
    // The fork answers.
    assert!(!of_kind(&updates(out.ops("prompt")[1]), "agent_message_chunk").is_empty());
    assert_eq!(out.ops("prompt")[1]["result"]["stopReason"], "end_turn");
    // The fork's model call carries the conversation before it.
    let second = model.requests()[1]["messages"].to_string();
    assert!(
        second.contains("first words") && second.contains("second words"),
        "{second}"
    );
    // The original did not take the fork's prompt.
    let mut c = env.cmd(bin!("ag-session"));
    c.args(["export", &original]);
    let r = run(c, None);
    r.ok();
    assert!(r.stdout().contains("first words"), "{r}");
    assert!(!r.stdout().contains("second words"), "{r}");
    // A session that does not exist: the error the specification gives.
    assert_eq!(forks[1]["error"]["code"], -32002, "{}", forks[1]);
    check_schema(&dir, &out.log);
}

#[test]
fn an_http_mcp_servers_headers_reach_it_and_stay_out_of_sight() {
    let dir = interop();
    let env = Env::new();
    let secret = "s3cret-token-4711";
    let bridge = crate::mcp_client::Bridge::start_with(
        &env,
        &["--tools", "ls"],
        Some(&format!("Authorization: Bearer {secret}")),
    );
    let model = ModelServer::start(vec![Turn::Text("seen"), Turn::Text("seen")]);
    let server = |headers: Value| json!([{"type": "http", "name": "guarded", "url": bridge.url, "headers": headers}]);
    let out = sdk_client(
        &env,
        &dir,
        &acp_args(&model, &[]),
        json!([
            {"op": "initialize"},
            // Without the header: the server refuses, and so ag-loop
            // cannot start.
            {"op": "new", "cwd": env.path(), "mcpServers": server(json!([]))},
            {"op": "prompt", "text": "hello"},
            {"op": "new", "cwd": env.path(),
             "mcpServers": server(json!([{"name": "Authorization", "value": format!("Bearer {secret}")}]))},
            {"op": "prompt", "text": "hello"},
        ]),
    );
    let prompts = out.ops("prompt");
    assert!(prompts[0]["error"].is_object(), "{}", prompts[0]);
    assert_eq!(
        prompts[1]["result"]["stopReason"], "end_turn",
        "{}",
        prompts[1]
    );
    // The server's tool was offered to the model (beside ag's own ls).
    let offered = model.requests().last().unwrap()["tools"].to_string();
    assert!(offered.contains("__ls"), "{offered}");
    // Never sent back to the editor, nor written in the session file.
    for (from, msg) in &out.log {
        assert!(
            from == "client" || !msg.to_string().contains(secret),
            "{msg}"
        );
    }
    let sid = out.ops("new")[1]["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let mut files = vec![env.join(".home")];
    let mut sessions = 0;
    while let Some(p) = files.pop() {
        if p.is_dir() {
            files.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        } else if !p.ends_with("acp-log.jsonl") {
            // (The test's own log of both sides, checked above.)
            let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).to_string();
            assert!(!text.contains(secret), "{}", p.display());
            sessions += usize::from(p.to_string_lossy().contains(&sid));
        }
    }
    assert!(sessions > 0, "the session file was not looked at");
    check_schema(&dir, &out.log);
}

#[test]
fn skills_are_commands_that_ask_the_model_to_use_them() {
    let env = Env::new();
    std::fs::create_dir_all(env.join(".git")).unwrap();
    env.write(
        ".agents/skills/release-notes/SKILL.md",
        "---\nname: release-notes\ndescription: Write release notes from the git log\n---\nRun git log.\n",
    );
    let model = ModelServer::start(vec![Turn::Text("notes written"), Turn::Text("plain")]);
    let mut acp = Raw::start(&env, &acp_args(&model, &["--mode", "auto"]));
    let sid = acp.start_session(&env);
    let update = acp.until("the commands", |m| {
        m["params"]["update"]["sessionUpdate"] == "available_commands_update"
    });
    let commands = &update["params"]["update"]["availableCommands"];
    let skill = commands
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "release-notes")
        .unwrap_or_else(|| panic!("no skill command: {commands}"));
    assert_eq!(
        skill["description"],
        "Skill: Write release notes from the git log"
    );
    acp.prompt(json!("p1"), &sid, "/release-notes for v2 only");
    assert_eq!(acp.answer(json!("p1"))["result"]["stopReason"], "end_turn");
    let asked = model.requests()[0]["messages"].to_string();
    assert!(
        asked.contains("Use the skill `release-notes`")
            && asked.contains("SKILL.md")
            && asked.contains("for v2 only"),
        "{asked}"
    );
    // A slash word that names no skill or command goes to the model as it is.
    acp.prompt(json!("p2"), &sid, "/release for v3");
    assert_eq!(acp.answer(json!("p2"))["result"]["stopReason"], "end_turn");
    let asked = model.requests()[1]["messages"].to_string();
    assert!(asked.contains("/release for v3"), "{asked}");
    assert_eq!(acp.finish(), 0);
}

/// `--editor-fs` test: the model reads `notes.txt` (whose unsaved buffer
/// differs from the disk), writes it, reads a file outside the workspace
/// and a directory, writes a new file, then writes `notes.txt` back as it
/// holds it inside a chat's fence and again without its last line break,
/// through the SDK client's fs methods.
fn editor_fs_session(editor_fs: bool, sandbox: bool) -> (Env, ModelServer, Sdk) {
    let dir = interop();
    let env = Env::new();
    std::fs::write(env.join("notes.txt"), "disk line\n").unwrap();
    let file = env.join("notes.txt").canonicalize().unwrap();
    let own = env.name();
    let model = ModelServer::start(vec![
        Turn::Tools(vec![("read", json!({"file_path": "notes.txt"}))]),
        Turn::Text("read it"),
        Turn::Tools(vec![(
            "write",
            json!({"file_path": "notes.txt", "content": "new text\n"}),
        )]),
        Turn::Text("wrote it"),
        Turn::Tools(vec![("read", json!({"file_path": "/etc/passwd"}))]),
        Turn::Text("refused"),
        Turn::Tools(vec![("read", json!({"file_path": "."}))]),
        Turn::Text("a directory"),
        Turn::Tools(vec![(
            "write",
            json!({"file_path": "note.txt", "content": "a new one\n"}),
        )]),
        Turn::Text("a new file"),
        Turn::Tools(vec![(
            "write",
            json!({"file_path": "notes.txt", "content": "```\nnew text\n```"}),
        )]),
        Turn::Tools(vec![(
            "write",
            json!({"file_path": "notes.txt", "content": "newer text"}),
        )]),
        Turn::Text("its last line break kept"),
        Turn::Tools(vec![(
            "write",
            json!({"file_path": format!("{own}/notes.txt"), "content": "x\n"}),
        )]),
        Turn::Tools(vec![(
            "read",
            json!({"file_path": format!("{own}/notes.txt")}),
        )]),
        Turn::Text("the path meant"),
    ]);
    let mut args: Vec<String> = ["-m", "ollama/scripted", "--mode", "auto"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    if editor_fs {
        args.push("--editor-fs".into());
    }
    args.extend(["--".into(), "--base-url".into(), model.base_url()]);
    if !sandbox {
        args.extend(["--sandbox".into(), "off".into()]);
    }
    let buffers = json!({ file.display().to_string(): "buffer line 1\nbuffer line 2\n" });
    let out = sdk_client(
        &env,
        &dir,
        &args,
        json!([
            {"op": "initialize", "buffers": buffers},
            {"op": "new", "cwd": env.path()},
            {"op": "prompt", "text": "read notes"},
            {"op": "prompt", "text": "write notes"},
            {"op": "prompt", "text": "read outside"},
            {"op": "prompt", "text": "read a directory"},
            {"op": "prompt", "text": "write a new note"},
            {"op": "prompt", "text": "write notes in a fence, then without its last line break"},
            {"op": "prompt", "text": "write notes in a folder named as the workspace"},
        ]),
    );
    (env, model, out)
}

#[test]
fn with_editor_fs_read_and_write_go_through_the_editors_buffers() {
    for sandbox in [true, false] {
        let (env, model, out) = editor_fs_session(true, sandbox);
        let prompts = out.ops("prompt");
        assert_eq!(prompts.len(), 7, "{:#?}", out.steps);
        for p in &prompts {
            assert_eq!(p["result"]["stopReason"], "end_turn", "{p}");
        }
        let file = env.join("notes.txt").canonicalize().unwrap();
        // The read saw the unsaved buffer, numbered as ag-read numbers.
        let read = tool_results(&model, 1);
        assert!(
            read.contains("     2\\tbuffer line 2"),
            "sandbox {sandbox}: {read}"
        );
        assert!(!read.contains("disk line"), "{read}");
        let fs = prompts[0]["fs"].as_array().unwrap();
        assert_eq!(fs.len(), 1, "{fs:?}");
        assert_eq!(fs[0]["method"], "fs/read_text_file");
        assert_eq!(fs[0]["params"]["path"], file.display().to_string());
        assert_eq!(
            fs[0]["params"]["sessionId"],
            out.op("new")["result"]["sessionId"]
        );
        // The write went to the editor (checked against the buffer the
        // model read first); the disk is as it was.
        let write = tool_results(&model, 3);
        assert!(write.contains("Overwrote notes.txt (9 bytes)"), "{write}");
        let fs = prompts[1]["fs"].as_array().unwrap();
        let writes: Vec<_> = fs
            .iter()
            .filter(|f| f["method"] == "fs/write_text_file")
            .collect();
        assert_eq!(writes.len(), 1, "{fs:?}");
        assert_eq!(writes[0]["params"]["content"], "new text\n");
        assert_eq!(
            std::fs::read_to_string(env.join("notes.txt")).unwrap(),
            "disk line\n"
        );
        // Outside the workspace: refused, the editor not asked.
        let outside = tool_results(&model, 5);
        assert!(outside.contains("outside the allowed root"), "{outside}");
        assert!(!outside.contains("root:x"), "{outside}");
        assert!(prompts[2]["fs"].as_array().unwrap().is_empty());
        // A directory is ag-read's, from disk.
        let listing = tool_results(&model, 7);
        assert!(listing.contains("is a directory"), "{listing}");
        assert!(prompts[3]["fs"].as_array().unwrap().is_empty());
        // A new file one slip from a file beside it names that file, as
        // ag-write does.
        let near = tool_results(&model, 9);
        assert!(
            near.contains("`notes.txt`, a near name, is beside it, unchanged"),
            "{near}"
        );
        // ag-write's content repairs, on the buffer: the text it holds in
        // a chat's fence is no change, and nothing is sent to the editor;
        // a content without the last line break the buffer ends in keeps
        // it.
        let held = tool_results(&model, 11);
        assert!(
            held.contains(
                "notes.txt already holds exactly this text (9 bytes), inside the ``` code fence"
            ),
            "{held}"
        );
        let kept = tool_results(&model, 12);
        assert!(
            kept.contains(
                "the content had no line break at its end, and the file's last one was kept"
            ),
            "{kept}"
        );
        let writes: Vec<_> = prompts[5]["fs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["method"] == "fs/write_text_file")
            .collect();
        assert_eq!(writes.len(), 1, "{:?}", prompts[5]["fs"]);
        assert_eq!(writes[0]["params"]["content"], "newer text\n");
        assert_eq!(
            std::fs::read_to_string(env.join("notes.txt")).unwrap(),
            "disk line\n"
        );
        // A path that starts with the workspace's own name is refused
        // with the path meant, as ag-write refuses it; the editor is not
        // asked.
        let meant = tool_results(&model, 14);
        assert!(
            meant.contains("the file is `notes.txt`. Nothing was written"),
            "{meant}"
        );
        // A read of that path reads the buffer of the file meant.
        let read = tool_results(&model, 15);
        assert!(
            read.contains("newer text") && read.contains("this is `notes.txt`"),
            "{read}"
        );
        let fs = prompts[6]["fs"].as_array().unwrap();
        assert_eq!(fs.len(), 1, "{fs:?}");
        assert_eq!(fs[0]["method"], "fs/read_text_file");
        assert_eq!(fs[0]["params"]["path"], file.display().to_string());
        check_schema(&interop(), &out.log);
    }
}

#[test]
fn without_editor_fs_the_disk_is_read_and_written() {
    let (env, model, out) = editor_fs_session(false, false);
    for p in out.ops("prompt") {
        assert!(p["fs"].as_array().unwrap().is_empty(), "{p}");
    }
    assert!(tool_results(&model, 1).contains("disk line"));
    assert!(tool_results(&model, 9).contains("`notes.txt`, a near name, is beside it, unchanged"));
    // The same answers as through the editor.
    assert!(tool_results(&model, 11).contains("already holds exactly this text (9 bytes)"));
    assert!(tool_results(&model, 12).contains("and the file's last one was kept"));
    assert!(tool_results(&model, 14).contains("the file is `notes.txt`. Nothing was written"));
    assert!(tool_results(&model, 15).contains("this is `notes.txt`"));
    assert_eq!(
        std::fs::read_to_string(env.join("notes.txt")).unwrap(),
        "newer text\n"
    );
}

#[test]
fn in_read_only_mode_read_goes_through_the_editor_and_write_is_not_offered() {
    let dir = interop();
    let env = Env::new();
    std::fs::write(env.join("notes.txt"), "disk line\n").unwrap();
    let file = env.join("notes.txt").canonicalize().unwrap();
    let model = ModelServer::start(vec![
        Turn::Tools(vec![("read", json!({"file_path": "notes.txt"}))]),
        Turn::Text("read it"),
    ]);
    let buffers = json!({ file.display().to_string(): "unsaved\n" });
    let out = sdk_client(
        &env,
        &dir,
        &acp_args(&model, &["--editor-fs", "--mode", "read-only"]),
        json!([
            {"op": "initialize", "buffers": buffers},
            {"op": "new", "cwd": env.path()},
            {"op": "prompt", "text": "read notes"},
        ]),
    );
    assert_eq!(out.op("prompt")["result"]["stopReason"], "end_turn");
    assert!(tool_results(&model, 1).contains("     1\\tunsaved"));
    let offered: Vec<String> = model.requests()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    let mut sorted = offered.clone();
    sorted.sort();
    assert_eq!(sorted, ["find", "grep", "ls", "read"], "{offered:?}");
}

/// The terminal/* requests of a step, by method.
fn terminal_calls<'a>(step: &'a Value, method: &str) -> Vec<&'a Value> {
    step["terminals"]
        .as_array()
        .unwrap_or_else(|| panic!("no terminals: {step}"))
        .iter()
        .filter(|t| t["method"] == method)
        .collect()
}

/// `--editor-terminal`, the sandbox on: the model's bash runs in the SDK
/// client's terminal (which runs it with child_process), confined by
/// ag-sandbox; a command that writes outside the workspace is refused by
/// the sandbox, and one that reaches for the socket to ask for a terminal
/// without the sandbox is refused by ag-acp.
#[test]
fn with_editor_terminal_bash_runs_in_the_editors_terminal_still_confined() {
    let dir = interop();
    let env = Env::new();
    let outside = tempfile::tempdir().unwrap();
    let escape = outside.path().join("escape.txt");
    let escape2 = outside.path().join("escape2.txt");
    let ag_acp = bin!("ag-acp");
    let forged = format!(
        "sock=$(ls {tmp}/ag-acp-*/fs.sock | head -1); \
         sid=$(ps -eo args | grep -F -- \"--socket $sock\" | grep -o -- '--session [^ ]*' | head -1 | cut -d' ' -f2); \
         echo \"sid=$sid\"; \
         echo '{{\"id\":\"evil\",\"arguments\":{{\"command\":\"echo owned > {out}\"}}}}' \
         | env -u AG_SANDBOX {ag_acp} editor-tool bash --socket \"$sock\" --session \"$sid\"",
        tmp = env.join(crate::util::TMP).display(),
        out = escape2.display(),
    );
    let model = ModelServer::start(vec![
        Turn::Tools(vec![(
            "bash",
            json!({"command": "echo from-the-terminal; pwd; exit 3"}),
        )]),
        Turn::Text("ran it"),
        Turn::Tools(vec![(
            "bash",
            json!({"command": format!("echo owned > {}", escape.display())}),
        )]),
        Turn::Text("tried"),
        Turn::Tools(vec![("bash", json!({"command": forged}))]),
        Turn::Text("tried again"),
    ]);
    let args: Vec<String> = [
        "-m",
        "ollama/scripted",
        "--mode",
        "auto",
        "--editor-terminal",
        "--",
        "--base-url",
        &model.base_url(),
        "--sandbox",
        "require",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = sdk_client(
        &env,
        &dir,
        &args,
        json!([
            {"op": "initialize", "terminal": true},
            {"op": "new", "cwd": env.path()},
            {"op": "prompt", "text": "run it"},
            {"op": "prompt", "text": "write outside"},
            {"op": "prompt", "text": "forge a request"},
        ]),
    );
    let prompts = out.ops("prompt");
    assert_eq!(prompts.len(), 3, "{:#?}\n{}", out.steps, out.stderr);
    for p in &prompts {
        assert_eq!(p["result"]["stopReason"], "end_turn", "{p}");
    }
    // The output and the exit code reached the model, in ag-bash's shape.
    let ran = tool_results(&model, 1);
    assert!(ran.contains("from-the-terminal"), "{ran}\n{}", out.stderr);
    assert!(ran.contains("exit code: 3"), "{ran}");
    // The editor ran ag-sandbox (by its absolute path) with the policy,
    // then bash -c the command, in the session's directory.
    let created = terminal_calls(prompts[0], "terminal/create");
    assert_eq!(created.len(), 1, "{:#?}", prompts[0]["terminals"]);
    let params = &created[0]["params"];
    let program = params["command"].as_str().unwrap();
    assert!(
        Path::new(program).is_absolute() && program.ends_with("/ag-sandbox"),
        "{params}"
    );
    let argv: Vec<&str> = params["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let dashes = argv.iter().position(|a| *a == "--").unwrap();
    assert!(argv[..dashes].contains(&"--workspace"), "{argv:?}");
    assert!(argv[..dashes].contains(&"require"), "{argv:?}");
    assert_eq!(
        argv[dashes + 1..],
        ["bash", "-c", "echo from-the-terminal; pwd; exit 3"]
    );
    for m in [
        "terminal/wait_for_exit",
        "terminal/output",
        "terminal/release",
    ] {
        assert_eq!(terminal_calls(prompts[0], m).len(), 1, "{m}");
    }
    assert!(terminal_calls(prompts[0], "terminal/kill").is_empty());
    // The tool call shows the terminal, while it runs and when it ended.
    let ups = updates(prompts[0]);
    let shown: Vec<&Value> = of_kind(&ups, "tool_call_update")
        .into_iter()
        .filter(|u| {
            u["content"]
                .as_array()
                .is_some_and(|c| c.iter().any(|c| c["type"] == "terminal"))
        })
        .collect();
    assert_eq!(shown.len(), 2, "{ups:#?}");
    assert_eq!(shown[1]["status"], "completed");
    // Writing outside the workspace: the sandbox said no.
    let refused = tool_results(&model, 3);
    assert!(
        !escape.exists(),
        "the editor's terminal wrote outside: {refused}"
    );
    assert!(!refused.contains("exit code: 0"), "{refused}");
    // Asking ag-acp for a terminal without the sandbox, from a command:
    // found the socket and the session, and was turned away.
    let forged_out = tool_results(&model, 5);
    assert!(!escape2.exists(), "{forged_out}");
    assert!(
        forged_out.contains("sid=") && !forged_out.contains("sid=\\n"),
        "{forged_out}"
    );
    assert!(
        forged_out.contains("only the bash tool of this session's ag-loop"),
        "{forged_out}"
    );
    assert_eq!(terminal_calls(prompts[2], "terminal/create").len(), 1);
    check_schema(&interop(), &out.log);
}

/// A cancel while the command runs in the editor's terminal kills it (and
/// releases the terminal); the time limit does the same.
#[test]
fn a_cancel_or_the_time_limit_kills_the_editors_terminal() {
    let dir = interop();
    let env = Env::new();
    let model = ModelServer::start(vec![
        Turn::Tools(vec![(
            "bash",
            json!({"command": "echo $$ > pid; touch started; sleep 60; touch finished"}),
        )]),
        // The interrupted run asks nothing more of the model.
        Turn::Tools(vec![(
            "bash",
            json!({"command": "echo $$ > pid2; echo before; sleep 60", "timeout": 1}),
        )]),
        Turn::Text("timed out"),
    ]);
    let out = sdk_client(
        &env,
        &dir,
        &acp_args(&model, &["--mode", "auto", "--editor-terminal"]),
        json!([
            // A slow editor: the cancelled prompt's answer still waits
            // for its terminal to be killed and released.
            {"op": "initialize", "terminal": true, "slow_kill_ms": 1500},
            {"op": "new", "cwd": env.path()},
            {"op": "prompt", "text": "run long", "cancel_when": env.join("started")},
            {"op": "prompt", "text": "run too long"},
        ]),
    );
    let prompts = out.ops("prompt");
    assert_eq!(
        prompts[0]["result"]["stopReason"], "cancelled",
        "{}",
        out.stderr
    );
    wait_gone(pid_in(&env, "pid"));
    assert!(!env.join("finished").exists());
    for m in ["terminal/create", "terminal/kill", "terminal/release"] {
        assert_eq!(
            terminal_calls(prompts[0], m).len(),
            1,
            "{m}: {:#?}",
            prompts[0]["terminals"]
        );
    }
    // The time limit: killed, the output so far and exit code 124.
    assert_eq!(prompts[1]["result"]["stopReason"], "end_turn");
    wait_gone(pid_in(&env, "pid2"));
    let timed = tool_results(&model, 2);
    assert!(timed.contains("before"), "{timed}");
    assert!(timed.contains("timed out after 1 s"), "{timed}");
    assert!(timed.contains("exit code: 124"), "{timed}");
    for m in ["terminal/kill", "terminal/output", "terminal/release"] {
        assert_eq!(terminal_calls(prompts[1], m).len(), 1, "{m}");
    }
}

/// An editor without terminals: ag's own bash runs the command, and
/// ag-acp says so on stderr.
#[test]
fn without_the_terminal_capability_bash_falls_back_with_a_notice() {
    let dir = interop();
    let env = Env::new();
    let model = ModelServer::start(vec![
        Turn::Tools(vec![("bash", json!({"command": "echo ran-by-ag-bash"}))]),
        Turn::Text("done"),
    ]);
    let out = sdk_client(
        &env,
        &dir,
        &acp_args(&model, &["--mode", "auto", "--editor-terminal"]),
        json!([
            {"op": "initialize"},
            {"op": "new", "cwd": env.path()},
            {"op": "prompt", "text": "run"},
        ]),
    );
    let p = out.op("prompt");
    assert_eq!(p["result"]["stopReason"], "end_turn");
    assert!(p["terminals"].as_array().unwrap().is_empty(), "{p}");
    let ran = tool_results(&model, 1);
    assert!(
        ran.contains("ran-by-ag-bash") && ran.contains("exit code: 0"),
        "{ran}"
    );
    assert!(
        out.stderr.contains("the editor does not offer a terminal"),
        "{}",
        out.stderr
    );
}

/// A stdio MCP server's `env` reaches that server, and nothing else: not
/// ag-loop's command line (`ps`), not the tools' environment, not the
/// events.
#[test]
fn a_stdio_mcp_servers_env_reaches_it_and_stays_out_of_sight() {
    let dir = interop();
    let env = Env::new();
    let secret = "s3cret-mcp-token-4711";
    let model = ModelServer::start(vec![
        Turn::Tools(vec![(
            "bash",
            json!({"command": "ps -eo args; echo ---; env; echo ---; cat seen.txt"}),
        )]),
        Turn::Text("looked"),
    ]);
    let mcp = json!([{
        "name": "keyed",
        "command": "sh",
        "args": ["-c", format!("printf %s \"$MCP_TOKEN\" > seen.txt; exec {} --tools ls", bin!("ag-mcp"))],
        "env": [{"name": "MCP_TOKEN", "value": secret}],
    }]);
    let out = sdk_client(
        &env,
        &dir,
        &acp_args(&model, &["--mode", "auto"]),
        json!([
            {"op": "initialize"},
            {"op": "new", "cwd": env.path(), "mcpServers": mcp},
            {"op": "prompt", "text": "look around"},
        ]),
    );
    assert_eq!(
        out.op("prompt")["result"]["stopReason"],
        "end_turn",
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(env.join("seen.txt")).unwrap(),
        secret
    );
    let offered = model.requests()[0]["tools"].to_string();
    assert!(offered.contains("__ls"), "{offered}");
    // ps and env in a tool: the command line has no secret, the tools'
    // environment neither; the one place it is read (the file the server
    // wrote) is hidden in what the model and the editor get.
    let seen = tool_results(&model, 1);
    assert!(seen.contains("ag-loop") && seen.contains("--mcp"), "{seen}");
    assert!(!seen.contains(secret), "{seen}");
    assert!(!seen.contains("AG_MCP_ENV"), "{seen}");
    assert!(seen.contains("[MCP server variable redacted]"), "{seen}");
    for (from, msg) in &out.log {
        assert!(
            from == "client" || !msg.to_string().contains(secret),
            "{msg}"
        );
    }
}

/// `--editor-fs` and edit: an unsaved buffer that differs from the disk is
/// edited (read, matched, written back through fs/write_text_file, the
/// diff shown as diff content); the disk is left alone, and text only on
/// disk is not found.
#[test]
fn with_editor_fs_edit_changes_the_editors_buffer_not_the_disk() {
    let dir = interop();
    let env = Env::new();
    std::fs::write(env.join("notes.txt"), "disk line\n").unwrap();
    let file = env.join("notes.txt").canonicalize().unwrap();
    let model = ModelServer::start(vec![
        Turn::Tools(vec![("read", json!({"file_path": "notes.txt"}))]),
        Turn::Tools(vec![(
            "edit",
            json!({"file_path": "notes.txt", "old_string": "buffer line 2", "new_string": "edited line 2"}),
        )]),
        Turn::Text("edited"),
        Turn::Tools(vec![(
            "edit",
            json!({"file_path": "notes.txt", "old_string": "disk line", "new_string": "nope"}),
        )]),
        Turn::Text("not there"),
    ]);
    let buffers = json!({ file.display().to_string(): "buffer line 1\nbuffer line 2\n" });
    let out = sdk_client(
        &env,
        &dir,
        &acp_args(&model, &["--mode", "auto", "--editor-fs"]),
        json!([
            {"op": "initialize", "buffers": buffers},
            {"op": "new", "cwd": env.path()},
            {"op": "prompt", "text": "edit notes"},
            {"op": "prompt", "text": "edit the disk's text"},
        ]),
    );
    let prompts = out.ops("prompt");
    assert_eq!(
        prompts[0]["result"]["stopReason"], "end_turn",
        "{}",
        out.stderr
    );
    let edited = tool_results(&model, 2);
    assert!(
        edited.contains("Replaced 1 occurrence in notes.txt"),
        "{edited}"
    );
    let writes: Vec<&Value> = prompts[0]["fs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["method"] == "fs/write_text_file")
        .collect();
    assert_eq!(writes.len(), 1, "{:#?}", prompts[0]["fs"]);
    assert_eq!(writes[0]["params"]["path"], file.display().to_string());
    assert_eq!(
        writes[0]["params"]["content"],
        "buffer line 1\nedited line 2\n"
    );
    assert_eq!(
        std::fs::read_to_string(env.join("notes.txt")).unwrap(),
        "disk line\n"
    );
    // The editor shows its own diff: the buffer before and after.
    let ups = updates(prompts[0]);
    let diffs: Vec<&Value> = of_kind(&ups, "tool_call_update")
        .into_iter()
        .filter_map(|u| u["content"].as_array())
        .flatten()
        .filter(|c| c["type"] == "diff")
        .collect();
    assert_eq!(diffs.len(), 1, "{ups:#?}");
    assert_eq!(diffs[0]["newText"], "buffer line 1\nedited line 2\n");
    assert_eq!(diffs[0]["oldText"], "buffer line 1\nbuffer line 2\n");
    // What is only on disk is not in the buffer: not found, nothing
    // written anywhere.
    let missed = tool_results(&model, 4);
    assert!(missed.contains("old_string was not found"), "{missed}");
    assert!(
        !prompts[1]["fs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["method"] == "fs/write_text_file"),
        "{:#?}",
        prompts[1]["fs"]
    );
    assert_eq!(
        std::fs::read_to_string(env.join("notes.txt")).unwrap(),
        "disk line\n"
    );
    check_schema(&dir, &out.log);
}

/// A subagent's tool calls (the `agent` tool's child ag-loop) show as
/// tool calls of their own, titled with the `agent` call, beside that
/// call, whose result is the child's answer.
#[test]
fn a_subagents_tool_calls_show_in_the_editor() {
    let dir = interop();
    let env = Env::new();
    std::fs::write(env.join("notes.txt"), "child reads this\n").unwrap();
    let model = ModelServer::start(vec![
        Turn::Tools(vec![("agent", json!({"task": "read notes.txt"}))]),
        // The child's turns, in its own ag-loop.
        Turn::Tools(vec![("read", json!({"file_path": "notes.txt"}))]),
        Turn::Text("the child read it"),
        Turn::Text("delegated"),
    ]);
    let args: Vec<String> = [
        "-m",
        "ollama/scripted",
        "--mode",
        "auto",
        "--",
        "--base-url",
        &model.base_url(),
        "--sandbox",
        "off",
        "--tools",
        "read,agent",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = sdk_client(
        &env,
        &dir,
        &args,
        json!([
            {"op": "initialize"},
            {"op": "new", "cwd": env.path()},
            {"op": "prompt", "text": "delegate"},
        ]),
    );
    let p = out.op("prompt");
    assert_eq!(p["result"]["stopReason"], "end_turn", "{}", out.stderr);
    let ups = updates(p);
    let calls = of_kind(&ups, "tool_call");
    let agent = calls
        .iter()
        .find(|c| c["title"].as_str().unwrap_or("").starts_with("agent"))
        .and_then(|c| c["toolCallId"].as_str())
        .filter(|id| !id.contains('/'))
        .unwrap_or_else(|| panic!("no agent call: {calls:#?}"));
    let child = calls
        .iter()
        .find(|c| c["toolCallId"].as_str().unwrap().contains('/'))
        .unwrap_or_else(|| panic!("no call of the child: {calls:#?}"));
    assert!(
        child["toolCallId"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{agent}/")),
        "{child}"
    );
    assert_eq!(child["title"], format!("agent {agent}: read notes.txt"));
    assert_eq!(child["kind"], "read");
    let ended: Vec<&Value> = of_kind(&ups, "tool_call_update")
        .into_iter()
        .filter(|u| u["toolCallId"] == child["toolCallId"])
        .collect();
    assert_eq!(ended.len(), 1, "{ups:#?}");
    assert_eq!(ended[0]["status"], "completed");
    assert!(
        ended[0]["content"].to_string().contains("child reads this"),
        "{}",
        ended[0]
    );
    // The child's words are not the session's answer.
    assert_eq!(answer_text(&ups), "delegated");
    check_schema(&dir, &out.log);
}

/// A session of ag-acp's in `cwd`, for a raw client.
fn new_session_in(acp: &mut Raw, cwd: &Path) -> String {
    acp.request(
        json!("init"),
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    );
    acp.answer(json!("init"));
    acp.request(
        json!("new"),
        "session/new",
        json!({"cwd": cwd, "mcpServers": []}),
    );
    let r = acp.answer(json!("new"));
    r["result"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"))
        .to_string()
}

#[test]
fn a_prompt_ag_loop_refuses_is_answered_with_why_and_the_next_one_runs() {
    let env = Env::new();
    // The session works in proj/, so that ag's home (.home/.ag, with its
    // models.json) is outside it, where the sandbox's deny list keeps it.
    env.write("proj/blob.bin", b"a\0b");
    env.write("proj/secret.txt", "private words\n");
    env.write("proj/.ag/agents/dev.md", "You are dev.\n");
    env.write(".home/.ag/models.json", "{\"providers\": {}}\n");
    env.write(
        "gate.sh",
        "read -r req\ncase \"$req\" in\n  *secret.txt*) echo '{\"decision\":\"deny\",\"reason\":\"secret.txt is private\"}' ;;\n  *) echo '{\"decision\":\"allow\"}' ;;\nesac\n",
    );
    let model = ModelServer::start(vec![Turn::Text("fine")]);
    let gate = format!("sh {}", env.join("gate.sh").display());
    // The sandbox is on (no `--sandbox off`): its deny list is one case.
    let args: Vec<String> = [
        "-m",
        "ollama/scripted",
        "--",
        "--base-url",
        &model.base_url(),
        "--gate",
        &gate,
    ]
    .map(String::from)
    .to_vec();
    let mut acp = Raw::start(&env, &args);
    let sid = new_session_in(&mut acp, &env.join("proj"));
    // What ag-loop refuses (and, last, what ag-acp refuses itself), with
    // ag-loop's words for it and its code.
    let cases = [
        (
            "binary",
            "see @blob.bin",
            "binary file",
            Some("attach.binary"),
        ),
        (
            "gate",
            "see @secret.txt",
            "secret.txt is private",
            Some("attach.denied"),
        ),
        (
            "deny-list",
            "see @../.home/.ag/models.json",
            "deny list",
            Some("attach.denied"),
        ),
        (
            "identity",
            "@nosuch do x",
            "no agent identity `nosuch`",
            Some("prompt.unknown_identity"),
        ),
        (
            "nothing-after",
            "@dev",
            "with nothing after it",
            Some("prompt.nothing_after_identity"),
        ),
        ("blank", "  \n\t ", "the prompt is empty", None),
    ];
    // Sent at once: each waits for the one before it, so one never
    // answered would hold up every one after it.
    for (id, text, ..) in &cases {
        acp.prompt(json!(id), &sid, text);
    }
    acp.prompt(json!("ok"), &sid, "hello");
    for (id, _, why, code) in &cases {
        let a = acp.answer_seen_or_next(json!(id));
        let message = a["error"]["message"]
            .as_str()
            .unwrap_or_else(|| panic!("{id}: not an error answer: {a}"));
        assert!(
            message.contains(why),
            "{id}: {a} (the deny list needs the sandbox: is Landlock available?)"
        );
        assert_eq!(a["error"]["code"], -32602, "{id}: {a}");
        assert_eq!(a["error"]["data"]["code"].as_str(), *code, "{id}: {a}");
    }
    let a = acp.answer_seen_or_next(json!("ok"));
    assert_eq!(a["result"]["stopReason"], "end_turn", "{a}");
    assert!(agent_text(&acp.seen).ends_with("fine"), "{:#?}", acp.seen);
    // Only the last prompt reached the model, without what was refused.
    let requests = model.requests();
    assert_eq!(requests.len(), 1, "{requests:#?}");
    let sent = requests[0]["messages"].to_string();
    assert!(
        !sent.contains("private words") && !sent.contains("providers"),
        "{sent}"
    );
    assert_eq!(acp.finish_reading(), 0);
    // Each prompt got exactly one answer, and ag-acp's syncs (see
    // lib/acp/refused.rs) never reached the editor.
    for (id, n) in acp.answers_per_id() {
        assert_eq!(n, 1, "{id} was answered {n} times: {:#?}", acp.seen);
    }
    let all = serde_json::to_string(&acp.seen).unwrap();
    assert!(!all.contains("ag-acp sync"), "{all}");
    // Nor do they when the session is loaded and replayed.
    let mut again = Raw::start(&env, &args);
    again.request(
        json!(0),
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    );
    again.answer(json!(0));
    again.request(
        json!("load"),
        "session/load",
        json!({"sessionId": sid, "cwd": env.join("proj"), "mcpServers": []}),
    );
    let a = again.answer(json!("load"));
    assert!(a.get("error").is_none(), "{a}");
    let replayed = agent_text(&again.seen);
    assert!(
        replayed.contains("no agent identity") && replayed.contains("fine"),
        "{replayed}"
    );
    assert!(!replayed.contains("ag-acp sync"), "{replayed}");
    assert_eq!(again.finish(), 0);
}

#[test]
fn a_cancel_frees_a_prompt_ag_loop_has_not_started() {
    let env = Env::new();
    env.write("slow.txt", "slow\n");
    // A gate that holds the check of slow.txt (attached by the prompt)
    // until the test lets it go, then refuses it: the prompt is pending in
    // ag-loop when the cancel comes, and is never run.
    env.write(
        "gate.sh",
        format!(
            "read -r req\ncase \"$req\" in\n  *slow.txt*) touch '{waiting}'; while [ ! -e '{go}' ]; do sleep 0.05; done; echo '{{\"decision\":\"deny\",\"reason\":\"slow.txt is private\"}}' ;;\n  *) echo '{{\"decision\":\"allow\"}}' ;;\nesac\n",
            waiting = env.join("gate-waiting").display(),
            go = env.join("go").display(),
        ),
    );
    let model = ModelServer::start(vec![Turn::Text("fine")]);
    let mut args = acp_args(&model, &[]);
    args.extend([
        "--gate".into(),
        format!("sh {}", env.join("gate.sh").display()),
    ]);
    let mut acp = Raw::start(&env, &args);
    let sid = acp.start_session(&env);
    acp.prompt(json!("p1"), &sid, "see @slow.txt");
    crate::util::wait_for("the gate to hold the prompt", || {
        env.join("gate-waiting").exists()
    });
    acp.send(
        &json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
            .to_string(),
    );
    env.write("go", "");
    let a = acp.answer(json!("p1"));
    assert_eq!(a["result"]["stopReason"], "cancelled", "{a}");
    acp.prompt(json!("p2"), &sid, "hello");
    let a = acp.answer(json!("p2"));
    assert_eq!(a["result"]["stopReason"], "end_turn", "{a}");
    assert!(agent_text(&acp.seen).ends_with("fine"), "{:#?}", acp.seen);
    assert_eq!(model.requests().len(), 1);
    assert_eq!(acp.finish_reading(), 0);
    for (id, n) in acp.answers_per_id() {
        assert_eq!(n, 1, "{id} was answered {n} times: {:#?}", acp.seen);
    }
}

#[test]
fn a_bad_envelope_with_a_usable_id_is_answered_with_that_id() {
    let env = Env::new();
    let model = ModelServer::start(vec![Turn::Text("fine")]);
    let mut acp = Raw::start(&env, &acp_args(&model, &[]));
    let sid = acp.start_session(&env);
    let deep = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
    let cases: Vec<(&str, Vec<u8>, i64, &str)> = vec![
        (
            "params",
            br#"{"jsonrpc":"2.0","id":"params","method":"session/list","params":""}"#.to_vec(),
            -32600,
            "`params`",
        ),
        (
            "version",
            br#"{"jsonrpc":"1.0","id":"version","method":"session/list","params":{}}"#.to_vec(),
            -32600,
            "`jsonrpc`",
        ),
        (
            "method",
            br#"{"jsonrpc":"2.0","id":"method","method":5,"params":{}}"#.to_vec(),
            -32600,
            "`method`",
        ),
        (
            "deep",
            format!(
                r#"{{"jsonrpc":"2.0","id":"deep","method":"session/prompt","params":{{"sessionId":"{sid}","prompt":{}}}}}"#,
                deep(200)
            )
            .into_bytes(),
            -32602,
            "levels deep",
        ),
        (
            "deep-then-id",
            format!(
                r#"{{"jsonrpc":"2.0","method":"session/list","params":{{"cwd":{}}},"id":"deep-then-id"}}"#,
                deep(100_000)
            )
            .into_bytes(),
            -32602,
            "`params`",
        ),
        (
            "utf8",
            [
                &br#"{"jsonrpc":"2.0","id":"utf8","method":"session/prompt","params":{"sessionId":""#[..],
                sid.as_bytes(),
                b"\",\"prompt\":[{\"type\":\"text\",\"text\":\"caf\xe9\"}]}}",
            ]
            .concat(),
            -32602,
            "not UTF-8",
        ),
    ];
    for (_, line, ..) in &cases {
        acp.send_bytes(line);
    }
    for (id, _, code, says) in &cases {
        let a = acp.answer_seen_or_next(json!(id));
        assert_eq!(a["error"]["code"], *code, "{id}: {a}");
        let message = a["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{id}: {a}");
    }
    // None of them ran, and the session goes on.
    acp.prompt(json!("ok"), &sid, "still there?");
    assert_eq!(acp.answer(json!("ok"))["result"]["stopReason"], "end_turn");
    assert_eq!(model.requests().len(), 1);
    assert_eq!(acp.finish_reading(), 0);
    let answers = acp.answers_per_id();
    assert!(!answers.contains_key("null"), "{:#?}", acp.seen);
    for (id, n) in answers {
        assert_eq!(n, 1, "{id} was answered {n} times");
    }
}

#[test]
fn a_request_line_over_64_mib_is_answered_with_its_id() {
    let env = Env::new();
    let model = ModelServer::start(vec![Turn::Text("fine")]);
    let mut acp = Raw::start(&env, &acp_args(&model, &[]));
    let sid = acp.start_session(&env);
    // A valid prompt, one byte past ag-acp's limit: its id is read from
    // its start, and the rest of the line is never held whole.
    let mut long = format!(
        r#"{{"jsonrpc":"2.0","id":"long","method":"session/prompt","params":{{"sessionId":"{sid}","prompt":[{{"type":"text","text":""#
    )
    .into_bytes();
    let head = long.len();
    long.resize((64 << 20) + 1 - 5, b'a');
    long.extend_from_slice(br#""}]}}"#);
    assert_eq!(long.len(), (64 << 20) + 1);
    assert!(head < 200);
    acp.send_bytes(&long);
    drop(long);
    let a = acp.answer(json!("long"));
    assert_eq!(a["error"]["code"], -32600, "{a}");
    assert!(
        a["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("longer than 64 MiB")),
        "{a}"
    );
    acp.prompt(json!("ok"), &sid, "still there?");
    assert_eq!(acp.answer(json!("ok"))["result"]["stopReason"], "end_turn");
    assert_eq!(model.requests().len(), 1);
    assert_eq!(acp.finish_reading(), 0);
    let answers = acp.answers_per_id();
    assert!(!answers.contains_key("null"), "{:#?}", acp.seen);
}

#[test]
fn a_cancel_frees_a_prompt_even_when_its_refusal_went_unseen() {
    let env = Env::new();
    env.write("blob.bin", b"a\0b");
    // ag-loop with its refusal of the prompt taken out of its output: all
    // ag-acp sees is a prompt that never starts. The editor's cancel must
    // still free it.
    env.write(
        "loop.sh",
        format!(
            "'{}' --json \"$@\" | grep --line-buffered -v '\"code\":\"attach.binary\"'\n",
            bin!("ag-loop")
        ),
    );
    let model = ModelServer::start(vec![Turn::Text("fine")]);
    let loop_cmd = format!("sh {}", env.join("loop.sh").display());
    let mut acp = Raw::start(&env, &acp_args(&model, &["--loop-cmd", &loop_cmd]));
    let sid = acp.start_session(&env);
    acp.prompt(json!("p1"), &sid, "see @blob.bin");
    // Once the session file holds the refusal, ag-loop is past the prompt.
    let file = crate::util::run_args(&env, bin!("ag-session"), &["path", &sid]).stdout();
    let file = PathBuf::from(file.trim());
    crate::util::wait_for("ag-loop to refuse the prompt", || {
        std::fs::read_to_string(&file).is_ok_and(|t| t.contains("attach.binary"))
    });
    acp.send(
        &json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
            .to_string(),
    );
    let a = acp.answer(json!("p1"));
    assert_eq!(a["result"]["stopReason"], "cancelled", "{a}");
    acp.prompt(json!("p2"), &sid, "hello");
    let a = acp.answer(json!("p2"));
    assert_eq!(a["result"]["stopReason"], "end_turn", "{a}");
    assert_eq!(acp.finish_reading(), 0);
    for (id, n) in acp.answers_per_id() {
        assert_eq!(n, 1, "{id} was answered {n} times: {:#?}", acp.seen);
    }
}

/// An editor's embedded file and a link's name are data, not the person's
/// words: an `@PATH` inside them attaches nothing (here a file outside the
/// workspace), while the person's own `@notes.md` does.
#[test]
fn an_at_word_inside_an_embedded_resource_or_a_links_name_attaches_nothing() {
    let env = Env::new();
    env.write("work/notes.md", "remember the milk\n");
    env.write("outside.txt", "SECRET OUTSIDE\n");
    let model = ModelServer::start(vec![Turn::Text("read it")]);
    let work = env.join("work");
    let mut acp = Raw::start(&env, &acp_args(&model, &["--mode", "auto"]));
    acp.request(json!(1), "initialize", json!({"protocolVersion": 1}));
    acp.answer(json!(1));
    acp.request(
        json!(2),
        "session/new",
        json!({"cwd": work, "mcpServers": []}),
    );
    let sid = acp.answer(json!(2))["result"]["sessionId"].clone();
    acp.request(
        json!(3),
        "session/prompt",
        json!({"sessionId": sid, "prompt": [
            {"type": "text", "text": "summarise @notes.md and"},
            {"type": "resource", "resource": {"uri": "file:///x/README.md", "text": "see @../outside.txt"}},
            {"type": "resource_link", "name": "@../outside.txt", "uri": "file:///x/y"},
        ]}),
    );
    let a = acp.answer(json!(3));
    assert_eq!(a["result"]["stopReason"], "end_turn", "{a}");
    let sent = model.requests()[0]["messages"].to_string();
    assert!(sent.contains("remember the milk"), "{sent}");
    assert!(sent.contains("see @../outside.txt"), "{sent}");
    assert!(!sent.contains("SECRET OUTSIDE"), "{sent}");
    assert_eq!(acp.finish(), 0);
}
