//! ag-loop's side of the sandbox (issue 19): which confinement the flags,
//! the config file and the identity ask for, the policy of a run (the
//! workspace, and the directories ag's own tools write: the session's
//! directory for ag-bash's jobs and logs and ag-todo's list, git's
//! directory when the checkout is a worktree), what happens when the
//! kernel cannot confine, and how a result tells that the sandbox blocked
//! the call (for `run/escalate.rs`).
//!
//! Every tool call and every MCP stdio server (unless `--mcp-unconfined`)
//! runs under the same policy; the servers get one of their own, prepared
//! before the session exists, without the session's directory.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::agent::config::error::SetupError;
use crate::agent::config::file::Config;
use crate::agent::config::identity::Identity;
use crate::protocol::{GateSandbox, ToolResult};
use crate::sandbox::{self, Denial, Enforcement, Mode, Op, Policy, Prepared};

/// The code of the `error` event that says tools run unconfined.
pub const UNAVAILABLE: &str = "sandbox.unavailable";

/// ag-loop's sandbox flags.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SandboxArgs {
    /// Confine every tool call and MCP stdio server by the kernel (Landlock,
    /// seccomp, no_new_privs): auto (the default) confines where the kernel
    /// can, else warns, emits one `error` event with code
    /// sandbox.unavailable and runs unconfined; require refuses to start
    /// (exit 2) instead; off runs unconfined (also `sandbox` in the config
    /// file and the identity). A call the sandbox blocks may run again
    /// outside it: the gates are asked again (ag-gate asks a person through
    /// an approval_request, whose "always" covers the command's prefix for
    /// the session; under approval mode never, or with nobody to answer, the
    /// call stays confined and the model is told why). With the sandbox on,
    /// ag-gate does not ask about what the kernel stops (ag-gate(1)).
    #[arg(long, value_enum, value_name = "WHEN")]
    pub sandbox: Option<Enforcement>,
    /// What confined calls may write: workspace-write (the default: the
    /// repository the working directory is in, else the working directory,
    /// plus the session's directory and a private TMPDIR) or read-only
    /// (also `sandbox_mode`).
    #[arg(long, value_enum, value_name = "MODE")]
    pub sandbox_mode: Option<Mode>,
    /// Let confined calls use the network (TCP, UDP); without it only Unix
    /// sockets work (also `allow_net`).
    #[arg(long)]
    pub allow_net: bool,
    /// A host the `fetch` tool may reach without asking (repeatable; also
    /// `allow_hosts`): a name (`docs.rs`), the names below a domain
    /// (`*.rust-lang.org`) or an address; a host named here may also lead
    /// to a loopback or private address (`--allow-host localhost`). With
    /// --allow-net any public host. A fetch of a host the policy does not
    /// name goes to the gate, which asks a person or, with nobody to ask,
    /// refuses it.
    #[arg(long = "allow-host", value_name = "HOST")]
    pub allow_host: Vec<String>,
    /// Let confined calls write DIR too, such as a build cache outside the
    /// workspace (repeatable; also `sandbox_write`).
    #[arg(long = "sandbox-write", value_name = "DIR")]
    pub sandbox_write: Vec<PathBuf>,
    /// Start MCP stdio servers outside the sandbox (for servers that need
    /// the network or write elsewhere; also `mcp_unconfined`).
    #[arg(long)]
    pub mcp_unconfined: bool,
}

/// The sandbox a run asks for, once every source has been weighed.
#[derive(Debug, Clone, PartialEq)]
pub struct SandboxChoice {
    /// Confine, and what if the kernel cannot.
    pub enforcement: Enforcement,
    /// What confined calls may write.
    pub mode: Mode,
    /// Whether they may use the network.
    pub net: bool,
    /// The hosts `fetch` reaches without asking (`--allow-host`,
    /// `allow_hosts`).
    pub hosts: Vec<String>,
    /// Directories they may write besides the workspace.
    pub write: Vec<PathBuf>,
    /// Whether MCP stdio servers start unconfined.
    pub mcp_unconfined: bool,
    /// A project identity's settings that would have loosened the sandbox,
    /// set aside (warned about at start).
    pub ignored: Vec<String>,
}

/// The flag, else the identity, else the config file, else the default
/// (auto, workspace-write, no network). An identity found in the project
/// (`.ag/agents/`, which comes with the code being worked on) may tighten
/// the sandbox but not loosen it: such a setting is set aside.
pub fn resolve(
    args: &SandboxArgs,
    config: &Config,
    ident: Option<&Identity>,
) -> Result<SandboxChoice, SetupError> {
    let mut ignored = Vec::new();
    let project = ident.is_some_and(|i| !i.path.starts_with(crate::session::ag_home()));
    let base_enforcement = config.sandbox.unwrap_or_default();
    let base_mode = config.sandbox_mode.unwrap_or_default();
    let base_net = config.allow_net.unwrap_or(false);
    let mut enforcement = base_enforcement;
    let mut mode = base_mode;
    let mut net = base_net;
    if let Some(i) = ident {
        if let Some(v) = &i.sandbox {
            let e: Enforcement = word(i, "sandbox", v, "auto, require, off")?;
            if project && strictness(e) < strictness(base_enforcement) {
                ignored.push(format!("sandbox: {v}"));
            } else {
                enforcement = e;
            }
        }
        if let Some(v) = &i.sandbox_mode {
            let m: Mode = word(i, "sandbox_mode", v, "workspace-write, read-only")?;
            if project && m == Mode::WorkspaceWrite && base_mode == Mode::ReadOnly {
                ignored.push(format!("sandbox_mode: {v}"));
            } else {
                mode = m;
            }
        }
        if let Some(v) = &i.allow_net {
            let n = match v.to_ascii_lowercase().as_str() {
                "true" | "yes" | "on" => true,
                "false" | "no" | "off" => false,
                _ => {
                    return Err(SetupError::SandboxValue {
                        path: i.path.clone(),
                        key: "allow_net",
                        value: v.clone(),
                        known: "true, false",
                    });
                }
            };
            if project && n && !base_net {
                ignored.push(format!("allow_net: {v}"));
            } else {
                net = n;
            }
        }
    }
    let hosts: Vec<String> = config
        .allow_hosts
        .iter()
        .chain(&args.allow_host)
        .cloned()
        .collect();
    crate::tools::fetch::policy::NetPolicy::check_entries(&hosts).map_err(|e| {
        SetupError::Sandbox(format!(
            "--allow-host {e}\nhint: hosts come from --allow-host and `allow_hosts` in the config file"
        ))
    })?;
    Ok(SandboxChoice {
        enforcement: args.sandbox.unwrap_or(enforcement),
        mode: args.sandbox_mode.unwrap_or(mode),
        net: args.allow_net || net,
        hosts,
        write: config
            .sandbox_write
            .iter()
            .chain(&args.sandbox_write)
            .cloned()
            .collect(),
        mcp_unconfined: args.mcp_unconfined || config.mcp_unconfined.unwrap_or(false),
        ignored,
    })
}

fn strictness(e: Enforcement) -> u8 {
    match e {
        Enforcement::Off => 0,
        Enforcement::Auto => 1,
        Enforcement::Require => 2,
    }
}

/// A front matter word as one of the sandbox's kebab-case values (`_`
/// taken for `-`).
fn word<T: serde::de::DeserializeOwned>(
    ident: &Identity,
    key: &'static str,
    value: &str,
    known: &'static str,
) -> Result<T, SetupError> {
    serde_json::from_value(Value::String(value.to_ascii_lowercase().replace('_', "-"))).map_err(
        |_| SetupError::SandboxValue {
            path: ident.path.clone(),
            key,
            value: value.to_string(),
            known,
        },
    )
}

/// The directory writes are confined to: the top of the git checkout the
/// working directory is in (ag-git commits there, and the checkpoints
/// record it), else the working directory.
pub fn workspace(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(cwd)
        .to_path_buf()
}

/// Where git keeps a checkout's repository when it is not inside it: a
/// worktree's or submodule's `.git` is a file naming its git directory,
/// which names the common one (objects, refs, hooks) in `commondir`.
pub fn git_dirs(workspace: &Path) -> Vec<PathBuf> {
    let dot = workspace.join(".git");
    if !dot.is_file() {
        return Vec::new();
    }
    let Some(gitdir) = std::fs::read_to_string(&dot).ok().and_then(|t| {
        t.lines()
            .find_map(|l| l.strip_prefix("gitdir:"))
            .map(|d| workspace.join(d.trim()))
    }) else {
        return Vec::new();
    };
    let mut out = vec![gitdir.clone()];
    if let Ok(common) = std::fs::read_to_string(gitdir.join("commondir")) {
        out.push(gitdir.join(common.trim()));
    }
    out.into_iter()
        .filter_map(|d| d.canonicalize().ok())
        .filter(|d| d.is_dir() && !d.starts_with(workspace))
        .collect()
}

/// The sandbox of one run, from its choice to the confinements of the MCP
/// servers and of the tool calls.
pub struct Plan {
    choice: SandboxChoice,
    /// The policy, `None` when the sandbox is off or unavailable.
    policy: Option<Policy>,
    /// Why tools run unconfined under `auto`, for the `error` event.
    pub unavailable: Option<String>,
}

impl Plan {
    /// The policy for a run in `cwd`; under `require`, an error when this
    /// kernel cannot enforce it; under `auto`, a warning (once, on stderr).
    pub fn new(choice: &SandboxChoice, cwd: &Path) -> Result<Plan, SetupError> {
        let mut plan = Plan {
            choice: choice.clone(),
            policy: None,
            unavailable: None,
        };
        if choice.enforcement == Enforcement::Off {
            return Ok(plan);
        }
        let root = workspace(cwd);
        let mut policy = Policy::new(choice.mode, root.clone());
        policy.net = choice.net;
        if choice.mode == Mode::WorkspaceWrite {
            policy.write = git_dirs(&root);
            for dir in &choice.write {
                policy.write.push(expand_home(dir));
            }
        }
        keep_writable(&mut policy);
        if let Some(reason) = sandbox::support().missing(&policy) {
            plan.fall_back(reason)?;
            return Ok(plan);
        }
        plan.policy = Some(policy);
        Ok(plan)
    }

    /// Under `require` an error, under `auto` a warning and no policy.
    fn fall_back(&mut self, reason: String) -> Result<(), SetupError> {
        if self.choice.enforcement == Enforcement::Require {
            return Err(SetupError::Sandbox(format!(
                "--sandbox require: cannot confine the tools: {reason}\nhint: `--sandbox auto` runs the tools unconfined with a warning, `--sandbox off` without one"
            )));
        }
        sandbox::warn_unconfined(&reason);
        self.policy = None;
        self.unavailable = Some(reason);
        Ok(())
    }

    /// The confinement of MCP stdio servers: none with `--mcp-unconfined`.
    pub fn for_mcp(&mut self) -> Result<Option<Arc<Prepared>>, SetupError> {
        if self.choice.mcp_unconfined {
            return Ok(None);
        }
        let Some(policy) = self.policy.clone() else {
            return Ok(None);
        };
        Ok(self.prepare(&policy)?.map(Arc::new))
    }

    /// The sandbox of the tool calls, which also write the session's
    /// directory (made here, as Landlock grants existing directories) or,
    /// without a session, the directory of ag-bash's background jobs and
    /// `run_dir`, the run's own (its task list).
    pub fn for_tools(
        &mut self,
        session_dir: Option<&Path>,
        run_dir: Option<&Path>,
    ) -> Result<Option<Arc<LoopSandbox>>, SetupError> {
        let Some(mut policy) = self.policy.clone() else {
            return Ok(None);
        };
        if policy.mode == Mode::WorkspaceWrite {
            let own = match session_dir {
                Some(d) => Some(d.to_path_buf()),
                None => crate::tools::bash::jobs::jobs_dir().ok(),
            };
            if let Some(dir) = own {
                std::fs::create_dir_all(&dir).map_err(|e| {
                    SetupError::Sandbox(format!(
                        "cannot make `{}` for the tools to write in: {e}",
                        dir.display()
                    ))
                })?;
                policy.write.push(dir);
            }
            // A run without a session keeps its task list there, and its
            // language servers (started by a write or an edit) their
            // caches in $AG_HOME's: without it, a write's diagnostics
            // were "permission denied" in every result.
            if let Some(dir) = run_dir {
                policy.write.push(dir.to_path_buf());
            }
            if session_dir.is_none() {
                let cache = crate::tools::lsp::shared_cache();
                if std::fs::create_dir_all(&cache).is_ok() {
                    policy.write.push(cache);
                }
            }
            // A tool may start a warm helper (ag-lsp's language servers),
            // which binds its socket there.
            if let Ok(dir) = crate::proc::warm::root() {
                policy.write.push(dir);
            }
        }
        let Some(prepared) = self.prepare(&policy)? else {
            return Ok(None);
        };
        let mut sandbox = LoopSandbox::new(prepared);
        sandbox.mcp_confined = !self.choice.mcp_unconfined;
        Ok(Some(Arc::new(sandbox)))
    }

    /// The kernel refusing is what `auto` falls back from; a path that
    /// cannot be used (a `--sandbox-write` directory that does not exist)
    /// is a mistake to fix, not a reason to run unconfined.
    fn prepare(&mut self, policy: &Policy) -> Result<Option<Prepared>, SetupError> {
        match Prepared::new(policy) {
            Ok(p) => Ok(Some(p)),
            Err(e @ (sandbox::Error::Path { .. } | sandbox::Error::Policy(_))) => {
                Err(SetupError::Sandbox(format!("the sandbox: {e}")))
            }
            Err(e) => {
                self.fall_back(e.to_string())?;
                Ok(None)
            }
        }
    }
}

/// Leaves out of the deny list what lies inside a writable directory, and
/// says so. Landlock only grants, and a grant covers all beneath, so a
/// denied path inside the workspace (ag-loop run in `~`, which holds
/// `~/.ssh`) would cost the workspace its own directory: no file could be
/// made, replaced (ag-write and ag-edit write a temporary file beside the
/// target and rename it) or removed at its top. The workspace comes first;
/// the warning says what is left readable.
fn keep_writable(policy: &mut Policy) {
    let writable: Vec<PathBuf> = policy.writable().iter().map(|p| real(p)).collect();
    let (inside, outside): (Vec<PathBuf>, Vec<PathBuf>) = std::mem::take(&mut policy.deny_read)
        .into_iter()
        .partition(|d| writable.iter().any(|w| real(d).starts_with(w)));
    policy.deny_read = outside;
    let present: Vec<String> = inside
        .iter()
        .filter(|p| p.exists())
        .map(|p| format!("`{}`", p.display()))
        .collect();
    if !present.is_empty() {
        crate::cli::warn(
            "ag-loop",
            &format!(
                "the sandbox leaves {} readable and writable: it lies inside the workspace `{}`, all of which the tools may change\nhint: run ag-loop in a project directory rather than one that holds your home",
                present.join(", "),
                policy.workspace.display()
            ),
        );
    }
}

/// A path with symlinks resolved as far as it exists.
fn real(p: &Path) -> PathBuf {
    if let Ok(c) = p.canonicalize() {
        return c;
    }
    match (p.parent(), p.file_name()) {
        (Some(parent), Some(name)) => real(parent).join(name),
        _ => p.to_path_buf(),
    }
}

/// `~/x` as the shell reads it, in a config file's `sandbox_write`.
fn expand_home(dir: &Path) -> PathBuf {
    match (dir.strip_prefix("~"), std::env::var_os("HOME")) {
        (Ok(rest), Some(home)) if !home.is_empty() => PathBuf::from(home).join(rest),
        _ => dir.to_path_buf(),
    }
}

/// The sandbox the tool calls of a run are confined by, and the command
/// prefixes a person allowed to run outside it for the rest of the session.
pub struct LoopSandbox {
    /// The policy, which stays as it is while the confinement may be
    /// built again.
    policy: Policy,
    prepared: Mutex<Arc<Prepared>>,
    always: Mutex<Vec<String>>,
    /// Whether the MCP stdio servers run confined too.
    pub mcp_confined: bool,
}

impl LoopSandbox {
    /// A sandbox for the tool calls.
    pub fn new(prepared: Prepared) -> Self {
        LoopSandbox {
            policy: prepared.policy().clone(),
            prepared: Mutex::new(Arc::new(prepared)),
            always: Mutex::new(Vec::new()),
            mcp_confined: true,
        }
    }

    /// What confines the next call: the ruleset built at start, or built
    /// again when a deny-list path it left out because it did not exist
    /// (`~/.aws` before `aws configure`) has appeared since.
    pub fn prepared(&self) -> Arc<Prepared> {
        let mut current = self.prepared.lock().unwrap_or_else(|e| e.into_inner());
        if current.outdated() {
            match current.refreshed() {
                Ok(p) => *current = Arc::new(p),
                Err(e) => crate::cli::warn(
                    "ag-loop",
                    &format!(
                        "the sandbox could not take in a path of its deny list that appeared: {e}"
                    ),
                ),
            }
        }
        Arc::clone(&current)
    }

    /// The confinement of a CLI agent's call (`claude_code_cli`, ...): the
    /// run's policy plus the network, which the agent needs to reach its
    /// provider, and, in workspace-write mode, its own configuration and
    /// state (`state`, made here when missing, as Landlock grants only
    /// what exists). The deny list still holds; so does read-only mode,
    /// where the agent can write nothing of its own.
    pub fn for_cli_agent(&self, state: &[PathBuf]) -> Result<Prepared, String> {
        let mut policy = self.policy.clone();
        policy.net = true;
        if policy.mode == Mode::WorkspaceWrite {
            for p in state {
                if !p.exists() {
                    std::fs::create_dir_all(p)
                        .map_err(|e| format!("cannot make `{}`: {e}", p.display()))?;
                }
                policy.write.push(p.clone());
            }
        }
        Prepared::new(&policy).map_err(|e| e.to_string())
    }

    /// The confinement of an ag-fetch call: the run's policy with the
    /// network, which is its whole job (ag-fetch itself keeps it to the
    /// hosts the network policy allows, address by address), and read-only,
    /// since it writes nothing.
    pub fn for_fetch(&self) -> Result<Prepared, String> {
        let mut policy = self.policy.clone();
        policy.net = true;
        policy.mode = Mode::ReadOnly;
        policy.write.clear();
        policy.tmpdir = None;
        Prepared::new(&policy).map_err(|e| e.to_string())
    }

    /// The confinement of an ag-browser call, and so of the warm server
    /// and the Chromium it may start: the run's policy with the network
    /// (the browser itself judges every request it makes, see
    /// `tools/browser/confine.rs`) and the warm helpers' directory, where
    /// the call finds or starts the server.
    pub fn for_browser(&self) -> Result<Prepared, String> {
        let mut policy = self.policy.clone();
        policy.net = true;
        let root = crate::proc::warm::root()
            .map_err(|e| format!("cannot use the warm helpers' directory: {e}"))?;
        policy.write.push(root);
        Prepared::new(&policy).map_err(|e| e.to_string())
    }

    /// The policy in force.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The sandbox as a gate sees it; `blocked` when asking whether a
    /// blocked call may run outside.
    pub fn gate(&self, blocked: Option<String>) -> GateSandbox {
        let p = self.policy();
        GateSandbox {
            mode: p.mode,
            workspace: p.workspace.display().to_string(),
            net: p.net,
            blocked,
        }
    }

    /// A snapshot of the workspace's git hooks and config before a call
    /// that may change files (every tool but ag's read-only ones), so
    /// that nothing the call plants there runs later outside the sandbox.
    pub fn guard(&self, tool: &str) -> Option<sandbox::HooksGuard> {
        (!READ_ONLY_TOOLS.contains(&tool))
            .then(|| sandbox::HooksGuard::snapshot(&self.policy().workspace))
    }

    /// What the sandbox denied a call, in words ("write to `/etc/hosts`"),
    /// or `None` when the result shows no denial: ag-bash reports its
    /// commands' denials in `details.sandbox`; for another tool a failed
    /// result's message is read for a permission error the policy explains.
    pub fn blocked(&self, r: &ToolResult, cwd: &Path) -> Option<String> {
        let reported: Vec<Denial> = r
            .details
            .get("sandbox")
            .and_then(|s| s.get("denied"))
            .and_then(|d| serde_json::from_value(d.clone()).ok())
            .unwrap_or_default();
        // ag-bash reports a failing command's exit code, not an error.
        let failed = r.is_error
            || r.details
                .get("exit_code")
                .and_then(Value::as_i64)
                .is_some_and(|c| c != 0);
        let denials: Vec<Denial> = if !reported.is_empty() {
            // An unattributed permission error counts only when it failed.
            reported
                .into_iter()
                .filter(|d| d.op != Op::Unknown || failed)
                .collect()
        } else if r.is_error {
            sandbox::explain_in(self.policy(), cwd, &r.output)
                .into_iter()
                .filter(|d| d.op != Op::Unknown)
                .collect()
        } else {
            Vec::new()
        };
        if denials.is_empty() {
            return None;
        }
        let words: Vec<String> = denials.iter().map(Denial::describe).collect();
        Some(words.join("; "))
    }

    /// True when a person answered "always" for what this call runs.
    pub fn always_covers(&self, tool: &str, arguments: &Value) -> bool {
        let Some(wanted) = super::prefixes::prefixes(tool, arguments) else {
            return false;
        };
        let Ok(always) = self.always.lock() else {
            return false;
        };
        wanted
            .iter()
            .all(|w| always.iter().any(|a| super::prefixes::covers(a, w)))
    }

    /// Remembers "always" for what this call runs.
    pub fn allow_always(&self, tool: &str, arguments: &Value) {
        if let (Some(new), Ok(mut always)) = (
            super::prefixes::prefixes(tool, arguments),
            self.always.lock(),
        ) {
            for p in new {
                if !always.contains(&p) {
                    always.push(p);
                }
            }
        }
    }
}

/// ag's tools that only look.
const READ_ONLY_TOOLS: &[&str] = &["read", "grep", "find", "ls", "fetch"];

/// Undoes what a call changed in the git hooks and config, and tells the
/// model (in the output) and the client (in `details.sandbox.hooks`).
pub fn undo_hooks(guard: sandbox::HooksGuard, r: &mut ToolResult) {
    let changes = guard.restore();
    if changes.is_empty() {
        return;
    }
    let words: Vec<String> = changes
        .iter()
        .map(|c| {
            let what = format!("`{}` {}", c.path.display(), c.change);
            match (&c.error, c.undone) {
                (_, true) => format!("{what}, undone"),
                (Some(e), false) => format!("{what}, NOT undone: {e}"),
                (None, false) => format!("{what}, NOT undone"),
            }
        })
        .collect();
    r.output.push_str(&format!(
        "\n\n[The sandbox keeps git hooks and git settings that run commands as they were, since git would run them later outside the sandbox: {}.]",
        words.join("; ")
    ));
    let note = serde_json::to_value(&changes).unwrap_or(Value::Null);
    match &mut r.details {
        Value::Object(map) => {
            let entry = map
                .entry("sandbox")
                .or_insert_with(|| Value::Object(Default::default()));
            if let Value::Object(sb) = entry {
                sb.insert("hooks".into(), note);
            }
        }
        Value::Null => r.details = serde_json::json!({"sandbox": {"hooks": note}}),
        _ => {}
    }
}

/// Says at start what the sandbox could not do: the settings of a project
/// identity set aside (a warning), and under `auto` on a kernel that cannot
/// confine, one `error` event with code [`UNAVAILABLE`] (the warning on
/// stderr was given when the plan was made).
pub fn announce(
    plan: &Plan,
    choice: &SandboxChoice,
    emitter: &mut crate::agent::events::emit::Emitter,
) -> Result<(), SetupError> {
    if !choice.ignored.is_empty() {
        crate::cli::warn(
            "ag-loop",
            &format!(
                "the agent identity's {} set aside: an identity from the project may make the sandbox stricter, not looser; use the flags or $AG_HOME/config.toml",
                choice
                    .ignored
                    .iter()
                    .map(|s| format!("`{s}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
    }
    if let Some(reason) = &plan.unavailable {
        emitter
            .emit(crate::protocol::AgentEvent::Error {
                message: format!("the sandbox is unavailable, tools run unconfined: {reason}"),
                code: Some(UNAVAILABLE.to_string()),
            })
            .map_err(|e| SetupError::Sandbox(format!("cannot write an event: {e}")))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use serde_json::json;

    use super::*;

    fn args(flags: &[&str]) -> SandboxArgs {
        crate::agent::setup::args::Args::try_parse_from(
            std::iter::once("ag-loop").chain(flags.iter().copied()),
        )
        .unwrap()
        .sandbox
    }

    fn identity(path: &Path, keys: &[(&str, &str)]) -> Identity {
        let mut i = Identity {
            name: "x".into(),
            path: path.to_path_buf(),
            ..Identity::default()
        };
        for (k, v) in keys {
            let v = Some(v.to_string());
            match *k {
                "sandbox" => i.sandbox = v,
                "sandbox_mode" => i.sandbox_mode = v,
                "allow_net" => i.allow_net = v,
                _ => unreachable!(),
            }
        }
        i
    }

    /// An identity from `$AG_HOME/agents`, which may loosen too.
    fn own(keys: &[(&str, &str)]) -> Identity {
        identity(&crate::session::ag_home().join("agents/x.md"), keys)
    }

    #[test]
    fn flag_then_identity_then_config_then_auto_workspace_write_offline() {
        let none = Config::default();
        let c = resolve(&args(&[]), &none, None).unwrap();
        assert_eq!(
            (c.enforcement, c.mode, c.net, c.mcp_unconfined),
            (Enforcement::Auto, Mode::WorkspaceWrite, false, false)
        );
        let config = Config {
            sandbox: Some(Enforcement::Require),
            sandbox_mode: Some(Mode::ReadOnly),
            allow_net: Some(true),
            sandbox_write: vec!["/c".into()],
            mcp_unconfined: Some(true),
            ..Config::default()
        };
        let c = resolve(&args(&["--sandbox-write", "/f"]), &config, None).unwrap();
        assert_eq!(
            (c.enforcement, c.mode, c.net, c.mcp_unconfined),
            (Enforcement::Require, Mode::ReadOnly, true, true)
        );
        assert_eq!(c.write, vec![PathBuf::from("/c"), PathBuf::from("/f")]);
        let ident = own(&[
            ("sandbox", "off"),
            ("sandbox_mode", "workspace_write"),
            ("allow_net", "false"),
        ]);
        let c = resolve(&args(&[]), &config, Some(&ident)).unwrap();
        assert_eq!(
            (c.enforcement, c.mode, c.net),
            (Enforcement::Off, Mode::WorkspaceWrite, false)
        );
        assert!(c.ignored.is_empty());
        let c = resolve(
            &args(&[
                "--sandbox",
                "require",
                "--sandbox-mode",
                "read-only",
                "--allow-net",
            ]),
            &none,
            Some(&ident),
        )
        .unwrap();
        assert_eq!(
            (c.enforcement, c.mode, c.net),
            (Enforcement::Require, Mode::ReadOnly, true)
        );
    }

    #[test]
    fn a_project_identity_may_tighten_the_sandbox_but_not_loosen_it() {
        let project = Path::new("/src/app/.ag/agents/x.md");
        let loose = identity(
            project,
            &[
                ("sandbox", "off"),
                ("sandbox_mode", "workspace-write"),
                ("allow_net", "yes"),
            ],
        );
        let config = Config {
            sandbox_mode: Some(Mode::ReadOnly),
            ..Config::default()
        };
        let c = resolve(&args(&[]), &config, Some(&loose)).unwrap();
        assert_eq!(
            (c.enforcement, c.mode, c.net),
            (Enforcement::Auto, Mode::ReadOnly, false)
        );
        assert_eq!(
            c.ignored,
            vec![
                "sandbox: off",
                "sandbox_mode: workspace-write",
                "allow_net: yes"
            ]
        );
        let strict = identity(
            project,
            &[("sandbox", "require"), ("sandbox_mode", "read-only")],
        );
        let c = resolve(&args(&[]), &Config::default(), Some(&strict)).unwrap();
        assert_eq!(
            (c.enforcement, c.mode),
            (Enforcement::Require, Mode::ReadOnly)
        );
        assert!(c.ignored.is_empty());
        // The person's own flags still loosen it.
        let c = resolve(&args(&["--sandbox", "off"]), &config, Some(&strict)).unwrap();
        assert_eq!(c.enforcement, Enforcement::Off);
    }

    #[test]
    fn an_identity_value_that_is_not_a_choice_names_the_file_and_the_choices() {
        for (key, value) in [
            ("sandbox", "maybe"),
            ("sandbox_mode", "write"),
            ("allow_net", "sometimes"),
        ] {
            let e = resolve(&args(&[]), &Config::default(), Some(&own(&[(key, value)])))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(&format!("`{key}: {value}` is not one of")),
                "{e}"
            );
            assert!(e.contains("x.md"), "{e}");
        }
    }

    #[test]
    fn the_workspace_is_the_checkout_and_a_worktrees_git_dirs_are_found() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let repo = root.join("repo");
        std::fs::create_dir_all(repo.join("src/deep")).unwrap();
        assert_eq!(workspace(&repo.join("src/deep")), repo.join("src/deep"));
        std::fs::create_dir_all(repo.join(".git/worktrees/wt")).unwrap();
        assert_eq!(workspace(&repo.join("src/deep")), repo);
        assert!(git_dirs(&repo).is_empty(), "a .git directory is inside");
        let wt = root.join("wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(
            wt.join(".git"),
            format!("gitdir: {}\n", repo.join(".git/worktrees/wt").display()),
        )
        .unwrap();
        std::fs::write(repo.join(".git/worktrees/wt/commondir"), "../..\n").unwrap();
        assert_eq!(workspace(&wt), wt);
        assert_eq!(
            git_dirs(&wt),
            vec![repo.join(".git/worktrees/wt"), repo.join(".git")]
        );
    }

    #[test]
    fn denied_paths_inside_the_workspace_leave_the_deny_list() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().canonicalize().unwrap();
        let mut policy = Policy::new(Mode::WorkspaceWrite, ws.clone());
        policy.deny_read = vec![ws.join(".home/.ssh"), PathBuf::from("/elsewhere/.ssh")];
        keep_writable(&mut policy);
        assert_eq!(policy.deny_read, vec![PathBuf::from("/elsewhere/.ssh")]);
        // In read-only mode nothing is writable, so nothing leaves.
        let mut policy = Policy::new(Mode::ReadOnly, ws.clone());
        policy.deny_read = vec![ws.join(".home/.ssh")];
        keep_writable(&mut policy);
        assert_eq!(policy.deny_read, vec![ws.join(".home/.ssh")]);
    }

    fn loop_sandbox(ws: &Path) -> LoopSandbox {
        LoopSandbox::new(
            Prepared::new(&Policy::new(Mode::WorkspaceWrite, ws.to_path_buf())).unwrap(),
        )
    }

    fn result(output: &str, details: Value, is_error: bool) -> ToolResult {
        ToolResult {
            id: None,
            output: output.into(),
            details,
            is_error,
            error_code: None,
            images: Vec::new(),
        }
    }

    #[test]
    fn a_result_is_blocked_when_a_denial_shows_and_an_unattributed_one_only_when_it_failed() {
        let tmp = tempfile::tempdir().unwrap();
        let sb = loop_sandbox(tmp.path());
        let cwd = tmp.path();
        let write =
            json!({"sandbox": {"denied": [{"op": "write", "path": "/etc/x"}]}, "exit_code": 0});
        assert_eq!(
            sb.blocked(&result("", write, false), cwd).as_deref(),
            Some("write to `/etc/x`")
        );
        let unknown = |code: i64| json!({"sandbox": {"denied": [{"op": "unknown", "line": "x: Permission denied"}]}, "exit_code": code});
        assert_eq!(sb.blocked(&result("", unknown(0), false), cwd), None);
        assert!(sb.blocked(&result("", unknown(1), false), cwd).is_some());
        // Another tool's error is read against the policy.
        let denied =
            "cannot create a temporary file beside `/etc/hosts`: Permission denied (os error 13)";
        let b = sb.blocked(&result(denied, Value::Null, true), cwd).unwrap();
        assert!(b.contains("/etc/hosts"), "{b}");
        assert_eq!(sb.blocked(&result(denied, Value::Null, false), cwd), None);
        let own = format!("cannot write `{}/a`: Permission denied", cwd.display());
        assert_eq!(
            sb.blocked(&result(&own, Value::Null, true), cwd),
            None,
            "inside the workspace: the tool's own failure"
        );
        assert_eq!(
            sb.blocked(&result("no such file", Value::Null, true), cwd),
            None
        );
    }

    #[test]
    fn always_is_remembered_by_prefix_for_the_session() {
        let tmp = tempfile::tempdir().unwrap();
        let sb = loop_sandbox(tmp.path());
        let bash = |c: &str| json!({ "command": c });
        assert!(!sb.always_covers("bash", &bash("git push origin main")));
        sb.allow_always("bash", &bash("git push origin main"));
        assert!(sb.always_covers("bash", &bash("git push origin dev")));
        assert!(!sb.always_covers("bash", &bash("cd .. && git push")));
        assert!(!sb.always_covers("bash", &bash("git push && rm -rf /x")));
        assert!(!sb.always_covers("bash", &bash("git pull")));
        assert!(!sb.always_covers("bash", &bash("eval \"git push\"")));
        assert!(!sb.always_covers("write", &json!({})));
        sb.allow_always("write", &json!({"file_path": "/x"}));
        assert!(sb.always_covers("write", &json!({"file_path": "/y"})));
        assert!(!sb.always_covers("edit", &json!({})));
    }
}
