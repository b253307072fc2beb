//! Where there is no `/proc` to find a dead parent's children in (not
//! Linux), no watchdog: children are marked with nothing and a process
//! that is SIGKILLed can leave its children running.

/// The variable a watchdog looks for (see `watchdog.rs`).
pub(crate) const VAR: &str = "AG_WATCHDOG";

/// Nothing to mark.
pub(crate) fn watch_std(_cmd: &mut std::process::Command) {}

/// No watchdog here.
pub(crate) fn pid() -> Option<u32> {
    None
}
