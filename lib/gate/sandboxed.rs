//! What ag-gate's policy passes when the call runs inside ag-loop's OS
//! sandbox (the request's `sandbox`): the findings whose harm the kernel
//! stops or keeps inside the workspace are not asked about, the others are
//! asked as without a sandbox. Also the second question a sandboxed call
//! can raise: it ran, the sandbox blocked it, may it run again outside?
//!
//! The table, by danger and sandbox mode (net: the `--allow-net` flag):
//!
//! | danger | workspace-write | read-only |
//! | --- | --- | --- |
//! | recursive delete, write or delete outside the working directory, disk tool, crontab, git hooks and config | passed | passed |
//! | `curl ... \| sh` | passed without net | passed without net |
//! | git reset --hard, clean -f, discarded changes, stash drop, branch -D, history loss | asked | passed |
//! | force push, remote delete, sudo and friends, chmod -R 777, chown -R, shutdown, kill all, fork bomb, unreadable code | asked | asked |
//!
//! Why each row: Landlock denies writes and deletes outside the writable
//! set, and every write in read-only mode; devices and the crontab spool
//! are outside it (and `no_new_privs` disarms crontab's setgid bit); what
//! a call changes in git's hooks and command-running settings is undone
//! after it (`sandbox::HooksGuard`), before git could run it. With
//! the network off a download cannot happen. Landlock does not cover
//! chmod, chown, signals or Unix sockets (a push can go through an ssh
//! control socket, `run0` through D-Bus), and inside the workspace a git
//! command that drops work is allowed by the kernel, so those stay asked.

use super::Danger;
use crate::protocol::{GateSandbox, SandboxMode};

/// True when, inside `sandbox`, the kernel stops what `danger` warns of,
/// or keeps it inside the workspace.
pub fn passes(danger: Danger, sandbox: &GateSandbox) -> bool {
    use Danger::*;
    let read_only = sandbox.mode == SandboxMode::ReadOnly;
    match danger {
        RecursiveDelete | WriteOutside | DeleteOutside | DiskTool | Crontab => true,
        PipeToShell => !sandbox.net,
        GitHooks => true,
        HardReset | GitClean | DiscardChanges | StashDrop | BranchDelete | HistoryLoss => read_only,
        ForcePush | RemoteDelete | Privilege | WorldWritable | RecursiveChown | Shutdown
        | KillAll | ForkBomb | PipedScript | Unchecked | TooDeep => false,
        // The page's own rights, which no sandbox of ag's reaches.
        PageScript => false,
    }
}

/// The question for a person when a confined call was blocked: what the
/// sandbox denied, and what the classifier found in the call (asked about
/// again, since outside the sandbox nothing stops it).
pub fn escalation_reason(blocked: &str, findings: &[String]) -> String {
    let mut reason = format!("blocked by the sandbox: {blocked}; run it again outside the sandbox");
    if !findings.is_empty() {
        reason.push_str(&format!(" (it also has: {})", findings.join("; ")));
    }
    reason
}

/// What the model reads when nobody may approve running a blocked call
/// outside the sandbox.
pub fn stays_confined(blocked: &str, why: &str) -> String {
    format!(
        "blocked by the sandbox: {blocked}. It was not run outside the sandbox: {why}. Work inside the workspace, or ask the user to run it."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sandbox(mode: SandboxMode, net: bool) -> GateSandbox {
        GateSandbox {
            mode,
            workspace: "/w".into(),
            net,
            blocked: None,
        }
    }

    #[test]
    fn the_table_by_mode_and_network() {
        use Danger::*;
        let ww = sandbox(SandboxMode::WorkspaceWrite, false);
        let ww_net = sandbox(SandboxMode::WorkspaceWrite, true);
        let ro = sandbox(SandboxMode::ReadOnly, false);
        let ro_net = sandbox(SandboxMode::ReadOnly, true);
        let every = [&ww, &ww_net, &ro, &ro_net];
        for d in [
            RecursiveDelete,
            WriteOutside,
            DeleteOutside,
            DiskTool,
            Crontab,
            GitHooks,
        ] {
            assert!(every.iter().all(|s| passes(d, s)), "{d:?}");
        }
        assert!(passes(PipeToShell, &ww) && passes(PipeToShell, &ro));
        assert!(!passes(PipeToShell, &ww_net) && !passes(PipeToShell, &ro_net));
        for d in [
            HardReset,
            GitClean,
            DiscardChanges,
            StashDrop,
            BranchDelete,
            HistoryLoss,
        ] {
            assert!(!passes(d, &ww) && !passes(d, &ww_net), "{d:?}");
            assert!(passes(d, &ro) && passes(d, &ro_net), "{d:?}");
        }
        for d in [
            ForcePush,
            RemoteDelete,
            Privilege,
            WorldWritable,
            RecursiveChown,
            Shutdown,
            KillAll,
            ForkBomb,
            PipedScript,
            Unchecked,
            TooDeep,
        ] {
            assert!(every.iter().all(|s| !passes(d, s)), "{d:?}");
        }
    }

    #[test]
    fn the_escalation_question_names_the_denial_and_the_findings() {
        assert_eq!(
            escalation_reason("write to `/etc/hosts`", &[]),
            "blocked by the sandbox: write to `/etc/hosts`; run it again outside the sandbox"
        );
        let r = escalation_reason("write to `/x`", &["recursive delete: `rm -rf /x`".into()]);
        assert!(
            r.ends_with("(it also has: recursive delete: `rm -rf /x`)"),
            "{r}"
        );
    }
}
