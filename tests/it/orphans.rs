//! No orphans when a process of ag is SIGKILLed (kill -9, the OOM killer, a
//! CI runner's timeout): ag-bash, ag-loop (its tool calls, `--llm-cmd`, its
//! gates) and ag-mcp are killed while a command with a background child
//! runs, and every process of that command must be gone soon after.

use std::io::Write;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use ag::proc::{Signal, signal_process};
use serde_json::json;

use crate::bin;
use crate::model_server::{ModelServer, Turn};
use crate::util::Env;

/// Longer than anything here should take to start; only a hang reaches it.
const HANG: Duration = Duration::from_secs(30);
/// How long the killed process's children may take to go. The watchdog
/// needs far less; this only bounds the poll.
const CLEANUP: Duration = Duration::from_secs(10);

/// A duration for `sleep` that no other process on the machine has in its
/// arguments: it marks the processes of one test.
fn marker() -> String {
    marker_for(1000)
}

/// A unique `sleep` duration of a little over `secs` seconds (see [`marker`]).
pub(crate) fn marker_for(secs: u32) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!(
        "{secs}.{}{:02}{nanos:09}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

/// The command every test runs: a background child and a foreground one
/// (and nothing on stdout, which `--llm-cmd` must keep for events).
fn command(marker: &str) -> String {
    format!("sleep {marker} & echo started >&2; sleep {marker}")
}

/// The live `sleep MARKER` processes (zombies have no arguments left).
pub(crate) fn sleepers(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let mut args = cmdline.split(|b| *b == 0);
        let is_sleep = args.next().is_some_and(|a| a.ends_with(b"sleep"));
        if is_sleep && args.next() == Some(marker.as_bytes()) {
            found.push(pid);
        }
    }
    found
}

/// Waits until both sleeps of the command run.
fn wait_for_sleepers(marker: &str, child: &mut Child) {
    let deadline = Instant::now() + HANG;
    while sleepers(marker).len() < 2 {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the process under test ended ({status}) before the command ran");
        }
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SIGKILLs the process, reaps it, and fails unless every sleep of the
/// command is gone within [`CLEANUP`].
fn kill_and_expect_no_orphans(marker: &str, mut child: Child) {
    assert!(signal_process(child.id(), Signal::SIGKILL));
    let status = child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );
    let deadline = Instant::now() + CLEANUP;
    loop {
        let left = sleepers(marker);
        if left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "processes {left:?} outlived the SIGKILLed process"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// ag-bash running `command` as a plain command, its output dropped.
fn ag_bash_plain(env: &Env, command: impl AsRef<std::ffi::OsStr>) -> Child {
    let mut c = env.cmd(bin!("ag-bash"));
    c.arg(command).stdout(Stdio::null()).stderr(Stdio::null());
    c.spawn().unwrap()
}

#[test]
fn ag_bash_killed_in_plain_mode_leaves_no_process() {
    let env = Env::new();
    let m = marker();
    let mut child = ag_bash_plain(&env, command(&m));
    wait_for_sleepers(&m, &mut child);
    kill_and_expect_no_orphans(&m, child);
}

#[test]
fn ag_bash_killed_leaves_no_process_even_when_sigterm_is_ignored() {
    // The watchdog's SIGKILL after the grace period ends what SIGTERM cannot.
    let env = Env::new();
    let m = marker();
    let mut child = ag_bash_plain(&env, format!("trap '' TERM; {}", command(&m)));
    wait_for_sleepers(&m, &mut child);
    kill_and_expect_no_orphans(&m, child);
}

#[test]
fn ag_bash_killed_leaves_no_process_even_outside_the_commands_group() {
    // `setsid` takes the background sleep out of the command's session and
    // group; the watchdog finds it all the same.
    let env = Env::new();
    let m = marker();
    let mut child = ag_bash_plain(&env, format!("setsid sleep {m} & sleep {m}"));
    wait_for_sleepers(&m, &mut child);
    kill_and_expect_no_orphans(&m, child);
}

#[test]
fn ag_bash_killed_while_serving_calls_leaves_no_process() {
    let env = Env::new();
    let m = marker();
    let mut c = env.cmd(bin!("ag-bash"));
    c.stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    let call = json!({"id": "1", "arguments": {"command": command(&m)}});
    writeln!(child.stdin.as_mut().unwrap(), "{call}").unwrap();
    wait_for_sleepers(&m, &mut child);
    kill_and_expect_no_orphans(&m, child);
}

/// ag-loop against a scripted model, with the real tools and no session.
fn ag_loop(env: &Env, server: &ModelServer, extra: &[&str]) -> Child {
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "-m",
        "ollama/scripted",
        "--base-url",
        &server.base_url(),
        "--json",
        "--no-session",
    ])
    .args(extra)
    .arg("go")
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    c.spawn().unwrap()
}

#[test]
fn ag_loop_killed_during_a_tool_call_leaves_no_process() {
    let env = Env::new();
    let m = marker();
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("bash", json!({"command": command(&m)}))]),
        Turn::Text("never reached"),
    ]);
    let mut child = ag_loop(&env, &server, &["--no-gate"]);
    wait_for_sleepers(&m, &mut child);
    kill_and_expect_no_orphans(&m, child);
}

#[test]
fn ag_loop_killed_while_a_gate_runs_leaves_no_process() {
    let env = Env::new();
    let m = marker();
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("ls", json!({}))]),
        Turn::Text("never reached"),
    ]);
    let gate = command(&m);
    let mut child = ag_loop(&env, &server, &["--gate", &gate, "--gate-timeout", "600"]);
    wait_for_sleepers(&m, &mut child);
    kill_and_expect_no_orphans(&m, child);
}

#[test]
fn ag_loop_killed_while_its_llm_cmd_runs_leaves_no_process() {
    // `sh -c` has no clean-up of its own: only ending the whole group helps.
    let env = Env::new();
    let m = marker();
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["--llm-cmd", &command(&m), "--no-gate", "--no-session", "go"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    wait_for_sleepers(&m, &mut child);
    kill_and_expect_no_orphans(&m, child);
}

#[test]
fn ag_mcp_killed_during_a_call_leaves_no_process() {
    let env = Env::new();
    let m = marker();
    let mut c = env.cmd(bin!("ag-mcp"));
    c.args(["--tools", "bash"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    let stdin = child.stdin.as_mut().unwrap();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "ag-test", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "bash", "arguments": {"command": command(&m)}}}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    wait_for_sleepers(&m, &mut child);
    kill_and_expect_no_orphans(&m, child);
}

#[test]
fn a_normal_exit_takes_the_watchdog_along() {
    // Left behind, the watchdog would become a zombie of an init that may
    // never reap it (a container's PID 1 often does not). Here the outer
    // ag-bash is that init: it adopts orphans and reaps them only between
    // commands, so an inner process's orphaned watchdog would still show up
    // among its children, beside the outer one's own watchdog.
    let env = Env::new();
    let script = format!(
        "'{bash}' true >/dev/null; '{agent}' --llm-cmd true --no-gate --no-session go >/dev/null 2>&1; \
         echo \"watchdogs: $(ps -o comm= --ppid $PPID | grep -c ag-watchdog)\"",
        bash = bin!("ag-bash"),
        agent = bin!("ag-loop"),
    );
    let r = crate::util::run_args(&env, bin!("ag-bash"), &[&script]);
    r.ok();
    assert!(r.stdout().starts_with("watchdogs: 1\n"), "{r}");
}
