//! A secret in a URL is refused before anything is sent: a model that read
//! a key (in a `.env`, in an output) could otherwise hand it to any server
//! in a query string. The secrets are ag's (provider keys, MCP header
//! values, `--api-key`: see [`crate::llm::keys`]). ag-fetch run by hand
//! finds them in its own environment; under ag-loop the tool is never
//! given them (core/proc/secrets.rs), so ag-loop checks the call itself
//! before running it, with the same function, against the secrets it
//! holds ([`crate::llm::keys::held`]).
//!
//! The value is looked for as it is and percent-decoded (once and twice,
//! for a URL encoded twice). A key that the model transformed first
//! (base64, reversed, split over two calls) is not recognised: the host
//! policy is what keeps such a URL from going anywhere unknown.

use crate::llm::keys::Redactor;

/// The error code of a URL refused for the secret it holds.
pub const CODE: &str = "fetch.secret_in_url";

/// For a process that runs tools and holds secrets it does not give them
/// (ag-loop, ag-mcp): the refusal of a `fetch` call whose `url` holds one
/// of them ([`crate::llm::keys::held`]).
pub fn refusal_of_call(arguments: &serde_json::Map<String, serde_json::Value>) -> Option<String> {
    let url = arguments.get("url")?.as_str()?;
    refusal(url, &crate::llm::keys::held())
}

/// The message refusing `url` when it holds one of `secrets`, or `None`.
/// The message never holds the secret: the URL is shown redacted.
pub fn refusal(url: &str, secrets: &Redactor) -> Option<String> {
    if secrets.is_empty() {
        return None;
    }
    let once = percent_decode(url);
    let twice = percent_decode(&once);
    let (form, name) = [url.to_string(), once, twice]
        .into_iter()
        .find_map(|form| {
            secrets
                .found_in(&form)
                .map(|n| (form.clone(), n.to_string()))
        })?;
    let shown = secrets.text(&form);
    Some(format!(
        "The URL holds the value of `{name}`, a secret that ag keeps from the tools, so nothing was requested: a key never leaves in a URL. Call again without it: {}",
        serde_json::json!({ "url": shown })
    ))
}

/// `%XX` escapes decoded; anything else (a lone `%`, bad hex) kept as it is.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = bytes.get(i + 1..i + 3)
            && let Ok(text) = std::str::from_utf8(hex)
            && let Ok(b) = u8::from_str_radix(text, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_as_it_is_or_encoded_is_refused_and_never_shown() {
        let mut r = Redactor::default();
        r.add("sk-test/key+value=1", "OPENAI_API_KEY");
        for url in [
            "https://x.example/?k=sk-test/key+value=1",
            "https://x.example/?k=sk-test%2Fkey%2Bvalue%3D1",
            "https://x.example/?k=sk-test%252Fkey%252Bvalue%253D1",
        ] {
            let m = refusal(url, &r).unwrap_or_else(|| panic!("{url} passed"));
            assert!(m.contains("`OPENAI_API_KEY`"), "{m}");
            assert!(m.contains("[OPENAI_API_KEY redacted]"), "{m}");
            assert!(!m.contains("sk-test"), "{m}");
        }
        assert_eq!(refusal("https://x.example/?k=other", &r), None);
        assert_eq!(
            refusal("https://x.example/%zz%", &Redactor::default()),
            None
        );
        assert_eq!(percent_decode("a%2"), "a%2");
    }
}
