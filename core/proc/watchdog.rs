//! No orphans, even when ag itself is SIGKILLed: a process that starts
//! children through this module gets one small watchdog process, which
//! ends those children, and everything they started, as soon as its
//! parent is gone without having said goodbye (SIGKILL, the OOM killer, a
//! CI runner's time limit): SIGTERM, then SIGKILL after [`GRACE`].
//!
//! Why not `prctl(PR_SET_PDEATHSIG)` in each child: the death signal reaches
//! only the direct child, never the rest of its group. `sh -c 'sleep 300 &
//! sleep 300'` under a SIGKILLed ag-bash would lose its shell and keep both
//! sleeps; a gate, `--llm-cmd` or an MCP server started with `sh -c` has no
//! clean-up of its own to run on that signal. The signal also fires when
//! the *thread* that forked ends rather than the process (tokio's blocking
//! threads end after 10 s idle). And like any code run between fork and
//! exec (a `pre_exec` hook), it forbids `posix_spawn`: std then forks the
//! whole parent, which costs about a millisecond more per child on this
//! kind of machine (a virtual one), on every tool call. A pid namespace
//! would take the whole tree down with its init, but needs privileges or
//! unprivileged user namespaces, which many CI machines lack.
//!
//! How the watchdog knows the parent's end: it reads a pipe whose write end
//! only the parent holds (close-on-exec, so no exec'd child keeps it); the
//! kernel closes it when the parent dies, by any means. A normal exit writes
//! a goodbye first (an `atexit` handler), and then the watchdog just goes:
//! the parent has cleaned up already, and what it left running on purpose
//! stays.
//!
//! How it finds the children: every child started here gets `AG_WATCHDOG`
//! set in its environment to a value unique to this process (its pid and
//! the time), which its own children inherit. After an unannounced end the
//! watchdog scans `/proc/*/environ` for that exact entry and signals each
//! process carrying it and, when it leads one, its process group (which
//! also reaches members that cleared their environment). So the fork-free
//! `posix_spawn` stays, no child has to be announced (and no pid can be
//! mistaken for a recycled one), and a grandchild that left its group
//! (`setsid`) is found too. A process that was started by a tool with the
//! variable removed is left alone, as are background jobs (started with
//! [`super::Command::spawn_detached`] and without the variable), which
//! outlive the call on purpose. A child of ag that starts children of its
//! own (ag-bash under ag-loop) sets its own value for them and has its own
//! watchdog: each level ends the level below.
//!
//! The watchdog is a plain `fork` without exec, once per process at its
//! first spawn. From the fork on it calls only async-signal-safe functions
//! (read, open, getdents64, kill, getpgid, nanosleep, _exit) and never
//! allocates, as a child of a multi-threaded process must. It leaves the
//! parent's session (a signal to the parent's group, a closed terminal or
//! Ctrl-C must not take it down with the parent), closes every inherited
//! descriptor (it must not hold the parent's stdout open), and renames
//! itself `ag-watchdog` in `ps` so that `pgrep -f` for the parent's
//! arguments does not find it. The `atexit` handler also reaps it: left to
//! an init that never reaps (a container's PID 1 often does not), it would
//! be one zombie per tool call. This needs `/proc`: elsewhere (not Linux)
//! `watchdog_none.rs` stands in, and no watchdog is started.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once, PoisonError};
use std::time::{Duration, Instant};

use nix::libc;
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{ForkResult, Pid, fork};

use super::GRACE;

/// The variable that marks the processes a watchdog ends.
pub(crate) const VAR: &str = "AG_WATCHDOG";
/// The byte a normal exit writes before closing the pipe.
const GOODBYE: u8 = b'.';
/// How often the watchdog looks whether what it signalled is gone.
const END_TICK: Duration = Duration::from_millis(20);
/// Rounds of SIGKILL, for processes forked while the first rounds ran.
const KILL_ROUNDS: usize = 5;
/// The name `ps` and `pgrep` show.
const NAME: &[u8] = b"ag-watchdog";
/// How long a normal exit waits for the watchdog to go (it goes at once).
const EXIT_WAIT: Duration = Duration::from_millis(500);

/// The watchdog of this process.
struct Watchdog {
    pid: Pid,
    /// The value of [`VAR`] in this process's children.
    token: String,
    /// The pipe the watchdog watches; written to only at a normal exit.
    write: OwnedFd,
    /// Kept open so that the goodbye to a watchdog that died cannot fail
    /// with SIGPIPE.
    _read: OwnedFd,
    /// A pipe whose only writer is the watchdog: it reads as closed once
    /// the watchdog has exited, which a normal exit waits for.
    done: OwnedFd,
}

static WATCHDOG: Mutex<Option<Watchdog>> = Mutex::new(None);
/// Set once the process is exiting: no new watchdog is started then.
static EXITING: AtomicBool = AtomicBool::new(false);
static AT_EXIT: Once = Once::new();

/// The value of [`VAR`] for a child about to start, starting the watchdog
/// (again, if the one before died) when needed. `None` when no watchdog
/// can be started (no more processes allowed): children then
/// run without this protection rather than not at all.
fn token() -> Option<String> {
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
            return Some(w.token.clone());
        }
    }
    // One that died is replaced (what carries its mark is unguarded now).
    drop(state.take());
    let w = start().ok()?;
    let token = w.token.clone();
    *state = Some(w);
    AT_EXIT.call_once(|| {
        // SAFETY: registers a handler that libc calls once at exit(3); it
        // does not unwind (see `goodbye`).
        unsafe { libc::atexit(goodbye) };
    });
    Some(token)
}

/// The watchdog's pid, when one runs.
pub(crate) fn pid() -> Option<u32> {
    let state = WATCHDOG.lock().unwrap_or_else(PoisonError::into_inner);
    state
        .as_ref()
        .and_then(|w| u32::try_from(w.pid.as_raw()).ok())
}

/// Marks a std command's child (and so its descendants) for the watchdog.
pub(crate) fn watch_std(cmd: &mut std::process::Command) {
    if let Some(t) = token() {
        cmd.env(VAR, t);
    }
}

/// At a normal exit: says goodbye, so that the watchdog leaves what is
/// still running alone and exits, and reaps it. The pipe's write end is
/// closed by making its number another name of `/dev/null` (the number
/// stays owned by the `Watchdog`, which statics never drop).
extern "C" fn goodbye() {
    EXITING.store(true, Ordering::SeqCst);
    // Another thread may hold the lock for a moment (starting a child).
    let state = WATCHDOG.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(w) = state.as_ref() else { return };
    let byte = [GOODBYE];
    // SAFETY: write(2) of a live local byte to our own pipe.
    if unsafe { libc::write(w.write.as_raw_fd(), byte.as_ptr().cast(), 1) } != 1 {
        return;
    }
    let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") else {
        return;
    };
    // SAFETY: dup3(2) on descriptors this process owns.
    if unsafe { libc::dup3(null.as_raw_fd(), w.write.as_raw_fd(), libc::O_CLOEXEC) } < 0 {
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
    // Having closed everything, it is a zombie now or a moment later.
    let flags = if exited {
        None
    } else {
        Some(WaitPidFlag::WNOHANG)
    };
    let _ = waitpid(w.pid, flags);
}

fn start() -> io::Result<Watchdog> {
    let (read, write) = io::pipe()?;
    let (done, done_write) = io::pipe()?;
    let (read, write, done) = (
        OwnedFd::from(read),
        OwnedFd::from(write),
        OwnedFd::from(done),
    );
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let token = format!("{}.{}", std::process::id(), since_epoch.as_nanos());
    // Everything the child needs is made before fork: it may not allocate.
    let entry = format!("{VAR}={token}").into_bytes();
    let argv = argv_area();
    let max_fd = max_fd();
    // SAFETY: this process may have other threads; the child runs only
    // `watch`, which calls async-signal-safe functions, allocates nothing
    // and never returns (it ends with _exit).
    match unsafe { fork() }.map_err(io::Error::from)? {
        ForkResult::Child => watch(
            read.as_raw_fd(),
            done_write.as_raw_fd(),
            &entry,
            argv,
            max_fd,
        ),
        ForkResult::Parent { child } => Ok(Watchdog {
            pid: child,
            token,
            write,
            _read: read,
            done,
        }),
    }
}

/// The range of memory holding this process's arguments, which
/// `/proc/PID/cmdline` shows (fields 48 and 49 of `/proc/self/stat`).
fn argv_area() -> Option<(usize, usize)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    parse_argv_area(&stat)
}

fn parse_argv_area(stat: &str) -> Option<(usize, usize)> {
    parse_area(stat, 48)
}

/// The range of memory given by fields `first` and `first + 1` of a
/// `/proc/PID/stat` line (48: the arguments, 50: the environment).
pub(super) fn parse_area(stat: &str, first: usize) -> Option<(usize, usize)> {
    // After "(comm)" come the fields from the third on; comm may hold ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(first - 3);
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
fn watch(fd: RawFd, done: RawFd, entry: &[u8], argv: Option<(usize, usize)>, max_fd: i32) -> ! {
    detach([fd, done], argv, max_fd);
    let mut buf = [0u8; 64];
    let mut said_goodbye = false;
    loop {
        // SAFETY: read(2) into a live local buffer.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n > 0 {
            let got = buf.get(..n as usize).unwrap_or(&[]);
            said_goodbye |= got.contains(&GOODBYE);
            continue;
        }
        if n < 0 && nix::errno::Errno::last() == nix::errno::Errno::EINTR {
            continue;
        }
        // End of file (every write end closed: the parent is gone), or an
        // error that leaves nothing else to wait for.
        break;
    }
    if !said_goodbye {
        end_all(entry);
    }
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
}

/// Closes every descriptor but the two in `keep`.
fn close_all_but(keep: [RawFd; 2], max_fd: i32) {
    let (low, high) = (keep[0].min(keep[1]), keep[0].max(keep[1]));
    // The ranges between and around the two, each possibly empty.
    let ranges = [(0, low - 1), (low + 1, high - 1), (high + 1, i32::MAX)];
    let closed = ranges.iter().all(|&(first, last)| {
        // SAFETY: close_range(2) on this process's own table.
        first > last
            || unsafe { libc::syscall(libc::SYS_close_range, first as u32, last as u32, 0) } == 0
    });
    if closed {
        return;
    }
    // Kernels before 5.9 have no close_range.
    for fd in 0..max_fd.max(high + 1) {
        if fd != low && fd != high {
            // SAFETY: close(2); a descriptor that is not open is EBADF.
            unsafe {
                libc::close(fd);
            }
        }
    }
}

/// SIGTERM (and SIGCONT, for stopped ones) to every marked process and the
/// group it leads, up to [`GRACE`] for them to go, then SIGKILL to what is
/// left, a few rounds so that what they fork meanwhile goes too.
fn end_all(entry: &[u8]) {
    if signal_marked(entry, libc::SIGTERM) == 0 {
        return;
    }
    let tick = libc::timespec {
        tv_sec: 0,
        tv_nsec: END_TICK.as_nanos() as libc::c_long,
    };
    let ticks = GRACE.as_millis() / END_TICK.as_millis();
    for _ in 0..ticks {
        // SAFETY: nanosleep(2) with a live timespec.
        unsafe { libc::nanosleep(&tick, std::ptr::null_mut()) };
        // A zombie's environment cannot be read: the dead do not count.
        if signal_marked(entry, 0) == 0 {
            return;
        }
    }
    for _ in 0..KILL_ROUNDS {
        if signal_marked(entry, libc::SIGKILL) == 0 {
            return;
        }
        // SAFETY: as above.
        unsafe { libc::nanosleep(&tick, std::ptr::null_mut()) };
    }
}

/// Sends `sig` (0: none, only count) to every live process whose
/// environment holds `entry`, and to the group of each that leads one.
/// Returns how many there were.
fn signal_marked(entry: &[u8], sig: libc::c_int) -> usize {
    let mut count = 0;
    for_each_process(|pid| {
        if !environ_holds(pid, entry) {
            return;
        }
        count += 1;
        if sig == 0 {
            return;
        }
        // SAFETY: kill(2) and getpgid(2) on a process ours started.
        unsafe {
            let leads = libc::getpgid(pid) == pid;
            libc::kill(pid, sig);
            if leads {
                libc::kill(-pid, sig);
            }
            if sig == libc::SIGTERM {
                libc::kill(pid, libc::SIGCONT);
                if leads {
                    libc::kill(-pid, libc::SIGCONT);
                }
            }
        }
    });
    count
}

/// Calls `f` with the pid of every process in `/proc` but this one, with
/// getdents64(2) into a buffer on the stack (readdir may allocate).
fn for_each_process(mut f: impl FnMut(libc::pid_t)) {
    // SAFETY: open(2) of a constant path.
    let dir = unsafe {
        libc::open(
            c"/proc".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if dir < 0 {
        return;
    }
    // SAFETY: getpid(2).
    let me = unsafe { libc::getpid() };
    let mut buf = [0u8; 8192];
    loop {
        // SAFETY: getdents64(2) into a live local buffer of that length.
        let n = unsafe { libc::syscall(libc::SYS_getdents64, dir, buf.as_mut_ptr(), buf.len()) };
        let Some(filled) = usize::try_from(n).ok().filter(|&n| n > 0) else {
            break;
        };
        for name in dirent_names(buf.get(..filled).unwrap_or(&[])) {
            if let Some(pid) = parse_pid(name)
                && pid != me
            {
                f(pid);
            }
        }
    }
    // SAFETY: closes the descriptor opened above.
    unsafe { libc::close(dir) };
}

/// The names in a getdents64(2) buffer: records of d_ino (8 bytes), d_off
/// (8), d_reclen (2), d_type (1), then the name, NUL-terminated.
fn dirent_names(buf: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = buf;
    std::iter::from_fn(move || {
        let len = rest
            .get(16..18)
            .map(|b| u16::from_ne_bytes([b[0], b[1]]) as usize)?;
        let record = rest.get(..len).filter(|_| len > 19)?;
        rest = rest.get(len..).unwrap_or(&[]);
        let name = record.get(19..).unwrap_or(&[]);
        let end = name.iter().position(|b| *b == 0).unwrap_or(name.len());
        Some(name.get(..end).unwrap_or(&[]))
    })
}

fn parse_pid(name: &[u8]) -> Option<libc::pid_t> {
    if name.is_empty() || name.len() > 9 || !name.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = name.iter().fold(0i32, |n, d| n * 10 + i32::from(d - b'0'));
    (n > 0).then_some(n)
}

/// Whether `/proc/PID/environ` holds `entry` as one whole entry.
fn environ_holds(pid: libc::pid_t, entry: &[u8]) -> bool {
    // "/proc/" + up to 10 digits + "/environ" + NUL.
    let mut path = [0u8; 32];
    let mut len = 0;
    let mut put = |bytes: &[u8]| {
        for &b in bytes {
            if let Some(slot) = path.get_mut(len) {
                *slot = b;
                len += 1;
            }
        }
    };
    put(b"/proc/");
    let mut digits = [0u8; 10];
    let mut n = pid;
    let mut i = digits.len();
    while n > 0 && i > 0 {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    put(digits.get(i..).unwrap_or(&[]));
    put(b"/environ\0");
    // SAFETY: open(2) of a NUL-terminated path in a live local buffer.
    let fd = unsafe { libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return false;
    }
    let mut matcher = EntryMatcher::new(entry);
    let mut buf = [0u8; 4096];
    let mut found = false;
    loop {
        // SAFETY: read(2) into a live local buffer.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        let Some(got) = usize::try_from(n).ok().filter(|&n| n > 0) else {
            break;
        };
        if matcher.feed(buf.get(..got).unwrap_or(&[])) {
            found = true;
            break;
        }
    }
    // SAFETY: closes the descriptor opened above.
    unsafe { libc::close(fd) };
    found || matcher.finish()
}

/// Finds one whole NUL-separated entry in a stream fed in pieces.
struct EntryMatcher<'a> {
    entry: &'a [u8],
    /// Bytes of the current entry that matched so far; `None` once it
    /// differs.
    matched: Option<usize>,
}

impl<'a> EntryMatcher<'a> {
    fn new(entry: &'a [u8]) -> EntryMatcher<'a> {
        EntryMatcher {
            entry,
            matched: Some(0),
        }
    }

    /// True as soon as an entry equal to `entry` has ended.
    fn feed(&mut self, bytes: &[u8]) -> bool {
        for &b in bytes {
            if b == 0 {
                if self.finish() {
                    return true;
                }
                self.matched = Some(0);
            } else {
                self.matched = self
                    .matched
                    .filter(|&m| self.entry.get(m) == Some(&b))
                    .map(|m| m + 1);
            }
        }
        false
    }

    /// Whether the entry being read, if the stream ends here, is the one.
    fn finish(&self) -> bool {
        self.matched == Some(self.entry.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_match_whole_across_pieces() {
        let env = b"A=1\0AG_WATCHDOG=12.34\0AG_WATCHDOG=12.345\0B=2\0";
        for split in 0..env.len() {
            let mut m = EntryMatcher::new(b"AG_WATCHDOG=12.34");
            let (a, b) = env.split_at(split);
            assert!(m.feed(a) || m.feed(b), "split at {split}");
        }
        let mut m = EntryMatcher::new(b"AG_WATCHDOG=12.3");
        assert!(!m.feed(env) && !m.finish());
        let mut m = EntryMatcher::new(b"WATCHDOG=12.34");
        assert!(!m.feed(env) && !m.finish());
        // The last entry may lack its NUL.
        let mut m = EntryMatcher::new(b"B=2");
        assert!(!m.feed(b"A=1\0B=2") && m.finish());
    }

    #[test]
    fn dirent_records_and_pids() {
        let mut buf = Vec::new();
        for name in [&b"."[..], b"self", b"4242", b"17"] {
            let reclen = (19 + name.len() + 1).next_multiple_of(8);
            let mut rec = vec![0u8; reclen];
            rec[16..18].copy_from_slice(&(reclen as u16).to_ne_bytes());
            rec[19..19 + name.len()].copy_from_slice(name);
            buf.extend(rec);
        }
        let names: Vec<&[u8]> = dirent_names(&buf).collect();
        assert_eq!(names, [&b"."[..], b"self", b"4242", b"17"]);
        let pids: Vec<_> = names.into_iter().filter_map(parse_pid).collect();
        assert_eq!(pids, [4242, 17]);
        assert_eq!(parse_pid(b"0"), None);
        assert_eq!(parse_pid(b"99999999999"), None);
    }

    #[test]
    fn marked_processes_are_found_in_proc() {
        let entry = format!("{VAR}=test.{}", std::process::id());
        let mut marked = std::process::Command::new("sleep")
            .arg("60")
            .env(VAR, entry.split_once('=').unwrap().1)
            .spawn()
            .unwrap();
        let mut plain = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let pid = marked.id() as i32;
        // A vfork-style spawn returns while exec still sets up the new
        // environment, which reads as empty until then.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !environ_holds(pid, entry.as_bytes()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(environ_holds(pid, entry.as_bytes()));
        assert!(!environ_holds(plain.id() as i32, entry.as_bytes()));
        let mut seen = Vec::new();
        for_each_process(|p| seen.push(p));
        assert!(seen.contains(&pid) && seen.contains(&(plain.id() as i32)));
        assert!(!seen.contains(&(std::process::id() as i32)));
        assert_eq!(signal_marked(entry.as_bytes(), 0), 1);
        assert_eq!(signal_marked(entry.as_bytes(), libc::SIGKILL), 1);
        marked.wait().unwrap();
        // Reaped: nothing carries the entry any more.
        assert_eq!(signal_marked(entry.as_bytes(), 0), 0);
        plain.kill().unwrap();
        plain.wait().unwrap();
    }

    #[test]
    fn the_argument_area_is_read_from_proc_stat() {
        let mut fields: Vec<String> = (3..=52).map(|n| n.to_string()).collect();
        fields[48 - 3] = "140000".into();
        fields[49 - 3] = "140020".into();
        let stat = format!("123 (a (b) c) {}", fields.join(" "));
        assert_eq!(parse_argv_area(&stat), Some((140000, 140020)));
        assert_eq!(parse_argv_area("123 (x) S 1 2"), None);
        let (start, end) = argv_area().unwrap();
        assert!(end > start);
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
