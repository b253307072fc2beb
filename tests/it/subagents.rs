//! Subagents (ag-loop's `agent` tool) against a model server that answers
//! by the conversation (its first prompt and the tool results so far), so
//! that a parent and children running in parallel each get their own
//! script: nested events, summed cost, the changed files, a worktree
//! branch, a refusal to widen the tools, an interrupt that stops the
//! whole tree and leaves no process.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::bin;
use crate::model_server::{Turn, conversation_server};
use crate::util::{Env, git, run};

/// The answer to a conversation: `first` is its first user text, `results`
/// the tool results so far. `None` holds the request until the client
/// goes away (a model call in flight when the run is stopped).
type Script = fn(first: &str, results: usize) -> Option<Turn>;

/// A model server on 127.0.0.1 answering by `script`; returns its port.
fn serve(script: Script) -> u16 {
    conversation_server(move |c, _| script(&c.first, c.results))
}

/// `fake/m` on the server at $10,000 per million input tokens: each call
/// (100 input tokens) costs $1.
fn models_json(env: &Env, port: u16) {
    env.write(
        ".home/.ag/models.json",
        json!({"providers": {"fake": {
            "base_url": format!("http://127.0.0.1:{port}/v1"),
            "api": "openai-chat",
            "api_key_env": "FAKE_KEY",
            "models": [{"id": "m", "context_window": 100000, "max_output": 4096,
                        "prices": {"input": 10000.0, "output": 0.0}}]
        }}})
        .to_string(),
    );
}

fn ag_loop(env: &Env, port: u16, tools: &str) -> Command {
    models_json(env, port);
    let mut c = env.cmd(bin!("ag-loop"));
    c.env("FAKE_KEY", "k-secret-123")
        .args(["-m", "fake/m", "--json", "--tools", tools]);
    c
}

/// `ag-loop --json --tools TOOLS ARGS...` against the server at `port`,
/// run to its end.
fn run_loop(env: &Env, port: u16, tools: &str, args: &[&str]) -> crate::util::Run {
    let mut c = ag_loop(env, port, tools);
    c.args(args);
    run(c, None)
}

fn nested<'a>(events: &'a [Value], call: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["type"] == "subagent_event" && e["tool_call_id"] == call)
        .map(|e| &e["event"])
        .collect()
}

fn one_child(first: &str, results: usize) -> Option<Turn> {
    Some(match (first, results) {
        ("delegate", 0) => Turn::Tools(vec![("agent", json!({"task": "write notes.txt"}))]),
        ("delegate", _) => Turn::Text("the subagent wrote notes.txt"),
        ("write notes.txt", 0) => Turn::Tools(vec![(
            "write",
            json!({"path": "notes.txt", "content": "from the child\n"}),
        )]),
        ("write notes.txt", _) => Turn::Text("wrote notes.txt"),
        _ => Turn::Text("(unexpected)"),
    })
}

#[test]
fn a_subagent_runs_the_task_its_events_nest_and_its_cost_adds_up() {
    let env = Env::new();
    git(env.path(), &["init", "-q"]);
    env.write("README", "x\n");
    git(env.path(), &["add", "README"]);
    git(env.path(), &["commit", "-qm", "init"]);
    let port = serve(one_child);
    let r = run_loop(&env, port, "read,write,agent", &["delegate"]);
    r.expect_code(0);
    let events = r.json_lines();
    assert_eq!(env.read("notes.txt"), b"from the child\n");
    let start = events
        .iter()
        .find(|e| e["type"] == "tool_execution_start" && e["tool_name"] == "agent")
        .expect("an agent call");
    let id = start["tool_call_id"].as_str().unwrap();
    let child = nested(&events, id);
    let kinds: Vec<&str> = child.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"agent_start"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"agent_end"), "{kinds:?}");
    assert!(child.iter().all(|e| e["timestamp"].is_string()));
    assert!(
        child
            .iter()
            .any(|e| e["type"] == "tool_execution_end" && e["tool_name"] == "write")
    );
    let end = agent_call_end(&events);
    assert_eq!(end["is_error"], false, "{end}");
    assert_eq!(
        end["details"]["changed"],
        json!(["notes.txt"]),
        "{end} {:#?}",
        child
    );
    assert_eq!(end["details"]["outcome"], "finished");
    let output = end["output"].as_str().unwrap();
    assert!(output.contains("wrote notes.txt"), "{output}");
    assert!(output.contains("Files it changed: notes.txt"), "{output}");
    // Two calls of the parent, two of the child: $4, counted once.
    let agent_end = events.iter().rfind(|e| e["type"] == "agent_end").unwrap();
    let total = agent_end["usage"]["cost"]["total"].as_f64().unwrap();
    assert!((total - 4.0).abs() < 1e-6, "{agent_end}");
    assert_eq!(agent_end["usage"]["input"], 400);
    // The child's session is its own, and recorded.
    let child_session = end["details"]["session_id"].as_str().unwrap();
    let parent_session = events[0]["session_id"]
        .as_str()
        .or_else(|| {
            events
                .iter()
                .find(|e| e["type"] == "agent_start")
                .and_then(|e| e["session_id"].as_str())
        })
        .unwrap();
    assert_ne!(child_session, parent_session);
    let show = run(
        {
            let mut c = env.cmd(bin!("ag-session"));
            c.args(["show", child_session]);
            c
        },
        None,
    );
    show.expect_code(0);
    assert!(
        show.stdout().contains("wrote notes.txt"),
        "{}",
        show.stdout()
    );
    // The key reached the child ag-loop, never an event.
    assert!(!r.stdout().contains("k-secret-123"));
    // The parent's transcript shows the child's steps under the call.
    let show = run(
        {
            let mut c = env.cmd(bin!("ag-session"));
            c.args(["show", parent_session]);
            c
        },
        None,
    );
    let text = show.stdout();
    let at = text.find("Subagent:").unwrap_or_else(|| panic!("{text}"));
    assert!(text[at..].contains("- write {"), "{text}");
    assert!(text[at..].contains("- wrote notes.txt"), "{text}");
    // The child may start subagents of its own (--max-depth 2 leaves it one
    // level): its session records `agent` among its tools.
    assert_eq!(
        session_tools(&env, child_session),
        ["read", "write", "agent"]
    );
}

/// The tools a session's header records.
fn session_tools(env: &Env, id: &str) -> Vec<String> {
    let mut c = env.cmd(bin!("ag-session"));
    c.args(["show", "--json", id]);
    let r = run(c, None);
    let header: Value = serde_json::from_str(r.stdout().lines().next().unwrap()).unwrap();
    serde_json::from_value(header["config"]["tools"].clone()).unwrap_or_else(|_| panic!("{header}"))
}

#[test]
fn the_depth_limit_leaves_agent_out_of_the_last_level_and_the_pretty_view_indents_it() {
    let env = Env::new();
    let port = serve(one_child);
    let r = run_loop(
        &env,
        port,
        "read,write,agent",
        &["--max-depth", "1", "delegate"],
    );
    r.expect_code(0);
    let events = r.json_lines();
    let end = agent_call_end(&events);
    let child = end["details"]["session_id"].as_str().unwrap();
    assert_eq!(session_tools(&env, child), ["read", "write"]);
    // --max-depth 0: no `agent` at all, and a warning says why.
    let pretty = |extra: &[&str]| {
        let mut c = env.cmd(bin!("ag-loop"));
        c.env("FAKE_KEY", "k")
            .args(["-m", "fake/m", "--pretty", "--tools", "read,write,agent"])
            .args(extra)
            .arg("delegate");
        run(c, None)
    };
    let r = pretty(&["--max-depth", "0"]);
    assert!(r.stderr().contains("--max-depth 0"), "{}", r.stderr());
    // The readable view shows a child's steps indented under the call.
    let r = pretty(&[]);
    r.expect_code(0);
    assert!(r.stdout().contains("  ↳ write {"), "{}", r.stdout());
    assert!(r.stdout().contains("  ↳ wrote notes.txt"), "{}", r.stdout());
}

fn widening(first: &str, results: usize) -> Option<Turn> {
    Some(match (first, results) {
        ("delegate", 0) => Turn::Tools(vec![(
            "agent",
            json!({"task": "run the tests", "tools": ["read", "bash"]}),
        )]),
        ("delegate", _) => Turn::Text("it was refused"),
        _ => Turn::Text("a child ran, which it must not"),
    })
}

#[test]
fn a_subagent_that_asks_for_more_tools_than_its_parent_has_is_refused() {
    let env = Env::new();
    let port = serve(widening);
    let r = run_loop(&env, port, "read,agent", &["delegate"]);
    r.expect_code(0);
    let events = r.json_lines();
    let end = agent_call_end(&events);
    assert_eq!(end["is_error"], true);
    let output = end["output"].as_str().unwrap();
    assert!(output.contains("bash"), "{output}");
    assert!(output.contains("your tools or fewer"), "{output}");
    assert!(!events.iter().any(|e| e["type"] == "subagent_event"));
    // An identity that asks for more is refused the same way.
    env.write(
        ".ag/agents/wide.md",
        "---\nname: wide\ntools: read, bash\n---\nYou run things.\n",
    );
    fn by_identity(first: &str, results: usize) -> Option<Turn> {
        Some(match (first, results) {
            ("delegate", 0) => Turn::Tools(vec![(
                "agent",
                json!({"task": "run the tests", "agent": "wide"}),
            )]),
            ("delegate", _) => Turn::Text("it was refused"),
            _ => Turn::Text("a child ran, which it must not"),
        })
    }
    let port = serve(by_identity);
    let r = run_loop(&env, port, "read,agent", &["delegate"]);
    let events = r.json_lines();
    let end = agent_call_end(&events);
    assert_eq!(end["is_error"], true);
    let output = end["output"].as_str().unwrap();
    assert!(output.contains("identity `wide`"), "{output}");
    assert!(!events.iter().any(|e| e["type"] == "subagent_event"));
}

fn two_children(first: &str, results: usize) -> Option<Turn> {
    Some(match (first, results) {
        ("split", 0) => Turn::Tools(vec![
            ("agent", json!({"task": "write a.txt"})),
            (
                "agent",
                json!({"task": "write b.txt", "isolation": "worktree"}),
            ),
        ]),
        ("split", _) => Turn::Text("both done"),
        ("write a.txt", 0) => {
            Turn::Tools(vec![("write", json!({"path": "a.txt", "content": "a\n"}))])
        }
        ("write b.txt", 0) => {
            Turn::Tools(vec![("write", json!({"path": "b.txt", "content": "b\n"}))])
        }
        (_, _) => Turn::Text("written"),
    })
}

fn repo(env: &Env) {
    git(env.path(), &["init", "-q", "-b", "main"]);
    env.write(".gitignore", ".home/\n");
    env.write("README", "x\n");
    git(env.path(), &["add", "README", ".gitignore"]);
    git(env.path(), &["commit", "-qm", "init"]);
}

fn git_out(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).to_string()
}

#[test]
fn two_subagents_run_in_parallel_one_in_a_worktree_whose_branch_holds_its_work() {
    let env = Env::new();
    repo(&env);
    let port = serve(two_children);
    let r = run_loop(&env, port, "read,write,agent", &["split"]);
    r.expect_code(0);
    let events = r.json_lines();
    let ends: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_execution_end" && e["tool_name"] == "agent")
        .collect();
    assert_eq!(ends.len(), 2, "{events:#?}");
    let (here, isolated) = (
        ends.iter()
            .find(|e| e["details"]["branch"].is_null())
            .unwrap(),
        ends.iter()
            .find(|e| !e["details"]["branch"].is_null())
            .unwrap(),
    );
    assert_eq!(here["details"]["changed"], json!(["a.txt"]));
    assert_eq!(env.read("a.txt"), b"a\n");
    // b.txt is on the branch, not in the parent's tree.
    assert!(!env.join("b.txt").exists());
    let branch = isolated["details"]["branch"].as_str().unwrap();
    assert!(branch.starts_with("ag/agent-"), "{branch}");
    assert_eq!(isolated["details"]["changed"], json!(["b.txt"]));
    assert!(
        isolated["details"]["diff_stat"]
            .as_str()
            .unwrap()
            .contains("b.txt")
    );
    assert!(isolated["output"].as_str().unwrap().contains(branch));
    assert_eq!(
        git_out(env.path(), &["show", &format!("{branch}:b.txt")]),
        "b\n"
    );
    // The worktree is gone; the branch stays for the merge.
    assert!(!git_out(env.path(), &["worktree", "list"]).contains(".home"));
    let left: Vec<_> = std::fs::read_dir(env.join(".home/.ag/worktrees"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
    // Both children's events are nested under their own call.
    for e in &ends {
        let id = e["tool_call_id"].as_str().unwrap();
        let kinds: Vec<&str> = nested(&events, id)
            .iter()
            .map(|e| e["type"].as_str().unwrap())
            .collect();
        assert_eq!(kinds.first(), Some(&"agent_start"), "{kinds:?}");
        assert_eq!(kinds.last(), Some(&"agent_end"), "{kinds:?}");
    }
    // 2 calls of the parent and 2 of each child: $6.
    let agent_end = events.iter().rfind(|e| e["type"] == "agent_end").unwrap();
    let total = agent_end["usage"]["cost"]["total"].as_f64().unwrap();
    assert!((total - 6.0).abs() < 1e-6, "{agent_end}");
}

fn stalled_children(first: &str, results: usize) -> Option<Turn> {
    match (first, results) {
        ("split", 0) => Some(Turn::Tools(vec![
            ("agent", json!({"task": "slow a"})),
            ("agent", json!({"task": "slow b", "isolation": "worktree"})),
        ])),
        ("split", _) => Some(Turn::Text("stopped")),
        // Each child's first model call hangs until it is stopped.
        _ => None,
    }
}

/// The processes whose command line names `dir`.
fn processes_in(dir: &Path) -> Vec<String> {
    let out = Command::new("pgrep")
        .args(["-a", "-f", &dir.display().to_string()])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.contains("pgrep"))
        .map(str::to_string)
        .collect()
}

#[test]
fn an_interrupt_stops_both_parallel_subagents_and_leaves_no_process_or_worktree() {
    let env = Env::new();
    repo(&env);
    let port = serve(stalled_children);
    let mut c = ag_loop(&env, port, "read,write,agent");
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    writeln!(stdin, "split").unwrap();
    let mut events: Vec<Value> = Vec::new();
    let mut lines = stdout.lines();
    let deadline = Instant::now() + Duration::from_secs(60);
    // Both children have asked their model (and hang there).
    loop {
        assert!(Instant::now() < deadline, "{events:#?}");
        let line = lines.next().unwrap().unwrap();
        let e: Value = serde_json::from_str(&line).unwrap();
        events.push(e);
        let asking = events
            .iter()
            .filter(|e| e["type"] == "subagent_event" && e["event"]["type"] == "turn_start")
            .count();
        if asking == 2 {
            break;
        }
    }
    writeln!(stdin, r#"{{"type":"interrupt"}}"#).unwrap();
    loop {
        let line = lines.next().unwrap().unwrap();
        let e: Value = serde_json::from_str(&line).unwrap();
        let done = e["type"] == "agent_end";
        events.push(e);
        if done {
            break;
        }
    }
    drop(stdin);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{events:#?}");
    let ends: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_execution_end" && e["tool_name"] == "agent")
        .collect();
    assert_eq!(ends.len(), 2);
    for e in &ends {
        assert_eq!(e["is_error"], true);
        assert_eq!(e["details"]["outcome"], "interrupted", "{e}");
        let id = e["tool_call_id"].as_str().unwrap();
        // Each child said it was interrupted, and ended.
        let kinds: Vec<&str> = nested(&events, id)
            .iter()
            .map(|e| e["type"].as_str().unwrap())
            .collect();
        assert!(kinds.contains(&"interrupted"), "{kinds:?}");
        assert_eq!(kinds.last(), Some(&"agent_end"), "{kinds:?}");
    }
    assert_eq!(events.last().unwrap()["outcome"], "interrupted");
    // Nothing of the tree is left: no process, no worktree.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !processes_in(env.path()).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(processes_in(env.path()), Vec::<String>::new());
    assert!(!git_out(env.path(), &["worktree", "list"]).contains(".home"));
    let left: Vec<_> = std::fs::read_dir(env.join(".home/.ag/worktrees"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

fn killed_in_a_worktree(first: &str, results: usize) -> Option<Turn> {
    match (first, results) {
        ("isolate", 0) => Some(Turn::Tools(vec![(
            "agent",
            json!({"task": "write c.txt", "isolation": "worktree"}),
        )])),
        ("write c.txt", 0) => Some(Turn::Tools(vec![(
            "write",
            json!({"path": "c.txt", "content": "c\n"}),
        )])),
        // Then it hangs, and the parent is killed outright.
        _ => None,
    }
}

#[test]
fn ag_session_finds_and_cleans_the_worktree_of_a_killed_run_keeping_its_work() {
    let env = Env::new();
    repo(&env);
    let port = serve(killed_in_a_worktree);
    let mut c = ag_loop(&env, port, "read,write,agent");
    c.arg("isolate")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    loop {
        let e: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        if e["type"] == "subagent_event" && e["event"]["type"] == "tool_execution_end" {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // The watchdog ends the tree of the killed run.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !processes_in(env.path()).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(processes_in(env.path()), Vec::<String>::new());
    assert!(git_out(env.path(), &["worktree", "list"]).contains(".home"));
    let session = |args: &[&str]| {
        let mut c = env.cmd(bin!("ag-session"));
        c.args(args);
        run(c, None)
    };
    let listed = session(&["clean-worktrees", "--dry-run"]);
    listed.expect_code(0);
    assert_eq!(listed.stdout().lines().count(), 1, "{}", listed.stdout());
    assert!(listed.stdout().contains("ag/agent-"), "{}", listed.stdout());
    // A dry run changed nothing.
    assert!(git_out(env.path(), &["worktree", "list"]).contains(".home"));
    let cleaned = session(&["clean-worktrees"]);
    cleaned.expect_code(0);
    assert!(
        cleaned
            .stdout()
            .contains("removed; its work is on the branch"),
        "{}",
        cleaned.stdout()
    );
    assert!(!git_out(env.path(), &["worktree", "list"]).contains(".home"));
    let branch = git_out(env.path(), &["branch", "--list", "ag/agent-*"]);
    let branch = branch.trim().trim_start_matches("* ").to_string();
    assert_eq!(
        git_out(env.path(), &["show", &format!("{branch}:c.txt")]),
        "c\n"
    );
    // Nothing is left to clean.
    assert_eq!(session(&["clean-worktrees"]).stdout(), "");
}

#[test]
fn a_subagent_gets_only_what_is_left_of_the_parents_cost_and_turns() {
    let env = Env::new();
    let port = serve(one_child);
    // $2 in all: the parent's first call costs $1, so the child has $1,
    // which its first call spends; it stops there, and so does the parent.
    let r = run_loop(
        &env,
        port,
        "read,write,agent",
        &["--max-cost", "2", "delegate"],
    );
    r.expect_code(1);
    let events = r.json_lines();
    let end = agent_call_end(&events);
    assert_eq!(end["details"]["outcome"], "cost_limit", "{end}");
    assert_eq!(end["is_error"], true);
    let agent_end = events.iter().rfind(|e| e["type"] == "agent_end").unwrap();
    assert_eq!(agent_end["outcome"], "cost_limit", "{agent_end}");
    let total = agent_end["usage"]["cost"]["total"].as_f64().unwrap();
    assert!((total - 2.0).abs() < 1e-6, "{agent_end}");
    // Two turns in all: the child gets the one left.
    let r = run_loop(
        &env,
        port,
        "read,write,agent",
        &["--max-turns", "2", "delegate"],
    );
    let events = r.json_lines();
    let end = agent_call_end(&events);
    assert_eq!(end["details"]["outcome"], "turn_limit", "{end}");
    let child_turns = nested(&events, end["tool_call_id"].as_str().unwrap())
        .iter()
        .filter(|e| e["type"] == "turn_start")
        .count();
    assert_eq!(child_turns, 1);
}

#[test]
fn result_line_is_one_json_line_with_outcome_answer_changed_files_and_cost() {
    let env = Env::new();
    let port = serve(one_child);
    models_json(&env, port);
    let mut c = env.cmd(bin!("ag-loop"));
    c.env("FAKE_KEY", "k").args([
        "-m",
        "fake/m",
        "--tools",
        "read,write",
        "--result-line",
        "write notes.txt",
    ]);
    let r = run(c, None);
    r.expect_code(0);
    let out = r.stdout();
    assert_eq!(out.lines().count(), 1, "{out}");
    let line: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(line["type"], "result");
    assert_eq!(line["outcome"], "finished");
    assert_eq!(line["answer"], "wrote notes.txt");
    assert_eq!(line["changed"], json!(["notes.txt"]));
    assert!(
        (line["cost"].as_f64().unwrap() - 2.0).abs() < 1e-6,
        "{line}"
    );
    assert!(line["session_id"].is_string());
    assert!(line.get("error").is_none());
    // It takes no other output mode.
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["--result-line", "--json", "x"]);
    run(c, None).expect_code(2);
}

#[test]
fn a_key_given_with_api_key_reaches_the_subagent_in_its_variable_not_its_arguments() {
    let env = Env::new();
    let port = serve(one_child);
    models_json(&env, port);
    let mut c = env.cmd(bin!("ag-loop"));
    // No FAKE_KEY in the environment: only the flag has the key.
    c.args([
        "-m",
        "fake/m",
        "--api-key",
        "k-flag-456",
        "--json",
        "--tools",
        "read,write,agent",
        "delegate",
    ]);
    let r = run(c, None);
    r.expect_code(0);
    let events = r.json_lines();
    let end = agent_call_end(&events);
    assert_eq!(end["details"]["outcome"], "finished", "{end}");
    assert!(!r.stdout().contains("k-flag-456"));
}

fn risky_child(first: &str, results: usize) -> Option<Turn> {
    Some(match (first, results) {
        ("delegate the push", 0) => Turn::Tools(vec![("agent", json!({"task": "push it"}))]),
        ("delegate the push", _) => Turn::Text("done"),
        ("push it", 0) => Turn::Tools(vec![(
            "bash",
            json!({"command": "git push --force origin main 2>/dev/null; touch ran.txt"}),
        )]),
        ("push it", _) => Turn::Text("tried"),
        _ => Turn::Text("(unexpected)"),
    })
}

/// The child's result of its bash call, and whether the command ran.
fn risky_run(env: &Env, attended: bool) -> (Value, bool) {
    let port = serve(risky_child);
    let mut c = ag_loop(env, port, "read,bash,agent");
    let stdin = if attended {
        c.arg("--approve-on-stdin");
        Some(b"delegate the push\n".as_slice())
    } else {
        c.arg("delegate the push");
        None
    };
    let r = run(c, stdin);
    r.expect_code(0);
    let events = r.json_lines();
    let id = events
        .iter()
        .find(|e| e["type"] == "tool_execution_start" && e["tool_name"] == "agent")
        .and_then(|e| e["tool_call_id"].as_str())
        .expect("an agent call")
        .to_string();
    let end = nested(&events, &id)
        .into_iter()
        .find(|e| e["type"] == "tool_execution_end" && e["tool_name"] == "bash")
        .cloned()
        .expect("the child's bash call");
    (end, env.join("ran.txt").exists())
}

#[test]
fn a_subagent_of_a_run_a_person_approves_refuses_what_would_be_asked() {
    // The parent's person would have been asked about a forced push; the
    // child cannot ask anybody, so it does not run it.
    let env = Env::new();
    let (end, ran) = risky_run(&env, true);
    assert!(
        !ran,
        "the child ran what its parent's person would be asked about: {end}"
    );
    assert_eq!(end["is_error"], true, "{end}");
    let out = end["output"].as_str().unwrap_or_default();
    assert!(out.contains("nobody can be asked"), "{end}");
    // Unattended all the way down, the same call runs with a note, as it
    // would in the parent.
    let env = Env::new();
    let (end, ran) = risky_run(&env, false);
    assert!(ran, "{end}");
}

/// The `tool_execution_end` of the run's (first) `agent` call.
fn agent_call_end(events: &[Value]) -> &Value {
    events
        .iter()
        .find(|e| e["type"] == "tool_execution_end" && e["tool_name"] == "agent")
        .unwrap_or_else(|| panic!("no agent call ended: {events:#?}"))
}

/// Model calls in the stream: the run's own and, nested at any depth, its
/// subagents'.
fn turns_in_tree(events: &[Value]) -> (usize, usize) {
    fn inner(e: &Value) -> &Value {
        if e["type"] == "subagent_event" {
            inner(&e["event"])
        } else {
            e
        }
    }
    let own = events.iter().filter(|e| e["type"] == "turn_start").count();
    let below = events
        .iter()
        .filter(|e| e["type"] == "subagent_event" && inner(e)["type"] == "turn_start")
        .count();
    (own, below)
}

#[test]
fn a_childs_turns_count_against_the_parents_max_turns() {
    // Three turns in all: the parent's first, and the child's two (the
    // write and its answer) leave none for the parent's answer.
    let env = Env::new();
    let port = serve(one_child);
    let r = run_loop(
        &env,
        port,
        "read,write,agent",
        &["--max-turns", "3", "delegate"],
    );
    r.expect_code(1);
    let events = r.json_lines();
    assert_eq!(agent_call_end(&events)["details"]["outcome"], "finished");
    let last = events.iter().rfind(|e| e["type"] == "agent_end").unwrap();
    assert_eq!(last["outcome"], "turn_limit", "{last}");
    let why = last["error"].as_str().unwrap();
    assert!(why.contains("subagents' turns included"), "{why}");
    assert_eq!(turns_in_tree(&events), (1, 2));
}

fn spinning_pair(first: &str, results: usize) -> Option<Turn> {
    Some(match (first, results) {
        ("spin twice", 0) => Turn::Tools(vec![
            ("agent", json!({"task": "spin"})),
            ("agent", json!({"task": "spin"})),
        ]),
        ("spin twice", _) => Turn::Text("done"),
        // A child that never ends on its own: it reads, and reads again.
        ("spin", _) => Turn::Tools(vec![("read", json!({"path": "README"}))]),
        _ => Turn::Text("(unexpected)"),
    })
}

#[test]
fn children_in_parallel_share_what_is_left_of_the_turns_instead_of_each_spending_it() {
    let env = Env::new();
    env.write("README", "x\n");
    let port = serve(spinning_pair);
    let r = run_loop(
        &env,
        port,
        "read,agent",
        &["--max-turns", "5", "spin twice"],
    );
    r.expect_code(1);
    let events = r.json_lines();
    // Each child was started with the 4 turns left, and both together
    // made 4 model calls, not 8.
    assert_eq!(turns_in_tree(&events), (1, 4), "{events:#?}");
    let ends: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_execution_end" && e["tool_name"] == "agent")
        .collect();
    assert_eq!(ends.len(), 2);
    for e in ends {
        assert_eq!(e["details"]["outcome"], "turn_limit", "{e}");
    }
    let last = events.iter().rfind(|e| e["type"] == "agent_end").unwrap();
    assert_eq!(last["outcome"], "turn_limit", "{last}");
}

#[test]
fn children_in_parallel_share_what_is_left_of_the_cost_while_they_run() {
    // $5 in all, each call $1: after the parent's first call $4 is left,
    // and each child is started with $4. Spending on its own, each would
    // make 4 calls (8 in all); sharing the tree's ledger, they make 4
    // between them, and at most one more (each may start its last call
    // when $1 is left, before the other's call has been paid for).
    let env = Env::new();
    env.write("README", "x\n");
    let port = serve(spinning_pair);
    let r = run_loop(
        &env,
        port,
        "read,agent",
        &["--max-turns", "50", "--max-cost", "5", "spin twice"],
    );
    r.expect_code(1);
    let events = r.json_lines();
    let (own, below) = turns_in_tree(&events);
    assert_eq!(own, 1, "{events:#?}");
    assert!((4..=5).contains(&below), "children made {below} calls");
    let ends: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_execution_end" && e["tool_name"] == "agent")
        .collect();
    assert_eq!(ends.len(), 2);
    for e in ends {
        assert_eq!(e["details"]["outcome"], "cost_limit", "{e}");
    }
    let last = events.iter().rfind(|e| e["type"] == "agent_end").unwrap();
    assert_eq!(last["outcome"], "cost_limit", "{last}");
    let why = last["error"].as_str().unwrap_or_default();
    assert!(why.contains("--max-cost"), "{last}");
}

fn nesting(first: &str, results: usize) -> Option<Turn> {
    Some(match (first, results) {
        ("nest", 0) => Turn::Tools(vec![("agent", json!({"task": "middle"}))]),
        ("nest", _) => Turn::Text("nested"),
        ("middle", 0) => Turn::Tools(vec![("agent", json!({"task": "leaf"}))]),
        ("middle", _) => Turn::Text("middle done"),
        ("leaf", _) => Turn::Text("a leaf ran"),
        _ => Turn::Text("(unexpected)"),
    })
}

#[test]
fn max_agents_counts_the_agents_of_the_whole_tree_not_each_parents() {
    let env = Env::new();
    let port = serve(nesting);
    // One place in the tree: the middle agent has it, so its own child is
    // refused (its own --max-agents 1 alone would let it run).
    let r = run_loop(&env, port, "read,agent", &["--max-agents", "1", "nest"]);
    r.expect_code(0);
    let events = r.json_lines();
    let id = agent_call_end(&events)["tool_call_id"].as_str().unwrap();
    let middle = nested(&events, id);
    let refused = middle
        .iter()
        .find(|e| e["type"] == "tool_execution_end" && e["tool_name"] == "agent")
        .expect("the middle agent's call");
    assert_eq!(refused["is_error"], true, "{refused}");
    let out = refused["output"].as_str().unwrap();
    assert!(out.contains("all 1 places"), "{out}");
    assert!(!r.stdout().contains("a leaf ran"));
    // Two places: the leaf runs.
    let r = run_loop(&env, port, "read,agent", &["--max-agents", "2", "nest"]);
    r.expect_code(0);
    assert!(r.stdout().contains("a leaf ran"));
    // The tree's directory went with the run.
    assert_eq!(trees(&env), Vec::<std::path::PathBuf>::new());
}

fn hanging_grandchild(first: &str, results: usize) -> Option<Turn> {
    match (first, results) {
        ("nest deep", 0) => Some(Turn::Tools(vec![(
            "agent",
            json!({"task": "middle of three"}),
        )])),
        ("middle of three", 0) => Some(Turn::Tools(vec![("agent", json!({"task": "hang"}))])),
        // The grandchild's model call, and the root's after the middle
        // agent was killed, hang until they are stopped.
        _ => None,
    }
}

/// The directories of trees of agents.
fn trees(env: &Env) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(env.join(".home/.ag/trees"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("ag-tree-")
        })
        .collect()
}

#[test]
fn a_subagent_killed_outright_leaves_no_process_and_no_place_held() {
    use nix::fcntl::{Flock, FlockArg};
    let env = Env::new();
    let port = serve(hanging_grandchild);
    let mut c = ag_loop(&env, port, "read,agent");
    c.args(["--max-agents", "2", "nest deep"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut root = c.spawn().unwrap();
    let mut lines = BufReader::new(root.stdout.take().unwrap()).lines();
    let mut next = || -> Value { serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap() };
    // The grandchild asks its model: both places are held.
    loop {
        let e = next();
        if e["type"] == "subagent_event"
            && e["event"]["type"] == "subagent_event"
            && e["event"]["event"]["type"] == "turn_start"
        {
            break;
        }
    }
    let tree = trees(&env);
    assert_eq!(tree.len(), 1, "{tree:?}");
    let slots: Vec<_> = std::fs::read_dir(&tree[0])
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("slot-")
        })
        .collect();
    assert_eq!(slots.len(), 2);
    let free = || {
        slots
            .iter()
            .filter(|p| {
                Flock::lock(
                    std::fs::File::open(p).unwrap(),
                    FlockArg::LockExclusiveNonblock,
                )
                .is_ok()
            })
            .count()
    };
    assert_eq!(free(), 0);
    let middle = processes_in(env.path())
        .into_iter()
        .find(|l| l.ends_with("-- middle of three"))
        .expect("the middle agent's process");
    let pid: i32 = middle.split_whitespace().next().unwrap().parse().unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    // The root learns that its call ended.
    loop {
        let e = next();
        if e["type"] == "tool_execution_end" && e["tool_name"] == "agent" {
            assert_eq!(e["is_error"], true, "{e}");
            break;
        }
    }
    // The grandchild ends itself; nothing of the killed branch is left, and
    // both places are free again.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !processes_in(env.path()).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(processes_in(env.path()), Vec::<String>::new());
    assert_eq!(free(), 2);
    // The root killed outright too leaves its tree's directory behind; the
    // next run's root removes it.
    root.kill().unwrap();
    root.wait().unwrap();
    assert_eq!(trees(&env).len(), 1);
    let port = serve(one_child);
    let mut c = ag_loop(&env, port, "read,write,agent");
    c.arg("delegate");
    run(c, None).expect_code(0);
    assert_eq!(trees(&env), Vec::<std::path::PathBuf>::new());
}

#[test]
fn an_identity_whose_tools_name_agent_gets_the_agent_tool() {
    let env = Env::new();
    env.write(
        ".ag/agents/lead.md",
        "---\nname: lead\ntools: read, write, agent\n---\nYou lead.\n",
    );
    let port = serve(one_child);
    // The run itself has no `agent` (no --tools: the default set); the
    // `@lead` prompt's identity has.
    models_json(&env, port);
    let mut c = env.cmd(bin!("ag-loop"));
    c.env("FAKE_KEY", "k")
        .args(["-m", "fake/m", "--json", "@lead delegate"]);
    let r = run(c, None);
    r.expect_code(0);
    let events = r.json_lines();
    let end = agent_call_end(&events);
    assert_eq!(end["details"]["outcome"], "finished", "{end}");
    assert_eq!(env.read("notes.txt"), b"from the child\n");
    // The same identity as the run's own (`--agent lead`).
    std::fs::remove_file(env.join("notes.txt")).unwrap();
    let mut c = env.cmd(bin!("ag-loop"));
    c.env("FAKE_KEY", "k")
        .args(["-m", "fake/m", "--json", "--agent", "lead", "delegate"]);
    let r = run(c, None);
    r.expect_code(0);
    let events = r.json_lines();
    assert_eq!(agent_call_end(&events)["details"]["outcome"], "finished");
    assert_eq!(env.read("notes.txt"), b"from the child\n");
}

fn as_identity(first: &str, results: usize) -> Option<Turn> {
    let name = first.strip_prefix("delegate as ")?;
    Some(match results {
        0 => Turn::Tools(vec![(
            "agent",
            json!({"task": "write notes.txt", "agent": name}),
        )]),
        _ => Turn::Text("the parent is done"),
    })
}

#[test]
fn a_project_identity_that_asks_for_a_looser_sandbox_is_refused() {
    let env = Env::new();
    env.write(
        ".ag/agents/online.md",
        "---\nname: online\ntools: read\nallow_net: true\n---\nYou fetch things.\n",
    );
    env.write(
        ".ag/agents/free.md",
        "---\nname: free\ntools: read\nsandbox: off\n---\nYou run anything.\n",
    );
    for (name, asked) in [("online", "allow_net: true"), ("free", "sandbox: off")] {
        let port = serve(as_identity);
        let r = run_loop(
            &env,
            port,
            "read,write,agent",
            &[format!("delegate as {name}").as_str()],
        );
        r.expect_code(0);
        let events = r.json_lines();
        let end = agent_call_end(&events);
        assert_eq!(end["is_error"], true, "{end}");
        let out = end["output"].as_str().unwrap();
        assert!(out.contains(&format!("identity `{name}`")), "{out}");
        assert!(out.contains(asked), "{out}");
        assert!(out.contains("may only be stricter"), "{out}");
        assert!(!events.iter().any(|e| e["type"] == "subagent_event"));
    }
}

fn shell_and_patch(first: &str, results: usize) -> Option<Turn> {
    Some(match (first, results) {
        ("delegate the chores", 0) => {
            Turn::Tools(vec![("agent", json!({"task": "do the chores"}))])
        }
        ("delegate the chores", _) => Turn::Text("done"),
        ("do the chores", 0) => Turn::Tools(vec![(
            "bash",
            json!({"command": "printf 'made\\n' > made.txt && rm old.txt && printf 'more\\n' >> kept.txt"}),
        )]),
        ("do the chores", 1) => Turn::Tools(vec![(
            "patch",
            json!({"patch": "*** Begin Patch\n*** Add File: sub/patched.txt\n+p\n*** End Patch\n"}),
        )]),
        ("do the chores", _) => Turn::Text("chores done"),
        _ => Turn::Text("(unexpected)"),
    })
}

/// The `changed` list of the run's agent call, sorted.
fn changed_by_child(env: &Env) -> Vec<String> {
    let port = serve(shell_and_patch);
    let r = run_loop(env, port, "read,bash,patch,agent", &["delegate the chores"]);
    r.expect_code(0);
    let events = r.json_lines();
    let end = agent_call_end(&events);
    assert_eq!(end["details"]["outcome"], "finished", "{end}");
    let mut changed: Vec<String> =
        serde_json::from_value(end["details"]["changed"].clone()).unwrap();
    changed.sort();
    let out = end["output"].as_str().unwrap();
    assert!(out.contains("made.txt"), "{out}");
    changed
}

#[test]
fn the_files_a_child_changed_with_bash_and_patch_are_in_its_result_in_git_or_not() {
    let want = ["kept.txt", "made.txt", "old.txt", "sub/patched.txt"];
    // In a git repository.
    let env = Env::new();
    repo(&env);
    env.write("old.txt", "old\n");
    env.write("kept.txt", "kept\n");
    git(env.path(), &["add", "old.txt", "kept.txt"]);
    git(env.path(), &["commit", "-qm", "two files"]);
    assert_eq!(changed_by_child(&env), want);
    // Outside git.
    let env = Env::new();
    env.write("old.txt", "old\n");
    env.write("kept.txt", "kept\n");
    assert_eq!(changed_by_child(&env), want);
}
