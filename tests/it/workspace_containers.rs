//! `ag-loop --workspace docker://...` and `podman://...` end to end, against
//! real engines that the tests start for themselves: a private `dockerd`
//! (its own socket, data and exec roots, vfs storage, no bridge, no iptables)
//! and podman with private storage and configuration, never the system's.
//! The containers run a tiny image made here (a skeleton root with the
//! host's `/usr` mounted read-only), so no registry is needed. A missing
//! engine program is a failure (scripts/test installs them). Where the tests
//! do not run as root, or the kernel will not let an engine start, each test
//! says "NOT RUN ... (not a pass)" on stderr and returns; with
//! `AG_REQUIRE_CONTAINER_TESTS` set, that is a failure instead.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::bin;
use crate::model_server::{ModelServer, Turn};
use crate::util::{Env, run, wait_for};
use crate::workspace::{
    UnderWay, copied_notes, nix_is_root, remote_task, second_session_copied_nothing,
    sleeping_twice, tool_ends,
};

/// Set (to anything) to turn "NOT RUN" into a failure, for a CI that has
/// the engines and must not skip them silently.
const REQUIRE_ENV: &str = "AG_REQUIRE_CONTAINER_TESTS";

/// How long one engine command (start a container, exec, kill) may take.
const ENGINE_TIMEOUT: &str = "120";

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Docker,
    Podman,
}

impl Kind {
    fn program(self) -> &'static str {
        match self {
            Kind::Docker => "docker",
            Kind::Podman => "podman",
        }
    }
}

/// Says on the real stderr (libtest does not capture a direct write, so the
/// line shows in a normal run) that the test did not run, or fails where
/// that is not allowed.
fn not_run<T>(kind: Kind, why: &str) -> Option<T> {
    let line = format!(
        "NOT RUN: {} end-to-end test of ag-loop --workspace: {why} (not a pass)",
        kind.program()
    );
    assert!(
        std::env::var_os(REQUIRE_ENV).is_none(),
        "{line}; {REQUIRE_ENV} is set"
    );
    let _ = writeln!(std::io::stderr(), "{line}");
    None
}

/// `program` on PATH or in the system directories a normal user's PATH
/// may lack (dockerd lives in /usr/sbin).
fn find_program(program: &str) -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    path.split(':')
        .chain(["/usr/sbin", "/usr/bin", "/sbin", "/bin"])
        .map(|d| Path::new(d).join(program))
        .find(|p| p.is_file())
}

/// A private container engine and everything it starts; dropping it
/// removes the containers, stops the daemon, ends what is left of its
/// processes, unmounts what it mounted and deletes its directory.
struct Engine {
    kind: Kind,
    /// Under /tmp, to keep the daemon's unix socket paths short.
    dir: tempfile::TempDir,
    /// dockerd; podman has no daemon.
    daemon: Option<Child>,
    /// What every engine command (and ag-loop) needs to reach this engine.
    vars: Vec<(String, String)>,
}

impl Engine {
    /// Starts the engine `kind`, or says why it cannot run here.
    fn start(kind: Kind) -> Option<Engine> {
        if !nix_is_root() {
            return not_run(kind, "the tests start their own engine, which needs root");
        }
        let needs: &[&str] = match kind {
            Kind::Docker => &["docker", "dockerd", "containerd", "runc"],
            // runc rather than crun: crun refuses hosts whose cgroups are
            // mounted in hybrid mode (v1 controllers with a v2 tree beside
            // them), while runc runs on v1, hybrid and pure v2 alike.
            Kind::Podman => &["podman", "conmon", "runc"],
        };
        // A missing program is a failure, not a skip: scripts/test installs
        // them. Only an engine that the kernel or the lack of root refuses
        // is NOT RUN.
        if let Some(missing) = needs.iter().find(|p| find_program(p).is_none()) {
            panic!(
                "`{missing}` is not installed: scripts/test installs it (Debian: apt-get install docker.io containerd runc podman conmon)"
            );
        }
        let dir = tempfile::Builder::new()
            .prefix(if kind == Kind::Docker { "agd" } else { "agp" })
            .tempdir_in("/tmp")
            .unwrap();
        let mut engine = Engine {
            kind,
            dir,
            daemon: None,
            vars: Vec::new(),
        };
        let started = match kind {
            Kind::Docker => engine.start_dockerd(),
            Kind::Podman => engine.configure_podman(),
        };
        match started {
            Ok(()) => Some(engine),
            Err(why) => not_run(kind, &why),
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn start_dockerd(&mut self) -> Result<(), String> {
        let base = self.dir.path().to_path_buf();
        let p = |rel: &str| base.join(rel);
        for d in ["data", "exec"] {
            std::fs::create_dir(p(d)).unwrap();
        }
        let sock = p("docker.sock");
        let log = std::fs::File::create(p("dockerd.log")).unwrap();
        let daemon = Command::new(find_program("dockerd").unwrap())
            .arg("--host")
            .arg(format!("unix://{}", sock.display()))
            .arg("--data-root")
            .arg(p("data"))
            .arg("--exec-root")
            .arg(p("exec"))
            .arg("--pidfile")
            .arg(p("dockerd.pid"))
            .args(["--bridge", "none", "--iptables=false", "--ip6tables=false"])
            .args(["--storage-driver", "vfs"])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start dockerd: {e}"))?;
        self.daemon = Some(daemon);
        self.vars = vec![("DOCKER_HOST".into(), format!("unix://{}", sock.display()))];
        let start = Instant::now();
        loop {
            let ended = self.daemon.as_mut().unwrap().try_wait().unwrap();
            if let Some(status) = ended {
                return Err(format!(
                    "dockerd ended at start ({status}): {}",
                    self.log_tail("dockerd.log")
                ));
            }
            if sock.exists() && self.engine(&["info"]).status.success() {
                break;
            }
            if start.elapsed() > Duration::from_secs(60) {
                return Err(format!(
                    "dockerd did not answer within 60 s: {}",
                    self.log_tail("dockerd.log")
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        // The image: an empty root whose programs come from the host's
        // /usr, mounted read-only by each container.
        let root = p("image");
        make_root(&root);
        let tar = p("image.tar");
        let st = Command::new("tar")
            .arg("-C")
            .arg(&root)
            .arg("-cf")
            .arg(&tar)
            .arg(".")
            .status()
            .unwrap();
        assert!(st.success(), "tar of the image root");
        let out = self.engine(&["import", &tar.display().to_string(), IMAGE]);
        if !out.status.success() {
            return Err(format!("docker import failed: {}", text(&out.stderr)));
        }
        Ok(())
    }

    /// Podman's storage, state and configuration, all in the private
    /// directory; the containers.conf also picks runc (see `start`).
    fn configure_podman(&mut self) -> Result<(), String> {
        let d = self.dir.path().display().to_string();
        for sub in ["root", "run", "tmp", "net"] {
            std::fs::create_dir(self.path(sub)).unwrap();
        }
        std::fs::write(
            self.path("storage.conf"),
            format!(
                "[storage]\ndriver = \"vfs\"\ngraphroot = \"{d}/root\"\nrunroot = \"{d}/run\"\n"
            ),
        )
        .unwrap();
        std::fs::write(
            self.path("containers.conf"),
            format!(
                "[engine]\nruntime = \"runc\"\ncgroup_manager = \"cgroupfs\"\nevents_logger = \"file\"\n\
                 events_logfile_path = \"{d}/events.log\"\ntmp_dir = \"{d}/tmp\"\n\
                 static_dir = \"{d}/root/libpod\"\nvolume_path = \"{d}/root/volumes\"\n\
                 [network]\nnetwork_config_dir = \"{d}/net\"\n"
            ),
        )
        .unwrap();
        self.vars = vec![
            (
                "CONTAINERS_STORAGE_CONF".into(),
                format!("{d}/storage.conf"),
            ),
            ("CONTAINERS_CONF".into(), format!("{d}/containers.conf")),
        ];
        let out = self.engine(&["info"]);
        if !out.status.success() {
            return Err(format!("`podman info` failed: {}", text(&out.stderr)));
        }
        Ok(())
    }

    fn log_tail(&self, rel: &str) -> String {
        let log = std::fs::read_to_string(self.path(rel)).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(5)..].join("\n")
    }

    /// The engine's client with this engine's environment, bounded in time.
    fn client(&self) -> Command {
        let mut c = Command::new("timeout");
        c.args(["-k", "5", ENGINE_TIMEOUT, self.kind.program()]);
        for (k, v) in &self.vars {
            c.env(k, v);
        }
        c
    }

    fn engine(&self, args: &[&str]) -> Output {
        self.client()
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// Starts the container `name`, idle, with the host's /usr read-only,
    /// no network and `PATH` as given; `tools` mounts the ag binaries built
    /// here at /opt/ag (put it on `path` for them to be found). Returns
    /// `None` (after saying "NOT RUN") when the engine cannot run one.
    fn container(&self, name: &str, path: &str, tools: bool) -> Option<Container<'_>> {
        let mut args: Vec<String> = ["run", "-d", "--name", name, "--network", "none"]
            .map(String::from)
            .to_vec();
        args.extend(["-v", "/usr:/usr:ro", "-e"].map(String::from));
        args.push(format!("PATH={path}"));
        if tools {
            let bins = Path::new(bin!("ag-read")).parent().unwrap();
            args.extend(["-v".into(), format!("{}:/opt/ag:ro", bins.display())]);
        }
        match self.kind {
            Kind::Docker => args.push(IMAGE.into()),
            Kind::Podman => {
                // podman asks by default for an open-file limit above the
                // hard limit the tests may run under, and raising it takes
                // a capability a container host may not grant.
                args.extend(
                    [
                        "--ulimit",
                        "nofile=1024:1024",
                        "--ulimit",
                        "nproc=1024:1024",
                    ]
                    .map(String::from),
                );
                let root = self.path(&format!("root-{name}"));
                make_root(&root);
                args.extend(["--rootfs".into(), root.display().to_string()]);
            }
        }
        args.extend(["sleep", "infinity"].map(String::from));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = self.engine(&args);
        if !out.status.success() {
            return not_run(
                self.kind,
                &format!("cannot start a container: {}", text(&out.stderr)),
            );
        }
        Some(Container {
            engine: self,
            name: name.to_string(),
        })
    }

    /// ag-loop against `server`, in `env`, on the workspace `dir` of `c`.
    fn ag_loop(&self, env: &Env, server: &ModelServer, c: &Container, dir: &str) -> Command {
        let mut cmd = server.ag_loop(env);
        let uri = format!("{}://{}{dir}", self.kind.program(), c.name);
        cmd.args(["--no-gate", "--workspace", &uri]);
        for (k, v) in &self.vars {
            cmd.env(k, v);
        }
        cmd
    }
}

const IMAGE: &str = "ag-test-root:1";

/// A root file system with nothing of its own: the programs and libraries
/// come from the host's /usr (the merged-/usr symlinks point there), root's
/// home is /root, and /work is the workspace.
fn make_root(root: &Path) {
    for d in ["etc", "usr", "proc", "sys", "dev", "tmp", "root", "work"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    for l in ["bin", "lib", "lib64", "sbin"] {
        std::os::unix::fs::symlink(format!("usr/{l}"), root.join(l)).unwrap();
    }
    std::fs::write(root.join("etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n").unwrap();
    std::fs::write(root.join("etc/group"), "root:x:0:\n").unwrap();
}

impl Drop for Engine {
    fn drop(&mut self) {
        let ids = self.engine(&["ps", "-aq"]);
        for id in text(&ids.stdout).split_whitespace() {
            // podman would first wait 10 s for `sleep` to heed SIGTERM.
            let _ = match self.kind {
                Kind::Docker => self.engine(&["rm", "-f", id]),
                Kind::Podman => self.engine(&["rm", "-f", "-t", "0", id]),
            };
        }
        if let Some(mut daemon) = self.daemon.take() {
            // SIGTERM lets dockerd stop its containerd and unmount.
            let pid = nix::unistd::Pid::from_raw(daemon.id() as i32);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
            let start = Instant::now();
            while daemon.try_wait().ok().flatten().is_none()
                && start.elapsed() < Duration::from_secs(20)
            {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = daemon.kill();
            let _ = daemon.wait();
        }
        // Whatever is left that this engine started (containerd, shims,
        // conmon, podman's clean-up) names the private directory.
        kill_trees_naming(&format!("{}/", self.dir.path().display()));
        unmount_under(self.dir.path());
    }
}

/// SIGKILL to every process whose command line names `needle`, and to all
/// their descendants (a container's processes under its shim).
fn kill_trees_naming(needle: &str) {
    let mut parents = Vec::new();
    let mut ours = Vec::new();
    let me = std::process::id() as i32;
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // The parent pid is the second field after the `(comm)`.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<i32>().ok())
            .unwrap_or(0);
        parents.push((pid, ppid));
        if pid != me && cmdline.contains(needle) {
            ours.push(pid);
        }
    }
    let mut i = 0;
    while i < ours.len() {
        let p = ours[i];
        for (child, parent) in &parents {
            if *parent == p && !ours.contains(child) {
                ours.push(*child);
            }
        }
        i += 1;
    }
    for pid in ours {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

/// Unmounts (lazily, deepest first) whatever is mounted under `dir`.
fn unmount_under(dir: &Path) {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let top = dir.display().to_string();
    let below = format!("{top}/");
    let mut points: Vec<&str> = info
        .lines()
        .filter_map(|l| l.split_whitespace().nth(4))
        .filter(|m| *m == top || m.starts_with(&below))
        .collect();
    points.sort_by_key(|m| std::cmp::Reverse(m.len()));
    for m in points {
        let _ = Command::new("umount").args(["-l", m]).status();
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).trim().to_string()
}

/// A running container of an [`Engine`].
struct Container<'a> {
    engine: &'a Engine,
    name: String,
}

impl Container<'_> {
    /// Runs `args` in the container, `stdin` given.
    fn exec(&self, args: &[&str], stdin: &[u8]) -> Output {
        let mut c = self.engine.client();
        c.args(["exec", "-i", &self.name])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let mut input = child.stdin.take().unwrap();
        let data = stdin.to_vec();
        let writer = std::thread::spawn(move || {
            let _ = input.write_all(&data);
        });
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap();
        out
    }

    /// The file's content there; fails the test when it cannot be read.
    fn read(&self, path: &str) -> String {
        let out = self.exec(&["cat", path], b"");
        assert!(out.status.success(), "cat {path}: {}", text(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn write(&self, path: &str, content: &str) {
        let out = self.exec(
            &["sh", "-c", "cat > \"$1\"", "sh", path],
            content.as_bytes(),
        );
        assert!(out.status.success(), "write {path}: {}", text(&out.stderr));
    }

    /// The container's live processes other than its idle main one and the
    /// `ps` that lists them: `pid state command line` each. A zombie has
    /// ended: it waits for the container's pid 1 (`sleep`, as in many dev
    /// containers, which reaps nothing) to collect its status.
    fn strays(&self) -> Vec<String> {
        const PS: [&str; 4] = ["ps", "-e", "-o", "pid=,stat=,args="];
        let out = self.exec(&PS, b"");
        assert!(out.status.success(), "ps: {}", text(&out.stderr));
        text(&out.stdout)
            .lines()
            .map(str::trim)
            .filter(|l| {
                let mut f = l.split_whitespace();
                let (pid, stat) = (f.next(), f.next().unwrap_or(""));
                pid != Some("1") && !stat.starts_with('Z') && !l.ends_with(&PS.join(" "))
            })
            .map(String::from)
            .collect()
    }

    fn kill(&self) {
        let out = self.engine.engine(&["kill", &self.name]);
        assert!(out.status.success(), "kill: {}", text(&out.stderr));
    }
}

/// The mtime of a file there, to the nanosecond, or "" when it is missing.
fn mtime(c: &Container, path: &str) -> String {
    text(&c.exec(&["stat", "-c", "%y", path], b"").stdout)
}

fn calls_change_the_container_and_the_tools_are_copied_once(kind: Kind) {
    let Some(engine) = Engine::start(kind) else {
        return;
    };
    // No ag tools on the container's PATH: they must be copied.
    let Some(c) = engine.container("ws", "/usr/bin:/bin", false) else {
        return;
    };
    let env = Env::new();
    c.write("/work/notes.txt", "alpha\nbeta\n");
    c.write("/work/AGENTS.md", "Container rules: say ahoy.\n");
    env.write("notes.txt", "alpha\nbeta\n");
    env.write("AGENTS.md", "Local rules, not for this run.\n");
    let server = ModelServer::start(remote_task(
        "made in the container",
        "pwd; cat made.txt; cat /proc/1/cmdline | tr '\\0' ' '",
    ));
    // Four tools rather than all: the copy is the same for each, and the
    // debug binaries are large.
    let tools = ["--tools", "read,edit,write,bash"];
    let mut cmd = engine.ag_loop(&env, &server, &c, "/work");
    cmd.args(tools).arg("change the notes");
    let r = run(cmd, None);
    r.ok();
    let events = r.json_lines();
    let ends = tool_ends(&events);
    assert_eq!(ends.len(), 4, "{r}");
    assert!(ends.iter().all(|e| e["is_error"] == false), "{ends:?}");
    assert!(
        ends[0]["output"].as_str().unwrap().contains("beta"),
        "{:?}",
        ends[0]
    );
    // The files changed in the container; the local ones are untouched.
    assert_eq!(c.read("/work/notes.txt"), "alpha\ngamma\n");
    assert_eq!(c.read("/work/made.txt"), "made in the container\n");
    assert!(!env.join("made.txt").exists());
    assert_eq!(env.read("notes.txt"), b"alpha\nbeta\n");
    // bash ran there: its directory, the file, the container's own pid 1.
    let bash = ends[3]["output"].as_str().unwrap();
    assert!(
        bash.contains("/work\n")
            && bash.contains("made in the container")
            && bash.contains("sleep infinity"),
        "{bash}"
    );
    // The binaries were copied into the container's cache, and it was said.
    assert_eq!(copied_notes(&events), 1, "{events:?}");
    let note = events
        .iter()
        .map(|e| e["message"].as_str().unwrap_or(""))
        .find(|m| m.contains("copied"))
        .unwrap();
    assert!(
        note.contains(&format!("{} container `ws`", kind.program())),
        "{note}"
    );
    // The tools offered, and only those.
    for b in ["ag-read", "ag-edit", "ag-write", "ag-bash"] {
        assert!(note.contains(b), "{note}");
    }
    assert!(!note.contains("ag-grep"), "{note}");
    let cached = format!("/root/.cache/ag/{}/ag-read", env!("CARGO_PKG_VERSION"));
    let first_copy = mtime(&c, &cached);
    assert!(!first_copy.is_empty(), "{cached} is missing there");
    // The model saw the container's directory and AGENTS.md, not the local ones.
    let system = server.requests()[0]["messages"][0]["content"].to_string();
    assert!(system.contains("Working directory: /work"), "{system}");
    assert!(system.contains("Container rules: say ahoy."), "{system}");
    assert!(!system.contains("Local rules"), "{system}");

    // A second session finds the tools there and copies nothing.
    let mut cmd = engine.ag_loop(&env, &server, &c, "/work");
    cmd.args(tools).arg("read it");
    second_session_copied_nothing(&run(cmd, None), "made in the container");
    assert_eq!(mtime(&c, &cached), first_copy);
}

/// ag-loop, reading its prompt from stdin, on a prompt whose `nth` call
/// (from 1) starts `marker` in the container; returns once the marker runs
/// there.
/// ag-loop in the container's `/work`, its `nth` call under way and
/// `marker` running in the container.
fn start_sleeping(
    engine: &Engine,
    c: &Container,
    env: &Env,
    server: &ModelServer,
    (marker, nth): (&str, usize),
) -> UnderWay {
    let run = UnderWay::start(engine.ag_loop(env, server, c, "/work"), nth);
    wait_for("the sleep in the container", || {
        c.strays().iter().any(|p| p.contains(marker))
    });
    run
}

/// A container with the ag tools built here on its PATH (mounted at
/// /opt/ag), so that no copy is needed.
fn with_tools<'a>(engine: &'a Engine, name: &str) -> Option<Container<'a>> {
    engine.container(name, "/opt/ag:/usr/bin:/bin", true)
}

fn an_interrupt_leaves_no_process_in_the_container(kind: Kind) {
    let Some(engine) = Engine::start(kind) else {
        return;
    };
    let Some(c) = with_tools(&engine, "ws") else {
        return;
    };
    let env = Env::new();
    let marker = "sleep 7321";
    let server = ModelServer::start(sleeping_twice(marker));
    start_sleeping(&engine, &c, &env, &server, (marker, 1)).interrupt();
    // Nothing of the call is left in the container: no sleep, no ag-bash,
    // no wrapper (after its grace period).
    let start = Instant::now();
    loop {
        let left = c.strays();
        if left.is_empty() {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "still running in the container: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn a_killed_container_is_a_tool_error_that_says_so(kind: Kind) {
    let Some(engine) = Engine::start(kind) else {
        return;
    };
    let Some(c) = with_tools(&engine, "doomed") else {
        return;
    };
    let env = Env::new();
    let marker = "sleep 7322";
    let server = ModelServer::start(vec![
        // A tool killed while the container lives on is not a gone
        // container: the check after the call finds it there.
        Turn::Tools(vec![("bash", json!({"command": "kill -KILL $PPID"}))]),
        Turn::Tools(vec![("bash", json!({"command": marker}))]),
        Turn::Text("the container went away"),
    ]);
    let call = start_sleeping(&engine, &c, &env, &server, (marker, 2));
    c.kill();
    let events = call.finish();
    let ends = tool_ends(&events);
    assert_eq!(ends.len(), 2, "{events:?}");
    let killed = ends[0]["output"].as_str().unwrap();
    assert_eq!(ends[0]["is_error"], true, "{killed}");
    assert!(
        killed.contains("without a result") && !killed.contains("is gone"),
        "{killed}"
    );
    assert_eq!(ends[1]["is_error"], true, "{:?}", ends[1]);
    let said = ends[1]["output"].as_str().unwrap();
    let who = format!("{} container `doomed`", kind.program());
    assert!(
        said.contains(&who) && said.contains("is gone or stopped") && said.contains("not repeated"),
        "{said}"
    );
    // Not retried: one start, and the model got the error back.
    let starts = events
        .iter()
        .filter(|e| e["type"] == "tool_execution_start")
        .count();
    assert_eq!(starts, 2, "{events:?}");
    let last = server.requests().last().unwrap()["messages"].to_string();
    assert!(last.contains("is gone or stopped"), "{last}");
    // A session started on the stopped container ends at set-up, saying so.
    let mut cmd = engine.ag_loop(&env, &server, &c, "/work");
    cmd.arg("again");
    let r = run(cmd, None);
    r.expect_code(2);
    assert!(r.stdout().is_empty(), "{r}");
    assert!(r.stderr().contains(&who), "{r}");
}

#[test]
fn docker_calls_change_the_container_and_the_tools_are_copied_once() {
    calls_change_the_container_and_the_tools_are_copied_once(Kind::Docker);
}

#[test]
fn podman_calls_change_the_container_and_the_tools_are_copied_once() {
    calls_change_the_container_and_the_tools_are_copied_once(Kind::Podman);
}

#[test]
fn docker_an_interrupt_leaves_no_process_in_the_container() {
    an_interrupt_leaves_no_process_in_the_container(Kind::Docker);
}

#[test]
fn podman_an_interrupt_leaves_no_process_in_the_container() {
    an_interrupt_leaves_no_process_in_the_container(Kind::Podman);
}

#[test]
fn docker_a_killed_container_is_a_tool_error_that_says_so() {
    a_killed_container_is_a_tool_error_that_says_so(Kind::Docker);
}

#[test]
fn podman_a_killed_container_is_a_tool_error_that_says_so() {
    a_killed_container_is_a_tool_error_that_says_so(Kind::Podman);
}
