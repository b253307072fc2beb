//! Checkpoints and rewind end to end: ag-loop driven by a scripted model
//! changes files with every kind of tool (edit, write, bash rm and mv,
//! chmod), then `ag-session rewind` puts each turn's tree back byte for byte
//! while the user's git state (status, stash, index file, HEAD, refs) stays
//! exactly as it was. Real git in temporary directories, without the
//! machine's git configuration.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Value, json};

use crate::bin;
use crate::model_server::{ModelServer, Turn};
use crate::util::{Env, Run, run};

/// A file as a rewind must restore it: executable bit and bytes (a
/// symlink's target for a symlink).
type Tree = BTreeMap<String, (bool, Vec<u8>)>;

fn git_in(env: &Env, dir: &Path, args: &[&str]) -> String {
    let mut c = env.cmd("git");
    c.current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        // Looking must not rewrite the index: its hash is compared.
        .env("GIT_OPTIONAL_LOCKS", "0")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@e",
            "-c",
            "protocol.file.allow=always",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args);
    let r = run(c, None);
    r.ok();
    r.stdout()
}

fn git(env: &Env, args: &[&str]) -> String {
    git_in(env, env.path(), args)
}

/// Every file under `dir`, but `.git` and `.home` (the test's HOME).
fn tree(dir: &Path) -> Tree {
    fn walk(root: &Path, dir: &Path, out: &mut Tree) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if rel == ".git" || rel == ".home" {
                continue;
            }
            let m = p.symlink_metadata().unwrap();
            if m.is_dir() {
                walk(root, &p, out);
            } else if m.file_type().is_symlink() {
                let target = std::fs::read_link(&p).unwrap();
                out.insert(rel, (false, target.to_string_lossy().as_bytes().to_vec()));
            } else {
                let exec = m.permissions().mode() & 0o111 != 0;
                out.insert(rel, (exec, std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = Tree::new();
    walk(dir, dir, &mut out);
    out
}

/// Everything of the user's git state that a checkpoint or a rewind must
/// not change: the index file, the stash, HEAD, every ref but ag's.
fn user_state(env: &Env, dir: &Path) -> String {
    let git_dir = git_in(env, dir, &["rev-parse", "--absolute-git-dir"]);
    let index = std::fs::read(Path::new(git_dir.trim()).join("index")).unwrap_or_default();
    format!(
        "index {:016x}\n--stash\n{}\n--head\n{}\n--refs\n{}",
        xxhash_like(&index),
        git_in(env, dir, &["stash", "list"]),
        git_in(env, dir, &["rev-parse", "HEAD"]),
        git_in(
            env,
            dir,
            &["for-each-ref", "--format=%(refname) %(objectname)"]
        )
        .lines()
        .filter(|l| !l.starts_with("refs/ag/"))
        .collect::<Vec<_>>()
        .join("\n"),
    )
}

/// What `git status` says, which must be the same once the tree is back.
fn status(env: &Env, dir: &Path) -> String {
    git_in(
        env,
        dir,
        &[
            "status",
            "--porcelain=v2",
            "--branch",
            "--untracked-files=all",
        ],
    )
}

/// A hash of the index bytes (FNV-1a: enough to see any change).
fn xxhash_like(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100000001b3)
    })
}

fn ag_loop(env: &Env, dir: &Path, server: &ModelServer, extra: &[&str], prompt: &str) -> Run {
    let mut c = env.cmd(bin!("ag-loop"));
    c.current_dir(dir).args([
        "-m",
        "ollama/scripted",
        "--base-url",
        &server.base_url(),
        "--json",
        "--no-gate",
    ]);
    c.args(extra).arg(prompt);
    let r = run(c, None);
    r.ok();
    r
}

fn session(env: &Env, dir: &Path, args: &[&str]) -> Run {
    let mut c = env.cmd(bin!("ag-session"));
    c.current_dir(dir).args(args);
    run(c, None)
}

fn latest(env: &Env, dir: &Path) -> String {
    let r = session(env, dir, &["latest"]);
    r.ok();
    r.stdout().trim().to_string()
}

fn checkpoints(events: &[Value]) -> Vec<&Value> {
    events
        .iter()
        .filter(|e| e["type"] == "checkpoint")
        .collect()
}

/// A repository with history, a stash, another branch, a staged change
/// and an untracked file: all of it must survive every checkpoint and
/// rewind untouched.
fn user_repo(env: &Env) {
    git(env, &["init", "-q"]);
    env.write(".gitignore", ".home/\nbuild/\n");
    env.write("a.txt", "alpha\r\nline two\n");
    env.write("b.txt", "bravo\n");
    env.write("keep.txt", "keep me\n");
    env.write("script.sh", "echo hi\n");
    git(env, &["add", "."]);
    git(env, &["commit", "-qm", "start"]);
    git(env, &["branch", "other"]);
    env.write("b.txt", "bravo stashed\n");
    git(env, &["stash", "-q"]);
    env.write("staged.txt", "staged\n");
    git(env, &["add", "staged.txt"]);
    env.write("untracked.txt", "mine\n");
    env.write("build/out.o", "ignored output");
}

/// The scripted task: one change of each kind per turn.
fn script() -> Vec<Turn> {
    vec![
        Turn::Tools(vec![(
            "edit",
            json!({"file_path": "a.txt", "old_string": "alpha", "new_string": "ALPHA"}),
        )]),
        Turn::Tools(vec![(
            "write",
            json!({"file_path": "dir/new.txt", "content": "new\n"}),
        )]),
        Turn::Tools(vec![(
            "bash",
            json!({"command": "rm b.txt && mv keep.txt moved.txt"}),
        )]),
        Turn::Tools(vec![("bash", json!({"command": "chmod +x script.sh"}))]),
        Turn::Text("done"),
    ]
}

/// The trees before turns 1 to 5 of [`script`], from the tree before it.
fn expected(start: &Tree) -> Vec<Tree> {
    let mut t = start.clone();
    let mut out = vec![t.clone()];
    t.get_mut("a.txt").unwrap().1 = b"ALPHA\r\nline two\n".to_vec();
    out.push(t.clone());
    t.insert("dir/new.txt".into(), (false, b"new\n".to_vec()));
    out.push(t.clone());
    t.remove("b.txt");
    let keep = t.remove("keep.txt").unwrap();
    t.insert("moved.txt".into(), keep);
    out.push(t.clone());
    t.get_mut("script.sh").unwrap().0 = true;
    out.push(t);
    out
}

#[test]
fn rewind_to_each_turn_restores_the_tree_and_leaves_the_users_git_alone() {
    let env = Env::new();
    user_repo(&env);
    let start = tree(env.path());
    let state = user_state(&env, env.path());
    let start_status = status(&env, env.path());
    let server = ModelServer::start(script());
    let r = ag_loop(&env, env.path(), &server, &[], "do the task");
    let events = r.json_lines();
    let marks = checkpoints(&events);
    let turns: Vec<u64> = marks.iter().map(|m| m["turn"].as_u64().unwrap()).collect();
    assert_eq!(turns, vec![1, 2, 3, 4, 5], "{r}");
    // Each event names what the turn before it changed.
    assert_eq!(marks[1]["changed"], json!(["a.txt"]));
    assert_eq!(marks[2]["added"], json!(["dir/new.txt"]));
    assert_eq!(marks[3]["deleted"], json!(["b.txt", "keep.txt"]));
    assert_eq!(marks[3]["added"], json!(["moved.txt"]));
    assert_eq!(marks[4]["changed"], json!(["script.sh"]));
    let want = expected(&start);
    assert_eq!(tree(env.path()), want[4]);
    assert_eq!(
        user_state(&env, env.path()),
        state,
        "ag-loop changed git state"
    );

    let id = latest(&env, env.path());
    let listing = session(&env, env.path(), &["checkpoints", &id]);
    listing.ok();
    assert!(listing.stdout().contains("turn 4"), "{listing}");
    assert!(listing.stdout().contains("script.sh"), "{listing}");

    for n in [4u64, 2, 1, 3, 5] {
        let r = session(&env, env.path(), &["rewind", &id, "--turn", &n.to_string()]);
        r.ok();
        let new_id = r.stdout().trim().to_string();
        assert!(!new_id.is_empty() && new_id != id, "{r}");
        assert_eq!(
            tree(env.path()),
            want[n as usize - 1],
            "rewind to turn {n}: {r}"
        );
        assert_eq!(
            user_state(&env, env.path()),
            state,
            "rewind to {n} changed git state"
        );
        if n == 1 {
            assert_eq!(status(&env, env.path()), start_status);
        }
        // The fork names its parent.
        let path = session(&env, env.path(), &["path", &new_id]).stdout();
        let header = std::fs::read_to_string(path.trim()).unwrap();
        assert!(header.lines().next().unwrap().contains(&id), "{header}");
    }
    // Ignored and untracked files of the user were never touched.
    assert_eq!(env.read("build/out.o"), b"ignored output");
    assert_eq!(env.read("untracked.txt"), b"mine\n");

    // A diff between turns.
    let d = session(&env, env.path(), &["diff", &id, "--turn", "1", "--to", "2"]);
    d.ok();
    assert!(
        d.stdout().contains("-alpha") && d.stdout().contains("+ALPHA"),
        "{d}"
    );
}

#[test]
fn a_rewind_after_a_user_edit_is_refused_then_forced_and_can_be_undone() {
    let env = Env::new();
    user_repo(&env);
    let start = tree(env.path());
    let server = ModelServer::start(script());
    ag_loop(&env, env.path(), &server, &[], "do the task");
    let id = latest(&env, env.path());
    env.write("moved.txt", "the user's own words\n");
    let edited = tree(env.path());

    let refused = session(&env, env.path(), &["rewind", &id, "--turn", "1"]);
    refused.expect_code(1);
    assert!(refused.stderr().contains("M moved.txt"), "{refused}");
    assert!(refused.stderr().contains("--force"), "{refused}");
    assert_eq!(tree(env.path()), edited, "a refused rewind changed files");
    assert!(refused.stdout().is_empty());

    // Confused callers: no such turn, no such session, both halves off.
    let past = session(&env, env.path(), &["rewind", &id, "--turn", "9", "--force"]);
    past.expect_code(2);
    assert!(past.stderr().contains("between 1 and 6"), "{past}");
    let zero = session(&env, env.path(), &["rewind", &id, "--turn", "0"]);
    zero.expect_code(2);
    session(
        &env,
        env.path(),
        &["rewind", "no-such-session", "--turn", "1"],
    )
    .expect_code(1);
    let both = [
        "rewind",
        &id,
        "--turn",
        "1",
        "--files-only",
        "--conversation-only",
    ];
    session(&env, env.path(), &both).expect_code(2);
    assert_eq!(tree(env.path()), edited, "a refused rewind changed files");

    let forced = session(&env, env.path(), &["rewind", &id, "--turn", "1", "--force"]);
    forced.ok();
    assert_eq!(tree(env.path()), expected(&start)[0]);
    // The user's edit was recorded first: one past the last turn gives it back.
    let undo = session(
        &env,
        env.path(),
        &["rewind", &id, "--turn", "6", "--files-only"],
    );
    undo.ok();
    assert_eq!(tree(env.path()), edited, "{undo}");
    assert!(
        undo.stdout().is_empty(),
        "--files-only makes no session: {undo}"
    );
}

#[test]
fn a_directory_without_git_is_checkpointed_in_a_shadow_repository() {
    let env = Env::new();
    env.write(".gitignore", ".home/\n");
    env.write("a.txt", "alpha\n");
    env.write("b.txt", "bravo\n");
    env.write("keep.txt", "keep\n");
    env.write("script.sh", "echo\n");
    let start = tree(env.path());
    let server = ModelServer::start(vec![
        Turn::Tools(vec![(
            "edit",
            json!({"file_path": "a.txt", "old_string": "alpha", "new_string": "ALPHA"}),
        )]),
        // Two calls run in parallel: one checkpoint before both.
        Turn::Tools(vec![
            (
                "bash",
                json!({"command": "rm b.txt && mv keep.txt moved.txt && chmod +x script.sh"}),
            ),
            (
                "write",
                json!({"file_path": "p.txt", "content": "parallel\n"}),
            ),
        ]),
        Turn::Text("done"),
    ]);
    let r = ag_loop(&env, env.path(), &server, &[], "task");
    let events = r.json_lines();
    let marks = checkpoints(&events);
    assert_eq!(marks.len(), 3, "{r}");
    assert!(
        marks[0]["git_dir"]
            .as_str()
            .unwrap()
            .contains(".home/.ag/checkpoints/repos/"),
        "{}",
        marks[0]
    );
    assert!(
        !env.join(".git").exists(),
        "no repository in the user's directory"
    );
    let id = latest(&env, env.path());
    session(&env, env.path(), &["rewind", &id, "--turn", "2"]).ok();
    let mut want = start.clone();
    want.get_mut("a.txt").unwrap().1 = b"ALPHA\n".to_vec();
    assert_eq!(tree(env.path()), want);
    session(&env, env.path(), &["rewind", &id, "--turn", "1"]).ok();
    assert_eq!(tree(env.path()), start);
    assert!(!env.join(".git").exists());
}

#[test]
fn a_session_resumed_after_a_rewind_goes_on_from_before_that_turn() {
    let env = Env::new();
    user_repo(&env);
    let server = ModelServer::start(script());
    ag_loop(&env, env.path(), &server, &[], "do the task");
    let id = latest(&env, env.path());
    let r = session(&env, env.path(), &["rewind", &id, "--turn", "3"]);
    r.ok();
    let new_id = r.stdout().trim().to_string();

    let next = ModelServer::start(vec![Turn::Text("ok")]);
    let r2 = ag_loop(&env, env.path(), &next, &["--session", &new_id], "go on");
    let reqs = next.requests();
    let messages = reqs[0]["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    // The prompt, turns 1 and 2 (a call and its result each), the new prompt.
    assert_eq!(
        roles,
        vec![
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "user"
        ],
        "{r2}"
    );
    assert_eq!(messages[1]["content"], "do the task");
    let last_call = &messages[4]["tool_calls"][0]["function"];
    assert_eq!(last_call["name"], "write", "{last_call}");
    assert_eq!(messages[6]["content"], "go on");
    // Its turns go on from there: the next checkpoint would be turn 3.
    let count = session(&env, env.path(), &["show", &new_id, "--json"])
        .stdout()
        .lines()
        .filter(|l| l.contains("\"turn_start\""))
        .count();
    assert_eq!(count, 3, "two copied turns and the new one");

    // --conversation-only forks without touching a file.
    let before = tree(env.path());
    let c = session(
        &env,
        env.path(),
        &["rewind", &id, "--turn", "2", "--conversation-only"],
    );
    c.ok();
    assert_eq!(tree(env.path()), before);
    assert!(!c.stdout().trim().is_empty());
}

#[test]
fn checkpoints_can_be_turned_off() {
    let env = Env::new();
    user_repo(&env);
    let server = ModelServer::start(script());
    let r = ag_loop(&env, env.path(), &server, &["--no-checkpoints"], "task");
    assert!(checkpoints(&r.json_lines()).is_empty(), "{r}");
    let id = latest(&env, env.path());
    let refused = session(&env, env.path(), &["rewind", &id, "--turn", "1"]);
    refused.expect_code(1);
    assert!(
        refused.stderr().contains("--conversation-only"),
        "{refused}"
    );
    assert!(!git(&env, &["for-each-ref"]).contains("refs/ag/"));

    env.write(".home/.ag/config.toml", "checkpoints = false\n");
    let server = ModelServer::start(script());
    let r = ag_loop(&env, env.path(), &server, &[], "task");
    assert!(checkpoints(&r.json_lines()).is_empty(), "{r}");
}

#[test]
fn a_file_over_the_size_limit_is_left_out_with_a_note() {
    let env = Env::new();
    user_repo(&env);
    env.write(".home/.ag/config.toml", "checkpoint_max_file_size = 1000\n");
    env.write("big.bin", vec![b'x'; 5000]);
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("bash", json!({"command": "echo more >> big.bin"}))]),
        Turn::Text("done"),
    ]);
    let r = ag_loop(&env, env.path(), &server, &[], "task");
    let events = r.json_lines();
    let marks = checkpoints(&events);
    assert!(
        marks[0]["note"].as_str().unwrap_or("").contains("big.bin"),
        "{r}"
    );
    let id = latest(&env, env.path());
    session(&env, env.path(), &["rewind", &id, "--turn", "1"]).ok();
    // Left out means left alone: not restored, not removed.
    assert_eq!(env.read("big.bin").len(), 5005);
}

#[test]
fn mid_merge_the_conflict_and_the_users_index_survive() {
    let env = Env::new();
    user_repo(&env);
    git(&env, &["stash", "drop", "-q"]);
    git(&env, &["reset", "-q"]);
    git(&env, &["checkout", "-q", "other"]);
    env.write("a.txt", "theirs\n");
    git(&env, &["commit", "-qam", "theirs"]);
    git(&env, &["checkout", "-q", "main"]);
    env.write("a.txt", "ours\n");
    git(&env, &["commit", "-qam", "ours"]);
    let mut c = env.cmd("git");
    c.env("GIT_CONFIG_GLOBAL", "/dev/null").args([
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@e",
        "merge",
        "other",
    ]);
    run(c, None).expect_code(1);
    assert!(env.join(".git/MERGE_HEAD").exists());
    let start = tree(env.path());
    let state = user_state(&env, env.path());
    let start_status = status(&env, env.path());
    let server = ModelServer::start(vec![
        Turn::Tools(vec![(
            "write",
            json!({"file_path": "a.txt", "content": "resolved\n"}),
        )]),
        Turn::Text("done"),
    ]);
    let r = ag_loop(&env, env.path(), &server, &[], "resolve");
    assert_eq!(checkpoints(&r.json_lines()).len(), 2, "{r}");
    let id = latest(&env, env.path());
    session(&env, env.path(), &["rewind", &id, "--turn", "1"]).ok();
    assert_eq!(tree(env.path()), start);
    assert_eq!(user_state(&env, env.path()), state);
    assert_eq!(status(&env, env.path()), start_status);
    assert!(
        status(&env, env.path()).contains("\nu UU "),
        "still unmerged"
    );
    assert!(env.join(".git/MERGE_HEAD").exists());
}

#[test]
fn a_bare_repository_is_refused_with_a_clear_message() {
    let env = Env::new();
    git(&env, &["init", "-q", "--bare", "bare.git"]);
    let dir = env.join("bare.git");
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("bash", json!({"command": "true"}))]),
        Turn::Text("done"),
    ]);
    let r = ag_loop(&env, &dir, &server, &[], "task");
    let events = r.json_lines();
    assert!(checkpoints(&events).is_empty());
    let errors: Vec<&Value> = events.iter().filter(|e| e["type"] == "error").collect();
    assert_eq!(errors.len(), 1, "one message, not one per turn: {r}");
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("bare git repository"),
        "{r}"
    );
}

#[test]
fn a_linked_worktree_and_a_submodule_work_like_any_repository() {
    let env = Env::new();
    user_repo(&env);
    git(&env, &["stash", "drop", "-q"]);
    git(&env, &["commit", "-qm", "staged"]);
    // A linked worktree beside the main one.
    git(&env, &["worktree", "add", "-q", "wt", "other"]);
    let wt = env.join("wt");
    // A submodule of the main repository.
    let sub_src = env.join(".home/sub-src");
    std::fs::create_dir_all(&sub_src).unwrap();
    git_in(&env, &sub_src, &["init", "-q"]);
    std::fs::write(sub_src.join("s.txt"), "sub\n").unwrap();
    git_in(&env, &sub_src, &["add", "."]);
    git_in(&env, &sub_src, &["commit", "-qm", "sub"]);
    git(
        &env,
        &["submodule", "add", "-q", &sub_src.to_string_lossy(), "sub"],
    );
    let sub = env.join("sub");

    for dir in [&wt, &sub] {
        let start = tree(dir);
        let state = user_state(&env, dir);
        let start_status = status(&env, dir);
        let main_state = user_state(&env, env.path());
        let server = ModelServer::start(vec![
            Turn::Tools(vec![(
                "bash",
                json!({"command": "echo changed > a.txt; echo new > n.txt; rm -f s.txt"}),
            )]),
            Turn::Text("done"),
        ]);
        let r = ag_loop(&env, dir, &server, &[], "task");
        let events = r.json_lines();
        let marks = checkpoints(&events);
        assert_eq!(marks.len(), 2, "{r}");
        assert_eq!(
            Path::new(marks[0]["work_tree"].as_str().unwrap()),
            dir.canonicalize().unwrap()
        );
        let id = latest(&env, dir);
        session(&env, dir, &["rewind", &id, "--turn", "1"]).ok();
        assert_eq!(tree(dir), start, "{}", dir.display());
        assert_eq!(user_state(&env, dir), state);
        assert_eq!(status(&env, dir), start_status);
        assert_eq!(user_state(&env, env.path()), main_state);
    }
}

#[test]
fn pruning_old_sessions_removes_their_checkpoint_refs() {
    let env = Env::new();
    user_repo(&env);
    let server = ModelServer::start(script());
    ag_loop(&env, env.path(), &server, &[], "task");
    let id = latest(&env, env.path());
    assert!(git(&env, &["for-each-ref"]).contains(&format!("refs/ag/checkpoints/{id}")));
    let young = session(&env, env.path(), &["prune", "--older-than", "30d"]);
    young.ok();
    assert!(git(&env, &["for-each-ref"]).contains("refs/ag/checkpoints/"));
    let all = session(&env, env.path(), &["prune", "--older-than", "0s"]);
    all.ok();
    assert!(all.stdout().contains(&id), "{all}");
    assert!(!git(&env, &["for-each-ref"]).contains("refs/ag/"), "{all}");
    let index_dir = env.join(".home/.ag/checkpoints/index");
    let left: Vec<_> = walkdir(&index_dir);
    assert!(left.is_empty(), "{left:?}");
    // Nor the session's one-writer lock file.
    let left: Vec<_> = walkdir(&env.join(".home/.ag/sessions"));
    assert!(left.is_empty(), "{left:?}");
}

/// The commit's parent, if it has one.
fn parent_of(env: &Env, commit: &str) -> Option<String> {
    let line = git(env, &["rev-list", "--parents", "-n1", commit]);
    line.split_whitespace().nth(1).map(str::to_string)
}

#[test]
fn a_checkpoint_after_the_ref_moved_behind_ag_loops_back_follows_the_ref() {
    // Checkpoints remember the session's last one beside the private index
    // rather than reading the ref each turn; whatever moves the ref behind
    // that (the user, another tool) must win over the memory.
    let env = Env::new();
    user_repo(&env);
    let state = user_state(&env, env.path());
    let server = ModelServer::start(script());
    let r = ag_loop(&env, env.path(), &server, &[], "do the task");
    let events = r.json_lines();
    let marks = checkpoints(&events);
    let first = marks[0]["id"].as_str().unwrap().to_string();
    let last = marks.last().unwrap()["id"].as_str().unwrap().to_string();
    let id = latest(&env, env.path());
    let name = format!("refs/ag/checkpoints/{id}");
    assert_eq!(git(&env, &["rev-parse", &name]).trim(), last);

    // The ref goes back to the first checkpoint; the tree is still the
    // last one's, so this is a new checkpoint on top of the first, not "no
    // change" with the last id.
    git(&env, &["update-ref", &name, &first]);
    let now = session(&env, env.path(), &["checkpoint", &id]);
    now.ok();
    let now = now.stdout().trim().to_string();
    assert_ne!(
        now, last,
        "the remembered checkpoint was taken for the ref's"
    );
    assert_eq!(parent_of(&env, &now), Some(first.clone()));
    let tree_of = |c: &str| git(&env, &["rev-parse", &format!("{c}^{{tree}}")]);
    assert_eq!(tree_of(&now), tree_of(&last));
    assert_eq!(git(&env, &["rev-parse", &name]).trim(), now);

    // A second ag-loop on the session, after the ref moved again: its
    // checkpoint goes onto where the ref is, and lists the changes from it.
    git(&env, &["update-ref", &name, &first]);
    let next = ModelServer::start(vec![
        Turn::Tools(vec![(
            "write",
            json!({"file_path": "late.txt", "content": "late\n"}),
        )]),
        Turn::Text("done"),
    ]);
    let r2 = ag_loop(&env, env.path(), &next, &["--session", &id], "one more");
    let events2 = r2.json_lines();
    let marks2 = checkpoints(&events2);
    assert_eq!(marks2.len(), 2, "{r2}");
    let before = marks2[0]["id"].as_str().unwrap();
    assert_eq!(parent_of(&env, before), Some(first.clone()), "{r2}");
    // From the first checkpoint's tree: everything the task did shows.
    let changed: Vec<&str> = marks2[0]["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(changed.contains(&"a.txt"), "{r2}");
    let after = marks2[1]["id"].as_str().unwrap();
    assert_eq!(parent_of(&env, after).as_deref(), Some(before));
    assert_eq!(marks2[1]["added"], json!(["late.txt"]), "{r2}");
    assert_eq!(git(&env, &["rev-parse", &name]).trim(), after);
    assert_eq!(user_state(&env, env.path()), state);
}

fn walkdir(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.path().is_dir() {
                out.extend(walkdir(&e.path()));
            } else {
                out.push(e.path().display().to_string());
            }
        }
    }
    out
}
