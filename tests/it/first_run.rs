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
