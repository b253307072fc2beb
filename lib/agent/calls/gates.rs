//! Policies as programs: every gate (`--gate CMD`) sees a tool call before
//! it runs and allows, denies, asks a person or rewrites its arguments;
//! every after-hook (`--after CMD`) sees the result and may annotate it. A
//! gate that crashes, hangs or answers garbage denies.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::gate::Policy;
use crate::proc::{self, AnswerError, CaptureLimit, Input, Output};
use crate::protocol::{
    AfterAnswer, AfterRequest, GateDecision, GateRequest, StopDecision, StopRequest,
};

/// Bytes of a policy program's stdout kept: its answer is one line.
const MAX_ANSWER_BYTES: usize = 1024 * 1024;
/// Bytes of its stderr kept, for the message when it gives no answer.
const MAX_STDERR_BYTES: usize = 16 * 1024;

/// What the chain of gates decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Run, with these (possibly rewritten) arguments.
    Allow(Value),
    /// Run, with these arguments, although a gate would have asked a
    /// person, who cannot answer (approval mode `never`); the gates' reasons.
    NotAsked(Value, String),
    /// Do not run; the reason is for the model.
    Deny(String),
    /// A person must approve first; the arguments are the ones to run.
    Ask(Value, String),
}

/// One gate.
#[derive(Debug, Clone)]
pub enum Gate {
    /// ag-gate's policy, applied in-process: the decisions of the `ag-gate`
    /// binary without a process for every call (its config file is read
    /// once, at start).
    Builtin(Arc<Policy>),
    /// A program run for each call (`--gate CMD`, by `sh -c`).
    Program(String),
}

impl Gate {
    async fn decide(
        &self,
        request: &GateRequest,
        timeout: Duration,
    ) -> Result<GateDecision, String> {
        match self {
            Gate::Builtin(policy) => Ok(policy.decide(request)),
            Gate::Program(cmd) => ask_program(cmd, request, timeout).await,
        }
    }

    fn name(&self) -> &str {
        match self {
            Gate::Builtin(_) => "ag-gate",
            Gate::Program(cmd) => cmd,
        }
    }
}

/// The policy programs of a run.
#[derive(Debug, Clone, Default)]
pub struct Gates {
    /// Gates, in order.
    pub before: Vec<Gate>,
    /// After-hooks, in order.
    pub after: Vec<String>,
    /// How long a gate may take.
    pub timeout: Duration,
}

/// Runs one policy program with one JSON object on stdin and parses its
/// answer (the first non-blank line of its stdout). The answer counts once
/// the program has exited: a background child it left holding its output
/// is ended, not waited for.
async fn ask_program<Q: Serialize, A: DeserializeOwned>(
    cmd: &str,
    request: &Q,
    timeout: Duration,
) -> Result<A, String> {
    ask_program_in(cmd, request, timeout, None, &CancellationToken::new()).await
}

/// [`ask_program`] in directory `dir`, ended (with all it started) when
/// `cancel` fires.
async fn ask_program_in<Q: Serialize, A: DeserializeOwned>(
    cmd: &str,
    request: &Q,
    timeout: Duration,
    dir: Option<&Path>,
    cancel: &CancellationToken,
) -> Result<A, String> {
    let mut line = serde_json::to_vec(request).map_err(|e| e.to_string())?;
    line.push(b'\n');
    let mut command = proc::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(Input::Bytes(line))
        .output(Output::Separate {
            stdout: CaptureLimit::head_only(MAX_ANSWER_BYTES),
            stderr: CaptureLimit::new(MAX_STDERR_BYTES),
        })
        .timeout(timeout);
    if let Some(dir) = dir {
        command = command.cwd(dir);
    }
    let out = command
        .collect(cancel)
        .await
        .map_err(|e| format!("cannot run `{cmd}`: {e}"))?;
    if cancel.is_cancelled() {
        return Err(format!("`{cmd}` was interrupted"));
    }
    if out.stopped.is_some() {
        return Err(format!(
            "`{cmd}` did not answer within {} s",
            timeout.as_secs_f64()
        ));
    }
    proc::answer(&out.stdout).map_err(|e| match e {
        AnswerError::Invalid { error, line } => {
            format!("`{cmd}` answered something that is not a decision ({error}): {line}")
        }
        AnswerError::Missing => format!(
            "`{cmd}` gave no answer ({}){}",
            out.status,
            match out.stderr.lossy().trim() {
                "" => String::new(),
                t => format!(": {t}"),
            }
        ),
    })
}

// Runs that end when a check passes (issue 35).
/// Asks a stop hook (`--stop CMD`, run by `sh -c` in `dir`) whether the run
/// may end; an interrupt ends it and all it started.
pub async fn ask_stop_hook(
    cmd: &str,
    request: &StopRequest,
    timeout: Duration,
    dir: &Path,
    cancel: &CancellationToken,
) -> Result<StopDecision, String> {
    ask_program_in(cmd, request, timeout, Some(dir), cancel).await
}

impl Gates {
    /// Passes a call through every gate in order. Problems with a gate are
    /// returned beside the verdict so that they can be reported as events.
    pub async fn check(&self, mut request: GateRequest) -> (Verdict, Vec<String>) {
        let mut asks: Vec<String> = Vec::new();
        let mut not_asked: Vec<String> = Vec::new();
        let mut problems = Vec::new();
        for gate in &self.before {
            match gate.decide(&request, self.timeout).await {
                Ok(GateDecision::Allow {
                    arguments,
                    reason,
                    not_asked: unattended,
                }) => {
                    if unattended {
                        not_asked.push(reason.unwrap_or_else(|| {
                            format!("gate `{}` would have asked a person", gate.name())
                        }));
                    }
                    if let Some(a) = arguments {
                        if a.is_object() {
                            request.arguments = a;
                        } else {
                            problems.push(format!("gate `{}` rewrote the arguments into something that is not an object; ignored", gate.name()));
                        }
                    }
                }
                Ok(GateDecision::Deny { reason }) => return (Verdict::Deny(reason), problems),
                Ok(GateDecision::Ask { reason }) => asks.push(reason),
                Err(e) => {
                    problems.push(format!("gate failed, so the call is denied: {e}"));
                    return (
                        Verdict::Deny(format!(
                            "a safety gate could not check this call ({e}); it was not run"
                        )),
                        problems,
                    );
                }
            }
        }
        if !asks.is_empty() {
            (Verdict::Ask(request.arguments, asks.join("; ")), problems)
        } else if !not_asked.is_empty() {
            (
                Verdict::NotAsked(request.arguments, not_asked.join("; ")),
                problems,
            )
        } else {
            (Verdict::Allow(request.arguments), problems)
        }
    }

    /// Passes a result through every after-hook; returns the (possibly
    /// changed) output and error flag, and problems to report.
    pub async fn after(&self, request: AfterRequest) -> (String, bool, Vec<String>) {
        let mut output = request.output.clone();
        let mut is_error = request.is_error;
        let mut problems = Vec::new();
        for cmd in &self.after {
            let mut req = request.clone();
            req.output = output.clone();
            req.is_error = is_error;
            match ask_program::<_, AfterAnswer>(cmd, &req, self.timeout).await {
                Ok(a) => {
                    if let Some(o) = a.output {
                        output = o;
                    }
                    if let Some(extra) = a.append {
                        output.push_str("\n\n");
                        output.push_str(&extra);
                    }
                    if let Some(e) = a.is_error {
                        is_error = e;
                    }
                }
                Err(e) => problems.push(format!("after-hook failed, result left as it was: {e}")),
            }
        }
        (output, is_error, problems)
    }
}
