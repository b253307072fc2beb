//! Builds the assistant message from a provider's stream and emits the
//! matching events as each piece arrives: the one place where content
//! blocks are opened, grown and closed, whatever the wire protocol.

use serde_json::Value;

use crate::protocol::{AssistantMessage, ContentBlock, LlmEvent, StopReason, Usage};

/// Accumulates the message and sends events to the sink.
pub struct Builder<'a> {
    msg: AssistantMessage,
    sink: &'a mut (dyn FnMut(LlmEvent) + Send),
    /// Raw argument text of tool calls, by content index; `None` once ended.
    tools: Vec<Option<String>>,
    /// The provider said why it stopped (or the stream is otherwise complete).
    pub stop: Option<StopReason>,
    /// A reason the answer is unusable although the stream ended (content filter).
    pub refusal: Option<String>,
    /// The provider's own message id, if it sent one.
    pub response_id: Option<String>,
    emitted: bool,
    /// A counter for ids the provider did not send.
    synthetic: usize,
}

impl<'a> Builder<'a> {
    /// A builder sending events to `sink`.
    pub fn new(sink: &'a mut (dyn FnMut(LlmEvent) + Send)) -> Builder<'a> {
        Builder {
            msg: AssistantMessage::default(),
            sink,
            tools: Vec::new(),
            stop: None,
            refusal: None,
            response_id: None,
            emitted: false,
            synthetic: 0,
        }
    }

    /// True once any content event went out (after which a retry would repeat it).
    pub fn has_output(&self) -> bool {
        self.emitted
    }

    /// Usage, for the parser to fill in.
    pub fn usage_mut(&mut self) -> &mut Usage {
        &mut self.msg.usage
    }

    /// The number of content blocks so far.
    pub fn len(&self) -> usize {
        self.msg.content.len()
    }

    /// True before any block.
    pub fn is_empty(&self) -> bool {
        self.msg.content.is_empty()
    }

    /// Sends an event that is not content (`start`, `done`, `error`).
    pub fn notify(&mut self, ev: LlmEvent) {
        (self.sink)(ev);
    }

    fn emit(&mut self, ev: LlmEvent) {
        self.emitted = true;
        (self.sink)(ev);
    }

    fn push_block(&mut self, block: ContentBlock) -> usize {
        self.msg.content.push(block);
        self.tools.push(None);
        self.msg.content.len() - 1
    }

    /// Opens an empty text block.
    pub fn open_text(&mut self) -> usize {
        self.push_block(ContentBlock::Text {
            text: String::new(),
        })
    }

    /// Opens an empty thinking block.
    pub fn open_thinking(&mut self) -> usize {
        self.push_block(ContentBlock::Thinking {
            thinking: String::new(),
            signature: None,
            redacted: false,
        })
    }

    /// Appends text to the last block when it is text, else to a new one.
    pub fn text(&mut self, delta: &str) {
        if delta.is_empty() {
            return;
        }
        let idx = match self.msg.content.last() {
            Some(ContentBlock::Text { .. }) => self.msg.content.len() - 1,
            _ => self.open_text(),
        };
        self.text_at(idx, delta);
    }

    /// Appends reasoning to the last block when it is thinking (and not
    /// yet signed), else to a new one.
    pub fn thinking(&mut self, delta: &str) {
        if delta.is_empty() {
            return;
        }
        let idx = match self.msg.content.last() {
            Some(ContentBlock::Thinking {
                signature: None, ..
            }) => self.msg.content.len() - 1,
            _ => self.open_thinking(),
        };
        self.thinking_at(idx, delta);
    }

    /// Appends text to block `idx`.
    pub fn text_at(&mut self, idx: usize, delta: &str) {
        if delta.is_empty() {
            return;
        }
        if let Some(ContentBlock::Text { text }) = self.msg.content.get_mut(idx) {
            text.push_str(delta);
            self.emit(LlmEvent::TextDelta {
                index: idx,
                delta: delta.to_string(),
            });
        }
    }

    /// Appends reasoning to block `idx`.
    pub fn thinking_at(&mut self, idx: usize, delta: &str) {
        if delta.is_empty() {
            return;
        }
        if let Some(ContentBlock::Thinking { thinking, .. }) = self.msg.content.get_mut(idx) {
            thinking.push_str(delta);
            self.emit(LlmEvent::ThinkingDelta {
                index: idx,
                delta: delta.to_string(),
            });
        }
    }

    /// Sets (or extends) the signature of thinking block `idx`.
    pub fn sign(&mut self, idx: usize, sig: &str, append: bool) {
        if let Some(ContentBlock::Thinking { signature, .. }) = self.msg.content.get_mut(idx) {
            match signature {
                Some(s) if append => s.push_str(sig),
                _ => *signature = Some(sig.to_string()),
            }
        }
    }

    /// Adds a thinking block the provider hid: only its signature counts.
    pub fn redacted_thinking(&mut self, signature: &str) -> usize {
        self.emitted = true;
        self.push_block(ContentBlock::Thinking {
            thinking: String::new(),
            signature: Some(signature.to_string()),
            redacted: true,
        })
    }

    /// Replaces the reasoning text of block `idx` when the stream only gave it whole.
    pub fn set_thinking_if_empty(&mut self, idx: usize, text: &str) {
        let empty = matches!(self.msg.content.get(idx), Some(ContentBlock::Thinking { thinking, .. }) if thinking.is_empty());
        if empty {
            self.thinking_at(idx, text);
        }
    }

    /// Sets the text of block `idx` when no delta gave it.
    pub fn set_text_if_empty(&mut self, idx: usize, text: &str) {
        let empty = matches!(self.msg.content.get(idx), Some(ContentBlock::Text { text }) if text.is_empty());
        if empty {
            self.text_at(idx, text);
        }
    }

    /// An id for a tool call the provider sent none for: stable for the
    /// same stream, so that recorded conversations replay identically.
    pub fn synthetic_id(&mut self, seed: &str) -> String {
        self.synthetic += 1;
        let h = xxhash_rust::xxh3::xxh3_64(
            format!(
                "{}|{}|{seed}",
                self.response_id.as_deref().unwrap_or(""),
                self.synthetic
            )
            .as_bytes(),
        );
        format!("call_{h:016x}")
    }

    /// Opens a tool call.
    pub fn tool_start(&mut self, id: &str, name: &str) -> usize {
        let idx = self.push_block(ContentBlock::ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: Value::Object(Default::default()),
        });
        self.tools[idx] = Some(String::new());
        self.emit(LlmEvent::ToolCallStart {
            index: idx,
            id: id.to_string(),
            name: name.to_string(),
        });
        idx
    }

    /// True while tool call `idx` is open.
    pub fn tool_open(&self, idx: usize) -> bool {
        matches!(self.tools.get(idx), Some(Some(_)))
    }

    /// Appends argument text to tool call `idx`.
    pub fn tool_args(&mut self, idx: usize, delta: &str) {
        if delta.is_empty() {
            return;
        }
        if let Some(Some(buf)) = self.tools.get_mut(idx) {
            buf.push_str(delta);
            self.emit(LlmEvent::ToolCallDelta {
                index: idx,
                delta: delta.to_string(),
            });
        }
    }

    /// The argument text received so far for tool call `idx`.
    pub fn tool_args_text(&self, idx: usize) -> Option<&str> {
        self.tools.get(idx)?.as_deref()
    }

    /// Closes tool call `idx`, parsing its arguments; `whole` (arguments
    /// the provider sent as an object) wins over the streamed text.
    pub fn tool_end(&mut self, idx: usize, whole: Option<Value>) {
        let Some(Some(raw)) = self.tools.get_mut(idx).map(Option::take) else {
            return;
        };
        let parsed = match whole {
            Some(v) => v,
            None => parse_arguments(&raw),
        };
        if let Some(ContentBlock::ToolCall {
            id,
            name,
            arguments,
        }) = self.msg.content.get_mut(idx)
        {
            *arguments = parsed.clone();
            let ev = LlmEvent::ToolCallEnd {
                index: idx,
                id: id.clone(),
                name: name.clone(),
                arguments: parsed,
            };
            self.emit(ev);
        }
    }

    /// Closes every open tool call.
    pub fn end_all_tools(&mut self) {
        for idx in 0..self.tools.len() {
            if self.tool_open(idx) {
                self.tool_end(idx, None);
            }
        }
    }

    /// The provider's content filter stopped the answer (`detail` is how
    /// its stream said so): a refusal for the caller, and the turn ends as
    /// an error.
    pub fn filtered(&mut self, provider: &str, detail: &str) -> StopReason {
        self.refusal = Some(format!(
            "{provider} stopped the answer with its content filter ({detail})"
        ));
        StopReason::Error
    }

    /// The stop reason of a stream that gave none of the special ones:
    /// tool use when it asked for tools, else a plain stop; and the
    /// model's own refusal text, when it sent one, said as one.
    pub fn plain_stop(&mut self, refusal: &str) -> StopReason {
        if !refusal.is_empty() {
            self.refusal = Some(format!("the model refused: {refusal}"));
        }
        if self.has_tool_calls() {
            StopReason::ToolUse
        } else {
            StopReason::Stop
        }
    }

    /// True when the message has a tool call.
    pub fn has_tool_calls(&self) -> bool {
        self.msg
            .content
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolCall { .. }))
    }

    /// The message so far (open tool calls closed), with empty blocks dropped.
    pub fn take_message(&mut self) -> AssistantMessage {
        self.end_all_tools();
        let mut msg = std::mem::take(&mut self.msg);
        msg.content.retain(|b| match b {
            ContentBlock::Text { text } => !text.is_empty(),
            ContentBlock::Thinking {
                thinking,
                signature,
                ..
            } => !thinking.is_empty() || signature.is_some(),
            _ => true,
        });
        self.tools.clear();
        msg
    }
}

/// Tool call arguments from their streamed text: `{}` when empty, the
/// parsed object, or, when the text is not JSON (cut off by the output
/// limit), the raw text as a string so the loop can tell the model.
pub fn parse_arguments(raw: &str) -> Value {
    let t = raw.trim();
    if t.is_empty() {
        return Value::Object(Default::default());
    }
    match serde_json::from_str::<Value>(t) {
        // Some servers double-encode the arguments as a JSON string.
        Ok(Value::String(inner)) => match serde_json::from_str::<Value>(&inner) {
            Ok(v @ Value::Object(_)) => v,
            _ => Value::String(inner),
        },
        Ok(v) => v,
        Err(_) => Value::String(raw.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_and_events() {
        let mut events = Vec::new();
        let mut sink = |e: LlmEvent| events.push(e);
        let mut b = Builder::new(&mut sink);
        b.thinking("hmm");
        b.text("he");
        b.text("llo");
        let t = b.tool_start("c1", "read");
        b.tool_args(t, "{\"a\":");
        b.tool_args(t, "1}");
        b.text("");
        let msg = b.take_message();
        assert_eq!(msg.text(), "hello");
        assert_eq!(msg.content.len(), 3);
        let (_, _, args) = msg.tool_calls().next().unwrap();
        assert_eq!(args, &serde_json::json!({"a": 1}));
        assert!(matches!(
            events.last(),
            Some(LlmEvent::ToolCallEnd { index: 2, .. })
        ));
        assert_eq!(events.len(), 7);
    }

    #[test]
    fn arguments_parse_leniently() {
        assert_eq!(parse_arguments(""), serde_json::json!({}));
        assert_eq!(
            parse_arguments("\"{\\\"a\\\":1}\""),
            serde_json::json!({"a": 1})
        );
        assert_eq!(parse_arguments("{\"a\":"), Value::String("{\"a\":".into()));
    }
}
