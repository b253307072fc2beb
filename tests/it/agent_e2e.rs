//! ag-loop against a scripted model server on 127.0.0.1 (the real client
//! library, OpenAI Chat Completions) and the real tool binaries on a real
//! temporary git repository.

use std::sync::atomic::Ordering;

use crate::bin;
use crate::model_server::{ModelServer, Turn};
use crate::util::{Env, run};
use serde_json::{Value, json};

#[test]
fn a_scripted_task_edits_the_repository_as_intended_over_one_connection() {
    let env = Env::new();
    env.write(
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
    );
    env.write("README.md", "# calc\n");
    let git = |args: &[&str]| {
        let mut c = env.cmd("git");
        c.args(args);
        run(c, None).ok();
    };
    git(&["init", "-q"]);
    git(&["-c", "user.name=t", "-c", "user.email=t@e", "add", "."]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@e",
        "commit",
        "-qm",
        "start",
    ]);

    let server = ModelServer::start(vec![
        Turn::Tools(vec![
            ("grep", json!({"query": "a - b"})),
            ("read", json!({"file_path": "src/lib.rs"})),
        ]),
        Turn::Tools(vec![(
            "edit",
            json!({"file_path": "src/lib.rs", "old_string": "    a - b", "new_string": "    a + b"}),
        )]),
        Turn::Tools(vec![(
            "write",
            json!({"file_path": "CHANGES.md", "content": "- fix add\n"}),
        )]),
        Turn::Tools(vec![(
            "bash",
            json!({"command": "grep -c 'a + b' src/lib.rs && git status --short"}),
        )]),
        Turn::Text("Fixed `add` and noted it in CHANGES.md."),
    ]);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "-m",
        "ollama/scripted",
        "--base-url",
        &server.base_url(),
        "--json",
        "--no-gate",
        "fix add",
    ]);
    let r = run(c, None);
    r.ok();

    // The files ended as the script intended.
    assert_eq!(
        String::from_utf8(env.read("src/lib.rs")).unwrap(),
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"
    );
    assert_eq!(
        String::from_utf8(env.read("CHANGES.md")).unwrap(),
        "- fix add\n"
    );

    // The events are complete and in order.
    let events = r.json_lines();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"agent_start"));
    assert_eq!(kinds.last(), Some(&"agent_end"));
    assert_eq!(kinds.iter().filter(|k| **k == "turn_start").count(), 5);
    assert_eq!(kinds.iter().filter(|k| **k == "turn_end").count(), 5);
    let ends: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_execution_end")
        .collect();
    assert_eq!(ends.len(), 5);
    assert!(ends.iter().all(|e| e["is_error"] == false), "{ends:?}");
    let bash = ends.iter().find(|e| e["tool_name"] == "bash").unwrap();
    assert!(
        bash["output"].as_str().unwrap().contains("M src/lib.rs"),
        "{bash}"
    );
    let end = events.last().unwrap();
    assert_eq!(end["outcome"], "finished");
    assert_eq!(
        end["usage"]["input"].as_u64().unwrap(),
        100 + 101 + 102 + 103 + 104
    );

    // The model saw the conversation grow, with the tools offered each time.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 5);
    assert!(
        reqs[4]["messages"].as_array().unwrap().len()
            > reqs[1]["messages"].as_array().unwrap().len()
    );
    let tools: Vec<&str> = reqs[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    for t in ["read", "write", "edit", "bash", "grep", "find", "ls"] {
        assert!(tools.contains(&t), "{tools:?}");
    }
    // One connection for the whole session.
    assert_eq!(server.connections.load(Ordering::SeqCst), 1);
}

#[test]
fn an_edit_to_a_file_changed_since_it_was_read_is_refused() {
    let env = Env::new();
    env.write("a.txt", "one\n");
    // The model reads a.txt; a bash call (standing for the user) changes it; the edit must be refused.
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("read", json!({"file_path": "a.txt"}))]),
        Turn::Tools(vec![("bash", json!({"command": "echo changed > a.txt"}))]),
        Turn::Tools(vec![(
            "edit",
            json!({"file_path": "a.txt", "old_string": "changed", "new_string": "edited"}),
        )]),
        Turn::Text("ok"),
    ]);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "-m",
        "ollama/scripted",
        "--base-url",
        &server.base_url(),
        "--json",
        "--no-gate",
        "--no-session",
        "go",
    ]);
    let r = run(c, None);
    r.ok();
    assert_eq!(String::from_utf8(env.read("a.txt")).unwrap(), "changed\n");
    let edit = r
        .json_lines()
        .into_iter()
        .find(|e| e["type"] == "tool_execution_end" && e["tool_name"] == "edit")
        .unwrap();
    assert_eq!(edit["is_error"], true);
    assert!(
        edit["output"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("read"),
        "{edit}"
    );
}
