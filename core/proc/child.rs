//! Async children, for the tokio runtimes of ag-loop and ag-mcp: the one
//! way their tool calls, gates, after-hooks, `--llm-cmd` and MCP servers
//! run. A command is prepared exactly as the synchronous run prepares it
//! (`run.rs`: its own group, the withheld variables removed, the
//! watchdog's mark) and ended by the same [`Clock`]: SIGTERM then SIGKILL
//! to the group on a timeout or cancel, and once the command itself has
//! exited, pipes that its background children hold are read only for the
//! drain before those children are ended too. Two modes share one loop:
//!
//! - collect ([`Command::collect`]): stdout and stderr into bounded
//!   captures, the result when everything is over;
//! - stream-lines ([`Command::stream_lines`]): stdout as lines while the
//!   command runs (`--llm-cmd` events, MCP messages), each line and the
//!   whole stream capped, stderr captured, and a [`Running`] handle that
//!   ends the run and tells how it ended;
//! - raw pipes ([`Command::stream_pipes`]): stdin and stdout handed to the
//!   caller as they are, for a protocol that frames its own messages (a
//!   language server's `Content-Length` headers), stderr captured, and the
//!   same [`Running`] handle.
//!
//! Should the future (collect) or the runtime (stream) be dropped while the
//! command runs, the group is killed on the spot. The preparation in
//! `run.rs` is the one place a sandbox would apply itself to every child.

use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::ChildStdin;
use tokio::sync::{Notify, mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::capture::Capture;
use super::clock::{Clock, FINAL_WAIT};
use super::lines::{LineLimits, Lines, Splitter};
use super::run::{Prepared, Running as InFlight, io_err, prepare, spawn_error};
use super::{CancelReason, CaptureLimit, Command, Error, Input, Outcome, Output, Status};

/// Bytes read from a pipe at a time.
const READ_CHUNK: usize = 64 * 1024;

/// How a streamed run ended: its outcome (stdout is not captured: it went
/// to the lines), or the error that stopped watching it.
pub type Ended = Result<Outcome, Error>;

/// A command started with [`Command::stream_lines`].
pub struct Streaming {
    /// Stdout, line by line.
    pub lines: Lines,
    /// The child's stdin, with [`Input::Pipe`]: closing it is the polite
    /// way to ask most programs to end.
    pub stdin: Option<ChildStdin>,
    /// Ends the run and tells how it ended.
    pub running: Running,
}

/// A command started with [`Command::stream_pipes`].
pub struct Piped {
    /// The child's stdin, to write to.
    pub stdin: ChildStdin,
    /// The child's stdout, to read from.
    pub stdout: Pin<Box<dyn AsyncRead + Send>>,
    /// Ends the run and tells how it ended; its outcome's stderr is the
    /// capture asked for.
    pub running: Running,
}

/// The handle of a streamed run. Dropping it stops the run (SIGTERM to the
/// group, then SIGKILL after the grace period).
pub struct Running {
    pid: u32,
    stop: CancellationToken,
    ended: watch::Receiver<Option<Ended>>,
}

impl Running {
    /// The child's pid, also its process group id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// How the run ended, once it has: the command exited and its pipes
    /// closed, or what it left running was ended.
    pub fn ended(&self) -> Option<Ended> {
        self.ended.borrow().clone()
    }

    /// Waits for the run to end by itself.
    pub async fn wait(&self) -> Ended {
        let mut rx = self.ended.clone();
        // An error: the loop's task is gone (its runtime is shutting down),
        // and the group was killed as it went.
        let _ = rx.wait_for(Option::is_some).await;
        let ended = rx.borrow().clone();
        ended.unwrap_or_else(|| Err(gone()))
    }

    /// Stops the run now: SIGTERM to the group, SIGKILL after the grace
    /// period. [`Running::wait`] tells when that is done.
    pub fn stop(&self) {
        self.stop.cancel();
    }

    /// Done with the command: it gets `wait` to end by itself (stdin and
    /// the lines should be dropped first, which is how most programs learn
    /// they are done), then it is stopped; either way what it left running
    /// is ended, and the outcome returned.
    pub async fn finish(self, wait: Duration) -> Ended {
        if tokio::time::timeout(wait, self.wait()).await.is_err() {
            self.stop();
        }
        self.wait().await
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

fn gone() -> Error {
    Error::Io {
        context: "the run was abandoned",
        source: Arc::new(std::io::Error::other("the runtime shut down")),
    }
}

impl Command {
    /// Runs the command to its end, its time limit, or `cancel` (then
    /// `stopped` says [`super::Stop::Cancelled`]), like [`Command::run`]
    /// but without blocking the runtime. Give stdin as [`Input::Bytes`] and
    /// the captures with [`Output::Separate`] or [`Output::Merged`].
    /// Dropping the future kills the group at once.
    pub fn collect(
        mut self,
        cancel: &CancellationToken,
    ) -> impl Future<Output = Result<Outcome, Error>> + Send + 'static {
        let cancel = cancel.clone();
        async move {
            let start = Instant::now();
            let (mut engine, _stdin) = Engine::spawn(&mut self, None, cancel)?;
            let clock = Clock::new(&self, engine.pgid, start);
            drop(self);
            engine.drive(clock, start).await
        }
    }

    /// Starts the command and gives its stdout line by line as it comes;
    /// `cancel` (or [`Running::stop`]) ends it. With [`Input::Pipe`] the
    /// caller writes stdin ([`Streaming::stdin`]); [`Input::Bytes`] are
    /// written, then stdin is closed. The command's output setting is
    /// replaced: stdout goes to the lines, stderr to a capture of
    /// `limits.stderr`. Must be called within a tokio runtime, which runs
    /// the loop.
    pub fn stream_lines(
        mut self,
        limits: LineLimits,
        cancel: &CancellationToken,
    ) -> Result<Streaming, Error> {
        let start = Instant::now();
        self.output = Output::Separate {
            stdout: CaptureLimit::new(0),
            stderr: limits.stderr.clone(),
        };
        let (tx, rx) = mpsc::unbounded_channel();
        let queued = Arc::new(AtomicU64::new(0));
        let resumed = Arc::new(Notify::new());
        let splitter = Splitter::new(&limits, tx, queued.clone(), resumed.clone());
        let stop = cancel.child_token();
        let (engine, stdin) = Engine::spawn(&mut self, Some(splitter), stop.clone())?;
        let pid = engine.pid;
        let clock = Clock::new(&self, engine.pgid, start);
        drop(self);
        let ended_rx = engine.drive_in_background(clock, start);
        Ok(Streaming {
            lines: Lines {
                rx,
                queued,
                resumed,
            },
            stdin,
            running: Running {
                pid,
                stop,
                ended: ended_rx,
            },
        })
    }
}

impl Command {
    /// Starts the command with stdin and stdout as pipes of the caller's,
    /// read and written as they are: for a protocol with its own framing
    /// (a language server's). Stderr goes to a capture of `stderr`; the
    /// command's own input and output settings are replaced. `cancel` (or
    /// [`Running::stop`], or dropping the handle) ends it as any run ends.
    /// Must be called within a tokio runtime, which runs the loop.
    pub fn stream_pipes(
        mut self,
        stderr: CaptureLimit,
        cancel: &CancellationToken,
    ) -> Result<Piped, Error> {
        let start = Instant::now();
        self.stdin = Input::Pipe;
        self.output = Output::Separate {
            stdout: CaptureLimit::new(0),
            stderr,
        };
        let stop = cancel.child_token();
        let (mut engine, stdin) = Engine::spawn(&mut self, None, stop.clone())?;
        // The loop watches stderr and the exit; stdout is the caller's.
        let (Some(stdin), Some(stdout)) = (stdin, engine.stdout.take()) else {
            return Err(io_err("cannot set up the pipes")(std::io::Error::other(
                "the child has no stdin or stdout pipe",
            )));
        };
        let pid = engine.pid;
        let clock = Clock::new(&self, engine.pgid, start);
        drop(self);
        let ended_rx = engine.drive_in_background(clock, start);
        Ok(Piped {
            stdin,
            stdout,
            running: Running {
                pid,
                stop,
                ended: ended_rx,
            },
        })
    }
}

type Pipe = Pin<Box<dyn AsyncRead + Send>>;

impl Engine {
    /// Runs the loop on the runtime until the run is over; the receiver
    /// tells how it ended. The engine is dropped first, which ends the
    /// lines (or pipes) before the end of the run is told.
    fn drive_in_background(
        mut self,
        clock: Clock,
        start: Instant,
    ) -> watch::Receiver<Option<Ended>> {
        let (ended_tx, ended_rx) = watch::channel(None);
        tokio::spawn(async move {
            let ended = self.drive(clock, start).await;
            drop(self);
            let _ = ended_tx.send(Some(ended));
        });
        ended_rx
    }
}

/// One run in progress: the child, its pipes and captures, its clocks.
struct Engine {
    child: tokio::process::Child,
    pid: u32,
    pgid: Pid,
    stdout: Option<Pipe>,
    stderr: Option<Pipe>,
    feed: Option<(ChildStdin, Vec<u8>)>,
    /// With [`Input::BytesKeepOpen`]: stdin once fed, kept open until the
    /// run is over.
    held: Option<ChildStdin>,
    hold: bool,
    captures: Vec<Capture>,
    lines: Option<Splitter>,
    /// [`Command::on_output`].
    on_output: Option<super::OutputWatch>,
    /// [`Command::stderr_lines`].
    stderr_lines: Option<Splitter>,
    cancel: CancellationToken,
    status: Option<Status>,
    /// Cleared once the group is known to be ended.
    armed: bool,
    /// Counts this run as in flight (see `run.rs`).
    _running: InFlight,
}

impl Drop for Engine {
    fn drop(&mut self) {
        if self.armed {
            super::tree::kill_group(self.pgid);
        }
    }
}

impl Engine {
    /// Spawns the prepared command; the stdin it returns is the caller's
    /// to write with [`Input::Pipe`].
    fn spawn(
        cmd: &mut Command,
        lines: Option<Splitter>,
        cancel: CancellationToken,
    ) -> Result<(Engine, Option<ChildStdin>), Error> {
        let running = InFlight::start();
        let Prepared {
            command,
            input,
            merged,
            captures,
        } = prepare(cmd, false)?;
        let mut c = tokio::process::Command::from(command);
        // The engine's own drop kills the whole group, not just the leader.
        c.kill_on_drop(false);
        // The command holds our copy of the merged pipe's write end: it
        // must close once the child runs, or the end of output would never
        // be seen.
        let spawned = match &cmd.confinement {
            #[cfg(target_os = "linux")]
            Some(confinement) => {
                // On the confinement's thread (see `confine.rs`), inside
                // this runtime, which reaps the child.
                let runtime = tokio::runtime::Handle::current();
                confinement.spawn(move || {
                    let _inside = runtime.enter();
                    c.spawn()
                })
            }
            _ => {
                let spawned = c.spawn();
                drop(c);
                spawned
            }
        };
        let mut child = spawned.map_err(spawn_error(cmd))?;
        let pid = child.id().unwrap_or(0);
        let pgid = Pid::from_raw(i32::try_from(pid).unwrap_or(i32::MAX));
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let stdin = child.stdin.take();
        let mut engine = Engine {
            _running: running,
            child,
            pid,
            pgid,
            stdout: stdout.map(|p| Box::pin(p) as Pipe),
            stderr: stderr.map(|p| Box::pin(p) as Pipe),
            feed: None,
            held: None,
            hold: false,
            captures,
            lines,
            on_output: cmd.on_output.take(),
            stderr_lines: cmd.stderr_lines.take(),
            cancel,
            status: None,
            armed: true,
        };
        if let Some(r) = merged {
            let fd = OwnedFd::from(r);
            let pipe = tokio::net::unix::pipe::Receiver::from_owned_fd(fd)
                .map_err(io_err("cannot set up the output pipe"))?;
            engine.stdout = Some(Box::pin(pipe));
        }
        if let Some(f) = cmd.on_spawn.take() {
            f(pid);
        }
        let stdin = match (stdin, input) {
            (Some(pipe), Input::Bytes(data)) => {
                if !data.is_empty() {
                    engine.feed = Some((pipe, data));
                }
                None
            }
            (Some(pipe), Input::BytesKeepOpen(data)) => {
                engine.hold = true;
                if data.is_empty() {
                    engine.held = Some(pipe);
                } else {
                    engine.feed = Some((pipe, data));
                }
                None
            }
            (pipe, Input::Pipe) => pipe,
            _ => None,
        };
        Ok((engine, stdin))
    }

    /// Runs the loop until the clock says the run is over.
    async fn drive(&mut self, mut clock: Clock, start: Instant) -> Result<Outcome, Error> {
        let mut out_buf = vec![0u8; READ_CHUNK];
        let mut err_buf = vec![0u8; READ_CHUNK / 4];
        let mut feed_pos = 0usize;
        loop {
            let now = Instant::now();
            let cancelled = self
                .cancel
                .is_cancelled()
                .then_some(CancelReason::Requested);
            let open = self.stdout.is_some() || self.stderr.is_some();
            if clock.tick(now, cancelled, open) {
                break;
            }
            let wake = clock.next_wake(now);
            let waiting = self.status.is_none();
            let watch_cancel = clock.stop.is_none() && cancelled.is_none();
            let paused = self.lines.as_ref().is_some_and(Splitter::backlogged);
            // While paused, only the reader taking the backlog down (or
            // the clock) wakes the loop to read stdout again.
            let resumed = self.lines.as_ref().map(|s| s.resumed.clone());
            tokio::select! {
                st = self.child.wait(), if waiting => match st {
                    Ok(st) => {
                        self.status = Some(super::run::status_of(st));
                        clock.exited_at = Some(Instant::now());
                    }
                    Err(e) => {
                        super::tree::kill_group(self.pgid);
                        return Err(io_err("cannot wait for the command")(e));
                    }
                },
                () = self.cancel.cancelled(), if watch_cancel => {}
                () = sleep_until(wake) => {}
                () = notified(resumed.as_deref()), if paused => {}
                r = read_from(&mut self.stdout, &mut out_buf), if !paused => match r {
                    Some(n) => self.take_stdout(&out_buf[..n]),
                    None => self.stdout = None,
                },
                r = read_from(&mut self.stderr, &mut err_buf) => match r {
                    Some(n) => self.take_stderr(&err_buf[..n]),
                    None => self.stderr = None,
                },
                more = feed(&mut self.feed, &mut feed_pos) => {
                    if !more {
                        // Closing stdin is how the child sees the end,
                        // unless the end would mean "the caller is gone".
                        let fed = self.feed.take();
                        if self.hold {
                            self.held = fed.map(|(pipe, _)| pipe);
                        }
                    }
                },
            }
        }
        // What is still buffered in the pipes (read while the reader of
        // the lines lagged) is not lost, however the run ended.
        if self.lines.is_some() {
            let deadline = tokio::time::Instant::now() + FINAL_WAIT;
            while self.stdout.is_some() {
                let read =
                    tokio::time::timeout_at(deadline, read_from(&mut self.stdout, &mut out_buf));
                match read.await {
                    Ok(Some(n)) => self.take_stdout(&out_buf[..n]),
                    _ => self.stdout = None,
                }
            }
        }
        if let Some(l) = self.lines.as_mut() {
            l.finish();
        }
        if let Some(l) = self.stderr_lines.as_mut() {
            l.finish();
        }
        self.feed = None;
        self.held = None;
        let status = match self.status {
            Some(s) => s,
            // Not even SIGKILL ended it within the final wait (a process
            // stuck in the kernel): report what was done to it.
            None => match tokio::time::timeout(FINAL_WAIT, self.child.wait()).await {
                Ok(Ok(st)) => super::run::status_of(st),
                _ => Status::Signaled(nix::libc::SIGKILL),
            },
        };
        // Ended: the group is gone, or was killed as a last resort.
        self.armed = false;
        let mut captured = std::mem::take(&mut self.captures)
            .into_iter()
            .map(Capture::finish);
        let stdout = captured.next().unwrap_or_default();
        let stderr = captured.next().unwrap_or_default();
        Ok(Outcome {
            pid: self.pid,
            status,
            stopped: clock.stop,
            duration: start.elapsed(),
            stdout,
            stderr,
            leftovers: clock.leftovers,
        })
    }

    fn take_stdout(&mut self, bytes: &[u8]) {
        if let Some(f) = self.on_output.as_mut() {
            f(bytes);
        }
        match self.lines.as_mut() {
            Some(l) => l.push(bytes),
            None => {
                if let Some(c) = self.captures.first_mut() {
                    c.push(bytes);
                }
            }
        }
    }

    fn take_stderr(&mut self, bytes: &[u8]) {
        if let Some(l) = self.stderr_lines.as_mut() {
            l.push(bytes);
        }
        if let Some(c) = self.captures.get_mut(1) {
            c.push(bytes);
        }
    }
}

async fn sleep_until(wake: Option<Instant>) {
    match wake {
        Some(t) => tokio::time::sleep_until(tokio::time::Instant::from_std(t)).await,
        None => std::future::pending().await,
    }
}

/// Waits until the lines' reader took a backlog down.
async fn notified(resumed: Option<&Notify>) {
    match resumed {
        Some(n) => n.notified().await,
        None => std::future::pending().await,
    }
}

/// Reads some bytes; `None` at the end of the pipe (or on an error, which
/// ends it too). Never ready without a pipe.
async fn read_from(pipe: &mut Option<Pipe>, buf: &mut [u8]) -> Option<usize> {
    let Some(p) = pipe.as_mut() else {
        return std::future::pending().await;
    };
    loop {
        match p.read(buf).await {
            Ok(0) => return None,
            Ok(n) => return Some(n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
}

/// Writes stdin bytes; false once all are written or the child stopped
/// reading. Never ready without anything to write.
async fn feed(feed: &mut Option<(ChildStdin, Vec<u8>)>, pos: &mut usize) -> bool {
    let Some((pipe, data)) = feed.as_mut() else {
        return std::future::pending().await;
    };
    match pipe.write(&data[*pos..]).await {
        Ok(n) if n > 0 => {
            *pos += n;
            *pos < data.len()
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Captured, Line, LineError, Stop, foreign_group_alive, process_alive};
    use super::*;

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    fn sh(script: &str) -> Command {
        Command::new("sh")
            .arg("-c")
            .arg(script)
            .output(Output::Separate {
                stdout: CaptureLimit::new(1 << 20),
                stderr: CaptureLimit::new(1 << 20),
            })
            .grace(Duration::from_millis(300))
    }

    fn text(c: &Captured) -> String {
        c.lossy()
    }

    fn collect(cmd: Command) -> Outcome {
        rt().block_on(cmd.collect(&CancellationToken::new()))
            .unwrap()
    }

    /// Polls until the group has no live member (signals land
    /// asynchronously), failing after a generous while.
    fn wait_group_gone(pgid: u32) {
        for _ in 0..500 {
            if !foreign_group_alive(pgid) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("group {pgid} survived");
    }

    #[test]
    fn stderr_lines_come_as_written_and_stderr_is_still_captured() {
        // The child waits until its first line was taken: the lines come
        // while it runs, not only at its end.
        let dir = tempfile::tempdir().unwrap();
        let flag = dir.path().join("seen");
        let script = format!(
            "echo first >&2; while [ ! -e '{}' ]; do sleep 0.01; done; printf 'second' >&2; echo out",
            flag.display()
        );
        let (cmd, mut lines) = sh(&script)
            .timeout(Duration::from_secs(60))
            .stderr_lines(100, 1000);
        let out = rt().block_on(async {
            let run = tokio::spawn(cmd.collect(&CancellationToken::new()));
            assert_eq!(lines.next().await, Some(ok("first")));
            std::fs::write(&flag, "").unwrap();
            let out = run.await.unwrap().unwrap();
            // The last line had no newline; then the lines end.
            assert_eq!(lines.next().await, Some(ok("second")));
            assert_eq!(lines.next().await, None);
            out
        });
        assert!(out.stopped.is_none(), "{out:?}");
        assert_eq!(text(&out.stderr), "first\nsecond");
        assert_eq!(text(&out.stdout), "out\n");
    }

    #[test]
    fn on_output_sees_stdout_as_it_is_read() {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let into = seen.clone();
        let out = collect(
            sh("echo one; echo err >&2; echo two")
                .on_output(move |b| into.lock().unwrap().extend_from_slice(b)),
        );
        assert_eq!(seen.lock().unwrap().as_slice(), b"one\ntwo\n");
        assert_eq!(text(&out.stdout), "one\ntwo\n");
    }

    #[test]
    fn bytes_kept_open_are_fed_and_the_end_of_input_comes_only_with_the_run() {
        // The child reads the line, then waits for the end of input: with
        // plain bytes it comes at once; kept open, only the time limit ends
        // the run, and the line was read all the same.
        let script = "read x; echo \"got $x\"; cat; echo eof";
        let out = collect(sh(script).stdin(Input::Bytes(b"call\n".to_vec())));
        assert_eq!(text(&out.stdout), "got call\neof\n");
        let out = collect(
            sh(script)
                .stdin(Input::BytesKeepOpen(b"call\n".to_vec()))
                .timeout(Duration::from_millis(500)),
        );
        assert_eq!(text(&out.stdout), "got call\n");
        assert!(matches!(out.stopped, Some(Stop::Timeout)), "{out:?}");
        // Nothing to feed: held open from the start.
        let out = collect(
            sh("cat; echo eof")
                .stdin(Input::BytesKeepOpen(Vec::new()))
                .timeout(Duration::from_millis(300)),
        );
        assert_eq!(text(&out.stdout), "");
    }

    #[test]
    fn collect_gives_status_both_streams_and_takes_input() {
        let out = collect(
            sh("read x; echo \"got $x\"; echo err >&2; exit 3")
                .stdin(Input::Bytes(b"hello\n".to_vec())),
        );
        assert_eq!(out.status, Status::Exited(3));
        assert_eq!(text(&out.stdout), "got hello\n");
        assert_eq!(text(&out.stderr), "err\n");
        assert!(out.stopped.is_none());
        // Input the child never reads, and much of it, is no deadlock.
        let input: Vec<u8> = (0..3_000_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let out = collect(
            sh("cat")
                .stdin(Input::Bytes(input.clone()))
                .output(Output::Separate {
                    stdout: CaptureLimit::new(4 << 20),
                    stderr: CaptureLimit::new(100),
                }),
        );
        assert_eq!(out.stdout.head, input);
        assert_eq!(collect(sh("exit 0").stdin(Input::Bytes(input))).code(), 0);
        let err =
            rt().block_on(Command::new("/no/such/program").collect(&CancellationToken::new()));
        assert!(matches!(err, Err(Error::Spawn { .. })));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn both_modes_mark_their_children_for_the_watchdog() {
        let script = "echo ${AG_WATCHDOG:+marked}";
        assert_eq!(text(&collect(sh(script)).stdout), "marked\n");
        rt().block_on(async {
            let mut s = stream(sh(script), limits(100, None));
            assert_eq!(s.lines.next().await, Some(ok("marked")));
        });
    }

    #[test]
    fn collect_caps_what_it_keeps_but_reads_everything() {
        let out = collect(
            sh("echo first; head -c 5000000 /dev/zero; echo; echo last").output(Output::Separate {
                stdout: CaptureLimit::new(1000),
                stderr: CaptureLimit::new(10),
            }),
        );
        assert_eq!(out.code(), 0);
        assert_eq!(out.stdout.total_bytes, 6 + 5_000_000 + 1 + 5);
        assert!(out.stdout.head.starts_with(b"first\n"));
        assert!(out.stdout.tail.ends_with(b"\nlast\n"));
        assert_eq!(out.stdout.head.len() + out.stdout.tail.len(), 1000);
        // Merged output works too, in the order written.
        let out = collect(
            sh("echo a; echo b >&2; echo c").output(Output::Merged(CaptureLimit::new(100))),
        );
        assert_eq!(text(&out.stdout), "a\nb\nc\n");
    }

    #[test]
    fn collect_times_out_and_ends_the_group_even_when_sigterm_is_ignored() {
        let out = collect(
            sh("echo started; sleep 30 & trap '' TERM; sleep 30; echo never")
                .timeout(Duration::from_millis(200)),
        );
        assert_eq!(out.stopped, Some(Stop::Timeout));
        assert_eq!(out.code(), 124);
        assert_eq!(text(&out.stdout), "started\n");
        wait_group_gone(out.pid);
    }

    #[test]
    fn collect_is_cancelled_and_a_dropped_collect_kills_the_group() {
        let rt = rt();
        let cancel = CancellationToken::new();
        let out = rt.block_on(async {
            let (tx, rx) = tokio::sync::oneshot::channel();
            let run = sh("sleep 60 & sleep 60")
                .on_spawn(move |pid| {
                    let _ = tx.send(pid);
                })
                .collect(&cancel);
            let stopper = async {
                let _ = rx.await;
                cancel.cancel();
            };
            let (out, ()) = tokio::join!(run, stopper);
            out.unwrap()
        });
        assert_eq!(out.stopped, Some(Stop::Cancelled(CancelReason::Requested)));
        wait_group_gone(out.pid);
        // A cancelled token stops a later run at once.
        let out = rt.block_on(sh("sleep 60").collect(&cancel)).unwrap();
        assert!(matches!(out.stopped, Some(Stop::Cancelled(_))));
        // Dropping the future mid-run (a select! that went another way)
        // leaves nothing behind either.
        let (tx, rx) = std::sync::mpsc::channel();
        rt.block_on(async {
            let run = sh("sleep 60 & sleep 60")
                .on_spawn(move |pid| tx.send(pid).unwrap())
                .collect(&CancellationToken::new());
            let _ = tokio::time::timeout(Duration::from_millis(200), run).await;
        });
        wait_group_gone(rx.recv().unwrap());
    }

    #[test]
    fn collect_takes_the_answer_of_a_child_that_leaves_one_on_its_pipe() {
        // The background sleep inherits stdout and stderr: waiting for them
        // to close would take its whole minute.
        let start = Instant::now();
        let out = collect(sh("sleep 60 & echo $!; echo answer"));
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{:?}",
            start.elapsed()
        );
        assert_eq!(out.code(), 0);
        assert!(out.leftovers);
        let mut lines = text(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect::<Vec<_>>();
        assert_eq!(lines.pop().as_deref(), Some("answer"));
        let sleeper: u32 = lines[0].parse().unwrap();
        for _ in 0..500 {
            if !process_alive(sleeper) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(!process_alive(sleeper), "the leftover survived");
        wait_group_gone(out.pid);
    }

    fn limits(max_line: usize, max_total: Option<u64>) -> LineLimits {
        LineLimits {
            max_line,
            max_total,
            stderr: CaptureLimit::new(1000),
        }
    }

    fn stream(cmd: Command, limits: LineLimits) -> Streaming {
        cmd.stream_lines(limits, &CancellationToken::new()).unwrap()
    }

    async fn all_lines(lines: &mut Lines) -> Vec<Line> {
        let mut out = Vec::new();
        while let Some(l) = lines.next().await {
            out.push(l);
        }
        out
    }

    fn ok(s: &str) -> Line {
        Ok(s.as_bytes().to_vec())
    }

    #[test]
    fn stream_gives_lines_as_they_come() {
        rt().block_on(async {
            // The first line comes while the command still runs.
            // Stderr is written first, so that it is in its pipe by then.
            let mut s = stream(sh("echo oops >&2; echo one; sleep 30"), limits(100, None));
            assert_eq!(s.lines.next().await, Some(ok("one")));
            s.running.stop();
            let ended = s.running.wait().await.unwrap();
            assert!(matches!(ended.stopped, Some(Stop::Cancelled(_))));
            assert_eq!(text(&ended.stderr), "oops\n");
            assert_eq!(s.lines.next().await, None);
            wait_group_gone(ended.pid);
            // A last line without a newline still counts; blank lines too.
            let mut s = stream(sh("printf 'a\\n\\nb'"), limits(100, None));
            assert_eq!(all_lines(&mut s.lines).await, [ok("a"), ok(""), ok("b")]);
            assert_eq!(s.running.wait().await.unwrap().code(), 0);
        });
    }

    #[test]
    fn stream_caps_each_line_and_the_whole() {
        rt().block_on(async {
            let script = "echo short; head -c 5000 /dev/zero | tr '\\0' x; echo; echo after";
            let mut s = stream(sh(script), limits(100, None));
            assert_eq!(
                all_lines(&mut s.lines).await,
                [
                    ok("short"),
                    Err(LineError::TooLong { max: 100 }),
                    ok("after")
                ]
            );
            // Past the total the stream ends, though the command goes on.
            let script = "echo 12345; echo 67890; echo more; sleep 30";
            let mut s = stream(sh(script), limits(100, Some(10)));
            assert_eq!(
                all_lines(&mut s.lines).await,
                [ok("12345"), Err(LineError::TooMuch { max: 10 })]
            );
            let ended = s.running.finish(Duration::ZERO).await.unwrap();
            wait_group_gone(ended.pid);
        });
    }

    #[test]
    fn a_reader_that_lagged_past_the_backlog_gets_every_line_once_it_reads() {
        rt().block_on(async {
            // 20 MB of 100-byte lines, more than is read ahead of the
            // reader: stdout pauses, and must be read again once the
            // reader takes the backlog down.
            let script = "head -c 20000000 /dev/zero | tr '\\0' x | fold -w 99";
            let mut s = stream(sh(script), limits(1000, None));
            let mut waited = 0;
            while s.lines.queued.load(std::sync::atomic::Ordering::SeqCst)
                <= super::super::lines::QUEUE_MAX
                && waited < 3000
            {
                tokio::time::sleep(Duration::from_millis(10)).await;
                waited += 10;
            }
            let all = tokio::time::timeout(Duration::from_secs(120), all_lines(&mut s.lines))
                .await
                .expect("the stream stalled once the reader caught up");
            assert_eq!(all.len(), 20_000_000 / 99 + 1);
            assert_eq!(s.running.wait().await.unwrap().code(), 0);
        });
    }

    #[test]
    fn stream_ends_with_the_command_not_with_what_it_left_on_the_pipe() {
        rt().block_on(async {
            let start = Instant::now();
            let mut s = stream(sh("echo a; sleep 60 & echo $!"), limits(100, None));
            let lines = all_lines(&mut s.lines).await;
            assert_eq!(lines[0], ok("a"));
            let sleeper: u32 = String::from_utf8(lines[1].clone().unwrap())
                .unwrap()
                .parse()
                .unwrap();
            let ended = s.running.wait().await.unwrap();
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "{:?}",
                start.elapsed()
            );
            assert_eq!(ended.code(), 0);
            assert!(ended.leftovers);
            assert!(!process_alive(sleeper), "the leftover survived");
            wait_group_gone(ended.pid);
        });
    }

    #[test]
    fn raw_pipes_carry_bytes_both_ways_and_a_dropped_handle_ends_the_group() {
        rt().block_on(async {
            // No line splitting: a message without a newline comes whole.
            let p = sh("echo warn >&2; head -c 5; printf 'done'")
                .stream_pipes(CaptureLimit::new(100), &CancellationToken::new())
                .unwrap();
            let Piped {
                mut stdin,
                mut stdout,
                running,
            } = p;
            stdin.write_all(b"ab\ncd").await.unwrap();
            let mut got = Vec::new();
            stdout.read_to_end(&mut got).await.unwrap();
            assert_eq!(got, b"ab\ncddone");
            let ended = running.wait().await.unwrap();
            assert_eq!(ended.code(), 0);
            assert_eq!(text(&ended.stderr), "warn\n");
            let p = sh("sleep 60 & sleep 60")
                .stream_pipes(CaptureLimit::new(100), &CancellationToken::new())
                .unwrap();
            let pid = p.running.pid();
            drop(p);
            for _ in 0..500 {
                if !foreign_group_alive(pid) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            assert!(!foreign_group_alive(pid), "the dropped run survived");
        });
    }

    #[test]
    fn stream_with_an_open_stdin_and_a_dropped_handle() {
        rt().block_on(async {
            let mut s = stream(sh("cat").stdin(Input::Pipe), limits(100, None));
            let mut stdin = s.stdin.take().unwrap();
            stdin.write_all(b"ping\n").await.unwrap();
            assert_eq!(s.lines.next().await, Some(ok("ping")));
            // Closing stdin ends `cat`: finish needs no stop.
            drop(stdin);
            let ended = s.running.finish(Duration::from_secs(20)).await.unwrap();
            assert_eq!(ended.status, Status::Exited(0));
            assert!(ended.stopped.is_none());
            // A dropped handle stops the run; so does the caller's token.
            let s = stream(sh("sleep 60 & sleep 60"), limits(100, None));
            let pid = s.running.pid();
            drop(s);
            let cancel = CancellationToken::new();
            let s = sh("sleep 60")
                .stream_lines(limits(10, None), &cancel)
                .unwrap();
            cancel.cancel();
            let ended = s.running.wait().await.unwrap();
            assert!(matches!(ended.stopped, Some(Stop::Cancelled(_))));
            for _ in 0..500 {
                if !foreign_group_alive(pid) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            assert!(!foreign_group_alive(pid), "the dropped run survived");
        });
    }
}
