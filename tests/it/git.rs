//! ag-git, black-box on temporary repositories: status, diff (and its cap),
//! commit (staging, refusals, hooks, never pushing), log, errors.

use std::path::Path;
use std::process::Command;

use crate::bin;
use crate::util::{Env, call, run, run_args};
use serde_json::{Value, json};

/// Runs git in `dir` with no user or system config but the repository's.
fn git_in(env: &Env, dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", env.join(".home"))
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

fn git(env: &Env, args: &[&str]) -> String {
    git_in(env, env.path(), args)
}

/// A repository in the test directory with an identity in its own config.
fn repo() -> Env {
    let env = Env::new();
    git(&env, &["init", "-q", "-b", "main"]);
    git(&env, &["config", "user.name", "Test User"]);
    git(&env, &["config", "user.email", "test@example.com"]);
    // The temporary home directory is not part of the project.
    env.write(".git/info/exclude", ".home/\n");
    env
}

fn commit_all(env: &Env, message: &str) {
    git(env, &["add", "-A"]);
    git(env, &["commit", "-q", "-m", message]);
}

fn ag_git(env: &Env, args: Value) -> Value {
    call(env, bin!("ag-git"), args)
}

fn output(r: &Value) -> &str {
    r["output"].as_str().unwrap()
}

fn paths(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn status_reports_every_kind_of_change() {
    let env = repo();
    env.write("keep.txt", "keep\n");
    env.write("edit.txt", "one\n");
    env.write("old.txt", "moved content\n");
    env.write("gone.txt", "bye\n");
    commit_all(&env, "base");
    let r = ag_git(&env, json!({"action": "status"}));
    assert_eq!(r["is_error"], false, "{r}");
    assert_eq!(r["details"]["clean"], true);
    assert_eq!(r["details"]["branch"], "main");
    assert!(output(&r).contains("working tree clean"), "{r}");

    env.write("edit.txt", "one\ntwo\n");
    git(&env, &["add", "edit.txt"]);
    env.write("edit.txt", "one\ntwo\nthree\n");
    git(&env, &["mv", "old.txt", "new.txt"]);
    std::fs::remove_file(env.join("gone.txt")).unwrap();
    env.write("fresh.txt", "new\n");
    let r = ag_git(&env, json!({"action": "status"}));
    let d = &r["details"];
    assert_eq!(paths(&d["staged"]), vec!["edit.txt", "new.txt"], "{r}");
    assert_eq!(d["staged"][0]["status"], "modified");
    assert_eq!(d["staged"][1]["status"], "renamed");
    assert_eq!(d["staged"][1]["from"], "old.txt");
    assert_eq!(paths(&d["unstaged"]), vec!["edit.txt", "gone.txt"]);
    assert_eq!(d["unstaged"][1]["status"], "deleted");
    assert_eq!(d["untracked"], json!(["fresh.txt"]));
    assert_eq!(d["counts"]["staged"], 2);
    assert_eq!(d["clean"], false);
    let out = output(&r);
    assert!(out.contains("Staged, to be committed (2):"), "{out}");
    assert!(out.contains("renamed:      old.txt -> new.txt"), "{out}");
    assert!(out.contains("Not staged (2):"), "{out}");
    assert!(out.contains("Untracked (1):\n  fresh.txt"), "{out}");
    // Used by itself, the report ends as git's does; a model that sees a
    // way to commit reads the next step in its own tools' names.
    assert!(!out.contains("Next,"), "{out}");
    let mut c = env.cmd(bin!("ag-git"));
    c.env("AG_MODEL_TOOLS", "git_status,git_commit")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    std::io::Write::write_all(
        child.stdin.as_mut().unwrap(),
        b"{\"id\":\"t\",\"arguments\":{\"action\":\"status\"}}\n",
    )
    .unwrap();
    let seen: Value = serde_json::from_slice(&child.wait_with_output().unwrap().stdout).unwrap();
    assert!(
        output(&seen).ends_with(
            "Next, to commit what is staged: call `git_commit` with a `message` saying what changed (no `paths`).\n"
        ),
        "{seen}"
    );

    // Limited to paths.
    let r = ag_git(&env, json!({"action": "status", "paths": ["fresh.txt"]}));
    assert_eq!(r["details"]["counts"]["staged"], 0, "{r}");
    assert_eq!(r["details"]["untracked"], json!(["fresh.txt"]));
}

#[test]
fn paths_are_relative_to_the_working_directory() {
    let env = repo();
    env.write("top.txt", "1\n");
    env.write("sub/dir/a.txt", "1\n");
    commit_all(&env, "base");
    env.write("top.txt", "2\n");
    env.write("sub/dir/a.txt", "2\n");
    let mut cmd = env.cmd(bin!("ag-git"));
    cmd.current_dir(env.join("sub/dir"))
        .args(["status", "--json"]);
    let r = run(cmd, None);
    r.ok();
    let v = r.json();
    assert_eq!(
        paths(&v["details"]["unstaged"]),
        vec!["a.txt", "../../top.txt"]
    );
    // And paths given from there are understood the same way.
    let mut cmd = env.cmd(bin!("ag-git"));
    cmd.current_dir(env.join("sub/dir"))
        .args(["commit", "-m", "both", "a.txt", "../../top.txt"]);
    run(cmd, None).ok();
    assert_eq!(git(&env, &["status", "--porcelain"]), "");
}

#[test]
fn ahead_and_behind_an_upstream() {
    let env = repo();
    env.write("a.txt", "1\n");
    commit_all(&env, "base");
    git(
        &env,
        &["checkout", "-q", "-b", "feature", "--track", "main"],
    );
    env.write("b.txt", "1\n");
    commit_all(&env, "on feature");
    git(&env, &["checkout", "-q", "main"]);
    env.write("c.txt", "1\n");
    commit_all(&env, "on main 1");
    env.write("d.txt", "1\n");
    commit_all(&env, "on main 2");
    git(&env, &["checkout", "-q", "feature"]);
    let r = ag_git(&env, json!({"action": "status"}));
    let d = &r["details"];
    assert_eq!(d["branch"], "feature");
    assert_eq!(d["upstream"], "main");
    assert_eq!(
        (d["ahead"].as_u64(), d["behind"].as_u64()),
        (Some(1), Some(2))
    );
    assert!(
        output(&r).starts_with("On branch feature, ahead by 1, behind by 2 with main."),
        "{r}"
    );
    git(&env, &["checkout", "-q", "--detach", "HEAD"]);
    let r = ag_git(&env, json!({"action": "status"}));
    assert_eq!(r["details"]["detached"], true);
    assert!(output(&r).starts_with("HEAD detached at"), "{r}");
}

#[test]
fn diff_unstaged_staged_and_limited_to_paths() {
    let env = repo();
    env.write("a.txt", "alpha\n");
    env.write("b.txt", "beta\n");
    commit_all(&env, "base");
    let r = ag_git(&env, json!({"action": "diff"}));
    assert_eq!(output(&r), "No unstaged changes.");
    // Asked for the diff of files that have not changed (to see them):
    // said that a diff shows changes only, and how to see a file.
    let r = ag_git(&env, json!({"action": "diff", "paths": ["a.txt", "b.txt"]}));
    assert_eq!(
        output(&r),
        "No unstaged changes in the given paths. They are as at the last commit: a diff shows only what changed. To see what a file holds, read it."
    );

    env.write("a.txt", "alpha\nmore\n");
    env.write("b.txt", "beta\nmore\n");
    git(&env, &["add", "b.txt"]);
    env.write("new.txt", "untracked\n");
    let r = ag_git(&env, json!({"action": "diff"}));
    let out = output(&r);
    assert!(
        out.contains("+++ b/a.txt\n@@ -1 +1,2 @@\n alpha\n+more\n"),
        "{out}"
    );
    assert!(!out.contains("b.txt"), "{out}");
    assert_eq!(
        r["details"]["files"],
        json!([{"path": "a.txt", "added": 1, "deleted": 0}])
    );
    assert_eq!(r["details"]["truncated"], false);

    let r = ag_git(&env, json!({"action": "diff", "staged": true}));
    assert!(output(&r).contains("+++ b/b.txt"), "{r}");
    assert!(!output(&r).contains("a.txt"), "{r}");

    let r = ag_git(&env, json!({"action": "diff", "paths": ["b.txt"]}));
    assert!(
        output(&r).starts_with(
            "No unstaged changes in the given paths. 1 change is staged: see them with staged=true."
        ),
        "{r}"
    );
    let r = ag_git(&env, json!({"action": "diff", "paths": ["new.txt"]}));
    assert!(
        output(&r).contains("1 untracked path not shown by diff"),
        "{r}"
    );
}

#[test]
fn big_diffs_keep_head_and_tail_and_say_what_was_left_out() {
    let env = repo();
    let body: String = (0..20_000).map(|i| format!("line {i:05}\n")).collect();
    env.write("big.txt", &body);
    env.write("small.txt", "s\n");
    commit_all(&env, "base");
    env.write("big.txt", body.replace("line ", "LINE "));
    env.write("small.txt", "s\nt\n");
    let r = ag_git(&env, json!({"action": "diff"}));
    let out = output(&r);
    assert!(out.len() <= 110 * 1024, "{}", out.len());
    assert!(
        out.starts_with("diff --git a/big.txt b/big.txt\n"),
        "{}",
        &out[..200]
    );
    assert!(out.contains("-line 00000\n"));
    // The tail is the end of the diff, and lines are whole.
    assert!(
        out.ends_with("@@ -1 +1,2 @@\n s\n+t\n"),
        "{}",
        &out[out.len() - 200..]
    );
    let note_at = out.find("[... ").unwrap();
    let note = &out[note_at..];
    assert!(note.contains("lines ("), "{note}");
    assert!(note.contains("big.txt +20000 -20000"), "{}", &note[..400]);
    assert!(note.contains("small.txt +1 -0"));
    assert_eq!(out.as_bytes()[note_at - 1], b'\n');
    assert_eq!(r["details"]["truncated"], true);
    assert!(r["details"]["total_bytes"].as_u64().unwrap() > 400_000);
}

#[test]
fn commit_stages_the_named_paths_and_commits_exactly_them() {
    let env = repo();
    env.write("a.txt", "a\n");
    env.write("doomed.txt", "x\n");
    commit_all(&env, "base");
    env.write("a.txt", "a2\n");
    env.write("new.txt", "n\n");
    std::fs::remove_file(env.join("doomed.txt")).unwrap();
    env.write("other.txt", "other\n");
    git(&env, &["add", "other.txt"]);
    let r = ag_git(
        &env,
        json!({"action": "commit", "message": "Update a, add new, drop doomed", "paths": ["a.txt", "new.txt", "doomed.txt"]}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    let d = &r["details"];
    assert_eq!(d["subject"], "Update a, add new, drop doomed");
    assert_eq!(d["branch"], "main");
    assert_eq!(d["still_staged"], 1);
    let mut files = paths(&d["files"]);
    files.sort();
    assert_eq!(files, vec!["a.txt", "doomed.txt", "new.txt"]);
    let head = git(&env, &["rev-parse", "HEAD"]);
    assert_eq!(d["commit"], head.trim());
    assert!(output(&r).contains("Update a, add new, drop doomed"), "{r}");
    assert!(
        output(&r)
            .contains("1 other staged change was not part of this commit and is still staged."),
        "{r}"
    );
    let committed = git(&env, &["show", "--name-status", "--format=", "HEAD"]);
    assert_eq!(committed, "M\ta.txt\nD\tdoomed.txt\nA\tnew.txt\n");
    // The change that was staged before is still staged, and only it.
    assert_eq!(
        git(&env, &["diff", "--cached", "--name-only"]),
        "other.txt\n"
    );

    // Without paths, what is staged is committed.
    let r = ag_git(&env, json!({"action": "commit", "message": "Add other"}));
    assert_eq!(r["is_error"], false, "{r}");
    assert_eq!(git(&env, &["log", "-1", "--format=%s"]), "Add other\n");
    assert_eq!(git(&env, &["status", "--porcelain"]), "");
}

#[test]
fn commit_refuses_when_there_is_nothing_to_commit() {
    let env = repo();
    env.write("a.txt", "a\n");
    commit_all(&env, "base");
    let before = git(&env, &["rev-parse", "HEAD"]);
    env.write("a.txt", "changed\n");
    let r = ag_git(
        &env,
        json!({"action": "commit", "message": "nothing staged"}),
    );
    assert_eq!(r["error_code"], "git.nothing_to_commit", "{r}");
    assert!(output(&r).contains("Changed but not staged: a.txt"), "{r}");
    assert!(output(&r).contains("\"paths\":[\"a.txt\"]"), "{r}");
    env.write("same.txt", "s\n");
    commit_all(&env, "same");
    env.write("other.txt", "o\n");
    commit_all(&env, "other");
    let before2 = git(&env, &["rev-parse", "HEAD"]);
    env.write("a.txt", "changed again\n");
    let r = ag_git(
        &env,
        json!({"action": "commit", "message": "x", "paths": ["same.txt"]}),
    );
    assert_eq!(r["error_code"], "git.nothing_to_commit", "{r}");
    assert!(output(&r).contains("`same.txt` has no changes"), "{r}");
    // What did change is named, in the caller's own call.
    assert!(
        output(&r).contains(r#"Changed: a.txt. To commit those, call {"action":"commit","message":"x","paths":["a.txt"]}"#),
        "{r}"
    );
    // A commit before any change: the change comes first.
    git(&env, &["stash"]);
    let r = ag_git(
        &env,
        json!({"action": "commit", "message": "x", "paths": ["same.txt"]}),
    );
    assert_eq!(r["error_code"], "git.nothing_to_commit", "{r}");
    assert!(
        output(&r).contains("The working tree is clean: no file has changed since the last commit, so there is nothing to commit yet. Make the change first"),
        "{r}"
    );
    // Committed already (by the caller's own earlier call, as often as
    // not): said so, rather than "make the change first"; but the commit
    // may be one from before the task, so the change may be still to make.
    let r = ag_git(
        &env,
        json!({"action": "commit", "message": "x", "paths": ["other.txt"]}),
    );
    assert_eq!(r["error_code"], "git.nothing_to_commit", "{r}");
    let last = git(&env, &["log", "-1", "--format=%h"]);
    assert!(
        output(&r).contains(&format!(
            "The last commit, {} (\"other\", made ",
            last.trim()
        )),
        "{r}"
    );
    assert!(
        output(&r).contains("), holds it as it is now. If you changed it and committed that change, it is committed already: go on with what is left of the task, or give your answer. If you have not changed it yet, the change is still to be made: read it, change it, then commit."),
        "{r}"
    );
    assert!(!output(&r).contains("Make the change first"), "{r}");
    git(&env, &["stash", "pop"]);
    let r = ag_git(
        &env,
        json!({"action": "commit", "message": "  ", "paths": ["a.txt"]}),
    );
    assert_eq!(r["error_code"], "git.empty_message");
    let r = ag_git(&env, json!({"action": "commit", "paths": ["a.txt"]}));
    assert_eq!(r["error_code"], "git.missing_message");
    let r = ag_git(
        &env,
        json!({"action": "commit", "message": "m", "paths": ["missing.txt"]}),
    );
    assert_eq!(r["error_code"], "git.stage_failed");
    assert!(output(&r).contains("missing.txt"), "{r}");
    assert_ne!(before, before2);
    assert_eq!(
        git(&env, &["rev-parse", "HEAD"]),
        before2,
        "no commit was made"
    );
}

/// Writes `text` to a.txt and commits that file with `message`.
fn change_and_commit(env: &Env, text: &str, message: &str) -> Value {
    env.write("a.txt", text);
    ag_git(
        env,
        json!({"action": "commit", "message": message, "paths": ["a.txt"]}),
    )
}

#[test]
fn a_commit_without_an_identity_is_made_as_ag_and_says_so() {
    let env = repo();
    env.write("a.txt", "a\n");
    commit_all(&env, "base");
    // Empty values: git has no identity and cannot guess one, whatever
    // this machine's host name.
    git(&env, &["config", "user.name", ""]);
    git(&env, &["config", "user.email", ""]);
    let r = change_and_commit(&env, "b\n", "Release");
    assert_eq!(r["is_error"], false, "{r}");
    assert_eq!(
        git(&env, &["log", "-1", "--format=%an <%ae>|%cn <%ce>|%s"]),
        "ag <ag@localhost>|ag <ag@localhost>|Release\n"
    );
    let notes = output(&r).to_string();
    assert!(notes.contains("made as `ag <ag@localhost>`"), "{r}");
    assert!(notes.contains("--reset-author"), "{r}");

    // Only the missing half is stood in for: the user's own email stays.
    git(&env, &["config", "user.email", "me@example.org"]);
    let r = change_and_commit(&env, "c\n", "Again");
    assert_eq!(r["is_error"], false, "{r}");
    assert_eq!(
        git(&env, &["log", "-1", "--format=%an <%ae>"]),
        "ag <me@example.org>\n"
    );

    // With an identity, no note.
    git(&env, &["config", "user.name", "Test User"]);
    let r = change_and_commit(&env, "d\n", "Mine");
    assert!(!output(&r).contains("made as"), "{r}");
    assert_eq!(
        git(&env, &["log", "-1", "--format=%an <%ae>"]),
        "Test User <me@example.org>\n"
    );
}

#[test]
fn a_commit_where_git_must_not_guess_an_identity_says_to_ask_the_user() {
    let env = repo();
    env.write("a.txt", "a\n");
    commit_all(&env, "base");
    let head = git(&env, &["rev-parse", "HEAD"]);
    git(&env, &["config", "--unset", "user.name"]);
    git(&env, &["config", "--unset", "user.email"]);
    git(&env, &["config", "user.useConfigOnly", "true"]);
    let r = change_and_commit(&env, "b\n", "m");
    assert_eq!(r["error_code"], "git.no_identity", "{r}");
    let said = output(&r);
    assert!(said.contains("nothing was committed"), "{said}");
    assert!(said.contains("git config user.name"), "{said}");
    assert!(said.contains("do not make them up"), "{said}");
    assert_eq!(git(&env, &["rev-parse", "HEAD"]), head);
    assert_eq!(std::fs::read_to_string(env.join("a.txt")).unwrap(), "b\n");
    assert_eq!(git(&env, &["diff", "--cached", "--name-only"]), "a.txt\n");

    // Any other failure of the commit still reports git's own words.
    git(&env, &["config", "user.name", "Test User"]);
    git(&env, &["config", "user.email", "test@example.com"]);
    let hook = env.write(".git/hooks/pre-commit", "#!/bin/sh\nexit 1\n");
    make_executable(&hook);
    let r = ag_git(
        &env,
        json!({"action": "commit", "message": "m", "paths": ["a.txt"]}),
    );
    assert_eq!(r["error_code"], "git.commit_failed", "{r}");
}

#[test]
fn hooks_run_and_a_failing_hook_stops_the_commit() {
    let env = repo();
    env.write("a.txt", "a\n");
    commit_all(&env, "base");
    let head = git(&env, &["rev-parse", "HEAD"]);
    let hook = env.write(
        ".git/hooks/pre-commit",
        "#!/bin/sh\necho 'lint: trailing whitespace in a.txt' >&2\nexit 1\n",
    );
    make_executable(&hook);
    env.write("a.txt", "a \n");
    let r = ag_git(
        &env,
        json!({"action": "commit", "message": "m", "paths": ["a.txt"]}),
    );
    assert_eq!(r["error_code"], "git.commit_failed", "{r}");
    assert!(
        output(&r).contains("lint: trailing whitespace in a.txt"),
        "{r}"
    );
    assert!(output(&r).contains("nothing was committed"), "{r}");
    assert_eq!(git(&env, &["rev-parse", "HEAD"]), head);

    env.write(
        ".git/hooks/pre-commit",
        "#!/bin/sh\necho ran > hook-ran.txt\necho 'hook says hi' >&2\n",
    );
    let r = ag_git(
        &env,
        json!({"action": "commit", "message": "m", "paths": ["a.txt"]}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    assert!(output(&r).contains("hook says hi"), "{r}");
    assert_eq!(env.read("hook-ran.txt"), b"ran\n");
}

#[test]
fn commit_never_pushes() {
    let env = repo();
    env.write("a.txt", "a\n");
    commit_all(&env, "base");
    let remote = env.join("remote.git");
    git(
        &env,
        &["clone", "-q", "--bare", ".", remote.to_str().unwrap()],
    );
    env.write(".git/info/exclude", ".home/\nremote.git/\n");
    git(&env, &["remote", "add", "origin", remote.to_str().unwrap()]);
    git(&env, &["fetch", "-q", "origin"]);
    git(&env, &["branch", "-q", "--set-upstream-to=origin/main"]);
    git(&env, &["config", "push.autoSetupRemote", "true"]);
    let remote_head = git_in(&env, &remote, &["rev-parse", "main"]);
    env.write("a.txt", "b\n");
    let r = ag_git(
        &env,
        json!({"action": "commit", "message": "local only", "paths": ["a.txt"]}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    assert_eq!(git_in(&env, &remote, &["rev-parse", "main"]), remote_head);
    let r = ag_git(&env, json!({"action": "status"}));
    assert_eq!(r["details"]["upstream"], "origin/main");
    assert_eq!(r["details"]["ahead"], 1);
}

#[test]
fn conflicts_are_reported_and_block_a_commit() {
    let env = repo();
    env.write("c.txt", "base\n");
    commit_all(&env, "base");
    git(&env, &["checkout", "-q", "-b", "other"]);
    env.write("c.txt", "theirs\n");
    commit_all(&env, "theirs");
    git(&env, &["checkout", "-q", "main"]);
    env.write("c.txt", "ours\n");
    commit_all(&env, "ours");
    let merge = Command::new("git")
        .current_dir(env.path())
        .args(["merge", "-q", "other"])
        .env("HOME", env.join(".home"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(!merge.status.success());
    let r = ag_git(&env, json!({"action": "status"}));
    assert_eq!(r["details"]["conflicted"][0]["path"], "c.txt", "{r}");
    assert_eq!(r["details"]["conflicted"][0]["status"], "both_modified");
    assert!(output(&r).contains("both modified: c.txt"), "{r}");
    let r = ag_git(&env, json!({"action": "commit", "message": "merge"}));
    assert_eq!(r["error_code"], "git.conflicts", "{r}");
}

#[test]
fn log_lists_commits_newest_first() {
    let env = repo();
    let r = ag_git(&env, json!({"action": "log"}));
    assert_eq!(r["is_error"], false, "{r}");
    assert_eq!(output(&r), "No commits yet.");
    for (file, msg) in [("a.txt", "first"), ("b.txt", "second"), ("a.txt", "third")] {
        env.write(file, msg);
        commit_all(&env, msg);
    }
    let r = ag_git(&env, json!({"action": "log", "count": 2}));
    let subjects: Vec<&str> = r["details"]["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["subject"].as_str().unwrap())
        .collect();
    assert_eq!(subjects, vec!["third", "second"]);
    assert_eq!(r["details"]["commits"][0]["author"], "Test User");
    assert_eq!(r["details"]["commits"][0]["email"], "test@example.com");
    let lines: Vec<&str> = output(&r).lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0].ends_with(" Test User  third"), "{}", lines[0]);
    let r = ag_git(&env, json!({"action": "log", "paths": ["a.txt"]}));
    assert_eq!(r["details"]["commits"].as_array().unwrap().len(), 2);
    let r = ag_git(&env, json!({"action": "log", "count": 501}));
    assert_eq!(r["error_code"], "git.bad_count");
    // A 0 the field cannot mean counts as absent: the default applies.
    let r = ag_git(&env, json!({"action": "log", "count": 0}));
    assert_eq!(r["is_error"], false, "{r}");
}

#[test]
fn errors_outside_a_repository_and_for_bad_calls() {
    let env = Env::new();
    let r = ag_git(&env, json!({"action": "status"}));
    assert_eq!(r["error_code"], "git.not_a_repository", "{r}");
    assert!(output(&r).contains("git init"), "{r}");
    let plain = run_args(&env, bin!("ag-git"), &["status"]);
    plain.expect_code(1);
    assert!(
        plain.stderr().starts_with("ag-git: error: `"),
        "{}",
        plain.stderr()
    );
    let env = repo();
    // What a real small model sent: every field filled. Status runs and
    // says what it set aside; so does a commit.
    let r = ag_git(
        &env,
        json!({"action": "status", "paths": ["README.md"], "message": "", "staged": false, "count": 1}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    assert!(
        output(&r).contains("Set aside `count: 1`: it is not used by `status`."),
        "{r}"
    );
    let r = ag_git(&env, json!({"action": "status", "message": "hi"}));
    assert_eq!(r["is_error"], false, "{r}");
    assert!(output(&r).contains("Nothing was committed"), "{r}");
    let r = ag_git(
        &env,
        json!({"action": "commit", "message": "hi", "count": 3}),
    );
    // Nothing is staged here, so the commit itself is what is refused.
    assert_ne!(r["error_code"], "git.bad_arguments", "{r}");
    assert!(!output(&r).contains("count"), "{r}");
    let r = ag_git(&env, json!({"action": "push"}));
    assert_eq!(r["error_code"], "call.invalid_arguments");
    let mut cmd = env.cmd(bin!("ag-git"));
    cmd.args(["--root", ".", "diff", "../elsewhere"]);
    let r = run(cmd, None);
    r.expect_code(1);
    assert!(
        r.stderr().contains("outside the allowed root"),
        "{}",
        r.stderr()
    );
}

#[test]
fn plain_command_line() {
    let env = repo();
    env.write("a.txt", "a\n");
    let r = run_args(&env, bin!("ag-git"), &["commit", "-m", "Add a", "a.txt"]);
    r.ok();
    assert!(r.stdout().contains("(root-commit)"), "{}", r.stdout());
    let r = run_args(&env, bin!("ag-git"), &["log", "-n", "1"]);
    r.ok();
    assert!(
        r.stdout().ends_with(" Test User  Add a\n"),
        "{}",
        r.stdout()
    );
    let r = run_args(&env, bin!("ag-git"), &["status"]);
    r.ok();
    assert_eq!(
        r.stdout(),
        "On branch main, no upstream.\nNothing to commit, working tree clean.\n"
    );
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn plain_notes_go_to_stderr_and_stay_in_the_model_text() {
    let env = repo();
    let r = run_args(&env, bin!("ag-git"), &["log"]);
    r.ok();
    assert_eq!(r.stdout(), "", "{r}");
    assert_eq!(r.stderr(), "ag-git: note: No commits yet.\n");
    env.write("a.txt", "a\n");
    env.write("b.txt", "b\n");
    git(&env, &["add", "b.txt"]);
    // Commits a.txt alone: git's report on stdout, the staged b.txt left
    // behind is a note.
    let r = run_args(&env, bin!("ag-git"), &["commit", "-m", "Add a", "a.txt"]);
    r.ok();
    assert!(r.stdout().contains("Add a"), "{r}");
    assert!(!r.stdout().contains("still staged"), "{r}");
    assert_eq!(
        r.stderr(),
        "ag-git: note: 1 other staged change was not part of this commit and is still staged.\n"
    );
    git(&env, &["commit", "-q", "-m", "Add b"]);
    let r = run_args(&env, bin!("ag-git"), &["diff"]);
    r.ok();
    assert_eq!(r.stdout(), "", "{r}");
    assert_eq!(r.stderr(), "ag-git: note: No unstaged changes.\n");
    let r = run_args(&env, bin!("ag-git"), &["diff", "--json"]);
    r.ok();
    assert_eq!(r.json()["output"], "No unstaged changes.");
}

/// A path that names nothing (a misspelt file, the branch's name) would
/// narrow a status to "clean": the result says so. A file deleted from
/// the index, or one changed, is a path still.
#[test]
fn paths_that_name_nothing_are_said_to_name_nothing() {
    let env = repo();
    env.write("CHANGES.md", "# Changes\n");
    env.write("old.txt", "gone soon\n");
    commit_all(&env, "first");
    // `.` at the top is the whole tree: clean is clean.
    let r = ag_git(&env, json!({"action": "status", "paths": ["."]}));
    assert!(output(&r).contains("working tree clean"), "{r}");
    git(&env, &["rm", "-q", "old.txt"]);
    let r = ag_git(
        &env,
        json!({"action": "status", "paths": ["CHANGE.md", "main"]}),
    );
    assert!(
        output(&r).contains("`CHANGE.md` and `main` (a branch, not a path) name no file or directory here, and nothing git has: this status says nothing about them. Give paths that exist, or leave out `paths` for the whole repository."),
        "{r}"
    );
    // The tree has a change (old.txt deleted): a status of other paths
    // does not call it clean.
    assert!(
        output(&r).contains(
            "Nothing to commit in the paths given (the rest of the tree was not looked at)."
        ) && !output(&r).contains("working tree clean"),
        "{r}"
    );
    let r = ag_git(&env, json!({"action": "log", "paths": ["nope.md"]}));
    assert!(
        output(&r).contains("`nope.md` names no file or directory here, and nothing git has: this log says nothing about it."),
        "{r}"
    );
    let r = ag_git(
        &env,
        json!({"action": "status", "paths": ["old.txt", "CHANGES.md"]}),
    );
    assert!(!output(&r).contains("names no file"), "{r}");
}
