//! Asking a person whether a tool call may run: an `approval_request`
//! event, then the answer from the terminal or from an `approval` command
//! on stdin. The gates ask through it, and so does the sandbox before a
//! blocked call runs outside it.

use std::io;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::control::{Answer, Control};
use super::runner::Agent;
use crate::protocol::AgentEvent;

impl Agent {
    /// Asks a person to approve a call: on the terminal, or by an
    /// `approval` command on stdin. An interrupt counts as no.
    pub(in crate::agent) async fn ask_person(
        &mut self,
        id: &str,
        name: &str,
        arguments: &Value,
        reason: &str,
        control: &Control,
        cancel: &CancellationToken,
    ) -> io::Result<bool> {
        let question = format!(
            "Allow {name} {}? ({reason}) [y]es / [n]o / [a]lways for {name}: ",
            crate::session::export::short_args(arguments)
        );
        let always = format!("every {name} call");
        Ok(
            match self
                .ask(
                    id,
                    name,
                    arguments,
                    reason,
                    (question, always),
                    control,
                    cancel,
                )
                .await?
            {
                Answer::Always => {
                    self.always.push(name.to_string());
                    true
                }
                Answer::Yes => true,
                Answer::No => false,
            },
        )
    }

    /// Emits an `approval_request` and waits for the answer: on the
    /// terminal (`question.0`), else by an `approval` command on stdin.
    /// `question.1` says what an "always" answer covers. An interrupt
    /// counts as no.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::agent) async fn ask(
        &mut self,
        id: &str,
        name: &str,
        arguments: &Value,
        reason: &str,
        (question, always): (String, String),
        control: &Control,
        cancel: &CancellationToken,
    ) -> io::Result<Answer> {
        // Listen before asking, so that a quick answer is not missed.
        let rx = (!self.settings.interactive).then(|| control.await_approval(id));
        self.emitter.emit(AgentEvent::ApprovalRequest {
            tool_call_id: id.to_string(),
            tool_name: name.to_string(),
            arguments: arguments.clone(),
            reason: reason.to_string(),
            always: Some(always),
        })?;
        let Some(rx) = rx else {
            let answer = tokio::select! {
                _ = cancel.cancelled() => return Ok(Answer::No),
                a = tokio::task::spawn_blocking(move || crate::agent::calls::tty::ask_tty(&question)) => a.unwrap_or_default(),
            };
            return Ok(Answer::from_word(&answer).unwrap_or(Answer::No));
        };
        Ok(tokio::select! {
            _ = cancel.cancelled() => Answer::No,
            a = rx => a.unwrap_or(Answer::No),
        })
    }
}
