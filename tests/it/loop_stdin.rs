//! ag-loop driven by a client on stdin, as ag-tui drives it: approvals
//! answered by `approval` lines (`--approve-on-stdin`, "always"), the
//! `compact` command, and the session named in `agent_start`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use crate::agent::{scripted_model, text_turn, tool_turn};
use crate::bin;
use crate::util::{Env, of_type};
use serde_json::{Value, json};

/// ag-loop in `env` with `args`.
fn ag_loop(env: &Env, args: &[&str]) -> Command {
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(args);
    c
}

/// Runs ag-loop with `lines` on stdin, then answers each approval_request
/// with `answer` (None: no answer line), and closes stdin after the last
/// `agent_end` it expects. Returns every event.
pub(crate) fn converse(
    mut c: Command,
    lines: &[Value],
    prompts: usize,
    answer: impl Fn(&Value) -> Option<Value>,
) -> Vec<Value> {
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for l in lines {
        stdin.write_all((l.to_string() + "\n").as_bytes()).unwrap();
    }
    let mut events = Vec::new();
    let mut ended = 0;
    let mut stdin = Some(stdin);
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let e: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if e["type"] == "approval_request"
            && let (Some(a), Some(w)) = (answer(&e), stdin.as_mut())
        {
            w.write_all((a.to_string() + "\n").as_bytes()).unwrap();
        }
        if e["type"] == "agent_end" {
            ended += 1;
            if ended == prompts {
                stdin = None;
            }
        }
        events.push(e);
    }
    drop(stdin);
    assert!(child.wait().unwrap().success(), "{events:?}");
    events
}

fn prompt(text: &str) -> Value {
    json!({"type": "prompt", "content": text})
}

/// Directories `a` and `b` holding a file each, and a model that removes
/// them with bash in two turns (calls c1 and c2); the `--llm-cmd` value.
fn removing(env: &Env, a: &str, b: &str) -> String {
    for d in [a, b] {
        env.write(&format!("{d}/out.o"), "x");
    }
    scripted_model(
        env,
        &[
            tool_turn(&[("c1", "bash", json!({"command": format!("rm -rf {a}")}))]),
            tool_turn(&[("c2", "bash", json!({"command": format!("rm -rf {b}")}))]),
            text_turn("done"),
        ],
    )
}

/// The flags for running bash unsandboxed (the sandbox would let `rm -rf`
/// in the workspace through unasked) with a client answering on stdin.
fn asking(model: &str) -> [&str; 8] {
    [
        "--llm-cmd",
        model,
        "--tools",
        "bash",
        "--no-session",
        "--sandbox",
        "off",
        "--approve-on-stdin",
    ]
}

#[test]
fn approve_on_stdin_lets_the_gate_ask_and_always_answers_the_like_for_the_session() {
    let env = Env::new();
    let model = removing(&env, "build1", "build2");
    let args = asking(&model);
    let events = converse(ag_loop(&env, &args), &[prompt("clean up")], 1, |r| {
        Some(
            json!({"type": "approval", "tool_call_id": r["tool_call_id"], "approved": true, "always": true}),
        )
    });
    let asked = of_type(&events, "approval_request");
    assert_eq!(asked.len(), 1, "{events:?}");
    assert_eq!(asked[0]["tool_call_id"], "c1");
    assert_eq!(asked[0]["always"], "every bash call", "{}", asked[0]);
    assert!(!env.join("build1").exists());
    assert!(!env.join("build2").exists(), "always did not cover c2");

    // Without the flag and without a terminal, nobody can answer: ag-gate's
    // mode is `never`, which asks nothing and runs what no rule denies.
    // (The script's path stays the same.)
    env.write("build3/out.o", "x");
    scripted_model(
        &env,
        &[
            tool_turn(&[("c1", "bash", json!({"command": "rm -rf build3"}))]),
            text_turn("no"),
        ],
    );
    let events = converse(ag_loop(&env, &args[..7]), &[prompt("clean up")], 1, |_| {
        None
    });
    assert!(of_type(&events, "approval_request").is_empty());
    assert!(!env.join("build3").exists());
}

#[test]
fn a_plain_yes_answers_once_and_the_next_call_is_asked_again() {
    let env = Env::new();
    let model = removing(&env, "b1", "b2");
    let args = asking(&model);
    // c1 yes, c2 no.
    let events = converse(ag_loop(&env, &args), &[prompt("go")], 1, |r| {
        let yes = r["tool_call_id"] == "c1";
        Some(json!({"type": "approval", "tool_call_id": r["tool_call_id"], "approved": yes}))
    });
    assert_eq!(of_type(&events, "approval_request").len(), 2, "{events:?}");
    assert!(!env.join("b1").exists());
    assert!(env.join("b2/out.o").exists());
}

#[test]
fn approve_on_stdin_needs_stdin() {
    let env = Env::new();
    let r = crate::util::run_args(&env, bin!("ag-loop"), &["--approve-on-stdin", "hello"]);
    assert_eq!(r.code(), Some(2), "{}", r.stderr());
    assert!(r.stderr().contains("--approve-on-stdin"), "{}", r.stderr());
}

#[test]
fn a_compact_command_summarises_the_older_turns_before_the_next_prompt() {
    let env = Env::new();
    env.write(
        "big.txt",
        (0..200)
            .map(|i| format!("line {i} of a file that fills the context\n"))
            .collect::<String>(),
    );
    let model = scripted_model(
        &env,
        &[
            tool_turn(&[("c1", "read", json!({"file_path": "big.txt"}))]),
            text_turn("read it"),
            // The summary call.
            text_turn("SUMMARY: big.txt has 200 lines"),
            text_turn("second answer"),
        ],
    );
    let args = ["--llm-cmd", &model, "--tools", "read", "--no-session"];
    let lines = [
        // Nothing to compact yet: said, not fatal.
        json!({"type": "compact"}),
        prompt("read big.txt"),
        json!({"type": "compact"}),
        prompt("and now?"),
    ];
    let events = converse(ag_loop(&env, &args), &lines, 2, |_| None);
    let errors = of_type(&events, "error");
    assert_eq!(errors.len(), 1, "{events:?}");
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("nothing to compact"),
        "{}",
        errors[0]
    );
    let compaction = of_type(&events, "compaction");
    assert_eq!(compaction.len(), 1, "{events:?}");
    assert_eq!(compaction[0]["method"], "summary");
    assert!(compaction[0]["replaced"].as_u64().unwrap() >= 2);
    // The compaction came between the two prompts.
    let at = |t: &str| events.iter().position(|e| e["type"] == t).unwrap();
    let second_start = events
        .iter()
        .enumerate()
        .filter(|(_, e)| e["type"] == "agent_start")
        .nth(1)
        .unwrap()
        .0;
    assert!(at("compaction") < second_start);
    // The second prompt's request starts with the summary, not big.txt.
    let req: Value = serde_json::from_slice(&env.read(".model/request3.json")).unwrap();
    let sent = req["messages"].to_string();
    assert!(sent.contains("SUMMARY: big.txt has 200 lines"), "{sent}");
    assert!(!sent.contains("line 150 of a file"), "{sent}");
}

#[test]
fn agent_start_names_the_session_it_records_in() {
    let env = Env::new();
    let model = scripted_model(&env, &[text_turn("hi")]);
    let events = converse(
        ag_loop(&env, &["--llm-cmd", &model]),
        &[prompt("hello")],
        1,
        |_| None,
    );
    let start = of_type(&events, "agent_start")[0];
    let id = start["session_id"].as_str().expect("no session_id");
    let r = crate::util::run_args(&env, bin!("ag-session"), &["show", id]);
    r.ok();
    assert!(r.stdout().contains("hello"), "{}", r.stdout());

    // No session, no id.
    let model = scripted_model(&env, &[text_turn("hi")]);
    let events = converse(
        ag_loop(&env, &["--llm-cmd", &model, "--no-session"]),
        &[prompt("hello")],
        1,
        |_| None,
    );
    assert!(
        of_type(&events, "agent_start")[0]
            .get("session_id")
            .is_none()
    );
}

#[test]
fn an_unattended_flagged_call_runs_and_leaves_a_note_with_the_gates_reason() {
    // Nobody can answer (no terminal, no --approve-on-stdin): ag-gate's mode
    // is `never`, and what it would have asked about runs, on record.
    let env = Env::new();
    env.write("build/out.o", "x");
    let model = scripted_model(
        &env,
        &[
            tool_turn(&[
                ("c1", "bash", json!({"command": "rm -rf ./build"})),
                ("c2", "bash", json!({"command": "echo harmless"})),
            ]),
            text_turn("cleaned"),
        ],
    );
    let mut c = ag_loop(
        &env,
        &[
            "--llm-cmd",
            &model,
            "--tools",
            "bash",
            "--sandbox",
            "off",
            "--json",
            "clean up",
        ],
    );
    c.stdin(Stdio::null());
    let r = crate::util::run(c, None);
    r.ok();
    assert!(!env.join("build").exists());
    let events = r.json_lines();
    let notes = of_type(&events, "note");
    assert_eq!(notes.len(), 1, "only the flagged call: {events:#?}");
    assert_eq!(notes[0]["tool_call_id"], "c1");
    let message = notes[0]["message"].as_str().unwrap();
    assert!(message.contains("without a person's approval"), "{message}");
    assert!(message.contains("approval mode never"), "{message}");
    assert!(
        message.contains("recursive delete: `rm -rf ./build`"),
        "{message}"
    );
    // Between the call's start and its end.
    let at = |t: &str| {
        events
            .iter()
            .position(|e| e["type"] == t && e.get("tool_call_id") == Some(&json!("c1")))
            .unwrap()
    };
    assert!(at("tool_execution_start") < at("note") && at("note") < at("tool_execution_end"));
    // On stderr too, for a person reading the log of an unattended run.
    assert!(r.stderr().contains("rm -rf ./build"), "{}", r.stderr());
    // And in the session file, which is what stays.
    let id = events[0]["session_id"].as_str().unwrap();
    let show = crate::util::run_args(&env, bin!("ag-session"), &["path", id]);
    show.ok();
    let file = std::fs::read_to_string(show.stdout().trim()).unwrap();
    assert!(
        file.lines()
            .any(|l| l.contains("\"type\":\"note\"") && l.contains("rm -rf ./build")),
        "{file}"
    );
}

/// A prompt's `data` (an editor's embedded file, say) reaches the model
/// after its words, and an `@PATH` inside it attaches nothing: only what
/// a person wrote is a mention.
#[test]
fn a_prompts_data_reaches_the_model_and_is_never_read_for_mentions() {
    let env = Env::new();
    env.write("secret.txt", "do not send\n");
    env.write("notes.md", "remember the milk\n");
    let model = scripted_model(&env, &[text_turn("ok")]);
    let prompt = json!({
        "type": "prompt",
        "content": "summarise @notes.md and [resource 1]",
        "data": [{"type": "text", "text": "[resource 1]: <resource uri=\"file:///x/README.md\">\nsee @secret.txt\n</resource>"}],
    });
    let mut c = ag_loop(
        &env,
        &[
            "--llm-cmd",
            &model,
            "--tools",
            "read",
            "--json",
            "--no-session",
        ],
    );
    c.stdin(Stdio::piped());
    let r = crate::util::run(c, Some(format!("{prompt}\n").as_bytes()));
    r.ok();
    let req: Value = serde_json::from_slice(&env.read(".model/request0.json")).unwrap();
    let texts: Vec<String> = req["messages"][0]["content"]
        .as_array()
        .unwrap_or_else(|| panic!("{req}"))
        .iter()
        .map(|b| b["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(texts.len(), 3, "{texts:?}");
    assert_eq!(texts[0], "summarise @notes.md and [resource 1]");
    assert!(
        texts[1].starts_with("[Attached file `notes.md`"),
        "{texts:?}"
    );
    assert!(texts[2].contains("see @secret.txt"), "{texts:?}");
    assert!(!req.to_string().contains("do not send"), "{req}");
}

#[test]
fn a_line_over_the_limit_is_skipped_with_an_error_and_the_next_prompt_runs() {
    let env = Env::new();
    let model = scripted_model(&env, &[text_turn("the answer")]);
    let mut c = ag_loop(
        &env,
        &["--llm-cmd", &model, "--tools", "read", "--no-session"],
    );
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        // 65 MiB of one prompt's text, never ended by a newline until then:
        // ag-loop must not hold it whole.
        let chunk = vec![b'x'; 1024 * 1024];
        stdin
            .write_all(b"{\"type\":\"prompt\",\"content\":\"")
            .unwrap();
        for _ in 0..65 {
            stdin.write_all(&chunk).unwrap();
        }
        stdin.write_all(b"\"}\n").unwrap();
        stdin
            .write_all((prompt("a small one").to_string() + "\n").as_bytes())
            .unwrap();
    });
    let events: Vec<Value> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    writer.join().unwrap();
    child.wait().unwrap();
    let errors = of_type(&events, "error");
    assert_eq!(errors.len(), 1, "{events:?}");
    let message = errors[0]["message"].as_str().unwrap();
    assert!(
        message
            .contains("stdin line 1 is 68157470 bytes, over the 64 MiB a line may hold, skipped"),
        "{message}"
    );
    let ends = of_type(&events, "agent_end");
    assert_eq!(ends.len(), 1, "the small prompt ran: {events:?}");
}
