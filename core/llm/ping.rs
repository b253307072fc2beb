//! One cheap request that tells whether a model's server answers and takes
//! the key: the provider's list of models (`GET /models`), which costs no
//! tokens. `ag-loop --check` reports it.

use std::time::{Duration, Instant};

use super::Llm;
use super::models::Api;

/// How long the server may take to answer.
const PING_TIMEOUT: Duration = Duration::from_secs(5);

/// What the server said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// It listed its models: a call would reach it with this key.
    Listed,
    /// It refused the key (401 or 403).
    KeyRefused(u16),
    /// It answered with another status; it is there, but the list was not
    /// had (some local servers have none).
    Status(u16),
    /// Nothing answered: the reason.
    Unreachable(String),
}

/// The request made and its answer.
#[derive(Debug, Clone)]
pub struct Ping {
    /// What was asked (no key in it).
    pub url: String,
    /// What came back.
    pub answer: Answer,
    /// How long it took.
    pub elapsed: Duration,
}

impl Ping {
    /// Whether a model call would get through on what was seen.
    pub fn works(&self) -> bool {
        matches!(self.answer, Answer::Listed | Answer::Status(_))
    }
}

impl Llm {
    /// Asks the server of `model` for its list of models, with the key a
    /// call would send. `None` when the model or its provider is unknown
    /// (`check` says why) or a recording is replayed.
    pub async fn ping(&self, model: &str) -> Option<Ping> {
        if self.replay.is_some() {
            return None;
        }
        let info = self.model_info(model)?;
        let provider = self.table.provider(&info.provider)?;
        let base = self
            .opts
            .base_url
            .as_deref()
            .unwrap_or(&provider.base_url)
            .trim_end_matches('/')
            .to_string();
        let key = self.key_for(provider);
        let (url, mut headers) = match info.api {
            Api::OpenAiChat | Api::OpenAiResponses => {
                let h = key
                    .iter()
                    .map(|k| ("authorization".to_string(), format!("Bearer {k}")))
                    .collect::<Vec<_>>();
                (format!("{base}/models"), h)
            }
            Api::Anthropic => {
                let url = if base.ends_with("/v1") {
                    format!("{base}/models")
                } else {
                    format!("{base}/v1/models")
                };
                let mut h = vec![("anthropic-version".to_string(), "2023-06-01".to_string())];
                h.extend(key.iter().map(|k| ("x-api-key".to_string(), k.clone())));
                (url, h)
            }
            Api::Gemini => {
                let h = key
                    .iter()
                    .map(|k| ("x-goog-api-key".to_string(), k.clone()))
                    .collect::<Vec<_>>();
                (format!("{base}/models"), h)
            }
        };
        headers.extend(provider.headers.iter().map(|(k, v)| (k.clone(), v.clone())));
        let mut rb = self.client.get(&url);
        for (k, v) in &headers {
            rb = rb.header(k.as_str(), v.as_str());
        }
        let start = Instant::now();
        let answer = match tokio::time::timeout(PING_TIMEOUT, rb.send()).await {
            Err(_) => Answer::Unreachable(format!("no answer within {} s", PING_TIMEOUT.as_secs())),
            Ok(Err(e)) => Answer::Unreachable(reason(&e)),
            Ok(Ok(resp)) => match resp.status().as_u16() {
                200..=299 => Answer::Listed,
                s @ (401 | 403) => Answer::KeyRefused(s),
                s => Answer::Status(s),
            },
        };
        Some(Ping {
            url,
            answer,
            elapsed: start.elapsed(),
        })
    }
}

/// The innermost cause of a failed request, which says what happened
/// ("Connection refused"), without the URL reqwest repeats.
fn reason(e: &reqwest::Error) -> String {
    let mut cause: &dyn std::error::Error = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    let text = cause.to_string();
    if e.is_connect() && !text.to_lowercase().contains("connect") {
        format!("cannot connect: {text}")
    } else {
        text
    }
}

/// Where the key a call would send comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// `--api-key`.
    Flag,
    /// The provider's entry in models.json.
    Config,
    /// This environment variable.
    Env(String),
    /// None is set, and the provider needs none (a local server).
    NotNeeded,
    /// None is set: these variables were looked for.
    Missing(Vec<String>),
}

impl Llm {
    /// Where the key for `model` would come from; `None` when the model or
    /// its provider is unknown.
    pub fn key_source(&self, model: &str) -> Option<KeySource> {
        let info = self.model_info(model)?;
        let p = self.table.provider(&info.provider)?;
        let set = |k: &Option<String>| k.as_deref().is_some_and(|k| !k.trim().is_empty());
        if set(&self.opts.api_key) {
            return Some(KeySource::Flag);
        }
        if set(&p.api_key) {
            return Some(KeySource::Config);
        }
        if let Some(v) = p
            .key_env
            .iter()
            .find(|v| std::env::var(v).is_ok_and(|k| !k.trim().is_empty()))
        {
            return Some(KeySource::Env(v.clone()));
        }
        Some(if p.key_optional {
            KeySource::NotNeeded
        } else {
            KeySource::Missing(p.key_env.clone())
        })
    }
}
