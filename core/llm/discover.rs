//! Asking a server for a model's context window when no table knows it:
//! llama.cpp's `GET /props`, Ollama's `GET /api/ps` (the window it runs a
//! loaded model with) and `POST /api/show`, LM Studio's
//! `GET /api/v0/models` and the `GET /models` list of vLLM and others.
//! Without a window ag-loop never compacts, and a local server's window
//! is a setting of that server, so only the server can say. Each probe is
//! short and its failure silent: the window then stays unknown.

use std::time::Duration;

use serde_json::Value;

use super::Llm;
use super::models::{Api, Provider};

/// A context window and where the figure came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// Tokens of context.
    pub tokens: u64,
    /// Where it came from: `the model table`, or the server's endpoint.
    pub source: String,
}

/// How long one probe may take, connection and body together.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// The most of a probe's body that is read (OpenRouter's list is large).
const MAX_PROBE_BODY: usize = 16 * 1024 * 1024;

/// The endpoints a server may answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Probe {
    /// llama.cpp's `GET /props`.
    Props,
    /// Ollama's `GET /api/ps`: the models it has loaded, each with the
    /// window it runs it with.
    Ps,
    /// Ollama's `POST /api/show`.
    Show,
    /// LM Studio's `GET /api/v0/models`.
    LmStudio,
    /// `GET {base}/models` (vLLM's `max_model_len`, and others' fields).
    Models,
}

/// Which endpoints to ask, in order, for a provider.
fn probes(p: &Provider) -> &'static [Probe] {
    if p.api != Api::OpenAiChat {
        return &[];
    }
    match p.id.as_str() {
        "llamacpp" => &[Probe::Props],
        "ollama" => &[Probe::Ps, Probe::Show],
        "vllm" => &[Probe::Models],
        "lmstudio" => &[Probe::LmStudio, Probe::Models],
        "openrouter" | "groq" => &[Probe::Models],
        // A server of the user's own: any of them may be behind it.
        _ if p.key_optional => &[
            Probe::Props,
            Probe::Models,
            Probe::Ps,
            Probe::Show,
            Probe::LmStudio,
        ],
        _ => &[],
    }
}

/// The server's root: the base URL without its trailing `/v1`.
fn root(base: &str) -> &str {
    let b = base.trim_end_matches('/');
    b.strip_suffix("/v1").unwrap_or(b)
}

impl Llm {
    /// The context window of `model`: the table's, else the one its
    /// server reports (asked once per model; later calls and the output
    /// limit use the answer). `None` when nobody knows.
    pub async fn context_window(&self, model: &str) -> Option<Window> {
        let info = self.table.resolve(model)?;
        if info.context_window > 0 {
            return Some(Window {
                tokens: info.context_window,
                source: "the model table".into(),
            });
        }
        if let Some(known) = self.windows_cache(&info.full_id()) {
            return known;
        }
        let found = self.ask_server(&info.provider, &info.id).await;
        if let Ok(mut cache) = self.windows.lock() {
            cache.insert(info.full_id(), found.clone());
        }
        found
    }

    fn windows_cache(&self, full_id: &str) -> Option<Option<Window>> {
        self.windows.lock().ok()?.get(full_id).cloned()
    }

    /// A window learnt from the server, for a model the table lacks.
    pub(crate) fn learnt_window(&self, full_id: &str) -> Option<u64> {
        self.windows_cache(full_id).flatten().map(|w| w.tokens)
    }

    async fn ask_server(&self, provider: &str, model: &str) -> Option<Window> {
        if self.replay.is_some() {
            return None;
        }
        let p = self.table.provider(provider)?;
        let base = self.opts.base_url.as_deref().unwrap_or(&p.base_url);
        let key = self.key_for(p);
        for probe in probes(p) {
            let url = match probe {
                Probe::Props => format!("{}/props", root(base)),
                Probe::Ps => format!("{}/api/ps", root(base)),
                Probe::Show => format!("{}/api/show", root(base)),
                Probe::LmStudio => format!("{}/api/v0/models", root(base)),
                Probe::Models => format!("{}/models", base.trim_end_matches('/')),
            };
            let mut rb = if *probe == Probe::Show {
                self.client
                    .post(&url)
                    .header("content-type", "application/json")
                    .body(serde_json::json!({"model": model}).to_string())
            } else {
                self.client.get(&url)
            };
            if let Some(k) = &key {
                rb = rb.bearer_auth(k);
            }
            for (k, v) in &p.headers {
                rb = rb.header(k.as_str(), v.as_str());
            }
            let body = tokio::time::timeout(PROBE_TIMEOUT, fetch(rb)).await;
            let Ok(Some(body)) = body else { continue };
            if let Some((tokens, field)) = read_window(*probe, &body, model) {
                return Some(Window {
                    tokens,
                    source: format!("{field} from `{url}`"),
                });
            }
        }
        None
    }
}

/// A successful JSON answer, or nothing.
async fn fetch(rb: reqwest::RequestBuilder) -> Option<Value> {
    let mut resp = rb.send().await.ok()?;
    if !resp.status().is_success() {
        return None;
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.ok()? {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_PROBE_BODY {
            return None;
        }
    }
    serde_json::from_slice(&body).ok()
}

fn positive(v: Option<&Value>) -> Option<u64> {
    let v = v?;
    v.as_u64()
        .or_else(|| v.as_f64().filter(|f| *f >= 1.0).map(|f| f as u64))
        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
        .filter(|n| *n > 0)
}

/// The window in a probe's answer, and the field it was read from.
fn read_window(probe: Probe, body: &Value, model: &str) -> Option<(u64, String)> {
    match probe {
        Probe::Props => {
            // Per slot: what one request may use.
            if let Some(n) = positive(body.pointer("/default_generation_settings/n_ctx")) {
                return Some((n, "`default_generation_settings.n_ctx`".into()));
            }
            positive(body.get("n_ctx")).map(|n| (n, "`n_ctx`".into()))
        }
        Probe::Ps => {
            // Ollama names a model `qwen3:latest` where the user wrote `qwen3`.
            let latest = format!("{model}:latest");
            let entry = body.get("models")?.as_array()?.iter().find(|m| {
                ["name", "model"].iter().any(|k| {
                    m.get(*k)
                        .and_then(Value::as_str)
                        .is_some_and(|n| n == model || n == latest)
                })
            })?;
            positive(entry.get("context_length")).map(|n| (n, "`context_length`".into()))
        }
        Probe::Show => {
            // A `num_ctx` the model was set up with is what the server runs;
            // the architecture's length is only the most it could.
            let params = body.get("parameters").and_then(Value::as_str).unwrap_or("");
            for line in params.lines() {
                let mut words = line.split_whitespace();
                if words.next() == Some("num_ctx")
                    && let Some(n) = words.next().and_then(|w| w.parse::<u64>().ok())
                    && n > 0
                {
                    return Some((n, "`parameters.num_ctx`".into()));
                }
            }
            let info = body.get("model_info")?.as_object()?;
            info.iter()
                .filter(|(k, _)| k.ends_with(".context_length"))
                .find_map(|(k, v)| positive(Some(v)).map(|n| (n, format!("`model_info.{k}`"))))
        }
        Probe::LmStudio | Probe::Models => {
            let list = body
                .get("data")
                .and_then(Value::as_array)
                .or_else(|| body.as_array())?;
            let entry = list
                .iter()
                .find(|m| m.get("id").and_then(Value::as_str) == Some(model))
                .or_else(|| (list.len() == 1).then(|| &list[0]))?;
            [
                "loaded_context_length",
                "max_model_len",
                "context_length",
                "context_window",
                "max_context_length",
            ]
            .iter()
            .find_map(|f| positive(entry.get(*f)).map(|n| (n, format!("`{f}`"))))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_each_servers_field() {
        let props =
            json!({"default_generation_settings": {"n_ctx": 4096, "params": {}}, "total_slots": 1});
        assert_eq!(read_window(Probe::Props, &props, "m").unwrap().0, 4096);
        assert_eq!(
            read_window(Probe::Props, &json!({"n_ctx": 8192}), "m")
                .unwrap()
                .0,
            8192
        );
        assert!(read_window(Probe::Props, &json!({"n_ctx": 0}), "m").is_none());

        let show = json!({"parameters": "stop \"<|im_end|>\"\nnum_ctx 16384", "model_info": {"qwen2.context_length": 32768}});
        assert_eq!(read_window(Probe::Show, &show, "m").unwrap().0, 16384);
        let show =
            json!({"model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768}});
        let (n, field) = read_window(Probe::Show, &show, "m").unwrap();
        assert_eq!(n, 32768);
        assert!(field.contains("qwen2.context_length"), "{field}");

        let ps = json!({"models": [{"name": "qwen3:latest", "model": "qwen3:latest", "size_vram": 0, "context_length": 4096}]});
        assert_eq!(read_window(Probe::Ps, &ps, "qwen3").unwrap().0, 4096);
        assert!(read_window(Probe::Ps, &ps, "llama3").is_none());

        let vllm = json!({"object": "list", "data": [{"id": "other", "max_model_len": 1}, {"id": "Qwen/Qwen3-8B", "max_model_len": 40960}]});
        assert_eq!(
            read_window(Probe::Models, &vllm, "Qwen/Qwen3-8B")
                .unwrap()
                .0,
            40960
        );
        let lms = json!({"data": [{"id": "qwen3", "max_context_length": 131072, "loaded_context_length": 8192}]});
        assert_eq!(read_window(Probe::LmStudio, &lms, "qwen3").unwrap().0, 8192);
        // Several models and none of them this one: no answer.
        let two =
            json!({"data": [{"id": "a", "max_model_len": 5}, {"id": "b", "max_model_len": 6}]});
        assert!(read_window(Probe::Models, &two, "c").is_none());
    }

    #[test]
    fn root_drops_v1() {
        assert_eq!(root("http://h:8080/v1"), "http://h:8080");
        assert_eq!(root("http://h:8080/v1/"), "http://h:8080");
        assert_eq!(root("http://h:8080"), "http://h:8080");
    }
}
