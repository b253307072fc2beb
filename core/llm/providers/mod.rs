//! One module per wire protocol, each owning both directions: the request
//! body built from an [`LlmRequest`] and the stream parser for the answer.

pub mod anthropic;
pub mod gemini;
pub mod openai_chat;
pub mod openai_responses;
pub mod stream;

use serde_json::Value;

use self::stream::{Names, StreamParser};
use super::models::{Api, ModelInfo, Provider};
use super::structured::{self, Plan};
use crate::protocol::{LlmRequest, Reasoning};

/// An HTTP request ready to send: the key is only ever in `headers`.
#[derive(Debug, Clone)]
pub struct HttpRequest {
    /// The full URL.
    pub url: String,
    /// Headers, the authentication header among them.
    pub headers: Vec<(String, String)>,
    /// The JSON body.
    pub body: Value,
}

/// Everything a request builder needs.
pub struct Target<'a> {
    /// The model.
    pub model: &'a ModelInfo,
    /// Its provider.
    pub provider: &'a Provider,
    /// The base URL in force.
    pub base_url: &'a str,
    /// The key, when there is one.
    pub key: Option<&'a str>,
}

/// Builds the HTTP request for the model's API.
pub fn build(t: &Target<'_>, req: &LlmRequest) -> HttpRequest {
    // A schema the API does not take natively is told in the system prompt;
    // so is one sent to a Chat Completions server: the local ones (llama.cpp,
    // vLLM, Ollama) constrain decoding with a grammar but never show the
    // model the schema, and llama.cpp ignores it in a request with tools.
    let prompted;
    let req = match output_plan(t, req) {
        Some((_, Plan::Prompted)) => {
            prompted = structured::prompted(req);
            &prompted
        }
        Some(_) if t.model.api == Api::OpenAiChat => {
            // The schema stays for `response_format`.
            prompted = LlmRequest {
                output_schema: req.output_schema.clone(),
                ..structured::prompted(req)
            };
            &prompted
        }
        _ => req,
    };
    let mut r = match t.model.api {
        Api::OpenAiChat => openai_chat::request(t, req),
        Api::OpenAiResponses => openai_responses::request(t, req),
        Api::Anthropic => anthropic::request(t, req),
        Api::Gemini => gemini::request(t, req),
    };
    for (k, v) in &t.provider.headers {
        r.headers.push((k.clone(), v.clone()));
    }
    r
}

/// The request's output schema and how it travels; `None` without one.
pub fn output_plan<'r>(t: &Target<'_>, req: &'r LlmRequest) -> Option<(&'r Value, Plan)> {
    let schema = req.output_schema.as_ref()?;
    let plan = structured::plan(t.model, t.provider, schema, !req.tools.is_empty());
    Some((schema, plan))
}

/// The schema to send in the API's own field, and whether strictly.
pub fn native_schema<'r>(t: &Target<'_>, req: &'r LlmRequest) -> Option<(&'r Value, bool)> {
    match output_plan(t, req)? {
        (schema, Plan::Native { strict }) => Some((schema, strict)),
        (_, Plan::Prompted) => None,
    }
}

/// The parser for an API's stream.
pub fn parser_for(api: Api, names: Names) -> Box<dyn StreamParser> {
    match api {
        Api::OpenAiChat => Box::new(openai_chat::ChatParser::new(names)),
        Api::OpenAiResponses => Box::new(openai_responses::ResponsesParser::new(names)),
        Api::Anthropic => Box::new(anthropic::AnthropicParser::new(names)),
        Api::Gemini => Box::new(gemini::GeminiParser::new(names)),
    }
}

/// Reasoning effort as the OpenAI APIs name it.
pub fn effort(r: Reasoning) -> Option<&'static str> {
    match r {
        Reasoning::Off => None,
        Reasoning::Low => Some("low"),
        Reasoning::Medium => Some("medium"),
        Reasoning::High => Some("high"),
    }
}

/// Tool call arguments as the JSON text the OpenAI APIs want. Arguments
/// that never parsed (a call cut off at the output limit, kept as the
/// model's raw text) go back as `{}`: servers parse the history's calls,
/// and llama.cpp answered every later request of such a run with HTTP 500
/// ("Failed to parse tool call arguments as JSON"). The call's result still
/// says what was wrong with them.
pub fn arguments_text(args: &Value) -> String {
    match args {
        Value::String(raw) if serde_json::from_str::<Value>(raw).is_ok() => raw.clone(),
        Value::String(_) => "{}".to_string(),
        other => other.to_string(),
    }
}

/// `base` and `path` joined with exactly one slash.
pub fn join_url(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

/// A `data:` URL for an image.
pub fn data_url(mime: &str, data: &str) -> String {
    format!("data:{mime};base64,{data}")
}

/// The output limit to ask for: the request's, else the model's
/// ([`ModelInfo::output_limit`]); `None` leaves it to the server.
pub fn max_tokens(t: &Target<'_>, req: &LlmRequest) -> Option<u64> {
    req.max_tokens
        .or_else(|| t.model.output_limit())
        .map(|n| n.max(1))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::llm::models::ModelTable;
    use crate::protocol::{
        AssistantMessage, ContentBlock, Message, StopReason, ToolResultMessage, UserContent,
    };

    #[test]
    fn arguments_that_never_parsed_go_back_as_an_empty_object() {
        assert_eq!(arguments_text(&json!({"a": 1})), r#"{"a":1}"#);
        assert_eq!(arguments_text(&json!(r#"{"a": 1}"#)), r#"{"a": 1}"#);
        assert_eq!(arguments_text(&json!(r#"{"patch": "diff --git a"#)), "{}");
    }

    fn conversation(model: &str, api: &str) -> Vec<Message> {
        let image = ContentBlock::Image {
            data: "iVBOR".into(),
            mime_type: "image/png".into(),
        };
        vec![
            Message::User {
                content: UserContent::Blocks(vec![
                    ContentBlock::Text {
                        text: "look".into(),
                    },
                    image.clone(),
                ]),
                timestamp: None,
            },
            Message::Assistant(AssistantMessage {
                content: vec![
                    ContentBlock::Thinking {
                        thinking: "hmm".into(),
                        signature: Some("SIG".into()),
                        redacted: false,
                    },
                    ContentBlock::Text {
                        text: "reading".into(),
                    },
                    ContentBlock::ToolCall {
                        id: "call_1".into(),
                        name: "read".into(),
                        arguments: json!({"p": "a"}),
                    },
                ],
                stop_reason: StopReason::ToolUse,
                model: Some(model.into()),
                api: Some(api.into()),
                ..Default::default()
            }),
            Message::ToolResult(ToolResultMessage {
                tool_call_id: "call_1".into(),
                tool_name: "read".into(),
                content: vec![
                    ContentBlock::Text {
                        text: "boom".into(),
                    },
                    image,
                ],
                details: Value::Null,
                is_error: true,
                timestamp: None,
            }),
            Message::user_text("next"),
        ]
    }

    fn body(model: &str, msgs: Vec<Message>) -> Value {
        let req = LlmRequest {
            model: model.into(),
            system: Some("sys".into()),
            messages: msgs,
            ..Default::default()
        };
        body_of(&req)
    }

    /// The body `req` is sent as, to its model's API in the built-in table.
    fn body_of(req: &LlmRequest) -> Value {
        let table = ModelTable::builtin();
        let info = table.resolve(&req.model).unwrap();
        let provider = table.provider(&info.provider).unwrap();
        let t = Target {
            model: &info,
            provider,
            base_url: &provider.base_url,
            key: Some("k"),
        };
        build(&t, req).body
    }

    /// `required` reaches each API in its own words, only with tools, and
    /// `auto` or none sends nothing (the APIs' own default).
    #[test]
    fn a_required_tool_call_is_asked_for_in_each_apis_words() {
        let tool = crate::protocol::ToolDefinition {
            name: "read".into(),
            label: "Read".into(),
            description: "reads".into(),
            parameters: json!({"type": "object"}),
        };
        for (model, field, want) in [
            ("deepseek/deepseek-chat", "tool_choice", json!("required")),
            ("openai/gpt-5", "tool_choice", json!("required")),
            (
                "anthropic/claude-sonnet-4-5",
                "tool_choice",
                json!({"type": "any"}),
            ),
            (
                "google/gemini-2.5-pro",
                "toolConfig",
                json!({"functionCallingConfig": {"mode": "ANY"}}),
            ),
        ] {
            let mut req = LlmRequest {
                model: model.into(),
                messages: vec![Message::user_text("go")],
                tools: vec![tool.clone()],
                tool_choice: Some(crate::protocol::ToolChoice::Required),
                ..Default::default()
            };
            assert_eq!(body_of(&req)[field], want, "{model}");
            req.tool_choice = Some(crate::protocol::ToolChoice::Auto);
            assert!(body_of(&req).get(field).is_none(), "{model}");
            req.tools.clear();
            req.tool_choice = Some(crate::protocol::ToolChoice::Required);
            assert!(body_of(&req).get(field).is_none(), "{model}");
        }
    }

    #[test]
    fn anthropic_same_model_keeps_signed_thinking_and_sends_errors_and_images() {
        let m = "anthropic/claude-sonnet-4-5";
        let b = body(m, conversation(m, "anthropic"));
        let msgs = b["messages"].as_array().unwrap();
        assert_eq!(msgs[0]["content"][1]["source"]["media_type"], "image/png");
        assert_eq!(
            msgs[1]["content"][0],
            json!({"type": "thinking", "thinking": "hmm", "signature": "SIG"})
        );
        assert_eq!(msgs[1]["content"][2]["type"], "tool_use");
        let result = &msgs[2]["content"][0];
        assert_eq!(result["type"], "tool_result");
        assert_eq!(result["tool_use_id"], "call_1");
        assert_eq!(result["is_error"], true);
        assert_eq!(result["content"][1]["type"], "image");
        // The user's next words join the tool results' turn, marked for caching.
        assert_eq!(msgs[2]["content"][1]["text"], "next");
        assert_eq!(msgs[2]["content"][1]["cache_control"]["type"], "ephemeral");
        assert_eq!(msgs.len(), 3);
    }

    #[test]
    fn anthropic_foreign_thinking_becomes_text() {
        let m = "anthropic/claude-sonnet-4-5";
        let b = body(m, conversation("openai/gpt-5", "openai-responses"));
        let first = &b["messages"][1]["content"][0];
        assert_eq!(first["type"], "text");
        assert!(first["text"].as_str().unwrap().contains("hmm"));
    }

    #[test]
    fn gemini_turns_alternate_and_results_carry_errors() {
        let m = "google/gemini-2.5-pro";
        let b = body(m, conversation("anthropic/claude-sonnet-4-5", "anthropic"));
        let contents = b["contents"].as_array().unwrap();
        let roles: Vec<&str> = contents
            .iter()
            .map(|c| c["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["user", "model", "user"]);
        assert_eq!(
            contents[0]["parts"][1]["inlineData"]["mimeType"],
            "image/png"
        );
        assert_eq!(
            contents[1]["parts"][2]["functionCall"],
            json!({"name": "read", "args": {"p": "a"}})
        );
        assert_eq!(
            contents[2]["parts"][0]["functionResponse"],
            json!({"name": "read", "response": {"error": "boom"}})
        );
        assert_eq!(b["systemInstruction"]["parts"][0]["text"], "sys");
    }

    #[test]
    fn responses_items_and_tool_images() {
        let m = "openai/gpt-5";
        let b = body(m, conversation("anthropic/claude-sonnet-4-5", "anthropic"));
        let input = b["input"].as_array().unwrap();
        let kinds: Vec<String> = input
            .iter()
            .map(|i| {
                i["type"]
                    .as_str()
                    .or(i["role"].as_str())
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "user",
                "assistant",
                "assistant",
                "function_call",
                "function_call_output",
                "user",
                "user"
            ]
        );
        assert_eq!(input[3]["call_id"], "call_1");
        assert_eq!(input[3]["arguments"], "{\"p\":\"a\"}");
        assert_eq!(input[4]["output"], "boom");
        assert_eq!(input[5]["content"][1]["type"], "input_image");
        assert_eq!(b["instructions"], "sys");
    }

    #[test]
    fn chat_images_and_mistral_ids() {
        let m = "mistral/mistral-large-latest";
        let b = body(m, conversation("anthropic/claude-sonnet-4-5", "anthropic"));
        let msgs = b["messages"].as_array().unwrap();
        assert_eq!(msgs[1]["content"][1]["type"], "image_url");
        let id = msgs[2]["tool_calls"][0]["id"].as_str().unwrap();
        assert_eq!(id.len(), 9);
        assert_eq!(msgs[3]["tool_call_id"], id);
        assert_eq!(msgs[4]["content"][1]["type"], "image_url");
        assert!(b.get("stream_options").is_none());
    }
}
