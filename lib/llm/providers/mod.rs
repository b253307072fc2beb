//! One module per wire protocol, each owning both directions: the request
//! body built from an [`LlmRequest`] and the stream parser for the answer.

pub mod anthropic;
pub mod gemini;
pub mod openai_chat;
pub mod openai_responses;

use serde_json::Value;

use super::models::{Api, ModelInfo, Provider};
use crate::protocol::LlmRequest;

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

/// The output limit to ask for: the request's, else the model's.
pub fn max_tokens(t: &Target<'_>, req: &LlmRequest) -> u64 {
    req.max_tokens.unwrap_or(t.model.max_output).max(1)
}
