//! Real recorded provider streams (`tests/fixtures/wire/`, described by its
//! `manifest.json`) parse to the expected text, reasoning, tool calls, stop
//! reason and usage, whatever the chunk boundaries: whole, byte by byte,
//! inside every UTF-8 character, inside `data:`, between `\r` and `\n`.

use std::path::PathBuf;

use ag::llm::Api;
use ag::llm::parse::parse_chunks;
use ag::protocol::{AssistantMessage, ContentBlock, LlmEvent, StopReason};
use serde_json::Value;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/wire")
}

fn api_of(name: &str) -> Api {
    match name {
        "chat_completions" => Api::OpenAiChat,
        "responses" => Api::OpenAiResponses,
        "anthropic_messages" => Api::Anthropic,
        "gemini" => Api::Gemini,
        other => panic!("unknown api {other}"),
    }
}

/// Ways to cut a body into chunks.
fn splits(body: &[u8]) -> Vec<(String, Vec<Vec<u8>>)> {
    let mut out = vec![("whole".to_string(), vec![body.to_vec()])];
    out.push(("bytes".into(), body.iter().map(|b| vec![*b]).collect()));
    let cut_at = |name: &str, cuts: Vec<usize>| {
        let mut chunks = Vec::new();
        let mut last = 0;
        for c in cuts {
            if c > last && c < body.len() {
                chunks.push(body[last..c].to_vec());
                last = c;
            }
        }
        chunks.push(body[last..].to_vec());
        (name.to_string(), chunks)
    };
    // Inside every multi-byte UTF-8 character.
    let utf8: Vec<usize> = (1..body.len())
        .filter(|&i| body[i] & 0xC0 == 0x80)
        .collect();
    out.push(cut_at("utf8", utf8));
    // Inside every `data:` field name, and just after its colon.
    let mut data = Vec::new();
    for i in 0..body.len().saturating_sub(5) {
        if &body[i..i + 5] == b"data:" {
            data.push(i + 2);
            data.push(i + 5);
        }
    }
    out.push(cut_at("data", data));
    // Between every \r and \n, and before every \n.
    let crlf: Vec<usize> = (1..body.len()).filter(|&i| body[i] == b'\n').collect();
    out.push(cut_at("newline", crlf));
    out
}

fn thinking(msg: &AssistantMessage) -> String {
    msg.content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Thinking { thinking, .. } => Some(thinking.as_str()),
            _ => None,
        })
        .collect()
}

fn check(entry: &Value, msg: &AssistantMessage, events: &[LlmEvent], how: &str) {
    let file = entry["file"].as_str().unwrap();
    let exp = &entry["expected"];
    let ctx = format!("{file} ({how})");
    assert_eq!(msg.text(), exp["text"].as_str().unwrap(), "text of {ctx}");
    match exp["reasoning"].as_str() {
        Some(r) => assert_eq!(thinking(msg), r, "reasoning of {ctx}"),
        None => assert_eq!(thinking(msg), "", "reasoning of {ctx}"),
    }
    let calls: Vec<_> = msg.tool_calls().collect();
    let want = exp["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), want.len(), "tool calls of {ctx}");
    for ((id, name, args), w) in calls.iter().zip(want) {
        assert_eq!(*name, w["name"].as_str().unwrap(), "tool name in {ctx}");
        assert_eq!(*args, &w["arguments"], "tool arguments in {ctx}");
        match w["id"].as_str() {
            Some(wid) => assert_eq!(*id, wid, "tool id in {ctx}"),
            None => assert!(!id.is_empty(), "synthetic id in {ctx}"),
        }
    }
    let stop = match exp["stop_reason"].as_str().unwrap() {
        "stop" => StopReason::Stop,
        "tool_calls" => StopReason::ToolUse,
        "length" => StopReason::Length,
        _ => StopReason::Error,
    };
    assert_eq!(msg.stop_reason, stop, "stop reason of {ctx}");
    let u = &exp["usage"];
    if u.is_object() {
        let n = |k: &str| u[k].as_u64().unwrap_or(0);
        let cache_read = n("cache_read_tokens");
        let input = match api_of(entry["api"].as_str().unwrap()) {
            // Anthropic's input already excludes the cache; the others include it.
            Api::Anthropic => n("input_tokens"),
            _ => n("input_tokens") - cache_read,
        };
        // ag counts reasoning as output everywhere; Gemini reports it apart.
        let output = match api_of(entry["api"].as_str().unwrap()) {
            Api::Gemini => n("output_tokens") + n("reasoning_tokens"),
            _ => n("output_tokens"),
        };
        assert_eq!(msg.usage.input, input, "input tokens of {ctx}");
        assert_eq!(msg.usage.output, output, "output tokens of {ctx}");
        assert_eq!(msg.usage.cache_read, cache_read, "cache read of {ctx}");
        assert_eq!(
            msg.usage.cache_write,
            n("cache_write_tokens"),
            "cache write of {ctx}"
        );
    }
    // The events tell the same story as the message.
    let streamed: String = events
        .iter()
        .filter_map(|e| match e {
            LlmEvent::TextDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, msg.text(), "text deltas of {ctx}");
    let ends = events
        .iter()
        .filter(|e| matches!(e, LlmEvent::ToolCallEnd { .. }))
        .count();
    assert_eq!(ends, want.len(), "tool_call_end events of {ctx}");
}

#[test]
fn recorded_streams_parse_under_any_split() {
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join("manifest.json")).unwrap())
            .unwrap();
    let mut checked = 0;
    for entry in manifest["entries"].as_array().unwrap() {
        let file = entry["file"].as_str().unwrap();
        if !file.ends_with(".sse") {
            continue;
        }
        let body = std::fs::read(dir().join(file)).unwrap();
        let api = api_of(entry["api"].as_str().unwrap());
        let mut first: Option<AssistantMessage> = None;
        for (how, chunks) in splits(&body) {
            let (msg, events, failure) = parse_chunks(api, chunks.iter().map(Vec::as_slice));
            assert!(failure.is_none(), "{file} ({how}) failed: {failure:?}");
            check(entry, &msg, &events, &how);
            match &first {
                None => first = Some(msg),
                Some(f) => assert_eq!(&msg, f, "{file}: {how} differs from whole"),
            }
        }
        checked += 1;
    }
    assert!(checked >= 13, "only {checked} streams checked");
}

/// A stream is parsed right even when the API kind is wrong: the first
/// frame tells which protocol it is.
#[test]
fn the_stream_tells_its_own_protocol() {
    let body = std::fs::read(dir().join("anthropic__text_with_ping.sse")).unwrap();
    let (msg, _, failure) = parse_chunks(Api::OpenAiChat, [body.as_slice()]);
    assert!(failure.is_none(), "{failure:?}");
    assert!(msg.text().starts_with("Hello!"));
    assert_eq!(msg.api.as_deref(), Some("anthropic"));
}

/// Anthropic's thinking keeps its signature, so it can be sent back.
#[test]
fn anthropic_thinking_keeps_its_signature() {
    let body = std::fs::read(dir().join("anthropic__thinking_signature_unicode.sse")).unwrap();
    let (msg, _, _) = parse_chunks(Api::Anthropic, [body.as_slice()]);
    let sig = msg.content.iter().find_map(|b| match b {
        ContentBlock::Thinking { signature, .. } => signature.clone(),
        _ => None,
    });
    assert!(sig.unwrap().starts_with("EvQBCkYICxgCKkAx"));
}

/// Gemini 3's thought signature on a function call is kept just before it.
#[test]
fn gemini_function_call_signature_is_kept() {
    let body = std::fs::read(dir().join("gemini__single_function_call_part.sse")).unwrap();
    let (msg, _, _) = parse_chunks(Api::Gemini, [body.as_slice()]);
    assert!(matches!(
        &msg.content[0],
        ContentBlock::Thinking { redacted: true, signature: Some(s), .. } if s.starts_with("EqUCCqIC")
    ));
    assert!(matches!(&msg.content[1], ContentBlock::ToolCall { name, .. } if name == "weather"));
}

/// Responses keeps the whole reasoning item (with its encrypted content)
/// as the signature, to send back with `store: false`.
#[test]
fn responses_reasoning_item_is_kept() {
    let body =
        std::fs::read(dir().join("openai__responses_multistep_step1_reasoning_function_call.sse"))
            .unwrap();
    let (msg, _, _) = parse_chunks(Api::OpenAiResponses, [body.as_slice()]);
    let sig = msg.content.iter().find_map(|b| match b {
        ContentBlock::Thinking { signature, .. } => signature.clone(),
        _ => None,
    });
    let item: Value = serde_json::from_str(&sig.unwrap()).unwrap();
    assert_eq!(item["type"], "reasoning");
    assert!(item["encrypted_content"].is_string());
}

/// A Gemini stream sent as a JSON array (no `alt=sse`) parses the same.
#[test]
fn gemini_json_array_stream() {
    let sse = String::from_utf8(std::fs::read(dir().join("gemini__text.sse")).unwrap()).unwrap();
    let items: Vec<&str> = sse
        .split("\r\n\r\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .collect();
    let array = format!("[{}]", items.join(",\r\n"));
    let (a, _, fa) = parse_chunks(Api::Gemini, [sse.as_bytes()]);
    let bytes = array.as_bytes();
    let (b, _, fb) = parse_chunks(Api::Gemini, bytes.chunks(7));
    assert!(fa.is_none() && fb.is_none(), "{fa:?} {fb:?}");
    assert_eq!(a, b);
}
