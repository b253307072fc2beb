//! ag-tui end to end in tmux: a scripted model behind the real ag-loop and
//! tools, keys sent with send-keys, the screen read with capture-pane.
//! tmux is required: scripts/test installs it.

use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::bin;
use crate::util::Env;

/// A model for `--llm-cmd`: request N is answered with `turns[N]`; a turn
/// marked slow prints its events and then waits, as a model mid-stream.
fn scripted_model(env: &Env, turns: &[(Vec<Value>, bool)]) -> String {
    for (i, (events, slow)) in turns.iter().enumerate() {
        let text: String = events.iter().map(|e| e.to_string() + "\n").collect();
        env.write(&format!(".model/turn{i}.jsonl"), text);
        if *slow {
            env.write(&format!(".model/slow{i}"), "");
        }
    }
    env.write(
        ".model/model.sh",
        "d=\"$(dirname \"$0\")\"\nn=$(cat \"$d/count\" 2>/dev/null || echo 0)\necho $((n+1)) > \"$d/count\"\ncat > \"$d/request$n.json\"\ncat \"$d/turn$n.jsonl\"\nif [ -f \"$d/slow$n\" ]; then sleep 60; fi\n",
    );
    format!("sh {}", env.join(".model/model.sh").display())
}

fn usage() -> Value {
    json!({"input": 1000, "output": 20, "cost": {"total": 0.01}})
}

fn text_turn(text: &str) -> Vec<Value> {
    vec![
        json!({"type": "start", "model": "test/scripted"}),
        json!({"type": "text_delta", "index": 0, "delta": text}),
        json!({"type": "done", "message": {"content": [{"type": "text", "text": text}], "usage": usage(), "stop_reason": "stop", "model": "test/scripted"}}),
    ]
}

fn tool_turn(id: &str, name: &str, args: Value) -> Vec<Value> {
    vec![
        json!({"type": "start", "model": "test/scripted"}),
        json!({"type": "tool_call_start", "index": 0, "id": id, "name": name}),
        json!({"type": "tool_call_end", "index": 0, "id": id, "name": name, "arguments": args}),
        json!({"type": "done", "message": {"content": [{"type": "tool_call", "id": id, "name": name, "arguments": args}], "usage": usage(), "stop_reason": "tool_use", "model": "test/scripted"}}),
    ]
}

struct Tmux {
    socket: String,
}

impl Tmux {
    fn require() {
        assert!(
            Command::new("tmux").arg("-V").output().is_ok(),
            "tmux is not installed: scripts/test installs it (Debian: apt-get install tmux)"
        );
    }

    fn start(name: &str, cmd: &str, w: u16, h: u16) -> Tmux {
        let t = Tmux {
            socket: format!("ag-tui-{}-{name}", std::process::id()),
        };
        let (w, h) = (w.to_string(), h.to_string());
        t.run(&["new-session", "-d", "-x", &w, "-y", &h, cmd]);
        t
    }

    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.run(&["capture-pane", "-p"])
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys"];
        args.extend(keys);
        self.run(&args);
    }

    /// Types text literally (no key names).
    fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-l", text]);
    }

    fn wait_for(&self, what: &str) -> String {
        self.wait_until(what, |s| s.contains(what))
    }

    fn wait_until(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        for _ in 0..1500 {
            let s = self.screen();
            if ok(&s) {
                return s;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("`{what}` never appeared:\n{}", self.screen());
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}

/// The sandbox is off: the approval asked for `rm -rf build` is what is
/// tested, and with the sandbox on the gate lets the kernel judge it.
fn tui_command(env: &Env, model: &str, extra: &str) -> String {
    format!(
        "cd '{}' && HOME='{}' AG_HOME='{}' NO_COLOR=1 '{}' {extra} -- --llm-cmd '{model}' --tools read,bash --sandbox off; echo EXIT=$?; sleep 60",
        env.path().display(),
        env.join(".home").display(),
        env.join(".home/.ag").display(),
        bin!("ag-tui"),
    )
}

/// Prompt, streamed text and tool lines; Esc mid-stream and a follow-up;
/// an approval answered; `/resume` picking the session; a resize; /quit.
#[test]
fn a_session_driven_with_the_keyboard() {
    Tmux::require();
    let env = Env::new();
    env.write("notes.txt", "the answer is 42\n");
    env.write("build/out.o", "x");
    let model = scripted_model(
        &env,
        &[
            (
                tool_turn("c1", "read", json!({"file_path": "notes.txt"})),
                false,
            ),
            (
                text_turn("The notes say **42**.\n\n- first point\n- second point"),
                false,
            ),
            (
                vec![
                    json!({"type": "start", "model": "test/scripted"}),
                    json!({"type": "text_delta", "index": 0, "delta": "Thinking about it at length"}),
                ],
                true,
            ),
            (text_turn("Follow-up answered."), false),
            (
                tool_turn("c2", "bash", json!({"command": "rm -rf build"})),
                false,
            ),
            (text_turn("Build directory removed."), false),
        ],
    );
    let t = Tmux::start("main", &tui_command(&env, &model, ""), 80, 24);
    t.wait_for("ready");

    // A multi-line prompt: Alt+Enter breaks the line, Enter sends.
    t.type_text("what do the notes");
    t.keys(&["M-Enter"]);
    t.type_text("say?");
    t.keys(&["Enter"]);
    let s = t.wait_for("second point");
    assert!(s.contains("› what do the notes"), "{s}");
    assert!(s.contains("  say?"), "{s}");
    assert!(s.contains("✓ read file_path=notes.txt done"), "{s}");
    assert!(s.contains("The notes say 42."), "{s}");
    assert!(s.contains("• first point"), "{s}");

    // Esc while the answer streams: interrupted, and the next prompt works.
    t.type_text("think hard");
    t.keys(&["Enter"]);
    t.wait_for("Thinking about it at length");
    t.wait_for("working");
    t.keys(&["Escape"]);
    let s = t.wait_for("interrupted");
    t.wait_until("ready", |s| s.contains("ready"));
    assert!(s.contains("Thinking about it at length"), "{s}");
    t.type_text("and now?");
    t.keys(&["Enter"]);
    t.wait_for("Follow-up answered.");

    // An approval: the call waits for y.
    t.type_text("clean up");
    t.keys(&["Enter"]);
    let s = t.wait_for("[y]es");
    assert!(s.contains("Allow bash command=rm -rf build?"), "{s}");
    assert!(s.contains("? bash command=rm -rf build asking"), "{s}");
    assert!(
        env.join("build/out.o").exists(),
        "ran before it was approved"
    );
    t.keys(&["y"]);
    let s = t.wait_for("Build directory removed.");
    assert!(s.contains("✓ bash command=rm -rf build done"), "{s}");
    assert!(!env.join("build").exists());

    // /resume with Tab completion: the picker lists this session; picking
    // it shows its history again, replayed from the session file.
    t.type_text("/res");
    t.keys(&["Tab"]);
    t.wait_for("› /resume");
    t.keys(&["Enter"]);
    let s = t.wait_for("Resume which session?");
    assert!(s.contains("what do the notes"), "{s}");
    t.keys(&["Enter"]);
    let s = t.wait_until("the replayed history", |s| {
        !s.contains("Resume which") && s.contains("Build directory removed.")
    });
    assert!(s.contains("ready"), "{s}");
    assert!(
        !s.contains("denied"),
        "the approved call replays as denied:\n{s}"
    );

    // A resize redraws at the new size.
    t.run(&["resize-window", "-x", "50", "-y", "14"]);
    let s = t.wait_until("a 50-column frame", |s| {
        s.lines().any(|l| l.trim_end() == "─".repeat(50))
    });
    assert!(s.contains("Build directory removed."), "{s}");

    t.type_text("/quit");
    t.keys(&["Enter"]);
    let s = t.wait_for("EXIT=");
    assert!(s.contains("EXIT=0"), "{s}");
}

/// A child that cannot start is reported with its stderr; the TUI stays
/// and still quits cleanly with Ctrl+C, leaving the terminal usable.
#[test]
fn a_child_that_fails_is_shown_with_its_stderr() {
    Tmux::require();
    let env = Env::new();
    let cmd = format!(
        "cd '{}' && HOME='{}' AG_HOME='{}' NO_COLOR=1 '{}' --loop-cmd 'echo boom: no such model >&2; exit 3'; echo EXIT=$?; if stty -a | grep -q -- -icanon; then echo MODE=raw; else echo MODE=cooked; fi; sleep 60",
        env.path().display(),
        env.join(".home").display(),
        env.join(".home/.ag").display(),
        bin!("ag-tui"),
    );
    let t = Tmux::start("crash", &cmd, 80, 24);
    let s = t.wait_for("boom: no such model");
    assert!(s.contains("ag-loop exited with status 3"), "{s}");
    // Typing a prompt to a dead child says so instead of hanging.
    t.type_text("hello");
    t.keys(&["Enter"]);
    t.wait_for("ag-loop is not running");
    t.keys(&["C-c"]);
    let s = t.wait_for("MODE=");
    assert!(s.contains("EXIT=0"), "{s}");
    // Cooked mode again: the shell after it reads lines.
    assert!(s.contains("MODE=cooked"), "{s}");
}

/// ag-loop killed with SIGKILL mid-run: the TUI reports it and stays.
#[test]
fn a_killed_child_is_reported_and_the_tui_stays() {
    Tmux::require();
    let env = Env::new();
    let pidfile = env.join("loop.pid");
    let cmd = format!(
        "cd '{}' && HOME='{}' AG_HOME='{}' NO_COLOR=1 '{}' --loop-cmd 'echo $$ > {}; exec sleep 60 #'; echo EXIT=$?; sleep 60",
        env.path().display(),
        env.join(".home").display(),
        env.join(".home/.ag").display(),
        bin!("ag-tui"),
        pidfile.display(),
    );
    let t = Tmux::start("kill", &cmd, 80, 24);
    t.wait_for("ready");
    let mut pid = String::new();
    for _ in 0..500 {
        pid = std::fs::read_to_string(&pidfile).unwrap_or_default();
        if !pid.trim().is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid: i32 = pid.trim().parse().unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let s = t.wait_for("killed by signal 9");
    assert!(s.contains("ag-loop ended"), "{s}");
    t.type_text("/quit");
    t.keys(&["Enter"]);
    assert!(t.wait_for("EXIT=").contains("EXIT=0"));
}

/// `/rewind` puts the files back as before a turn and goes on in the fork;
/// `/compact` then summarises the older turns through ag-loop's command.
#[test]
fn rewind_and_compact_from_the_keyboard() {
    Tmux::require();
    let env = Env::new();
    env.write("a.txt", "v0\n");
    // The script's state lives outside the directory a rewind puts back.
    let script = Env::new();
    let write = |content: &str| json!({"file_path": "a.txt", "content": content});
    let model = scripted_model(
        &script,
        &[
            (tool_turn("c1", "write", write("v1\n")), false),
            (text_turn("Wrote v1."), false),
            (tool_turn("c2", "write", write("v2\n")), false),
            (text_turn("Wrote v2."), false),
            // The summary /compact asks for.
            (text_turn("SUMMARY of the work so far"), false),
        ],
    );
    let cmd = format!(
        "cd '{}' && HOME='{}' AG_HOME='{}' NO_COLOR=1 '{}' -- --llm-cmd '{model}' --tools read,write; echo EXIT=$?; sleep 60",
        env.path().display(),
        env.join(".home").display(),
        env.join(".home/.ag").display(),
        bin!("ag-tui"),
    );
    let t = Tmux::start("rewind", &cmd, 100, 30);
    t.wait_for("ready");
    t.type_text("write v1");
    t.keys(&["Enter"]);
    t.wait_for("Wrote v1.");
    t.wait_for("ready");
    t.type_text("write v2");
    t.keys(&["Enter"]);
    t.wait_for("Wrote v2.");
    t.wait_for("ready");
    assert_eq!(env.read("a.txt"), b"v2\n");

    // The checkpoints seen, then back to before the second write.
    t.type_text("/rewind");
    t.keys(&["Enter"]);
    let s = t.wait_for("checkpoints before turns");
    let line = s
        .lines()
        .find(|l| l.contains("checkpoints before turns"))
        .unwrap();
    let turns: Vec<u64> = line
        .split("turns ")
        .nth(1)
        .unwrap()
        .split(':')
        .next()
        .unwrap()
        .split(", ")
        .map(|n| n.trim().parse().unwrap())
        .collect();
    // One before each write's turn and one after it, for the text turn.
    assert_eq!(turns, [1, 2, 3, 4], "{s}");
    t.type_text("/rewind 3");
    t.keys(&["Enter"]);
    t.wait_for("now in session");
    assert_eq!(env.read("a.txt"), b"v1\n");

    // Compact in the fork: the summary call is the next model request.
    t.type_text("/compact");
    t.keys(&["Enter"]);
    let s = t.wait_for("context compacted");
    assert!(s.contains("(summary)"), "{s}");

    t.type_text("/quit");
    t.keys(&["Enter"]);
    let s = t.wait_for("EXIT=");
    assert!(s.contains("EXIT=0"), "{s}");
}

/// `/model` and `/thinking` switch the running ag-loop (no restart: the
/// same process and session go on) from the next prompt, and the session
/// records it.
#[test]
fn model_and_thinking_switch_the_running_ag_loop() {
    Tmux::require();
    let env = Env::new();
    let model = scripted_model(
        &env,
        &[
            (text_turn("first answer"), false),
            (text_turn("second answer"), false),
        ],
    );
    let t = Tmux::start(
        "model",
        &tui_command(&env, &model, "-m test/start"),
        100,
        30,
    );
    t.wait_for("ready");
    t.type_text("one");
    t.keys(&["Enter"]);
    t.wait_for("first answer");
    t.wait_for("ready");
    t.type_text("/model test/other");
    t.keys(&["Enter"]);
    t.wait_for("model: test/other · reasoning: the model's default");
    t.type_text("/thinking high");
    t.keys(&["Enter"]);
    t.wait_for("model: test/other · reasoning: high");
    t.type_text("/thinking");
    t.keys(&["Enter"]);
    t.wait_for("reasoning: high (/thinking");
    t.type_text("two");
    t.keys(&["Enter"]);
    let s = t.wait_for("second answer");
    // The footer shows the reasoning level beside the model that answered.
    t.wait_for("(high) ·");
    assert!(!s.contains("ag-loop ended"), "{s}");
    let first: Value = serde_json::from_slice(&env.read(".model/request0.json")).unwrap();
    let second: Value = serde_json::from_slice(&env.read(".model/request1.json")).unwrap();
    assert_eq!(first["model"], "test/start");
    assert_eq!(
        (&second["model"], &second["reasoning"]),
        (&json!("test/other"), &json!("high"))
    );
    // One session, holding both switches (ag-loop was not restarted).
    let dir = env.join(".home/.ag/sessions");
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten())
        .filter(|f| f.path().extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert_eq!(files.len(), 1);
    let text = std::fs::read_to_string(files[0].path()).unwrap();
    assert_eq!(text.matches("\"type\":\"settings\"").count(), 2, "{text}");
    t.type_text("/quit");
    t.keys(&["Enter"]);
    assert!(t.wait_for("EXIT=").contains("EXIT=0"));
}
