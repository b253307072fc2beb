//! `ag-loop --workspace URI`: the ag tools run in another workspace. Over
//! ssh against a real sshd that the test starts on 127.0.0.1 (its own host
//! key, authorized key and config, the remote HOME and PATH set by the
//! sshd config, so the tools are missing there and get copied); docker and
//! kubectl through fake clients on PATH that run the command here, which
//! checks the arguments each transport is given. kubectl is not run end to
//! end (no cluster); docker and podman are, in `workspace_containers`.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::bin;
use crate::model_server::{ModelServer, Turn};
use crate::util::{Env, Run, run, wait_for};

/// A private sshd on a free port of 127.0.0.1, running as this user.
struct Sshd {
    dir: tempfile::TempDir,
    port: u16,
    child: Child,
}

impl Sshd {
    fn start() -> Sshd {
        let dir = tempfile::tempdir().unwrap();
        let p = |rel: &str| dir.path().join(rel);
        for key in ["host", "client"] {
            let st = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", ""])
                .arg("-f")
                .arg(p(key))
                .status()
                .expect("ssh-keygen (openssh-client) is needed");
            assert!(st.success());
        }
        std::fs::copy(p("client.pub"), p("authorized_keys")).unwrap();
        std::fs::create_dir(p("home")).unwrap();
        // As root sshd insists on its privilege separation directory, which
        // a container may lack.
        if nix_is_root() && !Path::new("/run/sshd").exists() {
            let _ = std::fs::create_dir_all("/run/sshd");
        }
        let port = free_port();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {host}\nAuthorizedKeysFile {keys}\nPidFile none\n\
             StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             PermitRootLogin yes\nSetEnv HOME={home} PATH=/usr/bin:/bin\nLogLevel ERROR\n",
            host = p("host").display(),
            keys = p("authorized_keys").display(),
            home = p("home").display(),
        );
        std::fs::write(p("sshd_config"), config).unwrap();
        let sshd = ["/usr/sbin/sshd", "/usr/bin/sshd"]
            .into_iter()
            .find(|s| Path::new(s).exists())
            .expect("sshd (openssh-server) is needed");
        let child = Command::new(sshd)
            .args(["-D", "-e", "-f"])
            .arg(p("sshd_config"))
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "sshd did not listen"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Sshd { dir, port, child }
    }

    /// `$AG_SSH_OPTIONS` for this server.
    fn options(&self) -> String {
        format!(
            "-F /dev/null -i {} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR",
            self.dir.path().join("client").display()
        )
    }

    fn uri(&self, path: &Path) -> String {
        format!("ssh://127.0.0.1:{}{}", self.port, path.display())
    }

    /// The remote HOME (where binaries are copied).
    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// Kills the server and every connection it serves: a dropped link.
    fn kill_all(&mut self) {
        let mut pids = vec![self.child.id()];
        let mut i = 0;
        while i < pids.len() {
            let out = Command::new("pgrep")
                .args(["-P", &pids[i].to_string()])
                .output()
                .unwrap();
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                if let Ok(p) = line.trim().parse() {
                    pids.push(p);
                }
            }
            i += 1;
        }
        // Only the connection handlers: the user's processes below them
        // must see the link drop, as on a real host.
        let handlers: Vec<String> = pids
            .iter()
            .filter(|p| is_sshd(**p))
            .map(|p| p.to_string())
            .collect();
        Command::new("kill")
            .arg("-KILL")
            .args(&handlers)
            .status()
            .unwrap();
        let _ = self.child.wait();
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An sshd process: the listener, or a connection's handler, which
/// OpenSSH 9.8 and later run as `sshd-session` (Debian trixie), earlier
/// ones as `sshd`.
fn is_sshd(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .is_ok_and(|c| matches!(c.trim(), "sshd" | "sshd-session" | "sshd-auth"))
}

pub(crate) fn nix_is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find(|l| l.starts_with("Uid:"))
            .is_some_and(|l| l.split_whitespace().nth(1) == Some("0"))
    })
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn alive(pattern: &str) -> bool {
    let out = Command::new("pgrep")
        .args(["-f", pattern])
        .output()
        .unwrap();
    !out.stdout.is_empty()
}

/// ag-loop against the scripted model, in `workspace`, extra environment.
fn ag_loop(env: &Env, server: &ModelServer, workspace: &str, vars: &[(&str, &str)]) -> Command {
    let mut c = server.ag_loop(env);
    c.args(["--no-gate", "--workspace", workspace]);
    for (k, v) in vars {
        c.env(k, v);
    }
    c
}

pub(crate) fn tool_ends(events: &[Value]) -> Vec<&Value> {
    events
        .iter()
        .filter(|e| e["type"] == "tool_execution_end")
        .collect()
}

/// A model that reads `notes.txt`, changes `beta` to `gamma` in it, writes
/// `made.txt` holding `made`, runs `bash`, and ends; then, for a second
/// session, reads `made.txt` and ends.
pub(crate) fn remote_task(made: &str, bash: &str) -> Vec<Turn> {
    vec![
        Turn::Tools(vec![("read", json!({"file_path": "notes.txt"}))]),
        Turn::Tools(vec![(
            "edit",
            json!({"file_path": "notes.txt", "old_string": "beta", "new_string": "gamma"}),
        )]),
        Turn::Tools(vec![(
            "write",
            json!({"file_path": "made.txt", "content": format!("{made}\n")}),
        )]),
        Turn::Tools(vec![("bash", json!({ "command": bash }))]),
        Turn::Text("done"),
        Turn::Tools(vec![("read", json!({"file_path": "made.txt"}))]),
        Turn::Text("done again"),
    ]
}

/// A session after the first one: it ran, copied no tool, and its first
/// call succeeded with `made` in its output.
pub(crate) fn second_session_copied_nothing(r: &Run, made: &str) {
    r.ok();
    let events = r.json_lines();
    assert_eq!(copied_notes(&events), 0, "{events:?}");
    let ends = tool_ends(&events);
    assert_eq!(ends[0]["is_error"], false, "{r}");
    assert!(ends[0]["output"].as_str().unwrap().contains(made), "{r}");
}

pub(crate) fn copied_notes(events: &[Value]) -> usize {
    events
        .iter()
        .filter(|e| e["type"] == "notify" && e["message"].as_str().unwrap().contains("copied"))
        .count()
}

#[test]
fn over_ssh_the_calls_change_the_remote_directory_and_the_tools_are_copied_once() {
    let sshd = Sshd::start();
    let env = Env::new();
    let remote = tempfile::tempdir().unwrap();
    let rdir = remote.path().canonicalize().unwrap();
    std::fs::write(rdir.join("notes.txt"), "alpha\nbeta\n").unwrap();
    std::fs::write(rdir.join("AGENTS.md"), "Remote rules: say ahoy.\n").unwrap();
    env.write("AGENTS.md", "Local rules, not for this run.\n");
    let server = ModelServer::start(remote_task("made remotely", "pwd; cat made.txt"));
    let uri = sshd.uri(&rdir);
    let options = sshd.options();
    let vars = [("AG_SSH_OPTIONS", options.as_str())];
    let mut c = ag_loop(&env, &server, &uri, &vars);
    c.arg("change the notes");
    let r = run(c, None);
    r.ok();
    let events = r.json_lines();
    let ends = tool_ends(&events);
    assert_eq!(ends.len(), 4, "{r}");
    assert!(ends.iter().all(|e| e["is_error"] == false), "{ends:?}");
    // The files changed there, and nothing was made here.
    assert_eq!(
        std::fs::read_to_string(rdir.join("notes.txt")).unwrap(),
        "alpha\ngamma\n"
    );
    assert_eq!(
        std::fs::read_to_string(rdir.join("made.txt")).unwrap(),
        "made remotely\n"
    );
    assert!(!env.join("made.txt").exists());
    let bash = ends[3]["output"].as_str().unwrap();
    assert!(
        bash.contains(&rdir.display().to_string()) && bash.contains("made remotely"),
        "{bash}"
    );
    // The binaries were copied into the remote cache, and it was said.
    assert_eq!(copied_notes(&events), 1, "{events:?}");
    let cache = sshd
        .home()
        .join(".cache/ag")
        .join(env!("CARGO_PKG_VERSION"));
    let read_bin = cache.join("ag-read");
    assert!(read_bin.is_file(), "{}", cache.display());
    let first_copy = std::fs::metadata(&read_bin).unwrap().modified().unwrap();
    // The model saw the remote directory and its AGENTS.md, not the local one.
    let system = server.requests()[0]["messages"][0]["content"].to_string();
    assert!(
        system.contains(&format!("Working directory: {}", rdir.display())),
        "{system}"
    );
    assert!(system.contains("Remote rules: say ahoy."), "{system}");
    assert!(!system.contains("Local rules"), "{system}");

    // A second session finds the tools there: no second copy.
    let mut c = ag_loop(&env, &server, &uri, &vars);
    c.arg("read it");
    second_session_copied_nothing(&run(c, None), "made remotely");
    assert_eq!(
        std::fs::metadata(&read_bin).unwrap().modified().unwrap(),
        first_copy
    );
}

/// Runs ag-loop on a prompt whose bash call starts `sleep MARKER` there,
/// and gives the running child, its stdin and the events read until the
/// sleep runs.
/// An ag-loop run whose model has a call under way.
pub(crate) struct UnderWay {
    child: Child,
    stdin: Option<std::process::ChildStdin>,
    out: BufReader<std::process::ChildStdout>,
    events: Vec<Value>,
}

impl UnderWay {
    /// Starts ag-loop (`c`) on a prompt on stdin and reads its events up to
    /// the `nth` (from 1) `tool_execution_start`.
    pub(crate) fn start(mut c: Command, nth: usize) -> UnderWay {
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"sleep there\n").unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut events = Vec::new();
        let mut line = String::new();
        let mut starts = 0;
        while out.read_line(&mut line).unwrap() > 0 {
            let e: Value = serde_json::from_str(&line).unwrap();
            line.clear();
            starts += usize::from(e["type"] == "tool_execution_start");
            events.push(e);
            if starts == nth {
                break;
            }
        }
        assert_eq!(starts, nth, "ag-loop ended before the call: {events:?}");
        UnderWay {
            child,
            stdin: Some(stdin),
            out,
            events,
        }
    }

    /// Sends an interrupt, and returns the events once ag-loop has ended,
    /// checking that its one call ended as interrupted.
    pub(crate) fn interrupt(mut self) -> Vec<Value> {
        if let Some(stdin) = self.stdin.as_mut() {
            stdin.write_all(b"{\"type\":\"interrupt\"}\n").unwrap();
        }
        let events = self.finish();
        let ends = tool_ends(&events);
        assert_eq!(ends.len(), 1, "{events:?}");
        let out = ends[0]["output"].as_str().unwrap();
        assert!(out.contains("interrupted"), "{:?}", ends[0]);
        events
    }

    /// Closes stdin, and returns all the events once ag-loop has ended.
    pub(crate) fn finish(mut self) -> Vec<Value> {
        drop(self.stdin.take());
        for line in self.out.lines() {
            self.events
                .push(serde_json::from_str(&line.unwrap()).unwrap());
        }
        self.child.wait().unwrap();
        self.events
    }
}

/// A model whose one call runs `marker` twice, in the background and in
/// front: an interrupt must end both.
pub(crate) fn sleeping_twice(marker: &str) -> Vec<Turn> {
    vec![
        Turn::Tools(vec![(
            "bash",
            json!({"command": format!("{marker} & {marker}")}),
        )]),
        Turn::Text("stopped"),
    ]
}

#[test]
fn over_ssh_an_interrupt_ends_the_remote_command_and_everything_it_started() {
    let sshd = Sshd::start();
    let env = Env::new();
    let remote = tempfile::tempdir().unwrap();
    let marker = format!("sleep {}", 7000 + std::process::id() % 1000);
    let server = ModelServer::start(sleeping_twice(&marker));
    let options = sshd.options();
    let vars = [("AG_SSH_OPTIONS", options.as_str())];
    let uri = sshd.uri(remote.path());
    let run = UnderWay::start(ag_loop(&env, &server, &uri, &vars), 1);
    wait_for("the remote sleep", || alive(&marker));
    run.interrupt();
    // The remote side ends it once the channel closes; give it the
    // remote grace period.
    wait_for("the remote sleeps to end", || !alive(&marker));
}

#[test]
fn over_ssh_a_dropped_connection_is_a_tool_error_that_says_so() {
    let mut sshd = Sshd::start();
    let env = Env::new();
    let remote = tempfile::tempdir().unwrap();
    let marker = format!("sleep {}", 8000 + std::process::id() % 1000);
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("bash", json!({"command": marker.clone()}))]),
        Turn::Text("the link went down"),
    ]);
    let options = sshd.options();
    let vars = [("AG_SSH_OPTIONS", options.as_str())];
    let uri = sshd.uri(remote.path());
    let run = UnderWay::start(ag_loop(&env, &server, &uri, &vars), 1);
    wait_for("the remote sleep", || alive(&marker));
    sshd.kill_all();
    let events = run.finish();
    let ends = tool_ends(&events);
    assert_eq!(ends.len(), 1, "{events:?}");
    assert_eq!(ends[0]["is_error"], true);
    let text = ends[0]["output"].as_str().unwrap();
    assert!(
        text.contains("connection to ssh host `127.0.0.1` failed or was lost")
            && text.contains("not repeated"),
        "{text}"
    );
    // The remote call did not outlive its connection either.
    wait_for("the orphaned remote sleep to end", || !alive(&marker));
}

#[test]
fn a_bad_or_unreachable_workspace_stops_ag_loop_before_any_event() {
    let env = Env::new();
    for (uri, says) in [
        ("build-box:/src", "not a workspace URI"),
        ("ftp://h/src", "unknown transport `ftp`"),
        ("ssh://h", "no directory"),
        ("ssh://-oProxyCommand=x/src", "starts with `-`"),
    ] {
        let mut c = env.cmd(bin!("ag-loop"));
        c.args(["--llm-cmd", "true", "--workspace", uri, "hi"]);
        let r = run(c, None);
        r.expect_code(2);
        assert!(r.stdout().is_empty(), "{r}");
        assert!(r.stderr().contains(says), "{uri}: {r}");
    }
    // Nothing listens on this port.
    let port = free_port();
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "--llm-cmd",
        "true",
        "--workspace",
        &format!("ssh://127.0.0.1:{port}/src"),
        "hi",
    ]);
    c.env("AG_SSH_OPTIONS", "-F /dev/null -o ConnectTimeout=5");
    let r = run(c, None);
    r.expect_code(2);
    assert!(r.stderr().contains("cannot connect"), "{r}");
}

/// A fake `NAME` client on PATH that logs its arguments up to the script
/// and runs `sh -c SCRIPT` here, as `docker exec -i` would in a container;
/// once the file `.fake-NAME-gone` exists it fails as a client does whose
/// target is gone.
fn fake_client(env: &Env, name: &str, skip: usize) -> PathBuf {
    let dir = env.join(".fake-bin");
    let log = env.join(&format!(".fake-{name}.log"));
    let gone = env.join(&format!(".fake-{name}-gone"));
    env.write(
        &format!(".fake-bin/{name}"),
        format!(
            "#!/bin/sh\n[ -e '{gone}' ] && {{ echo 'Error from server (NotFound): the target is gone' >&2; exit 1; }}\nn=0\nfor a in \"$@\"; do [ $n -lt {skip} ] && printf '%s ' \"$a\" >> '{log}'; n=$((n+1)); done\necho >> '{log}'\nshift {skip}\nexec \"$@\"\n",
            log = log.display(),
            gone = gone.display()
        ),
    );
    let path = dir.join(name);
    let mut perm = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&path, perm).unwrap();
    dir
}

fn with_fake_on_path(c: &mut Command, dir: &Path) {
    let path = std::env::var("PATH").unwrap_or_default();
    c.env("PATH", format!("{}:{path}", dir.display()));
}

#[test]
fn docker_and_kubectl_get_the_exec_arguments_and_the_calls_run_in_the_path() {
    for (uri_prefix, client, skip, expect) in [
        ("docker://dev_box", "docker", 3, "exec -i dev_box "),
        (
            "kubectl://team/pod-1:app",
            "kubectl",
            8,
            "exec -i -n team pod-1 -c app -- ",
        ),
    ] {
        let env = Env::new();
        let fake = fake_client(&env, client, skip);
        let remote = tempfile::tempdir().unwrap();
        let rdir = remote.path().canonicalize().unwrap();
        let server = ModelServer::start(vec![
            Turn::Tools(vec![(
                "write",
                json!({"file_path": "in-container.txt", "content": "hi\n"}),
            )]),
            Turn::Text("done"),
        ]);
        let uri = format!("{uri_prefix}{}", rdir.display());
        let mut c = ag_loop(&env, &server, &uri, &[]);
        with_fake_on_path(&mut c, &fake);
        c.arg("write it");
        let r = run(c, None);
        r.ok();
        let ends = r.json_lines();
        let ends = tool_ends(&ends);
        assert_eq!(ends[0]["is_error"], false, "{r}");
        assert_eq!(
            std::fs::read_to_string(rdir.join("in-container.txt")).unwrap(),
            "hi\n"
        );
        let log = String::from_utf8(env.read(&format!(".fake-{client}.log"))).unwrap();
        assert!(!log.is_empty());
        // Every exec (probe, copies, calls) named the same target the same way.
        for line in log.lines() {
            assert_eq!(line, expect, "{log}");
        }
    }
    // Written to the real stderr, which libtest does not capture, so that
    // every run shows it.
    let _ = writeln!(
        std::io::stderr(),
        "NOT RUN: kubectl end-to-end test of ag-loop --workspace: no Kubernetes cluster can be had here, so kubectl ran only as a fake client that runs the command locally, which checks its exec arguments (not a pass for kubectl end to end; docker and podman run end to end in workspace_containers)"
    );
}

#[test]
fn kubectl_a_pod_gone_during_a_call_is_said_through_the_fake_client() {
    let env = Env::new();
    let fake = fake_client(&env, "kubectl", 8);
    let remote = tempfile::tempdir().unwrap();
    let rdir = remote.path().canonicalize().unwrap();
    let gone = env.join(".fake-kubectl-gone");
    // The call ends without a result (its ag-bash killed) as the pod goes.
    let command = format!("touch '{}'; kill -KILL $PPID", gone.display());
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("bash", json!({ "command": command }))]),
        Turn::Text("the pod went away"),
    ]);
    let uri = format!("kubectl://team/pod-1:app{}", rdir.display());
    let mut c = ag_loop(&env, &server, &uri, &[]);
    with_fake_on_path(&mut c, &fake);
    c.args(["--tools", "bash", "run it"]);
    let r = run(c, None);
    r.ok();
    let events = r.json_lines();
    let ends = tool_ends(&events);
    assert_eq!(ends.len(), 1, "{r}");
    assert_eq!(ends[0]["is_error"], true, "{r}");
    let said = ends[0]["output"].as_str().unwrap();
    assert!(
        said.contains("kubectl pod `pod-1` is gone or stopped")
            && said.contains("the target is gone")
            && said.contains("not repeated"),
        "{said}"
    );
}

// Runs that end when a check passes (issue 35).
#[test]
fn over_ssh_the_until_check_runs_in_the_workspace_even_without_bash_among_the_tools() {
    let sshd = Sshd::start();
    let env = Env::new();
    let remote = tempfile::tempdir().unwrap();
    let rdir = remote.path().canonicalize().unwrap();
    // Here the check would pass; there it does not, until the file is made.
    env.write("made.txt", "here\n");
    let server = ModelServer::start(vec![Turn::Text("done"), Turn::Text("done again")]);
    let uri = sshd.uri(&rdir);
    let options = sshd.options();
    let vars = [("AG_SSH_OPTIONS", options.as_str())];
    let check = [
        "--tools",
        "read",
        "--until",
        "pwd; test -f made.txt",
        "--until-tries",
        "1",
    ];
    let mut c = ag_loop(&env, &server, &uri, &vars);
    c.args(check).arg("go");
    let r = run(c, None);
    r.expect_code(1);
    let events = r.json_lines();
    let found: Vec<&Value> = events.iter().filter(|e| e["type"] == "check").collect();
    assert_eq!(found.len(), 1, "{r}");
    assert_eq!(found[0]["exit_code"], 1, "{r}");
    let output = found[0]["output"].as_str().unwrap();
    assert!(output.contains(&rdir.display().to_string()), "{output}");
    // ag-bash went there for the check, although the model has no bash.
    let cache = sshd
        .home()
        .join(".cache/ag")
        .join(env!("CARGO_PKG_VERSION"));
    assert!(cache.join("ag-bash").is_file(), "{}", cache.display());
    std::fs::write(rdir.join("made.txt"), "there\n").unwrap();
    let mut c = ag_loop(&env, &server, &uri, &vars);
    c.args(check).arg("go");
    let r = run(c, None);
    r.ok();
    let events = r.json_lines();
    let found: Vec<&Value> = events.iter().filter(|e| e["type"] == "check").collect();
    assert_eq!(found[0]["passed"], true, "{r}");
}
