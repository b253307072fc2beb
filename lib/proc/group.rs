//! Async children in their own process group (for ag-loop's tool calls and
//! `--llm-cmd`), and ending a whole group: SIGTERM, a grace period, SIGKILL.
//! Every child is also marked for this process's watchdog (see
//! `watchdog.rs`), which ends it should this process die first.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// Time a group gets between SIGTERM and SIGKILL.
pub const GRACE: Duration = Duration::from_secs(2);

/// A tokio command in a new process group, stdin null, killed on drop, and
/// ended by the watchdog if this process dies before it.
pub fn tokio_command(
    program: impl AsRef<std::ffi::OsStr>,
    args: &[&str],
    cwd: Option<&Path>,
) -> tokio::process::Command {
    let mut c = tokio::process::Command::new(program);
    c.args(args)
        .process_group(0)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    if let Some(dir) = cwd {
        c.current_dir(dir);
    }
    super::secrets::apply_tokio(&mut c);
    super::watchdog::watch_tokio(&mut c);
    c
}

/// Ends the process group led by `child`: SIGTERM first when `gently`,
/// then SIGKILL once the grace period is over (or at once), and reaps it.
pub async fn kill_group(child: &mut tokio::process::Child, gently: bool) {
    let Some(pgid) = child
        .id()
        .and_then(|p| i32::try_from(p).ok())
        .map(Pid::from_raw)
    else {
        // Already reaped; nothing of its own is left to signal.
        return;
    };
    if gently && killpg(pgid, Signal::SIGTERM).is_ok() {
        let deadline = tokio::time::Instant::now() + GRACE;
        while tokio::time::Instant::now() < deadline {
            let leader_gone = matches!(child.try_wait(), Ok(Some(_)));
            // Signal 0 probes whether any member of the group is left.
            if leader_gone && killpg(pgid, None).is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    let _ = killpg(pgid, Signal::SIGKILL);
    let _ = child.wait().await;
}

/// Kills whatever is left of a finished child's process group (processes
/// it started in the background), so that no tool call leaves orphans.
pub fn reap_group(pid: Option<u32>) {
    if let Some(pgid) = pid.and_then(|p| i32::try_from(p).ok()).map(Pid::from_raw) {
        let _ = killpg(pgid, Signal::SIGKILL);
    }
}
