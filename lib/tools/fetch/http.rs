//! One GET, hop by hop, within bounds: every host checked against the
//! policy before it is contacted, every name resolved once by ag-fetch's
//! own resolver, which checks the addresses and hands the connection only
//! those (so a name that answers a public address to the check and a
//! private one to the connection, DNS rebinding, has no second answer to
//! give), and the address actually connected to checked again. Redirects
//! are followed by hand, each hop judged like the first. No cookies, no
//! credentials, no proxy, no header from the environment: the request
//! carries only what this file sets.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::header::{ACCEPT, CONTENT_ENCODING, CONTENT_TYPE, LOCATION};
use tokio::time::Instant;
use url::Url;

use super::policy::{self, NetPolicy, Refusal};

/// Redirects followed before giving up.
pub const MAX_REDIRECTS: usize = 5;

/// What a fetch may spend.
#[derive(Debug, Clone)]
pub struct Limits {
    /// From the first connection to the last byte, redirects included.
    pub total: Duration,
    /// Bytes of a body kept, by the kind its headers announce.
    pub max_bytes: fn(&str) -> usize,
}

/// A name pinned to an address (`--resolve HOST:ADDR`), checked like any
/// resolved address.
pub type Overrides = HashMap<String, IpAddr>;

/// What came back.
#[derive(Debug)]
pub struct Fetched {
    /// The URL asked for.
    pub url: Url,
    /// The URL that answered, after redirects.
    pub final_url: Url,
    /// The URLs redirected through, in order.
    pub redirects: Vec<String>,
    /// The `Content-Type` header, if any.
    pub content_type: Option<String>,
    /// The `Content-Length` header, if any.
    pub content_length: Option<u64>,
    /// The body, or as much of it as the bounds allowed.
    pub body: Vec<u8>,
    /// Set when the body was cut short.
    pub cut: Option<Cut>,
    /// The body was not read: its type is not one fetch shows.
    pub skipped: bool,
}

/// Why a body is not whole.
#[derive(Debug, Clone, PartialEq)]
pub enum Cut {
    /// It was longer than the bytes kept.
    Size(usize),
    /// The time ran out while it came.
    Time(Duration),
    /// The connection broke.
    Broken(String),
}

/// A fetch that gave nothing to show; the code is the tool error's.
#[derive(Debug, Clone)]
pub struct Failure {
    /// A stable code such as `fetch.refused`.
    pub code: &'static str,
    /// What happened and what to do.
    pub message: String,
}

impl Failure {
    fn new(code: &'static str, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
        }
    }
}

/// The resolver of every connection: the policy's answer for the name,
/// then its addresses, each checked; what it hands out is all the
/// connection can use, and it remembers what it handed out and any refusal.
struct CheckedResolver {
    policy: Arc<NetPolicy>,
    overrides: Arc<Overrides>,
    /// Per name, the addresses handed out.
    handed: Arc<Mutex<HashMap<String, Vec<IpAddr>>>>,
    /// Why the last name was refused, in words for the model.
    refused: Arc<Mutex<Option<String>>>,
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().trim_end_matches('.').to_ascii_lowercase();
        let policy = self.policy.clone();
        let pinned = self.overrides.get(&host).copied();
        let handed = self.handed.clone();
        let refused = self.refused.clone();
        Box::pin(async move {
            let refuse = |why: String| {
                *refused.lock().unwrap_or_else(|e| e.into_inner()) = Some(why.clone());
                Box::<dyn std::error::Error + Send + Sync>::from(why)
            };
            let reach = policy.reach(&host).map_err(|Refusal(why)| refuse(why))?;
            let addrs: Vec<IpAddr> = match pinned {
                Some(ip) => vec![ip],
                None => tokio::net::lookup_host((host.as_str(), 0))
                    .await
                    .map_err(|e| refuse(format!("cannot resolve `{host}`: {e}")))?
                    .map(|a| a.ip())
                    .collect(),
            };
            if addrs.is_empty() {
                return Err(refuse(format!("`{host}` resolves to no address")));
            }
            // One inward address refuses the name: a host that answers a
            // private address beside public ones is not one to trust.
            for ip in &addrs {
                policy::check_address(&host, reach, *ip).map_err(|Refusal(why)| refuse(why))?;
            }
            handed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(host.clone(), addrs.clone());
            let out: Addrs = Box::new(addrs.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(out)
        })
    }
}

/// GETs `url` within `limits`, following redirects hop by hop under `policy`.
pub async fn fetch(
    url: &Url,
    policy: NetPolicy,
    overrides: Overrides,
    limits: &Limits,
) -> Result<Fetched, Failure> {
    let deadline = Instant::now() + limits.total;
    let policy = Arc::new(policy);
    let handed: Arc<Mutex<HashMap<String, Vec<IpAddr>>>> = Arc::default();
    let refused: Arc<Mutex<Option<String>>> = Arc::default();
    crate::tls::install_provider();
    let client = reqwest::Client::builder()
        .dns_resolver(CheckedResolver {
            policy: policy.clone(),
            overrides: Arc::new(overrides),
            handed: handed.clone(),
            refused: refused.clone(),
        })
        // Hops are judged one by one below.
        .redirect(reqwest::redirect::Policy::none())
        // A proxy would be the address connected to, and the checks
        // would judge the proxy rather than the host; HTTP(S)_PROXY may
        // also carry credentials. So the environment's proxy is not used.
        .no_proxy()
        .referer(false)
        .connect_timeout(limits.total.min(Duration::from_secs(10)))
        .user_agent(concat!("ag-fetch/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| Failure::new("fetch.client", format!("cannot make the HTTP client: {e}")))?;
    let mut current = url.clone();
    let mut redirects = Vec::new();
    loop {
        let host = policy::host_of(&current);
        let reach = policy
            .reach(&host)
            .map_err(|Refusal(why)| refusal(url, &current, &redirects, why))?;
        // An address written in the URL is connected to without the
        // resolver: it is judged here.
        if let Some(ip) = policy::literal_address(&current) {
            policy::check_address(&host, reach, ip)
                .map_err(|Refusal(why)| refusal(url, &current, &redirects, why))?;
        }
        let request = client
            .get(current.clone())
            .header(
                ACCEPT,
                "text/html, application/xhtml+xml, text/markdown, text/plain;q=0.9, application/json;q=0.9, application/pdf;q=0.8, */*;q=0.5",
            )
            .send();
        let response = match tokio::time::timeout_at(deadline, request).await {
            Err(_) => {
                return Err(Failure::new(
                    "fetch.timeout",
                    format!(
                        "`{current}` did not answer within {} s; try again later, or another source",
                        limits.total.as_secs()
                    ),
                ));
            }
            Ok(Err(e)) => {
                if let Some(why) = refused.lock().unwrap_or_else(|e| e.into_inner()).take() {
                    return Err(refusal(url, &current, &redirects, why));
                }
                return Err(Failure::new(
                    "fetch.connect",
                    format!("cannot GET `{current}`: {}", error_chain(&e)),
                ));
            }
            Ok(Ok(r)) => r,
        };
        // The address connected to is one the resolver handed out (or the
        // URL's own), and passes the policy.
        if let Some(peer) = response.remote_addr() {
            let known = policy::literal_address(&current) == Some(peer.ip())
                || handed
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(&host)
                    .is_some_and(|a| a.contains(&peer.ip()));
            if !known {
                return Err(refusal(
                    url,
                    &current,
                    &redirects,
                    format!(
                        "the connection went to {}, an address that was not checked",
                        peer.ip()
                    ),
                ));
            }
            policy::check_address(&host, reach, peer.ip())
                .map_err(|Refusal(why)| refusal(url, &current, &redirects, why))?;
        }
        let status = response.status();
        if status.is_redirection()
            && let Some(next) = response
                .headers()
                .get(LOCATION)
                .and_then(|l| l.to_str().ok())
        {
            if redirects.len() >= MAX_REDIRECTS {
                return Err(Failure::new(
                    "fetch.redirects",
                    format!(
                        "`{url}` redirected more than {MAX_REDIRECTS} times (last to `{next}`); call fetch with the last URL if it is the page you want"
                    ),
                ));
            }
            let joined = current.join(next).map_err(|e| {
                Failure::new(
                    "fetch.redirect",
                    format!("`{current}` redirects to `{next}`, which is not a URL ({e})"),
                )
            })?;
            let next_url = policy::parse_url(joined.as_str()).map_err(|why| {
                Failure::new(
                    "fetch.refused",
                    format!(
                        "`{current}` redirects to `{joined}`, which fetch does not follow: {why}"
                    ),
                )
            })?;
            redirects.push(next_url.to_string());
            current = next_url;
            continue;
        }
        if !status.is_success() {
            return Err(Failure::new(
                "fetch.status",
                format!(
                    "`{current}` answered {status}{}; check the URL, or find the page another way",
                    if redirects.is_empty() {
                        String::new()
                    } else {
                        format!(" (after redirects from `{url}`)")
                    }
                ),
            ));
        }
        let header = |name| {
            response
                .headers()
                .get(name)
                .and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok())
                .map(str::to_string)
        };
        let content_type = header(CONTENT_TYPE);
        if let Some(enc) = header(CONTENT_ENCODING).filter(|e| !e.eq_ignore_ascii_case("identity"))
        {
            return Err(Failure::new(
                "fetch.encoding",
                format!(
                    "`{current}` sent its body compressed ({enc}) although fetch asks for none; fetch cannot read it"
                ),
            ));
        }
        let content_length = response.content_length();
        let kind = essence(content_type.as_deref());
        let max = (limits.max_bytes)(&kind);
        let mut fetched = Fetched {
            url: url.clone(),
            final_url: current.clone(),
            redirects,
            content_type,
            content_length,
            body: Vec::new(),
            cut: None,
            skipped: max == 0,
        };
        if max > 0 {
            read_body(response, &mut fetched, max, deadline, limits.total).await?;
        }
        return Ok(fetched);
    }
}

/// Reads the body until it ends, `max` bytes are kept, the deadline
/// passes or the connection breaks; what came is kept either way.
async fn read_body(
    mut response: reqwest::Response,
    fetched: &mut Fetched,
    max: usize,
    deadline: Instant,
    total: Duration,
) -> Result<(), Failure> {
    loop {
        match tokio::time::timeout_at(deadline, response.chunk()).await {
            Err(_) => {
                fetched.cut = Some(Cut::Time(total));
                break;
            }
            Ok(Ok(None)) => break,
            Ok(Ok(Some(chunk))) => {
                let room = max - fetched.body.len();
                if chunk.len() > room {
                    fetched.body.extend_from_slice(&chunk[..room]);
                    fetched.cut = Some(Cut::Size(max));
                    break;
                }
                // A body of exactly `max` bytes is whole: only a byte
                // beyond it (the next chunk) cuts it.
                fetched.body.extend_from_slice(&chunk);
            }
            Ok(Err(e)) => {
                fetched.cut = Some(Cut::Broken(error_chain(&e)));
                break;
            }
        }
    }
    if fetched.body.is_empty() && matches!(fetched.cut, Some(Cut::Time(_))) {
        return Err(Failure::new(
            "fetch.timeout",
            format!(
                "`{}` sent its headers but no body within {} s; try again later, or another source",
                fetched.final_url,
                total.as_secs()
            ),
        ));
    }
    if let (true, Some(Cut::Broken(why))) = (fetched.body.is_empty(), &fetched.cut) {
        return Err(Failure::new(
            "fetch.connect",
            format!(
                "the connection to `{}` broke before the body came: {why}",
                fetched.final_url
            ),
        ));
    }
    Ok(())
}

/// A refusal by the policy, in words that say which hop and what to do.
fn refusal(first: &Url, hop: &Url, redirects: &[String], why: String) -> Failure {
    let message = if redirects.is_empty() {
        format!("refused `{hop}`: {why}")
    } else {
        format!(
            "`{first}` redirects to `{hop}`, which was refused: {why}. If that page is what you want, call fetch with its URL so that it is judged as a call of its own"
        )
    };
    Failure::new("fetch.refused", message)
}

/// An error with its causes, which reqwest keeps apart.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = s.source();
    }
    text
}

/// A `Content-Type`'s type and subtype in lower case, without parameters;
/// empty when there is none.
pub fn essence(content_type: Option<&str>) -> String {
    content_type
        .and_then(|c| c.split(';').next())
        .map(|e| e.trim().to_ascii_lowercase())
        .unwrap_or_default()
}
