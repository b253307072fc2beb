//! Telling a denied operation apart from a failing command. The kernel
//! does not say that Landlock or seccomp refused something: the program
//! sees `EACCES` and prints "Permission denied" its own way. So the output
//! is read line by line; on each line that reports a permission error, the
//! paths it names (quoted, or as a field between colons) are checked
//! against the policy: a path outside the writable set was refused a
//! write, a path on the deny list a read; `/dev/tcp/...` and failed
//! connects are the network, when it is off. A permission error on a path
//! the policy allows is the command's own failure and not reported; one
//! that names nothing the policy explains is reported as `unknown`, so
//! that the caller can say plainly that the sandbox may be the cause.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::rules::canonical_beyond;
use super::{Mode, Policy};

/// What was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// A write (create, change, remove) outside the writable set.
    Write,
    /// A read of a path on the deny list.
    Read,
    /// A network connection or socket while the network is off.
    Network,
    /// A permission error the policy does not explain by itself.
    Unknown,
}

/// One operation the sandbox refused, as far as the output tells.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Denial {
    /// What was refused.
    pub op: Op,
    /// The path concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The address concerned (network).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addr: Option<String>,
    /// The line of output it was read from (for `unknown`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<String>,
}

impl Denial {
    /// A short phrase for messages: "write to `/etc/hosts`".
    pub fn describe(&self) -> String {
        let what = |p: &Option<String>| p.as_deref().map(|p| format!(" `{p}`")).unwrap_or_default();
        match self.op {
            Op::Write => format!("write to{}", what(&self.path)),
            Op::Read => format!("read of{} (on the deny list)", what(&self.path)),
            Op::Network => match &self.addr {
                Some(a) => format!("network connection to `{a}` (the network is off)"),
                None => "network access (the network is off)".to_string(),
            },
            Op::Unknown => format!(
                "a permission error that may come from the sandbox: {}",
                self.line.as_deref().unwrap_or("")
            ),
        }
    }
}

/// The denials the output of a command run under `policy` in the
/// workspace shows, in order, each once.
pub fn explain(policy: &Policy, output: &str) -> Vec<Denial> {
    explain_in(policy, &policy.workspace, output)
}

/// The same, for a command that ran in `cwd` (relative paths in its
/// messages are taken from there).
pub fn explain_in(policy: &Policy, cwd: &Path, output: &str) -> Vec<Denial> {
    let mut out: Vec<Denial> = Vec::new();
    // Resolved on the first permission error: most output has none.
    let mut resolved: Option<(Vec<PathBuf>, Vec<PathBuf>)> = None;
    for line in output.lines() {
        let lower = line.to_ascii_lowercase();
        if !(lower.contains("permission denied")
            || lower.contains("operation not permitted")
            || lower.contains("errno 13")
            || lower.contains("eacces"))
        {
            continue;
        }
        let (deny, writable) = resolved.get_or_insert_with(|| {
            let canonical = |paths: &[PathBuf]| paths.iter().map(|p| canonical_beyond(p)).collect();
            (canonical(&policy.deny_read), canonical(&policy.writable()))
        });
        let (deny, writable) = (&*deny, &*writable);
        let mut found = false;
        for cand in candidates(line) {
            if let Some(d) = classify(policy, cwd, deny, writable, &cand, &lower) {
                found = true;
                if !out.contains(&d) {
                    out.push(d);
                }
            } else if looks_like_path(&cand) {
                // A path the policy allows: the command's own failure.
                found = true;
            }
        }
        if found {
            continue;
        }
        let d = if !policy.net
            && ["connect", "socket", "network", "bind"]
                .iter()
                .any(|w| lower.contains(w))
        {
            Denial {
                op: Op::Network,
                path: None,
                addr: None,
                line: None,
            }
        } else {
            Denial {
                op: Op::Unknown,
                path: None,
                addr: None,
                line: Some(line.trim().chars().take(300).collect()),
            }
        };
        if !out.contains(&d) {
            out.push(d);
        }
    }
    // A connect named with its address says all the bare one says.
    if out.iter().any(|d| d.op == Op::Network && d.addr.is_some()) {
        out.retain(|d| d.op != Op::Network || d.addr.is_some());
    }
    out
}

/// The strings of a line that may be paths: quoted ones, then the fields
/// between `: ` and the words of those fields that contain a `/`.
fn candidates(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (open, close) in [('\'', '\''), ('‘', '’'), ('"', '"'), ('`', '`'), ('“', '”')] {
        let mut rest = line;
        while let Some(i) = rest.find(open) {
            let after = &rest[i + open.len_utf8()..];
            let Some(j) = after.find(close) else { break };
            let q = &after[..j];
            if !q.is_empty() && !out.iter().any(|o| o == q) {
                out.push(q.to_string());
            }
            rest = &after[j + close.len_utf8()..];
        }
    }
    for field in line.split(": ") {
        let field = field.trim();
        if field.starts_with('/') || field.starts_with("./") || field.starts_with("~/") {
            if !out.iter().any(|o| o == field) {
                out.push(field.to_string());
            }
            continue;
        }
        for word in field.split_whitespace() {
            let word = word.trim_matches(|c: char| "'\"`,;()[]‘’“”".contains(c));
            if word.contains('/') && !out.iter().any(|o| o == word) {
                out.push(word.to_string());
            }
        }
    }
    out.retain(|c| looks_like_path(c));
    out
}

fn looks_like_path(s: &str) -> bool {
    !s.is_empty()
        && !s.contains('\n')
        && (s.starts_with('/')
            || s.starts_with("./")
            || s.starts_with("~/")
            || s.starts_with("../")
            || s.contains('/'))
        && !s.contains("://")
}

fn classify(
    policy: &Policy,
    cwd: &Path,
    deny: &[PathBuf],
    writable: &[PathBuf],
    cand: &str,
    lower_line: &str,
) -> Option<Denial> {
    if let Some(rest) = cand
        .strip_prefix("/dev/tcp/")
        .or_else(|| cand.strip_prefix("/dev/udp/"))
    {
        if policy.net {
            return None;
        }
        let addr = rest.replacen('/', ":", 1);
        return Some(Denial {
            op: Op::Network,
            path: None,
            addr: Some(addr),
            line: None,
        });
    }
    let path = if let Some(rest) = cand.strip_prefix("~/") {
        PathBuf::from(std::env::var_os("HOME")?).join(rest)
    } else {
        cwd.join(cand)
    };
    let path = canonical_beyond(&normalize(&path));
    let denied = deny.iter().any(|d| path.starts_with(d));
    let in_writable = policy.mode == Mode::WorkspaceWrite
        && writable.iter().any(|w| path.starts_with(w))
        || is_device(&path);
    let writing = [
        "create",
        "touch",
        "write",
        "remov",
        "mkdir",
        "move",
        "renam",
        "unlink",
        "truncat",
        "overwrit",
        "chmod",
        "link",
        "delete",
        "save",
        "copy",
        "cannot open '",
    ]
    .iter()
    .any(|w| lower_line.contains(w));
    // Reading is allowed outside the deny list, so a refused read there is
    // the command's own failure (a file mode), not the sandbox.
    let reading = [
        "cannot open directory",
        "cannot access",
        "cannot read",
        "opendir",
        "cannot stat",
    ]
    .iter()
    .any(|w| lower_line.contains(w));
    let op = if denied {
        if writing { Op::Write } else { Op::Read }
    } else if !in_writable && !reading {
        Op::Write
    } else {
        return None;
    };
    Some(Denial {
        op,
        path: Some(cand.to_string()),
        addr: None,
        line: None,
    })
}

fn is_device(p: &Path) -> bool {
    p.starts_with("/dev/pts")
        || [
            "/dev/null",
            "/dev/zero",
            "/dev/full",
            "/dev/tty",
            "/dev/random",
            "/dev/urandom",
        ]
        .iter()
        .any(|d| p == Path::new(d))
}

/// `a/./b/../c` as `a/c`, without touching the file system.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(ws: &Path) -> Policy {
        Policy {
            mode: Mode::WorkspaceWrite,
            workspace: ws.to_path_buf(),
            write: Vec::new(),
            deny_read: vec![ws.join("home/.ssh")],
            net: false,
            tmpdir: None,
        }
    }

    #[test]
    fn reads_the_usual_messages() {
        let t = tempfile::tempdir().unwrap();
        let ws = t.path().canonicalize().unwrap();
        let p = policy(&ws);
        let key = ws.join("home/.ssh/id_ed25519");
        let out = format!(
            "sh: 1: cannot create /etc/hosts: Permission denied\n\
             touch: cannot touch '/usr/x': Permission denied\n\
             cat: {}: Permission denied\n\
             mkdir: cannot create directory ‘{}/ok’: Permission denied\n\
             bash: /dev/tcp/127.0.0.1/8080: Permission denied\n\
             ls: cannot open directory '/root': Permission denied\n\
             all is well\n",
            key.display(),
            ws.display()
        );
        let d = explain(&p, &out);
        let ops: Vec<(Op, Option<&str>, Option<&str>)> = d
            .iter()
            .map(|d| (d.op, d.path.as_deref(), d.addr.as_deref()))
            .collect();
        let key = key.display().to_string();
        assert_eq!(
            ops,
            vec![
                (Op::Write, Some("/etc/hosts"), None),
                (Op::Write, Some("/usr/x"), None),
                (Op::Read, Some(key.as_str()), None),
                (Op::Network, None, Some("127.0.0.1:8080")),
            ]
        );
    }

    #[test]
    fn an_unattributed_denial_says_so_and_a_net_one_is_network() {
        let t = tempfile::tempdir().unwrap();
        let p = policy(t.path());
        let d = explain(
            &p,
            "curl: (7) Couldn't connect to server: Permission denied\n",
        );
        assert_eq!(d[0].op, Op::Network);
        let d = explain(&p, "error: Permission denied (os error 13)\n");
        assert_eq!(d[0].op, Op::Unknown);
        assert!(d[0].describe().contains("may come from the sandbox"));
        assert!(explain(&p, "no error here\n").is_empty());
    }
}
