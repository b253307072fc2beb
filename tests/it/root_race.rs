//! `--root` under a race: a thread flips the symlink `race` between a
//! directory inside the root and one outside as fast as it can, while each
//! file tool answers many calls through it. Not one call may return what
//! is outside, and nothing outside may be created, changed or removed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

use crate::bin;
use crate::util::{Env, run};

/// Every file outside the root holds this; it must never show up.
const SECRET: &str = "OUTSIDE-SECRET";

/// A root `proj` with `proj/inside/`, a directory `outside/` beside it
/// holding the same names, and the link `proj/race` that the flipper turns.
fn setup(names: &[&str]) -> Env {
    let env = Env::new();
    for name in names {
        env.write(&format!("proj/inside/{name}"), "MARK inside\nline\n");
        env.write(&format!("outside/{name}"), format!("MARK {SECRET}\nline\n"));
    }
    env.write(
        &format!("outside/{SECRET}-only.txt"),
        format!("MARK {SECRET}\n"),
    );
    std::os::unix::fs::symlink("inside", env.join("proj/race")).unwrap();
    env
}

/// Every file under `dir` with its content.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    out
}

/// Runs `calls` through `bin --root .` in `proj` while the link flips, and
/// returns the results. Fails if anything outside changed.
fn race(env: &Env, bin: &str, calls: Vec<Value>) -> Vec<Value> {
    race_with(env, bin, calls, false)
}

/// [`race`], with `walk` forcing the component-by-component walk that
/// stands in for `openat2` where the kernel lacks it.
fn race_with(env: &Env, bin: &str, calls: Vec<Value>, walk: bool) -> Vec<Value> {
    let before = snapshot(&env.join("outside"));
    let stop = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicBool::new(false));
    let flipper = {
        let stop = stop.clone();
        let started = started.clone();
        let proj = env.join("proj");
        std::thread::spawn(move || {
            // Two links swapped by one atomic exchange per flip: `race`
            // always exists, and flips come as fast as the kernel allows.
            let other = proj.join(".race-other");
            std::os::unix::fs::symlink("../outside", &other).unwrap();
            let race = proj.join("race");
            let mut flips = 0u64;
            while !stop.load(Ordering::Relaxed) {
                nix::fcntl::renameat2(
                    nix::fcntl::AT_FDCWD,
                    &race,
                    nix::fcntl::AT_FDCWD,
                    &other,
                    nix::fcntl::RenameFlags::RENAME_EXCHANGE,
                )
                .unwrap();
                flips += 1;
                if flips == 64 {
                    started.store(true, Ordering::Relaxed);
                }
            }
            std::fs::remove_file(&other).unwrap();
            if std::fs::read_link(&race).unwrap() != Path::new("inside") {
                std::fs::remove_file(&race).unwrap();
                std::os::unix::fs::symlink("inside", &race).unwrap();
            }
            flips
        })
    };
    while !started.load(Ordering::Relaxed) {
        std::thread::yield_now();
    }
    let mut input = String::new();
    for (i, args) in calls.into_iter().enumerate() {
        input.push_str(&json!({"id": i.to_string(), "arguments": args}).to_string());
        input.push('\n');
    }
    let mut cmd = env.cmd(bin);
    cmd.current_dir(env.join("proj")).args(["--root", "."]);
    if walk {
        cmd.env("AG_NO_OPENAT2", "1");
    }
    let results = run(cmd, Some(input.as_bytes())).json_lines();
    stop.store(true, Ordering::Relaxed);
    let flips = flipper.join().unwrap();
    assert!(flips > 1, "the link flipped only {flips} times");
    let after = snapshot(&env.join("outside"));
    assert_eq!(before, after, "{bin} changed files outside the root");
    results
}

/// The results that show what is outside: its marker or its only name.
fn escapes(results: &[Value]) -> Vec<&Value> {
    results
        .iter()
        .filter(|r| r.to_string().contains(SECRET))
        .collect()
}

#[test]
fn read_never_returns_the_outside_file() {
    let env = setup(&["secret.txt"]);
    let calls = (0..1500)
        .map(|_| json!({"file_path": "race/secret.txt"}))
        .collect();
    let results = race(&env, bin!("ag-read"), calls);
    assert_eq!(results.len(), 1500);
    let esc = escapes(&results);
    assert!(esc.is_empty(), "{} escapes, first: {}", esc.len(), esc[0]);
}

#[test]
fn without_openat2_the_walk_holds_too() {
    let env = setup(&["secret.txt"]);
    let calls = (0..800)
        .map(|_| json!({"file_path": "race/secret.txt"}))
        .collect();
    let results = race_with(&env, bin!("ag-read"), calls, true);
    let esc = escapes(&results);
    assert!(esc.is_empty(), "{} escapes, first: {}", esc.len(), esc[0]);
    let calls = (0..200)
        .map(|i| json!({"file_path": format!("race/new-{i}/x.txt"), "content": "x\n"}))
        .collect();
    race_with(&env, bin!("ag-write"), calls, true);
    // Links that stay inside still work, the absolute ones too.
    let real = env.join("proj/inside/secret.txt").canonicalize().unwrap();
    std::os::unix::fs::symlink(real, env.join("proj/abs")).unwrap();
    let mut cmd = env.cmd(bin!("ag-read"));
    cmd.current_dir(env.join("proj"))
        .args(["--root", ".", "abs"])
        .env("AG_NO_OPENAT2", "1");
    let r = run(cmd, None);
    assert!(r.stdout().contains("MARK inside"), "{}", r.stderr());
}

#[test]
fn grep_never_searches_outside() {
    let env = setup(&["a.txt", "b.txt", "c.txt"]);
    let mut calls = Vec::new();
    for i in 0..300 {
        // The link as the start of the walk, and a file through it.
        calls.push(json!({"query": "MARK", "path": "race"}));
        if i % 2 == 0 {
            calls.push(json!({"query": "MARK", "path": "race/a.txt"}));
        }
    }
    let results = race(&env, bin!("ag-grep"), calls);
    let esc = escapes(&results);
    assert!(esc.is_empty(), "{} escapes, first: {}", esc.len(), esc[0]);
}

#[test]
fn ls_never_lists_outside() {
    let env = setup(&["a.txt"]);
    let calls = (0..400).map(|_| json!({"path": "race"})).collect();
    let results = race(&env, bin!("ag-ls"), calls);
    let esc = escapes(&results);
    assert!(esc.is_empty(), "{} escapes, first: {}", esc.len(), esc[0]);
}

#[test]
fn find_never_names_outside_files() {
    let env = setup(&["a.txt"]);
    let calls = (0..300)
        .map(|_| json!({"pattern": "*", "path": "race"}))
        .collect();
    let results = race(&env, bin!("ag-find"), calls);
    let esc = escapes(&results);
    assert!(esc.is_empty(), "{} escapes, first: {}", esc.len(), esc[0]);
}

#[test]
fn write_never_creates_outside() {
    let env = setup(&["a.txt"]);
    let calls = (0..300)
        .map(|i| json!({"file_path": format!("race/new-{i}.txt"), "content": "x\n"}))
        .collect();
    race(&env, bin!("ag-write"), calls);
    // Overwriting an existing name through the link, too.
    let calls = (0..200)
        .map(|_| json!({"file_path": "race/a.txt", "content": "MARK inside\nline\n"}))
        .collect();
    race(&env, bin!("ag-write"), calls);
}

#[test]
fn edit_never_reads_or_changes_outside() {
    let env = setup(&["a.txt"]);
    let calls = (0..300)
        .map(|i| {
            let (old, new) = if i % 2 == 0 {
                ("line\n", "line two\n")
            } else {
                ("line two\n", "line\n")
            };
            json!({"file_path": "race/a.txt", "old_string": old, "new_string": new})
        })
        .collect();
    let results = race(&env, bin!("ag-edit"), calls);
    let esc = escapes(&results);
    assert!(esc.is_empty(), "{} escapes, first: {}", esc.len(), esc[0]);
}

#[test]
fn patch_never_creates_or_changes_outside() {
    let env = setup(&["a.txt"]);
    let calls = (0..200)
        .map(|i| {
            let patch = if i % 2 == 0 {
                format!(
                    "*** Begin Patch\n*** Add File: race/p-{i}.txt\n+new\n*** Add File: race/d-{i}/q.txt\n+new\n*** End Patch\n"
                )
            } else {
                // A hunk that does not fit: the error quotes the file's
                // nearest lines, which must be the inside file's.
                "*** Begin Patch\n*** Update File: race/a.txt\n@@\n-no such line\n+x\n*** End Patch\n".to_string()
            };
            json!({ "patch": patch })
        })
        .collect();
    let results = race(&env, bin!("ag-patch"), calls);
    let esc = escapes(&results);
    assert!(esc.is_empty(), "{} escapes, first: {}", esc.len(), esc[0]);
}

#[test]
fn delete_never_removes_outside() {
    let names: Vec<String> = (0..300).map(|i| format!("victim-{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let env = setup(&refs);
    let calls = names
        .iter()
        .map(|n| json!({"path": format!("race/{n}")}))
        .collect();
    let results = race(&env, bin!("ag-delete"), calls);
    assert_eq!(results.len(), 300);
}
