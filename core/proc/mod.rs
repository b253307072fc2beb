//! Every child process ag starts goes through this module. A command runs
//! as the leader of its own process group (or session), with stdin closed
//! unless input is given; its stdout and stderr are drained together into
//! bounded captures; a time limit or a [`Cancel`] ends the whole group with
//! SIGTERM, then SIGKILL after a grace period; once the command itself has
//! exited, pipes that its background children hold open are waited for only
//! briefly, and those children are stopped too. Should this process die
//! without a chance to clean up (SIGKILL, the OOM killer), a watchdog
//! process ends what it started (see `watchdog.rs`), so no child outlives
//! it.
//!
//! A [`Command`] is built once and run in one of three ways:
//!
//! - [`Command::run`], synchronous (a poll loop plus one waiter thread), so
//!   that starting a command costs almost nothing: the tools themselves
//!   (ag-bash, ag-git). Another thread or a signal stops it through its
//!   [`Cancel`] handle.
//! - [`Command::collect`], the same from async code (ag-loop's tool calls,
//!   gates and after-hooks, `--schema`): input in, capped stdout and
//!   stderr out, stopped by a time limit or a
//!   [`CancellationToken`](tokio_util::sync::CancellationToken).
//! - [`Command::stream_lines`], for a child that talks while it runs
//!   (`--llm-cmd`, MCP servers over stdio): stdout as capped lines as they
//!   come, stdin open to write to when asked, and a [`Running`] handle
//!   that stops the run and tells how it ended.
//!
//! The async modes share one loop (`child.rs`; the lines are cut in
//! `lines.rs`), and all three share the
//! preparation of the child and the clock that ends its group
//! (`clock.rs`), so a helper that answers and leaves a background child
//! on its pipe costs the drain (100 ms), never the background child's
//! lifetime. There is no other way to start a child: no tokio command,
//! group signal or reaping is public, so no caller can hand-roll one.
//! [`answer`] reads the reply of the helpers that answer with one JSON
//! line (tools, gates, after-hooks).

mod answer;
mod attached;
mod cancel;
mod capture;
mod child;
mod clock;
#[cfg(target_os = "linux")]
mod confine;
mod lines;
mod owner;
mod run;
mod secrets;
mod signals;
mod strays;
mod tree;
pub mod warm;
#[cfg(target_os = "linux")]
mod watchdog;
#[cfg(not(target_os = "linux"))]
#[path = "watchdog_none.rs"]
mod watchdog;

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use answer::{AnswerError, answer};
pub use cancel::{Cancel, CancelReason};
pub use capture::{CaptureLimit, Captured};
pub use child::{Ended, Piped, Running, Streaming};
#[cfg(target_os = "linux")]
pub use confine::{Confinement, landlock_abi, landlock_add_path_rule, seccomp_filter_available};
pub use lines::{Line, LineError, LineLimits, Lines};
pub use nix::sys::signal::Signal;
pub use owner::session_owner;
pub use secrets::{hide_own_environment, hide_own_environment_or_warn, withheld_env, withhold_env};
pub use signals::{TerminationGuard, termination_signal};
pub use strays::end_adopted;
pub use tree::{foreign_group_alive, process_alive, session_of, signal_group, signal_process};
/// The environment variable that marks a child for this process's
/// watchdog (see `watchdog.rs`). Work handed to another system that
/// outlives this process on purpose, but inherits the environment (a Slurm
/// job on this machine, exported by sbatch), must drop it, as detached
/// children do.
pub const WATCHDOG_VAR: &str = watchdog::VAR;

/// Time a group gets between SIGTERM and SIGKILL, unless a command says
/// otherwise ([`Command::grace`]); also the watchdog's.
pub const GRACE: Duration = Duration::from_secs(2);

/// What [`Command::on_output`] calls with each piece of output.
pub type OutputWatch = Box<dyn FnMut(&[u8]) + Send>;

/// What the child reads on stdin.
#[derive(Debug, Clone, Default)]
pub enum Input {
    /// `/dev/null`: a command that reads stdin sees end of input at once.
    #[default]
    Null,
    /// These bytes, then end of input.
    Bytes(Vec<u8>),
    /// A pipe the caller writes to as it goes (MCP's requests): see
    /// [`Streaming::stdin`]. A run to the end ([`Command::run`],
    /// [`Command::collect`]) has no one to write, so its child sees end of
    /// input at once.
    Pipe,
    // Tools in another workspace (issue 22).
    /// These bytes, then stdin held open until the run is over (async runs;
    /// a synchronous run closes it like [`Input::Bytes`]): for a transport
    /// (`ssh`, `docker exec -i`) whose remote end takes the end of input as
    /// the caller gone, and ends the remote call then.
    BytesKeepOpen(Vec<u8>),
}

/// Where the child's stdout and stderr go.
#[derive(Debug)]
pub enum Output {
    /// `/dev/null`.
    Null,
    /// One pipe for both, so the capture holds them in the order written.
    Merged(CaptureLimit),
    /// Two pipes, two captures.
    Separate {
        /// For stdout.
        stdout: CaptureLimit,
        /// For stderr.
        stderr: CaptureLimit,
    },
    /// Both straight into a file (background jobs' logs).
    File(File),
}

/// A command to run, built like [`std::process::Command`].
pub struct Command {
    program: OsString,
    args: Vec<OsString>,
    cwd: Option<PathBuf>,
    env: Vec<(OsString, Option<OsString>)>,
    stdin: Input,
    output: Output,
    timeout: Option<Duration>,
    grace: Duration,
    cancel_grace: Option<Duration>,
    drain: Duration,
    new_session: bool,
    kill_leftovers: bool,
    cancel: Option<Cancel>,
    on_spawn: Option<Box<dyn FnOnce(u32) + Send>>,
    // Progress (issue 31): output watched as it comes.
    on_output: Option<OutputWatch>,
    stderr_lines: Option<lines::Splitter>,
    // The sandbox (lib/sandbox): the child starts confined.
    #[cfg(target_os = "linux")]
    confinement: Option<Arc<Confinement>>,
}

impl Command {
    /// A command running `program` (looked up in `PATH`), with stdin and
    /// output null, no time limit, a 2 s grace period and a 100 ms wait for
    /// pipes held open after the command exits.
    pub fn new(program: impl AsRef<OsStr>) -> Command {
        Command {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            cwd: None,
            env: Vec::new(),
            stdin: Input::Null,
            output: Output::Null,
            timeout: None,
            grace: GRACE,
            cancel_grace: None,
            drain: Duration::from_millis(100),
            new_session: false,
            kill_leftovers: true,
            cancel: None,
            on_spawn: None,
            on_output: None,
            stderr_lines: None,
            #[cfg(target_os = "linux")]
            confinement: None,
        }
    }

    /// Adds an argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Command {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Runs in this directory.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Command {
        self.cwd = Some(dir.into());
        self
    }

    /// Sets an environment variable for the child.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Command {
        self.env
            .push((key.as_ref().to_owned(), Some(value.as_ref().to_owned())));
        self
    }

    /// Removes an environment variable for the child.
    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Command {
        self.env.push((key.as_ref().to_owned(), None));
        self
    }

    /// What the child reads on stdin.
    pub fn stdin(mut self, input: Input) -> Command {
        self.stdin = input;
        self
    }

    /// Where stdout and stderr go.
    pub fn output(mut self, output: Output) -> Command {
        self.output = output;
        self
    }

    /// Ends the group when this much time has passed.
    pub fn timeout(mut self, limit: Duration) -> Command {
        self.timeout = Some(limit);
        self
    }

    /// Time between SIGTERM and SIGKILL.
    pub fn grace(mut self, grace: Duration) -> Command {
        self.grace = grace;
        self
    }

    /// Time between SIGTERM and SIGKILL when the run is cancelled rather
    /// than timed out (default: the same as [`Command::grace`]). Whoever
    /// cancels is waiting and may escalate: ag-loop, after its own grace
    /// period, kills ag-bash, which must have ended its command by then.
    pub fn cancel_grace(mut self, grace: Duration) -> Command {
        self.cancel_grace = Some(grace);
        self
    }

    /// How long pipes that background children hold open are read after
    /// the command itself has exited.
    pub fn drain(mut self, drain: Duration) -> Command {
        self.drain = drain;
        self
    }

    /// Starts the child in a new session rather than only a new group, so
    /// that it has no controlling terminal.
    pub fn new_session(mut self) -> Command {
        self.new_session = true;
        self
    }

    /// Leaves processes of the group running once the command has exited
    /// (by default they are stopped like on a timeout).
    pub fn keep_leftovers(mut self) -> Command {
        self.kill_leftovers = false;
        self
    }

    /// Stops the run when this handle is cancelled.
    pub fn cancel(mut self, cancel: &Cancel) -> Command {
        self.cancel = Some(cancel.clone());
        self
    }

    /// Called with the child's pid (which is also its group id) right after
    /// it started.
    pub fn on_spawn(mut self, f: impl FnOnce(u32) + Send + 'static) -> Command {
        self.on_spawn = Some(Box::new(f));
        self
    }

    // Progress (issue 31).
    /// Called with each piece of stdout (of both streams with
    /// [`Output::Merged`]) as it is read, before it is captured: to watch a
    /// command's output while it runs (ag-bash's progress lines). It runs
    /// on the loop that drains the pipes, so it must not block.
    pub fn on_output(mut self, f: impl FnMut(&[u8]) + Send + 'static) -> Command {
        self.on_output = Some(Box::new(f));
        self
    }

    /// With [`Command::collect`]: stderr is captured as usual, and also
    /// handed over line by line as it comes (lines longer than `max_line`
    /// bytes are skipped, and nothing more comes past `max_total` bytes):
    /// for tools' progress lines. The lines end with the run.
    pub fn stderr_lines(mut self, max_line: usize, max_total: u64) -> (Command, Lines) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let queued = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let limits = LineLimits {
            max_line,
            max_total: Some(max_total),
            stderr: CaptureLimit::new(0),
        };
        // The stderr lines never pause the child (its output is drained
        // whatever the reader does), so nothing waits on `resumed`.
        let resumed = Arc::new(tokio::sync::Notify::new());
        self.stderr_lines = Some(lines::Splitter::new(
            &limits,
            tx,
            queued.clone(),
            resumed.clone(),
        ));
        (
            self,
            Lines {
                rx,
                queued,
                resumed,
            },
        )
    }

    /// Confines the child (and all it starts) by this Landlock ruleset and
    /// seccomp filter, with `no_new_privs`, from its start (it is started
    /// by a thread confined so, see `confine.rs`); if the kernel refuses
    /// them, the command does not start. The sandbox in the `ag` crate
    /// builds the confinement from a policy (its `ConfineCommand::sandbox`).
    #[cfg(target_os = "linux")]
    pub fn confine(mut self, confinement: Arc<Confinement>) -> Command {
        self.confinement = Some(confinement);
        self
    }

    /// Runs the command to its end (or its time limit, or cancellation).
    pub fn run(self) -> Result<Outcome, Error> {
        run::run(self)
    }

    /// Runs the command attached to this terminal: stdio inherited, in this
    /// process's group, no time limit or capture; SIGINT, SIGTERM and SIGHUP
    /// sent to this process are passed on to it (see `attached.rs`).
    pub fn run_attached(self) -> Result<Status, Error> {
        attached::run_attached(self)
    }

    /// Starts the command and returns its pid at once, without waiting. The
    /// child is reaped by a later [`Command::run`] or [`reap_detached`].
    pub fn spawn_detached(self) -> Result<u32, Error> {
        run::spawn_detached(self)
    }
}

/// How the command itself ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// It exited with this code.
    Exited(i32),
    /// It was killed by this signal.
    Signaled(i32),
}

impl std::fmt::Display for Status {
    /// As std shows an exit status: `exit status: 3`, `signal: 9 (SIGKILL)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Status::Exited(c) => write!(f, "exit status: {c}"),
            Status::Signaled(n) => write!(f, "signal: {n} ({})", signal_name(*n)),
        }
    }
}

/// Why the run stopped the command before it ended by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The time limit passed.
    Timeout,
    /// The cancel handle was cancelled.
    Cancelled(CancelReason),
}

/// The result of a run.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The child's pid, also its process group id.
    pub pid: u32,
    /// How the command ended.
    pub status: Status,
    /// Set when the run stopped the command.
    pub stopped: Option<Stop>,
    /// From start to the end of the run.
    pub duration: Duration,
    /// Stdout, or both streams with [`Output::Merged`].
    pub stdout: Captured,
    /// Stderr with [`Output::Separate`], else empty.
    pub stderr: Captured,
    /// Processes of the group outlived the command and were stopped.
    pub leftovers: bool,
}

impl Outcome {
    /// The shell-style exit code: 124 after a timeout, 128+N when killed by
    /// signal N, else the command's own code.
    pub fn code(&self) -> i32 {
        if self.stopped == Some(Stop::Timeout) {
            return 124;
        }
        match self.status {
            Status::Exited(c) => c,
            Status::Signaled(n) => 128 + n,
        }
    }

    /// The signal that killed the command, if one did.
    pub fn signal(&self) -> Option<i32> {
        match self.status {
            Status::Signaled(n) => Some(n),
            Status::Exited(_) => None,
        }
    }
}

/// Why a command could not be run. Cloneable, so that the end of a stream
/// (see [`Running`]) can be handed to everyone who waits for it.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// The program could not be started.
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        /// What was to be run.
        program: String,
        /// Why it failed.
        source: Arc<io::Error>,
    },
    /// A pipe or wait failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: &'static str,
        /// Why it failed.
        source: Arc<io::Error>,
    },
}

impl Error {
    /// A stable code for error results.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Spawn { .. } => "proc.spawn",
            Error::Io { .. } => "proc.io",
        }
    }
}

/// `ag-NAME` beside this executable, else on `PATH`: the front ends start
/// the ag binaries of their own install.
pub fn sibling(name: &str) -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(|d| d.join(name)))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from(name))
}

/// The ag-loop a front end drives, with `args` after its own: `--loop-cmd
/// LINE` (a shell line the arguments are appended to, for a wrapper such
/// as ssh or a container) or else the sibling `ag-loop --json`.
pub fn loop_command(loop_cmd: Option<&str>, args: &[String]) -> Command {
    match loop_cmd {
        Some(line) => Command::new("sh")
            .arg("-c")
            .arg(format!("{line} \"$@\""))
            .arg("sh")
            .args(args),
        None => Command::new(sibling("ag-loop")).arg("--json").args(args),
    }
}

/// Makes this process the reaper of its orphaned descendants (Linux), so
/// that the background children a command leaves behind are adopted here
/// and can be waited for, rather than lingering as zombies under an init
/// that does not reap (as in many containers). Call it only in a process
/// whose children are all started through this module: adopted orphans
/// outside a command's group are reaped by [`reap_detached`].
pub fn adopt_orphans() -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        nix::sys::prctl::set_child_subreaper(true).map_err(io::Error::from)?;
        run::set_adopting();
    }
    Ok(())
}

/// Reaps children started with [`Command::spawn_detached`] that have ended.
pub fn reap_detached() {
    run::reap_detached();
}

/// The conventional name of a signal (`SIGTERM`), or `signal N`.
pub fn signal_name(n: i32) -> String {
    match Signal::try_from(n) {
        Ok(s) => s.as_str().to_string(),
        Err(_) => format!("signal {n}"),
    }
}
