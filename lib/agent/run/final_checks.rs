//! Runs the checks of a final answer for the agent (`--until` through
//! ag-bash, then the stop hooks), with what setup/until.rs sets up: a file of
//! its own so that the runner, which holds the checks' settings, does not
//! import the code that needs the runner.

use std::io;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::runner::Agent;
use crate::agent::calls::toolset::CallEnv;
use crate::agent::setup::until::{
    BASH_MAX_OUTPUT, CheckVerdict, OUTPUT_CHARS, fenced, last_line, tail,
};
use crate::protocol::{AgentEvent, CheckKind, StopDecision, StopRequest, UntilCheck};

/// How one `--until` command ended.
struct Ran {
    exit_code: Option<i32>,
    output: String,
    error: Option<String>,
    outcome: RanOutcome,
}

enum RanOutcome {
    Passed,
    Failed(String),
    CannotRun(String),
    Interrupted,
}

impl Agent {
    /// Runs the checks on a final answer: `--until`, then the stop hooks,
    /// each reported by a `check` event. `attempt` counts the checks of
    /// this prompt's run, from 1.
    pub(in crate::agent) async fn run_checks(
        &mut self,
        answer: &str,
        attempt: u32,
        cancel: &CancellationToken,
    ) -> io::Result<CheckVerdict> {
        let tries = self.settings.checks.config.tries;
        if let Some(until) = self.settings.checks.config.until.clone() {
            let ran = self.run_until(&until, attempt, cancel).await;
            self.emitter.emit(AgentEvent::Check {
                kind: CheckKind::Until,
                command: until.command.clone(),
                attempt,
                tries,
                passed: matches!(ran.outcome, RanOutcome::Passed),
                exit_code: ran.exit_code,
                output: ran.output.clone(),
                error: ran.error.clone(),
            })?;
            match ran.outcome {
                RanOutcome::Passed => {}
                RanOutcome::Interrupted => return Ok(CheckVerdict::Interrupted),
                RanOutcome::CannotRun(why) => return Ok(CheckVerdict::CannotRun(why)),
                RanOutcome::Failed(status) => {
                    let prompt = format!(
                        "The task is not done: the check `{}` failed ({status}; check {attempt} of {tries}). The end of its output:\n\n{}\n\nFind and fix the cause, then end your turn; the check runs again.",
                        until.command,
                        fenced(&ran.output)
                    );
                    return Ok(CheckVerdict::SendBack {
                        prompt,
                        failure: format!("the check `{}` failed ({status})", until.command),
                    });
                }
            }
        }
        let hooks = self.settings.checks.config.stop_hooks.clone();
        for hook in hooks {
            let request = StopRequest {
                answer: answer.to_string(),
                cwd: self.settings.attach_dir.display().to_string(),
                session_id: self.settings.session_id.clone(),
                attempt,
                tries,
            };
            let timeout = self.settings.checks.config.timeout;
            let dir = self.settings.attach_dir.clone();
            let answer =
                crate::agent::calls::gates::ask_stop_hook(&hook, &request, timeout, &dir, cancel)
                    .await;
            let interrupted = cancel.is_cancelled();
            let (passed, output, error) = match (&answer, interrupted) {
                (_, true) => (false, String::new(), Some("interrupted".to_string())),
                (Ok(StopDecision::Stop { reason }), _) => {
                    (true, reason.clone().unwrap_or_default(), None)
                }
                (Ok(StopDecision::Continue { message }), _) => (false, message.clone(), None),
                (Err(e), _) => (false, String::new(), Some(e.clone())),
            };
            self.emitter.emit(AgentEvent::Check {
                kind: CheckKind::Stop,
                command: hook.clone(),
                attempt,
                tries,
                passed,
                exit_code: None,
                output,
                error,
            })?;
            if interrupted {
                return Ok(CheckVerdict::Interrupted);
            }
            match answer {
                Ok(StopDecision::Stop { .. }) => {}
                Ok(StopDecision::Continue { message }) => {
                    let prompt = match message.trim() {
                        "" => format!(
                            "The task is not done: the stop hook `{hook}` sent you back without saying why (check {attempt} of {tries}). Check your work against the task and go on."
                        ),
                        _ => message,
                    };
                    return Ok(CheckVerdict::SendBack {
                        prompt,
                        failure: format!("the stop hook `{hook}` sent the model back"),
                    });
                }
                Err(e) => {
                    return Ok(CheckVerdict::CannotRun(format!(
                        "the stop hook could not judge the answer, so the run ends: {e}"
                    )));
                }
            }
        }
        Ok(CheckVerdict::Pass)
    }

    /// Runs the `--until` command through ag-bash, as a bash call of the
    /// model's would run (the sandbox, the workspace, the tools' environment).
    async fn run_until(
        &mut self,
        until: &UntilCheck,
        attempt: u32,
        cancel: &CancellationToken,
    ) -> Ran {
        let Some(bash) = self.settings.checks.bash.clone() else {
            return cannot(format!(
                "the check `{}` cannot run: ag-bash was not loaded",
                until.command
            ));
        };
        let Some(spec) = bash.get("bash") else {
            return cannot(format!(
                "the check `{}` cannot run: ag-bash was not loaded",
                until.command
            ));
        };
        let env = CallEnv {
            cwd: &self.settings.cwd,
            env: &self.settings.tool_env,
            sandbox: self.settings.sandbox.as_deref(),
            progress: None,
        };
        // ag-bash takes a JSON `timeout` under a second for a model's slip
        // and runs the default instead, so the check's own limit is kept
        // here as well: the call is ended when it runs out.
        let arguments = json!({
            "command": until.command,
            "timeout": until.timeout.max(1.0),
            "max_output": BASH_MAX_OUTPUT,
        });
        let id = format!("check-{attempt}");
        let deadline = cancel.child_token();
        let timer = {
            let deadline = deadline.clone();
            let limit = std::time::Duration::from_secs_f64(until.timeout);
            tokio::spawn(async move {
                tokio::time::sleep(limit).await;
                deadline.cancel();
            })
        };
        let mut r = spec.call(&id, &arguments, &env, &deadline).await;
        timer.abort();
        let expired = deadline.is_cancelled() && !cancel.is_cancelled();
        // The check's output goes to the model and the session: no key a
        // command printed goes with it.
        self.emitter.redactor().string(&mut r.output);
        let output = tail(&r.output, OUTPUT_CHARS);
        if cancel.is_cancelled() {
            return Ran {
                exit_code: None,
                output,
                error: Some("interrupted".into()),
                outcome: RanOutcome::Interrupted,
            };
        }
        let code = r
            .details
            .get("exit_code")
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok());
        // Ended at the limit: by ag-loop (no exit code then: a check that
        // exited just as the limit came is judged by its exit code) or by
        // ag-bash.
        let timed_out = r.details.get("timed_out").and_then(Value::as_bool) == Some(true);
        if (expired && code.is_none()) || (timed_out && code.is_some()) {
            let why = format!(
                "timed out after {} s (--until-timeout); the command and everything it started were stopped",
                until.timeout
            );
            return Ran {
                exit_code: None,
                output,
                error: Some(why.clone()),
                outcome: RanOutcome::Failed(why),
            };
        }
        match code {
            None => cannot(format!(
                "the check `{}` could not be run: {}",
                until.command,
                r.output.trim()
            )),
            Some(0) => Ran {
                exit_code: Some(0),
                output,
                error: None,
                outcome: RanOutcome::Passed,
            },
            Some(c @ (126 | 127)) => {
                let what = if c == 127 {
                    "command not found"
                } else {
                    "not executable"
                };
                let why = format!(
                    "the check `{}` could not be run (exit status {c}: {what}): {}; fix --until (it runs with bash -c in `{}`)",
                    until.command,
                    last_line(&output),
                    self.settings.cwd.display()
                );
                Ran {
                    exit_code: Some(c),
                    output,
                    error: Some(why.clone()),
                    outcome: RanOutcome::CannotRun(why),
                }
            }
            Some(c) => Ran {
                exit_code: Some(c),
                output,
                error: None,
                outcome: RanOutcome::Failed(format!("exit status {c}")),
            },
        }
    }
}

fn cannot(why: String) -> Ran {
    Ran {
        exit_code: None,
        output: String::new(),
        error: Some(why.clone()),
        outcome: RanOutcome::CannotRun(why),
    }
}
