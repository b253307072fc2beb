//! The kernel side of the sandbox (`lib/sandbox` decides what it allows):
//! asking the kernel what it offers (the Landlock ABI, seccomp filters),
//! and starting children confined.
//!
//! no_new_privs, a Landlock domain and a seccomp filter all belong to the
//! thread that sets them, and a child inherits them from the thread that
//! creates it. So a confinement gets a thread of its own, which confines
//! itself once and then only starts children ([`Confinement::spawn`]).
//! The usual way, a `pre_exec` hook between fork and exec, forbids
//! posix_spawn: std then forks the whole parent, which costs ag-loop (a
//! large, many-threaded process) about a millisecond per tool call; from
//! the confined thread, std's posix_spawn (vfork and exec) still works. If
//! the thread cannot confine itself, no child is started: a child that
//! asked to be confined never runs unconfined.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};

use nix::libc;

/// What confines a child: in this order, `no_new_privs` (always, so that a
/// setuid binary cannot shed the rest), the Landlock ruleset, the seccomp
/// filter.
#[derive(Debug)]
pub struct Confinement {
    ruleset: Option<OwnedFd>,
    filter: Vec<libc::sock_filter>,
    /// The confined thread, started on first use; why it could not be.
    spawner: OnceLock<Result<Spawner, String>>,
}

/// A job for the confined thread.
type Job = Box<dyn FnOnce() + Send>;

/// The confined thread's queue.
struct Spawner {
    jobs: Mutex<mpsc::Sender<Job>>,
}

impl std::fmt::Debug for Spawner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Spawner")
    }
}

impl Confinement {
    /// A confinement by this Landlock ruleset (a descriptor from
    /// landlock_create_ruleset(2), rules added) and this classic BPF seccomp
    /// program (empty: no filter). Either may be absent: `no_new_privs`
    /// alone is still set.
    pub fn new(ruleset: Option<OwnedFd>, filter: Vec<libc::sock_filter>) -> Confinement {
        Confinement {
            ruleset,
            filter,
            spawner: OnceLock::new(),
        }
    }

    /// Whether a Landlock ruleset is applied.
    pub fn has_ruleset(&self) -> bool {
        self.ruleset.is_some()
    }

    /// Whether a seccomp filter is applied.
    pub fn has_filter(&self) -> bool {
        !self.filter.is_empty()
    }

    /// Runs `start` (which starts a child) on the confined thread, so that
    /// the child is confined from its first instruction, and waits for it.
    /// The thread is one per confinement and ends with it.
    pub(crate) fn spawn<T: Send + 'static>(
        &self,
        start: impl FnOnce() -> io::Result<T> + Send + 'static,
    ) -> io::Result<T> {
        let spawner = self
            .spawner
            .get_or_init(|| {
                Spawner::start(self.ruleset.as_ref().map(AsRawFd::as_raw_fd), &self.filter)
            })
            .as_ref()
            .map_err(|e| io::Error::other(e.clone()))?;
        let (tx, rx) = mpsc::sync_channel(1);
        let job: Job = Box::new(move || {
            let _ = tx.send(start());
        });
        spawner
            .jobs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .send(job)
            .map_err(|_| io::Error::other("the sandbox's spawning thread has ended"))?;
        rx.recv()
            .map_err(|_| io::Error::other("the sandbox's spawning thread has ended"))?
    }
}

impl Spawner {
    /// Starts the thread and waits until it has confined itself (the
    /// ruleset's descriptor is only borrowed until then).
    fn start(ruleset: Option<RawFd>, filter: &[libc::sock_filter]) -> Result<Spawner, String> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let (ready, confined) = mpsc::sync_channel(1);
        let filter = filter.to_vec();
        std::thread::Builder::new()
            .name("ag-sandbox-spawn".to_string())
            .spawn(move || {
                let r = confine_this_thread(ruleset, &filter);
                let ok = r.is_ok();
                let _ = ready.send(r);
                if ok {
                    for job in queue {
                        job();
                    }
                }
            })
            .map_err(|e| format!("cannot start the sandbox's spawning thread: {e}"))?;
        match confined.recv() {
            Ok(Ok(())) => Ok(Spawner {
                jobs: Mutex::new(jobs),
            }),
            Ok(Err(e)) => Err(format!("cannot confine the sandbox's spawning thread: {e}")),
            Err(_) => Err("the sandbox's spawning thread ended at once".to_string()),
        }
    }
}

/// Confines the calling thread (and what it starts from now on): prctl(2),
/// landlock_restrict_self(2), seccomp(2), none with the flag that would
/// reach the process's other threads.
fn confine_this_thread(ruleset: Option<RawFd>, filter: &[libc::sock_filter]) -> io::Result<()> {
    // SAFETY: plain system calls on this thread. The ruleset descriptor is
    // kept open by the caller until this returns; the filter's slice lives
    // across the call, which copies it into the kernel.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(io::Error::last_os_error());
        }
        if let Some(fd) = ruleset
            && libc::syscall(libc::SYS_landlock_restrict_self, fd, 0) != 0
        {
            return Err(io::Error::last_os_error());
        }
        if !filter.is_empty() {
            let prog = libc::sock_fprog {
                len: u16::try_from(filter.len()).unwrap_or(u16::MAX),
                filter: filter.as_ptr().cast_mut(),
            };
            let prog_ptr: *const libc::sock_fprog = &prog;
            if libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                0,
                prog_ptr,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

/// The Landlock ABI version this kernel offers: 0 when it has none (not
/// built in, or not enabled at boot).
pub fn landlock_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute and size 0 and the VERSION flag, the
    // call only returns a number; it reads and writes no memory.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    i32::try_from(v).unwrap_or(0).max(0)
}

/// Adds a path rule to a Landlock ruleset: `access` (the kernel's
/// `LANDLOCK_ACCESS_FS_*` bits) on `parent` and all beneath it. The
/// `landlock` crate's own call first asks fstat(2) whether `parent` is a
/// file; a ruleset of a hundred entries, built per call, is cheaper
/// without, since whoever listed the directory already knows.
pub fn landlock_add_path_rule(
    ruleset: BorrowedFd<'_>,
    parent: BorrowedFd<'_>,
    access: u64,
) -> io::Result<()> {
    const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;
    // The kernel's `struct landlock_path_beneath_attr`, which is packed.
    #[repr(C, packed)]
    struct PathBeneathAttr {
        allowed_access: u64,
        parent_fd: i32,
    }
    let attr = PathBeneathAttr {
        allowed_access: access,
        parent_fd: parent.as_raw_fd(),
    };
    let ptr: *const PathBeneathAttr = &attr;
    // SAFETY: the kernel reads the attribute, which lives on this stack for
    // the call, and the two descriptors, which the borrows keep open.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset.as_raw_fd(),
            LANDLOCK_RULE_PATH_BENEATH,
            ptr,
            0u32,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Whether this kernel accepts seccomp filters that return an errno.
pub fn seccomp_filter_available() -> bool {
    let action: u32 = libc::SECCOMP_RET_ERRNO;
    let ptr: *const u32 = &action;
    // SAFETY: SECCOMP_GET_ACTION_AVAIL reads the one u32 it is pointed at,
    // which lives on this stack for the call.
    let r = unsafe { libc::syscall(libc::SYS_seccomp, libc::SECCOMP_GET_ACTION_AVAIL, 0, ptr) };
    r == 0
}
