//! The gate's side of `fetch`'s network policy: a call is judged by the
//! host of its URL, read as the tool reads it (`tools::fetch::policy`).
//! A host the policy names is allowed; one it does not name is a
//! person's call, asked, and refused when nobody can be asked, as leaving
//! the sandbox is. Where the host's addresses lead is the tool's to check:
//! the gate cannot resolve a name the way the connection will.

use serde_json::{Map, Value};

use super::config::Approval;
use crate::protocol::GateDecision;
use crate::tools::fetch::policy::{NetPolicy, host_of, parse_url};

/// The decision for a `fetch` call under `hosts` (the policy's entries,
/// `*` for any public host), or `None` to let the policy's other steps
/// decide: a host it names (asked anyway under `always`), or a URL the
/// tool will refuse itself.
pub fn judge(args: &Map<String, Value>, hosts: &[String], mode: Approval) -> Option<GateDecision> {
    let url = parse_url(args.get("url")?.as_str()?).ok()?;
    let host = host_of(&url);
    // Entries were checked when the policy was made; one that is not a
    // host names nothing.
    let policy = NetPolicy::listed(hosts);
    if policy.reach(&host).is_ok() {
        return (mode != Approval::Always)
            .then(|| GateDecision::allow(format!("`{host}` is a host the network policy allows")));
    }
    Some(match mode {
        Approval::Never => GateDecision::Deny {
            reason: format!(
                "fetch from `{host}`: the network policy does not name that host, and nobody is there to approve it (approval mode never); work with what you have, or ask the user to allow `{host}` (ag-loop --allow-host {host})"
            ),
        },
        _ => GateDecision::Ask {
            reason: format!("fetch from `{host}`, a host the network policy does not name"),
        },
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn kind(d: Option<GateDecision>) -> &'static str {
        match d {
            None => "next",
            Some(GateDecision::Allow { .. }) => "allow",
            Some(GateDecision::Ask { .. }) => "ask",
            Some(GateDecision::Deny { .. }) => "deny",
        }
    }

    #[test]
    fn named_hosts_pass_others_are_asked_or_refused() {
        let hosts = vec!["docs.rs".to_string(), "*.rust-lang.org".to_string()];
        let call = |url: &str| json!({ "url": url }).as_object().unwrap().clone();
        let d = Approval::Dangerous;
        assert_eq!(
            kind(judge(&call("https://docs.rs/serde"), &hosts, d)),
            "allow"
        );
        assert_eq!(
            kind(judge(&call("doc.rust-lang.org/std"), &hosts, d)),
            "allow"
        );
        assert_eq!(kind(judge(&call("https://example.com/"), &hosts, d)), "ask");
        assert_eq!(
            kind(judge(&call("http://169.254.169.254/"), &hosts, d)),
            "ask"
        );
        let refused = judge(&call("https://example.com/"), &hosts, Approval::Never);
        let Some(GateDecision::Deny { reason }) = refused else {
            panic!("{refused:?}")
        };
        assert!(
            reason.contains("`example.com`") && reason.contains("nobody"),
            "{reason}"
        );
        // Under `always` a named host is asked like any call.
        assert_eq!(
            kind(judge(&call("https://docs.rs/"), &hosts, Approval::Always)),
            "next"
        );
        // `*` (--allow-net) names every host; the tool still refuses inward addresses.
        let any = vec!["*".to_string()];
        assert_eq!(
            kind(judge(&call("https://example.com/"), &any, Approval::Never)),
            "allow"
        );
        // A URL the tool refuses itself is left to it.
        assert_eq!(kind(judge(&call("ftp://x/"), &hosts, d)), "next");
    }
}
