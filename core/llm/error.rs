//! What can go wrong in a model call: typed errors for set-up, the
//! classification of provider failures (retry or not, what to tell the
//! user), and the redaction that keeps keys out of every message.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

/// Errors before any request is made.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// `models.json` could not be read or parsed.
    #[error("cannot load the model config `{path}`: {1}", path = .0.display())]
    Config(PathBuf, String),
    /// The HTTP client could not be built.
    #[error("cannot set up the HTTP client: {0}")]
    Client(String),
}

impl LlmError {
    /// A stable code string.
    pub fn code(&self) -> &'static str {
        match self {
            LlmError::Config(..) => "llm.config",
            LlmError::Client(_) => "llm.client",
        }
    }
}

/// The kind of a failed call, deciding retries and the hint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// Missing, invalid or unauthorised key.
    Auth,
    /// Out of credit or quota (not worth retrying).
    Billing,
    /// The model does not exist for this provider.
    ModelNotFound,
    /// The conversation does not fit the model's context.
    ContextTooLong,
    /// The provider refused the request as malformed.
    BadRequest,
    /// Too many requests: retried.
    RateLimit,
    /// The provider is overloaded or failing: retried.
    Overloaded,
    /// The connection failed or dropped: retried before any output.
    Network,
    /// The server sent nothing for the idle timeout: retried before any output.
    Stalled,
    /// Nothing listens at a local address, or the host name does not
    /// resolve: not worth retrying.
    Unreachable,
    /// A success status with a body that is no answer (an HTML page, a
    /// proxy's notice): not retried.
    NotAStream,
    /// The stream broke off or carried something unreadable.
    Stream,
    /// The model, or the provider's content filter, declined to answer
    /// (the same request would be declined again: not retried).
    Refusal,
    /// Anything else.
    Other,
}

impl FailureKind {
    /// Worth another attempt.
    pub fn retryable(self) -> bool {
        matches!(
            self,
            FailureKind::RateLimit
                | FailureKind::Overloaded
                | FailureKind::Network
                | FailureKind::Stalled
        )
    }
}

/// A failed attempt.
#[derive(Debug, Clone)]
pub struct Failure {
    /// What kind.
    pub kind: FailureKind,
    /// The message for the user and the model (provider's words included).
    pub message: String,
    /// How long the provider asked us to wait.
    pub retry_after: Option<Duration>,
}

impl Failure {
    /// A failure of a kind with a message.
    pub fn new(kind: FailureKind, message: impl Into<String>) -> Failure {
        Failure {
            kind,
            message: message.into(),
            retry_after: None,
        }
    }

    /// The stop reason of the message it leaves: a refusal is told apart
    /// from a failed call, so that a front end can say so (ACP's
    /// `refusal`).
    pub fn stop_reason(&self) -> crate::protocol::StopReason {
        match self.kind {
            FailureKind::Refusal => crate::protocol::StopReason::Refusal,
            _ => crate::protocol::StopReason::Error,
        }
    }
}

/// Classifies an HTTP error response.
pub fn classify_http(
    provider: &str,
    model: &str,
    status: u16,
    body: &str,
    retry_after: Option<Duration>,
    key_env: &[String],
) -> Failure {
    let json: Option<Value> = serde_json::from_str(body.trim()).ok();
    let (code, message) = json
        .as_ref()
        .map(provider_error)
        .unwrap_or_else(|| (String::new(), first_line(body)));
    let lower = format!("{code} {message}").to_ascii_lowercase();
    let kind = if lower.contains("insufficient_quota")
        || lower.contains("credit balance")
        || lower.contains("billing")
    {
        FailureKind::Billing
    } else if context_too_long(&lower) {
        FailureKind::ContextTooLong
    } else {
        match status {
            401 | 403 => FailureKind::Auth,
            404 => FailureKind::ModelNotFound,
            408 | 409 | 425 | 429 => FailureKind::RateLimit,
            500 if request_unreadable(&lower) => FailureKind::BadRequest,
            500..=599 => FailureKind::Overloaded,
            400 | 422 if lower.contains("api key") || lower.contains("api_key") => {
                FailureKind::Auth
            }
            400 | 413 | 422 => FailureKind::BadRequest,
            _ => FailureKind::Other,
        }
    };
    let retry_after = retry_after.or_else(|| json.as_ref().and_then(retry_info));
    let code_part = if code.is_empty() {
        String::new()
    } else {
        format!(" {code}")
    };
    let what = if message.is_empty() {
        "(no message)".to_string()
    } else {
        message
    };
    let hint = hint(kind, provider, model, key_env);
    let mut text = format!("{provider} answered HTTP {status}{code_part}: {what}");
    if !hint.is_empty() {
        text.push_str("\nhint: ");
        text.push_str(&hint);
    }
    Failure {
        kind,
        message: text,
        retry_after,
    }
}

/// Classifies an error event in the middle of a stream.
pub fn classify_stream_error(provider: &str, model: &str, value: &Value) -> Failure {
    let (code, message) = provider_error(value);
    let lower = format!("{code} {message}").to_ascii_lowercase();
    // OpenRouter and others pass the upstream HTTP status as a numeric code.
    let status = value
        .get("error")
        .and_then(|e| e.get("code"))
        .and_then(Value::as_u64);
    let kind = if context_too_long(&lower) {
        FailureKind::ContextTooLong
    } else if status == Some(429) {
        FailureKind::RateLimit
    } else if status.is_some_and(|s| (500..600).contains(&s)) {
        FailureKind::Overloaded
    } else if lower.contains("overloaded")
        || lower.contains("rate_limit")
        || lower.contains("rate limit")
        || lower.contains("server_error")
        || lower.contains("api_error")
        || lower.contains("unavailable")
        || lower.contains("internal")
    {
        if lower.contains("rate") {
            FailureKind::RateLimit
        } else {
            FailureKind::Overloaded
        }
    } else {
        FailureKind::Other
    };
    let code_part = if code.is_empty() {
        String::new()
    } else {
        format!(" ({code})")
    };
    let mut text = format!("{provider} reported an error mid-stream{code_part}: {message}");
    let h = hint(kind, provider, model, &[]);
    if !h.is_empty() {
        text.push_str("\nhint: ");
        text.push_str(&h);
    }
    Failure::new(kind, text)
}

/// A server error whose words say the server could not read the request
/// (llama.cpp answers 500 to arguments that are no JSON): the same request
/// would fail the same way, so it is a bad request, not a busy server. A
/// gateway's 502 about its upstream's answer is not looked at.
fn request_unreadable(lower: &str) -> bool {
    ["failed to parse", "parse error", "json.exception"]
        .iter()
        .any(|k| lower.contains(k))
}

fn context_too_long(lower: &str) -> bool {
    is_context_overflow(lower)
}

/// True for a provider's words that say the conversation does not fit the
/// model's context window, whoever said them: OpenAI and Azure
/// (`context_length_exceeded`), Anthropic (`prompt is too long`, `exceed
/// context limit`), Gemini (`input token count ... exceeds the maximum
/// number of tokens`), llama.cpp (`exceed_context_size_error`, `exceeds the
/// available context size`), Ollama (`exceeds the context length`), vLLM,
/// DeepSeek and OpenRouter (`maximum context length is`), LM Studio
/// (`context length of only`, `greater than the context length`, `context
/// size has been exceeded`), Groq (`reduce the length of the messages`),
/// Mistral (`too large for model with`), xAI (`maximum prompt length is`).
/// ag's own message for such a failure says `context window` too, so that
/// the words survive a trip through `--llm-cmd`. A limit per minute is no
/// overflow: waiting, not compacting, is what helps.
pub fn is_context_overflow(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    if [
        "rate limit",
        "rate_limit",
        "per minute",
        "per min ",
        "(tpm)",
    ]
    .iter()
    .any(|k| lower.contains(k))
    {
        return false;
    }
    [
        "context_length_exceeded",
        "context length",
        "context window",
        "context_window",
        "context size",
        "exceed_context_size",
        "context limit",
        "prompt is too long",
        "prompt too long",
        "input is too long",
        "too many tokens",
        "maximum context",
        "maximum prompt length",
        "input token count",
        "exceeds the maximum number of tokens",
        "reduce the length of the messages",
        "too large for model with",
        "exceeds the context",
    ]
    .iter()
    .any(|k| lower.contains(k))
}

fn hint(kind: FailureKind, provider: &str, model: &str, key_env: &[String]) -> String {
    match kind {
        FailureKind::Auth => {
            let vars = if key_env.is_empty() {
                "the provider's key variable".to_string()
            } else {
                key_env
                    .iter()
                    .map(|v| format!("`{v}`"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            };
            format!("check the key for `{provider}`: set {vars}, or pass `--api-key`")
        }
        FailureKind::Billing => format!("add credit or raise the quota of the `{provider}` account"),
        FailureKind::ModelNotFound => format!(
            "the model `{model}` is not served at this address; check the id (`ag-llm --list-models`) or `--base-url`"
        ),
        FailureKind::ContextTooLong => {
            "the conversation does not fit the model's context window: drop or summarise older messages, or use a model (or start the server) with a larger context".into()
        }
        FailureKind::RateLimit | FailureKind::Overloaded => {
            "the provider is busy; try again later or use another model".into()
        }
        FailureKind::BadRequest => "the provider refused the request as sent; the message above says which field".into(),
        _ => String::new(),
    }
}

/// The provider's code and message from an error body of any API:
/// `{"error":{"message","type","code"}}` (OpenAI, Anthropic),
/// `{"error":{"code":429,"message","status"}}` (Gemini), or a bare string.
fn provider_error(v: &Value) -> (String, String) {
    let v = match v {
        Value::Array(items) => items.first().unwrap_or(v),
        other => other,
    };
    let err = v.get("error").unwrap_or(v);
    if let Value::String(s) = err {
        return (String::new(), s.clone());
    }
    let message = ["message", "detail", "msg"]
        .iter()
        .find_map(|k| err.get(*k).and_then(Value::as_str))
        .unwrap_or("")
        .to_string();
    let code = ["status", "code", "type"]
        .iter()
        .find_map(|k| match err.get(*k) {
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            _ => None,
        })
        .unwrap_or_default();
    let message = if message.is_empty() {
        first_line(&v.to_string())
    } else {
        message
    };
    (code, message)
}

/// Gemini's `RetryInfo.retryDelay` ("34.4s") inside `error.details`.
fn retry_info(v: &Value) -> Option<Duration> {
    let v = match v {
        Value::Array(items) => items.first()?,
        other => other,
    };
    let details = v.get("error")?.get("details")?.as_array()?;
    details.iter().find_map(|d| {
        let s = d.get("retryDelay")?.as_str()?;
        let secs: f64 = s.trim_end_matches('s').parse().ok()?;
        (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs))
    })
}

/// `message` with `note` added to its first part, before any `hint:` line.
pub fn with_note(message: &str, note: &str) -> String {
    match message.find("\nhint: ") {
        Some(i) => format!("{} {note}{}", &message[..i], &message[i..]),
        None => format!("{message} {note}"),
    }
}

/// Classifies a request that got no answer at all: a local server that is
/// not running and a host name that does not resolve fail at once, naming
/// what to start or what to fix; anything else is a network failure,
/// retried.
pub fn classify_connect(
    provider: &str,
    url: &str,
    e: &(dyn std::error::Error + 'static),
) -> Failure {
    let mut refused = false;
    let mut innermost = e.to_string();
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cur {
        if c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
        {
            refused = true;
        }
        innermost = c.to_string();
        cur = c.source();
    }
    let chain = error_chain(e);
    let parsed = reqwest::Url::parse(url).ok();
    let host = parsed
        .as_ref()
        .and_then(|u| u.host_str())
        .unwrap_or("")
        .to_string();
    let lower = chain.to_ascii_lowercase();
    if lower.contains("dns error") || lower.contains("failed to lookup address") {
        return Failure::new(
            FailureKind::Unreachable,
            format!(
                "cannot resolve the host name `{host}` of `{url}` ({innermost})\nhint: check the host in `--base-url`, or the provider's `base_url` in models.json"
            ),
        );
    }
    if refused && parsed.as_ref().is_some_and(is_loopback) {
        let port = parsed
            .as_ref()
            .and_then(|u| u.port_or_known_default())
            .unwrap_or(80);
        return Failure::new(
            FailureKind::Unreachable,
            format!(
                "nothing is listening at `{url}` (connection refused): the {provider} server is not running\nhint: {}, or point `--base-url` at where it listens",
                start_hint(provider, port)
            ),
        );
    }
    Failure::new(
        FailureKind::Network,
        format!("cannot reach {provider} at `{url}`: {chain}"),
    )
}

fn is_loopback(u: &reqwest::Url) -> bool {
    let Some(host) = u.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => {
            let d = host.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
    }
}

/// How to start the server of a local provider.
fn start_hint(provider: &str, port: u16) -> String {
    match provider {
        "llamacpp" => format!("start it: `llama-server -m MODEL.gguf --port {port} --jinja`"),
        "ollama" => "start it: `ollama serve`".into(),
        "vllm" => format!("start it: `vllm serve MODEL --port {port}`"),
        "lmstudio" => "start it: `lms server start` (or LM Studio's Developer tab)".into(),
        other => format!("start the server that `{other}` stands for (port {port})"),
    }
}

/// The failure for a success status whose body is no model stream.
pub fn not_a_stream(provider: &str, status: u16, content_type: &str, body: &[u8]) -> Failure {
    let text = String::from_utf8_lossy(body);
    let line = first_line(&text);
    let ct = if content_type.is_empty() {
        "no content type".to_string()
    } else {
        format!("`{content_type}`")
    };
    let what = if line.is_empty() {
        "an empty body".to_string()
    } else {
        format!("a body beginning `{line}`")
    };
    Failure::new(
        FailureKind::NotAStream,
        format!(
            "{provider} answered HTTP {status} with {ct} and {what}, not a model stream\nhint: the base URL may point at a web page, a proxy or a login portal rather than the API; check `--base-url`"
        ),
    )
}

/// True when the first bytes of a body could be a model stream (SSE, or
/// JSON as Gemini sends without `alt=sse`).
pub fn looks_like_stream(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let t = text.trim_start_matches('\u{feff}').trim_start();
    t.is_empty()
        || ["data:", "event:", "id:", "retry:", ":", "{", "["]
            .iter()
            .any(|p| t.starts_with(p))
}

/// An error and its causes on one line.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = c.source();
    }
    s
}

fn first_line(s: &str) -> String {
    let line = s.trim().lines().next().unwrap_or("").trim();
    let mut out: String = line.chars().take(500).collect();
    if line.chars().count() > 500 {
        out.push('…');
    }
    out
}

/// Removes the key, and anything that looks like a (masked) key, from a message.
pub fn redact(text: &str, key: Option<&str>) -> String {
    let mut out = text.to_string();
    if let Some(k) = key.filter(|k| k.len() >= 4) {
        out = out.replace(k, "[redacted]");
    }
    // Providers quote masked keys back (`sk-proj-****abcd`); drop them too.
    out.split_inclusive(char::is_whitespace)
        .map(|word| {
            let trimmed = word.trim_end();
            let bare = trimmed.trim_end_matches(['.', ',', ';', ')', '"', '\'']);
            let looks_like_key = bare.len() >= 8
                && (bare.starts_with("sk-")
                    || bare.starts_with("sk_")
                    || bare.starts_with("AIza")
                    || bare.starts_with("gsk_")
                    || bare.starts_with("xai-")
                    || bare.contains("****"));
            if looks_like_key {
                format!(
                    "[redacted]{}{}",
                    &trimmed[bare.len()..],
                    &word[trimmed.len()..]
                )
            } else {
                word.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_401_is_auth_with_hint_and_no_key() {
        let body = r#"{"error":{"message":"Incorrect API key provided: sk-proj-****************************abcd. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#;
        let f = classify_http(
            "openai",
            "gpt-4o",
            401,
            body,
            None,
            &["OPENAI_API_KEY".into()],
        );
        assert_eq!(f.kind, FailureKind::Auth);
        assert!(!f.kind.retryable());
        let shown = redact(&f.message, Some("sk-secret"));
        assert!(shown.contains("Incorrect API key provided"), "{shown}");
        assert!(shown.contains("invalid_api_key"), "{shown}");
        assert!(shown.contains("OPENAI_API_KEY"), "{shown}");
        assert!(!shown.contains("****"), "{shown}");
    }

    #[test]
    fn anthropic_529_is_retryable() {
        let body = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        let f = classify_http("anthropic", "m", 529, body, None, &[]);
        assert_eq!(f.kind, FailureKind::Overloaded);
        assert!(f.kind.retryable());
        assert!(f.message.contains("overloaded_error"));
    }

    #[test]
    fn gemini_429_retry_delay() {
        let body = r#"{"error":{"code":429,"message":"You exceeded your current quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"34.4s"}]}}"#;
        let f = classify_http("google", "m", 429, body, None, &[]);
        assert_eq!(f.kind, FailureKind::RateLimit);
        assert_eq!(f.retry_after, Some(Duration::from_millis(34_400)));
        assert!(f.message.contains("RESOURCE_EXHAUSTED"));
    }

    #[test]
    fn context_and_quota_are_not_retried() {
        let ctx = r#"{"error":{"message":"This model's maximum context length is 128000 tokens","code":"context_length_exceeded"}}"#;
        assert_eq!(
            classify_http("openai", "m", 400, ctx, None, &[]).kind,
            FailureKind::ContextTooLong
        );
        let quota = r#"{"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}}"#;
        assert_eq!(
            classify_http("openai", "m", 429, quota, None, &[]).kind,
            FailureKind::Billing
        );
    }

    #[test]
    fn numeric_codes_mid_stream() {
        let v = serde_json::json!({"error": {"message": "upstream failed", "code": 502}});
        assert_eq!(
            classify_stream_error("openrouter", "m", &v).kind,
            FailureKind::Overloaded
        );
        let v = serde_json::json!({"error": {"message": "slow", "code": 429}});
        assert_eq!(
            classify_stream_error("openrouter", "m", &v).kind,
            FailureKind::RateLimit
        );
    }

    #[test]
    fn redacts_literal_keys() {
        assert_eq!(
            redact("key=abcd1234 end", Some("abcd1234")),
            "key=[redacted] end"
        );
        assert_eq!(
            redact("bad key AIzaSyA12345678.", None),
            "bad key [redacted]."
        );
    }
    /// One test per provider: its overflow body (as each documents or was
    /// seen answering) is a context failure, not retried, and ag-loop's
    /// check for compaction recognises the message it ends up in.
    macro_rules! overflow {
        ($name:ident, $provider:literal, $status:literal, $body:expr) => {
            #[test]
            fn $name() {
                let f = classify_http($provider, "m", $status, $body, None, &[]);
                assert_eq!(f.kind, FailureKind::ContextTooLong, "{}", f.message);
                assert!(!f.kind.retryable());
                assert!(
                    crate::llm::error::is_context_overflow(&f.message),
                    "{}",
                    f.message
                );
            }
        };
    }

    overflow!(
        overflow_llamacpp,
        "llamacpp",
        400,
        r#"{"error":{"code":400,"message":"request (7002 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":7002,"n_ctx":4096}}"#
    );
    overflow!(
        overflow_ollama,
        "ollama",
        400,
        r#"{"error":{"message":"the input length exceeds the context length","type":"invalid_request_error","param":null,"code":null}}"#
    );
    overflow!(
        overflow_vllm,
        "vllm",
        400,
        r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (3976 in the messages, 1024 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#
    );
    overflow!(
        overflow_lmstudio,
        "lmstudio",
        400,
        r#"{"error":"Trying to keep the first 10136 tokens when context the overflows. However, the model is loaded with context length of only 7866 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"}"#
    );
    overflow!(
        overflow_lmstudio_keep,
        "lmstudio",
        400,
        r#"{"error":"The number of tokens to keep from the initial prompt is greater than the context length. Try to load the model with a larger context length, or provide a shorter input."}"#
    );
    overflow!(
        overflow_openrouter,
        "openrouter",
        400,
        r#"{"error":{"message":"This endpoint's maximum context length is 131072 tokens. However, you requested about 140312 tokens (140312 of text input). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.","code":400,"metadata":{"provider_name":null}}}"#
    );
    overflow!(
        overflow_groq,
        "groq",
        400,
        r#"{"error":{"message":"Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#
    );
    overflow!(
        overflow_mistral,
        "mistral",
        400,
        r#"{"object":"error","message":"Prompt contains 40321 tokens and 0 draft tokens, too large for model with 32768 maximum context length","type":"invalid_request_message_error","param":null,"code":"3051"}"#
    );
    overflow!(
        overflow_deepseek,
        "deepseek",
        400,
        r#"{"error":{"message":"This model's maximum context length is 131072 tokens. However, you requested 140000 tokens (131808 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}"#
    );
    overflow!(
        overflow_xai,
        "xai",
        400,
        r#"{"code":"Client specified an invalid argument","error":"This model's maximum prompt length is 131072 but the request contains 136973 tokens."}"#
    );
    overflow!(
        overflow_azure,
        "azure",
        400,
        r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9013 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded","status":400}}"#
    );
    overflow!(
        overflow_openai_responses,
        "openai",
        400,
        r#"{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}"#
    );
    overflow!(
        overflow_anthropic,
        "anthropic",
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210417 tokens > 200000 maximum"},"request_id":"req_011CUv"}"#
    );
    overflow!(
        overflow_anthropic_with_max_tokens,
        "anthropic",
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 195000 + 64000 > 200000, decrease input length or `max_tokens` and try again"}}"#
    );
    overflow!(
        overflow_gemini,
        "google",
        400,
        r#"{"error":{"code":400,"message":"The input token count (1212345) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}"#
    );

    #[test]
    fn overflow_mid_stream_from_an_openai_style_server() {
        // LM Studio and Ollama may answer 200 and put the error in the stream.
        let v = serde_json::json!({"error": {"message": "the input length exceeds the context length", "type": "api_error"}});
        let f = classify_stream_error("ollama", "m", &v);
        assert_eq!(f.kind, FailureKind::ContextTooLong, "{}", f.message);
        let v = serde_json::json!({"error": "Context size has been exceeded."});
        assert_eq!(
            classify_stream_error("lmstudio", "m", &v).kind,
            FailureKind::ContextTooLong
        );
    }

    #[test]
    fn a_500_that_could_not_read_the_request_is_not_retried() {
        let body = r#"{"error":{"code":500,"message":"Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error at line 1","type":"server_error"}}"#;
        let f = classify_http("local", "m", 500, body, None, &[]);
        assert_eq!(f.kind, FailureKind::BadRequest);
        assert!(!f.kind.retryable());
        assert!(!f.message.contains("busy"), "{}", f.message);
        // A plain server error is still worth another attempt.
        let f = classify_http(
            "local",
            "m",
            500,
            r#"{"error":{"message":"Internal error"}}"#,
            None,
            &[],
        );
        assert_eq!(f.kind, FailureKind::Overloaded);
    }

    #[test]
    fn a_limit_per_minute_is_no_overflow() {
        let body = r#"{"error":{"message":"Request too large for model `llama-3.3-70b-versatile` in organization `org_01` service tier `on_demand` on tokens per minute (TPM): Limit 6000, Requested 14810, please reduce your message size and try again.","type":"tokens","code":"rate_limit_exceeded"}}"#;
        let f = classify_http("groq", "m", 413, body, None, &[]);
        assert_ne!(f.kind, FailureKind::ContextTooLong);
        assert!(!crate::llm::error::is_context_overflow(&f.message));
    }
}
