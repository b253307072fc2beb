//! Runs that end on evidence (issue 44): what the run's own record says it
//! did, in `agent_end` and `--result-line`, whatever the model claims; an
//! answer after attempts to change files that all failed, or after bash
//! commands that would have written files and changed none, sent back once;
//! the same successful call again and again ending the run with its work
//! kept; the first call of a small model's task asked to be a tool call,
//! and asked again when it came as text; and a question that still ends at
//! once.

use serde_json::{Value, json};

use crate::bin;
use crate::model_server::{ModelServer, Turn};
use crate::util::{Env, Run, of_type, run};

const NOTES: &str = "# Notes\n\nSome text.\n";

fn loop_run(env: &Env, server: &ModelServer, extra: &[&str], prompt: &str) -> Run {
    env.write("notes.md", NOTES);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["-m", "ollama/scripted", "--base-url", &server.base_url()])
        .args(["--no-gate", "--max-turns", "12"])
        .args(extra)
        .arg(prompt);
    run(c, None)
}

/// Whether a `note` event says `text`.
fn has_note(events: &[Value], text: &str) -> bool {
    events
        .iter()
        .any(|e| e["type"] == "note" && e["message"].as_str().is_some_and(|m| m.contains(text)))
}

/// A turn that calls `bash` to replace `from` in notes.md with `sed -i`.
fn sed_turn(from: &str) -> Turn {
    Turn::Tools(vec![(
        "bash",
        json!({"command": format!("sed -i 's/{from}/Other text/' notes.md")}),
    )])
}

/// A run asked to change the text in notes.md, the model answering with
/// `turns`, with `--json` and `extra`; it must succeed. The model server
/// comes back too, for the requests it was sent.
fn change_notes(env: &Env, turns: Vec<Turn>, extra: &[&str]) -> (ModelServer, Run) {
    let server = ModelServer::start(turns);
    let flags: Vec<&str> = ["--json"]
        .into_iter()
        .chain(extra.iter().copied())
        .collect();
    let r = loop_run(env, &server, &flags, "Change the text in notes.md.");
    r.ok();
    (server, r)
}

/// What each call of the run answered, in order.
fn outputs(r: &Run) -> Vec<String> {
    of_type(&r.json_lines(), "tool_execution_end")
        .iter()
        .map(|e| e["output"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn agent_end(r: &Run) -> Value {
    r.json_lines()
        .into_iter()
        .find(|e| e["type"] == "agent_end")
        .unwrap_or_else(|| panic!("no agent_end\n{r}"))
}

#[test]
fn a_claim_without_a_call_finishes_and_says_nothing_changed() {
    let env = Env::new();
    let server = ModelServer::start(vec![Turn::Text("I added the section to notes.md.")]);
    let r = loop_run(
        &env,
        &server,
        &["--json"],
        "Add a Usage section to notes.md.",
    );
    r.ok();
    let end = agent_end(&r);
    assert_eq!(end["outcome"], "finished", "{r}");
    assert_eq!(
        end["work"],
        json!({"calls": 0, "failed_calls": 0, "changed": []}),
        "{r}"
    );
    assert_eq!(String::from_utf8(env.read("notes.md")).unwrap(), NOTES);
    // The result line says the same without the prose.
    let server = ModelServer::start(vec![Turn::Text("I added the section to notes.md.")]);
    let r = loop_run(&env, &server, &["--result-line"], "Add a Usage section.");
    let line = &r.json_lines()[0];
    assert_eq!(line["changed"], json!([]), "{r}");
    assert_eq!(line["calls"], 0, "{r}");
}

#[test]
fn a_look_then_a_claim_says_nothing_changed_and_is_not_sent_back() {
    let env = Env::new();
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("ls", json!({}))]),
        Turn::Text("I removed the section."),
    ]);
    let r = loop_run(&env, &server, &["--json"], "Remove the text from notes.md.");
    r.ok();
    let end = agent_end(&r);
    assert_eq!(end["outcome"], "finished", "{r}");
    assert_eq!(end["work"]["calls"], 1, "{r}");
    assert_eq!(end["work"]["changed"], json!([]), "{r}");
    assert_eq!(
        server.requests().len(),
        2,
        "looking is no attempt to change"
    );
}

/// A change of notes.md whose first attempt (`miss`) leaves it as it was
/// and whose second (`hit`) lands, each followed by a claim: the first
/// claim goes back once with `statement` in what the model reads, and the
/// run ends `finished` with notes.md changed. Its `agent_end`.
fn first_claim_goes_back(env: &Env, miss: Turn, hit: Turn, statement: &str) -> Value {
    let (server, r) = change_notes(
        env,
        vec![
            miss,
            Turn::Text("I changed the text."),
            hit,
            Turn::Text("Changed."),
        ],
        &[],
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 4, "{r}");
    let sent_back = requests[2]["messages"].to_string();
    assert!(
        sent_back.contains("No file has changed during this request")
            && sent_back.contains(statement),
        "{sent_back}"
    );
    let end = agent_end(&r);
    assert_eq!(end["outcome"], "finished");
    assert_eq!(end["work"]["changed"], json!(["notes.md"]), "{r}");
    let notes = String::from_utf8(env.read("notes.md")).unwrap();
    assert!(notes.contains("Other text."), "{notes}");
    end
}

#[test]
fn an_answer_after_failed_edits_goes_back_once_with_what_failed() {
    let env = Env::new();
    let edit = |old: &str| {
        Turn::Tools(vec![(
            "edit",
            json!({"file_path": "notes.md", "old_string": old, "new_string": "Other text."}),
        )])
    };
    let end = first_claim_goes_back(&env, edit("Some txt."), edit("Some text."), "- `edit`: ");
    assert_eq!(end["work"]["failed_calls"], 1, "{end}");

    // Once only: a second answer after the same failures ends the run.
    let server = ModelServer::start(vec![
        Turn::Tools(vec![(
            "write",
            json!({"file_path": "/proc/nope/x", "content": "x"}),
        )]),
        Turn::Text("Written."),
        Turn::Text("Written, really."),
    ]);
    let r = loop_run(&env, &server, &["--json"], "Write the file.");
    r.ok();
    assert_eq!(server.requests().len(), 3, "{r}");
    assert_eq!(agent_end(&r)["work"]["changed"], json!([]), "{r}");
}

/// A look at git beside a patch that failed is no sign of a change: the
/// claim after both goes back once.
#[test]
fn a_git_status_beside_a_failed_patch_does_not_carry_the_claim() {
    let env = Env::new();
    crate::util::git(env.path(), &["init", "-q"]);
    let miss = Turn::Tools(vec![
        (
            "patch",
            json!({"patch": "https://example.com/settings.json"}),
        ),
        ("git_status", json!({})),
    ]);
    let hit = Turn::Tools(vec![(
        "edit",
        json!({"file_path": "notes.md", "old_string": "Some text.", "new_string": "Other text."}),
    )]);
    first_claim_goes_back(&env, miss, hit, "- `patch`: ");
}

/// A bash command that would write a file of the tree and leaves the tree
/// as it was (a `sed` whose pattern matches nothing) changed nothing: the
/// answer after it goes back once, naming the command. A command that only
/// reads or writes outside the tree, a write that landed, and a run
/// without checkpoints (nothing is known of what bash did) end at once.
#[test]
fn an_answer_after_bash_writes_that_changed_nothing_goes_back_once() {
    let env = Env::new();
    first_claim_goes_back(
        &env,
        sed_turn("Some txt"),
        sed_turn("Some text"),
        "sed -i 's/Some txt/Other text/' notes.md` (exited 0; it writes notes.md)",
    );

    for command in [
        "cat notes.md",
        "echo x > /dev/null",
        "printf '# Notes\\n\\nNew.\\n' > notes.md",
    ] {
        let (server, r) = change_notes(
            &env,
            vec![
                Turn::Tools(vec![("bash", json!({ "command": command }))]),
                Turn::Text("Done."),
            ],
            &[],
        );
        assert_eq!(server.requests().len(), 2, "{command}\n{r}");
    }
    let (server, r) = change_notes(
        &env,
        vec![sed_turn("Some txt"), Turn::Text("Changed.")],
        &["--no-checkpoints"],
    );
    assert_eq!(server.requests().len(), 2, "{r}");
}

/// A command that writes a file and leaves it as it was (a `sed` whose
/// pattern matched nothing) is named in its own result, before the model
/// sends it again; one that changed the file is not.
#[test]
fn a_command_that_writes_a_file_and_leaves_it_as_it_was_says_so_at_once() {
    let env = Env::new();
    let (_, r) = change_notes(
        &env,
        vec![
            sed_turn("Some txt"),
            sed_turn("Some text"),
            Turn::Text("Changed."),
        ],
        &["--no-checkpoints"],
    );
    let ends = outputs(&r);
    assert_eq!(ends.len(), 2, "{r}");
    assert!(
        ends[0].contains(
            "Note: `notes.md` is as before: this command writes it, but nothing in it changed"
        ),
        "{}",
        ends[0]
    );
    assert!(!ends[1].contains("is as before"), "{}", ends[1]);
    assert_eq!(env.read("notes.md"), b"# Notes\n\nOther text.\n");
}

/// A run that keeps no session (`--no-session`, as in CI) still knows what
/// `bash` changed in a git repository: checkpoints of its own, on a ref
/// that is gone when the run ends, with their private index.
#[test]
fn a_run_without_a_session_sees_what_bash_changed_and_leaves_no_checkpoints() {
    let env = committed_notes();
    let (server, r) = change_notes(
        &env,
        vec![
            sed_turn("Some txt"),
            Turn::Text("I changed the text."),
            sed_turn("Some text"),
            Turn::Text("Changed."),
        ],
        &["--no-session"],
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 4, "{r}");
    assert!(
        requests[2]["messages"]
            .to_string()
            .contains("No file has changed during this request"),
        "{r}"
    );
    let end = agent_end(&r);
    assert_eq!(end["work"]["changed"], json!(["notes.md"]), "{r}");
    // Taken, and gone now.
    let taken: Vec<Value> = r
        .json_lines()
        .into_iter()
        .filter(|e| e["type"] == "checkpoint")
        .collect();
    assert!(taken.len() >= 2, "{r}");
    assert_eq!(checkpoint_refs(&env), Vec::<String>::new(), "{r}");
    let index = env.join(".home/.ag/checkpoints/index");
    let left: Vec<_> = walk_files(&index);
    assert!(left.is_empty(), "{left:?}");
}

/// A run without a session killed outright (SIGKILL) leaves its
/// checkpoints; the next such run in the repository removes them, and
/// never those of a run still going.
#[test]
fn a_killed_runs_checkpoints_are_removed_by_the_next_run_and_a_live_ones_kept() {
    let env = committed_notes();
    let refs = || checkpoint_refs(&env);
    let append = |line: &str| {
        Turn::Tools(vec![(
            "bash",
            json!({"command": format!("echo {line} >> notes.md")}),
        )])
    };
    // The first run changes a file, then waits on the model for good.
    let stalled = ModelServer::start(vec![append("one"), Turn::Stall]);
    let mut first = env.cmd(bin!("ag-loop"));
    first
        .args(["-m", "ollama/scripted", "--base-url", &stalled.base_url()])
        .args(["--no-gate", "--no-session", "--json", "Add lines."])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut first = first.spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while stalled.requests().len() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the first run never got to its second request"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let kept = refs();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(kept[0].starts_with("refs/ag/checkpoints/run-"), "{kept:?}");

    // A run beside it leaves the live run's checkpoints alone.
    let second_in = |server: &ModelServer, home: Option<&std::path::Path>| {
        let mut c = env.cmd(bin!("ag-loop"));
        c.args(["-m", "ollama/scripted", "--base-url", &server.base_url()])
            .args(["--no-gate", "--no-session", "--json", "Add a line."]);
        if let Some(home) = home {
            c.env("AG_HOME", home);
        }
        run(c, None)
    };
    let second = |server: &ModelServer| second_in(server, None);
    let server = ModelServer::start(vec![append("two"), Turn::Text("Added.")]);
    let r = second(&server);
    r.ok();
    assert_eq!(agent_end(&r)["work"]["changed"], json!(["notes.md"]), "{r}");
    assert_eq!(refs(), kept, "{r}");

    // Killed, it cannot remove them; the next run does.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(first.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    first.wait().unwrap();
    assert_eq!(refs(), kept);
    // A run of another AG_HOME (another user's) cannot see its lock, and
    // leaves its ref alone.
    let elsewhere = Env::new();
    let server = ModelServer::start(vec![append("two"), Turn::Text("Added.")]);
    second_in(&server, Some(elsewhere.path())).ok();
    assert_eq!(refs(), kept);
    env.write("notes.md", format!("{NOTES}one\ntwo\n"));
    let server = ModelServer::start(vec![append("three"), Turn::Text("Added.")]);
    let r = second(&server);
    r.ok();
    assert_eq!(refs(), Vec::<String>::new(), "{r}");
    let left = walk_files(&env.join(".home/.ag/checkpoints/index"));
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(
        String::from_utf8(env.read("notes.md")).unwrap(),
        format!("{NOTES}one\ntwo\nthree\n")
    );
}

/// A git repository with notes.md committed; HOME (and so AG_HOME) is
/// inside the directory, and ignored.
fn committed_notes() -> Env {
    let env = Env::new();
    env.write("notes.md", NOTES);
    env.write(".gitignore", ".home/\n");
    crate::util::git(env.path(), &["init", "-q"]);
    crate::util::git(env.path(), &["add", "."]);
    crate::util::git(env.path(), &["commit", "-q", "-m", "start"]);
    env
}

/// The checkpoint refs of the repository at `env`.
fn checkpoint_refs(env: &Env) -> Vec<String> {
    let out = std::process::Command::new("git")
        .args(["for-each-ref", "--format=%(refname)", "refs/ag/"])
        .current_dir(env.path())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Every file under `dir` (none when it does not exist).
fn walk_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk_files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn the_same_successful_call_again_and_again_ends_the_run_with_its_work_kept() {
    let env = Env::new();
    let write = (
        "write",
        json!({"file_path": "notes.md", "content": "# Notes\n\nDone.\n"}),
    );
    let server = ModelServer::start((0..8).map(|_| Turn::Tools(vec![write.clone()])).collect());
    let r = loop_run(&env, &server, &["--json"], "Replace the text with Done.");
    // Work done and kept: exit 0, not the turn limit's failure.
    r.ok();
    let end = agent_end(&r);
    assert_eq!(end["outcome"], "repeated_call", "{r}");
    assert_eq!(end["work"]["changed"], json!(["notes.md"]), "{r}");
    assert!(
        end["error"].as_str().unwrap().contains("its work is kept"),
        "{r}"
    );
    assert_eq!(server.requests().len(), 5, "{r}");
    assert_eq!(
        String::from_utf8(env.read("notes.md")).unwrap(),
        "# Notes\n\nDone.\n"
    );

    // The same edit again after it landed fails (its old text is gone):
    // the model reads that it is done, and the fifth stops the run, the
    // work kept.
    let edit = (
        "edit",
        json!({"file_path": "notes.md", "old_string": "Some text.", "new_string": "Done."}),
    );
    let server = ModelServer::start((0..8).map(|_| Turn::Tools(vec![edit.clone()])).collect());
    let r = loop_run(&env, &server, &["--json"], "Replace the text with Done.");
    r.ok();
    let end = agent_end(&r);
    assert_eq!(end["outcome"], "repeated_call", "{r}");
    assert_eq!(end["work"]["changed"], json!(["notes.md"]), "{r}");
    assert_eq!(server.requests().len(), 5, "{r}");
    assert!(
        server.requests()[2]["messages"]
            .to_string()
            .contains("This same call succeeded earlier in this request"),
        "{r}"
    );

    // Looking again and again at a tree that nothing changed is no success.
    // The second look brings back the request, in the prompt's own words
    // (not the files ag showed with it).
    let server = ModelServer::start(
        (0..8)
            .map(|_| Turn::Tools(vec![("ls", json!({}))]))
            .collect(),
    );
    let r = loop_run(
        &env,
        &server,
        &["--json", "--show-context", "always"],
        "Commit the change.",
    );
    assert_eq!(r.code(), Some(1), "{r}");
    assert_eq!(agent_end(&r)["outcome"], "repeated_call", "{r}");
    let looks = outputs(&r);
    assert!(!looks[0].contains("The request was"), "{r}");
    assert!(
        looks[1].contains("The request was: \"Commit the change.\" Act on it now"),
        "{r}"
    );
    assert!(!looks[2].contains("The request was"), "{r}");
    assert!(
        server.requests()[1]["messages"]
            .to_string()
            .contains("[Attached"),
        "the files were shown: {r}"
    );

    // A prompt of an attached file alone has no words to quote back.
    let server = ModelServer::start(
        (0..3)
            .map(|_| Turn::Tools(vec![("ls", json!({}))]))
            .collect(),
    );
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["-m", "ollama/scripted", "--base-url", &server.base_url()])
        .args(["--no-gate", "--max-turns", "3", "--json"]);
    let r = run(
        c,
        Some(br#"{"type":"prompt","content":[],"attachments":["notes.md"]}"#),
    );
    let events = r.json_lines();
    let looks = of_type(&events, "tool_execution_end");
    assert!(looks.len() >= 2, "{r}");
    assert!(
        !looks[1]["output"]
            .as_str()
            .unwrap()
            .contains("The request was"),
        "{r}"
    );
}

/// A command that runs and fails the same way five times (a `cp` of a file
/// that is not there) is a repeated failure, not a repeated call whose
/// work is kept; and what a failing command printed is the failure a later
/// repeated look is pointed back to.
#[test]
fn the_same_failing_command_again_and_again_is_a_repeated_failure() {
    let env = Env::new();
    let copy = ("bash", json!({"command": "cp sales.csv backup.csv"}));
    let server = ModelServer::start((0..8).map(|_| Turn::Tools(vec![copy.clone()])).collect());
    let r = loop_run(&env, &server, &["--json"], "Back up the sales file.");
    assert_eq!(r.code(), Some(1), "{r}");
    let end = agent_end(&r);
    assert_eq!(end["outcome"], "repeated_failure", "{r}");
    assert!(
        end["error"].as_str().unwrap().contains("exited non-zero"),
        "{r}"
    );
    assert_eq!(server.requests().len(), 5, "{r}");

    let mut turns = vec![Turn::Tools(vec![(
        "bash",
        json!({"command": "echo 'Please tell me who you are.' >&2; exit 128"}),
    )])];
    turns.extend((0..3).map(|_| Turn::Tools(vec![("ls", json!({}))])));
    turns.push(Turn::Text("Done."));
    let server = ModelServer::start(turns);
    let r = loop_run(&env, &server, &["--json"], "Commit the change.");
    let events = r.json_lines();
    let looks = of_type(&events, "tool_execution_end");
    assert!(
        looks[3]["output"].as_str().unwrap().contains(
            "The last call that failed was `bash`, and it said: \"Please tell me who you are."
        ),
        "{r}"
    );
}

#[test]
fn ags_own_answer_written_back_is_refused_and_the_file_kept() {
    // A weak model, told "Overwrote copy.js (302 bytes)", wrote that line
    // over the file it had just fixed; told it was notified, it notified
    // the person of that.
    let env = Env::new();
    let fixed = "# Notes\n\nDone.\n";
    let server = ModelServer::start(vec![
        Turn::Tools(vec![(
            "write",
            json!({"file_path": "notes.md", "content": fixed}),
        )]),
        Turn::Tools(vec![(
            "write",
            json!({"file_path": "notes.md", "content": "Overwrote notes.md (15 bytes)"}),
        )]),
        Turn::Tools(vec![("notify", json!({"message": "The notes are done."}))]),
        Turn::Tools(vec![(
            "notify",
            json!({"message": "The person was notified; carry on."}),
        )]),
        // The same news again: the person has it already.
        Turn::Tools(vec![("notify", json!({"message": "The notes are done. "}))]),
        Turn::Text("Done."),
    ]);
    let r = loop_run(&env, &server, &["--json"], "Replace the text with Done.");
    r.ok();
    assert_eq!(String::from_utf8(env.read("notes.md")).unwrap(), fixed);
    let events = r.json_lines();
    let ends = of_type(&events, "tool_execution_end");
    assert_eq!(ends.len(), 5, "{r}");
    assert_eq!(ends[0]["is_error"], false, "{r}");
    assert_eq!(ends[1]["is_error"], true, "{r}");
    let said = ends[1]["output"].as_str().unwrap();
    assert!(
        said.contains("`content` is ag's answer to your earlier `write` call (\"Overwrote notes.md (15 bytes)\")"),
        "{said}"
    );
    assert!(said.contains("nothing was written"), "{said}");
    // The first notify reached the person; the echo of its answer did not.
    assert_eq!(of_type(&events, "notify").len(), 1, "{r}");
    assert_eq!(ends[3]["is_error"], true, "{r}");
    assert!(
        ends[3]["output"]
            .as_str()
            .unwrap()
            .contains("nothing was sent to the person"),
        "{r}"
    );
    assert_eq!(ends[4]["is_error"], true, "{r}");
    assert!(
        ends[4]["output"].as_str().unwrap().starts_with(
            "The person was already notified of exactly this (\"The notes are done.\")"
        ),
        "{r}"
    );
    let end = agent_end(&r);
    assert_eq!(end["work"]["changed"], json!(["notes.md"]), "{r}");
    assert_eq!(end["work"]["failed_calls"], 3, "{r}");
}

#[test]
fn a_question_ends_at_once_with_or_without_a_look() {
    let env = Env::new();
    let server = ModelServer::start(vec![Turn::Text("It prints the notes.")]);
    let r = loop_run(&env, &server, &["--json"], "What does notes.md say?");
    r.ok();
    assert_eq!(server.requests().len(), 1);
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("read", json!({"file_path": "notes.md"}))]),
        Turn::Text("It says: some text."),
    ]);
    let r = loop_run(&env, &server, &["--json"], "What does notes.md say?");
    r.ok();
    assert_eq!(server.requests().len(), 2);
    assert_eq!(agent_end(&r)["work"]["calls"], 1);
}

#[test]
fn a_small_models_first_call_of_a_task_must_be_a_tool_call() {
    let env = Env::new();
    let turns = || {
        vec![
            Turn::Tools(vec![("read", json!({"file_path": "notes.md"}))]),
            Turn::Text("It says: some text."),
        ]
    };
    // A window of a small local model: the first request asks for a call,
    // the next leaves the model free to answer.
    let server = ModelServer::start(turns());
    let mut c = env.cmd(bin!("ag-loop"));
    env.write("notes.md", NOTES);
    c.env("AG_CONTEXT_WINDOW", "32768")
        .args(["-m", "ollama/scripted", "--base-url", &server.base_url()])
        .args(["--json", "--no-gate", "What does notes.md say?"]);
    run(c, None).ok();
    let requests = server.requests();
    assert_eq!(requests[0]["tool_choice"], "required");
    assert!(requests[1].get("tool_choice").is_none(), "{}", requests[1]);

    // A large window: free from the start, unless the flag says otherwise.
    for (window, flag, want) in [
        ("200000", None, None),
        ("200000", Some("required"), Some("required")),
        ("32768", Some("auto"), None),
    ] {
        let server = ModelServer::start(turns());
        let mut c = env.cmd(bin!("ag-loop"));
        c.env("AG_CONTEXT_WINDOW", window)
            .args(["-m", "ollama/scripted", "--base-url", &server.base_url()])
            .args(["--json", "--no-gate"]);
        if let Some(f) = flag {
            c.args(["--first-call", f]);
        }
        c.arg("What does notes.md say?");
        run(c, None).ok();
        let first = &server.requests()[0];
        assert_eq!(
            first.get("tool_choice").and_then(Value::as_str),
            want,
            "{window} {flag:?}"
        );
    }
}

/// A server that does not enforce `tool_choice: "required"` (llama.cpp
/// with a chat template whose calls it parses but cannot constrain) lets a
/// small model answer the first request in text. ag withdraws that answer
/// and asks the same request again, once; a second such answer goes back
/// once with a statement; the model then works, and a question still gets
/// its answer.
#[test]
fn a_first_answer_in_text_despite_a_required_call_is_asked_again_then_goes_back() {
    let env = Env::new();
    let claim = "I added the Usage section to notes.md.";
    let edit = || {
        Turn::Tools(vec![(
            "edit",
            json!({"file_path": "notes.md", "old_string": "Some text.", "new_string": "Some text.\n\n## Usage\n"}),
        )])
    };
    let server = ModelServer::start(vec![
        Turn::Text(claim),
        edit(),
        Turn::Text("Added the Usage section."),
    ]);
    let r = loop_run(
        &env,
        &server,
        &["--json", "--first-call", "required"],
        "Add a Usage section to notes.md.",
    );
    r.ok();
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{r}");
    // The second request is the first again, still asking for a call, and
    // no later one holds the claim.
    assert_eq!(requests[1]["messages"], requests[0]["messages"], "{r}");
    assert_eq!(requests[1]["tool_choice"], "required", "{r}");
    assert!(!requests[2].to_string().contains(claim), "{}", requests[2]);
    let events = r.json_lines();
    let withdrawn = of_type(&events, "withdrawn");
    assert_eq!(withdrawn.len(), 1, "{r}");
    assert!(
        withdrawn[0]["reason"]
            .as_str()
            .unwrap()
            .contains("asked to be a tool call"),
        "{r}"
    );
    let end = agent_end(&r);
    assert_eq!(end["outcome"], "finished", "{r}");
    assert_eq!(end["work"]["changed"], json!(["notes.md"]), "{r}");
    assert!(!end["messages"].to_string().contains(claim), "{r}");
    assert!(
        String::from_utf8(env.read("notes.md"))
            .unwrap()
            .contains("## Usage")
    );

    // Text again: it goes back with the statement, after the answer, and
    // the next request is free.
    let server = ModelServer::start(vec![
        Turn::Text(claim),
        Turn::Text(claim),
        edit(),
        Turn::Text("Added the Usage section."),
    ]);
    let r = loop_run(
        &env,
        &server,
        &["--json", "--first-call", "required"],
        "Add a Usage section to notes.md.",
    );
    r.ok();
    let requests = server.requests();
    assert_eq!(requests.len(), 4, "{r}");
    let messages = requests[2]["messages"].as_array().unwrap();
    assert_eq!(messages[messages.len() - 2]["role"], "assistant", "{r}");
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user", "{last}");
    assert!(
        last["content"]
            .as_str()
            .unwrap()
            .starts_with("No tool has been called during this request"),
        "{last}"
    );
    assert!(requests[2].get("tool_choice").is_none(), "{}", requests[2]);
    assert_eq!(of_type(&r.json_lines(), "withdrawn").len(), 1, "{r}");
    assert_eq!(agent_end(&r)["work"]["changed"], json!(["notes.md"]), "{r}");

    // Only so far: a third text answer is the answer; a question that
    // looked first is neither asked again nor sent back; nor is a text
    // answer when the first call is free.
    let look = || Turn::Tools(vec![("read", json!({"file_path": "notes.md"}))]);
    for (turns, first_call, requests) in [
        (
            vec![
                Turn::Text("Some text."),
                Turn::Text("Some text."),
                Turn::Text("It says: some text."),
            ],
            "required",
            3,
        ),
        (
            vec![look(), Turn::Text("It says: some text.")],
            "required",
            2,
        ),
        (vec![Turn::Text("It says some text.")], "auto", 1),
    ] {
        let server = ModelServer::start(turns);
        let r = loop_run(
            &env,
            &server,
            &["--json", "--first-call", first_call],
            "What does notes.md say?",
        );
        r.ok();
        assert_eq!(server.requests().len(), requests, "{first_call}\n{r}");
        assert_eq!(agent_end(&r)["outcome"], "finished", "{r}");
    }

    // The limits hold: with one turn, the text answer is the answer.
    let server = ModelServer::start(vec![Turn::Text(claim)]);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["-m", "ollama/scripted", "--base-url", &server.base_url()])
        .args([
            "--no-gate",
            "--max-turns",
            "1",
            "--json",
            "--first-call",
            "required",
        ])
        .arg("Add a Usage section to notes.md.");
    let r = run(c, None);
    assert_eq!(server.requests().len(), 1, "{r}");
    assert!(of_type(&r.json_lines(), "withdrawn").is_empty(), "{r}");
}

/// A resumed session leaves a withdrawn answer out too: the session file
/// keeps it, and the conversation the next prompt continues does not.
#[test]
fn a_withdrawn_answer_stays_out_of_a_resumed_session() {
    let env = Env::new();
    env.write("notes.md", NOTES);
    let claim = "I added the Usage section to notes.md.";
    let server = ModelServer::start(vec![
        Turn::Text(claim),
        Turn::Tools(vec![("read", json!({"file_path": "notes.md"}))]),
        Turn::Text("It has no Usage section yet."),
        Turn::Text("Nothing else."),
    ]);
    let session = |prompt: &str, more: &[&str]| {
        let mut c = env.cmd(bin!("ag-loop"));
        c.args(["-m", "ollama/scripted", "--base-url", &server.base_url()])
            .args(["--no-gate", "--json"])
            .args(more)
            .arg(prompt);
        run(c, None)
    };
    session(
        "Add a Usage section to notes.md.",
        &["--first-call", "required"],
    )
    .ok();
    let r = session("Anything else?", &["--continue", "--first-call", "auto"]);
    r.ok();
    let requests = server.requests();
    assert_eq!(requests.len(), 4, "{r}");
    let resumed = requests[3]["messages"].to_string();
    assert!(!resumed.contains(claim), "{resumed}");
    assert!(
        resumed.contains("It has no Usage section yet."),
        "{resumed}"
    );
}

/// Such a first answer that rambles on is stopped once it is long: it is
/// asked again whatever it says.
#[test]
fn a_long_first_answer_in_text_despite_a_required_call_is_stopped_and_goes_back() {
    let env = Env::new();
    let ramble: String = (0..100)
        .map(|i| format!("Step {i}: I renamed the function in part {i} of the file. "))
        .collect();
    let server = ModelServer::start(vec![
        Turn::Owned(ramble.clone()),
        Turn::Tools(vec![("read", json!({"file_path": "notes.md"}))]),
        Turn::Text("Nothing to rename: notes.md has no function."),
    ]);
    let r = loop_run(
        &env,
        &server,
        &["--json", "--first-call", "required"],
        "Rename the function in notes.md.",
    );
    r.ok();
    assert_eq!(server.requests().len(), 3, "{r}");
    let events = r.json_lines();
    let first = events
        .iter()
        .find(|e| e["type"] == "message_end" && e["message"]["role"] == "assistant")
        .unwrap();
    assert_eq!(first["message"]["stop_reason"], "length", "{r}");
    assert!(
        has_note(&events, "asked to be a tool call, ran past 2000 bytes"),
        "{r}"
    );
    // A long text answer when the call is free is read to its end.
    let server = ModelServer::start(vec![Turn::Owned(ramble.clone())]);
    let r = loop_run(
        &env,
        &server,
        &["--json", "--first-call", "auto"],
        "Rename the function in notes.md.",
    );
    r.ok();
    let end = agent_end(&r);
    assert_eq!(server.requests().len(), 1, "{r}");
    assert_eq!(end["outcome"], "finished", "{r}");
    assert!(!r.stdout().contains("ran past"), "{r}");
}

/// A write that a gate (or a person) refused is no failed attempt of the
/// model's: its answer goes to whoever said no, as it is.
#[test]
fn an_answer_after_a_denied_write_is_not_sent_back() {
    let env = Env::new();
    env.write(
        "gate.sh",
        "cat > /dev/null\necho '{\"decision\":\"deny\",\"reason\":\"no writes today\"}'\n",
    );
    let server = ModelServer::start(vec![
        Turn::Tools(vec![(
            "write",
            json!({"file_path": "notes.md", "content": "x"}),
        )]),
        Turn::Text("The write was refused, so I left the file alone."),
    ]);
    env.write("notes.md", NOTES);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["-m", "ollama/scripted", "--base-url", &server.base_url()])
        .args(["--json", "--gate", "sh gate.sh", "Write x to notes.md."]);
    let r = run(c, None);
    r.ok();
    assert_eq!(server.requests().len(), 2, "{r}");
    assert_eq!(agent_end(&r)["work"]["failed_calls"], 1, "{r}");
}

#[test]
fn an_answer_stuck_in_a_loop_is_cut_after_its_second_copy() {
    let env = Env::new();
    let block = "I added the section.\n```bash\necho done\n```\n";
    let server = ModelServer::start(vec![Turn::Owned(format!("Done.\n{}", block.repeat(80)))]);
    let r = loop_run(
        &env,
        &server,
        &["--json"],
        "Add a Usage section to notes.md.",
    );
    r.ok();
    let events = r.json_lines();
    let end = events
        .iter()
        .rev()
        .find(|e| e["type"] == "message_end" && e["message"]["role"] == "assistant")
        .unwrap_or_else(|| panic!("no answer\n{r}"));
    let text = end["message"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.len() < 3 * block.len() + 8,
        "not cut: {} bytes\n{r}",
        text.len()
    );
    assert!(text.contains(block), "{text}");
    assert_eq!(end["message"]["stop_reason"], "length", "{r}");
    let note = events
        .iter()
        .find(|e| e["type"] == "note")
        .unwrap_or_else(|| panic!("no note\n{r}"));
    assert!(
        note["message"]
            .as_str()
            .unwrap()
            .contains(&format!("repeated the same {} characters", block.len())),
        "{note}"
    );
    assert_eq!(agent_end(&r)["outcome"], "finished", "{r}");
}

/// A small model that loops inside a call (one hunk, over and over)
/// never closes it: the call is stopped, not run, and the model is told
/// and goes on. Only once a prompt, as a file may repeat on purpose.
#[test]
fn a_call_whose_arguments_loop_is_stopped_and_not_run() {
    let env = Env::new();
    let hunk = "@@ -1,3 +1,3 @@\n-# Notes\n+# Notes\n \n Some text.\n";
    let looping = format!(
        "*** Begin Patch\n*** Update File: notes.md\n{}",
        hunk.repeat(40)
    );
    let again = format!(
        "*** Begin Patch\n*** Add File: copy.md\n{}*** End Patch\n",
        "+the same line, on purpose, many times over, as a template may want\n".repeat(40)
    );
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("patch", json!({"patch": looping}))]),
        Turn::Tools(vec![("patch", json!({"patch": again}))]),
        Turn::Text("Done."),
    ]);
    let r = loop_run(&env, &server, &["--json"], "Fix the heading in notes.md.");
    r.ok();
    let events = r.json_lines();
    assert_eq!(server.requests().len(), 3, "{r}");
    let told = server.requests()[1]["messages"].to_string();
    assert!(
        told.contains("Your `patch` call was not run: its arguments repeated the same"),
        "{told}"
    );
    assert!(has_note(&events, "call repeated the same"), "{r}");
    assert_eq!(env.read("notes.md"), NOTES.as_bytes());
    // The first call never ran; the second, though it repeats a line, did.
    let runs: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_execution_start")
        .collect();
    assert_eq!(runs.len(), 1, "{r}");
    assert!(env.read("copy.md").starts_with(b"the same line"));
    let first = events
        .iter()
        .find(|e| e["type"] == "message_end" && e["message"]["role"] == "assistant")
        .unwrap();
    assert_eq!(first["message"]["stop_reason"], "length", "{r}");
}

#[test]
fn an_answer_that_goes_on_in_blank_lines_is_cut_before_them() {
    let env = Env::new();
    let answer = "Done: the section is in notes.md.";
    let server = ModelServer::start(vec![Turn::Owned(format!("{answer}\n{}", "\n".repeat(600)))]);
    let r = loop_run(&env, &server, &["--json"], "Is notes.md in Markdown?");
    r.ok();
    let events = r.json_lines();
    let end = events
        .iter()
        .rev()
        .find(|e| e["type"] == "message_end" && e["message"]["role"] == "assistant")
        .unwrap_or_else(|| panic!("no answer\n{r}"));
    assert_eq!(end["message"]["content"][0]["text"], answer, "{r}");
    assert_eq!(end["message"]["stop_reason"], "length", "{r}");
    assert!(has_note(&events, "nothing but whitespace"), "{r}");
}

#[test]
fn a_small_windows_patch_deletes_no_file() {
    // The default set leaves `delete` out for a small window; a patch may
    // not delete a file there either. A larger window, or a set that
    // names `delete`, deletes as before.
    let deletes = |window: &str, extra: &[&str]| {
        let env = Env::new();
        env.write("keep.py", "def used():\n    return 1\n");
        let server = ModelServer::start(vec![
            Turn::Tools(vec![(
                "patch",
                json!({"patch": "*** Begin Patch\n*** Delete File: keep.py\n*** End Patch"}),
            )]),
            Turn::Text("Deleted it."),
        ]);
        let mut c = env.cmd(bin!("ag-loop"));
        c.env("AG_CONTEXT_WINDOW", window)
            .args(["-m", "ollama/scripted", "--base-url", &server.base_url()])
            .args(["--json", "--no-gate", "--first-call", "auto"])
            .args(extra)
            .arg("Delete the unused function of keep.py.");
        let r = run(c, None);
        r.ok();
        let answered = server.requests()[1]["messages"].to_string();
        (!env.join("keep.py").exists(), answered, r)
    };
    let (gone, answered, r) = deletes("32768", &[]);
    assert!(!gone, "{r}");
    assert!(
        answered.contains("the patch deletes `keep.py`, and this run deletes no files"),
        "{answered}"
    );
    assert!(
        answered.contains("`-` lines under `*** Update File: keep.py`"),
        "{answered}"
    );
    assert_eq!(agent_end(&r)["work"]["changed"], json!([]), "{r}");
    let (gone, _, r) = deletes("200000", &[]);
    assert!(gone, "{r}");
    let (gone, _, r) = deletes("32768", &["--tools", "minimal"]);
    assert!(gone, "{r}");
}

/// An edit that looks for the request's own words in a file is told where
/// that text came from; the edit of the file's own text after it lands.
#[test]
fn an_edit_of_the_requests_words_is_told_they_are_not_the_files() {
    let env = Env::new();
    let server = ModelServer::start(vec![
        Turn::Tools(vec![(
            "edit",
            json!({"file_path": "notes.md", "old_string": "the section about plants", "new_string": "Plants"}),
        )]),
        Turn::Tools(vec![(
            "edit",
            json!({"file_path": "notes.md", "old_string": "Some text.", "new_string": "Plants."}),
        )]),
        Turn::Text("Done."),
    ]);
    let r = loop_run(
        &env,
        &server,
        &["--json"],
        "Rename the section about plants in notes.md.",
    );
    r.ok();
    let events = r.json_lines();
    let ends = of_type(&events, "tool_execution_end");
    assert_eq!(ends.len(), 2, "{r}");
    let first = ends[0]["output"].as_str().unwrap();
    assert!(
        first.contains("Note: `the section about plants` comes from the request's words, and `notes.md` does not hold it."),
        "{first}"
    );
    let second = ends[1]["output"].as_str().unwrap();
    assert!(!second.contains("request's words"), "{second}");
    assert_eq!(env.read("notes.md"), b"# Notes\n\nPlants.\n");
}

/// ag's note on a repeated look, copied back as a task list's item (a weak
/// model did so), is refused as ag's own words and changes nothing.
#[test]
fn a_sentence_of_ags_own_note_sent_back_as_content_is_refused() {
    let env = Env::new();
    let read = || Turn::Tools(vec![("read", json!({"file_path": "notes.md"}))]);
    let server = ModelServer::start(vec![
        read(),
        read(),
        Turn::Tools(vec![(
            "todo",
            json!({"action": "set", "items": [{"content": "Change the files it needs changed, or answer it if it asks a question."}]}),
        )]),
        Turn::Text("Done."),
    ]);
    let r = loop_run(&env, &server, &["--json"], "Tidy up notes.md.");
    let events = r.json_lines();
    let ends = of_type(&events, "tool_execution_end");
    assert_eq!(ends.len(), 3, "{r}");
    assert!(
        ends[1]["output"]
            .as_str()
            .is_some_and(|o| o.contains("Act on it now")),
        "{r}"
    );
    assert_eq!(ends[2]["is_error"], true, "{r}");
    assert!(
        ends[2]["output"]
            .as_str()
            .is_some_and(|o| o.contains("is copied from ag's own note to you")
                && o.contains("the task list was not changed")),
        "{r}"
    );
    assert_eq!(env.read("notes.md"), NOTES.as_bytes());
}

/// Calls of one message that may change files run in the order asked, one
/// after another: the first here takes longer, and still lands first. Run
/// at once, an edit and a write of one file race.
#[test]
fn a_messages_changes_run_in_the_order_asked() {
    let env = Env::new();
    let server = ModelServer::start(vec![
        Turn::Tools(vec![
            (
                "bash",
                json!({"command": "sleep 0.5; echo one >> order.txt"}),
            ),
            ("bash", json!({"command": "echo two >> order.txt"})),
            (
                "edit",
                json!({"file_path": "order.txt", "old_string": "two", "new_string": "three"}),
            ),
        ]),
        Turn::Text("done"),
    ]);
    let r = loop_run(&env, &server, &["--json"], "Write the order.");
    r.ok();
    assert_eq!(env.read("order.txt"), b"one\nthree\n", "{r}");
    assert!(outputs(&r).iter().all(|o| !o.contains("not found")), "{r}");
}

/// The prompt as ag gave it is no file's text: a write of the request, or
/// of a line naming an attached file, is refused and nothing is written (a
/// small model wrote its request, with the file list and the file shown,
/// over the project's README).
#[test]
fn a_write_of_the_prompt_as_ag_gave_it_is_refused() {
    let env = Env::new();
    env.write("README.md", "# Shop\n");
    let request = "The notes say the wrong thing, please tidy @notes.md";
    let shown = format!("[Attached file `notes.md` ({} bytes)]", NOTES.len());
    for content in [format!("{shown}\n{NOTES}"), format!("{request}\n")] {
        let server = ModelServer::start(vec![
            Turn::Tools(vec![(
                "write",
                json!({"file_path": "README.md", "content": content}),
            )]),
            Turn::Text("Done."),
        ]);
        let r = loop_run(&env, &server, &["--json"], request);
        r.ok();
        assert_eq!(env.read("README.md"), b"# Shop\n", "{r}");
        let events = r.json_lines();
        let end = of_type(&events, "tool_execution_end");
        assert_eq!(end[0]["is_error"], true, "{r}");
        let out = end[0]["output"].as_str().unwrap();
        assert!(out.contains("nothing was written"), "{out}");
        let why = if content.starts_with('[') {
            format!("`{shown}`, ag's line naming")
        } else {
            "the request itself".to_string()
        };
        assert!(out.contains(&why), "{out}");
    }
}

/// One call sent again and again in one answer runs once: the answer is
/// stopped, the copies are taken out, and the model reads why. Two copies
/// of a call still run as sent.
#[test]
fn the_same_call_many_times_in_one_answer_runs_once() {
    let env = Env::new();
    let read = || ("read", json!({"file_path": "notes.md"}));
    let server = ModelServer::start(vec![
        Turn::Tools((0..6).map(|_| read()).collect()),
        Turn::Text("It says Some text."),
    ]);
    let r = loop_run(&env, &server, &["--json"], "What do the notes say?");
    r.ok();
    let events = r.json_lines();
    assert_eq!(of_type(&events, "tool_execution_end").len(), 1, "{r}");
    assert!(has_note(&events, "sent the same `read` call"), "{r}");
    let second = server.requests()[1]["messages"].to_string();
    assert!(second.contains("each call ran once"), "{second}");
    assert_eq!(agent_end(&r)["outcome"], "finished", "{r}");

    let server = ModelServer::start(vec![
        Turn::Tools((0..2).map(|_| read()).collect()),
        Turn::Text("It says Some text."),
    ]);
    let r = loop_run(&env, &server, &["--json"], "What do the notes say?");
    r.ok();
    assert_eq!(
        of_type(&r.json_lines(), "tool_execution_end").len(),
        2,
        "{r}"
    );
}
