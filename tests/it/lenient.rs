//! Arguments as models send them, through the real binaries: every
//! optional field of every tool's schema sent empty, the calls a real small
//! model made (tests/fixtures/realmodel/), and the same through ag-loop.

use serde_json::{Value, json};

use crate::bin;
use crate::model_server::{ModelServer, Turn};
use crate::util::{Env, run};

/// A tool's name, its binary, a set-up for its directory, and a minimal
/// call that succeeds there.
type Case = (&'static str, &'static str, fn(&Env), Value);

/// Every ag tool binary.
fn tools() -> Vec<Case> {
    fn file(env: &Env) {
        env.write("a.txt", "one\ntwo\n");
    }
    fn repo(env: &Env) {
        file(env);
        let git = |args: &[&str]| {
            let mut c = env.cmd("git");
            c.args(args);
            run(c, None).ok();
        };
        git(&["init", "-q"]);
        git(&["-c", "user.name=t", "-c", "user.email=t@t", "add", "."]);
    }
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-one\n+uno\n two\n";
    vec![
        ("read", bin!("ag-read"), file, json!({"file_path": "a.txt"})),
        (
            "write",
            bin!("ag-write"),
            file,
            json!({"file_path": "a.txt", "content": "new\n"}),
        ),
        (
            "edit",
            bin!("ag-edit"),
            file,
            json!({"file_path": "a.txt", "old_string": "one", "new_string": "uno"}),
        ),
        ("patch", bin!("ag-patch"), file, json!({"patch": patch})),
        ("delete", bin!("ag-delete"), file, json!({"path": "a.txt"})),
        ("bash", bin!("ag-bash"), file, json!({"command": "echo hi"})),
        ("grep", bin!("ag-grep"), file, json!({"query": "one"})),
        ("find", bin!("ag-find"), file, json!({"pattern": "*.txt"})),
        ("ls", bin!("ag-ls"), file, json!({})),
        ("todo", bin!("ag-todo"), file, json!({"action": "list"})),
        ("git", bin!("ag-git"), repo, json!({"action": "status"})),
        ("notify", bin!("ag-notify"), file, json!({"message": "hi"})),
    ]
}

/// Runs one call in a fresh directory: its result and the files left.
fn outcome(bin: &str, setup: fn(&Env), arguments: &Value) -> (Value, Vec<(String, String)>) {
    let env = Env::new();
    setup(&env);
    let mut c = env.cmd(bin);
    if bin.ends_with("ag-todo") {
        c.args(["--file", "todo.json"]);
    }
    let line = json!({"id": "t", "arguments": arguments}).to_string() + "\n";
    let r = run(c, Some(line.as_bytes()));
    let mut result = r.json();
    // Paths of the temporary directory differ from run to run.
    let shown = env.path().display().to_string();
    let text = result.to_string().replace(&shown, "<dir>");
    result = serde_json::from_str(&text).unwrap();
    let mut files = Vec::new();
    for entry in std::fs::read_dir(env.path()).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if entry.path().is_file() {
            files.push((
                name,
                std::fs::read_to_string(entry.path()).unwrap_or_default(),
            ));
        }
    }
    files.sort();
    (result, files)
}

/// The empty values that apply to a field of this schema.
fn empties(field: &Value) -> Vec<Value> {
    let mut out = vec![Value::Null];
    let types: Vec<&str> = match field.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    for t in types {
        out.push(match t {
            "string" => json!(""),
            "boolean" => json!(false),
            "integer" | "number" => json!(0),
            "array" => json!([]),
            "object" => json!({}),
            _ => continue,
        });
    }
    out
}

/// Fields whose empty value is a real choice, so sending it is not the same
/// call as leaving the field out: the schema says so (see lib/tool_protocol/lenient.rs).
const MEANINGFUL: &[(&str, &str, &str)] = &[
    ("patch", "strip", "0"),
    ("grep", "case_sensitive", "false"),
    ("grep", "context", "0"),
];

#[test]
fn every_optional_field_sent_empty_is_the_call_without_it() {
    let mut tried = 0;
    let mut kept = Vec::new();
    for (name, bin, setup, minimal) in tools() {
        let schema: Value = {
            let env = Env::new();
            let mut c = env.cmd(bin);
            c.arg("--schema");
            run(c, None).json()
        };
        let params = &schema["parameters"];
        let required: Vec<&str> = params["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let (baseline, files) = outcome(bin, setup, &minimal);
        assert_eq!(baseline["is_error"], false, "{name}: {baseline}");
        for (field, spec) in params["properties"].as_object().unwrap() {
            if required.contains(&field.as_str()) || minimal.get(field).is_some() {
                continue;
            }
            for empty in empties(spec) {
                let meaningful = meaningful(spec, &empty);
                if meaningful {
                    kept.push((name.to_string(), field.clone(), empty.to_string()));
                    continue;
                }
                let mut call = minimal.clone();
                call[field] = empty.clone();
                let (got, got_files) = outcome(bin, setup, &call);
                tried += 1;
                assert_eq!(
                    (&got["is_error"], &got["output"]),
                    (&baseline["is_error"], &baseline["output"]),
                    "{name}: `{field}: {empty}` was not taken as absent: {call}"
                );
                assert_eq!(got_files, files, "{name}: `{field}: {empty}`: {call}");
            }
        }
    }
    let expected: Vec<(String, String, String)> = MEANINGFUL
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    assert_eq!(
        kept, expected,
        "the fields whose empty value means something"
    );
    assert!(tried > 60, "only {tried} empty fields tried");
}

/// Whether the schema makes an empty value a real choice: a 0 its minimum
/// allows (and its default is not), or a valid value that differs from the
/// field's declared default.
fn meaningful(spec: &Value, empty: &Value) -> bool {
    if empty.is_null() {
        return false;
    }
    if spec["enum"].as_array().is_some_and(|e| !e.contains(empty)) {
        return false;
    }
    if *empty == json!(0) {
        let allowed = spec.get("minimum").and_then(Value::as_f64).unwrap_or(0.0) <= 0.0
            && spec.get("exclusiveMinimum").is_none();
        return allowed && spec.get("default").and_then(Value::as_f64) != Some(0.0);
    }
    spec.get("default").is_some_and(|d| d != empty)
}

#[test]
fn strings_that_read_as_one_number_or_boolean_are_taken() {
    let env = Env::new();
    env.write("a.txt", "1\n2\n3\n4\n");
    let line = json!({"arguments": {"file_path": "a.txt", "offset": "2", "limit": "2"}});
    let r = run(
        env.cmd(bin!("ag-read")),
        Some(format!("{line}\n").as_bytes()),
    );
    let out = r.json();
    assert_eq!(out["is_error"], false, "{out}");
    let text = out["output"].as_str().unwrap();
    assert!(
        text.contains("2\t2") && text.contains("3\t3") && !text.contains("4\t4"),
        "{text}"
    );
    // "two" reads as no number: refused, naming the field, with a call that works.
    let line = json!({"arguments": {"file_path": "a.txt", "limit": "two"}});
    let out = run(
        env.cmd(bin!("ag-read")),
        Some(format!("{line}\n").as_bytes()),
    )
    .json();
    assert_eq!(out["is_error"], true, "{out}");
    let text = out["output"].as_str().unwrap();
    assert!(text.contains("/limit"), "{text}");
    assert!(text.contains("`limit` takes <integer >= 1>"), "{text}");
}

#[test]
fn a_faulty_list_is_shown_its_shape_not_a_call_that_drops_it() {
    let env = Env::new();
    let line = json!({"arguments": {"action": "set", "items": ["write tests"]}});
    let mut c = env.cmd(bin!("ag-todo"));
    c.args(["--file", "todo.json"]);
    let out = run(c, Some(format!("{line}\n").as_bytes())).json();
    assert_eq!(out["is_error"], true, "{out}");
    let text = out["output"].as_str().unwrap();
    assert!(
        text.contains(r#"`items` takes [{"content": <string>, ...}, ...]"#),
        "{text}"
    );
    // Without `items`, `set` would clear the list: not a call to suggest.
    assert!(!text.contains("A call that works"), "{text}");
}

#[test]
fn an_unknown_field_is_named_with_a_call_that_works() {
    let env = Env::new();
    env.write("a.txt", "x\n");
    let line = json!({"arguments": {"file_path": "a.txt", "colour": "red", "explanation": "why"}});
    let out = run(
        env.cmd(bin!("ag-read")),
        Some(format!("{line}\n").as_bytes()),
    )
    .json();
    assert_eq!(out["is_error"], true, "{out}");
    let text = out["output"].as_str().unwrap();
    assert!(text.contains("colour"), "{text}");
    assert!(!text.contains("explanation"), "{text}");
    assert!(
        text.contains(r#"A call that works: {"file_path":"a.txt"}"#),
        "{text}"
    );
}

#[test]
fn parameter_names_as_values_are_refused_as_such() {
    let env = Env::new();
    env.write("a.txt", "old_string\n");
    let line = json!({"arguments": {"file_path": "a.txt", "old_string": "old_string", "new_string": "new_string"}});
    let out = run(
        env.cmd(bin!("ag-edit")),
        Some(format!("{line}\n").as_bytes()),
    )
    .json();
    assert_eq!(out["is_error"], true, "{out}");
    let text = out["output"].as_str().unwrap();
    assert!(text.contains("`old_string` and `new_string`"), "{text}");
    assert!(text.contains("own names"), "{text}");
    assert_eq!(env.read("a.txt"), b"old_string\n");
}

/// An ag-bash call that must be refused; its message.
fn refused_bash(env: &Env, arguments: Value) -> String {
    let line = json!({ "arguments": arguments });
    let out = run(
        env.cmd(bin!("ag-bash")),
        Some(format!("{line}\n").as_bytes()),
    )
    .json();
    assert_eq!(out["is_error"], true, "{out}");
    out["output"].as_str().unwrap().to_string()
}

#[test]
fn bash_names_the_fields_of_a_conflict_and_shows_calls_that_work() {
    let env = Env::new();
    let text = refused_bash(&env, json!({"command": "ls", "job": "3"}));
    assert!(text.contains("`command` \"ls\" and `job` \"3\""), "{text}");
    assert!(
        text.contains(r#"{"command":"ls"}"#) && text.contains(r#"{"job":"3"}"#),
        "{text}"
    );
    let text = refused_bash(&env, json!({"list_jobs": false, "job": ""}));
    assert!(
        text.contains("`command`") && text.contains("nothing to do"),
        "{text}"
    );
}

/// The call Qwen2.5-Coder-1.5B repeated five times on llama.cpp
/// (2026-11-23): `stop: true` beside the command it meant to run. The error
/// shows the call that runs it.
#[test]
fn stop_beside_a_command_shows_the_call_that_runs_the_command() {
    let env = Env::new();
    let text = refused_bash(
        &env,
        json!({"command": "python3 test_calc.py", "timeout": 180, "raw": true, "stop": true}),
    );
    assert!(text.contains("`stop: true`"), "{text}");
    assert!(
        text.contains(r#"leave `stop` out: {"command":"python3 test_calc.py"}"#),
        "{text}"
    );
}

#[test]
fn a_hash_ag_did_not_make_is_refused_as_such_and_an_empty_one_is_absent() {
    for (bin, args) in [
        (
            bin!("ag-edit"),
            json!({"file_path": "calc.py", "old_string": "n)", "new_string": "n + 1)"}),
        ),
        (
            bin!("ag-write"),
            json!({"file_path": "calc.py", "content": "x\n"}),
        ),
        (bin!("ag-delete"), json!({"path": "calc.py"})),
    ] {
        for placeholder in ["...", "not provided", "hash_geometry.py", "xxh3:12"] {
            let env = Env::new();
            env.write("calc.py", "range(1, n)\n");
            let mut call = args.clone();
            call["expected_hash"] = json!(placeholder);
            let line = json!({"arguments": call}).to_string() + "\n";
            let out = run(env.cmd(bin), Some(line.as_bytes())).json();
            let text = out["output"].as_str().unwrap();
            assert_eq!(out["is_error"], true, "{bin} {placeholder}: {out}");
            assert!(text.contains("not a hash that ag made"), "{text}");
            assert!(text.contains("Omit `expected_hash`"), "{text}");
            assert!(!text.contains("changed since"), "{text}");
            assert_eq!(env.read("calc.py"), b"range(1, n)\n");
        }
        let env = Env::new();
        env.write("calc.py", "range(1, n)\n");
        let mut call = args.clone();
        call["expected_hash"] = json!("");
        let line = json!({"arguments": call}).to_string() + "\n";
        let out = run(env.cmd(bin), Some(line.as_bytes())).json();
        assert_eq!(out["is_error"], false, "{bin}: {out}");
    }
}

/// The recorded calls, each in a fresh copy of the fixture project.
#[test]
fn the_calls_a_real_small_model_made_are_honoured() {
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/realmodel");
    let calls = std::fs::read_to_string(fixtures.join("calls.jsonl")).unwrap();
    let mut n = 0;
    for line in calls.lines().filter(|l| !l.trim().is_empty()) {
        let call: Value = serde_json::from_str(line).unwrap();
        let tool = call["tool"].as_str().unwrap();
        let env = Env::new();
        for f in ["calc.py", "test_calc.py"] {
            env.write(f, std::fs::read(fixtures.join(f)).unwrap());
        }
        let bin = tools()
            .into_iter()
            .find(|(name, ..)| *name == tool)
            .map(|(_, bin, ..)| bin)
            .unwrap();
        let input = json!({"id": "r", "arguments": call["arguments"]}).to_string() + "\n";
        let out = run(env.cmd(bin), Some(input.as_bytes())).json();
        let text = out["output"].as_str().unwrap();
        if call["arguments"]["expected_hash"] == "..." {
            // A placeholder for a hash the model never saw: refused as such.
            assert_eq!(out["error_code"], "call.invalid_arguments", "{out}");
            assert!(!text.contains("changed since"), "{text}");
        } else {
            assert_eq!(out["is_error"], false, "{}: {out}", call["note"]);
        }
        n += 1;
    }
    assert_eq!(n, 11);
}

fn ag_loop(env: &Env, server: &ModelServer) -> Vec<Value> {
    let mut c = server.ag_loop(env);
    c.args(["--no-gate", "--no-session", "go"]);
    let r = run(c, None);
    r.ok();
    r.json_lines()
}

fn ends(events: &[Value], tool: &str) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e["type"] == "tool_execution_end" && e["tool_name"] == tool)
        .cloned()
        .collect()
}

#[test]
fn ag_loop_runs_the_real_models_bash_call_with_empty_defaults() {
    let env = Env::new();
    env.write("marker.txt", "found it\n");
    let server = ModelServer::start(vec![
        Turn::Tools(vec![(
            "bash",
            json!({"command": "cat marker.txt", "job": "", "list_jobs": false, "stop": false, "timeout": 0, "explanation": "look"}),
        )]),
        Turn::Text("done"),
    ]);
    let events = ag_loop(&env, &server);
    let bash = ends(&events, "bash");
    assert_eq!(bash.len(), 1);
    assert_eq!(bash[0]["is_error"], false, "{}", bash[0]);
    assert!(
        bash[0]["output"].as_str().unwrap().contains("found it"),
        "{}",
        bash[0]
    );
}

#[test]
fn under_ag_loop_the_model_never_sees_expected_hash_and_its_guess_is_dropped() {
    let env = Env::new();
    env.write("calc.py", "for i in range(1, n):\n");
    let server = ModelServer::start(vec![
        Turn::Tools(vec![(
            "read",
            json!({"file_path": "calc.py", "offset": 0, "limit": "0"}),
        )]),
        Turn::Tools(vec![(
            "edit",
            json!({"file_path": "calc.py", "old_string": "range(1, n)", "new_string": "range(1, n + 1)",
                   "replace_all": false, "expected_hash": "..."}),
        )]),
        Turn::Tools(vec![(
            "write",
            json!({"file_path": "notes.md", "content": "x\n", "expected_hash": "not provided"}),
        )]),
        Turn::Text("done"),
    ]);
    let events = ag_loop(&env, &server);
    for tool in ["read", "edit", "write"] {
        let end = &ends(&events, tool)[0];
        assert_eq!(end["is_error"], false, "{end}");
    }
    assert_eq!(env.read("calc.py"), b"for i in range(1, n + 1):\n");
    let first = &server.requests()[0];
    let tools = first["tools"].to_string();
    assert!(tools.contains("\"edit\""), "{tools}");
    assert!(
        !tools.contains("expected_hash"),
        "the model was offered expected_hash"
    );
}

/// A foreign tool (a shell script) with a typed schema that writes each
/// call line it receives to `seen.jsonl`, so a test sees what reached it.
fn echo_tool(env: &Env) -> String {
    let def = json!({"name": "echo_args", "label": "echo", "description": "echoes its call",
    "parameters": {"type": "object", "additionalProperties": false, "properties": {
        "count": {"type": "integer", "minimum": 1},
        "verbose": {"type": "boolean"},
        "tag": {"type": "string"}
    }}});
    let seen = env.join("seen.jsonl");
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = --schema ]; then echo '{def}'; exit 0; fi\nwhile read -r line; do\n\
         printf '%s\\n' \"$line\" >> '{}'\necho '{{\"output\":\"ok\",\"is_error\":false}}'\ndone\n",
        seen.display()
    );
    let path = env.write("tools/echo_args", script);
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path.display().to_string()
}

/// The arguments of the calls the echo tool received.
fn seen(env: &Env) -> Vec<Value> {
    String::from_utf8(env.read("seen.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["arguments"].clone())
        .collect()
}

#[test]
fn ag_mcp_hands_a_foreign_tool_the_normalized_call() {
    let env = Env::new();
    let tool = echo_tool(&env);
    let (mut s, _) = crate::mcp::Session::ready(&env, &["--tools", "none", "--tool", &tool]);
    let r = s.call(
        2,
        "echo_args",
        json!({"count": "3", "verbose": false, "tag": "", "explanation": "why"}),
    );
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(seen(&env), vec![json!({"count": 3})]);
    let r = s.call(3, "echo_args", json!({"count": "three", "colour": "red"}));
    assert_eq!(r["isError"], true, "{r}");
    let t = crate::mcp::text(&r);
    assert!(
        t.contains("colour") && t.contains("`count` takes <integer >= 1>"),
        "{t}"
    );
    assert_eq!(seen(&env).len(), 1, "a refused call reached the tool");
}

#[test]
fn ag_loop_hands_a_foreign_tool_the_normalized_call() {
    let env = Env::new();
    let tool = echo_tool(&env);
    let server = ModelServer::start(vec![
        Turn::Tools(vec![(
            "echo_args",
            json!({"count": "0", "verbose": "true", "tag": null, "explanation": ""}),
        )]),
        Turn::Text("done"),
    ]);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["-m", "ollama/scripted", "--base-url", &server.base_url()]);
    c.args([
        "--json",
        "--no-gate",
        "--no-session",
        "--tools",
        "chat",
        "--tool",
        &tool,
        "go",
    ]);
    let r = run(c, None);
    r.ok();
    let end = &ends(&r.json_lines(), "echo_args")[0];
    assert_eq!(end["is_error"], false, "{end}");
    assert_eq!(seen(&env), vec![json!({"verbose": true})]);
}
