//! The provider-agnostic model client behind ag-llm and ag-loop: one
//! [`Llm`] holds the model table and a reused HTTP client; [`Llm::stream`]
//! makes one call, sending each event to a sink as its bytes arrive, with
//! retries before any output, cancellation at any point, and the key kept
//! out of everything it reports.

pub mod assemble;
pub mod cli;
pub mod convert;
pub mod error;
pub mod frames;
pub mod keys;
pub mod models;
pub mod parse;
pub mod providers;
pub mod record;
pub mod retry;

use std::path::PathBuf;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

pub use error::{Failure, FailureKind, LlmError};
pub use models::{Api, ModelInfo, ModelTable, Prices, Provider};
pub use retry::RetryPolicy;

use self::assemble::Builder;
use self::parse::{Decoder, Names, conclude};
use self::providers::{HttpRequest, Target};
use crate::protocol::{AssistantMessage, LlmEvent, LlmRequest, StopReason};

/// How to reach providers, beyond the model table.
#[derive(Debug, Clone, Default)]
pub struct LlmOptions {
    /// A key used for whatever provider the model belongs to.
    pub api_key: Option<String>,
    /// A base URL replacing the provider's.
    pub base_url: Option<String>,
    /// Where `models.json` lives; `None` means `$AG_HOME`, else `~/.ag`.
    pub ag_home: Option<PathBuf>,
}

/// The model client.
pub struct Llm {
    client: reqwest::Client,
    table: ModelTable,
    opts: LlmOptions,
    retry: RetryPolicy,
    record: Option<PathBuf>,
    replay: Option<PathBuf>,
}

/// Bytes of an error body kept for the message.
const MAX_ERROR_BODY: usize = 64 * 1024;

enum Outcome {
    Finished(AssistantMessage, Option<Failure>, bool),
    Aborted(AssistantMessage),
}

impl Llm {
    /// Loads the model table and config; makes no network call.
    pub fn new(opts: LlmOptions) -> Result<Llm, LlmError> {
        let home = opts.ag_home.clone().unwrap_or_else(models::default_ag_home);
        let table = ModelTable::load(&home)?;
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(30))
            .pool_idle_timeout(Duration::from_secs(90))
            .user_agent(concat!("ag/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| LlmError::Client(e.to_string()))?;
        Ok(Llm {
            client,
            table,
            opts,
            retry: RetryPolicy::from_env(),
            record: None,
            replay: None,
        })
    }

    /// Saves every exchange (request and raw response) in `dir`.
    pub fn with_record(mut self, dir: PathBuf) -> Llm {
        self.record = Some(dir);
        self
    }

    /// Answers every request from the recordings in `dir`, with no network.
    pub fn with_replay(mut self, dir: PathBuf) -> Llm {
        self.replay = Some(dir);
        self
    }

    /// Replaces the retry policy.
    pub fn with_retry(mut self, policy: RetryPolicy) -> Llm {
        self.retry = policy;
        self
    }

    /// The model table in force.
    pub fn table(&self) -> &ModelTable {
        &self.table
    }

    /// What is known about `provider/model`; unknown models of a known
    /// provider resolve with zero prices.
    pub fn model_info(&self, model: &str) -> Option<ModelInfo> {
        self.table.resolve(model)
    }

    /// The key for a provider: the option, the config file, then its variables.
    fn key_for(&self, p: &Provider) -> Option<String> {
        self.opts
            .api_key
            .clone()
            .or_else(|| p.api_key.clone())
            .or_else(|| {
                p.key_env
                    .iter()
                    .find_map(|v| std::env::var(v).ok().filter(|k| !k.trim().is_empty()))
            })
            .map(|k| k.trim().to_string())
    }

    /// Streams one call. Every event (ending with exactly one `done` or
    /// `error`) goes to `sink` as it arrives; the returned message equals
    /// the one in the final event (stop reason `error` or `aborted` when it
    /// failed or was cancelled).
    pub async fn stream(
        &self,
        req: &LlmRequest,
        sink: &mut (dyn FnMut(LlmEvent) + Send),
        cancel: &CancellationToken,
    ) -> AssistantMessage {
        let Some(info) = self.table.resolve(&req.model) else {
            let providers: Vec<&str> = self.table.providers().map(|p| p.id.as_str()).collect();
            let f = Failure::new(
                FailureKind::ModelNotFound,
                format!(
                    "unknown model `{}`: give it as provider/model with a provider among {}\nhint: `ag-llm --list-models` shows the table; `$AG_HOME/models.json` adds providers and models",
                    req.model,
                    providers.join(", ")
                ),
            );
            return self.fail(
                sink,
                &req.model,
                None,
                AssistantMessage::default(),
                &f,
                None,
            );
        };
        let Some(provider) = self.table.provider(&info.provider) else {
            let f = Failure::new(
                FailureKind::Other,
                format!("provider `{}` is not configured", info.provider),
            );
            return self.fail(
                sink,
                &req.model,
                Some(&info),
                AssistantMessage::default(),
                &f,
                None,
            );
        };
        let key = self.key_for(provider);
        if key.is_none() && !provider.key_optional && self.replay.is_none() {
            let vars = provider
                .key_env
                .iter()
                .map(|v| format!("`{v}`"))
                .collect::<Vec<_>>()
                .join(" or ");
            let f = Failure::new(
                FailureKind::Auth,
                format!(
                    "no API key for `{}`\nhint: set {} or pass `--api-key`",
                    provider.id,
                    if vars.is_empty() {
                        "`api_key_env` in models.json".to_string()
                    } else {
                        vars
                    }
                ),
            );
            return self.fail(
                sink,
                &req.model,
                Some(&info),
                AssistantMessage::default(),
                &f,
                None,
            );
        }
        let base_url = req
            .base_url
            .as_deref()
            .or(self.opts.base_url.as_deref())
            .unwrap_or(&provider.base_url);
        let target = Target {
            model: &info,
            provider,
            base_url,
            key: key.as_deref(),
        };
        let http = providers::build(&target, req);
        let names = Names {
            provider: provider.id.clone(),
            model: info.id.clone(),
        };
        let mut started = false;
        let mut attempt = 0u32;
        loop {
            let outcome = self
                .attempt(&http, &info, &names, sink, cancel, &mut started)
                .await;
            match outcome {
                Outcome::Aborted(mut msg) => {
                    self.finalize(&mut msg, &info);
                    msg.stop_reason = StopReason::Aborted;
                    sink(LlmEvent::Done {
                        message: msg.clone(),
                    });
                    return msg;
                }
                Outcome::Finished(mut msg, None, _) => {
                    self.finalize(&mut msg, &info);
                    sink(LlmEvent::Done {
                        message: msg.clone(),
                    });
                    return msg;
                }
                Outcome::Finished(msg, Some(f), had_output) => {
                    let wait = (!had_output && f.kind.retryable() && attempt < self.retry.retries)
                        .then(|| self.retry.delay(attempt + 1, f.retry_after))
                        .flatten();
                    let Some(wait) = wait else {
                        let mut f = f;
                        if let Some(ra) = f.retry_after.filter(|ra| *ra > self.retry.give_up_over) {
                            f.message.push_str(&format!(
                                "\n(the provider asked to wait {} s before another attempt)",
                                ra.as_secs()
                            ));
                        }
                        return self.fail(sink, &req.model, Some(&info), msg, &f, key.as_deref());
                    };
                    attempt += 1;
                    tokio::select! {
                        _ = cancel.cancelled() => {
                            let mut msg = AssistantMessage::default();
                            self.finalize(&mut msg, &info);
                            msg.stop_reason = StopReason::Aborted;
                            sink(LlmEvent::Done { message: msg.clone() });
                            return msg;
                        }
                        _ = tokio::time::sleep(wait) => {}
                    }
                }
            }
        }
    }

    fn finalize(&self, msg: &mut AssistantMessage, info: &ModelInfo) {
        msg.model = Some(info.full_id());
        msg.api.get_or_insert_with(|| info.api.as_str().to_string());
        msg.timestamp = Some(jiff::Timestamp::now().to_string());
        models::apply_cost(&mut msg.usage, &info.prices);
    }

    fn fail(
        &self,
        sink: &mut (dyn FnMut(LlmEvent) + Send),
        model: &str,
        info: Option<&ModelInfo>,
        mut msg: AssistantMessage,
        f: &Failure,
        key: Option<&str>,
    ) -> AssistantMessage {
        match info {
            Some(i) => self.finalize(&mut msg, i),
            None => {
                msg.model = Some(model.to_string());
                msg.timestamp = Some(jiff::Timestamp::now().to_string());
            }
        }
        let text = error::redact(&f.message, key.or(self.opts.api_key.as_deref()));
        msg.stop_reason = StopReason::Error;
        msg.error_message = Some(text.clone());
        sink(LlmEvent::Error {
            message: msg.clone(),
            error: text,
        });
        msg
    }

    /// One HTTP exchange (or one replay).
    async fn attempt(
        &self,
        http: &HttpRequest,
        info: &ModelInfo,
        names: &Names,
        sink: &mut (dyn FnMut(LlmEvent) + Send),
        cancel: &CancellationToken,
        started: &mut bool,
    ) -> Outcome {
        let mut b = Builder::new(sink);
        let mut decoder = Decoder::new(info.api, names.clone());
        let mut recorded: Vec<u8> = Vec::new();
        let mut status = 0u16;
        let outcome = 'run: {
            if let Some(dir) = &self.replay {
                let (st, body) = match record::load(dir, info.api, http) {
                    Ok(x) => x,
                    Err(msg) => {
                        break 'run Outcome::Finished(
                            AssistantMessage::default(),
                            Some(Failure::new(FailureKind::Other, msg)),
                            false,
                        );
                    }
                };
                if !(200..300).contains(&st) {
                    let text = String::from_utf8_lossy(&body);
                    let f =
                        error::classify_http(&names.provider, &names.model, st, &text, None, &[]);
                    break 'run Outcome::Finished(AssistantMessage::default(), Some(f), false);
                }
                start(&mut b, info, started);
                let mut failure = None;
                for chunk in body.chunks(4096) {
                    if cancel.is_cancelled() {
                        break 'run Outcome::Aborted(b.take_message());
                    }
                    if let Err(f) = decoder.feed(chunk, &mut b) {
                        failure = Some(f);
                        break;
                    }
                    if decoder.complete() {
                        break;
                    }
                }
                if failure.is_none() && !decoder.complete() {
                    failure = decoder.finish(&mut b).err();
                }
                let had = b.has_output();
                let (mut msg, f) = conclude(&mut b, failure);
                msg.api = Some(decoder.api().as_str().to_string());
                break 'run Outcome::Finished(msg, f, had);
            }
            let body = serde_json::to_vec(&http.body).unwrap_or_default();
            let mut rb = self.client.post(&http.url).body(body);
            for (k, v) in &http.headers {
                rb = rb.header(k.as_str(), v.as_str());
            }
            let sent = tokio::select! {
                _ = cancel.cancelled() => break 'run Outcome::Aborted(AssistantMessage::default()),
                r = rb.send() => r,
            };
            let mut resp = match sent {
                Ok(r) => r,
                Err(e) => {
                    let f = Failure::new(
                        FailureKind::Network,
                        format!(
                            "cannot reach {} at `{}`: {}",
                            names.provider,
                            http.url,
                            error_chain(&e)
                        ),
                    );
                    break 'run Outcome::Finished(AssistantMessage::default(), Some(f), false);
                }
            };
            status = resp.status().as_u16();
            if !resp.status().is_success() {
                let retry_after = retry::retry_after(resp.headers());
                let should_retry = resp
                    .headers()
                    .get("x-should-retry")
                    .and_then(|v| v.to_str().ok())
                    .map(|v| v == "true");
                let mut body = Vec::new();
                loop {
                    let chunk = tokio::select! {
                        _ = cancel.cancelled() => break 'run Outcome::Aborted(AssistantMessage::default()),
                        c = resp.chunk() => c,
                    };
                    match chunk {
                        Ok(Some(c)) if body.len() < MAX_ERROR_BODY => body.extend_from_slice(&c),
                        Ok(Some(_)) => {}
                        Ok(None) | Err(_) => break,
                    }
                }
                recorded = body.clone();
                let text = String::from_utf8_lossy(&body);
                let provider = self.table.provider(&names.provider);
                let key_env = provider.map(|p| p.key_env.clone()).unwrap_or_default();
                let mut f = error::classify_http(
                    &names.provider,
                    &names.model,
                    status,
                    &text,
                    retry_after,
                    &key_env,
                );
                match should_retry {
                    Some(true) if !f.kind.retryable() && f.kind != FailureKind::Auth => {
                        f.kind = FailureKind::Overloaded
                    }
                    Some(false) if f.kind.retryable() => f.kind = FailureKind::Other,
                    _ => {}
                }
                break 'run Outcome::Finished(AssistantMessage::default(), Some(f), false);
            }
            start(&mut b, info, started);
            let mut failure = None;
            loop {
                let chunk = tokio::select! {
                    _ = cancel.cancelled() => break 'run Outcome::Aborted(b.take_message()),
                    c = resp.chunk() => c,
                };
                match chunk {
                    Ok(Some(bytes)) => {
                        if self.record.is_some() {
                            recorded.extend_from_slice(&bytes);
                        }
                        if let Err(f) = decoder.feed(&bytes, &mut b) {
                            failure = Some(f);
                            break;
                        }
                        if decoder.complete() {
                            break;
                        }
                    }
                    Ok(None) => {
                        failure = decoder.finish(&mut b).err();
                        break;
                    }
                    Err(e) => {
                        failure = Some(Failure::new(
                            FailureKind::Network,
                            format!(
                                "the connection to {} broke mid-stream: {}",
                                names.provider,
                                error_chain(&e)
                            ),
                        ));
                        break;
                    }
                }
            }
            let had = b.has_output();
            let (mut msg, f) = conclude(&mut b, failure);
            msg.api = Some(decoder.api().as_str().to_string());
            Outcome::Finished(msg, f, had)
        };
        if let Some(dir) = &self.record
            && status != 0
            && let Err(e) = record::save(dir, info.api, http, status, &recorded)
        {
            crate::cli::warn(
                "ag-llm",
                &format!("cannot record into `{}`: {e}", dir.display()),
            );
        }
        outcome
    }
}

fn start(b: &mut Builder<'_>, info: &ModelInfo, started: &mut bool) {
    if !*started {
        *started = true;
        b.notify(LlmEvent::Start {
            model: info.full_id(),
        });
    }
}

/// An error and its causes on one line.
fn error_chain(e: &dyn std::error::Error) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// ag-loop runs calls on a multi-threaded runtime: the client and its
    /// call future must cross threads.
    #[test]
    fn client_and_call_are_send() {
        fn assert_send<T: Send>(_: &T) {}
        fn assert_sync<T: Sync>() {}
        assert_sync::<Llm>();
        let llm = Llm::new(LlmOptions {
            ag_home: Some(std::path::PathBuf::from("/nonexistent")),
            ..Default::default()
        })
        .unwrap();
        let req = LlmRequest::default();
        let mut sink = |_: LlmEvent| {};
        let cancel = CancellationToken::new();
        let fut = llm.stream(&req, &mut sink, &cancel);
        assert_send(&fut);
    }

    #[tokio::test]
    async fn unknown_provider_ends_in_one_error_event() {
        let llm = Llm::new(LlmOptions {
            ag_home: Some(std::path::PathBuf::from("/nonexistent")),
            ..Default::default()
        })
        .unwrap();
        let req = LlmRequest {
            model: "nosuch/x".into(),
            ..Default::default()
        };
        let mut events = Vec::new();
        let mut sink = |e: LlmEvent| events.push(e);
        let msg = llm.stream(&req, &mut sink, &CancellationToken::new()).await;
        assert_eq!(msg.stop_reason, StopReason::Error);
        assert_eq!(events.len(), 1);
        assert!(matches!(&events[0], LlmEvent::Error { message, .. } if *message == msg));
    }
}
