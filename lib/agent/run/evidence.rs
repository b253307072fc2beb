//! What a run's own record says before its final answer is accepted. A
//! weak model often answers "I changed it" after its attempts to change a
//! file all failed (an `edit` whose text was not found, a `write` refused
//! by the gate) or changed nothing (a `write` of the text the file held).
//! The record shows that, whatever the answer says: the run made calls to
//! the file tools and none of them landed, and no other
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
//! A bash call is read as the gate reads it: when this prompt's bash calls
//! would write files of the working tree (`sed -i`, `>`, `tee`, `cp`...),
//! and the checkpoints, one taken when the answer came, show that no file
//! of the tree changed (a `sed` whose pattern matched nothing, a write to a
//! path that does not exist), the answer goes back once too, naming the
//! commands (`writes_without_change`). That needs checkpoints: without
//! them nothing is known of what bash did, and the answer is accepted.
//!
//! The first answer of a prompt that was asked to be a tool call, and came
//! as text because the server did not enforce it, is withdrawn and the
//! request asked again once (`WITHDRAWN`); a second such answer is sent
//! back once (`NO_CALL_YET`): that is the record (no call at all), not the
//! words.

use std::path::Path;

use crate::agent::calls::repeats::FILE_CHANGERS;
use crate::agent::config::named_sets::own_name;
use crate::agent::run::checkpoint_ledger::READ_ONLY;
use crate::protocol::{ContentBlock, Message};

/// Why the first answer of a prompt, asked to be a tool call, was left out
/// of the conversation and the request asked again, when it came as text
/// because the server did not enforce the request. Measured on a small
/// model, a text claim sent back with [`NO_CALL_YET`] was held to in
/// every answer sampled, while the same request asked again without it
/// got a call in every one (docs/models.md).
pub(in crate::agent) const WITHDRAWN: &str = "the first answer, asked to be a tool call, came as text: it is left out and the request is asked again";

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

/// Characters of a failed call's error quoted back.
const QUOTED: usize = 240;

/// Characters of its `hint:` line quoted back.
const HINT_QUOTED: usize = 400;

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
        if r.details["unchanged"] == true && FILE_CHANGERS.contains(&tool) {
            // A file written back as it was: an attempt that changed nothing.
            failed.push(format!("- `{tool}`: {}", quoted_error(&r.content)));
            continue;
        }
        if !r.is_error {
            // A change landed, or may have (bash, another tool).
            return None;
        }
        if FILE_CHANGERS.contains(&tool) {
            failed.push(format!("- `{tool}`: {}", quoted_error(&r.content)));
        }
    }
    if failed.is_empty() {
        return None;
    }
    Some(format!(
        "No file has changed during this request: every call that would have changed one failed or changed nothing.\n{}\nIf the request asks for a change, it has not been made yet: read the current content, then make the change with a tool. If it asks for no change, give your answer again.",
        failed.join("\n")
    ))
}

/// A bash call of this prompt that would write files of the working tree.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::agent) struct BashWrite {
    /// The command, on one line and shortened.
    pub command: String,
    /// The files it writes, relative to the work tree.
    pub files: Vec<String>,
    /// Its exit code, when it failed.
    pub exit_code: Option<i64>,
}

/// This prompt's bash calls (`new`) that would write files under
/// `work_tree`, as the gate's classifier reads their commands. Writes
/// elsewhere (`/tmp`, `/dev/null`) and inside `.git` do not count: the
/// checkpoints do not see them.
pub(in crate::agent) fn bash_writes(new: &[Message], work_tree: &Path) -> Vec<BashWrite> {
    let real_tree = work_tree
        .canonicalize()
        .unwrap_or_else(|_| work_tree.to_path_buf());
    let mut out = Vec::new();
    for m in new {
        let Message::ToolResult(r) = m else {
            continue;
        };
        if own_name(&r.tool_name) != "bash" {
            continue;
        }
        let Some(command) = r.details["command"].as_str() else {
            continue;
        };
        let cwd = r.details["cwd"]
            .as_str()
            .map(Path::new)
            .unwrap_or(work_tree);
        let place = crate::gate::place::Place::new(cwd, None, None);
        let analysis = crate::gate::analyse_command(command, cwd, &place);
        let mut files: Vec<String> = analysis
            .paths
            .iter()
            .filter_map(|p| {
                p.strip_prefix(work_tree)
                    .or_else(|_| p.strip_prefix(&real_tree))
                    .ok()
            })
            .filter(|rel| !rel.as_os_str().is_empty() && !rel.starts_with(".git"))
            .map(|rel| rel.display().to_string())
            .collect();
        files.sort();
        files.dedup();
        if files.is_empty() {
            continue;
        }
        out.push(BashWrite {
            command: first_words(&[ContentBlock::Text {
                text: command.to_string(),
            }]),
            files,
            exit_code: r
                .is_error
                .then(|| r.details["exit_code"].as_i64())
                .flatten(),
        });
    }
    out
}

/// The statement to send back when this prompt's bash calls would have
/// written files of the working tree (`writes`, not empty) and its
/// checkpoints show that none of its files changed.
pub(in crate::agent) fn writes_without_change(writes: &[BashWrite]) -> String {
    let lines: Vec<String> = writes
        .iter()
        .map(|w| {
            let how = match w.exit_code {
                Some(code) => format!("exited {code}"),
                None => "exited 0".to_string(),
            };
            format!(
                "- `{}` ({how}; it writes {})",
                w.command,
                w.files.join(", ")
            )
        })
        .collect();
    format!(
        "No file has changed during this request: the working tree is as it was before it. These commands would have written files, and left them as they were:\n{}\nIf the request asks for a change, it has not been made yet: read the current content, then make the change with a tool. If it asks for no change, give your answer again.",
        lines.join("\n")
    )
}

/// A failed call's error as quoted back: its start, and its `hint:` line
/// whole when it has one. The hint is what to do ("call edit again with
/// old_string \"recieve\""), and it comes last, after the detail that a
/// cut at the start would keep instead.
fn quoted_error(content: &[ContentBlock]) -> String {
    let start = first_words(content);
    let hint = text_of(content)
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with("hint:"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "));
    match hint {
        Some(h) if !start.contains(&h) => format!("{start} {}", cut(h, HINT_QUOTED)),
        _ => start,
    }
}

/// The start of a result's text, on one line.
fn first_words(content: &[ContentBlock]) -> String {
    let text = text_of(content);
    cut(
        text.split_whitespace().collect::<Vec<_>>().join(" "),
        QUOTED,
    )
}

fn text_of(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `line` cut to `max` characters, with an ellipsis when cut.
fn cut(line: String, max: usize) -> String {
    if line.chars().count() <= max {
        return line;
    }
    line.chars().take(max).collect::<String>() + "…"
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
    fn a_long_error_is_quoted_with_its_hint() {
        let error = "old_string was not found in the file.\nThe closest line in the file is line 5:\n     5\tYou will recieve one email per project.\nWhere they differ (- old_string, + the file; · is a space):\n-receive\n+You·will·recieve·one·email·per·project.\nhint: line 5 has \"recieve\", 1 character away from old_string and nowhere else in the file. If that is the text to change, call edit again with old_string \"recieve\" and new_string \"receive\".";
        let s = unlanded_changes(&[result("edit", true, error, Value::Null)]).unwrap();
        assert!(
            s.contains("- `edit`: old_string was not found in the file."),
            "{s}"
        );
        assert!(
            s.contains("… hint: line 5 has \"recieve\", 1 character away from old_string and nowhere else in the file. If that is the text to change, call edit again with old_string \"recieve\" and new_string \"receive\"."),
            "{s}"
        );
        // A short error that holds its hint is quoted once.
        let s =
            unlanded_changes(&[result("write", true, "denied\nhint: ask", Value::Null)]).unwrap();
        assert!(s.contains("- `write`: denied hint: ask\n"), "{s}");
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
    fn a_file_written_back_as_it_was_is_no_change() {
        let same = result(
            "write",
            false,
            "notes.md already holds exactly this text (8 bytes): nothing was changed",
            json!({"unchanged": true}),
        );
        let s = unlanded_changes(std::slice::from_ref(&same)).unwrap();
        assert!(
            s.contains("- `write`: notes.md already holds exactly this text"),
            "{s}"
        );
        // Beside a change that landed, the run did change a file.
        let landed = result("edit", false, "edited", Value::Null);
        assert_eq!(unlanded_changes(&[same, landed]), None);
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

    fn bash(command: &str, is_error: bool, exit_code: i64) -> Message {
        result(
            "bash",
            is_error,
            "(no output)",
            json!({"command": command, "cwd": "/w", "exit_code": exit_code}),
        )
    }

    #[test]
    fn bash_writes_are_the_commands_that_write_files_of_the_tree() {
        let tree = Path::new("/w");
        let writes = |c: &str| bash_writes(&[bash(c, false, 0)], tree);
        assert_eq!(writes("sed -i 's/a/b/' x.py")[0].files, ["x.py"]);
        assert_eq!(
            writes("cd sub && echo x >> notes.md")[0].files,
            ["sub/notes.md"]
        );
        assert_eq!(
            writes("printf x | tee a.txt b.txt")[0].files,
            ["a.txt", "b.txt"]
        );
        for looks in [
            "cat x.py",
            "grep -n main x.py",
            "python3 x.py 2>&1",
            "echo x > /dev/null",
            "echo x > /tmp/elsewhere.txt",
            "export TIMEOUT=60",
            "git add -A && git commit -m 'Fix the typo'",
        ] {
            assert_eq!(writes(looks), [], "{looks}");
        }
        let failed = bash_writes(&[bash("echo 1 > gone/x.txt", true, 1)], tree);
        assert_eq!(failed[0].exit_code, Some(1));
        assert_eq!(
            bash_writes(
                &[result("read", false, "x", json!({"command": "x > y"}))],
                tree
            ),
            []
        );
    }

    #[test]
    fn the_statement_names_each_command_and_what_it_writes() {
        let s = writes_without_change(&[
            BashWrite {
                command: "sed -i 's/30/60/' config.py".into(),
                files: vec!["config.py".into()],
                exit_code: None,
            },
            BashWrite {
                command: "echo 1 > gone/x.txt".into(),
                files: vec!["gone/x.txt".into()],
                exit_code: Some(1),
            },
        ]);
        assert!(
            s.starts_with("No file has changed during this request"),
            "{s}"
        );
        assert!(
            s.contains("- `sed -i 's/30/60/' config.py` (exited 0; it writes config.py)"),
            "{s}"
        );
        assert!(
            s.contains("- `echo 1 > gone/x.txt` (exited 1; it writes gone/x.txt)"),
            "{s}"
        );
    }
}
