//! ag-loop's sandbox end to end, on this kernel, with the scripted model
//! server and the real tools: what a confined call may not do, how the
//! model learns it, asking to run a blocked call outside (approved, refused,
//! nobody to ask), the kernel without Landlock (simulated by
//! AG_SANDBOX_UNAVAILABLE), MCP stdio servers, and the git hooks guard.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::Stdio;

use crate::bin;
use crate::model_server::{ModelServer, Turn};
use crate::util::{Env, Run, of_type, run};
use serde_json::{Value, json};

/// A test directory (the workspace) and a home outside it, as a project's
/// is: with the home inside the workspace, ag-loop would leave the deny
/// list's paths there (`~/.ssh`, ...) out of it, so as to grant the
/// workspace whole.
fn world() -> (Env, tempfile::TempDir) {
    (Env::new(), tempfile::tempdir().unwrap())
}

/// ag-loop on the scripted model, events as JSONL, no session file.
fn ag_loop(
    (env, home): &(Env, tempfile::TempDir),
    server: &ModelServer,
    extra: &[&str],
) -> std::process::Command {
    let mut c = env.cmd(bin!("ag-loop"));
    c.env("HOME", home.path())
        .env("AG_HOME", home.path().join(".ag"));
    c.args([
        "-m",
        "ollama/scripted",
        "--base-url",
        &server.base_url(),
        "--json",
        "--no-session",
    ]);
    c.args(extra);
    c
}

fn ends(r: &Run) -> Vec<Value> {
    of_type(&r.json_lines(), "tool_execution_end")
        .into_iter()
        .cloned()
        .collect()
}

/// The text of the tool results the model was sent back.
fn told(server: &ModelServer) -> String {
    server
        .requests()
        .iter()
        .flat_map(|r| r["messages"].as_array().cloned().unwrap_or_default())
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A directory outside the test's workspace.
fn outside() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn write_outside(dir: &Path) -> Value {
    json!({"command": format!("echo out > {}/f.txt; echo in > in.txt", dir.display())})
}

#[test]
fn a_bash_write_outside_the_workspace_is_blocked_and_the_model_is_told_why_it_stays_confined() {
    // Nobody to ask: the default gate without a terminal (approval mode
    // never), and an asking gate whose stdin has ended.
    let asking = format!("{} --approval dangerous", bin!("ag-gate"));
    for gate in [None, Some(asking.as_str())] {
        let w = world();
        let env = &w.0;
        let out = outside();
        let server = ModelServer::start(vec![
            Turn::Tools(vec![("bash", write_outside(out.path()))]),
            Turn::Text("done"),
        ]);
        let mut extra = vec!["--tools", "bash"];
        if let Some(g) = gate {
            extra.extend(["--gate", g]);
        }
        extra.push("go");
        let r = run(ag_loop(&w, &server, &extra), None);
        r.ok();
        assert!(
            !out.path().join("f.txt").exists(),
            "{gate:?}: written outside"
        );
        assert_eq!(env.read("in.txt"), b"in\n", "the workspace stays writable");
        let end = &ends(&r)[0];
        let text = end["output"].as_str().unwrap();
        assert!(text.contains("blocked by the sandbox"), "{text}");
        assert!(text.contains("f.txt"), "{text}");
        assert!(text.contains("not run outside the sandbox"), "{text}");
        assert!(told(&server).contains("not run outside the sandbox"));
        let asked = of_type(&r.json_lines(), "approval_request").len();
        assert_eq!(asked, usize::from(gate.is_some()), "{gate:?}");
    }
}

/// Runs a blocked call under an asking gate and answers its one
/// approval_request on stdin.
fn escalate(approved: bool) -> (tempfile::TempDir, Vec<Value>, Value) {
    let w = world();
    let env = &w.0;
    let out = outside();
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("bash", write_outside(out.path()))]),
        Turn::Text("done"),
    ]);
    let gate = format!("{} --approval dangerous", bin!("ag-gate"));
    let mut c = ag_loop(&w, &server, &["--tools", "bash", "--gate", &gate]);
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"go\n").unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut events = Vec::new();
    let request = loop {
        let line = lines.next().expect("no approval_request").unwrap();
        let e: Value = serde_json::from_str(&line).unwrap();
        events.push(e.clone());
        if e["type"] == "approval_request" {
            break e;
        }
    };
    // Asked after the confined run, which wrote nothing outside.
    assert!(!out.path().join("f.txt").exists());
    assert_eq!(env.read("in.txt"), b"in\n");
    let answer =
        json!({"type": "approval", "tool_call_id": request["tool_call_id"], "approved": approved});
    stdin
        .write_all((answer.to_string() + "\n").as_bytes())
        .unwrap();
    drop(stdin);
    events.extend(lines.map(|l| serde_json::from_str::<Value>(&l.unwrap()).unwrap()));
    assert!(child.wait().unwrap().success());
    (out, events, request)
}

#[test]
fn an_approved_escalation_runs_the_blocked_call_outside_the_sandbox() {
    let (out, events, request) = escalate(true);
    let reason = request["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("blocked by the sandbox: write to"),
        "{reason}"
    );
    assert!(reason.contains("f.txt"), "{reason}");
    assert_eq!(of_type(&events, "approval_request").len(), 1);
    assert_eq!(std::fs::read(out.path().join("f.txt")).unwrap(), b"out\n");
    let end = of_type(&events, "tool_execution_end")[0];
    assert!(
        end["output"]
            .as_str()
            .unwrap()
            .contains("ran again outside the sandbox"),
        "{end}"
    );
    assert_eq!(end["details"]["sandbox"]["ran_outside"], true, "{end}");
}

#[test]
fn always_on_stdin_lets_out_the_command_prefix_and_nothing_else() {
    let w = world();
    let out = outside();
    let o = out.path().display();
    let server = ModelServer::start(vec![
        Turn::Tools(vec![(
            "bash",
            json!({"command": format!("touch {o}/a.txt")}),
        )]),
        Turn::Tools(vec![(
            "bash",
            json!({"command": format!("touch {o}/b.txt")}),
        )]),
        Turn::Tools(vec![(
            "bash",
            json!({"command": format!("cp /dev/null {o}/c.txt")}),
        )]),
        Turn::Text("done"),
    ]);
    let c = ag_loop(&w, &server, &["--tools", "bash", "--approve-on-stdin"]);
    let prompt = json!({"type": "prompt", "content": "go"});
    // "always" for the first request, "no" for any other.
    let events = crate::loop_stdin::converse(c, &[prompt], 1, |r| {
        let first = r["tool_call_id"] == "call_0_0";
        Some(
            json!({"type": "approval", "tool_call_id": r["tool_call_id"],
                    "approved": first, "always": first}),
        )
    });
    let asked = of_type(&events, "approval_request");
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_eq!(asked[0]["always"], "`touch`", "{}", asked[0]);
    assert_eq!(asked[1]["always"], "`cp`", "{}", asked[1]);
    assert!(out.path().join("a.txt").exists());
    // Covered by the `touch` prefix: out without a question.
    assert!(out.path().join("b.txt").exists());
    assert!(!out.path().join("c.txt").exists());
}

#[test]
fn a_refused_escalation_keeps_the_call_confined() {
    let (out, events, _) = escalate(false);
    assert!(!out.path().join("f.txt").exists());
    let end = of_type(&events, "tool_execution_end")[0];
    let text = end["output"].as_str().unwrap();
    assert!(text.contains("did not approve"), "{text}");
}

#[test]
fn require_on_a_kernel_without_landlock_refuses_to_start() {
    let w = world();
    let server = ModelServer::start(vec![Turn::Text("never asked")]);
    let mut c = ag_loop(&w, &server, &["--sandbox", "require", "go"]);
    c.env("AG_SANDBOX_UNAVAILABLE", "1");
    let r = run(c, None);
    assert_eq!(r.code(), Some(2), "{}", r.stderr());
    assert!(r.stderr().contains("--sandbox require"), "{}", r.stderr());
    assert!(r.stdout().is_empty(), "no event before the refusal");
    assert!(server.requests().is_empty());
    // The same from the config file.
    std::fs::create_dir_all(w.1.path().join(".ag")).unwrap();
    std::fs::write(
        w.1.path().join(".ag/config.toml"),
        "sandbox = \"require\"\n",
    )
    .unwrap();
    let mut c = ag_loop(&w, &server, &["go"]);
    c.env("AG_SANDBOX_UNAVAILABLE", "1");
    assert_eq!(run(c, None).code(), Some(2));
}

#[test]
fn auto_on_a_kernel_without_landlock_says_so_once_and_runs_unconfined() {
    let w = world();
    let out = outside();
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("bash", write_outside(out.path()))]),
        Turn::Tools(vec![("bash", json!({"command": "true"}))]),
        Turn::Text("done"),
    ]);
    let mut c = ag_loop(&w, &server, &["--tools", "bash", "go"]);
    c.env("AG_SANDBOX_UNAVAILABLE", "1");
    let r = run(c, None);
    r.ok();
    let events = r.json_lines();
    let errors = of_type(&events, "error");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0]["code"], "sandbox.unavailable");
    assert_eq!(events[0]["type"], "error", "said before the first prompt");
    assert_eq!(
        r.stderr().matches("unconfined").count(),
        1,
        "{}",
        r.stderr()
    );
    assert_eq!(std::fs::read(out.path().join("f.txt")).unwrap(), b"out\n");
    // Off is silent.
    let server = ModelServer::start(vec![Turn::Text("done")]);
    let mut c = ag_loop(&w, &server, &["--sandbox", "off", "go"]);
    c.env("AG_SANDBOX_UNAVAILABLE", "1");
    let r = run(c, None);
    r.ok();
    assert!(of_type(&r.json_lines(), "error").is_empty());
    assert!(!r.stderr().contains("unconfined"), "{}", r.stderr());
}

#[test]
fn a_write_through_a_symlink_out_of_the_workspace_is_denied_by_the_kernel_not_the_tool() {
    let w = world();
    let env = &w.0;
    let out = outside();
    std::os::unix::fs::symlink(out.path(), env.join("link")).unwrap();
    let call = || {
        Turn::Tools(vec![(
            "write",
            json!({"file_path": "link/f.txt", "content": "x\n"}),
        )])
    };
    // ag-write itself follows the link: without the sandbox it writes.
    let server = ModelServer::start(vec![call(), Turn::Text("done")]);
    let r = run(
        ag_loop(&w, &server, &["--tools", "write", "--sandbox", "off", "go"]),
        None,
    );
    r.ok();
    assert_eq!(ends(&r)[0]["is_error"], false, "{:?}", ends(&r));
    std::fs::remove_file(out.path().join("f.txt")).unwrap();
    // Confined, the kernel refuses, and the model reads why.
    let server = ModelServer::start(vec![call(), Turn::Text("done")]);
    let r = run(ag_loop(&w, &server, &["--tools", "write", "go"]), None);
    r.ok();
    assert!(!out.path().join("f.txt").exists());
    let end = &ends(&r)[0];
    assert_eq!(end["is_error"], true, "{end}");
    let text = end["output"].as_str().unwrap();
    assert!(text.contains("blocked by the sandbox: write to"), "{text}");
}

#[test]
fn read_only_mode_denies_writes_in_the_workspace_too() {
    let w = world();
    let env = &w.0;
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("bash", json!({"command": "echo x > in.txt"}))]),
        Turn::Text("done"),
    ]);
    let r = run(
        ag_loop(
            &w,
            &server,
            &["--tools", "bash", "--sandbox-mode", "read-only", "go"],
        ),
        None,
    );
    r.ok();
    assert!(!env.join("in.txt").exists());
    let text = ends(&r)[0]["output"].as_str().unwrap().to_string();
    assert!(text.contains("blocked by the sandbox"), "{text}");
}

#[test]
fn mcp_stdio_servers_run_confined_unless_told_otherwise() {
    for unconfined in [false, true] {
        let w = world();
        let out = outside();
        let target = out.path().join("f.txt");
        let server = ModelServer::start(vec![
            Turn::Tools(vec![(
                "write",
                json!({"file_path": target.display().to_string(), "content": "x\n"}),
            )]),
            Turn::Text("done"),
        ]);
        let mcp = format!("{} --tools write", bin!("ag-mcp"));
        let mut extra = vec!["--tools", "chat", "--mcp", &mcp];
        if unconfined {
            extra.push("--mcp-unconfined");
        }
        extra.push("go");
        let r = run(ag_loop(&w, &server, &extra), None);
        r.ok();
        assert_eq!(target.exists(), unconfined, "{:?}", ends(&r));
        if !unconfined {
            let text = ends(&r)[0]["output"].as_str().unwrap().to_string();
            assert!(text.contains("--mcp-unconfined"), "{text}");
        }
    }
}

#[test]
fn a_hook_written_by_a_confined_call_does_not_survive_it() {
    let w = world();
    let env = &w.0;
    let mut git = env.cmd("git");
    git.args(["init", "-q"]);
    run(git, None).ok();
    let hook = env.join(".git/hooks/pre-commit");
    let server = ModelServer::start(vec![
        Turn::Tools(vec![(
            "bash",
            json!({"command": "printf '#!/bin/sh\\necho owned\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && echo planted"}),
        )]),
        Turn::Text("done"),
    ]);
    let r = run(ag_loop(&w, &server, &["--tools", "bash", "go"]), None);
    r.ok();
    assert!(!hook.exists(), "the hook survived the call");
    let end = &ends(&r)[0];
    let text = end["output"].as_str().unwrap();
    assert!(text.contains("planted"), "the call itself ran: {text}");
    assert!(text.contains("pre-commit"), "{text}");
    assert!(text.contains("undone"), "{text}");
    assert_eq!(
        end["details"]["sandbox"]["hooks"][0]["undone"], true,
        "{end}"
    );
}

#[test]
fn a_sandbox_write_directory_is_writable_and_only_it() {
    let w = world();
    let (granted, other) = (outside(), outside());
    let command = format!(
        "echo a > {}/f.txt; echo b > {}/f.txt",
        granted.path().display(),
        other.path().display()
    );
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("bash", json!({ "command": command }))]),
        Turn::Text("done"),
    ]);
    let dir = granted.path().display().to_string();
    let r = run(
        ag_loop(
            &w,
            &server,
            &["--tools", "bash", "--sandbox-write", &dir, "go"],
        ),
        None,
    );
    r.ok();
    assert_eq!(std::fs::read(granted.path().join("f.txt")).unwrap(), b"a\n");
    assert!(!other.path().join("f.txt").exists());
}

#[test]
fn a_sandbox_write_directory_that_does_not_exist_stops_the_start_rather_than_the_sandbox() {
    let w = world();
    let server = ModelServer::start(vec![Turn::Text("never asked")]);
    let missing = w.1.path().join("no-such-dir").display().to_string();
    let r = run(
        ag_loop(&w, &server, &["--sandbox-write", &missing, "go"]),
        None,
    );
    assert_eq!(r.code(), Some(2), "{}", r.stderr());
    assert!(r.stderr().contains("no-such-dir"), "{}", r.stderr());
    assert!(!r.stderr().contains("unconfined"), "{}", r.stderr());
    assert!(server.requests().is_empty());
}

/// Reads events until the next `agent_end`.
fn until_agent_end(lines: &mut impl Iterator<Item = std::io::Result<String>>) -> Vec<Value> {
    let mut out = Vec::new();
    for line in lines.by_ref() {
        let e: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let end = e["type"] == "agent_end";
        out.push(e);
        if end {
            break;
        }
    }
    out
}

#[test]
fn a_deny_list_path_that_appears_mid_session_is_denied_from_the_next_call_on() {
    // The ruleset leaves out deny-list paths that do not exist (nothing to
    // read, and a split of their parent spared); once one appears, the
    // next call must not be able to read it.
    let w = world();
    let secret = w.1.path().join(".aws/credentials");
    let read = json!({"command": format!("cat {}", secret.display())});
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("bash", read.clone())]),
        Turn::Text("first"),
        Turn::Tools(vec![("bash", read)]),
        Turn::Text("second"),
    ]);
    let mut c = ag_loop(&w, &server, &["--tools", "bash", "--sandbox", "require"]);
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let say = |stdin: &mut std::process::ChildStdin, text: &str| {
        let p = json!({"type": "prompt", "content": text});
        stdin.write_all((p.to_string() + "\n").as_bytes()).unwrap();
    };
    say(&mut stdin, "read it");
    let first = until_agent_end(&mut lines);
    let out = of_type(&first, "tool_execution_end")[0]["output"].to_string();
    assert!(out.contains("No such file"), "{out}");
    std::fs::create_dir_all(secret.parent().unwrap()).unwrap();
    std::fs::write(&secret, "aws_secret_access_key = hunter2\n").unwrap();
    say(&mut stdin, "read it again");
    let second = until_agent_end(&mut lines);
    drop(stdin);
    assert!(child.wait().unwrap().success());
    let out = of_type(&second, "tool_execution_end")[0]["output"].to_string();
    assert!(!out.contains("hunter2"), "the secret was read: {out}");
    assert!(out.contains("blocked by the sandbox"), "{out}");
}

/// A run without a session keeps its task list in a directory of its own,
/// outside the workspace: the sandbox lets the tools write there.
#[test]
fn the_task_list_of_a_run_without_a_session_works_in_the_sandbox() {
    let w = world();
    let server = ModelServer::start(vec![
        Turn::Tools(vec![(
            "todo",
            json!({"action": "set", "items": [{"content": "look", "status": "pending"}]}),
        )]),
        Turn::Text("planned"),
    ]);
    // $TMPDIR outside the workspace, as /tmp is.
    let tmp = outside();
    let mut c = ag_loop(
        &w,
        &server,
        &["--tools", "todo", "--sandbox", "require", "go"],
    );
    c.env("TMPDIR", tmp.path());
    let r = run(c, None);
    r.ok();
    let end = ends(&r)[0].clone();
    assert_eq!(end["is_error"], false, "{r}");
}
