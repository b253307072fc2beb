//! ag-delete, black-box: what is refused, what a recursive delete reports,
//! symlinks to directories, hashes and the command line. One-call cases on
//! a small tree live in `tests/fixtures/delete/`.

use serde_json::json;

use crate::bin;
use crate::util::{Env, call, run, run_args};

fn delete(env: &Env, args: serde_json::Value) -> serde_json::Value {
    call(env, bin!("ag-delete"), args)
}

#[test]
fn parents_of_the_working_directory_and_the_root_are_refused() {
    let env = Env::new();
    env.write("proj/src/a.rs", "x");
    let mut cmd = env.cmd(bin!("ag-delete"));
    cmd.current_dir(env.join("proj/src"));
    let input = concat!(
        r#"{"id":"1","arguments":{"path":"..","recursive":true}}"#,
        "\n",
        r#"{"id":"2","arguments":{"path":"/","recursive":true}}"#,
        "\n"
    );
    let out = run(cmd, Some(input.as_bytes())).json_lines();
    assert_eq!(out[0]["error_code"], "delete.refused", "{}", out[0]);
    assert_eq!(out[1]["error_code"], "delete.refused", "{}", out[1]);
    assert!(env.join("proj/src/a.rs").exists());
}

#[test]
fn a_link_to_a_directory_is_removed_without_touching_the_directory() {
    let env = Env::new();
    env.write("data/keep.txt", "k");
    std::os::unix::fs::symlink("data", env.join("shortcut")).unwrap();
    let r = delete(&env, json!({"path": "shortcut"}));
    assert_eq!(r["details"]["kind"], "symlink", "{r}");
    assert!(!env.join("shortcut").exists());
    assert_eq!(env.read("data/keep.txt"), b"k");
}

#[test]
fn empty_directories_need_recursive_too() {
    let env = Env::new();
    std::fs::create_dir(env.join("empty")).unwrap();
    let r = delete(&env, json!({"path": "empty"}));
    assert_eq!(r["error_code"], "delete.is_directory");
    assert!(
        r["output"].as_str().unwrap().contains("empty directory"),
        "{r}"
    );
    let r = delete(&env, json!({"path": "empty", "recursive": true}));
    assert_eq!(r["details"]["entries"], 0, "{r}");
    assert!(!env.join("empty").exists());
}

#[test]
fn expected_hash_guards_a_file() {
    let env = Env::new();
    env.write("a.txt", "one");
    let h = call(&env, bin!("ag-read"), json!({"file_path": "a.txt"}))["details"]["hash"].clone();
    env.write("a.txt", "two");
    let r = delete(&env, json!({"path": "a.txt", "expected_hash": h}));
    assert_eq!(r["error_code"], "delete.stale", "{r}");
    assert!(env.join("a.txt").exists());
}

#[test]
fn command_line() {
    let env = Env::new();
    env.write("t/a/b.txt", "12");
    let r = run_args(&env, bin!("ag-delete"), &["t"]);
    r.expect_code(1);
    assert!(
        r.stderr()
            .starts_with("ag-delete: error: `t` is a directory"),
        "{}",
        r.stderr()
    );
    let r = run_args(&env, bin!("ag-delete"), &["-r", "t"]);
    r.ok();
    assert_eq!(
        r.stdout(),
        "Deleted directory t and everything in it: 1 file, 1 directory, 2 bytes\n"
    );
}
