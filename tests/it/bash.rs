//! ag-bash, black-box: exit codes, stderr, huge output, timeouts,
//! cancellation of a process tree, background children and jobs,
//! non-UTF-8, stdin. Time bounds here are generous "it did not hang"
//! limits, never speed assertions.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use ag::proc::{foreign_group_alive, process_alive};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};

use crate::bin;
use crate::util::{Env, call, run, run_args, wait_for};

/// Far longer than any of these commands needs; reaching it means a hang.
const HANG: Duration = Duration::from_secs(30);

fn bash(env: &Env, args: Value) -> Value {
    call(env, bin!("ag-bash"), args)
}

fn output(r: &Value) -> &str {
    r["output"].as_str().unwrap()
}

fn pids_in(path: &Path) -> Vec<u32> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

fn spawn_piped(env: &Env, args: &[&str]) -> Child {
    let mut c = env.cmd(bin!("ag-bash"));
    c.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c.spawn().unwrap()
}

#[test]
fn output_interleaves_stdout_and_stderr_and_ends_with_the_exit_code() {
    let env = Env::new();
    let r = bash(
        &env,
        json!({"command": "echo one; echo two >&2; echo three; exit 3"}),
    );
    assert_eq!(output(&r), "one\ntwo\nthree\n\nexit code: 3\n");
    assert_eq!(r["is_error"], false);
    let d = &r["details"];
    assert_eq!(d["exit_code"], 3);
    assert_eq!(d["command"], "echo one; echo two >&2; echo three; exit 3");
    assert_eq!(d["timed_out"], false);
    assert_eq!(d["truncated"], false);
    assert!(d["duration_ms"].is_u64());
    assert!(d.get("signal").is_none());
}

#[test]
fn plain_mode_exits_with_the_command_status() {
    let env = Env::new();
    let r = run_args(&env, bin!("ag-bash"), &["echo out; exit 3"]);
    r.expect_code(3);
    assert_eq!(r.stdout(), "out\n\nexit code: 3\n");
    run_args(&env, bin!("ag-bash"), &["true"]).ok();
    // Command not found is the command's status, not a failure of ag-bash.
    let r = run_args(&env, bin!("ag-bash"), &["no-such-command-xyz"]);
    r.expect_code(127);
    assert!(r.stdout().contains("command not found"), "{r}");
    // ag-bash's own failures are 125, usage errors 2.
    let r = run_args(&env, bin!("ag-bash"), &["--cwd", "missing", "true"]);
    r.expect_code(125);
    assert!(r.stderr().contains("`cwd` `missing` cannot be used"), "{r}");
    run_args(&env, bin!("ag-bash"), &["--no-such-flag", "true"]).expect_code(2);
    let r = run_args(&env, bin!("ag-bash"), &["--json", "exit 4"]);
    r.expect_code(4);
    assert_eq!(r.json()["details"]["exit_code"], 4);
}

#[test]
fn not_found_and_signals_are_normal_results() {
    let env = Env::new();
    let r = bash(&env, json!({"command": "no-such-command-xyz"}));
    assert_eq!(r["is_error"], false);
    assert_eq!(r["details"]["exit_code"], 127);
    let r = bash(&env, json!({"command": "kill -SEGV $$"}));
    assert_eq!(r["details"]["exit_code"], 139);
    assert_eq!(r["details"]["signal"], "SIGSEGV");
    assert!(
        output(&r).ends_with("exit code: 139 (killed by SIGSEGV)\n"),
        "{r}"
    );
}

#[test]
fn stdin_is_empty_unless_given() {
    let env = Env::new();
    let r = bash(
        &env,
        json!({"command": "cat; read x; echo \"read=$? x=$x\""}),
    );
    assert_eq!(output(&r), "read=1 x=\n\nexit code: 0\n");
    let r = bash(&env, json!({"command": "wc -l; cat", "stdin": "a\nb\n"}));
    assert_eq!(output(&r).lines().next().unwrap().trim(), "2");
    // Ten megabytes in and out again: no deadlock between feeding and draining.
    let big = "x".repeat(10 * 1024 * 1024);
    let r = bash(
        &env,
        json!({"command": "cat | wc -c", "stdin": big, "timeout": 60}),
    );
    assert_eq!(output(&r).lines().next().unwrap().trim(), "10485760");
}

#[test]
fn cwd_is_resolved_and_checked() {
    let env = Env::new();
    std::fs::create_dir(env.join("sub")).unwrap();
    let r = bash(&env, json!({"command": "pwd", "cwd": "sub"}));
    let dir = env.join("sub").canonicalize().unwrap();
    assert_eq!(output(&r).lines().next().unwrap(), dir.to_str().unwrap());
    env.write("file", "x");
    let r = bash(&env, json!({"command": "pwd", "cwd": "file"}));
    assert_eq!(r["error_code"], "bash.bad_cwd");
    let r = bash(&env, json!({"command": "true", "timeout": -1}));
    assert_eq!(r["error_code"], "bash.bad_timeout");
    // A 0 the field cannot mean counts as absent: the default applies.
    let r = bash(&env, json!({"command": "true", "timeout": 0}));
    assert_eq!(r["is_error"], false, "{r}");
    // Under a second is a slip (a small model's 0.001): killing the
    // command before it starts would hide what it does, so the default
    // applies and a note says so.
    let r = bash(
        &env,
        json!({"command": "sleep 0.2; echo ran", "timeout": 0.001}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    assert_eq!(r["details"]["exit_code"], 0, "{r}");
    assert!(output(&r).starts_with("ran\n"), "{r}");
    assert!(
        output(&r).contains("`timeout: 0.001` is under a second") && output(&r).contains("180 s"),
        "{r}"
    );
    let r = bash(&env, json!({}));
    assert_eq!(r["error_code"], "bash.usage");
    let r = bash(&env, json!({"command": "true", "shell": "no-such-shell"}));
    assert_eq!(r["error_code"], "bash.shell_not_found");
    let r = bash(&env, json!({"command": "echo $0", "shell": "sh"}));
    assert_eq!(output(&r).lines().next().unwrap(), "sh");
    let mut c = env.cmd(bin!("ag-bash"));
    c.env("SHELL", "sh").args(["--shell", "$SHELL", "echo $0"]);
    assert!(run(c, None).stdout().starts_with("sh\n"));
    let r = bash(&env, json!({"command": "true", "stop": true}));
    assert_eq!(r["error_code"], "bash.usage");
    // `keep` beside a plain command cannot do harm: the command runs.
    let r = bash(&env, json!({"command": "true", "keep": true}));
    assert_eq!(r["is_error"], false, "{r}");
    assert!(
        output(&r).contains("Set aside `keep: true`: it is not used when running a command."),
        "{r}"
    );
}

#[test]
fn non_utf8_is_lossy_and_ansi_is_stripped_unless_raw() {
    let env = Env::new();
    let r = bash(
        &env,
        json!({"command": "printf 'caf\\351 \\033[1;31mred\\033[0m\\n'; printf '10%%\\r50%%\\r100%%\\n'"}),
    );
    assert_eq!(
        output(&r),
        "caf\u{fffd} red\n100%\n\nnote: the output is not valid UTF-8; invalid bytes are shown as U+FFFD.\nexit code: 0\n"
    );
    assert_eq!(r["details"]["lossy"], true);
    let r = bash(
        &env,
        json!({"command": "printf '\\033[1;31mred\\033[0m\\n'", "raw": true}),
    );
    assert!(output(&r).starts_with("\u{1b}[1;31mred\u{1b}[0m\n"), "{r}");
}

#[test]
fn huge_output_keeps_head_and_tail_and_saves_the_rest() {
    let env = Env::new();
    let mut c = env.cmd(bin!("ag-bash"));
    c.env("AG_SESSION_DIR", env.join("session"));
    let line = json!({"arguments": {
        "command": "echo FIRST; seq 1 2000000; echo LAST",
        "max_output": 10000,
        "timeout": 120,
    }})
    .to_string();
    let r = run(c, Some(line.as_bytes()));
    r.ok();
    let r = r.json();
    let out = output(&r);
    assert!(out.starts_with("FIRST\n1\n2\n"), "{}", &out[..100]);
    assert!(
        out.contains("1999999\n2000000\nLAST\n\nexit code: 0\n"),
        "{out}"
    );
    assert!(out.len() < 12_000, "{}", out.len());
    let d = &r["details"];
    assert_eq!(d["truncated"], true);
    let total = d["output_bytes"].as_u64().unwrap();
    assert!(total > 14_000_000);
    let marker = out.lines().find(|l| l.starts_with("[... ")).unwrap();
    assert!(marker.contains("lines ("), "{marker}");
    let cut_lines = d["cut_lines"].as_u64().unwrap();
    let shown_lines = out.lines().count() as u64;
    assert!(
        cut_lines + shown_lines > 2_000_000,
        "{cut_lines} {shown_lines}"
    );
    let saved = d["full_output"].as_str().unwrap();
    assert!(saved.starts_with(env.join("session").to_str().unwrap()));
    assert!(marker.contains(saved), "{marker}");
    assert_eq!(std::fs::metadata(saved).unwrap().len(), total);
    assert_eq!(d["full_output_complete"], true);
}

/// Without a session the spill file goes to `TMPDIR`, which the harness
/// points into the test's own directory: tests leave nothing in /tmp.
#[test]
fn spilled_output_without_a_session_lands_in_the_tests_tmpdir() {
    let env = Env::new();
    let r = bash(&env, json!({"command": "seq 1 50000", "max_output": 2000}));
    let saved = r["details"]["full_output"].as_str().unwrap();
    let tmp = env.join(crate::util::TMP);
    assert!(
        Path::new(saved).starts_with(&tmp),
        "{saved} not under {}",
        tmp.display()
    );
    let total = r["details"]["output_bytes"].as_u64().unwrap();
    assert_eq!(std::fs::metadata(saved).unwrap().len(), total);
}

/// Peak memory of ag-bash while 200 MB pass through its cap.
#[test]
fn memory_stays_bounded_however_much_is_printed() {
    let env = Env::new();
    nix::unistd::mkfifo(&env.join("gate"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let child = spawn_piped(
        &env,
        &[
            "--timeout",
            "120",
            "head -c 200000000 /dev/zero | tr '\\0' x; echo; touch printed; cat gate >/dev/null",
        ],
    );
    wait_for("the output to be printed", || env.join("printed").exists());
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let peak_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    // Opening and closing the fifo for writing lets `cat` end.
    drop(
        std::fs::OpenOptions::new()
            .write(true)
            .open(env.join("gate"))
            .unwrap(),
    );
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(peak_kib < 48 * 1024, "peak RSS {peak_kib} KiB");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("cut from the middle"), "{}", &text[..200]);
}

#[test]
fn timeout_stops_the_whole_group_and_keeps_the_output() {
    let env = Env::new();
    let start = Instant::now();
    let r = bash(
        &env,
        // Long enough that a starved machine still gets the shell to its
        // `echo` before the limit.
        json!({"command": "echo $$ > pids; sleep 60 & echo $! >> pids; echo started; sleep 60", "timeout": 3}),
    );
    assert!(start.elapsed() < HANG);
    let out = output(&r);
    assert!(out.starts_with("started\n"), "{out}");
    assert!(out.contains("timed out after 3 s"), "{out}");
    assert_eq!(r["details"]["timed_out"], true);
    assert_eq!(r["details"]["exit_code"], 124);
    let pids = pids_in(&env.join("pids"));
    assert_eq!(pids.len(), 2);
    for pid in &pids {
        assert!(!process_alive(*pid), "pid {pid} survived");
    }
    assert!(!foreign_group_alive(pids[0]));
    // Even a command that ignores SIGTERM ends (SIGKILL after the grace).
    let r = run_args(
        &env,
        bin!("ag-bash"),
        &["--timeout", "0.3", "trap '' TERM; sleep 60"],
    );
    r.expect_code(124);
}

/// SIGTERM or SIGINT to ag-bash stops the command's whole tree and still
/// prints a result; then ag-bash exits with 128+N.
#[test]
fn a_signal_to_ag_bash_cancels_the_process_tree() {
    for (sig, code) in [(Signal::SIGTERM, 143), (Signal::SIGINT, 130)] {
        let env = Env::new();
        let script = "echo $$ > pids; sleep 60 & echo $! >> pids; (sleep 60; true) & echo $! >> pids; echo running; sleep 60";
        // JSONL mode, with a second call that must not run.
        let input = format!(
            "{}\n{}\n",
            json!({"id": "1", "arguments": {"command": script}}),
            json!({"id": "2", "arguments": {"command": "touch second"}})
        );
        // ag-bash keeps a signal ignored that it was started with ignored,
        // as nohup asks; a suite started in the background of a script (`&`)
        // hands its children SIGINT ignored, so give this one the default.
        // env execs ag-bash in its own process: the pid is ag-bash's.
        let mut c = env.cmd("env");
        c.args(["--default-signal=INT,TERM", bin!("ag-bash")])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        {
            use std::io::Write;
            child
                .stdin
                .as_mut()
                .unwrap()
                .write_all(input.as_bytes())
                .unwrap();
        }
        wait_for("the command to start", || {
            pids_in(&env.join("pids")).len() == 3
        });
        kill(Pid::from_raw(child.id() as i32), sig).unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(code), "{sig}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<Value> = stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 1, "{stdout}");
        let r = &lines[0];
        assert_eq!(r["id"], "1");
        assert_eq!(r["details"]["cancelled"], true);
        assert!(output(r).starts_with("running\n"), "{r}");
        assert!(
            output(r).contains(&format!("cancelled (ag-bash received {sig})")),
            "{r}"
        );
        let pids = pids_in(&env.join("pids"));
        for pid in &pids {
            assert!(!process_alive(*pid), "{sig}: pid {pid} survived");
        }
        assert!(!foreign_group_alive(pids[0]), "{sig}: the group survived");
        assert!(!env.join("second").exists());
    }
}

#[test]
fn background_children_do_not_keep_it_waiting_and_do_not_survive() {
    let env = Env::new();
    let start = Instant::now();
    let r = bash(
        &env,
        json!({"command": "sleep 60 & echo $! > pid; sleep 60 >/dev/null 2>&1 & echo $! >> pid; echo done"}),
    );
    assert!(start.elapsed() < HANG);
    assert_eq!(r["details"]["exit_code"], 0);
    assert_eq!(r["details"]["leftovers_stopped"], true);
    assert!(output(&r).starts_with("done\n"), "{r}");
    assert!(output(&r).contains("background=true"), "{r}");
    for pid in pids_in(&env.join("pid")) {
        assert!(!process_alive(pid), "pid {pid} survived");
    }
}

#[test]
fn commands_run_in_a_session_of_their_own() {
    // A new session has no controlling terminal: password prompts that open
    // /dev/tty fail at once instead of stopping the command.
    let env = Env::new();
    let r = bash(
        &env,
        json!({"command": "test \"$(awk '{print $6}' /proc/$$/stat)\" = $$ && echo own-session"}),
    );
    assert!(output(&r).starts_with("own-session\n"), "{r}");
    let r = bash(
        &env,
        json!({"command": "exec 3</dev/tty && echo has-tty || echo no-tty"}),
    );
    assert!(output(&r).contains("no-tty"), "{r}");
}

fn job_state(env: &Env, id: &str) -> Value {
    bash(env, json!({"job": id}))
}

#[test]
fn background_jobs_start_show_and_stop() {
    let env = Env::new();
    let r = bash(
        &env,
        json!({"command": "echo $$ > job.pid; sleep 60 & echo $! >> job.pid; echo tick; sleep 60", "background": true}),
    );
    assert_eq!(r["is_error"], false, "{r}");
    let id = r["details"]["job"].as_str().unwrap().to_string();
    assert_eq!(r["details"]["state"], "running");
    assert!(
        output(&r).starts_with(&format!("started job {id} (pid ")),
        "{r}"
    );
    wait_for("the job's output", || {
        output(&job_state(&env, &id)).contains("\ntick\n")
    });
    let listed = bash(&env, json!({"list_jobs": true}));
    assert!(
        output(&listed).contains(&format!("job {id}  running")),
        "{listed}"
    );
    assert_eq!(listed["details"]["jobs"][0]["job"], id.as_str());

    let pids = pids_in(&env.join("job.pid"));
    assert_eq!(pids.len(), 2);
    let r = bash(&env, json!({"job": id, "stop": true}));
    assert_eq!(r["details"]["state"], "stopped", "{r}");
    assert!(output(&r).contains("stopped, on request"), "{r}");
    assert!(output(&r).contains("tick"), "{r}");
    for pid in &pids {
        assert!(!process_alive(*pid), "pid {pid} survived");
    }
    assert!(!foreign_group_alive(pids[0]));
    // Stopping again says so; unknown jobs are errors.
    let r = bash(&env, json!({"job": id, "stop": true}));
    assert!(output(&r).contains("had already ended"), "{r}");
    let r = bash(&env, json!({"job": 99}));
    assert_eq!(r["error_code"], "bash.job_not_found");
}

#[test]
fn jobs_record_their_exit_and_end_with_the_session() {
    let env = Env::new();
    let r = bash(
        &env,
        json!({"command": "echo bye; exit 7", "background": true}),
    );
    let id = r["details"]["job"].as_str().unwrap().to_string();
    wait_for("the job to exit", || {
        job_state(&env, &id)["details"]["state"] == "exited"
    });
    let r = job_state(&env, &id);
    assert_eq!(r["details"]["job_exit_code"], 7);
    assert!(output(&r).contains("exited with code 7"), "{r}");
    assert!(output(&r).contains("bye"), "{r}");

    // The session is a process; when it is gone, its jobs are stopped, but
    // not those started with keep.
    let mut session = std::process::Command::new("sleep")
        .arg("600")
        .spawn()
        .unwrap();
    let with_session = |args: Value| {
        let mut c = env.cmd(bin!("ag-bash"));
        c.env("AG_SESSION_PID", session.id().to_string());
        let line = json!({"arguments": args}).to_string();
        let r = run(c, Some(line.as_bytes()));
        r.ok();
        r.json()
    };
    let tied = with_session(json!({"command": "sleep 600", "background": true}));
    let kept = with_session(json!({"command": "sleep 600", "background": true, "keep": true}));
    assert!(
        output(&tied).contains("stopped when the agent session ends"),
        "{tied}"
    );
    let tied_id = tied["details"]["job"].as_str().unwrap().to_string();
    let kept_id = kept["details"]["job"].as_str().unwrap().to_string();
    session.kill().unwrap();
    session.wait().unwrap();
    wait_for("the session's job to stop", || {
        job_state(&env, &tied_id)["details"]["state"] == "stopped"
    });
    let r = job_state(&env, &tied_id);
    assert_eq!(r["details"]["reason"], "the agent session ended");
    assert_eq!(job_state(&env, &kept_id)["details"]["state"], "running");
    let pid = kept["details"]["pid"].as_u64().unwrap() as u32;
    let r = bash(&env, json!({"job": "all", "stop": true}));
    assert!(
        output(&r).contains(&format!("job {kept_id}: stopped")),
        "{r}"
    );
    assert!(!process_alive(pid));
}

#[test]
fn inside_an_agent_session_jobs_end_with_the_process_that_started_ag_bash() {
    // ag-loop sets AG_SESSION_DIR and runs ag-bash directly: ag-bash's
    // parent is the session. Here the parent is a shell that exits at once.
    let env = Env::new();
    let session = env.join("session");
    let mut c = env.cmd("sh");
    c.env("AG_SESSION_DIR", &session).args([
        "-c",
        &format!("{} --background 'sleep 600'; true", bin!("ag-bash")),
    ]);
    let r = run(c, None);
    r.ok();
    assert!(
        r.stdout().contains("stopped when the agent session ends"),
        "{r}"
    );
    assert!(session.join("jobs/1/job.json").exists(), "{r}");
    let state = || {
        let mut c = env.cmd(bin!("ag-bash"));
        c.env("AG_SESSION_DIR", &session)
            .args(["--json", "--job", "1"]);
        run(c, None).json()
    };
    wait_for("the job to stop", || {
        state()["details"]["state"] == "stopped"
    });
    assert_eq!(state()["details"]["reason"], "the agent session ended");
}

/// A script of the working directory run as a command (`build.sh`, 127) or
/// without its executable bit (`./build.sh`, 126): the note names the file
/// and how to run it, which bash's own message does not.
#[test]
fn a_script_run_the_wrong_way_is_named_with_how_to_run_it() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    env.write("build.sh", "#!/bin/sh\necho built\n");
    let script = env.join("build.sh");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    let r = bash(&env, json!({"command": "./build.sh"}));
    assert_eq!(r["details"]["exit_code"], 126, "{r}");
    assert!(
        output(&r).contains(
            "`build.sh` is not executable (mode 644): `chmod +x build.sh` makes it so; `bash build.sh` runs it as it is."
        ),
        "{r}"
    );
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let r = bash(&env, json!({"command": "build.sh"}));
    assert_eq!(r["details"]["exit_code"], 127, "{r}");
    assert!(output(&r).contains("Run it as `./build.sh`."), "{r}");
    let r = bash(&env, json!({"command": "./build.sh"}));
    assert_eq!(output(&r), "built\n\nexit code: 0\n", "{r}");
}

/// A failed command whose line ends inside a quoted string (JSON's `\n`
/// became a line break) is told how to send a backslash and an n; the
/// same command that works gets no note.
#[test]
fn a_line_break_inside_a_string_of_a_failed_command_is_named() {
    let env = Env::new();
    let r = bash(
        &env,
        json!({"command": "printf \"total: %d\n\" 3 >/dev/null; exit 3"}),
    );
    let out = r["output"].as_str().unwrap();
    assert!(
        out.contains("Line 1 of the command ends inside a quoted string (`printf \"total: %d`): a `\\n` in the call's JSON is a real line break there"),
        "{r}"
    );
    let r = bash(&env, json!({"command": "printf \"total: %d\n\" 3"}));
    assert!(
        !r["output"].as_str().unwrap().contains("quoted string"),
        "{r}"
    );
}
