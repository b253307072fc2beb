//! HTTP headers for streamable-HTTP MCP servers (an API key, a bearer
//! token), given by URL in the environment variable `AG_MCP_HEADERS`, a
//! JSON object `{"URL": {"NAME": "VALUE", ...}, ...}`, rather than on the
//! command line, where every process of the machine could read them in
//! `ps`. ag-loop withholds the variable from every child and hides the
//! values in its events; an error names a header, never its value. ag-acp
//! passes an editor's `McpServer::Http { headers }` this way.

use std::collections::HashMap;

use reqwest::header::{HeaderName, HeaderValue};

use super::secrets_by_server::{self, ByServer};

/// The variable.
pub const ENV: &str = "AG_MCP_HEADERS";

/// Headers by server URL.
pub type Headers = ByServer;

/// The headers in `AG_MCP_HEADERS` (none when it is unset or empty).
pub fn from_env() -> Result<Headers, String> {
    secrets_by_server::read(ENV)?.map_or_else(|| Ok(Headers::new()), |t| parse(&t))
}

/// Reads and checks the JSON of `AG_MCP_HEADERS`.
pub fn parse(text: &str) -> Result<Headers, String> {
    secrets_by_server::parse(
        ENV,
        text,
        "a JSON object of server URLs, each with an object of header names and string values: {\"https://host/mcp\": {\"Authorization\": \"Bearer ...\"}}",
        "header",
        |name, value, url| {
            if HeaderName::from_bytes(name.as_bytes()).is_err() {
                return Err(format!("`{name}` (for `{url}`) is not an HTTP header name"));
            }
            if HeaderValue::from_str(value).is_err() {
                return Err(format!(
                    "the value of header `{name}` (for `{url}`) is not a valid HTTP header value (visible ASCII, no line breaks)"
                ));
            }
            Ok(())
        },
    )
}

/// The headers as rmcp takes them (already checked by [`parse`]).
pub fn to_map(list: &[(String, String)]) -> HashMap<HeaderName, HeaderValue> {
    list.iter()
        .filter_map(|(n, v)| {
            Some((
                HeaderName::from_bytes(n.as_bytes()).ok()?,
                HeaderValue::from_str(v).ok()?,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_read_by_url() {
        let h = parse(r#"{"http://a/mcp": {"Authorization": "Bearer t", "X-Team": "7"}}"#).unwrap();
        assert_eq!(
            h["http://a/mcp"],
            [
                ("Authorization".to_string(), "Bearer t".to_string()),
                ("X-Team".to_string(), "7".to_string())
            ]
        );
        assert_eq!(to_map(&h["http://a/mcp"]).len(), 2);
    }

    #[test]
    fn bad_headers_are_named_and_their_values_never_shown() {
        for (text, says) in [
            (r#"{"u": {"Bad Name": "secret-1"}}"#, "`Bad Name`"),
            (r#"{"u": {"X": "secret-1\nInjected: y"}}"#, "header `X`"),
            (r#"{"u": {"X": 1}}"#, "must be a string"),
            (r#"{"u": "secret-1"}"#, "JSON object"),
            (r#"{"u": {"X": "secret-1"#, "JSON object"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
            assert!(!e.contains("secret-1"), "{text}: {e}");
        }
    }
}
