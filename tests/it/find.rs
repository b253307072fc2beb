//! ag-find, black-box: globs, ignore rules, order, the cap.

use std::time::{Duration, SystemTime};

use crate::bin;
use crate::tree::{plain_project, project, repository_below_a_gitignore};
use crate::util::{Env, call, run_args};
use serde_json::{Value, json};

fn find(env: &Env, args: Value) -> Value {
    let r = call(env, bin!("ag-find"), args);
    assert_eq!(r["is_error"], false, "{r}");
    r
}

fn listed(r: &Value) -> Vec<String> {
    r["details"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fn touch(env: &Env, rel: &str, secs_ago: u64) {
    let f = std::fs::File::options()
        .write(true)
        .open(env.join(rel))
        .unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(secs_ago))
        .unwrap();
}

#[test]
fn globs_with_and_without_slash() {
    let env = Env::new();
    let _outside = project(&env);
    let all_rs = vec![
        "src/lib.rs",
        "src/main.rs",
        "src/util/build/keep.rs",
        "src/util/strings.rs",
    ];
    assert_eq!(
        sorted(listed(&find(&env, json!({"pattern": "*.rs"})))),
        all_rs
    );
    assert_eq!(
        sorted(listed(&find(&env, json!({"pattern": "**/*.rs"})))),
        all_rs
    );
    assert_eq!(
        sorted(listed(&find(&env, json!({"pattern": "src/*.rs"})))),
        vec!["src/lib.rs", "src/main.rs"]
    );
    assert_eq!(
        sorted(listed(&find(
            &env,
            json!({"pattern": "*.rs", "path": "src/util"})
        ))),
        vec!["src/util/build/keep.rs", "src/util/strings.rs"]
    );
    assert_eq!(
        listed(&find(
            &env,
            json!({"pattern": "*.{md,txt}", "sort": "path"})
        )),
        vec!["docs/naïve café.md", "docs/日本語.txt"]
    );
    assert_eq!(
        listed(&find(&env, json!({"pattern": "日本語.txt"}))),
        vec!["docs/日本語.txt"]
    );
    // A glob with `/` is relative to `path`.
    let r = find(&env, json!({"pattern": "src/*.rs", "path": "src"}));
    assert!(listed(&r).is_empty());
    let text = r["output"].as_str().unwrap();
    assert!(text.contains("No files match"), "{text}");
    assert!(text.contains("relative to `src`"), "{text}");
}

#[test]
fn ignore_rules_and_switches() {
    let env = Env::new();
    let _outside = project(&env);
    let r = find(&env, json!({"pattern": "*"}));
    let files = sorted(listed(&r));
    assert_eq!(
        files,
        vec![
            "assets/logo.bin",
            "docs/naïve café.md",
            "docs/日本語.txt",
            "src/lib.rs",
            "src/main.rs",
            "src/util/build/keep.rs",
            "src/util/strings.rs",
        ]
    );
    let r = find(
        &env,
        json!({"pattern": "*", "include_hidden": true, "include_ignored": true}),
    );
    let files = listed(&r);
    for f in [
        ".env",
        ".gitignore",
        ".hidden/secret.rs",
        "app.log",
        "build/out.txt",
        "target/debug/gen.rs",
        "vendor/dep.rs",
    ] {
        assert!(files.contains(&f.to_string()), "{f} missing: {files:?}");
    }
    assert!(!files.iter().any(|f| f.starts_with(".git/")), "{files:?}");
    let r = find(&env, json!({"pattern": "*.rs", "follow_symlinks": true}));
    let files = listed(&r);
    assert!(files.contains(&"link_main.rs".to_string()), "{files:?}");
    assert!(files.contains(&"escape/far.rs".to_string()), "{files:?}");
    let r = find(&env, json!({"pattern": "*.rs", "exclude_pattern": "util"}));
    assert_eq!(sorted(listed(&r)), vec!["src/lib.rs", "src/main.rs"]);
    let r = find(&env, json!({"pattern": "*.log"}));
    assert!(
        r["output"]
            .as_str()
            .unwrap()
            .contains("include_ignored=true")
    );
}

#[test]
fn newest_first_capped_with_a_note() {
    let env = Env::new();
    for i in 0..30 {
        env.write(&format!("f{i:02}.txt"), "");
        touch(&env, &format!("f{i:02}.txt"), 1000 + i);
    }
    touch(&env, "f17.txt", 10);
    let r = find(&env, json!({"pattern": "*.txt", "limit": 3}));
    assert_eq!(listed(&r), vec!["f17.txt", "f00.txt", "f01.txt"]);
    assert_eq!(r["details"]["total_files"], 30);
    assert_eq!(r["details"]["truncated"], true);
    let text = r["output"].as_str().unwrap();
    assert!(
        text.starts_with(
            "f17.txt\nf00.txt\nf01.txt\n\n[Showing the 3 most recently modified of 30 files"
        ),
        "{text}"
    );
    assert!(text.contains("raise `limit`"));
    let r = find(
        &env,
        json!({"pattern": "*.txt", "sort": "path", "limit": 2}),
    );
    assert_eq!(listed(&r), vec!["f00.txt", "f01.txt"]);
    let r = find(&env, json!({"pattern": "*.txt"}));
    assert_eq!(listed(&r).len(), 30);
    assert_eq!(r["details"]["truncated"], false);
}

#[test]
fn errors_and_plain_command_line() {
    let env = Env::new();
    let _outside = project(&env);
    let r = call(
        &env,
        bin!("ag-find"),
        json!({"pattern": "*.rs", "path": "srcc"}),
    );
    assert_eq!(r["error_code"], "find.not_found");
    let r = call(&env, bin!("ag-find"), json!({"pattern": "{a"}));
    assert_eq!(r["error_code"], "glob.invalid");
    let r = call(
        &env,
        bin!("ag-find"),
        json!({"pattern": "*", "limit": 100_001}),
    );
    assert_eq!(r["error_code"], "find.bad_limit");
    // A 0 the field cannot mean counts as absent: the default applies.
    let r = call(&env, bin!("ag-find"), json!({"pattern": "*", "limit": 0}));
    assert_eq!(r["is_error"], false, "{r}");
    let r = run_args(&env, bin!("ag-find"), &["strings.rs", "--sort", "path"]);
    r.ok();
    assert_eq!(r.stdout(), "src/util/strings.rs\n");
    let r = run_args(&env, bin!("ag-find"), &["*.rs", "src/main.rs"]);
    r.ok();
    assert_eq!(r.stdout(), "src/main.rs\n");
}

#[test]
fn plain_notes_go_to_stderr_and_stay_in_the_model_text() {
    let env = Env::new();
    for i in 0..5 {
        env.write(&format!("f{i}.txt"), "");
    }
    // Cut short: stdout is the file names alone, the note on stderr.
    let r = run_args(
        &env,
        bin!("ag-find"),
        &["*.txt", "--sort", "path", "--limit", "2"],
    );
    r.ok();
    assert_eq!(r.stdout(), "f0.txt\nf1.txt\n", "{r}");
    assert_eq!(
        r.stderr(),
        "ag-find: note: Showing the 2 first in path order of 5 files matching `*.txt`. \
Narrow `pattern` or `path`, or raise `limit` (at most 100000).\n"
    );
    // Nothing found: stdout is empty.
    let r = run_args(&env, bin!("ag-find"), &["*.nothing"]);
    r.ok();
    assert_eq!(r.stdout(), "", "{r}");
    assert_eq!(
        r.stderr(),
        "ag-find: note: No files match `*.nothing` under `.`.\n\
ag-find: note: Files excluded by .gitignore or .ignore and hidden files were skipped; \
set include_ignored=true or include_hidden=true to look there too.\n"
    );
    // The model reads the notes with the files.
    let r = find(&env, json!({"pattern": "*.nothing"}));
    assert_eq!(
        r["output"],
        "No files match `*.nothing` under `.`.\nFiles excluded by .gitignore or .ignore and hidden files were skipped; \
set include_ignored=true or include_hidden=true to look there too."
    );
    let r = run_args(
        &env,
        bin!("ag-find"),
        &["*.txt", "--sort", "path", "--limit", "2", "--json"],
    );
    r.ok();
    assert!(
        r.json()["output"]
            .as_str()
            .unwrap()
            .starts_with("f0.txt\nf1.txt\n\n[Showing the 2 first in path order of 5 files"),
        "{r}"
    );
}

#[test]
fn gitignore_counts_outside_a_git_repository() {
    let env = Env::new();
    plain_project(&env);
    assert_eq!(
        sorted(listed(&find(&env, json!({"pattern": "*"})))),
        ["src/a.txt", "sub/kept.txt"]
    );
    // Searching below it, the .gitignore above still counts.
    assert_eq!(
        listed(&find(&env, json!({"pattern": "*.txt", "path": "sub"}))),
        ["sub/kept.txt"]
    );
    let all = find(&env, json!({"pattern": "*.txt", "include_ignored": true}));
    assert_eq!(listed(&all).len(), 5, "{all}");
}

#[test]
fn inside_a_repository_a_gitignore_above_its_top_does_not_count() {
    let env = Env::new();
    repository_below_a_gitignore(&env);
    assert_eq!(
        listed(&find(&env, json!({"pattern": "*", "path": "repo"}))),
        ["repo/notes.log"]
    );
}
