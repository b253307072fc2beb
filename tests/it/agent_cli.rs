//! ag-loop's command line and stdin: `--pretty` on a pipe, and lines that
//! are not UTF-8 or not commands between prompts.

use serde_json::{Value, json};

use crate::bin;
use crate::model_server::{ModelServer, Turn};
use crate::util::{Env, run};

#[test]
fn pretty_forces_the_readable_view_on_a_pipe() {
    let env = Env::new();
    env.write("notes.txt", "the answer is 42\n");
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("read", json!({"file_path": "notes.txt"}))]),
        Turn::Text("The notes say 42."),
    ]);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["-m", "ollama/scripted", "--base-url", &server.base_url()])
        .args([
            "--pretty",
            "--no-gate",
            "--no-session",
            "what do the notes say?",
        ]);
    let r = run(c, None);
    r.ok();
    let out = r.stdout();
    assert!(
        out.lines()
            .all(|l| serde_json::from_str::<Value>(l).is_err()),
        "{r}"
    );
    assert!(out.contains("→ read"), "{r}");
    assert!(out.contains("The notes say 42."), "{r}");
    assert!(out.contains("[done"), "{r}");
    // No colour on a pipe.
    assert!(!out.contains('\x1b'), "{r}");
    // --pretty and --json contradict each other.
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["--pretty", "--json", "x"]);
    run(c, None).expect_code(2);
}

#[test]
fn lines_that_are_not_utf8_or_not_commands_are_reported_and_the_next_prompt_runs() {
    let env = Env::new();
    let server = ModelServer::start(vec![
        Turn::Text("first answer"),
        Turn::Text("second answer"),
    ]);
    let mut input = b"first prompt\n".to_vec();
    input.extend_from_slice(b"caf\xe9 \xff\xfe broken\n");
    input.extend_from_slice(b"{\"type\":\"promt\",\"content\":\"typo\"}\n");
    input.extend_from_slice(b"{\"type\":\"prompt\",\"content\":\"second prompt\"}\n");
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["-m", "ollama/scripted", "--base-url", &server.base_url()])
        .args(["--json", "--no-gate", "--no-session"]);
    let r = run(c, Some(&input));
    r.ok();
    let events = r.json_lines();
    let ends: Vec<&Value> = events.iter().filter(|e| e["type"] == "agent_end").collect();
    assert_eq!(ends.len(), 2, "{r}");
    assert!(ends.iter().all(|e| e["outcome"] == "finished"));
    let errors: Vec<&Value> = events.iter().filter(|e| e["type"] == "error").collect();
    assert_eq!(errors.len(), 2, "{r}");
    let message = errors[0]["message"].as_str().unwrap();
    assert!(
        message.contains("line 2") && message.contains("UTF-8"),
        "{message}"
    );
    let message = errors[1]["message"].as_str().unwrap();
    assert!(
        message.contains("line 3") && message.contains("not a command"),
        "{message}"
    );
    // In order: the first run, the error, then the second run.
    let pos = |pred: &dyn Fn(&Value) -> bool| events.iter().position(pred).unwrap();
    let error_at = pos(&|e| e["type"] == "error");
    assert!(error_at > pos(&|e| e["type"] == "agent_end"));
    assert!(r.stdout().contains("second answer"));
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].to_string().contains("second prompt"));
}
