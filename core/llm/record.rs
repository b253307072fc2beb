//! Record and replay: `--record DIR` keeps each request and the raw bytes
//! of its response; `--replay DIR` answers a request from those files with
//! no network. A request is found by its content (API, URL path, body),
//! never by the key or host, so a recording made against a provider
//! replays through a proxy or a local server too. Nothing recorded holds
//! the key: providers quote it back in their 401 bodies (`Incorrect API
//! key provided: Bearer sk-...`), and those bodies are redacted as error
//! messages are.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::models::Api;
use super::providers::HttpRequest;

/// What is kept beside the raw response body.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RecordMeta {
    /// The API kind.
    pub api: String,
    /// The URL without scheme and host.
    pub path: String,
    /// The HTTP status of the answer.
    pub status: u16,
    /// The request body as sent.
    pub request: Value,
}

/// The URL's path and query.
fn url_path(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.find('/').map_or("/", |i| &rest[i..])
}

/// The name under which a request is recorded.
pub fn key(api: Api, req: &HttpRequest) -> String {
    let text = format!("{}\n{}\n{}", api.as_str(), url_path(&req.url), req.body);
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(text.as_bytes()))
}

fn paths(dir: &Path, key: &str) -> (PathBuf, PathBuf) {
    (
        dir.join(format!("{key}.json")),
        dir.join(format!("{key}.body")),
    )
}

/// The secrets a request carries in its authentication headers.
fn secrets(req: &HttpRequest) -> Vec<String> {
    req.headers
        .iter()
        .filter(|(k, _)| {
            matches!(
                k.to_ascii_lowercase().as_str(),
                "authorization" | "x-api-key" | "x-goog-api-key" | "api-key"
            )
        })
        .map(|(_, v)| {
            let v = v.trim();
            v.strip_prefix("Bearer ").unwrap_or(v).trim().to_string()
        })
        .filter(|v| v.len() >= 4)
        .collect()
}

/// `bytes` without the request's secrets; an error body (any status but
/// success) also loses whatever looks like a key, masked or not.
fn scrub(bytes: &[u8], secrets: &[String], error_body: bool) -> Vec<u8> {
    if !error_body && secrets.iter().all(|s| !contains(bytes, s.as_bytes())) {
        return bytes.to_vec();
    }
    let mut text = String::from_utf8_lossy(bytes).into_owned();
    for s in secrets {
        text = text.replace(s.as_str(), "[redacted]");
    }
    if error_body {
        text = super::error::redact(&text, None);
    }
    text.into_bytes()
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// Saves one exchange, with the key taken out of everything kept.
pub fn save(dir: &Path, api: Api, req: &HttpRequest, status: u16, body: &[u8]) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let k = key(api, req);
    let (meta_path, body_path) = paths(dir, &k);
    let secrets = secrets(req);
    let body = scrub(body, &secrets, !(200..300).contains(&status));
    let body = body.as_slice();
    let meta = RecordMeta {
        api: api.as_str().to_string(),
        path: url_path(&req.url).to_string(),
        status,
        request: req.body.clone(),
    };
    let text = serde_json::to_vec_pretty(&meta).map_err(io::Error::other)?;
    let text = scrub(&text, &secrets, false);
    // Body first, then the meta that makes it findable.
    write_atomic(&body_path, body)?;
    write_atomic(&meta_path, &text)
}

fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    io::Write::write_all(&mut tmp, bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Looks a request up: its status and raw body.
pub fn load(dir: &Path, api: Api, req: &HttpRequest) -> Result<(u16, Vec<u8>), String> {
    let k = key(api, req);
    let (meta_path, body_path) = paths(dir, &k);
    let meta = std::fs::read(&meta_path).map_err(|e| {
        format!(
            "no recording in `{}` matches this request (looked for `{k}.json`: {e}); record it first with `--record {}`",
            dir.display(),
            dir.display()
        )
    })?;
    let meta: RecordMeta = serde_json::from_slice(&meta)
        .map_err(|e| format!("the recording `{}` is damaged: {e}", meta_path.display()))?;
    let body = std::fs::read(&body_path)
        .map_err(|e| format!("cannot read the recording `{}`: {e}", body_path.display()))?;
    Ok((meta.status, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_ignores_host_and_headers() {
        let a = HttpRequest {
            url: "https://api.openai.com/v1/responses".into(),
            headers: vec![("authorization".into(), "Bearer one".into())],
            body: serde_json::json!({"model": "m"}),
        };
        let mut b = a.clone();
        b.url = "http://127.0.0.1:9/v1/responses".into();
        b.headers.clear();
        assert_eq!(key(Api::OpenAiResponses, &a), key(Api::OpenAiResponses, &b));
        b.body = serde_json::json!({"model": "n"});
        assert_ne!(key(Api::OpenAiResponses, &a), key(Api::OpenAiResponses, &b));
    }

    #[test]
    fn saves_and_loads() {
        let dir = tempfile::tempdir().unwrap();
        let r = HttpRequest {
            url: "http://h/v1/chat/completions".into(),
            headers: vec![],
            body: serde_json::json!({"x": 1}),
        };
        save(dir.path(), Api::OpenAiChat, &r, 200, b"data: [DONE]\n\n").unwrap();
        let (status, body) = load(dir.path(), Api::OpenAiChat, &r).unwrap();
        assert_eq!((status, body.as_slice()), (200, &b"data: [DONE]\n\n"[..]));
        let mut other = r.clone();
        other.body = serde_json::json!({"x": 2});
        assert!(
            load(dir.path(), Api::OpenAiChat, &other)
                .unwrap_err()
                .contains("--record")
        );
    }
}
