//! The Landlock ruleset of a policy. Landlock only grants, and a rule on a
//! directory covers everything beneath it, so "all but the deny list"
//! becomes rules on the siblings along the way down to each denied path:
//! to keep `~/.ssh` out of a read grant on `/`, read is granted on every
//! entry of `/` but `/root` (or `/home`), on every entry of that but the
//! home directory, and so on ([`split`]), enumerated once when the ruleset
//! is built. Listing directories stays allowed everywhere (`ReadDir` on
//! `/`), so the names in a denied directory can be seen, never the
//! contents. The same split keeps denied paths out of the writable
//! directories. Symlinks among the siblings get no rule of their own:
//! access through one is judged at its target.

use std::fs::{File, OpenOptions};
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, Ruleset, RulesetAttr,
    RulesetCreatedAttr,
};
use nix::libc;

use super::{Error, Mode, Policy};

/// The devices a confined command may write (`>/dev/null`, a terminal).
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// The ruleset's descriptor, rules added, or `None` where the kernel has
/// no Landlock (the caller decided that running unconfined is fine).
pub(super) fn ruleset(policy: &Policy, kernel_abi: i32) -> Result<Option<OwnedFd>, Error> {
    // ABI 4 is the newest whose rights the policy uses: TCP rules. ABI 5's
    // device ioctl right is left unhandled on purpose: opening a device
    // for writing is what matters, and terminals need their ioctls.
    let abi = ABI::V4;
    let read = AccessFs::from_read(abi);
    let write = AccessFs::from_write(abi);
    let ll = |e: landlock::RulesetError| Error::Landlock(e.to_string());
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(read | write)
        .map_err(ll)?;
    if !policy.net && kernel_abi >= 4 {
        ruleset = ruleset
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(ll)?;
    }
    let mut created = Some(ruleset.create().map_err(ll)?);
    let deny: Vec<PathBuf> = policy
        .deny_read
        .iter()
        .map(|p| canonical_beyond(p))
        .collect();

    let mut add = |path: &Path, access: BitFlags<AccessFs>| -> Result<(), Error> {
        let Some((fd, is_dir)) = open_path(path) else {
            return Ok(());
        };
        let access = if is_dir {
            access
        } else {
            access & AccessFs::from_file(abi)
        };
        if access.is_empty() {
            return Ok(());
        }
        let ruleset = created
            .take()
            .ok_or_else(|| Error::Landlock("a rule failed earlier".to_string()))?;
        created = Some(
            ruleset
                .add_rule(PathBeneath::new(fd, access))
                .map_err(|e| Error::Landlock(format!("`{}`: {e}", path.display())))?,
        );
        Ok(())
    };

    add(Path::new("/"), AccessFs::ReadDir.into())?;
    let mut roots = Vec::new();
    split(Path::new("/"), &deny, &mut roots);
    for r in &roots {
        add(r, read)?;
    }
    if policy.mode == Mode::WorkspaceWrite {
        for w in policy.writable() {
            let mut roots = Vec::new();
            split(&w, &deny, &mut roots);
            for r in &roots {
                add(r, read | write)?;
            }
        }
    }
    for d in DEVICES {
        let p = Path::new(d);
        if !deny.iter().any(|x| p.starts_with(x)) {
            add(
                p,
                AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate,
            )?;
        }
    }
    Ok(created.and_then(Into::into))
}

/// The paths that together cover `root` except what lies at or beneath
/// any of `exclude`: `root` itself when nothing is excluded beneath it,
/// else the same split of each of its entries. Symlinks are left out (see
/// the file's comment), as are directories that cannot be listed.
pub(super) fn split(root: &Path, exclude: &[PathBuf], out: &mut Vec<PathBuf>) {
    let inside: Vec<PathBuf> = exclude
        .iter()
        .filter(|e| e.starts_with(root))
        .cloned()
        .collect();
    if inside.is_empty() {
        out.push(root.to_path_buf());
        return;
    }
    if inside.iter().any(|e| e == root) {
        return;
    }
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_symlink()) {
            continue;
        }
        split(&root.join(entry.file_name()), &inside, out);
    }
}

/// The path with its longest existing prefix resolved (symlinks and all),
/// and the rest appended as given, so that a denied path that does not
/// exist yet is still matched where it would appear.
pub(super) fn canonical_beyond(p: &Path) -> PathBuf {
    let p = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    };
    let mut base = p.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(c) = std::fs::canonicalize(base) {
            let mut out = c;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (base.parent(), base.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                base = parent;
            }
            _ => return p,
        }
    }
}

/// The path opened for a rule (`O_PATH`, without following a last
/// symlink), and whether it is a directory; `None` when it does not exist
/// or is a symlink.
fn open_path(p: &Path) -> Option<(File, bool)> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(p)
        .ok()?;
    let meta = f.metadata().ok()?;
    if meta.file_type().is_symlink() {
        return None;
    }
    Some((f, meta.is_dir()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_leaves_out_the_denied_path_and_keeps_its_siblings() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        for d in ["a/secret/inner", "a/open", "b"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("a/file"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("a/secret"), root.join("a/link")).unwrap();
        let mut out = Vec::new();
        split(&root, &[root.join("a/secret")], &mut out);
        out.sort();
        assert_eq!(
            out,
            vec![root.join("a/file"), root.join("a/open"), root.join("b")]
        );
    }

    #[test]
    fn a_missing_denied_path_is_matched_where_it_would_be() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        std::os::unix::fs::symlink(&root, root.join("alias")).unwrap();
        assert_eq!(
            canonical_beyond(&root.join("alias/not/yet")),
            root.join("not/yet")
        );
    }
}
