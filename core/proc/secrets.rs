//! Environment variables that no child of this process inherits: the
//! provider keys that ag-loop and ag-mcp hold for their own model calls.
//! A tool call, a gate or an after-hook never needs them, and a model that
//! asks `bash` for `env` must not be handed them. The list is set once at
//! start-up and applied by every spawn in this module's parent, so no
//! caller can forget it. A child that is not handed a key could still read
//! it where the kernel shows this process's environment to every process of
//! the same user, `/proc/PID/environ`; [`hide_own_environment`] closes that.

use std::ffi::OsString;
use std::sync::RwLock;

static WITHHELD: RwLock<Vec<OsString>> = RwLock::new(Vec::new());

/// From now on, children started through [`crate::proc`] do not inherit
/// these variables (in addition to any withheld before). A spawn that needs
/// one (such as `--llm-cmd`, which makes the model call itself) sets it
/// explicitly with `env`.
pub fn withhold_env<I, S>(names: I)
where
    I: IntoIterator<Item = S>,
    S: Into<OsString>,
{
    let mut list = WITHHELD.write().unwrap_or_else(|e| e.into_inner());
    for name in names {
        let name = name.into();
        if !name.is_empty() && !list.contains(&name) {
            list.push(name);
        }
    }
}

/// Makes this process's `/proc/PID` entries that show its memory
/// (`environ`, `mem`, `maps`) readable only by root, as ssh-agent does:
/// otherwise a tool it runs, even confined by the sandbox, reads the
/// provider keys in `/proc/PPID/environ`. The children it starts are not
/// affected (the flag is reset when they exec). The cost: no core dump and
/// no debugger attach without privileges, for this process only.
///
/// Root (and so a tool run as root, as in many containers) reads past that
/// flag; for it, the environment block the kernel shows is cleared too: every
/// variable is first copied to memory of this process's own (where
/// `std::env` keeps finding it), then the block's bytes are zeroed. The
/// sandbox refuses `/proc/PID/mem`, so the copies stay out of reach of a
/// confined tool. Call it at the very start of `main`, before any thread
/// exists: it sets every variable anew.
pub fn hide_own_environment() -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    clear_environment_block()?;
    nix::sys::prctl::set_dumpable(false).map_err(std::io::Error::from)
}

/// [`hide_own_environment`], for a binary that runs tools: when it cannot,
/// `bin` warns and goes on (the keys are then only as safe as before).
pub fn hide_own_environment_or_warn(bin: &str) {
    if let Err(e) = hide_own_environment() {
        crate::cli::warn(
            bin,
            &format!("cannot hide the provider keys in /proc from the tools: {e}"),
        );
    }
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn clear_environment_block() -> std::io::Result<()> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    let Some((start, end)) = super::watchdog::parse_area(&stat, 50) else {
        return Err(std::io::Error::other(
            "/proc/self/stat does not say where the environment is",
        ));
    };
    for (name, value) in std::env::vars_os() {
        // SAFETY: the caller runs this before any other thread exists, so
        // nothing reads the environment while it changes.
        unsafe { std::env::set_var(&name, &value) };
    }
    // Entries still in use (a malformed one that vars_os skipped) are kept;
    // every other entry of the block is zeroed.
    let mut in_use = Vec::new();
    // SAFETY: `environ` is the process's NULL-terminated array of pointers
    // to NUL-terminated strings, read while no other thread exists.
    unsafe {
        let mut p = nix::libc::environ;
        while !p.is_null() && !(*p).is_null() {
            in_use.push(*p as usize);
            p = p.add(1);
        }
    }
    let mut entry = start;
    while entry < end {
        // SAFETY: [start, end) is this process's environment block, mapped
        // and writable (it lies on the initial stack); the loop stays in it.
        unsafe {
            let mut len = 0;
            while entry + len < end && *((entry + len) as *const u8) != 0 {
                len += 1;
            }
            if !in_use.contains(&entry) {
                std::ptr::write_bytes(entry as *mut u8, 0, len);
            }
            entry += len + 1;
        }
    }
    Ok(())
}

/// The variables withheld so far.
pub fn withheld_env() -> Vec<OsString> {
    WITHHELD.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Removes the withheld variables from a command about to be spawned.
pub(super) fn apply_std(c: &mut std::process::Command) {
    for name in WITHHELD.read().unwrap_or_else(|e| e.into_inner()).iter() {
        c.env_remove(name);
    }
}
