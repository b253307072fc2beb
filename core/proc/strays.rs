//! Ending what a command left running outside its process group. A
//! grandchild can leave the group (`setsid`, a double fork) and so outlive
//! the command's clean-up; a confined one could then, after the call,
//! change what the call's checks have already looked at (plant a git hook
//! once the hooks guard is done). Such a process is adopted by this process
//! once its parents are gone ([`super::adopt_orphans`]), so it is one of
//! our children: [`end_adopted`] finds every child started since the
//! command (in the kernel's list of our children) that
//! no run is waiting for and that is neither the watchdog nor a background
//! job's supervisor, kills it and reaps it, round after round, since each
//! killed process hands its own children over to us.

use std::collections::HashSet;

use nix::sys::signal::{Signal, kill};
use nix::sys::wait::waitpid;
use nix::unistd::Pid;

/// Rounds of killing before giving up on a process tree that keeps
/// forking faster than it is killed.
const ROUNDS: usize = 64;

/// Kills and reaps the adopted children started since `since` (the
/// command's pid); returns how many. Does nothing unless this process
/// adopts orphans and no other run is in flight (whose own children must
/// not be taken).
pub fn end_adopted(since: u32) -> usize {
    let _gate = super::run::spawn_gate();
    if !super::run::adopting_idle() {
        return 0;
    }
    let me = std::process::id();
    let keep: HashSet<u32> = super::run::detached_pids()
        .into_iter()
        .chain(super::watchdog::pid())
        .collect();
    let mut ended = 0;
    for _ in 0..ROUNDS {
        let found = children_since(me, since, &keep);
        if found.is_empty() {
            break;
        }
        for &p in &found {
            let _ = kill(Pid::from_raw(p as i32), Signal::SIGKILL);
        }
        for &p in &found {
            // Our child: it stays a zombie (its pid unused) until reaped.
            let _ = waitpid(Pid::from_raw(p as i32), None);
        }
        ended += found.len();
    }
    ended
}

/// Children of `me` with a pid of at least `since`, other than `keep`:
/// from each thread's `/proc/self/task/TID/children`, where the kernel
/// has them, else by reading the parent of every newer process in `/proc`.
fn children_since(me: u32, since: u32, keep: &HashSet<u32>) -> Vec<u32> {
    let wanted = |pid: u32| pid >= since && pid != me && !keep.contains(&pid);
    if let Some(children) = task_children() {
        return children.into_iter().filter(|&p| wanted(p)).collect();
    }
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if wanted(pid) && parent_of(pid) == Some(me) {
            out.push(pid);
        }
    }
    out
}

/// This process's children, as its threads' `children` files list them
/// (an adopted orphan goes to one of the threads); `None` when the kernel
/// has no such files (built without `CONFIG_PROC_CHILDREN`).
fn task_children() -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        match std::fs::read_to_string(task.path().join("children")) {
            Ok(list) => out.extend(
                list.split_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            ),
            // A thread that ended since the listing left no children of
            // its own: they went to another thread.
            Err(_) if !task.path().exists() => {}
            Err(_) => return None,
        }
    }
    Some(out)
}

/// The parent pid from `/proc/PID/stat` (the field after the state, which
/// follows the command name's closing parenthesis).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}
