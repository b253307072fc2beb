//! Google Gemini (`models/{id}:streamGenerateContent?alt=sse`): parts of
//! text, thoughts (`thought: true`) and whole function calls, cumulative
//! `usageMetadata`, no call ids (ag makes them), and thought signatures,
//! which Gemini 3 requires back on the function call they came with: they
//! are kept in a redacted thinking block just before that call.

use serde_json::{Map, Value, json};

use super::super::assemble::Builder;
use super::super::convert;
use super::super::error::{Failure, FailureKind, classify_stream_error};
use super::super::frames::Frame;
use super::stream::{Complete, Names, StreamParser, json_of, u64_at};
use super::{HttpRequest, Target, join_url, max_tokens, native_schema};
use crate::protocol::{ContentBlock, LlmRequest, Message, Reasoning, StopReason, ToolChoice};

/// Gemini 3 accepts this in place of a signature it never issued
/// (calls made by another model, or before signatures existed).
const SKIP_SIGNATURE: &str = "skip_thought_signature_validator";

/// The request.
pub fn request(t: &Target<'_>, req: &LlmRequest) -> HttpRequest {
    let gemini3 = t.model.id.contains("gemini-3");
    let mut contents: Vec<Value> = Vec::new();
    let prepared = convert::prepare(&req.messages);
    for m in &prepared {
        match m {
            Message::User { content, .. } => {
                let parts: Vec<Value> = convert::user_blocks(content)
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::Text { text } if !text.is_empty() => {
                            Some(json!({"text": text}))
                        }
                        ContentBlock::Image { data, mime_type } => {
                            Some(json!({"inlineData": {"mimeType": mime_type, "data": data}}))
                        }
                        _ => None,
                    })
                    .collect();
                push(&mut contents, "user", parts);
            }
            Message::Assistant(a) => {
                let same = convert::same_model(a, t.model);
                let mut parts = Vec::new();
                let mut pending: Option<String> = None;
                let mut first_call = true;
                for b in &a.content {
                    match b {
                        ContentBlock::Thinking {
                            thinking,
                            signature,
                            ..
                        } => {
                            if same && thinking.is_empty() {
                                pending = signature.clone();
                            } else if same {
                                let mut p = json!({"text": thinking, "thought": true});
                                if let Some(s) = signature {
                                    p["thoughtSignature"] = json!(s);
                                }
                                parts.push(p);
                            } else if !thinking.is_empty() {
                                parts.push(json!({"text": convert::thinking_as_text(thinking)}));
                            }
                        }
                        ContentBlock::Text { text } if !text.is_empty() => {
                            let mut p = json!({"text": text});
                            if let Some(s) = pending.take() {
                                p["thoughtSignature"] = json!(s);
                            }
                            parts.push(p);
                        }
                        ContentBlock::ToolCall {
                            name, arguments, ..
                        } => {
                            let args = if arguments.is_object() {
                                arguments.clone()
                            } else {
                                json!({})
                            };
                            let mut p = json!({"functionCall": {"name": name, "args": args}});
                            match pending.take() {
                                Some(s) => p["thoughtSignature"] = json!(s),
                                None if gemini3 && first_call => {
                                    p["thoughtSignature"] = json!(SKIP_SIGNATURE);
                                }
                                None => {}
                            }
                            first_call = false;
                            parts.push(p);
                        }
                        _ => {}
                    }
                }
                push(&mut contents, "model", parts);
            }
            Message::ToolResult(r) => {
                let text = convert::result_text(r);
                let response = if r.is_error {
                    json!({"error": text})
                } else {
                    json!({"output": text})
                };
                let mut parts =
                    vec![json!({"functionResponse": {"name": r.tool_name, "response": response}})];
                for (mime, data) in convert::images(&r.content) {
                    parts.push(json!({"inlineData": {"mimeType": mime, "data": data}}));
                }
                push(&mut contents, "user", parts);
            }
        }
    }
    let mut body = Map::new();
    body.insert("contents".into(), Value::Array(contents));
    if let Some(system) = req.system.as_deref().filter(|s| !s.is_empty()) {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": system}]}),
        );
    }
    if !req.tools.is_empty() {
        let decls: Vec<Value> = req
            .tools
            .iter()
            .map(|d| json!({"name": d.name, "description": d.description, "parametersJsonSchema": d.parameters}))
            .collect();
        body.insert("tools".into(), json!([{"functionDeclarations": decls}]));
        if req.tool_choice == Some(ToolChoice::Required) {
            body.insert(
                "toolConfig".into(),
                json!({"functionCallingConfig": {"mode": "ANY"}}),
            );
        }
    }
    let mut config = Map::new();
    if let Some(max) = max_tokens(t, req) {
        config.insert("maxOutputTokens".into(), json!(max));
    }
    if let Some(temp) = req.temperature {
        config.insert("temperature".into(), json!(temp));
    }
    let thinking = match req.reasoning {
        Some(Reasoning::Off) if t.model.id.contains("flash") => Some(json!({"thinkingBudget": 0})),
        Some(Reasoning::Off) => None,
        Some(level) if gemini3 => Some(json!({
            "includeThoughts": true,
            "thinkingLevel": if level == Reasoning::Low { "low" } else { "high" },
        })),
        Some(level) => Some(json!({
            "includeThoughts": true,
            "thinkingBudget": match level { Reasoning::Low => 2_048, Reasoning::Medium => 8_192, _ => 24_576 },
        })),
        None if t.model.reasoning => Some(json!({"includeThoughts": true})),
        None => None,
    };
    if let Some(th) = thinking {
        config.insert("thinkingConfig".into(), th);
    }
    // `responseJsonSchema` takes JSON Schema as written; the older
    // `responseSchema` takes only an OpenAPI subset.
    if let Some((schema, _)) = native_schema(t, req) {
        config.insert("responseMimeType".into(), json!("application/json"));
        config.insert("responseJsonSchema".into(), schema.clone());
    }
    if !config.is_empty() {
        body.insert("generationConfig".into(), Value::Object(config));
    }
    let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
    if let Some(key) = t.key {
        headers.push(("x-goog-api-key".into(), key.to_string()));
    }
    HttpRequest {
        url: join_url(
            t.base_url,
            &format!("models/{}:streamGenerateContent?alt=sse", t.model.id),
        ),
        headers,
        body: Value::Object(body),
    }
}

/// Appends parts, merging into the previous content of the same role
/// (all results of parallel calls go back in one turn).
fn push(contents: &mut Vec<Value>, role: &str, parts: Vec<Value>) {
    if parts.is_empty() {
        return;
    }
    if let Some(last) = contents.last_mut()
        && last["role"] == role
        && let Some(p) = last["parts"].as_array_mut()
    {
        p.extend(parts);
        return;
    }
    contents.push(json!({"role": role, "parts": parts}));
}

/// A function call whose arguments Vertex streams in `partialArgs`.
struct Streaming {
    block: usize,
    args: Value,
    /// JSON paths of string values still being continued.
    open_paths: Vec<String>,
}

/// The parser.
pub struct GeminiParser {
    names: Names,
    finish: Option<String>,
    streaming: Option<Streaming>,
}

impl GeminiParser {
    /// A parser for one response.
    pub fn new(names: Names) -> GeminiParser {
        GeminiParser {
            names,
            finish: None,
            streaming: None,
        }
    }

    /// Ends a call whose arguments were streamed.
    fn end_streaming(&mut self, b: &mut Builder<'_>) {
        if let Some(st) = self.streaming.take() {
            b.tool_args(st.block, &st.args.to_string());
            b.tool_end(st.block, Some(st.args));
        }
    }

    /// A piece of a call streamed by Vertex (`streamFunctionCallArguments`):
    /// the name first, then `partialArgs` by JSON path, `willContinue` until the last.
    fn streamed_call(&mut self, fc: &Value, sig: Option<&str>, b: &mut Builder<'_>) {
        if self.streaming.is_none() {
            let block = start_call(fc, sig, b);
            self.streaming = Some(Streaming {
                block,
                args: json!({}),
                open_paths: Vec::new(),
            });
        }
        if let Some(st) = self.streaming.as_mut() {
            if let Some(Value::Object(args)) = fc.get("args") {
                for (k, v) in args {
                    st.args[k] = v.clone();
                }
            }
            for pa in fc["partialArgs"].as_array().into_iter().flatten() {
                let path = pa["jsonPath"].as_str().unwrap_or("$").to_string();
                let value = if let Some(s) = pa.get("stringValue") {
                    s.clone()
                } else if let Some(n) = pa.get("numberValue") {
                    n.clone()
                } else if let Some(x) = pa.get("boolValue") {
                    x.clone()
                } else {
                    Value::Null
                };
                let append = st.open_paths.contains(&path);
                set_path(&mut st.args, &path, value, append);
                let continues = pa["willContinue"].as_bool() == Some(true);
                st.open_paths.retain(|p| *p != path);
                if continues {
                    st.open_paths.push(path);
                }
            }
        }
        if fc["willContinue"].as_bool() != Some(true) {
            self.end_streaming(b);
        }
    }

    fn part(&mut self, p: &Value, b: &mut Builder<'_>) {
        let sig = p["thoughtSignature"].as_str().filter(|s| !s.is_empty());
        if let Some(fc) = p.get("functionCall").filter(|f| f.is_object()) {
            let piece = fc.get("partialArgs").is_some()
                || fc["willContinue"].as_bool() == Some(true)
                || (self.streaming.is_some() && fc.get("name").is_none());
            if piece {
                return self.streamed_call(fc, sig, b);
            }
            self.end_streaming(b);
            let args = match fc.get("args") {
                Some(a @ Value::Object(_)) => a.clone(),
                _ => json!({}),
            };
            let idx = start_call(fc, sig, b);
            b.tool_args(idx, &args.to_string());
            b.tool_end(idx, Some(args));
            return;
        }
        let Some(text) = p["text"].as_str() else {
            return;
        };
        if p["thought"].as_bool() == Some(true) {
            b.thinking(text);
            if let Some(s) = sig {
                let last = b.len().saturating_sub(1);
                b.sign(last, s, false);
            }
        } else {
            b.text(text);
        }
    }
}

/// Opens the block of a function call (after its thought signature, kept
/// as a redacted thinking block); its id is Gemini's, or made up when it
/// sent none.
fn start_call(fc: &Value, sig: Option<&str>, b: &mut Builder<'_>) -> usize {
    if let Some(s) = sig {
        b.redacted_thinking(s);
    }
    let name = fc["name"].as_str().unwrap_or("");
    let id = match fc["id"].as_str().filter(|s| !s.is_empty()) {
        Some(id) => id.to_string(),
        None => b.synthetic_id(name),
    };
    b.tool_start(&id, name)
}

impl StreamParser for GeminiParser {
    fn frame(&mut self, frame: &Frame, b: &mut Builder<'_>) -> Result<Complete, Failure> {
        if frame.data.trim().is_empty() {
            return Ok(false);
        }
        let v = json_of(frame, &self.names)?;
        if v.get("error").is_some_and(|e| !e.is_null()) {
            return Err(classify_stream_error(
                &self.names.provider,
                &self.names.model,
                &v,
            ));
        }
        if b.response_id.is_none()
            && let Some(id) = v["responseId"].as_str()
        {
            b.response_id = Some(id.to_string());
        }
        if let Some(reason) = v["promptFeedback"]["blockReason"].as_str() {
            b.refusal = Some(format!(
                "{} blocked the prompt (blockReason {reason}); rephrase the request",
                self.names.provider
            ));
            b.stop = Some(StopReason::Error);
        }
        let u = &v["usageMetadata"];
        if u.is_object()
            && (u.get("promptTokenCount").is_some() || u.get("candidatesTokenCount").is_some())
        {
            let cached = u64_at(u, &["cachedContentTokenCount"]).unwrap_or(0);
            let usage = b.usage_mut();
            usage.input = u64_at(u, &["promptTokenCount"])
                .unwrap_or(0)
                .saturating_sub(cached);
            usage.cache_read = cached;
            // Thoughts are billed as output.
            usage.output = u64_at(u, &["candidatesTokenCount"]).unwrap_or(0)
                + u64_at(u, &["thoughtsTokenCount"]).unwrap_or(0);
        }
        if let Some(c) = v["candidates"].as_array().and_then(|c| c.first()) {
            for p in c["content"]["parts"].as_array().into_iter().flatten() {
                self.part(p, b);
            }
            if let Some(r) = c["finishReason"].as_str() {
                self.finish = Some(r.to_string());
            }
        }
        Ok(false)
    }

    fn finish(&mut self, b: &mut Builder<'_>) -> Result<(), Failure> {
        self.end_streaming(b);
        let Some(reason) = self.finish.as_deref() else {
            return Ok(());
        };
        b.stop = Some(match reason {
            "MAX_TOKENS" => StopReason::Length,
            "STOP" | "FINISH_REASON_UNSPECIFIED" | "OTHER" if b.has_tool_calls() => {
                StopReason::ToolUse
            }
            "STOP" | "FINISH_REASON_UNSPECIFIED" | "OTHER" => StopReason::Stop,
            "MALFORMED_FUNCTION_CALL" | "UNEXPECTED_TOOL_CALL" => {
                return Err(Failure::new(
                    FailureKind::Other,
                    format!(
                        "{} could not form a valid function call ({reason}); try again",
                        self.names.provider
                    ),
                ));
            }
            other => {
                b.refusal = Some(format!(
                    "{} stopped the answer (finishReason {other})",
                    self.names.provider
                ));
                StopReason::Error
            }
        });
        Ok(())
    }
}

/// Sets the value at an RFC 9535 path such as `$.a.b[0].c` or `$['a']`,
/// creating objects and arrays on the way; `append` adds to a string there.
fn set_path(root: &mut Value, path: &str, value: Value, append: bool) {
    let mut segs: Vec<Result<String, usize>> = Vec::new();
    let rest = path.strip_prefix('$').unwrap_or(path);
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '.' => {
                let mut key = String::new();
                while let Some(&n) = chars.peek() {
                    if n == '.' || n == '[' {
                        break;
                    }
                    key.push(n);
                    chars.next();
                }
                segs.push(Ok(key));
            }
            '[' => {
                let mut inner = String::new();
                for n in chars.by_ref() {
                    if n == ']' {
                        break;
                    }
                    inner.push(n);
                }
                let t = inner.trim();
                match t.parse::<usize>() {
                    Ok(i) => segs.push(Err(i)),
                    Err(_) => segs.push(Ok(t.trim_matches(['\'', '"']).to_string())),
                }
            }
            _ => {}
        }
    }
    let mut cur = root;
    for seg in segs {
        cur = match seg {
            Ok(key) => {
                if !cur.is_object() {
                    *cur = json!({});
                }
                &mut cur[key.as_str()]
            }
            Err(i) => {
                if !cur.is_array() {
                    *cur = json!([]);
                }
                let Some(arr) = cur.as_array_mut() else {
                    return;
                };
                while arr.len() <= i {
                    arr.push(Value::Null);
                }
                &mut arr[i]
            }
        };
    }
    match (append, &mut *cur, &value) {
        (true, Value::String(old), Value::String(more)) => old.push_str(more),
        _ => *cur = value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::models::Api;
    use crate::llm::parse::parse_chunks;

    #[test]
    fn json_paths() {
        let mut v = json!({});
        set_path(&mut v, "$.a.b[1].c", json!("x"), false);
        set_path(&mut v, "$.a.b[1].c", json!("y"), true);
        set_path(&mut v, "$['k']", json!(2), false);
        assert_eq!(v, json!({"a": {"b": [null, {"c": "xy"}]}, "k": 2}));
    }

    #[test]
    fn vertex_streamed_arguments() {
        let body = concat!(
            "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"name\":\"write\",\"willContinue\":true}}]}}]}\r\n\r\n",
            "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"partialArgs\":[{\"jsonPath\":\"$.path\",\"stringValue\":\"a.txt\"},{\"jsonPath\":\"$.text\",\"stringValue\":\"hel\",\"willContinue\":true}],\"willContinue\":true}}]}}]}\r\n\r\n",
            "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"partialArgs\":[{\"jsonPath\":\"$.text\",\"stringValue\":\"lo\"},{\"jsonPath\":\"$.n\",\"numberValue\":3}],\"willContinue\":true}}]}}]}\r\n\r\n",
            "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"functionCall\":{}}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":5,\"candidatesTokenCount\":7}}\r\n\r\n",
        );
        let (msg, _, failure) = parse_chunks(Api::Gemini, [body.as_bytes()]);
        assert!(failure.is_none(), "{failure:?}");
        let calls: Vec<_> = msg.tool_calls().collect();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].1, "write");
        assert_eq!(
            calls[0].2,
            &json!({"path": "a.txt", "text": "hello", "n": 3})
        );
        assert_eq!(msg.stop_reason, crate::protocol::StopReason::ToolUse);
        assert_eq!(msg.usage.output, 7);
    }
}
