//! Attachments: `ag-loop --attach`, a prompt command's `attachments` and
//! `@path` mentions reach the model as an image block, the text of a PDF
//! with page markers, or a text block with the file's name; a model that
//! takes no images refuses before any call; the limits say what they cut;
//! the sandbox's deny list keeps what it keeps from ag-read.

use std::process::Stdio;

use crate::agent::{scripted_model, text_turn};
use crate::bin;
use crate::util::{Env, run};
use base64::Engine;
use serde_json::{Value, json};

const PNG: &[u8] = include_bytes!("../fixtures/attach/red.png");
const PDF: &[u8] = include_bytes!("../fixtures/attach/two-pages.pdf");

fn ag_loop(env: &Env, model: &str, extra: &[&str]) -> std::process::Command {
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "--llm-cmd",
        model,
        "--tools",
        "read",
        "--json",
        "--no-session",
    ]);
    c.args(extra);
    c
}

/// The content of the first message of the model's `n`th request, as
/// blocks (plain text is one text block).
fn sent(env: &Env, n: usize) -> Vec<Value> {
    let req: Value = serde_json::from_slice(&env.read(&format!(".model/request{n}.json"))).unwrap();
    let first = &req["messages"][0];
    assert_eq!(first["role"], "user", "{req}");
    match &first["content"] {
        Value::String(t) => vec![json!({"type": "text", "text": t})],
        other => other.as_array().cloned().unwrap_or_else(|| panic!("{req}")),
    }
}

fn of_type<'a>(events: &'a [Value], t: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == t).collect()
}

#[test]
fn an_attached_png_and_pdf_reach_the_model_as_an_image_and_paged_text() {
    let env = Env::new();
    env.write("shot.png", PNG);
    env.write("docs/spec.pdf", PDF);
    let model = scripted_model(&env, &[text_turn("a red square and a spec")]);
    let r = run(
        ag_loop(
            &env,
            &model,
            &[
                "--attach",
                "shot.png",
                "--attach",
                "docs/spec.pdf",
                "what are these?",
            ],
        ),
        None,
    );
    r.ok();
    let blocks = sent(&env, 0);
    assert_eq!(
        blocks[0],
        json!({"type": "text", "text": "what are these?"})
    );
    assert_eq!(blocks[1]["type"], "text");
    assert!(
        blocks[1]["text"]
            .as_str()
            .unwrap()
            .starts_with("[Attached image `shot.png` (image/png"),
        "{}",
        blocks[1]
    );
    assert_eq!(blocks[2]["type"], "image");
    assert_eq!(blocks[2]["mime_type"], "image/png");
    let data = base64::engine::general_purpose::STANDARD
        .decode(blocks[2]["data"].as_str().unwrap())
        .unwrap();
    assert_eq!(data, PNG);
    let pdf = blocks[3]["text"].as_str().unwrap();
    assert!(
        pdf.starts_with("[Attached PDF `docs/spec.pdf`: 2 pages, its text]\n--- page 1 ---\n"),
        "{pdf}"
    );
    let (p1, p2) = (
        pdf.find("--- page 1 ---").unwrap(),
        pdf.find("--- page 2 ---").unwrap(),
    );
    let apples = pdf.find("apples").unwrap();
    let answer = pdf.find("42").unwrap();
    assert!(p1 < apples && apples < p2 && p2 < answer, "{pdf}");
    assert_eq!(blocks.len(), 4);
    // The session's events carry the same message.
    let events = r.json_lines();
    let start = of_type(&events, "message_start")[0];
    assert_eq!(start["message"]["content"].as_array().unwrap().len(), 4);
}

#[test]
fn mentions_and_a_prompts_attachments_are_attached_once_each() {
    let env = Env::new();
    env.write("notes.md", "remember the milk\n");
    env.write("my file.txt", "spaces in the name\n");
    env.write("extra.txt", "an extra file\n");
    let model = scripted_model(&env, &[text_turn("ok")]);
    let prompt = json!({
        "type": "prompt",
        "content": "summarise @notes.md, @\"my file.txt\" and @notes.md again; ask @alice",
        "attachments": ["extra.txt"],
    });
    let mut c = ag_loop(&env, &model, &[]);
    c.stdin(Stdio::piped());
    let r = run(c, Some(format!("{prompt}\n").as_bytes()));
    r.ok();
    let blocks = sent(&env, 0);
    let texts: Vec<&str> = blocks.iter().map(|b| b["text"].as_str().unwrap()).collect();
    // The text as written, then the attachments: the command's first.
    assert_eq!(texts[0], prompt["content"].as_str().unwrap());
    assert_eq!(texts.len(), 4, "{texts:?}");
    assert_eq!(
        texts[1],
        "[Attached file `extra.txt` (14 bytes)]\nan extra file"
    );
    assert_eq!(
        texts[2],
        "[Attached file `notes.md` (18 bytes)]\nremember the milk"
    );
    assert_eq!(
        texts[3],
        "[Attached file `my file.txt` (19 bytes)]\nspaces in the name"
    );
}

#[test]
fn a_model_that_takes_no_images_refuses_before_any_call() {
    let env = Env::new();
    env.write("shot.png", PNG);
    env.write(
        ".home/.ag/models.json",
        json!({"providers": {"local": {"base_url": "http://127.0.0.1:9/v1", "api": "openai-chat",
            "models": [{"id": "text-only", "images": false}]}}})
        .to_string(),
    );
    let model = scripted_model(&env, &[text_turn("never asked"), text_turn("fine")]);
    // --attach: exit 2 before any event.
    let r = run(
        ag_loop(
            &env,
            &model,
            &["-m", "local/text-only", "--attach", "shot.png", "look"],
        ),
        None,
    );
    r.expect_code(2);
    assert_eq!(r.stdout(), "");
    assert!(
        r.stderr()
            .contains("cannot attach `shot.png`: the model `local/text-only` does not take images"),
        "{r}"
    );
    assert!(!env.join(".model/request0.json").exists());
    // On stdin: that prompt is refused in the stream, the next one runs.
    let mut c = ag_loop(&env, &model, &["-m", "local/text-only"]);
    c.stdin(Stdio::piped());
    let input = "look at @shot.png\nhello\n";
    let r = run(c, Some(input.as_bytes()));
    r.expect_code(1);
    let events = r.json_lines();
    let errors = of_type(&events, "error");
    assert_eq!(errors.len(), 1, "{r}");
    assert_eq!(errors[0]["code"], "attach.no_images");
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .ends_with("the prompt was not run"),
        "{}",
        errors[0]
    );
    assert_eq!(of_type(&events, "agent_start").len(), 1);
    assert_eq!(sent(&env, 0)[0]["text"], "hello");
    assert!(!env.join(".model/request1.json").exists());
}

#[test]
fn ag_llm_refuses_an_image_for_a_model_without_images_before_calling() {
    let env = Env::new();
    // Nothing listens on port 9: a call made would fail otherwise.
    env.write(
        ".home/.ag/models.json",
        json!({"providers": {"local": {"base_url": "http://127.0.0.1:9/v1", "api": "openai-chat",
            "models": [{"id": "text-only", "images": false}]}}})
        .to_string(),
    );
    let data = base64::engine::general_purpose::STANDARD.encode(PNG);
    let request = json!({"model": "local/text-only", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "what is it?"},
        {"type": "image", "data": data, "mime_type": "image/png"}]}]});
    let r = run(
        env.cmd(bin!("ag-llm")),
        Some(format!("{request}\n").as_bytes()),
    );
    let out = r.stdout() + &r.stderr();
    assert!(
        out.contains("`local/text-only` does not take images"),
        "{r}"
    );
    assert!(!out.contains("127.0.0.1:9"), "it tried to connect: {r}");
}

#[test]
fn limits_cut_a_long_file_and_say_where_to_read_on() {
    let env = Env::new();
    let body: String = (1..=20_000).map(|i| format!("log line {i}\n")).collect();
    env.write("big.log", &body);
    let model = scripted_model(&env, &[text_turn("long")]);
    let r = run(
        ag_loop(&env, &model, &["--attach", "big.log", "what went wrong?"]),
        None,
    );
    r.ok();
    let text = sent(&env, 0)[1]["text"].as_str().unwrap().to_string();
    assert!(text.chars().count() < 101_000, "{}", text.len());
    let cut = text.rsplit("[... cut: ").next().unwrap();
    assert!(
        cut.contains("its first 100000 characters are attached (the limit for one file); the read tool shows the rest from line"),
        "{cut}"
    );
    assert!(r.stderr().contains("attachment `big.log` was cut"), "{r}");
}

#[test]
fn a_file_that_cannot_be_attached_is_named_with_what_to_do() {
    let env = Env::new();
    env.write("prog", b"\x7fELF\x02\x01\x01\0\0\0binary");
    let model = scripted_model(&env, &[text_turn("x")]);
    for (file, says) in [
        (
            "missing.txt",
            "cannot attach `missing.txt`: no such file (paths are taken from",
        ),
        ("prog", "cannot attach `prog`: it is a binary file"),
        (".", "cannot attach `.`: it is a directory"),
    ] {
        let r = run(ag_loop(&env, &model, &["--attach", file, "go"]), None);
        r.expect_code(2);
        assert!(r.stderr().contains(says), "{file}: {r}");
    }
    // A FIFO is refused at once, never read (it would block).
    let fifo = env.join("pipe");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let r = run(ag_loop(&env, &model, &["--attach", "pipe", "go"]), None);
    r.expect_code(2);
    assert!(
        r.stderr()
            .contains("cannot attach `pipe`: it is not a regular file"),
        "{r}"
    );
    // A word naming no file is text, whatever it looks like.
    let mut c = ag_loop(&env, &model, &[]);
    c.stdin(Stdio::piped());
    let r = run(c, Some(b"mail @nobody.example or @missing.txt\n"));
    r.ok();
    assert_eq!(
        sent(&env, 0)[0]["text"],
        "mail @nobody.example or @missing.txt"
    );
}

#[test]
fn the_sandboxs_deny_list_keeps_a_file_from_attachments_as_from_ag_read() {
    let env = Env::new();
    // A home outside the workspace, as a project's is.
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".ssh")).unwrap();
    std::fs::write(home.path().join(".ssh/id_ed25519"), "PRIVATE KEY").unwrap();
    std::fs::write(home.path().join("notes.txt"), "outside but fine").unwrap();
    let model = scripted_model(&env, &[text_turn("x"), text_turn("y")]);
    let key = home.path().join(".ssh/id_ed25519").display().to_string();
    let mut c = ag_loop(
        &env,
        &model,
        &["--sandbox", "require", "--attach", &key, "go"],
    );
    c.env("HOME", home.path())
        .env("AG_HOME", home.path().join(".ag"));
    let r = run(c, None);
    r.expect_code(2);
    assert!(r.stderr().contains("deny list"), "{r}");
    assert!(!env.join(".model/request0.json").exists());
    // Outside the workspace is fine otherwise, as for ag-read.
    let notes = home.path().join("notes.txt").display().to_string();
    let mut c = ag_loop(
        &env,
        &model,
        &["--sandbox", "require", "--attach", &notes, "go"],
    );
    c.env("HOME", home.path())
        .env("AG_HOME", home.path().join(".ag"));
    let r = run(c, None);
    r.ok();
    assert!(
        sent(&env, 0)[1]["text"]
            .as_str()
            .unwrap()
            .ends_with("outside but fine"),
        "{r}"
    );
}
