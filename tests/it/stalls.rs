//! ag-loop's helper programs (`--tool`, `--gate`, `--after`, `--llm-cmd`,
//! `--mcp`): one that answers at once and leaves a background child holding
//! its output pipe must not hold ag-loop up (ag-loop takes the answer as
//! soon as it is complete, and ends the leftover); and of them all only
//! `--llm-cmd` gets the provider keys.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::bin;
use crate::model_server::{ModelServer, Turn};
use crate::orphans::{marker_for, sleepers};
use crate::util::{Env, Run, run};

/// How long the leftover would hold the pipe: far longer than [`QUICK`].
const HOLD_SECS: u32 = 30;
/// A generous bound for a whole ag-loop run whose helpers answer at once;
/// only waiting for the leftover's pipe comes near it.
const QUICK: Duration = Duration::from_secs(10);
/// How long the leftover may take to be gone once ag-loop has exited.
const CLEANUP: Duration = Duration::from_secs(10);

/// `sleep MARKER &`: a background child that inherits the helper's stdout
/// and stderr and so holds them open for [`HOLD_SECS`].
fn holder(marker: &str) -> String {
    format!("sleep {marker} &")
}

/// Runs ag-loop and fails unless it ended well within [`QUICK`] and no
/// `sleep MARKER` is left soon after.
fn run_quick(env: &Env, marker: &str, args: &[&str]) -> Run {
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(args);
    let start = Instant::now();
    let r = run(c, None);
    let took = start.elapsed();
    assert!(
        took < QUICK,
        "ag-loop took {took:?}: it waited for the pipe the leftover held\n{r}"
    );
    let deadline = Instant::now() + CLEANUP;
    loop {
        let left = sleepers(marker);
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the leftover {left:?} outlived ag-loop\n{r}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    r
}

/// ag-loop against a scripted model, its events on stdout.
fn loop_args<'a>(server: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "-m",
        "ollama/scripted",
        "--base-url",
        server,
        "--json",
        "--no-session",
    ];
    args.extend_from_slice(extra);
    args.push("go");
    args
}

fn events_of(r: &Run, kind: &str) -> Vec<Value> {
    r.json_lines()
        .into_iter()
        .filter(|e| e["type"] == kind)
        .collect()
}

/// The one `tool_execution_end` of the run.
fn tool_end(r: &Run) -> Value {
    let ends = events_of(r, "tool_execution_end");
    assert_eq!(ends.len(), 1, "{r}");
    ends[0].clone()
}

#[test]
fn a_tool_that_leaves_a_child_on_its_pipe_answers_at_once() {
    let env = Env::new();
    let m = marker_for(HOLD_SECS);
    env.write(
        "tool.sh",
        format!(
            "if [ \"$1\" = --schema ]; then\n\
             echo '{{\"name\":\"quick\",\"label\":\"Quick\",\"description\":\"answers\",\"parameters\":{{\"type\":\"object\",\"properties\":{{}}}}}}'\n\
             exit 0\nfi\nread line\n{}\necho '{{\"output\":\"answered\",\"details\":{{}},\"is_error\":false}}'\n",
            holder(&m)
        ),
    );
    let tool = format!("sh {}", env.join("tool.sh").display());
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("quick", json!({}))]),
        Turn::Text("ok"),
    ]);
    let url = server.base_url();
    let r = run_quick(
        &env,
        &m,
        &loop_args(&url, &["--tools", "", "--tool", &tool, "--no-gate"]),
    );
    r.ok();
    let end = tool_end(&r);
    assert_eq!(end["is_error"], false, "{end}");
    assert!(
        end["output"].as_str().unwrap().contains("answered"),
        "{end}"
    );
}

#[test]
fn a_gate_that_leaves_a_child_on_its_pipe_is_taken_at_its_word() {
    // Before, ag-loop read the gate's pipe to its end: the whole gate
    // timeout, and then the call was denied as unanswered.
    let env = Env::new();
    env.write("a.txt", "alpha\n");
    let m = marker_for(HOLD_SECS);
    env.write(
        "gate.sh",
        format!(
            "cat >/dev/null\n{}\necho '{{\"decision\":\"allow\"}}'\n",
            holder(&m)
        ),
    );
    let gate = format!("sh {}", env.join("gate.sh").display());
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("read", json!({"file_path": "a.txt"}))]),
        Turn::Text("ok"),
    ]);
    let url = server.base_url();
    let r = run_quick(
        &env,
        &m,
        &loop_args(
            &url,
            &["--tools", "read", "--gate", &gate, "--gate-timeout", "60"],
        ),
    );
    r.ok();
    let end = tool_end(&r);
    assert_eq!(end["is_error"], false, "{end}");
    assert!(end["output"].as_str().unwrap().contains("alpha"), "{end}");
    assert!(events_of(&r, "error").is_empty(), "{r}");
}

#[test]
fn an_after_hook_that_leaves_a_child_on_its_pipe_is_taken_at_its_word() {
    let env = Env::new();
    env.write("a.txt", "alpha\n");
    let m = marker_for(HOLD_SECS);
    env.write(
        "after.sh",
        format!(
            "cat >/dev/null\n{}\necho '{{\"append\":\"checked by the hook\"}}'\n",
            holder(&m)
        ),
    );
    let after = format!("sh {}", env.join("after.sh").display());
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("read", json!({"file_path": "a.txt"}))]),
        Turn::Text("ok"),
    ]);
    let url = server.base_url();
    let r = run_quick(
        &env,
        &m,
        &loop_args(
            &url,
            &[
                "--tools",
                "read",
                "--no-gate",
                "--after",
                &after,
                "--gate-timeout",
                "60",
            ],
        ),
    );
    r.ok();
    let end = tool_end(&r);
    let output = end["output"].as_str().unwrap();
    assert!(output.contains("alpha"), "{end}");
    assert!(output.ends_with("checked by the hook"), "{end}");
    assert!(events_of(&r, "error").is_empty(), "{r}");
}

#[test]
fn an_llm_cmd_that_leaves_a_child_on_its_pipe_is_done_at_its_done_event() {
    // Before, every turn waited for the leftover to close the pipe.
    let env = Env::new();
    let m = marker_for(HOLD_SECS);
    let done = json!({"type": "done", "message": {
        "content": [{"type": "text", "text": "all done"}],
        "usage": {"input": 1, "output": 1, "cache_read": 0, "cache_write": 0,
                  "cost": {"input": 0.0, "output": 0.0, "cache_read": 0.0, "cache_write": 0.0, "total": 0.0}},
        "stop_reason": "stop", "model": "test/scripted"}});
    env.write(
        "model.sh",
        format!(
            "cat >/dev/null\n{}\necho '{}'\necho '{}'\n",
            holder(&m),
            json!({"type": "start", "model": "test/scripted"}),
            done
        ),
    );
    let model = format!("sh {}", env.join("model.sh").display());
    let r = run_quick(
        &env,
        &m,
        &[
            "--llm-cmd",
            &model,
            "--tools",
            "",
            "--no-gate",
            "--json",
            "--no-session",
            "go",
        ],
    );
    r.ok();
    let ends = events_of(&r, "message_end");
    let last = ends.last().unwrap();
    assert_eq!(last["message"]["content"][0]["text"], "all done", "{r}");
}

#[test]
fn an_mcp_server_that_leaves_a_child_on_its_pipe_serves_and_closes_at_once() {
    let env = Env::new();
    env.write("a.txt", "from mcp\n");
    let m = marker_for(HOLD_SECS);
    let mcp = format!("{} exec '{}' --tools read", holder(&m), bin!("ag-mcp"));
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("read", json!({"file_path": "a.txt"}))]),
        Turn::Text("ok"),
    ]);
    let url = server.base_url();
    let r = run_quick(
        &env,
        &m,
        &loop_args(&url, &["--tools", "", "--mcp", &mcp, "--no-gate"]),
    );
    r.ok();
    let end = tool_end(&r);
    assert_eq!(end["is_error"], false, "{end}");
    assert!(
        end["output"].as_str().unwrap().contains("from mcp"),
        "{end}"
    );
}

#[test]
fn only_the_llm_cmd_gets_the_provider_keys() {
    let env = Env::new();
    env.write("a.txt", "alpha\n");
    let seen = |who: &str| format!("printf '%s' \"${{OPENAI_API_KEY:-absent}}\" > {who}.seen");
    let start = json!({"type": "start", "model": "test/scripted"});
    let usage = json!({"input": 1, "output": 1, "cache_read": 0, "cache_write": 0,
        "cost": {"input": 0.0, "output": 0.0, "cache_read": 0.0, "cache_write": 0.0, "total": 0.0}});
    let call = json!({"type": "tool_call", "id": "c1", "name": "read", "arguments": {"file_path": "a.txt"}});
    let turn0 = [
        start.clone(),
        json!({"type": "tool_call_start", "index": 0, "id": "c1", "name": "read"}),
        json!({"type": "tool_call_end", "index": 0, "id": "c1", "name": "read", "arguments": {"file_path": "a.txt"}}),
        json!({"type": "done", "message": {"content": [call], "usage": usage, "stop_reason": "tool_use", "model": "test/scripted"}}),
    ];
    let turn1 = [
        start,
        json!({"type": "done", "message": {"content": [{"type": "text", "text": "ok"}], "usage": usage, "stop_reason": "stop", "model": "test/scripted"}}),
    ];
    let lines = |events: &[Value]| events.iter().map(|e| format!("{e}\n")).collect::<String>();
    env.write("turn0.jsonl", lines(&turn0));
    env.write("turn1.jsonl", lines(&turn1));
    env.write(
        "model.sh",
        format!(
            "cat >/dev/null\n{}\nif [ -e turn0.done ]; then cat turn1.jsonl; else touch turn0.done; cat turn0.jsonl; fi\n",
            seen("model")
        ),
    );
    env.write(
        "gate.sh",
        format!(
            "cat >/dev/null\n{}\necho '{{\"decision\":\"allow\"}}'\n",
            seen("gate")
        ),
    );
    let model = format!("sh {}", env.join("model.sh").display());
    let gate = format!("sh {}", env.join("gate.sh").display());
    let mut c = env.cmd(bin!("ag-loop"));
    c.env("OPENAI_API_KEY", "sk-test-only-for-the-model")
        .args(["--llm-cmd", &model, "--tools", "read", "--gate", &gate])
        .args(["--json", "--no-session", "go"]);
    let r = run(c, None);
    r.ok();
    let read = |who: &str| String::from_utf8(env.read(&format!("{who}.seen"))).unwrap();
    assert_eq!(read("model"), "sk-test-only-for-the-model", "{r}");
    assert_eq!(read("gate"), "absent", "{r}");
    assert_eq!(tool_end(&r)["is_error"], false, "{r}");
}
