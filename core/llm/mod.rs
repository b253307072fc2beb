//! The provider-agnostic model client behind ag-llm and ag-loop: one
//! [`Llm`] holds the model table and a reused HTTP client; [`Llm::stream`]
//! makes one call, sending each event to a sink as its bytes arrive, with
//! retries before any output, cancellation at any point, and the key kept
//! out of everything it reports.

pub mod assemble;
pub mod cli;
pub mod convert;
pub mod discover;
pub mod error;
pub mod frames;
pub mod keys;
pub mod local;
pub mod models;
pub mod parse;
pub mod ping;
pub mod providers;
pub mod record;
pub mod retry;
pub mod structured;

use std::path::PathBuf;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

pub use error::{Failure, FailureKind, LlmError};
pub use models::{Api, ModelInfo, ModelTable, Prices, Provider};
pub use retry::RetryPolicy;

use self::assemble::Builder;
use self::parse::{Decoder, conclude};
use self::providers::stream::Names;
use self::providers::{HttpRequest, Target};
use crate::protocol::{
    AssistantMessage, ContentBlock, LlmEvent, LlmRequest, Message, StopReason, UserContent,
};

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

/// How long a response may stay silent (no byte at all, before or after
/// the headers) before the attempt counts as failed. Long enough for a CPU
/// server's silent prompt processing (75 s seen for 7,000 tokens with a
/// 1.5B model; Codex waits 300 s too).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// Silent attempts in a row: a server silent for the whole idle timeout
/// gets one more try, at once (a dropped connection, a server restarted
/// meanwhile), then the call fails, and so do later calls to that server
/// without an attempt, until [`Llm::forget_silence`] (ag-loop calls it at
/// each prompt). So one call, or one of ag-loop's prompts with its summary
/// call for compaction, waits on a silent server at most twice the idle
/// timeout: 10 minutes by default.
pub const MAX_SILENT_ATTEMPTS: u32 = 2;

/// The model client.
pub struct Llm {
    client: reqwest::Client,
    table: ModelTable,
    opts: LlmOptions,
    retry: RetryPolicy,
    record: Option<PathBuf>,
    replay: Option<PathBuf>,
    /// The idle timeout from the command line: wins over every other setting.
    idle_flag: Option<Duration>,
    /// The idle timeout from a config file, for providers that set none.
    idle_default: Option<Duration>,
    /// Context windows asked of servers, by `provider/model` (`None`: asked, no answer).
    windows: std::sync::Mutex<std::collections::HashMap<String, Option<discover::Window>>>,
    /// Models whose provider refused an output schema in its own field:
    /// their later calls send it in the system prompt from the start.
    schema_refused: std::sync::Mutex<std::collections::HashSet<String>>,
    /// Attempts in a row that a server (by base URL) let pass in silence.
    silent_in_a_row: std::sync::Mutex<std::collections::HashMap<String, u32>>,
}

/// Bytes of an error body kept for the message.
const MAX_ERROR_BODY: usize = 64 * 1024;
/// Where an answer's bytes come from.
enum Source<'a> {
    /// A recorded body, fed in pieces as a network would.
    Replay(std::slice::Chunks<'a, u8>),
    /// The live response.
    Live(reqwest::Response),
}

/// Bytes of a success body kept to tell a stream from a web page.
const HEAD_BYTES: usize = 4 * 1024;

/// How one attempt ended.
enum Outcome {
    /// The exchange ran its course, well or not.
    Finished {
        /// The answer as far as it came.
        message: AssistantMessage,
        /// Why the answer is not usable, when it is not.
        failure: Option<Failure>,
        /// Whether any content reached the sink: such an attempt is never
        /// repeated, as the caller has already seen part of an answer.
        had_output: bool,
    },
    /// The caller cancelled; the message holds what had arrived.
    Aborted(AssistantMessage),
}

impl Outcome {
    /// An attempt that failed before any content arrived.
    fn failed(f: Failure) -> Outcome {
        Outcome::Finished {
            message: AssistantMessage::default(),
            failure: Some(f),
            had_output: false,
        }
    }
}

impl Llm {
    /// Loads the model table and config; makes no network call.
    pub fn new(opts: LlmOptions) -> Result<Llm, LlmError> {
        let home = opts.ag_home.clone().unwrap_or_else(models::default_ag_home);
        let table = ModelTable::load(&home)?;
        crate::tls::install_provider();
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
            idle_flag: None,
            idle_default: None,
            windows: Default::default(),
            schema_refused: Default::default(),
            silent_in_a_row: Default::default(),
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

    /// The idle timeout given on the command line (zero turns it off):
    /// wins over `models.json` and the config file.
    pub fn with_idle_timeout(mut self, idle: Option<Duration>) -> Llm {
        self.idle_flag = idle;
        self
    }

    /// The idle timeout from a config file, for providers whose
    /// `models.json` entry sets none.
    pub fn with_default_idle_timeout(mut self, idle: Option<Duration>) -> Llm {
        self.idle_default = idle;
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
        self.table
            .resolve(model)
            .map(|i| self.with_learnt_window(i))
    }

    /// A model's info with the window its server reported, when the table had none.
    fn with_learnt_window(&self, mut info: ModelInfo) -> ModelInfo {
        if info.context_window == 0
            && let Some(w) = self.learnt_window(&info.full_id())
        {
            info.context_window = w;
        }
        info
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

    /// Checks what can be checked before a call (the model id, its
    /// provider, the key) without any network: the set-up errors that
    /// ag-llm and ag-loop report before their first event.
    pub fn check(&self, model: &str) -> Result<(), Failure> {
        self.prepare(model).map(|_| ()).map_err(|e| e.1)
    }

    /// The model, its provider and the key for a call.
    #[allow(clippy::type_complexity)]
    fn prepare(
        &self,
        model: &str,
    ) -> Result<(ModelInfo, &Provider, Option<String>), Box<(Option<ModelInfo>, Failure)>> {
        let Some(info) = self.model_info(model) else {
            let providers: Vec<&str> = self.table.providers().map(|p| p.id.as_str()).collect();
            let shape = match model.trim().split_once('/') {
                None if model.trim().is_empty() => "no model given".to_string(),
                None => format!("`{model}` is not a model the table knows, and has no provider"),
                Some((p, m)) if self.table.provider(p).is_some() && m.is_empty() => {
                    format!("`{model}` names no model after the provider")
                }
                Some((p, _)) => format!("unknown provider `{p}` in `{model}`"),
            };
            let f = Failure::new(
                FailureKind::ModelNotFound,
                format!(
                    "unknown model: {shape}; give it as provider/model with a provider among {}\nhint: `ag-llm --list-models` shows the table; `$AG_HOME/models.json` adds providers and models",
                    providers.join(", ")
                ),
            );
            return Err(Box::new((None, f)));
        };
        let Some(provider) = self.table.provider(&info.provider) else {
            let f = Failure::new(
                FailureKind::Other,
                format!("provider `{}` is not configured", info.provider),
            );
            return Err(Box::new((Some(info), f)));
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
                    "no API key for `{}` (looked for {})\nhint: set {} or pass `--api-key`",
                    provider.id,
                    if vars.is_empty() {
                        "none: the provider names no variable".to_string()
                    } else {
                        vars.clone()
                    },
                    if vars.is_empty() {
                        "`api_key_env` in models.json".to_string()
                    } else {
                        vars
                    }
                ),
            );
            return Err(Box::new((Some(info), f)));
        }
        Ok((info, provider, key))
    }

    /// Forgets the servers that went silent: each gets its attempts again
    /// (see [`MAX_SILENT_ATTEMPTS`]).
    pub fn forget_silence(&self) {
        if let Ok(mut s) = self.silent_in_a_row.lock() {
            s.clear();
        }
    }

    fn note_silence(&self, server: &str, in_a_row: u32) {
        if let Ok(mut s) = self.silent_in_a_row.lock() {
            if in_a_row == 0 {
                s.remove(server);
            } else {
                s.insert(server.to_string(), in_a_row);
            }
        }
    }

    /// The idle timeout for a provider's responses; `None` when off.
    pub fn idle_timeout(&self, provider: &Provider) -> Option<Duration> {
        let d = self
            .idle_flag
            .or(provider.idle_timeout)
            .or(self.idle_default)
            .unwrap_or(DEFAULT_IDLE_TIMEOUT);
        (!d.is_zero()).then_some(d)
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
        let (info, provider, key) = match self.prepare(&req.model) {
            Ok(x) => x,
            Err(e) => {
                let (info, f) = *e;
                return self.fail(
                    sink,
                    &req.model,
                    info.as_ref(),
                    AssistantMessage::default(),
                    &f,
                    None,
                );
            }
        };
        // Refused here with what to do, rather than by the provider with a
        // 400 that says little.
        if !info.images && carries_images(req) {
            let f = Failure::new(
                FailureKind::BadRequest,
                format!(
                    "`{}` does not take images (the model table or models.json says `images: false`), and this request carries one; use a model that reads images, or leave the image out",
                    info.full_id()
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
        // Structured output: a provider that refuses the schema in its own
        // field gets it once more in the system prompt, and so from then on;
        // the answer is checked by the caller either way.
        let refused = self
            .schema_refused
            .lock()
            .is_ok_and(|s| s.contains(&info.full_id()));
        let mut http = if refused {
            providers::build(&target, &structured::prompted(req))
        } else {
            providers::build(&target, req)
        };
        let mut schema_fallback = !refused && providers::native_schema(&target, req).is_some();
        let names = Names {
            provider: provider.id.clone(),
            model: info.id.clone(),
        };
        let idle = self.idle_timeout(provider);
        let mut started = false;
        let mut attempt = 0u32;
        let mut silent_attempts = self
            .silent_in_a_row
            .lock()
            .ok()
            .and_then(|s| s.get(base_url).copied())
            .unwrap_or(0);
        if silent_attempts >= MAX_SILENT_ATTEMPTS {
            let f = Failure::new(
                FailureKind::Stalled,
                format!(
                    "the {} server went silent: nothing arrived from `{base_url}` in its last {silent_attempts} attempts ({} each, {} in all), so it is not asked again for this prompt\nhint: a server still processing a long prompt may need longer: raise `--idle-timeout`, `idle_timeout` in config.toml, or the provider's `idle_timeout` in models.json (0 turns it off)",
                    provider.id,
                    seconds(idle.unwrap_or_default()),
                    seconds(idle.unwrap_or_default() * silent_attempts)
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
        loop {
            let outcome = self
                .attempt(&http, &info, &names, idle, sink, cancel, &mut started)
                .await;
            match &outcome {
                Outcome::Finished {
                    failure: Some(f), ..
                } if f.kind == FailureKind::Stalled => {
                    silent_attempts += 1;
                    self.note_silence(base_url, silent_attempts);
                }
                Outcome::Finished { .. } => {
                    silent_attempts = 0;
                    self.note_silence(base_url, 0);
                }
                Outcome::Aborted(_) => {}
            }
            match outcome {
                Outcome::Aborted(mut msg) => {
                    self.finalize(&mut msg, &info);
                    msg.stop_reason = StopReason::Aborted;
                    sink(LlmEvent::Done {
                        message: msg.clone(),
                    });
                    return msg;
                }
                Outcome::Finished {
                    message: mut msg,
                    failure: None,
                    ..
                } => {
                    self.finalize(&mut msg, &info);
                    sink(LlmEvent::Done {
                        message: msg.clone(),
                    });
                    return msg;
                }
                Outcome::Finished {
                    message: msg,
                    failure: Some(f),
                    had_output,
                } => {
                    let silent = f.kind == FailureKind::Stalled;
                    let wait = (!had_output
                        && f.kind.retryable()
                        && attempt < self.retry.retries
                        && silent_attempts < MAX_SILENT_ATTEMPTS)
                        .then(|| {
                            // The silence was the wait: no backoff on top.
                            if silent {
                                Some(Duration::ZERO)
                            } else {
                                self.retry.delay(attempt + 1, f.retry_after)
                            }
                        })
                        .flatten();
                    if schema_fallback && !had_output && f.kind == FailureKind::BadRequest {
                        schema_fallback = false;
                        if let Ok(mut s) = self.schema_refused.lock() {
                            s.insert(info.full_id());
                        }
                        crate::cli::warn(
                            "ag-llm",
                            &format!(
                                "{} refused the request with the output schema in its structured-output field ({}); sending the schema in the system prompt instead",
                                provider.id,
                                f.message.lines().next().unwrap_or("")
                            ),
                        );
                        http = providers::build(&target, &structured::prompted(req));
                        continue;
                    }
                    let Some(wait) = wait else {
                        let mut f = f;
                        if silent && silent_attempts > 1 {
                            let total = idle.unwrap_or_default() * silent_attempts;
                            f.message = error::with_note(
                                &f.message,
                                &format!(
                                    "(silent {silent_attempts} attempts in a row, {} in all)",
                                    seconds(total)
                                ),
                            );
                        } else if attempt > 0 {
                            f.message = error::with_note(
                                &f.message,
                                &format!("(after {} attempts)", attempt + 1),
                            );
                        }
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
        msg.stop_reason = f.stop_reason();
        msg.error_message = Some(text.clone());
        sink(LlmEvent::Error {
            message: msg.clone(),
            error: text,
        });
        msg
    }

    /// One HTTP exchange (or one replay).
    #[allow(clippy::too_many_arguments)]
    async fn attempt(
        &self,
        http: &HttpRequest,
        info: &ModelInfo,
        names: &Names,
        idle: Option<Duration>,
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
                        break 'run Outcome::failed(Failure::new(FailureKind::Other, msg));
                    }
                };
                if !(200..300).contains(&st) {
                    let text = String::from_utf8_lossy(&body);
                    let f =
                        error::classify_http(&names.provider, &names.model, st, &text, None, &[]);
                    break 'run Outcome::failed(f);
                }
                break 'run self
                    .read_answer(
                        Source::Replay(body.chunks(4096)),
                        &mut b,
                        &mut decoder,
                        info,
                        names,
                        http,
                        idle,
                        cancel,
                        started,
                        0,
                        "",
                        &mut recorded,
                    )
                    .await;
            }
            let body = serde_json::to_vec(&http.body).unwrap_or_default();
            let mut rb = self.client.post(&http.url).body(body);
            for (k, v) in &http.headers {
                rb = rb.header(k.as_str(), v.as_str());
            }
            let sent = tokio::select! {
                _ = cancel.cancelled() => break 'run Outcome::Aborted(AssistantMessage::default()),
                r = within(idle, rb.send()) => r,
            };
            let mut resp = match sent {
                Some(Ok(r)) => r,
                Some(Err(e)) => {
                    let f = error::classify_connect(&names.provider, &http.url, &e);
                    break 'run Outcome::failed(f);
                }
                None => {
                    let f = silent(&names.provider, &http.url, idle, "before answering");
                    break 'run Outcome::failed(f);
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
                        c = within(idle, resp.chunk()) => c,
                    };
                    match chunk {
                        Some(Ok(Some(c))) if body.len() < MAX_ERROR_BODY => {
                            body.extend_from_slice(&c)
                        }
                        Some(Ok(Some(_))) => {}
                        Some(Ok(None) | Err(_)) | None => break,
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
                break 'run Outcome::failed(f);
            }
            let content_type = resp
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            if content_type.to_ascii_lowercase().contains("html") {
                // A web page (a portal, a proxy's notice, the wrong URL):
                // no parser will make an answer of it, and no retry either.
                let mut head = Vec::new();
                while head.len() < HEAD_BYTES {
                    let chunk = tokio::select! {
                        _ = cancel.cancelled() => break 'run Outcome::Aborted(AssistantMessage::default()),
                        c = within(idle, resp.chunk()) => c,
                    };
                    match chunk {
                        Some(Ok(Some(c))) => head.extend_from_slice(&c),
                        _ => break,
                    }
                }
                recorded = head.clone();
                let f = error::not_a_stream(&names.provider, status, &content_type, &head);
                break 'run Outcome::failed(f);
            }
            self.read_answer(
                Source::Live(resp),
                &mut b,
                &mut decoder,
                info,
                names,
                http,
                idle,
                cancel,
                started,
                status,
                &content_type,
                &mut recorded,
            )
            .await
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

    /// Feeds an answer's bytes to the decoder until the provider says the
    /// answer is complete, the bytes end, or something fails: one loop
    /// for a live body and for a replayed one.
    #[allow(clippy::too_many_arguments)]
    async fn read_answer(
        &self,
        mut source: Source<'_>,
        b: &mut Builder<'_>,
        decoder: &mut Decoder,
        info: &ModelInfo,
        names: &Names,
        http: &HttpRequest,
        idle: Option<Duration>,
        cancel: &CancellationToken,
        started: &mut bool,
        status: u16,
        content_type: &str,
        recorded: &mut Vec<u8>,
    ) -> Outcome {
        start(b, info, started);
        let live = matches!(source, Source::Live(_));
        let mut failure = None;
        let mut head: Vec<u8> = Vec::new();
        loop {
            // A live chunk is owned here, so that both sources lend bytes.
            let owned;
            let chunk = match &mut source {
                Source::Replay(chunks) => {
                    if cancel.is_cancelled() {
                        return Outcome::Aborted(b.take_message());
                    }
                    Some(Ok(chunks.next()))
                }
                Source::Live(resp) => {
                    let c = tokio::select! {
                        _ = cancel.cancelled() => return Outcome::Aborted(b.take_message()),
                        c = within(idle, resp.chunk()) => c,
                    };
                    match c {
                        Some(Ok(Some(bytes))) => {
                            owned = bytes;
                            Some(Ok(Some(&owned[..])))
                        }
                        Some(Ok(None)) => Some(Ok(None)),
                        Some(Err(e)) => Some(Err(e)),
                        None => None,
                    }
                }
            };
            let Some(chunk) = chunk else {
                let when = if b.has_output() {
                    "in the middle of the answer"
                } else {
                    "after the headers"
                };
                failure = Some(silent(&names.provider, &http.url, idle, when));
                break;
            };
            match chunk {
                Ok(Some(bytes)) => {
                    if live && self.record.is_some() {
                        recorded.extend_from_slice(bytes);
                    }
                    if head.len() < HEAD_BYTES {
                        head.extend_from_slice(&bytes[..bytes.len().min(HEAD_BYTES - head.len())]);
                    }
                    if let Err(f) = decoder.feed(bytes, b) {
                        failure = Some(f);
                        break;
                    }
                    if decoder.complete() {
                        break;
                    }
                }
                Ok(None) => {
                    failure = decoder.finish(b).err();
                    break;
                }
                Err(e) => {
                    failure = Some(Failure::new(
                        FailureKind::Network,
                        format!(
                            "the connection to {} broke mid-stream: {}",
                            names.provider,
                            error::error_chain(&e)
                        ),
                    ));
                    break;
                }
            }
        }
        let had = b.has_output();
        let (mut msg, mut f) = conclude(b, failure);
        // Bytes came, but nothing a parser knew: a body that is no stream
        // (plain text, a proxy's notice), not a dropped connection. A
        // replay keeps no content type to say so with, and is left as it was.
        if live
            && !had
            && f.as_ref().is_some_and(|f| f.kind == FailureKind::Network)
            && !error::looks_like_stream(&head)
        {
            let nf = error::not_a_stream(&names.provider, status, content_type, &head);
            msg.error_message = Some(nf.message.clone());
            f = Some(nf);
        }
        msg.api = Some(decoder.api().as_str().to_string());
        Outcome::Finished {
            message: msg,
            failure: f,
            had_output: had,
        }
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

/// Awaits `f`, or gives up (`None`) once `idle` passes; never with no limit.
async fn within<F: std::future::Future>(idle: Option<Duration>, f: F) -> Option<F::Output> {
    match idle {
        Some(d) => tokio::time::timeout(d, f).await.ok(),
        None => Some(f.await),
    }
}

/// The failure of an attempt that heard nothing for the idle timeout.
/// Whole milliseconds, shown as few digits as they need: 300 s, 0.25 s.
fn seconds(d: Duration) -> String {
    format!("{} s", d.as_millis() as f64 / 1000.0)
}

fn silent(provider: &str, url: &str, idle: Option<Duration>, when: &str) -> Failure {
    let secs = seconds(idle.unwrap_or_default());
    Failure::new(
        FailureKind::Stalled,
        format!(
            "the {provider} server went silent {when}: nothing arrived from `{url}` for {secs} (the idle timeout)\nhint: a server still processing a long prompt may need longer: raise `--idle-timeout`, `idle_timeout` in config.toml, or the provider's `idle_timeout` in models.json (0 turns it off)"
        ),
    )
}

/// Whether a request has an image anywhere in its messages.
fn carries_images(req: &LlmRequest) -> bool {
    req.messages.iter().any(|m| match m {
        Message::User {
            content: UserContent::Blocks(blocks),
            ..
        } => blocks
            .iter()
            .any(|b| matches!(b, ContentBlock::Image { .. })),
        Message::ToolResult(r) => r
            .content
            .iter()
            .any(|b| matches!(b, ContentBlock::Image { .. })),
        _ => false,
    })
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
