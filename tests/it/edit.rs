//! ag-edit, black-box: encodings and line endings, long lines, empty,
//! binary and huge files, permissions and symlinks, hashes, the command
//! line, and a writer killed mid-write. Cases that are one call on a small
//! tree live in `tests/fixtures/edit/` instead (see `scenarios`).

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;

use serde_json::json;

use crate::bin;
use crate::util::{Env, call, call_lines, run, run_args};

fn edit(env: &Env, args: serde_json::Value) -> serde_json::Value {
    call(env, bin!("ag-edit"), args)
}

fn files_in(env: &Env, dir: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(env.join(dir))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn bom_crlf_and_missing_final_newline_survive_a_mixed_batch() {
    let env = Env::new();
    env.write("w/f.txt", b"\xEF\xBB\xBFalpha\r\nbeta\r\ngamma");
    let r = edit(
        &env,
        json!({
            "file_path": "w/f.txt",
            "line_edits": [{"start_line": 1, "end_line": 1, "replacement": "ALPHA\n"}],
            "edits": [
                {"old_string": "beta\ngamma", "new_string": "beta\nBETA2\ngamma"},
                {"old_string": "gamma", "new_string": "GAMMA"}
            ]
        }),
    );
    assert_eq!(r["is_error"], false, "{r}");
    assert_eq!(
        env.read("w/f.txt"),
        b"\xEF\xBB\xBFALPHA\r\nbeta\r\nBETA2\r\nGAMMA"
    );
    assert_eq!(r["details"]["match_count"], 2);
    let diff = r["details"]["diff"].as_str().unwrap();
    assert!(diff.contains("+BETA2\n"), "{diff}");
    assert!(diff.contains("\\ No newline at end of file"), "{diff}");
}

#[test]
fn empty_files() {
    let env = Env::new();
    env.write("empty.txt", "");
    let r = edit(
        &env,
        json!({"file_path": "empty.txt", "old_string": "x", "new_string": "y"}),
    );
    assert_eq!(r["error_code"], "edit.not_found", "{r}");
    let r = edit(
        &env,
        json!({"file_path": "empty.txt", "line_edits": [{"start_line": 1, "end_line": 0, "replacement": "first"}]}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    assert_eq!(env.read("empty.txt"), b"first\n");
    let r = edit(
        &env,
        json!({"file_path": "empty.txt", "line_edits": [{"start_line": 1, "end_line": 1, "replacement": ""}]}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    assert_eq!(env.read("empty.txt"), b"");
}

#[test]
fn long_lines_are_edited_and_the_diff_is_capped() {
    let env = Env::new();
    let line = format!("{}NEEDLE{}", "a".repeat(600_000), "b".repeat(600_000));
    env.write("min.js", format!("{line}\nnext\n"));
    let r = edit(
        &env,
        json!({"file_path": "min.js", "old_string": "NEEDLE", "new_string": "THREAD"}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    let want = format!("{}\nnext\n", line.replace("NEEDLE", "THREAD"));
    assert!(env.read("min.js") == want.as_bytes());
    assert_eq!(r["details"]["lines_changed"], 1);
    assert_eq!(r["details"]["diff_truncated"], true);
    assert!(r["details"]["diff"].as_str().unwrap().len() <= 70 * 1024);
}

#[test]
fn binary_files_are_refused_and_left_alone() {
    let env = Env::new();
    let bytes = b"\x7fELF\x00\x01\x02 old \x00".to_vec();
    env.write("app.bin", &bytes);
    let r = edit(
        &env,
        json!({"file_path": "app.bin", "old_string": "old", "new_string": "new"}),
    );
    assert_eq!(r["error_code"], "edit.binary", "{r}");
    assert!(r["output"].as_str().unwrap().contains("write"));
    assert_eq!(env.read("app.bin"), bytes);
}

#[test]
fn huge_file_one_unique_string() {
    let env = Env::new();
    let mut body = Vec::with_capacity(40 << 20);
    for i in 0..600_000u32 {
        body.extend_from_slice(
            format!("line {i:07} of a large generated file, nothing to see\n").as_bytes(),
        );
    }
    body.extend_from_slice(b"const LIMIT: usize = 10;\n");
    env.write("big.rs", &body);
    let r = edit(
        &env,
        json!({"file_path": "big.rs", "old_string": "LIMIT: usize = 10", "new_string": "LIMIT: usize = 20"}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    assert_eq!(r["details"]["lines_changed"], 1);
    let got = env.read("big.rs");
    assert_eq!(got.len(), body.len());
    assert!(got.ends_with(b"const LIMIT: usize = 20;\n"));
    assert!(got[..body.len() - 30] == body[..body.len() - 30]);
    let diff = r["details"]["diff"].as_str().unwrap();
    assert!(diff.contains("@@ -599998,4 +599998,4 @@"), "{diff}");
    assert_eq!(files_in(&env, "."), vec![".home", "big.rs"]);
}

#[test]
fn permissions_are_kept_and_read_only_files_refused() {
    let env = Env::new();
    let p = env.write("secret.conf", "token = old\n");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
    let r = edit(
        &env,
        json!({"file_path": "secret.conf", "old_string": "old", "new_string": "new"}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    assert_eq!(
        std::fs::metadata(&p).unwrap().permissions().mode() & 0o7777,
        0o640
    );

    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o444)).unwrap();
    let r = edit(
        &env,
        json!({"file_path": "secret.conf", "old_string": "new", "new_string": "newer"}),
    );
    assert_eq!(r["error_code"], "edit.read_only", "{r}");
    assert_eq!(env.read("secret.conf"), b"token = new\n");
}

#[test]
fn symlinks_stay_links_and_root_is_enforced_at_their_end() {
    let env = Env::new();
    env.write("proj/real/a.txt", "one\n");
    env.write("outside.txt", "two\n");
    std::os::unix::fs::symlink("real/a.txt", env.join("proj/link")).unwrap();
    std::os::unix::fs::symlink("../outside.txt", env.join("proj/escape")).unwrap();
    let mut cmd = env.cmd(bin!("ag-edit"));
    cmd.current_dir(env.join("proj")).args(["--root", "."]);
    let input = concat!(
        r#"{"id":"1","arguments":{"file_path":"link","old_string":"one","new_string":"ONE"}}"#,
        "\n",
        r#"{"id":"2","arguments":{"file_path":"escape","old_string":"two","new_string":"TWO"}}"#,
        "\n"
    );
    let out = run(cmd, Some(input.as_bytes())).json_lines();
    assert_eq!(out[0]["is_error"], false, "{}", out[0]);
    assert!(
        std::fs::symlink_metadata(env.join("proj/link"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(env.read("proj/real/a.txt"), b"ONE\n");
    assert_eq!(out[1]["error_code"], "path.outside_root", "{}", out[1]);
    assert_eq!(env.read("outside.txt"), b"two\n");
}

#[test]
fn hashes_chain_from_read_through_edits() {
    let env = Env::new();
    env.write("a.txt", "x = 1\n");
    let read = call(&env, bin!("ag-read"), json!({"file_path": "a.txt"}));
    let h0 = read["details"]["hash"].as_str().unwrap().to_string();
    let r = edit(
        &env,
        json!({"file_path": "a.txt", "old_string": "1", "new_string": "2", "expected_hash": h0}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    let h1 = r["details"]["hash"].as_str().unwrap().to_string();
    // The old hash no longer describes the file.
    let r = edit(
        &env,
        json!({"file_path": "a.txt", "old_string": "2", "new_string": "3", "expected_hash": h0}),
    );
    assert_eq!(r["error_code"], "edit.stale", "{r}");
    assert!(r["output"].as_str().unwrap().contains("Read it again"));
    assert_eq!(env.read("a.txt"), b"x = 2\n");
    // The edit's own hash does, and matches what read reports.
    let read = call(&env, bin!("ag-read"), json!({"file_path": "a.txt"}));
    assert_eq!(read["details"]["hash"], h1.as_str());
    let r = edit(
        &env,
        json!({"file_path": "a.txt", "old_string": "2", "new_string": "3", "expected_hash": h1}),
    );
    assert_eq!(r["is_error"], false, "{r}");
}

#[test]
fn one_process_serves_many_calls() {
    let env = Env::new();
    env.write("a.txt", "a\nb\n");
    let input = concat!(
        r#"{"id":"1","arguments":{"file_path":"a.txt","old_string":"a","new_string":"A"}}"#,
        "\n",
        r#"{"id":"2","arguments":{"file_path":"a.txt","old_string":"zzz","new_string":"q"}}"#,
        "\n",
        "not json\n",
        r#"{"id":"3","arguments":{"file_path":"a.txt","old_string":"b","new_string":"B"}}"#,
        "\n"
    );
    let out = call_lines(&env, bin!("ag-edit"), input);
    assert_eq!(out.len(), 4);
    assert_eq!(out[0]["is_error"], false);
    assert_eq!(out[1]["error_code"], "edit.not_found");
    assert_eq!(out[2]["error_code"], "call.malformed");
    assert_eq!(out[3]["id"], "3");
    assert_eq!(env.read("a.txt"), b"A\nB\n");
}

#[test]
fn command_line_forms() {
    let env = Env::new();
    env.write("f.txt", "one\ntwo\nthree\n");
    let r = run_args(
        &env,
        bin!("ag-edit"),
        &["f.txt", "--old", "two", "--new", "2"],
    );
    r.ok();
    assert_eq!(
        r.stdout(),
        "Replaced 1 occurrence in f.txt (1 line changed)\n"
    );
    let r = run_args(
        &env,
        bin!("ag-edit"),
        &["f.txt", "--lines", "3", "--new", "3"],
    );
    r.ok();
    let r = run_args(
        &env,
        bin!("ag-edit"),
        &[
            "f.txt",
            "--edits",
            r#"[{"old_string":"one","new_string":"1"}]"#,
            "--json",
        ],
    );
    r.ok();
    assert_eq!(r.json()["details"]["match_count"], 1);
    assert_eq!(env.read("f.txt"), b"1\n2\n3\n");

    let r = run_args(
        &env,
        bin!("ag-edit"),
        &["f.txt", "--old", "nope", "--new", "x"],
    );
    r.expect_code(1);
    assert_eq!(r.stdout(), "");
    let err = r.stderr();
    assert!(
        err.starts_with("ag-edit: error: old_string was not found"),
        "{err}"
    );
    assert!(err.contains("\nhint: copy old_string exactly"), "{err}");
    let r = run_args(&env, bin!("ag-edit"), &["f.txt", "--old", "1"]);
    r.expect_code(1);
    assert!(r.stderr().contains("without new_string"), "{}", r.stderr());
    let r = run_args(
        &env,
        bin!("ag-edit"),
        &["f.txt", "--lines", "1", "--old", "1", "--new", "x"],
    );
    r.expect_code(2);
}

#[test]
fn ambiguity_is_explained_and_replace_all_resolves_it() {
    let env = Env::new();
    let body: String = (0..30)
        .map(|i| {
            if i % 10 == 0 {
                "TODO\n".to_string()
            } else {
                format!("{i}\n")
            }
        })
        .collect();
    env.write("a.txt", &body);
    let r = edit(
        &env,
        json!({"file_path": "a.txt", "old_string": "TODO", "new_string": "DONE"}),
    );
    assert_eq!(r["error_code"], "edit.ambiguous");
    let out = r["output"].as_str().unwrap();
    assert!(out.contains("3 times"), "{r}");
    // The call corrected: all of them, and no line to name alone (each
    // TODO line is the same).
    assert!(
        out.ends_with("\nhint: to change all 3, call edit again with old_string \"TODO\", new_string \"DONE\" and replace_all true."),
        "{out}"
    );
    assert_eq!(r["details"]["lines"], json!([1, 11, 21]));
    // A name used on several lines: each way, the first line's own text.
    env.write(
        "greet.py",
        "def say_hi(name):\n    return name\n\nprint(say_hi(\"Ann\"))\n",
    );
    let r = edit(
        &env,
        json!({"file_path": "greet.py", "old_string": "say_hi", "new_string": "greet"}),
    );
    let out = r["output"].as_str().unwrap();
    assert!(
        out.ends_with("\nhint: to change all 2, call edit again with old_string \"say_hi\", new_string \"greet\" and replace_all true; to change only line 1, give its whole line as old_string: \"def say_hi(name):\"."),
        "{out}"
    );
    let r = edit(
        &env,
        json!({"file_path": "a.txt", "old_string": "TODO", "new_string": "DONE", "replace_all": true}),
    );
    assert_eq!(r["details"]["match_count"], 3, "{r}");
    assert_eq!(
        r["output"],
        "Replaced 3 occurrences in a.txt (3 lines changed)"
    );
}

/// replace_all whose new text holds its old one changes the places not yet
/// changed and leaves those made already, saying which.
#[test]
fn replace_all_does_not_redo_a_change_already_made() {
    let env = Env::new();
    std::fs::write(
        env.join("run.sh"),
        "node server.js -p 8080\nsleep 1\nnode server.js\n",
    )
    .unwrap();
    let r = edit(
        &env,
        json!({"file_path": "run.sh", "old_string": "node server.js", "new_string": "node server.js -p 8080", "replace_all": true}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    assert_eq!(
        std::fs::read_to_string(env.join("run.sh")).unwrap(),
        "node server.js -p 8080\nsleep 1\nnode server.js -p 8080\n"
    );
    assert_eq!(r["details"]["match_count"], 1, "{r}");
    assert_eq!(
        r["details"]["kept_as_made"],
        json!([{"edit": 1, "lines": [1]}]),
        "{r}"
    );
    let said = r["output"].as_str().unwrap();
    assert!(
        said.contains("1 place of old_string was left as it was (line 1)"),
        "{said}"
    );
}

/// A writer killed while writing (here by SIGXFSZ, when the new version
/// passes the file-size limit the shell set) leaves the old file whole and
/// no temporary file behind.
#[test]
fn killed_mid_write_leaves_the_file_whole() {
    let env = Env::new();
    let body: String = (0..40_000).map(|i| format!("line {i}\n")).collect();
    env.write("d/big.txt", &body);
    let input = json!({"arguments": {"file_path": "d/big.txt", "old_string": "line 39999\n", "new_string": "last\n"}})
        .to_string()
        + "\n";
    let mut cmd = env.cmd("sh");
    cmd.args(["-c", &format!("ulimit -f 16; exec {}", bin!("ag-edit"))]);
    let r = run(cmd, Some(input.as_bytes()));
    assert_eq!(r.output.status.signal(), Some(nix::libc::SIGXFSZ), "{r}");
    assert!(env.read("d/big.txt") == body.as_bytes());
    assert_eq!(files_in(&env, "d"), vec!["big.txt"]);
}

#[test]
fn other_hard_links_are_named_in_the_result() {
    let env = Env::new();
    env.write("a.txt", "v1\n");
    std::fs::hard_link(env.join("a.txt"), env.join("b.txt")).unwrap();
    let r = edit(
        &env,
        json!({"file_path": "a.txt", "old_string": "v1", "new_string": "v2"}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    assert!(
        r["output"].as_str().unwrap().contains("1 other hard link"),
        "{r}"
    );
    assert_eq!(env.read("a.txt"), b"v2\n");
    assert_eq!(env.read("b.txt"), b"v1\n");
}

#[test]
fn plain_notes_go_to_stderr_and_stay_in_the_model_text() {
    let env = Env::new();
    env.write("a.js", "function f() {  \n  return 1;\n}\n");
    let r = run_args(
        &env,
        bin!("ag-edit"),
        &[
            "a.js",
            "--old",
            "function f() {\n  return 1;",
            "--new",
            "function f() {\n  return 2;",
        ],
    );
    r.ok();
    assert_eq!(
        r.stdout(),
        "Replaced 1 occurrence in a.js (1 line changed)\n",
        "{r}"
    );
    assert!(
        r.stderr()
            .starts_with("ag-edit: note: old_string did not match exactly;"),
        "{r}"
    );
    assert_eq!(env.read("a.js"), b"function f() {  \n  return 2;\n}\n");
    env.write("b.js", "function g() {  \n  return 1;\n}\n");
    let r = edit(
        &env,
        json!({"file_path": "b.js", "old_string": "function g() {\n  return 1;", "new_string": "function g() {\n  return 2;"}),
    );
    let out = r["output"].as_str().unwrap();
    assert!(
        out.starts_with("Replaced 1 occurrence in b.js (1 line changed)\n\nNote: old_string did not match exactly;"),
        "{out}"
    );
}

/// A path whose directories were guessed (a weak model's
/// `node_modules/x/lib/slugify.js` for the project's `slugify.js`) names
/// the file of that name, and does not invite a new file with write.
#[test]
fn a_guessed_directory_names_the_file_of_that_name() {
    let env = Env::new();
    env.write("slugify.js", "module.exports = s => s;\n");
    env.write("src/deep/util.py", "x = 1\n");
    let r = edit(
        &env,
        json!({"file_path": "node_modules/slugify/lib/slugify.js", "old_string": "s", "new_string": "t"}),
    );
    assert_eq!(r["error_code"], "edit.not_found", "{r}");
    let text = r.to_string();
    assert!(
        text.contains("A file of that name is at `slugify.js`"),
        "{r}"
    );
    assert!(!text.contains("use write"), "{r}");
    let r = read(&env, json!({"file_path": "lib/util.py"}));
    let text = r.to_string();
    assert!(
        text.contains("A file of that name is at `src/deep/util.py`"),
        "{r}"
    );
    // With no such file anywhere, the old hint stands.
    let r = edit(
        &env,
        json!({"file_path": "nowhere/new.txt", "old_string": "s", "new_string": "t"}),
    );
    let text = r.to_string();
    assert!(text.contains("To create a new file, use write."), "{r}");
}

fn read(env: &Env, args: serde_json::Value) -> serde_json::Value {
    call(env, bin!("ag-read"), args)
}

/// A write that makes directories for a new file, when the project has a
/// file of that name, says where that file is and that it is unchanged.
#[test]
fn a_write_into_guessed_directories_names_the_file_of_that_name() {
    let env = Env::new();
    env.write("slugify.js", "module.exports = s => s;\n");
    let r = call(
        &env,
        bin!("ag-write"),
        json!({"file_path": "node_modules/slugify/dist/slugify.js", "content": "x"}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    assert!(
        r.to_string()
            .contains("a file of that name is at `slugify.js`, unchanged"),
        "{r}"
    );
    assert_eq!(r["details"]["same_name_elsewhere"], json!(["slugify.js"]));
    // A new file beside the others, or with no namesake, gets no such note.
    let r = call(
        &env,
        bin!("ag-write"),
        json!({"file_path": "other.js", "content": "x"}),
    );
    assert!(!r.to_string().contains("of that name"), "{r}");
}

/// A new file whose name is one slip from a file beside it names that file,
/// and that it is unchanged; the write itself goes ahead.
#[test]
fn a_new_file_one_slip_from_a_file_beside_it_names_that_file() {
    let env = Env::new();
    env.write("site/style.css", "body { color: black; }\n");
    env.write("site/notes1.txt", "one\n");
    let r = call(
        &env,
        bin!("ag-write"),
        json!({"file_path": "site/styles.css", "content": "tr:nth-child(even) { background: #eee; }\n"}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    assert!(
        r["output"].as_str().unwrap().contains(
            "Created new file site/styles.css (41 bytes); `site/style.css`, a near name, is beside it, unchanged. If that is the file meant, change it instead of making a new one"
        ),
        "{r}"
    );
    assert_eq!(r["details"]["near_names_beside"], json!(["site/style.css"]));
    assert!(env.join("site/styles.css").exists());
    assert_eq!(env.read("site/style.css"), b"body { color: black; }\n");
    // Numbered files, a file overwritten, and a name far from all get no such note.
    for (path, content) in [
        ("site/notes2.txt", "two\n"),
        ("site/style.css", "body { color: blue; }\n"),
        ("site/print.css", "aside { display: none; }\n"),
    ] {
        let r = call(
            &env,
            bin!("ag-write"),
            json!({"file_path": path, "content": content}),
        );
        assert_eq!(r["is_error"], false, "{r}");
        assert!(r["details"].get("near_names_beside").is_none(), "{r}");
    }
}

/// A path that starts with the working directory's own name, when no
/// folder of that name is in it, means the file in the working directory:
/// ag-read reads it and ag-edit changes it, each saying so. With such a
/// folder there, the path is taken as given.
#[test]
fn a_path_that_repeats_the_working_directorys_name_reads_and_edits_the_file_meant() {
    let env = Env::new();
    env.write("score.js", "console.log(total);\n");
    let own = env.name();
    let given = format!("{own}/score.js");
    let said = format!(
        "`{given}` starts with `{own}`, the name of the working directory itself, which holds no `{own}`: this is `score.js`"
    );
    let r = call(&env, bin!("ag-read"), json!({"file_path": given}));
    assert_eq!(r["is_error"], false, "{r}");
    assert!(
        r["output"]
            .as_str()
            .unwrap()
            .contains("console.log(total);"),
        "{r}"
    );
    assert!(r["output"].as_str().unwrap().contains(&said), "{r}");
    let r = edit(
        &env,
        json!({"file_path": given, "old_string": "total", "new_string": "total.toLocaleString('en-US')"}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    assert!(r["output"].as_str().unwrap().contains(&said), "{r}");
    assert_eq!(
        env.read("score.js"),
        b"console.log(total.toLocaleString('en-US'));\n"
    );
    assert!(!env.join(&own).exists());
    // A folder of that name there: the path means what it says.
    std::fs::create_dir(env.join(&own)).unwrap();
    let r = call(&env, bin!("ag-read"), json!({"file_path": given}));
    assert_eq!(r["error_code"], "read.not_found", "{r}");
}

/// A rename names the other files that still use the old name, after the
/// edit and after the same edit found made already; a name used nowhere
/// else, or text that is no name, gets no such note.
#[test]
fn a_rename_names_the_files_that_still_use_the_old_name() {
    let env = Env::new();
    env.write(
        "cart.js",
        "function calcTotal(items) {\n  return 0;\n}\nmodule.exports = { calcTotal };\n",
    );
    env.write(
        "app.js",
        "const { calcTotal } = require('./cart');\nconsole.log(calcTotal([]));\n",
    );
    env.write("notes.txt", "calcTotals are shown here\n");
    let rename = json!({"file_path": "cart.js", "old_string": "calcTotal", "new_string": "orderTotal", "replace_all": true});
    let r = edit(&env, rename.clone());
    assert_eq!(r["is_error"], false, "{r}");
    let out = r["output"].as_str().unwrap();
    assert!(
        out.contains("`calcTotal` is still used in `app.js` (lines 1, 2)."),
        "{out}"
    );
    assert!(
        !out.contains("notes.txt"),
        "a longer word is another name: {out}"
    );
    // The same edit again: made already, and the note says where to go on.
    let r = edit(&env, rename);
    assert_eq!(r["error_code"], "edit.already_applied", "{r}");
    assert!(
        r["output"]
            .as_str()
            .unwrap()
            .contains("`app.js` (lines 1, 2)"),
        "{r}"
    );
    // Once app.js is changed too, nothing is left to name.
    let r = edit(
        &env,
        json!({"file_path": "app.js", "old_string": "calcTotal", "new_string": "orderTotal", "replace_all": true}),
    );
    assert!(!r["output"].as_str().unwrap().contains("still used"), "{r}");
    // A word the file does not define is no rename (`true` made `false`,
    // while other files hold `true` too).
    env.write("a.toml", "debug = true\n");
    env.write("b.toml", "verbose = true\n");
    let r = edit(
        &env,
        json!({"file_path": "a.toml", "old_string": "true", "new_string": "false"}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    assert!(!r["output"].as_str().unwrap().contains("still used"), "{r}");
    // Text that is no single name is never looked for.
    let r = edit(
        &env,
        json!({"file_path": "cart.js", "old_string": "return 0;", "new_string": "return 1;"}),
    );
    assert!(!r["output"].as_str().unwrap().contains("still used"), "{r}");
}
