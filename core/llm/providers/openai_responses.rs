//! OpenAI Responses: output items by `output_index` (reasoning with
//! summaries and encrypted content, messages, function and custom tool
//! calls), `store: false` with the encrypted reasoning kept in the
//! thinking block's signature so a conversation can go on statelessly.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Deserialize;

use serde_json::{Map, Value, json};

use super::super::assemble::Builder;
use super::super::convert::{self, IdRule};
use super::super::error::{Failure, FailureKind, classify_stream_error};
use super::super::frames::Frame;
use super::super::structured;
use super::stream::{Complete, Names, StreamParser, json_of, u64_at};
use super::{
    HttpRequest, Target, arguments_text, data_url, effort, join_url, max_tokens, native_schema,
};
use crate::protocol::{ContentBlock, LlmRequest, Message, Reasoning, StopReason, ToolChoice};

const ID_RULE: IdRule = IdRule::Word(64);

/// The request.
pub fn request(t: &Target<'_>, req: &LlmRequest) -> HttpRequest {
    let mut input: Vec<Value> = Vec::new();
    let prepared = convert::prepare(&req.messages);
    let mut pending_images: Vec<Value> = Vec::new();
    for m in &prepared {
        if !matches!(m, Message::ToolResult(_)) && !pending_images.is_empty() {
            input.push(images_message(std::mem::take(&mut pending_images)));
        }
        match m {
            Message::User { content, .. } => {
                let parts: Vec<Value> = convert::user_blocks(content)
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::Text { text } => {
                            Some(json!({"type": "input_text", "text": text}))
                        }
                        ContentBlock::Image { data, mime_type } => Some(
                            json!({"type": "input_image", "image_url": data_url(mime_type, data)}),
                        ),
                        _ => None,
                    })
                    .collect();
                input.push(json!({"role": "user", "content": parts}));
            }
            Message::Assistant(a) => {
                let same = convert::same_model(a, t.model);
                for b in &a.content {
                    match b {
                        ContentBlock::Text { text } if !text.is_empty() => {
                            input.push(json!({"role": "assistant", "content": text}));
                        }
                        ContentBlock::Thinking {
                            thinking,
                            signature,
                            ..
                        } => {
                            let item = signature
                                .as_deref()
                                .filter(|_| same)
                                .and_then(|s| serde_json::from_str::<Value>(s).ok())
                                .filter(|v| {
                                    v.get("encrypted_content").is_some_and(Value::is_string)
                                });
                            match item {
                                Some(item) => input.push(json!({
                                    "type": "reasoning",
                                    "id": item["id"],
                                    "summary": item.get("summary").cloned().unwrap_or(json!([])),
                                    "encrypted_content": item["encrypted_content"],
                                })),
                                None if !thinking.is_empty() && !same => input.push(json!({
                                    "role": "assistant",
                                    "content": convert::thinking_as_text(thinking),
                                })),
                                None => {}
                            }
                        }
                        ContentBlock::ToolCall {
                            id,
                            name,
                            arguments,
                        } => input.push(json!({
                            "type": "function_call",
                            "call_id": convert::normalize_id(id, ID_RULE),
                            "name": name,
                            "arguments": arguments_text(arguments),
                        })),
                        _ => {}
                    }
                }
            }
            Message::ToolResult(r) => {
                input.push(json!({
                    "type": "function_call_output",
                    "call_id": convert::normalize_id(&r.tool_call_id, ID_RULE),
                    "output": convert::result_text(r),
                }));
                for (mime, data) in convert::images(&r.content) {
                    pending_images
                        .push(json!({"type": "input_image", "image_url": data_url(mime, data)}));
                }
            }
        }
    }
    if !pending_images.is_empty() {
        input.push(images_message(pending_images));
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(t.model.id));
    body.insert("input".into(), Value::Array(input));
    body.insert("stream".into(), json!(true));
    body.insert("store".into(), json!(false));
    if let Some(system) = req.system.as_deref().filter(|s| !s.is_empty()) {
        body.insert("instructions".into(), json!(system));
    }
    if let Some(max) = max_tokens(t, req) {
        body.insert("max_output_tokens".into(), json!(max));
    }
    if let Some(temp) = req.temperature {
        body.insert("temperature".into(), json!(temp));
    }
    let wants = req.reasoning.is_some_and(|r| r != Reasoning::Off);
    if t.model.reasoning || wants {
        let mut r = json!({"summary": "auto"});
        match req.reasoning {
            Some(Reasoning::Off) => r["effort"] = json!(lowest_effort(&t.model.id)),
            Some(level) => r["effort"] = json!(effort(level)),
            None => {}
        }
        body.insert("reasoning".into(), r);
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|d| {
                json!({"type": "function", "name": d.name, "description": d.description,
                       "parameters": d.parameters, "strict": false})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        if req.tool_choice == Some(ToolChoice::Required) {
            body.insert("tool_choice".into(), json!("required"));
        }
    }
    if let Some((schema, strict)) = native_schema(t, req) {
        body.insert(
            "text".into(),
            json!({"format": {"type": "json_schema", "name": structured::schema_name(schema),
                              "schema": schema, "strict": strict}}),
        );
    }
    let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
    if let Some(key) = t.key {
        headers.push(("authorization".into(), format!("Bearer {key}")));
    }
    HttpRequest {
        url: join_url(t.base_url, "responses"),
        headers,
        body: Value::Object(body),
    }
}

/// The least reasoning a model accepts, for `--reasoning off`: OpenAI's
/// reasoning models cannot all turn it off. GPT-5.1 and later take
/// "none", GPT-5 "minimal"; Codex and o-series models go no lower than "low".
fn lowest_effort(model: &str) -> &'static str {
    let id = model.rsplit('/').next().unwrap_or(model);
    if id.contains("codex") || !id.starts_with("gpt-5") {
        return "low";
    }
    let later = id
        .strip_prefix("gpt-5.")
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|minor| minor.parse::<u32>().ok())
        .is_some_and(|minor| minor >= 1);
    if later { "none" } else { "minimal" }
}

fn images_message(parts: Vec<Value>) -> Value {
    let mut content =
        vec![json!({"type": "input_text", "text": "Images returned by the tool calls above:"})];
    content.extend(parts);
    json!({"role": "user", "content": content})
}

#[derive(Debug)]
enum Slot {
    /// A message item; its text block opens with the first text.
    Message(Option<usize>),
    /// A reasoning item and the summary part last seen.
    Reasoning(usize, Option<u64>),
    /// A function call.
    Function(usize),
    /// A custom tool call and its raw input.
    Custom(usize, String),
}

/// The parser.
pub struct ResponsesParser {
    names: Names,
    slots: HashMap<u64, Slot>,
    refusal: String,
}

impl ResponsesParser {
    /// A parser for one response.
    pub fn new(names: Names) -> ResponsesParser {
        ResponsesParser {
            names,
            slots: HashMap::new(),
            refusal: String::new(),
        }
    }

    fn text(&mut self, out: u64, delta: &str, b: &mut Builder<'_>) {
        let slot = self.slots.entry(out).or_insert(Slot::Message(None));
        if let Slot::Message(block) = slot {
            let idx = *block.get_or_insert_with(|| b.open_text());
            b.text_at(idx, delta);
        }
    }

    fn reasoning(&mut self, out: u64, part: Option<u64>, delta: &str, b: &mut Builder<'_>) {
        let slot = self
            .slots
            .entry(out)
            .or_insert_with(|| Slot::Reasoning(b.open_thinking(), None));
        if let Slot::Reasoning(idx, last) = slot {
            if part.is_some() && last.is_some() && *last != part {
                b.thinking_at(*idx, "\n\n");
            }
            if part.is_some() {
                *last = part;
            }
            b.thinking_at(*idx, delta);
        }
    }

    fn item_added(&mut self, out: u64, item: &Value, b: &mut Builder<'_>) {
        let slot = match item["type"].as_str().unwrap_or("") {
            "message" => Slot::Message(None),
            "reasoning" => Slot::Reasoning(b.open_thinking(), None),
            kind @ ("function_call" | "custom_tool_call") => {
                let mut id = item["call_id"].as_str().unwrap_or("").to_string();
                if id.is_empty() {
                    id = b.synthetic_id(kind);
                }
                let idx = b.tool_start(&id, item["name"].as_str().unwrap_or(""));
                if kind == "custom_tool_call" {
                    Slot::Custom(idx, item["input"].as_str().unwrap_or("").to_string())
                } else {
                    b.tool_args(idx, item["arguments"].as_str().unwrap_or(""));
                    Slot::Function(idx)
                }
            }
            _ => return,
        };
        self.slots.insert(out, slot);
    }

    fn item_done(&mut self, out: u64, item: &Value, b: &mut Builder<'_>) {
        if !self.slots.contains_key(&out) {
            self.item_added(out, item, b);
        }
        match self.slots.get_mut(&out) {
            Some(Slot::Message(block)) => {
                let text: String = item["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c["text"].as_str())
                    .collect();
                if !text.is_empty() {
                    let idx = *block.get_or_insert_with(|| b.open_text());
                    b.set_text_if_empty(idx, &text);
                }
            }
            Some(Slot::Reasoning(idx, _)) => {
                let summary: Vec<&str> = item["summary"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|s| s["text"].as_str())
                    .collect();
                b.set_thinking_if_empty(*idx, &summary.join("\n\n"));
                b.sign(*idx, &item.to_string(), false);
            }
            Some(Slot::Function(idx)) => {
                let idx = *idx;
                if b.tool_args_text(idx).is_some_and(str::is_empty) {
                    b.tool_args(idx, item["arguments"].as_str().unwrap_or(""));
                }
                b.tool_end(idx, None);
            }
            Some(Slot::Custom(idx, raw)) => {
                let input = item["input"]
                    .as_str()
                    .map_or_else(|| raw.clone(), str::to_string);
                b.tool_end(*idx, Some(json!({"input": input})));
            }
            None => {}
        }
    }

    fn completed(&mut self, resp: &Value, b: &mut Builder<'_>) {
        if let Some(u) = resp.get("usage").filter(|u| u.is_object()) {
            let cached = u64_at(u, &["input_tokens_details", "cached_tokens"]).unwrap_or(0);
            let usage = b.usage_mut();
            usage.input = u64_at(u, &["input_tokens"])
                .unwrap_or(0)
                .saturating_sub(cached);
            usage.cache_read = cached;
            usage.output = u64_at(u, &["output_tokens"]).unwrap_or(0);
        }
        // Items that never got their `done` event are closed from the final list.
        if let Some(items) = resp["output"].as_array() {
            for (i, item) in items.iter().enumerate() {
                let out = item
                    .get("output_index")
                    .and_then(Value::as_u64)
                    .unwrap_or(i as u64);
                let open = match self.slots.get(&out) {
                    Some(Slot::Function(idx) | Slot::Custom(idx, _)) => b.tool_open(*idx),
                    Some(_) => false,
                    None => true,
                };
                if open {
                    self.item_done(out, item, b);
                }
            }
        }
        b.end_all_tools();
        let status = resp["status"].as_str().unwrap_or("completed");
        let reason = resp["incomplete_details"]["reason"].as_str().unwrap_or("");
        let stop = match (status, reason) {
            ("incomplete", "max_output_tokens") => Some(StopReason::Length),
            ("incomplete", "content_filter") => {
                Some(b.filtered(&self.names.provider, "incomplete: content_filter"))
            }
            _ => None,
        };
        let plain = b.plain_stop(&self.refusal);
        b.stop = Some(stop.unwrap_or(plain));
    }
}

/// A `*.delta` event, the bulk of a long answer, typed so that it parses
/// without building maps.
#[derive(Deserialize)]
struct DeltaEvent<'a> {
    #[serde(rename = "type", borrow)]
    ty: Cow<'a, str>,
    #[serde(default)]
    output_index: Option<u64>,
    #[serde(default)]
    summary_index: Option<u64>,
    #[serde(default)]
    content_index: Option<u64>,
    #[serde(default, borrow)]
    delta: Option<Cow<'a, str>>,
}

impl ResponsesParser {
    /// Handles a text, reasoning or arguments delta through the typed
    /// path; false when the frame is something else.
    fn fast_delta(&mut self, data: &str, b: &mut Builder<'_>) -> bool {
        let Ok(ev) = serde_json::from_str::<DeltaEvent<'_>>(data) else {
            return false;
        };
        let (out, delta) = (
            ev.output_index.unwrap_or(0),
            ev.delta.as_deref().unwrap_or(""),
        );
        match ev.ty.as_ref() {
            "response.output_text.delta" => self.text(out, delta, b),
            "response.reasoning_summary_text.delta" => {
                self.reasoning(out, ev.summary_index, delta, b)
            }
            "response.reasoning_text.delta" => self.reasoning(out, ev.content_index, delta, b),
            "response.function_call_arguments.delta" => {
                if let Some(Slot::Function(idx)) = self.slots.get(&out) {
                    b.tool_args(*idx, delta);
                }
            }
            _ => return false,
        }
        true
    }
}

impl StreamParser for ResponsesParser {
    fn frame(&mut self, frame: &Frame, b: &mut Builder<'_>) -> Result<Complete, Failure> {
        let data = frame.data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(false);
        }
        if frame.event.as_deref().is_none_or(|e| e.ends_with(".delta")) && self.fast_delta(data, b)
        {
            return Ok(false);
        }
        let v = json_of(frame, &self.names)?;
        let ty = v
            .get("type")
            .and_then(Value::as_str)
            .or(frame.event.as_deref())
            .unwrap_or("");
        let out = v["output_index"].as_u64().unwrap_or(0);
        match ty {
            "response.created" | "response.in_progress" => {
                if let Some(id) = v["response"]["id"].as_str() {
                    b.response_id = Some(id.to_string());
                }
            }
            "response.output_item.added" => self.item_added(out, &v["item"], b),
            "response.output_item.done" => self.item_done(out, &v["item"], b),
            "response.output_text.delta" => {
                self.text(out, v["delta"].as_str().unwrap_or(""), b);
            }
            // A refusal is not answer text: it ends the call as an error.
            "response.refusal.delta" => self.refusal.push_str(v["delta"].as_str().unwrap_or("")),
            "response.reasoning_summary_text.delta" => {
                let part = v["summary_index"].as_u64();
                self.reasoning(out, part, v["delta"].as_str().unwrap_or(""), b);
            }
            "response.reasoning_text.delta" => {
                let part = v["content_index"].as_u64();
                self.reasoning(out, part, v["delta"].as_str().unwrap_or(""), b);
            }
            "response.function_call_arguments.delta" => {
                if let Some(Slot::Function(idx)) = self.slots.get(&out) {
                    b.tool_args(*idx, v["delta"].as_str().unwrap_or(""));
                }
            }
            "response.custom_tool_call_input.delta" => {
                if let Some(Slot::Custom(_, raw)) = self.slots.get_mut(&out) {
                    raw.push_str(v["delta"].as_str().unwrap_or(""));
                }
            }
            "response.completed" | "response.incomplete" | "response.done" => {
                self.completed(&v["response"], b);
                return Ok(true);
            }
            "response.failed" => {
                let err = &v["response"]["error"];
                let mut f = classify_stream_error(
                    &self.names.provider,
                    &self.names.model,
                    &json!({"error": err}),
                );
                if err.is_null() {
                    f = Failure::new(
                        FailureKind::Other,
                        format!("{} reported the response failed", self.names.provider),
                    );
                }
                return Err(f);
            }
            "error" => {
                return Err(classify_stream_error(
                    &self.names.provider,
                    &self.names.model,
                    &v,
                ));
            }
            _ => {}
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::lowest_effort;

    #[test]
    fn off_is_the_lowest_effort_each_model_takes() {
        assert_eq!(lowest_effort("gpt-5.1"), "none");
        assert_eq!(lowest_effort("gpt-5.2-mini"), "none");
        assert_eq!(lowest_effort("gpt-5"), "minimal");
        assert_eq!(lowest_effort("gpt-5-mini"), "minimal");
        assert_eq!(lowest_effort("openai/gpt-5-nano"), "minimal");
        assert_eq!(lowest_effort("gpt-5.1-codex-max"), "low");
        assert_eq!(lowest_effort("o4-mini"), "low");
    }
}
