//! Input that must not silently lose work: lines that are not UTF-8, calls
//! nested deeper than the parser goes, lines and patterns far longer than
//! any real call. Each gets an error that keeps the call's id when its top
//! level can be read, and the calls after it are answered as usual.

use serde_json::json;

use crate::bin;
use crate::util::{Env, run};

/// A valid call to follow each hostile line, proving the loop went on.
const NEXT: &str = "{\"id\":\"next\",\"arguments\":{\"file_path\":\"a.txt\"}}\n";

#[test]
fn invalid_utf8_is_refused_not_replaced() {
    let env = Env::new();
    let mut input = Vec::new();
    // A file name and a content with a Latin-1 byte where UTF-8 is due.
    input.extend_from_slice(
        b"{\"id\":\"name\",\"arguments\":{\"file_path\":\"caf\xe9.txt\",\"content\":\"x\"}}\n",
    );
    input.extend_from_slice(
        b"{\"id\":\"body\",\"arguments\":{\"file_path\":\"b.txt\",\"content\":\"na\xefve\"}}\n",
    );
    input.extend_from_slice(
        b"{\"id\":\"fine\",\"arguments\":{\"file_path\":\"a.txt\",\"content\":\"ok\\n\"}}\n",
    );
    let out = run(env.cmd(bin!("ag-write")), Some(&input)).json_lines();
    assert_eq!(out.len(), 3, "{out:?}");
    for (r, id) in out.iter().zip(["name", "body"]) {
        assert_eq!(r["id"], id, "{r}");
        assert_eq!(r["is_error"], true, "{r}");
        assert_eq!(r["error_code"], "call.invalid_utf8", "{r}");
    }
    assert_eq!(out[2]["is_error"], false, "{}", out[2]);
    let names: Vec<String> = std::fs::read_dir(env.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    assert_eq!(names, vec!["a.txt"], "only the valid call wrote a file");
}

#[test]
fn a_call_nested_too_deep_keeps_its_id() {
    let env = Env::new();
    env.write("a.txt", "hello\n");
    let depth = 100_000;
    let mut input = format!(
        "{{\"id\":\"deep\",\"arguments\":{{\"file_path\":{}\"a.txt\"{}}}}}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    input.push_str(NEXT);
    let out = run(env.cmd(bin!("ag-read")), Some(input.as_bytes())).json_lines();
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(out[0]["id"], "deep", "{}", out[0]);
    assert_eq!(out[0]["error_code"], "call.malformed", "{}", out[0]);
    assert_eq!(out[1]["id"], "next");
    assert_eq!(out[1]["is_error"], false, "{}", out[1]);
}

#[test]
fn a_line_over_64_mib_is_refused_and_the_next_answered() {
    let env = Env::new();
    env.write("a.txt", "hello\n");
    let mut input = Vec::with_capacity(65 << 20);
    input.extend_from_slice(b"{\"id\":\"huge\",\"arguments\":{\"file_path\":\"a.txt\",\"x\":\"");
    input.resize(65 << 20, b'x');
    input.extend_from_slice(b"\"}}\n");
    input.extend_from_slice(NEXT.as_bytes());
    let out = run(env.cmd(bin!("ag-read")), Some(&input)).json_lines();
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(out[0]["error_code"], "call.too_long", "{}", out[0]);
    assert!(out[0]["output"].as_str().unwrap().contains("64 MiB"));
    // The id sits at the start of the line: the answer keeps it.
    assert_eq!(out[0]["id"], "huge", "{}", out[0]);
    assert_eq!(out[1]["id"], "next");
    assert_eq!(out[1]["is_error"], false, "{}", out[1]);
}

#[test]
fn ag_gate_denies_an_overlong_line_plainly_and_reads_on() {
    let env = Env::new();
    // An unfinished request, then a request far over the limit.
    let mut input = b"{\"tool\": \"bash\",\n".to_vec();
    input.extend_from_slice(b"{\"tool\":\"write\",\"arguments\":{\"content\":\"");
    input.resize(input.len() + (65 << 20), b'a');
    input.extend_from_slice(b"\"},\"cwd\":\"/p\"}\n");
    let next = json!({"tool": "read", "arguments": {"file_path": "a.txt"}, "cwd": env.path()});
    input.extend_from_slice(format!("{next}\n").as_bytes());
    let r = run(env.cmd(bin!("ag-gate")), Some(&input));
    let out = r.json_lines();
    assert_eq!(out.len(), 3, "{r}");
    assert_eq!(out[0]["decision"], "deny", "{}", out[0]);
    assert_eq!(out[1]["decision"], "deny", "{}", out[1]);
    let reason = out[1]["reason"].as_str().unwrap();
    assert!(reason.starts_with("line too long: "), "{reason}");
    assert!(reason.contains("64 MiB limit"), "{reason}");
    // No stand-in for the line, no parser's message about it.
    for internal in ["invalid type", "expected struct", "a line of"] {
        assert!(!reason.contains(internal), "{reason}");
    }
    assert_eq!(out[2]["decision"], "allow", "{}", out[2]);
}

#[test]
fn patterns_over_1_mib_are_refused() {
    let env = Env::new();
    env.write("a.txt", "hello\n");
    let long = "a".repeat((1 << 20) + 1);
    let lines = [
        (
            bin!("ag-grep"),
            json!({"query": long}),
            "grep.query_too_long",
        ),
        (bin!("ag-find"), json!({"pattern": long}), "glob.too_long"),
        (
            bin!("ag-grep"),
            json!({"query": "hello", "include_pattern": long}),
            "glob.too_long",
        ),
    ];
    for (bin, args, code) in lines {
        let input = json!({"id": "p", "arguments": args}).to_string() + "\n";
        let out = run(env.cmd(bin), Some(input.as_bytes())).json_lines();
        assert_eq!(out[0]["error_code"], code, "{bin}: {}", out[0]);
        assert_eq!(out[0]["id"], "p");
    }
}
