//! ag-loop end to end with a scripted model: `--llm-cmd` replaying prepared
//! event streams, and the real tool binaries on a temporary directory.

use crate::bin;
use crate::util::{Env, run};
use serde_json::{Value, json};

/// Writes a fake model for `--llm-cmd`: the Nth request is answered with
/// the events of `turns[N]`, and every request is saved for inspection.
pub(crate) fn scripted_model(env: &Env, turns: &[Vec<Value>]) -> String {
    // A new script starts from its first turn.
    let _ = std::fs::remove_file(env.join(".model/count"));
    for (i, events) in turns.iter().enumerate() {
        let text: String = events.iter().map(|e| e.to_string() + "\n").collect();
        env.write(&format!(".model/turn{i}.jsonl"), text);
    }
    env.write(
        ".model/model.sh",
        "d=\"$(dirname \"$0\")\"\nn=$(cat \"$d/count\" 2>/dev/null || echo 0)\necho $((n+1)) > \"$d/count\"\ncat > \"$d/request$n.json\"\ncat \"$d/turn$n.jsonl\"\n",
    );
    format!("sh {}", env.join(".model/model.sh").display())
}

/// The `n`th request [`scripted_model`] received, from 0.
pub(crate) fn request(env: &Env, n: usize) -> Value {
    serde_json::from_slice(&env.read(&format!(".model/request{n}.json"))).unwrap()
}

fn usage(input: u64) -> Value {
    json!({"input": input, "output": 5, "cache_read": 0, "cache_write": 0,
           "cost": {"input": 0.001, "output": 0.001, "cache_read": 0.0, "cache_write": 0.0, "total": 0.002}})
}

pub(crate) fn tool_turn(calls: &[(&str, &str, Value)]) -> Vec<Value> {
    let mut events = vec![json!({"type": "start", "model": "test/scripted"})];
    let mut content = Vec::new();
    for (i, (id, name, args)) in calls.iter().enumerate() {
        events.push(json!({"type": "tool_call_start", "index": i, "id": id, "name": name}));
        events.push(
            json!({"type": "tool_call_end", "index": i, "id": id, "name": name, "arguments": args}),
        );
        content.push(json!({"type": "tool_call", "id": id, "name": name, "arguments": args}));
    }
    events.push(json!({"type": "done", "message": {"content": content, "usage": usage(10), "stop_reason": "tool_use", "model": "test/scripted"}}));
    events
}

pub(crate) fn text_turn(text: &str) -> Vec<Value> {
    vec![
        json!({"type": "start", "model": "test/scripted"}),
        json!({"type": "text_delta", "index": 0, "delta": text}),
        json!({"type": "done", "message": {"content": [{"type": "text", "text": text}], "usage": usage(20), "stop_reason": "stop", "model": "test/scripted"}}),
    ]
}

fn types(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect()
}

fn session_files(env: &Env) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let root = env.join(".home/.ag/sessions");
    for d in std::fs::read_dir(root).unwrap().flatten() {
        for f in std::fs::read_dir(d.path()).unwrap().flatten() {
            if f.path().extension().is_some_and(|e| e == "jsonl") {
                out.push(f.path());
            }
        }
    }
    out
}

#[test]
fn read_then_answer_events_in_order_and_session_equals_stdout() {
    let env = Env::new();
    env.write("notes.txt", "the answer is 42\n");
    let model = scripted_model(
        &env,
        &[
            tool_turn(&[("c1", "read", json!({"file_path": "notes.txt"}))]),
            text_turn("It says 42."),
        ],
    );
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "--llm-cmd",
        &model,
        "--tools",
        "read",
        "--json",
        "what do the notes say?",
    ]);
    let r = run(c, None);
    r.ok();
    let events = r.json_lines();
    assert_eq!(
        types(&events),
        [
            "agent_start",
            "message_start",
            "message_end", // the prompt
            "turn_start",
            "message_start",
            "message_update",
            "message_update",
            "message_update",
            "message_end",
            "tool_execution_start",
            "tool_execution_end",
            "message_start",
            "message_end",
            "turn_end",
            "turn_start",
            "message_start",
            "message_update",
            "message_update",
            "message_end",
            "turn_end",
            "agent_end"
        ],
        "{r}"
    );
    assert!(
        events
            .iter()
            .all(|e| e["timestamp"].as_str().is_some_and(|t| t.ends_with('Z')))
    );
    let end = events.last().unwrap();
    assert_eq!(end["outcome"], "finished");
    assert_eq!(end["messages"].as_array().unwrap().len(), 4);
    assert_eq!(end["usage"]["input"], 30);
    let tool_end = &events[10];
    assert_eq!(tool_end["is_error"], false);
    assert!(
        tool_end["output"]
            .as_str()
            .unwrap()
            .contains("the answer is 42")
    );

    // The second request carried the whole conversation and the tools.
    let req: Value = serde_json::from_slice(&env.read(".model/request1.json")).unwrap();
    let roles: Vec<&str> = req["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool_result"]);
    assert_eq!(req["tools"][0]["name"], "read");
    assert!(req["system"].as_str().unwrap().contains("read"));

    // After its header, the session file holds exactly what was printed.
    let files = session_files(&env);
    assert_eq!(files.len(), 1);
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let (header, rest) = text.split_once('\n').unwrap();
    let header: Value = serde_json::from_str(header).unwrap();
    assert_eq!(header["type"], "session");
    assert_eq!(rest, r.stdout());
}

#[test]
fn bad_arguments_and_unknown_tools_are_results_the_model_can_fix() {
    let env = Env::new();
    let model = scripted_model(
        &env,
        &[
            tool_turn(&[
                ("c1", "read", json!({"file_path": 7})),
                ("c2", "teleport", json!({})),
            ]),
            text_turn("ok"),
        ],
    );
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["--llm-cmd", &model, "--tools", "read", "--no-session", "go"]);
    let r = run(c, None);
    r.ok();
    let events = r.json_lines();
    let ends: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_execution_end")
        .collect();
    assert_eq!(ends.len(), 2);
    assert_eq!(ends[0]["is_error"], true);
    assert!(
        ends[0]["output"].as_str().unwrap().contains("schema"),
        "{}",
        ends[0]
    );
    assert!(
        ends[1]["output"]
            .as_str()
            .unwrap()
            .contains("no tool named `teleport`")
    );
    // Results go back in the order the model asked for them.
    let turn_end = events.iter().find(|e| e["type"] == "turn_end").unwrap();
    assert_eq!(turn_end["tool_results"][0]["tool_call_id"], "c1");
    assert_eq!(turn_end["tool_results"][1]["tool_call_id"], "c2");
    assert!(session_files_opt(&env).is_empty());
}

fn session_files_opt(env: &Env) -> Vec<std::path::PathBuf> {
    if env.join(".home/.ag/sessions").exists() {
        session_files(env)
    } else {
        Vec::new()
    }
}

#[test]
fn model_error_ends_with_status_1_and_turn_limit_too() {
    let env = Env::new();
    let model = scripted_model(
        &env,
        &[vec![
            json!({"type": "error", "error": "401 invalid api key",
            "message": {"content": [], "usage": usage(0), "stop_reason": "error", "error_message": "401 invalid api key"}}),
        ]],
    );
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["--llm-cmd", &model, "--tools", "read", "--no-session", "hi"]);
    let r = run(c, None);
    r.expect_code(1);
    let end = r.json_lines().pop().unwrap();
    assert_eq!(end["outcome"], "model_error");
    assert!(r.stderr().contains("invalid api key"));

    let env = Env::new();
    env.write("a.txt", "x\n");
    let model = scripted_model(
        &env,
        &[tool_turn(&[("c1", "read", json!({"file_path": "a.txt"}))])],
    );
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "--llm-cmd",
        &model,
        "--tools",
        "read",
        "--no-session",
        "--max-turns",
        "1",
        "hi",
    ]);
    let r = run(c, None);
    r.expect_code(1);
    assert_eq!(r.json_lines().pop().unwrap()["outcome"], "turn_limit");
}

#[test]
fn prompts_from_stdin_run_in_turn_and_resume_continues_the_conversation() {
    let env = Env::new();
    let model = scripted_model(
        &env,
        &[text_turn("one"), text_turn("two"), text_turn("three")],
    );
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["--llm-cmd", &model, "--tools", "read"]);
    let r = run(
        c,
        Some(b"first prompt\n{\"type\":\"prompt\",\"content\":\"second\"}\n"),
    );
    r.ok();
    let ends: Vec<Value> = r
        .json_lines()
        .into_iter()
        .filter(|e| e["type"] == "agent_end")
        .collect();
    assert_eq!(ends.len(), 2);
    let req: Value = serde_json::from_slice(&env.read(".model/request1.json")).unwrap();
    assert_eq!(req["messages"].as_array().unwrap().len(), 3);

    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "--llm-cmd",
        &model,
        "--tools",
        "read",
        "--continue",
        "third",
    ]);
    run(c, None).ok();
    let req: Value = serde_json::from_slice(&env.read(".model/request2.json")).unwrap();
    let msgs = req["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 5, "{req}");
    assert_eq!(msgs[0]["content"], "first prompt");
    assert_eq!(session_files(&env).len(), 1);
}

#[test]
fn tool_name_clash_is_an_error_at_start() {
    let env = Env::new();
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "--llm-cmd",
        "true",
        "--tools",
        "read",
        "--tool",
        bin!("ag-read"),
        "--no-session",
        "hi",
    ]);
    let r = run(c, None);
    r.expect_code(2);
    assert!(r.stderr().contains("two tools are named `read`"), "{r}");
}

/// A tool (any executable speaking the protocol) that starts a process tree
/// and hangs, so that interrupts have something to stop.
fn slow_tool(env: &Env, marker: u32) -> String {
    env.write(
        ".tools/slow.sh",
        format!(
            "if [ \"$1\" = --schema ]; then\n\
             echo '{{\"name\":\"slow\",\"label\":\"Slow\",\"description\":\"hangs\",\"parameters\":{{\"type\":\"object\",\"properties\":{{}}}}}}'\n\
             exit 0\nfi\nread line\nsleep {marker} &\nsleep {marker}\necho '{{\"output\":\"done\",\"details\":{{}},\"is_error\":false}}'\n"
        ),
    );
    format!("sh {}", env.join(".tools/slow.sh").display())
}

fn alive(marker: u32) -> bool {
    let out = std::process::Command::new("pgrep")
        .args(["-f", &format!("sleep {marker}")])
        .output()
        .unwrap();
    !out.stdout.is_empty()
}

#[test]
fn interrupt_stops_tools_keeps_the_conversation_valid_and_goes_on() {
    use std::io::{BufRead, BufReader, Write};
    let env = Env::new();
    let marker = 6000 + std::process::id() % 1000;
    let tool = slow_tool(&env, marker);
    let model = scripted_model(
        &env,
        &[
            tool_turn(&[("c1", "slow", json!({})), ("c2", "slow", json!({}))]),
            text_turn("after"),
        ],
    );
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["--llm-cmd", &model, "--tools", "", "--tool", &tool]);
    c.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"start the slow things\n").unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut events = Vec::new();
    let mut started = 0;
    for line in lines.by_ref() {
        let e: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if e["type"] == "tool_execution_start" {
            started += 1;
        }
        events.push(e);
        if started == 2 {
            break;
        }
    }
    // Both calls run in parallel: wait until their processes exist.
    for _ in 0..200 {
        if alive(marker) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(alive(marker));
    stdin
        .write_all(b"{\"type\":\"interrupt\"}\nnext prompt\n")
        .unwrap();
    drop(stdin);
    for line in lines {
        events.push(serde_json::from_str(&line.unwrap()).unwrap());
    }
    let status = child.wait().unwrap();
    let ends: Vec<&Value> = events.iter().filter(|e| e["type"] == "agent_end").collect();
    assert_eq!(ends.len(), 2, "{events:?}");
    assert_eq!(ends[0]["outcome"], "interrupted");
    assert_eq!(ends[1]["outcome"], "finished");
    assert!(events.iter().any(|e| e["type"] == "interrupted"));
    assert!(!alive(marker), "a process of the interrupted tool survived");
    // The second request shows a valid conversation: both calls answered.
    let req: Value = serde_json::from_slice(&env.read(".model/request1.json")).unwrap();
    let msgs = req["messages"].as_array().unwrap();
    let results: Vec<&Value> = msgs.iter().filter(|m| m["role"] == "tool_result").collect();
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r["is_error"] == true));
    assert!(
        results[0]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("interrupted")
    );
    // An interrupted prompt makes the exit status non-zero.
    assert_eq!(status.code(), Some(130));
}

#[test]
fn a_session_killed_between_call_and_result_resumes_validly() {
    let env = Env::new();
    let marker = 7000 + std::process::id() % 1000;
    let tool = slow_tool(&env, marker);
    let model = scripted_model(
        &env,
        &[
            tool_turn(&[("c1", "slow", json!({}))]),
            text_turn("resumed"),
        ],
    );
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["--llm-cmd", &model, "--tools", "", "--tool", &tool, "go"]);
    c.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = c.spawn().unwrap();
    for _ in 0..500 {
        if alive(marker) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // The orphaned tool group is the test's to clean up after SIGKILL.
    let _ = std::process::Command::new("pkill")
        .args(["-f", &format!("sleep {marker}")])
        .status();
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "--llm-cmd",
        &model,
        "--tools",
        "",
        "--tool",
        &tool,
        "--continue",
        "carry on",
    ]);
    run(c, None).ok();
    let req: Value = serde_json::from_slice(&env.read(".model/request1.json")).unwrap();
    let roles: Vec<&str> = req["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool_result", "user"], "{req}");
}

#[test]
fn steering_is_delivered_after_the_tool_batch_before_the_next_call() {
    use std::io::{BufRead, BufReader, Write};
    let env = Env::new();
    // A tool that waits until the test releases it by creating a file.
    env.write(
        ".tools/gate.sh",
        format!(
            "if [ \"$1\" = --schema ]; then\n\
             echo '{{\"name\":\"wait\",\"label\":\"Wait\",\"description\":\"waits\",\"parameters\":{{\"type\":\"object\",\"properties\":{{}}}}}}'\n\
             exit 0\nfi\nread line\nwhile [ ! -e {} ]; do sleep 0.02; done\necho '{{\"output\":\"released\",\"details\":{{}},\"is_error\":false}}'\n",
            env.join("release").display()
        ),
    );
    let tool = format!("sh {}", env.join(".tools/gate.sh").display());
    let model = scripted_model(
        &env,
        &[
            tool_turn(&[("c1", "wait", json!({}))]),
            text_turn("steered"),
        ],
    );
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "--llm-cmd",
        &model,
        "--tools",
        "",
        "--tool",
        &tool,
        "--no-session",
    ]);
    c.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"begin\n").unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines.by_ref() {
        let e: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if e["type"] == "tool_execution_start" {
            break;
        }
    }
    stdin
        .write_all(b"{\"type\":\"steer\",\"content\":\"use tabs\"}\n")
        .unwrap();
    stdin.flush().unwrap();
    // Give the reader a moment to take the line before the tool is released;
    // either way the steer must not be lost.
    std::thread::sleep(std::time::Duration::from_millis(200));
    env.write("release", "");
    drop(stdin);
    let rest: Vec<Value> = lines
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    assert!(child.wait().unwrap().success());
    let req: Value = serde_json::from_slice(&env.read(".model/request1.json")).unwrap();
    let msgs = req["messages"].as_array().unwrap();
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "tool_result", "user"], "{req}");
    assert_eq!(msgs[3]["content"], "use tabs");
    assert_eq!(rest.iter().filter(|e| e["type"] == "agent_end").count(), 1);
}

#[test]
fn another_cli_agent_is_a_tool_in_the_directory_it_is_given() {
    let env = Env::new();
    // A `claude` on PATH that reports as `claude -p --output-format json`
    // does: what it was asked (its last argument), from the directory it
    // ran in. The real one is tested in tests/it/cli_agents.rs.
    env.write(
        ".bin/claude",
        "#!/bin/sh
for a; do last=$a; done
printf '{\"type\":\"result\",\"is_error\":false,\"result\":\"done in %s: %s\",\"total_cost_usd\":0.25,\"duration_ms\":7}\\n' \"$(basename \"$PWD\")\" \"$last\"\n",
    );
    std::fs::set_permissions(
        env.join(".bin/claude"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::fs::create_dir_all(env.join("sub")).unwrap();
    let model = scripted_model(
        &env,
        &[
            tool_turn(&[(
                "c1",
                "claude_code_cli",
                json!({"prompt": "rename foo", "workingDirectory": "sub"}),
            )]),
            text_turn("ok"),
        ],
    );
    let mut c = env.cmd(bin!("ag-loop"));
    let path = format!(
        "{}:{}",
        env.join(".bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    c.env("PATH", path);
    c.args([
        "--llm-cmd",
        &model,
        "--tools",
        "claude_code_cli",
        "--no-session",
        "delegate",
    ]);
    let r = run(c, None);
    r.ok();
    let end = r
        .json_lines()
        .into_iter()
        .find(|e| e["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(end["is_error"], false, "{r}");
    assert_eq!(end["output"], "done in sub: rename foo", "{end}");
    assert_eq!(end["details"]["cost_usd"], 0.25, "{end}");
    assert_eq!(end["details"]["duration_ms"], 7, "{end}");
}

#[test]
fn a_tool_command_line_is_read_as_the_shell_reads_it_in_the_agents_directory() {
    let env = Env::new();
    // Prints its arguments before the call's and the directory it runs in.
    env.write(
        "proj/tools/args.sh",
        "for a in \"$@\"; do if [ \"$a\" = --schema ]; then\n\
         echo '{\"name\":\"args\",\"label\":\"Args\",\"description\":\"shows its arguments\",\"parameters\":{\"type\":\"object\",\"properties\":{}}}'\n\
         exit 0; fi; done\nread line\n\
         printf '{\"output\":\"%s|%s|%s|%s\",\"details\":{},\"is_error\":false}\\n' \"$#\" \"$1\" \"$2\" \"$(basename \"$PWD\")\"\n",
    );
    let model = scripted_model(
        &env,
        &[tool_turn(&[("c1", "args", json!({}))]), text_turn("ok")],
    );
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "--llm-cmd",
        &model,
        "--tools",
        "",
        "--cwd",
        "proj",
        // Relative to --cwd, like every path the agent's tools see.
        "--tool",
        r#"sh tools/args.sh --label "a b""#,
        "--no-session",
        "go",
    ]);
    let r = run(c, None);
    r.ok();
    let end = r
        .json_lines()
        .into_iter()
        .find(|e| e["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(end["is_error"], false, "{r}");
    assert_eq!(end["output"], "2|--label|a b|proj", "{r}");
}

#[test]
fn identity_files_choose_tools_model_and_prompt() {
    let env = Env::new();
    std::fs::create_dir_all(env.join(".git")).unwrap();
    env.write(
        ".ag/agents/reviewer.md",
        "---\nname: reviewer\nrole: reads code and reports\nmodel: test/reviewer-model\ntools: readonly\n---\nYou are a careful reviewer.\n",
    );
    let model = scripted_model(&env, &[text_turn("looks fine")]);
    let list = crate::util::run_args(&env, bin!("ag-loop"), &["--list-agents"]);
    list.ok();
    assert!(
        list.stdout()
            .starts_with("reviewer\treads code and reports\t"),
        "{list}"
    );
    let mut c = env.cmd(bin!("ag-loop"));
    // Only ag-read is built here; the readonly set's other tools may be missing.
    c.args([
        "--llm-cmd",
        &model,
        "--agent",
        "reviewer",
        "--tools",
        "read",
        "--no-session",
        "review",
    ]);
    run(c, None).ok();
    let req: Value = serde_json::from_slice(&env.read(".model/request0.json")).unwrap();
    assert_eq!(req["model"], "test/reviewer-model");
    assert!(
        req["system"]
            .as_str()
            .unwrap()
            .starts_with("You are a careful reviewer.")
    );
    let bad = crate::util::run_args(&env, bin!("ag-loop"), &["--agent", "nobody", "hi"]);
    bad.expect_code(2);
    assert!(bad.stderr().contains("--list-agents"));
}

#[test]
fn the_same_failing_call_is_pointed_out_then_stopped() {
    let env = Env::new();
    let turn = tool_turn(&[("c", "read", json!({"file_path": "missing.txt"}))]);
    let model = scripted_model(&env, &vec![turn; 6]);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "--llm-cmd",
        &model,
        "--tools",
        "read",
        "--no-session",
        "loop",
    ]);
    let r = run(c, None);
    r.expect_code(1);
    let events = r.json_lines();
    let results: Vec<&Value> = events.iter().filter(|e| e["type"] == "turn_end").collect();
    assert_eq!(results.len(), 5);
    let third = results[2]["tool_results"][0]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        third.contains("failed 3 times with the same error"),
        "{third}"
    );
    assert_eq!(events.last().unwrap()["outcome"], "repeated_failure");
}

#[test]
fn a_long_conversation_is_compacted_and_goes_on_with_its_task() {
    let env = Env::new();
    let big: String = (0..300)
        .map(|i| format!("line {i} of a file that fills the context\n"))
        .collect();
    env.write("big.txt", big);
    let model = scripted_model(
        &env,
        &[
            tool_turn(&[("c1", "read", json!({"file_path": "big.txt"}))]),
            tool_turn(&[("c2", "read", json!({"file_path": "big.txt", "offset": 2}))]),
            text_turn("SUMMARY: big.txt was read twice; nothing changed yet."),
            text_turn("finished"),
        ],
    );
    let mut c = env.cmd(bin!("ag-loop"));
    c.env("AG_CONTEXT_WINDOW", "3000");
    // The prompt as the person wrote it, without the file it names.
    c.args([
        "--llm-cmd",
        &model,
        "--tools",
        "read",
        "--show-context",
        "never",
        "count the lines of big.txt",
    ]);
    let r = run(c, None);
    r.ok();
    let events = r.json_lines();
    let compaction = events
        .iter()
        .find(|e| e["type"] == "compaction")
        .expect("no compaction event");
    assert_eq!(compaction["method"], "summary");
    assert!(compaction["replaced"].as_u64().unwrap() >= 2);
    // The summarising request saw the transcript, not the tools.
    let summary_req: Value = serde_json::from_slice(&env.read(".model/request2.json")).unwrap();
    assert!(summary_req["tools"].is_null());
    assert!(
        summary_req["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("count the lines")
    );
    // The next request starts with the summary and the facts kept mechanically.
    let req: Value = serde_json::from_slice(&env.read(".model/request3.json")).unwrap();
    let first = req["messages"][0]["content"].as_str().unwrap();
    assert!(first.contains("SUMMARY: big.txt was read twice"), "{first}");
    assert!(
        first.contains("The original task:\n    count the lines of big.txt"),
        "{first}"
    );
    assert!(first.contains("Files read: big.txt"), "{first}");
    assert_eq!(events.last().unwrap()["outcome"], "finished");
    // Resuming the session gives the compacted conversation, not the full one.
    let files = session_files(&env);
    let msgs = crate::util::run_args(
        &env,
        bin!("ag-session"),
        &["messages", files[0].to_str().unwrap()],
    );
    msgs.ok();
    let msgs = msgs.json();
    assert!(
        msgs[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("[The earlier part")
    );

    // --compact never drops the older turns without a model call.
    let env = Env::new();
    env.write(
        "big.txt",
        (0..300)
            .map(|i| format!("line {i} of a file that fills the context\n"))
            .collect::<String>(),
    );
    let model = scripted_model(
        &env,
        &[
            tool_turn(&[("c1", "read", json!({"file_path": "big.txt"}))]),
            tool_turn(&[("c2", "read", json!({"file_path": "big.txt", "offset": 2}))]),
            text_turn("finished"),
        ],
    );
    let mut c = env.cmd(bin!("ag-loop"));
    c.env("AG_CONTEXT_WINDOW", "3000");
    c.args([
        "--llm-cmd",
        &model,
        "--tools",
        "read",
        "--compact",
        "never",
        "--no-session",
        "count",
    ]);
    let r = run(c, None);
    r.ok();
    let compaction = r
        .json_lines()
        .into_iter()
        .find(|e| e["type"] == "compaction")
        .unwrap();
    assert_eq!(compaction["method"], "prune");
    let req: Value = serde_json::from_slice(&env.read(".model/request2.json")).unwrap();
    assert!(
        req["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("earlier messages were dropped")
    );
}

#[test]
fn a_context_overflow_error_compacts_once_and_retries() {
    let env = Env::new();
    env.write("a.txt", "x\n");
    let overflow = vec![
        json!({"type": "error", "error": "prompt is too long: 250000 tokens > 200000 maximum",
        "message": {"content": [], "usage": usage(0), "stop_reason": "error", "error_message": "prompt is too long: 250000 tokens > 200000 maximum"}}),
    ];
    let model = scripted_model(
        &env,
        &[
            tool_turn(&[("c1", "read", json!({"file_path": "a.txt"}))]),
            tool_turn(&[("c2", "read", json!({"file_path": "a.txt"}))]),
            overflow,
            text_turn("short summary"),
            text_turn("done after retry"),
        ],
    );
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["--llm-cmd", &model, "--tools", "read", "--no-session", "go"]);
    let r = run(c, None);
    r.ok();
    let events = r.json_lines();
    assert!(events.iter().any(|e| e["type"] == "compaction"), "{r}");
    assert_eq!(events.last().unwrap()["outcome"], "finished");
}

#[test]
fn notify_becomes_an_event_without_ending_the_turn() {
    let env = Env::new();
    let model = scripted_model(
        &env,
        &[
            tool_turn(&[(
                "n1",
                "notify",
                json!({"message": "tests take a while", "level": "warning"}),
            )]),
            text_turn("done"),
        ],
    );
    let mut c = env.cmd(bin!("ag-loop"));
    c.env("AG_NO_DESKTOP_NOTIFY", "1");
    c.args([
        "--llm-cmd",
        &model,
        "--tools",
        "notify",
        "--no-session",
        "go",
    ]);
    let r = run(c, None);
    r.ok();
    let events = r.json_lines();
    let n = events
        .iter()
        .find(|e| e["type"] == "notify")
        .expect("no notify event");
    assert_eq!(n["message"], "tests take a while");
    assert_eq!(n["level"], "warning");
    assert_eq!(events.last().unwrap()["outcome"], "finished");
}

fn gate_script(env: &Env, name: &str, body: &str) -> String {
    env.write(&format!(".gates/{name}.sh"), body);
    format!("sh {}", env.join(&format!(".gates/{name}.sh")).display())
}

#[test]
fn gates_deny_rewrite_and_fail_closed() {
    let env = Env::new();
    env.write("a.txt", "alpha\n");
    env.write("b.txt", "beta\n");
    let deny = gate_script(
        &env,
        "deny",
        "cat >/dev/null\necho '{\"decision\":\"deny\",\"reason\":\"reading is off today\"}'\n",
    );
    let rewrite = gate_script(
        &env,
        "rewrite",
        "cat >/dev/null\necho '{\"decision\":\"allow\",\"arguments\":{\"file_path\":\"b.txt\"}}'\n",
    );
    let hang = gate_script(&env, "hang", "sleep 30\n");
    let crash = gate_script(&env, "crash", "echo boom >&2; exit 3\n");
    let call = || tool_turn(&[("c1", "read", json!({"file_path": "a.txt"}))]);
    for (gate, expect_run, expect) in [
        (&deny, false, "reading is off today"),
        (&rewrite, true, "beta"),
        (&hang, false, "could not check"),
        (&crash, false, "could not check"),
    ] {
        let _ = std::fs::remove_dir_all(env.join(".model"));
        let model = scripted_model(&env, &[call(), text_turn("ok")]);
        let mut c = env.cmd(bin!("ag-loop"));
        c.args([
            "--llm-cmd",
            &model,
            "--tools",
            "read",
            "--no-session",
            "--gate",
            gate,
            "--gate-timeout",
            "0.5",
            "go",
        ]);
        let r = run(c, None);
        r.ok();
        let events = r.json_lines();
        let end = events
            .iter()
            .find(|e| e["type"] == "tool_execution_end")
            .unwrap();
        assert_eq!(end["is_error"] == false, expect_run, "{gate}: {end}");
        assert!(
            end["output"].as_str().unwrap().contains(expect),
            "{gate}: {end}"
        );
        if gate == &hang || gate == &crash {
            assert!(
                events.iter().any(|e| e["type"] == "error"),
                "{gate}: no error event"
            );
        }
    }
}

/// Without --gate, ag-gate's policy applies in-process, with the rules of
/// `$AG_HOME/gate.toml`; a broken file stops ag-loop before it starts.
#[test]
fn the_default_gate_is_ag_gates_policy_with_its_config_file() {
    let env = Env::new();
    env.write("a.txt", "alpha\n");
    let run_read = |env: &Env| {
        let _ = std::fs::remove_dir_all(env.join(".model"));
        let call = tool_turn(&[("c1", "read", json!({"file_path": "a.txt"}))]);
        let model = scripted_model(env, &[call, text_turn("ok")]);
        let mut c = env.cmd(bin!("ag-loop"));
        c.args(["--llm-cmd", &model, "--tools", "read", "--no-session", "go"]);
        run(c, None)
    };
    let r = run_read(&env);
    r.ok();
    let events = r.json_lines();
    let end = events
        .iter()
        .find(|e| e["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(end["is_error"], false, "{end}");

    env.write(".home/.ag/gate.toml", "deny = [\"read\"]\n");
    let r = run_read(&env);
    r.ok();
    let events = r.json_lines();
    let end = events
        .iter()
        .find(|e| e["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(end["is_error"], true, "{end}");
    assert!(
        end["output"]
            .as_str()
            .unwrap()
            .contains("denied by ag-gate"),
        "{end}"
    );

    env.write(".home/.ag/gate.toml", "approval = \"sometimes\"\n");
    let r = run_read(&env);
    let err = r.stderr();
    assert_eq!(r.code(), Some(2), "{err}");
    assert!(err.contains("gate.toml"), "{err}");
    assert!(err.contains("--no-gate"), "{err}");
}

#[test]
fn a_dangerous_command_waits_for_approval_by_jsonl() {
    use std::io::{BufRead, BufReader, Write};
    for approved in [false, true] {
        let env = Env::new();
        env.write("build/out.o", "x");
        let model = scripted_model(
            &env,
            &[
                tool_turn(&[("c1", "bash", json!({"command": "rm -rf build"}))]),
                text_turn("ok"),
            ],
        );
        let mut c = env.cmd(bin!("ag-loop"));
        let gate = format!("{} --approval dangerous", bin!("ag-gate"));
        c.args([
            "--llm-cmd",
            &model,
            "--tools",
            "bash",
            "--no-session",
            "--gate",
            &gate,
            // The sandbox would stop what the gate asks about here.
            "--sandbox",
            "off",
        ]);
        c.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut child = c.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"clean up\n").unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut request = None;
        for line in lines.by_ref() {
            let e: Value = serde_json::from_str(&line.unwrap()).unwrap();
            if e["type"] == "approval_request" {
                request = Some(e);
                break;
            }
        }
        let request = request.expect("no approval_request");
        assert_eq!(request["tool_call_id"], "c1");
        assert!(
            request["reason"].as_str().unwrap().contains("delete"),
            "{request}"
        );
        // Held: nothing was removed while waiting.
        assert!(env.join("build/out.o").exists());
        let answer = json!({"type": "approval", "tool_call_id": "c1", "approved": approved})
            .to_string()
            + "\n";
        stdin.write_all(answer.as_bytes()).unwrap();
        drop(stdin);
        let rest: Vec<Value> = lines
            .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
            .collect();
        assert!(child.wait().unwrap().success());
        let end = rest
            .iter()
            .find(|e| e["type"] == "tool_execution_end")
            .unwrap();
        assert_eq!(env.join("build").exists(), !approved, "{end}");
        if !approved {
            assert!(
                end["output"].as_str().unwrap().contains("did not approve"),
                "{end}"
            );
        }
    }
}

#[test]
fn after_hooks_annotate_results() {
    let env = Env::new();
    env.write("a.txt", "alpha\n");
    let after = gate_script(
        &env,
        "after",
        "cat >/dev/null\necho '{\"append\":\"NOTE: a.txt is generated\"}'\n",
    );
    let model = scripted_model(
        &env,
        &[
            tool_turn(&[("c1", "read", json!({"file_path": "a.txt"}))]),
            text_turn("ok"),
        ],
    );
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "--llm-cmd",
        &model,
        "--tools",
        "read",
        "--no-session",
        "--no-gate",
        "--after",
        &after,
        "go",
    ]);
    run(c, None).ok();
    let req: Value = serde_json::from_slice(&env.read(".model/request1.json")).unwrap();
    let text = req["messages"][2]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("alpha") && text.ends_with("NOTE: a.txt is generated"),
        "{text}"
    );
}

#[test]
fn mcp_servers_tools_are_offered_and_called() {
    let env = Env::new();
    env.write("a.txt", "from mcp\n");
    let mcp = format!("{} --tools read", bin!("ag-mcp"));
    let model = scripted_model(
        &env,
        &[
            tool_turn(&[
                ("c1", "read", json!({"file_path": "a.txt"})),
                ("c2", "ag-mcp__read", json!({"file_path": "a.txt"})),
            ]),
            text_turn("ok"),
        ],
    );
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "--llm-cmd",
        &model,
        "--tools",
        "read",
        "--mcp",
        &mcp,
        "--no-session",
        "--no-gate",
        "go",
    ]);
    let r = run(c, None);
    r.ok();
    let req: Value = serde_json::from_slice(&env.read(".model/request0.json")).unwrap();
    let names: Vec<&str> = req["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["read", "ag-mcp__read"], "{r}");
    let ends: Vec<Value> = r
        .json_lines()
        .into_iter()
        .filter(|e| e["type"] == "tool_execution_end")
        .collect();
    assert_eq!(ends.len(), 2);
    for e in &ends {
        assert_eq!(e["is_error"], false, "{e}");
        assert!(e["output"].as_str().unwrap().contains("from mcp"), "{e}");
    }
    let bad = crate::util::run_args(
        &env,
        bin!("ag-loop"),
        &["--llm-cmd", &model, "--mcp", "/nonexistent/server", "hi"],
    );
    bad.expect_code(2);
    assert!(bad.stderr().contains("MCP server"), "{bad}");
}

#[test]
fn the_config_file_sets_defaults_and_flags_win() {
    let env = Env::new();
    env.write("a.txt", "x\n");
    let model = scripted_model(&env, &[text_turn("one"), text_turn("two")]);
    env.write(
        ".home/.ag/config.toml",
        format!(
            "model = \"test/from-config\"\ntools = [\"read\"]\nmcp = [\"{} --tools ls\"]\ntemperature = 0.3\n",
            bin!("ag-mcp")
        ),
    );
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["--llm-cmd", &model, "--no-session", "--no-gate", "go"]);
    run(c, None).ok();
    let req: Value = serde_json::from_slice(&env.read(".model/request0.json")).unwrap();
    assert_eq!(req["model"], "test/from-config");
    let names: Vec<&str> = req["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["read", "ls"]);
    assert_eq!(req["temperature"], 0.3);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "--llm-cmd",
        &model,
        "--no-session",
        "--no-gate",
        "-m",
        "test/flag",
        "--temperature",
        "0",
        "go",
    ]);
    run(c, None).ok();
    let req: Value = serde_json::from_slice(&env.read(".model/request1.json")).unwrap();
    assert_eq!(req["model"], "test/flag");
    assert_eq!(req["temperature"], 0.0);
    let bad = crate::util::run_args(&env, bin!("ag-loop"), &["--temperature", "-1", "hi"]);
    bad.expect_code(2);
    assert!(bad.stderr().contains("--temperature 0"), "{bad}");
    env.write(".home/.ag/config.toml", "modle = \"typo\"\n");
    let bad = crate::util::run_args(&env, bin!("ag-loop"), &["--llm-cmd", &model, "hi"]);
    bad.expect_code(2);
    assert!(bad.stderr().contains("config.toml"), "{bad}");
}

/// An identity's `temperature` goes with its prompts (`--agent`, or an
/// `@NAME` prompt) and no others; a flag still wins.
#[test]
fn an_identitys_temperature_goes_with_its_prompts_only() {
    let env = Env::new();
    std::fs::create_dir_all(env.join(".git")).unwrap();
    env.write(
        ".ag/agents/cool.md",
        "---\ntemperature: 0.1\n---\nBe brief.\n",
    );
    let model = scripted_model(
        &env,
        &[text_turn("one"), text_turn("two"), text_turn("three")],
    );
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["--llm-cmd", &model, "--no-session", "--no-gate"]);
    run(c, Some(b"@cool go\ngo again\n")).ok();
    let req = |n: usize| request(&env, n);
    assert_eq!(req(0)["temperature"], 0.1, "{}", req(0));
    assert!(
        req(1).get("temperature").is_none_or(Value::is_null),
        "{}",
        req(1)
    );
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["--llm-cmd", &model, "--no-session", "--no-gate"])
        .args(["--agent", "cool", "--temperature", "0.9", "go"]);
    run(c, None).ok();
    assert_eq!(req(2)["temperature"], 0.9, "{}", req(2));
}

#[test]
fn tool_execution_start_shows_the_arguments_the_call_runs_with() {
    let env = Env::new();
    env.write("a.txt", "one\n");
    // What a small model sends: empty defaults, a number as a string, and a
    // guessed hash that ag-loop's own guard replaces.
    let model = scripted_model(
        &env,
        &[
            tool_turn(&[(
                "c1",
                "read",
                json!({"file_path": "a.txt", "offset": "", "limit": "5", "explanation": "look"}),
            )]),
            text_turn("ok"),
        ],
    );
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["--llm-cmd", &model, "--tools", "read", "--no-session", "go"]);
    let r = run(c, None);
    r.ok();
    let events = r.json_lines();
    let start = events
        .iter()
        .find(|e| e["type"] == "tool_execution_start")
        .unwrap();
    assert_eq!(
        start["arguments"],
        json!({"file_path": "a.txt", "limit": 5}),
        "{start}"
    );
    // The model's own text stays in its message.
    let asked = events
        .iter()
        .find(|e| e["type"] == "message_end" && e["message"]["role"] == "assistant")
        .unwrap();
    assert_eq!(
        asked["message"]["content"][0]["arguments"]["limit"], "5",
        "{asked}"
    );
}

#[test]
fn a_cli_agent_past_its_time_limit_is_stopped_with_all_it_started() {
    let env = Env::new();
    // A `claude` that starts a child and never answers; both write their pid.
    env.write(
        ".bin/claude",
        "#!/bin/sh\nsleep 300 &\necho $! > \"$PIDS/child\"\necho $$ > \"$PIDS/agent\"\nwait\n",
    );
    std::fs::set_permissions(
        env.join(".bin/claude"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::fs::create_dir_all(env.join("pids")).unwrap();
    let mut c = env.cmd(bin!("ag-claude-code-cli"));
    let path = format!(
        "{}:{}",
        env.join(".bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    c.env("PATH", path)
        .env("PIDS", env.join("pids"))
        .env("AG_CLI_AGENT_TIMEOUT", "1");
    let r = run(
        c,
        Some(b"{\"id\":\"1\",\"arguments\":{\"prompt\":\"fix it\"}}\n"),
    );
    let out = r.json();
    assert_eq!(out["error_code"], "cli_agent.timeout", "{out}");
    assert!(
        out["output"]
            .as_str()
            .unwrap()
            .contains("did not finish within 1 s"),
        "{out}"
    );
    for who in ["agent", "child"] {
        let pid: u32 = String::from_utf8(env.read(&format!("pids/{who}")))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(
            !ag::proc::process_alive(pid),
            "the {who} ({pid}) outlived the call"
        );
    }
    // A time limit that is not a number is refused, saying what to write.
    let mut c = env.cmd(bin!("ag-claude-code-cli"));
    c.env("AG_CLI_AGENT_TIMEOUT", "soon");
    let r = run(
        c,
        Some(b"{\"id\":\"1\",\"arguments\":{\"prompt\":\"fix it\"}}\n"),
    );
    assert!(
        r.json()["output"]
            .as_str()
            .unwrap()
            .contains("AG_CLI_AGENT_TIMEOUT=1800"),
        "{}",
        r.stdout()
    );
}

#[test]
fn its_own_tools_beside_it_are_not_started_to_learn_them() {
    // ag-loop knows the definitions of the tool binaries installed beside
    // it (the same build): none is run for `--schema`, so a start-up on a
    // busy machine cannot time out on them. A call still runs the binary.
    let env = Env::new();
    let dir = env.join("bin");
    std::fs::create_dir(&dir).unwrap();
    std::fs::copy(bin!("ag-loop"), dir.join("ag-loop")).unwrap();
    let log = env.join("started.log");
    let wrapper = env.write(
        "bin/ag-read",
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            bin!("ag-read")
        ),
    );
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    env.write("a.txt", "alpha\n");
    let model = scripted_model(
        &env,
        &[
            tool_turn(&[("c1", "read", json!({"path": "a.txt"}))]),
            text_turn("It says alpha."),
        ],
    );
    let mut c = env.cmd(&dir.join("ag-loop").display().to_string());
    c.args([
        "--llm-cmd",
        &model,
        "--tools",
        "read",
        "--no-session",
        "what is in a.txt?",
    ]);
    let r = run(c, None);
    r.expect_code(0);
    let ends: Vec<Value> = r
        .json_lines()
        .into_iter()
        .filter(|e| e["type"] == "tool_execution_end")
        .collect();
    assert_eq!(ends.len(), 1, "{r}");
    assert!(ends[0]["output"].to_string().contains("alpha"), "{r}");
    let started = std::fs::read_to_string(&log).unwrap();
    assert!(!started.contains("--schema"), "{started}");
    assert_eq!(started.lines().count(), 1, "{started}");
}

#[test]
fn its_own_table_of_tools_is_what_each_tool_binary_prints_for_schema() {
    // The table ag-loop and ag-mcp take the definitions of the tools beside
    // them from must say what each binary would: every ag binary that
    // answers `--schema` is in it, with the same definition.
    let env = Env::new();
    let dir = std::path::Path::new(bin!("ag-read")).parent().unwrap();
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let Some(tool) = file.strip_prefix("ag-") else {
            continue;
        };
        if tool.contains('.') || !path.is_file() {
            continue;
        }
        let r = crate::util::run_args(&env, &path.display().to_string(), &["--schema"]);
        let printed: Option<Value> = (r.code() == Some(0))
            .then(|| serde_json::from_str(r.stdout().trim()).ok())
            .flatten();
        let known = ag::tools::mains::definition(tool).map(|d| serde_json::to_value(d).unwrap());
        assert_eq!(printed, known, "ag-{tool}");
        checked += usize::from(known.is_some());
    }
    assert!(
        checked >= 14,
        "only {checked} tool binaries found in {}",
        dir.display()
    );
}
