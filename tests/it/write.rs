//! ag-write, black-box: modes and umask, owners' permissions, symlinks and
//! the root, content from stdin, hashes, and a writer killed mid-write.
//! One-call cases on a small tree live in `tests/fixtures/write/`.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;

use serde_json::json;

use crate::bin;
use crate::util::{Env, call, run, run_args};

fn write(env: &Env, args: serde_json::Value) -> serde_json::Value {
    call(env, bin!("ag-write"), args)
}

fn mode(env: &Env, rel: &str) -> u32 {
    std::fs::metadata(env.join(rel))
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

#[test]
fn new_files_follow_the_umask_and_old_ones_keep_their_mode() {
    let env = Env::new();
    let mut cmd = env.cmd("sh");
    cmd.args([
        "-c",
        &format!("umask 027; exec {} new.txt --content hi", bin!("ag-write")),
    ]);
    run(cmd, None).ok();
    assert_eq!(mode(&env, "new.txt"), 0o640);

    let p = env.write("key.pem", "old");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    let r = write(&env, json!({"file_path": "key.pem", "content": "new"}));
    assert_eq!(r["details"]["is_new"], false, "{r}");
    assert_eq!(mode(&env, "key.pem"), 0o600);
    assert_eq!(env.read("key.pem"), b"new");
}

#[test]
fn read_only_files_are_refused() {
    let env = Env::new();
    let p = env.write("ro.txt", "keep me");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o444)).unwrap();
    let r = write(
        &env,
        json!({"file_path": "ro.txt", "content": "overwritten"}),
    );
    assert_eq!(r["error_code"], "write.read_only", "{r}");
    assert!(r["output"].as_str().unwrap().contains("chmod u+w"));
    assert_eq!(env.read("ro.txt"), b"keep me");
}

#[test]
fn stdin_carries_any_bytes_on_the_command_line() {
    let env = Env::new();
    let bytes = b"\x00\x01binary\xff\r\n".to_vec();
    let mut cmd = env.cmd(bin!("ag-write"));
    cmd.arg("out/data.bin");
    let r = run(cmd, Some(&bytes));
    r.ok();
    assert_eq!(
        r.stdout(),
        format!("Created new file out/data.bin ({} bytes)\n", bytes.len())
    );
    assert_eq!(env.read("out/data.bin"), bytes);
    // With no file at all, it serves JSON calls instead.
    let r = run_args(&env, bin!("ag-write"), &["--schema"]);
    r.ok();
    assert_eq!(
        r.json()["parameters"]["required"],
        json!(["file_path", "content"])
    );
}

#[test]
fn root_is_enforced_at_the_end_of_a_dangling_symlink() {
    let env = Env::new();
    std::fs::create_dir(env.join("proj")).unwrap();
    std::os::unix::fs::symlink("../outside/new.txt", env.join("proj/escape")).unwrap();
    std::os::unix::fs::symlink("inside/new.txt", env.join("proj/fine")).unwrap();
    let mut cmd = env.cmd(bin!("ag-write"));
    cmd.current_dir(env.join("proj")).args(["--root", "."]);
    let input = concat!(
        r#"{"id":"1","arguments":{"file_path":"escape","content":"x"}}"#,
        "\n",
        r#"{"id":"2","arguments":{"file_path":"fine","content":"y"}}"#,
        "\n"
    );
    let out = run(cmd, Some(input.as_bytes())).json_lines();
    assert_eq!(out[0]["error_code"], "path.outside_root", "{}", out[0]);
    assert!(!env.join("outside").exists());
    assert_eq!(out[1]["is_error"], false, "{}", out[1]);
    assert_eq!(env.read("proj/inside/new.txt"), b"y");
    assert!(
        std::fs::symlink_metadata(env.join("proj/fine"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn expected_hash_guards_an_overwrite() {
    let env = Env::new();
    env.write("a.txt", "v1\n");
    let h = call(&env, bin!("ag-read"), json!({"file_path": "a.txt"}))["details"]["hash"].clone();
    env.write("a.txt", "v1 changed by someone\n");
    let r = write(
        &env,
        json!({"file_path": "a.txt", "content": "v2\n", "expected_hash": h}),
    );
    assert_eq!(r["error_code"], "write.stale", "{r}");
    assert_eq!(env.read("a.txt"), b"v1 changed by someone\n");
    let h = call(&env, bin!("ag-read"), json!({"file_path": "a.txt"}))["details"]["hash"].clone();
    let r = write(
        &env,
        json!({"file_path": "a.txt", "content": "v2\n", "expected_hash": h}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    let r = write(
        &env,
        json!({"file_path": "gone.txt", "content": "x", "expected_hash": h}),
    );
    assert_eq!(r["error_code"], "write.stale", "{r}");
    assert!(r["output"].as_str().unwrap().contains("no longer exists"));
}

#[test]
fn huge_content_round_trips() {
    let env = Env::new();
    let content: String = (0..200_000).map(|i| format!("{i}\n")).collect();
    let r = write(&env, json!({"file_path": "big.txt", "content": content}));
    assert_eq!(r["details"]["size"], content.len());
    assert!(env.read("big.txt") == content.as_bytes());
}

/// Killed by SIGXFSZ when the new content passes the shell's file-size
/// limit: the old content stays, and no temporary file is left.
#[test]
fn killed_mid_write_leaves_the_old_file() {
    let env = Env::new();
    env.write("d/a.txt", "old and small\n");
    let input = json!({"arguments": {"file_path": "d/a.txt", "content": "x".repeat(1 << 20)}})
        .to_string()
        + "\n";
    let mut cmd = env.cmd("sh");
    cmd.args(["-c", &format!("ulimit -f 16; exec {}", bin!("ag-write"))]);
    let r = run(cmd, Some(input.as_bytes()));
    assert_eq!(r.output.status.signal(), Some(nix::libc::SIGXFSZ), "{r}");
    assert_eq!(env.read("d/a.txt"), b"old and small\n");
    let left: Vec<_> = std::fs::read_dir(env.join("d"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec!["a.txt"]);
}

/// A part written over the whole file (a weak model's way of "changing"
/// it) is said to have taken most of the file with it; a rewrite of a
/// similar size, or of a small file, is not.
#[test]
fn a_write_that_leaves_little_of_a_file_says_so() {
    let env = Env::new();
    let body: String = (0..40)
        .map(|i| format!("line {i} of the module\n"))
        .collect();
    env.write("books.py", &body);
    let r = write(
        &env,
        json!({"file_path": "books.py", "content": "class Book:\n    year = None\n"}),
    );
    let out = r["output"].as_str().unwrap();
    assert!(
        out.contains(&format!(
            "it held {} bytes before, so most of what it held is gone",
            body.len()
        )),
        "{r}"
    );
    assert_eq!(r["details"]["size_before"], body.len());
    let r = write(
        &env,
        json!({"file_path": "books.py", "content": body.replace("module", "package")}),
    );
    assert!(!r["output"].as_str().unwrap().contains("held"), "{r}");
    env.write("tiny.txt", "a short note\n");
    let r = write(&env, json!({"file_path": "tiny.txt", "content": "x\n"}));
    assert!(!r["output"].as_str().unwrap().contains("held"), "{r}");
}

/// A change that leaves a JSON or TOML file unreadable says where, from
/// each of the three tools that change files; an edit's or a patch's
/// change stands (one change of several may break the file on the way),
/// a whole file written over it that is not JSON is refused, and a file
/// that did not parse before gets no warning.
#[test]
fn a_change_that_breaks_a_data_file_says_where() {
    let env = Env::new();
    env.write("config.json", "{\n  \"port\": 8080\n}\n");
    let r = write(
        &env,
        json!({"file_path": "config.json", "content": "port: 9000"}),
    );
    assert_eq!(r["error_code"], "write.breaks_format", "{r}");
    assert!(
        r["output"].as_str().unwrap().starts_with("`config.json` holds valid JSON, and this content is not JSON (expected value at line 1 column 1), so nothing was written"),
        "{r}"
    );
    assert_eq!(
        std::fs::read_to_string(env.join("config.json")).unwrap(),
        "{\n  \"port\": 8080\n}\n"
    );
    // JSON as some tools read it (a comment): written, and warned.
    let r = write(
        &env,
        json!({"file_path": "config.json", "content": "// the port\n{\"port\": 9000}\n"}),
    );
    assert!(
        r["output"]
            .as_str()
            .unwrap()
            .contains("WARNING: `config.json` was valid JSON before this change and is not now"),
        "{r}"
    );
    assert!(
        std::fs::read_to_string(env.join("config.json"))
            .unwrap()
            .contains("9000")
    );

    env.write("app.toml", "[server]\nport = 8080\n");
    let r = call(
        &env,
        bin!("ag-edit"),
        json!({"file_path": "app.toml", "old_string": "port = 8080", "new_string": "port = 8080,"}),
    );
    assert!(
        r["output"]
            .as_str()
            .unwrap()
            .contains("was valid TOML before this change and is not now"),
        "{r}"
    );

    env.write("list.json", "[1, 2]\n");
    let r = call(
        &env,
        bin!("ag-patch"),
        json!({"patch": "--- a/list.json\n+++ b/list.json\n@@ -1 +1 @@\n-[1, 2]\n+[1, 2,]\n"}),
    );
    assert!(
        r["output"].as_str().unwrap().contains("`list.json` was valid JSON before this change and is not now: expected value at line 1 column 7."),
        "{r}"
    );

    // JSON with comments did not parse before: not this change's doing.
    env.write("tsconfig.json", "// options\n{}\n");
    let r = write(
        &env,
        json!({"file_path": "tsconfig.json", "content": "// options\n{\"strict\": true}\n"}),
    );
    assert!(!r["output"].as_str().unwrap().contains("WARNING"), "{r}");
}

/// A file created where git ignores it, or written back with the text it
/// holds, is said to be ignored, with the rule: what is ignored stays on
/// this machine (a small model "fixed" a project's set-up for the next
/// person in its ignored `.env`; another wrote an ignored file's own text
/// back five times to get it into git).
#[test]
fn a_new_file_that_git_ignores_is_said_to_be_ignored() {
    let env = Env::new();
    // Outside a repository: nothing to say.
    let r = write(&env, json!({"file_path": ".env", "content": "A=1\n"}));
    assert!(!r["output"].as_str().unwrap().contains("ignored"), "{r}");
    std::fs::remove_file(env.join(".env")).unwrap();

    let git = |args: &[&str]| {
        let s = std::process::Command::new("git")
            .args(args)
            .current_dir(env.path())
            .env("HOME", env.join(".home"))
            .status()
            .unwrap();
        assert!(s.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    env.write(".gitignore", ".env\nbuild/\n");
    let r = write(&env, json!({"file_path": ".env", "content": "A=1\n"}));
    assert!(
        r["output"].as_str().unwrap().ends_with(
            "Note: `.env` is ignored by git (`.gitignore` line 1: `.env`): it stays on this machine, and no commit carries it to anyone else."
        ),
        "{r}"
    );
    // Written again with other text, it is no new file: no note.
    let r = write(&env, json!({"file_path": ".env", "content": "A=2\n"}));
    assert!(!r["output"].as_str().unwrap().contains("ignored"), "{r}");
    // Written back with the text it holds, the note comes again: writing
    // an ignored file is not what gets it into git.
    let r = write(&env, json!({"file_path": ".env", "content": "A=2\n"}));
    let out = r["output"].as_str().unwrap();
    assert!(out.contains("already holds exactly this text"), "{r}");
    assert!(
        out.ends_with(
            "Note: `.env` is ignored by git (`.gitignore` line 1: `.env`): it stays on this machine, and no commit carries it to anyone else."
        ),
        "{r}"
    );
    // A file git keeps: no note.
    let r = write(
        &env,
        json!({"file_path": ".env.example", "content": "A=\n"}),
    );
    assert!(!r["output"].as_str().unwrap().contains("ignored"), "{r}");
    // A patch that adds an ignored file says so too.
    let r = call(
        &env,
        bin!("ag-patch"),
        json!({"patch": "*** Begin Patch\n*** Add File: build/out.txt\n+x\n*** End Patch"}),
    );
    assert!(
        r["output"]
            .as_str()
            .unwrap()
            .contains("`build/out.txt` is ignored by git (`.gitignore` line 2: `build/`)"),
        "{r}"
    );
}

/// A new file's path that starts with the working directory's own name,
/// when no folder of that name is inside it and the rest of the path is a
/// file, is refused with the path meant: writing it would make a second
/// copy in a new folder beside the file the request was about.
#[test]
fn a_path_that_repeats_the_working_directorys_name_is_refused_with_the_path_meant() {
    let env = Env::new();
    env.write("dice.js", "module.exports = () => 1;\n");
    let own = env.name();
    let wrong = format!("{own}/dice.js");
    let r = write(&env, json!({"file_path": wrong, "content": "x\n"}));
    assert_eq!(r["is_error"], true, "{r}");
    assert_eq!(r["error_code"], "write.repeats_working_directory", "{r}");
    assert!(
        r.to_string().contains(r#"{\"file_path\": \"dice.js\"}"#),
        "{r}"
    );
    assert!(!env.join(&own).exists(), "no folder was made");
    assert_eq!(env.read("dice.js"), b"module.exports = () => 1;\n");
    // A new file there with no namesake, or a folder of that name made
    // first, is written as asked.
    let r = write(
        &env,
        json!({"file_path": format!("{own}/new.js"), "content": "x\n"}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    let r = write(
        &env,
        json!({"file_path": format!("{own}/dice.js"), "content": "y\n"}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    assert_eq!(env.read(&format!("{own}/dice.js")), b"y\n");
}

/// A new file in an existing folder below a file of its name names that
/// file; a namesake in another branch of the tree does not.
#[test]
fn a_new_file_below_its_namesake_names_it() {
    let env = Env::new();
    env.write("README.md", "# tool\n");
    env.write("docs/diagram.svg", "<svg/>\n");
    env.write("src/pkg/__init__.py", "");
    env.write("tests/test_a.py", "");
    let r = write(
        &env,
        json!({"file_path": "docs/README.md", "content": "x\n"}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    let out = r["output"].as_str().unwrap();
    assert!(
        out.contains("a file of that name is at `README.md`, unchanged")
            && !out.contains("directories made for it"),
        "{r}"
    );
    assert_eq!(r["details"]["same_name_elsewhere"], json!(["README.md"]));
    let r = write(
        &env,
        json!({"file_path": "tests/__init__.py", "content": ""}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    assert!(!r.to_string().contains("of that name"), "{r}");
}

/// An elision mark alone over a file is refused and the file kept; a new
/// file may hold one.
#[test]
fn an_elision_mark_alone_is_not_written_over_a_file() {
    let env = Env::new();
    let program = "package main\n\nfunc main() {}\n";
    env.write("main.go", program);
    for mark in ["...", "// ...\n"] {
        let r = write(&env, json!({"file_path": "main.go", "content": mark}));
        assert_eq!(r["is_error"], true, "{r}");
        assert_eq!(r["error_code"], "write.elision_mark", "{r}");
        assert_eq!(env.read("main.go"), program.as_bytes());
    }
    let r = write(&env, json!({"file_path": "notes.txt", "content": "...\n"}));
    assert_eq!(r["is_error"], false, "{r}");
}
