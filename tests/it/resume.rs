//! A session keeps what it was: resuming it (`--continue`, `--session`)
//! brings back its model, reasoning, tool set and identity unless a flag
//! says otherwise (a `note` says what changed), `set_model` and
//! `set_reasoning` switch mid-session, and the session file records each
//! switch so that `ag-session show` and `stats` put each call under the
//! model that made it.

use std::process::Command;

use serde_json::{Value, json};

use crate::agent::{request, scripted_model, text_turn};
use crate::bin;
use crate::model_server::{ModelServer, Turn};
use crate::util::{Env, of_type, run, run_args};

fn session_id(events: &[Value]) -> String {
    of_type(events, "agent_start")[0]["session_id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// ag-loop on the scripted server, without a model of its own.
fn on_server(env: &Env, server: &ModelServer, flags: &[&str]) -> Command {
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "--base-url",
        &server.base_url(),
        "--json",
        "--tools",
        "read",
    ]);
    c.args(flags);
    c
}

#[test]
fn resuming_keeps_the_sessions_model_and_a_flag_changes_it_with_a_note() {
    let env = Env::new();
    let server = ModelServer::start(vec![
        Turn::Text("one"),
        Turn::Text("two"),
        Turn::Text("three"),
        Turn::Text("four"),
    ]);
    let r = run(
        on_server(&env, &server, &["-m", "ollama/first", "one"]),
        None,
    );
    r.ok();
    let id = session_id(&r.json_lines());
    // Neither $AG_MODEL nor the config file outranks what the session was.
    env.write(".home/.ag/config.toml", "model = \"ollama/config\"\n");
    let mut c = on_server(&env, &server, &["--continue", "two"]);
    c.env("AG_MODEL", "ollama/env");
    let r = run(c, None);
    r.ok();
    assert!(of_type(&r.json_lines(), "note").is_empty(), "{r}");
    let r = run(
        on_server(
            &env,
            &server,
            &["--session", &id, "-m", "ollama/second", "three"],
        ),
        None,
    );
    r.ok();
    let events = r.json_lines();
    let notes = of_type(&events, "note");
    assert_eq!(
        notes[0]["message"],
        "resumed session with model ollama/first → ollama/second (--model)"
    );
    let settings = of_type(&events, "settings");
    assert_eq!(settings[0]["model"], "ollama/second");
    // The note and the record come before the prompt's events.
    assert_eq!(events[0]["type"], "note");
    let r = run(on_server(&env, &server, &["--continue", "four"]), None);
    r.ok();
    assert!(of_type(&r.json_lines(), "note").is_empty(), "{r}");
    let models: Vec<Value> = server
        .requests()
        .iter()
        .map(|q| q["model"].clone())
        .collect();
    assert_eq!(
        models,
        [
            json!("first"),
            json!("first"),
            json!("second"),
            json!("second")
        ]
    );

    // The session file says which model made each call.
    let stats = run_args(&env, bin!("ag-session"), &["stats", &id, "--json"]);
    stats.ok();
    let rows: Vec<(String, u64)> = stats
        .json_lines()
        .iter()
        .map(|r| {
            (
                r["model"].as_str().unwrap().to_string(),
                r["calls"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("ollama/first".to_string(), 2),
            ("ollama/second".to_string(), 2)
        ]
    );
    let show = run_args(&env, bin!("ag-session"), &["show", &id]);
    show.ok();
    let text = show.stdout();
    assert!(
        text.contains("- by model: ollama/first: 2 calls, "),
        "{text}"
    );
    assert!(text.contains("; ollama/second: 2 calls, "), "{text}");
    assert!(text.contains("## Assistant (ollama/second)"), "{text}");
}

#[test]
fn set_model_and_set_reasoning_switch_from_the_next_prompt_and_stay_on_resume() {
    let env = Env::new();
    let server = ModelServer::start(vec![Turn::Text("a"), Turn::Text("b"), Turn::Text("c")]);
    let lines = [
        json!({"type": "prompt", "content": "one"}),
        json!({"type": "set_model", "model": "ollama/second"}),
        json!({"type": "set_model", "model": "nosuchprovider/x"}),
        json!({"type": "prompt", "content": "two"}),
    ]
    .map(|l| l.to_string() + "\n")
    .concat();
    let r = run(
        on_server(&env, &server, &["-m", "ollama/first"]),
        Some(lines.as_bytes()),
    );
    r.ok();
    let events = r.json_lines();
    let settings = of_type(&events, "settings");
    assert_eq!(settings.len(), 1, "{events:?}");
    assert_eq!(settings[0]["model"], "ollama/second");
    let errors = of_type(&events, "error");
    let refused = errors[0]["message"].as_str().unwrap();
    assert!(
        refused.starts_with(
            "set_model: `nosuchprovider/x` cannot be used, so the model stays ollama/second"
        ),
        "{refused}"
    );
    // In order with the prompts: the first ran on the first model.
    let starts: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| e["type"] == "agent_start" || e["type"] == "settings")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(events[starts[1]]["type"], "settings", "{events:?}");
    let r = run(on_server(&env, &server, &["--continue", "three"]), None);
    r.ok();
    let models: Vec<Value> = server
        .requests()
        .iter()
        .map(|q| q["model"].clone())
        .collect();
    assert_eq!(models, [json!("first"), json!("second"), json!("second")]);
}

/// The reasoning level, with a model that names none of its answers (an
/// `--llm-cmd` program may not): the session's own model is whose calls
/// they are.
#[test]
fn reasoning_switches_and_calls_that_name_no_model_count_under_the_sessions() {
    let env = Env::new();
    let bare = |text: &str| {
        vec![
            json!({"type": "done", "message": {"content": [{"type": "text", "text": text}],
            "usage": {"input": 10, "output": 2, "cost": {"total": 0.5}}, "stop_reason": "stop"}}),
        ]
    };
    let model = scripted_model(&env, &[bare("a"), bare("b"), bare("c"), bare("d")]);
    let lines = [
        json!({"type": "prompt", "content": "one"}),
        json!({"type": "set_reasoning", "level": "high"}),
        json!({"type": "set_model", "model": "test/second"}),
        json!({"type": "prompt", "content": "two"}),
    ]
    .map(|l| l.to_string() + "\n")
    .concat();
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["--llm-cmd", &model, "-m", "test/first"]);
    let r = run(c, Some(lines.as_bytes()));
    r.ok();
    let events = r.json_lines();
    let id = session_id(&events);
    let settings = of_type(&events, "settings");
    assert_eq!(settings.len(), 2);
    assert_eq!(
        *settings[0],
        json!({"timestamp": settings[0]["timestamp"], "type": "settings", "model": "test/first", "reasoning": "high"})
    );
    assert_eq!(settings[1]["reasoning"], "high");
    assert_eq!(request(&env, 0).get("reasoning"), None);
    assert_eq!(request(&env, 1)["reasoning"], "high");
    assert_eq!(request(&env, 1)["model"], "test/second");
    // Resumed, the reasoning stays; a flag changes it and says so.
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["--llm-cmd", &model, "--continue", "three"]);
    run(c, None).ok();
    assert_eq!(request(&env, 2)["reasoning"], "high");
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "--llm-cmd",
        &model,
        "--continue",
        "--reasoning",
        "low",
        "four",
    ]);
    let r = run(c, None);
    r.ok();
    assert_eq!(
        of_type(&r.json_lines(), "note")[0]["message"],
        "resumed session with reasoning high → low (--reasoning)"
    );
    assert_eq!(request(&env, 3)["reasoning"], "low");
    let stats = run_args(&env, bin!("ag-session"), &["stats", &id, "--json"]);
    let rows: Vec<(String, u64)> = stats
        .json_lines()
        .iter()
        .map(|r| {
            (
                r["model"].as_str().unwrap().to_string(),
                r["calls"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("test/first".to_string(), 1),
            ("test/second".to_string(), 3)
        ]
    );
}

#[test]
fn a_resumed_session_keeps_its_tools_and_identity() {
    let env = Env::new();
    std::fs::create_dir_all(env.join(".git")).unwrap();
    env.write(
        ".ag/agents/rev.md",
        "---\nmodel: test/reviewer\ntools: readonly\n---\nYou review.\n",
    );
    let model = scripted_model(
        &env,
        &[
            text_turn("1"),
            text_turn("2"),
            text_turn("3"),
            text_turn("4"),
        ],
    );
    let tools = |req: &Value| -> Vec<String> {
        req["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    let loop_with = |flags: &[&str]| {
        let mut c = env.cmd(bin!("ag-loop"));
        c.args(["--llm-cmd", &model]);
        c.args(flags);
        run(c, None)
    };
    loop_with(&["--agent", "rev", "one"]).ok();
    let r = loop_with(&["--continue", "two"]);
    r.ok();
    assert_eq!(of_type(&r.json_lines(), "agent_start")[0]["agent"], "rev");
    let req = request(&env, 1);
    assert!(req["system"].as_str().unwrap().starts_with("You review."));
    assert_eq!(req["model"], "test/reviewer");
    assert_eq!(tools(&req), ["read", "grep", "find", "ls"]);
    let r = loop_with(&["--continue", "--tools", "basic", "three"]);
    r.ok();
    assert_eq!(
        of_type(&r.json_lines(), "note")[0]["message"],
        "resumed session with tools readonly → basic (--tools)"
    );
    assert_eq!(tools(&request(&env, 2)), ["read", "write", "edit", "bash"]);
    // The identity's file is gone: the session goes on without it, and
    // says so.
    std::fs::remove_file(env.join(".ag/agents/rev.md")).unwrap();
    let r = loop_with(&["--continue", "four"]);
    r.ok();
    let note = of_type(&r.json_lines(), "note")[0]["message"].clone();
    assert!(
        note.as_str()
            .unwrap()
            .starts_with("the session's agent identity `rev` is no longer found"),
        "{note}"
    );
    let req = request(&env, 3);
    assert!(
        req["system"]
            .as_str()
            .unwrap()
            .starts_with("You are a coding agent")
    );
    // What the session recorded stays: its model and tool set.
    assert_eq!(req["model"], "test/reviewer");
    assert_eq!(tools(&req), ["read", "write", "edit", "bash"]);
}

/// A session's own model that cannot be used here any more (its key is not
/// set) is named as the session's, with the flag that goes on without it.
#[test]
fn a_sessions_model_that_cannot_be_used_says_how_to_go_on() {
    let env = Env::new();
    let model = scripted_model(&env, &[text_turn("one")]);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "--llm-cmd",
        &model,
        "-m",
        "anthropic/claude-sonnet-4-5",
        "one",
    ]);
    run(c, None).ok();
    let r = run_args(&env, bin!("ag-loop"), &["--continue", "two"]);
    r.expect_code(2);
    let err = r.stderr();
    assert!(err.contains("ANTHROPIC_API_KEY"), "{err}");
    assert!(
        err.contains("hint: `anthropic/claude-sonnet-4-5` is the resumed session's own model; `-m PROVIDER/MODEL` resumes it with another"),
        "{err}"
    );
}
