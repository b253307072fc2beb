//! `bash`: runs a shell command with a time limit, a bounded output and
//! clean cancellation (through [`crate::proc`]), and manages background
//! jobs (see [`jobs`]). This file owns the arguments, the foreground run
//! and the text the model reads.

pub mod jobs;
mod line_break_hint;
pub mod progress;
mod record;
pub(crate) mod render;
mod sandbox;
mod script_hint;
mod supervisor;

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::proc::{self, Cancel, CancelReason, CaptureLimit, Input, Output, Stop};
use crate::protocol::ToolResult;
use crate::tool_protocol::{Context, Tool, ToolError, ToolOutput};
use crate::tools::offer::call_text;

pub use render::{clean, strip_ansi};
pub use supervisor::supervisor_main;

/// Seconds a command may run when no `timeout` is given.
pub const DEFAULT_TIMEOUT_SECS: f64 = 180.0;
/// A `timeout` below this is taken as a slip, and the default is used.
const MIN_SENSIBLE_TIMEOUT_SECS: f64 = 1.0;
/// The largest `timeout` accepted.
pub const MAX_TIMEOUT_SECS: f64 = 3600.0;
/// Output kept when no `max_output` is given: 1 MiB, head and tail.
pub const DEFAULT_MAX_OUTPUT: u64 = 1024 * 1024;
/// Bounds of `max_output`.
pub const MIN_MAX_OUTPUT: u64 = 1024;
/// See [`DEFAULT_MAX_OUTPUT`].
pub const MAX_MAX_OUTPUT: u64 = 8 * 1024 * 1024;
/// Largest file the full output of a truncated command is saved to.
pub const SPILL_MAX: u64 = 64 * 1024 * 1024;
/// Time between SIGTERM and SIGKILL.
pub const GRACE: Duration = Duration::from_secs(2);
/// The same when ag-bash itself is interrupted: shorter, so that the
/// command is gone before a caller that waits 2 s (ag-loop) kills ag-bash.
pub const CANCEL_GRACE: Duration = Duration::from_secs(1);
/// The exit status of the plain command line when ag-bash itself fails
/// (as `timeout`, `env` and `nice` do), so that it cannot be mistaken for
/// a status of the command.
pub const OWN_FAILURE: u8 = 125;

/// Arguments of `bash`.
#[derive(Debug, Clone, Default, Args, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashArgs {
    /// The command to run, as `bash -c COMMAND`. Required unless `list_jobs`
    /// or `job` is given.
    #[arg(value_name = "COMMAND")]
    #[serde(default)]
    #[schemars(description = "")]
    pub command: Option<String>,
    /// Seconds after which the command and everything it started are
    /// stopped (default 180, at most 3600). Fractions are allowed.
    #[arg(long, value_name = "SECONDS")]
    #[serde(default)]
    // The model is shown 1 as the least: shown 0.001, small models sent it.
    #[schemars(range(min = 1.0, max = 3600.0))]
    #[schemars(description = "")]
    pub timeout: Option<f64>,
    /// Directory to run in (default: the working directory).
    #[arg(long, value_name = "DIR")]
    #[serde(default)]
    #[schemars(description = "")]
    pub cwd: Option<String>,
    /// Text given to the command on its standard input. Without it stdin is
    /// empty (/dev/null), so a command waiting for input ends at once.
    #[arg(long, value_name = "TEXT")]
    #[serde(default)]
    #[schemars(description = "")]
    pub stdin: Option<String>,
    /// Keep the output exactly as written: ANSI escape sequences (colours)
    /// and carriage-return progress lines. By default they are removed.
    #[arg(long)]
    #[serde(default)]
    #[schemars(description = "Keep ANSI codes.")]
    pub raw: bool,
    /// Bytes of output kept (default 1048576, from 1024 to 8388608); the
    /// start and the end are kept, the middle is cut.
    #[arg(long, value_name = "BYTES")]
    #[serde(default)]
    #[schemars(range(min = 1024, max = 8388608))]
    #[schemars(description = "")]
    pub max_output: Option<u64>,
    /// The shell that runs the command with `-c` (default `bash`; `sh` for a
    /// POSIX shell; `$SHELL` for the user's login shell).
    #[arg(long, value_name = "SHELL")]
    #[serde(default)]
    #[schemars(description = "")]
    pub shell: Option<String>,
    /// Start the command as a background job (servers, watchers) and return
    /// its job id at once; its output goes to a log file. See `job`.
    #[arg(long)]
    #[serde(default)]
    #[schemars(description = "")]
    pub background: bool,
    /// With `background`: let the job outlive the agent session.
    #[arg(long, requires = "background")]
    #[serde(default)]
    #[schemars(description = "Outlives the session.")]
    pub keep: bool,
    /// List the background jobs and their state.
    #[arg(long)]
    #[serde(default)]
    #[schemars(description = "")]
    pub list_jobs: bool,
    /// A background job's id: shows its state and the end of its log (or,
    /// with `stop`, stops it; `all` stops every running job).
    #[arg(long, value_name = "ID")]
    #[serde(default, deserialize_with = "string_or_number")]
    #[schemars(description = "")]
    pub job: Option<String>,
    /// With `job`: stop the job and everything it started.
    #[arg(long, requires = "job")]
    #[serde(default)]
    #[schemars(description = "")]
    pub stop: bool,
    /// With `job`: how many lines of its log to show (default 50, at most 1000).
    #[arg(long, value_name = "N")]
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    #[schemars(description = "")]
    pub lines: Option<u64>,

    // The sandbox (issue 19): flags of the process, never of a call (see
    // sandbox.rs), hidden from the model.
    /// Confine each command (Landlock, seccomp; see ag-sandbox(1)): `auto`
    /// where the kernel can, else warn once and run unconfined; `require`
    /// refuses to run unconfined; `off` (the default) runs unconfined. The
    /// workspace is --root, else the working directory. A blocked
    /// operation is named in the result ("blocked by the sandbox: write to
    /// `/etc/hosts`", `details.sandbox.denied`), also when ag-bash itself
    /// runs confined (by ag-loop or ag-sandbox).
    #[arg(long, value_enum, value_name = "WHEN")]
    #[serde(default)]
    #[schemars(skip)]
    pub sandbox: Option<crate::sandbox::Enforcement>,
    /// With --sandbox: `workspace-write` (default) or `read-only`.
    #[arg(long, value_enum, value_name = "MODE")]
    #[serde(default)]
    #[schemars(skip)]
    pub sandbox_mode: Option<crate::sandbox::Mode>,
    /// With --sandbox: also allow writes beneath DIR (repeatable).
    #[arg(long, value_name = "DIR")]
    #[serde(default)]
    #[schemars(skip)]
    pub write: Vec<PathBuf>,
    /// With --sandbox: also deny reading PATH (repeatable), on top of the
    /// default deny list (ag-sandbox(1)).
    #[arg(long, value_name = "PATH")]
    #[serde(default)]
    #[schemars(skip)]
    pub deny_read: Vec<PathBuf>,
    /// With --sandbox: allow the network.
    #[arg(long)]
    #[serde(default)]
    #[schemars(skip)]
    pub allow_net: bool,
}

/// A job id as a string, also when a model sends it as a number.
fn string_or_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Id {
        Text(String),
        Number(u64),
    }
    Ok(Option::<Id>::deserialize(d)?.map(|id| match id {
        Id::Text(s) => s,
        Id::Number(n) => n.to_string(),
    }))
}

/// The `bash` tool.
pub struct BashTool;

impl Tool for BashTool {
    type Args = BashArgs;
    const NAME: &'static str = "bash";
    const BIN: &'static str = "ag-bash";
    const PROCESS_FLAGS: &'static [&'static str] =
        &["sandbox", "sandbox_mode", "write", "deny_read", "allow_net"];
    const ABOUT: &'static str =
        "Run a shell command with a time limit, an output cap and clean cancellation";
    const LABEL: &'static str = "Execute Shell Command";
    const DESCRIPTION: &'static str = "Run a shell command with `bash -c` in the working directory \
(or `cwd`) and return its output. stdout and stderr are interleaved in the order they were written, \
followed by a last line `exit code: N`; a failing command (including 127, command not found) is a \
normal result, read its exit code. stdin is empty unless `stdin` is given, so nothing waits for input; \
the command has no terminal, so password prompts fail at once. \
The command is stopped after `timeout` seconds (default 180, at most 3600; under 1 in a JSON call is \
taken as a slip and the default is used, with a note): it and every process it \
started get SIGTERM, then SIGKILL 2 s later, and the output so far is returned with exit code 124. \
Output is capped at 1 MiB (`max_output`): the start and the end are kept, the middle is cut, and the \
full output is saved to a file whose path is given. ANSI colours and progress-bar redraws are removed \
unless `raw` is set; invalid UTF-8 is shown as U+FFFD. \
Processes the command leaves running in the background (`cmd &`) are stopped when it exits. \
For servers and watchers use `background: true`: the command starts as a job with its output in a log \
file and the call returns its id at once; `list_jobs: true` lists jobs, `job: ID` shows a job's state \
and the last `lines` of its log, `job: ID, stop: true` stops it with everything it started. Jobs end \
with the agent session unless started with `keep: true`. \
A field the call's mode does not use (`keep` or `list_jobs` beside a command, `timeout` beside a job) is set aside, \
and a note in the result names it; `stop` without `job`, and `command` beside `job`, are refused. \
With AG_PROGRESS=1 in its environment (ag-loop sets it), the command's lines also go to stderr as they \
come, as progress lines {\"type\":\"progress\",\"id\":...,\"output\":...,\"details\":{\"lines\":N}}: \
colours and redraws removed, at most one every 250 ms with the latest 20 lines in 4 KiB, 1 MiB in all.";
    const MODEL_DESCRIPTION: &'static str = "Run a shell command (bash -c, no stdin); the output ends with `exit code: N`. timeout is in seconds, default 180. background starts a job and returns its id; job shows its log, with stop ends it; list_jobs lists jobs.";
    const EXIT_STATUS: &'static str = "Exit status as a plain command: the command's own status \
(so `ag-bash 'exit 3'; echo $?` prints 3), 124 when the time limit passed, 128+N when the command was \
killed by signal N or when ag-bash itself was interrupted by signal N (Ctrl-C: 130), 2 for a usage \
error, 125 when ag-bash could not run the command (bad cwd, shell not found) or a job action failed, \
0 for job actions that succeeded.\n\n\
Should ag-bash be killed outright (SIGKILL, the OOM killer, a CI job's time limit), a watchdog process it \
started with the command (ag-watchdog in ps) ends the command and everything it started: SIGTERM, then \
SIGKILL 2 s later. Background jobs are not tied to it: they end with the agent session, or never with `keep`.";

    fn run(ctx: &Context, args: BashArgs) -> Result<ToolOutput, ToolError> {
        bash(ctx, args)
    }

    fn exit_code(result: &ToolResult) -> u8 {
        if result.is_error {
            return OWN_FAILURE;
        }
        if let Some(sig) = result
            .details
            .get("cancelled_by_signal")
            .and_then(Value::as_i64)
        {
            return u8::try_from(128 + sig).unwrap_or(255);
        }
        match result.details.get("exit_code").and_then(Value::as_i64) {
            Some(code) => u8::try_from(code).unwrap_or(255),
            None => 0,
        }
    }
}

fn bash(ctx: &Context, mut args: BashArgs) -> Result<ToolOutput, ToolError> {
    let mut aside = check_modes(&args)?;
    aside.extend(slip_timeout(&mut args));
    let out = if let Some(id) = &args.job {
        if args.stop {
            jobs::stop(id, args.lines, args.raw)
        } else {
            jobs::show(id, args.lines, args.raw)
        }
    } else if args.command.is_none() {
        jobs::list()
    } else {
        run_command(ctx, &args)
    };
    out.map(|o| o.with_notes(aside))
}

fn run_command(ctx: &Context, args: &BashArgs) -> Result<ToolOutput, ToolError> {
    let command = args.command.clone().unwrap_or_default();
    if command.trim().is_empty() {
        return Err(ToolError::new(
            "bash.empty_command",
            "`command` is empty; give the shell command to run",
        ));
    }
    let cwd = resolve_cwd(ctx, args.cwd.as_deref())?;
    let shell = shell_of(args.shell.as_deref())?;
    let confined = sandbox::setup(ctx, args)?;
    if args.background {
        return jobs::start(&command, &cwd, &shell, args.keep, confined.job_policy());
    }
    run_foreground(ctx, args, &command, &cwd, &shell, confined)
}

/// What a call does: the mode its fields choose.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Run,
    Background,
    ListJobs,
    Job,
}

/// The fields of a call that its mode does not use, each with its value as
/// given. Every optional field has its empty value taken as absent already
/// (lib/tool_protocol/lenient.rs), so what is here was set.
fn foreign_fields(args: &BashArgs, mode: Mode) -> Vec<String> {
    let mut out = Vec::new();
    let mut push = |used: &[Mode], given: bool, shown: String| {
        if given && !used.contains(&mode) {
            out.push(shown);
        }
    };
    use Mode::{Background, Job, ListJobs, Run};
    push(
        &[Run],
        args.timeout.is_some(),
        field("timeout", &args.timeout),
    );
    push(
        &[Run, Background],
        args.cwd.is_some(),
        field("cwd", &args.cwd),
    );
    push(&[Run], args.stdin.is_some(), "`stdin`".to_string());
    push(&[Run, Job], args.raw, "`raw: true`".to_string());
    push(
        &[Run],
        args.max_output.is_some(),
        field("max_output", &args.max_output),
    );
    push(
        &[Run, Background],
        args.shell.is_some(),
        field("shell", &args.shell),
    );
    push(
        &[Background],
        args.background,
        "`background: true`".to_string(),
    );
    push(&[Background], args.keep, "`keep: true`".to_string());
    push(&[ListJobs], args.list_jobs, "`list_jobs: true`".to_string());
    push(&[Job], args.lines.is_some(), field("lines", &args.lines));
    out
}

/// A field and its value, for a note: `` `timeout: 180` ``.
fn field<T: serde::Serialize>(name: &str, value: &Option<T>) -> String {
    match value {
        Some(v) => format!("`{name}: {}`", json!(v)),
        None => format!("`{name}`"),
    }
}

/// Chooses what a call does and names the fields it sets aside. A field
/// from another mode is set aside when ignoring it cannot do what the
/// model did not mean: small models fill every field they are shown, and
/// refusing `{"command": ..., "keep": true}` only made them repeat it.
/// Refused are a call with two targets (`command` and `job`), `stop`
/// without a job (it would stop nothing the model named, and running the
/// command instead may be the opposite of what it wanted), and a call that
/// asks for nothing.
pub(crate) fn check_modes(args: &BashArgs) -> Result<Vec<String>, ToolError> {
    let usage = |msg: String| Err(ToolError::new("bash.usage", msg));
    let quoted = |v: &str| Value::from(v).to_string();
    // The calls that would work, as the caller makes them: the offered
    // tool a model sees (`job_output {"job":"3"}`), or the binary's shape.
    let call = |name: &str, arguments: Value| call_text(name, arguments);
    if let (Some(c), Some(j)) = (&args.command, &args.job) {
        let ways: Vec<String> = [
            call("bash", json!({ "command": one_line(c) }))
                .map(|t| format!("to run the command {t}")),
            call("job_output", json!({ "job": j })).map(|t| format!("to see the job {t}")),
        ]
        .into_iter()
        .flatten()
        .collect();
        return usage(format!(
            "this call gave `command` {} and `job` {}, but a call does one of them. Call again with one: {}",
            quoted(&one_line(c)),
            quoted(j),
            ways.join("; "),
        ));
    }
    if args.stop && args.job.is_none() {
        // Small models set `stop` by default beside a command; show the
        // call that runs it, which is what they almost always meant.
        let run = args
            .command
            .as_ref()
            .and_then(|c| call("bash", json!({ "command": one_line(c) })))
            .map(|t| format!(" To run the command, leave `stop` out: {t}"))
            .unwrap_or_default();
        let list = call("job_list", json!({}))
            .map(|t| format!(" ({t} shows them)"))
            .unwrap_or_default();
        return usage(format!(
            "`stop: true` was given without `job`: it stops a background job, given by its id{list}.{run}"
        ));
    }
    let mode = if args.job.is_some() {
        Mode::Job
    } else if args.command.is_some() {
        if args.background {
            Mode::Background
        } else {
            Mode::Run
        }
    } else if args.list_jobs {
        Mode::ListJobs
    } else {
        let list = call("job_list", json!({}))
            .map(|t| format!("; {t} lists the background jobs"))
            .unwrap_or_default();
        return usage(format!(
            "nothing to do: give `command`, the shell command to run{list}"
        ));
    };
    let aside = foreign_fields(args, mode);
    if aside.is_empty() {
        return Ok(Vec::new());
    }
    let what = match mode {
        Mode::Run => "running a command",
        Mode::Background => "starting a background job",
        Mode::ListJobs => "listing jobs",
        Mode::Job => {
            if args.stop {
                "stopping a job"
            } else {
                "showing a job"
            }
        }
    };
    Ok(vec![format!(
        "Set aside {}: {} not used when {what}.",
        aside.join(", "),
        if aside.len() == 1 {
            "it is"
        } else {
            "they are"
        },
    )])
}

/// The first line of a command, shortened, for a message.
fn one_line(command: &str) -> String {
    let first = command.lines().next().unwrap_or("");
    if first.chars().count() > 60 || command.contains('\n') {
        let head: String = first.chars().take(57).collect();
        format!("{head}...")
    } else {
        first.to_string()
    }
}

/// The shell program: `bash` by default, `$SHELL` read from the environment.
pub(crate) fn shell_of(given: Option<&str>) -> Result<String, ToolError> {
    match given {
        None | Some("") => Ok("bash".to_string()),
        Some("$SHELL") => match std::env::var("SHELL") {
            Ok(s) if !s.is_empty() => Ok(s),
            _ => Err(ToolError::new(
                "bash.shell_not_found",
                "`$SHELL` is not set here; leave `shell` out to use bash",
            )),
        },
        Some(other) => Ok(other.to_string()),
    }
}

/// The directory to run in, checked.
pub(crate) fn resolve_cwd(ctx: &Context, cwd: Option<&str>) -> Result<PathBuf, ToolError> {
    let Some(given) = cwd else {
        return Ok(ctx.cwd.clone());
    };
    let path = ctx.resolve(given)?;
    match std::fs::metadata(&path) {
        Ok(m) if m.is_dir() => Ok(path),
        Ok(_) => Err(ToolError::new(
            "bash.bad_cwd",
            format!("`cwd` `{given}` is a file, not a directory; give the directory to run in"),
        )),
        Err(e) => Err(ToolError::new(
            "bash.bad_cwd",
            format!(
                "`cwd` `{given}` cannot be used: {e}. Give an existing directory, or leave `cwd` out to run in `{}`",
                ctx.cwd.display()
            ),
        )),
    }
}

/// A `timeout` under a second in a JSON call, which no model means: a
/// small model's copy of a schema's least value, or milliseconds meant as
/// seconds. It is taken
/// as absent, with a note, because honouring it kills the command before it
/// starts and the model then claims what it never saw run.
fn slip_timeout(args: &mut BashArgs) -> Option<String> {
    let secs = args
        .timeout
        .filter(|s| *s > 0.0 && *s < MIN_SENSIBLE_TIMEOUT_SECS)?;
    if crate::tool_protocol::binary::called_with_flags() {
        return None; // a person at a shell means it
    }
    if args.command.is_none() || args.background || args.job.is_some() {
        return None; // set aside as a field the mode does not use
    }
    args.timeout = None;
    Some(format!(
        "`timeout: {}` is under a second, too short for a command to run: it ran with the default, \
{DEFAULT_TIMEOUT_SECS} s (timeout is in seconds).",
        json!(secs)
    ))
}

pub(crate) fn timeout_of(args: &BashArgs) -> Result<Duration, ToolError> {
    let secs = args.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS);
    if !(secs > 0.0 && secs <= MAX_TIMEOUT_SECS) {
        return Err(ToolError::new(
            "bash.bad_timeout",
            format!(
                "`timeout` must be more than 0 and at most {MAX_TIMEOUT_SECS} seconds (got {secs}){}",
                longer(args)
            ),
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// For a timeout that is too long: the call that runs the command as a
/// background job instead, when the caller has that tool.
fn longer(args: &BashArgs) -> String {
    let Some(command) = &args.command else {
        return String::new();
    };
    let start = call_text("bash_background", json!({ "command": one_line(command) }));
    match start {
        Some(start) => format!("; to let it run longer, start it as a background job: {start}"),
        None => String::new(),
    }
}

pub(crate) fn max_output_of(args: &BashArgs) -> Result<usize, ToolError> {
    let n = args.max_output.unwrap_or(DEFAULT_MAX_OUTPUT);
    if !(MIN_MAX_OUTPUT..=MAX_MAX_OUTPUT).contains(&n) {
        return Err(ToolError::new(
            "bash.bad_max_output",
            format!(
                "`max_output` must be from {MIN_MAX_OUTPUT} to {MAX_MAX_OUTPUT} bytes (got {n})"
            ),
        ));
    }
    Ok(usize::try_from(n.min(budget_max_output())).unwrap_or(usize::MAX))
}

fn run_foreground(
    ctx: &Context,
    args: &BashArgs,
    command: &str,
    cwd: &std::path::Path,
    shell: &str,
    confined: sandbox::Confined,
) -> Result<ToolOutput, ToolError> {
    let timeout = timeout_of(args)?;
    let limit = CaptureLimit::new(max_output_of(args)?).spill_to(spill_dir());
    let limit = CaptureLimit {
        spill_max: SPILL_MAX,
        ..limit
    };
    let io_error = |what: &str, e: std::io::Error| {
        ToolError::new("bash.io", format!("cannot {what}: {e}; try the call again"))
    };
    // Background children the command leaves are adopted here, so that they
    // can be stopped and reaped even where init does not reap.
    let _ = proc::adopt_orphans();
    let cancel = Cancel::new().map_err(|e| io_error("set up cancellation", e))?;
    let _guard = proc::TerminationGuard::install(&cancel)
        .map_err(|e| io_error("install the signal handlers", e))?;
    let mut cmd = proc::Command::new(shell)
        .arg("-c")
        .arg(command)
        .cwd(cwd)
        .env_remove(supervisor::SUPERVISE_ENV)
        .new_session()
        .output(Output::Merged(limit))
        .timeout(timeout)
        .grace(GRACE)
        .cancel_grace(CANCEL_GRACE)
        .cancel(&cancel);
    if let Some(input) = &args.stdin {
        cmd = cmd.stdin(Input::Bytes(input.clone().into_bytes()));
    }
    cmd = confined.apply(cmd);
    // The caller may follow the output as it comes (ag-loop does).
    let reporter = progress::Reporter::start();
    if let Some(r) = &reporter {
        cmd = cmd.on_output(r.tap());
    }
    let outcome = cmd.run();
    // No progress line after the result: the thread is done first.
    if let Some(r) = reporter {
        r.finish();
    }
    let outcome = outcome.map_err(|e| match e {
        proc::Error::Spawn { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            ToolError::new(
                "bash.shell_not_found",
                format!(
                    "the shell `{shell}` was not found; leave `shell` out to use bash, or give `sh`"
                ),
            )
        }
        other => ToolError::new(other.code(), format!("{other}; try the call again")),
    })?;
    let out = report(ctx, command, cwd, timeout, &outcome, args.raw, confined);
    let hints = match outcome.stopped {
        None => vec![
            script_hint::note(command, cwd, outcome.code()),
            line_break_hint::note(command, outcome.code()),
        ],
        Some(_) => Vec::new(),
    };
    Ok(out.with_notes(hints.into_iter().flatten()))
}

/// The most output kept under a caller's output budget (ag-loop's
/// `AG_OUTPUT_BUDGET`): what fits in it with the notes, so that the caller
/// need not cut a second hole, and this cut names the file with all of it.
/// Bytes are counted, which never undercounts characters. Without a budget
/// there is no bound beyond `max_output`'s own.
fn budget_max_output() -> u64 {
    crate::tools::budget::from_env()
        .map(|b| {
            u64::try_from(crate::tools::budget::for_body(b))
                .unwrap_or(u64::MAX)
                .max(MIN_MAX_OUTPUT)
        })
        .unwrap_or(u64::MAX)
}

/// Where the full output of a truncated command is saved.
fn spill_dir() -> PathBuf {
    match std::env::var_os("AG_SESSION_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d).join("outputs"),
        _ => std::env::temp_dir(),
    }
}

fn report(
    ctx: &Context,
    command: &str,
    cwd: &std::path::Path,
    timeout: Duration,
    o: &proc::Outcome,
    raw: bool,
    confined: sandbox::Confined,
) -> ToolOutput {
    let r = render::render(&o.stdout, raw);
    let mut text = String::with_capacity(r.head.len() + 256);
    text.push_str(&r.head);
    if let Some(tail) = &r.tail {
        end_line(&mut text);
        let saved = match (&o.stdout.spill, o.stdout.spill_complete) {
            (Some(p), true) => format!("; the full output is in {}", p.display()),
            (Some(p), false) => format!(
                "; the first {} MiB of the output are in {}",
                SPILL_MAX / (1024 * 1024),
                p.display()
            ),
            (None, _) => String::new(),
        };
        text.push_str(&format!(
            "[... {} lines ({}) cut from the middle of the output{saved} ...]\n",
            r.cut_lines,
            human_bytes(r.cut_bytes)
        ));
        text.push_str(tail);
    }
    if text.is_empty() {
        text.push_str("(no output)");
    }
    end_line(&mut text);
    text.push('\n');
    let sandboxed = confined.finish(cwd, &text, o.pid);
    if let Some((said, _)) = &sandboxed {
        text.push_str(said);
    }
    if r.lossy {
        text.push_str("note: the output is not valid UTF-8; invalid bytes are shown as U+FFFD.\n");
    }
    if o.leftovers {
        text.push_str(
            "note: the command left processes running in the background; they were stopped when it \
exited. To keep a server or watcher running, start it with background=true.\n",
        );
    }
    let mut cancelled_by = None;
    match o.stopped {
        Some(Stop::Timeout) => text.push_str(&format!(
            "timed out after {}: the command and every process it started were stopped. Run it \
again with a larger `timeout` (at most {MAX_TIMEOUT_SECS} s), or with background=true if it is \
meant to keep running.\n",
            human_secs(timeout)
        )),
        Some(Stop::Cancelled(reason)) => {
            let why = match reason {
                CancelReason::Signal(n) => {
                    cancelled_by = Some(n);
                    format!("ag-bash received {}", proc::signal_name(n))
                }
                CancelReason::Requested => "the call was cancelled".to_string(),
            };
            text.push_str(&format!(
                "cancelled ({why}): the command and every process it started were stopped.\n"
            ));
        }
        None => {}
    }
    let code = o.code();
    text.push_str(&format!("exit code: {code}"));
    if let Some(sig) = o.signal() {
        text.push_str(&format!(" (killed by {})", proc::signal_name(sig)));
    }
    text.push('\n');

    let mut details = json!({
        "command": command,
        "exit_code": code,
        "duration_ms": u64::try_from(o.duration.as_millis()).unwrap_or(u64::MAX),
        "truncated": r.tail.is_some(),
        "timed_out": o.stopped == Some(Stop::Timeout),
        "cwd": ctx.show(cwd),
        "output_bytes": o.stdout.total_bytes,
        "output_lines": o.stdout.total_lines,
    });
    if let Some(sig) = o.signal() {
        details["signal"] = json!(proc::signal_name(sig));
    }
    if let Some(Stop::Cancelled(_)) = o.stopped {
        details["cancelled"] = json!(true);
    }
    if let Some(n) = cancelled_by {
        details["cancelled_by_signal"] = json!(n);
    }
    if r.tail.is_some() {
        details["cut_bytes"] = json!(r.cut_bytes);
        details["cut_lines"] = json!(r.cut_lines);
        if let Some(p) = &o.stdout.spill {
            details["full_output"] = json!(p.display().to_string());
            details["full_output_complete"] = json!(o.stdout.spill_complete);
        }
    }
    if o.leftovers {
        details["leftovers_stopped"] = json!(true);
    }
    if r.lossy {
        details["lossy"] = json!(true);
    }
    if let Some((_, value)) = sandboxed {
        details["sandbox"] = value;
    }
    ToolOutput::new(text, details)
}

pub(crate) fn end_line(s: &mut String) {
    if !s.is_empty() && !s.ends_with('\n') {
        s.push('\n');
    }
}

/// `1.5 MiB`, `300 KiB`, `12 bytes`.
pub(crate) fn human_bytes(n: u64) -> String {
    const KIB: f64 = 1024.0;
    let f = n as f64;
    if f >= KIB * KIB * KIB {
        format!("{:.1} GiB", f / (KIB * KIB * KIB))
    } else if f >= KIB * KIB {
        format!("{:.1} MiB", f / (KIB * KIB))
    } else if f >= KIB {
        format!("{:.0} KiB", f / KIB)
    } else {
        format!("{n} bytes")
    }
}

/// `180 s`, `0.5 s`.
pub(crate) fn human_secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: BashArgs,
    }

    #[test]
    fn args_are_a_valid_clap_definition() {
        Cli::command().debug_assert();
    }

    #[test]
    fn exit_code_mirrors_the_command() {
        let result = |details: Value, is_error: bool| ToolResult {
            id: None,
            output: String::new(),
            details,
            is_error,
            error_code: None,
            images: Vec::new(),
        };
        assert_eq!(
            BashTool::exit_code(&result(json!({"exit_code": 3}), false)),
            3
        );
        assert_eq!(
            BashTool::exit_code(&result(
                json!({"exit_code": 143, "cancelled_by_signal": 2}),
                false
            )),
            130
        );
        assert_eq!(BashTool::exit_code(&result(json!({}), false)), 0);
        assert_eq!(BashTool::exit_code(&result(Value::Null, true)), OWN_FAILURE);
    }

    #[test]
    fn human_units() {
        assert_eq!(human_bytes(12), "12 bytes");
        assert_eq!(human_bytes(3 * 1024 * 1024 / 2), "1.5 MiB");
        assert_eq!(human_secs(Duration::from_secs(180)), "180 s");
        assert_eq!(human_secs(Duration::from_millis(500)), "0.5 s");
    }
}
