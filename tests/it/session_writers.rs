//! One live writer per session: concurrent `ag-loop --session` runs are
//! refused (naming the one that runs it) or wait their turn, never
//! interleave; and a session two writers did interleave (an older ag) is
//! put back in order on resume. The model is a strict server that answers
//! an invalid conversation with a 400, as OpenAI's API does.

use std::io::{BufReader, Write};
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::bin;
use crate::model_server::{Turn, chat_server, respond_sse, sse};
use crate::util::{Env, run};

/// An OpenAI-style server that checks every conversation it is sent: a
/// `tool` message must answer a call of the assistant message just before
/// its run of tool messages, once, and every call must be answered before
/// the next message. A valid request ending in a user message is answered
/// with a bash call (always with the id `call_1`, as some local servers
/// do), one ending in a tool result with text.
struct StrictServer {
    port: u16,
    refused: Arc<Mutex<Vec<String>>>,
    calls: Arc<AtomicUsize>,
}

impl StrictServer {
    fn start() -> StrictServer {
        let refused = Arc::new(Mutex::new(Vec::new()));
        let calls = Arc::new(AtomicUsize::new(0));
        let (r, c) = (refused.clone(), calls.clone());
        let port = chat_server(move |body, out, _| {
            let n = c.fetch_add(1, Ordering::SeqCst);
            let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
            match check(&request) {
                Err(why) => {
                    r.lock().unwrap().push(why.clone());
                    let body = serde_json::json!({"error": {"message": why,
                        "type": "invalid_request_error"}})
                    .to_string();
                    let head = format!(
                        "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                        body.len()
                    );
                    out.write_all(head.as_bytes()).is_ok() && out.write_all(body.as_bytes()).is_ok()
                }
                Ok(last_role) => {
                    let turn = if last_role == "tool" {
                        Turn::Text("done")
                    } else {
                        Turn::Tools(vec![("bash", serde_json::json!({"command": "echo hi"}))])
                    };
                    let text = sse(&turn, n).replace(&format!("call_{n}_0"), "call_1");
                    respond_sse(out, &text)
                }
            }
        });
        StrictServer {
            port,
            refused,
            calls,
        }
    }

    fn refused(&self) -> Vec<String> {
        self.refused.lock().unwrap().clone()
    }

    fn ag_loop(&self, env: &Env, extra: &[&str]) -> std::process::Command {
        let mut c = env.cmd(bin!("ag-loop"));
        c.args([
            "-m",
            "ollama/strict",
            "--base-url",
            &format!("http://127.0.0.1:{}/v1", self.port),
            "--json",
            "--no-gate",
            "--tools",
            "bash",
            "--sandbox",
            "off",
        ])
        .args(extra)
        .env("AG_CONTEXT_WINDOW", "100000");
        c
    }
}

/// The role of the last message when the conversation is valid, else why not.
fn check(request: &Value) -> Result<String, String> {
    let messages = request["messages"].as_array().ok_or("no messages")?;
    let mut open: Vec<String> = Vec::new();
    let mut last = String::new();
    for (i, m) in messages.iter().enumerate() {
        let role = m["role"].as_str().unwrap_or("");
        if role == "tool" {
            let id = m["tool_call_id"].as_str().unwrap_or("");
            let Some(at) = open.iter().position(|o| o == id) else {
                return Err(format!(
                    "messages[{i}]: a message with role 'tool' must be a response to a preceding message with 'tool_calls' (`{id}`)"
                ));
            };
            open.remove(at);
        } else {
            if !open.is_empty() {
                return Err(format!(
                    "messages[{i}]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; not answered: {open:?}"
                ));
            }
            if role == "assistant" {
                open = m["tool_calls"]
                    .as_array()
                    .map(|calls| {
                        calls
                            .iter()
                            .map(|c| c["id"].as_str().unwrap_or("").to_string())
                            .collect()
                    })
                    .unwrap_or_default();
            }
        }
        last = role.to_string();
    }
    if !open.is_empty() {
        return Err(format!("calls not answered at the end: {open:?}"));
    }
    Ok(last)
}

/// The events a finished run printed; it must have exited 0.
fn events(r: &crate::util::Run) -> Vec<Value> {
    r.ok();
    r.json_lines()
}

/// A new session holding one finished run; its id.
fn first_run(env: &Env, server: &StrictServer) -> String {
    let mut c = server.ag_loop(env, &[]);
    c.arg("start");
    let events = events(&run(c, None));
    events[0]["session_id"].as_str().unwrap().to_string()
}

fn session_file(env: &Env, id: &str) -> String {
    let r = run(
        {
            let mut c = env.cmd(bin!("ag-session"));
            c.args(["path", id]);
            c
        },
        None,
    );
    r.ok();
    std::fs::read_to_string(r.stdout().trim()).unwrap()
}

/// Checks that the runs recorded in a session file never overlap: each
/// `agent_start` is followed by its own `agent_end` before the next.
fn assert_runs_one_after_another(text: &str) -> usize {
    let mut open = false;
    let mut runs = 0;
    for line in text.lines().skip(1) {
        let e: Value = serde_json::from_str(line).unwrap();
        match e["type"].as_str().unwrap() {
            "agent_start" => {
                assert!(!open, "a run started inside another:\n{text}");
                open = true;
            }
            "agent_end" => {
                assert!(open, "a run ended twice:\n{text}");
                open = false;
                runs += 1;
            }
            _ => assert!(open, "an event outside any run: {line}"),
        }
    }
    runs
}

fn spawn_all(env: &Env, server: &StrictServer, id: &str, extra: &[&str]) -> Vec<Child> {
    (0..20)
        .map(|i| {
            let mut c = server.ag_loop(env, &["--session", id]);
            c.args(extra)
                .arg(format!("writer {i}"))
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            c.spawn().unwrap()
        })
        .collect()
}

#[test]
fn twenty_writers_on_one_session_are_refused_or_wait_and_never_interleave() {
    let env = Env::new();
    let server = StrictServer::start();
    let id = first_run(&env, &server);

    // By default a second writer is refused at once, naming the first.
    let children = spawn_all(&env, &server, &id, &[]);
    let pids: Vec<u32> = children.iter().map(Child::id).collect();
    let (mut ran, mut refused) = (0, 0);
    for child in children {
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => ran += 1,
            Some(2) => {
                refused += 1;
                assert!(stderr.contains("is in use by ag-loop (pid "), "{stderr}");
                assert!(stderr.contains("--wait-for-session"), "{stderr}");
                // The process named is one of these writers, still running then.
                let pid: u32 = stderr
                    .split("(pid ")
                    .nth(1)
                    .and_then(|s| s.split(')').next())
                    .unwrap()
                    .parse()
                    .unwrap();
                assert!(pids.contains(&pid), "pid {pid} is none of {pids:?}");
                assert!(out.stdout.is_empty(), "a refused run printed events");
            }
            other => panic!("{other:?}: {stderr}"),
        }
    }
    assert!(ran >= 1, "nobody ran");
    assert_eq!(ran + refused, 20);
    let text = session_file(&env, &id);
    assert_eq!(assert_runs_one_after_another(&text), 1 + ran);

    // With --wait-for-session they all run, one after another.
    let children = spawn_all(&env, &server, &id, &["--wait-for-session"]);
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = session_file(&env, &id);
    assert_eq!(assert_runs_one_after_another(&text), 1 + ran + 20);

    // The whole conversation resumes, and the strict server takes it.
    let mut c = server.ag_loop(&env, &["--session", &id]);
    c.arg("and now?");
    events(&run(c, None));
    assert_eq!(server.refused(), Vec::<String>::new());
    assert!(server.calls.load(Ordering::SeqCst) >= 2 * (2 + ran + 20));
}

#[test]
fn wait_for_session_needs_a_session_to_resume() {
    let env = Env::new();
    let r = crate::util::run_args(&env, bin!("ag-loop"), &["--wait-for-session", "hi"]);
    r.expect_code(2);
    assert!(r.stderr().contains("--session"), "{r}");
}

#[test]
fn a_session_two_writers_interleaved_is_put_in_order_on_resume() {
    let env = Env::new();
    let server = StrictServer::start();
    // Two runs' events, each valid alone, both with the call id call_1.
    let run_alone = |prompt: &str| -> Vec<String> {
        let mut c = server.ag_loop(&env, &["--no-session"]);
        c.arg(prompt);
        let r = run(c, None);
        r.ok();
        r.stdout().lines().map(str::to_string).collect()
    };
    let (a, b) = (run_alone("task A"), run_alone("task B"));
    // As an older ag wrote them when both ran at once: line by line in turn.
    let mut mixed = Vec::new();
    for i in 0..a.len().max(b.len()) {
        mixed.extend(a.get(i).cloned());
        mixed.extend(b.get(i).cloned());
    }
    let r = run(
        {
            let mut c = env.cmd(bin!("ag-session"));
            c.args(["new"]);
            c
        },
        None,
    );
    r.ok();
    let id = r.stdout().split('\t').next().unwrap().to_string();
    let mut c = env.cmd(bin!("ag-session"));
    c.args(["append", &id]);
    run(c, Some((mixed.join("\n") + "\n").as_bytes())).ok();

    let mut c = server.ag_loop(&env, &["--session", &id]);
    c.arg("carry on");
    let r = run(c, None);
    r.ok();
    assert!(
        r.stderr()
            .contains("two processes wrote this session at once"),
        "{r}"
    );
    assert_eq!(server.refused(), Vec::<String>::new());
}

#[test]
fn ag_session_append_is_refused_while_ag_loop_runs_the_session() {
    use crate::model_server::{HoldAt, ModelServer, Release};
    let env = Env::new();
    let release = Release::default();
    let server = ModelServer::start(vec![Turn::Held(
        Box::new(Turn::Text("hi")),
        HoldAt::Start,
        release.clone(),
    )]);
    let mut c = server.ag_loop(&env);
    c.arg("hello")
        .env("AG_CONTEXT_WINDOW", "100000")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    // The session is known from the first event; the model call then waits.
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    let start: Value = serde_json::from_str(&line).unwrap();
    let id = start["session_id"].as_str().unwrap();
    let mut c = env.cmd(bin!("ag-session"));
    c.args(["append", id]);
    let r = run(c, Some(b"{\"type\":\"turn_start\"}\n"));
    r.expect_code(1);
    assert!(
        r.stderr()
            .contains(&format!("is in use by ag-loop (pid {})", child.id())),
        "{r}"
    );
    release.release();
    assert!(child.wait().unwrap().success());
    // Once it has ended, appending works.
    let mut c = env.cmd(bin!("ag-session"));
    c.args(["append", id]);
    run(c, Some(b"{\"type\":\"turn_start\"}\n")).ok();
}

#[test]
fn a_writer_killed_with_sigkill_frees_its_session_at_once() {
    use crate::model_server::ModelServer;
    use std::io::BufRead;
    let env = Env::new();
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("bash", serde_json::json!({"command": "sleep 30"}))]),
        Turn::Text("resumed"),
    ]);
    let mut c = server.ag_loop(&env);
    c.args(["--no-gate", "--tools", "bash", "--sandbox", "off", "go"])
        .env("AG_CONTEXT_WINDOW", "100000")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    let mut id = String::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let e: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if let Some(s) = e["session_id"].as_str() {
            id = s.to_string();
        }
        if e["type"] == "tool_execution_start" {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // No lock left behind: the next run resumes, the call answered.
    let mut c = server.ag_loop(&env);
    c.args(["--no-gate", "--tools", "bash", "--session", &id, "again"])
        .env("AG_CONTEXT_WINDOW", "100000");
    run(c, None).ok();
    let last = server.requests().pop().unwrap();
    let roles: Vec<&str> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "user"],
        "{last:#}"
    );
}
