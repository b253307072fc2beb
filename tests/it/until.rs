//! Runs that end when a check passes (`ag-loop --until CMD`, `--stop CMD`)
//! against the scripted model server: a model that claims to be done
//! before it is, sent back with the failing tests and finishing after the
//! fix; a check that never passes, one that hangs, one that does not
//! exist, an interrupt during a check; a resumed session that keeps its
//! check; stop hooks that send the model back, and one that answers
//! nonsense.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::bin;
use crate::model_server::{ModelServer, Turn};
use crate::orphans::{marker_for, sleepers};
use crate::util::{Env, Run, of_type, run};

/// A project whose test fails until `add` adds.
fn broken_project(env: &Env) {
    env.write("calc.py", "def add(a, b):\n    return a - b\n");
    env.write(
        "test_calc.py",
        "import unittest\n\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
    );
}

/// The user messages of a model request, as text.
fn user_texts(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

fn loop_run(server: &ModelServer, env: &Env, flags: &[&str]) -> Run {
    let mut c = server.ag_loop(env);
    c.args(flags);
    run(c, None)
}

#[test]
fn a_model_that_claims_done_too_early_is_sent_back_and_finishes_after_the_fix() {
    let env = Env::new();
    broken_project(&env);
    let server = ModelServer::start(vec![
        // Wrong: nothing was fixed.
        Turn::Text("All done, the tests pass."),
        Turn::Tools(vec![(
            "bash",
            json!({"command": "sed -i 's/a - b/a + b/' calc.py"}),
        )]),
        Turn::Text("Fixed: add adds now."),
    ]);
    let mut c = server.ag_loop(&env);
    // A .pyc written by the first check would hide a fix of the same size
    // made within the same second (Python compares mtime seconds and size).
    c.env("PYTHONDONTWRITEBYTECODE", "1").args([
        "--until",
        "python3 -m unittest",
        "make the tests pass",
    ]);
    let r = run(c, None);
    r.expect_code(0);
    let events = r.json_lines();
    let checks = of_type(&events, "check");
    assert_eq!(checks.len(), 2, "{events:#?}");
    assert_eq!(checks[0]["kind"], "until");
    assert_eq!(checks[0]["command"], "python3 -m unittest");
    assert_eq!(checks[0]["passed"], false);
    assert_eq!(checks[0]["exit_code"], 1);
    assert_eq!(
        (checks[0]["attempt"].as_u64(), checks[0]["tries"].as_u64()),
        (Some(1), Some(5))
    );
    let failed = checks[0]["output"].as_str().unwrap();
    assert!(failed.contains("AssertionError: -1 != 5"), "{failed}");
    assert!(failed.contains("FAILED (failures=1)"), "{failed}");
    assert_eq!(checks[1]["passed"], true);
    assert_eq!(checks[1]["exit_code"], 0);
    assert_eq!(checks[1]["attempt"], 2);
    let end = of_type(&events, "agent_end")[0];
    assert_eq!(end["outcome"], "finished");
    // The model was sent back with the failure as its next prompt.
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let back = user_texts(&requests[1]);
    let back = back.last().unwrap();
    assert!(
        back.contains("the check `python3 -m unittest` failed (exit status 1; check 1 of 5)"),
        "{back}"
    );
    assert!(back.contains("AssertionError: -1 != 5"), "{back}");
    assert_eq!(env.read("calc.py"), b"def add(a, b):\n    return a + b\n");
    // The session holds the checks, and `ag-session show` tells them.
    let id = of_type(&events, "agent_start")[0]["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let show = run(
        {
            let mut c = env.cmd(bin!("ag-session"));
            c.args(["show", &id]);
            c
        },
        None,
    );
    show.expect_code(0);
    let page = show.stdout();
    assert!(
        page.contains("check 1/5 `python3 -m unittest` failed: exit status 1")
            && page.contains("check 2/5 `python3 -m unittest` passed"),
        "{page}"
    );
    assert!(page.contains("The task is not done"), "{page}");
}

#[test]
fn a_check_that_never_passes_ends_the_run_after_its_tries() {
    let env = Env::new();
    let server = ModelServer::start(vec![
        Turn::Text("done"),
        Turn::Text("really done"),
        Turn::Text("never reached"),
    ]);
    let r = loop_run(
        &server,
        &env,
        &[
            "--until",
            "echo not yet; exit 3",
            "--until-tries",
            "2",
            "go",
        ],
    );
    r.expect_code(1);
    let events = r.json_lines();
    let checks = of_type(&events, "check");
    assert_eq!(checks.len(), 2, "{events:#?}");
    assert!(
        checks
            .iter()
            .all(|c| c["passed"] == false && c["exit_code"] == 3)
    );
    assert!(checks[1]["output"].as_str().unwrap().contains("not yet"));
    let end = of_type(&events, "agent_end")[0];
    assert_eq!(end["outcome"], "check_failed");
    let why = end["error"].as_str().unwrap();
    assert!(
        why.contains("the check `echo not yet; exit 3` failed (exit status 3) on the last of 2 checks (--until-tries)"),
        "{why}"
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn the_turn_limit_still_ends_a_run_that_keeps_failing_its_check() {
    let env = Env::new();
    let server = ModelServer::start(vec![Turn::Text("done"), Turn::Text("done")]);
    let r = loop_run(
        &server,
        &env,
        &["--until", "false", "--max-turns", "1", "go"],
    );
    r.expect_code(1);
    let events = r.json_lines();
    assert_eq!(of_type(&events, "check").len(), 1);
    // The outcome says which limit ended it.
    assert_eq!(of_type(&events, "agent_end")[0]["outcome"], "turn_limit");
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn a_check_that_hangs_is_stopped_by_its_timeout_with_everything_it_started() {
    let env = Env::new();
    let m = marker_for(900);
    let server = ModelServer::start(vec![Turn::Text("done")]);
    let cmd = format!("sleep {m} & sleep {m}");
    let r = loop_run(
        &server,
        &env,
        &[
            "--until",
            &cmd,
            "--until-timeout",
            "0.5",
            "--until-tries",
            "1",
            "go",
        ],
    );
    r.expect_code(1);
    let events = r.json_lines();
    let check = of_type(&events, "check")[0];
    assert_eq!(check["passed"], false);
    assert!(check.get("exit_code").is_none(), "{check}");
    let why = check["error"].as_str().unwrap();
    assert!(
        why.contains("timed out after 0.5 s (--until-timeout)"),
        "{why}"
    );
    assert_eq!(of_type(&events, "agent_end")[0]["outcome"], "check_failed");
    assert!(sleepers(&m).is_empty(), "the check left {:?}", sleepers(&m));
}

#[test]
fn a_check_command_that_does_not_exist_ends_the_run_at_once() {
    let env = Env::new();
    let server = ModelServer::start(vec![Turn::Text("done"), Turn::Text("again")]);
    let r = loop_run(
        &server,
        &env,
        &["--until", "no-such-check-here --all", "go"],
    );
    r.expect_code(1);
    let events = r.json_lines();
    let checks = of_type(&events, "check");
    assert_eq!(checks.len(), 1);
    assert_eq!(checks[0]["exit_code"], 127);
    let end = of_type(&events, "agent_end")[0];
    assert_eq!(end["outcome"], "check_failed");
    let why = end["error"].as_str().unwrap();
    assert!(
        why.contains("could not be run (exit status 127: command not found)")
            && why.contains("no-such-check-here")
            && why.contains("fix --until"),
        "{why}"
    );
    // The model is not sent back to chase a typo in the command line.
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn an_interrupt_during_a_check_stops_it_and_leaves_no_process() {
    let env = Env::new();
    let m = marker_for(901);
    let server = ModelServer::start(vec![Turn::Text("done"), Turn::Text("next answer")]);
    let mut c = server.ag_loop(&env);
    c.args(["--until", &format!("sleep {m} & sleep {m}")]);
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"go\n").unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while sleepers(&m).len() < 2 {
        assert!(Instant::now() < deadline, "the check never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    stdin.write_all(b"{\"type\":\"interrupt\"}\n").unwrap();
    drop(stdin);
    let events: Vec<Value> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{events:#?}");
    let check = of_type(&events, "check")[0];
    assert_eq!(check["passed"], false);
    assert_eq!(check["error"], "interrupted");
    assert_eq!(of_type(&events, "interrupted").len(), 1);
    assert_eq!(of_type(&events, "agent_end")[0]["outcome"], "interrupted");
    assert!(sleepers(&m).is_empty(), "the check left {:?}", sleepers(&m));
}

#[test]
fn a_resumed_session_keeps_its_check_until_told_otherwise() {
    let env = Env::new();
    let server = ModelServer::start(vec![
        Turn::Text("one"),
        Turn::Text("two"),
        Turn::Text("three"),
    ]);
    let first = loop_run(
        &server,
        &env,
        &["--until", "test ! -e stop", "--until-tries", "3", "first"],
    );
    first.expect_code(0);
    assert_eq!(of_type(&first.json_lines(), "check").len(), 1);
    // Resumed without flags: the same check, with its tries.
    let second = loop_run(&server, &env, &["-c", "second"]);
    second.expect_code(0);
    let events = second.json_lines();
    let checks = of_type(&events, "check");
    assert_eq!(checks.len(), 1, "{events:#?}");
    assert_eq!(checks[0]["command"], "test ! -e stop");
    assert_eq!(checks[0]["tries"], 3);
    assert!(of_type(&events, "note").is_empty());
    // --no-until drops it, says so, and records it for the next resume.
    let third = loop_run(&server, &env, &["-c", "--no-until", "third"]);
    third.expect_code(0);
    let events = third.json_lines();
    assert!(of_type(&events, "check").is_empty());
    let note = of_type(&events, "note")[0]["message"].as_str().unwrap();
    assert!(
        note.contains("until `test ! -e stop` (3 tries, 600 s each) → none (--no-until)"),
        "{note}"
    );
    let settings = of_type(&events, "settings")[0];
    assert!(settings.get("until").is_none(), "{settings}");
    // The checks are in the session file, one line each.
    let recorded = session_text(&env.join(".home/.ag/sessions"));
    assert_eq!(recorded.matches("\"type\":\"check\"").count(), 2);
}

/// Every session file under `dir`, one after another.
fn session_text(dir: &std::path::Path) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.push_str(&session_text(&path));
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push_str(&std::fs::read_to_string(&path).unwrap());
        }
    }
    out
}

/// A stop hook that sends the model back once, then lets the run end; it
/// logs what it was given.
fn hook(env: &Env) -> String {
    env.write(
        ".hooks/judge.sh",
        "cat >> .hooks/requests.jsonl\necho >> .hooks/requests.jsonl\n\
         if [ -e .hooks/seen ]; then echo '{\"decision\":\"stop\",\"reason\":\"the notes are there\"}'; \
         else touch .hooks/seen; echo '{\"decision\":\"continue\",\"message\":\"Write NOTES.md first.\"}'; fi\n",
    );
    "sh .hooks/judge.sh".to_string()
}

#[test]
fn a_stop_hook_sends_the_model_back_with_its_message_then_lets_the_run_end() {
    let env = Env::new();
    let server = ModelServer::start(vec![
        Turn::Text("first answer"),
        Turn::Text("second answer"),
    ]);
    let judge = hook(&env);
    let r = loop_run(&server, &env, &["--stop", &judge, "go"]);
    r.expect_code(0);
    let events = r.json_lines();
    let checks = of_type(&events, "check");
    assert_eq!(checks.len(), 2, "{events:#?}");
    assert_eq!(checks[0]["kind"], "stop");
    assert_eq!(checks[0]["passed"], false);
    assert_eq!(checks[0]["output"], "Write NOTES.md first.");
    assert_eq!(checks[1]["passed"], true);
    assert_eq!(checks[1]["output"], "the notes are there");
    assert_eq!(of_type(&events, "agent_end")[0]["outcome"], "finished");
    assert_eq!(
        user_texts(&server.requests()[1]).last().unwrap(),
        "Write NOTES.md first."
    );
    // The hook saw each final answer, with the count of checks.
    let seen: Vec<Value> = String::from_utf8(env.read(".hooks/requests.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0]["answer"], "first answer");
    assert_eq!(
        (seen[1]["attempt"].as_u64(), seen[1]["tries"].as_u64()),
        (Some(2), Some(5))
    );
    assert_eq!(seen[1]["answer"], "second answer");
}

#[test]
fn a_stop_hook_that_answers_nonsense_ends_the_run_and_says_so() {
    let env = Env::new();
    let server = ModelServer::start(vec![Turn::Text("done"), Turn::Text("again")]);
    let r = loop_run(&server, &env, &["--stop", "echo maybe", "go"]);
    r.expect_code(1);
    let events = r.json_lines();
    let check = of_type(&events, "check")[0];
    assert_eq!(check["passed"], false);
    assert!(
        check["error"].as_str().unwrap().contains("maybe"),
        "{check}"
    );
    let end = of_type(&events, "agent_end")[0];
    assert_eq!(end["outcome"], "check_failed");
    assert!(
        end["error"]
            .as_str()
            .unwrap()
            .contains("the stop hook could not judge the answer")
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn flags_that_cannot_work_are_refused_before_any_event() {
    let env = Env::new();
    let server = ModelServer::start(vec![]);
    for (flags, says) in [
        (&["--until-tries", "2", "go"][..], "add `--until CMD`"),
        (&["--until", "", "go"][..], "--until needs a command"),
        (
            &["--until", "true", "--until-tries", "0", "go"][..],
            "--until-tries 1",
        ),
    ] {
        let r = loop_run(&server, &env, flags);
        r.expect_code(2);
        assert!(r.stdout().is_empty(), "{flags:?}: {}", r.stdout());
        assert!(r.stderr().contains(says), "{flags:?}: {}", r.stderr());
    }
    assert!(server.requests().is_empty());
}

#[test]
fn the_check_is_confined_as_a_tool_call_even_when_the_model_has_no_bash() {
    let env = Env::new();
    // The home outside the workspace, as a project's is (see sandbox_loop).
    let home = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let server = ModelServer::start(vec![Turn::Text("done")]);
    let cmd = format!(
        "echo in > in.txt; echo out > {}/f.txt",
        outside.path().display()
    );
    let mut c = server.ag_loop(&env);
    c.env("HOME", home.path())
        .env("AG_HOME", home.path().join(".ag"));
    c.args([
        "--tools",
        "read",
        "--until",
        &cmd,
        "--until-tries",
        "1",
        "go",
    ]);
    let r = run(c, None);
    r.expect_code(1);
    let events = r.json_lines();
    let check = of_type(&events, "check")[0];
    assert_eq!(check["passed"], false, "{check}");
    let output = check["output"].as_str().unwrap();
    assert!(output.contains("blocked by the sandbox"), "{output}");
    assert!(
        !outside.path().join("f.txt").exists(),
        "the check wrote outside"
    );
    assert_eq!(env.read("in.txt"), b"in\n", "the workspace stays writable");
    // No provider key reaches the check either.
    let server = ModelServer::start(vec![Turn::Text("done")]);
    let mut c = server.ag_loop(&env);
    c.env("OPENAI_API_KEY", "sk-test-secret-1234567890").args([
        "--until",
        "test -z \"$OPENAI_API_KEY\"",
        "--until-tries",
        "1",
        "go",
    ]);
    run(c, None).expect_code(0);
}

#[test]
fn a_structured_answer_counts_only_once_the_check_passes() {
    let env = Env::new();
    let server = ModelServer::start(vec![
        Turn::Text(r#"{"fixed": false}"#),
        Turn::Tools(vec![("bash", json!({"command": "touch fixed"}))]),
        Turn::Text(r#"{"fixed": true}"#),
    ]);
    let schema =
        r#"{"type":"object","required":["fixed"],"properties":{"fixed":{"type":"boolean"}}}"#;
    let r = loop_run(
        &server,
        &env,
        &["--until", "test -e fixed", "--output-schema", schema, "go"],
    );
    r.expect_code(0);
    let events = r.json_lines();
    assert_eq!(of_type(&events, "check").len(), 2);
    let end = of_type(&events, "agent_end")[0];
    assert_eq!(end["outcome"], "finished");
    assert_eq!(end["output"], json!({"fixed": true}));
    // A valid answer whose check never passes is no output.
    let server = ModelServer::start(vec![Turn::Text(r#"{"fixed": true}"#)]);
    let r = loop_run(
        &server,
        &env,
        &[
            "--until",
            "false",
            "--until-tries",
            "1",
            "--output-schema",
            schema,
            "go",
        ],
    );
    r.expect_code(1);
    let events = r.json_lines();
    let end = of_type(&events, "agent_end")[0];
    assert_eq!(end["outcome"], "check_failed");
    assert!(end.get("output").is_none(), "{end}");
}
