//! Policies as programs: every gate (`--gate CMD`) sees a tool call before
//! it runs and allows, denies, asks a person or rewrites its arguments;
//! every after-hook (`--after CMD`) sees the result and may annotate it. A
//! gate that crashes, hangs or answers garbage denies.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::gate::Policy;
use crate::protocol::{AfterAnswer, AfterRequest, GateDecision, GateRequest};

/// What the chain of gates decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Run, with these (possibly rewritten) arguments.
    Allow(Value),
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

/// Runs one policy program with one JSON object on stdin and parses the
/// first line of its answer.
async fn ask_program<Q: Serialize, A: DeserializeOwned>(
    cmd: &str,
    request: &Q,
    timeout: Duration,
) -> Result<A, String> {
    let mut child = crate::proc::tokio_command("sh", &["-c", cmd], None)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start `{cmd}`: {e}"))?;
    let mut line = serde_json::to_vec(request).map_err(|e| e.to_string())?;
    line.push(b'\n');
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(format!("`{cmd}`: no pipes"));
    };
    let talk = async move {
        let _ = stdin.write_all(&line).await;
        drop(stdin);
        let mut out = Vec::new();
        let mut err = Vec::new();
        let mut stdout = stdout.take(1024 * 1024);
        let mut stderr = stderr.take(16 * 1024);
        let _ = tokio::join!(stdout.read_to_end(&mut out), stderr.read_to_end(&mut err));
        (out, err)
    };
    let (out, err) = match tokio::time::timeout(timeout, talk).await {
        Ok(v) => v,
        Err(_) => {
            crate::proc::kill_group(&mut child, false).await;
            return Err(format!(
                "`{cmd}` did not answer within {} s",
                timeout.as_secs_f64()
            ));
        }
    };
    let status = match tokio::time::timeout(timeout, child.wait()).await {
        Ok(Ok(s)) => s,
        _ => {
            crate::proc::kill_group(&mut child, false).await;
            return Err(format!("`{cmd}` did not exit after answering"));
        }
    };
    let first = out
        .split(|b| *b == b'\n')
        .find(|l| !l.iter().all(u8::is_ascii_whitespace));
    match first {
        Some(l) => serde_json::from_slice(l).map_err(|e| {
            format!(
                "`{cmd}` answered something that is not a decision ({e}): {}",
                String::from_utf8_lossy(l)
                    .chars()
                    .take(200)
                    .collect::<String>()
            )
        }),
        None => Err(format!(
            "`{cmd}` gave no answer ({status}){}",
            match String::from_utf8_lossy(&err).trim() {
                "" => String::new(),
                t => format!(": {t}"),
            }
        )),
    }
}

impl Gates {
    /// Passes a call through every gate in order. Problems with a gate are
    /// returned beside the verdict so that they can be reported as events.
    pub async fn check(&self, mut request: GateRequest) -> (Verdict, Vec<String>) {
        let mut asks: Vec<String> = Vec::new();
        let mut problems = Vec::new();
        for gate in &self.before {
            match gate.decide(&request, self.timeout).await {
                Ok(GateDecision::Allow { arguments, .. }) => {
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
        if asks.is_empty() {
            (Verdict::Allow(request.arguments), problems)
        } else {
            (Verdict::Ask(request.arguments, asks.join("; ")), problems)
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
