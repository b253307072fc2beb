//! Warm helpers: one long-lived server process per session and name (a
//! browser, the language servers), started on the first call that needs
//! it, reached over a Unix socket by every later call, and ended with the
//! session. A tool binary runs once per call; what must outlive the call
//! (a page's state, a language server's index) lives in such a server, so
//! that the second click does not start Chromium again.
//!
//! The lifetime is the background jobs' (see `tools/bash/jobs.rs`): the
//! server is started detached, in a session of its own and without the
//! watchdog's mark, so that the call that started it may end; it watches
//! the session's process ([`super::session_owner`]) and ends when that is
//! gone, `kill -9` included, or on SIGTERM, or after an idle limit when no
//! session owns it (a helper used from a shell). What the server starts
//! goes through this module like any child, so the server's own watchdog
//! ends it should the server itself be killed.
//!
//! Where: a private directory (`$XDG_RUNTIME_DIR/ag-warm`, else
//! `/tmp/ag-warm-UID`, mode 0700, refused when another user owns it), with
//! `KEY.NAME.sock`, `.lock`, `.pid` and `.log`. KEY is the owner's pid, or
//! for a shell a digest of `$AG_HOME`, so that two sessions, or two test
//! homes, never share a helper. A socket path must fit in 108 bytes, which
//! the session directory does not promise.
//!
//! The wire: a client connects, writes one request line, and reads the
//! reply up to the server's close. Requests are served one at a time, in
//! the order they connect; the meaning of a line is the helper's own.

use std::ffi::{OsStr, OsString};
use std::fs::{self, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use super::{Cancel, Command, Output, Signal, TerminationGuard};

/// Set in a server's environment to the socket it listens on.
const SERVE_ENV: &str = "AG_WARM_SERVE";
/// The pid whose end ends the server (empty: none).
const OWNER_ENV: &str = "AG_WARM_OWNER";
/// Milliseconds without a request after which the server ends (0: never).
const IDLE_ENV: &str = "AG_WARM_IDLE_MS";
/// How long a client waits for a server it started to listen.
const START_WAIT: Duration = Duration::from_secs(30);
/// How often the server looks at its owner, its idle time and signals.
const WATCH_EVERY: Duration = Duration::from_millis(200);
/// The largest request line a server reads, and the largest reply a
/// client reads (a full-page screenshot fits many times over).
const MAX_LINE: u64 = 256 * 1024 * 1024;
/// The idle limit of a helper that no session owns.
pub const SHELL_IDLE: Duration = Duration::from_secs(15 * 60);
/// A server's log (its own errors, and what its children print) is
/// emptied when it passes this size.
const LOG_MAX: u64 = 8 * 1024 * 1024;

/// One warm helper, as a client sees it: where it listens, and how to
/// start it when nothing does.
#[derive(Debug, Clone)]
pub struct Warm {
    name: String,
    exe: PathBuf,
    base: PathBuf,
    owner: Option<u32>,
    idle: Duration,
    env: Vec<(OsString, OsString)>,
}

impl Warm {
    /// The helper `name` of this process's session (or of this `$AG_HOME`
    /// outside one), started as `exe` with no arguments when it is not
    /// running: `exe` must call [`serve_main`] first in its `main`.
    pub fn new(name: &str, exe: impl Into<PathBuf>) -> io::Result<Warm> {
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a warm helper's name is lowercase letters, digits and '-', not `{name}`"),
            ));
        }
        let owner = super::session_owner();
        let key = match owner {
            Some(pid) => pid.to_string(),
            None => format!("h{:016x}", digest(home().as_os_str())),
        };
        let root = private_root()?;
        Ok(Warm {
            name: name.to_string(),
            exe: exe.into(),
            base: root.join(format!("{key}.{name}")),
            owner,
            idle: if owner.is_some() {
                Duration::ZERO
            } else {
                SHELL_IDLE
            },
            env: Vec::new(),
        })
    }

    /// An environment variable for the server, when this call starts it.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Warm {
        self.env
            .push((key.as_ref().to_os_string(), value.as_ref().to_os_string()));
        self
    }

    /// The idle limit, instead of none in a session and [`SHELL_IDLE`]
    /// outside one (zero: none).
    pub fn idle(mut self, limit: Duration) -> Warm {
        self.idle = limit;
        self
    }

    /// The helper's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether a server answers now.
    pub fn running(&self) -> bool {
        UnixStream::connect(self.path("sock")).is_ok()
    }

    /// The server's log: its own errors and what its children printed.
    pub fn log_path(&self) -> PathBuf {
        self.path("log")
    }

    /// Sends one request line and returns the reply, starting the server
    /// first when none answers. `timeout` bounds the reply, not the start.
    pub fn request(&self, line: &str, timeout: Duration) -> io::Result<String> {
        if line.contains('\n') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a warm helper's request is one line",
            ));
        }
        let stream = match UnixStream::connect(self.path("sock")) {
            Ok(s) => s,
            Err(_) => self.start()?,
        };
        self.exchange(stream, line, timeout)
    }

    /// Ends the server, if one runs; returns whether one did.
    pub fn stop(&self) -> io::Result<bool> {
        let Some(pid) = read_pid(&self.path("pid")) else {
            return Ok(false);
        };
        if !super::process_alive(pid) {
            return Ok(false);
        }
        super::signal_process(pid, Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(10);
        while super::process_alive(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(true)
    }

    fn path(&self, ext: &str) -> PathBuf {
        let mut p = self.base.clone().into_os_string();
        p.push(".");
        p.push(ext);
        PathBuf::from(p)
    }

    fn exchange(
        &self,
        mut stream: UnixStream,
        line: &str,
        timeout: Duration,
    ) -> io::Result<String> {
        let name = &self.name;
        stream.set_write_timeout(Some(timeout))?;
        stream.set_read_timeout(Some(timeout))?;
        stream
            .write_all(format!("{line}\n").as_bytes())
            .map_err(|e| context(e, &format!("cannot send the request to the {name} helper")))?;
        let mut reply = Vec::new();
        let read = stream.take(MAX_LINE).read_to_end(&mut reply);
        match read {
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "the {name} helper did not answer within {} s (it goes on with the request; its log: {})",
                        timeout.as_secs_f64(),
                        self.log_path().display()
                    ),
                ));
            }
            Err(e) => {
                return Err(context(
                    e,
                    &format!("cannot read the {name} helper's reply"),
                ));
            }
            Ok(_) => {}
        }
        if reply.last() == Some(&b'\n') {
            reply.pop();
        } else {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "the {name} helper ended before it answered{}",
                    self.last_words()
                ),
            ));
        }
        String::from_utf8(reply).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the {name} helper's reply is not UTF-8"),
            )
        })
    }

    /// Starts the server (one caller at a time) and connects to it.
    fn start(&self) -> io::Result<UnixStream> {
        let name = &self.name;
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(self.path("lock"))
            .map_err(|e| context(e, &format!("cannot open {}", self.path("lock").display())))?;
        let _held = Flock::lock(lock, FlockArg::LockExclusive)
            .map_err(|(_, e)| context(e.into(), "cannot lock the warm helper's start"))?;
        // Another caller may have started it while this one waited.
        if let Ok(s) = UnixStream::connect(self.path("sock")) {
            return Ok(s);
        }
        let _ = fs::remove_file(self.path("sock"));
        let log = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .mode(0o600)
            .open(self.log_path())
            .map_err(|e| context(e, &format!("cannot open {}", self.log_path().display())))?;
        let owner = self.owner.map(|p| p.to_string()).unwrap_or_default();
        let mut cmd = Command::new(&self.exe)
            .env(SERVE_ENV, self.path("sock"))
            .env(OWNER_ENV, owner)
            .env(IDLE_ENV, self.idle.as_millis().to_string())
            .output(Output::File(log))
            .new_session();
        for (k, v) in &self.env {
            cmd = cmd.env(k, v);
        }
        let pid = cmd.spawn_detached().map_err(|e| {
            io::Error::other(format!(
                "cannot start the {name} helper ({}): {e}",
                self.exe.display()
            ))
        })?;
        let deadline = Instant::now() + START_WAIT;
        loop {
            if let Ok(s) = UnixStream::connect(self.path("sock")) {
                return Ok(s);
            }
            super::reap_detached();
            if !super::process_alive(pid) {
                return Err(io::Error::other(format!(
                    "the {name} helper ended as it started{}",
                    self.last_words()
                )));
            }
            if Instant::now() >= deadline {
                let _ = super::signal_process(pid, Signal::SIGTERM);
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "the {name} helper did not start within {} s{}",
                        START_WAIT.as_secs(),
                        self.last_words()
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The end of the server's log, to say why it ended: ": LINE" or "".
    fn last_words(&self) -> String {
        let text = fs::read(self.log_path()).unwrap_or_default();
        let text = String::from_utf8_lossy(&text[text.len().saturating_sub(4096)..]).into_owned();
        match text.lines().rev().find(|l| !l.trim().is_empty()) {
            Some(l) => format!(": {}", l.trim()),
            None => String::new(),
        }
    }
}

/// Called first in `main`: when this process was started as a warm
/// helper's server, builds the handler with `make`, serves requests with
/// it until the session ends, and returns the exit code; otherwise returns
/// `None` at once. The handler is dropped before the server exits, and must
/// end what it started when it is (a normal exit does not end a server's
/// children by itself). An `Err` from `make` is the reason the server could
/// not start: it goes to the log, where the waiting client reads it.
pub fn serve_main<H, M>(make: M) -> Option<ExitCode>
where
    M: FnOnce() -> Result<H, String>,
    H: FnMut(&str) -> String,
{
    let sock = PathBuf::from(std::env::var_os(SERVE_ENV).filter(|s| !s.is_empty())?);
    let owner = std::env::var(OWNER_ENV)
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok());
    let idle = std::env::var(IDLE_ENV)
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
        .unwrap_or(SHELL_IDLE);
    super::withhold_env([SERVE_ENV, OWNER_ENV, IDLE_ENV]);
    Some(serve(&sock, owner, idle, make))
}

fn serve<H, M>(sock: &Path, owner: Option<u32>, idle: Duration, make: M) -> ExitCode
where
    M: FnOnce() -> Result<H, String>,
    H: FnMut(&str) -> String,
{
    let fail = |why: String| {
        let _ = writeln!(io::stderr(), "{why}");
        ExitCode::from(1)
    };
    let _ = super::adopt_orphans();
    let cancel = match Cancel::new() {
        Ok(c) => c,
        Err(e) => return fail(format!("cannot set up cancellation: {e}")),
    };
    let _guard = match TerminationGuard::install(&cancel) {
        Ok(g) => g,
        Err(e) => return fail(format!("cannot install signal handlers: {e}")),
    };
    // Watches the session while a request runs too (see `ending`).
    {
        let cancel = cancel.clone();
        std::thread::spawn(move || {
            while !cancel.is_cancelled() && owner.is_none_or(super::process_alive) {
                std::thread::sleep(WATCH_EVERY);
            }
            ENDING.store(true, std::sync::atomic::Ordering::Relaxed);
        });
    }
    let pid_path = sock.with_extension("pid");
    let log_path = sock.with_extension("log");
    let mut handler = match make() {
        Ok(h) => h,
        Err(why) => return fail(why),
    };
    let _ = fs::remove_file(sock);
    let listener = match UnixListener::bind(sock) {
        Ok(l) => l,
        Err(e) => return fail(format!("cannot listen on {}: {e}", sock.display())),
    };
    let _ = fs::set_permissions(sock, fs::Permissions::from_mode(0o600));
    let me = std::process::id();
    let _ = write_pid(&pid_path, me);
    serve_loop(&listener, owner, idle, &cancel, &log_path, &mut handler);
    drop(handler);
    // Only this server's own files: a newer one may have taken the name.
    if read_pid(&pid_path) == Some(me) {
        let _ = fs::remove_file(sock);
        let _ = fs::remove_file(&pid_path);
    }
    ExitCode::SUCCESS
}

/// Answers requests until the owner is gone, the idle limit passes or
/// `cancel` fires.
fn serve_loop<H: FnMut(&str) -> String>(
    listener: &UnixListener,
    owner: Option<u32>,
    idle: Duration,
    cancel: &Cancel,
    log_path: &Path,
    handler: &mut H,
) {
    let mut last = Instant::now();
    loop {
        if cancel.is_cancelled()
            || owner.is_some_and(|p| !super::process_alive(p))
            || (!idle.is_zero() && last.elapsed() >= idle)
        {
            break;
        }
        trim_log(log_path);
        let mut fds = [PollFd::new(listener.as_fd(), PollFlags::POLLIN)];
        let wait =
            PollTimeout::try_from(WATCH_EVERY.as_millis() as u64).unwrap_or(PollTimeout::MAX);
        match poll(&mut fds, wait) {
            Ok(0) => continue,
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => {
                let _ = writeln!(io::stderr(), "cannot wait for requests: {e}");
                break;
            }
        }
        let Ok((stream, _)) = listener.accept() else {
            continue;
        };
        serve_one(stream, handler);
        last = Instant::now();
    }
}

/// Reads one request line, answers it, and closes the connection.
fn serve_one<H: FnMut(&str) -> String>(mut stream: UnixStream, handler: &mut H) {
    // A client that connects and says nothing must not hold the others up.
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut line = Vec::new();
    let mut byte = [0u8; 64 * 1024];
    loop {
        match stream.read(&mut byte) {
            Ok(0) => break,
            Ok(n) => {
                line.extend_from_slice(&byte[..n]);
                if line.contains(&b'\n') || line.len() as u64 > MAX_LINE {
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
    let Some(end) = line.iter().position(|&b| b == b'\n') else {
        return;
    };
    let request = String::from_utf8_lossy(&line[..end]).into_owned();
    let mut reply = handler(&request);
    reply.retain(|c| c != '\n');
    reply.push('\n');
    let _ = stream.set_write_timeout(Some(Duration::from_secs(60)));
    let _ = stream.write_all(reply.as_bytes());
}

fn trim_log(path: &Path) {
    if let Ok(meta) = fs::metadata(path)
        && meta.len() > LOG_MAX
        && let Ok(f) = OpenOptions::new().append(true).open(path)
    {
        let _ = f.set_len(0);
    }
}

fn read_pid(path: &Path) -> Option<u32> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Writes the pid file whole: a reader never sees half a number.
fn write_pid(path: &Path, pid: u32) -> io::Result<()> {
    let tmp = path.with_extension("pid.tmp");
    fs::write(&tmp, pid.to_string())?;
    fs::rename(&tmp, path)
}

/// Set in a server once its session is over (the owner gone, SIGTERM),
/// even while a request is being answered: see [`ending`].
static ENDING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// In a warm server: whether it is ending. The server notices between two
/// requests by itself; a handler whose request may take long (a page that
/// does not load) looks here while it waits, gives up at once, and ends
/// what the request was doing, so that the server's end is not held up by
/// a request nobody waits for any more.
pub fn ending() -> bool {
    ENDING.load(std::sync::atomic::Ordering::Relaxed)
}

/// The private directory the helpers' sockets, locks and logs live in,
/// made when missing: a sandbox that confines a helper's calls lets them
/// write here (see `agent/calls/sandbox.rs`), or the call could not start
/// the helper nor reach it.
pub fn root() -> io::Result<PathBuf> {
    private_root()
}

/// The private directory the helpers' sockets live in, made when missing.
fn private_root() -> io::Result<PathBuf> {
    let uid = nix::unistd::getuid().as_raw();
    let root = match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(d) if Path::new(&d).is_dir() => PathBuf::from(d).join("ag-warm"),
        _ => std::env::temp_dir().join(format!("ag-warm-{uid}")),
    };
    match fs::DirBuilder::new().mode(0o700).create(&root) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(context(e, &format!("cannot create {}", root.display()))),
    }
    let meta = fs::symlink_metadata(&root)?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is not a private directory of this user (owner {}, mode {:o}): remove it, or set XDG_RUNTIME_DIR to a directory of your own",
                root.display(),
                meta.uid(),
                meta.mode() & 0o7777
            ),
        ));
    }
    Ok(root)
}

/// `$AG_HOME`, else `$HOME/.ag`, else "": what a shell's helper is kept per.
fn home() -> OsString {
    if let Some(h) = std::env::var_os("AG_HOME").filter(|h| !h.is_empty()) {
        return h;
    }
    let mut h = std::env::var_os("HOME").unwrap_or_default();
    h.push("/.ag");
    h
}

/// FNV-1a: a short stable name for a path; not a secret.
fn digest(s: &OsStr) -> u64 {
    use std::os::unix::ffi::OsStrExt;
    s.as_bytes().iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn context(e: io::Error, what: &str) -> io::Error {
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        assert!(Warm::new("Browser", "/bin/true").is_err());
        assert!(Warm::new("a/b", "/bin/true").is_err());
        assert!(Warm::new("", "/bin/true").is_err());
        assert!(Warm::new("lsp-pyright", "/bin/true").is_ok());
    }

    #[test]
    fn a_server_that_ends_at_start_is_reported_with_its_last_words() {
        // `sh -c` is not a warm server: it prints and exits, as a server
        // whose `make` failed would.
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("fails");
        fs::write(
            &script,
            "#!/bin/sh\necho 'no chromium on PATH' >&2\nexit 1\n",
        )
        .unwrap();
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
        let name = format!("t{}", std::process::id());
        let w = Warm::new(&name, &script).unwrap();
        let e = w.request("{}", Duration::from_secs(5)).unwrap_err();
        assert!(
            e.to_string()
                .contains("ended as it started: no chromium on PATH"),
            "{e}"
        );
    }

    #[test]
    fn digest_is_stable_and_differs() {
        assert_eq!(digest(OsStr::new("/a")), digest(OsStr::new("/a")));
        assert_ne!(digest(OsStr::new("/a")), digest(OsStr::new("/b")));
    }

    #[test]
    fn a_server_answers_in_order_and_ends_with_its_owner() {
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("k.echo.sock");
        let listener = UnixListener::bind(&sock).unwrap();
        let mut owner = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let owner_pid = owner.id();
        let cancel = Cancel::new().unwrap();
        let log = dir.path().join("k.echo.log");
        let server = std::thread::spawn(move || {
            let mut n = 0;
            let mut handler = |req: &str| {
                n += 1;
                format!("{n}:{req}")
            };
            serve_loop(
                &listener,
                Some(owner_pid),
                Duration::ZERO,
                &cancel,
                &log,
                &mut handler,
            );
        });
        let client = Warm {
            name: "echo".into(),
            exe: "/nonexistent".into(),
            base: dir.path().join("k.echo"),
            owner: Some(owner_pid),
            idle: Duration::ZERO,
            env: Vec::new(),
        };
        let t = Duration::from_secs(5);
        assert_eq!(client.request("a", t).unwrap(), "1:a");
        assert_eq!(client.request("b", t).unwrap(), "2:b");
        assert!(client.request("two\nlines", t).is_err());
        owner.kill().unwrap();
        owner.wait().unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !server.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(server.is_finished(), "the server outlived its owner");
    }

    #[test]
    fn an_idle_server_ends() {
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("k.idle.sock");
        let listener = UnixListener::bind(&sock).unwrap();
        let cancel = Cancel::new().unwrap();
        let log = dir.path().join("k.idle.log");
        let started = Instant::now();
        serve_loop(
            &listener,
            None,
            Duration::from_millis(300),
            &cancel,
            &log,
            &mut |r: &str| r.to_string(),
        );
        assert!(started.elapsed() >= Duration::from_millis(300));
    }
}
