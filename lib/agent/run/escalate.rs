//! A call the sandbox blocked may run again outside it, as Codex does it:
//! the gates are asked once more with the denial in the request's
//! `sandbox.blocked`; ag-gate's policy puts the question to a person (an
//! `approval_request` whose reason names the denial), or, with nobody to
//! ask (approval mode never), keeps the call confined. A person's "always"
//! covers the command's prefix for the rest of the session. Without a gate
//! (`--no-gate`) nobody can approve, so the call stays confined. Whatever
//! is decided, the model reads it in the result.

use std::io;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::control::{Answer, Control};
use super::runner::Agent;
use crate::agent::calls::gates::Verdict;
use crate::agent::calls::prefixes::describe_prefixes;
use crate::agent::calls::toolset::CallEnv;
use crate::gate::sandboxed::stays_confined;
use crate::protocol::{AgentEvent, GateRequest, ToolResult};

impl Agent {
    /// Runs a blocked call again outside the sandbox when a gate or a
    /// person allows it; otherwise tells the model why it stays confined.
    /// Any other result is returned as it is.
    pub(in crate::agent) async fn escalate(
        &mut self,
        id: &str,
        name: &str,
        arguments: &Value,
        result: ToolResult,
        control: &Control,
        cancel: &CancellationToken,
    ) -> io::Result<ToolResult> {
        let Some(sandbox) = self.settings.sandbox.clone() else {
            return Ok(result);
        };
        if cancel.is_cancelled() {
            return Ok(result);
        }
        let mcp = self.tools.get(name).is_some_and(|t| t.is_mcp());
        if mcp && !sandbox.mcp_confined {
            return Ok(result);
        }
        let Some(blocked) = sandbox.blocked(&result, &self.settings.cwd) else {
            return Ok(result);
        };
        if mcp {
            let why = "it is a tool of an MCP server, which runs confined as a whole (ag-loop --mcp-unconfined starts servers outside the sandbox)";
            return Ok(noted(result, &stays_confined(&blocked, why)));
        }
        if !sandbox.always_covers(name, arguments) {
            if self.settings.gates.before.is_empty() {
                let why = "no gate runs (--no-gate), so nobody can approve that";
                return Ok(noted(result, &stays_confined(&blocked, why)));
            }
            let request = GateRequest {
                tool: name.to_string(),
                arguments: arguments.clone(),
                cwd: self.settings.cwd.display().to_string(),
                session_id: self.settings.session_id.clone(),
                tool_call_id: Some(id.to_string()),
                interactive: self.settings.someone_answers(),
                sandbox: Some(sandbox.gate(Some(blocked.clone()))),
            };
            let (verdict, problems) = self.settings.gates.check(request).await;
            for p in problems {
                self.emitter.emit(AgentEvent::error(p))?;
            }
            match verdict {
                // A gate may let it out by itself; it then runs as the
                // model asked (a rewrite is for the confined run).
                Verdict::Allow(_) => {}
                Verdict::NotAsked(_, reason) => {
                    self.emitter.emit(AgentEvent::Note {
                        message: format!(
                            "the `{name}` call runs again outside the sandbox without a person's approval: {reason}"
                        ),
                        tool_call_id: Some(id.to_string()),
                    })?;
                }
                Verdict::Deny(reason) => return Ok(noted(result, &reason)),
                Verdict::Ask(_, reason) => {
                    let always = describe_prefixes(name, arguments);
                    let question = format!(
                        "Run {name} {} outside the sandbox? ({reason}) [y]es / [n]o / [a]lways for {always}: ",
                        crate::session::export::short_args(arguments),
                    );
                    match self
                        .ask(
                            id,
                            name,
                            arguments,
                            &reason,
                            (question, always),
                            control,
                            cancel,
                        )
                        .await?
                    {
                        Answer::Always => sandbox.allow_always(name, arguments),
                        Answer::Yes => {}
                        Answer::No if cancel.is_cancelled() => return Ok(result),
                        Answer::No => {
                            let why = "the user did not approve that (or nobody answered)";
                            return Ok(noted(result, &stays_confined(&blocked, why)));
                        }
                    }
                }
            }
        }
        let Some(spec) = self.tools.get(name) else {
            return Ok(result);
        };
        let env = CallEnv {
            cwd: &self.settings.cwd,
            env: &self.settings.tool_env,
            sandbox: None,
            progress: None,
        };
        let mut again = spec.call(id, arguments, &env, cancel).await;
        again.output = format!(
            "[The sandbox blocked this call ({blocked}); it ran again outside the sandbox, as approved.]\n{}",
            again.output
        );
        let note = json!({"ran_outside": true, "blocked": blocked});
        match &mut again.details {
            Value::Object(map) => {
                map.insert("sandbox".into(), note);
            }
            Value::Null => again.details = json!({ "sandbox": note }),
            _ => {}
        }
        Ok(again)
    }
}

/// The confined result, with why it was not run outside the sandbox.
fn noted(mut result: ToolResult, why: &str) -> ToolResult {
    if !result.output.is_empty() {
        result.output.push_str("\n\n");
    }
    result.output.push_str(why);
    result
}
