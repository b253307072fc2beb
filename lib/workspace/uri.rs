//! `--workspace URI`: parsing the four forms (`ssh://[user@]host[:port]/path`,
//! `docker://container/path`, `podman://container/path`,
//! `kubectl://[namespace/]pod[:container]/path`) and building, for each, the
//! local command that runs one `sh -c SCRIPT` in the workspace. Nothing
//! here starts a process, so every transport's argument handling is tested
//! without a daemon or a cluster.

use std::path::{Path, PathBuf};

/// Where the tools run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A host reached with `ssh`.
    Ssh {
        /// `user@`, if given.
        user: Option<String>,
        /// The host name or address.
        host: String,
        /// `:port`, if given.
        port: Option<u16>,
    },
    /// A container reached with `docker exec -i`.
    Docker {
        /// Its name or id.
        container: String,
    },
    /// A container reached with `podman exec -i`.
    Podman {
        /// Its name or id.
        container: String,
    },
    /// A pod reached with `kubectl exec -i`.
    Kubectl {
        /// `-n NAMESPACE`, if given.
        namespace: Option<String>,
        /// The pod.
        pod: String,
        /// `-c CONTAINER`, if given.
        container: Option<String>,
    },
}

/// A parsed `--workspace` URI: the target and the directory the tools run in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uri {
    /// How the workspace is reached.
    pub target: Target,
    /// The working directory there (absolute).
    pub path: PathBuf,
}

/// Why a URI was refused: said in full, since it ends ag-loop with status 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--workspace `{uri}`: {reason}")]
pub struct UriError {
    /// The URI as given.
    pub uri: String,
    /// What is wrong with it, and the forms that are accepted.
    pub reason: String,
}

/// The forms accepted, for error messages.
pub const FORMS: &str = "ssh://[user@]host[:port]/path, docker://container/path, podman://container/path or kubectl://[namespace/]pod[:container]/path";

impl Uri {
    /// Parses a URI. A kubectl URI with three or more segments names the
    /// namespace first (`kubectl://ns/pod/src`); leave it empty
    /// (`kubectl:///pod/src/app`) to keep the context's namespace with a
    /// deeper path.
    pub fn parse(text: &str) -> Result<Uri, UriError> {
        let fail = |reason: String| UriError {
            uri: text.to_string(),
            reason,
        };
        let Some((scheme, rest)) = text.split_once("://") else {
            return Err(fail(format!("not a workspace URI; use {FORMS}")));
        };
        if rest.chars().any(|c| c.is_control()) {
            return Err(fail("control characters are not allowed".into()));
        }
        let (target, path) = match scheme {
            "ssh" => ssh(rest).map_err(fail)?,
            "docker" | "podman" => {
                let (container, path) = split_first(rest);
                let container = name(container, "container").map_err(fail)?;
                let target = if scheme == "docker" {
                    Target::Docker { container }
                } else {
                    Target::Podman { container }
                };
                (target, path)
            }
            "kubectl" => kubectl(rest).map_err(fail)?,
            other => {
                return Err(fail(format!("unknown transport `{other}`; use {FORMS}")));
            }
        };
        let Some(path) = path else {
            return Err(fail(
                "no directory: end the URI with the absolute path to work in (`.../home/me/project`)"
                    .into(),
            ));
        };
        Ok(Uri {
            target,
            path: PathBuf::from(path),
        })
    }

    /// A short name for messages: `ssh host`, `docker container`, ...
    pub fn describe(&self) -> String {
        match &self.target {
            Target::Ssh { host, .. } => format!("ssh host `{host}`"),
            Target::Docker { container } => format!("docker container `{container}`"),
            Target::Podman { container } => format!("podman container `{container}`"),
            Target::Kubectl { pod, .. } => format!("kubectl pod `{pod}`"),
        }
    }

    /// The local command (program, arguments) that runs `sh -c SCRIPT` in
    /// the workspace. `ssh_options` come first on an ssh command line
    /// (`$AG_SSH_OPTIONS`), `control` is the ControlMaster socket; the
    /// session's master connection is started with `master`.
    pub fn command(&self, script: &str, ssh: &SshSetup) -> (String, Vec<String>) {
        match &self.target {
            Target::Ssh { .. } => {
                let mut args = ssh.args(self, false);
                // ssh joins its arguments with spaces and hands them to the
                // remote login shell: the script travels quoted.
                args.push(format!("sh -c {}", quote(script)));
                (ssh.program.clone(), args)
            }
            Target::Docker { container } | Target::Podman { container } => {
                let program = if matches!(self.target, Target::Docker { .. }) {
                    "docker"
                } else {
                    "podman"
                };
                let args = ["exec", "-i", container.as_str(), "sh", "-c", script];
                (
                    program.to_string(),
                    args.iter().map(|s| s.to_string()).collect(),
                )
            }
            Target::Kubectl {
                namespace,
                pod,
                container,
            } => {
                let mut args = vec!["exec".to_string(), "-i".to_string()];
                if let Some(ns) = namespace {
                    args.extend(["-n".to_string(), ns.clone()]);
                }
                args.push(pod.clone());
                if let Some(c) = container {
                    args.extend(["-c".to_string(), c.clone()]);
                }
                args.extend(["--", "sh", "-c", script].map(String::from));
                ("kubectl".to_string(), args)
            }
        }
    }
}

/// How ssh is run: the program, the user's options and the session's
/// ControlMaster socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshSetup {
    /// `ssh`.
    pub program: String,
    /// `$AG_SSH_OPTIONS`, split at white space.
    pub options: Vec<String>,
    /// The ControlMaster socket, in a private directory.
    pub control: PathBuf,
}

impl SshSetup {
    /// ssh with the user's options (`$AG_SSH_OPTIONS`, words split at white
    /// space) and the socket `control`.
    pub fn new(options: Option<&str>, control: &Path) -> SshSetup {
        SshSetup {
            program: "ssh".into(),
            options: options
                .unwrap_or("")
                .split_whitespace()
                .map(String::from)
                .collect(),
            control: control.to_path_buf(),
        }
    }

    /// The arguments up to the remote command: the user's options, no
    /// password prompt (nobody could answer it), the shared connection,
    /// the port, the destination. `master` starts the connection itself.
    pub fn args(&self, uri: &Uri, master: bool) -> Vec<String> {
        let Target::Ssh { user, host, port } = &uri.target else {
            return Vec::new();
        };
        let mut args = self.options.clone();
        args.extend(
            [
                "-o",
                "BatchMode=yes",
                "-o",
                if master {
                    "ControlMaster=yes"
                } else {
                    "ControlMaster=no"
                },
                "-o",
                "ControlPersist=no",
                "-S",
            ]
            .map(String::from),
        );
        args.push(self.control.display().to_string());
        if let Some(p) = port {
            args.extend(["-p".to_string(), p.to_string()]);
        }
        if master {
            // No command, no stdin: it only holds the connection.
            args.extend(["-N".to_string(), "-n".to_string()]);
        }
        args.push(match user {
            Some(u) => format!("{u}@{host}"),
            None => host.clone(),
        });
        if !master {
            args.push("--".into());
        }
        args
    }
}

/// `[user@]host[:port]/path`.
fn ssh(rest: &str) -> Result<(Target, Option<String>), String> {
    let (authority, path) = split_first(rest);
    let (user, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(name(u, "user")?), h),
        None => (None, authority),
    };
    let (host, port) = if let Some(inner) = hostport.strip_prefix('[') {
        // An IPv6 address: `[::1]:2222`.
        let (addr, after) = inner
            .split_once(']')
            .ok_or_else(|| "an IPv6 address needs its closing `]`".to_string())?;
        (addr.to_string(), after.strip_prefix(':'))
    } else {
        match hostport.split_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (hostport.to_string(), None),
        }
    };
    let host = name(&host, "host")?;
    let port = match port {
        None => None,
        Some(p) => Some(
            p.parse::<u16>()
                .ok()
                .filter(|p| *p != 0)
                .ok_or_else(|| format!("port `{p}` is not a number from 1 to 65535"))?,
        ),
    };
    Ok((Target::Ssh { user, host, port }, path))
}

/// `[namespace/]pod[:container]/path`.
fn kubectl(rest: &str) -> Result<(Target, Option<String>), String> {
    let segments = rest.matches('/').count();
    let (namespace, rest) = if segments >= 2 {
        let (ns, after) = rest.split_once('/').unwrap_or((rest, ""));
        let ns = if ns.is_empty() {
            None
        } else {
            Some(name(ns, "namespace")?)
        };
        (ns, after)
    } else {
        (None, rest)
    };
    let (podc, path) = split_first(rest);
    let (pod, container) = match podc.split_once(':') {
        Some((p, c)) => (p, Some(name(c, "container")?)),
        None => (podc, None),
    };
    let pod = name(pod, "pod")?;
    Ok((
        Target::Kubectl {
            namespace,
            pod,
            container,
        },
        path,
    ))
}

/// The part before the first `/`, and the rest as an absolute path (`None`
/// when there is no `/`).
fn split_first(rest: &str) -> (&str, Option<String>) {
    match rest.find('/') {
        Some(i) => (&rest[..i], Some(rest[i..].to_string())),
        None => (rest, None),
    }
}

/// A host, user, container, pod or namespace name: not empty, and nothing
/// that the transport's own command line would read as an option or that a
/// shell would treat specially.
fn name(text: &str, what: &str) -> Result<String, String> {
    if text.is_empty() {
        return Err(format!("the {what} is empty"));
    }
    if text.starts_with('-') {
        return Err(format!("the {what} `{text}` starts with `-`"));
    }
    let ok = |c: char| c.is_ascii_alphanumeric() || "._-:%".contains(c);
    if let Some(bad) = text.chars().find(|c| !ok(*c)) {
        return Err(format!("the {what} `{text}` holds `{bad}`"));
    }
    Ok(text.to_string())
}

/// `text` as one word for a POSIX shell.
pub fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Uri {
        Uri::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn ssh_setup() -> SshSetup {
        SshSetup::new(Some(" -i key  -o X=y "), Path::new("/tmp/d/cm"))
    }

    #[test]
    fn ssh_uris_with_and_without_user_and_port() {
        let u = ok("ssh://me@build.example:2222/home/me/proj");
        assert_eq!(
            u.target,
            Target::Ssh {
                user: Some("me".into()),
                host: "build.example".into(),
                port: Some(2222)
            }
        );
        assert_eq!(u.path, PathBuf::from("/home/me/proj"));
        let u = ok("ssh://[::1]:22/");
        assert_eq!(
            u.target,
            Target::Ssh {
                user: None,
                host: "::1".into(),
                port: Some(22)
            }
        );
        assert_eq!(u.path, PathBuf::from("/"));
    }

    #[test]
    fn container_and_pod_uris() {
        let u = ok("docker://dev_1/work/src");
        assert_eq!(
            u.target,
            Target::Docker {
                container: "dev_1".into()
            }
        );
        assert_eq!(u.path, PathBuf::from("/work/src"));
        assert!(matches!(ok("podman://c/w").target, Target::Podman { .. }));
        let u = ok("kubectl://pod-1:app/w");
        assert_eq!(
            u.target,
            Target::Kubectl {
                namespace: None,
                pod: "pod-1".into(),
                container: Some("app".into())
            }
        );
        let u = ok("kubectl://team/pod-1/src/app");
        assert_eq!(
            (u.target.clone(), u.path),
            (
                Target::Kubectl {
                    namespace: Some("team".into()),
                    pod: "pod-1".into(),
                    container: None
                },
                PathBuf::from("/src/app")
            )
        );
        let u = ok("kubectl:///pod-1/src/app");
        assert_eq!(
            u.target,
            Target::Kubectl {
                namespace: None,
                pod: "pod-1".into(),
                container: None
            }
        );
        assert_eq!(u.path, PathBuf::from("/src/app"));
    }

    #[test]
    fn bad_uris_say_what_is_wrong() {
        let err = |t: &str| Uri::parse(t).unwrap_err().to_string();
        assert!(
            err("host:/x").contains("not a workspace URI"),
            "{}",
            err("host:/x")
        );
        assert!(err("ftp://h/x").contains("unknown transport `ftp`"));
        assert!(err("ssh://host").contains("no directory"));
        assert!(err("ssh://host:0/x").contains("port `0`"));
        assert!(err("ssh://host:http/x").contains("port `http`"));
        assert!(err("ssh://-oProxyCommand=x/x").contains("starts with `-`"));
        assert!(err("docker://a;b/x").contains("holds `;`"));
        assert!(err("docker:///x").contains("container is empty"));
        assert!(err("ssh://h/x\ny").contains("control characters"));
        assert!(err("ssh://@h/x").contains("user is empty"));
    }

    #[test]
    fn ssh_command_shares_the_connection_and_quotes_the_script() {
        let u = ok("ssh://me@h:2200/w");
        let (program, args) = u.command("echo 'hi' $X", &ssh_setup());
        assert_eq!(program, "ssh");
        assert_eq!(
            args,
            [
                "-i",
                "key",
                "-o",
                "X=y",
                "-o",
                "BatchMode=yes",
                "-o",
                "ControlMaster=no",
                "-o",
                "ControlPersist=no",
                "-S",
                "/tmp/d/cm",
                "-p",
                "2200",
                "me@h",
                "--",
                r"sh -c 'echo '\''hi'\'' $X'"
            ]
        );
        let master = ssh_setup().args(&u, true);
        assert!(master.contains(&"ControlMaster=yes".to_string()));
        assert_eq!(&master[master.len() - 3..], ["-N", "-n", "me@h"]);
    }

    #[test]
    fn container_commands_pass_the_script_as_one_argument() {
        let s = ssh_setup();
        let (p, a) = ok("docker://c/w").command("echo $1", &s);
        assert_eq!(
            (p.as_str(), a),
            (
                "docker",
                ["exec", "-i", "c", "sh", "-c", "echo $1"]
                    .map(String::from)
                    .to_vec()
            )
        );
        let (p, a) = ok("podman://c/w").command("x", &s);
        assert_eq!(
            (p.as_str(), a[0].as_str(), a[2].as_str()),
            ("podman", "exec", "c")
        );
        let (p, a) = ok("kubectl://ns/pod:box/w").command("x", &s);
        assert_eq!(p, "kubectl");
        assert_eq!(
            a,
            [
                "exec", "-i", "-n", "ns", "pod", "-c", "box", "--", "sh", "-c", "x"
            ]
            .map(String::from)
        );
    }

    #[test]
    fn quoting_survives_every_quote() {
        assert_eq!(quote("a'b"), r"'a'\''b'");
        assert_eq!(quote(""), "''");
    }
}
