//! Preparing a conversation for any provider: dropping failed turns,
//! answering tool calls that never got a result, telling whether an
//! assistant message came from the target model (so its thinking and
//! signatures can go back as they are), and making tool call ids
//! acceptable to the target.

use std::collections::HashSet;

use crate::protocol::{
    AssistantMessage, ContentBlock, Message, StopReason, ToolResultMessage, UserContent,
};

use super::models::ModelInfo;

/// The conversation with failed assistant turns removed (their partial
/// tool calls would have no results), results of calls that are no longer
/// there dropped, and a failed result added for every call left unanswered
/// (every provider refuses a tool call without its result).
pub fn prepare(messages: &[Message]) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    let mut known: HashSet<String> = HashSet::new();
    let mut pending: Vec<(String, String)> = Vec::new();
    let flush = |out: &mut Vec<Message>, pending: &mut Vec<(String, String)>| {
        for (id, name) in pending.drain(..) {
            out.push(Message::ToolResult(ToolResultMessage {
                tool_call_id: id,
                tool_name: name,
                content: vec![ContentBlock::Text {
                    text: "No result was provided for this tool call.".into(),
                }],
                details: serde_json::Value::Null,
                is_error: true,
                timestamp: None,
            }));
        }
    };
    for m in messages {
        match m {
            Message::Assistant(a) => {
                flush(&mut out, &mut pending);
                if matches!(
                    a.stop_reason,
                    StopReason::Error | StopReason::Refusal | StopReason::Aborted
                ) {
                    continue;
                }
                for (id, name, _) in a.tool_calls() {
                    known.insert(id.to_string());
                    pending.push((id.to_string(), name.to_string()));
                }
                out.push(m.clone());
            }
            Message::ToolResult(r) => {
                if !known.contains(&r.tool_call_id) {
                    continue;
                }
                pending.retain(|(id, _)| *id != r.tool_call_id);
                out.push(m.clone());
            }
            Message::User { .. } => {
                flush(&mut out, &mut pending);
                out.push(m.clone());
            }
        }
    }
    flush(&mut out, &mut pending);
    out
}

/// True when the message was produced by the target model through the
/// same API, so that its reasoning signatures are valid there.
pub fn same_model(a: &AssistantMessage, target: &ModelInfo) -> bool {
    a.model.as_deref() == Some(target.full_id().as_str())
        && a.api.as_deref() == Some(target.api.as_str())
}

/// Reasoning from another model, given to the target as plain text.
pub fn thinking_as_text(thinking: &str) -> String {
    format!("<thinking>\n{thinking}\n</thinking>")
}

/// The text of a tool result's content, images left out.
pub fn result_text(r: &ToolResultMessage) -> String {
    let text = r
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    if text.is_empty() {
        if r.is_error {
            "(the tool failed without a message)".into()
        } else {
            "(no output)".into()
        }
    } else {
        text
    }
}

/// The images of some content, as (mime type, base64 data).
pub fn images(blocks: &[ContentBlock]) -> Vec<(&str, &str)> {
    blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Image { data, mime_type } => Some((mime_type.as_str(), data.as_str())),
            _ => None,
        })
        .collect()
}

/// A user message's blocks (plain text becomes one text block).
pub fn user_blocks(content: &UserContent) -> Vec<ContentBlock> {
    match content {
        UserContent::Text(t) => vec![ContentBlock::Text { text: t.clone() }],
        UserContent::Blocks(b) => b.clone(),
    }
}

/// What tool call ids a provider accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdRule {
    /// Letters, digits, `_` and `-`, at most this many.
    Word(usize),
    /// Exactly nine letters or digits (Mistral).
    NineAlnum,
}

/// Maps an id to one the target accepts: unchanged when already valid,
/// else a deterministic replacement, so that a call and its result
/// (converted separately) still match.
pub fn normalize_id(id: &str, rule: IdRule) -> String {
    let hash = xxhash_rust::xxh3::xxh3_64(id.as_bytes());
    match rule {
        IdRule::Word(max) => {
            let ok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
            if !id.is_empty() && id.len() <= max && id.chars().all(ok) {
                return id.to_string();
            }
            let clean: String = id.chars().map(|c| if ok(c) { c } else { '_' }).collect();
            if !clean.is_empty() && clean.len() <= max && clean != id {
                // Still distinct from other ids: keep a short hash.
                let keep = max.saturating_sub(9).min(clean.len());
                return format!("{}_{:08x}", &clean[..keep], hash as u32);
            }
            let keep = max.saturating_sub(17).min(clean.len());
            format!("{}_{hash:016x}", &clean[..keep])
        }
        IdRule::NineAlnum => {
            if id.len() == 9 && id.chars().all(|c| c.is_ascii_alphanumeric()) {
                return id.to_string();
            }
            const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
            let mut n = hash;
            (0..9)
                .map(|_| {
                    let c = DIGITS[(n % 62) as usize] as char;
                    n /= 62;
                    c
                })
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn assistant_with_call(id: &str, stop: StopReason) -> Message {
        Message::Assistant(AssistantMessage {
            content: vec![ContentBlock::ToolCall {
                id: id.into(),
                name: "read".into(),
                arguments: json!({}),
            }],
            stop_reason: stop,
            ..Default::default()
        })
    }

    #[test]
    fn orphans_are_answered_and_failed_turns_dropped() {
        let msgs = vec![
            Message::user_text("hi"),
            assistant_with_call("a", StopReason::ToolUse),
            Message::user_text("go on"),
            assistant_with_call("b", StopReason::Aborted),
            Message::ToolResult(ToolResultMessage {
                tool_call_id: "b".into(),
                tool_name: "read".into(),
                content: vec![],
                details: json!(null),
                is_error: false,
                timestamp: None,
            }),
        ];
        let out = prepare(&msgs);
        assert_eq!(out.len(), 4);
        match &out[2] {
            Message::ToolResult(r) => assert!(r.tool_call_id == "a" && r.is_error),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ids_are_made_acceptable_consistently() {
        assert_eq!(normalize_id("toolu_01abc", IdRule::Word(64)), "toolu_01abc");
        let long = "call_abc|fc_0123456789abcdef0123456789abcdef0123456789abcdef0123456789";
        let a = normalize_id(long, IdRule::Word(40));
        assert!(
            a.len() <= 40
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        );
        assert_eq!(a, normalize_id(long, IdRule::Word(40)));
        assert_ne!(
            normalize_id("a|b", IdRule::Word(64)),
            normalize_id("a_b", IdRule::Word(64))
        );
        let m = normalize_id("call_c91SqDXlYFuETYv8mUHzz6pp", IdRule::NineAlnum);
        assert_eq!(m.len(), 9);
        assert!(m.chars().all(|c| c.is_ascii_alphanumeric()));
    }
}
