//! The Landlock ruleset of a policy. Landlock only grants, and a rule on a
//! directory covers everything beneath it, so "all but the deny list"
//! becomes rules on the siblings along the way down to each denied path:
//! to keep `~/.ssh` out of a read grant on `/`, read is granted on every
//! entry of `/` but `/root` (or `/home`), on every entry of that but the
//! home directory, and so on ([`walk`]), enumerated once when the ruleset
//! is built. Listing directories stays allowed everywhere (`ReadDir` on
//! `/`), so the names in a denied directory can be seen, never the
//! contents. The same split keeps denied paths out of the writable
//! directories. Symlinks among the siblings get no rule of their own:
//! access through one is judged at its target.

use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, Ruleset, RulesetAttr,
};
use nix::dir::{Dir, Type};
use nix::fcntl::{OFlag, open, openat};
use nix::sys::stat::{FileStat, Mode as FileMode, SFlag, fstat, fstatat};

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

/// A policy's ruleset, and the deny-list paths it leaves out because they
/// did not exist: a secret that is not there cannot be read, and leaving
/// it out spares splitting its parent (with a missing `~/.config/gcloud`,
/// every entry of `~/.config`). Whoever keeps a ruleset across calls
/// builds it again once one of them appears ([`super::Prepared::refreshed`]).
pub(super) struct Built {
    /// The ruleset's descriptor, or `None` where the kernel has no Landlock
    /// (the caller decided that running unconfined is fine).
    pub(super) ruleset: Option<OwnedFd>,
    /// The deny-list paths that did not exist, as given.
    pub(super) absent: Vec<PathBuf>,
}

/// Builds the ruleset of `policy` on a kernel of Landlock ABI `kernel_abi`.
pub(super) fn ruleset(policy: &Policy, kernel_abi: i32) -> Result<Built, Error> {
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
    let (deny, absent) = resolve(&policy.deny_read);
    let fd: Option<OwnedFd> = ruleset.create().map_err(ll)?.into();
    let Some(fd) = fd else {
        return Ok(Built {
            ruleset: None,
            absent,
        });
    };
    // Best effort handled what this kernel knows of those rights; a rule
    // may grant no other.
    let handled = (read | write) & AccessFs::from_all(ABI::from(kernel_abi));
    let rules = Rules {
        ruleset: fd,
        handled,
        file: AccessFs::from_file(abi),
    };
    let deny: Vec<&Path> = deny.iter().map(PathBuf::as_path).collect();
    rules.add_path(Path::new("/"), AccessFs::ReadDir.into())?;
    walk(Path::new("/"), &deny, &mut |p, fd, dir| {
        rules.add(p, fd, read, dir)
    })?;
    if policy.mode == Mode::WorkspaceWrite {
        for w in policy.writable() {
            walk(&w, &deny, &mut |p, fd, dir| {
                rules.add(p, fd, read | write, dir)
            })?;
        }
    }
    for d in DEVICES {
        let p = Path::new(d);
        if !deny.iter().any(|x| p.starts_with(x)) {
            rules.add_path(
                p,
                AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate,
            )?;
        }
    }
    Ok(Built {
        ruleset: Some(rules.ruleset),
        absent,
    })
}

/// The deny list resolved: the paths that exist, canonical, and those
/// that do not, as given.
fn resolve(deny: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut present = Vec::new();
    let mut absent = Vec::new();
    for p in deny {
        match std::fs::canonicalize(p) {
            Ok(c) => present.push(c),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                absent.push(p.clone());
            }
            // Unreadable, say: it may well exist, so keep it out.
            Err(_) => present.push(canonical_beyond(p)),
        }
    }
    (present, absent)
}

/// A ruleset being filled.
struct Rules {
    ruleset: OwnedFd,
    handled: BitFlags<AccessFs>,
    file: BitFlags<AccessFs>,
}

impl Rules {
    /// Grants `access` on what `fd` (an `O_PATH` descriptor of `path`)
    /// opens; a file gets only the rights that apply to files.
    fn add(
        &self,
        path: &Path,
        fd: BorrowedFd<'_>,
        access: BitFlags<AccessFs>,
        is_dir: bool,
    ) -> Result<(), Error> {
        let mut access = access & self.handled;
        if !is_dir {
            access &= self.file;
        }
        if access.is_empty() {
            return Ok(());
        }
        match crate::proc::landlock_add_path_rule(self.ruleset.as_fd(), fd, access.bits()) {
            Ok(()) => Ok(()),
            // Listed as a directory, replaced by a file since: the kernel
            // refuses directory rights on it.
            Err(e) if is_dir && e.raw_os_error() == Some(nix::libc::EINVAL) => {
                self.add(path, fd, access, false)
            }
            Err(e) => Err(Error::Landlock(format!("`{}`: {e}", path.display()))),
        }
    }

    /// Grants `access` on the path, unless it is missing or a symlink.
    fn add_path(&self, path: &Path, access: BitFlags<AccessFs>) -> Result<(), Error> {
        let Some((fd, is_dir)) = open_path(path) else {
            return Ok(());
        };
        self.add(path, fd.as_fd(), access, is_dir)
    }
}

/// Calls `rule` with what together covers `root` except what lies at or
/// beneath any of `exclude`: `root` itself when nothing is excluded
/// beneath it, else the same of each of its entries (an `O_PATH`
/// descriptor, opened relative to the listed directory, and whether it is
/// a directory as the listing says). Symlinks are left out (see the
/// file's comment), as are directories that cannot be listed and entries
/// that vanish meanwhile.
fn walk(
    root: &Path,
    exclude: &[&Path],
    rule: &mut dyn FnMut(&Path, BorrowedFd<'_>, bool) -> Result<(), Error>,
) -> Result<(), Error> {
    let inside: Vec<&Path> = exclude
        .iter()
        .copied()
        .filter(|e| e.starts_with(root))
        .collect();
    if inside.is_empty() {
        return match open_path(root) {
            Some((fd, is_dir)) => rule(root, fd.as_fd(), is_dir),
            None => Ok(()),
        };
    }
    if inside.contains(&root) {
        return Ok(());
    }
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let Ok(dir_fd) = open(root, flags, FileMode::empty()) else {
        return Ok(());
    };
    let Ok(mut entries) = dir_fd
        .try_clone()
        .map_err(|_| ())
        .and_then(|fd| Dir::from_fd(fd).map_err(|_| ()))
    else {
        return Ok(());
    };
    for entry in entries.iter().flatten() {
        let name = entry.file_name();
        if matches!(name.to_bytes(), b"." | b"..") {
            continue;
        }
        let kind = match entry.file_type() {
            Some(t) => t,
            None => match fstatat(&dir_fd, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW) {
                Ok(st) => kind_of(&st),
                Err(_) => continue,
            },
        };
        if kind == Type::Symlink {
            continue;
        }
        let child = root.join(OsStr::from_bytes(name.to_bytes()));
        if inside.iter().any(|e| e.starts_with(&child)) {
            walk(&child, &inside, rule)?;
            continue;
        }
        let Ok(fd) = openat(
            &dir_fd,
            name,
            OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            FileMode::empty(),
        ) else {
            continue;
        };
        rule(&child, fd.as_fd(), kind == Type::Directory)?;
    }
    Ok(())
}

fn kind_of(st: &FileStat) -> Type {
    match SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT {
        SFlag::S_IFDIR => Type::Directory,
        SFlag::S_IFLNK => Type::Symlink,
        _ => Type::File,
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
fn open_path(p: &Path) -> Option<(OwnedFd, bool)> {
    let fd = open(
        p,
        OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        FileMode::empty(),
    )
    .ok()?;
    match kind_of(&fstat(&fd).ok()?) {
        Type::Symlink => None,
        kind => Some((fd, kind == Type::Directory)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `walk` grants under `root` with `exclude` left out, and
    /// whether each is a directory.
    fn walked(root: &Path, exclude: &[&Path]) -> Vec<(PathBuf, bool)> {
        let mut out = Vec::new();
        walk(root, exclude, &mut |p, _, dir| {
            out.push((p.to_path_buf(), dir));
            Ok(())
        })
        .unwrap();
        out.sort();
        out
    }

    #[test]
    fn walk_leaves_out_the_denied_path_and_keeps_its_siblings() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        for d in ["a/secret/inner", "a/open", "b"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("a/file"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("a/secret"), root.join("a/link")).unwrap();
        assert_eq!(
            walked(&root, &[&root.join("a/secret")]),
            vec![
                (root.join("a/file"), false),
                (root.join("a/open"), true),
                (root.join("b"), true)
            ]
        );
        // Nothing denied beneath: the root itself, one rule.
        assert_eq!(
            walked(&root.join("b"), &[&root.join("a/secret")]),
            vec![(root.join("b"), true)]
        );
        // The root denied: nothing at all.
        assert!(walked(&root.join("a/secret"), &[&root.join("a/secret")]).is_empty());
    }

    #[test]
    fn missing_deny_paths_are_set_apart_and_present_ones_made_canonical() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("real")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("alias")).unwrap();
        std::fs::write(root.join("file"), "x").unwrap();
        let (present, absent) = resolve(&[
            root.join("alias"),
            root.join("alias/missing"),
            root.join("file/under-a-file"),
        ]);
        assert_eq!(present, vec![root.join("real")]);
        assert_eq!(
            absent,
            vec![root.join("alias/missing"), root.join("file/under-a-file")]
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
