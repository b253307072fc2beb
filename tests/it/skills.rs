//! Agent Skills: real skill folders (tests/fixtures/skills/, one written
//! as Claude Code's documentation shows, one as pi's) found where users
//! keep them, listed in one line each, and loaded only when the scripted
//! model reads the SKILL.md under ag-loop's default sandbox.

use std::path::Path;

use serde_json::{Value, json};

use crate::bin;
use crate::model_server::{ModelServer, Turn};
use crate::util::{Env, run, run_args};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/skills");

/// Copies the fixture folder `from` (under tests/fixtures/skills) to `to`
/// in the test's directory.
pub fn copy(env: &Env, from: &str, to: &str) {
    fn walk(src: &Path, dst: &Path) {
        std::fs::create_dir_all(dst).unwrap();
        for e in std::fs::read_dir(src).unwrap().flatten() {
            let (s, d) = (e.path(), dst.join(e.file_name()));
            if s.is_dir() {
                walk(&s, &d);
            } else {
                std::fs::copy(&s, &d).unwrap();
            }
        }
    }
    walk(&Path::new(FIXTURES).join(from), &env.join(to));
}

/// A project with the Claude Code skill in `.claude/skills/` and the pi
/// skill in the person's `~/.agents/skills/`.
fn project() -> Env {
    let env = Env::new();
    std::fs::create_dir_all(env.join(".git")).unwrap();
    copy(&env, "claude", ".claude/skills");
    copy(&env, "pi", ".home/.agents/skills");
    env
}

fn system_of(request: &Value) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "system")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .unwrap_or_default()
}

#[test]
fn list_skills_shows_both_formats_and_names_a_broken_one() {
    let env = project();
    env.write(".agents/skills/broken/SKILL.md", "# no front matter\n");
    let r = run_args(&env, bin!("ag-loop"), &["--list-skills"]);
    r.ok();
    let out = r.stdout();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{r}");
    // The project's skill first, then the person's.
    let claude = env.join(".claude/skills/changelog-entry/SKILL.md");
    assert_eq!(
        lines[0],
        format!(
            "changelog-entry\tWrites a CHANGELOG.md entry for a change. Use when the user asks to record a change, bump a version, or prepare a release note.\t{}",
            claude.display()
        )
    );
    assert!(
        lines[1].starts_with("release-notes\tDrafts release notes from the git history"),
        "{r}"
    );
    assert!(
        r.stderr().contains("broken/SKILL.md is not listed") && r.stderr().contains("`---`"),
        "{r}"
    );
    // --no-skills: none; --skills with no such folder: a clear error.
    let none = run_args(&env, bin!("ag-loop"), &["--list-skills", "--no-skills"]);
    none.ok();
    assert_eq!(none.stdout(), "");
    let bad = run_args(
        &env,
        bin!("ag-loop"),
        &["--list-skills", "--skills", "nope"],
    );
    assert_eq!(bad.code(), Some(2), "{bad}");
    assert!(
        bad.stderr().contains("--skills `nope` is not a directory"),
        "{bad}"
    );
}

#[test]
fn skills_dir_is_searched_first_and_ag_home_last() {
    let env = project();
    // The same name in --skills wins over the project's.
    env.write(
        "mine/changelog-entry/SKILL.md",
        "---\nname: changelog-entry\ndescription: My own way.\n---\nbody\n",
    );
    env.write(
        ".home/.ag/skills/deploy/SKILL.md",
        "---\ndescription: Deploys the site.\n---\nbody\n",
    );
    let r = run_args(
        &env,
        bin!("ag-loop"),
        &["--list-skills", "--skills", "mine"],
    );
    r.ok();
    let out = r.stdout();
    let names: Vec<(&str, &str)> = out
        .lines()
        .map(|l| {
            let mut f = l.split('\t');
            (f.next().unwrap(), f.next().unwrap())
        })
        .collect();
    assert_eq!(
        names,
        vec![
            ("changelog-entry", "My own way."),
            ("release-notes", names[1].1),
            // No name: the folder's.
            ("deploy", "Deploys the site."),
        ],
        "{r}"
    );
}

#[test]
fn the_listing_costs_one_line_each_and_the_body_loads_when_read() {
    let env = project();
    let pi_skill = env.join(".home/.agents/skills/release-notes/SKILL.md");
    let claude_skill = env.join(".claude/skills/changelog-entry/SKILL.md");
    let server = ModelServer::start(vec![
        Turn::Tools(vec![(
            "read",
            json!({"file_path": pi_skill.display().to_string()}),
        )]),
        Turn::Tools(vec![(
            "read",
            json!({"file_path": claude_skill.display().to_string()}),
        )]),
        Turn::Text("Notes drafted."),
    ]);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["-m", "ollama/scripted", "--base-url", &server.base_url()])
        .args([
            "--json",
            "--no-gate",
            "--no-session",
            "draft the release notes",
        ]);
    let r = run(c, None);
    r.ok();
    let requests = server.requests();
    let first = system_of(&requests[0]);
    // Listed: name, description and path, one line each; no body.
    assert!(
        first.contains(&format!(
            "- release-notes: Drafts release notes from the git history since the last tag. Use before tagging a release. ({})",
            pi_skill.display()
        )),
        "{first}"
    );
    assert!(
        first.contains("- changelog-entry: Writes a CHANGELOG.md entry"),
        "{first}"
    );
    assert!(!first.contains("scripts/since-tag.sh"), "{first}");
    assert!(!first.contains("Keep the heading order"), "{first}");
    // Read under the default sandbox: both bodies reach the model.
    let ends: Vec<Value> = r
        .json_lines()
        .into_iter()
        .filter(|e| e["type"] == "tool_execution_end")
        .collect();
    assert_eq!(ends.len(), 2, "{r}");
    for e in &ends {
        assert_eq!(e["is_error"], false, "{e}");
    }
    let told = requests[2].to_string();
    assert!(told.contains("scripts/since-tag.sh"), "{told}");
    assert!(told.contains("Keep the heading order"), "{told}");
    // `allowed-tools` granted nothing: the tools offered are the usual ones.
    let tools = |req: &Value| req["tools"].to_string();
    let plain = ModelServer::start(vec![Turn::Text("ok")]);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["-m", "ollama/scripted", "--base-url", &plain.base_url()])
        .args(["--json", "--no-gate", "--no-session", "--no-skills", "go"]);
    run(c, None).ok();
    let without = plain.requests().remove(0);
    assert_eq!(tools(&requests[0]), tools(&without));
    assert!(!system_of(&without).contains("# Skills"));
}

#[test]
fn without_the_read_tool_no_skills_are_listed() {
    let env = project();
    let server = ModelServer::start(vec![Turn::Text("ok")]);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["-m", "ollama/scripted", "--base-url", &server.base_url()])
        .args([
            "--json",
            "--no-gate",
            "--no-session",
            "--tools",
            "chat",
            "hi",
        ]);
    run(c, None).ok();
    assert!(!system_of(&server.requests()[0]).contains("# Skills"));
}

/// A repository's skills written to do harm: a name of 20 MB (sent with
/// every request before), a name over the format's 64 characters, and a
/// name and a description full of terminal escape sequences (which
/// `--list-skills` printed as they were: a title change, a screen clear,
/// a hyperlink, text shown backwards).
#[test]
fn a_skills_name_is_one_short_word_and_nothing_listed_acts_on_the_terminal() {
    let env = Env::new();
    std::fs::create_dir_all(env.join(".git")).unwrap();
    let huge = format!(
        "---\nname: {}\ndescription: Huge.\n---\nbody\n",
        "n".repeat(20 << 20)
    );
    env.write(".agents/skills/huge/SKILL.md", &huge);
    let long = "a".repeat(65);
    env.write(
        ".agents/skills/long/SKILL.md",
        format!("---\nname: {long}\ndescription: Long.\n---\n"),
    );
    env.write(
        ".agents/skills/escapes/SKILL.md",
        "---\nname: \"es\u{7}cap\u{7f}es\u{9b}\"\ndescription: \"Clears\u{1b}[2J the screen,\u{1b}]8;;http://x\u{1b}\\\\links\u{1b}]8;;\u{1b}\\\\ and \u{202e}sdrawkcab\u{202c} text\"\n---\n",
    );
    let r = run_args(&env, bin!("ag-loop"), &["--list-skills"]);
    r.ok();
    let out = r.stdout();
    // One line, with nothing but text, tabs and the newline in it.
    assert_eq!(
        out,
        format!(
            "escapes\tClears[2J the screen,]8;;http://x\\\\links]8;;\\\\ and sdrawkcab text\t{}\n",
            env.join(".agents/skills/escapes/SKILL.md").display()
        ),
        "{r}"
    );
    let err = r.stderr();
    assert!(!err.chars().any(|c| c.is_control() && c != '\n'), "{err:?}");
    assert!(
        err.contains(&format!(
            "skill {} is not listed: it has a name of 65 characters, more than the 64 the Agent Skills format allows: write `name:` as one short word, like `name: {}`",
            env.join(".agents/skills/long/SKILL.md").display(),
            &long[..64]
        )),
        "{r}"
    );
    // The 20 MB name: only 256 KiB of the file is read, which ends inside
    // the name, so there is no skill to list.
    assert!(
        err.contains(&format!(
            "`{}` is 20.0 MiB; only its first 256 KiB is read",
            env.join(".agents/skills/huge/SKILL.md").display()
        )),
        "{r}"
    );
    assert!(
        err.contains(&format!(
            "skill {} is not listed: it has no front matter",
            env.join(".agents/skills/huge/SKILL.md").display()
        )),
        "{r}"
    );
    // A run's system prompt lists the same, cleaned, and nothing of the
    // 20 MB name.
    let server = ModelServer::start(vec![Turn::Text("ok")]);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["-m", "ollama/scripted", "--base-url", &server.base_url()])
        .args([
            "--json",
            "--no-gate",
            "--no-session",
            "--tools",
            "read",
            "hi",
        ]);
    run(c, None).ok();
    let system = system_of(&server.requests()[0]);
    assert!(
        system.contains("- escapes: Clears[2J the screen,"),
        "{system}"
    );
    assert!(!system.contains("nnnnnnnn"), "{}", system.len());
    assert!(!system.contains(&long), "{system}");
    assert!(
        !system.chars().any(|c| c.is_control() && c != '\n'),
        "{system:?}"
    );
}

/// A skills folder whose name holds an escape sequence is passed over,
/// and named on stderr with the sequence shown, not played.
#[test]
fn a_skills_folder_named_with_control_characters_is_passed_over() {
    let env = Env::new();
    std::fs::create_dir_all(env.join(".git")).unwrap();
    env.write(
        ".agents/skills/ok\u{1b}[31mred/SKILL.md",
        "---\nname: red\ndescription: Red.\n---\n",
    );
    let r = run_args(&env, bin!("ag-loop"), &["--list-skills"]);
    r.ok();
    assert_eq!(r.stdout(), "", "{r}");
    let err = r.stderr();
    assert!(
        err.contains("ok\\u{1b}[31mred` is not read: its name holds control characters"),
        "{r}"
    );
    assert!(!err.contains('\u{1b}'), "{err:?}");
}
