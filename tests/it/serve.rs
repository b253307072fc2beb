//! ag-serve over its Unix socket against a scripted model server: sessions
//! started, detached and attached again from an offset with every event
//! exactly once, two clients on one session with one approving, a client
//! that stops reading, one that asks and never reads, ag-serve killed
//! mid-call and the session resumed.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::bin;
use crate::model_server::{ModelServer, Turn};
use crate::util::{Env, of_type};

/// A broker running in a test directory.
pub struct Serve {
    pub child: Child,
    pub socket: PathBuf,
    /// What it printed on stderr, line by line, as it comes.
    pub stderr: std::sync::mpsc::Receiver<String>,
}

impl Serve {
    /// Starts `ag-serve` with `args` in `env` and waits until it listens.
    pub fn start(env: &Env, args: &[&str]) -> Serve {
        Serve::start_with(env, args, &[])
    }

    /// The same with more environment variables.
    pub fn start_with(env: &Env, args: &[&str], vars: &[(&str, &str)]) -> Serve {
        let mut c = env.cmd(bin!("ag-serve"));
        c.envs(vars.iter().copied());
        c.args(args);
        Serve::spawn(env, c)
    }

    /// The same under a limit of `nofile` open files (`ulimit -n`), as on a
    /// small machine.
    pub fn start_limited(env: &Env, nofile: u32, args: &[&str]) -> Serve {
        let mut c = env.cmd("sh");
        c.arg("-c")
            .arg(format!("ulimit -n {nofile} && exec \"$0\" \"$@\""))
            .arg(bin!("ag-serve"))
            .args(args);
        Serve::spawn(env, c)
    }

    fn spawn(env: &Env, mut c: Command) -> Serve {
        c.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines() {
                let Ok(line) = line else { return };
                eprintln!("[ag-serve] {line}");
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let s = Serve {
            child,
            socket: env.join(".home/.ag/serve/socket"),
            stderr: rx,
        };
        s.wait_for_line("listening on");
        s
    }

    /// Waits for a stderr line containing `text`; returns it.
    pub fn wait_for_line(&self, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok(l) if l.contains(text) => return l,
                Ok(_) => {}
                Err(e) => panic!("ag-serve never said `{text}`: {e}"),
            }
        }
    }

    pub fn connect(&self) -> Client {
        Client::connect(&self.socket)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        // SIGTERM: the sessions are told to finish, then stopped.
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One connection to the broker, lines in and out.
pub struct Client {
    pub reader: BufReader<UnixStream>,
    pub writer: UnixStream,
    /// Every line read, in order.
    pub seen: Vec<Value>,
}

impl Client {
    pub fn connect(socket: &std::path::Path) -> Client {
        let s = UnixStream::connect(socket).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        Client {
            reader: BufReader::new(s.try_clone().unwrap()),
            writer: s,
            seen: Vec::new(),
        }
    }

    pub fn send(&mut self, v: &Value) {
        self.writer
            .write_all((v.to_string() + "\n").as_bytes())
            .unwrap();
    }

    /// The next line, parsed; `None` at the end of the connection.
    pub fn next(&mut self) -> Option<Value> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => None,
            Ok(_) => {
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
                self.seen.push(v.clone());
                Some(v)
            }
            Err(e) => panic!(
                "no line from ag-serve ({e}); the last lines:\n{}",
                self.tail()
            ),
        }
    }

    /// Reads until a line of type `t` (returned), keeping every line.
    pub fn until(&mut self, t: &str) -> Value {
        loop {
            match self.next() {
                Some(v) if v["type"] == t => return v,
                Some(_) => {}
                None => panic!(
                    "the connection ended before a `{t}`; the last lines:\n{}",
                    self.tail()
                ),
            }
        }
    }

    /// The last lines read, shortened, for a failure's message.
    pub fn tail(&self) -> String {
        let start = self.seen.len().saturating_sub(15);
        self.seen[start..]
            .iter()
            .map(|v| v.to_string().chars().take(300).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The events (lines with a timestamp) read so far.
    pub fn events(&self) -> Vec<Value> {
        self.seen
            .iter()
            .filter(|v| v.get("timestamp").is_some())
            .cloned()
            .collect()
    }
}

/// Reads `c`'s events until `ends` `agent_end`s, attaching again (on a new
/// connection) wherever the broker drops it for falling behind, as a
/// machine under load may make any reader do; returns the events, and
/// the connection it ends on.
pub fn follow(serve: &Serve, mut c: Client, id: &str, ends: usize) -> (Vec<Value>, Client) {
    let mut events = Vec::new();
    let mut seen = 0;
    while seen < ends {
        match c.next() {
            Some(v) if v.get("timestamp").is_some() => {
                if v["type"] == "agent_end" {
                    seen += 1;
                }
                events.push(v);
            }
            Some(v) if v["type"] == "dropped" => {
                assert_eq!(v["offset"], events.len() as u64, "{v}");
                c = serve.connect();
                c.send(&json!({"type": "attach", "session": id, "from": events.len()}));
            }
            Some(_) => {}
            None => panic!("the connection ended after {} events", events.len()),
        }
    }
    (events, c)
}

/// A process's memory from /proc: (resident now, peak resident), in KiB.
pub fn memory(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap()
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// The flags that point ag-loop at the scripted model.
pub fn model_args(server: &ModelServer) -> Vec<String> {
    vec![
        "-m".into(),
        "ollama/scripted".into(),
        "--base-url".into(),
        server.base_url(),
    ]
}

/// The events of a session file (every line after the header), parsed.
pub fn file_events(path: &str) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("torn line ({e}): {l}")))
        .collect()
}

#[test]
fn a_session_started_detached_and_attached_again_from_its_offset_gives_every_event_once() {
    let env = Env::new();
    let long: String = (0..400).map(|i| format!("word{i} ")).collect();
    let server = ModelServer::start(vec![
        Turn::Text("first answer"),
        Turn::Owned(long),
        Turn::Text("third answer"),
    ]);
    let serve = Serve::start(&env, &[]);
    let mut a = serve.connect();
    a.send(&json!({"type": "start", "args": model_args(&server), "prompt": "one", "client": "a"}));
    let attached = a.until("attached");
    assert_eq!(attached["from"], 0);
    assert_eq!(attached["live_from"], 0);
    let id = attached["session"].as_str().unwrap().to_string();
    let path = attached["path"].as_str().unwrap().to_string();
    a.until("agent_end");
    a.send(&json!({"type": "detach"}));
    let detached = a.until("detached");
    let first = a.events();
    assert_eq!(detached["offset"], first.len() as u64, "{detached}");

    // Meanwhile another client makes the session work on.
    let mut b = serve.connect();
    b.send(&json!({"type": "attach", "session": &id[..13], "from": first.len(), "client": "b"}));
    b.until("attached");
    b.send(&json!({"type": "prompt", "content": "two"}));
    // `a` comes back while the long answer streams: part of what it missed
    // comes from the file, the rest live.
    let mut a = serve.connect();
    a.send(&json!({"type": "attach", "session": &id[id.len() - 12..], "from": detached["offset"], "client": "a"}));
    let again = a.until("attached");
    assert_eq!(again["from"], detached["offset"]);
    a.until("agent_end");
    b.until("agent_end");
    // A plain text line is a prompt, as on ag-loop's stdin.
    a.writer.write_all(b"three\n").unwrap();
    a.until("agent_end");
    b.until("agent_end");
    a.send(&json!({"type": "detach"}));
    let end = a.until("detached");

    let mut got = first;
    got.extend(a.events());
    let file = file_events(&path);
    assert_eq!(end["offset"], file.len() as u64);
    assert_eq!(got.len(), file.len(), "events lost or doubled");
    assert_eq!(got, file, "the events differ from the session file's");
    assert_eq!(of_type(&got, "agent_end").len(), 3);
    // `b` saw the same events from where it attached.
    b.send(&json!({"type": "detach"}));
    b.until("detached");
    assert_eq!(b.events(), file[attached_from(&b.seen)..]);
    assert_eq!(server.requests().len(), 3);
}

/// The `from` of the first `attached` line.
fn attached_from(seen: &[Value]) -> usize {
    seen.iter()
        .find(|v| v["type"] == "attached")
        .and_then(|v| v["from"].as_u64())
        .unwrap() as usize
}

#[test]
fn two_clients_see_every_event_and_one_approval_answers_for_both() {
    let env = Env::new();
    env.write("build1/out.o", "x");
    let server = ModelServer::start(vec![
        Turn::Tools(vec![("bash", json!({"command": "rm -rf build1"}))]),
        Turn::Text("cleaned"),
    ]);
    let serve = Serve::start(&env, &[]);
    let mut args = model_args(&server);
    // Unsandboxed, the gate asks before `rm -rf`.
    args.extend(["--tools", "bash", "--sandbox", "off"].map(String::from));
    let mut alice = serve.connect();
    alice.send(&json!({"type": "start", "args": args, "client": "alice"}));
    let id = alice.until("attached")["session"]
        .as_str()
        .unwrap()
        .to_string();
    let mut bob = serve.connect();
    bob.send(&json!({"type": "attach", "session": id, "client": "bob"}));
    bob.until("attached");
    alice.send(&json!({"type": "prompt", "content": "clean up"}));
    let asked = bob.until("approval_request");
    alice.until("approval_request");
    let call = asked["tool_call_id"].clone();

    // A third client sees the session waiting.
    let mut carol = serve.connect();
    carol.send(&json!({"type": "list"}));
    let list = carol.until("sessions");
    let me = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id.as_str())
        .unwrap();
    assert_eq!(me["state"], "waiting_for_approval", "{list}");
    assert_eq!(me["clients"], 2);

    alice.send(&json!({"type": "approval", "tool_call_id": call, "approved": true}));
    let told = bob.until("approval_answered");
    assert_eq!(told["by"], "alice#1", "{told}");
    assert_eq!(told["approved"], true);
    alice.until("approval_answered");
    // Bob's late answer is refused, naming who answered.
    bob.send(&json!({"type": "approval", "tool_call_id": call, "approved": false}));
    let refused = bob.until("refused");
    assert!(
        refused["message"].as_str().unwrap().contains("alice#1"),
        "{refused}"
    );
    alice.until("agent_end");
    bob.until("agent_end");
    assert!(
        !env.join("build1").exists(),
        "the approved call did not run"
    );
    assert_eq!(alice.events(), bob.events());
    let ran = of_type(&alice.events(), "tool_execution_end")
        .into_iter()
        .cloned()
        .collect::<Vec<_>>();
    assert_eq!(ran.len(), 1);
    assert_eq!(ran[0]["is_error"], false, "{}", ran[0]);
    carol.send(&json!({"type": "list"}));
    let list = carol.until("sessions");
    assert_eq!(list["sessions"][0]["state"], "idle", "{list}");
}

#[test]
fn a_client_that_stops_reading_is_dropped_and_comes_back_from_its_offset() {
    let env = Env::new();
    // Thousands of stream events, far past the 1 MiB a client may lag and
    // what the socket holds (the answer's last three lines, 200 KB each,
    // fit in it: a client that keeps up is never dropped).
    let long: String = (0..30000).map(|i| format!("w{i} ")).collect();
    let server = ModelServer::start(vec![Turn::Owned(long)]);
    let serve = Serve::start(&env, &["--client-buffer", "1048576"]);
    let mut fast = serve.connect();
    fast.send(&json!({"type": "start", "args": model_args(&server), "client": "fast"}));
    let attached = fast.until("attached");
    let id = attached["session"].as_str().unwrap().to_string();
    let path = attached["path"].as_str().unwrap().to_string();
    let mut slow = serve.connect();
    slow.send(&json!({"type": "attach", "session": id, "client": "slow"}));
    // `slow` reads nothing from here on, while the session goes on.
    std::thread::sleep(Duration::from_millis(200));
    fast.send(&json!({"type": "prompt", "content": "talk"}));
    let (got, _) = follow(&serve, fast, &id, 1);
    let total = file_events(&path).len();
    assert!(total > 20000, "{total}");
    assert_eq!(got, file_events(&path));

    // Now it reads: what it had, then the message, then the end.
    let mut dropped = None;
    while let Some(v) = slow.next() {
        if v["type"] == "dropped" {
            dropped = Some(v);
        }
    }
    let dropped = dropped.expect("the slow client was never dropped");
    let offset = dropped["offset"].as_u64().unwrap();
    let before = slow.events();
    assert_eq!(before.len() as u64, offset, "{dropped}");
    assert!(offset < total as u64);
    let mut again = Client::connect(&serve.socket);
    again.send(&json!({"type": "attach", "session": id, "from": offset, "client": "slow"}));
    again.until("attached");
    let mut n = before.len();
    while n < total {
        if again.next().unwrap().get("timestamp").is_some() {
            n += 1;
        }
    }
    again.send(&json!({"type": "detach"}));
    again.until("detached");
    let mut got = before;
    got.extend(again.events());
    assert_eq!(got, file_events(&path));
}

#[test]
fn a_client_that_asks_and_never_reads_is_dropped_at_its_bound_and_the_broker_stays_small() {
    let env = Env::new();
    let server = ModelServer::start(vec![Turn::Text("still serving")]);
    let serve = Serve::start(&env, &["--client-buffer", "1048576"]);
    // A few sessions, so that each `sessions` reply is long.
    let mut owner = serve.connect();
    for n in 0..4 {
        owner.send(
            &json!({"type": "start", "args": model_args(&server), "client": format!("s{n}")}),
        );
        owner.until("attached");
    }
    owner.send(&json!({"type": "list"}));
    let one_reply = owner.until("sessions").to_string().len() + 1;
    assert!(one_reply > 1000, "{one_reply}");
    let pid = serve.child.id();
    // The peak from here on (writing 5 to clear_refs starts it again).
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").unwrap();
    let (before, _) = memory(pid);

    // 4 MiB of `list` requests, and nothing read: without a bound their
    // replies, hundreds of MiB of them, would pile up in the broker.
    let hostile = UnixStream::connect(&serve.socket).unwrap();
    hostile
        .set_write_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    let requests = "{\"type\":\"list\"}\n".repeat((4 << 20) / 16);
    let mut w = hostile.try_clone().unwrap();
    let wrote = std::thread::spawn(move || w.write_all(requests.as_bytes()))
        .join()
        .unwrap();
    // It was dropped, and its requests are read no more: its writes fail
    // at once instead of waiting on a full socket.
    let e =
        wrote.expect_err("the broker read all 4 MiB of requests from a client that reads nothing");
    assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    let (after, peak) = memory(pid);
    eprintln!("ag-serve: {before} KiB before, {after} KiB after, peak {peak} KiB");
    assert!(
        peak < before + 24 * 1024,
        "ag-serve grew from {before} KiB to {peak} KiB for a client held to 1 MiB"
    );

    // The others are served all the while.
    owner.send(&json!({"type": "prompt", "content": "are you there"}));
    owner.until("agent_end");
    let mut other = serve.connect();
    other.send(&json!({"type": "list"}));
    assert_eq!(
        other.until("sessions")["sessions"]
            .as_array()
            .unwrap()
            .len(),
        4
    );

    // When it reads at last: the replies it was owed up to the bound, then
    // why it was let go, then the end of the connection.
    hostile
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut replies = 0;
    let mut last = Value::Null;
    for line in BufReader::new(hostile).lines() {
        let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if v["type"] == "sessions" {
            replies += 1;
        }
        last = v;
    }
    assert_eq!(last["type"], "dropped", "{last}");
    let reason = last["reason"].as_str().unwrap();
    assert!(
        reason.contains("1048576 bytes unread") && reason.contains("--client-buffer"),
        "{reason}"
    );
    // What it could be sent is the bound, with what the kernel held for it
    // and the one reply being written (a socket holds a few hundred KiB).
    assert!(
        replies > 0,
        "no reply reached the client before it was dropped"
    );
    assert!(
        replies * one_reply < (1 << 20) + (2 << 20),
        "{replies} replies of {one_reply} bytes were queued for a client held to 1 MiB"
    );
}

/// Processes whose command line names `text`.
fn processes_naming(text: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let mut cmdline = Vec::new();
        if std::fs::File::open(e.path().join("cmdline"))
            .and_then(|mut f| f.read_to_end(&mut cmdline))
            .is_ok()
            && String::from_utf8_lossy(&cmdline).contains(text)
        {
            found.push(pid);
        }
    }
    found
}

#[test]
fn ag_serve_killed_mid_call_leaves_the_session_whole_and_resumable() {
    let env = Env::new();
    let server = ModelServer::start(vec![Turn::Stall, Turn::Text("resumed fine")]);
    let mut serve = Serve::start(&env, &[]);
    let mut c = serve.connect();
    c.send(&json!({"type": "start", "args": model_args(&server), "prompt": "first task"}));
    let attached = c.until("attached");
    let id = attached["session"].as_str().unwrap().to_string();
    let path = attached["path"].as_str().unwrap().to_string();
    c.until("turn_start");
    // The model call is in flight.
    let deadline = Instant::now() + Duration::from_secs(30);
    while server.requests().is_empty() {
        assert!(Instant::now() < deadline, "the model was never called");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !processes_naming(&id).is_empty(),
        "no ag-loop runs the session"
    );
    serve.child.kill().unwrap();
    serve.child.wait().unwrap();
    // Its ag-loop ends as a kill -9 of ag-loop would leave it: the watchdog
    // stops what ag-serve started.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !processes_naming(&id).is_empty() {
        assert!(
            Instant::now() < deadline,
            "ag-loop outlived ag-serve: {:?}",
            processes_naming(&id)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Nothing torn: every line parses.
    let before = file_events(&path);
    assert!(of_type(&before, "turn_start").len() == 1, "{before:?}");

    // Started again, ag-serve lists it as ended and resumable.
    let serve = Serve::start(&env, &[]);
    let r = crate::util::run_args(&env, bin!("ag-serve"), &["list", "--json"]);
    r.ok();
    let listed = r.json_lines();
    let me = listed.iter().find(|s| s["id"] == id.as_str()).unwrap();
    assert_eq!(me["state"], "ended", "{me}");
    assert_eq!(me["resumable"], true, "{me}");
    assert_eq!(me["first_prompt"], "first task", "{me}");

    let mut c = serve.connect();
    c.send(&json!({"type": "attach", "session": &id[..8], "resume": true, "args": model_args(&server)}));
    let again = c.until("attached");
    assert_eq!(again["live_from"], before.len() as u64);
    while c.events().len() < before.len() {
        c.next().unwrap();
    }
    assert_eq!(c.events(), before, "the replay differs from the file");
    c.send(&json!({"type": "prompt", "content": "go on"}));
    let end = c.until("agent_end");
    assert_eq!(end["outcome"], "finished", "{end}");
    // The conversation went on from the first prompt.
    let last = server.requests().pop().unwrap().to_string();
    assert!(
        last.contains("first task") && last.contains("go on"),
        "{last}"
    );
}

#[test]
fn bad_requests_are_refused_with_what_to_send_and_the_connection_goes_on() {
    let env = Env::new();
    let serve = Serve::start(&env, &[]);
    let mut c = serve.connect();
    c.send(&json!({"type": "prompt", "content": "hi"}));
    let r = c.until("refused");
    assert!(r["message"].as_str().unwrap().contains("attach"), "{r}");
    c.send(&json!({"type": "start", "args": ["--session", "x"]}));
    let r = c.until("refused");
    assert!(r["message"].as_str().unwrap().contains("resume"), "{r}");
    c.send(&json!({"type": "attach", "session": "no-such-session"}));
    let r = c.until("refused");
    assert!(
        r["message"]
            .as_str()
            .unwrap()
            .contains("no session matches"),
        "{r}"
    );
    c.send(&json!({"type": "attach"}));
    let r = c.until("refused");
    assert!(r["message"].as_str().unwrap().contains("session"), "{r}");
    c.send(&json!({"type": "start", "cwd": "/no/such/dir"}));
    let r = c.until("refused");
    assert!(
        r["message"].as_str().unwrap().contains("not a directory"),
        "{r}"
    );
    // A line past the 16 MiB limit is refused whole, not kept.
    let mut long = vec![b'x'; (16 << 20) + 10];
    long.push(b'\n');
    c.writer.write_all(&long).unwrap();
    let r = c.until("refused");
    assert!(
        r["message"].as_str().unwrap().contains("longer than"),
        "{r}"
    );
    c.send(&json!({"type": "list"}));
    c.until("sessions");

    // A second broker on the same directory is refused.
    let r = crate::util::run_args(&env, bin!("ag-serve"), &[]);
    r.expect_code(2);
    assert!(r.stderr().contains("another ag-serve"), "{}", r.stderr());
    // Clients without a broker are told how to start one.
    let r = crate::util::run_args(
        &env,
        bin!("ag-serve"),
        &["list", "--socket", "/nonexistent/socket"],
    );
    r.expect_code(2);
    assert!(r.stderr().contains("ag-serve &"), "{}", r.stderr());
    // The socket and its directory are the owner's only.
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&serve.socket), 0o600);
    assert_eq!(mode(serve.socket.parent().unwrap()), 0o700);
}

#[test]
fn the_attach_bridge_that_falls_behind_comes_back_by_itself_with_every_event_once() {
    let env = Env::new();
    let long: String = (0..30000).map(|i| format!("w{i} ")).collect();
    let server = ModelServer::start(vec![Turn::Owned(long)]);
    let serve = Serve::start(&env, &["--client-buffer", "1048576"]);
    let mut fast = serve.connect();
    fast.send(&json!({"type": "start", "args": model_args(&server), "client": "fast"}));
    let attached = fast.until("attached");
    let id = attached["session"].as_str().unwrap().to_string();
    let path = attached["path"].as_str().unwrap().to_string();
    let mut bridge = env
        .cmd(bin!("ag-serve"))
        .args(["attach", &id, "--client", "bridge"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(bridge.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    assert!(first.contains("\"attached\""), "{first}");
    // Nobody reads the bridge while the session streams.
    fast.send(&json!({"type": "prompt", "content": "talk"}));
    let (_, mut fast) = follow(&serve, fast, &id, 1);
    let file = file_events(&path);
    let mut events = Vec::new();
    let (mut dropped, mut attached) = (0, 1);
    while events.len() < file.len() {
        let mut line = String::new();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "the bridge ended early"
        );
        let v: Value = serde_json::from_str(&line).unwrap();
        match v["type"].as_str() {
            _ if v.get("timestamp").is_some() => events.push(v),
            Some("dropped") => dropped += 1,
            Some("attached") => attached += 1,
            _ => {}
        }
    }
    assert!(
        dropped >= 1 || attached >= 2,
        "the bridge never fell behind"
    );
    assert_eq!(events, file, "the bridge lost or doubled events");
    // The end of its stdin detaches; the session goes on.
    drop(bridge.stdin.take());
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    assert!(rest.contains("\"detached\""), "{rest}");
    assert!(bridge.wait().unwrap().success());
    fast.send(&json!({"type": "list"}));
    let list = fast.until("sessions");
    assert_eq!(list["sessions"][0]["state"], "idle", "{list}");
}

#[test]
fn a_session_is_rewound_over_the_socket_and_ended_from_the_command_line() {
    let env = Env::new();
    env.write("notes.md", "status: draft\n");
    let server = ModelServer::start(vec![
        Turn::Tools(vec![(
            "edit",
            json!({"file_path": "notes.md", "old_string": "draft", "new_string": "final"}),
        )]),
        Turn::Text("edited"),
    ]);
    let serve = Serve::start(&env, &[]);
    let mut args = model_args(&server);
    args.extend(["--tools", "edit"].map(String::from));
    let mut c = serve.connect();
    c.send(&json!({"type": "start", "args": args, "prompt": "finish the notes"}));
    let id = c.until("attached")["session"].as_str().unwrap().to_string();
    let cp = c.until("checkpoint");
    c.until("agent_end");
    assert_eq!(
        std::fs::read_to_string(env.join("notes.md")).unwrap(),
        "status: final\n"
    );
    // Rewound to before the turn of the edit: the file put back, and this
    // client on the new session.
    c.send(&json!({"type": "rewind", "turn": cp["turn"]}));
    let r = c.until("rewound");
    assert_eq!(r["session"], id.as_str(), "{r}");
    let new = r["new_session"].as_str().unwrap().to_string();
    assert_ne!(new, id);
    let again = c.until("attached");
    assert_eq!(again["session"], new.as_str());
    assert_eq!(
        std::fs::read_to_string(env.join("notes.md")).unwrap(),
        "status: draft\n"
    );

    // `ag-serve end` tells the new session to finish; it ends, resumable.
    let r = crate::util::run_args(&env, bin!("ag-serve"), &["end", &new[..13]]);
    r.ok();
    c.until("ending");
    let ended = c.until("session_ended");
    assert_eq!(ended["resumable"], true, "{ended}");
    let r = crate::util::run_args(&env, bin!("ag-serve"), &["list"]);
    r.ok();
    let table = r.stdout();
    assert!(table.starts_with("ID\tSTATE"), "{table}");
    let row = table.lines().find(|l| l.starts_with(&new)).unwrap();
    assert!(row.contains("ended (resumable)"), "{table}");
    let r = crate::util::run_args(&env, bin!("ag-serve"), &["end", &new]);
    r.expect_code(2);
    assert!(r.stderr().contains("not running"), "{}", r.stderr());
}
