//! Which hosts `fetch` may reach: the run's network policy (the hosts it
//! names, or any public host), and the addresses no host reaches unless the
//! policy names it: loopback, private ranges, link-local (the cloud
//! metadata address 169.254.169.254 among them) and the other ranges that
//! lead into the machine or its network rather than out to the web.
//!
//! ag-loop hands its policy to the tool in the environment ([`HOSTS_ENV`],
//! [`GATED_ENV`]); a person running `ag-fetch` from a shell gives hosts
//! with `--allow-host`, and otherwise reaches any public host, as curl
//! would. The gate (lib/gate) reads URLs with the same [`parse_url`], so
//! that the host it judges is the host the tool connects to.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

/// The hosts ag-loop's network policy names, comma-separated (`--allow-host`,
/// `allow_hosts` in config.toml); `*` for any public host (`--allow-net`).
/// Set by ag-loop on every tool call; absent when a person runs ag-fetch.
pub const HOSTS_ENV: &str = "AG_FETCH_HOSTS";

/// `1` when ag-loop's gates judged every call before it runs: a host the
/// policy does not name then got to the tool only because a gate (or the
/// person it asked) allowed it, for this call's own URL.
pub const GATED_ENV: &str = "AG_FETCH_GATED";

/// One entry of the policy: a host name, an address, or every name under
/// a domain (`*.example.com`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pattern {
    /// Any host whose addresses are all public.
    AnyPublic,
    /// This host exactly (a name in lower case, or an address as the URL
    /// parser writes it).
    Exact(String),
    /// Names ending in `.` and this domain.
    Below(String),
}

/// The hosts one call may reach.
#[derive(Debug, Clone)]
pub struct NetPolicy {
    patterns: Vec<Pattern>,
    /// The host of the call's own URL, which the gates allowed.
    gated: Option<String>,
}

/// How a host may be reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// The policy names it: whatever it resolves to.
    Named,
    /// Only when every address it resolves to is public.
    Public,
}

/// Why a host or an address was refused; the text is for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub String);

impl NetPolicy {
    /// The policy of a standalone run: any public host, and `named` too
    /// whatever it resolves to.
    pub fn standalone(named: &[String]) -> Result<NetPolicy, String> {
        let mut patterns = vec![Pattern::AnyPublic];
        for n in named {
            patterns.push(pattern(n)?);
        }
        Ok(NetPolicy {
            patterns,
            gated: None,
        })
    }

    /// The policy of exactly these entries (as ag-loop's gate holds it):
    /// an entry that is not a host is left out, naming nothing.
    pub fn listed(entries: &[String]) -> NetPolicy {
        NetPolicy {
            patterns: entries.iter().filter_map(|e| pattern(e).ok()).collect(),
            gated: None,
        }
    }

    /// Checks policy entries as a person wrote them (`--allow-host`,
    /// `allow_hosts`); the error names the first that is not a host.
    pub fn check_entries(entries: &[String]) -> Result<(), String> {
        entries.iter().try_for_each(|e| pattern(e).map(|_| ()))
    }

    /// The policy ag-loop handed down in the environment, with the hosts
    /// of `--allow-host`; `None` when there is none (not under ag-loop).
    /// `call_host` is the host of the call's URL, allowed when the call
    /// passed the run's gates.
    pub fn from_env(named: &[String], call_host: &str) -> Result<Option<NetPolicy>, String> {
        let Some(list) = std::env::var_os(HOSTS_ENV) else {
            return Ok(None);
        };
        let list = list.to_string_lossy();
        let mut patterns = Vec::new();
        for entry in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            patterns.push(pattern(entry).map_err(|e| format!("{HOSTS_ENV}: {e}"))?);
        }
        for n in named {
            patterns.push(pattern(n)?);
        }
        let gated = std::env::var_os(GATED_ENV).is_some_and(|v| v == "1");
        Ok(Some(NetPolicy {
            patterns,
            gated: gated.then(|| call_host.to_string()),
        }))
    }

    /// How `host` (as the URL parser writes it) may be reached, or why it
    /// may not.
    pub fn reach(&self, host: &str) -> Result<Reach, Refusal> {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        let named = self.patterns.iter().any(|p| match p {
            Pattern::AnyPublic => false,
            Pattern::Exact(h) => *h == host,
            Pattern::Below(d) => {
                host.len() > d.len() && host.ends_with(d.as_str()) && {
                    host.as_bytes()[host.len() - d.len() - 1] == b'.'
                }
            }
        });
        if named {
            return Ok(Reach::Named);
        }
        if self.any_public() || self.gated.as_deref() == Some(&host) {
            return Ok(Reach::Public);
        }
        Err(Refusal(format!(
            "`{host}` is not among the hosts the network policy allows ({}); fetch reaches only those, and a call to another host must be approved through ag-loop's gate",
            self.described()
        )))
    }

    /// Whether any public host may be reached (`--allow-net`, `*`).
    pub fn any_public(&self) -> bool {
        self.patterns.contains(&Pattern::AnyPublic)
    }

    /// The named hosts, for messages (ag-browser's too).
    pub fn described(&self) -> String {
        let names: Vec<String> = self
            .patterns
            .iter()
            .filter_map(|p| match p {
                Pattern::AnyPublic => None,
                Pattern::Exact(h) => Some(format!("`{h}`")),
                Pattern::Below(d) => Some(format!("`*.{d}`")),
            })
            .collect();
        if names.is_empty() {
            "it names none: ag-loop --allow-host HOST, or allow_hosts in config.toml, adds one"
                .into()
        } else {
            names.join(", ")
        }
    }
}

/// A policy entry as written (`docs.rs`, `*.rust-lang.org`, `127.0.0.1`,
/// `[::1]`, `*`), normalised as the URL parser writes hosts (lower case,
/// punycode), so that it compares equal to a URL's host.
fn pattern(entry: &str) -> Result<Pattern, String> {
    let e = entry.trim().trim_end_matches('.');
    if e == "*" {
        return Ok(Pattern::AnyPublic);
    }
    let (below, name) = match e.strip_prefix("*.") {
        Some(rest) => (true, rest),
        None => (false, e),
    };
    // A bare IPv6 address is written in brackets in a URL.
    let bracketed = if name.contains(':') && !name.starts_with('[') {
        format!("[{name}]")
    } else {
        name.to_string()
    };
    let host = Host::parse(&bracketed).map_err(|err| {
        format!("`{entry}` is not a host name or address ({err}); give a name such as docs.rs or *.rust-lang.org, or an address such as 127.0.0.1")
    })?;
    let text = host.to_string();
    match (below, host) {
        (true, Host::Domain(_)) => Ok(Pattern::Below(text)),
        (true, _) => Err(format!(
            "`{entry}`: `*.` goes before a domain name, not an address"
        )),
        (false, _) => Ok(Pattern::Exact(text)),
    }
}

/// A host name as the URL parser writes it (lower case, punycode, no
/// final dot), for names given outside a URL (`--resolve`).
pub fn normal_name(name: &str) -> Result<String, String> {
    match pattern(name)? {
        Pattern::Exact(h) if !h.starts_with('[') && h.parse::<IpAddr>().is_err() => Ok(h),
        _ => Err(format!("`{name}` is not a host name")),
    }
}

/// Reads a URL as fetch does: http or https, a host, no user name or
/// password (credentials are never sent), the fragment dropped; a URL
/// without a scheme is taken as https. The error says what to call instead.
pub fn parse_url(raw: &str) -> Result<Url, String> {
    let raw = raw.trim();
    let with_scheme = if raw.contains("://") {
        raw.to_string()
    } else {
        format!("https://{raw}")
    };
    let mut url = Url::parse(&with_scheme).map_err(|e| {
        format!("`{raw}` is not a URL ({e}); give a whole one, such as https://host/path")
    })?;
    match url.scheme() {
        "http" | "https" => {}
        other => {
            return Err(format!(
                "fetch reads http and https URLs, not `{other}:`; for a local file use the read tool"
            ));
        }
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!(
            "`{raw}` has no host; give a whole URL, such as https://host/path"
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        let _ = url.set_username("");
        let _ = url.set_password(None);
        return Err(format!(
            "the URL holds a user name or password, and fetch sends no credentials; call it with the URL without them: {{\"url\":\"{url}\"}}"
        ));
    }
    url.set_fragment(None);
    Ok(url)
}

/// The host of a URL as [`NetPolicy::reach`] compares it: a name in lower
/// case without a final dot, an address as the URL parser writes it.
pub fn host_of(url: &Url) -> String {
    url.host_str()
        .unwrap_or_default()
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

/// The address written in a URL's host, if it is one (`127.0.0.1`, `[::1]`).
pub fn literal_address(url: &Url) -> Option<IpAddr> {
    match url.host()? {
        Host::Ipv4(a) => Some(IpAddr::V4(a)),
        Host::Ipv6(a) => Some(IpAddr::V6(a)),
        Host::Domain(_) => None,
    }
}

/// What kind of address `ip` is when no host may reach it unless the
/// policy names that host: `Some("a loopback address")`; `None` for a
/// public address.
pub fn inward(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(a) => inward_v4(a),
        IpAddr::V6(a) => inward_v6(a),
    }
}

fn inward_v4(a: Ipv4Addr) -> Option<&'static str> {
    let [b0, b1, b2, _] = a.octets();
    let kind = match (b0, b1, b2) {
        (0, ..) => "an address of this host (0.0.0.0/8)",
        (10, ..) => "a private address (10.0.0.0/8)",
        (100, 64..=127, _) => "a carrier-grade NAT address (100.64.0.0/10)",
        (127, ..) => "a loopback address",
        (169, 254, _) => {
            "a link-local address (169.254.0.0/16, where cloud metadata services answer)"
        }
        (172, 16..=31, _) => "a private address (172.16.0.0/12)",
        (192, 0, 0) => "an IETF protocol address (192.0.0.0/24)",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "a documentation address",
        (192, 168, _) => "a private address (192.168.0.0/16)",
        (198, 18..=19, _) => "a benchmarking address (198.18.0.0/15)",
        (224..=239, ..) => "a multicast address",
        (240..=255, ..) => "a reserved address (240.0.0.0/4)",
        _ => return None,
    };
    Some(kind)
}

fn inward_v6(a: Ipv6Addr) -> Option<&'static str> {
    if a.is_unspecified() {
        return Some("the unspecified address (::)");
    }
    if a.is_loopback() {
        return Some("a loopback address");
    }
    let s = a.segments();
    // Addresses that carry an IPv4 address are what that address is:
    // mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::/96), 6to4 (2002::/16) and
    // the old compatible form (::a.b.c.d).
    let embedded = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    if let Some(v4) = a.to_ipv4_mapped() {
        return inward_v4(v4);
    }
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        return inward_v4(embedded(s[6], s[7]));
    }
    if s[0] == 0x2002 {
        return inward_v4(embedded(s[1], s[2]));
    }
    if s[..6] == [0, 0, 0, 0, 0, 0] {
        return inward_v4(embedded(s[6], s[7])).or(Some("a reserved address (::/96)"));
    }
    let kind = match s[0] {
        0xfc00..=0xfdff => "a unique local address (fc00::/7)",
        0xfe80..=0xfebf => "a link-local address (fe80::/10)",
        0xfec0..=0xfeff => "a site-local address (fec0::/10)",
        0xff00..=0xffff => "a multicast address",
        0x2001 if s[1] == 0x0db8 => "a documentation address (2001:db8::/32)",
        _ => return None,
    };
    Some(kind)
}

/// Refuses an address that `host`, reached as `reach`, may not lead to.
pub fn check_address(host: &str, reach: Reach, ip: IpAddr) -> Result<(), Refusal> {
    if reach == Reach::Named {
        return Ok(());
    }
    match inward(ip) {
        None => Ok(()),
        Some(kind) => Err(Refusal(
            if ip.to_string() == host.trim_matches(['[', ']']) {
                format!(
                    "`{host}` is {kind}; fetch reaches such addresses only when the network policy names them (ag-loop --allow-host {host}, or ag-fetch --allow-host {host})"
                )
            } else {
                format!(
                    "`{host}` resolves to {ip}, {kind}; fetch reaches such addresses only for hosts the network policy names (ag-loop --allow-host {host}, or ag-fetch --allow-host {host})"
                )
            },
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn inward_ranges_are_named_and_public_ones_pass() {
        for a in [
            "127.0.0.1",
            "127.8.9.10",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fe80::1",
            "fd00:ec2::254",
            "::ffff:169.254.169.254",
            "::ffff:127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "2002:a9fe:a9fe::1",
            "::7f00:1",
            "ff02::1",
        ] {
            assert!(inward(ip(a)).is_some(), "{a} should be inward");
        }
        for a in [
            "1.1.1.1",
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "192.169.0.1",
            "2606:4700:4700::1111",
            "::ffff:1.1.1.1",
        ] {
            assert_eq!(inward(ip(a)), None, "{a} should be public");
        }
        assert_eq!(
            inward(ip("::ffff:169.254.169.254")),
            inward(ip("169.254.169.254"))
        );
    }

    #[test]
    fn a_named_host_reaches_anything_an_unnamed_one_only_public_addresses() {
        let p = NetPolicy::standalone(&["localhost".into(), "*.corp.example".into()]).unwrap();
        assert_eq!(p.reach("localhost"), Ok(Reach::Named));
        assert_eq!(p.reach("LocalHost."), Ok(Reach::Named));
        assert_eq!(p.reach("wiki.corp.example"), Ok(Reach::Named));
        // `*.` is below the domain, not the domain itself or a look-alike.
        assert_eq!(p.reach("corp.example"), Ok(Reach::Public));
        assert_eq!(p.reach("evilcorp.example"), Ok(Reach::Public));
        assert!(check_address("localhost", Reach::Named, ip("127.0.0.1")).is_ok());
        let r = check_address("metadata", Reach::Public, ip("169.254.169.254")).unwrap_err();
        assert!(r.0.contains("resolves to 169.254.169.254"), "{}", r.0);
        assert!(r.0.contains("--allow-host metadata"), "{}", r.0);
        assert!(check_address("example.com", Reach::Public, ip("93.184.215.14")).is_ok());
    }

    #[test]
    fn addresses_in_the_policy_compare_as_urls_write_them() {
        let p = NetPolicy::standalone(&["::1".into(), "127.0.0.1".into()]).unwrap();
        let url = parse_url("http://[::1]:8080/x").unwrap();
        assert_eq!(p.reach(&host_of(&url)), Ok(Reach::Named));
        let url = parse_url("http://127.0.0.1:9/").unwrap();
        assert_eq!(p.reach(&host_of(&url)), Ok(Reach::Named));
        assert!(NetPolicy::standalone(&["*.1.2.3.4".into()]).is_err());
        assert_eq!(
            normal_name("B\u{fc}cher.Example.").unwrap(),
            "xn--bcher-kva.example"
        );
        assert!(normal_name("10.0.0.1").is_err() && normal_name("*").is_err());
        assert!(NetPolicy::standalone(&["exa mple".into()]).is_err());
    }

    #[test]
    fn urls_are_http_without_credentials() {
        assert_eq!(
            parse_url("docs.rs/serde#x").unwrap().as_str(),
            "https://docs.rs/serde"
        );
        assert!(
            parse_url("file:///etc/passwd")
                .unwrap_err()
                .contains("read tool")
        );
        let e = parse_url("https://me:pw@example.com/a").unwrap_err();
        assert!(e.contains(r#"{"url":"https://example.com/a"}"#), "{e}");
        assert!(!e.contains("pw@"), "{e}");
        assert!(parse_url("http://").is_err());
    }
}
