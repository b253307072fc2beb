//! Running a tool executable from the outside, as ag-loop and ag-mcp do:
//! finding `ag-<name>`, learning a tool through `--schema`, and running one
//! call through [`crate::proc`] (the call line on stdin, stdout and stderr
//! read with caps, the group ended on cancel, whatever the tool left behind
//! ended once it has exited), then taking the first non-blank stdout line
//! as its result. Every failure is a result with a `tool.*` code and a
//! message for the model.

use crate::sandbox::ConfineCommand;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::proc::{self, AnswerError, CaptureLimit, Input, Outcome, Output, Status, Stop};
use crate::protocol::{PROGRESS_ENV, ToolDefinition, ToolProgress, ToolResult};

use super::progress;

/// Where a call's progress lines go (see [`progress`]).
pub type ProgressSink = dyn Fn(ToolProgress) + Send + Sync;

/// Bytes of a tool's stdout read before the rest is dropped: the result
/// line is one JSON object, and a bigger one is cut off (and then fails to
/// parse) rather than held in memory.
pub const MAX_STDOUT_BYTES: usize = 16 * 1024 * 1024;
/// Bytes of a tool's stderr kept for the message of a call that failed.
pub const MAX_STDERR_BYTES: usize = 64 * 1024;
/// How long a tool may take to answer `--schema`.
pub const SCHEMA_TIMEOUT: Duration = Duration::from_secs(10);

/// The tool could not be started.
pub const SPAWN: &str = "tool.spawn";
/// The call could not be written or its result read.
pub const IO: &str = "tool.io";
/// The tool printed something that is not a tool result.
pub const OUTPUT: &str = "tool.output";
/// The tool ended without printing a result.
pub const CRASHED: &str = "tool.crashed";
/// The call was interrupted or cancelled before it finished.
pub const ABORTED: &str = "call.aborted";

/// The wording of [`aborted_result`] when nobody in particular stopped the
/// call.
pub const CANCELLED: &str = "the call was cancelled before it finished";

/// The wording of [`aborted_result`] when a person interrupted the call
/// (ag-loop's interrupt), for the model.
pub const INTERRUPTED: &str = "the user interrupted this tool call before it finished";

/// Finds `ag-<name>` beside the running executable, else on `PATH`.
pub fn find_tool_binary(name: &str) -> Option<PathBuf> {
    // A name with a slash would look outside those directories.
    if name.is_empty() || name.contains('/') {
        return None;
    }
    let bin = format!("ag-{name}");
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        let p = dir.join(&bin);
        if p.is_file() {
            return Some(p);
        }
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(&bin))
        .find(|p| p.is_file())
}

/// A tool's `--schema` gave no usable definition.
#[derive(Debug, Clone, thiserror::Error)]
#[error("tool `{label}`: {message}")]
pub struct SchemaError {
    /// How the tool was named on the command line.
    pub label: String,
    /// What went wrong.
    pub message: String,
}

/// How to start a tool: a program, the arguments before the call's own,
/// and how the user named it (for messages).
#[derive(Debug, Clone)]
pub struct ToolProgram {
    program: PathBuf,
    args: Vec<String>,
    label: String,
    /// The ag tool's name (`read` for `ag-read`) when the binary was found
    /// beside the running executable: the same build, whose definition the
    /// caller may know without asking (see [`load_schemas`]).
    beside: Option<String>,
}

/// Where and how a call runs.
#[derive(Clone, Copy)]
pub struct CallOptions<'a> {
    /// The working directory; `None` keeps the caller's.
    pub cwd: Option<&'a Path>,
    /// Extra environment variables.
    pub env: &'a [(String, String)],
    /// Why a cancelled call stopped, for the model ([`CANCELLED`], or the
    /// caller's own words such as "the user interrupted ...").
    pub aborted: &'a str,
    /// The sandbox that confines the call (ag-loop's `--sandbox`).
    pub sandbox: Option<&'a crate::sandbox::Prepared>,
    // Progress (issue 31).
    /// Asks the tool for progress lines ([`PROGRESS_ENV`]) and hands each
    /// to this as it comes, before the call's result.
    pub progress: Option<&'a ProgressSink>,
}

impl Default for CallOptions<'_> {
    fn default() -> Self {
        CallOptions {
            cwd: None,
            env: &[],
            aborted: CANCELLED,
            sandbox: None,
            progress: None,
        }
    }
}

impl ToolProgram {
    /// `program` run with `args` before the call's own, named `label`.
    pub fn new(program: impl Into<PathBuf>, args: Vec<String>, label: impl Into<String>) -> Self {
        ToolProgram {
            program: program.into(),
            args,
            label: label.into(),
            beside: None,
        }
    }

    /// The ag tool `name` (binary `ag-<name>`), if it is installed.
    pub fn ag(name: &str) -> Option<Self> {
        let path = find_tool_binary(name)?;
        let here = std::env::current_exe().ok();
        let beside = (path.parent() == here.as_deref().and_then(Path::parent)
            && is_executable(&path))
        .then(|| name.to_string());
        Some(ToolProgram {
            beside,
            ..ToolProgram::new(path, Vec::new(), format!("ag-{name}"))
        })
    }

    /// A command line as the shell reads it (`my-tool --flag "a b"`), run
    /// as `sh -c 'CMD "$@"' sh ARGS...` so that the arguments ag adds
    /// (`--schema`) come after the user's. `None` for a blank line.
    pub fn shell(command: &str) -> Option<Self> {
        if command.trim().is_empty() {
            return None;
        }
        Some(ToolProgram::new(
            "sh",
            vec!["-c".into(), format!("{command} \"$@\""), "sh".into()],
            command,
        ))
    }

    /// Adds arguments after the ones it has (ag-mcp's `--root DIR`).
    pub fn with_args(mut self, args: impl IntoIterator<Item = String>) -> Self {
        self.args.extend(args);
        self
    }

    /// How the user named it: `ag-read`, or the `--tool` command line.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The command that runs the tool with these extra arguments.
    fn command(&self, cwd: Option<&Path>) -> proc::Command {
        let mut cmd = proc::Command::new(&self.program).args(&self.args);
        if let Some(dir) = cwd {
            cmd = cmd.cwd(dir);
        }
        cmd.output(Output::Separate {
            stdout: CaptureLimit::head_only(MAX_STDOUT_BYTES),
            stderr: CaptureLimit::new(MAX_STDERR_BYTES),
        })
    }

    /// Asks the tool for its definition (`PROGRAM ARGS --schema`), which must
    /// have an object schema for its parameters.
    pub async fn schema(&self, cwd: Option<&Path>) -> Result<ToolDefinition, SchemaError> {
        let fail = |message: String| SchemaError {
            label: self.label.clone(),
            message,
        };
        let out = self
            .command(cwd)
            .arg("--schema")
            .timeout(SCHEMA_TIMEOUT)
            .collect(&CancellationToken::new())
            .await
            .map_err(|e| fail(format!("cannot run it: {e}")))?;
        if out.stopped.is_some() {
            return Err(fail(format!(
                "no answer to --schema within {SCHEMA_TIMEOUT:?}"
            )));
        }
        if out.status != Status::Exited(0) {
            return Err(fail(format!(
                "--schema failed ({}): {}",
                out.status,
                out.stderr.lossy().trim()
            )));
        }
        let def: ToolDefinition = serde_json::from_slice(&out.stdout.head)
            .map_err(|e| fail(format!("--schema did not print a tool definition: {e}")))?;
        if def.parameters.get("type").and_then(Value::as_str) != Some("object") {
            return Err(fail(
                "its parameters schema must be an object schema".into(),
            ));
        }
        Ok(def)
    }

    /// Runs one call of the tool `name` as a subprocess in its own process
    /// group. Cancelling `cancel` ends the group (SIGTERM, then SIGKILL
    /// after a grace period) and gives an aborted result; once the tool has
    /// exited, whatever it left running in its group is ended too, so a
    /// background process holding its stdout open cannot hold up the call.
    pub async fn call(
        &self,
        name: &str,
        id: &str,
        arguments: &(impl serde::Serialize + ?Sized),
        options: &CallOptions<'_>,
        cancel: &CancellationToken,
    ) -> ToolResult {
        let line = json!({"id": id, "arguments": arguments}).to_string() + "\n";
        let mut cmd = self
            .command(options.cwd)
            .stdin(Input::Bytes(line.into_bytes()));
        for (k, v) in options.env {
            cmd = cmd.env(k, v);
        }
        if let Some(sandbox) = options.sandbox {
            cmd = cmd.sandbox(sandbox);
        }
        let outcome = match options.progress {
            None => cmd.collect(cancel).await,
            Some(sink) => collect_with_progress(cmd.env(PROGRESS_ENV, "1"), sink, cancel).await,
        };
        match outcome {
            Err(e @ proc::Error::Spawn { .. }) => error_result(
                id,
                SPAWN,
                format!("cannot start tool `{name}` (`{}`): {e}", self.label),
            ),
            Err(e) => error_result(id, IO, format!("cannot read the result of `{name}`: {e}")),
            Ok(out) if matches!(out.stopped, Some(Stop::Cancelled(_))) => {
                aborted_result(id, options.aborted)
            }
            Ok(out) => parse_result(id, name, &out),
        }
    }
}

/// Runs the call, handing the progress lines of its stderr to `sink` as
/// they come; every line read before the tool ended is handed over before
/// this returns, so no progress follows the result.
async fn collect_with_progress(
    cmd: proc::Command,
    sink: &ProgressSink,
    cancel: &CancellationToken,
) -> Result<Outcome, proc::Error> {
    let (cmd, mut lines) = cmd.stderr_lines(progress::MAX_LINE_BYTES, progress::MAX_TOTAL_BYTES);
    let take = |line: proc::Line| {
        if let Some(p) = line.ok().as_deref().and_then(progress::parse) {
            sink(p);
        }
    };
    let run = cmd.collect(cancel);
    tokio::pin!(run);
    let out = loop {
        tokio::select! {
            biased;
            Some(line) = lines.next() => take(line),
            out = &mut run => break out,
        }
    };
    while let Some(line) = lines.next().await {
        take(line);
    }
    out
}

/// The tool's answer (see [`proc::answer`]), a result whose id is replaced
/// by the call's.
fn parse_result(id: &str, name: &str, out: &Outcome) -> ToolResult {
    match proc::answer::<ToolResult>(&out.stdout) {
        Ok(mut r) => {
            r.id = Some(id.to_string());
            r
        }
        Err(AnswerError::Invalid { error, .. }) => error_result(
            id,
            OUTPUT,
            format!("tool `{name}` answered with something that is not a tool result ({error})"),
        ),
        Err(AnswerError::Missing) => error_result(
            id,
            CRASHED,
            format!(
                "tool `{name}` ended ({}) without a result{}",
                out.status,
                match progress::without_progress(&out.stderr.lossy()).trim() {
                    "" => String::new(),
                    t => format!(": {t}"),
                }
            ),
        ),
    }
}

/// Whether a file has an execute bit: a tool binary that has none cannot
/// run, and asking it for `--schema` says so.
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Each tool's definition, in the order given. An ag tool found beside the
/// running executable is the same build as the caller, so `known` (ag's
/// own table, `tools::mains::definition`) gives its definition
/// without starting it: a start-up then runs no process for ag's own
/// tools, and a machine too busy to start a dozen binaries within
/// [`SCHEMA_TIMEOUT`] cannot fail it. Every other tool is asked `--schema`,
/// all at once (a slow tool does not hold up the others).
pub async fn load_schemas(
    programs: Vec<ToolProgram>,
    cwd: Option<&Path>,
    known: fn(&str) -> Option<ToolDefinition>,
) -> Vec<(ToolProgram, Result<ToolDefinition, SchemaError>)> {
    let tasks: Vec<_> = programs
        .into_iter()
        .map(|program| {
            if let Some(def) = program.beside.as_deref().and_then(known) {
                return (program, Ok(Ok(def)));
            }
            let cwd = cwd.map(Path::to_path_buf);
            let copy = program.clone();
            let task = tokio::spawn(async move { copy.schema(cwd.as_deref()).await });
            (program, Err(task))
        })
        .collect();
    let mut loaded = Vec::with_capacity(tasks.len());
    for (program, task) in tasks {
        let def = match task {
            Ok(def) => def,
            // A task only fails by panicking, which `schema` does not do.
            Err(task) => task.await.unwrap_or_else(|e| {
                Err(SchemaError {
                    label: program.label.clone(),
                    message: format!("loading it failed: {e}"),
                })
            }),
        };
        loaded.push((program, def));
    }
    loaded
}

/// An error result with a stable code and a message for the model.
pub fn error_result(id: &str, code: &str, message: String) -> ToolResult {
    ToolResult {
        id: Some(id.to_string()),
        output: message,
        details: Value::Null,
        is_error: true,
        error_code: Some(code.to_string()),
        images: Vec::new(),
    }
}

/// The result of a call stopped before it finished; `why` says who stopped
/// it ([`CANCELLED`] when nobody in particular).
pub fn aborted_result(id: &str, why: &str) -> ToolResult {
    ToolResult {
        id: Some(id.to_string()),
        output: format!("aborted: {why}"),
        details: json!({"aborted": true}),
        is_error: true,
        error_code: Some(ABORTED.into()),
        images: Vec::new(),
    }
}

/// The result of a call that a person's interrupt stopped.
pub fn interrupted_result(id: &str) -> ToolResult {
    aborted_result(id, INTERRUPTED)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How a tool run ended, with this stdout and stderr.
    fn outcome(stdout: &[u8], stderr: &[u8]) -> Outcome {
        let captured = |b: &[u8]| proc::Captured {
            head: b.to_vec(),
            total_bytes: b.len() as u64,
            ..Default::default()
        };
        Outcome {
            pid: 1,
            status: Status::Exited(0),
            stopped: None,
            duration: Duration::ZERO,
            stdout: captured(stdout),
            stderr: captured(stderr),
            leftovers: false,
        }
    }

    #[test]
    fn a_result_line_is_taken_and_its_id_replaced() {
        let out = b"\n{\"id\":\"x\",\"output\":\"hi\",\"details\":{\"n\":1},\"is_error\":false}\n";
        let r = parse_result("7", "t", &outcome(out, b""));
        assert_eq!(r.id.as_deref(), Some("7"));
        assert_eq!(r.output, "hi");
        assert_eq!(r.details, json!({"n": 1}));
        assert!(!r.is_error);
    }

    #[test]
    fn no_result_is_an_error_naming_the_tool_and_its_stderr() {
        let r = parse_result("1", "boom", &outcome(b"", b"segfault\n"));
        assert!(r.is_error);
        assert_eq!(r.error_code.as_deref(), Some(CRASHED));
        assert!(r.output.contains("`boom`"), "{}", r.output);
        assert!(r.output.contains("segfault"), "{}", r.output);
        let r = parse_result("1", "t", &outcome(b"not json\n", b""));
        assert_eq!(r.error_code.as_deref(), Some(OUTPUT));
    }

    #[test]
    fn a_name_with_a_slash_is_never_looked_up() {
        assert!(find_tool_binary("../bin/sh").is_none());
        assert!(find_tool_binary("").is_none());
    }

    #[test]
    fn aborted_results_keep_their_code_and_details_and_take_the_wording() {
        let r = aborted_result("3", CANCELLED);
        assert_eq!(r.output, format!("aborted: {CANCELLED}"));
        assert_eq!(r.error_code.as_deref(), Some(ABORTED));
        assert_eq!(r.details, json!({"aborted": true}));
        assert!(
            aborted_result("3", "the user said stop")
                .output
                .ends_with("said stop")
        );
    }

    /// A tool written as a shell script: answers `--schema` with `schema`,
    /// and a call by running `body` (after reading the call line).
    fn script(body: &str) -> String {
        format!(
            "for a in \"$@\"; do if [ \"$a\" = --schema ]; then echo '{{\"name\":\"t\",\"label\":\"T\",\"description\":\"d\",\"parameters\":{{\"type\":\"object\"}}}}'; exit 0; fi; done; read line; {body}"
        )
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    fn call(tool: &ToolProgram, options: &CallOptions<'_>) -> ToolResult {
        rt().block_on(tool.call("t", "c1", &json!({}), options, &CancellationToken::new()))
    }

    #[test]
    fn a_shell_command_keeps_its_quoting_and_gets_the_schema_flag_last() {
        let body = r#"printf '{"output":"%s|%s","details":{},"is_error":false}\n' "$1" "$2""#;
        let command = format!(
            "sh -c '{}' sh --flag \"a b\"",
            script(body).replace('\'', r"'\''")
        );
        let tool = ToolProgram::shell(&command).unwrap();
        let def = rt().block_on(tool.schema(None)).unwrap();
        assert_eq!(def.name, "t");
        let r = call(&tool, &CallOptions::default());
        assert_eq!(r.output, "--flag|a b", "{r:?}");
        assert_eq!(r.id.as_deref(), Some("c1"));
        assert!(ToolProgram::shell("  ").is_none());
    }

    #[test]
    fn the_call_runs_in_the_given_directory_with_the_given_environment() {
        let dir = tempfile::tempdir().unwrap();
        let body = r#"printf '{"output":"%s %s","details":{},"is_error":false}\n' "$(pwd -P)" "$AG_TEST_VALUE""#;
        let tool = ToolProgram::new("sh", vec!["-c".into(), script(body)], "t");
        let env = [("AG_TEST_VALUE".to_string(), "seen".to_string())];
        let options = CallOptions {
            cwd: Some(dir.path()),
            env: &env,
            ..CallOptions::default()
        };
        let r = call(&tool, &options);
        let real = dir.path().canonicalize().unwrap();
        assert_eq!(r.output, format!("{} seen", real.display()), "{r:?}");
    }

    #[test]
    fn a_missing_program_and_a_crash_are_coded_errors() {
        let tool = ToolProgram::new("/nonexistent/ag-nothing", Vec::new(), "ag-nothing");
        let r = call(&tool, &CallOptions::default());
        assert_eq!(r.error_code.as_deref(), Some(SPAWN), "{r:?}");
        assert!(r.output.contains("`ag-nothing`"), "{}", r.output);
        let tool = ToolProgram::new(
            "sh",
            vec!["-c".into(), script("echo oops >&2; exit 3")],
            "t",
        );
        let r = call(&tool, &CallOptions::default());
        assert_eq!(r.error_code.as_deref(), Some(CRASHED), "{r:?}");
        assert!(r.output.contains("oops"), "{}", r.output);
        let err = rt().block_on(ToolProgram::new("false", Vec::new(), "f").schema(None));
        assert!(
            err.unwrap_err()
                .to_string()
                .starts_with("tool `f`: --schema failed")
        );
    }

    #[test]
    fn a_background_process_holding_stdout_is_killed_once_the_tool_exits() {
        let marker = 9000 + std::process::id() % 1000;
        let body = format!(
            r#"sleep {marker} & echo '{{"output":"done","details":{{}},"is_error":false}}'"#
        );
        let tool = ToolProgram::new("sh", vec!["-c".into(), script(&body)], "t");
        // Only a guard against hanging for the sleep's duration if the
        // leftover were waited for, not a measure of speed.
        let r = rt()
            .block_on(async {
                let (cancel, options, args) =
                    (CancellationToken::new(), CallOptions::default(), json!({}));
                let call = tool.call("t", "c1", &args, &options, &cancel);
                tokio::time::timeout(Duration::from_secs(120), call).await
            })
            .expect("the call waited for the background process");
        assert_eq!(r.output, "done", "{r:?}");
        // SIGKILL is delivered asynchronously: give it a moment to land.
        let alive = || {
            let out = std::process::Command::new("pgrep")
                .args(["-f", &format!("sleep {marker}")])
                .output()
                .unwrap();
            !out.stdout.is_empty()
        };
        for _ in 0..100 {
            if !alive() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(), "the background sleep survived");
    }

    #[test]
    fn progress_lines_reach_the_sink_before_the_result_and_log_lines_do_not() {
        // Progress only when asked for; a log line between them is no
        // progress, and a crash message leaves the progress lines out.
        let body = r#"[ -n "$AG_PROGRESS" ] && { echo '{"type":"progress","output":"one"}' >&2; echo 'just a log line' >&2; printf '{"type":"progress","output":"two","details":{"n":2}}' >&2; }; echo '{"output":"done","details":{},"is_error":false}'"#;
        let tool = ToolProgram::new("sh", vec!["-c".into(), script(body)], "t");
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let into = seen.clone();
        let sink = move |p: ToolProgress| into.lock().unwrap().push(p);
        let options = CallOptions {
            progress: Some(&sink),
            ..CallOptions::default()
        };
        let r = call(&tool, &options);
        assert_eq!(r.output, "done", "{r:?}");
        let got: Vec<String> = seen
            .lock()
            .unwrap()
            .iter()
            .map(|ToolProgress::Progress { output, .. }| output.clone())
            .collect();
        // The last line had no newline: it still counts.
        assert_eq!(got, ["one", "two"]);
        seen.lock().unwrap().clear();
        let r = call(&tool, &CallOptions::default());
        assert_eq!(r.output, "done");
        assert!(seen.lock().unwrap().is_empty());

        let body =
            r#"echo '{"type":"progress","output":"halfway"}' >&2; echo 'real trouble' >&2; exit 3"#;
        let tool = ToolProgram::new("sh", vec!["-c".into(), script(body)], "t");
        let r = call(&tool, &options);
        assert_eq!(r.error_code.as_deref(), Some(CRASHED), "{r:?}");
        assert!(r.output.contains("real trouble"), "{}", r.output);
        assert!(!r.output.contains("halfway"), "{}", r.output);
    }

    #[test]
    fn a_cancelled_call_is_aborted_in_the_callers_words() {
        let tool = ToolProgram::new("sh", vec!["-c".into(), script("sleep 30")], "t");
        let cancel = CancellationToken::new();
        cancel.cancel();
        let options = CallOptions {
            aborted: "the user interrupted it",
            ..CallOptions::default()
        };
        let r = rt().block_on(tool.call("t", "c9", &json!({}), &options, &cancel));
        assert_eq!(r.output, "aborted: the user interrupted it");
        assert_eq!(r.error_code.as_deref(), Some(ABORTED));
        assert_eq!(r.details, json!({"aborted": true}));
    }
}
