//! Anthropic Messages: content blocks by index, thinking with signatures
//! (and redacted thinking), tool use with streamed JSON input, prompt
//! caching marks on the system prompt and the last user turn, `ping`,
//! and `error` events in the middle of a stream.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Deserialize;

use serde_json::{Map, Value, json};

use super::super::assemble::Builder;
use super::super::convert::{self, IdRule};
use super::super::error::{Failure, classify_stream_error};
use super::super::frames::Frame;
use super::stream::{Complete, Names, StreamParser, json_of, u64_at};
use super::{HttpRequest, Target, join_url, max_tokens, native_schema};
use crate::protocol::{ContentBlock, LlmRequest, Message, Reasoning, StopReason, ToolChoice};

const ID_RULE: IdRule = IdRule::Word(64);

/// Thinking budget per effort level.
fn budget(r: Reasoning) -> Option<u64> {
    match r {
        Reasoning::Off => None,
        Reasoning::Low => Some(2_048),
        Reasoning::Medium => Some(8_192),
        Reasoning::High => Some(16_384),
    }
}

/// The request.
pub fn request(t: &Target<'_>, req: &LlmRequest) -> HttpRequest {
    let mut messages: Vec<Value> = Vec::new();
    let prepared = convert::prepare(&req.messages);
    for m in &prepared {
        match m {
            Message::User { content, .. } => {
                let blocks: Vec<Value> = convert::user_blocks(content)
                    .iter()
                    .filter_map(user_block)
                    .collect();
                if !blocks.is_empty() {
                    push(&mut messages, "user", blocks);
                }
            }
            Message::Assistant(a) => {
                let same = convert::same_model(a, t.model);
                let mut blocks = Vec::new();
                for b in &a.content {
                    match b {
                        ContentBlock::Text { text } if !text.is_empty() => {
                            blocks.push(json!({"type": "text", "text": text}));
                        }
                        ContentBlock::Thinking {
                            thinking,
                            signature,
                            redacted,
                        } => match (same, signature) {
                            (true, Some(sig)) if *redacted => {
                                blocks.push(json!({"type": "redacted_thinking", "data": sig}));
                            }
                            (true, Some(sig)) => blocks.push(
                                json!({"type": "thinking", "thinking": thinking, "signature": sig}),
                            ),
                            _ if !thinking.is_empty() => blocks.push(
                                json!({"type": "text", "text": convert::thinking_as_text(thinking)}),
                            ),
                            _ => {}
                        },
                        ContentBlock::ToolCall {
                            id,
                            name,
                            arguments,
                        } => {
                            let input = if arguments.is_object() {
                                arguments.clone()
                            } else {
                                json!({})
                            };
                            blocks.push(json!({
                                "type": "tool_use",
                                "id": convert::normalize_id(id, ID_RULE),
                                "name": name,
                                "input": input,
                            }));
                        }
                        _ => {}
                    }
                }
                if !blocks.is_empty() {
                    push(&mut messages, "assistant", blocks);
                }
            }
            Message::ToolResult(r) => {
                let mut content = vec![json!({"type": "text", "text": convert::result_text(r)})];
                for (mime, data) in convert::images(&r.content) {
                    content.push(image(mime, data));
                }
                let block = json!({
                    "type": "tool_result",
                    "tool_use_id": convert::normalize_id(&r.tool_call_id, ID_RULE),
                    "content": content,
                    "is_error": r.is_error,
                });
                push(&mut messages, "user", vec![block]);
            }
        }
    }
    // Cache everything up to the last user turn: the next call re-reads it.
    if let Some(last) = messages
        .iter_mut()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_array_mut())
        .and_then(|c| c.last_mut())
        && let Some(obj) = last.as_object_mut()
    {
        obj.insert("cache_control".into(), json!({"type": "ephemeral"}));
    }
    // Anthropic requires a limit: the model's assumed one when nothing better is known.
    let mut max = max_tokens(t, req).unwrap_or(t.model.max_output.max(1));
    let mut body = Map::new();
    body.insert("model".into(), json!(t.model.id));
    let thinking = req.reasoning.and_then(budget).map(|want| {
        if max <= want + 1_024 {
            max = (want + 4_096).min(t.model.max_output.max(want + 1_024));
        }
        want.min(max.saturating_sub(1_024)).max(1_024)
    });
    body.insert("max_tokens".into(), json!(max));
    body.insert("stream".into(), json!(true));
    if let Some(system) = req.system.as_deref().filter(|s| !s.is_empty()) {
        body.insert(
            "system".into(),
            json!([{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]),
        );
    }
    body.insert("messages".into(), Value::Array(messages));
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|d| json!({"name": d.name, "description": d.description, "input_schema": d.parameters}))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        if req.tool_choice == Some(ToolChoice::Required) {
            body.insert("tool_choice".into(), json!({"type": "any"}));
        }
    }
    if let Some(b) = thinking {
        body.insert(
            "thinking".into(),
            json!({"type": "enabled", "budget_tokens": b}),
        );
    } else if let Some(temp) = req.temperature {
        // Anthropic refuses a temperature together with thinking.
        body.insert("temperature".into(), json!(temp));
    }
    // Structured outputs, generally available: no beta header (the beta's
    // `output_format` moved here).
    if let Some((schema, _)) = native_schema(t, req) {
        body.insert(
            "output_config".into(),
            json!({"format": {"type": "json_schema", "schema": schema}}),
        );
    }
    let base = t.base_url.trim_end_matches('/');
    let url = if base.ends_with("/v1") {
        join_url(base, "messages")
    } else {
        join_url(base, "v1/messages")
    };
    let mut headers = vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("anthropic-version".into(), "2023-06-01".into()),
    ];
    if thinking.is_some() && !req.tools.is_empty() {
        headers.push((
            "anthropic-beta".into(),
            "interleaved-thinking-2025-05-14".into(),
        ));
    }
    if let Some(key) = t.key {
        headers.push(("x-api-key".into(), key.to_string()));
    }
    HttpRequest {
        url,
        headers,
        body: Value::Object(body),
    }
}

fn image(mime: &str, data: &str) -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}})
}

fn user_block(b: &ContentBlock) -> Option<Value> {
    match b {
        ContentBlock::Text { text } if !text.is_empty() => {
            Some(json!({"type": "text", "text": text}))
        }
        ContentBlock::Image { data, mime_type } => Some(image(mime_type, data)),
        _ => None,
    }
}

/// Appends blocks, merging into the previous message of the same role
/// (tool results of parallel calls go back in one user turn).
fn push(messages: &mut Vec<Value>, role: &str, blocks: Vec<Value>) {
    if let Some(last) = messages.last_mut()
        && last["role"] == role
        && let Some(content) = last["content"].as_array_mut()
    {
        content.extend(blocks);
        return;
    }
    messages.push(json!({"role": role, "content": blocks}));
}

/// The parser.
pub struct AnthropicParser {
    names: Names,
    /// Provider block index -> our block index.
    blocks: HashMap<u64, usize>,
    /// Tool input given whole in `content_block_start`.
    start_input: HashMap<usize, Value>,
}

impl AnthropicParser {
    /// A parser for one response.
    pub fn new(names: Names) -> AnthropicParser {
        AnthropicParser {
            names,
            blocks: HashMap::new(),
            start_input: HashMap::new(),
        }
    }
}

fn read_usage(u: &Value, b: &mut Builder<'_>) {
    let usage = b.usage_mut();
    if let Some(n) = u64_at(u, &["input_tokens"]) {
        usage.input = n;
    }
    if let Some(n) = u64_at(u, &["output_tokens"]) {
        usage.output = n;
    }
    if let Some(n) = u64_at(u, &["cache_read_input_tokens"]) {
        usage.cache_read = n;
    }
    if let Some(n) = u64_at(u, &["cache_creation_input_tokens"]) {
        usage.cache_write = n;
    }
}

/// `content_block_delta`, the event of which a long answer is mostly
/// made, typed so that it parses without building maps.
#[derive(Deserialize)]
struct BlockDelta<'a> {
    #[serde(rename = "type", borrow)]
    ty: Cow<'a, str>,
    #[serde(default)]
    index: Option<u64>,
    #[serde(default, borrow)]
    delta: Option<DeltaBody<'a>>,
}

#[derive(Deserialize)]
struct DeltaBody<'a> {
    #[serde(rename = "type", borrow)]
    ty: Cow<'a, str>,
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    thinking: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    signature: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    partial_json: Option<Cow<'a, str>>,
}

impl AnthropicParser {
    /// Handles a `content_block_delta` through the typed path; false when
    /// the frame is something else.
    fn fast_delta(&mut self, data: &str, b: &mut Builder<'_>) -> bool {
        let Ok(ev) = serde_json::from_str::<BlockDelta<'_>>(data) else {
            return false;
        };
        if ev.ty != "content_block_delta" {
            return false;
        }
        let (Some(&i), Some(d)) = (ev.index.and_then(|x| self.blocks.get(&x)), ev.delta) else {
            return true;
        };
        match d.ty.as_ref() {
            "text_delta" => b.text_at(i, d.text.as_deref().unwrap_or("")),
            "thinking_delta" => b.thinking_at(i, d.thinking.as_deref().unwrap_or("")),
            "signature_delta" => b.sign(i, d.signature.as_deref().unwrap_or(""), true),
            "input_json_delta" => b.tool_args(i, d.partial_json.as_deref().unwrap_or("")),
            _ => {}
        }
        true
    }
}

impl StreamParser for AnthropicParser {
    fn frame(&mut self, frame: &Frame, b: &mut Builder<'_>) -> Result<Complete, Failure> {
        let data = frame.data.trim();
        if data.is_empty() {
            return Ok(false);
        }
        if matches!(frame.event.as_deref(), None | Some("content_block_delta"))
            && self.fast_delta(data, b)
        {
            return Ok(false);
        }
        let v = json_of(frame, &self.names)?;
        let ty = v
            .get("type")
            .and_then(Value::as_str)
            .or(frame.event.as_deref())
            .unwrap_or("");
        match ty {
            "message_start" => {
                let m = &v["message"];
                if let Some(id) = m.get("id").and_then(Value::as_str) {
                    b.response_id = Some(id.to_string());
                }
                read_usage(&m["usage"], b);
            }
            "content_block_start" => {
                let index = v["index"].as_u64().unwrap_or(0);
                let cb = &v["content_block"];
                let ours = match cb["type"].as_str().unwrap_or("") {
                    "text" => {
                        let i = b.open_text();
                        b.text_at(i, cb["text"].as_str().unwrap_or(""));
                        Some(i)
                    }
                    "thinking" => {
                        let i = b.open_thinking();
                        b.thinking_at(i, cb["thinking"].as_str().unwrap_or(""));
                        if let Some(sig) = cb["signature"].as_str().filter(|s| !s.is_empty()) {
                            b.sign(i, sig, false);
                        }
                        Some(i)
                    }
                    "redacted_thinking" => {
                        Some(b.redacted_thinking(cb["data"].as_str().unwrap_or("")))
                    }
                    "tool_use" => {
                        let id = cb["id"].as_str().unwrap_or("").to_string();
                        let id = if id.is_empty() {
                            b.synthetic_id("tool_use")
                        } else {
                            id
                        };
                        let i = b.tool_start(&id, cb["name"].as_str().unwrap_or(""));
                        if let Some(input) = cb
                            .get("input")
                            .filter(|x| x.as_object().is_some_and(|o| !o.is_empty()))
                        {
                            self.start_input.insert(i, input.clone());
                        }
                        Some(i)
                    }
                    // Server tools (web search) run at Anthropic; not ours to run.
                    _ => None,
                };
                if let Some(i) = ours {
                    self.blocks.insert(index, i);
                }
            }
            "content_block_delta" => {
                let Some(&i) = v["index"].as_u64().and_then(|x| self.blocks.get(&x)) else {
                    return Ok(false);
                };
                let d = &v["delta"];
                match d["type"].as_str().unwrap_or("") {
                    "text_delta" => b.text_at(i, d["text"].as_str().unwrap_or("")),
                    "thinking_delta" => b.thinking_at(i, d["thinking"].as_str().unwrap_or("")),
                    "signature_delta" => b.sign(i, d["signature"].as_str().unwrap_or(""), true),
                    "input_json_delta" => b.tool_args(i, d["partial_json"].as_str().unwrap_or("")),
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(&i) = v["index"].as_u64().and_then(|x| self.blocks.get(&x))
                    && b.tool_open(i)
                {
                    let streamed = b.tool_args_text(i).is_some_and(|s| !s.trim().is_empty());
                    let whole = self.start_input.remove(&i).filter(|_| !streamed);
                    b.tool_end(i, whole);
                }
            }
            "message_delta" => {
                if let Some(u) = v.get("usage") {
                    read_usage(u, b);
                }
                if let Some(r) = v["delta"]["stop_reason"].as_str() {
                    b.stop = Some(match r {
                        "tool_use" => StopReason::ToolUse,
                        "max_tokens" | "model_context_window_exceeded" => StopReason::Length,
                        "refusal" => {
                            b.refusal = Some(format!(
                                "{} declined to answer (stop_reason refusal)",
                                self.names.provider
                            ));
                            StopReason::Error
                        }
                        _ => StopReason::Stop,
                    });
                }
            }
            "message_stop" => {
                b.end_all_tools();
                if b.stop.is_none() {
                    b.stop = Some(if b.has_tool_calls() {
                        StopReason::ToolUse
                    } else {
                        StopReason::Stop
                    });
                }
                return Ok(true);
            }
            "error" => {
                return Err(classify_stream_error(
                    &self.names.provider,
                    &self.names.model,
                    &v,
                ));
            }
            _ => {} // ping and future events
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use crate::llm::parse::parse_chunks;
    use crate::llm::providers::Api;
    use crate::protocol::StopReason;

    #[test]
    fn stop_reason_refusal_is_a_refusal_not_an_answer() {
        let body = concat!(
            "event: message_start\n",
            "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\n\n",
            "event: message_delta\n",
            "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"refusal\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":3}}\n\n",
            "event: message_stop\n",
            "data: {\"type\":\"message_stop\"}\n\n",
        );
        let (msg, _, failure) = parse_chunks(Api::Anthropic, [body.as_bytes()]);
        assert_eq!(msg.stop_reason, StopReason::Refusal);
        let f = failure.unwrap();
        assert!(f.message.contains("refusal"), "{}", f.message);
        assert_eq!(msg.error_message.as_deref(), Some(f.message.as_str()));
    }
}
