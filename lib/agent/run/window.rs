//! Keeping the conversation inside the model's context window: estimate its
//! size, and when it nears the window replace the older turns by a summary
//! (a model call) or a marker (pruning), keeping the recent turns verbatim.
//! What must survive is kept mechanically rather than left to the summary:
//! the original task, the user's instructions, the files read and changed,
//! and the open todos.

use serde_json::Value;

use crate::protocol::{ContentBlock, LlmRequest, Message, UserContent};
use crate::session::export::{Format, export};

/// Compact when the estimate passes this share of the context window.
pub const THRESHOLD: f64 = 0.8;
/// Share of the window the verbatim recent turns may take.
pub const KEEP_SHARE: f64 = 0.3;

fn message_chars(m: &Message) -> usize {
    serde_json::to_string(m).map(|s| s.len()).unwrap_or(0)
}

/// Estimated tokens: the last reported usage plus about four characters a
/// token for what came after it.
pub fn estimate_tokens(messages: &[Message]) -> u64 {
    let last = messages.iter().rposition(|m| {
        matches!(m, Message::Assistant(a) if a.usage.input + a.usage.cache_read + a.usage.cache_write > 0)
    });
    let (base, from) = match last {
        Some(i) => match &messages[i] {
            Message::Assistant(a) => (
                a.usage.input + a.usage.cache_read + a.usage.cache_write + a.usage.output,
                i + 1,
            ),
            _ => (0, 0),
        },
        None => (0, 0),
    };
    base + messages[from..]
        .iter()
        .map(|m| message_chars(m) as u64 / 4)
        .sum::<u64>()
}

/// The conversation's size in tokens by its text alone (about four
/// characters a token), the measure `split_point` cuts by.
pub fn text_tokens(messages: &[Message]) -> u64 {
    messages.iter().map(|m| message_chars(m) as u64 / 4).sum()
}

/// Where to cut: the index of the first kept message, an assistant message
/// (so that no tool result is separated from its call), with the kept part
/// under `keep_tokens`. None when there is nothing worth replacing.
pub fn split_point(messages: &[Message], keep_tokens: u64) -> Option<usize> {
    let mut size = 0u64;
    let mut cut = messages.len();
    for (i, m) in messages.iter().enumerate().rev() {
        size += message_chars(m) as u64 / 4;
        if size > keep_tokens {
            break;
        }
        if matches!(m, Message::Assistant(_)) {
            cut = i;
        }
    }
    // Keep at least the latest assistant message and what follows it.
    if cut == messages.len() {
        cut = messages
            .iter()
            .rposition(|m| matches!(m, Message::Assistant(_)))?;
    }
    (cut >= 2).then_some(cut)
}

/// The facts kept mechanically from the replaced part.
pub fn facts(older: &[Message]) -> String {
    let mut users: Vec<String> = Vec::new();
    let mut read: Vec<String> = Vec::new();
    let mut changed: Vec<String> = Vec::new();
    let mut todos: Option<String> = None;
    for m in older {
        match m {
            Message::User { content, .. } => {
                // An attached file is named by its header line: its text
                // would push the task itself out of the 1,500 characters.
                let t = crate::attach::shown_text(content);
                // Earlier summaries carry their own facts forward.
                if !t.starts_with(SUMMARY_HEAD) {
                    users.push(shorten(&t, 1500));
                } else if let Some(i) = t.find(FACTS_HEAD) {
                    users.push(shorten(&t[i..], 4000));
                }
            }
            Message::Assistant(a) => {
                for (_, name, args) in a.tool_calls() {
                    let path = args
                        .get("file_path")
                        .or_else(|| args.get("path"))
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    if let Some(p) = path {
                        let list = match name {
                            "read" => &mut read,
                            "write" | "edit" | "delete" | "patch" => &mut changed,
                            _ => continue,
                        };
                        if !list.contains(&p) {
                            list.push(p);
                        }
                    }
                }
            }
            Message::ToolResult(r) if r.tool_name == "todo" && !r.is_error => {
                todos = r.content.iter().find_map(|b| match b {
                    ContentBlock::Text { text } => Some(shorten(text, 3000)),
                    _ => None,
                });
            }
            _ => {}
        }
    }
    let mut out = format!("{FACTS_HEAD}\n");
    if let Some(first) = users.first() {
        out.push_str(&format!("- The original task:\n{}\n", indent(first)));
    }
    if users.len() > 1 {
        out.push_str("- Later instructions from the user, in order:\n");
        for u in &users[1..] {
            out.push_str(&format!("{}\n", indent(u)));
        }
    }
    if !read.is_empty() {
        out.push_str(&format!("- Files read: {}\n", read.join(", ")));
    }
    if !changed.is_empty() {
        out.push_str(&format!("- Files changed: {}\n", changed.join(", ")));
    }
    if let Some(t) = todos {
        out.push_str(&format!("- The todo list as last shown:\n{}\n", indent(&t)));
    }
    out
}

const SUMMARY_HEAD: &str =
    "[The earlier part of this conversation was compacted to fit the context window.]";
const FACTS_HEAD: &str = "## Kept facts";

/// The request that asks the model for a summary of the older part.
pub fn summary_request(model: &str, older: &[Message], max_chars: usize) -> LlmRequest {
    // Tool output is the bulk of a transcript and matters least to a summary.
    let trimmed: Vec<Message> = older
        .iter()
        .cloned()
        .map(|mut m| {
            if let Message::ToolResult(r) = &mut m {
                for b in &mut r.content {
                    if let ContentBlock::Text { text } = b
                        && text.chars().count() > 1500
                    {
                        let n = text.chars().count();
                        let head: String = text.chars().take(1000).collect();
                        let tail: String = text.chars().skip(n - 300).collect();
                        *text =
                            format!("{head}\n[... {} characters left out ...]\n{tail}", n - 1300);
                    }
                }
            }
            m
        })
        .collect();
    let transcript = export(None, &trimmed, Format::Markdown);
    let transcript = if transcript.len() > max_chars {
        let cut = transcript.len() - max_chars;
        let start = (cut..transcript.len())
            .find(|i| transcript.is_char_boundary(*i))
            .unwrap_or(transcript.len());
        format!(
            "[... the oldest part of the transcript is left out ...]\n{}",
            &transcript[start..]
        )
    } else {
        transcript
    };
    LlmRequest {
        model: model.to_string(),
        system: Some(
            "You summarise the earlier part of a coding agent's conversation so that the agent can carry on \
without it. Write a concise summary: the goal, what has been done (files, commands, results), the current \
state, decisions and their reasons, problems met, and what remains to do. Keep exact names: files, \
functions, commands, error messages. Do not address the user; do not add advice."
                .into(),
        ),
        messages: vec![Message::user_text(format!(
            "Summarise this conversation transcript:\n\n{transcript}"
        ))],
        max_tokens: Some(4096),
        ..Default::default()
    }
}

/// The message that replaces the older part.
pub fn summary_message(summary: Option<&str>, replaced: usize, facts: &str) -> Message {
    let body = match summary {
        Some(s) => format!(
            "{SUMMARY_HEAD}\n\n## Summary of the earlier conversation\n\n{}\n\n{facts}",
            s.trim()
        ),
        None => format!(
            "{SUMMARY_HEAD}\n\n{replaced} earlier messages were dropped; read files again rather than relying on memory of them.\n\n{facts}"
        ),
    };
    Message::User {
        content: UserContent::Text(body),
        timestamp: Some(crate::session::now()),
    }
}

/// True for a provider error that says the input is too long; the words
/// of every provider ag knows are in [`crate::llm::error::is_context_overflow`].
pub fn is_overflow(error: &str) -> bool {
    crate::llm::error::is_context_overflow(error)
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let head: String = s.chars().take(max).collect();
    format!("{head} […]")
}

fn indent(s: &str) -> String {
    s.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::AssistantMessage;
    use serde_json::json;

    fn call(name: &str, path: &str) -> Message {
        Message::Assistant(AssistantMessage {
            content: vec![ContentBlock::ToolCall {
                id: format!("{name}{path}"),
                name: name.into(),
                arguments: json!({"file_path": path}),
            }],
            ..Default::default()
        })
    }

    #[test]
    fn the_original_task_names_its_attached_files_by_their_headers() {
        let file = format!("[Attached file `big.txt` (30 KiB)]\n{}", "x ".repeat(5000));
        let msgs = vec![Message::User {
            content: crate::protocol::UserContent::Blocks(vec![
                ContentBlock::Text {
                    text: "count the lines of big.txt".into(),
                },
                ContentBlock::Text { text: file },
            ]),
            timestamp: None,
        }];
        let f = facts(&msgs);
        assert!(
            f.contains("count the lines of big.txt\n    [Attached file `big.txt` (30 KiB)]\n"),
            "{f}"
        );
        assert!(!f.contains("x x"), "{f}");
    }

    #[test]
    fn facts_and_split() {
        let msgs = vec![
            Message::user_text("fix the parser"),
            call("read", "src/parse.rs"),
            call("edit", "src/parse.rs"),
            Message::user_text("also keep tabs"),
            call("read", "README.md"),
        ];
        let f = facts(&msgs);
        assert!(f.contains("fix the parser") && f.contains("also keep tabs"));
        assert!(f.contains("Files read: src/parse.rs, README.md"));
        assert!(f.contains("Files changed: src/parse.rs"));
        assert_eq!(split_point(&msgs, 10), Some(4));
        assert!(is_overflow(
            "prompt is too long: 210000 tokens > 200000 maximum"
        ));
    }
}
