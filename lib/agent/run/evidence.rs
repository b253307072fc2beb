//! What a run's own record says before its final answer is accepted. A
//! weak model often answers "I changed it" after its attempts to change a
//! file all failed (an `edit` whose text was not found, a `write` refused
//! by the gate). The record shows that, whatever the answer says: the
//! run made calls to the file tools and none of them landed, and no other
//! call that may change files (bash, an MCP tool) succeeded either. Such an
//! answer is sent back once, with a plain statement of what failed.
//!
//! Nothing here reads the answer's words. A run that only looked (read,
//! grep, ls), as a question's run does, is never sent back; nor is one
//! whose bash calls succeeded, since bash may have made the change (the
//! files changed then show in `agent_end`'s `work`, from the checkpoints);
//! nor one in which a gate or a person denied a call (the runner checks
//! that): the answer is then for whoever said no.
//!
//! The first answer of a prompt that was asked to be a tool call, and came
//! as text because the server did not enforce it, is sent back once too
//! (`NO_CALL_YET`): that is the record (no call at all), not the words.

use crate::agent::config::named_sets::own_name;
use crate::agent::run::checkpoint_ledger::READ_ONLY;
use crate::protocol::{ContentBlock, Message};

/// Sent back when the first answer of a prompt, asked to be a tool call
/// (`--first-call required`, the default for a small window), came as text
/// because the server did not enforce the request. Like a call the server
/// had enforced, it leaves a question its answer after one look.
pub(in crate::agent) const NO_CALL_YET: &str = "No tool has been called during this request, so nothing has been looked at or changed yet. Call a tool now: look at what the request is about, or make the change it asks for. Answer in text once the record shows the work done, or, for a question, once you have looked.";

/// Bytes of text after which such a first answer, still without a call, is
/// stopped: it goes back whatever it says, and a small model on a busy
/// server can ramble on for many minutes (a 5,000-character "I renamed
/// it…" took 12). A call written after the limit is lost, and asked for
/// again by [`NO_CALL_YET`].
pub(in crate::agent) const FIRST_TEXT_LIMIT: usize = 2000;

/// The tools whose only job is to change files.
const FILE_CHANGERS: &[&str] = &["write", "edit", "edit_lines", "patch", "delete"];

/// Characters of a failed call's error quoted back.
const QUOTED: usize = 240;

/// The statement to send back when this prompt's messages (`new`) hold
/// attempts to change files of which none landed; `None` otherwise.
pub(in crate::agent) fn unlanded_changes(new: &[Message]) -> Option<String> {
    let mut failed = Vec::new();
    for m in new {
        let Message::ToolResult(r) = m else {
            continue;
        };
        let tool = own_name(&r.tool_name);
        if READ_ONLY.contains(&tool) {
            continue;
        }
        if r.details["dry_run"] == true {
            // A patch tried out, on purpose without a change.
            continue;
        }
        if !r.is_error {
            // A change landed, or may have (bash, another tool).
            return None;
        }
        if FILE_CHANGERS.contains(&tool) {
            failed.push(format!("- `{tool}`: {}", first_words(&r.content)));
        }
    }
    if failed.is_empty() {
        return None;
    }
    Some(format!(
        "No file has changed during this request: every call that would have changed one failed.\n{}\nIf the request asks for a change, it has not been made yet: read the current content, then make the change with a tool. If it asks for no change, give your answer again.",
        failed.join("\n")
    ))
}

/// The start of a result's text, on one line.
fn first_words(content: &[ContentBlock]) -> String {
    let text: String = content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(" ");
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= QUOTED {
        return line;
    }
    line.chars().take(QUOTED).collect::<String>() + "…"
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::protocol::ToolResultMessage;

    fn result(tool: &str, is_error: bool, text: &str, details: Value) -> Message {
        Message::ToolResult(ToolResultMessage {
            tool_call_id: "c".into(),
            tool_name: tool.into(),
            content: vec![ContentBlock::Text { text: text.into() }],
            details,
            is_error,
            timestamp: None,
        })
    }

    #[test]
    fn failed_edits_and_nothing_else_are_sent_back_with_their_errors() {
        let new = vec![
            result("read", false, "1\tfn main() {}", Value::Null),
            result(
                "edit",
                true,
                "old_string not found in\n src/main.rs",
                Value::Null,
            ),
            result("write", true, "denied by the gate", Value::Null),
        ];
        let s = unlanded_changes(&new).unwrap();
        assert!(
            s.contains("- `edit`: old_string not found in src/main.rs"),
            "{s}"
        );
        assert!(s.contains("- `write`: denied by the gate"), "{s}");
    }

    #[test]
    fn a_landed_change_a_bash_call_or_only_looking_is_accepted() {
        let failed_edit = result("edit", true, "not found", Value::Null);
        for other in [
            result("edit", false, "edited", Value::Null),
            result("bash", false, "(no output)", Value::Null),
            result("mcp_fs_write", false, "ok", Value::Null),
        ] {
            assert_eq!(unlanded_changes(&[failed_edit.clone(), other]), None);
        }
        let looked = [
            result("read", false, "text", Value::Null),
            result("grep", true, "no match", Value::Null),
        ];
        assert_eq!(unlanded_changes(&looked), None);
        assert_eq!(unlanded_changes(&[]), None);
    }

    #[test]
    fn a_dry_run_patch_is_no_change() {
        let new = [result(
            "patch",
            false,
            "would apply",
            json!({"dry_run": true}),
        )];
        assert!(
            unlanded_changes(&new).is_none(),
            "a dry run alone is no attempt"
        );
        let new = [
            result("patch", true, "hunk 1 did not apply", Value::Null),
            result("patch", false, "would apply", json!({"dry_run": true})),
        ];
        assert!(unlanded_changes(&new).is_some());
    }
}
