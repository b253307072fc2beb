//! Tools in another workspace (`ag-loop --workspace URI`): the session's
//! connection (one ssh ControlMaster in a private directory, or nothing to
//! hold for `docker`/`podman`/`kubectl exec -i`), the probe at start, the
//! copy of ag's own tool binaries where the workspace lacks them, and one
//! tool call run there through the same JSONL protocol as a local one.
//!
//! Every process here starts through [`crate::proc`], so an interrupt ends
//! the local transport's group; the remote side ends the tool when its
//! stdin closes (see [`script`]). A call that lost its transport is an
//! error result saying so, never retried: it may have had effects.

pub mod install;
pub mod script;
pub mod uri;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::proc::{self, AnswerError, CaptureLimit, Input, Outcome, Output, Status, Stop};
use crate::protocol::ToolResult;
use crate::tool_protocol::exec::{self, MAX_STDERR_BYTES, MAX_STDOUT_BYTES};
pub use uri::{SshSetup, Target, Uri, UriError};

/// The error code of a call whose transport failed.
pub const TRANSPORT: &str = "workspace.transport";

/// The environment variable with extra ssh options (`-i KEY -o ...`).
pub const SSH_OPTIONS_ENV: &str = "AG_SSH_OPTIONS";

/// How long the ssh master may take to connect.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a set-up step in the workspace (probe, reading a file) may take.
const STEP_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the check that the workspace is still there may take, after a
/// call that ended without a result.
const CHECK_TIMEOUT: Duration = Duration::from_secs(15);
/// How long copying one binary may take.
const COPY_TIMEOUT: Duration = Duration::from_secs(600);

/// Tool-environment variables that name local things (a pid, a directory)
/// and mean nothing in the workspace.
const LOCAL_ONLY_ENV: &[&str] = &["AG_SESSION_PID", "AG_SESSION_DIR", "AG_TODO_FILE"];

/// Why the workspace could not be set up: ends ag-loop with status 2.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// The URI is not one of the accepted forms.
    #[error(transparent)]
    Uri(#[from] UriError),
    /// The transport or the workspace refused.
    #[error("workspace on {what}: {message}")]
    Failed {
        /// The workspace, in words (ssh host `h`).
        what: String,
        /// What went wrong, with a hint where there is one.
        message: String,
    },
}

/// A workspace, connected for the session.
pub struct Workspace {
    uri: Uri,
    ssh: SshSetup,
    /// The remote binary of each ag tool, by binary name (`ag-read`).
    bins: BTreeMap<String, String>,
    /// What happened at start, for `notify` events.
    notes: Vec<String>,
    /// AGENTS.md / CLAUDE.md found there: path and text, outermost first.
    project_files: Vec<(PathBuf, String)>,
    /// The real working directory there.
    cwd: PathBuf,
    /// The ssh master connection; dropping it ends it.
    _master: Option<proc::Running>,
    /// Holds the ControlMaster socket; removed on drop.
    _dir: Option<tempfile::TempDir>,
}

impl Workspace {
    /// Connects to the workspace `text` (a URI), checks its directory, and
    /// makes the ag tools `tools` (binary names) available there, copying
    /// this ag-loop's own where they are missing or of another version.
    pub async fn open(text: &str, tools: &[String]) -> Result<Workspace, WorkspaceError> {
        let uri = Uri::parse(text)?;
        let (ssh, dir, master) = match uri.target {
            Target::Ssh { .. } => {
                let dir = tempfile::Builder::new()
                    .prefix("ag-ws-")
                    .tempdir()
                    .map_err(|e| fail(&uri, format!("cannot make a private directory: {e}")))?;
                let ssh = SshSetup::new(
                    std::env::var(SSH_OPTIONS_ENV).ok().as_deref(),
                    &dir.path().join("cm"),
                );
                let master = connect(&uri, &ssh).await?;
                (ssh, Some(dir), Some(master))
            }
            _ => (SshSetup::new(None, Path::new("")), None, None),
        };
        let mut ws = Workspace {
            cwd: uri.path.clone(),
            uri,
            ssh,
            bins: BTreeMap::new(),
            notes: Vec::new(),
            project_files: Vec::new(),
            _master: master,
            _dir: dir,
        };
        install::prepare(&mut ws, tools).await?;
        Ok(ws)
    }

    /// The URI it was opened with.
    pub fn uri(&self) -> &Uri {
        &self.uri
    }

    /// The working directory there, as the model sees it.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// What happened at start (binaries copied), one message each.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The project instruction files there, outermost first.
    pub fn project_files(&self) -> &[(PathBuf, String)] {
        &self.project_files
    }

    /// Runs `script` there with `input` on stdin, within `limit`.
    async fn run(
        &self,
        script: &str,
        input: Input,
        limit: Option<Duration>,
        cancel: &CancellationToken,
    ) -> Result<Outcome, proc::Error> {
        let (program, args) = self.uri.command(script, &self.ssh);
        let mut cmd =
            proc::Command::new(program)
                .args(args)
                .stdin(input)
                .output(Output::Separate {
                    stdout: CaptureLimit::head_only(MAX_STDOUT_BYTES),
                    stderr: CaptureLimit::new(MAX_STDERR_BYTES),
                });
        if let Some(limit) = limit {
            cmd = cmd.timeout(limit);
        }
        cmd.collect(cancel).await
    }

    /// Runs a set-up step: its stdout, or an error naming `what` with the
    /// transport's stderr.
    async fn step(&self, what: &str, script: &str, input: Input) -> Result<String, WorkspaceError> {
        let limit = match input {
            Input::Null => STEP_TIMEOUT,
            _ => COPY_TIMEOUT,
        };
        let out = self
            .run(script, input, Some(limit), &CancellationToken::new())
            .await
            .map_err(|e| fail(&self.uri, format!("cannot {what}: {e}")))?;
        if out.stopped.is_some() {
            return Err(fail(
                &self.uri,
                format!("cannot {what}: no answer within {limit:?}"),
            ));
        }
        if out.status != Status::Exited(0) {
            return Err(fail(
                &self.uri,
                format!(
                    "cannot {what} ({}): {}{}",
                    out.status,
                    out.stderr.lossy().trim(),
                    self.hint(&out)
                ),
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout.head).into_owned())
    }

    /// What to check, for a transport that failed.
    fn hint(&self, out: &Outcome) -> &'static str {
        match (&self.uri.target, out.status) {
            (Target::Ssh { .. }, Status::Exited(255)) => {
                "\nhint: check that `ssh` reaches the host without a password prompt (keys or an agent; options in $AG_SSH_OPTIONS)"
            }
            (_, Status::Exited(script::NO_DIR)) => {
                "\nhint: the URI's path must be an existing directory there"
            }
            _ => "",
        }
    }

    /// Runs one call of the ag tool `binary` (`ag-read`) there: the same
    /// call line a local tool reads, its result line back. `env` is the
    /// tool environment (local-only variables are dropped); `aborted` says
    /// why an interrupted call stopped.
    pub async fn call(
        &self,
        call: Call<'_>,
        arguments: &serde_json::Value,
        cancel: &CancellationToken,
    ) -> ToolResult {
        let Call {
            name,
            binary,
            id,
            env,
            aborted,
        } = call;
        let Some(remote) = self.bins.get(binary) else {
            return exec::error_result(
                id,
                exec::SPAWN,
                format!(
                    "tool `{name}` is not available in the workspace on {}",
                    self.uri.describe()
                ),
            );
        };
        let env: Vec<(String, String)> = env
            .iter()
            .filter(|(k, _)| !LOCAL_ONLY_ENV.contains(&k.as_str()))
            .cloned()
            .collect();
        let script = script::call(&self.cwd.display().to_string(), remote, &env);
        let line = json!({"id": id, "arguments": arguments}).to_string() + "\n";
        let input = Input::BytesKeepOpen(line.into_bytes());
        match self.run(&script, input, None, cancel).await {
            Err(e @ proc::Error::Spawn { .. }) => exec::error_result(
                id,
                TRANSPORT,
                format!(
                    "cannot start the transport to {} for `{name}`: {e}",
                    self.uri.describe()
                ),
            ),
            Err(e) => exec::error_result(
                id,
                TRANSPORT,
                format!(
                    "cannot read the result of `{name}` from {}: {e}",
                    self.uri.describe()
                ),
            ),
            Ok(out) if matches!(out.stopped, Some(Stop::Cancelled(_))) => {
                exec::aborted_result(id, aborted)
            }
            Ok(out) => {
                let answer = proc::answer::<ToolResult>(&out.stdout);
                // `docker exec` into a container killed under it ends with
                // 137 and says nothing, as it does when the tool itself was
                // killed: only asking the engine again tells them apart.
                let gone = match (&answer, &self.uri.target) {
                    (Err(AnswerError::Missing), Target::Ssh { .. }) => None,
                    (Err(AnswerError::Missing), _)
                        if out.status != Status::Exited(script::NO_DIR) =>
                    {
                        self.unreachable(cancel).await
                    }
                    _ => None,
                };
                self.result(id, name, &out, answer, gone)
            }
        }
    }

    /// Why the workspace cannot be reached now (the transport's own words),
    /// or `None` when a trivial command still runs there.
    async fn unreachable(&self, cancel: &CancellationToken) -> Option<String> {
        let out = self
            .run("exit 0\n", Input::Null, Some(CHECK_TIMEOUT), cancel)
            .await;
        match out {
            Err(e) => Some(e.to_string()),
            Ok(out) if matches!(out.stopped, Some(Stop::Cancelled(_))) => None,
            Ok(out) if out.stopped.is_some() => Some(format!("no answer within {CHECK_TIMEOUT:?}")),
            Ok(out) if out.status == Status::Exited(0) => None,
            Ok(out) => {
                let stderr = out.stderr.lossy();
                let stderr = stderr.trim();
                Some(if stderr.is_empty() {
                    format!(
                        "`{}` ended ({})",
                        self.uri.command("", &self.ssh).0,
                        out.status
                    )
                } else {
                    stderr.to_string()
                })
            }
        }
    }

    /// The tool's result, or an error that names the transport when there
    /// is none; `gone` says why the workspace cannot be reached any more.
    fn result(
        &self,
        id: &str,
        name: &str,
        out: &Outcome,
        answer: Result<ToolResult, AnswerError>,
        gone: Option<String>,
    ) -> ToolResult {
        let stderr = out.stderr.lossy();
        let stderr = stderr.trim();
        let said = if stderr.is_empty() {
            String::new()
        } else {
            format!(": {stderr}")
        };
        match answer {
            Ok(mut r) => {
                r.id = Some(id.to_string());
                r
            }
            Err(AnswerError::Invalid { error, .. }) => exec::error_result(
                id,
                exec::OUTPUT,
                format!(
                    "tool `{name}` in the workspace on {} answered with something that is not a tool result ({error})",
                    self.uri.describe()
                ),
            ),
            Err(AnswerError::Missing) => {
                let lost = matches!(self.uri.target, Target::Ssh { .. })
                    && out.status == Status::Exited(255);
                let message = if lost {
                    format!(
                        "the connection to {} failed or was lost during the call of `{name}`{said}. The call was not repeated: it may have run in part, so check the workspace (read the files concerned) before calling again",
                        self.uri.describe()
                    )
                } else if let Some(why) = gone {
                    format!(
                        "the {} is gone or stopped, or cannot be reached: the call of `{name}` ended ({}) without a result, and a check after it got: {why}. The call was not repeated: it may have run in part, so check the workspace (read the files concerned) once it is back",
                        self.uri.describe(),
                        out.status
                    )
                } else if out.status == Status::Exited(script::NO_DIR) {
                    format!(
                        "the workspace directory `{}` is gone on {}{said}",
                        self.cwd.display(),
                        self.uri.describe()
                    )
                } else {
                    format!(
                        "tool `{name}` in the workspace on {} ended ({}) without a result{said}. If the transport failed (container or pod gone, connection dropped), the call may have run in part: check before calling again",
                        self.uri.describe(),
                        out.status
                    )
                };
                exec::error_result(id, TRANSPORT, message)
            }
        }
    }
}

/// One call of an ag tool in the workspace.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// The tool's name, for messages.
    pub name: &'a str,
    /// Its binary (`ag-read`).
    pub binary: &'a str,
    /// The call id.
    pub id: &'a str,
    /// The tool environment.
    pub env: &'a [(String, String)],
    /// Why an interrupted call stopped, for the model.
    pub aborted: &'a str,
}

/// Starts the session's ssh master and waits until it accepts calls; its
/// stderr is the message when it fails.
async fn connect(uri: &Uri, ssh: &SshSetup) -> Result<proc::Running, WorkspaceError> {
    let limits = proc::LineLimits {
        max_line: 4096,
        max_total: Some(64 * 1024),
        stderr: CaptureLimit::new(MAX_STDERR_BYTES),
    };
    let master = proc::Command::new(&ssh.program)
        .args(ssh.args(uri, true))
        .stream_lines(limits, &CancellationToken::new())
        .map_err(|e| fail(uri, format!("cannot start `{}`: {e}", ssh.program)))?;
    let running = master.running;
    let start = Instant::now();
    let mut pause = Duration::from_millis(5);
    loop {
        if let Some(ended) = running.ended() {
            let message = match ended {
                Ok(out) => format!(
                    "cannot connect ({}): {}",
                    out.status,
                    out.stderr.lossy().trim()
                ),
                Err(e) => format!("cannot connect: {e}"),
            };
            return Err(fail(
                uri,
                format!(
                    "{message}\nhint: check that `ssh` reaches the host without a password prompt (keys or an agent; options in ${SSH_OPTIONS_ENV})"
                ),
            ));
        }
        // The socket appears once the master has authenticated.
        if ssh.control.exists() {
            return Ok(running);
        }
        if start.elapsed() > CONNECT_TIMEOUT {
            return Err(fail(
                uri,
                format!("no connection within {CONNECT_TIMEOUT:?}"),
            ));
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(100));
    }
}

fn fail(uri: &Uri, message: String) -> WorkspaceError {
    WorkspaceError::Failed {
        what: uri.describe(),
        message,
    }
}
