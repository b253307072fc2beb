//! Servers that misbehave, and set-ups that cannot work: a server that
//! accepts and says nothing, one slow to start, nothing listening on a
//! local port, a host that does not resolve, a web page where the stream
//! should be, and a bad model id or missing key (exit 2 before any event).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::bin;
use crate::llm_server::*;
use crate::util::{Env, Run};

/// Runs `cmd`, killing it (and failing the test) if it has not ended
/// after a minute: the bugs here are hangs.
fn run_bounded(mut cmd: Command) -> Run {
    let desc = format!("{cmd:?}");
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "still running after 60 s: {desc}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().unwrap();
    Run { desc, output }
}

fn local_call(env: &Env, base: &str, extra: &[&str]) -> Command {
    let mut args = vec!["-m", "llamacpp/qwen2.5-coder-1.5b", "--base-url", base];
    args.extend_from_slice(extra);
    args.push("hi");
    ag_llm(env, &args)
}

#[test]
fn a_server_that_accepts_and_says_nothing_is_tried_twice_then_reported() {
    let env = Env::new();
    let server = Server::start(vec![Reply::Silent; 5]);
    let base = server.url("/v1");
    // The default retries (4) would wait the idle timeout five times.
    let c = local_call(&env, &base, &["--idle-timeout", "0.5", "--json"]);
    let r = run_bounded(c);
    r.expect_code(1);
    assert_eq!(
        server.seen().len(),
        2,
        "a silent server is retried once, not like a transient error\n{r}"
    );
    let ev = last(&r);
    assert_eq!(ev["type"], "error");
    let e = ev["error"].as_str().unwrap();
    assert!(e.contains("went silent"), "{e}");
    assert!(e.contains("for 0.5 s"), "{e}");
    assert!(
        e.contains("(silent 2 attempts in a row, 1 s in all)"),
        "{e}"
    );
    assert!(e.contains("--idle-timeout"), "{e}");

    // No retries asked for: one attempt.
    let server = Server::start(vec![Reply::Silent; 2]);
    let mut c = local_call(&env, &server.url("/v1"), &["--idle-timeout", "0.25"]);
    c.env("AG_LLM_RETRIES", "0");
    run_bounded(c).expect_code(1);
    assert_eq!(server.seen().len(), 1);
}

#[test]
fn an_ag_loop_prompt_waits_on_a_silent_server_twice_the_idle_timeout_at_most() {
    // Two prompts answered, then the server goes silent. The third prompt
    // compacts first (a tiny window): its summary call is silent twice, and
    // then its own call is not tried at all, so the prompt waited two idle
    // timeouts, not four.
    let env = Env::new();
    let answer = || sse(fixture("openai__chat_text_basic.sse"));
    let mut replies = vec![answer(), answer()];
    replies.extend(vec![Reply::Silent; 6]);
    let server = Server::start(replies);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "-m",
        "llamacpp/qwen",
        "--base-url",
        &server.url("/v1"),
        "--no-session",
        "--json",
        "--idle-timeout",
        "0.25",
        // The window is tiny on purpose; the first call is left free, so
        // that each text answer ends its prompt (evidence.rs).
        "--first-call",
        "auto",
        "one",
        "two",
        "three",
    ])
    .env("AG_CONTEXT_WINDOW", "50")
    .env("AG_LLM_RETRY_BASE_MS", "1");
    let r = run_bounded(c);
    r.expect_code(1);
    assert_eq!(server.seen().len(), 4, "{r}");
    let events = r.json_lines();
    let ends: Vec<&Value> = events.iter().filter(|e| e["type"] == "agent_end").collect();
    assert_eq!(ends.len(), 3, "{r}");
    assert_eq!(ends[2]["outcome"], "model_error", "{r}");
    let error = ends[2]["error"].as_str().unwrap();
    assert!(error.contains("went silent"), "{error}");
    assert!(error.contains("0.5 s in all"), "{error}");
    assert!(error.contains("not asked again for this prompt"), "{error}");
    // The two silent requests were the summary's.
    assert!(
        events.iter().any(|e| e["type"] == "error"
            && e["message"]
                .as_str()
                .unwrap()
                .contains("the summary for compaction failed")),
        "{r}"
    );
}

#[test]
fn silence_after_the_headers_counts_too() {
    let env = Env::new();
    let server = Server::start(vec![Reply::Hang(Vec::new()), Reply::Hang(Vec::new())]);
    let base = server.url("/v1");
    let mut c = local_call(&env, &base, &["--idle-timeout", "0.5"]);
    c.env("AG_LLM_RETRIES", "1");
    let r = run_bounded(c);
    r.expect_code(1);
    assert_eq!(server.seen().len(), 2, "{r}");
    assert!(r.stderr().contains("went silent after the headers"), "{r}");
}

#[test]
fn a_server_silent_for_a_while_then_streaming_succeeds() {
    let env = Env::new();
    let server = Server::start(vec![Reply::Late(
        Duration::from_millis(1500),
        Box::new(sse(fixture("openai__chat_text_basic.sse"))),
    )]);
    let base = server.url("/v1");
    let r = run_bounded(local_call(&env, &base, &["--idle-timeout", "20"]));
    r.ok();
    assert!(r.stdout().starts_with("I'm unable"), "{r}");
    assert_eq!(server.seen().len(), 1);
}

#[test]
fn models_json_sets_a_providers_idle_timeout_and_the_flag_wins() {
    let env = Env::new();
    env.write(
        ".home/.ag/models.json",
        r#"{"providers": {"llamacpp": {"idle_timeout": 0.5}}}"#,
    );
    let server = Server::start(vec![Reply::Silent]);
    let base = server.url("/v1");
    let mut c = local_call(&env, &base, &[]);
    c.env("AG_LLM_RETRIES", "0");
    let r = run_bounded(c);
    r.expect_code(1);
    assert!(r.stderr().contains("for 0.5 s"), "{r}");

    // The flag wins: a late answer within the flag's limit succeeds.
    let server = Server::start(vec![Reply::Late(
        Duration::from_millis(1500),
        Box::new(sse(fixture("openai__chat_text_basic.sse"))),
    )]);
    let base = server.url("/v1");
    let r = run_bounded(local_call(&env, &base, &["--idle-timeout", "20"]));
    r.ok();
}

fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn nothing_listening_on_a_local_port_fails_at_once_naming_the_server() {
    let env = Env::new();
    let port = closed_port();
    for host in ["127.0.0.1", "localhost"] {
        let base = format!("http://{host}:{port}/v1");
        // Real retry waits: five attempts would take over 15 s and say so.
        let mut c = env.cmd(bin!("ag-llm"));
        c.args(["-m", "llamacpp/qwen", "--base-url", &base, "hi"]);
        let r = run_bounded(c);
        r.expect_code(1);
        let err = r.stderr();
        assert!(err.contains("connection refused"), "{r}");
        assert!(err.contains("llama-server"), "{r}");
        assert!(err.contains(&format!("--port {port}")), "{r}");
        assert!(!err.contains("attempts"), "not retried\n{r}");
    }
    // Another local provider names its own server.
    let base = format!("http://127.0.0.1:{port}/v1");
    let mut c = env.cmd(bin!("ag-llm"));
    c.args(["-m", "ollama/qwen3", "--base-url", &base, "hi"]);
    let r = run_bounded(c);
    r.expect_code(1);
    assert!(r.stderr().contains("ollama serve"), "{r}");
}

#[test]
fn a_host_that_does_not_resolve_fails_at_once_naming_it() {
    let env = Env::new();
    let mut c = env.cmd(bin!("ag-llm"));
    c.args([
        "-m",
        "vllm/qwen",
        "--base-url",
        "http://no-such-host.invalid:8000/v1",
        "hi",
    ]);
    let r = run_bounded(c);
    r.expect_code(1);
    let err = r.stderr();
    assert!(
        err.contains("cannot resolve the host name `no-such-host.invalid`"),
        "{r}"
    );
    assert!(!err.contains("attempts"), "not retried\n{r}");
}

#[test]
fn a_web_page_with_status_200_is_reported_and_not_retried() {
    let env = Env::new();
    let page = b"<!DOCTYPE html>\n<html><head><title>Sign in to the guest network</title></head><body>...</body></html>\n".to_vec();
    let html = Reply::Body(
        200,
        vec![("content-type", "text/html; charset=utf-8".into())],
        page,
    );
    let server = Server::start(vec![html.clone(), html.clone(), html]);
    let base = server.url("/v1");
    let r = run_bounded(local_call(&env, &base, &["--json"]));
    r.expect_code(1);
    assert_eq!(server.seen().len(), 1, "not retried\n{r}");
    let e = last(&r)["error"].as_str().unwrap().to_string();
    assert!(e.contains("HTTP 200"), "{e}");
    assert!(e.contains("text/html; charset=utf-8"), "{e}");
    assert!(e.contains("<!DOCTYPE html>"), "{e}");
    assert!(!e.contains("connection closed"), "{e}");

    // A plain-text notice without an HTML type is no stream either.
    let text = Reply::Body(
        200,
        vec![("content-type", "text/plain".into())],
        b"Service moved to https://example.invalid/new-api\n".to_vec(),
    );
    let server = Server::start(vec![text.clone(), text]);
    let base = server.url("/v1");
    let r = run_bounded(local_call(&env, &base, &[]));
    r.expect_code(1);
    assert_eq!(server.seen().len(), 1, "not retried\n{r}");
    assert!(r.stderr().contains("`text/plain`"), "{r}");
    assert!(r.stderr().contains("Service moved"), "{r}");
}

#[test]
fn set_up_errors_exit_2_before_any_event() {
    let env = Env::new();
    let server = Server::start(vec![]);
    let base = server.url("/v1");
    for (model, says) in [
        ("nosuch/model", "unknown provider `nosuch`"),
        ("openai/", "names no model"),
        ("no-provider-here", "has no provider"),
        ("deepseek/deepseek-chat", "DEEPSEEK_API_KEY"),
    ] {
        let r = run_bounded(ag_llm(
            &env,
            &["-m", model, "--base-url", &base, "--json", "hi"],
        ));
        r.expect_code(2);
        assert_eq!(r.stdout(), "", "no event\n{r}");
        assert!(r.stderr().contains(says), "{model}: {r}");

        let mut c = env.cmd(bin!("ag-loop"));
        c.args([
            "-m",
            model,
            "--base-url",
            &base,
            "--no-session",
            "--json",
            "hi",
        ]);
        let r = run_bounded(c);
        r.expect_code(2);
        assert_eq!(r.stdout(), "", "no event\n{r}");
        assert!(r.stderr().contains(says), "{model}: {r}");
    }
    assert!(server.seen().is_empty());
}

#[test]
fn record_keeps_no_key_that_a_provider_quotes_back() {
    let env = Env::new();
    // One 401 (or 400) per API, each quoting the key back as its provider does.
    let cases: [(&str, &str, u16, String); 4] = [
        (
            "openai/gpt-4o",
            "sk-proj-SECRETOPENAI1234",
            401,
            r#"{"error":{"message":"Incorrect API key provided: Bearer sk-proj-SECRETOPENAI1234. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#.into(),
        ),
        (
            "anthropic/claude-sonnet-4-5",
            "my-anthropic-SECRET-key",
            401,
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key: my-anthropic-SECRET-key"}}"#.into(),
        ),
        (
            "google/gemini-2.5-pro",
            "AIzaSECRETgemini5678",
            400,
            r#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key. (key AIzaSECRETgemini5678)","status":"INVALID_ARGUMENT"}}"#.into(),
        ),
        (
            "groq/llama-3.3-70b-versatile",
            "plainSECRETgroq",
            401,
            r#"{"error":{"message":"Invalid API Key: plainSECRETgroq","type":"invalid_request_error","code":"invalid_api_key"}}"#.into(),
        ),
    ];
    for (model, key, status, body) in cases {
        let server = Server::start(vec![Reply::Body(
            status,
            vec![("content-type", "application/json".into())],
            body.into_bytes(),
        )]);
        let base = server.url("/v1");
        let dir = env.join(&format!("rec-{}", model.replace('/', "_")));
        let r = run_bounded(ag_llm(
            &env,
            &[
                "-m",
                model,
                "--base-url",
                &base,
                "--api-key",
                key,
                "--record",
                dir.to_str().unwrap(),
                "hi",
            ],
        ));
        r.expect_code(1);
        assert!(!r.stderr().contains("SECRET"), "{r}");
        let files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(files.len(), 2, "{model}: {files:?}");
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            assert!(
                !text.contains("SECRET"),
                "{model}: {} holds the key:\n{text}",
                f.display()
            );
            if f.extension().is_some_and(|e| e == "body") {
                assert!(text.contains("[redacted]"), "{text}");
            }
        }
    }
}

#[test]
fn ag_loop_takes_the_idle_timeout_from_its_config_file_and_flag() {
    let env = Env::new();
    env.write(".home/.ag/config.toml", "idle_timeout = 0.5\n");
    let server = Server::start(vec![Reply::Silent]);
    let base = server.url("/v1");
    let loop_cmd = |extra: &[&str]| {
        let mut c = env.cmd(bin!("ag-loop"));
        c.args([
            "-m",
            "llamacpp/qwen",
            "--base-url",
            &base,
            "--no-session",
            "--json",
        ])
        .args(extra)
        .arg("hi")
        // A known window: no question to the server before the call.
        .env("AG_CONTEXT_WINDOW", "100000")
        .env("AG_LLM_RETRIES", "0");
        c
    };
    let r = run_bounded(loop_cmd(&[]));
    r.expect_code(1);
    assert!(r.stderr().contains("went silent"), "{}", r.stderr());
    assert!(r.stderr().contains("for 0.5 s"), "{}", r.stderr());

    let server2 = Server::start(vec![Reply::Silent]);
    let base2 = server2.url("/v1");
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "-m",
        "llamacpp/qwen",
        "--base-url",
        &base2,
        "--no-session",
        "--idle-timeout",
        "0.25",
        "hi",
    ])
    .env("AG_CONTEXT_WINDOW", "100000")
    .env("AG_LLM_RETRIES", "0");
    let r = run_bounded(c);
    r.expect_code(1);
    assert!(r.stderr().contains("for 0.25 s"), "{}", r.stderr());

    env.write(".home/.ag/config.toml", "idle_timeout = -1\n");
    let r = run_bounded(loop_cmd(&[]));
    r.expect_code(2);
    assert!(r.stderr().contains("idle_timeout"), "{}", r.stderr());
}
