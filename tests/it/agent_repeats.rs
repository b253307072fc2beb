//! ag-loop's guard against going round in circles, replaying what a real
//! small model did (the realmodel recordings of issue 17): the same two
//! failing calls in parallel every turn, a failing edit alternating with a
//! successful read, and a run of calls that each fail a little differently;
//! and the same answer of looks, sent again and again once the work is done.

use serde_json::{Value, json};

use crate::bin;
use crate::model_server::{ModelServer, Turn};
use crate::util::{Env, Run, run};

const CALC: &str = "\"\"\"Tiny calculator helpers.\"\"\"\n\n\ndef sum_to(n):\n    total = 0\n    for i in range(1, n):\n        total += i\n    return total\n";

fn failing_edit() -> (&'static str, Value) {
    // The model's edit, with an old_string the file does not hold.
    (
        "edit",
        json!({"file_path": "calc.py", "old_string": "for i in range(0, n):", "new_string": "for i in range(1, n + 1):"}),
    )
}

fn loop_run(env: &Env, server: &ModelServer, extra: &[&str]) -> Run {
    env.write("calc.py", CALC);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["-m", "ollama/scripted", "--base-url", &server.base_url()])
        .args(["--json", "--no-gate", "--no-session", "--max-turns", "30"])
        .args(extra)
        .arg("The tests fail; fix calc.py.");
    run(c, None)
}

fn ends(events: &[Value]) -> Vec<&Value> {
    events
        .iter()
        .filter(|e| e["type"] == "tool_execution_end")
        .collect()
}

fn agent_end(events: &[Value]) -> &Value {
    events.iter().find(|e| e["type"] == "agent_end").unwrap()
}

/// The tool results of a request, as the model received them.
fn tool_texts(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

#[test]
fn two_identical_failing_calls_in_parallel_each_turn_are_counted_and_stopped() {
    let env = Env::new();
    let turn = Turn::Tools(vec![
        failing_edit(),
        ("read", json!({"file_path": "tests/test_calc.py"})),
    ]);
    let server = ModelServer::start(vec![turn; 8]);
    let r = loop_run(&env, &server, &["--max-failed-calls", "0"]);
    r.expect_code(1);
    let events = r.json_lines();
    let ends = ends(&events);
    // Three turns of the same two calls, with nothing moved: the third
    // answer stops the run, before either call's own fifth failure.
    assert_eq!(ends.len(), 6, "{r}");
    assert_eq!(server.requests().len(), 3);
    for (i, e) in ends.iter().enumerate() {
        let n = i / 2 + 1;
        let out = e["output"].as_str().unwrap();
        assert_eq!(e["is_error"], true);
        if n >= 2 {
            assert!(
                out.contains(&format!("This exact call has now failed {n} times")),
                "call {i}: {out}"
            );
        } else {
            assert!(!out.contains("This exact call"), "{out}");
        }
    }
    let end = agent_end(&events);
    assert_eq!(end["outcome"], "repeated_failure", "{r}");
    let error = end["error"].as_str().unwrap();
    assert!(
        error.contains("same 2 tool calls in 3 answers in a row"),
        "{error}"
    );
    assert!(!error.contains("work is kept"), "{error}");
    // Events show what the model read: the results of turn 2 in request 3.
    let sent = tool_texts(&server.requests()[2]);
    for e in &ends[2..4] {
        let out = e["output"].as_str().unwrap();
        assert!(sent.iter().any(|t| t == out), "{out}\nnot in {sent:?}");
    }
}

#[test]
fn the_same_answer_of_looks_again_and_again_stops_with_the_work_kept() {
    // A first answer that fixes the file, then the same two looks answer
    // after answer: the third of them stops the run, not the turn limit.
    let env = Env::new();
    let fix = (
        "edit",
        json!({"file_path": "calc.py", "old_string": "range(1, n)", "new_string": "range(1, n + 1)"}),
    );
    let looks = Turn::Tools(vec![
        ("read", json!({"file_path": "calc.py"})),
        ("bash", json!({"command": "grep -c range calc.py"})),
    ]);
    let mut turns = vec![Turn::Tools(vec![fix])];
    turns.extend(vec![looks; 8]);
    let server = ModelServer::start(turns);
    let r = loop_run(&env, &server, &[]);
    r.expect_code(0);
    let events = r.json_lines();
    assert_eq!(server.requests().len(), 4, "{r}");
    let end = agent_end(&events);
    assert_eq!(end["outcome"], "repeated_call", "{r}");
    let error = end["error"].as_str().unwrap();
    assert!(error.contains("same 2 tool calls in 3 answers"), "{error}");
    assert!(error.contains("its work is kept"), "{error}");
    assert_eq!(end["work"]["changed"], json!(["calc.py"]), "{r}");
    assert!(
        String::from_utf8(env.read("calc.py"))
            .unwrap()
            .contains("range(1, n + 1)")
    );
}

#[test]
fn a_failing_edit_alternating_with_a_successful_read_is_still_counted() {
    let env = Env::new();
    let mut turns = Vec::new();
    for _ in 0..8 {
        turns.push(Turn::Tools(vec![failing_edit()]));
        turns.push(Turn::Tools(vec![(
            "read",
            json!({"file_path": "calc.py", "offset": 1, "limit": 1000}),
        )]));
    }
    let server = ModelServer::start(turns);
    let r = loop_run(&env, &server, &[]);
    r.expect_code(1);
    let events = r.json_lines();
    let edits: Vec<&Value> = ends(&events)
        .into_iter()
        .filter(|e| e["tool_name"] == "edit")
        .collect();
    assert_eq!(edits.len(), 5, "{r}");
    assert!(
        edits[1]["output"]
            .as_str()
            .unwrap()
            .contains("failed 2 times"),
        "{r}"
    );
    assert_eq!(agent_end(&events)["outcome"], "repeated_failure");
    // Stopped after the fifth edit's turn: nine model calls, not seventeen.
    assert_eq!(server.requests().len(), 9);
}

#[test]
fn calls_that_each_fail_a_little_differently_hit_the_streak_limit() {
    let env = Env::new();
    let turns: Vec<Turn> = (0..10)
        .map(|i| {
            Turn::Tools(vec![(
                "edit",
                json!({"file_path": "calc.py", "old_string": format!("range(1, n + {i})"), "new_string": "range(1, n + 1)"}),
            )])
        })
        .collect();
    let server = ModelServer::start(turns);
    let r = loop_run(&env, &server, &[]);
    r.expect_code(1);
    let events = r.json_lines();
    let ends = ends(&events);
    // The default limit: 8 failed calls in a row, a warning from the 4th.
    assert_eq!(ends.len(), 8, "{r}");
    let out = |i: usize| ends[i]["output"].as_str().unwrap().to_string();
    assert!(!out(2).contains("all failed"), "{}", out(2));
    assert!(
        out(3).contains("Your last 4 tool calls all failed"),
        "{}",
        out(3)
    );
    assert!(out(7).contains("stops after this turn"), "{}", out(7));
    let end = agent_end(&events);
    assert_eq!(end["outcome"], "repeated_failure");
    assert!(
        end["error"]
            .as_str()
            .unwrap()
            .contains("8 tool calls in a row failed")
    );
    assert!(r.stderr().contains("--max-failed-calls"), "{r}");
}

#[test]
fn the_streak_limit_comes_from_the_config_file_and_the_flag_wins() {
    let env = Env::new();
    env.write(".home/.ag/config.toml", "max_failed_calls = 3\n");
    let turns = || -> Vec<Turn> {
        (0..6)
            .map(|i| {
                Turn::Tools(vec![(
                    "read",
                    json!({"file_path": format!("missing{i}.py")}),
                )])
            })
            .collect()
    };
    let server = ModelServer::start(turns());
    let r = loop_run(&env, &server, &[]);
    r.expect_code(1);
    assert_eq!(ends(&r.json_lines()).len(), 3, "{r}");
    // With no limit, all six run and the script's end answers.
    let server = ModelServer::start(turns());
    let r = loop_run(&env, &server, &["--max-failed-calls", "0"]);
    r.ok();
    assert_eq!(ends(&r.json_lines()).len(), 6, "{r}");
}
