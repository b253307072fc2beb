//! ag-session, black-box, on hand-made and damaged session files.

use crate::bin;
use crate::util::{Env, run, run_args};
use serde_json::{Value, json};

fn assistant(text: &str, calls: &[(&str, &str)], model: &str, input: u64, cost: f64) -> Value {
    let mut content = vec![json!({"type": "text", "text": text})];
    for (id, name) in calls {
        content.push(
            json!({"type": "tool_call", "id": id, "name": name, "arguments": {"command": "ls"}}),
        );
    }
    json!({"role": "assistant", "content": content,
        "usage": {"input": input, "output": 10, "cache_read": 0, "cache_write": 0,
                  "cost": {"input": cost, "output": 0.0, "cache_read": 0.0, "cache_write": 0.0, "total": cost}},
        "stop_reason": if calls.is_empty() { "stop" } else { "tool_use" },
        "model": model, "timestamp": "2026-11-20T10:00:00.000Z"})
}

fn ev(event: Value) -> String {
    let mut e = event;
    e.as_object_mut()
        .unwrap()
        .insert("timestamp".into(), json!("2026-11-20T10:00:00.000Z"));
    // Put the timestamp first as ag-loop prints it.
    let mut m = serde_json::Map::new();
    m.insert("timestamp".into(), e["timestamp"].clone());
    for (k, v) in e.as_object().unwrap() {
        if k != "timestamp" {
            m.insert(k.clone(), v.clone());
        }
    }
    Value::Object(m).to_string()
}

/// Creates a session with `ag-session new` in `cwd` and appends events.
fn make_session(env: &Env, cwd: &str, events: &[String]) -> (String, String) {
    std::fs::create_dir_all(env.join(cwd)).unwrap();
    let mut c = env.cmd(bin!("ag-session"));
    c.args(["new", "--cwd", cwd]);
    let r = run(c, None);
    r.ok();
    let line = r.stdout();
    let (id, path) = line.trim_end().split_once('\t').unwrap();
    let mut c = env.cmd(bin!("ag-session"));
    c.args(["append", id]);
    let input = events.join("\n") + "\n";
    run(c, Some(input.as_bytes())).ok();
    (id.to_string(), path.to_string())
}

fn conversation() -> Vec<String> {
    vec![
        ev(json!({"type": "agent_start"})),
        ev(
            json!({"type": "message_start", "message": {"role": "user", "content": "list the files"}}),
        ),
        ev(
            json!({"type": "message_end", "message": {"role": "user", "content": "list the files"}}),
        ),
        ev(json!({"type": "turn_start"})),
        ev(
            json!({"type": "message_update", "event": {"type": "text_delta", "index": 0, "delta": "Sure"}}),
        ),
        ev(
            json!({"type": "message_end", "message": assistant("Sure", &[("c1", "bash"), ("c2", "bash")], "openai/gpt-4o", 100, 0.5)}),
        ),
        ev(
            json!({"type": "message_end", "message": {"role": "tool_result", "tool_call_id": "c1", "tool_name": "bash",
            "content": [{"type": "text", "text": "a.txt"}], "details": {"diff": "--- a\n+++ b\n-old\n+new"}, "is_error": false}}),
        ),
    ]
}

#[test]
fn new_append_list_messages_and_dangling_calls() {
    let env = Env::new();
    let (id, path) = make_session(&env, "proj", &conversation());
    assert!(path.contains("/sessions/--"), "{path}");
    let mut c = env.cmd(bin!("ag-session"));
    c.args(["list", "--json", "--cwd", "proj"]);
    let r = run(c, None);
    r.ok();
    let rows = r.json_lines();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["id"], id.as_str());
    assert_eq!(rows[0]["first_prompt"], "list the files");
    assert_eq!(rows[0]["messages"], 3);
    assert_eq!(rows[0]["usage"]["cost"]["total"], 0.5);

    // c2 never got a result: resuming gives it one that says it was interrupted.
    let r = run_args(&env, bin!("ag-session"), &["messages", &id[..13]]);
    r.ok();
    let msgs = r.json();
    let msgs = msgs.as_array().unwrap();
    assert_eq!(msgs.len(), 4);
    assert_eq!(msgs[3]["role"], "tool_result");
    assert_eq!(msgs[3]["tool_call_id"], "c2");
    assert_eq!(msgs[3]["is_error"], true);
}

#[test]
fn damaged_files_are_reported_and_read() {
    let env = Env::new();
    let (id, path) = make_session(&env, "proj", &conversation());
    let mut text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // A corrupt line in the middle and a torn last line.
    let mut damaged = lines[..3].join("\n");
    damaged.push_str("\n{not json at all\n");
    damaged.push_str(&lines[3..].join("\n"));
    damaged.push_str("\n{\"timestamp\":\"2026-11-20T10:00:01Z\",\"type\":\"message_end\",\"mess");
    text = damaged;
    std::fs::write(&path, &text).unwrap();
    let r = run_args(&env, bin!("ag-session"), &["messages", &id]);
    r.ok();
    assert_eq!(r.json().as_array().unwrap().len(), 4);
    assert!(r.stderr().contains("line 4: corrupt"), "{r}");
    assert!(r.stderr().contains("torn"), "{r}");
    // Appending after a torn line starts a fresh line; the file is never rewritten.
    let mut c = env.cmd(bin!("ag-session"));
    c.args(["append", &id]);
    run(c, Some(ev(json!({"type": "turn_start"})).as_bytes())).ok();
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(after.starts_with(&text));
    assert!(after.ends_with("\"type\":\"turn_start\"}\n"));
}

#[test]
fn fork_show_export_stats_rm() {
    let env = Env::new();
    let (id, _) = make_session(&env, "proj", &conversation());
    let r = run_args(&env, bin!("ag-session"), &["fork", &id, "--at", "3"]);
    r.ok();
    let out = r.stdout();
    let (fork_id, fork_path) = out.trim_end().split_once('\t').unwrap();
    let fork_text = std::fs::read_to_string(fork_path).unwrap();
    let header: Value = serde_json::from_str(fork_text.lines().next().unwrap()).unwrap();
    assert_eq!(header["parent"], id.as_str());
    assert_eq!(fork_text.lines().count(), 4);

    let show = run_args(&env, bin!("ag-session"), &["show", &id]);
    show.ok();
    assert!(show.stdout().contains("list the files"));
    assert!(show.stdout().contains("Tool call: bash"));

    let html = run_args(
        &env,
        bin!("ag-session"),
        &["export", &id, "--format", "html"],
    );
    html.ok();
    let page = html.stdout();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("<details>"));
    assert!(page.contains("class=\"add\">+new"));

    let stats = run_args(&env, bin!("ag-session"), &["stats", "--all", "--json"]);
    stats.ok();
    let rows = stats.json_lines();
    // The fork holds no assistant message; the original one.
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["model"], "openai/gpt-4o");
    assert_eq!(rows[0]["day"], "2026-11-20");

    let refuse = run_args(&env, bin!("ag-session"), &["rm", fork_id]);
    refuse.expect_code(2);
    assert!(std::path::Path::new(fork_path).exists());
    run_args(&env, bin!("ag-session"), &["rm", fork_id, "--yes"]).ok();
    assert!(!std::path::Path::new(fork_path).exists());
    let gone = run_args(&env, bin!("ag-session"), &["path", fork_id]);
    gone.expect_code(1);
    assert!(gone.stderr().contains("no session matches"));
}

#[test]
fn ambiguous_prefix_lists_candidates() {
    let env = Env::new();
    make_session(&env, "a", &[]);
    make_session(&env, "b", &[]);
    let r = run_args(&env, bin!("ag-session"), &["path", "0"]);
    r.expect_code(1);
    assert!(r.stderr().contains("ambiguous"), "{r}");
    assert_eq!(r.stderr().matches(".jsonl").count(), 2, "{r}");
}

#[test]
fn append_rejects_lines_that_are_not_events() {
    let env = Env::new();
    let (id, path) = make_session(&env, "p", &[]);
    let mut c = env.cmd(bin!("ag-session"));
    c.args(["append", &id]);
    let r = run(
        c,
        Some(b"{\"type\":\"turn_start\"}\nnot json\n{\"type\":\"nope\"}\n"),
    );
    r.expect_code(1);
    assert!(r.stderr().contains("line 2"));
    let text = std::fs::read_to_string(path).unwrap();
    assert_eq!(text.lines().count(), 2);
}

/// The id column of `ag-session list`, one per session.
fn listed_ids(env: &Env, cwd: &str) -> Vec<String> {
    let r = run_args(env, bin!("ag-session"), &["list", "--cwd", cwd]);
    r.ok();
    r.stdout()
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect()
}

#[test]
fn the_id_list_shows_is_one_every_command_takes_and_so_is_a_suffix() {
    let env = Env::new();
    // Made within the same minute: their first 8 characters are the same.
    let (a, _) = make_session(&env, "proj", &conversation());
    let (b, _) = make_session(&env, "proj", &conversation());
    let (c, _) = make_session(&env, "other", &[]);
    let shown = listed_ids(&env, "proj");
    assert_eq!(shown.len(), 2, "{shown:?}");
    for (short, full) in shown.iter().zip([&b, &a]) {
        assert!(full.starts_with(short.as_str()), "{short} of {full}");
        assert!(short.len() >= 8, "{short}");
        for cmd in ["path", "show", "messages", "export"] {
            let r = run_args(&env, bin!("ag-session"), &[cmd, short]);
            r.ok();
        }
        let r = run_args(&env, bin!("ag-session"), &["path", short]);
        assert!(r.stdout().contains(full.as_str()), "{r}");
    }
    assert_ne!(shown[0], shown[1]);
    // The last characters of an id find it too.
    for full in [&a, &b, &c] {
        let r = run_args(&env, bin!("ag-session"), &["path", &full[full.len() - 8..]]);
        r.ok();
        assert!(r.stdout().contains(full.as_str()), "{r}");
    }
    // A prefix that fits several is refused, naming each.
    let r = run_args(&env, bin!("ag-session"), &["show", &a[..4]]);
    r.expect_code(1);
    assert!(r.stderr().contains("ambiguous"), "{r}");
    for full in [&a, &b, &c] {
        assert!(r.stderr().contains(full.as_str()), "{r}");
    }
}

#[test]
fn show_and_export_say_how_each_run_ended_and_the_totals() {
    let env = Env::new();
    let mut events = conversation();
    events.push(ev(
        json!({"type": "agent_end", "messages": [], "outcome": "finished",
        "usage": {"input": 100, "output": 10, "cost": {"total": 0.5}}}),
    ));
    events.push(ev(json!({"type": "agent_start"})));
    events.push(ev(
        json!({"type": "message_end", "message": {"role": "user", "content": "again"}}),
    ));
    events.push(ev(
        json!({"type": "message_end", "message": assistant("More", &[], "openai/gpt-4o", 200, 0.25)}),
    ));
    events.push(ev(json!({"type": "agent_end", "messages": [], "outcome": "turn_limit",
        "error": "stopped after 1 turns (--max-turns); run again with a higher limit or continue the session",
        "usage": {"input": 200, "output": 10, "cost": {"total": 0.25}}})));
    let (id, _) = make_session(&env, "proj", &events);

    let show = run_args(&env, bin!("ag-session"), &["show", &id]);
    show.ok();
    let text = show.stdout();
    assert!(
        text.contains("- outcome: turn_limit: stopped after 1 turns (--max-turns)"),
        "{text}"
    );
    assert!(
        text.contains("- totals: 320 tokens (input 300, output 20, cache read 0, cache write 0), $0.7500 over 2 runs"),
        "{text}"
    );
    assert!(text.contains("## How it ended"), "{text}");
    assert!(
        text.contains("- run 1: finished; 110 tokens, $0.5000"),
        "{text}"
    );
    assert!(
        text.contains("- run 2: turn_limit: stopped after 1 turns"),
        "{text}"
    );

    let md = run_args(&env, bin!("ag-session"), &["export", &id]);
    md.ok();
    assert!(md.stdout().contains("- outcome: turn_limit"), "{md}");
    let html = run_args(
        &env,
        bin!("ag-session"),
        &["export", &id, "--format", "html"],
    );
    html.ok();
    let page = html.stdout();
    assert!(
        page.contains("outcome: turn_limit: stopped after 1 turns"),
        "{page}"
    );
    assert!(page.contains("$0.7500 over 2 runs"), "{page}");
    assert!(page.contains("run 1: finished"), "{page}");

    // A run that never ended says so.
    let (cut, _) = make_session(&env, "proj", &conversation());
    let show = run_args(&env, bin!("ag-session"), &["show", &cut]);
    show.ok();
    assert!(
        show.stdout()
            .contains("- outcome: the last run did not end"),
        "{show}"
    );
    assert!(show.stdout().contains("- run 1: did not end"), "{show}");
    // Its model calls still count.
    assert!(show.stdout().contains("- totals: 110 tokens"), "{show}");
}

#[test]
fn append_hides_a_provider_key_in_events_made_elsewhere() {
    let env = Env::new();
    let (id, path) = make_session(&env, "p", &[]);
    let key = "sk-test-0123456789abcdef";
    let mut c = env.cmd(bin!("ag-session"));
    c.env("OPENAI_API_KEY", key).args(["append", &id]);
    let line = ev(
        json!({"type": "message_end", "message": {"role": "user", "content": format!("my key is {key}")}}),
    );
    run(c, Some(format!("{line}\n").as_bytes())).ok();
    let text = std::fs::read_to_string(path).unwrap();
    assert!(!text.contains(key), "{text}");
    assert!(text.contains("[OPENAI_API_KEY redacted]"), "{text}");
}
