//! The run loop: spawn, feed stdin, drain stdout and stderr into their
//! captures, and end the group on a timeout, a cancellation, or when it
//! outlives the command. One waiter thread blocks in wait(2) and closes a
//! pipe when the command exits, so that the loop learns of the exit at once
//! even while background children keep the output pipes open.

use std::fs::File;
use std::io::{self, PipeReader, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, TryRecvError};
use std::time::Instant;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

use super::cancel::set_nonblocking;
use super::capture::Capture;
use super::clock::{Clock, FINAL_WAIT};
use super::{Command, Error, Input, Outcome, Output, Status, tree};

/// Bytes read from a pipe at a time.
const READ_CHUNK: usize = 64 * 1024;
/// Reads from one pipe before the loop looks at its clocks again, so that a
/// command printing without pause cannot starve the timeout.
const READS_PER_WAKE: usize = 16;

/// Children started with `spawn_detached`, reaped when they have ended.
static DETACHED: Mutex<Vec<Child>> = Mutex::new(Vec::new());
/// Set by `adopt_orphans`: orphans are re-parented to this process.
static ADOPTING: AtomicBool = AtomicBool::new(false);
/// Runs in progress; orphans are reaped wholesale only when there are none,
/// so that no run's own child is reaped behind its back.
static RUNNING: AtomicUsize = AtomicUsize::new(0);

pub(super) fn set_adopting() {
    ADOPTING.store(true, Ordering::SeqCst);
}

/// Whether this process adopts orphans and no run is in flight, so that
/// every child that is not detached was adopted.
pub(super) fn adopting_idle() -> bool {
    ADOPTING.load(Ordering::SeqCst) && RUNNING.load(Ordering::SeqCst) == 0
}

/// The pids of the detached children still running.
pub(super) fn detached_pids() -> Vec<u32> {
    reap_detached();
    DETACHED
        .lock()
        .map(|l| l.iter().map(Child::id).collect())
        .unwrap_or_default()
}

/// Held while a child is being started, and by [`super::end_adopted`]
/// for its whole sweep, so that no child starts while adopted ones are
/// being told apart from the rest.
static SPAWN_GATE: Mutex<()> = Mutex::new(());

/// The gate (see [`SPAWN_GATE`]).
pub(super) fn spawn_gate() -> std::sync::MutexGuard<'static, ()> {
    SPAWN_GATE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A run in flight (sync or async): while any is, no child of this
/// process is taken for an adopted orphan.
pub(super) struct Running;

impl Running {
    pub(super) fn start() -> Running {
        let _gate = spawn_gate();
        RUNNING.fetch_add(1, Ordering::SeqCst);
        Running
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A pipe from the child and the capture it fills.
struct Stream {
    file: Option<File>,
    capture: usize,
}

/// Stdin bytes still to write.
struct Feeder {
    file: File,
    data: Vec<u8>,
    pos: usize,
}

struct Spawned {
    child: Child,
    streams: Vec<Stream>,
    captures: Vec<Capture>,
    feeder: Option<Feeder>,
}

pub(super) fn io_err(context: &'static str) -> impl FnOnce(io::Error) -> Error {
    move |source| Error::Io {
        context,
        source: source.into(),
    }
}

/// The program, its arguments, directory and environment (the withheld
/// variables removed first, so that an explicit `env` of the caller still
/// wins), before any way of running it is chosen.
pub(super) fn std_command(cmd: &Command) -> std::process::Command {
    let mut c = std::process::Command::new(&cmd.program);
    c.args(&cmd.args);
    if let Some(dir) = &cmd.cwd {
        c.current_dir(dir);
    }
    super::secrets::apply_std(&mut c);
    for (key, value) in &cmd.env {
        match value {
            Some(v) => c.env(key, v),
            None => c.env_remove(key),
        };
    }
    c
}

/// Starts the std command: on the confinement's own thread when the
/// command asks for the sandbox (see `confine.rs`), so that the child is
/// confined from its start. The std command goes with it and is dropped
/// once the child runs, closing this process's copies of the pipes' ends.
pub(super) fn spawn_std(
    cmd: &Command,
    c: std::process::Command,
) -> io::Result<std::process::Child> {
    let mut c = c;
    #[cfg(target_os = "linux")]
    if let Some(confinement) = &cmd.confinement {
        return confinement.spawn(move || c.spawn());
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
    c.spawn()
}

/// A command set up as every child of this module is (its own group or
/// session, the withheld variables removed, the watchdog's mark), with its
/// stdio; the sync loop and the async one spawn it each their own way.
pub(super) struct Prepared {
    pub(super) command: std::process::Command,
    /// What to write to the child's stdin.
    pub(super) input: Input,
    /// The read end of the one pipe of [`Output::Merged`].
    pub(super) merged: Option<PipeReader>,
    /// Stdout's (or the merged stream's) capture, then stderr's.
    pub(super) captures: Vec<Capture>,
}

pub(super) fn prepare(cmd: &mut Command, detached: bool) -> Result<Prepared, Error> {
    let mut c = std_command(cmd);
    if cmd.new_session {
        tree::new_session(&mut c);
    } else {
        tree::new_group(&mut c);
    }
    // Detached children (background jobs) outlive this process on purpose,
    // and whatever watchdog marked this process must not end them either.
    if detached {
        c.env_remove(super::watchdog::VAR);
    } else {
        super::watchdog::watch_std(&mut c);
    }
    let input = std::mem::take(&mut cmd.stdin);
    c.stdin(match (&input, detached) {
        (Input::Bytes(_) | Input::BytesKeepOpen(_) | Input::Pipe, false) => Stdio::piped(),
        _ => Stdio::null(),
    });
    let mut captures = Vec::new();
    let mut merged = None;
    let output = std::mem::replace(&mut cmd.output, Output::Null);
    match output {
        Output::Null => {
            c.stdout(Stdio::null()).stderr(Stdio::null());
        }
        Output::File(f) => {
            let f2 = f.try_clone().map_err(io_err("cannot share the log file"))?;
            c.stdout(f).stderr(f2);
        }
        _ if detached => {
            c.stdout(Stdio::null()).stderr(Stdio::null());
        }
        Output::Merged(limit) => {
            let (r, w) = io::pipe().map_err(io_err("cannot create a pipe"))?;
            let w2 = w.try_clone().map_err(io_err("cannot create a pipe"))?;
            c.stdout(w).stderr(w2);
            merged = Some(r);
            captures.push(Capture::new(limit));
        }
        Output::Separate { stdout, stderr } => {
            c.stdout(Stdio::piped()).stderr(Stdio::piped());
            captures.push(Capture::new(stdout));
            captures.push(Capture::new(stderr));
        }
    }
    Ok(Prepared {
        command: c,
        input,
        merged,
        captures,
    })
}

/// The error of a command that would not start.
pub(super) fn spawn_error(cmd: &Command) -> impl FnOnce(io::Error) -> Error {
    let program = cmd.program.to_string_lossy().into_owned();
    move |source| Error::Spawn {
        program,
        source: source.into(),
    }
}

fn spawn(cmd: &mut Command, detached: bool) -> Result<Spawned, Error> {
    let Prepared {
        command: c,
        input,
        merged,
        captures,
    } = prepare(cmd, detached)?;
    // The std Command holds our copies of the pipes' write ends: spawn_std
    // drops it, or the end of output would never be seen.
    let mut child = spawn_std(cmd, c).map_err(spawn_error(cmd))?;
    let mut streams = Vec::new();
    let mut add = |fd: OwnedFd, capture: usize| -> Result<(), Error> {
        set_nonblocking(fd.as_fd()).map_err(io_err("cannot set up the output pipe"))?;
        streams.push(Stream {
            file: Some(File::from(fd)),
            capture,
        });
        Ok(())
    };
    if let Some(r) = merged {
        add(r.into(), 0)?;
    }
    if let Some(out) = child.stdout.take() {
        add(out.into(), 0)?;
    }
    if let Some(err) = child.stderr.take() {
        add(err.into(), 1)?;
    }
    let mut feeder = None;
    if let (Some(stdin), Input::Bytes(data) | Input::BytesKeepOpen(data)) =
        (child.stdin.take(), input)
    {
        let fd: OwnedFd = stdin.into();
        set_nonblocking(fd.as_fd()).map_err(io_err("cannot set up the input pipe"))?;
        if !data.is_empty() {
            feeder = Some(Feeder {
                file: File::from(fd),
                data,
                pos: 0,
            });
        }
    }
    Ok(Spawned {
        child,
        streams,
        captures,
        feeder,
    })
}

pub(super) fn spawn_detached(mut cmd: Command) -> Result<u32, Error> {
    reap_detached();
    // Listed before the gate opens again, so never taken for an orphan.
    let _gate = spawn_gate();
    let spawned = spawn(&mut cmd, true)?;
    let pid = spawned.child.id();
    if let Some(f) = cmd.on_spawn.take() {
        f(pid);
    }
    if let Ok(mut list) = DETACHED.lock() {
        list.push(spawned.child);
    }
    Ok(pid)
}

pub(super) fn reap_detached() {
    if let Ok(mut list) = DETACHED.lock() {
        list.retain_mut(|c| matches!(c.try_wait(), Ok(None)));
    }
    if ADOPTING.load(Ordering::SeqCst) && RUNNING.load(Ordering::SeqCst) == 0 {
        // Orphans that escaped their group (setsid) were adopted here too.
        while let Ok(st) = waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
            if st == WaitStatus::StillAlive {
                break;
            }
        }
    }
}

pub(super) fn status_of(st: ExitStatus) -> Status {
    use std::os::unix::process::ExitStatusExt;
    match (st.code(), st.signal()) {
        (Some(c), _) => Status::Exited(c),
        (None, Some(s)) => Status::Signaled(s),
        (None, None) => Status::Exited(-1),
    }
}

pub(super) fn run(mut cmd: Command) -> Result<Outcome, Error> {
    reap_detached();
    let _running = Running::start();
    let start = Instant::now();
    let Spawned {
        child,
        mut streams,
        mut captures,
        mut feeder,
    } = spawn(&mut cmd, false)?;
    let pid = child.id();
    let pgid = Pid::from_raw(i32::try_from(pid).unwrap_or(i32::MAX));
    if let Some(f) = cmd.on_spawn.take() {
        f(pid);
    }

    // The waiter owns the child; when wait(2) returns it sends the status
    // and drops its end of the pipe, which wakes the poll below.
    let (exit_r, exit_w) = match io::pipe() {
        Ok(p) => p,
        Err(e) => return Err(abandon(pgid, child, "cannot create a pipe", e)),
    };
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::Builder::new()
        .name("ag-proc-wait".into())
        .spawn({
            let mut child = child;
            move || {
                let _ = tx.send(child.wait());
                drop(exit_w);
            }
        });
    if let Err(e) = waiter {
        tree::kill_group(pgid);
        return Err(io_err("cannot start the waiter thread")(e));
    }

    let mut clock = Clock::new(&cmd, pgid, start);
    let mut status: Option<Status> = None;
    let mut buf = vec![0u8; READ_CHUNK];

    loop {
        if status.is_none() {
            let failure = match rx.try_recv() {
                Ok(Ok(st)) => {
                    status = Some(status_of(st));
                    clock.exited_at = Some(Instant::now());
                    None
                }
                Ok(Err(e)) => Some(e),
                Err(TryRecvError::Empty) => None,
                Err(TryRecvError::Disconnected) => {
                    Some(io::Error::other("the waiter thread ended"))
                }
            };
            if let Some(source) = failure {
                tree::kill_group(pgid);
                return Err(io_err("cannot wait for the command")(source));
            }
        }
        let now = Instant::now();
        let cancelled = cmd.cancel.as_ref().and_then(|c| c.reason());
        let open = streams.iter().any(|s| s.file.is_some());
        if clock.tick(now, cancelled, open) {
            break;
        }
        let timeout = match clock.next_wake(now) {
            None => PollTimeout::NONE,
            Some(t) => {
                let ms = t.saturating_duration_since(now).as_millis();
                // Round up so that the loop does not spin just short of a deadline.
                let ms = if t > now { ms.max(1) } else { 0 };
                PollTimeout::try_from(ms.min(i32::MAX as u128)).unwrap_or(PollTimeout::MAX)
            }
        };
        let stop = clock.stop;

        // Poll: output pipes, the stdin pipe, the waiter, the cancel handle.
        let cancel_fd = match (&cmd.cancel, stop) {
            (Some(c), None) => Some(c.wake_fd()),
            _ => None,
        };
        let mut fds: Vec<PollFd> = Vec::with_capacity(5);
        let mut kinds: Vec<Slot> = Vec::with_capacity(5);
        for (i, s) in streams.iter().enumerate() {
            if let Some(f) = &s.file {
                fds.push(PollFd::new(f.as_fd(), PollFlags::POLLIN));
                kinds.push(Slot::Stream(i));
            }
        }
        if let Some(f) = &feeder {
            fds.push(PollFd::new(f.file.as_fd(), PollFlags::POLLOUT));
            kinds.push(Slot::Feeder);
        }
        if status.is_none() {
            fds.push(PollFd::new(exit_r.as_fd(), PollFlags::POLLIN));
            kinds.push(Slot::Other);
        }
        if let Some(fd) = cancel_fd {
            fds.push(PollFd::new(fd, PollFlags::POLLIN));
            kinds.push(Slot::Other);
        }
        match poll(&mut fds, timeout) {
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => {
                tree::kill_group(pgid);
                return Err(io_err("cannot wait for output")(e.into()));
            }
        }
        let ready: Vec<(Slot, bool)> = fds
            .iter()
            .zip(kinds)
            .map(|(fd, kind)| (kind, fd.revents().is_some_and(|r| !r.is_empty())))
            .collect();
        drop(fds);
        for (kind, is_ready) in ready {
            if !is_ready {
                continue;
            }
            match kind {
                Slot::Stream(i) => {
                    let stream = &mut streams[i];
                    read_some(stream, &mut captures, &mut buf, &mut cmd.on_output);
                }
                Slot::Feeder => {
                    if let Some(f) = feeder.as_mut()
                        && !feed(f)
                    {
                        feeder = None;
                    }
                }
                Slot::Other => {}
            }
        }
    }

    let Clock {
        stop, leftovers, ..
    } = clock;
    let status = match status {
        Some(s) => s,
        // Not even SIGKILL ended it within the final wait (a process stuck
        // in the kernel): report what was done to it.
        None => match rx.recv_timeout(FINAL_WAIT) {
            Ok(Ok(st)) => status_of(st),
            _ => Status::Signaled(nix::libc::SIGKILL),
        },
    };
    drop(feeder);
    let mut captured = captures.into_iter().map(Capture::finish);
    let stdout = captured.next().unwrap_or_default();
    let stderr = captured.next().unwrap_or_default();
    drop(_running);
    reap_detached();
    Ok(Outcome {
        pid,
        status,
        stopped: stop,
        duration: start.elapsed(),
        stdout,
        stderr,
        leftovers,
    })
}

#[derive(Clone, Copy)]
enum Slot {
    Stream(usize),
    Feeder,
    Other,
}

/// Reads what is there; closes the stream at end of output. Stdout's
/// pieces (the merged stream's) go to `watch` too.
fn read_some(
    stream: &mut Stream,
    captures: &mut [Capture],
    buf: &mut [u8],
    watch: &mut Option<super::OutputWatch>,
) {
    let Some(file) = stream.file.as_mut() else {
        return;
    };
    for _ in 0..READS_PER_WAKE {
        match file.read(buf) {
            Ok(0) => {
                stream.file = None;
                return;
            }
            Ok(n) => {
                if stream.capture == 0
                    && let Some(f) = watch.as_mut()
                {
                    f(&buf[..n]);
                }
                captures[stream.capture].push(&buf[..n]);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(_) => {
                stream.file = None;
                return;
            }
        }
    }
}

/// Writes what the pipe takes. False when done (all written, or the child
/// stopped reading): the pipe is then closed so the child sees the end.
fn feed(f: &mut Feeder) -> bool {
    loop {
        match f.file.write(&f.data[f.pos..]) {
            Ok(n) => {
                f.pos += n;
                if f.pos >= f.data.len() {
                    return false;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
            Err(_) => return false,
        }
    }
}

/// Gives up on a child that cannot be watched: ends its group and reaps it.
fn abandon(pgid: Pid, mut child: Child, context: &'static str, source: io::Error) -> Error {
    tree::kill_group(pgid);
    let _ = child.wait();
    io_err(context)(source)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::{Cancel, CancelReason, CaptureLimit, Stop, foreign_group_alive};
    use super::*;

    fn sh(script: &str) -> Command {
        Command::new("sh")
            .arg("-c")
            .arg(script)
            .output(Output::Merged(CaptureLimit::new(1 << 20)))
            .grace(Duration::from_millis(300))
    }

    fn text(c: &super::super::Captured) -> String {
        String::from_utf8_lossy(&c.head).into_owned()
    }

    #[test]
    fn on_output_sees_the_merged_stream_in_order() {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let into = seen.clone();
        let out = sh("echo a; echo b >&2; echo c")
            .on_output(move |b| into.lock().unwrap().extend_from_slice(b))
            .run()
            .unwrap();
        assert_eq!(seen.lock().unwrap().as_slice(), b"a\nb\nc\n");
        assert_eq!(text(&out.stdout), "a\nb\nc\n");
    }

    #[test]
    fn exit_code_and_both_streams_in_order() {
        let out = sh("echo out; echo err >&2; echo out2; exit 3")
            .run()
            .unwrap();
        assert_eq!(out.status, Status::Exited(3));
        assert_eq!(out.code(), 3);
        assert_eq!(text(&out.stdout), "out\nerr\nout2\n");
        assert!(out.stopped.is_none());
        assert!(!out.leftovers);
    }

    #[test]
    fn separate_streams() {
        let out = Command::new("sh")
            .arg("-c")
            .arg("echo out; echo err >&2")
            .output(Output::Separate {
                stdout: CaptureLimit::new(100),
                stderr: CaptureLimit::new(100),
            })
            .run()
            .unwrap();
        assert_eq!(text(&out.stdout), "out\n");
        assert_eq!(text(&out.stderr), "err\n");
    }

    #[test]
    fn stdin_is_null_unless_given_and_large_input_does_not_deadlock() {
        let out = sh("cat; echo done").run().unwrap();
        assert_eq!(text(&out.stdout), "done\n");
        let input: Vec<u8> = (0..3_000_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let out = sh("cat")
            .stdin(Input::Bytes(input.clone()))
            .output(Output::Merged(CaptureLimit::new(4 << 20)))
            .run()
            .unwrap();
        assert_eq!(out.stdout.head, input);
        // A child that does not read its input is no problem either.
        let out = sh("exit 0").stdin(Input::Bytes(input)).run().unwrap();
        assert_eq!(out.code(), 0);
    }

    #[test]
    fn not_found_is_127_and_signals_are_128_plus_n() {
        assert_eq!(sh("no-such-command-ag").run().unwrap().code(), 127);
        let out = sh("kill -9 $$").run().unwrap();
        assert_eq!(out.status, Status::Signaled(9));
        assert_eq!(out.code(), 137);
        assert!(matches!(
            Command::new("/no/such/program").run(),
            Err(Error::Spawn { .. })
        ));
    }

    #[test]
    fn timeout_ends_the_group_even_when_sigterm_is_ignored() {
        let out = sh("echo started; sleep 30 & trap '' TERM; sleep 30; echo never")
            .timeout(Duration::from_millis(200))
            .run()
            .unwrap();
        assert_eq!(out.stopped, Some(Stop::Timeout));
        assert_eq!(out.code(), 124);
        assert_eq!(text(&out.stdout), "started\n");
        assert!(out.duration < Duration::from_secs(20), "{:?}", out.duration);
        assert!(!foreign_group_alive(out.pid));
    }

    #[test]
    fn background_children_do_not_keep_the_run_waiting() {
        let out = sh("sleep 60 & echo $!").run().unwrap();
        assert_eq!(out.code(), 0);
        assert!(out.leftovers);
        let child: u32 = text(&out.stdout).trim().parse().unwrap();
        assert!(!super::super::process_alive(child));
        assert!(!foreign_group_alive(out.pid));
        assert!(out.duration < Duration::from_secs(20), "{:?}", out.duration);
        // Also when they do not hold the pipes.
        let out = sh("sleep 60 >/dev/null 2>&1 & echo $!").run().unwrap();
        assert!(out.leftovers);
        assert!(!foreign_group_alive(out.pid));
    }

    #[test]
    fn cancel_from_another_thread_ends_the_whole_tree() {
        let cancel = Cancel::new().unwrap();
        let (tx, rx) = mpsc::channel();
        let canceller = {
            let cancel = cancel.clone();
            std::thread::spawn(move || {
                let _pid: u32 = rx.recv().unwrap();
                cancel.cancel();
            })
        };
        let out = sh("sleep 60 & sleep 60")
            .cancel(&cancel)
            .on_spawn(move |pid| tx.send(pid).unwrap())
            .run()
            .unwrap();
        canceller.join().unwrap();
        assert_eq!(out.stopped, Some(Stop::Cancelled(CancelReason::Requested)));
        assert!(!foreign_group_alive(out.pid));
        // A cancelled handle stops later runs at once.
        let out = sh("sleep 60").cancel(&cancel).run().unwrap();
        assert!(matches!(out.stopped, Some(Stop::Cancelled(_))));
    }

    #[test]
    fn huge_output_keeps_head_and_tail_only() {
        let out = sh("echo first; head -c 50000000 /dev/zero; echo; echo last")
            .output(Output::Merged(CaptureLimit::new(1000)))
            .run()
            .unwrap();
        assert_eq!(out.stdout.total_bytes, 6 + 50_000_000 + 1 + 5);
        assert!(out.stdout.head.starts_with(b"first\n"));
        assert!(out.stdout.tail.ends_with(b"\nlast\n"));
        assert_eq!(out.stdout.head.len() + out.stdout.tail.len(), 1000);
    }

    #[test]
    fn output_to_a_file_and_detached_children() {
        let dir = tempfile::tempdir().unwrap();
        let log = File::create(dir.path().join("log")).unwrap();
        let out = sh("echo a; echo b >&2")
            .output(Output::File(log))
            .run()
            .unwrap();
        assert_eq!(out.code(), 0);
        let logged = std::fs::read_to_string(dir.path().join("log")).unwrap();
        assert_eq!(logged, "a\nb\n");
        let pid = Command::new("sh")
            .arg("-c")
            .arg("exit 0")
            .new_session()
            .spawn_detached()
            .unwrap();
        assert!(pid > 0);
    }
}
