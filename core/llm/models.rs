//! Providers and models: the built-in table (base URLs, key variables, API
//! kinds, context windows, prices) and the user's `$AG_HOME/models.json`
//! that adds providers and models or overrides built-in ones. Resolving a
//! `provider/model` id to a [`ModelInfo`] happens here, with no network.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::LlmError;

/// The wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Api {
    /// OpenAI Chat Completions (`/chat/completions`) and every compatible server.
    #[serde(rename = "openai-chat")]
    OpenAiChat,
    /// OpenAI Responses (`/responses`).
    #[serde(rename = "openai-responses")]
    OpenAiResponses,
    /// Anthropic Messages (`/v1/messages`).
    #[serde(rename = "anthropic")]
    Anthropic,
    /// Google Gemini (`:streamGenerateContent?alt=sse`).
    #[serde(rename = "gemini")]
    Gemini,
}

impl Api {
    /// The name used in config files and in `AssistantMessage.api`.
    pub fn as_str(self) -> &'static str {
        match self {
            Api::OpenAiChat => "openai-chat",
            Api::OpenAiResponses => "openai-responses",
            Api::Anthropic => "anthropic",
            Api::Gemini => "gemini",
        }
    }

    /// Parses a config name.
    pub fn parse(s: &str) -> Option<Api> {
        match s {
            "openai-chat" | "openai-completions" | "chat" => Some(Api::OpenAiChat),
            "openai-responses" | "responses" => Some(Api::OpenAiResponses),
            "anthropic" | "anthropic-messages" => Some(Api::Anthropic),
            "gemini" | "google" | "google-gemini" => Some(Api::Gemini),
            _ => None,
        }
    }
}

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Differences between servers that speak OpenAI Chat Completions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Compat {
    /// Send the output limit as `max_completion_tokens` (OpenAI) instead of `max_tokens`.
    pub max_completion_tokens: bool,
    /// Ask for usage with `stream_options.include_usage`.
    pub stream_usage: bool,
    /// Send reasoning effort as `reasoning_effort` (`"flat"`), as
    /// `reasoning: {effort}` (`"object"`, OpenRouter) or not at all (`"none"`).
    pub reasoning_effort: String,
    /// Tool call ids must be 9 letters or digits (Mistral).
    pub short_tool_ids: bool,
    /// Send `store: false` (OpenAI).
    pub store_false: bool,
    /// Send an output schema as `response_format` (`json_schema`); off for
    /// servers that refuse it with streaming or tools (Groq) or know only
    /// `json_object` (DeepSeek), which then get it in the system prompt.
    pub structured_output: bool,
}

impl Default for Compat {
    fn default() -> Self {
        Compat {
            max_completion_tokens: false,
            stream_usage: true,
            reasoning_effort: "flat".into(),
            short_tool_ids: false,
            store_false: false,
            structured_output: true,
        }
    }
}

/// A provider: where it is, how to authenticate, which protocol it speaks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Provider {
    /// The id used in model ids (`openai`, `anthropic`, ...).
    pub id: String,
    /// The protocol its models speak unless a model says otherwise.
    pub api: Api,
    /// The base URL (`https://api.openai.com/v1`).
    pub base_url: String,
    /// Environment variables holding the key, tried in order.
    pub key_env: Vec<String>,
    /// A key written in the config file itself (never printed).
    #[serde(skip)]
    pub api_key: Option<String>,
    /// True for local servers that need no key.
    pub key_optional: bool,
    /// Extra HTTP headers sent with every request.
    pub headers: BTreeMap<String, String>,
    /// Chat Completions quirks.
    pub compat: Compat,
    /// How long its responses may stay silent (`idle_timeout` in
    /// models.json); zero turns the limit off.
    #[serde(skip)]
    pub idle_timeout: Option<std::time::Duration>,
}

/// Everything known about one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelInfo {
    /// The model id without the provider (`claude-sonnet-4-5`).
    pub id: String,
    /// The provider id.
    pub provider: String,
    /// The protocol used to call it.
    pub api: Api,
    /// Tokens of context (input and output together); 0 when unknown.
    pub context_window: u64,
    /// The largest output, in tokens.
    pub max_output: u64,
    /// True when `max_output` comes from a table or `models.json` rather
    /// than a guess.
    #[serde(skip)]
    pub max_output_known: bool,
    /// True for models that reason before answering.
    pub reasoning: bool,
    /// True for models that accept images.
    pub images: bool,
    /// Prices in US dollars per million tokens.
    pub prices: Prices,
    /// False when the model is not in any table (prices are then zero).
    pub known: bool,
    /// Native structured output as models.json sets it (`structured_output`);
    /// `None` leaves it to [`super::structured::support`].
    #[serde(skip)]
    pub structured_output: Option<Support>,
}

impl ModelInfo {
    /// `provider/model`.
    pub fn full_id(&self) -> String {
        format!("{}/{}", self.provider, self.id)
    }

    /// The output limit to send when the request gives none: the model's
    /// own when a table knows it; for a model no table knows, a quarter of
    /// its context window when that is known (a server such as vLLM
    /// refuses a request whose prompt and limit together pass its window,
    /// so a guess must leave room for the prompt); else none, and the
    /// server's default applies.
    pub fn output_limit(&self) -> Option<u64> {
        if self.max_output_known {
            return Some(self.max_output.max(1));
        }
        (self.context_window > 0).then(|| self.max_output.min(self.context_window / 4).max(1))
    }
}

/// Prices in US dollars per million tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Prices {
    /// Input tokens.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Input tokens read from the cache.
    pub cache_read: f64,
    /// Input tokens written to the cache.
    pub cache_write: f64,
}

/// Fills `usage.cost` from the model's prices.
pub fn apply_cost(usage: &mut crate::protocol::Usage, prices: &Prices) {
    let per = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
    usage.cost.input = per(usage.input, prices.input);
    usage.cost.output = per(usage.output, prices.output);
    usage.cost.cache_read = per(usage.cache_read, prices.cache_read);
    usage.cost.cache_write = per(usage.cache_write, prices.cache_write);
    usage.cost.total =
        usage.cost.input + usage.cost.output + usage.cost.cache_read + usage.cost.cache_write;
}

struct BuiltinProvider {
    id: &'static str,
    api: Api,
    base_url: &'static str,
    key_env: &'static [&'static str],
    key_optional: bool,
}

const PROVIDERS: &[BuiltinProvider] = &[
    BuiltinProvider {
        id: "openai",
        api: Api::OpenAiResponses,
        base_url: "https://api.openai.com/v1",
        key_env: &["OPENAI_API_KEY"],
        key_optional: false,
    },
    BuiltinProvider {
        id: "anthropic",
        api: Api::Anthropic,
        base_url: "https://api.anthropic.com",
        key_env: &["ANTHROPIC_API_KEY"],
        key_optional: false,
    },
    BuiltinProvider {
        id: "google",
        api: Api::Gemini,
        base_url: "https://generativelanguage.googleapis.com/v1beta",
        key_env: &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
        key_optional: false,
    },
    BuiltinProvider {
        id: "openrouter",
        api: Api::OpenAiChat,
        base_url: "https://openrouter.ai/api/v1",
        key_env: &["OPENROUTER_API_KEY"],
        key_optional: false,
    },
    BuiltinProvider {
        id: "groq",
        api: Api::OpenAiChat,
        base_url: "https://api.groq.com/openai/v1",
        key_env: &["GROQ_API_KEY"],
        key_optional: false,
    },
    BuiltinProvider {
        id: "deepseek",
        api: Api::OpenAiChat,
        base_url: "https://api.deepseek.com/v1",
        key_env: &["DEEPSEEK_API_KEY"],
        key_optional: false,
    },
    BuiltinProvider {
        id: "xai",
        api: Api::OpenAiChat,
        base_url: "https://api.x.ai/v1",
        key_env: &["XAI_API_KEY"],
        key_optional: false,
    },
    BuiltinProvider {
        id: "mistral",
        api: Api::OpenAiChat,
        base_url: "https://api.mistral.ai/v1",
        key_env: &["MISTRAL_API_KEY"],
        key_optional: false,
    },
    BuiltinProvider {
        id: "ollama",
        api: Api::OpenAiChat,
        base_url: "http://localhost:11434/v1",
        key_env: &["OLLAMA_API_KEY"],
        key_optional: true,
    },
    BuiltinProvider {
        id: "vllm",
        api: Api::OpenAiChat,
        base_url: "http://localhost:8000/v1",
        key_env: &["VLLM_API_KEY"],
        key_optional: true,
    },
    BuiltinProvider {
        id: "llamacpp",
        api: Api::OpenAiChat,
        base_url: "http://localhost:8080/v1",
        key_env: &["LLAMACPP_API_KEY"],
        key_optional: true,
    },
    BuiltinProvider {
        id: "lmstudio",
        api: Api::OpenAiChat,
        base_url: "http://localhost:1234/v1",
        key_env: &["LMSTUDIO_API_KEY"],
        key_optional: true,
    },
];

fn builtin_compat(provider: &str) -> Compat {
    let mut c = Compat::default();
    match provider {
        "openai" => {
            c.max_completion_tokens = true;
            c.store_false = true;
        }
        "openrouter" => c.reasoning_effort = "object".into(),
        "mistral" => {
            // Mistral sends usage on its last chunk unasked and refuses
            // unknown fields; its tool call ids are 9 alphanumerics.
            c.stream_usage = false;
            c.reasoning_effort = "none".into();
            c.short_tool_ids = true;
        }
        // Groq: no structured output with streaming or tools; DeepSeek:
        // `json_object` only.
        "groq" | "deepseek" => c.structured_output = false,
        "ollama" | "vllm" | "llamacpp" | "lmstudio" => c.reasoning_effort = "none".into(),
        _ => {}
    }
    c
}

/// provider, id, context window, max output, reasoning, images, input, output, cache read, cache write.
type Row = (
    &'static str,
    &'static str,
    u64,
    u64,
    bool,
    bool,
    f64,
    f64,
    f64,
    f64,
);

/// Common models. Prices are US dollars per million tokens as published by
/// each provider; `models.json` overrides any row.
#[rustfmt::skip]
const MODELS: &[Row] = &[
    ("anthropic", "claude-opus-4-5", 200_000, 64_000, true, true, 5.0, 25.0, 0.5, 6.25),
    ("anthropic", "claude-opus-4-1", 200_000, 32_000, true, true, 15.0, 75.0, 1.5, 18.75),
    ("anthropic", "claude-sonnet-4-5", 200_000, 64_000, true, true, 3.0, 15.0, 0.3, 3.75),
    ("anthropic", "claude-sonnet-4-0", 200_000, 64_000, true, true, 3.0, 15.0, 0.3, 3.75),
    ("anthropic", "claude-haiku-4-5", 200_000, 64_000, true, true, 1.0, 5.0, 0.1, 1.25),
    ("anthropic", "claude-3-5-haiku-latest", 200_000, 8_192, false, true, 0.8, 4.0, 0.08, 1.0),
    ("openai", "gpt-5.1", 400_000, 128_000, true, true, 1.25, 10.0, 0.125, 0.0),
    ("openai", "gpt-5.1-codex", 400_000, 128_000, true, true, 1.25, 10.0, 0.125, 0.0),
    ("openai", "gpt-5.1-codex-max", 400_000, 128_000, true, true, 1.25, 10.0, 0.125, 0.0),
    ("openai", "gpt-5", 400_000, 128_000, true, true, 1.25, 10.0, 0.125, 0.0),
    ("openai", "gpt-5-mini", 400_000, 128_000, true, true, 0.25, 2.0, 0.025, 0.0),
    ("openai", "gpt-5-nano", 400_000, 128_000, true, true, 0.05, 0.4, 0.005, 0.0),
    ("openai", "gpt-4.1", 1_047_576, 32_768, false, true, 2.0, 8.0, 0.5, 0.0),
    ("openai", "gpt-4.1-mini", 1_047_576, 32_768, false, true, 0.4, 1.6, 0.1, 0.0),
    ("openai", "gpt-4.1-nano", 1_047_576, 32_768, false, true, 0.1, 0.4, 0.025, 0.0),
    ("openai", "gpt-4o", 128_000, 16_384, false, true, 2.5, 10.0, 1.25, 0.0),
    ("openai", "gpt-4o-mini", 128_000, 16_384, false, true, 0.15, 0.6, 0.075, 0.0),
    ("openai", "o3", 200_000, 100_000, true, true, 2.0, 8.0, 0.5, 0.0),
    ("openai", "o4-mini", 200_000, 100_000, true, true, 1.1, 4.4, 0.275, 0.0),
    ("google", "gemini-3-pro-preview", 1_048_576, 65_536, true, true, 2.0, 12.0, 0.2, 0.0),
    ("google", "gemini-2.5-pro", 1_048_576, 65_536, true, true, 1.25, 10.0, 0.125, 0.0),
    ("google", "gemini-2.5-flash", 1_048_576, 65_536, true, true, 0.3, 2.5, 0.03, 0.0),
    ("google", "gemini-2.5-flash-lite", 1_048_576, 65_536, true, true, 0.1, 0.4, 0.01, 0.0),
    ("deepseek", "deepseek-chat", 128_000, 8_192, false, false, 0.28, 0.42, 0.028, 0.0),
    ("deepseek", "deepseek-reasoner", 128_000, 65_536, true, false, 0.28, 0.42, 0.028, 0.0),
    ("xai", "grok-4", 256_000, 64_000, true, true, 3.0, 15.0, 0.75, 0.0),
    ("xai", "grok-code-fast-1", 256_000, 10_000, true, false, 0.2, 1.5, 0.02, 0.0),
    ("groq", "llama-3.3-70b-versatile", 131_072, 32_768, false, false, 0.59, 0.79, 0.0, 0.0),
    ("groq", "openai/gpt-oss-120b", 131_072, 65_536, true, false, 0.15, 0.75, 0.0, 0.0),
    ("mistral", "mistral-large-latest", 128_000, 16_384, false, true, 2.0, 6.0, 0.0, 0.0),
    ("mistral", "devstral-medium-latest", 128_000, 16_384, false, false, 0.4, 2.0, 0.0, 0.0),
    ("mistral", "codestral-latest", 256_000, 16_384, false, false, 0.3, 0.9, 0.0, 0.0),
];

/// Output limit assumed for a model that is in no table.
fn default_max_output(api: Api) -> u64 {
    match api {
        // Anthropic requires max_tokens; every current Claude model allows 8192.
        Api::Anthropic => 8_192,
        _ => 16_384,
    }
}

/// The user's `models.json`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    providers: BTreeMap<String, ConfigProvider>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigProvider {
    api: Option<String>,
    base_url: Option<String>,
    /// One variable name, or several tried in order.
    api_key_env: Option<OneOrMany>,
    api_key: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    compat: Option<Compat>,
    /// Seconds a response may stay silent; 0 turns the limit off.
    idle_timeout: Option<f64>,
    #[serde(default)]
    models: Vec<ConfigModel>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigModel {
    id: String,
    api: Option<String>,
    context_window: Option<u64>,
    max_output: Option<u64>,
    reasoning: Option<bool>,
    images: Option<bool>,
    prices: Option<Prices>,
    /// `yes`, `without_tools` or `no`: whether an output schema is sent natively.
    structured_output: Option<Support>,
}

/// Providers and models, built in and configured.
#[derive(Debug, Clone, Default)]
pub struct ModelTable {
    providers: BTreeMap<String, Provider>,
    models: Vec<ModelInfo>,
}

impl ModelTable {
    /// The built-in table only.
    pub fn builtin() -> ModelTable {
        let mut t = ModelTable::default();
        for p in PROVIDERS {
            t.providers.insert(
                p.id.to_string(),
                Provider {
                    id: p.id.to_string(),
                    api: p.api,
                    base_url: p.base_url.to_string(),
                    key_env: p.key_env.iter().map(|s| s.to_string()).collect(),
                    api_key: None,
                    key_optional: p.key_optional,
                    headers: BTreeMap::new(),
                    compat: builtin_compat(p.id),
                    idle_timeout: None,
                },
            );
        }
        for &(provider, id, ctx, max, reasoning, images, i, o, cr, cw) in MODELS {
            let api = t.providers.get(provider).map_or(Api::OpenAiChat, |p| p.api);
            t.models.push(ModelInfo {
                id: id.to_string(),
                provider: provider.to_string(),
                api,
                context_window: ctx,
                max_output: max,
                max_output_known: true,
                reasoning,
                images,
                prices: Prices {
                    input: i,
                    output: o,
                    cache_read: cr,
                    cache_write: cw,
                },
                known: true,
                structured_output: None,
            });
        }
        t
    }

    /// The built-in table with `dir/models.json` applied, when it exists.
    pub fn load(ag_home: &Path) -> Result<ModelTable, LlmError> {
        let mut t = ModelTable::builtin();
        let path = ag_home.join("models.json");
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(t),
            Err(e) => return Err(LlmError::Config(path, e.to_string())),
        };
        let file: ConfigFile = serde_json::from_str(&text)
            .map_err(|e| LlmError::Config(path.clone(), e.to_string()))?;
        t.apply(file).map_err(|msg| LlmError::Config(path, msg))?;
        Ok(t)
    }

    fn apply(&mut self, file: ConfigFile) -> Result<(), String> {
        for (pid, cp) in file.providers {
            if pid.is_empty() || pid.contains('/') {
                return Err(format!(
                    "provider id `{pid}` must be non-empty and have no `/`"
                ));
            }
            let parse_api = |s: &str| {
                Api::parse(s).ok_or_else(|| {
                    format!(
                        "unknown api `{s}` for provider `{pid}`; use openai-chat, openai-responses, anthropic or gemini"
                    )
                })
            };
            let api = cp.api.as_deref().map(parse_api).transpose()?;
            let entry = match self.providers.get_mut(&pid) {
                Some(p) => p,
                None => {
                    let base_url = cp
                        .base_url
                        .clone()
                        .ok_or_else(|| format!("the new provider `{pid}` needs a `base_url`"))?;
                    let api = api.unwrap_or(Api::OpenAiChat);
                    self.providers.insert(
                        pid.clone(),
                        Provider {
                            id: pid.clone(),
                            api,
                            base_url,
                            key_env: Vec::new(),
                            api_key: None,
                            // A provider without a key variable is a local server.
                            key_optional: cp.api_key_env.is_none() && cp.api_key.is_none(),
                            headers: BTreeMap::new(),
                            compat: Compat::default(),
                            idle_timeout: None,
                        },
                    );
                    self.providers
                        .get_mut(&pid)
                        .ok_or_else(|| format!("provider `{pid}` vanished"))?
                }
            };
            if let Some(api) = api {
                entry.api = api;
            }
            if let Some(url) = cp.base_url {
                entry.base_url = url;
            }
            match cp.api_key_env {
                Some(OneOrMany::One(v)) => entry.key_env = vec![v],
                Some(OneOrMany::Many(v)) => entry.key_env = v,
                None => {}
            }
            if cp.api_key.is_some() {
                entry.api_key = cp.api_key;
                entry.key_optional = false;
            }
            entry.headers.extend(cp.headers);
            if let Some(c) = cp.compat {
                entry.compat = c;
            }
            if let Some(secs) = cp.idle_timeout {
                entry.idle_timeout = Some(
                    std::time::Duration::try_from_secs_f64(secs).map_err(|_| {
                        format!(
                            "`idle_timeout` of provider `{pid}` must be a number of seconds, 0 or more (got {secs})"
                        )
                    })?,
                );
            }
            let provider_api = entry.api;
            for m in cp.models {
                let api = m
                    .api
                    .as_deref()
                    .map(parse_api)
                    .transpose()?
                    .unwrap_or(provider_api);
                let old = self
                    .models
                    .iter()
                    .position(|x| x.provider == pid && x.id == m.id)
                    .map(|i| self.models.remove(i));
                let base = old.unwrap_or(ModelInfo {
                    id: m.id.clone(),
                    provider: pid.clone(),
                    api,
                    context_window: 0,
                    max_output: default_max_output(api),
                    max_output_known: false,
                    reasoning: false,
                    images: true,
                    prices: Prices::default(),
                    known: true,
                    structured_output: None,
                });
                self.models.push(ModelInfo {
                    api,
                    context_window: m.context_window.unwrap_or(base.context_window),
                    max_output: m.max_output.unwrap_or(base.max_output),
                    max_output_known: m.max_output.is_some() || base.max_output_known,
                    reasoning: m.reasoning.unwrap_or(base.reasoning),
                    images: m.images.unwrap_or(base.images),
                    prices: m.prices.unwrap_or(base.prices),
                    known: true,
                    structured_output: m.structured_output.or(base.structured_output),
                    ..base
                });
            }
            // Models of a provider whose api changed follow it unless they said otherwise.
            if let Some(api) = api {
                for m in self.models.iter_mut().filter(|m| m.provider == pid) {
                    if MODELS.iter().any(|r| r.0 == pid && r.1 == m.id) {
                        m.api = api;
                    }
                }
            }
        }
        Ok(())
    }

    /// A provider by id.
    pub fn provider(&self, id: &str) -> Option<&Provider> {
        self.providers.get(id)
    }

    /// Every provider.
    pub fn providers(&self) -> impl Iterator<Item = &Provider> {
        self.providers.values()
    }

    /// Every model in the table.
    pub fn models(&self) -> &[ModelInfo] {
        &self.models
    }

    /// Resolves `provider/model` (or a bare model id found in the table).
    /// A model missing from the table of a known provider resolves with
    /// zero prices, so new models work before the table knows them.
    pub fn resolve(&self, model: &str) -> Option<ModelInfo> {
        let model = model.trim();
        let Some((pid, mid)) = model.split_once('/') else {
            return self.models.iter().find(|m| m.id == model).cloned();
        };
        let provider = self.providers.get(pid)?;
        if mid.is_empty() {
            return None;
        }
        if let Some(m) = self
            .models
            .iter()
            .find(|m| m.provider == pid && m.id == mid)
        {
            return Some(m.clone());
        }
        // Dated snapshots (`claude-sonnet-4-5-20250929`) price like their alias.
        let alias = self
            .models
            .iter()
            .filter(|m| m.provider == pid && mid.starts_with(&format!("{}-", m.id)))
            .max_by_key(|m| m.id.len());
        if let Some(a) = alias {
            let rest = &mid[a.id.len() + 1..];
            if rest.chars().all(|c| c.is_ascii_digit() || c == '-') {
                return Some(ModelInfo {
                    id: mid.to_string(),
                    ..a.clone()
                });
            }
        }
        Some(ModelInfo {
            id: mid.to_string(),
            provider: pid.to_string(),
            api: provider.api,
            context_window: 0,
            max_output: default_max_output(provider.api),
            max_output_known: false,
            reasoning: guess_reasoning(mid),
            images: true,
            prices: Prices::default(),
            known: false,
            structured_output: None,
        })
    }
}

/// Models known to reason by their family name, for models missing from the table.
fn guess_reasoning(id: &str) -> bool {
    let id = id.to_ascii_lowercase();
    [
        "gpt-5",
        "o1",
        "o3",
        "o4",
        "claude-opus-4",
        "claude-sonnet-4",
        "claude-haiku-4",
        "gemini-2.5",
        "gemini-3",
        "reasoner",
        "r1",
        "thinking",
        "qwq",
    ]
    .iter()
    .any(|k| id.contains(k))
}

/// `$AG_HOME`, or `~/.ag`.
pub fn default_ag_home() -> PathBuf {
    if let Some(h) = std::env::var_os("AG_HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(h);
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    home.join(".ag")
}

/// Whether a model can be given a schema natively.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Support {
    /// The API constrains the answer, with or without tools in the request.
    Yes,
    /// Only in a request without tools (Gemini before 3 refuses both at once).
    WithoutTools,
    /// Not at all: the schema goes into the system prompt.
    No,
}

impl Support {
    /// The word shown in the model table.
    pub fn as_str(self) -> &'static str {
        match self {
            Support::Yes => "yes",
            Support::WithoutTools => "without_tools",
            Support::No => "no",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_known_unknown_and_dated_models() {
        let t = ModelTable::builtin();
        let m = t.resolve("anthropic/claude-sonnet-4-5").unwrap();
        assert_eq!(m.api, Api::Anthropic);
        assert_eq!(m.prices.input, 3.0);
        let dated = t.resolve("anthropic/claude-sonnet-4-5-20250929").unwrap();
        assert_eq!(dated.id, "claude-sonnet-4-5-20250929");
        assert_eq!(dated.prices.output, 15.0);
        let unknown = t.resolve("openai/gpt-9-turbo").unwrap();
        assert!(!unknown.known);
        assert_eq!(unknown.prices.input, 0.0);
        assert!(t.resolve("nosuch/model").is_none());
        assert_eq!(t.resolve("gpt-4o").unwrap().provider, "openai");
        let slashy = t.resolve("openrouter/anthropic/claude-3.5-sonnet").unwrap();
        assert_eq!(slashy.id, "anthropic/claude-3.5-sonnet");
    }

    #[test]
    fn config_adds_providers_and_models() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("models.json"),
            r#"{"providers": {
                "local": {"base_url": "http://127.0.0.1:9/v1", "models": [{"id": "qwen3", "context_window": 32768, "prices": {"input": 1, "output": 2}}]},
                "openai": {"base_url": "http://proxy/v1", "api": "openai-chat"}
            }}"#,
        )
        .unwrap();
        let t = ModelTable::load(dir.path()).unwrap();
        let m = t.resolve("local/qwen3").unwrap();
        assert_eq!(m.api, Api::OpenAiChat);
        assert_eq!(m.context_window, 32768);
        assert_eq!(m.prices.output, 2.0);
        assert!(t.provider("local").unwrap().key_optional);
        assert_eq!(t.provider("openai").unwrap().base_url, "http://proxy/v1");
        assert_eq!(t.resolve("openai/gpt-4o").unwrap().api, Api::OpenAiChat);
    }

    #[test]
    fn bad_config_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("models.json"),
            r#"{"providers": {"x": {}}}"#,
        )
        .unwrap();
        let e = ModelTable::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("models.json") && e.contains("base_url"), "{e}");
    }

    #[test]
    fn cost_from_prices() {
        let mut u = crate::protocol::Usage {
            input: 1_000_000,
            output: 500_000,
            ..Default::default()
        };
        apply_cost(
            &mut u,
            &Prices {
                input: 3.0,
                output: 15.0,
                ..Default::default()
            },
        );
        assert!((u.cost.total - 10.5).abs() < 1e-9);
    }
}
