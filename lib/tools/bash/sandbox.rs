//! ag-bash and the sandbox. With `--sandbox auto|require`, ag-bash confines
//! each command itself (one [`Prepared`] per process, kept across calls,
//! with the workspace's private `$TMPDIR`, and a [`HooksGuard`] around each
//! call); run
//! confined by someone else (ag-loop), it finds the policy in
//! [`POLICY_ENV`]. Either way, permission errors in the output are read
//! against the policy, so that the result says "blocked by the sandbox:
//! write to `/etc/hosts`" and carries the denials in `details.sandbox`.
//!
//! The sandbox flags are the process's: a JSON call that sets them to
//! anything else is refused, so that a model cannot turn the sandbox off.

use crate::sandbox::ConfineCommand;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use clap::FromArgMatches;
use serde_json::{Value, json};

use super::{BashArgs, BashTool};
use crate::proc;
use crate::sandbox::{self, Denial, Enforcement, HookChange, HooksGuard, Op, Policy, Prepared};
use crate::tool_protocol::{Context, ToolError};

/// The sandbox settings of one call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct Flags {
    sandbox: Option<Enforcement>,
    mode: Option<sandbox::Mode>,
    write: Vec<PathBuf>,
    deny_read: Vec<PathBuf>,
    allow_net: bool,
}

impl Flags {
    pub(super) fn of(args: &BashArgs) -> Flags {
        Flags {
            sandbox: args.sandbox,
            mode: args.sandbox_mode,
            write: args.write.clone(),
            deny_read: args.deny_read.clone(),
            allow_net: args.allow_net,
        }
    }
}

/// The sandbox flags ag-bash was started with (parsed again from its own
/// command line, once).
fn process_flags() -> &'static Flags {
    static FLAGS: OnceLock<Flags> = OnceLock::new();
    FLAGS.get_or_init(|| {
        // Parsing the command line again costs a little; most runs have no
        // sandbox flag at all.
        let named = std::env::args_os().skip(1).any(|a| {
            let a = a.to_string_lossy();
            ["--sandbox", "--write", "--deny-read", "--allow-net"]
                .iter()
                .any(|f| a.starts_with(f))
        });
        if !named {
            return Flags::default();
        }
        let cmd = crate::tool_protocol::tool_command::<BashTool>().mut_args(|a| a.required(false));
        cmd.try_get_matches()
            .ok()
            .and_then(|m| BashArgs::from_arg_matches(&m).ok())
            .map(|a| Flags::of(&a))
            .unwrap_or_default()
    })
}

/// How one call runs with respect to the sandbox.
pub(super) struct Confined {
    /// The policy asked for, before preparing (for a background job, whose
    /// supervisor prepares its own).
    request: Option<Policy>,
    prepared: Option<std::sync::Arc<Prepared>>,
    policy: Option<Policy>,
    guard: Option<HooksGuard>,
}

/// Sets up the sandbox for a call: refuses sandbox settings the process
/// was not started with, prepares the confinement when asked.
pub(super) fn setup(ctx: &Context, args: &BashArgs) -> Result<Confined, ToolError> {
    let flags = Flags::of(args);
    if flags != *process_flags() {
        return Err(ToolError::new(
            "bash.sandbox_fixed",
            "the sandbox settings (`sandbox`, `sandbox_mode`, `write`, `deny_read`, `allow_net`) are \
fixed when ag-bash starts and cannot be changed by a call; call again without them",
        ));
    }
    let enforcement = flags.sandbox.unwrap_or(Enforcement::Off);
    if enforcement == Enforcement::Off {
        return Ok(Confined {
            request: None,
            prepared: None,
            policy: Policy::from_env(),
            guard: None,
        });
    }
    let workspace = ctx.root.clone().unwrap_or_else(|| ctx.cwd.clone());
    let mut policy = Policy::new(flags.mode.unwrap_or_default(), workspace);
    policy.write = flags.write.clone();
    policy.deny_read.extend(flags.deny_read.iter().cloned());
    policy.net = flags.allow_net;
    if policy.mode == sandbox::Mode::WorkspaceWrite {
        policy.tmpdir = Some(
            sandbox::workspace_tmpdir(&policy.workspace)
                .map_err(|e| ToolError::new(e.code(), e.to_string()))?,
        );
    }
    let prepared =
        prepared_for(&policy, enforcement).map_err(|e| ToolError::new(e.code(), e.to_string()))?;
    let guard = prepared
        .as_ref()
        .filter(|p| p.policy().mode == sandbox::Mode::WorkspaceWrite)
        .map(|p| HooksGuard::snapshot(&p.policy().workspace));
    Ok(Confined {
        request: prepared.as_ref().map(|_| policy.clone()),
        policy: prepared
            .as_ref()
            .map(|p| p.policy().clone())
            .or_else(Policy::from_env),
        prepared,
        guard,
    })
}

/// The confinement of `policy`, built once per process and kept for the
/// calls that follow with the same policy (an ag-bash reading many calls
/// on stdin pays the ruleset once, as ag-loop does); built again when the
/// policy differs or a missing deny-list path has appeared.
fn prepared_for(
    policy: &Policy,
    enforcement: Enforcement,
) -> Result<Option<std::sync::Arc<Prepared>>, sandbox::Error> {
    static LAST: std::sync::Mutex<Option<(Policy, std::sync::Arc<Prepared>)>> =
        std::sync::Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((p, prepared)) = &*last
        && p == policy
        && !prepared.outdated()
    {
        return Ok(Some(std::sync::Arc::clone(prepared)));
    }
    let Some(prepared) = sandbox::prepare(policy, enforcement)? else {
        return Ok(None);
    };
    let prepared = std::sync::Arc::new(prepared);
    *last = Some((policy.clone(), std::sync::Arc::clone(&prepared)));
    Ok(Some(prepared))
}

impl Confined {
    /// The policy a background job of this call runs under, if confined.
    pub(super) fn job_policy(&self) -> Option<Policy> {
        self.request.clone()
    }

    /// The command, confined when this call is.
    pub(super) fn apply(&self, cmd: proc::Command) -> proc::Command {
        match &self.prepared {
            Some(p) => cmd.sandbox(p),
            None => cmd,
        }
    }

    /// Whether the command ran confined (by ag-bash or around it).
    pub(super) fn confined(&self) -> bool {
        self.prepared.is_some() || self.policy.is_some()
    }

    /// After the run: ends what the command left running outside its group
    /// (else it could change the hooks after the guard has looked), undoes
    /// hook changes, reads the output for denials, and returns the lines
    /// for the text and the `details.sandbox` value, if there is anything
    /// to say.
    pub(super) fn finish(self, cwd: &Path, output: &str, pid: u32) -> Option<(String, Value)> {
        let strays = if self.confined() {
            proc::end_adopted(pid)
        } else {
            0
        };
        let hooks: Vec<HookChange> = self.guard.map(HooksGuard::restore).unwrap_or_default();
        let denied: Vec<Denial> = self
            .policy
            .as_ref()
            .map(|p| sandbox::explain_in(p, cwd, output))
            .unwrap_or_default();
        drop(self.prepared);
        if hooks.is_empty() && denied.is_empty() && strays == 0 {
            return None;
        }
        let mut text = String::new();
        if strays > 0 {
            text.push_str(&format!(
                "note: {strays} process(es) the command left running outside its process group (setsid, \
a double fork) were stopped: in the sandbox nothing outlives the call. Start servers and watchers \
with background=true.\n"
            ));
        }
        let attributed: Vec<String> = denied
            .iter()
            .filter(|d| d.op != Op::Unknown)
            .map(Denial::describe)
            .collect();
        if !attributed.is_empty() {
            text.push_str(&format!(
                "blocked by the sandbox: {}. The command runs confined: it may write only in the workspace{}; \
do without, or ask the user.\n",
                attributed.join("; "),
                if self.policy.as_ref().is_some_and(|p| p.net) {
                    ""
                } else {
                    " and has no network"
                }
            ));
        }
        if denied.iter().any(|d| d.op == Op::Unknown) {
            text.push_str(
                "note: the command ran in the sandbox, and a permission error in its output names no \
path the sandbox refuses; it may be the sandbox or the command's own failure.\n",
            );
        }
        for h in &hooks {
            text.push_str(&format!(
                "blocked by the sandbox: `{}` was {} by the command and {}; git hooks and command \
settings in .git/config cannot be changed from the sandbox.\n",
                h.path.display(),
                h.change,
                if h.undone {
                    "has been put back"
                } else {
                    "could NOT be put back"
                }
            ));
        }
        let mut details = json!({ "denied": denied });
        if !hooks.is_empty() {
            details["hooks"] = json!(hooks);
        }
        if strays > 0 {
            details["stopped_strays"] = json!(strays);
        }
        Some((text, details))
    }
}

/// The variable that hands a background job's policy (JSON) to its
/// supervisor.
pub(super) const JOB_SANDBOX_ENV: &str = "AG_BASH_JOB_SANDBOX";

/// For the supervisor of a background job: the confinement its command
/// runs under, from [`JOB_SANDBOX_ENV`], and the guard of the workspace's
/// hooks for the job's lifetime.
pub(super) fn for_job() -> Result<Option<(Prepared, Option<HooksGuard>)>, String> {
    let Some(json) = std::env::var_os(JOB_SANDBOX_ENV) else {
        return Ok(None);
    };
    let policy: Policy = serde_json::from_str(&json.to_string_lossy())
        .map_err(|e| format!("cannot read the sandbox policy of the job: {e}"))?;
    let prepared = Prepared::new(&policy).map_err(|e| e.to_string())?;
    let guard = (prepared.policy().mode == sandbox::Mode::WorkspaceWrite)
        .then(|| HooksGuard::snapshot(&prepared.policy().workspace));
    Ok(Some((prepared, guard)))
}
