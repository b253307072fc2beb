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

#[test]
fn the_model_plans_with_todo_edits_and_commits_with_git() {
    let env = Env::new();
    env.write("greet.txt", "hello wrld\n");
    let git = |args: &[&str]| {
        let mut c = env.cmd("git");
        c.args(args);
        run(c, None).ok();
    };
    git(&["init", "-q"]);
    git(&["config", "user.name", "Test"]);
    git(&["config", "user.email", "test@example.com"]);
    git(&["add", "."]);
    git(&["commit", "-qm", "start"]);
    let server = ModelServer::start(vec![
        Turn::Tools(vec![(
            "todo",
            json!({"action": "set", "items": [{"content": "fix the typo"}, {"content": "commit"}]}),
        )]),
        Turn::Tools(vec![(
            "edit",
            json!({"file_path": "greet.txt", "old_string": "wrld", "new_string": "world"}),
        )]),
        Turn::Tools(vec![(
            "todo",
            json!({"action": "update", "id": 1, "status": "done"}),
        )]),
        Turn::Tools(vec![(
            "git",
            json!({"action": "commit", "message": "Fix the greeting", "paths": ["greet.txt"]}),
        )]),
        Turn::Tools(vec![(
            "todo",
            json!({"action": "update", "id": 2, "status": "done"}),
        )]),
        Turn::Text("Done: typo fixed and committed."),
    ]);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "-m",
        "ollama/scripted",
        "--base-url",
        &server.base_url(),
        "--json",
        "--no-gate",
        "fix the typo and commit",
    ]);
    let r = run(c, None);
    r.ok();
    let ends: Vec<Value> = r
        .json_lines()
        .into_iter()
        .filter(|e| e["type"] == "tool_execution_end")
        .collect();
    assert!(ends.iter().all(|e| e["is_error"] == false), "{ends:?}");
    assert_eq!(
        String::from_utf8(env.read("greet.txt")).unwrap(),
        "hello world\n"
    );
    let mut c = env.cmd("git");
    c.args(["log", "--format=%s"]);
    let log = run(c, None);
    assert_eq!(log.stdout(), "Fix the greeting\nstart\n");
    // The list lived in the session's directory and ended all done.
    let last_todo = ends
        .iter()
        .rev()
        .find(|e| e["tool_name"] == "todo")
        .unwrap();
    assert!(
        last_todo["output"].as_str().unwrap().contains("[x]"),
        "{last_todo}"
    );
    let items = &last_todo["details"]["items"];
    assert!(
        items
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["status"] == "done"),
        "{items}"
    );
}

#[test]
fn sigint_interrupts_the_running_tools_and_a_second_one_quits() {
    use std::io::{BufRead, BufReader};
    let env = Env::new();
    let marker = 8000 + std::process::id() % 1000;
    let server = ModelServer::start(vec![
        Turn::Tools(vec![(
            "bash",
            json!({"command": format!("sleep {marker} & sleep {marker}")}),
        )]),
        Turn::Text("never reached"),
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
    ]);
    c.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, b"wait a long time\n").unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines.by_ref() {
        let e: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if e["type"] == "tool_execution_start" {
            break;
        }
    }
    let alive = || {
        let out = std::process::Command::new("pgrep")
            .args(["-f", &format!("sleep {marker}")])
            .output()
            .unwrap();
        !out.stdout.is_empty()
    };
    for _ in 0..250 {
        if alive() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let mut events = Vec::new();
    for line in lines.by_ref() {
        let e: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let done = e["type"] == "agent_end";
        events.push(e);
        if done {
            break;
        }
    }
    assert_eq!(events.last().unwrap()["outcome"], "interrupted");
    assert!(!alive(), "the interrupted command survived");
    // Idle now, with stdin still open: the second SIGINT quits.
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    drop(stdin);
}

/// On a terminal (tmux), a dangerous call is asked about and held until the
/// person answers.
#[test]
fn a_dangerous_command_is_asked_about_on_the_terminal() {
    assert!(
        std::process::Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok(),
        "tmux is not installed: scripts/test installs it (Debian: apt-get install tmux)"
    );
    for (answer, removed) in [("n", false), ("y", true)] {
        let env = Env::new();
        env.write("build/out.o", "x");
        let server = ModelServer::start(vec![
            Turn::Tools(vec![("bash", json!({"command": "rm -rf build"}))]),
            Turn::Text("ok"),
        ]);
        let socket = format!("ag-test-{}-{answer}", std::process::id());
        let tmux = |args: &[&str]| {
            std::process::Command::new("tmux")
                .arg("-L")
                .arg(&socket)
                .args(args)
                .output()
                .unwrap()
        };
        let cmd = format!(
            "cd '{}' && AG_HOME='{}' NO_COLOR=1 '{}' -m ollama/scripted --base-url '{}' --no-session --sandbox off 'clean up'; echo EXIT=$?; sleep 60",
            env.path().display(),
            env.join(".home/.ag").display(),
            bin!("ag-loop"),
            server.base_url()
        );
        tmux(&["new-session", "-d", "-x", "200", "-y", "50", &cmd]);
        let screen = |tmux: &dyn Fn(&[&str]) -> std::process::Output| {
            String::from_utf8_lossy(&tmux(&["capture-pane", "-p"]).stdout).into_owned()
        };
        let wait_for = |what: &str| {
            for _ in 0..500 {
                let s = screen(&tmux);
                if s.contains(what) {
                    return s;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            panic!("`{what}` never appeared:\n{}", screen(&tmux));
        };
        let asked = wait_for("Allow bash");
        assert!(asked.contains("recursive delete"), "{asked}");
        assert!(
            env.join("build/out.o").exists(),
            "ran before it was approved"
        );
        tmux(&["send-keys", answer, "Enter"]);
        let end = wait_for("EXIT=");
        tmux(&["kill-server"]);
        assert!(end.contains("EXIT=0"), "{end}");
        assert_eq!(!env.join("build").exists(), removed, "{end}");
    }
}

#[test]
fn a_refusal_is_told_apart_from_a_failed_call_and_not_retried() {
    let env = Env::new();
    let server = ModelServer::start(vec![Turn::Refusal("I can't help with that.")]);
    let mut c = server.ag_loop(&env);
    c.args(["--no-gate", "--no-session", "do it"]);
    let r = run(c, None);
    assert_eq!(r.code(), Some(1), "{r}");
    let events = r.json_lines();
    let end = events
        .iter()
        .find(|e| e["type"] == "message_end" && e["message"]["role"] == "assistant")
        .unwrap_or_else(|| panic!("no assistant message_end: {r}"));
    assert_eq!(end["message"]["stop_reason"], "refusal", "{end}");
    let said = end["message"]["error_message"].as_str().unwrap();
    assert!(said.contains("I can't help with that."), "{said}");
    let agent_end = events.iter().find(|e| e["type"] == "agent_end").unwrap();
    assert_eq!(agent_end["outcome"], "model_error", "{agent_end}");
    // The same request would be declined again: one call, no retry.
    assert_eq!(server.requests().len(), 1);
}
