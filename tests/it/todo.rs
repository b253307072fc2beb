//! ag-todo, black-box: the session's list and the `--file` list, every
//! action, validation, atomic and concurrent updates.

use crate::bin;
use crate::util::{Env, call_lines, run, run_args};
use serde_json::{Value, json};

/// Sends calls as one session would: `AG_SESSION_DIR` set to `sess/<id>`.
fn in_session(env: &Env, calls: &[Value]) -> Vec<Value> {
    let input: String = calls.iter().map(|c| format!("{c}\n")).collect();
    let mut cmd = env.cmd(bin!("ag-todo"));
    cmd.env("AG_SESSION_DIR", env.join("sess/s-1"))
        .env("AG_SESSION_ID", "s-1");
    let r = run(cmd, Some(input.as_bytes()));
    r.ok();
    r.json_lines()
}

fn one(env: &Env, call: Value) -> Value {
    in_session(env, &[call]).remove(0)
}

#[test]
fn plan_then_progress_in_a_session() {
    let env = Env::new();
    let out = in_session(
        &env,
        &[
            json!({"action": "list"}),
            json!({"action": "set", "items": [
                {"content": "Read the failing test"},
                {"content": "Fix the parser", "status": "in_progress"},
                {"content": "Run the suite"}
            ]}),
            json!({"id": "u1", "arguments": {"action": "update", "id": 2, "status": "done"}}),
            json!({"action": "update", "id": 3, "status": "in_progress", "content": "Run the whole suite"}),
            json!({"action": "add", "items": [{"content": "Commit"}]}),
            json!({"action": "remove", "id": 1}),
        ],
    );
    assert_eq!(out[0]["output"], "The task list is empty.");
    assert_eq!(
        out[1]["output"],
        "Set the task list (3 items).\n[ ] #1 Read the failing test\n[~] #2 Fix the parser\n[ ] #3 Run the suite\n0 of 3 done, 1 in progress"
    );
    assert_eq!(out[2]["id"], "u1");
    assert!(
        out[2]["output"]
            .as_str()
            .unwrap()
            .starts_with("Updated #2: in_progress -> done.\n"),
        "{}",
        out[2]
    );
    assert_eq!(
        out[5]["output"],
        "Removed #1 (Read the failing test).\n[x] #2 Fix the parser\n[~] #3 Run the whole suite\n[ ] #4 Commit\n1 of 3 done, 1 in progress"
    );
    let d = &out[5]["details"];
    assert_eq!(
        d["items"],
        json!([
            {"id": 2, "content": "Fix the parser", "status": "done"},
            {"id": 3, "content": "Run the whole suite", "status": "in_progress"},
            {"id": 4, "content": "Commit", "status": "pending"}
        ])
    );
    assert_eq!(
        d["counts"],
        json!({"pending": 1, "in_progress": 1, "done": 1, "total": 3})
    );
    assert_eq!(d["session_id"], "s-1");
    assert_eq!(d["changed"], json!([1]));

    // The list lives in the session's directory, created when needed, and
    // persists from one process to the next.
    let stored: Value = serde_json::from_slice(&env.read("sess/s-1/todo.json")).unwrap();
    assert_eq!(stored["version"], 1);
    assert_eq!(stored["session_id"], "s-1");
    assert_eq!(stored["items"], d["items"]);
    let listed = one(&env, json!({"action": "list"}));
    assert_eq!(listed["details"]["items"], d["items"]);
    let names: Vec<String> = std::fs::read_dir(env.join("sess/s-1"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        vec!["todo.json"],
        "no temporary or lock file is left"
    );
}

#[test]
fn bad_calls_are_clear_errors_and_change_nothing() {
    let env = Env::new();
    one(
        &env,
        json!({"action": "set", "items": [{"content": "a"}, {"content": "b"}]}),
    );
    let before = env.read("sess/s-1/todo.json");
    let out = in_session(
        &env,
        &[
            json!({"action": "update", "id": 7, "status": "done"}),
            json!({"action": "update", "id": 1, "status": "finished"}),
            json!({"action": "add", "items": [{"content": "ok"}, {"content": "   "}]}),
            json!({"action": "update", "status": "done"}),
            json!({"action": "update", "id": 1}),
            json!({"action": "remove", "id": 1, "status": "done"}),
            json!({"action": "remove", "id": 3}),
            json!({"action": "set", "items": [{"id": 1, "content": "x"}, {"id": 1, "content": "y"}]}),
            json!({"action": "add", "items": [{"id": 2, "content": "taken"}]}),
            json!({"action": "add"}),
            json!({"action": "clear"}),
        ],
    );
    let codes: Vec<&str> = out
        .iter()
        .map(|r| {
            assert_eq!(r["is_error"], true, "{r}");
            r["error_code"].as_str().unwrap()
        })
        .collect();
    assert_eq!(
        codes,
        vec![
            "todo.unknown_id",
            "call.invalid_arguments",
            "todo.empty_content",
            "todo.missing_id",
            "todo.nothing_to_update",
            "todo.bad_arguments",
            "todo.unknown_id",
            "todo.duplicate_id",
            "todo.duplicate_id",
            "todo.no_items",
            "call.invalid_arguments",
        ]
    );
    let msg = |i: usize| out[i]["output"].as_str().unwrap().to_string();
    assert!(msg(0).contains("the ids are 1, 2"), "{}", msg(0));
    assert!(msg(1).contains("finished"), "{}", msg(1));
    assert!(msg(1).contains("in_progress"), "{}", msg(1));
    assert!(msg(2).contains("item 2 has empty content"), "{}", msg(2));
    assert!(
        msg(5).contains(r#"To change the item, call {"action":"update","id":1,"status":"done"}"#),
        "{}",
        msg(5)
    );
    assert_eq!(
        env.read("sess/s-1/todo.json"),
        before,
        "the list is untouched"
    );
}

#[test]
fn without_a_session_it_needs_a_file() {
    let env = Env::new();
    let r = run_args(&env, bin!("ag-todo"), &["list"]);
    r.expect_code(1);
    assert!(
        r.stderr().contains("AG_SESSION_DIR is not set"),
        "{}",
        r.stderr()
    );
    assert!(r.stderr().contains("--file"), "{}", r.stderr());
    let out = call_lines(&env, bin!("ag-todo"), "{\"action\":\"list\"}\n");
    assert_eq!(out[0]["error_code"], "todo.no_list");

    let r = run_args(
        &env,
        bin!("ag-todo"),
        &[
            "--file",
            "plan/todo.json",
            "set",
            "[x] Design",
            "[~] Build",
            "Ship",
        ],
    );
    r.ok();
    assert_eq!(
        r.stdout(),
        "Set the task list (3 items).\n[x] #1 Design\n[~] #2 Build\n[ ] #3 Ship\n1 of 3 done, 1 in progress\n"
    );
    let r = run_args(
        &env,
        bin!("ag-todo"),
        &[
            "--file",
            "plan/todo.json",
            "update",
            "--id",
            "2",
            "--status",
            "done",
        ],
    );
    r.ok();
    let r = run_args(
        &env,
        bin!("ag-todo"),
        &["--file", "plan/todo.json", "--json", "list"],
    );
    r.ok();
    assert_eq!(r.json()["details"]["counts"]["done"], 2);
    assert_eq!(r.json()["details"]["file"], "plan/todo.json");

    // The flag also serves every call of the JSONL loop.
    let mut cmd = env.cmd(bin!("ag-todo"));
    cmd.args(["--file", "plan/todo.json"]);
    let r = run(
        cmd,
        Some(b"{\"action\":\"add\",\"items\":[{\"content\":\"Celebrate\"}]}\n{\"action\":\"list\"}\n"),
    );
    r.ok();
    let out = r.json_lines();
    assert_eq!(out[0]["details"]["changed"], json!([4]));
    assert_eq!(out[1]["details"]["counts"]["total"], 4);
    // The model is not offered the flag.
    let schema = run_args(&env, bin!("ag-todo"), &["--schema"]).json();
    assert!(schema["parameters"]["properties"].get("file").is_none());
}

#[test]
fn the_file_flag_wins_over_the_session_and_respects_root() {
    let env = Env::new();
    let mut cmd = env.cmd(bin!("ag-todo"));
    cmd.env("AG_SESSION_DIR", env.join("sess"))
        .args(["--file", "mine.json", "add", "Mine"]);
    run(cmd, None).ok();
    assert!(env.join("mine.json").exists());
    assert!(!env.join("sess").exists());
    let r = run_args(
        &env,
        bin!("ag-todo"),
        &["--root", ".", "--file", "../outside.json", "list"],
    );
    r.expect_code(1);
    assert!(
        r.stderr().contains("outside the allowed root"),
        "{}",
        r.stderr()
    );
}

#[test]
fn a_corrupt_list_is_reported_and_kept() {
    let env = Env::new();
    env.write("sess/s-1/todo.json", "{ not json");
    let r = one(&env, json!({"action": "set", "items": [{"content": "x"}]}));
    assert_eq!(r["error_code"], "todo.corrupt", "{r}");
    assert!(r["output"].as_str().unwrap().contains("left untouched"));
    assert_eq!(env.read("sess/s-1/todo.json"), b"{ not json");
}

#[test]
fn parallel_calls_do_not_lose_updates() {
    let env = Env::new();
    let children: Vec<_> = (0..8)
        .map(|i| {
            let mut cmd = env.cmd(bin!("ag-todo"));
            cmd.env("AG_SESSION_DIR", env.join("sess/s-1"))
                .args(["add", &format!("task {i}")])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped());
            cmd.spawn().unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let listed = one(&env, json!({"action": "list"}));
    let mut ids: Vec<u64> = listed["details"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_u64().unwrap())
        .collect();
    ids.sort();
    assert_eq!(ids, (1..=8).collect::<Vec<u64>>());
}

#[test]
fn plain_empty_list_is_no_lines_and_a_note() {
    let env = Env::new();
    let r = run_args(&env, bin!("ag-todo"), &["--file", "t.json", "list"]);
    r.ok();
    assert_eq!(r.stdout(), "", "{r}");
    assert_eq!(r.stderr(), "ag-todo: note: The task list is empty.\n");
    let r = run_args(&env, bin!("ag-todo"), &["--file", "t.json", "add", "One"]);
    r.ok();
    assert_eq!(r.stdout(), "Added #1.\n[ ] #1 One\n0 of 1 done\n");
    assert_eq!(r.stderr(), "", "{r}");
    let r = run_args(
        &env,
        bin!("ag-todo"),
        &["--file", "t.json", "remove", "--id", "1"],
    );
    r.ok();
    assert_eq!(r.stdout(), "Removed #1 (One).\n", "{r}");
    assert_eq!(r.stderr(), "ag-todo: note: The task list is empty.\n");
    let mut cmd = env.cmd(bin!("ag-todo"));
    cmd.args(["--file", "t.json"]);
    let r = run(cmd, Some(b"{\"action\":\"list\"}\n"));
    r.ok();
    assert_eq!(r.json()["output"], "The task list is empty.", "{r}");
}
