//! Attachments: `ag-loop --attach`, a prompt command's `attachments` and
//! `@path` mentions reach the model as an image block, the text of a PDF
//! with page markers, or a text block with the file's name; a model that
//! takes no images refuses before any call; the limits say what they cut;
//! the sandbox's deny list keeps what it keeps from ag-read.

use std::process::Stdio;

use crate::agent::{request, scripted_model, text_turn};
use crate::bin;
use crate::util::{Env, of_type, run};
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
    let req = request(env, n);
    let first = &req["messages"][0];
    assert_eq!(first["role"], "user", "{req}");
    match &first["content"] {
        Value::String(t) => vec![json!({"type": "text", "text": t})],
        other => other.as_array().cloned().unwrap_or_else(|| panic!("{req}")),
    }
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

// Hostile PDFs: small files that stand for a great deal. Each is attached
// to a real ag-loop, and the model script records the loop's peak memory
// (VmHWM) when the request reaches it, after the attachment was read.

/// A scripted model (see [`scripted_model`]) that first records the peak
/// memory of the ag-loop that called it, in KiB, one line per request.
pub(crate) fn measured_model(env: &Env, turns: &[Vec<Value>]) -> String {
    let inner = scripted_model(env, turns);
    // ag-loop runs the command through `sh -c`: the loop is the nearest
    // ancestor of that name.
    env.write(
        ".model/measured.sh",
        format!(
            "p=$PPID\nwhile [ \"$p\" -gt 1 ] && [ \"$(cat /proc/$p/comm)\" != ag-loop ]; do p=$(awk '/^PPid:/{{print $2}}' /proc/$p/status); done\nawk '/^VmHWM:/{{print $2}}' /proc/$p/status >> \"{}\"\nexec {inner}\n",
            env.join(".model/peak").display()
        ),
    );
    format!("sh {}", env.join(".model/measured.sh").display())
}

/// The peak memory of ag-loop, in MiB, at its `n`th request.
pub(crate) fn peak_mib(env: &Env, n: usize) -> u64 {
    let text = String::from_utf8(env.read(".model/peak")).unwrap();
    let kib: u64 = text.lines().nth(n).unwrap().trim().parse().unwrap();
    kib / 1024
}

/// At most this much memory for reading a hostile PDF (ag-loop itself
/// takes a few dozen MiB); the files below took 1.3 GiB and more before.
const BOUNDED_MIB: u64 = 128;

/// A PDF of these object bodies (object 1 the catalog, 2 the page tree),
/// with its cross-reference table.
fn pdf_of(objects: &[Vec<u8>]) -> Vec<u8> {
    let mut out = b"%PDF-1.5\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend(body);
        out.extend(b"\nendobj\n");
    }
    let at = out.len();
    out.extend(format!("xref\n0 {}\n0000000000 65535 f \n", offsets.len() + 1).as_bytes());
    for o in &offsets {
        out.extend(format!("{o:010} 00000 n \n").as_bytes());
    }
    out.extend(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{at}\n%%EOF\n",
            offsets.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// A stream object's body: `dict` entries, then `data` deflated.
fn deflated(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut s = lopdf::Stream::new(lopdf::Dictionary::new(), data.to_vec());
    s.compress().unwrap();
    assert!(s.dict.has(b"Filter"), "not deflated");
    zlib_stream(dict, &s.content)
}

fn zlib_stream(dict: &str, zlib: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "<< {dict} /Filter /FlateDecode /Length {} >>\nstream\n",
        zlib.len()
    )
    .into_bytes();
    out.extend(zlib);
    out.extend(b"\nendstream");
    out
}

/// `n` zero bytes as a zlib stream of 13 bits per 258 bytes, written by
/// hand (one fixed-Huffman block: a zero, then copies of the 258 bytes
/// before), so that a stream of hundreds of MiB costs the test nothing.
fn zeros_zlib(n: usize) -> Vec<u8> {
    struct Bits {
        out: Vec<u8>,
        acc: u64,
        len: u32,
    }
    impl Bits {
        /// `count` bits of `value`, least significant first.
        fn put(&mut self, value: u64, count: u32) {
            self.acc |= value << self.len;
            self.len += count;
            while self.len >= 8 {
                self.out.push(self.acc as u8);
                self.acc >>= 8;
                self.len -= 8;
            }
        }
        /// A Huffman code, most significant bit first.
        fn code(&mut self, code: u64, count: u32) {
            let reversed = (0..count).fold(0, |r, i| (r << 1) | ((code >> i) & 1));
            self.put(reversed, count);
        }
    }
    let mut b = Bits {
        out: vec![0x78, 0x01],
        acc: 0,
        len: 0,
    };
    b.put(1, 1); // the last block
    b.put(1, 2); // fixed Huffman codes
    b.code(0x30, 8); // literal 0
    let mut left = n - 1;
    while left >= 258 {
        b.code(0xc5, 8); // length 258 (symbol 285)
        b.code(0, 5); // distance 1
        left -= 258;
    }
    for _ in 0..left {
        b.code(0x30, 8);
    }
    b.code(0, 7); // end of block
    if b.len > 0 {
        b.out.push(b.acc as u8);
    }
    // Adler-32 of zeros: the byte sum stays 1, the sum of sums is n.
    let adler = (((n % 65_521) as u32) << 16) | 1;
    b.out.extend(adler.to_be_bytes());
    b.out
}

/// `pages` pages that all show the one content stream `content`, in
/// Helvetica.
fn pages_over_one_stream(pages: usize, content: &[u8]) -> Vec<u8> {
    let kids: String = (0..pages).map(|i| format!("{} 0 R ", 5 + i)).collect();
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        format!("<< /Type /Pages /Kids [{kids}] /Count {pages} >>").into_bytes(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
            .to_vec(),
        deflated("", content),
    ];
    for _ in 0..pages {
        objects.push(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>"
                .to_vec(),
        );
    }
    pdf_of(&objects)
}

/// Runs ag-loop on `prompts` (JSONL on stdin) with a measured model that
/// answers each, and returns the run.
fn attach_on_stdin(env: &Env, prompts: &[Value]) -> crate::util::Run {
    let turns: Vec<Vec<Value>> = prompts.iter().map(|_| text_turn("read")).collect();
    let model = measured_model(env, &turns);
    let mut c = ag_loop(env, &model, &[]);
    c.stdin(Stdio::piped());
    let input: String = prompts.iter().map(|p| format!("{p}\n")).collect();
    run(c, Some(input.as_bytes()))
}

#[test]
fn a_pdf_of_400_pages_over_one_4_mib_stream_is_cut_at_the_limit_in_bounded_memory() {
    let env = Env::new();
    // 4 MiB of text in one stream, shown by every page: 1.6 GB of text in
    // all, which took ag-loop to 1.4 GiB and an abort.
    let line = "BT /F1 12 Tf 72 720 Td (The quick brown fox jumps over the lazy dog again and again.) Tj ET\n";
    let content = line.repeat((4 << 20) / line.len());
    let pdf = pages_over_one_stream(400, content.as_bytes());
    assert!(pdf.len() < 100_000, "{}", pdf.len());
    env.write("shared.pdf", &pdf);
    let model = measured_model(&env, &[text_turn("read")]);
    let r = run(
        ag_loop(&env, &model, &["--attach", "shared.pdf", "summarise"]),
        None,
    );
    r.ok();
    let text = sent(&env, 0)[1]["text"].as_str().unwrap().to_string();
    assert!(
        text.starts_with(
            "[Attached PDF `shared.pdf`: 400 pages, its text]\n--- page 1 ---\nThe quick brown fox"
        ),
        "{}",
        &text[..200]
    );
    assert!(!text.contains("--- page 2 ---"));
    assert!(text.chars().count() < 101_000, "{}", text.len());
    assert!(
        text.contains("[... cut: the rest of page 1 and pages 2-400 are left out: 100000 characters of the PDF's text are attached (the limit for one file); to read on, attach those pages on their own (`qpdf shared.pdf --pages . 1-400 -- rest.pdf`) ...]"),
        "{}",
        &text[text.len() - 400..]
    );
    let peak = peak_mib(&env, 0);
    assert!(peak < BOUNDED_MIB, "ag-loop reached {peak} MiB");
}

#[test]
fn pages_over_one_stream_without_text_stop_at_the_content_budget() {
    let env = Env::new();
    // Drawing and a comment, no text: each page inflates 4 MiB and finds
    // nothing, so pages would be read until the last.
    let mut content = "0 0 m 612 792 l S\n".repeat(1000);
    content.push('%');
    content.push_str(&"x".repeat((4 << 20) - content.len() - 2));
    content.push('\n');
    env.write(
        "drawing.pdf",
        pages_over_one_stream(400, content.as_bytes()),
    );
    let r = attach_on_stdin(
        &env,
        &[json!({"type": "prompt", "content": "what is drawn?", "attachments": ["drawing.pdf"]})],
    );
    r.ok();
    let text = sent(&env, 0)[1]["text"].as_str().unwrap().to_string();
    // 64 MiB of content is 16 pages of 4 MiB; the 17th would go over.
    assert!(text.contains("--- page 16 ---"), "{text}");
    assert!(!text.contains("--- page 17 ---"), "{text}");
    assert!(
        text.ends_with("[... cut: pages 17-400 are left out: reading them would inflate more than the 64 MiB of page content ag reads of one PDF; to read on, attach those pages on their own (`qpdf drawing.pdf --pages . 17-400 -- rest.pdf`) ...]"),
        "{text}"
    );
    let peak = peak_mib(&env, 0);
    assert!(peak < BOUNDED_MIB, "ag-loop reached {peak} MiB");
}

#[test]
fn object_streams_that_inflate_to_200_mib_each_are_refused_before_lopdf_loads_them() {
    let env = Env::new();
    // Eight object streams of 200 MiB each: lopdf's own cap is 256 MiB a
    // stream, and its load aborted at 1.3 GiB.
    let bomb = zeros_zlib(200 << 20);
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [] /Count 0 >>".to_vec(),
    ];
    for _ in 0..8 {
        objects.push(zlib_stream("/Type /ObjStm /N 100 /First 0", &bomb));
    }
    let pdf = pdf_of(&objects);
    assert!(pdf.len() < 12 << 20, "{}", pdf.len());
    env.write("bomb.pdf", &pdf);
    // A prompt's attachment that cannot be read is an error event, and the
    // next prompt runs: the model sees the loop's memory after both.
    let r = attach_on_stdin(
        &env,
        &[
            json!({"type": "prompt", "content": "read it", "attachments": ["bomb.pdf"]}),
            json!({"type": "prompt", "content": "then this"}),
        ],
    );
    // The prompt that could not be run makes the exit status 1.
    r.expect_code(1);
    let events = r.json_lines();
    let errors = of_type(&events, "error");
    assert_eq!(errors.len(), 1, "{r}");
    let message = errors[0]["message"].as_str().unwrap();
    assert!(
        message.contains("cannot attach `bomb.pdf`: one of the PDF's object streams inflates to more than 8 MiB, more than ag inflates of one stream; attach a part of it (the first 50 pages: `qpdf bomb.pdf --pages . 1-50 -- part.pdf`) or its text (`pdftotext bomb.pdf part.txt`)"),
        "{message}"
    );
    assert_eq!(errors[0]["code"], "attach.too_large", "{r}");
    assert_eq!(sent(&env, 0)[0]["text"], "then this");
    let peak = peak_mib(&env, 0);
    assert!(peak < BOUNDED_MIB, "ag-loop reached {peak} MiB");
}

#[test]
fn a_1_kib_object_stream_that_names_one_object_many_times_is_refused() {
    let env = Env::new();
    // 200 objects at one offset, each a 100,000-value array: lopdf parsed
    // it 200 times, 2.3 GiB from a file of about a kilobyte.
    let index: String = (0..200).map(|i| format!("{} 0 ", 10 + i)).collect();
    let array = format!("[{}]", "0 ".repeat(100_000));
    let content = format!("{index}{array}");
    let pdf = pdf_of(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [] /Count 0 >>".to_vec(),
        deflated(
            &format!("/Type /ObjStm /N 200 /First {}", index.len()),
            content.as_bytes(),
        ),
    ]);
    assert!(pdf.len() < 2048, "{}", pdf.len());
    env.write("overlap.pdf", &pdf);
    let model = scripted_model(&env, &[text_turn("x")]);
    let r = run(
        ag_loop(&env, &model, &["--attach", "overlap.pdf", "go"]),
        None,
    );
    r.expect_code(2);
    assert!(
        r.stderr().contains(
            "cannot attach `overlap.pdf`: one of the PDF's object streams has objects that overlap"
        ),
        "{r}"
    );
}

/// The text blocks of the first message of the model's first request.
fn sent_texts(env: &Env) -> Vec<String> {
    sent(env, 0)
        .iter()
        .map(|b| b["text"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Keeps the scripted model's files (`.model/`) and the test's home out of
/// the project's list, outside a repository too.
fn hide_model(env: &Env) {
    env.write(".ignore", ".model/\n.home/\n.ignore\n");
}

/// A small project goes whole with the first prompt of a conversation,
/// and a question that names no file gets the file that answers it;
/// hidden files (a `.env` with a secret) are listed, but not shown
/// unasked, and `.git` is not even listed. The next prompt gets the list
/// and the files it names, not the whole project again.
#[test]
fn a_small_project_goes_whole_with_the_first_prompt_only() {
    let env = Env::new();
    hide_model(&env);
    env.write(".env", "TOKEN=s3cret\n");
    env.write(
        "server/app.py",
        "import os\nPORT = int(os.environ['PORT'])\n",
    );
    env.write("server/defaults.cfg", "PORT=8125\n");
    crate::util::git(env.path(), &["init", "-q"]);
    env.write(".git/info/exclude", ".model/\n.home/\n.ignore\n");
    let first = "What port does the server listen on by default?";
    let second = "Now log the port in server/app.py.";
    let model = scripted_model(&env, &[text_turn("8125"), text_turn("ok")]);
    let mut c = ag_loop(&env, &model, &["--show-context", "always"]);
    c.stdin(Stdio::piped());
    let input = format!(
        "{}\n{}\n",
        json!({"type": "prompt", "content": first}),
        json!({"type": "prompt", "content": second})
    );
    let r = run(c, Some(input.as_bytes()));
    r.ok();
    let list =
        "[Attached the list of the project's files (3)]\n.env\nserver/app.py\nserver/defaults.cfg";
    let texts = |n: usize, m: usize| -> Vec<String> {
        let req = request(&env, n);
        let content = &req["messages"][m]["content"];
        content
            .as_array()
            .unwrap_or_else(|| panic!("{req}"))
            .iter()
            .map(|b| b["text"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    let status =
        "[Attached `git status --short`: the changes not yet committed]\n?? .env\n?? server/";
    assert_eq!(
        texts(0, 0),
        [
            first,
            list,
            status,
            "[Attached file `server/app.py` (41 bytes)]\nimport os\nPORT = int(os.environ['PORT'])",
            "[Attached file `server/defaults.cfg` (10 bytes)]\nPORT=8125",
        ],
        "{r}"
    );
    assert!(
        !env.read(".model/request0.json")
            .windows(6)
            .any(|w| w == b"s3cret")
    );
    assert_eq!(
        texts(1, 2),
        [
            second,
            list,
            status,
            "[Attached file `server/app.py` (41 bytes)]\nimport os\nPORT = int(os.environ['PORT'])",
        ],
        "{r}"
    );
}

/// A repository with two committed files and one changed since.
fn project(env: &Env) {
    env.write(".gitignore", ".model/\n");
    env.write("convert.py", "def main():\n    print('hi')\n");
    env.write("notes/shopping list.txt", "milk\n");
    env.write("CHANGELOG.md", "# Changes\n");
    crate::util::git(env.path(), &["init", "-q"]);
    crate::util::git(env.path(), &["add", "."]);
    crate::util::git(env.path(), &["commit", "-q", "-m", "start"]);
    env.write("CHANGELOG.md", "# Changes\n\n- 1.2.0\n");
}

#[test]
fn a_small_models_prompt_carries_the_files_it_names_and_what_is_not_committed() {
    let env = Env::new();
    project(&env);
    let prompt = "Add a --kelvin flag to convert.py, and back up \"notes/shopping list.txt\".";
    let model = scripted_model(&env, &[text_turn("ok")]);
    // A text answer first is fine here (`--first-call auto`).
    let mut c = ag_loop(&env, &model, &["--first-call", "auto", prompt]);
    c.env("AG_CONTEXT_WINDOW", "32768");
    run(c, None).ok();
    let texts = sent_texts(&env);
    assert_eq!(
        texts,
        [
            prompt.to_string(),
            "[Attached the list of the project's files (4)]\n.gitignore\nCHANGELOG.md\nconvert.py\nnotes/shopping list.txt"
                .into(),
            "[Attached `git status --short`: the changes not yet committed]\n M CHANGELOG.md"
                .into(),
            "[Attached file `convert.py` (28 bytes)]\ndef main():\n    print('hi')".into(),
            "[Attached file `notes/shopping list.txt` (5 bytes)]\nmilk".into(),
            // The project is small: the rest of it comes too, but for its
            // hidden files.
            "[Attached file `CHANGELOG.md` (19 bytes)]\n# Changes\n\n- 1.2.0".into(),
        ]
    );

    // A large window does not, unless asked; a small one may be told not to.
    for (window, flag, shown) in [
        ("200000", None, false),
        ("200000", Some("always"), true),
        ("32768", Some("never"), false),
    ] {
        let model = scripted_model(&env, &[text_turn("ok")]);
        let mut c = ag_loop(&env, &model, &["--first-call", "auto"]);
        if let Some(f) = flag {
            c.args(["--show-context", f]);
        }
        c.env("AG_CONTEXT_WINDOW", window).arg(prompt);
        run(c, None).ok();
        assert_eq!(sent_texts(&env).len() > 1, shown, "{window} {flag:?}");
    }
}

/// Files named in a prompt go with it only when they are plain text inside
/// the working directory: a binary file, a FIFO (which would block a
/// reader), a link out of the directory, a directory and an absolute path
/// are left for the model to read, without an error and without a hang.
#[test]
fn named_files_that_cannot_be_shown_are_left_out_quietly() {
    let env = Env::new();
    let outside = Env::new();
    outside.write("secret.txt", "the key\n");
    env.write("data.bin", b"\x00\x01\x02binary");
    env.write("shot.png", PNG);
    env.write("ok.txt", "plain\n");
    std::os::unix::fs::symlink(outside.join("secret.txt"), env.join("link.txt")).unwrap();
    nix::unistd::mkfifo(&env.join("pipe.txt"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    std::fs::create_dir(env.join("dir.txt")).unwrap();
    hide_model(&env);
    let prompt = format!(
        "Look at data.bin, shot.png, pipe.txt, link.txt, dir.txt, {} and ok.txt",
        outside.join("secret.txt").display()
    );
    let model = scripted_model(&env, &[text_turn("ok")]);
    let r = run(
        ag_loop(&env, &model, &["--show-context", "always", &prompt]),
        None,
    );
    r.ok();
    // Not a repository: no status either.
    assert_eq!(
        sent_texts(&env),
        [
            prompt.clone(),
            "[Attached the list of the project's files (5)]\ndata.bin\nlink.txt\nok.txt\npipe.txt\nshot.png"
                .into(),
            "[Attached file `ok.txt` (6 bytes)]\nplain".into()
        ],
        "{r}"
    );
}

/// A project of more than 50 files is listed by its top-level entries.
#[test]
fn a_large_project_is_listed_by_its_top_level_entries() {
    let env = Env::new();
    for i in 0..60 {
        env.write(&format!("src/m{i:02}.py"), "x = 1\n");
    }
    env.write("README.md", "# R\n");
    hide_model(&env);
    let model = scripted_model(&env, &[text_turn("ok")]);
    let r = run(
        ag_loop(&env, &model, &["--show-context", "always", "Tidy up."]),
        None,
    );
    r.ok();
    assert_eq!(
        sent_texts(&env),
        [
            "Tidy up.".to_string(),
            "[Attached the top of the project: more than 50 files in all, which find and ls show]\nREADME.md\nsrc/"
                .into(),
        ],
        "{r}"
    );
}

/// Without a session the default set's task list still works, and lasts
/// the run: it is in a directory of the run's own, gone when it ends.
#[test]
fn the_task_list_works_without_a_session_and_ends_with_the_run() {
    let env = Env::new();
    let model = scripted_model(
        &env,
        &[
            crate::agent::tool_turn(&[(
                "c1",
                "todo",
                json!({"action": "set", "items": [{"content": "look", "status": "in_progress"}]}),
            )]),
            text_turn("planned"),
        ],
    );
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "--llm-cmd",
        &model,
        "--tools",
        "todo",
        "--json",
        "--no-session",
    ])
    .arg("plan it");
    let r = run(c, None);
    r.ok();
    let events = r.json_lines();
    let end = of_type(&events, "tool_execution_end")[0];
    assert_eq!(end["is_error"], false, "{r}");
    let text = end["output"].to_string();
    assert!(text.contains("look"), "{text}");
    let leftovers: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name().to_string_lossy().starts_with("ag-loop-run-")
                && std::fs::read_to_string(e.path().join("todo.json"))
                    .is_ok_and(|t| t.contains("\"look\""))
        })
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// The files a prompt names share 16,000 characters: the second of two
/// 10,000-character files is cut, and says where to read on.
#[test]
fn named_files_share_a_budget_and_the_cut_says_where_to_read_on() {
    let env = Env::new();
    let line = "x".repeat(99) + "\n";
    env.write("a.txt", line.repeat(100));
    env.write("b.txt", line.repeat(100));
    let model = scripted_model(&env, &[text_turn("ok")]);
    let r = run(
        ag_loop(
            &env,
            &model,
            &["--show-context", "always", "Compare a.txt and b.txt."],
        ),
        None,
    );
    r.ok();
    let texts = sent_texts(&env);
    assert_eq!(texts.len(), 4, "{texts:?}");
    assert!(
        texts[2].ends_with(&line.repeat(100).trim_end().to_string()),
        "{}",
        &texts[2][..80]
    );
    assert!(
        texts[3].starts_with("[Attached file `b.txt` (10 KiB)]"),
        "{}",
        &texts[3][..80]
    );
    assert!(
        texts[3].contains("its first 6000 characters are attached")
            && texts[3].contains("the read tool shows the rest from line 61"),
        "{}",
        &texts[3][texts[3].len() - 300..]
    );
}

/// A smaller window than 32,768 tokens gets half a character of named
/// files for each of its tokens: 1,500 for a window of 3,000.
#[test]
fn a_small_window_gets_less_of_the_named_files() {
    let env = Env::new();
    env.write("a.txt", ("y".repeat(99) + "\n").repeat(100));
    let model = scripted_model(&env, &[text_turn("ok")]);
    let mut c = ag_loop(&env, &model, &["--first-call", "auto", "Read a.txt."]);
    c.env("AG_CONTEXT_WINDOW", "3000");
    run(c, None).ok();
    let texts = sent_texts(&env);
    let shown = texts.last().unwrap();
    assert!(
        shown.starts_with("[Attached file `a.txt`")
            && shown.contains("its first 1500 characters are attached"),
        "{shown}"
    );
}

/// Showing what is not committed runs `git status`, which must not start
/// a command the repository's config names (`core.fsmonitor`).
#[test]
fn the_status_shown_with_a_prompt_runs_no_command_of_the_repository() {
    let env = Env::new();
    project(&env);
    let marker = env.join("fsmonitor-ran");
    crate::util::git(
        env.path(),
        &[
            "config",
            "core.fsmonitor",
            &format!("touch {}; false", marker.display()),
        ],
    );
    let model = scripted_model(&env, &[text_turn("ok")]);
    let r = run(
        ag_loop(&env, &model, &["--show-context", "always", "Tidy up."]),
        None,
    );
    r.ok();
    assert!(
        sent_texts(&env)
            .iter()
            .any(|t| t.contains(" M CHANGELOG.md")),
        "{r}"
    );
    assert!(!marker.exists(), "core.fsmonitor ran");
}
