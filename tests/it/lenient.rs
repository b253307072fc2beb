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

/// Under ag-loop ag-bash's advice names the tools the model sees and
/// their calls (`job_list`, `job_output` with the job's own id), never a
/// field of the binary's modes that the model was not shown (`list_jobs`,
/// `stop`), and leaves out the tools this run does not offer.
#[test]
fn job_advice_names_the_tools_the_model_has() {
    let run_with = |tools: &str, calls: Vec<(&'static str, Value)>| -> Vec<String> {
        let env = Env::new();
        let n = calls.len();
        let mut turns: Vec<Turn> = calls.into_iter().map(|c| Turn::Tools(vec![c])).collect();
        turns.push(Turn::Text("done"));
        let server = ModelServer::start(turns);
        let mut c = server.ag_loop(&env);
        c.args(["--no-gate", "--no-session", "--tools", tools, "go"]);
        let r = run(c, None);
        r.ok();
        let texts: Vec<String> = ends(&r.json_lines(), "bash")
            .iter()
            .map(|e| e["output"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(texts.len(), n, "{texts:?}");
        for t in &texts {
            for field in ["list_jobs", "stop=", "job=", "\"stop\""] {
                assert!(!t.contains(field), "`{field}` named: {t}");
            }
        }
        texts
    };
    let all = run_with(
        "bash",
        vec![
            ("job_output", json!({"job": "99"})),
            ("job_stop", json!({"job": "x1"})),
            ("bash_background", json!({"command": "sleep 30"})),
            ("job_list", json!({})),
            ("job_stop", json!({"job": "all"})),
        ],
    );
    assert!(
        all[0].contains("there is no job 99; `job_list` {} lists the jobs"),
        "{}",
        all[0]
    );
    assert!(
        all[1].contains("`x1` is not a job id; job ids are numbers (`job_list` {} lists them)"),
        "{}",
        all[1]
    );
    assert!(
        all[2].contains(
            r#"See its output with `job_output` {"job":"1"}, stop it with `job_stop` {"job":"1"}."#
        ),
        "{}",
        all[2]
    );
    assert!(
        all[3].contains(r#"See its output with `job_output` {"job":"1"}"#),
        "{}",
        all[3]
    );
    // Without job_list and job_stop, nothing names them.
    let some = run_with(
        "bash_background,job_output",
        vec![
            ("job_output", json!({"job": "99"})),
            ("bash_background", json!({"command": "sleep 30"})),
        ],
    );
    assert!(some[0].contains("there is no job 99"), "{}", some[0]);
    assert!(
        some[1].contains(r#"See its output with `job_output` {"job":"1"}."#),
        "{}",
        some[1]
    );
    for t in &some {
        assert!(!t.contains("job_list") && !t.contains("job_stop"), "{t}");
    }
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

/// What a field from another mode of a tool does to a call: set aside with
/// a note that names it, or refused with a message that holds this text.
#[derive(Clone, Copy)]
enum Foreign {
    Aside,
    Refused(&'static str),
}

/// Every mode of every tool that has modes: its name, a call that works in
/// it, the fields that call's mode uses or that choose the mode, and for
/// each other field of the schema a value and what it does beside the call.
type ModeCase = (
    &'static str,
    Value,
    &'static [&'static str],
    Vec<(&'static str, Value, Foreign)>,
);

/// A tool with modes: its name, its binary, its set-up, its modes.
type ModedTool = (&'static str, &'static str, fn(&Env), Vec<ModeCase>);

fn modes() -> Vec<ModedTool> {
    use Foreign::{Aside, Refused};
    fn none(_: &Env) {}
    fn repo(env: &Env) {
        env.write("a.txt", "one\n");
        for args in [
            &["init", "-q"][..],
            &["add", "."],
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "first",
            ],
        ] {
            let mut c = env.cmd("git");
            c.args(args);
            run(c, None).ok();
        }
        env.write("a.txt", "two\n");
    }
    let run_fields: &[&str] = &[
        "command",
        "timeout",
        "cwd",
        "stdin",
        "raw",
        "max_output",
        "shell",
        "background",
    ];
    vec![
        (
            "bash",
            bin!("ag-bash"),
            none,
            vec![
                (
                    "run",
                    json!({"command": "echo hi"}),
                    run_fields,
                    vec![
                        ("keep", json!(true), Aside),
                        ("list_jobs", json!(true), Aside),
                        ("lines", json!(5), Aside),
                        ("job", json!("1"), Refused("a call does one of them")),
                        ("stop", json!(true), Refused("leave `stop` out")),
                    ],
                ),
                (
                    "background",
                    json!({"command": "echo hi", "background": true}),
                    &["command", "background", "keep", "cwd", "shell"],
                    vec![
                        ("timeout", json!(5), Aside),
                        ("stdin", json!("x"), Aside),
                        ("raw", json!(true), Aside),
                        ("max_output", json!(2048), Aside),
                        ("list_jobs", json!(true), Aside),
                        ("lines", json!(5), Aside),
                        ("job", json!("1"), Refused("a call does one of them")),
                        ("stop", json!(true), Refused("leave `stop` out")),
                    ],
                ),
                (
                    "list_jobs",
                    json!({"list_jobs": true}),
                    &["list_jobs", "command", "job"],
                    vec![
                        ("timeout", json!(5), Aside),
                        ("cwd", json!("."), Aside),
                        ("stdin", json!("x"), Aside),
                        ("raw", json!(true), Aside),
                        ("max_output", json!(2048), Aside),
                        ("shell", json!("sh"), Aside),
                        ("background", json!(true), Aside),
                        ("keep", json!(true), Aside),
                        ("lines", json!(5), Aside),
                        ("stop", json!(true), Refused("without `job`")),
                    ],
                ),
                (
                    "job",
                    json!({"job": "<started>"}),
                    &["job", "stop", "lines", "raw", "command"],
                    vec![
                        ("timeout", json!(5), Aside),
                        ("cwd", json!("."), Aside),
                        ("stdin", json!("x"), Aside),
                        ("max_output", json!(2048), Aside),
                        ("shell", json!("sh"), Aside),
                        ("background", json!(true), Aside),
                        ("keep", json!(true), Aside),
                        ("list_jobs", json!(true), Aside),
                    ],
                ),
            ],
        ),
        (
            "git",
            bin!("ag-git"),
            repo,
            vec![
                (
                    "commit",
                    json!({"action": "commit", "message": "two", "paths": ["a.txt"]}),
                    &["action", "message", "paths"],
                    vec![("staged", json!(true), Aside), ("count", json!(1), Aside)],
                ),
                (
                    "status",
                    json!({"action": "status"}),
                    &["action", "paths"],
                    vec![
                        ("message", json!("two"), Aside),
                        ("staged", json!(true), Aside),
                        ("count", json!(1), Aside),
                    ],
                ),
                (
                    "diff",
                    json!({"action": "diff"}),
                    &["action", "paths", "staged"],
                    vec![("message", json!("two"), Aside), ("count", json!(1), Aside)],
                ),
                (
                    "log",
                    json!({"action": "log"}),
                    &["action", "paths", "count"],
                    vec![
                        ("message", json!("two"), Aside),
                        ("staged", json!(true), Aside),
                    ],
                ),
            ],
        ),
        (
            "todo",
            bin!("ag-todo"),
            none,
            vec![
                (
                    "list",
                    json!({"action": "list"}),
                    &["action"],
                    vec![
                        ("items", json!([{"content": "a"}]), Aside),
                        ("id", json!(1), Aside),
                        ("status", json!("done"), Aside),
                        ("content", json!("a"), Aside),
                    ],
                ),
                (
                    "add",
                    json!({"action": "add", "items": [{"content": "a"}]}),
                    &["action", "items"],
                    vec![
                        ("id", json!(1), Aside),
                        ("status", json!("done"), Aside),
                        ("content", json!("a"), Aside),
                    ],
                ),
                (
                    "set",
                    json!({"action": "set", "items": [{"content": "a"}]}),
                    &["action", "items"],
                    vec![
                        ("id", json!(1), Aside),
                        ("status", json!("done"), Aside),
                        ("content", json!("a"), Aside),
                    ],
                ),
                (
                    "update",
                    json!({"action": "update", "id": 1, "status": "done"}),
                    &["action", "id", "status", "content"],
                    vec![("items", json!([{"content": "b"}]), Aside)],
                ),
                (
                    "remove",
                    json!({"action": "remove", "id": 1}),
                    &["action", "id"],
                    vec![
                        ("items", json!([{"content": "b"}]), Aside),
                        (
                            "status",
                            json!("done"),
                            Refused(r#"{"action":"update","id":1,"status":"done"}"#),
                        ),
                        (
                            "content",
                            json!("b"),
                            Refused(r#"{"action":"update","id":1,"content":"b"}"#),
                        ),
                    ],
                ),
            ],
        ),
    ]
}

/// Sends one call to a tool binary in `env`.
fn call_in(env: &Env, bin: &str, arguments: &Value) -> Value {
    let mut c = env.cmd(bin);
    for (k, v) in [
        ("GIT_AUTHOR_NAME", "t"),
        ("GIT_AUTHOR_EMAIL", "t@t"),
        ("GIT_COMMITTER_NAME", "t"),
        ("GIT_COMMITTER_EMAIL", "t@t"),
    ] {
        c.env(k, v);
    }
    if bin.ends_with("ag-todo") {
        c.args(["--file", "todo.json"]);
    }
    let line = json!({"id": "t", "arguments": arguments}).to_string() + "\n";
    run(c, Some(line.as_bytes())).json()
}

/// A fresh directory for one call of a mode: the tool's set-up, a todo
/// list with item 1, a finished background job whose id the call names.
fn mode_env(tool: &str, setup: fn(&Env), call: &mut Value) -> Env {
    let env = Env::new();
    setup(&env);
    if tool == "todo" {
        let out = call_in(
            &env,
            bin!("ag-todo"),
            &json!({"action": "set", "items": [{"content": "a"}]}),
        );
        assert_eq!(out["is_error"], false, "{out}");
    }
    if call.get("job").is_some() {
        let out = call_in(
            &env,
            bin!("ag-bash"),
            &json!({"command": "echo hi", "background": true}),
        );
        assert_eq!(out["is_error"], false, "{out}");
        call["job"] = out["details"]["job"].clone();
    }
    env
}

#[test]
fn every_field_of_another_mode_is_set_aside_with_a_note_or_refused() {
    let mut tried = 0;
    for (tool, bin, setup, cases) in modes() {
        let schema = {
            let env = Env::new();
            let mut c = env.cmd(bin);
            c.arg("--schema");
            run(c, None).json()
        };
        let fields: Vec<String> = schema["parameters"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        for (mode, call, own, foreign) in cases {
            // The table covers every field of the schema in every mode.
            for f in &fields {
                let covered = own.contains(&f.as_str()) || foreign.iter().any(|(n, ..)| n == f);
                assert!(covered, "{tool} {mode}: the table leaves out `{f}`");
            }
            let mut base = call.clone();
            let env = mode_env(tool, setup, &mut base);
            let out = call_in(&env, bin, &base);
            assert_eq!(out["is_error"], false, "{tool} {mode}: {out}");
            for (field, value, expect) in foreign {
                let mut call = call.clone();
                call[field] = value.clone();
                let env = mode_env(tool, setup, &mut call);
                let out = call_in(&env, bin, &call);
                let text = out["output"].as_str().unwrap_or_default();
                tried += 1;
                match expect {
                    Foreign::Aside => {
                        assert_eq!(out["is_error"], false, "{tool} {mode} `{field}`: {out}");
                        assert!(
                            text.contains("Set aside `") && text.contains(&format!("`{field}")),
                            "{tool} {mode} `{field}`: the note does not name it: {text}"
                        );
                    }
                    Foreign::Refused(why) => {
                        assert_eq!(out["is_error"], true, "{tool} {mode} `{field}`: {out}");
                        assert!(text.contains(why), "{tool} {mode} `{field}`: {text}");
                    }
                }
            }
        }
    }
    assert!(tried >= 45, "only {tried} fields tried");
}

/// The second round of calls Qwen2.5-Coder-1.5B made on llama.cpp
/// (tests/fixtures/realmodel/calls-2.jsonl), each replayed through the
/// scripted model server, ag-loop and the real tool binaries in a fresh
/// project (a git repository with a staged change, recorded as /work/repo).
/// A call whose intent is clear lands, with a note that names what was set
/// aside; the two that are not (an edit of a file named like a constant, a
/// patch with no hunks) are refused with advice that fits, and nothing
/// ever shows an example the model did not write.
#[test]
fn the_second_rounds_calls_land_and_say_what_was_set_aside() {
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/realmodel");
    let calls = std::fs::read_to_string(fixtures.join("calls-2.jsonl")).unwrap();
    let mut n = 0;
    for line in calls.lines().filter(|l| !l.trim().is_empty()) {
        let call: Value = serde_json::from_str(line).unwrap();
        let tool: &'static str = ["git", "bash", "edit", "patch"]
            .into_iter()
            .find(|t| call["tool"] == *t)
            .unwrap_or_else(|| panic!("no expectation for {}", call["tool"]));
        let env = Env::new();
        for f in ["calc.py", "test_calc.py"] {
            env.write(f, std::fs::read(fixtures.join(f)).unwrap());
        }
        env.write("notes.md", "notes\n");
        for args in [
            &["init", "-q"][..],
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "add",
                "calc.py",
            ],
        ] {
            let mut c = env.cmd("git");
            c.args(args);
            run(c, None).ok();
        }
        let project = env.path().display().to_string();
        let arguments: Value = serde_json::from_str(
            &call["arguments"]
                .to_string()
                .replace("/work/repo", &project),
        )
        .unwrap();
        let server = ModelServer::start(vec![
            Turn::Tools(vec![(tool, arguments.clone())]),
            Turn::Text("done"),
        ]);
        let mut c = server.ag_loop(&env);
        c.env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t");
        // The edit's advice names grep, which the model then has too.
        let tools = if tool == "edit" { "edit,grep" } else { tool };
        c.args(["--no-gate", "--no-session", "--tools", tools, "go"]);
        let r = run(c, None);
        r.ok();
        let end = &ends(&r.json_lines(), tool)[0];
        let text = end["output"].as_str().unwrap();
        let note = call["note"].as_str().unwrap();
        for foreign in ["Fix the parser", "parser.rs", "<server>", "<id>"] {
            let own = arguments.to_string().contains(foreign);
            assert!(own || !text.contains(foreign), "{note}: {text}");
        }
        match tool {
            "git" | "bash" => {
                assert_eq!(end["is_error"], false, "{note}: {end}");
                for (field, value) in arguments.as_object().unwrap() {
                    let aside = matches!(
                        (tool, field.as_str()),
                        ("git", "staged" | "count") | ("bash", "keep" | "list_jobs")
                    );
                    if aside {
                        assert!(
                            text.contains(&format!("`{field}: {value}`")),
                            "{note}: `{field}` is not named as set aside: {text}"
                        );
                    }
                }
                assert!(text.contains("Set aside `"), "{note}: {text}");
                // `git` is offered as one tool per action: the call ran as
                // the one its action names, and the note says which.
                if tool == "git" {
                    assert!(
                        text.contains("this call ran as `git_commit` {\"message\":"),
                        "{note}: {text}"
                    );
                }
            }
            "edit" => {
                assert_eq!(end["is_error"], true, "{note}: {end}");
                assert!(
                    text.contains(r#"grep {"query":"TIMEOUT_SECONDS"}"#),
                    "{note}: {text}"
                );
                assert!(!text.contains("use write"), "{note}: {text}");
            }
            "patch" => {
                assert_eq!(end["is_error"], true, "{note}: {end}");
                assert!(text.contains("has no hunks"), "{note}: {text}");
                assert_eq!(env.read("notes.md"), b"notes\n");
            }
            other => panic!("no expectation for {other}"),
        }
        if tool == "git" {
            let mut c = env.cmd("git");
            c.args(["log", "--format=%s"]);
            let subject = run(c, None).stdout();
            assert_eq!(
                subject.trim(),
                arguments["message"].as_str().unwrap(),
                "{note}"
            );
        }
        n += 1;
    }
    assert_eq!(n, 9);
}

/// The JSON objects written inside a text: every `{` where a JSON object
/// starts.
fn json_objects(text: &str) -> Vec<Value> {
    text.char_indices()
        .filter(|(_, c)| *c == '{')
        .filter_map(|(i, _)| {
            serde_json::Deserializer::from_str(&text[i..])
                .into_iter::<Value>()
                .next()
                .and_then(Result::ok)
                .filter(Value::is_object)
        })
        .collect()
}

/// The strings and numbers a JSON value holds, keys left out.
fn leaves(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Object(m) => m.values().for_each(|x| leaves(x, out)),
        Value::Array(a) => a.iter().for_each(|x| leaves(x, out)),
        Value::String(_) | Value::Number(_) => out.push(v.clone()),
        _ => {}
    }
}

/// The values a schema itself names: its enums' and consts' values.
fn schema_values(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("enum", Value::Array(a)) => out.extend(a.iter().cloned()),
                    ("const", x) => out.push(x.clone()),
                    _ => schema_values(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| schema_values(x, out)),
        _ => {}
    }
}

/// Every string a JSON value holds.
fn texts(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => m.values().for_each(|x| texts(x, out)),
        Value::Array(a) => a.iter().for_each(|x| texts(x, out)),
        Value::String(s) => out.push(s.clone()),
        _ => {}
    }
}

/// Fails when a call-shaped snippet in `text` holds a value that is
/// neither the caller's own nor one the schema names.
fn check_examples(whose: &str, text: &str, allowed: &[Value]) {
    for object in json_objects(text) {
        let mut got = Vec::new();
        leaves(&object, &mut got);
        for v in got {
            assert!(
                allowed.contains(&v),
                "{whose}: the example {object} shows {v}, a value the caller never sent: {text}"
            );
        }
    }
}

/// What every tool's `--schema` says, and what ag-loop sends the model
/// (its system prompt and its tools), shows no call with invented values.
#[test]
fn no_description_a_model_sees_shows_a_call_with_invented_values() {
    let mut all_enums = Vec::new();
    for (name, bin, ..) in tools() {
        let env = Env::new();
        let mut c = env.cmd(bin);
        c.arg("--schema");
        let schema = run(c, None).json();
        let mut allowed = Vec::new();
        schema_values(&schema["parameters"], &mut allowed);
        all_enums.extend(allowed.iter().cloned());
        let mut strings = Vec::new();
        texts(&schema, &mut strings);
        for s in strings {
            check_examples(&format!("{name} --schema"), &s, &allowed);
        }
    }
    let env = Env::new();
    let server = ModelServer::start(vec![Turn::Text("done")]);
    let mut c = server.ag_loop(&env);
    // Every tool ag-loop offers: the default set and ag-bash's job tools.
    c.args(["--no-gate", "--no-session", "--tools", "minimal,bash", "go"]);
    run(c, None).ok();
    let request = &server.requests()[0];
    let mut strings = Vec::new();
    texts(&request["messages"][0], &mut strings);
    texts(&request["tools"], &mut strings);
    assert!(!strings.is_empty(), "{request}");
    for s in strings {
        check_examples("ag-loop's request", &s, &all_enums);
    }
}

/// Bad calls of every kind: each refusal's examples use the caller's own
/// values (or the schema's), never invented ones.
#[test]
fn no_error_shows_a_call_with_invented_values() {
    let patch = "*** Begin Patch\n*** Update File: a.txt\n*** End Patch";
    let calls: Vec<(&str, Value)> = vec![
        ("git", json!({"action": "commit", "paths": ["a.txt"]})),
        ("git", json!({"action": "commit", "message": "m"})),
        ("git", json!({"action": "push"})),
        ("git", json!({"action": "status", "message": "m"})),
        ("bash", json!({"command": "ls", "job": "3"})),
        ("bash", json!({"command": "ls", "stop": true})),
        ("bash", json!({"stop": true})),
        ("bash", json!({})),
        ("bash", json!({"command": "ls", "cwd": "nowhere"})),
        ("bash", json!({"command": "ls", "timeout": "soon"})),
        ("edit", json!({"file_path": "a.txt"})),
        (
            "edit",
            json!({"file_path": "src/TIMEOUT_SECONDS", "old_string": "30", "new_string": "45"}),
        ),
        (
            "edit",
            json!({"file_path": "a.txt", "old_string": "zzz", "new_string": "y"}),
        ),
        (
            "edit",
            json!({"file_path": "a.txt", "code_edit": "x", "old_string": "one", "new_string": "y"}),
        ),
        (
            "edit",
            json!({"file_path": "a.txt", "old_string": "old_string", "new_string": "new_string"}),
        ),
        ("read", json!({"file_path": "missing.txt"})),
        (
            "read",
            json!({"file_path": "a.txt", "limit": "two", "colour": "red"}),
        ),
        ("write", json!({"content": "x"})),
        ("delete", json!({"path": "missing.txt"})),
        ("patch", json!({"patch": patch})),
        ("grep", json!({"query": "("})),
        ("find", json!({"pattern": "[", "path": "nowhere"})),
        ("ls", json!({"path": "nowhere"})),
        ("todo", json!({"action": "add"})),
        ("todo", json!({"action": "add", "content": "ship it"})),
        ("todo", json!({"action": "update", "id": 1})),
        ("todo", json!({"action": "update", "status": "done"})),
        ("todo", json!({"action": "remove", "id": 1, "content": "b"})),
        ("todo", json!({"action": "set", "items": ["write tests"]})),
        ("notify", json!({})),
    ];
    let mut refused = 0;
    for (tool, call) in calls {
        let (_, bin, setup, _) = tools().into_iter().find(|(n, ..)| *n == tool).unwrap();
        let env = Env::new();
        setup(&env);
        let out = call_in(&env, bin, &call);
        let text = out["output"].as_str().unwrap_or_default();
        if out["is_error"] == true {
            refused += 1;
        }
        let schema = {
            let mut c = env.cmd(bin);
            c.arg("--schema");
            run(c, None).json()
        };
        let mut allowed = Vec::new();
        leaves(&call, &mut allowed);
        // A path's last part is the caller's own too (the name grep is
        // pointed at, for an edit of `src/TIMEOUT_SECONDS`).
        let parts: Vec<Value> = allowed
            .iter()
            .filter_map(Value::as_str)
            .filter_map(|s| s.rsplit('/').next())
            .map(Value::from)
            .collect();
        allowed.extend(parts);
        schema_values(&schema["parameters"], &mut allowed);
        check_examples(&format!("{tool} {call}"), text, &allowed);
    }
    assert!(refused >= 25, "only {refused} calls were refused");
}

/// A value for each field of each tool ag-loop offers, that applies in a
/// project with `a.txt` staged in a fresh repository.
fn offered_value(tool: &str, field: &str) -> Option<Value> {
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-one\n+uno\n two\n";
    Some(match (tool, field) {
        ("read", "file_path") => json!("a.txt"),
        ("read", "offset" | "limit") => json!(1),
        ("write", "file_path") => json!("b.txt"),
        ("write", "content") => json!("new\n"),
        ("patch", "patch") => json!(patch),
        ("patch", "dry_run") => json!(true),
        ("patch", "strip") => json!(1),
        ("delete", "path") => json!("b.txt"),
        ("delete", "recursive") => json!(false),
        ("bash" | "bash_background", "command") => json!("sleep 30"),
        ("bash", "timeout") => json!(1),
        ("bash" | "bash_background", "cwd") => json!("."),
        ("bash_background", "keep") => json!(true),
        ("job_output" | "job_stop", "job") => json!("<the job>"),
        ("job_output", "lines") => json!(5),
        ("grep", "query") => json!("two"),
        ("grep" | "find" | "ls", "path") => json!("."),
        ("grep", "literal" | "case_sensitive" | "include_hidden" | "include_ignored") => {
            json!(true)
        }
        ("grep" | "find" | "ls", "follow_symlinks") => json!(true),
        ("grep", "include_pattern") => json!("*.txt"),
        ("grep" | "find", "exclude_pattern") => json!("*.md"),
        ("grep", "context" | "max_matches" | "skip") => json!(1),
        ("find", "pattern") => json!("*.txt"),
        ("find", "sort") => json!("path"),
        ("find" | "ls", "limit") => json!(10),
        ("find" | "ls", "include_hidden" | "include_ignored") => json!(true),
        ("ls", "depth") => json!(1),
        ("todo", "items") => json!([{"content": "a", "status": "in_progress"}]),
        ("git_status" | "git_diff" | "git_log" | "git_commit", "paths") => json!(["a.txt"]),
        ("git_diff", "staged") => json!(true),
        ("git_log", "count") => json!(1),
        ("git_commit", "message") => json!("m"),
        ("notify", "message") => json!("hi"),
        ("notify", "level") => json!("info"),
        // ag-edit's tools, each on a file of its own ("one\ntwo\n").
        ("edit", "file_path") => json!("e1.txt"),
        ("edit", "old_string") => json!("one"),
        ("edit", "new_string") => json!("uno"),
        ("edit", "replace_all") => json!(true),
        ("multi_edit", "file_path") => json!("e2.txt"),
        ("multi_edit", "edits") => json!([
            {"old_string": "one", "new_string": "uno"},
            {"old_string": "two", "new_string": "dos"}
        ]),
        ("edit_lines", "file_path") => json!("e3.txt"),
        ("edit_lines", "line_edits") => {
            json!([{"start_line": 2, "end_line": 2, "replacement": "dos"}])
        }
        ("edit_sketch", "file_path") => json!("e4.txt"),
        ("edit_sketch", "code_edit") => json!("one\nthree\ntwo\n"),
        ("edit_sketch", "instructions") => json!("Add a line."),
        _ => return None,
    })
}

/// What the model sees (issue 34): every field of every tool ag-loop
/// offers applies to every call of it. Each offered tool is called
/// through ag-loop with every field it shows, and the call runs with none
/// set aside or refused. ag-edit's ways of editing (a replacement, several,
/// line numbers, a sketch) are a tool each.
#[test]
fn every_field_of_every_offered_tool_applies_to_its_every_call() {
    let env = Env::new();
    env.write("a.txt", "one\ntwo\n");
    for f in ["e1.txt", "e2.txt", "e3.txt", "e4.txt"] {
        env.write(f, "one\ntwo\n");
    }
    for args in [
        &["init", "-q"][..],
        &["-c", "user.name=t", "-c", "user.email=t@t", "add", "a.txt"],
    ] {
        let mut c = env.cmd("git");
        c.args(args);
        run(c, None).ok();
    }
    let tools = "read,write,edit,patch,delete,bash,grep,find,ls,todo,git,notify";
    // The order matters: what a call needs comes before it.
    let first: &[&str] = &[
        "read",
        "git_status",
        "git_diff",
        "git_commit",
        "git_log",
        "write",
        "delete",
        "patch",
        "grep",
        "find",
        "ls",
        "notify",
        "edit",
        "multi_edit",
        "edit_lines",
        "edit_sketch",
        "bash",
        "bash_background",
        "job_list",
    ];
    let then: &[&str] = &["job_output", "job_stop"];
    // The task list is the session's.
    let in_session: &[&str] = &["todo"];
    let listed = {
        let server = ModelServer::start(vec![Turn::Text("done")]);
        let mut c = server.ag_loop(&env);
        c.args(["--no-gate", "--no-session", "--tools", tools, "go"]);
        run(c, None).ok();
        server.requests()[0]["tools"].as_array().unwrap().clone()
    };
    let offered: Vec<(String, Vec<String>)> = listed
        .iter()
        .map(|t| {
            let f = if t["function"].is_object() {
                &t["function"]
            } else {
                t
            };
            let fields = f["parameters"]["properties"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            (f["name"].as_str().unwrap().to_string(), fields)
        })
        .collect();
    // The table covers every offered tool and every field it shows.
    let names: Vec<&str> = offered.iter().map(|(n, _)| n.as_str()).collect();
    let mut expected: Vec<&str> = first
        .iter()
        .chain(then)
        .chain(in_session)
        .copied()
        .collect();
    expected.sort_unstable();
    let mut got = names.clone();
    got.sort_unstable();
    assert_eq!(got, expected, "the tools offered for {tools}");
    let call = |name: &str, job: Option<&Value>| -> Value {
        let fields = &offered.iter().find(|(n, _)| n == name).unwrap().1;
        let mut args = serde_json::Map::new();
        for f in fields {
            let v = offered_value(name, f)
                .unwrap_or_else(|| panic!("the table leaves out `{f}` of `{name}`"));
            let v = match (f.as_str(), job) {
                ("job", Some(id)) => id.clone(),
                _ => v,
            };
            args.insert(f.clone(), v);
        }
        Value::Object(args)
    };
    let run_calls = |names: &[&str], job: Option<&Value>, session: bool| -> Vec<Value> {
        let mut turns: Vec<Turn> = names
            .iter()
            .map(|n| {
                // The scripted server holds its turns for the test's life.
                let name: &'static str = Box::leak(n.to_string().into_boxed_str());
                Turn::Tools(vec![(name, call(n, job))])
            })
            .collect();
        turns.push(Turn::Text("done"));
        let server = ModelServer::start(turns);
        let mut c = server.ag_loop(&env);
        for (k, v) in [
            ("GIT_AUTHOR_NAME", "t"),
            ("GIT_AUTHOR_EMAIL", "t@t"),
            ("GIT_COMMITTER_NAME", "t"),
            ("GIT_COMMITTER_EMAIL", "t@t"),
        ] {
            c.env(k, v);
        }
        c.args(["--no-gate", "--tools", tools, "go"]);
        if !session {
            c.arg("--no-session");
        }
        let r = run(c, None);
        r.ok();
        let ends: Vec<Value> = r
            .json_lines()
            .into_iter()
            .filter(|e| e["type"] == "tool_execution_end")
            .collect();
        assert_eq!(ends.len(), names.len(), "{ends:?}");
        for (name, end) in names.iter().zip(&ends) {
            let text = end["output"].as_str().unwrap();
            assert_eq!(end["is_error"], false, "{name} {}: {end}", call(name, job));
            for aside in ["Set aside", "ran as", "set aside"] {
                assert!(!text.contains(aside), "{name}: {text}");
            }
        }
        ends
    };
    run_calls(in_session, None, true);
    let ends = run_calls(first, None, false);
    let started = &ends[first.iter().position(|n| *n == "bash_background").unwrap()];
    let job = started["details"]["job"].clone();
    assert!(job.is_string(), "{started}");
    let ends = run_calls(then, Some(&job), false);
    assert!(
        ends[1]["output"].as_str().unwrap().contains("stopped"),
        "{}",
        ends[1]
    );
    // Each edit made its change.
    assert_eq!(env.read("e1.txt"), b"uno\ntwo\n");
    assert_eq!(env.read("e2.txt"), b"uno\ndos\n");
    assert_eq!(env.read("e3.txt"), b"one\ndos\n");
    assert_eq!(env.read("e4.txt"), b"one\nthree\ntwo\n");
    // The commit committed exactly the path it named.
    let mut c = env.cmd("git");
    c.args(["log", "--format=%s", "--name-only"]);
    assert_eq!(run(c, None).stdout().trim(), "m\n\na.txt");
}

/// A call in a binary's own shape runs only as a tool the run offers: with
/// `--tools git_status`, a commit by `git` with `action` (or by
/// `git_status` with its own `action`) is refused and commits nothing; with
/// `--tools basic`, whose `bash` is the command tool alone, a background
/// job is refused and never starts.
#[test]
fn a_call_in_the_binarys_own_shape_runs_only_as_an_offered_tool() {
    let env = Env::new();
    env.write("a.txt", "one\n");
    for args in [
        &["init", "-q"][..],
        &["-c", "user.name=t", "-c", "user.email=t@t", "add", "a.txt"],
    ] {
        let mut c = env.cmd("git");
        c.args(args);
        run(c, None).ok();
    }
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("git", json!({"action": "commit", "message": "m"}))]),
        Turn::Tools(vec![(
            "git_status",
            json!({"action": "commit", "message": "m"}),
        )]),
        Turn::Tools(vec![("git", json!({"action": "status"}))]),
        Turn::Text("done"),
    ]);
    let mut c = server.ag_loop(&env);
    c.args(["--no-gate", "--no-session", "--tools", "git_status", "go"]);
    let r = run(c, None);
    r.ok();
    let git = ends(&r.json_lines(), "git");
    assert_eq!(git.len(), 3, "{git:?}");
    for end in &git[..2] {
        assert_eq!(end["is_error"], true, "{end}");
        let text = end["output"].as_str().unwrap();
        assert!(
            text.contains("`git_commit` call, which is not among the tools here (of ag-git's tools, this run offers git_status); nothing was run"),
            "{text}"
        );
    }
    let mut c = env.cmd("git");
    c.args(["rev-list", "--all"]);
    assert_eq!(run(c, None).stdout().trim(), "", "something was committed");
    // The status it may run lands, with the note that names its tool.
    assert_eq!(git[2]["is_error"], false, "{}", git[2]);
    assert!(
        git[2]["output"]
            .as_str()
            .unwrap()
            .contains("this call ran as `git_status` {}"),
        "{}",
        git[2]
    );

    let marker = env.join("started");
    let server = ModelServer::start(vec![
        Turn::Tools(vec![(
            "bash",
            json!({"command": format!("touch {}", marker.display()), "background": true}),
        )]),
        Turn::Text("done"),
    ]);
    let mut c = server.ag_loop(&env);
    c.args(["--no-gate", "--no-session", "--tools", "basic", "go"]);
    let r = run(c, None);
    r.ok();
    let end = &ends(&r.json_lines(), "bash")[0];
    assert_eq!(end["is_error"], true, "{end}");
    assert!(
        end["output"]
            .as_str()
            .unwrap()
            .contains("`bash_background` call, which is not among the tools here (of ag-bash's tools, this run offers bash)"),
        "{end}"
    );
    assert!(!marker.exists(), "the job ran");
}

/// One call of Qwen2.5-Coder-1.5B in scripts/realmodel's tasks, replayed
/// through the scripted model server and ag-loop with the tools it had
/// (`small`, its default): the call, the project's files, and what the
/// answer must hold and must not.
struct Replayed {
    task: &'static str,
    set: &'static str,
    tool: &'static str,
    arguments: Value,
    files: &'static [(&'static str, &'static str)],
    holds: &'static [&'static str],
    not: &'static [&'static str],
}

/// The calls of the suite's runs (2026-11-26) that ag answered badly, each
/// answered now as its intent needs.
#[test]
fn the_realmodel_suites_calls_get_answers_that_fit() {
    const README: &str = "# mailer\n\nSends the reports every morning.\n\nYou will recieve one email per project.\nReplies go to the team's inbox.\n";
    const APP: &str = "def total(prices):\n    s = 0\n    for p in prices:\n        print(\"DEBUG\", p)\n        s += p\n    return s\n";
    let cases = vec![
        Replayed {
            // "README.md misspells receive": the right word on both sides.
            // It was told the two are the same, five times; the file does
            // not hold that text, and the closest line shows the misspelling.
            // Told that, it repeated the call (2026-11-26, a second run): the
            // hint now gives its own call with the file's spelling.
            task: "fix a typo",
            set: "small",
            tool: "edit",
            arguments: json!({"file_path": "README.md", "old_string": "receive", "new_string": "receive"}),
            files: &[("README.md", README)],
            holds: &[
                "old_string was not found",
                "You will recieve one email",
                r#"line 5 has "recieve", 1 character away from old_string and nowhere else in the file. If that is the text to change, call edit again with old_string "recieve" and new_string "receive"."#,
            ],
            not: &["are the same", "copy old_string exactly"],
        },
        Replayed {
            // The typo fixed by the hint above, the model sent the fix
            // again: the closest text is its own new_string, so the edit is
            // called applied, never "change receive to receive".
            task: "fix a typo",
            set: "small",
            tool: "edit",
            arguments: json!({"file_path": "README.md", "old_string": "recieve", "new_string": "receive"}),
            files: &[(
                "README.md",
                "# mailer\n\nYou will receive one email per project.\n",
            )],
            holds: &[
                r#"line 3 already has new_string "receive""#,
                "looks already applied",
            ],
            not: &["call edit again"],
        },
        Replayed {
            // "Add *.log to .gitignore" (2026-11-26): an edit with an empty
            // old_string, five times, told only to include a neighbouring
            // line. The hint now is that call, with the file's last line.
            task: "ignore log files",
            set: "small",
            tool: "edit",
            arguments: json!({"file_path": ".gitignore", "old_string": "", "new_string": "*.log", "replace_all": true}),
            files: &[(".gitignore", "__pycache__/\n*.pyc\n")],
            holds: &[
                "old_string is empty",
                r#"call edit again with old_string "*.pyc" and new_string "*.pyc\n*.log"."#,
            ],
            not: &[],
        },
        Replayed {
            // "Remove the debug print from app.py" (2026-11-26): the file
            // says print("DEBUG", p); the model wrote single quotes, then
            // copied the · that ag's diff shows for a space. Quotes and all,
            // the hint names the file's text; with the quotes right, the
            // markers are read as the spaces they stand for and it lands.
            task: "remove a debug print",
            set: "small",
            tool: "edit",
            arguments: json!({"file_path": "app.py", "old_string": "print('DEBUG',\u{b7}p)", "new_string": "", "replace_all": true}),
            files: &[("app.py", APP)],
            holds: &[r#"call edit again with old_string "print(\"DEBUG\", p)" and new_string ""."#],
            not: &[],
        },
        Replayed {
            task: "remove a debug print",
            set: "small",
            tool: "edit",
            arguments: json!({"file_path": "app.py", "old_string": "print(\"DEBUG\",\u{b7}p)", "new_string": "", "replace_all": true}),
            files: &[("app.py", APP)],
            holds: &["Replaced 1 occurrence", "that ag's diffs show for a space"],
            not: &["not found"],
        },
        Replayed {
            // The constant taken for a file name, with `basic`, which has no
            // grep: the advice names the grep it can run, through bash.
            task: "change a constant",
            set: "basic",
            tool: "edit",
            arguments: json!({"file_path": "src/TIMEOUT_SECONDS", "old_string": "30", "new_string": "45"}),
            files: &[("config.py", "TIMEOUT_SECONDS = 30\n")],
            holds: &[r#"with bash {"command":"grep -rn TIMEOUT_SECONDS ."}"#],
            not: &["grep {\"query\"", "use write"],
        },
    ];
    for case in cases {
        let env = Env::new();
        for (name, text) in case.files {
            env.write(name, text);
        }
        let server = ModelServer::start(vec![
            Turn::Tools(vec![(case.tool, case.arguments.clone())]),
            Turn::Text("done"),
        ]);
        let mut c = server.ag_loop(&env);
        c.args(["--no-gate", "--no-session", "--tools", case.set, "go"]);
        let r = run(c, None);
        r.ok();
        let end = &ends(&r.json_lines(), case.tool)[0];
        let text = end["output"].as_str().unwrap();
        for h in case.holds {
            assert!(text.contains(h), "{}: `{h}` missing: {text}", case.task);
        }
        for n in case.not {
            assert!(!text.contains(n), "{}: `{n}`: {text}", case.task);
        }
    }
}
