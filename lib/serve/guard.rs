//! What every HTTP request passes before anything is served, in this
//! order: its `Host` must name the address served (a page of another site
//! whose name an attacker points at 127.0.0.1, DNS rebinding, is refused
//! here), its `Origin`, when it has one, must be this site (another site's
//! page posting here, cross-site request forgery), and it must carry the
//! token, as `Authorization: Bearer` or `?token=`, unless it asks for the
//! page itself (its HTML, script and style, the same in every copy of ag
//! and holding nothing of this machine's), so that the page can be loaded
//! again without the token in its address.
//!
//! No cookie carries the token: a browser sends a cookie to every port of
//! a host, so any server on this machine would collect it. The page keeps
//! the token where only its own origin (scheme, host and port) reads it,
//! and sends it itself. That also leaves another site's page no way to
//! send it: a browser adds nothing of ours to that page's requests.
//!
//! Every response is marked not to be cached, framed, sniffed or given a
//! referrer.

use std::net::SocketAddr;

use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};

/// The checks of one HTTP server.
pub struct Guard {
    token: String,
    /// `Host` values served, lowercase, with their port.
    hosts: Vec<String>,
}

/// A refusal: its status and message.
pub type Refusal = (StatusCode, String);

/// The paths served without the token: the page, its script and its style.
const PUBLIC: &[&str] = &["/", "/page.js", "/page.css"];

/// How a request that passed got in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// With the token.
    Token,
    /// To the page itself, which needs none.
    Page,
}

impl Guard {
    /// The checks for a server bound to `bound` with this token; `extra`
    /// are more host names (NAME or NAME:PORT) to answer to.
    pub fn new(token: String, bound: SocketAddr, extra: &[String]) -> Guard {
        let port = bound.port();
        let mut hosts = vec![url_host(bound)];
        if bound.ip().is_loopback() {
            for h in ["127.0.0.1", "localhost", "[::1]"] {
                hosts.push(format!("{h}:{port}"));
            }
        }
        for e in extra {
            let e = e.trim().to_ascii_lowercase();
            if e.is_empty() {
                continue;
            }
            if e.rsplit_once(':')
                .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
                && !e.ends_with(']')
            {
                hosts.push(e);
            } else {
                hosts.push(format!("{e}:{port}"));
            }
        }
        // A browser leaves the default port out of Host and Origin.
        if port == 80 {
            let bare: Vec<String> = hosts
                .iter()
                .filter_map(|h| h.strip_suffix(":80").map(str::to_string))
                .collect();
            hosts.extend(bare);
        }
        hosts.dedup();
        Guard { token, hosts }
    }

    /// Whether `given` is the token (compared in constant time).
    pub fn token_matches(&self, given: &str) -> bool {
        let (a, b) = (self.token.as_bytes(), given.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }

    /// Checks a request's Host, Origin and token.
    pub fn check(&self, headers: &HeaderMap, uri: &Uri) -> Result<Access, Refusal> {
        let host = headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        if !self.hosts.contains(&host) {
            return Err((
                StatusCode::FORBIDDEN,
                format!(
                    "Host `{host}` is not served here (a guard against DNS rebinding); use http://{}/, or start ag-serve with --allow-host NAME",
                    self.hosts[0]
                ),
            ));
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("").to_ascii_lowercase();
            let ours = origin
                .strip_prefix("http://")
                .is_some_and(|h| self.hosts.iter().any(|x| x == h));
            if !ours {
                return Err((
                    StatusCode::FORBIDDEN,
                    format!(
                        "requests from `{origin}` are refused: only this site's own page may use it"
                    ),
                ));
            }
        }
        if headers
            .get("sec-fetch-site")
            .is_some_and(|v| v.as_bytes() == b"cross-site")
        {
            return Err((
                StatusCode::FORBIDDEN,
                "a request another site's page made is refused".to_string(),
            ));
        }
        let given = bearer(headers).or_else(|| query_value(uri, "token"));
        match given {
            Some(t) if self.token_matches(&t) => Ok(Access::Token),
            None if PUBLIC.contains(&uri.path()) => Ok(Access::Page),
            Some(_) => Err((
                StatusCode::UNAUTHORIZED,
                "the token is wrong: open the URL ag-serve printed when it started ($AG_HOME/serve/token holds the token)".to_string(),
            )),
            None => Err((
                StatusCode::UNAUTHORIZED,
                "a token is needed: open the URL ag-serve printed when it started, or send `Authorization: Bearer TOKEN` ($AG_HOME/serve/token holds it)".to_string(),
            )),
        }
    }
}

/// The host and port of a URL to `addr`.
pub fn url_host(addr: SocketAddr) -> String {
    match addr {
        SocketAddr::V4(a) => format!("{}:{}", a.ip(), a.port()),
        SocketAddr::V6(a) => format!("[{}]:{}", a.ip(), a.port()),
    }
}

fn bearer(headers: &HeaderMap) -> Option<String> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = v.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim().to_string())
}

/// The value of a query parameter, percent-decoded.
pub fn query_value(uri: &Uri, name: &str) -> Option<String> {
    uri.query()?.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == name).then(|| percent_decode(v))
    })
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                        continue;
                    }
                    None => out.push(b'%'),
                }
            }
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Marks a response: not cached, not framed, not sniffed, no referrer, and
/// a page that runs only its own script and talks only to its own site.
pub fn harden(headers: &mut HeaderMap) {
    let set = |h: &mut HeaderMap, k: header::HeaderName, v: &'static str| {
        h.insert(k, HeaderValue::from_static(v));
    };
    set(headers, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(headers, header::REFERRER_POLICY, "no-referrer");
    set(headers, header::X_FRAME_OPTIONS, "DENY");
    set(
        headers,
        header::CONTENT_SECURITY_POLICY,
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    );
    if !headers.contains_key(header::CACHE_CONTROL) {
        set(headers, header::CACHE_CONTROL, "no-store");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard() -> Guard {
        Guard::new(
            "t0ken".into(),
            "127.0.0.1:8377".parse().unwrap(),
            &["box.example".into()],
        )
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn host_origin_and_token_are_all_needed() {
        let g = guard();
        let uri: Uri = "/api/sessions?token=t0ken".parse().unwrap();
        let bare: Uri = "/api/sessions".parse().unwrap();
        assert_eq!(
            g.check(&headers(&[("host", "127.0.0.1:8377")]), &uri),
            Ok(Access::Token)
        );
        assert!(
            g.check(&headers(&[("host", "localhost:8377")]), &uri)
                .is_ok()
        );
        assert!(
            g.check(&headers(&[("host", "box.example:8377")]), &uri)
                .is_ok()
        );
        // DNS rebinding: another name for this address.
        let (s, m) = g
            .check(&headers(&[("host", "evil.example:8377")]), &uri)
            .unwrap_err();
        assert_eq!(s, StatusCode::FORBIDDEN);
        assert!(m.contains("DNS rebinding"), "{m}");
        assert!(g.check(&headers(&[]), &uri).is_err());
        // Another site's page.
        let h = headers(&[
            ("host", "127.0.0.1:8377"),
            ("origin", "http://evil.example"),
        ]);
        assert_eq!(g.check(&h, &uri).unwrap_err().0, StatusCode::FORBIDDEN);
        let h = headers(&[
            ("host", "127.0.0.1:8377"),
            ("origin", "http://127.0.0.1:9999"),
        ]);
        assert_eq!(g.check(&h, &uri).unwrap_err().0, StatusCode::FORBIDDEN);
        let h = headers(&[
            ("host", "127.0.0.1:8377"),
            ("origin", "http://127.0.0.1:8377"),
        ]);
        assert!(g.check(&h, &uri).is_ok());
        let h = headers(&[("host", "127.0.0.1:8377"), ("sec-fetch-site", "cross-site")]);
        assert_eq!(g.check(&h, &uri).unwrap_err().0, StatusCode::FORBIDDEN);
        // The token, each way, and wrong.
        let h = headers(&[("host", "127.0.0.1:8377")]);
        assert_eq!(g.check(&h, &bare).unwrap_err().0, StatusCode::UNAUTHORIZED);
        let h = headers(&[
            ("host", "127.0.0.1:8377"),
            ("authorization", "Bearer t0ken"),
        ]);
        assert!(g.check(&h, &bare).is_ok());
        assert_eq!(g.check(&h, &bare), Ok(Access::Token));
        // No cookie lets a request in: a browser sends one to every port.
        let h = headers(&[
            ("host", "127.0.0.1:8377"),
            ("cookie", "a=b; ag_serve_token_8377=t0ken; token=t0ken"),
        ]);
        assert_eq!(g.check(&h, &bare).unwrap_err().0, StatusCode::UNAUTHORIZED);
        // The page itself needs no token, but its Host and Origin are
        // checked all the same, and a wrong token is refused there too.
        let host = headers(&[("host", "127.0.0.1:8377")]);
        for page in ["/", "/page.js", "/page.css"] {
            assert_eq!(g.check(&host, &page.parse().unwrap()), Ok(Access::Page));
        }
        assert!(g.check(&host, &"/api/fanout".parse().unwrap()).is_err());
        assert!(g.check(&host, &"/page.js/../api".parse().unwrap()).is_err());
        let h = headers(&[("host", "evil.example:8377")]);
        assert!(g.check(&h, &"/".parse().unwrap()).is_err());
        assert!(g.check(&host, &"/?token=t0kem".parse().unwrap()).is_err());
        let wrong: Uri = "/?token=t0kem".parse().unwrap();
        let (s, m) = g
            .check(&headers(&[("host", "127.0.0.1:8377")]), &wrong)
            .unwrap_err();
        assert_eq!(s, StatusCode::UNAUTHORIZED);
        assert!(m.contains("wrong"), "{m}");
    }

    #[test]
    fn query_values_are_decoded() {
        let u: Uri = "/x?a=1&token=a%2Fb+c&z".parse().unwrap();
        assert_eq!(query_value(&u, "token").as_deref(), Some("a/b c"));
        assert_eq!(query_value(&u, "z").as_deref(), Some(""));
        assert_eq!(query_value(&u, "q"), None);
        let u: Uri = "/x?t=%zz%4".parse().unwrap();
        assert_eq!(query_value(&u, "t").as_deref(), Some("%zz%4"));
    }
}
