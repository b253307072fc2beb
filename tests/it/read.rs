//! ag-read, black-box: numbering, pagination, limits, errors, encodings.

use crate::bin;
use crate::util::{Env, call, run_args};
use serde_json::json;

fn read(env: &Env, args: serde_json::Value) -> serde_json::Value {
    call(env, bin!("ag-read"), args)
}

#[test]
fn default_limit_warns_and_says_how_to_go_on() {
    let env = Env::new();
    let body: String = (1..=7000).map(|i| format!("{i}\n")).collect();
    env.write("big.txt", body);
    let r = read(&env, json!({"file_path": "big.txt"}));
    let out = r["output"].as_str().unwrap();
    assert!(
        out.starts_with("WARNING: File has 7000 lines, showing first 5000."),
        "{out}"
    );
    assert!(out.contains("offset=5001"));
    assert!(out.trim_end().ends_with("  5000\t5000"));
    assert_eq!(r["details"]["truncated"], true);
    assert_eq!(r["details"]["lines_read"], 5000);
    assert_eq!(r["details"]["next_offset"], 5001);
    let r = read(&env, json!({"file_path": "big.txt", "offset": 6999}));
    assert_eq!(r["output"], "  6999\t6999\n  7000\t7000\n");
    assert_eq!(r["details"]["truncated"], false);
}

#[test]
fn crlf_no_trailing_newline_and_empty_files() {
    let env = Env::new();
    env.write("crlf.txt", "a\r\nb\r\nc");
    let r = read(&env, json!({"file_path": "crlf.txt"}));
    assert_eq!(r["output"], "     1\ta\n     2\tb\n     3\tc\n");
    assert_eq!(r["details"]["total_lines"], 3);
    env.write("empty.txt", "");
    let r = read(&env, json!({"file_path": "empty.txt"}));
    assert_eq!(r["is_error"], false);
    assert_eq!(r["details"]["total_lines"], 0);
    assert!(r["output"].as_str().unwrap().contains("empty"));
    let r = read(&env, json!({"file_path": "empty.txt", "offset": 2}));
    assert_eq!(r["error_code"], "read.offset_past_end");
}

#[test]
fn long_lines_are_cut_and_output_is_capped() {
    let env = Env::new();
    env.write("min.js", format!("{}\nshort\n", "x".repeat(100_000)));
    let r = read(&env, json!({"file_path": "min.js"}));
    let out = r["output"].as_str().unwrap();
    assert!(out.len() < 3000, "{}", out.len());
    assert!(out.contains("line cut"));
    assert!(out.contains("     2\tshort"));
    assert_eq!(r["details"]["cut_lines"], 1);

    let wide: String = (0..5000)
        .map(|i| format!("{i:04} {}\n", "y".repeat(1500)))
        .collect();
    env.write("wide.txt", wide);
    let r = read(&env, json!({"file_path": "wide.txt"}));
    let out = r["output"].as_str().unwrap();
    assert!(out.len() <= 270 * 1024, "{}", out.len());
    assert_eq!(r["details"]["truncated"], true);
    let next = r["details"]["next_offset"].as_u64().unwrap();
    assert!(
        out.contains(&format!("offset={next}")),
        "{}",
        &out[out.len() - 300..]
    );
    let r2 = read(
        &env,
        json!({"file_path": "wide.txt", "offset": next, "limit": 1}),
    );
    // After the note that the file goes on past the limit.
    let page = r2["output"].as_str().unwrap();
    assert!(
        page.contains(&format!(
            "to read on, or leave out limit for the whole file.\n\n{next:>6}\t{:04}",
            next - 1
        )),
        "{}",
        &page[..page.len().min(300)]
    );
}

#[test]
fn errors_tell_the_model_what_to_do() {
    let env = Env::new();
    env.write("src/main.rs", "fn main() {}\n");
    let r = read(&env, json!({"file_path": "src/mian.rs"}));
    assert_eq!(r["error_code"], "read.not_found");
    assert!(r["output"].as_str().unwrap().contains("src/main.rs"), "{r}");
    let r = read(&env, json!({"file_path": "src"}));
    assert_eq!(r["error_code"], "read.is_directory");
    assert!(r["output"].as_str().unwrap().contains("ls"));
    env.write("app.bin", b"\x7fELF\x00\x01\x02binary");
    let r = read(&env, json!({"file_path": "app.bin"}));
    assert_eq!(r["error_code"], "read.binary");
    assert!(r["output"].as_str().unwrap().contains("bash"));
    let r = read(&env, json!({"file_path": "src/main.rs", "offset": 5}));
    assert_eq!(r["error_code"], "read.offset_past_end");
    assert!(r["output"].as_str().unwrap().contains("1 line"));
    let r = read(&env, json!({"file_path": "src/main.rs", "limit": 6000}));
    assert_eq!(r["error_code"], "read.bad_limit");
}

#[test]
fn latin1_is_read_lossily_and_says_so() {
    let env = Env::new();
    env.write("latin1.txt", b"caf\xe9\n");
    let r = read(&env, json!({"file_path": "latin1.txt"}));
    assert_eq!(r["is_error"], false);
    assert_eq!(
        r["output"].as_str().unwrap().lines().next().unwrap(),
        "     1\tcaf\u{fffd}"
    );
    assert_eq!(r["details"]["lossy"], true);
}

#[test]
fn hash_changes_with_content_and_images_are_blocks() {
    let env = Env::new();
    env.write("a.txt", "one\n");
    let h1 = read(&env, json!({"file_path": "a.txt"}))["details"]["hash"].clone();
    env.write("a.txt", "two\n");
    let h2 = read(&env, json!({"file_path": "a.txt"}))["details"]["hash"].clone();
    assert_ne!(h1, h2);
    assert!(h1.as_str().unwrap().starts_with("xxh3:"));

    let png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR";
    env.write("pic.png", png);
    let r = read(&env, json!({"file_path": "pic.png"}));
    assert_eq!(r["is_error"], false);
    assert_eq!(r["images"][0]["mime_type"], "image/png");
    assert_eq!(r["details"]["image"], true);
}

#[test]
fn plain_command_line_flags() {
    let env = Env::new();
    env.write("f.txt", "a\nb\nc\nd\n");
    let r = run_args(
        &env,
        bin!("ag-read"),
        &["f.txt", "--offset", "2", "--limit", "2"],
    );
    r.ok();
    assert_eq!(r.stdout(), "     2\tb\n     3\tc\n");
    assert!(
        r.stderr().contains(
            "Lines 2-3 of 4, as `limit` asked: 1 more after line 3. Use offset=4 to read on"
        ),
        "{}",
        r.stderr()
    );
}

#[test]
fn plain_notes_go_to_stderr_and_stay_in_the_model_text() {
    let env = Env::new();
    let body: String = (1..=7000).map(|i| format!("{i}\n")).collect();
    env.write("big.txt", body);
    // stdout is the numbered lines alone; how to read on is on stderr.
    let r = run_args(&env, bin!("ag-read"), &["big.txt"]);
    r.ok();
    let stdout = r.stdout();
    assert_eq!(stdout.lines().count(), 5000, "{}", r.stderr());
    assert!(stdout.starts_with("     1\t1\n"));
    assert!(stdout.ends_with("  5000\t5000\n"));
    assert_eq!(
        r.stderr(),
        "ag-read: note: File has 7000 lines, showing first 5000. \
Use offset and limit parameters to read more (next: offset=5001, limit=5000).\n"
    );
    // The model reads the warning first.
    let r = read(&env, json!({"file_path": "big.txt"}));
    let out = r["output"].as_str().unwrap();
    assert!(
        out.starts_with("WARNING: File has 7000 lines, showing first 5000. Use offset and limit parameters to read more (next: offset=5001, limit=5000).\n\n     1\t1\n"),
        "{}",
        &out[..200]
    );

    // An empty file prints nothing, like `cat -n`.
    env.write("empty.txt", "");
    let r = run_args(&env, bin!("ag-read"), &["empty.txt"]);
    r.ok();
    assert_eq!(r.stdout(), "");
    assert_eq!(r.stderr(), "ag-read: note: `empty.txt` is empty.\n");

    // A cut line stays on stdout with its marker; the note goes to stderr.
    env.write("min.js", format!("{}\nshort\n", "x".repeat(3000)));
    let r = run_args(&env, bin!("ag-read"), &["min.js"]);
    r.ok();
    let stdout = r.stdout();
    assert_eq!(stdout.lines().count(), 2, "{r}");
    assert!(
        stdout
            .lines()
            .next()
            .unwrap()
            .ends_with("first 2000 characters shown]")
    );
    assert!(
        r.stderr()
            .starts_with("ag-read: note: 1 line longer than 2000 characters was cut"),
        "{r}"
    );
    let r = read(&env, json!({"file_path": "min.js"}));
    assert!(
        r["output"]
            .as_str()
            .unwrap()
            .ends_with("     2\tshort\n\n1 line longer than 2000 characters was cut; use bash (for example `cut -c2001-4000`) to see the rest.\n"),
        "{r}"
    );
}

/// Runs one JSONL call with a watchdog: a tool that blocks (on a FIFO with
/// no writer, say) is killed after a generous while and the test fails,
/// instead of hanging the suite.
fn call_or_hang(env: &Env, bin: &str, args: serde_json::Value) -> serde_json::Value {
    use std::io::Write;
    use std::process::Stdio;
    let mut cmd = env.cmd(bin);
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let line = json!({"id": "1", "arguments": args}).to_string() + "\n";
    child
        .stdin
        .take()
        .unwrap()
        .write_all(line.as_bytes())
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("{bin} hung on {args}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn fifos_and_devices_are_refused_without_blocking() {
    let env = Env::new();
    nix::unistd::mkfifo(
        &env.join("pipe"),
        nix::sys::stat::Mode::from_bits_truncate(0o644),
    )
    .unwrap();
    std::os::unix::fs::symlink("pipe", env.join("to-pipe")).unwrap();
    env.write("dir/a.txt", "needle\n");
    nix::unistd::mkfifo(
        &env.join("dir/p"),
        nix::sys::stat::Mode::from_bits_truncate(0o644),
    )
    .unwrap();
    std::os::unix::fs::symlink("p", env.join("dir/link-to-p")).unwrap();
    for path in ["pipe", "to-pipe", "/dev/null"] {
        let r = call_or_hang(&env, bin!("ag-read"), json!({"file_path": path}));
        assert_eq!(r["error_code"], "read.not_a_file", "{path}: {r}");
        assert!(r["output"].as_str().unwrap().contains("FIFO"), "{r}");
    }
    let r = call_or_hang(&env, bin!("ag-grep"), json!({"query": "x", "path": "pipe"}));
    assert_eq!(r["error_code"], "grep.not_a_file", "{r}");
    // A walk passes FIFOs by, even through a followed link.
    let r = call_or_hang(
        &env,
        bin!("ag-grep"),
        json!({"query": "needle", "path": "dir", "follow_symlinks": true}),
    );
    assert_eq!(r["details"]["files_matched"], 1, "{r}");
    let r = call_or_hang(
        &env,
        bin!("ag-edit"),
        json!({"file_path": "pipe", "old_string": "a", "new_string": "b"}),
    );
    assert_eq!(r["error_code"], "edit.not_a_file", "{r}");
    let r = call_or_hang(
        &env,
        bin!("ag-patch"),
        json!({"patch": "*** Begin Patch\n*** Update File: pipe\n@@\n-a\n+b\n*** End Patch\n"}),
    );
    assert_eq!(r["is_error"], true, "{r}");
}
