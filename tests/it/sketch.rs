//! ag-edit's code sketches beyond the scenario folders: the planner
//! fallback against a scripted model server on 127.0.0.1 (by environment,
//! by flag for a whole JSONL session, a bad plan refused), and the plain
//! command line.

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
