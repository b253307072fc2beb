//! Process trees: starting a child as the leader of its own group (or
//! session), signalling the whole group, telling whether any of it is
//! left, and the few single-process checks background jobs need.
//! A group id stays valid while any member lives; once all are gone the
//! number could in theory be reused, which is why every check here runs
//! right after the group was seen alive.

use std::os::unix::process::CommandExt;
use std::process::Command;

use nix::errno::Errno;
use nix::sys::signal::{Signal, kill, killpg};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

/// Makes the child the leader of a new process group (no unsafe needed).
pub(crate) fn new_group(cmd: &mut Command) {
    cmd.process_group(0);
}

/// Makes the child the leader of a new session, and so of a new group with
/// no controlling terminal: a command that opens `/dev/tty` (ssh or sudo
/// asking for a password) fails at once instead of stopping on SIGTTIN.
#[allow(unsafe_code)]
pub(crate) fn new_session(cmd: &mut Command) {
    // SAFETY: the closure runs in the forked child before exec and only
    // calls setsid(2), which is async-signal-safe and allocates nothing.
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid().map_err(std::io::Error::from)?;
            Ok(())
        });
    }
}

/// Asks the whole group to end: SIGTERM, then SIGCONT so that a stopped
/// member sees it (what `timeout(1)` does too).
pub(crate) fn terminate(pgid: Pid) {
    let _ = killpg(pgid, Signal::SIGTERM);
    let _ = killpg(pgid, Signal::SIGCONT);
}

/// Ends the whole group at once.
pub(crate) fn kill_group(pgid: Pid) {
    let _ = killpg(pgid, Signal::SIGKILL);
}

/// Whether any process of the group is left. Members this process adopted
/// (see [`super::adopt_orphans`]) are reaped first, so zombies do not count.
/// Call only once the group leader itself has been waited for.
pub(crate) fn group_alive(pgid: Pid) -> bool {
    reap_group(pgid);
    match killpg(pgid, None) {
        Ok(()) => true,
        Err(Errno::ESRCH) => false,
        // EPERM: members exist that we may not signal.
        Err(_) => true,
    }
}

fn reap_group(pgid: Pid) {
    let any_member = Pid::from_raw(-pgid.as_raw());
    while let Ok(st) = waitpid(any_member, Some(WaitPidFlag::WNOHANG)) {
        if st == WaitStatus::StillAlive {
            break;
        }
    }
}

/// Whether a process exists and has not yet exited (a zombie counts as
/// gone on Linux, where that can be told).
pub fn process_alive(pid: u32) -> bool {
    let Ok(raw) = i32::try_from(pid) else {
        return false;
    };
    match kill(Pid::from_raw(raw), None) {
        Ok(()) | Err(Errno::EPERM) => !is_zombie(pid),
        Err(_) => false,
    }
}

#[cfg(target_os = "linux")]
fn is_zombie(pid: u32) -> bool {
    // /proc/PID/stat: "pid (comm) S ...", and comm may hold spaces or ')'.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next())
            .is_some_and(|state| state == "Z" || state == "X"),
        Err(_) => false,
    }
}

#[cfg(not(target_os = "linux"))]
fn is_zombie(_pid: u32) -> bool {
    false
}

/// The session a process belongs to, if it exists.
pub fn session_of(pid: u32) -> Option<u32> {
    let raw = i32::try_from(pid).ok()?;
    nix::unistd::getsid(Some(Pid::from_raw(raw)))
        .ok()
        .and_then(|p| u32::try_from(p.as_raw()).ok())
}

/// Sends a signal to one process. False when it does not exist.
pub fn signal_process(pid: u32, signal: Signal) -> bool {
    i32::try_from(pid).is_ok_and(|raw| kill(Pid::from_raw(raw), signal).is_ok())
}

/// Sends a signal to a whole process group. False when it has no member.
pub fn signal_group(pgid: u32, signal: Signal) -> bool {
    i32::try_from(pgid).is_ok_and(|raw| killpg(Pid::from_raw(raw), signal).is_ok())
}

/// Whether any process of a group is left, zombies aside where that can be
/// told (Linux): for groups this process did not start.
pub fn foreign_group_alive(pgid: u32) -> bool {
    let Ok(raw) = i32::try_from(pgid) else {
        return false;
    };
    match killpg(Pid::from_raw(raw), None) {
        Ok(()) | Err(Errno::EPERM) => group_has_live_member(pgid),
        Err(_) => false,
    }
}

#[cfg(target_os = "linux")]
fn group_has_live_member(pgid: u32) -> bool {
    // Fields after "(comm)": state, ppid, pgrp.
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return true;
    };
    dir.flatten().any(|entry| {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
            return false;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        let Some(i) = stat.rfind(')') else {
            return false;
        };
        let mut fields = stat[i + 1..].split_whitespace();
        let state = fields.next();
        let pgrp = fields.nth(1).and_then(|g| g.parse::<u32>().ok());
        pgrp == Some(pgid) && !matches!(state, Some("Z" | "X"))
    })
}

#[cfg(not(target_os = "linux"))]
fn group_has_live_member(_pgid: u32) -> bool {
    true
}
