//! ag-grep, black-box: ignore rules, output layout, the match cap, case,
//! globs, context, long lines, symlinks, errors.

use crate::bin;
use crate::tree::{plain_project, project, repository_below_a_gitignore};
use crate::util::{Env, call, call_lines, run_args};
use serde_json::{Value, json};

fn grep(env: &Env, args: Value) -> Value {
    let r = call(env, bin!("ag-grep"), args);
    assert_eq!(r["is_error"], false, "{r}");
    r
}

fn out(r: &Value) -> &str {
    r["output"].as_str().unwrap()
}

/// The files that have matches, in the order of the details.
fn files(r: &Value) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for m in r["details"]["matches"].as_array().unwrap() {
        let p = m["path"].as_str().unwrap().to_string();
        if seen.last() != Some(&p) {
            seen.push(p);
        }
    }
    seen
}

#[test]
fn obeys_ignore_files_hidden_binary_and_git_like_ripgrep() {
    let env = Env::new();
    let _outside = project(&env);
    let r = grep(&env, json!({"query": "needle"}));
    assert_eq!(
        files(&r),
        vec![
            "docs/naïve café.md",
            "docs/日本語.txt",
            "src/main.rs",
            "src/util/build/keep.rs",
            "src/util/strings.rs",
        ],
        "{}",
        out(&r)
    );
    assert_eq!(r["details"]["binary_files_skipped"], 1);
    assert_eq!(r["details"]["truncated"], false);
    assert_eq!(r["details"]["files_matched"], 5);
    assert_eq!(r["details"]["total_matches"], 7);
    assert_eq!(r["details"]["files_searched"], 7, "{r}");

    let r = grep(
        &env,
        json!({"query": "needle", "include_hidden": true, "include_ignored": true}),
    );
    let found = files(&r);
    for f in [
        ".env",
        ".hidden/secret.rs",
        "app.log",
        "build/out.txt",
        "target/debug/gen.rs",
        "vendor/dep.rs",
    ] {
        assert!(found.contains(&f.to_string()), "{f} missing: {found:?}");
    }
    assert!(!found.iter().any(|f| f.starts_with(".git/")), "{found:?}");
    assert!(!found.iter().any(|f| f.starts_with("assets/")), "{found:?}");

    let r = grep(&env, json!({"query": "needle", "include_hidden": true}));
    assert!(files(&r).contains(&".env".to_string()));
    assert!(!files(&r).contains(&"app.log".to_string()));
}

#[test]
fn output_is_grouped_by_file_in_path_order() {
    let env = Env::new();
    let _outside = project(&env);
    let r = grep(&env, json!({"query": "needle", "path": "src"}));
    assert_eq!(
        out(&r),
        "src/main.rs:2:     let needle = 1;\n\
         src/main.rs:3:     println!(\"{}\", needle);\n\
         \n\
         src/util/build/keep.rs:1: // needle kept\n\
         \n\
         src/util/strings.rs:1: pub fn needle() {}\n"
    );
    assert_eq!(
        r["details"]["matches"][0],
        json!({"path": "src/main.rs", "line": 2, "text": "    let needle = 1;"})
    );
    // The same whatever order the threads finish in.
    for _ in 0..3 {
        assert_eq!(grep(&env, json!({"query": "needle", "path": "src"})), r);
    }
}

#[test]
fn cap_keeps_the_first_matches_in_path_order_and_says_how_to_narrow() {
    let env = Env::new();
    env.write(".git/HEAD", "");
    for i in 0..120 {
        env.write(
            &format!("d{}/f{i:03}.txt", i % 7),
            "hit one\nmiss\nhit two\n",
        );
    }
    let r = grep(&env, json!({"query": "hit"}));
    let d = &r["details"];
    assert_eq!(d["matches"].as_array().unwrap().len(), 50);
    assert_eq!(d["truncated"], true);
    assert_eq!(d["total_matches"], 240);
    assert_eq!(d["files_matched"], 120);
    let mut all: Vec<String> = (0..120)
        .map(|i| format!("d{}/f{i:03}.txt", i % 7))
        .collect();
    all.sort();
    assert_eq!(files(&r), all[..25].to_vec());
    let text = out(&r);
    assert!(text.contains("Showing 50 of 240 matching lines"), "{text}");
    assert!(text.contains("max_matches") && text.contains("include_pattern"));
    // A cap in the middle of a file keeps its first matches.
    let r = grep(&env, json!({"query": "hit", "max_matches": 3}));
    let lines: Vec<&str> = out(&r).lines().take(4).collect();
    assert_eq!(
        lines,
        vec![
            format!("{}:1: hit one", all[0]),
            format!("{}:3: hit two", all[0]),
            String::new(),
            format!("{}:1: hit one", all[1]),
        ]
    );
    let r = grep(&env, json!({"query": "hit", "max_matches": 5000}));
    assert_eq!(r["details"]["matches"].as_array().unwrap().len(), 240);
    assert_eq!(r["details"]["truncated"], false);
    assert!(!out(&r).contains("Showing"));
}

#[test]
fn smart_case_literal_and_regex() {
    let env = Env::new();
    let _outside = project(&env);
    let docs = |args: Value| -> Vec<u64> {
        let mut a = args;
        a["path"] = json!("docs/naïve café.md");
        grep(&env, a)["details"]["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["line"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(docs(json!({"query": "needle"})), vec![2, 3]);
    assert_eq!(docs(json!({"query": "Needle"})), vec![3]);
    assert_eq!(
        docs(json!({"query": "needle", "case_sensitive": true})),
        vec![2]
    );
    assert_eq!(
        docs(json!({"query": "NEEDLE", "case_sensitive": false})),
        vec![2, 3]
    );
    assert_eq!(docs(json!({"query": "^Need"})), vec![3]);
    assert_eq!(docs(json!({"query": "caf(é|e)"})), vec![1]);
    env.write("code.c", "a.b(1);\naxb(1);\n");
    let r = grep(
        &env,
        json!({"query": "a.b(", "literal": true, "path": "code.c"}),
    );
    assert_eq!(out(&r), "code.c:1: a.b(1);\n");
    let r = grep(&env, json!({"query": "Needle", "path": "src"}));
    assert!(out(&r).contains("case-sensitive because the query has an uppercase letter"));
}

#[test]
fn include_and_exclude_globs() {
    let env = Env::new();
    let _outside = project(&env);
    let q = |args: Value| files(&grep(&env, args));
    assert_eq!(
        q(json!({"query": "needle", "include_pattern": "*.rs"})),
        vec![
            "src/main.rs",
            "src/util/build/keep.rs",
            "src/util/strings.rs"
        ]
    );
    assert_eq!(
        q(json!({"query": "needle", "include_pattern": "*.md, *.txt"})),
        vec!["docs/naïve café.md", "docs/日本語.txt"]
    );
    assert_eq!(
        q(json!({"query": "needle", "include_pattern": "src/*.rs"})),
        vec!["src/main.rs"]
    );
    assert_eq!(
        q(json!({"query": "needle", "include_pattern": "**/util/*.rs"})),
        vec!["src/util/strings.rs"]
    );
    assert_eq!(
        q(json!({"query": "needle", "exclude_pattern": "util,docs"})),
        vec!["src/main.rs"]
    );
    assert_eq!(
        q(json!({"query": "needle", "path": "src", "exclude_pattern": "*.rs"})),
        Vec::<String>::new()
    );
    let r = grep(&env, json!({"query": "needle", "include_pattern": "*.py"}));
    assert!(out(&r).contains("No matches"), "{}", out(&r));
    assert!(out(&r).contains("Only files matching `*.py`"));
    let r = call(
        &env,
        bin!("ag-grep"),
        json!({"query": "needle", "include_pattern": "src/[a"}),
    );
    assert_eq!(r["error_code"], "glob.invalid");
}

#[test]
fn context_lines_and_breaks() {
    let env = Env::new();
    let body: String = (1..=20)
        .map(|i| {
            if i == 5 || i == 6 || i == 15 {
                format!("match {i}\n")
            } else {
                format!("line {i}\n")
            }
        })
        .collect();
    env.write("f.txt", body);
    let r = grep(
        &env,
        json!({"query": "match", "path": "f.txt", "context": 1}),
    );
    assert_eq!(
        out(&r),
        "f.txt-4- line 4\nf.txt:5: match 5\nf.txt:6: match 6\nf.txt-7- line 7\n--\nf.txt-14- line 14\nf.txt:15: match 15\nf.txt-16- line 16\n"
    );
    assert_eq!(r["details"]["matches"].as_array().unwrap().len(), 3);
    let r = grep(
        &env,
        json!({"query": "match", "path": "f.txt", "context": 2, "max_matches": 2}),
    );
    assert!(
        out(&r).starts_with(
            "f.txt-3- line 3\nf.txt-4- line 4\nf.txt:5: match 5\nf.txt:6: match 6\nf.txt-7- line 7\nf.txt-8- line 8\n\n["
        ),
        "{}",
        out(&r)
    );
    let r = call(&env, bin!("ag-grep"), json!({"query": "x", "context": 11}));
    assert_eq!(r["error_code"], "grep.bad_context");
}

/// Files are read whole to number only the lines shown, except a file over
/// 4 MiB (searched as a stream, numbered by the searcher) and one with a
/// byte-order mark (transcoded as a stream); a NUL byte anywhere makes a
/// file binary, far into it too. Each way gives the same lines and numbers.
#[test]
fn large_files_byte_order_marks_and_late_nul_bytes() {
    let env = Env::new();
    let filler = "some ordinary text of a line\n";
    // 5 MiB of lines, a match on line 3 and one near the end.
    let lines = 5 * 1024 * 1024 / filler.len();
    let mut big = String::new();
    for i in 1..=lines {
        big.push_str(if i == 3 || i == lines - 1 {
            "needle here\n"
        } else {
            filler
        });
    }
    env.write("big.txt", big.clone());
    // The same text, small: only the lines up to the second match.
    let small: String = big.split_inclusive('\n').take(lines - 1).collect();
    env.write("small.txt", small);
    // UTF-16LE with its mark: the match is on line 2.
    let mut utf16 = vec![0xFF, 0xFE];
    for unit in "first\r\nneedle in utf-16\r\n".encode_utf16() {
        utf16.extend_from_slice(&unit.to_le_bytes());
    }
    env.write("wide.txt", utf16);
    // A NUL past the first 64 KiB still makes the file binary.
    let mut late = "needle early\n".repeat(10);
    late.push_str(&filler.repeat(100 * 1024 / filler.len()));
    late.push('\0');
    env.write("late-nul.txt", late);
    let r = grep(&env, json!({"query": "needle", "context": 1}));
    let far = lines - 1;
    let text = out(&r);
    for expected in [
        "big.txt:3: needle here\n".to_string(),
        format!("big.txt:{far}: needle here\nbig.txt-{}- some", far + 1),
        "small.txt-2- some ordinary text of a line\nsmall.txt:3: needle here\n".to_string(),
        format!("small.txt:{far}: needle here\n"),
        "wide.txt-1- first\nwide.txt:2: needle in utf-16\n".to_string(),
    ] {
        assert!(text.contains(&expected), "{expected:?} not in {text}");
    }
    assert!(!text.contains("late-nul"), "{text}");
    assert_eq!(r["details"]["binary_files_skipped"], 1, "{r}");
    assert_eq!(r["details"]["total_matches"], 5, "{r}");
}

#[test]
fn long_lines_are_cut_around_the_match() {
    let env = Env::new();
    env.write(
        "min.js",
        format!(
            "{}TARGET{}\nshort TARGET\n",
            "a".repeat(10_000),
            "b".repeat(10_000)
        ),
    );
    let r = grep(&env, json!({"query": "TARGET", "path": "min.js"}));
    let first = r["details"]["matches"][0]["text"].as_str().unwrap();
    assert!(first.contains("TARGET"), "{first}");
    assert!(first.starts_with('…') && first.ends_with('…'));
    assert!(first.chars().count() <= 302);
    assert_eq!(r["details"]["matches"][1]["text"], "short TARGET");
    assert!(out(&r).contains("cut around the match"));
    assert!(out(&r).len() < 1000);
}

#[test]
fn symlinks_are_followed_only_when_asked_and_never_out_of_root() {
    let env = Env::new();
    let _outside = project(&env);
    let r = grep(&env, json!({"query": "needle"}));
    assert!(
        !files(&r)
            .iter()
            .any(|f| f.starts_with("link_main") || f.starts_with("escape"))
    );
    let r = grep(&env, json!({"query": "needle", "follow_symlinks": true}));
    let found = files(&r);
    assert!(found.contains(&"link_main.rs".to_string()), "{found:?}");
    assert!(found.contains(&"escape/far.rs".to_string()), "{found:?}");
    // The loop is reported, not followed forever.
    assert!(!found.iter().any(|f| f.starts_with("loop/")), "{found:?}");
    // Under --root a link that leads out is skipped.
    let mut cmd = env.cmd(bin!("ag-grep"));
    cmd.args(["--root", ".", "--json", "needle", ".", "--follow-symlinks"]);
    let r = crate::util::run(cmd, None);
    r.ok();
    let v = r.json();
    let found = files(&v);
    assert!(found.contains(&"link_main.rs".to_string()), "{found:?}");
    assert!(!found.iter().any(|f| f.starts_with("escape")), "{found:?}");
}

#[test]
fn explicit_files_are_searched_even_when_ignored_and_binary_is_said() {
    let env = Env::new();
    let _outside = project(&env);
    let r = grep(&env, json!({"query": "needle", "path": "app.log"}));
    assert_eq!(out(&r), "app.log:1: needle in a log\n");
    let r = grep(&env, json!({"query": "needle", "path": "assets/logo.bin"}));
    assert!(out(&r).contains("binary file"), "{}", out(&r));
    assert_eq!(r["details"]["total_matches"], 0);
}

#[test]
fn errors_tell_the_model_what_to_do() {
    let env = Env::new();
    let _outside = project(&env);
    let lines = call_lines(
        &env,
        bin!("ag-grep"),
        &[
            r#"{"id":"1","arguments":{"query":"fn main("}}"#,
            r#"{"id":"2","arguments":{"query":"x","path":"srcc"}}"#,
            r#"{"id":"3","arguments":{"query":""}}"#,
            r#"{"id":"4","arguments":{"query":"x","max_matches":5001}}"#,
            "not json",
            r#"{"id":"6","arguments":{"query":"needle","path":"src/lib.rs"}}"#,
        ]
        .join("\n"),
    );
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[0]["error_code"], "grep.bad_regex");
    assert!(
        lines[0]["output"]
            .as_str()
            .unwrap()
            .contains("literal=true")
    );
    assert_eq!(lines[1]["error_code"], "grep.not_found");
    assert!(lines[1]["output"].as_str().unwrap().contains("`src`"));
    assert_eq!(lines[2]["error_code"], "grep.empty_query");
    assert_eq!(lines[3]["error_code"], "grep.bad_limit");
    assert_eq!(lines[4]["error_code"], "call.malformed");
    assert_eq!(lines[5]["is_error"], false);
    assert!(
        lines[5]["output"]
            .as_str()
            .unwrap()
            .starts_with("No matches for `needle` in `src/lib.rs`")
    );
}

#[test]
fn plain_command_line() {
    let env = Env::new();
    let _outside = project(&env);
    let r = run_args(
        &env,
        bin!("ag-grep"),
        &["needle", "src/util", "-g", "strings.rs"],
    );
    r.ok();
    assert_eq!(r.stdout(), "src/util/strings.rs:1: pub fn needle() {}\n");
    let r = run_args(&env, bin!("ag-grep"), &["(", "src"]);
    r.expect_code(1);
    assert!(
        r.stderr()
            .starts_with("ag-grep: error: `query` is not a valid regular expression"),
        "{r}"
    );
    assert!(r.stderr().contains("\nhint: "), "{r}");
    let r = run_args(
        &env,
        bin!("ag-grep"),
        &["needle", "--case-sensitive", "--hidden", "-m", "1"],
    );
    r.ok();
    assert!(r.stdout().starts_with(".env:1: SECRET=needle\n"), "{r}");
}

#[test]
fn schemas_of_the_search_tools() {
    let env = Env::new();
    for (bin, name, required) in [
        (bin!("ag-grep"), "grep", vec!["query"]),
        (bin!("ag-find"), "find", vec!["pattern"]),
        (bin!("ag-ls"), "ls", vec![]),
    ] {
        let r = run_args(&env, bin, &["--schema"]);
        r.ok();
        let def = r.json();
        assert_eq!(def["name"], name);
        let params = &def["parameters"];
        assert_eq!(params["type"], "object");
        let req: Vec<&str> = params["required"]
            .as_array()
            .map(|a| a.iter().map(|v| v.as_str().unwrap()).collect())
            .unwrap_or_default();
        assert_eq!(req, required, "{def}");
        for switch in ["include_hidden", "include_ignored"] {
            assert_eq!(params["properties"][switch]["type"], "boolean", "{def}");
        }
    }
}

#[test]
fn plain_notes_go_to_stderr_and_stay_in_the_model_text() {
    let env = Env::new();
    for i in 0..30 {
        env.write(&format!("f{i:02}.txt"), "hit one\nmiss\nhit two\n");
    }
    env.write(".hidden.txt", "nothing\n");
    // Cut short: stdout holds the 10 matching lines and the blank lines
    // between files, nothing else; the note is on stderr.
    let r = run_args(&env, bin!("ag-grep"), &["hit", "-m", "10"]);
    r.ok();
    let stdout = r.stdout();
    let lines: Vec<&str> = stdout.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 10, "{r}");
    assert!(lines.iter().all(|l| l.contains(".txt:")), "{r}");
    assert!(
        !stdout.ends_with("\n\n") && !stdout.contains("Showing"),
        "{r}"
    );
    assert!(
        r.stderr()
            .starts_with("ag-grep: note: Showing 10 of 60 matching lines"),
        "{r}"
    );
    assert!(
        r.stderr()
            .ends_with("raise `max_matches` (at most 5000).\n"),
        "{r}"
    );
    assert_eq!(r.stderr().lines().count(), 1, "{r}");

    // Nothing found: stdout is empty, every note on stderr, status 0.
    let r = run_args(&env, bin!("ag-grep"), &["zzzz", "f00.txt"]);
    r.ok();
    assert_eq!(r.stdout(), "", "{r}");
    assert_eq!(
        r.stderr(),
        "ag-grep: note: No matches for `zzzz` in `f00.txt` (1 file searched).\n"
    );
    let r = run_args(&env, bin!("ag-grep"), &["Zzzz"]);
    r.ok();
    assert_eq!(r.stdout(), "", "{r}");
    let stderr = r.stderr();
    let notes: Vec<&str> = stderr.lines().collect();
    assert_eq!(notes.len(), 3, "{r}");
    assert!(notes[0].starts_with("ag-grep: note: No matches for `Zzzz` in `.`"));
    assert!(notes[1].starts_with("ag-grep: note: The search was case-sensitive"));
    assert!(notes[2].starts_with("ag-grep: note: Files excluded by .gitignore"));

    // The model reads the same notes after the results, as before.
    let r = grep(&env, json!({"query": "hit", "max_matches": 10}));
    let text = out(&r);
    assert!(
        text.contains(".txt:3: hit two\n\n[Showing 10 of 60 matching lines"),
        "{text}"
    );
    assert!(text.ends_with("]\n"), "{text}");
    let r = grep(&env, json!({"query": "zzzz", "path": "f00.txt"}));
    assert_eq!(
        out(&r),
        "No matches for `zzzz` in `f00.txt` (1 file searched)."
    );
    // So does --json.
    let r = run_args(&env, bin!("ag-grep"), &["zzzz", "f00.txt", "--json"]);
    r.ok();
    assert_eq!(r.stderr(), "", "{r}");
    assert!(
        r.json()["output"]
            .as_str()
            .unwrap()
            .starts_with("No matches for `zzzz`")
    );
}

#[test]
fn gitignore_counts_outside_a_git_repository() {
    let env = Env::new();
    plain_project(&env);
    let mut found = files(&grep(&env, json!({"query": "needle"})));
    found.sort();
    assert_eq!(found, ["src/a.txt", "sub/kept.txt"]);
    assert_eq!(
        files(&grep(&env, json!({"query": "needle", "path": "sub"}))),
        ["sub/kept.txt"]
    );
    let r = grep(&env, json!({"query": "needle", "include_ignored": true}));
    assert_eq!(files(&r).len(), 6, "{r}");
    // Inside a repository, git's rules: the .gitignore above its top does not count.
    let env = Env::new();
    repository_below_a_gitignore(&env);
    assert_eq!(
        files(&grep(&env, json!({"query": "needle", "path": "repo"}))),
        ["repo/notes.log"]
    );
}
