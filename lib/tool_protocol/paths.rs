//! Where a call runs: the working directory that relative paths resolve
//! against, and the optional `--root` every path must stay inside.
//!
//! A path is checked against the root when it is resolved (for a clear
//! error), but the check that counts is made when the file is opened:
//! every open, directory listing and write of the file tools goes through
//! the methods here, which under `--root` open the path from a descriptor
//! of the root in one step ([`crate::fsutil::beneath`]), so that a symlink
//! swapped in between the check and the open cannot lead outside.

use std::ffi::OsString;
use std::fs::{File, Metadata};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

use super::ToolError;
use crate::fsutil::beneath::{self, is_outside, open_beneath, open_root, split_name};
use crate::fsutil::{AtomicFile, WriteError};

/// The environment of a call.
#[derive(Debug, Clone)]
pub struct Context {
    /// Relative paths resolve against this directory.
    pub cwd: PathBuf,
    /// When set, every path must lie inside it after symlinks are resolved.
    pub root: Option<PathBuf>,
}

impl Context {
    /// A context for the process's working directory and an optional root.
    pub fn new(root: Option<&Path>) -> Result<Self, String> {
        let cwd = std::env::current_dir()
            .map_err(|e| format!("cannot read the working directory: {e}"))?;
        let root = match root {
            None => None,
            Some(r) => Some(
                cwd.join(r)
                    .canonicalize()
                    .map_err(|e| format!("cannot use `{}` as --root: {e}", r.display()))?,
            ),
        };
        Ok(Context { cwd, root })
    }

    /// Resolves a path given in a call: relative to the working directory,
    /// `~` expanded, and checked against the root.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, ToolError> {
        if path.is_empty() {
            return Err(ToolError::new(
                "path.empty",
                "the path is empty; give a file path, relative to the working directory or absolute",
            ));
        }
        let expanded = expand_home(path);
        let joined = normalize(&self.cwd.join(expanded));
        self.confine(path, &joined)?;
        Ok(joined)
    }

    /// Checks that `resolved` (the path given as `given`) lies inside the
    /// root, if there is one, after symlinks are resolved. Tools that follow
    /// a symlink chain themselves check its end with this too, because a
    /// dangling link can name a file outside the root.
    pub fn confine(&self, given: &str, resolved: &Path) -> Result<(), ToolError> {
        if let Some(root) = &self.root
            && !real_path(resolved).starts_with(root)
        {
            return Err(ToolError::new(
                "path.outside_root",
                format!(
                    "`{given}` is outside the allowed root `{}`; use a path inside it",
                    root.display()
                ),
            ));
        }
        Ok(())
    }

    /// The path as the model should see it: relative to the working
    /// directory when inside it, absolute otherwise.
    pub fn show(&self, path: &Path) -> String {
        display_path(&self.cwd, path)
    }

    /// Opens `path` (absolute, as [`Context::resolve`] gives it) with
    /// `flags`, symlinks followed; under `--root`, in one step from the
    /// root, failing with an error that says so when the path leads out.
    pub fn open(&self, path: &Path, flags: OFlag) -> io::Result<OwnedFd> {
        let Some(root) = &self.root else {
            return Ok(nix::fcntl::open(
                path,
                flags | OFlag::O_CLOEXEC,
                Mode::empty(),
            )?);
        };
        let rel = match path.strip_prefix(root) {
            Ok(rel) => rel.to_path_buf(),
            // A path that reaches the root through a symlink (the working
            // directory's, say): its real form tells where inside it is.
            // The open below checks again, so a race here cannot widen it.
            Err(_) => real_path(path)
                .strip_prefix(root)
                .map(Path::to_path_buf)
                .map_err(|_| self.outside_error(path))?,
        };
        let fd = open_root(root)?;
        open_beneath(fd.as_fd(), root, &rel, flags, Mode::empty()).map_err(|e| {
            if is_outside(&e) {
                self.outside_error(path)
            } else {
                e
            }
        })
    }

    fn outside_error(&self, path: &Path) -> io::Error {
        let root = self.root.as_deref().unwrap_or(Path::new("/"));
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            PathProblem::Outside(format!(
                "`{}` leads outside the allowed root `{}`",
                self.show(path),
                root.display()
            )),
        )
    }

    /// Opens a file to read it. It is opened without blocking, so that a
    /// FIFO with no writer cannot hang the call; anything but a regular
    /// file or a directory (a FIFO, a socket, a device) is refused with an
    /// error of kind `InvalidInput` before a byte is read.
    pub fn open_read(&self, path: &Path) -> io::Result<File> {
        let fd = self.open(path, OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_NOCTTY)?;
        let file = File::from(fd);
        let kind = file.metadata()?.file_type();
        if !kind.is_file() && !kind.is_dir() {
            return Err(not_a_file(self, path));
        }
        // Reads of a regular file never block; clearing the flag keeps
        // later readers (mmap, the searcher) on their usual paths.
        let _ = nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_SETFL(OFlag::empty()));
        Ok(file)
    }

    /// What `path` is, symlinks followed (as `std::fs::metadata`), looked
    /// up inside the root.
    pub fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        File::from(self.open(path, OFlag::O_PATH)?).metadata()
    }

    /// The whole content of a file; see [`Context::open_read`].
    pub fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let mut file = self.open_read(path)?;
        if file.metadata()?.is_dir() {
            return Err(io::Error::from(io::ErrorKind::IsADirectory));
        }
        let mut buf = Vec::new();
        io::Read::read_to_end(&mut file, &mut buf)?;
        Ok(buf)
    }

    /// Whether the file at `path` holds exactly `expected` (no file: no).
    pub fn has_content(&self, path: &Path, expected: &[u8]) -> io::Result<bool> {
        match self.open_read(path) {
            Ok(f) => crate::fsutil::has_content_of(f, expected),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The content hash of the file at `path`; `None` when there is none.
    pub fn hash_file(&self, path: &Path) -> io::Result<Option<String>> {
        match self.open_read(path) {
            Ok(f) => crate::fsutil::hash_of(f).map(Some),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The directory that holds `path`, open for the `*at` calls, and the
    /// name of `path` in it. Whatever happens to the path afterwards, work
    /// done through the descriptor stays in that directory.
    pub fn open_parent(&self, path: &Path) -> io::Result<(File, OsString)> {
        let (dir, name) = split_name(path)?;
        let fd = self.open(dir, OFlag::O_RDONLY | OFlag::O_DIRECTORY)?;
        Ok((File::from(fd), name.to_os_string()))
    }

    /// The directory that holds `path` (see [`Context::open_parent`]), the
    /// name in it, and what that name is, a symlink not followed.
    pub fn lstat(&self, path: &Path) -> io::Result<(File, OsString, Metadata)> {
        let (dir, name) = self.open_parent(path)?;
        let fd = nix::fcntl::openat(
            &dir,
            name.as_os_str(),
            OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
        let meta = File::from(fd).metadata()?;
        Ok((dir, name, meta))
    }

    /// Removes the file or symlink `path` (never what a symlink points to)
    /// through its directory opened inside the root.
    pub fn remove_file(&self, path: &Path) -> io::Result<()> {
        let (dir, name) = self.open_parent(path)?;
        nix::unistd::unlinkat(
            &dir,
            name.as_os_str(),
            nix::unistd::UnlinkatFlags::NoRemoveDir,
        )?;
        Ok(())
    }

    /// The entries of the directory `path`, read through a descriptor of
    /// it opened inside the root (`.` and `..` left out). A symlink's kind
    /// is the link's; `to_dir` says whether it leads to a directory.
    pub fn read_dir(&self, path: &Path) -> io::Result<Vec<DirItem>> {
        use nix::dir::{Dir, Type};
        use nix::fcntl::AtFlags;
        use nix::sys::stat::{SFlag, fstatat};
        use std::os::unix::ffi::OsStrExt;
        let mut dir = Dir::from_fd(self.open(path, OFlag::O_RDONLY | OFlag::O_DIRECTORY)?)?;
        let fd = dir.as_fd().try_clone_to_owned()?;
        let mut out = Vec::new();
        for entry in dir.iter() {
            let entry = entry?;
            let bytes = entry.file_name().to_bytes();
            if bytes == b"." || bytes == b".." {
                continue;
            }
            let name = std::ffi::OsStr::from_bytes(bytes).to_os_string();
            let stat_kind = |flags| {
                fstatat(&fd, name.as_os_str(), flags)
                    .map(|st| SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT)
            };
            let kind = match entry.file_type() {
                Some(t) => t,
                // File systems that do not say: ask for the entry itself.
                None => match stat_kind(AtFlags::AT_SYMLINK_NOFOLLOW) {
                    Ok(SFlag::S_IFDIR) => Type::Directory,
                    Ok(SFlag::S_IFREG) => Type::File,
                    Ok(SFlag::S_IFLNK) => Type::Symlink,
                    _ => Type::Fifo,
                },
            };
            let kind = match kind {
                Type::Directory => EntryKind::Dir,
                Type::File => EntryKind::File,
                Type::Symlink => EntryKind::Link {
                    target: nix::fcntl::readlinkat(&fd, name.as_os_str())
                        .map(PathBuf::from)
                        .unwrap_or_default(),
                    to_dir: stat_kind(AtFlags::empty()).is_ok_and(|k| k == SFlag::S_IFDIR),
                },
                _ => EntryKind::Other,
            };
            out.push(DirItem {
                name,
                kind,
                ino: entry.ino(),
            });
        }
        Ok(out)
    }

    /// Sets the permission bits of the file `path`, opened inside the root.
    pub fn set_mode(&self, path: &Path, mode: u32) -> io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let file = File::from(self.open(path, OFlag::O_RDONLY | OFlag::O_NONBLOCK)?);
        file.set_permissions(std::fs::Permissions::from_mode(mode))
    }

    /// Starts a new version of the file `path` (symlinks already resolved)
    /// in its directory; see [`AtomicFile`].
    pub fn atomic_file(
        &self,
        path: &Path,
        like: Option<&Metadata>,
    ) -> Result<AtomicFile, WriteError> {
        let (dir, name) = self.open_parent(path).map_err(|e| WriteError::Io {
            step: "open the directory of",
            path: path.to_path_buf(),
            source: e,
        })?;
        AtomicFile::create_in(dir, &name, path, like)
    }

    /// Replaces the file `path` with `data` atomically, in the directory
    /// opened inside the root; see [`AtomicFile`].
    pub fn write_atomic(
        &self,
        path: &Path,
        like: Option<&Metadata>,
        data: &[u8],
        unchanged: impl FnOnce() -> io::Result<bool>,
    ) -> Result<(), WriteError> {
        let mut f = self.atomic_file(path, like)?;
        f.write_all(data)?;
        f.commit(unchanged)
    }

    /// Creates the directory `dir` and its missing parents, each made inside
    /// the directory opened before it; returns those it created, deepest
    /// first.
    pub fn create_dirs(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        let mut missing = Vec::new();
        let mut existing = dir;
        let base = loop {
            match self.open(existing, OFlag::O_PATH | OFlag::O_DIRECTORY) {
                Ok(fd) => break fd,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    let (parent, name) = split_name(existing)?;
                    missing.push(name.to_os_string());
                    existing = parent;
                }
                Err(e) => return Err(e),
            }
        };
        let mut at = base;
        let mut made = Vec::new();
        let mut path = existing.to_path_buf();
        for name in missing.iter().rev() {
            path.push(name);
            match nix::sys::stat::mkdirat(&at, name.as_os_str(), Mode::from_bits_truncate(0o777)) {
                Ok(()) => made.push(path.clone()),
                Err(nix::errno::Errno::EEXIST) => {}
                Err(e) => return Err(e.into()),
            }
            at = nix::fcntl::openat(
                &at,
                name.as_os_str(),
                OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
                Mode::empty(),
            )?;
        }
        made.reverse();
        Ok(made)
    }

    /// Removes the directories `dirs` (as [`Context::create_dirs`] returns
    /// them) if they are empty, each through its parent opened in the root.
    pub fn remove_empty_dirs(&self, dirs: &[PathBuf]) {
        for d in dirs {
            if let Ok((parent, name)) = self.open_parent(d) {
                let _ = nix::unistd::unlinkat(
                    &parent,
                    name.as_os_str(),
                    nix::unistd::UnlinkatFlags::RemoveDir,
                );
            }
        }
    }
}

/// One entry of a directory, as [`Context::read_dir`] lists it.
#[derive(Debug, Clone)]
pub struct DirItem {
    /// Its name.
    pub name: OsString,
    /// What it is.
    pub kind: EntryKind,
    /// Its inode number.
    pub ino: u64,
}

/// What a directory entry is, a symlink not followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    /// A directory.
    Dir,
    /// A regular file.
    File,
    /// A symlink, with its target as written and whether it leads to a directory.
    Link {
        /// The target as written.
        target: PathBuf,
        /// Whether it leads to a directory.
        to_dir: bool,
    },
    /// A FIFO, socket or device.
    Other,
}

/// Why a [`Context`] method refused a path, carried inside its `io::Error`.
#[derive(Debug, thiserror::Error)]
pub enum PathProblem {
    /// The path, or a symlink on it, leads outside `--root`.
    #[error("{0}")]
    Outside(String),
    /// The path names a FIFO, a socket or a device.
    #[error("{0}")]
    NotAFile(String),
}

impl PathProblem {
    /// The problem an error carries, if it carries one.
    pub fn of(err: &io::Error) -> Option<&PathProblem> {
        err.get_ref().and_then(|e| e.downcast_ref::<PathProblem>())
    }
}

/// The error for a path that is no regular file or directory.
fn not_a_file(ctx: &Context, path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        PathProblem::NotAFile(format!(
            "`{}` is not a regular file (a FIFO, socket or device), so it was not opened",
            ctx.show(path)
        )),
    )
}

/// Whether an error from [`Context::open_read`] means the path is no
/// regular file (a FIFO, socket or device).
pub fn is_not_a_file(err: &io::Error) -> bool {
    matches!(PathProblem::of(err), Some(PathProblem::NotAFile(_)))
}

/// Whether an error from a [`Context`] method means the path led outside the root.
pub fn is_outside_root(err: &io::Error) -> bool {
    matches!(PathProblem::of(err), Some(PathProblem::Outside(_))) || beneath::is_outside(err)
}

/// A path relative to `base` when it lies inside it, else the path itself.
pub fn display_path(base: &Path, path: &Path) -> String {
    match path.strip_prefix(base) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => path.display().to_string(),
    }
}

fn expand_home(path: &str) -> PathBuf {
    if (path == "~" || path.starts_with("~/"))
        && let Some(home) = std::env::var_os("HOME")
    {
        return PathBuf::from(home).join(path.trim_start_matches('~').trim_start_matches('/'));
    }
    PathBuf::from(path)
}

/// Removes `.` and folds `..` without touching the file system, so that
/// error messages show clean paths. `..` at the root stays at the root, as
/// the kernel has it; a relative path keeps the `..` it cannot fold.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(comp),
            },
            other => out.push(other),
        }
    }
    out
}

/// The path with symlinks resolved as far as it exists; the part that does
/// not exist yet is appended as given.
pub fn real_path(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (
            existing.file_name().map(|n| n.to_owned()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_confines_paths_after_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir(&root).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("escape")).unwrap();
        let ctx = Context {
            cwd: root.clone(),
            root: Some(root.canonicalize().unwrap()),
        };
        assert!(ctx.resolve("a/new/file.txt").is_ok());
        assert_eq!(ctx.resolve("../x").unwrap_err().code, "path.outside_root");
        assert_eq!(
            ctx.resolve("escape/passwd").unwrap_err().code,
            "path.outside_root"
        );
        assert_eq!(
            ctx.resolve("/etc/passwd").unwrap_err().code,
            "path.outside_root"
        );
    }
}
