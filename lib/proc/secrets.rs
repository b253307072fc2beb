//! Environment variables that no child of this process inherits: the
//! provider keys that ag-loop and ag-mcp hold for their own model calls.
//! A tool call, a gate or an after-hook never needs them, and a model that
//! asks `bash` for `env` must not be handed them. The list is set once at
//! start-up and applied by every spawn in this module's parent, so no
//! caller can forget it.

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
