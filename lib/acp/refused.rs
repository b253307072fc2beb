//! A prompt that ag-loop does not run. ag-loop answers a prompt it runs
//! with `agent_start` ... `agent_end`, but one it refuses (a file that
//! cannot be attached, an `@NAME` that names no identity, an empty prompt)
//! gets a lone `error` event, which names no prompt. ag-acp writes a
//! session's prompts one at a time, so an `error` between writing a prompt
//! and its `agent_start` is about that prompt, or is a warning that comes
//! before it runs (a gate's problem while a mentioned file is checked, the
//! sandbox's at ag-loop's start):
//!
//! - an `attach.*` or `prompt.*` code is a refusal: ag-loop's attach
//!   errors and its refusals of an `@NAME` always end their prompt, and the
//!   codes are stable;
//! - another code (`sandbox.unavailable`) is a warning;
//! - an error without a code may be either. Then ag-acp writes a *sync*
//!   after the prompt: an `answer` to a question that does not exist,
//!   which ag-loop reports with an `error` naming it, in order with the
//!   prompts (its stdin is one queue). That echo coming back before the
//!   prompt's `agent_start` means the prompt was not run; the errors seen
//!   in between say why.
//!
//! A `session/cancel` of a prompt not yet started writes a sync too, so
//! the cancel frees the prompt whatever ag-loop did with it.

use crate::protocol::AgentCommand;

/// The prefixes of the codes of ag-loop's attach errors and routing
/// refusals, each the refusal of its prompt.
const REFUSALS: &[&str] = &["attach.", "prompt."];

/// What starts every sync's question id, so that its echo is known (and
/// kept from the editor) even in a session file replayed later.
const SYNC: &str = "<ag-acp sync ";

/// What an `error` event before its prompt's `agent_start` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Before {
    /// The prompt was refused.
    Refused,
    /// A warning: the prompt may still run.
    Warning,
    /// Either: a sync tells.
    Unsure,
}

/// Judges an `error` event that came before its prompt started, by its
/// code.
pub fn before_start(code: Option<&str>) -> Before {
    match code {
        Some(c) if REFUSALS.iter().any(|p| c.starts_with(p)) => Before::Refused,
        Some(_) => Before::Warning,
        None => Before::Unsure,
    }
}

/// The id of the `n`th sync of a session: delimited, so that no id is a
/// part of another (`<ag-acp sync 1>` is not in `<ag-acp sync 12>`).
pub fn sync_id(n: u64) -> String {
    format!("{SYNC}{n}>")
}

/// The command that asks ag-loop for a sync's echo.
pub fn sync_command(id: &str) -> AgentCommand {
    AgentCommand::Answer {
        tool_call_id: id.to_string(),
        answer: String::new(),
    }
}

/// Whether an `error` event's message is the echo of a sync (any of
/// ag-acp's): shown to nobody.
pub fn is_sync_echo(message: &str) -> bool {
    message.contains(SYNC)
}

/// Whether an `error` event's message is the echo of the sync `id`.
pub fn echoes(message: &str, id: &str) -> bool {
    message.contains(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_attach_and_prompt_codes_are_refusals_and_no_code_is_unsure() {
        assert_eq!(before_start(Some("attach.binary")), Before::Refused);
        assert_eq!(before_start(Some("attach.denied")), Before::Refused);
        assert_eq!(
            before_start(Some("prompt.unknown_identity")),
            Before::Refused
        );
        assert_eq!(before_start(Some("sandbox.unavailable")), Before::Warning);
        assert_eq!(before_start(None), Before::Unsure);
    }

    #[test]
    fn a_sync_id_is_never_part_of_another() {
        let one = sync_id(1);
        let twelve = sync_id(12);
        let echo = format!(
            "stdin line 9: answer for `{twelve}` ignored: no question with that id is waiting for an answer"
        );
        assert!(echoes(&echo, &twelve));
        assert!(!echoes(&echo, &one));
        assert!(is_sync_echo(&echo));
        assert!(!is_sync_echo("the sandbox is unavailable"));
        let line = serde_json::to_value(sync_command(&one)).unwrap();
        assert_eq!(line["type"], "answer");
        assert_eq!(line["tool_call_id"], one);
    }
}
