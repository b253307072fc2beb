//! A newcomer's first run: no key and no config. ag-loop says which
//! variables it looked for, offers a local server that answers with the
//! caller's own command, and otherwise shows how to reach one.

use std::net::TcpListener;
use std::path::Path;

use crate::bin;
use crate::model_server::{ModelServer, Turn};
use crate::util::{Env, run};

/// A port on 127.0.0.1 where nothing listens.
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Moves the four local providers to these base URLs, as a user's
/// models.json may.
fn local_providers_at(env: &Env, ollama: &str) {
    let url = |p: u16| format!("http://127.0.0.1:{p}/v1");
    env.write(
        ".home/.ag/models.json",
        serde_json::json!({"providers": {
            "ollama": {"base_url": ollama},
            "llamacpp": {"base_url": url(closed_port())},
            "lmstudio": {"base_url": url(closed_port())},
            "vllm": {"base_url": url(closed_port())},
        }})
        .to_string(),
    );
}

/// `PATH` with the directory of the built binaries first, so that a
/// suggested `ag-loop ...` line runs this build.
fn path_with_bins() -> String {
    let dir = Path::new(bin!("ag-loop"))
        .parent()
        .unwrap()
        .display()
        .to_string();
    format!("{dir}:{}", std::env::var("PATH").unwrap_or_default())
}

#[test]
fn without_a_key_a_local_server_that_answers_is_offered_with_the_callers_own_command() {
    let env = Env::new();
    let server = ModelServer::start(vec![Turn::Text("All tests pass now.")]);
    local_providers_at(&env, &server.base_url());
    let mut cmd = env.cmd(bin!("ag-loop"));
    cmd.args(["--no-session", "fix the failing test"])
        .env("PATH", path_with_bins());
    let r = run(cmd, None);
    r.expect_code(2);
    let err = r.stderr();
    assert!(
        err.contains("no API key for `anthropic` (looked for `ANTHROPIC_API_KEY`)"),
        "{r}"
    );
    assert!(
        err.contains(&format!(
            "found: Ollama answers at {} with scripted",
            server.base_url()
        )),
        "{r}"
    );
    let line = err
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("ag-loop -m "))
        .unwrap_or_else(|| panic!("no command offered\n{r}"));
    assert_eq!(
        line, "ag-loop -m ollama/scripted --no-session 'fix the failing test'",
        "{r}"
    );
    assert!(r.stdout().is_empty(), "{r}");

    // The offered line, pasted into a shell, runs the task.
    let mut sh = env.cmd("sh");
    sh.args(["-c", line]).env("PATH", path_with_bins());
    let ran = run(sh, None);
    ran.ok();
    assert!(ran.stdout().contains("All tests pass now."), "{ran}");
}

#[test]
fn without_a_key_or_a_local_server_it_shows_how_to_reach_one() {
    let env = Env::new();
    local_providers_at(&env, &format!("http://127.0.0.1:{}/v1", closed_port()));
    let mut cmd = env.cmd(bin!("ag-loop"));
    cmd.args(["--json", "make the build green"]);
    let r = run(cmd, None);
    r.expect_code(2);
    let err = r.stderr();
    assert!(err.contains("looked for `ANTHROPIC_API_KEY`"), "{r}");
    assert!(!err.contains("found:"), "{r}");
    assert!(
        err.contains("ag-loop -m ollama/MODEL --json 'make the build green'"),
        "{r}"
    );
    assert!(
        err.contains(
            "ag-loop -m llamacpp/MODEL --base-url http://127.0.0.1:8080/v1 --json 'make the build green'"
        ),
        "{r}"
    );
    assert!(
        err.contains("LM Studio `lmstudio/`") && err.contains("vLLM `vllm/`"),
        "{r}"
    );
    assert!(r.stdout().is_empty(), "{r}");
}

/// `ag-loop --check` with no key: the key line says what was looked for
/// and offers the caller's own command on a local model; exit 1.
#[test]
fn check_without_a_key_says_what_it_looked_for_and_fails() {
    let env = Env::new();
    local_providers_at(&env, &format!("http://127.0.0.1:{}/v1", closed_port()));
    let mut cmd = env.cmd(bin!("ag-loop"));
    cmd.arg("--check");
    let r = run(cmd, None);
    r.expect_code(1);
    let out = r.stdout();
    assert!(
        out.contains("  model      anthropic/claude-sonnet-4-5, from the default"),
        "{r}"
    );
    assert!(
        out.contains("! key        not set (looked for `ANTHROPIC_API_KEY`"),
        "{r}"
    );
    assert!(out.contains("ag-loop -m ollama/MODEL --check"), "{r}");
    assert!(
        !out.contains("  server     "),
        "no request without a key\n{r}"
    );
    assert!(out.contains("  sandbox    "), "{r}");
    assert!(out.contains("  git        git version"), "{r}");
    assert!(
        out.ends_with("a run here would not work: see the lines marked !\n"),
        "{r}"
    );
}

/// A key, and a server that does not answer: the server line says so;
/// exit 1. Nothing is run and no session is made.
#[test]
fn check_with_a_key_and_a_server_that_does_not_answer_fails() {
    let env = Env::new();
    let url = format!("http://127.0.0.1:{}/v1", closed_port());
    let mut cmd = env.cmd(bin!("ag-loop"));
    cmd.args(["--check", "-m", "openai/gpt-4o", "--base-url", &url])
        .env("OPENAI_API_KEY", "sk-test-not-real");
    let r = run(cmd, None);
    r.expect_code(1);
    let out = r.stdout();
    assert!(
        out.contains("  model      openai/gpt-4o, from -m/--model"),
        "{r}"
    );
    assert!(
        out.contains("  key        set, from `OPENAI_API_KEY`"),
        "{r}"
    );
    assert!(
        out.contains(&format!("! server     does not answer: GET {url}/models")),
        "{r}"
    );
    assert!(!out.contains("sk-test-not-real"), "{r}");
    assert!(!env.join(".home/.ag/sessions").exists(), "{r}");
}

/// A local server that answers, named by `AG_MODEL`, and a project with
/// AGENTS.md: every line is fine and the exit status is 0; `--json` says
/// the same as one object.
#[test]
fn check_with_a_local_server_that_answers_works() {
    let env = Env::new();
    let server = ModelServer::start(vec![]);
    env.write("AGENTS.md", "Run the tests with make test.\n");
    let mut cmd = env.cmd(bin!("ag-loop"));
    cmd.args(["--check", "--base-url", &server.base_url()])
        .env("AG_MODEL", "ollama/scripted");
    let r = run(cmd, None);
    r.ok();
    let out = r.stdout();
    assert!(
        out.contains("  model      ollama/scripted, from $AG_MODEL"),
        "{r}"
    );
    assert!(
        out.contains("  key        none needed (a local server)"),
        "{r}"
    );
    assert!(
        out.contains(&format!(
            "  server     answers: GET {}/models listed its models",
            server.base_url()
        )),
        "{r}"
    );
    assert!(out.contains("AGENTS.md ("), "{r}");
    assert!(out.ends_with("a run here would work\n"), "{r}");
    assert!(server.requests().is_empty(), "no model call was made");

    let mut cmd = env.cmd(bin!("ag-loop"));
    cmd.args(["--check", "--json", "--base-url", &server.base_url()])
        .env("AG_MODEL", "ollama/scripted");
    let r = run(cmd, None);
    r.ok();
    let v: serde_json::Value = serde_json::from_str(r.stdout().trim()).unwrap();
    assert_eq!(v["works"], true, "{r}");
    assert_eq!(v["server"]["ok"], true, "{r}");
}
