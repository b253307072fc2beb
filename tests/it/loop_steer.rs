//! A client on ag-loop's stdin: a steer sent at any point of a turn reaches
//! the model (one more turn of the running prompt, or the next prompt once
//! the run is over), and empty prompts are skipped without a model call.
//!
//! Each test holds the scripted model server (or a tool) at one point of a
//! turn, sends the steer there, and knows ag-loop has taken it before
//! letting the turn go on: the steer is followed by an `approval` line for
//! a call that does not exist, which ag-loop's stdin reader reports on
//! stderr once it has handled every line before it.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

use crate::bin;
use crate::model_server::{HoldAt, ModelServer, Release, Turn};
use crate::util::{Env, of_type, run_args};

/// The longest a step may take before the test gives up: the bugs looked
/// for here are lost lines, and a lost line shows as a wait that never ends.
const HANG: Duration = Duration::from_secs(60);

/// ag-loop driven through pipes, its events and stderr read as they come.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    events: Receiver<Value>,
    stderr: Receiver<String>,
    seen: Vec<Value>,
    syncs: usize,
}

impl Client {
    fn start(env: &Env, server: &ModelServer, extra: &[&str]) -> Client {
        let mut c = server.ag_loop(env);
        c.args(["--no-gate", "--tools", "bash", "--sandbox", "off"])
            .args(extra)
            // A known window: no question to the server before the calls.
            .env("AG_CONTEXT_WINDOW", "100000")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let (etx, events) = channel();
        let out = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { return };
                let _ = etx.send(serde_json::from_str(&line).unwrap_or(Value::String(line)));
            }
        });
        let (stx, stderr) = channel();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines() {
                let Ok(line) = line else { return };
                let _ = stx.send(line);
            }
        });
        Client {
            stdin: child.stdin.take(),
            child,
            events,
            stderr,
            seen: Vec::new(),
            syncs: 0,
        }
    }

    fn send(&mut self, line: &Value) {
        let w = self.stdin.as_mut().unwrap();
        w.write_all(format!("{line}\n").as_bytes()).unwrap();
        w.flush().unwrap();
    }

    /// Reads events until one of type `t`; returns it.
    fn until(&mut self, t: &str) -> Value {
        loop {
            let e = self.events.recv_timeout(HANG).unwrap_or_else(|_| {
                panic!("no `{t}` event within {HANG:?}; events: {:#?}", self.seen)
            });
            self.seen.push(e.clone());
            if e["type"] == t {
                return e;
            }
        }
    }

    /// Sends a steer and waits until ag-loop's stdin reader has taken it.
    fn steer(&mut self, text: &str) {
        self.send(&json!({"type": "steer", "content": text}));
        self.syncs += 1;
        let id = format!("sync-{}", self.syncs);
        self.send(&json!({"type": "approval", "tool_call_id": id, "approved": false}));
        loop {
            let line = self.stderr.recv_timeout(HANG).unwrap_or_else(|_| {
                panic!(
                    "ag-loop never read the line after the steer; events: {:#?}",
                    self.seen
                )
            });
            if line.contains(&format!("`{id}`")) {
                return;
            }
        }
    }

    /// Closes stdin and returns every event; ag-loop must exit 0.
    fn finish(mut self) -> Vec<Value> {
        drop(self.stdin.take());
        while let Ok(e) = self.events.recv_timeout(HANG) {
            self.seen.push(e);
        }
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status}: {:#?}", self.seen);
        self.seen
    }
}

fn prompt(text: &str) -> Value {
    json!({"type": "prompt", "content": text})
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

/// Checks that `steer` reached the model exactly once, as the last
/// message of a request after the first, and that the run it joined (or
/// the run it started) ended finished with it among its messages.
fn assert_delivered(server: &ModelServer, events: &[Value], steer: &str) {
    let requests = server.requests();
    let last = requests.last().unwrap();
    let times = user_texts(last)
        .iter()
        .filter(|t| t.contains(steer))
        .count();
    assert_eq!(
        times, 1,
        "the steer is not in the last request once: {last:#}"
    );
    let at = requests
        .iter()
        .position(|r| {
            let m = r["messages"].as_array().unwrap().last().unwrap();
            m["role"] == "user" && m["content"] == steer
        })
        .unwrap_or_else(|| panic!("no request ends with the steer: {requests:#?}"));
    assert!(at > 0, "{requests:#?}");
    let ends = of_type(events, "agent_end");
    let end = ends
        .iter()
        .find(|e| e["messages"].to_string().contains(steer))
        .unwrap_or_else(|| panic!("no agent_end holds the steer: {events:#?}"));
    assert_eq!(end["outcome"], "finished", "{end:#}");
    assert!(
        of_type(events, "error").is_empty(),
        "{:#?}",
        of_type(events, "error")
    );
}

#[test]
fn a_steer_sent_before_the_model_answers_gets_one_more_turn() {
    let env = Env::new();
    let release = Release::default();
    let server = ModelServer::start(vec![
        Turn::Held(
            Box::new(Turn::Text("the first answer")),
            HoldAt::Start,
            release.clone(),
        ),
        Turn::Text("the answer to the steer"),
    ]);
    let mut c = Client::start(&env, &server, &[]);
    c.send(&prompt("hello"));
    c.until("turn_start");
    c.steer("STEER-BEFORE");
    release.release();
    c.until("agent_end");
    let events = c.finish();
    assert_delivered(&server, &events, "STEER-BEFORE");
    // One run: the answer, then one more turn for the steer.
    assert_eq!(of_type(&events, "agent_start").len(), 1, "{events:#?}");
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_steer_sent_during_the_final_answer_gets_one_more_turn() {
    let env = Env::new();
    let release = Release::default();
    let server = ModelServer::start(vec![
        Turn::Held(
            Box::new(Turn::Text("a final answer without tools")),
            HoldAt::MidStream,
            release.clone(),
        ),
        Turn::Text("the answer to the steer"),
    ]);
    let mut c = Client::start(&env, &server, &[]);
    c.send(&prompt("hello"));
    c.until("message_update");
    c.steer("STEER-X");
    release.release();
    c.until("agent_end");
    let events = c.finish();
    assert_delivered(&server, &events, "STEER-X");
    assert_eq!(of_type(&events, "agent_start").len(), 1, "{events:#?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    // The model saw its own answer before the steer.
    let roles: Vec<&str> = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
}

#[test]
fn a_steer_sent_during_the_tools_goes_with_the_next_model_call() {
    let env = Env::new();
    let server = ModelServer::start(vec![
        Turn::Tools(vec![(
            "bash",
            json!({"command": "while [ ! -e release ]; do sleep 0.02; done; echo released"}),
        )]),
        Turn::Text("done"),
    ]);
    let mut c = Client::start(&env, &server, &[]);
    c.send(&prompt("wait for the file"));
    c.until("tool_execution_start");
    c.steer("STEER-TOOLS");
    env.write("release", "");
    c.until("agent_end");
    let events = c.finish();
    assert_delivered(&server, &events, "STEER-TOOLS");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{requests:#?}");
    let roles: Vec<&str> = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "user"]);
}

#[test]
fn a_steer_sent_after_the_last_tool_reaches_the_model_in_the_same_run() {
    let env = Env::new();
    let release = Release::default();
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("bash", json!({"command": "echo hi"}))]),
        Turn::Held(Box::new(Turn::Text("done")), HoldAt::Start, release.clone()),
        Turn::Text("the answer to the steer"),
    ]);
    let mut c = Client::start(&env, &server, &[]);
    c.send(&prompt("say hi"));
    c.until("tool_execution_end");
    c.steer("STEER-AFTER-TOOL");
    release.release();
    c.until("agent_end");
    let events = c.finish();
    // Whether it came before the next call or during it, it is in this run.
    assert_delivered(&server, &events, "STEER-AFTER-TOOL");
    assert_eq!(of_type(&events, "agent_start").len(), 1, "{events:#?}");
}

#[test]
fn a_steer_sent_after_agent_end_is_the_next_prompt() {
    let env = Env::new();
    let server = ModelServer::start(vec![Turn::Text("first"), Turn::Text("second")]);
    let mut c = Client::start(&env, &server, &[]);
    c.send(&prompt("hello"));
    c.until("agent_end");
    c.steer("STEER-LATE");
    c.until("agent_end");
    let events = c.finish();
    assert_delivered(&server, &events, "STEER-LATE");
    assert_eq!(of_type(&events, "agent_start").len(), 2, "{events:#?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
}

#[test]
fn empty_prompts_are_skipped_with_an_error_and_no_model_call() {
    let env = Env::new();
    let server = ModelServer::start(vec![Turn::Text("hi")]);
    let mut c = Client::start(&env, &server, &[]);
    for content in [
        json!(""),
        json!([]),
        json!("  \t "),
        json!([{"type": "text", "text": "\n"}]),
    ] {
        c.send(&json!({"type": "prompt", "content": content}));
    }
    // A steer with nothing running is a prompt: the same rule.
    c.send(&json!({"type": "steer", "content": ""}));
    c.send(&prompt("hello"));
    c.until("agent_end");
    let events = c.finish();
    let errors = of_type(&events, "error");
    assert_eq!(errors.len(), 5, "{events:#?}");
    for e in errors {
        let m = e["message"].as_str().unwrap();
        assert!(m.contains("empty prompt was skipped"), "{m}");
        assert!(m.contains("no model call"), "{m}");
    }
    assert_eq!(of_type(&events, "agent_start").len(), 1, "{events:#?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(user_texts(&requests[0]), ["hello"]);

    // On the command line an empty prompt is a usage error.
    let r = run_args(&env, bin!("ag-loop"), &["-m", "ollama/x", "  "]);
    r.expect_code(2);
    assert!(r.stderr().contains("prompt argument 1 is empty"), "{r}");
}
