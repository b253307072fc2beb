//! Runs the built binaries in a temporary directory with a minimal
//! environment, and reports everything about a failed run.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The path of a binary of this package.
#[macro_export]
macro_rules! bin {
    ($name:literal) => {
        env!(concat!("CARGO_BIN_EXE_", $name))
    };
}

/// The `TMPDIR` of every command, relative to the test directory.
pub const TMP: &str = ".home/tmp";

/// A temporary directory to run binaries in.
pub struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".home")).unwrap();
        // The binaries' temporary files (ag-bash's spilled output, anything
        // that asks `std::env::temp_dir()`) go here, under `.home` so that
        // listings and git status of the test directory do not see it, and
        // go away with the test instead of piling up in the system's /tmp.
        std::fs::create_dir(dir.path().join(TMP)).unwrap();
        Env { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn join(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// The directory's own name (the last part of its path).
    pub fn name(&self) -> String {
        let name = self.dir.path().file_name().expect("a named directory");
        name.to_string_lossy().into_owned()
    }

    /// Writes a file (creating its directories).
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let p = self.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&p, content).unwrap();
        p
    }

    pub fn read(&self, rel: &str) -> Vec<u8> {
        std::fs::read(self.join(rel)).unwrap()
    }

    /// A command for a binary, run in this directory with a clean environment.
    pub fn cmd(&self, bin: &str) -> Command {
        let mut c = Command::new(bin);
        c.current_dir(self.path())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.join(".home"))
            .env("AG_HOME", self.join(".home/.ag"))
            .env("TMPDIR", self.join(TMP))
            .env("NO_COLOR", "1")
            .env("LC_ALL", "C.UTF-8");
        c
    }
}

/// What a run produced.
pub struct Run {
    pub desc: String,
    pub output: Output,
}

impl Run {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }
    pub fn code(&self) -> Option<i32> {
        self.output.status.code()
    }
    /// Fails with everything known about the run unless the status is `code`.
    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(self.code(), Some(code), "unexpected status\n{self}");
        self
    }
    pub fn ok(&self) -> &Self {
        self.expect_code(0)
    }
    /// The stdout lines parsed as JSON.
    pub fn json_lines(&self) -> Vec<serde_json::Value> {
        self.stdout()
            .lines()
            .map(|l| {
                serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {l}\n{self}"))
            })
            .collect()
    }
    /// The single stdout line parsed as JSON.
    pub fn json(&self) -> serde_json::Value {
        let mut lines = self.json_lines();
        assert_eq!(lines.len(), 1, "expected one JSON line\n{self}");
        lines.remove(0)
    }
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "command: {}\nstatus: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.desc,
            self.output.status,
            self.stdout(),
            self.stderr()
        )
    }
}

/// Spawns `cmd`, again while the program is "busy": a test that has just
/// copied an executable may see ETXTBSY, because a child that another test
/// thread forked in the meantime holds the copy's write descriptor until it
/// execs (a race of fork with every multi-threaded program that writes an
/// executable, not a fault of the program under test).
pub fn spawn_retrying(cmd: &mut Command) -> std::io::Result<std::process::Child> {
    let mut tries = 0;
    loop {
        match cmd.spawn() {
            Err(e) if e.raw_os_error() == Some(26) && tries < 50 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

/// Runs a command, feeding `stdin` when given (else stdin is empty).
pub fn run(mut cmd: Command, stdin: Option<&[u8]>) -> Run {
    let desc = format!("{cmd:?}");
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = spawn_retrying(&mut cmd).unwrap_or_else(|e| panic!("cannot spawn {desc}: {e}"));
    let mut pipe = child.stdin.take().unwrap();
    let input = stdin.map(<[u8]>::to_vec).unwrap_or_default();
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    Run { desc, output }
}

/// Runs a binary with arguments in `env`.
pub fn run_args(env: &Env, bin: &str, args: &[&str]) -> Run {
    let mut c = env.cmd(bin);
    c.args(args);
    run(c, None)
}

/// Sends JSONL calls to a tool and returns its result lines.
pub fn call_lines(env: &Env, bin: &str, input: &str) -> Vec<serde_json::Value> {
    let r = run(env.cmd(bin), Some(input.as_bytes()));
    r.ok();
    r.json_lines()
}

/// Sends one call (arguments object) and returns the result.
/// The events of one `type`, in order.
pub fn of_type<'a>(events: &'a [serde_json::Value], t: &str) -> Vec<&'a serde_json::Value> {
    events.iter().filter(|e| e["type"] == t).collect()
}

pub fn call(env: &Env, bin: &str, arguments: serde_json::Value) -> serde_json::Value {
    let line = serde_json::json!({"id": "t", "arguments": arguments}).to_string() + "\n";
    let mut out = call_lines(env, bin, &line);
    assert_eq!(out.len(), 1);
    out.remove(0)
}

/// Reads one HTTP/1.1 request from a test server's connection: the method,
/// the path and the body (by its content-length). `None` when the client
/// has gone.
pub fn read_http_request(reader: &mut impl std::io::BufRead) -> Option<(String, String, Vec<u8>)> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut words = line.split_whitespace();
    let method = words.next().unwrap_or("").to_string();
    let path = words.next().unwrap_or("").to_string();
    let mut len = 0usize;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            len = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    Some((method, path, body))
}

/// Polls `cond` until it holds; fails, saying what it waited for, after two
/// minutes (a hang, not a slow machine).
pub fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(120),
            "gave up waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `git ARGS` in `dir` (with a name and address to commit under, and `dir`
/// as `$HOME` so that no user configuration counts); fails when git does.
pub fn git(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@e"])
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}
