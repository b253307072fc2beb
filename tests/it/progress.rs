//! Progress of running tool calls: ag-bash's progress lines on stderr when
//! asked (AG_PROGRESS), and ag-loop's `tool_execution_update` events, from
//! ag-bash and from any tool that writes progress lines. "As they come" is
//! shown without timing: the command waits for the test to have seen each
//! line before it goes on, so a line that only came at the end would stop
//! the command until its time limit.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use crate::agent::{scripted_model, text_turn, tool_turn};
use crate::bin;
use crate::util::{Env, run};
use serde_json::{Value, json};

/// A command printing `step 1` to `step N`, each only once the file
/// `.seen/I` exists, and pausing `pause` seconds after each.
fn stepping(n: u32, pause: &str) -> String {
    format!(
        "for i in $(seq 1 {n}); do echo \"step $i\"; while [ ! -e .seen/$i ]; do sleep 0.02; done; sleep {pause}; done; echo all done"
    )
}

/// Marks the steps a text shows as seen.
fn see(env: &Env, text: &str) {
    for l in text.lines() {
        if let Some(i) = l.trim().strip_prefix("step ") {
            std::fs::write(env.join(&format!(".seen/{i}")), "").unwrap();
        }
    }
}

#[test]
fn ag_bash_writes_a_long_commands_lines_to_stderr_as_they_come_when_asked() {
    let env = Env::new();
    std::fs::create_dir(env.join(".seen")).unwrap();
    let mut c = env.cmd(bin!("ag-bash"));
    c.env("AG_PROGRESS", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let call = json!({"id": "b1", "arguments": {"command": stepping(5, "0"), "timeout": 60}});
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(format!("{call}\n").as_bytes()).unwrap();
    drop(stdin);
    let mut updates = Vec::new();
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let p: Value = serde_json::from_str(&line.unwrap()).unwrap();
        assert_eq!(p["type"], "progress", "{p}");
        assert_eq!(p["id"], "b1", "{p}");
        let text = p["output"].as_str().unwrap().to_string();
        see(&env, &text);
        updates.push(text);
    }
    let out = child.wait_with_output().unwrap();
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["details"]["exit_code"], 0, "{result}");
    assert_eq!(result["details"]["timed_out"], false, "{result}");
    let shown = updates.join("\n");
    for i in 1..=5 {
        assert!(shown.contains(&format!("step {i}")), "{updates:?}");
    }
    // The result is the whole output, as without progress.
    let output = result["output"].as_str().unwrap();
    assert!(output.starts_with("step 1\nstep 2\n"), "{output}");
    assert!(output.contains("all done"), "{output}");

    // Not asked: stderr stays empty, and the result is the same.
    let r = run(
        env.cmd(bin!("ag-bash")),
        Some(b"{\"command\": \"echo quiet\"}\n"),
    );
    r.ok();
    assert_eq!(r.stderr(), "");
    assert!(r.json()["output"].as_str().unwrap().starts_with("quiet\n"));
}

/// Runs ag-loop on `model` with `prompt`, marking each step an update
/// shows as seen; returns every event.
fn follow(env: &Env, model: &str, extra: &[&str], prompt: &str) -> Vec<Value> {
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["--llm-cmd", model, "--json", "--no-session"])
        .args(extra)
        .arg(prompt)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut events = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let e: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if e["type"] == "tool_execution_update" {
            see(env, e["output"].as_str().unwrap());
        }
        events.push(e);
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{events:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    events
}

#[test]
fn a_ten_second_bash_command_shows_its_lines_in_updates_as_they_come() {
    let env = Env::new();
    std::fs::create_dir(env.join(".seen")).unwrap();
    // Ten steps a second apart: about ten seconds in all.
    let model = scripted_model(
        &env,
        &[
            tool_turn(&[(
                "c1",
                "bash",
                json!({"command": stepping(10, "1"), "timeout": 120}),
            )]),
            text_turn("built"),
        ],
    );
    let events = follow(&env, &model, &["--tools", "bash"], "build it");
    let pos = |t: &str| events.iter().position(|e| e["type"] == t).unwrap();
    let (start, end) = (pos("tool_execution_start"), pos("tool_execution_end"));
    let updates: Vec<(usize, &Value)> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| e["type"] == "tool_execution_update")
        .collect();
    assert!(!updates.is_empty(), "{events:?}");
    for (i, u) in &updates {
        assert!(start < *i && *i < end, "an update outside its call: {u}");
        assert_eq!(u["tool_call_id"], "c1");
        assert_eq!(u["tool_name"], "bash");
        assert!(u["timestamp"].is_string());
    }
    let shown: String = updates
        .iter()
        .map(|(_, u)| u["output"].as_str().unwrap())
        .collect::<Vec<_>>()
        .join("\n");
    for i in 1..=10 {
        assert!(shown.contains(&format!("step {i}")), "{shown}");
    }
    // Lines come in order, and the model reads the result alone.
    let firsts: Vec<usize> = (1..=10)
        .map(|i| {
            shown
                .find(&format!("step {i}\n"))
                .or_else(|| shown.find(&format!("step {i}")))
                .unwrap()
        })
        .collect();
    assert!(firsts.windows(2).all(|w| w[0] < w[1]), "{shown}");
    let result = &events[end];
    assert_eq!(result["details"]["exit_code"], 0, "{result}");
    assert_eq!(result["details"]["timed_out"], false, "{result}");
    let req: Value = serde_json::from_slice(&env.read(".model/request1.json")).unwrap();
    assert!(!req.to_string().contains("tool_execution_update"));
}

#[test]
fn any_tool_may_report_progress_and_its_log_lines_stay_out() {
    let env = Env::new();
    // A tool as a shell script: its schema, then a call that reports two
    // steps on stderr, logs a line, and answers.
    env.write(
        "slow-tool",
        r#"#!/bin/sh
if [ "$1" = --schema ]; then
  echo '{"name":"slow","label":"Slow","description":"a slow tool","parameters":{"type":"object","properties":{}}}'
  exit 0
fi
read call
[ -n "$AG_PROGRESS" ] || echo 'AG_PROGRESS was not set' >&2
echo '{"type":"progress","output":"indexing 1 of 2","details":{"done":1}}' >&2
echo 'a log line, not progress' >&2
echo '{"type":"progress","output":"indexing 2 of 2"}' >&2
echo '{"output":"indexed","details":{},"is_error":false}'
"#,
    );
    std::fs::set_permissions(
        env.join("slow-tool"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let model = scripted_model(
        &env,
        &[tool_turn(&[("s1", "slow", json!({}))]), text_turn("done")],
    );
    let tool = env.join("slow-tool").display().to_string();
    let events = follow(
        &env,
        &model,
        &["--tools", "read", "--tool", &tool],
        "index it",
    );
    let updates: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_execution_update")
        .collect();
    assert_eq!(updates.len(), 2, "{events:?}");
    assert_eq!(updates[0]["output"], "indexing 1 of 2");
    assert_eq!(updates[0]["details"], json!({"done": 1}));
    assert_eq!(updates[1]["output"], "indexing 2 of 2");
    assert!(updates[1].get("details").is_none(), "{}", updates[1]);
    let end = events
        .iter()
        .find(|e| e["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(end["output"], "indexed");
}
