//! Provider keys under ag-loop: a model that asks `bash` for `env` never
//! sees one, and no event, session file, export or later request carries
//! one; `--pass-env` and `pass_env` let one through on purpose; pages made
//! from a session that holds one anyway hide it.

use serde_json::{Value, json};

use crate::bin;
use crate::model_server::{ModelServer, Turn};
use crate::util::{Env, run};

const OPENAI: &str = "sk-test-0123456789abcdefOPENAI";
const CUSTOM: &str = "custom-secret-987654321xyz";

/// A models.json with a provider whose key lives in a variable of its own.
fn custom_provider(env: &Env, port: u16) {
    env.write(
        ".home/.ag/models.json",
        json!({"providers": {"mylocal": {
            "base_url": format!("http://127.0.0.1:{port}/v1"),
            "api": "openai-chat",
            "api_key_env": "MY_LOCAL_TOKEN",
            "models": [{"id": "scripted"}]
        }}})
        .to_string(),
    );
}

fn session_file(env: &Env) -> std::path::PathBuf {
    let root = env.join(".home/.ag/sessions");
    for d in std::fs::read_dir(root).unwrap().flatten() {
        for f in std::fs::read_dir(d.path()).unwrap().flatten() {
            if f.path().extension().is_some_and(|e| e == "jsonl") {
                return f.path();
            }
        }
    }
    panic!("no session file");
}

fn bash_output(events: &[Value]) -> String {
    events
        .iter()
        .filter(|e| e["type"] == "tool_execution_end")
        .map(|e| e["output"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn env_through_bash_shows_no_key_anywhere() {
    let env = Env::new();
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("bash", json!({"command": "env; echo done-listing"}))]),
        Turn::Text("I saw the environment."),
    ]);
    custom_provider(&env, server.port);
    let mut c = env.cmd(bin!("ag-loop"));
    c.env("OPENAI_API_KEY", OPENAI)
        .env("MY_LOCAL_TOKEN", CUSTOM)
        .env("SOME_OTHER_VAR", "visible-value-42")
        .args(["-m", "mylocal/scripted", "--json", "--no-gate"])
        .arg(format!("print the environment; the key is {OPENAI}"));
    let r = run(c, None);
    r.ok();
    let stdout = r.stdout();
    let output = bash_output(&r.json_lines());
    // The command ran, and other variables are there: only keys are withheld.
    assert!(output.contains("done-listing"), "{r}");
    assert!(output.contains("visible-value-42"), "{r}");
    assert!(!output.contains("OPENAI_API_KEY="), "{r}");
    assert!(!output.contains("MY_LOCAL_TOKEN="), "{r}");
    // Even the key the user typed into the prompt is hidden in events.
    for secret in [OPENAI, CUSTOM] {
        assert!(!stdout.contains(secret), "{secret} on stdout\n{r}");
        let session = std::fs::read_to_string(session_file(&env)).unwrap();
        assert!(!session.contains(secret), "{secret} in the session");
        for args in [
            vec!["export", "--format", "html"],
            vec!["export", "--format", "markdown"],
            vec!["show"],
            vec!["messages"],
        ] {
            let mut c = env.cmd(bin!("ag-session"));
            c.args(&args).arg(session_file(&env));
            let e = run(c, None);
            e.ok();
            assert!(!e.stdout().contains(secret), "{secret} in {args:?}\n{e}");
        }
    }
    assert!(stdout.contains("[OPENAI_API_KEY redacted]"), "{r}");
    // The tool result that went back to the model has no key either.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let second = requests[1].to_string();
    assert!(second.contains("done-listing"), "{second}");
    // Not even the key the user typed goes to the provider.
    for request in &requests {
        let text = request.to_string();
        assert!(!text.contains(OPENAI) && !text.contains(CUSTOM), "{text}");
    }
    assert!(!second.contains("MY_LOCAL_TOKEN="), "{second}");
}

#[test]
fn a_key_a_tool_prints_is_redacted_even_when_passed_through() {
    // With --pass-env the tool gets the key (the user asked for it); what it
    // prints is still hidden from events and the model.
    let env = Env::new();
    let server = ModelServer::start(vec![
        Turn::Tools(vec![(
            "bash",
            json!({"command": format!("test \"${{#OPENAI_API_KEY}}\" = {} && echo passed-through; echo \"k=$OPENAI_API_KEY\"; echo \"other=${{ANTHROPIC_API_KEY:-unset}}\"", OPENAI.len())}),
        )]),
        Turn::Text("ok"),
    ]);
    let mut c = env.cmd(bin!("ag-loop"));
    c.env("OPENAI_API_KEY", OPENAI)
        .env("ANTHROPIC_API_KEY", "sk-ant-secret-value-123")
        .args(["-m", "ollama/scripted", "--base-url", &server.base_url()])
        .args(["--json", "--no-gate", "--no-session"])
        .args(["--pass-env", "OPENAI_API_KEY", "go"]);
    let r = run(c, None);
    r.ok();
    let output = bash_output(&r.json_lines());
    assert!(output.contains("passed-through"), "{r}");
    assert!(output.contains("k=[OPENAI_API_KEY redacted]"), "{r}");
    assert!(output.contains("other=unset"), "{r}");
    assert!(!r.stdout().contains(OPENAI), "{r}");
    assert!(!server.requests()[1].to_string().contains(OPENAI));
}

#[test]
fn pass_env_in_the_config_file_lets_a_key_through() {
    let env = Env::new();
    env.write(".home/.ag/config.toml", "pass_env = [\"GROQ_API_KEY\"]\n");
    let server = ModelServer::start(vec![
        Turn::Tools(vec![(
            "bash",
            json!({"command": "echo \"groq=${#GROQ_API_KEY} openai=${#OPENAI_API_KEY}\""}),
        )]),
        Turn::Text("ok"),
    ]);
    let mut c = env.cmd(bin!("ag-loop"));
    c.env("GROQ_API_KEY", "gsk-0123456789")
        .env("OPENAI_API_KEY", OPENAI)
        .args(["-m", "ollama/scripted", "--base-url", &server.base_url()])
        .args(["--json", "--no-gate", "--no-session", "go"]);
    let r = run(c, None);
    r.ok();
    // Lengths only: the passed key is there, the other is not.
    assert!(
        bash_output(&r.json_lines()).contains("groq=14 openai=0"),
        "{r}"
    );
}

#[test]
fn gates_and_after_hooks_get_no_key() {
    let env = Env::new();
    env.write(
        "gate.sh",
        "cat >/dev/null\nprintf '%s' \"${OPENAI_API_KEY:-none}\" > gate-saw\necho '{\"decision\":\"allow\"}'\n",
    );
    env.write(
        "after.sh",
        "cat >/dev/null\nprintf '%s' \"${OPENAI_API_KEY:-none}\" > after-saw\necho '{}'\n",
    );
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("bash", json!({"command": "echo hi"}))]),
        Turn::Text("ok"),
    ]);
    let mut c = env.cmd(bin!("ag-loop"));
    c.env("OPENAI_API_KEY", OPENAI)
        .args(["-m", "ollama/scripted", "--base-url", &server.base_url()])
        .args(["--json", "--no-session", "--gate", "sh gate.sh"])
        .args(["--after", "sh after.sh", "go"]);
    let r = run(c, None);
    r.ok();
    assert_eq!(String::from_utf8(env.read("gate-saw")).unwrap(), "none");
    assert_eq!(String::from_utf8(env.read("after-saw")).unwrap(), "none");
}

#[test]
fn ag_mcp_tools_get_no_key() {
    let env = Env::new();
    let input = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "bash", "arguments": {"command": "echo \"k=${OPENAI_API_KEY:-none} p=${GROQ_API_KEY:-none}\""}}}),
    ]
    .iter()
    .map(|v| v.to_string() + "\n")
    .collect::<String>();
    let mut c = env.cmd(bin!("ag-mcp"));
    c.env("OPENAI_API_KEY", OPENAI)
        .env("GROQ_API_KEY", "gsk-passed-on-purpose")
        .args(["--tools", "bash", "--pass-env", "GROQ_API_KEY"]);
    let r = run(c, Some(input.as_bytes()));
    r.ok();
    assert!(r.stdout().contains("k=none p=gsk-passed-on-purpose"), "{r}");
}

#[test]
fn a_key_already_in_a_session_is_hidden_in_show_and_export() {
    // A session that holds a key (written before keys were hidden, or
    // appended from elsewhere): the pages made from it do not show it.
    let env = Env::new();
    let mut c = env.cmd(bin!("ag-session"));
    c.arg("new");
    let created = run(c, None);
    created.ok();
    let id = created.stdout().split('\t').next().unwrap().to_string();
    let event = json!({"type": "message_end", "message": {"role": "user", "content": format!("my key is {OPENAI}")}});
    let mut c = env.cmd(bin!("ag-session"));
    c.args(["append", &id]);
    run(c, Some(format!("{event}\n").as_bytes())).ok();
    for args in [
        vec!["export", "--format", "html"],
        vec!["export", "--format", "markdown"],
        vec!["show"],
    ] {
        let mut c = env.cmd(bin!("ag-session"));
        c.env("OPENAI_API_KEY", OPENAI).args(&args).arg(&id);
        let e = run(c, None);
        e.ok();
        assert!(e.stdout().contains("my key is"), "{e}");
        assert!(!e.stdout().contains(OPENAI), "{args:?}\n{e}");
    }
}

#[test]
fn a_tool_cannot_read_the_keys_in_ag_loops_proc_environ() {
    // A tool is not handed the keys, but ag-loop itself holds them: its
    // /proc/PID/environ must not show them to the tools it runs.
    let env = Env::new();
    let script = "p=$PPID; while [ \"$p\" -gt 1 ]; do \
        c=$(cat /proc/$p/comm); [ \"$c\" = ag-loop ] && break; \
        p=$(awk '{print $4}' /proc/$p/stat); done; \
        echo \"loop=$c\"; tr '\\0' '\\n' < /proc/$p/environ | grep -c '^OPENAI_API_KEY=' ; echo read-done";
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("bash", json!({ "command": script }))]),
        Turn::Text("ok"),
    ]);
    let mut c = env.cmd(bin!("ag-loop"));
    c.env("OPENAI_API_KEY", OPENAI)
        .args(["-m", "ollama/scripted", "--base-url", &server.base_url()])
        .args([
            "--json",
            "--no-gate",
            "--no-session",
            "--sandbox",
            "off",
            "go",
        ]);
    let r = run(c, None);
    r.ok();
    let output = bash_output(&r.json_lines());
    assert!(output.contains("loop=ag-loop"), "{r}");
    // ag-loop itself still had its key and its other variables (HOME
    // places the session store; the model call needs nothing else here).
    assert!(output.contains("\n0\n"), "{r}");
    assert!(output.contains("read-done"), "{r}");
    // Root reads /proc past any permission; what it reads holds no key.
    assert!(!output.contains("\n1\n"), "{r}");
}

#[test]
fn ag_loop_still_sends_its_key_after_hiding_its_environment() {
    use crate::llm_server::{Server, fixture, sse};
    let env = Env::new();
    let server = Server::start(vec![sse(fixture("openai__chat_text_basic.sse"))]);
    let mut c = env.cmd(bin!("ag-loop"));
    c.env("DEEPSEEK_API_KEY", "k-from-the-environment-1234")
        .args([
            "-m",
            "deepseek/deepseek-chat",
            "--base-url",
            &server.url("/v1"),
        ])
        .args(["--json", "--no-session", "hello"]);
    run(c, None).ok();
    let seen = server.seen();
    assert_eq!(
        seen[0].header("authorization"),
        Some("Bearer k-from-the-environment-1234")
    );
}

/// A key the model writes out comes in pieces: no delta holds it whole,
/// but joined, as the page, the session file and the SSE stream join them
/// while streaming, they would. The tail of a delta that could begin a key
/// is held back until the next one settles it.
#[test]
fn a_key_split_over_streamed_deltas_is_hidden_when_they_are_joined() {
    let env = Env::new();
    let (a, rest) = OPENAI.split_at(5);
    let (b, c) = rest.split_at(9);
    let text = format!("the key is {OPENAI}, said in pieces; a near miss: sk-test-01 stays.");
    let turn = vec![
        json!({"type": "start", "model": "test/scripted"}),
        json!({"type": "text_delta", "index": 0, "delta": format!("the key is {a}")}),
        json!({"type": "text_delta", "index": 0, "delta": b}),
        json!({"type": "text_delta", "index": 0, "delta": format!("{c}, said in pieces; a near miss: sk-te")}),
        json!({"type": "text_delta", "index": 0, "delta": "st-01 stays."}),
        json!({"type": "done", "message": {"content": [{"type": "text", "text": text}], "stop_reason": "stop", "model": "test/scripted",
            "usage": {"input": 1, "output": 1, "cache_read": 0, "cache_write": 0, "cost": {"input": 0.0, "output": 0.0, "cache_read": 0.0, "cache_write": 0.0, "total": 0.0}}}}),
    ];
    let model = crate::agent::scripted_model(&env, &[turn]);
    let mut c = env.cmd(bin!("ag-loop"));
    c.env("OPENAI_API_KEY", OPENAI).args([
        "--llm-cmd",
        &model,
        "--tools",
        "read",
        "--json",
        "say it",
    ]);
    let r = run(c, None);
    r.ok();
    let joined: String = r
        .json_lines()
        .iter()
        .filter(|e| e["type"] == "message_update" && e["event"]["type"] == "text_delta")
        .map(|e| e["event"]["delta"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        joined,
        "the key is [OPENAI_API_KEY redacted], said in pieces; a near miss: sk-test-01 stays.",
        "{r}"
    );
    let session = std::fs::read_to_string(session_file(&env)).unwrap();
    assert!(
        !session.contains(&OPENAI[..12]),
        "a piece of the key in the session"
    );
    assert!(!r.stdout().contains(&OPENAI[..12]), "{r}");
}
