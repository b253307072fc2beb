//! The kernel side of the sandbox (`lib/sandbox` decides what it allows):
//! asking the kernel what it offers (the Landlock ABI, seccomp filters),
//! and the hook that confines a child between fork and exec. Everything
//! the hook needs (the Landlock ruleset's descriptor, the seccomp program)
//! is built before the fork; in the child it only calls prctl(2),
//! landlock_restrict_self(2) and seccomp(2), which allocate nothing and
//! are async-signal-safe. A failure there fails the spawn, so a child that
//! asked to be confined never runs unconfined.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::sync::Arc;

use nix::libc;

/// What confines a child: applied in the child, in this order, as
/// `no_new_privs` (always, so that a setuid binary cannot shed the rest),
/// the Landlock ruleset, the seccomp filter.
#[derive(Debug)]
pub struct Confinement {
    ruleset: Option<OwnedFd>,
    filter: Vec<libc::sock_filter>,
}

impl Confinement {
    /// A confinement by this Landlock ruleset (a descriptor from
    /// landlock_create_ruleset(2), rules added) and this classic BPF seccomp
    /// program (empty: no filter). Either may be absent: `no_new_privs`
    /// alone is still set.
    pub fn new(ruleset: Option<OwnedFd>, filter: Vec<libc::sock_filter>) -> Confinement {
        Confinement { ruleset, filter }
    }

    /// Whether a Landlock ruleset is applied.
    pub fn has_ruleset(&self) -> bool {
        self.ruleset.is_some()
    }

    /// Whether a seccomp filter is applied.
    pub fn has_filter(&self) -> bool {
        !self.filter.is_empty()
    }
}

/// Confines the child of this std command (see [`Confinement`]).
pub(crate) fn confine(cmd: &mut std::process::Command, c: Arc<Confinement>) {
    // SAFETY: the closure runs in the forked child before exec. It reads
    // only memory prepared before the fork (the descriptor number and the
    // filter's slice, kept alive by the Arc it owns) and calls prctl(2),
    // landlock_restrict_self(2) and seccomp(2), which are async-signal-safe
    // system calls that allocate nothing. `io::Error::last_os_error` only
    // reads errno.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if let Some(fd) = &c.ruleset
                && libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0) != 0
            {
                return Err(io::Error::last_os_error());
            }
            if !c.filter.is_empty() {
                let prog = libc::sock_fprog {
                    len: u16::try_from(c.filter.len()).unwrap_or(u16::MAX),
                    filter: c.filter.as_ptr().cast_mut(),
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
            Ok(())
        });
    }
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
