//! No orphans, even when ag itself is SIGKILLed: a process that starts
//! children through this module gets one small watchdog process, which
//! knows the process groups of those children and ends them (SIGTERM, then
//! SIGKILL after [`GRACE`]) as soon as its parent is gone, however it went.
//!
//! Why not `prctl(PR_SET_PDEATHSIG)` in each child: the death signal reaches
//! only the direct child, never the rest of its group. `sh -c 'sleep 300 &
//! sleep 300'` under a SIGKILLed ag-bash would lose its shell and keep both
//! sleeps; a gate, `--llm-cmd` or an MCP server started with `sh -c` has no
//! cleanup of its own to run on that signal. The signal also fires when the
//! *thread* that forked ends rather than the process (tokio's blocking
//! threads end after 10 s idle), and it exists on Linux only. A
//! pid namespace would take the whole tree down with its init, but needs
//! privileges or unprivileged user namespaces, which many CI machines lack.
//!
//! How the watchdog learns of its parent's end: it reads a pipe whose write
//! end only the parent holds (close-on-exec, so no exec'd child keeps it),
//! and the kernel closes that end when the parent dies, by any signal. Each
//! child announces its own pid (its group id) on that pipe from a
//! `pre_exec` hook, before exec and while it still holds a copy of the
//! write end, so there is no moment where a child runs unknown to the
//! watchdog, even if the parent is killed the instant after fork. The
//! parent withdraws a group once it has ended it ([`release`]); the
//! watchdog also drops, every second, groups that have no member left, so
//! that a recycled pid is never mistaken for one of ours.
//!
//! The watchdog is a plain `fork` without exec, so it costs one fork at the
//! first spawn and nothing at start-up; from the fork on it calls only
//! async-signal-safe functions (read, poll, kill, nanosleep, _exit, ...) and
//! never allocates, as a child of a multi-threaded process must. It leaves
//! the parent's session and group (a signal to the parent's group, a
//! closed terminal or Ctrl-C must not take it down with the parent), closes
//! every inherited descriptor (it must not hold the parent's stdout open),
//! and renames itself `ag-watchdog` in `ps` so that `pgrep -f` for the
//! parent's arguments does not find it. When the parent exits normally
//! (`exit(3)`, so also a return from main), an `atexit` handler ends the
//! watchdog and waits for it briefly: it must not be left to an init that
//! may never reap it (a container's PID 1 often does not), one zombie per
//! call of a tool. Children started with
//! [`super::Command::spawn_detached`] (background jobs, which outlive the
//! call on purpose) are not announced.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsFd, AsRawFd, IntoRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once, PoisonError, TryLockError};
use std::time::{Duration, Instant};

use nix::libc;
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{ForkResult, Pid, fork};

use super::cancel::set_nonblocking;
use super::group::GRACE;

/// Most groups the watchdog keeps at once; more are not watched (a process
/// of ag runs a handful at a time).
const MAX_GROUPS: usize = 1024;
/// How often the watchdog drops groups that have ended, while it has any.
const PRUNE_EVERY_MS: i32 = 1000;
/// How often the watchdog looks whether the groups it ended are gone.
const END_TICK: Duration = Duration::from_millis(20);
/// The name `ps` and `pgrep` show.
const NAME: &[u8] = b"ag-watchdog";
/// How long a normal exit waits for the watchdog to go. It goes at once
/// unless groups are still alive, which it then ends on its own.
const EXIT_WAIT: Duration = Duration::from_millis(500);

/// The watchdog of this process.
struct Watchdog {
    pid: Pid,
    /// Where groups are announced; non-blocking, so that a full pipe (a
    /// watchdog that died) never blocks a spawn.
    write: OwnedFd,
    /// Kept open so that announcing to a watchdog that died fails quietly
    /// (EAGAIN once full) instead of raising SIGPIPE in a child before exec.
    _read: OwnedFd,
    /// A pipe whose only writer is the watchdog: it reads as closed once
    /// the watchdog has exited, which a normal exit waits for.
    done: OwnedFd,
}

static WATCHDOG: Mutex<Option<Watchdog>> = Mutex::new(None);
/// Set once the process is exiting: no new watchdog is started then.
static EXITING: AtomicBool = AtomicBool::new(false);
static AT_EXIT: Once = Once::new();

/// The descriptor children announce themselves on, starting the watchdog
/// (again, if the one before died) when needed. `None` when no watchdog
/// can be started (no more processes allowed): children then run without
/// this protection rather than not at all.
fn announce_fd() -> Option<RawFd> {
    if EXITING.load(Ordering::SeqCst) {
        return None;
    }
    let mut state = WATCHDOG.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(w) = state.as_ref() {
        let alive = matches!(
            waitpid(w.pid, Some(WaitPidFlag::WNOHANG)),
            Ok(WaitStatus::StillAlive)
        );
        if alive {
            return Some(w.write.as_raw_fd());
        }
    }
    if let Some(old) = state.take() {
        // Its descriptors stay open for good: a child being forked right
        // now may hold their numbers, which must not be reused for another
        // file that it would then write into.
        let _ = old.write.into_raw_fd();
        let _ = old._read.into_raw_fd();
        let _ = old.done.into_raw_fd();
    }
    let w = start().ok()?;
    let fd = w.write.as_raw_fd();
    *state = Some(w);
    AT_EXIT.call_once(|| {
        // SAFETY: registers a handler that libc calls once at exit(3); it
        // does not unwind (see `end_at_exit`).
        unsafe { libc::atexit(end_at_exit) };
    });
    Some(fd)
}

/// At a normal exit: closes the announcing pipe, so that the watchdog sees
/// its end as at any other, and reaps it. Other threads may still run: the
/// pipe's descriptor number is taken over by `/dev/null` rather than closed,
/// so that a child they fork now cannot write into whatever file would
/// reuse the number.
extern "C" fn end_at_exit() {
    EXITING.store(true, Ordering::SeqCst);
    let state = match WATCHDOG.try_lock() {
        Ok(s) => s,
        Err(TryLockError::Poisoned(p)) => p.into_inner(),
        // A thread is starting a child right now; let the watchdog go on
        // its own.
        Err(TryLockError::WouldBlock) => return,
    };
    let Some(w) = state.as_ref() else { return };
    let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") else {
        return;
    };
    if !replace_fd(null.as_raw_fd(), w.write.as_raw_fd()) {
        return;
    }
    // Woken the moment the watchdog exits (no sleeping in steps: this is on
    // the path of every ag-bash call).
    let deadline = Instant::now() + EXIT_WAIT;
    let exited = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let ms = i32::try_from(left.as_millis()).unwrap_or(i32::MAX);
        let mut pfd = libc::pollfd {
            fd: w.done.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll(2) on one live pollfd.
        match unsafe { libc::poll(&mut pfd, 1, ms) } {
            n if n > 0 => break true,
            0 => break false,
            _ if nix::errno::Errno::last() == nix::errno::Errno::EINTR => {}
            _ => break false,
        }
    };
    // Having closed everything, it is a zombie now or a moment later; one
    // still busy ending groups is left to finish on its own.
    let flags = if exited {
        None
    } else {
        Some(WaitPidFlag::WNOHANG)
    };
    let _ = waitpid(w.pid, flags);
}

/// Makes `fd` another name of `by`, close-on-exec.
fn replace_fd(by: RawFd, fd: RawFd) -> bool {
    #[cfg(target_os = "linux")]
    // SAFETY: dup3(2) on descriptors this process owns.
    let ok = unsafe { libc::dup3(by, fd, libc::O_CLOEXEC) } == fd;
    #[cfg(not(target_os = "linux"))]
    // SAFETY: dup2(2) and fcntl(2) on descriptors this process owns.
    let ok = unsafe {
        libc::dup2(by, fd) == fd && libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) == 0
    };
    ok
}

/// Announces the child to the watchdog before it execs (std commands).
pub(crate) fn watch_std(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    if let Some(fd) = announce_fd() {
        // SAFETY: the hook runs in the forked child before exec and only
        // calls getpid(2) and write(2), both async-signal-safe; `fd` stays
        // open in the parent for the life of the process (see announce_fd).
        unsafe {
            cmd.pre_exec(move || {
                announce(fd, libc::getpid());
                Ok(())
            });
        }
    }
}

/// Announces the child to the watchdog before it execs (tokio commands).
pub(crate) fn watch_tokio(cmd: &mut tokio::process::Command) {
    if let Some(fd) = announce_fd() {
        // SAFETY: as in `watch_std`.
        unsafe {
            cmd.pre_exec(move || {
                announce(fd, libc::getpid());
                Ok(())
            });
        }
    }
}

/// Tells the watchdog that the group led by `pid` is over (ended, or kept
/// on purpose), so that it is not signalled when this process ends.
pub(crate) fn release(pid: u32) {
    let Ok(raw) = i32::try_from(pid) else {
        return;
    };
    let state = WATCHDOG.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(w) = state.as_ref() {
        announce(w.write.as_raw_fd(), -raw);
    }
}

/// One record: a group id, negated to withdraw it. Four bytes, written in
/// one write(2), so records from many children never interleave (pipe
/// writes up to PIPE_BUF are atomic).
fn announce(fd: RawFd, record: i32) {
    let bytes = record.to_ne_bytes();
    // SAFETY: write(2) from a live local buffer; async-signal-safe, so it
    // may run in a forked child. A failure (full pipe) is ignored.
    unsafe {
        libc::write(fd, bytes.as_ptr().cast(), bytes.len());
    }
}

fn start() -> io::Result<Watchdog> {
    let (read, write) = io::pipe()?;
    set_nonblocking(write.as_fd())?;
    let read = OwnedFd::from(read);
    let write = OwnedFd::from(write);
    let (done, done_write) = io::pipe()?;
    // Everything the child needs is found before fork: it may not allocate.
    let argv = argv_area();
    let max_fd = max_fd();
    // SAFETY: this process may have other threads; the child runs only
    // `watch`, which calls async-signal-safe functions, allocates nothing
    // and never returns (it ends with _exit).
    match unsafe { fork() }.map_err(io::Error::from)? {
        ForkResult::Child => watch(read.as_raw_fd(), done_write.as_raw_fd(), argv, max_fd),
        ForkResult::Parent { child } => Ok(Watchdog {
            pid: child,
            write,
            _read: read,
            done: done.into(),
        }),
    }
}

/// The range of memory holding this process's arguments, which
/// `/proc/PID/cmdline` shows (fields 48 and 49 of `/proc/self/stat`).
#[cfg(target_os = "linux")]
fn argv_area() -> Option<(usize, usize)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    parse_argv_area(&stat)
}

#[cfg(not(target_os = "linux"))]
fn argv_area() -> Option<(usize, usize)> {
    None
}

fn parse_argv_area(stat: &str) -> Option<(usize, usize)> {
    // After "(comm)" come the fields from the third on; comm may hold ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(48 - 3);
    let start: usize = fields.next()?.parse().ok()?;
    let end: usize = fields.next()?.parse().ok()?;
    (start > 0 && end > start && end - start < (1 << 20)).then_some((start, end))
}

/// Descriptors the child closes one by one where it cannot close a range.
fn max_fd() -> i32 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit(2) fills the live local struct.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return 1024;
    }
    i32::try_from(limit.rlim_cur.min(65_536)).unwrap_or(1024)
}

/// The watchdog itself, in the forked child. Only async-signal-safe calls
/// from here on.
fn watch(fd: RawFd, done: RawFd, argv: Option<(usize, usize)>, max_fd: i32) -> ! {
    detach([fd, done], argv, max_fd);
    let mut groups = Groups::new();
    let mut buf = [0u8; 512];
    let mut have = 0usize;
    let alive = |g: i32| {
        // SAFETY: kill(2) with signal 0 only probes; async-signal-safe.
        let r = unsafe { libc::kill(-g, 0) };
        r == 0 || nix::errno::Errno::last() != nix::errno::Errno::ESRCH
    };
    loop {
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let timeout = if groups.is_empty() {
            -1
        } else {
            PRUNE_EVERY_MS
        };
        // SAFETY: poll(2) on one live pollfd; async-signal-safe.
        let ready = unsafe { libc::poll(&mut pfd, 1, timeout) };
        if ready < 0 {
            if nix::errno::Errno::last() == nix::errno::Errno::EINTR {
                continue;
            }
            break;
        }
        if ready == 0 {
            groups.prune(alive);
            continue;
        }
        let Some(free) = buf.get_mut(have..) else {
            break;
        };
        // SAFETY: read(2) into the free part of a live local buffer.
        let n = unsafe { libc::read(fd, free.as_mut_ptr().cast(), free.len()) };
        if n == 0 {
            // Every write end is closed: the parent is gone.
            break;
        }
        if n < 0 {
            match nix::errno::Errno::last() {
                nix::errno::Errno::EINTR | nix::errno::Errno::EAGAIN => continue,
                _ => break,
            }
        }
        have += n as usize;
        let whole = have - have % 4;
        if let Some(records) = buf.get(..whole) {
            for r in records.chunks_exact(4) {
                let id = i32::from_ne_bytes([r[0], r[1], r[2], r[3]]);
                if id > 0 {
                    groups.add(id, alive);
                } else if id < 0 {
                    groups.remove(id.wrapping_neg());
                }
            }
        }
        buf.copy_within(whole..have, 0);
        have -= whole;
    }
    end_all(groups.as_slice(), alive);
    // SAFETY: _exit(2) ends the process without running the parent's
    // atexit handlers or destructors.
    unsafe { libc::_exit(0) }
}

/// Leaves the parent's session, signal set-up, descriptors, directory and
/// name behind.
fn detach(keep: [RawFd; 2], argv: Option<(usize, usize)>, max_fd: i32) {
    // SAFETY: every call below is a plain system call on this process's own
    // state (async-signal-safe); the argv area is this process's own
    // writable memory (the argument strings on the initial stack), which
    // nothing in this child reads afterwards.
    unsafe {
        libc::setsid();
        for sig in [
            libc::SIGINT,
            libc::SIGQUIT,
            libc::SIGHUP,
            libc::SIGPIPE,
            libc::SIGTSTP,
            libc::SIGTTIN,
            libc::SIGTTOU,
        ] {
            libc::signal(sig, libc::SIG_IGN);
        }
        // The parent's handlers (ag-bash's, tokio's) wrote to descriptors
        // that are closed here; a plain SIGTERM still ends the watchdog.
        for sig in [libc::SIGTERM, libc::SIGCHLD, libc::SIGWINCH] {
            libc::signal(sig, libc::SIG_DFL);
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        close_all_but(keep, max_fd);
        libc::chdir(c"/".as_ptr());
        #[cfg(target_os = "linux")]
        {
            let mut comm = [0u8; 16];
            comm[..NAME.len()].copy_from_slice(NAME);
            libc::prctl(libc::PR_SET_NAME, comm.as_ptr());
            if let Some((start, end)) = argv {
                let area = std::ptr::with_exposed_provenance_mut::<u8>(start);
                let len = end - start;
                std::ptr::write_bytes(area, 0, len);
                std::ptr::copy_nonoverlapping(NAME.as_ptr(), area, NAME.len().min(len - 1));
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = argv;
    }
}

/// Closes every descriptor but the two in `keep`.
fn close_all_but(keep: [RawFd; 2], max_fd: i32) {
    let (low, high) = (keep[0].min(keep[1]), keep[0].max(keep[1]));
    #[cfg(target_os = "linux")]
    {
        // The ranges between and around the two, each possibly empty.
        let ranges = [(0, low - 1), (low + 1, high - 1), (high + 1, i32::MAX)];
        let closed = ranges.iter().all(|&(first, last)| {
            // SAFETY: close_range(2) on this process's own table.
            first > last
                || unsafe { libc::syscall(libc::SYS_close_range, first as u32, last as u32, 0) }
                    == 0
        });
        if closed {
            return;
        }
    }
    for fd in 0..max_fd.max(high + 1) {
        if fd != low && fd != high {
            // SAFETY: close(2); a descriptor that is not open is EBADF.
            unsafe {
                libc::close(fd);
            }
        }
    }
}

/// SIGTERM (and SIGCONT, for stopped members) to every group, up to
/// [`GRACE`] for them to go, then SIGKILL to what is left.
fn end_all(groups: &[i32], alive: impl Fn(i32) -> bool) {
    let mut any = false;
    for &g in groups {
        // SAFETY: killpg(2) on a group this process's parent started.
        if unsafe { libc::kill(-g, libc::SIGTERM) } == 0 {
            any = true;
            // SAFETY: as above.
            unsafe { libc::kill(-g, libc::SIGCONT) };
        }
    }
    if !any {
        return;
    }
    let tick = libc::timespec {
        tv_sec: 0,
        tv_nsec: END_TICK.as_nanos() as libc::c_long,
    };
    let ticks = GRACE.as_millis() / END_TICK.as_millis();
    for _ in 0..ticks {
        if !groups.iter().any(|&g| alive(g)) {
            return;
        }
        // SAFETY: nanosleep(2) with a live timespec; async-signal-safe.
        unsafe { libc::nanosleep(&tick, std::ptr::null_mut()) };
    }
    for &g in groups {
        // SAFETY: as above.
        unsafe { libc::kill(-g, libc::SIGKILL) };
    }
}

/// The watched groups: a fixed array, as the watchdog may not allocate.
struct Groups {
    ids: [i32; MAX_GROUPS],
    len: usize,
}

impl Groups {
    fn new() -> Groups {
        Groups {
            ids: [0; MAX_GROUPS],
            len: 0,
        }
    }

    fn as_slice(&self) -> &[i32] {
        self.ids.get(..self.len).unwrap_or(&[])
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds a group; when full, ended groups make room first.
    fn add(&mut self, id: i32, alive: impl Fn(i32) -> bool) {
        if self.as_slice().contains(&id) {
            return;
        }
        if self.len == MAX_GROUPS {
            self.prune(alive);
        }
        if let Some(slot) = self.ids.get_mut(self.len) {
            *slot = id;
            self.len += 1;
        }
    }

    fn remove(&mut self, id: i32) {
        self.retain(|g| g != id);
    }

    /// Drops the groups that have no member left.
    fn prune(&mut self, alive: impl Fn(i32) -> bool) {
        self.retain(alive);
    }

    fn retain(&mut self, keep: impl Fn(i32) -> bool) {
        let mut kept = 0;
        for i in 0..self.len {
            let Some(&id) = self.ids.get(i) else { break };
            if keep(id) {
                if let Some(slot) = self.ids.get_mut(kept) {
                    *slot = id;
                }
                kept += 1;
            }
        }
        self.len = kept;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_added_once_removed_and_pruned() {
        let mut g = Groups::new();
        assert!(g.is_empty());
        g.add(10, |_| true);
        g.add(20, |_| true);
        g.add(10, |_| true);
        g.add(30, |_| true);
        assert_eq!(g.as_slice(), &[10, 20, 30]);
        g.remove(20);
        assert_eq!(g.as_slice(), &[10, 30]);
        g.remove(99);
        g.prune(|id| id != 10);
        assert_eq!(g.as_slice(), &[30]);
    }

    #[test]
    fn a_full_table_makes_room_from_ended_groups_only() {
        let mut g = Groups::new();
        for id in 1..=MAX_GROUPS as i32 {
            g.add(id, |_| true);
        }
        // All alive: the newcomer is not watched, nothing is lost.
        g.add(5000, |_| true);
        assert_eq!(g.as_slice().len(), MAX_GROUPS);
        assert!(!g.as_slice().contains(&5000));
        // Odd ones ended: room for it.
        g.add(5000, |id| id % 2 == 0 || id == 5000);
        assert_eq!(g.as_slice().len(), MAX_GROUPS / 2 + 1);
        assert_eq!(g.as_slice().last(), Some(&5000));
    }

    #[test]
    fn the_argument_area_is_read_from_proc_stat() {
        let mut fields: Vec<String> = (3..=52).map(|n| n.to_string()).collect();
        fields[48 - 3] = "140000".into();
        fields[49 - 3] = "140020".into();
        let stat = format!("123 (a (b) c) {}", fields.join(" "));
        assert_eq!(parse_argv_area(&stat), Some((140000, 140020)));
        assert_eq!(parse_argv_area("123 (x) S 1 2"), None);
        #[cfg(target_os = "linux")]
        {
            let (start, end) = argv_area().unwrap();
            assert!(end > start);
        }
    }

    #[test]
    fn the_watchdog_runs_under_its_own_name_in_its_own_session() {
        // Start a child so that this test process has a watchdog.
        let out = super::super::Command::new("true").run().unwrap();
        assert_eq!(out.code(), 0);
        let pid = WATCHDOG
            .lock()
            .unwrap()
            .as_ref()
            .map(|w| w.pid.as_raw() as u32)
            .unwrap();
        assert!(super::super::process_alive(pid));
        // It leaves the session and renames itself right after fork.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while super::super::session_of(pid) != Some(pid) {
            assert!(std::time::Instant::now() < deadline, "still in our session");
            std::thread::sleep(Duration::from_millis(20));
        }
        #[cfg(target_os = "linux")]
        loop {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap();
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
            if comm.trim() == "ag-watchdog" && cmdline.starts_with(b"ag-watchdog\0") {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "{comm} {cmdline:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
