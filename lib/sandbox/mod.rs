//! The sandbox: what a confined command may do (a [`Policy`]), whether this
//! kernel can enforce it ([`support`]), turning it into the Landlock ruleset
//! and seccomp filter with which `core/proc` starts the child
//! ([`Prepared`], [`ConfineCommand::sandbox`]), and the two things the kernel cannot
//! do for us: undoing changes to `.git/hooks` ([`HooksGuard`]) and telling
//! a denied operation apart from a failing command ([`explain`]).
//!
//! Everything stays readable except the deny list; writes go only to the
//! workspace, the `--write` directories, a private `$TMPDIR` and the
//! `/dev/null`-style devices (none of those in read-only mode but the
//! devices); TCP connect and bind are refused by Landlock and every
//! `AF_INET`/`AF_INET6`/`AF_PACKET` socket by seccomp unless the network is
//! allowed; `no_new_privs` is always set. No root, no namespaces: it works
//! inside containers whose seccomp profile blocks user namespaces.

pub mod cli;
mod explain;
mod hooks;
mod rules;
mod seccomp;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Once};

use serde::{Deserialize, Serialize};

pub use explain::{Denial, Op, explain, explain_in};
pub use hooks::{HookChange, HooksGuard};

/// The environment variable that carries the policy in force (as JSON) into
/// a confined child, so that a tool (ag-bash) knows it runs confined and
/// can explain a denial.
pub const POLICY_ENV: &str = "AG_SANDBOX";

/// The test switch: set to `1`, [`support`] reports a kernel without
/// Landlock, so that the `auto` warning and the `require` refusal can be
/// tested on any kernel.
pub const UNAVAILABLE_ENV: &str = "AG_SANDBOX_UNAVAILABLE";

/// The lowest Landlock ABI the sandbox accepts: 3 (Linux 6.2) is the first
/// that can refuse truncating a file, without which `truncate -s 0` could
/// empty any file the user owns.
pub const MIN_LANDLOCK_ABI: i32 = 3;

/// What to do about the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Enforcement {
    /// Confine where the kernel allows; elsewhere warn once and run
    /// unconfined.
    #[default]
    Auto,
    /// Confine, or refuse to run.
    Require,
    /// Run unconfined.
    Off,
}

/// How much a confined command may write: the protocol's type, since a
/// gate request carries it too.
pub use crate::protocol::SandboxMode as Mode;

/// What a confined command may do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// How much it may write.
    pub mode: Mode,
    /// The directory it works in, writable in workspace-write mode.
    pub workspace: PathBuf,
    /// More writable directories (workspace-write mode only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<PathBuf>,
    /// Paths that may not be read (nor written), with all beneath them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny_read: Vec<PathBuf>,
    /// Whether the network is allowed.
    #[serde(default)]
    pub net: bool,
    /// The private `$TMPDIR` (workspace-write mode): given, to share one
    /// across calls ([`workspace_tmpdir`]), or else made by [`Prepared`]
    /// and removed with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmpdir: Option<PathBuf>,
}

impl Policy {
    /// A policy for this workspace with the default deny list
    /// ([`default_deny_list`]), no extra writable directories and no
    /// network.
    pub fn new(mode: Mode, workspace: PathBuf) -> Self {
        Policy {
            mode,
            workspace,
            write: Vec::new(),
            deny_read: default_deny_list(),
            net: false,
            tmpdir: None,
        }
    }

    /// The policy as it travels in [`POLICY_ENV`].
    pub fn to_env(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The policy a confined process runs under, from [`POLICY_ENV`].
    pub fn from_env() -> Option<Policy> {
        let v = std::env::var(POLICY_ENV).ok()?;
        serde_json::from_str(&v).ok()
    }

    /// The directories writable under this policy (before canonicalizing).
    pub fn writable(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        if self.mode == Mode::WorkspaceWrite {
            out.push(self.workspace.clone());
            out.extend(self.write.iter().cloned());
            out.extend(self.tmpdir.iter().cloned());
        }
        out
    }
}

/// The files a confined command may not read unless told otherwise: keys
/// and credentials under `$HOME` (taken from the environment), ag's own
/// model table (it may hold API keys) and shell histories.
pub fn default_deny_list() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        let home = PathBuf::from(home);
        for rel in [
            ".ssh",
            ".gnupg",
            ".aws",
            ".azure",
            ".config/gcloud",
            ".config/gh",
            ".kube",
            ".netrc",
            ".git-credentials",
            ".docker/config.json",
            ".bash_history",
            ".zsh_history",
            ".local/share/fish/fish_history",
            ".python_history",
        ] {
            out.push(home.join(rel));
        }
    }
    let ag_home = std::env::var_os("AG_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".ag"))
        });
    if let Some(ag) = ag_home {
        out.push(ag.join("models.json"));
    }
    out
}

/// What this kernel offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Support {
    /// The Landlock ABI version, 0 for none.
    pub landlock_abi: i32,
    /// Whether seccomp filters can be installed.
    pub seccomp: bool,
    /// Set when [`UNAVAILABLE_ENV`] asked to pretend there is no Landlock.
    pub simulated: bool,
}

impl Support {
    /// Why this policy cannot be enforced here, or `None` when it can.
    pub fn missing(&self, policy: &Policy) -> Option<String> {
        if self.landlock_abi == 0 {
            return Some(if self.simulated {
                format!("this kernel has no Landlock ({UNAVAILABLE_ENV} is set)")
            } else {
                "this kernel has no Landlock (it needs Linux 6.2 or later with `landlock` in the `lsm=` boot list)".to_string()
            });
        }
        if self.landlock_abi < MIN_LANDLOCK_ABI {
            return Some(format!(
                "this kernel's Landlock ABI {} cannot refuse truncating files (ABI {MIN_LANDLOCK_ABI}, Linux 6.2, can)",
                self.landlock_abi
            ));
        }
        if !policy.net && !self.seccomp {
            return Some(
                "this kernel has no seccomp filters, so UDP and raw sockets cannot be refused"
                    .to_string(),
            );
        }
        None
    }
}

/// What this kernel offers; honours [`UNAVAILABLE_ENV`].
pub fn support() -> Support {
    let simulated = std::env::var_os(UNAVAILABLE_ENV).is_some_and(|v| v == "1");
    #[cfg(target_os = "linux")]
    let (abi, seccomp) = (
        crate::proc::landlock_abi(),
        crate::proc::seccomp_filter_available(),
    );
    #[cfg(not(target_os = "linux"))]
    let (abi, seccomp) = (0, false);
    Support {
        landlock_abi: if simulated { 0 } else { abi },
        seccomp,
        simulated,
    }
}

/// Why a sandbox could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The kernel cannot enforce the policy and `require` was asked.
    #[error("cannot confine the command: {0}")]
    Unavailable(String),
    /// A path of the policy is unusable.
    #[error("{context} `{path}`: {source}")]
    Path {
        /// What was being done.
        context: &'static str,
        /// The path.
        path: PathBuf,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The policy contradicts itself.
    #[error("{0}")]
    Policy(String),
    /// Landlock refused a rule or the ruleset.
    #[error("cannot build the Landlock ruleset: {0}")]
    Landlock(String),
    /// The seccomp filter could not be built.
    #[error("cannot build the seccomp filter: {0}")]
    Seccomp(String),
}

impl Error {
    /// A stable code for error results.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Unavailable(_) => "sandbox.unavailable",
            Error::Path { .. } => "sandbox.path",
            Error::Policy(_) => "sandbox.policy",
            Error::Landlock(_) => "sandbox.landlock",
            Error::Seccomp(_) => "sandbox.seccomp",
        }
    }
}

/// A policy turned into what the kernel enforces, ready to confine any
/// number of children ([`ConfineCommand::sandbox`]). The
/// deny list's siblings are enumerated here, once; the private `$TMPDIR`
/// lives as long as this value.
#[derive(Debug)]
pub struct Prepared {
    policy: Policy,
    #[cfg(target_os = "linux")]
    confinement: Arc<crate::proc::Confinement>,
    env: Vec<(&'static str, OsString)>,
    /// Deny-list paths left out of the ruleset because they did not exist.
    absent: Vec<PathBuf>,
    _tmp: Option<Arc<tempfile::TempDir>>,
}

impl Prepared {
    /// Builds the ruleset and filter for this policy, making the private
    /// `$TMPDIR` in workspace-write mode unless the policy names one. Does
    /// not look at [`support`]: use [`prepare`] for that.
    pub fn new(policy: &Policy) -> Result<Prepared, Error> {
        let mut policy = policy.clone();
        if policy.mode == Mode::ReadOnly && !policy.write.is_empty() {
            return Err(Error::Policy(
                "--write has no effect in read-only mode; use --mode workspace-write".to_string(),
            ));
        }
        policy.workspace = canonical_dir(&policy.workspace, "cannot use the workspace")?;
        policy.write = policy
            .write
            .iter()
            .map(|d| canonical_dir(d, "cannot make writable"))
            .collect::<Result<_, _>>()?;
        let tmp = match (policy.mode, &policy.tmpdir) {
            (Mode::ReadOnly, _) => {
                policy.tmpdir = None;
                None
            }
            (Mode::WorkspaceWrite, Some(given)) => {
                policy.tmpdir = Some(canonical_dir(given, "cannot use the private TMPDIR")?);
                None
            }
            (Mode::WorkspaceWrite, None) => {
                sweep_run_tmpdirs();
                let t = tempfile::Builder::new()
                    .prefix(&format!("{RUN_TMPDIR}{}-", std::process::id()))
                    .tempdir()
                    .map_err(|source| Error::Path {
                        context: "cannot make the private TMPDIR in",
                        path: std::env::temp_dir(),
                        source,
                    })?;
                policy.tmpdir = Some(canonical_dir(t.path(), "cannot use the private TMPDIR")?);
                Some(Arc::new(t))
            }
        };
        Prepared::build(policy, tmp)
    }

    /// The confinement of a policy whose paths are canonical already.
    fn build(policy: Policy, tmp: Option<Arc<tempfile::TempDir>>) -> Result<Prepared, Error> {
        #[cfg(target_os = "linux")]
        let (confinement, absent) = {
            let abi = support().landlock_abi;
            let (ruleset, absent) = if abi > 0 {
                let built = rules::ruleset(&policy, abi)?;
                (built.ruleset, built.absent)
            } else {
                (None, Vec::new())
            };
            // With the network allowed, a kernel without seccomp loses only
            // the refusal of setuid modes and extended attributes.
            let filter = if policy.net && !support().seccomp {
                Vec::new()
            } else {
                seccomp::filter(policy.net)?
            };
            (
                Arc::new(crate::proc::Confinement::new(ruleset, filter)),
                absent,
            )
        };
        #[cfg(not(target_os = "linux"))]
        let absent = Vec::new();
        let mut env = vec![(POLICY_ENV, OsString::from(policy.to_env()))];
        if let Some(t) = &policy.tmpdir {
            env.push(("TMPDIR", t.clone().into_os_string()));
        }
        Ok(Prepared {
            policy,
            #[cfg(target_os = "linux")]
            confinement,
            env,
            absent,
            _tmp: tmp,
        })
    }

    /// Whether a deny-list path that did not exist when this was built
    /// (and so was left out of the ruleset) exists now.
    pub fn outdated(&self) -> bool {
        self.absent.iter().any(|p| p.exists())
    }

    /// The same policy built again, for the same private `$TMPDIR`: what a
    /// caller that confines call after call does once [`Self::outdated`].
    pub fn refreshed(&self) -> Result<Prepared, Error> {
        Prepared::build(self.policy.clone(), self._tmp.clone())
    }

    /// The policy in force (paths canonical, the private `$TMPDIR` filled
    /// in).
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The private `$TMPDIR`, in workspace-write mode.
    pub fn tmpdir(&self) -> Option<&Path> {
        self.policy.tmpdir.as_deref()
    }
}

/// Confinement for [`crate::proc::Command`], which lives on a floor below
/// the sandbox (in ag-core) and so cannot know it.
pub trait ConfineCommand {
    /// Runs the command confined by this sandbox: the ruleset and filter
    /// in force from the child's start, [`POLICY_ENV`] and `TMPDIR` set.
    fn sandbox(self, prepared: &Prepared) -> Self;
}

impl ConfineCommand for crate::proc::Command {
    fn sandbox(self, prepared: &Prepared) -> crate::proc::Command {
        let mut cmd = self;
        for (k, v) in &prepared.env {
            cmd = cmd.env(k, v);
        }
        #[cfg(target_os = "linux")]
        {
            cmd = cmd.confine(Arc::clone(&prepared.confinement));
        }
        cmd
    }
}

/// Prepares the sandbox as `enforcement` asks: `None` when it is off, or
/// when the kernel cannot enforce the policy under `auto` (then a warning
/// goes to stderr, once per process); an error under `require`. Callers
/// that report the fallback some other way too (ag-loop's
/// `sandbox.unavailable` event) ask [`support`] first.
pub fn prepare(policy: &Policy, enforcement: Enforcement) -> Result<Option<Prepared>, Error> {
    if enforcement == Enforcement::Off {
        return Ok(None);
    }
    if let Some(reason) = support().missing(policy) {
        return match enforcement {
            Enforcement::Require => Err(Error::Unavailable(reason)),
            _ => {
                warn_unconfined(&reason);
                Ok(None)
            }
        };
    }
    Prepared::new(policy).map(Some)
}

/// Warns on stderr, once per process, that commands run unconfined.
pub fn warn_unconfined(reason: &str) {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let bin = std::env::args_os()
            .next()
            .map(PathBuf::from)
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "ag".to_string());
        crate::cli::warn(
            &bin,
            &format!("the sandbox is unavailable, commands run unconfined: {reason} (`--sandbox require` refuses instead, `--sandbox off` silences this)"),
        );
    });
}

/// The name of a private `$TMPDIR` made for one run begins with this and
/// the pid of the process that made it, so that a later run can tell one
/// whose maker was killed (and so could not remove it) from one in use.
const RUN_TMPDIR: &str = "ag-sandbox-run-";

/// Removes this user's per-run `$TMPDIR`s whose makers are gone: a
/// process killed outright (`kill -9`, an editor's terminal/kill) never
/// drops its own.
fn sweep_run_tmpdirs() {
    use std::os::unix::fs::MetadataExt;
    let uid = nix::unistd::geteuid().as_raw();
    let Ok(dir) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(RUN_TMPDIR))
            .and_then(|rest| rest.split('-').next())
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        let gone = matches!(
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None),
            Err(nix::errno::Errno::ESRCH)
        );
        // Only a real directory of this user's: never one through a
        // symlink, nor someone else's.
        let ours =
            std::fs::symlink_metadata(entry.path()).is_ok_and(|m| m.is_dir() && m.uid() == uid);
        if gone && ours {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// A private `$TMPDIR` for confined commands in this workspace that lasts
/// across calls (as `/tmp` does): `ag-sandbox-<uid>-<hash of the
/// workspace>` in the system's temporary directory, made `0700` on first
/// use. Making and removing a directory per call costs milliseconds on some
/// file systems; a tool call should cost less. One that someone else made,
/// or that others may enter, is refused.
pub fn workspace_tmpdir(workspace: &Path) -> Result<PathBuf, Error> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let uid = nix::unistd::geteuid().as_raw();
    let ws = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let hash = xxhash_rust::xxh3::xxh3_64(ws.as_os_str().as_encoded_bytes());
    let dir = std::env::temp_dir().join(format!("ag-sandbox-{uid}-{hash:016x}"));
    let err = |source| Error::Path {
        context: "cannot use the private TMPDIR",
        path: dir.clone(),
        source,
    };
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => return Ok(dir),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(err(e)),
    }
    let meta = std::fs::symlink_metadata(&dir).map_err(err)?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        return Err(err(std::io::Error::other(
            "it exists but is not a directory of this user's that only this user can enter",
        )));
    }
    Ok(dir)
}

fn canonical_dir(p: &Path, context: &'static str) -> Result<PathBuf, Error> {
    let c = std::fs::canonicalize(p).map_err(|source| Error::Path {
        context,
        path: p.to_path_buf(),
        source,
    })?;
    if !c.is_dir() {
        return Err(Error::Path {
            context,
            path: p.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a directory"),
        });
    }
    Ok(c)
}
