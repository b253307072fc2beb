//! OpenAI Chat Completions, and the many servers that speak it (Ollama,
//! vLLM, llama.cpp, LM Studio, OpenRouter, Groq, DeepSeek, xAI, Mistral).
//! Their differences are handled here: the output limit field, usage on
//! request (`stream_options`), reasoning in `reasoning_content` or
//! `reasoning`, tool call arguments in one chunk or many, with or without
//! an `index`, and usage in odd places.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::super::assemble::Builder;
use super::super::convert::{self, IdRule};
use super::super::error::{Failure, classify_stream_error};
use super::super::frames::Frame;
use super::super::structured;
use super::stream::{Complete, Names, StreamParser, json_of, u64_at};
use super::{
    HttpRequest, Target, arguments_text, data_url, effort, join_url, max_tokens, native_schema,
};
use crate::protocol::{ContentBlock, LlmRequest, Message, StopReason, ToolChoice, Usage};

/// The request.
pub fn request(t: &Target<'_>, req: &LlmRequest) -> HttpRequest {
    let compat = &t.provider.compat;
    let rule = if compat.short_tool_ids {
        IdRule::NineAlnum
    } else {
        IdRule::Word(40)
    };
    let mut messages = Vec::new();
    if let Some(system) = req.system.as_deref().filter(|s| !s.is_empty()) {
        // OpenAI's reasoning models take the system prompt as `developer`.
        let role = if t.provider.id == "openai" && t.model.reasoning {
            "developer"
        } else {
            "system"
        };
        messages.push(json!({"role": role, "content": system}));
    }
    let prepared = convert::prepare(&req.messages);
    let mut pending_images: Vec<Value> = Vec::new();
    for m in &prepared {
        if !matches!(m, Message::ToolResult(_)) && !pending_images.is_empty() {
            messages.push(images_message(std::mem::take(&mut pending_images)));
        }
        match m {
            Message::User { content, .. } => {
                let blocks = convert::user_blocks(content);
                if convert::images(&blocks).is_empty() {
                    let text = content.text();
                    messages.push(json!({"role": "user", "content": text}));
                } else {
                    let parts: Vec<Value> = blocks
                        .iter()
                        .filter_map(|b| match b {
                            ContentBlock::Text { text } => {
                                Some(json!({"type": "text", "text": text}))
                            }
                            ContentBlock::Image { data, mime_type } => Some(json!({
                                "type": "image_url",
                                "image_url": {"url": data_url(mime_type, data)}
                            })),
                            _ => None,
                        })
                        .collect();
                    messages.push(json!({"role": "user", "content": parts}));
                }
            }
            Message::Assistant(a) => {
                let same = convert::same_model(a, t.model);
                let mut text = String::new();
                let mut calls = Vec::new();
                for b in &a.content {
                    match b {
                        ContentBlock::Text { text: t } => text.push_str(t),
                        // The model's own reasoning is not sent back (DeepSeek
                        // refuses it); another model's becomes text.
                        ContentBlock::Thinking { thinking, .. }
                            if !same && !thinking.is_empty() =>
                        {
                            if !text.is_empty() {
                                text.push_str("\n\n");
                            }
                            text.push_str(&convert::thinking_as_text(thinking));
                        }
                        ContentBlock::ToolCall {
                            id,
                            name,
                            arguments,
                        } => calls.push(json!({
                            "id": convert::normalize_id(id, rule),
                            "type": "function",
                            "function": {"name": name, "arguments": arguments_text(arguments)},
                        })),
                        _ => {}
                    }
                }
                if text.is_empty() && calls.is_empty() {
                    continue;
                }
                let mut msg = Map::new();
                msg.insert("role".into(), json!("assistant"));
                if !text.is_empty() || calls.is_empty() {
                    msg.insert("content".into(), json!(text));
                }
                if !calls.is_empty() {
                    msg.insert("tool_calls".into(), Value::Array(calls));
                }
                messages.push(Value::Object(msg));
            }
            Message::ToolResult(r) => {
                let mut msg = json!({
                    "role": "tool",
                    "tool_call_id": convert::normalize_id(&r.tool_call_id, rule),
                    "content": convert::result_text(r),
                });
                if compat.short_tool_ids {
                    // Mistral wants the tool's name on its result.
                    msg["name"] = json!(r.tool_name);
                }
                messages.push(msg);
                for (mime, data) in convert::images(&r.content) {
                    pending_images.push(
                        json!({"type": "image_url", "image_url": {"url": data_url(mime, data)}}),
                    );
                }
            }
        }
    }
    if !pending_images.is_empty() {
        messages.push(images_message(pending_images));
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(t.model.id));
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), json!(true));
    if compat.stream_usage {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if let Some(max) = max_tokens(t, req) {
        let field = if compat.max_completion_tokens {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body.insert(field.into(), json!(max));
    }
    if let Some(temp) = req.temperature {
        body.insert("temperature".into(), json!(temp));
    }
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|d| {
                json!({"type": "function", "function": {
                    "name": d.name, "description": d.description, "parameters": d.parameters
                }})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        if req.tool_choice == Some(ToolChoice::Required) {
            body.insert("tool_choice".into(), json!("required"));
        }
    }
    if let Some(level) = req.reasoning.and_then(effort) {
        match compat.reasoning_effort.as_str() {
            "flat" => {
                body.insert("reasoning_effort".into(), json!(level));
            }
            "object" => {
                body.insert("reasoning".into(), json!({"effort": level}));
            }
            _ => {}
        }
    }
    if compat.store_false {
        body.insert("store".into(), json!(false));
    }
    if let Some((schema, strict)) = native_schema(t, req) {
        body.insert(
            "response_format".into(),
            json!({"type": "json_schema", "json_schema": {
                "name": structured::schema_name(schema), "schema": schema, "strict": strict}}),
        );
    }
    let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
    if let Some(key) = t.key {
        headers.push(("authorization".into(), format!("Bearer {key}")));
    }
    HttpRequest {
        url: join_url(t.base_url, "chat/completions"),
        headers,
        body: Value::Object(body),
    }
}

fn images_message(parts: Vec<Value>) -> Value {
    let mut content =
        vec![json!({"type": "text", "text": "Images returned by the tool calls above:"})];
    content.extend(parts);
    json!({"role": "user", "content": content})
}

/// One tool call being streamed.
#[derive(Debug, Default)]
struct Call {
    index: Option<u64>,
    id: String,
    name: String,
    /// Arguments received before the name (and so before the block opened).
    held: String,
    /// Arguments sent whole as an object.
    whole: Option<Value>,
    block: Option<usize>,
}

/// The parser.
pub struct ChatParser {
    names: Names,
    calls: Vec<Call>,
    finish: Option<String>,
    done: bool,
    refusal: String,
}

impl ChatParser {
    /// A parser for one response.
    pub fn new(names: Names) -> ChatParser {
        ChatParser {
            names,
            calls: Vec::new(),
            finish: None,
            done: false,
            refusal: String::new(),
        }
    }

    fn tool_delta(&mut self, tc: &Value, b: &mut Builder<'_>) {
        let index = tc.get("index").and_then(Value::as_u64);
        let id = tc
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let func = tc.get("function").unwrap_or(tc);
        let name = func.get("name").and_then(Value::as_str).unwrap_or("");
        let pos = match (index, id) {
            (Some(i), _) => self
                .calls
                .iter()
                .rposition(|c| c.index == Some(i))
                // Some servers number every call 0: a new id is a new call.
                .filter(|&p| match id {
                    Some(id) => self.calls[p].id.is_empty() || self.calls[p].id == id,
                    None => true,
                }),
            (None, Some(id)) => self.calls.iter().rposition(|c| c.id == id),
            (None, None) => self.calls.len().checked_sub(1),
        };
        let pos = match pos {
            Some(p) => p,
            None => {
                self.calls.push(Call {
                    index,
                    ..Default::default()
                });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[pos];
        if let Some(id) = id
            && call.id.is_empty()
        {
            call.id = id.to_string();
        }
        if call.name.is_empty() && !name.is_empty() {
            call.name = name.to_string();
        }
        match func.get("arguments") {
            Some(Value::String(s)) => match call.block {
                Some(idx) => b.tool_args(idx, s),
                None => call.held.push_str(s),
            },
            Some(v @ Value::Object(_)) => call.whole = Some(v.clone()),
            _ => {}
        }
        if call.block.is_none() && !call.name.is_empty() {
            open(call, b);
        }
    }

    fn delta(&mut self, delta: &Delta<'_>, b: &mut Builder<'_>) {
        let reasoning = [
            &delta.reasoning_content,
            &delta.reasoning,
            &delta.reasoning_text,
        ]
        .into_iter()
        .find_map(|v| v.as_ref().and_then(Content::text).filter(|s| !s.is_empty()));
        if let Some(r) = reasoning {
            b.thinking(r);
        }
        match &delta.content {
            Some(Content::Text(s)) => b.text(s),
            // Mistral's reasoning models send typed parts.
            Some(Content::Parts(parts)) => {
                for p in parts {
                    match p.get("type").and_then(Value::as_str) {
                        Some("thinking") => {
                            for t in p
                                .get("thinking")
                                .and_then(Value::as_array)
                                .into_iter()
                                .flatten()
                            {
                                if let Some(s) = t.get("text").and_then(Value::as_str) {
                                    b.thinking(s);
                                }
                            }
                        }
                        _ => {
                            if let Some(s) = p.get("text").and_then(Value::as_str) {
                                b.text(s);
                            }
                        }
                    }
                }
            }
            _ => {}
        }
        // A refusal is not answer text: it ends the call as an error.
        if let Some(r) = delta.refusal.as_deref().and_then(Value::as_str) {
            self.refusal.push_str(r);
        }
        for tc in delta.tool_calls.iter().flatten() {
            self.tool_delta(tc, b);
        }
        if let Some(fc) = delta.function_call.as_deref().filter(|f| f.is_object()) {
            let legacy = json!({"index": 0, "function": fc});
            self.tool_delta(&legacy, b);
        }
    }

    fn close(&mut self, b: &mut Builder<'_>) {
        for call in &mut self.calls {
            if call.block.is_none() {
                open(call, b);
            }
            if let Some(idx) = call.block
                && b.tool_open(idx)
            {
                let whole = call.whole.take();
                if let Some(w) = &whole
                    && b.tool_args_text(idx).is_some_and(str::is_empty)
                {
                    b.tool_args(idx, &w.to_string());
                }
                b.tool_end(idx, whole);
            }
        }
        let reason = self.finish.as_deref().unwrap_or("stop");
        let stop = match reason {
            "length" => StopReason::Length,
            "tool_calls" | "function_call" => StopReason::ToolUse,
            "content_filter" => b.filtered(&self.names.provider, "finish_reason content_filter"),
            _ => StopReason::Stop,
        };
        let plain = b.plain_stop(&self.refusal);
        b.stop = Some(if stop == StopReason::Stop {
            plain
        } else {
            stop
        });
    }
}

fn open(call: &mut Call, b: &mut Builder<'_>) {
    if call.id.is_empty() {
        call.id = b.synthetic_id(&call.name);
    }
    let idx = b.tool_start(&call.id, &call.name);
    let held = std::mem::take(&mut call.held);
    b.tool_args(idx, &held);
    call.block = Some(idx);
}

fn read_usage(u: &Value, out: &mut Usage) {
    let prompt = u64_at(u, &["prompt_tokens"]).unwrap_or(0);
    let cached = u64_at(u, &["prompt_tokens_details", "cached_tokens"])
        .or_else(|| u64_at(u, &["prompt_cache_hit_tokens"]))
        .or_else(|| u64_at(u, &["cached_tokens"]))
        .unwrap_or(0);
    let written = u64_at(u, &["prompt_tokens_details", "cache_write_tokens"]).unwrap_or(0);
    out.input = prompt.saturating_sub(cached + written);
    out.cache_read = cached;
    out.cache_write = written;
    out.output = u64_at(u, &["completion_tokens"]).unwrap_or(0);
}

/// A chunk, typed so that the many small chunks of a long answer parse
/// without building a map for each (the fields that vary between servers
/// stay generic).
#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(default, borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    choices: Option<Vec<Choice<'a>>>,
    #[serde(default)]
    usage: Option<Value>,
    #[serde(default)]
    x_groq: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(default)]
    index: Option<Value>,
    // Boxed: a `Delta` is a few hundred bytes, and deserializing moves a
    // `Choice` several times per event (a tenth of the CPU on long streams).
    #[serde(default, borrow)]
    delta: Option<Box<Delta<'a>>>,
    /// When a server ignored `stream` and sent the whole answer.
    #[serde(default, borrow)]
    message: Option<Box<Delta<'a>>>,
    #[serde(default, borrow)]
    finish_reason: Option<Cow<'a, str>>,
    #[serde(default)]
    usage: Option<Value>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(default, borrow)]
    content: Option<Content<'a>>,
    #[serde(default, borrow)]
    reasoning_content: Option<Content<'a>>,
    #[serde(default, borrow)]
    reasoning: Option<Content<'a>>,
    #[serde(default, borrow)]
    reasoning_text: Option<Content<'a>>,
    // Rare: boxed, so that a `Delta` stays small to move.
    #[serde(default)]
    refusal: Option<Box<Value>>,
    #[serde(default)]
    tool_calls: Option<Vec<Value>>,
    #[serde(default)]
    function_call: Option<Box<Value>>,
}

/// A delta's text: borrowed from the event when it has no escapes (most
/// do), so that the text of each small chunk is not copied into a JSON
/// value first; typed parts (Mistral) as values; anything else ignored.
enum Content<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<Value>),
    Other,
}

impl Content<'_> {
    fn text(&self) -> Option<&str> {
        match self {
            Content::Text(t) => Some(t),
            _ => None,
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for V<'a> {
            type Value = Content<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("text or content parts")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Content<'a>, E> {
                Ok(Content::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Content<'a>, E> {
                Ok(Content::Text(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Content<'a>, E> {
                Ok(Content::Text(Cow::Owned(v)))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Content<'a>, A::Error> {
                let mut parts = Vec::new();
                while let Some(p) = seq.next_element::<Value>()? {
                    parts.push(p);
                }
                Ok(Content::Parts(parts))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Content<'a>, A::Error> {
                while map
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Content::Other)
            }
            fn visit_unit<E>(self) -> Result<Content<'a>, E> {
                Ok(Content::Other)
            }
            fn visit_none<E>(self) -> Result<Content<'a>, E> {
                Ok(Content::Other)
            }
            fn visit_some<D: serde::Deserializer<'de>>(
                self,
                d: D,
            ) -> Result<Content<'a>, D::Error> {
                d.deserialize_any(self)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Content<'a>, E> {
                Ok(Content::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Content<'a>, E> {
                Ok(Content::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Content<'a>, E> {
                Ok(Content::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Content<'a>, E> {
                Ok(Content::Other)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

impl StreamParser for ChatParser {
    fn frame(&mut self, frame: &Frame, b: &mut Builder<'_>) -> Result<Complete, Failure> {
        let data = frame.data.trim();
        if data == "[DONE]" {
            self.done = true;
            self.close(b);
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let chunk: Chunk<'_> = match serde_json::from_str(data) {
            Ok(c) => c,
            Err(_) => {
                let v = json_of(frame, &self.names)?;
                if v.get("error").is_some_and(|e| !e.is_null()) {
                    return Err(classify_stream_error(
                        &self.names.provider,
                        &self.names.model,
                        &v,
                    ));
                }
                // JSON of a shape no server is known to send: nothing to take from it.
                return Ok(false);
            }
        };
        if chunk.error.as_ref().is_some_and(|e| !e.is_null())
            || frame.event.as_deref() == Some("error")
        {
            let v = serde_json::from_str::<Value>(data).unwrap_or(Value::Null);
            return Err(classify_stream_error(
                &self.names.provider,
                &self.names.model,
                &v,
            ));
        }
        if b.response_id.is_none()
            && let Some(id) = &chunk.id
        {
            b.response_id = Some(id.to_string());
        }
        for u in [
            chunk.usage.as_ref(),
            chunk.x_groq.as_ref().and_then(|x| x.get("usage")),
        ]
        .into_iter()
        .flatten()
        {
            if u.is_object() {
                read_usage(u, b.usage_mut());
            }
        }
        for choice in chunk.choices.into_iter().flatten() {
            if choice.index.as_ref().and_then(Value::as_u64).unwrap_or(0) != 0 {
                continue;
            }
            if let Some(u) = choice.usage.as_ref().filter(|u| u.is_object()) {
                read_usage(u, b.usage_mut());
            }
            if let Some(delta) = choice.delta.as_deref().or(choice.message.as_deref()) {
                self.delta(delta, b);
            }
            if let Some(r) = choice.finish_reason {
                self.finish = Some(r.into_owned());
            }
        }
        Ok(false)
    }

    fn finish(&mut self, b: &mut Builder<'_>) -> Result<(), Failure> {
        if !self.done && self.finish.is_some() {
            // The server closed without `[DONE]` after saying why it stopped.
            self.close(b);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::llm::models::Api;
    use crate::llm::parse::parse_chunks;
    use crate::protocol::StopReason;

    fn sse(chunks: &[serde_json::Value]) -> String {
        let mut s: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
        s.push_str("data: [DONE]\n\n");
        s
    }

    fn delta(d: serde_json::Value) -> serde_json::Value {
        json!({"choices": [{"index": 0, "delta": d, "finish_reason": null}]})
    }

    #[test]
    fn server_quirks() {
        let body = sse(&[
            delta(json!({"role": "assistant", "reasoning": "think"})),
            // Every call numbered 0 (Ollama), arguments whole, sometimes an object.
            delta(
                json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "read", "arguments": "{\"p\":1}"}}]}),
            ),
            delta(
                json!({"tool_calls": [{"index": 0, "id": "b", "function": {"name": "ls", "arguments": {"d": "."}}}]}),
            ),
            // No index at all, name before arguments.
            delta(json!({"tool_calls": [{"id": "c", "function": {"name": "grep"}}]})),
            delta(json!({"tool_calls": [{"function": {"arguments": "{\"q\":"}}]})),
            delta(json!({"tool_calls": [{"function": {"arguments": "\"x\"}"}}]})),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
            json!({"choices": [], "x_groq": {"usage": {"prompt_tokens": 10, "completion_tokens": 5}}}),
        ]);
        let (msg, _, failure) = parse_chunks(Api::OpenAiChat, [body.as_bytes()]);
        assert!(failure.is_none(), "{failure:?}");
        let calls: Vec<_> = msg
            .tool_calls()
            .map(|(i, n, a)| (i.to_string(), n.to_string(), a.clone()))
            .collect();
        assert_eq!(
            calls,
            vec![
                ("a".into(), "read".into(), json!({"p": 1})),
                ("b".into(), "ls".into(), json!({"d": "."})),
                ("c".into(), "grep".into(), json!({"q": "x"})),
            ]
        );
        // Tool calls with finish_reason "stop" still mean "run the tools".
        assert_eq!(msg.stop_reason, StopReason::ToolUse);
        assert_eq!((msg.usage.input, msg.usage.output), (10, 5));
    }

    #[test]
    fn content_as_text_with_escapes_null_or_typed_parts() {
        let body = sse(&[
            delta(json!({"role": "assistant", "content": null, "reasoning_content": "hm"})),
            delta(json!({"content": "plain "})),
            delta(json!({"content": "\"quoted\"\n"})),
            // Mistral's typed parts: thinking and text.
            delta(json!({"content": [
                {"type": "thinking", "thinking": [{"type": "text", "text": " more"}]},
                {"type": "text", "text": "tail"}
            ]})),
            delta(json!({"content": {"unexpected": "object"}})),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        ]);
        let (msg, _, failure) = parse_chunks(Api::OpenAiChat, [body.as_bytes()]);
        assert!(failure.is_none(), "{failure:?}");
        let text: String = msg
            .content
            .iter()
            .filter_map(|b| match b {
                crate::protocol::ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, "plain \"quoted\"\ntail");
        let thinking: String = msg
            .content
            .iter()
            .filter_map(|b| match b {
                crate::protocol::ContentBlock::Thinking { thinking, .. } => Some(thinking.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(thinking, "hm more");
        assert_eq!(msg.stop_reason, StopReason::Stop);
    }

    #[test]
    fn refusal_is_an_error_not_text() {
        let body = sse(&[
            delta(json!({"refusal": "I can't help"})),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        ]);
        let (msg, _, failure) = parse_chunks(Api::OpenAiChat, [body.as_bytes()]);
        assert_eq!(msg.text(), "");
        assert_eq!(msg.stop_reason, StopReason::Refusal);
        assert!(failure.unwrap().message.contains("I can't help"));
    }

    #[test]
    fn the_content_filter_is_a_refusal() {
        let body = sse(&[
            delta(json!({"content": "Sure"})),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "content_filter"}]}),
        ]);
        let (msg, _, failure) = parse_chunks(Api::OpenAiChat, [body.as_bytes()]);
        assert_eq!(msg.stop_reason, StopReason::Refusal);
        let f = failure.unwrap();
        assert_eq!(f.kind, crate::llm::error::FailureKind::Refusal);
        assert!(!f.kind.retryable());
        assert!(f.message.contains("content_filter"), "{}", f.message);
    }

    #[test]
    fn truncated_stream_is_an_error() {
        let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n";
        let (msg, _, failure) = parse_chunks(Api::OpenAiChat, [body.as_bytes()]);
        assert_eq!(msg.text(), "hi");
        assert!(failure.unwrap().message.contains("ended before"));
    }
}
