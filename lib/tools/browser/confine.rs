//! What the browser may load. Every request Chromium makes, of any tab,
//! frame or worker and every hop of a redirect, is paused by the browser's
//! `Fetch` domain and judged here before it goes on: loopback always (the
//! app the agent runs), other hosts as the run's network policy allows
//! (ag-fetch's, [`crate::tools::fetch::policy`]), `file:` only inside the
//! workspace, and the page-made schemes (`data:`, `blob:`, `about:`).
//!
//! A host the policy allows only because it is public (`--allow-net`) is
//! judged by its name: Chromium resolves it itself, so a public name that
//! resolves to an inward address is not caught here, as ag-fetch catches
//! it; the sandbox's network rule is the bound then.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use url::{Host, Url};

use crate::tools::fetch::policy::{self, NetPolicy};

/// The rules of one call, sent with it to the warm server (the policy is
/// the run's, and the newest call's rules are the ones in force).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Rules {
    /// The hosts beyond loopback: the run's policy entries
    /// ([`policy::HOSTS_ENV`]) and `--allow-host`; `*` is any public host.
    pub hosts: Vec<String>,
    /// `file:` URLs must lie inside it (symlinks resolved).
    pub workspace: PathBuf,
}

impl Rules {
    /// Why `raw` may not be loaded, or `None` when it may.
    pub fn refusal(&self, raw: &str) -> Option<String> {
        let Ok(url) = Url::parse(raw) else {
            return Some(format!("`{raw}` is not a URL"));
        };
        match url.scheme() {
            "http" | "https" | "ws" | "wss" => self.host_refusal(&url),
            "file" => self.file_refusal(&url),
            "data" | "blob" | "about" | "javascript" => None,
            other => Some(format!(
                "the browser loads http, https and file URLs here, not `{other}:`"
            )),
        }
    }

    fn host_refusal(&self, url: &Url) -> Option<String> {
        if is_loopback(url) {
            return None;
        }
        let host = policy::host_of(url);
        let net = NetPolicy::listed(&self.hosts);
        let named_only = || {
            format!(
                "`{host}` is not among the hosts the network policy allows: the browser reaches loopback (localhost, 127.0.0.1, ::1) and the hosts the policy names ({}); ag-loop --allow-host {host} allows this one",
                net.described()
            )
        };
        match net.reach(&host) {
            Ok(policy::Reach::Named) => None,
            Ok(policy::Reach::Public) => {
                policy::literal_address(url)
                    .and_then(policy::inward)
                    .map(|kind| format!(
                        "`{host}` is {kind}; the browser reaches such addresses only when the network policy names them (ag-loop --allow-host {host})"
                    ))
            }
            Err(_) => Some(named_only()),
        }
    }

    fn file_refusal(&self, url: &Url) -> Option<String> {
        let Ok(path) = url.to_file_path() else {
            return Some(format!("`{url}` is not a local file"));
        };
        let real = real(&path);
        let root = real_dir(&self.workspace);
        if real.starts_with(&root) {
            None
        } else {
            Some(format!(
                "`{}` is outside the workspace `{}`; the browser opens files only inside it",
                path.display(),
                root.display()
            ))
        }
    }
}

/// True for `localhost`, names under `.localhost`, and loopback addresses.
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Ipv4(a)) => IpAddr::V4(a).is_loopback(),
        Some(Host::Ipv6(a)) => IpAddr::V6(a).is_loopback(),
        Some(Host::Domain(d)) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
        None => false,
    }
}

/// The path with symlinks resolved as far as it exists: a file that does
/// not exist yet is judged by the directory it would be in.
fn real(path: &Path) -> PathBuf {
    if let Ok(r) = path.canonicalize() {
        return r;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => real(parent).join(name),
        _ => path.to_path_buf(),
    }
}

fn real_dir(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// A URL as the model may give it to navigate: a path or `file:` URL of a
/// file is made a `file:` URL (relative to `cwd`), a bare `host:port` or
/// `localhost/...` gets `http://`, anything else with a scheme is kept.
pub fn url_of(raw: &str, cwd: &Path) -> Result<String, String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Err("the URL is empty".into());
    }
    if raw.starts_with('/') || raw.starts_with("./") || raw.starts_with("../") {
        let path = crate::tool_protocol::normalize(&cwd.join(raw));
        return Url::from_file_path(&path)
            .map(|u| u.to_string())
            .map_err(|_| format!("`{raw}` is not a file path"));
    }
    if raw.contains("://") || raw.starts_with("about:") || raw.starts_with("data:") {
        return Url::parse(raw)
            .map(|u| u.to_string())
            .map_err(|e| format!("`{raw}` is not a URL ({e})"));
    }
    // `localhost:3000/x`, `127.0.0.1:8080`: a local server, plain http.
    let guess = format!("http://{raw}");
    Url::parse(&guess).map(|u| u.to_string()).map_err(|e| {
        format!("`{raw}` is not a URL ({e}); give a whole one, such as http://localhost:3000/")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(hosts: &[&str], workspace: &Path) -> Rules {
        Rules {
            hosts: hosts.iter().map(|h| h.to_string()).collect(),
            workspace: workspace.to_path_buf(),
        }
    }

    #[test]
    fn loopback_always_other_hosts_as_the_policy_says() {
        let dir = tempfile::tempdir().unwrap();
        let r = rules(&[], dir.path());
        for ok in [
            "http://127.0.0.1:8080/",
            "http://localhost/x",
            "http://[::1]:3000/",
            "http://app.localhost/",
            "data:text/html,hi",
            "about:blank",
        ] {
            assert_eq!(r.refusal(ok), None, "{ok}");
        }
        let e = r.refusal("https://example.com/").unwrap();
        assert!(e.contains("`example.com` is not among the hosts"), "{e}");
        assert!(e.contains("--allow-host example.com"), "{e}");
        assert!(r.refusal("chrome://settings").is_some());
        let named = rules(&["docs.rs", "*.example.org"], dir.path());
        assert_eq!(named.refusal("https://docs.rs/x"), None);
        assert_eq!(named.refusal("https://www.example.org/"), None);
        assert!(named.refusal("https://example.com/").is_some());
        let any = rules(&["*"], dir.path());
        assert_eq!(any.refusal("https://example.com/"), None);
        let e = any.refusal("http://10.0.0.1/").unwrap();
        assert!(e.contains("private"), "{e}");
    }

    #[test]
    fn files_only_inside_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.html"), "x").unwrap();
        let r = rules(&[], dir.path());
        let inside = Url::from_file_path(dir.path().join("a.html")).unwrap();
        assert_eq!(r.refusal(inside.as_str()), None);
        let e = r.refusal("file:///etc/passwd").unwrap();
        assert!(e.contains("outside the workspace"), "{e}");
        let up = format!("file://{}/../x.html", dir.path().display());
        assert!(r.refusal(&up).is_some());
    }

    #[test]
    fn urls_as_a_model_writes_them() {
        let cwd = Path::new("/w");
        assert_eq!(
            url_of("localhost:3000", cwd).unwrap(),
            "http://localhost:3000/"
        );
        assert_eq!(url_of("./a.html", cwd).unwrap(), "file:///w/a.html");
        assert_eq!(url_of("https://x.org/a", cwd).unwrap(), "https://x.org/a");
        assert!(url_of("  ", cwd).is_err());
    }
}
