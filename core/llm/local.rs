//! Model servers on this machine (Ollama, llama.cpp, LM Studio, vLLM):
//! which of them answer now, and with which models. A first run without a
//! key, and `ag-loop --check`, use it to offer a command that works with no
//! key at all. Each server is asked once, all at the same time, for its
//! OpenAI-style `GET {base}/models` list, with a short limit: a port where
//! nothing listens refuses at once, and a silent one must not hold up an
//! error message.

use std::time::Duration;

use serde_json::Value;

use super::Llm;

/// The local providers of the model table, with the names people know
/// them by, in the order they are offered.
pub const LOCAL_PROVIDERS: [(&str, &str); 4] = [
    ("ollama", "Ollama"),
    ("llamacpp", "llama.cpp"),
    ("lmstudio", "LM Studio"),
    ("vllm", "vLLM"),
];

/// How long one server may take to list its models.
const PROBE_TIMEOUT: Duration = Duration::from_millis(800);
/// Models named in a message, at most.
const MAX_MODELS: usize = 5;

/// A local server that answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalServer {
    /// Its provider in the model table (`ollama`).
    pub provider: String,
    /// The name people know it by (`Ollama`).
    pub name: String,
    /// Where it answered.
    pub base_url: String,
    /// The models it lists, as it names them.
    pub models: Vec<String>,
}

impl Llm {
    /// The base URL of a local provider: `--base-url` is for the model in
    /// use, so this is always the table's (models.json may move it).
    pub fn local_base_url(&self, provider: &str) -> Option<String> {
        self.table.provider(provider).map(|p| p.base_url.clone())
    }

    /// The local servers that answer now, each with its models, in the
    /// order of [`LOCAL_PROVIDERS`].
    pub async fn local_servers(&self) -> Vec<LocalServer> {
        if self.replay.is_some() {
            return Vec::new();
        }
        let mut asks = tokio::task::JoinSet::new();
        for (i, (id, name)) in LOCAL_PROVIDERS.iter().enumerate() {
            let Some(base) = self.local_base_url(id) else {
                continue;
            };
            let client = self.client.clone();
            asks.spawn(async move {
                let url = format!("{}/models", base.trim_end_matches('/'));
                let models = tokio::time::timeout(PROBE_TIMEOUT, list(&client, &url))
                    .await
                    .ok()
                    .flatten()?;
                Some((
                    i,
                    LocalServer {
                        provider: id.to_string(),
                        name: name.to_string(),
                        base_url: base,
                        models,
                    },
                ))
            });
        }
        let mut found: Vec<(usize, LocalServer)> =
            asks.join_all().await.into_iter().flatten().collect();
        found.sort_by_key(|(i, _)| *i);
        found.into_iter().map(|(_, s)| s).collect()
    }
}

/// The model ids of an OpenAI-style list, or `None` when the answer is
/// not one (something else listens on that port).
async fn list(client: &reqwest::Client, url: &str) -> Option<Vec<String>> {
    let resp = client.get(url).send().await.ok()?;
    if !resp.status().is_success() {
        return None;
    }
    let body: Value = serde_json::from_slice(&resp.bytes().await.ok()?).ok()?;
    let data = body.get("data")?.as_array()?;
    Some(
        data.iter()
            .filter_map(|m| m.get("id")?.as_str().map(str::to_string))
            .collect(),
    )
}

/// The caller's own command line with `-m MODEL` (and `--base-url URL`)
/// put in after the program, quoted for a shell. Any `-m`/`--model` and
/// `--base-url` the caller gave are replaced.
pub fn with_model(argv: &[String], model: &str, base_url: Option<&str>) -> String {
    let mut out = vec![
        argv.first()
            .map_or("ag-loop", |p| program_name(p))
            .to_string(),
    ];
    out.push("-m".into());
    out.push(quote(model));
    if let Some(u) = base_url {
        out.push("--base-url".into());
        out.push(quote(u));
    }
    let mut rest = argv.iter().skip(1);
    while let Some(a) = rest.next() {
        let takes_value = matches!(a.as_str(), "-m" | "--model" | "--base-url");
        if takes_value {
            rest.next();
            continue;
        }
        if a.starts_with("--model=") || a.starts_with("--base-url=") {
            continue;
        }
        if a.starts_with("-m") && a.len() > 2 && !a.starts_with("--") {
            continue;
        }
        out.push(quote(a));
    }
    out.join(" ")
}

/// `ag-loop`, not the path it was started by.
fn program_name(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

/// A word as a POSIX shell reads it back.
fn quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'-' | b'_' | b'.' | b'/' | b':' | b'=' | b'@' | b'%' | b'+' | b','
                )
        });
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// What to say after "no API key": the local servers that answer, with
/// the caller's own command on their first model, else how to reach one.
pub fn no_key_hint(llm: &Llm, argv: &[String], found: &[LocalServer]) -> String {
    let mut s = String::new();
    for server in found {
        let shown: Vec<&str> = server
            .models
            .iter()
            .take(MAX_MODELS)
            .map(String::as_str)
            .collect();
        let more = server.models.len().saturating_sub(MAX_MODELS);
        s.push_str(&format!(
            "\nfound: {} answers at {} with {}{}",
            server.name,
            server.base_url,
            if shown.is_empty() {
                "no model loaded".to_string()
            } else {
                shown.join(", ")
            },
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            },
        ));
        if let Some(m) = server.models.first() {
            s.push_str(&format!(
                "\nhint: it needs no key; run\n  {}",
                with_model(argv, &format!("{}/{m}", server.provider), None)
            ));
        }
    }
    if found.iter().any(|s| !s.models.is_empty()) {
        return s;
    }
    s.push_str("\nhint: or run a model on this machine, which needs no key:");
    let ollama = llm.local_base_url("ollama").unwrap_or_default();
    s.push_str(&format!(
        "\n  {}    (Ollama at {ollama}; `ollama pull MODEL` first)",
        with_model(argv, "ollama/MODEL", None)
    ));
    s.push_str(&format!(
        "\n  {}    (llama.cpp's llama-server)",
        with_model(argv, "llamacpp/MODEL", Some("http://127.0.0.1:8080/v1"))
    ));
    let others: Vec<String> = LOCAL_PROVIDERS
        .iter()
        .skip(2)
        .filter_map(|(id, name)| Some(format!("{name} `{id}/` at {}", llm.local_base_url(id)?)))
        .collect();
    s.push_str(&format!("\n  also {}", others.join(", ")));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_callers_own_command_gets_the_model_and_loses_its_old_one() {
        assert_eq!(
            with_model(
                &argv(&["/usr/bin/ag-loop", "fix the failing test"]),
                "ollama/qwen3:8b",
                None
            ),
            "ag-loop -m ollama/qwen3:8b 'fix the failing test'"
        );
        assert_eq!(
            with_model(
                &argv(&[
                    "ag-loop",
                    "-m",
                    "anthropic/x",
                    "--json",
                    "--model=y",
                    "-mz",
                    "it's"
                ]),
                "llamacpp/MODEL",
                Some("http://127.0.0.1:8080/v1")
            ),
            "ag-loop -m llamacpp/MODEL --base-url http://127.0.0.1:8080/v1 --json 'it'\\''s'"
        );
    }
}
