//! ag-ls, black-box: the tree picture, ignored and hidden entries counted,
//! the depth limit and the entry budget.

use crate::bin;
use crate::tree::project;
use crate::util::{Env, call, run_args};
use serde_json::{Value, json};

fn ls(env: &Env, args: Value) -> Value {
    let r = call(env, bin!("ag-ls"), args);
    assert_eq!(r["is_error"], false, "{r}");
    r
}

fn out(r: &Value) -> String {
    r["output"].as_str().unwrap().to_string()
}

#[test]
fn tree_picture_directories_first_ignored_and_hidden_counted() {
    let env = Env::new();
    let outside = project(&env);
    let r = ls(&env, json!({}));
    let text = out(&r).replace(outside.path().to_str().unwrap(), "OUTSIDE");
    assert_eq!(
        text,
        "\
./
├── assets/
│   └── logo.bin
├── docs/
│   ├── naïve café.md
│   └── 日本語.txt
├── escape -> OUTSIDE
├── loop -> .
├── src/
│   ├── util/ (1 dir, 1 file)
│   ├── lib.rs
│   └── main.rs
└── link_main.rs -> src/main.rs

[Not shown: 4 ignored (app.log, build/, target/, vendor/), 6 hidden (.env, .git/, .gitignore, .hidden/, .home/, .ignore); set include_ignored=true or include_hidden=true to list them.]
[Directories deeper than depth 2 show only their counts; list them by path or raise `depth`.]
"
    );
    let d = &r["details"];
    assert_eq!(d["ignored"], 4);
    // `.home` is the test's HOME.
    assert_eq!(d["hidden"], 6);
    assert_eq!(d["entries"][0], json!({"path": "assets", "type": "dir"}));
    assert_eq!(
        d["entries"][1],
        json!({"path": "assets/logo.bin", "type": "file"})
    );

    let r = ls(
        &env,
        json!({"path": "src", "depth": 3, "include_hidden": true, "include_ignored": true}),
    );
    assert_eq!(
        out(&r),
        "\
src/
├── util/
│   ├── build/
│   │   └── keep.rs
│   └── strings.rs
├── lib.rs
└── main.rs
"
    );
    let r = ls(&env, json!({"include_hidden": true, "depth": 1}));
    let text = out(&r);
    assert!(
        text.contains("├── .git/ (git's data, not listed)\n"),
        "{text}"
    );
    assert!(text.contains("├── .hidden/ (1 file)\n"), "{text}");
    assert!(
        text.contains(
            "[Not shown: 4 ignored (app.log, build/, target/, vendor/); set include_ignored=true"
        ),
        "{text}"
    );
}

#[test]
fn a_huge_directory_cannot_flood_the_listing() {
    let env = Env::new();
    for i in 0..1000 {
        env.write(&format!("node_modules/pkg{i:04}/index.js"), "");
    }
    env.write("src/main.rs", "");
    env.write("README.md", "");
    let r = ls(&env, json!({}));
    let text = out(&r);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() < 45, "{text}");
    assert!(text.contains("│   ├── pkg0000/ (1 file)\n"), "{text}");
    assert!(text.contains("│   └── … 970 more (970 dirs)\n"), "{text}");
    assert!(text.contains("├── src/\n│   └── main.rs\n"), "{text}");
    assert!(text.ends_with("raise `depth`.]\n"), "{text}");
    assert_eq!(r["details"]["truncated"], true);

    // Ignored, it is one counted line.
    env.write(".git/HEAD", "");
    env.write(".gitignore", "node_modules/\n");
    let r = ls(&env, json!({}));
    assert_eq!(
        out(&r),
        "./\n├── src/\n│   └── main.rs\n└── README.md\n\n[Not shown: 1 ignored (node_modules/), 3 hidden (.git/, .gitignore, .home/); set include_ignored=true or include_hidden=true to list them.]\n"
    );
}

#[test]
fn the_budget_is_spent_level_by_level() {
    let env = Env::new();
    for d in ["a", "b", "c"] {
        for i in 0..10 {
            env.write(&format!("{d}/f{i}.txt"), "");
        }
    }
    std::fs::create_dir(env.join("empty")).unwrap();
    env.write("only_hidden/.x", "");
    let r = ls(&env, json!({"limit": 7}));
    assert_eq!(
        out(&r),
        "\
./
├── a/
│   ├── f0.txt
│   ├── f1.txt
│   └── … 8 more (8 files)
├── b/ (10 files)
├── c/ (10 files)
├── empty/ (empty)
└── only_hidden/ (1 hidden or ignored)

[Not shown: 2 hidden (.home/, only_hidden/.x); set include_hidden=true to list them.]
[Some directories are cut short (`… N more`) to keep the listing within 7 entries and 30 per subdirectory; list one of them by its path, or raise `limit` (at most 5000).]
"
    );
    let r = ls(&env, json!({"path": "a", "limit": 3, "depth": 1}));
    assert!(
        out(&r).starts_with("a/\n├── f0.txt\n├── f1.txt\n├── f2.txt\n└── … 7 more (7 files)\n")
    );
}

#[test]
fn files_errors_and_plain_command_line() {
    let env = Env::new();
    let _outside = project(&env);
    let r = ls(&env, json!({"path": "src/main.rs"}));
    assert_eq!(out(&r), "src/main.rs\n");
    let r = call(&env, bin!("ag-ls"), json!({"path": "srcc"}));
    assert_eq!(r["error_code"], "ls.not_found");
    assert!(r["output"].as_str().unwrap().contains("`src`"));
    let r = call(&env, bin!("ag-ls"), json!({"depth": 11}));
    assert_eq!(r["error_code"], "ls.bad_depth");
    // A 0 the field cannot mean counts as absent: the default applies.
    let r = call(&env, bin!("ag-ls"), json!({"depth": 0}));
    assert_eq!(r["is_error"], false, "{r}");
    let r = run_args(&env, bin!("ag-ls"), &["docs", "-d", "1"]);
    r.ok();
    assert_eq!(r.stdout(), "docs/\n├── naïve café.md\n└── 日本語.txt\n");
    let r = run_args(&env, bin!("ag-ls"), &["nowhere"]);
    r.expect_code(1);
    assert!(
        r.stderr()
            .contains("ag-ls: error: Path not found: `nowhere`"),
        "{r}"
    );
}

#[test]
fn plain_notes_go_to_stderr_and_stay_in_the_model_text() {
    let env = Env::new();
    env.write("src/main.rs", "");
    env.write(".env", "");
    let r = run_args(&env, bin!("ag-ls"), &["."]);
    r.ok();
    assert_eq!(r.stdout(), "./\n└── src/\n    └── main.rs\n", "{r}");
    assert_eq!(
        r.stderr(),
        "ag-ls: note: Not shown: 2 hidden (.env, .home/); set include_hidden=true to list them.\n"
    );
    let r = ls(&env, json!({}));
    assert_eq!(
        out(&r),
        "./\n└── src/\n    └── main.rs\n\n[Not shown: 2 hidden (.env, .home/); set include_hidden=true to list them.]\n"
    );
}

#[test]
fn gitignore_counts_outside_a_git_repository() {
    let env = crate::util::Env::new();
    crate::tree::plain_project(&env);
    let r = ls(&env, json!({"depth": 3}));
    let text = out(&r);
    assert!(
        text.starts_with(
            "./\n├── src/\n│   └── a.txt\n└── sub/\n    └── kept.txt\n\n[Not shown: 4 ignored (build/, debug.log, sub/build/, sub/secret.txt)"
        ),
        "{text}"
    );
    assert_eq!(r["details"]["ignored"], 4, "{r}");
    let r = ls(&env, json!({"path": "sub"}));
    assert_eq!(r["details"]["ignored"], 2, "{r}");
    // Inside a repository, git's rules: the .gitignore above its top does not count.
    let env = crate::util::Env::new();
    crate::tree::repository_below_a_gitignore(&env);
    let r = ls(&env, json!({"path": "repo"}));
    assert!(out(&r).contains("notes.log"), "{r}");
    assert_eq!(r["details"]["ignored"], 1, "{r}");
}
