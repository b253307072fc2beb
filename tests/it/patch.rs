//! ag-patch, black-box: diffs written by git itself, the command line
//! (stdin, a file, --check, exit statuses), --root, symlinks, read-only
//! files, several calls in one process, and hashes that chain with
//! ag-read. Cases that are one call on a small tree live in
//! `tests/fixtures/patch/` instead (see `scenarios`).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::bin;
use crate::util::{Env, call, call_lines, run, run_args};

fn patch(env: &Env, text: &str) -> serde_json::Value {
    call(env, bin!("ag-patch"), json!({"patch": text}))
}

fn git(dir: &Path, home: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every file under `dir` (but `.git`) with its content and executable bit.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>, bool)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.file_name().unwrap() == ".git" {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                let mode = std::fs::metadata(&p).unwrap().permissions().mode();
                out.push((
                    p.strip_prefix(dir).unwrap().display().to_string(),
                    std::fs::read(&p).unwrap(),
                    mode & 0o111 != 0,
                ));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_diff_written_by_git_recreates_the_commit() {
    let env = Env::new();
    let repo = env.join("repo");
    std::fs::create_dir(&repo).unwrap();
    let home = env.join(".home");
    git(&repo, &home, &["init", "-q", "-b", "main"]);
    let w = |p: &str, c: &[u8]| {
        let f = repo.join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, c).unwrap();
    };
    let body: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    w("src/long.txt", body.as_bytes());
    w("src/crlf.txt", b"one\r\ntwo\r\nthree\r\n");
    w("no_eol.txt", b"a\nb");
    w("gone.txt", b"bye\n");
    w("old/name.txt", b"keep me\nand me\nand me too\n");
    w("run.sh", b"#!/bin/sh\necho hi\n");
    git(&repo, &home, &["add", "-A"]);
    git(
        &repo,
        &home,
        &[
            "-c",
            "user.name=T",
            "-c",
            "user.email=t@e",
            "commit",
            "-qm",
            "base",
        ],
    );
    // The change: edits at both ends of a file, CRLF, a final newline
    // added, a deletion, a rename with an edit, a mode change, new files.
    w(
        "src/long.txt",
        body.replace("line 2\n", "line two\n")
            .replace("line 39\n", "line 39\nline 39.5\n")
            .as_bytes(),
    );
    w("src/crlf.txt", b"one\r\nTWO\r\nthree\r\n");
    w("no_eol.txt", b"a\nb\nc\n");
    std::fs::remove_file(repo.join("gone.txt")).unwrap();
    std::fs::create_dir_all(repo.join("new")).unwrap();
    std::fs::rename(repo.join("old/name.txt"), repo.join("new/name.txt")).unwrap();
    w("new/name.txt", b"keep me\nand me\nand me three\n");
    std::fs::set_permissions(repo.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    w("docs/added.md", b"# Added\n");
    w("empty.txt", b"");
    git(&repo, &home, &["add", "-A"]);
    let diff = git(&repo, &home, &["diff", "--cached", "-M"]);
    let wanted = snapshot(&repo);
    // Back to the base, then the diff through ag-patch.
    git(&repo, &home, &["reset", "-q", "--hard"]);
    assert_ne!(snapshot(&repo), wanted);
    let mut cmd = env.cmd(bin!("ag-patch"));
    cmd.current_dir(&repo).arg("-");
    let r = run(cmd, Some(diff.as_bytes()));
    r.ok();
    assert!(r.stdout().contains("R old/name.txt -> new/name.txt"), "{r}");
    assert_eq!(snapshot(&repo), wanted, "{diff}");
}

#[test]
fn command_line_stdin_file_check_and_failure() {
    let env = Env::new();
    env.write("a.txt", "one\ntwo\n");
    env.write(
        "fix.diff",
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n",
    );
    // --check: the diff, and nothing changed.
    let r = run_args(&env, bin!("ag-patch"), &["fix.diff", "--check"]);
    r.ok();
    // A small model sent every patch with `dry_run: true`: the answer
    // says how to apply it.
    assert!(
        r.stdout().starts_with("The patch applies to 1 file (+1 -1); nothing was changed, as only a check was asked for (`dry_run`, `--check`): leave that out to apply it.\nM a.txt"),
        "{r}"
    );
    assert_eq!(env.read("a.txt"), b"one\ntwo\n");
    // A file argument.
    let r = run_args(&env, bin!("ag-patch"), &["fix.diff"]);
    r.ok();
    assert!(
        r.stdout()
            .starts_with("Applied the patch to 1 file (+1 -1):\nM a.txt"),
        "{r}"
    );
    assert_eq!(env.read("a.txt"), b"one\nTWO\n");
    // Again: the hunk is already applied; exit 1, an error on stderr.
    let r = run_args(&env, bin!("ag-patch"), &["fix.diff"]);
    r.expect_code(1);
    assert!(
        r.stderr().starts_with("ag-patch: error: `a.txt`: the hunk"),
        "{r}"
    );
    assert!(r.stderr().contains("already applied"), "{r}");
    assert!(r.stdout().is_empty(), "{r}");
    // From stdin with --json.
    let mut cmd = env.cmd(bin!("ag-patch"));
    cmd.args(["-", "--json"]);
    let r = run(
        cmd,
        Some(b"*** Begin Patch\n*** Update File: a.txt\n@@\n-TWO\n+2\n*** End Patch\n"),
    );
    r.ok();
    assert_eq!(r.json()["details"]["format"], "begin_patch");
    assert_eq!(env.read("a.txt"), b"one\n2\n");
    // A missing patch file is a usage problem.
    let r = run_args(&env, bin!("ag-patch"), &["nope.diff"]);
    r.expect_code(1);
    assert!(r.stderr().contains("cannot read the patch file"), "{r}");
}

#[test]
fn no_delete_refuses_a_deleting_patch_whole_in_either_format() {
    // What ag-loop sets for a small window's default set.
    let env = Env::new();
    env.write("a.txt", "one\n");
    env.write("b.txt", "two\n");
    env.write(
        "gone.diff",
        "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n--- a/b.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-two\n",
    );
    let mut cmd = env.cmd(bin!("ag-patch"));
    cmd.env("AG_PATCH_NO_DELETE", "1").arg("gone.diff");
    let r = run(cmd, None);
    r.expect_code(1);
    assert!(
        r.stderr().contains(
            "the patch deletes `b.txt`, and this run deletes no files: nothing was changed"
        ),
        "{r}"
    );
    assert!(
        r.stderr().contains("(`+++ b/b.txt`, not `/dev/null`)"),
        "{r}"
    );
    assert_eq!(env.read("a.txt"), b"one\n", "all or nothing");
    assert_eq!(env.read("b.txt"), b"two\n");
    // The same patch without it deletes, as before.
    let r = run_args(&env, bin!("ag-patch"), &["gone.diff"]);
    r.ok();
    assert!(!env.join("b.txt").exists(), "{r}");
    assert_eq!(env.read("a.txt"), b"ONE\n");
}

#[test]
fn root_confines_every_file_of_the_patch() {
    let env = Env::new();
    env.write("w/in.txt", "in\n");
    env.write("out.txt", "out\n");
    let mut cmd = env.cmd(bin!("ag-patch"));
    cmd.current_dir(env.join("w")).args(["--root", "."]);
    let line = json!({"id": "1", "arguments": {"patch":
        "*** Begin Patch\n*** Update File: in.txt\n@@\n-in\n+IN\n*** Update File: ../out.txt\n@@\n-out\n+OUT\n*** End Patch\n"}})
    .to_string()
        + "\n";
    let r = run(cmd, Some(line.as_bytes()));
    r.ok();
    let res = r.json();
    assert_eq!(res["is_error"], true, "{res}");
    assert_eq!(env.read("w/in.txt"), b"in\n");
    assert_eq!(env.read("out.txt"), b"out\n");
}

#[test]
fn symlinks_read_only_files_and_hashes() {
    let env = Env::new();
    env.write("real.txt", "x\ny\n");
    std::os::unix::fs::symlink("real.txt", env.join("link.txt")).unwrap();
    let r = patch(
        &env,
        "--- a/link.txt\n+++ b/link.txt\n@@ -1,2 +1,2 @@\n x\n-y\n+Y\n",
    );
    assert_eq!(r["is_error"], false, "{r}");
    assert_eq!(env.read("real.txt"), b"x\nY\n");
    assert!(
        std::fs::symlink_metadata(env.join("link.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // The hash in details is the one ag-read reports.
    let read = call(&env, bin!("ag-read"), json!({"file_path": "real.txt"}));
    assert_eq!(r["details"]["files"][0]["hash"], read["details"]["hash"]);
    // A file without write permission is refused, and so is the whole patch.
    env.write("ro.txt", "ro\n");
    env.write("other.txt", "o\n");
    std::fs::set_permissions(env.join("ro.txt"), std::fs::Permissions::from_mode(0o444)).unwrap();
    let r = patch(
        &env,
        "*** Begin Patch\n*** Update File: other.txt\n@@\n-o\n+O\n*** Update File: ro.txt\n@@\n-ro\n+RO\n*** End Patch",
    );
    assert_eq!(r["error_code"], "patch.read_only", "{r}");
    assert_eq!(env.read("other.txt"), b"o\n");
    assert_eq!(env.read("ro.txt"), b"ro\n");
}

#[test]
fn calls_in_one_process_see_each_other() {
    let env = Env::new();
    let calls = [
        json!({"id": "1", "arguments": {"patch": "*** Begin Patch\n*** Add File: n.txt\n+1\n*** End Patch"}}),
        json!({"id": "2", "arguments": {"input": "*** Begin Patch\n*** Update File: n.txt\n@@\n-1\n+2\n*** End Patch"}}),
        json!({"id": "3", "arguments": {"patch": "not a patch"}}),
        json!({"id": "4", "arguments": {"patch": "--- a/n.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-2\n"}}),
    ];
    let input: String = calls.iter().map(|c| format!("{c}\n")).collect();
    let out = call_lines(&env, bin!("ag-patch"), &input);
    assert_eq!(out.len(), 4);
    assert_eq!(out[0]["is_error"], false, "{}", out[0]);
    assert_eq!(out[1]["is_error"], false, "{}", out[1]);
    assert_eq!(out[2]["error_code"], "patch.invalid", "{}", out[2]);
    assert_eq!(
        out[3]["details"]["files"][0]["action"], "delete",
        "{}",
        out[3]
    );
    assert!(!env.join("n.txt").exists());
}

#[test]
fn schema_names_the_tool() {
    let env = Env::new();
    let r = run_args(&env, bin!("ag-patch"), &["--schema"]);
    r.ok();
    let s = r.json();
    assert_eq!(s["name"], "patch");
    assert_eq!(s["parameters"]["required"], json!(["patch"]));
    assert!(s["parameters"]["properties"].get("patch_file").is_none());
    assert!(
        s["description"]
            .as_str()
            .unwrap()
            .contains("*** Begin Patch")
    );
}

#[test]
fn a_patch_sent_again_does_not_add_its_lines_twice() {
    let env = Env::new();
    std::fs::write(env.join("app.py"), "import os\n\nprint(os.getcwd())\n").unwrap();
    let p = "*** Begin Patch\n*** Update File: app.py\n@@\n import os\n+import sys\n*** End Patch";
    let call = json!({"arguments": {"patch": p}});
    let out = call_lines(&env, bin!("ag-patch"), &format!("{call}\n{call}\n"));
    assert_eq!(out[0]["is_error"], false, "{}", out[0]);
    assert_eq!(out[1]["error_code"], "patch.already_applied", "{}", out[1]);
    let said = out[1]["output"].as_str().unwrap();
    assert!(
        said.contains("at line 1") && said.contains("second time"),
        "{said}"
    );
    assert_eq!(
        std::fs::read_to_string(env.join("app.py")).unwrap(),
        "import os\nimport sys\n\nprint(os.getcwd())\n"
    );
}

/// `strip: 0` on a git diff keeps `a/`, which names no file; the patch
/// read without it is the one the call can mean, and it is applied with a
/// note saying so.
#[test]
fn a_strip_that_keeps_gits_prefix_is_set_aside_with_a_note() {
    let env = Env::new();
    std::fs::write(env.join("stats.c"), "int x;\n").unwrap();
    let diff = "diff --git a/stats.c b/stats.c\n--- a/stats.c\n+++ b/stats.c\n@@ -1 +1 @@\n-int x;\n+int y;\n";
    let r = call(&env, bin!("ag-patch"), json!({"patch": diff, "strip": 0}));
    assert_eq!(r["is_error"], false, "{r}");
    assert_eq!(
        std::fs::read_to_string(env.join("stats.c")).unwrap(),
        "int y;\n"
    );
    let said = r["output"].as_str().unwrap();
    assert!(
        said.contains("read without strip") && said.contains("as `stats.c`"),
        "{said}"
    );
    assert!(!env.join("a").exists() && !env.join("b").exists());
}
