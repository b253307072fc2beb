//! ag-edit's code sketches beyond the scenario folders: the planner
//! fallback against a scripted model server on 127.0.0.1 (by environment,
//! by flag for a whole JSONL session, a bad plan refused), the ag-llm it
//! runs (found beside ag-edit, its request and flags, its failures), and
//! the plain command line.

use serde_json::{Value, json};

use crate::bin;
use crate::model_server::{ModelServer, Turn};
use crate::util::{Env, run, run_args};

const FILE: &str = "def load(path):\n    with open(path) as f:\n        return f.read()\n\n\ndef save(path, text):\n    with open(path, 'w') as f:\n        f.write(text)\n";

/// A sketch whose anchors are not in the file: only a planner places it.
const SKETCH: &str = "# ... existing code ...\ndef save(path, data):\n    with open(path, 'wb') as f:\n        f.write(data)\n";

fn call_line(args: Value) -> String {
    json!({"id": "1", "arguments": args}).to_string() + "\n"
}

#[test]
fn without_a_planner_an_unplaceable_sketch_is_refused() {
    let env = Env::new();
    env.write("io.py", FILE);
    let mut c = env.cmd(bin!("ag-edit"));
    c.env("AG_EDIT_PLANNER", "");
    let r = run(
        c,
        Some(call_line(json!({"file_path": "io.py", "code_edit": SKETCH})).as_bytes()),
    );
    r.ok();
    let res = r.json();
    assert_eq!(res["error_code"], "edit.sketch_unplaced", "{res}");
    let msg = res["output"].as_str().unwrap();
    assert!(msg.contains("its lines 2-4"), "{msg}");
    assert!(msg.contains("`def save(path, data):`"), "{msg}");
    assert_eq!(env.read("io.py"), FILE.as_bytes());
}

#[test]
fn the_planner_places_what_anchors_cannot() {
    let env = Env::new();
    env.write("io.py", FILE);
    let server = ModelServer::start(vec![Turn::Tools(vec![(
        "apply_edits",
        json!({"edits": [{"start_line": 6, "end_line": 8, "replacement":
            "def save(path, data):\n    with open(path, 'wb') as f:\n        f.write(data)\n"}]}),
    )])]);
    let mut c = env.cmd(bin!("ag-edit"));
    c.env("AG_EDIT_PLANNER", "ollama/planner")
        .env("AG_EDIT_PLANNER_BASE_URL", server.base_url());
    let r = run(
        c,
        Some(
            call_line(json!({"file_path": "io.py", "code_edit": SKETCH,
                "instructions": "Write bytes in save."}))
            .as_bytes(),
        ),
    );
    r.ok();
    let res = r.json();
    assert_eq!(res["is_error"], false, "{res}");
    assert_eq!(
        env.read("io.py"),
        FILE.replace(
            "def save(path, text):\n    with open(path, 'w') as f:\n        f.write(text)\n",
            "def save(path, data):\n    with open(path, 'wb') as f:\n        f.write(data)\n"
        )
        .as_bytes()
    );
    assert_eq!(res["details"]["sketch"]["placed_by"], "planner");
    assert!(
        res["output"]
            .as_str()
            .unwrap()
            .contains("the planner model `ollama/planner` chose the lines"),
        "{res}"
    );
    // The planner saw the numbered file, the instruction and the sketch.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let prompt = reqs[0]["messages"].to_string();
    assert!(
        prompt.contains("     6\\tdef save(path, text):"),
        "{prompt}"
    );
    assert!(prompt.contains("Write bytes in save."), "{prompt}");
    assert!(prompt.contains("def save(path, data):"), "{prompt}");
    assert_eq!(reqs[0]["model"], "planner");
}

#[test]
fn planner_flags_apply_to_every_call_and_bad_plans_are_refused() {
    let env = Env::new();
    env.write("io.py", FILE);
    // The first answer writes the marker into the file; the second is a
    // plan in text.
    let server = ModelServer::start(vec![
        Turn::Tools(vec![(
            "apply_edits",
            json!({"edits": [{"start_line": 6, "end_line": 8, "replacement":
                "# ... existing code ...\ndef save(path, data):\n    pass\n"}]}),
        )]),
        Turn::Text(
            "```json\n[{\"start_line\": 7, \"end_line\": 8, \"replacement\": \"    with open(path, 'wb') as f:\\n        f.write(data)\"}]\n```",
        ),
    ]);
    let mut c = env.cmd(bin!("ag-edit"));
    c.env_remove("AG_EDIT_PLANNER").args([
        "--planner",
        "ollama/planner",
        "--planner-base-url",
        &server.base_url(),
    ]);
    let line = call_line(json!({"file_path": "io.py", "code_edit": SKETCH}));
    let r = run(c, Some(format!("{line}{line}").as_bytes()));
    r.ok();
    let out = r.json_lines();
    assert_eq!(out.len(), 2, "{r}");
    assert_eq!(out[0]["error_code"], "edit.sketch_unplaced", "{}", out[0]);
    assert!(
        out[0]["output"].as_str().unwrap().contains("marker line"),
        "{}",
        out[0]
    );
    assert_eq!(out[1]["is_error"], false, "{}", out[1]);
    assert!(String::from_utf8(env.read("io.py")).unwrap().ends_with(
        "def save(path, text):\n    with open(path, 'wb') as f:\n        f.write(data)\n"
    ));
}

/// A stand-in ag-llm that keeps its arguments and stdin beside itself and
/// answers with the files `llm.out`, `llm.err` and `llm.code` there.
const FAKE_LLM: &str = "#!/bin/sh\ndir=$(dirname \"$0\")\nprintf '%s\\n' \"$*\" > \"$dir/llm.args\"\ncat > \"$dir/llm.request\"\ncat \"$dir/llm.out\"\ncat \"$dir/llm.err\" >&2\nexit $(cat \"$dir/llm.code\")\n";

/// A copy of ag-edit in `tools/`, with the stand-in ag-llm beside it when
/// `fake` is set, run with a PATH that holds no ag-llm.
fn edit_in_tools(env: &Env, fake: Option<(&str, &str, i32)>) -> std::process::Command {
    env.write("tools/.keep", "");
    std::fs::copy(bin!("ag-edit"), env.join("tools/ag-edit")).unwrap();
    if let Some((out, err, code)) = fake {
        let script = env.write("tools/ag-llm", FAKE_LLM);
        let mut perm = std::fs::metadata(&script).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
        std::fs::set_permissions(&script, perm).unwrap();
        env.write("tools/llm.out", out);
        env.write("tools/llm.err", err);
        env.write("tools/llm.code", code.to_string());
    }
    let mut c = env.cmd(env.join("tools/ag-edit").to_str().unwrap());
    c.env("PATH", "/usr/bin:/bin")
        .env("AG_EDIT_PLANNER", "ollama/planner")
        .env("AG_EDIT_PLANNER_BASE_URL", "http://127.0.0.1:9/v1");
    c
}

fn sketch_call(c: std::process::Command) -> Value {
    let r = run(
        c,
        Some(call_line(json!({"file_path": "io.py", "code_edit": SKETCH})).as_bytes()),
    );
    r.ok();
    r.json()
}

#[test]
fn the_planner_is_the_ag_llm_beside_ag_edit_fed_the_request_on_stdin() {
    let env = Env::new();
    env.write("io.py", FILE);
    let plan = json!([{"start_line": 6, "end_line": 8, "replacement":
        "def save(path, data):\n    with open(path, 'wb') as f:\n        f.write(data)\n"}]);
    let done = json!({"type": "done", "message": {
        "content": [{"type": "text", "text": plan.to_string()}],
        "stop_reason": "stop"}});
    // Deltas before the answer are skipped; only the last event counts.
    let out = format!(
        "{}\n{}\n{done}\n",
        json!({"type": "start", "model": "ollama/planner"}),
        json!({"type": "text_delta", "index": 0, "delta": "[{"})
    );
    let res = sketch_call(edit_in_tools(&env, Some((&out, "", 0))));
    assert_eq!(res["is_error"], false, "{res}");
    assert_eq!(res["details"]["sketch"]["placed_by"], "planner");
    assert!(String::from_utf8(env.read("io.py")).unwrap().ends_with(
        "def save(path, data):\n    with open(path, 'wb') as f:\n        f.write(data)\n"
    ));
    let args = String::from_utf8(env.read("tools/llm.args")).unwrap();
    assert_eq!(args.trim(), "--json --base-url http://127.0.0.1:9/v1");
    let req: Value = serde_json::from_slice(&env.read("tools/llm.request")).unwrap();
    assert_eq!(req["model"], "ollama/planner");
    assert_eq!(req["tools"][0]["name"], "apply_edits");
    assert!(
        req["messages"]
            .to_string()
            .contains("     6\\tdef save(path, text):"),
        "{req}"
    );
}

#[test]
fn ag_llm_failures_reach_the_caller_and_change_nothing() {
    // An error event: its message is the reason.
    let env = Env::new();
    env.write("io.py", FILE);
    let error = json!({"type": "error", "error": "rate limited by the provider\nretry later",
        "message": {"content": [], "stop_reason": "error"}});
    let res = sketch_call(edit_in_tools(&env, Some((&format!("{error}\n"), "", 1))));
    assert_eq!(res["error_code"], "edit.sketch_unplaced", "{res}");
    let msg = res["output"].as_str().unwrap();
    assert!(
        msg.contains("the planner `ollama/planner` failed: rate limited by the provider."),
        "{msg}"
    );
    assert_eq!(env.read("io.py"), FILE.as_bytes());

    // A set-up error (no key) is on stderr before any event.
    let env = Env::new();
    env.write("io.py", FILE);
    let err = "ag-llm: no API key for `openai`: set OPENAI_API_KEY\n";
    let res = sketch_call(edit_in_tools(&env, Some(("", err, 2))));
    let msg = res["output"].as_str().unwrap();
    assert!(
        msg.contains("failed: no API key for `openai`: set OPENAI_API_KEY"),
        "{msg}"
    );

    // Output that is no event, and an exit without an answer.
    let env = Env::new();
    env.write("io.py", FILE);
    let res = sketch_call(edit_in_tools(&env, Some(("not json\n", "", 0))));
    let msg = res["output"].as_str().unwrap();
    assert!(
        msg.contains("ag-llm ended (exit status: 0) without an answer"),
        "{msg}"
    );
    assert_eq!(env.read("io.py"), FILE.as_bytes());
}

#[test]
fn without_ag_llm_the_planner_says_where_it_looked() {
    let env = Env::new();
    env.write("io.py", FILE);
    let res = sketch_call(edit_in_tools(&env, None));
    assert_eq!(res["error_code"], "edit.sketch_unplaced", "{res}");
    let msg = res["output"].as_str().unwrap();
    assert!(
        msg.contains("`ag-llm` is neither beside ag-edit nor on PATH"),
        "{msg}"
    );
    assert_eq!(env.read("io.py"), FILE.as_bytes());
}

#[test]
fn command_line_code_edit() {
    let env = Env::new();
    env.write("io.py", FILE);
    let r = run_args(
        &env,
        bin!("ag-edit"),
        &[
            "io.py",
            "--code-edit",
            "# ... existing code ...\ndef load(path):\n    with open(path, encoding='utf-8') as f:\n        return f.read()\n# ... existing code ...\n",
        ],
    );
    r.ok();
    assert!(
        r.stdout().starts_with(
            "Applied the code sketch to io.py (1 line changed): line 2 replaced by 1 line"
        ),
        "{r}"
    );
    assert!(
        String::from_utf8(env.read("io.py"))
            .unwrap()
            .contains("encoding='utf-8'")
    );
    // code_edit with old_string is a usage error.
    let r = run_args(
        &env,
        bin!("ag-edit"),
        &["io.py", "--code-edit", "x", "--old", "a", "--new", "b"],
    );
    r.expect_code(1);
    assert!(r.stderr().contains("cannot be combined"), "{r}");
}
