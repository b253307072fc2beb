//! Opening a path inside a directory (the `--root`) in one step, so that
//! nothing the path meets on the way leads out of it: not `..`, not a
//! symlink, and not a symlink swapped in between a check and the open.
//!
//! On Linux 5.6 and later the kernel does it: `openat2` with
//! `RESOLVE_BENEATH` from a descriptor of the root. Where that call is
//! missing or forbidden (old kernels, seccomp filters that answer `ENOSYS`
//! or `EPERM`), and for absolute symlinks (which `RESOLVE_BENEATH` refuses
//! even when they name a place inside the root), the path is walked one
//! component at a time from the root's descriptor, each step opened with
//! `O_NOFOLLOW`, symlinks read and spliced in by hand, `..` taken on a stack
//! of descriptors that never pops past the root. Either way, a path that
//! leads out fails with `EXDEV`.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};
use std::sync::atomic::{AtomicBool, Ordering};

use nix::errno::Errno;
use nix::fcntl::{OFlag, OpenHow, ResolveFlag, openat, openat2, readlinkat};
use nix::sys::stat::{Mode, SFlag, fstat};

/// Symlinks followed before giving up, as the kernel does (`ELOOP`).
const MAX_LINKS: usize = 40;
/// Times `openat2` is retried when a rename elsewhere disturbed it (`EAGAIN`).
const RETRIES: usize = 8;

/// Set once `openat2` turned out to be unavailable, so that it is not tried again.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// Whether `AG_NO_OPENAT2` asks for the component walk even where
/// `openat2` works (to test it, or to work around a kernel that gets
/// `openat2` wrong).
fn walk_forced() -> bool {
    static FORCED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FORCED.get_or_init(|| std::env::var_os("AG_NO_OPENAT2").is_some_and(|v| !v.is_empty()))
}

/// The error for a path that leads outside the root.
pub fn outside() -> io::Error {
    io::Error::from_raw_os_error(nix::libc::EXDEV)
}

/// Whether `err` says that a path led outside the root.
pub fn is_outside(err: &io::Error) -> bool {
    err.raw_os_error() == Some(nix::libc::EXDEV)
}

/// Opens the root itself: a descriptor every path inside it is opened from.
pub fn open_root(root: &Path) -> io::Result<OwnedFd> {
    Ok(nix::fcntl::open(
        root,
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )?)
}

/// Opens `rel`, a path relative to the root whose descriptor is `root` and
/// whose real, absolute path is `root_path` (absolute symlinks are judged by
/// it), with `flags` (`O_CLOEXEC` is added). Fails with `EXDEV` when the
/// path, or any symlink on it, leads outside the root.
pub fn open_beneath(
    root: BorrowedFd<'_>,
    root_path: &Path,
    rel: &Path,
    flags: OFlag,
    mode: Mode,
) -> io::Result<OwnedFd> {
    if rel.is_absolute() {
        return Err(outside());
    }
    let rel = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    if !NO_OPENAT2.load(Ordering::Relaxed) && !walk_forced() {
        let how = OpenHow::new()
            .flags(flags | OFlag::O_CLOEXEC)
            .mode(mode)
            .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_MAGICLINKS);
        for _ in 0..RETRIES {
            match openat2(root, rel, how) {
                Ok(fd) => return Ok(fd),
                Err(Errno::EAGAIN | Errno::EINTR) => continue,
                Err(Errno::ENOSYS | Errno::EPERM) => {
                    NO_OPENAT2.store(true, Ordering::Relaxed);
                    break;
                }
                // An absolute symlink may still name a place inside the
                // root: the walk tells.
                Err(Errno::EXDEV) => break,
                Err(e) => return Err(e.into()),
            }
        }
    }
    walk_beneath(root, root_path, rel, flags, mode)
}

/// [`open_beneath`] without `openat2`: the walk, one component at a time.
pub fn walk_beneath(
    root: BorrowedFd<'_>,
    root_path: &Path,
    rel: &Path,
    flags: OFlag,
    mode: Mode,
) -> io::Result<OwnedFd> {
    let mut stack: Vec<OwnedFd> = vec![openat(
        root,
        ".",
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )?];
    let mut pending: VecDeque<OsString> = VecDeque::new();
    push_components(&mut pending, rel)?;
    let mut links = 0usize;
    let mut follow = |pending: &mut VecDeque<OsString>,
                      stack: &mut Vec<OwnedFd>,
                      target: OsString|
     -> io::Result<()> {
        links += 1;
        if links > MAX_LINKS {
            return Err(io::Error::from_raw_os_error(nix::libc::ELOOP));
        }
        let target = Path::new(&target);
        if target.is_absolute() {
            let inside = target.strip_prefix(root_path).map_err(|_| outside())?;
            stack.truncate(1);
            push_components(pending, inside)?;
        } else {
            push_components(pending, target)?;
        }
        Ok(())
    };
    loop {
        let Some(name) = pending.pop_front() else {
            // The path ended on `..` or was `.`: the directory reached.
            let top = stack.last().ok_or_else(outside)?;
            return Ok(openat(top, ".", flags | OFlag::O_CLOEXEC, mode)?);
        };
        if name == ".." {
            if stack.len() == 1 {
                return Err(outside());
            }
            stack.pop();
            continue;
        }
        let top = stack.last().ok_or_else(outside)?;
        if pending.is_empty() {
            match openat(
                top,
                name.as_os_str(),
                flags | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
                mode,
            ) {
                Ok(fd) if flags.contains(OFlag::O_PATH) && is_link(&fd)? => {
                    let target = readlinkat(&fd, "")?;
                    follow(&mut pending, &mut stack, target)?;
                }
                Ok(fd) => return Ok(fd),
                // A symlink (O_NOFOLLOW refuses it): read it and go on.
                Err(Errno::ELOOP) => match readlinkat(top, name.as_os_str()) {
                    Ok(target) => follow(&mut pending, &mut stack, target)?,
                    // It stopped being a link meanwhile: try the name again.
                    Err(Errno::EINVAL) => {
                        follow(&mut pending, &mut stack, name)?;
                    }
                    Err(e) => return Err(e.into()),
                },
                Err(e) => return Err(e.into()),
            }
            continue;
        }
        let fd = openat(
            top,
            name.as_os_str(),
            OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
        let kind = SFlag::from_bits_truncate(fstat(&fd)?.st_mode) & SFlag::S_IFMT;
        if kind == SFlag::S_IFDIR {
            stack.push(fd);
        } else if kind == SFlag::S_IFLNK {
            let target = readlinkat(&fd, "")?;
            follow(&mut pending, &mut stack, target)?;
        } else {
            return Err(io::Error::from_raw_os_error(nix::libc::ENOTDIR));
        }
    }
}

fn is_link(fd: &OwnedFd) -> io::Result<bool> {
    let kind = SFlag::from_bits_truncate(fstat(fd.as_fd())?.st_mode) & SFlag::S_IFMT;
    Ok(kind == SFlag::S_IFLNK)
}

/// Puts the components of `path` in front of `pending`, in order.
fn push_components(pending: &mut VecDeque<OsString>, path: &Path) -> io::Result<()> {
    let mut parts = Vec::new();
    for comp in path.components() {
        match comp {
            Component::Normal(n) => parts.push(n.to_os_string()),
            Component::ParentDir => parts.push(OsString::from("..")),
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return Err(outside()),
        }
    }
    for part in parts.into_iter().rev() {
        pending.push_front(part);
    }
    Ok(())
}

/// The last component of `path` and the path of its directory, for the
/// calls that work on a name inside a directory descriptor.
pub fn split_name(path: &Path) -> io::Result<(&Path, &OsStr)> {
    match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) if !name.as_bytes().is_empty() => Ok((dir, name)),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` does not name a file in a directory", path.display()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::fs::symlink;

    fn read(fd: OwnedFd) -> String {
        let mut s = String::new();
        std::fs::File::from(fd).read_to_string(&mut s).unwrap();
        s
    }

    /// A root with a file, a subdirectory, links that stay inside (relative,
    /// absolute, through `..`) and links that lead out.
    fn setup() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/in.txt"), "inside").unwrap();
        std::fs::write(base.join("secret.txt"), "outside").unwrap();
        symlink("sub/in.txt", root.join("rel")).unwrap();
        symlink(root.join("sub/in.txt"), root.join("abs")).unwrap();
        symlink("../sub", root.join("sub/up")).unwrap();
        symlink("../secret.txt", root.join("out")).unwrap();
        symlink(base.join("secret.txt"), root.join("abs_out")).unwrap();
        symlink("sub/../../secret.txt", root.join("dotdot_out")).unwrap();
        (dir, root)
    }

    fn both(root: &Path, rel: &str) -> [io::Result<OwnedFd>; 2] {
        let fd = open_root(root).unwrap();
        let flags = OFlag::O_RDONLY;
        [
            open_beneath(fd.as_fd(), root, Path::new(rel), flags, Mode::empty()),
            walk_beneath(fd.as_fd(), root, Path::new(rel), flags, Mode::empty()),
        ]
    }

    #[test]
    fn links_inside_are_followed_both_ways() {
        let (_d, root) = setup();
        for rel in [
            "sub/in.txt",
            "rel",
            "abs",
            "sub/up/in.txt",
            "sub/../rel",
            "./sub/./in.txt",
        ] {
            for res in both(&root, rel) {
                assert_eq!(read(res.unwrap()), "inside", "{rel}");
            }
        }
    }

    #[test]
    fn ways_out_fail_both_ways() {
        let (_d, root) = setup();
        for rel in [
            "out",
            "abs_out",
            "dotdot_out",
            "../secret.txt",
            "sub/../../secret.txt",
        ] {
            for res in both(&root, rel) {
                let err = res.unwrap_err();
                assert!(is_outside(&err), "{rel}: {err}");
            }
        }
        for res in both(&root, "missing/x") {
            assert_eq!(res.unwrap_err().kind(), io::ErrorKind::NotFound);
        }
    }

    #[test]
    fn loops_end() {
        let (_d, root) = setup();
        symlink("l2", root.join("l1")).unwrap();
        symlink("l1", root.join("l2")).unwrap();
        for res in both(&root, "l1") {
            assert_eq!(res.unwrap_err().raw_os_error(), Some(nix::libc::ELOOP));
        }
    }

    #[test]
    fn a_path_fd_of_a_link_is_followed() {
        let (_d, root) = setup();
        let fd = open_root(&root).unwrap();
        let got = walk_beneath(
            fd.as_fd(),
            &root,
            Path::new("abs"),
            OFlag::O_PATH,
            Mode::empty(),
        )
        .unwrap();
        assert!(!is_link(&got).unwrap());
    }
}
