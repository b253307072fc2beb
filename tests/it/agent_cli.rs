//! ag-loop's command line and stdin: `--pretty` on a pipe, and lines that
//! are not UTF-8 or not commands between prompts, and how set-up failures
//! are reported.

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

/// Each way set-up can fail: exit 2, one `ag-loop: error:` line saying
/// which file, name or flag is at fault, and nothing on stdout.
#[test]
fn set_up_failures_exit_2_with_their_message_before_any_event() {
    let env = Env::new();
    env.write("bad.toml", "modle = \"a/b\"\n");
    env.write("idle.toml", "idle_timeout = -1\n");
    env.write(".ag/agents/open.md", "---\nmodel: a/b\nno end\n");
    env.write(".ag/agents/line.md", "---\njust words\n---\nbody\n");
    env.write(".ag/agents/key.md", "---\ncolour: red\n---\nbody\n");
    env.write(".ag/agents/effort.md", "---\nreasoning: hard\n---\nbody\n");
    let dir = env.path().display().to_string();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["--cwd", "nowhere"],
            "--cwd `nowhere` is not a directory".into(),
        ),
        (
            vec!["--config", "missing.toml"],
            "cannot read config `missing.toml`: ".into(),
        ),
        (vec!["--config", "bad.toml"], "config `bad.toml`: ".into()),
        (
            vec!["--agent", "nobody"],
            format!("no agent `nobody`: looked for `nobody.md` in `{dir}/.ag/agents`"),
        ),
        (
            vec!["--agent", "open"],
            format!("`{dir}/.ag/agents/open.md`: the front matter opened with `---` is never closed"),
        ),
        (
            vec!["--agent", "line"],
            format!("`{dir}/.ag/agents/line.md` line 2: expected `key: value`"),
        ),
        (
            vec!["--agent", "key"],
            format!(
                "`{dir}/.ag/agents/key.md` line 2: unknown key `colour` (known: name, role, model, reasoning, tools (or toolSet), output_schema, sandbox, sandbox_mode, allow_net, workspace)"
            ),
        ),
        (
            vec!["--agent", "effort"],
            "agent `effort`: reasoning `hard` is not off, low, medium or high".into(),
        ),
        (
            vec!["--tools", "nosuch"],
            "tool `nosuch`: no `ag-nosuch` beside ag-loop or on PATH; install it or leave it out of --tools".into(),
        ),
        (vec!["--tool", "  "], "--tool needs a command".into()),
        (
            vec!["--session", "zzzz9"],
            "no session matches `zzzz9`".into(),
        ),
    ];
    for (flags, message) in cases {
        let mut c = env.cmd(bin!("ag-loop"));
        c.args(["--llm-cmd", "true", "--tools", "chat", "--no-gate"])
            .args(&flags)
            .arg("hello");
        let r = run(c, None);
        assert_eq!(r.code(), Some(2), "{flags:?}: {r}");
        assert_eq!(r.stdout(), "", "{flags:?}: {r}");
        let err = r.stderr();
        let line = err.lines().next().unwrap_or_default();
        assert!(line.starts_with("ag-loop: error: "), "{flags:?}: {r}");
        assert!(
            line.contains(&message),
            "{flags:?}: wanted {message:?}\n{r}"
        );
    }
    // What only the model library reads (an --llm-cmd run skips it): the
    // config's idle timeout, and the provider of the model.
    env.write("none.toml", "");
    let cases = [
        (
            ["-m", "ollama/scripted", "--config", "idle.toml"],
            "ag-loop: error: config: `idle_timeout` must be a number of seconds, 0 or more\n",
        ),
        (
            ["-m", "nosuchprovider/x", "--config", "none.toml"],
            "nosuchprovider",
        ),
    ];
    for (flags, message) in cases {
        let mut c = env.cmd(bin!("ag-loop"));
        c.args(["--tools", "chat", "--no-gate"])
            .args(flags)
            .arg("hello");
        let r = run(c, None);
        assert_eq!(r.code(), Some(2), "{flags:?}: {r}");
        assert_eq!(r.stdout(), "", "{flags:?}: {r}");
        assert!(r.stderr().starts_with("ag-loop: error: "), "{flags:?}: {r}");
        assert!(r.stderr().contains(message), "{flags:?}: {r}");
    }
}
