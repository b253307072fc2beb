//! Replacing a file so that anyone who opens it sees the old content or the
//! new, never a mix, even when the writer is killed halfway: the new content
//! goes to a temporary file in the same directory, is flushed to disk, and
//! is renamed over the target; then the directory is flushed so that the
//! rename survives a crash.
//!
//! On Linux the temporary file is anonymous (`O_TMPFILE`) until the moment
//! before the rename, so a writer killed mid-write leaves nothing behind;
//! elsewhere, or on file systems without it, a hidden named file is used and
//! removed on every path except a kill.
//!
//! The new file gets the old one's permissions (and owner, where allowed);
//! a symlink is written through to the file it points to, and stays a link.

use std::ffi::{OsStr, OsString};
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{OFlag, openat, renameat};
use nix::sys::stat::Mode;
use nix::unistd::{UnlinkatFlags, unlinkat};

/// Symlinks followed before giving up, as the kernel does (`ELOOP`).
const MAX_LINKS: usize = 40;
/// Mode of a new file before the umask, as for any file a program creates.
const NEW_FILE_MODE: u32 = 0o666;

/// Why a file could not be replaced. The target is untouched in every case.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// An I/O step failed.
    #[error("cannot {step} `{}`: {source}", path.display())]
    Io {
        /// What was being done, as a verb phrase ("create a temporary file in").
        step: &'static str,
        /// The path it was done to.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// The check made just before the rename found that the target changed
    /// since it was read; the newer file was left alone.
    #[error("the file changed on disk while it was being written")]
    Changed,
}

impl WriteError {
    fn io(step: &'static str, path: &Path, source: io::Error) -> Self {
        WriteError::Io {
            step,
            path: path.to_path_buf(),
            source,
        }
    }

    /// The underlying I/O error kind, if any.
    pub fn kind(&self) -> Option<io::ErrorKind> {
        match self {
            WriteError::Io { source, .. } => Some(source.kind()),
            WriteError::Changed => None,
        }
    }
}

/// The file a write to `path` lands in: `path` itself, or the end of the
/// chain of symlinks it starts, even when that end does not exist yet (as
/// `echo > link` creates the file a dangling link names).
pub fn resolve_symlinks(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = std::fs::read_link(&current)?;
                current = match current.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            Ok(_) => return Ok(current),
            // A path that cannot exist: whoever opens it reports why.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                return Ok(current);
            }
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::from_raw_os_error(nix::libc::ELOOP))
}

/// A new version of a file being written; nothing is visible at the target
/// until [`AtomicFile::commit`]. Dropping it without committing discards it.
///
/// Everything happens relative to a descriptor of the target's directory,
/// so that a directory swapped for a symlink after it was opened (checked
/// inside `--root`, say) cannot send the file elsewhere.
pub struct AtomicFile {
    staged: Staged,
    target: PathBuf,
    dir: File,
    name: OsString,
}

enum Staged {
    /// An `O_TMPFILE` file: it has no name, so the kernel frees it if the
    /// process dies before it is linked in.
    Anonymous(File),
    Named(NamedTemp),
}

/// A hidden file beside the target, removed when dropped unless kept.
struct NamedTemp {
    file: File,
    dir: File,
    name: OsString,
    keep: bool,
}

impl Drop for NamedTemp {
    fn drop(&mut self) {
        if !self.keep {
            let _ = unlinkat(&self.dir, self.name.as_os_str(), UnlinkatFlags::NoRemoveDir);
        }
    }
}

impl AtomicFile {
    /// Starts a new version of `target` (a path with symlinks already
    /// resolved, see [`resolve_symlinks`]) in the target's directory, which
    /// must exist. `like` is the current file's metadata, whose permissions
    /// and owner the new version takes; a new file gets the usual mode
    /// (0666 less the umask).
    pub fn create(target: &Path, like: Option<&Metadata>) -> Result<AtomicFile, WriteError> {
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = target
            .file_name()
            .ok_or_else(|| {
                WriteError::io("name", target, io::Error::from(io::ErrorKind::InvalidInput))
            })?
            .to_os_string();
        let dir_file = open_dir(&dir).map_err(|e| WriteError::io("open the directory", &dir, e))?;
        Self::create_in(dir_file, &name, target, like)
    }

    /// [`AtomicFile::create`] for the file `name` in the directory open as
    /// `dir`; `target` is the path messages name.
    pub fn create_in(
        dir: File,
        name: &OsStr,
        target: &Path,
        like: Option<&Metadata>,
    ) -> Result<AtomicFile, WriteError> {
        Self::create_with(dir, name, target, like, true)
    }

    /// [`AtomicFile::create_in`] with a named temporary file from the start,
    /// for a caller that keeps it with [`AtomicFile::stage`].
    pub fn create_named_in(
        dir: File,
        name: &OsStr,
        target: &Path,
        like: Option<&Metadata>,
    ) -> Result<AtomicFile, WriteError> {
        Self::create_with(dir, name, target, like, false)
    }

    fn create_with(
        dir: File,
        name: &OsStr,
        target: &Path,
        like: Option<&Metadata>,
        anonymous: bool,
    ) -> Result<AtomicFile, WriteError> {
        let step = "create a temporary file beside";
        let staged = match anonymous.then(|| open_anonymous(&dir)).flatten() {
            Some(Ok(file)) => Staged::Anonymous(file),
            Some(Err(e)) => return Err(WriteError::io(step, target, e)),
            None => {
                Staged::Named(named_temp(&dir, name).map_err(|e| WriteError::io(step, target, e))?)
            }
        };
        let out = AtomicFile {
            staged,
            target: target.to_path_buf(),
            dir,
            name: name.to_os_string(),
        };
        if let Some(meta) = like {
            out.copy_metadata(meta)?;
        }
        Ok(out)
    }

    fn file(&self) -> &File {
        match &self.staged {
            Staged::Anonymous(f) => f,
            Staged::Named(t) => &t.file,
        }
    }

    fn copy_metadata(&self, meta: &Metadata) -> Result<(), WriteError> {
        copy_metadata(self.file(), meta).map_err(|e| {
            WriteError::io(
                "copy the permissions to the new version of",
                &self.target,
                e,
            )
        })
    }

    /// Sets the permission bits the new version gets.
    pub fn set_mode(&self, mode: u32) -> Result<(), WriteError> {
        self.file()
            .set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(|e| {
                WriteError::io("set the permissions of the new version of", &self.target, e)
            })
    }

    /// Writes all of `bytes`.
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<(), WriteError> {
        let res = match &mut self.staged {
            Staged::Anonymous(f) => f.write_all(bytes),
            Staged::Named(t) => t.file.write_all(bytes),
        };
        res.map_err(|e| WriteError::io("write the new version of", &self.target, e))
    }

    /// Flushes the new version to disk, asks `unchanged` whether the target
    /// is still as the caller last saw it (the check runs as late as
    /// possible, just before the rename), and if so renames the new version
    /// over the target. On any failure the target is left as it was and the
    /// temporary file is removed.
    pub fn commit(self, unchanged: impl FnOnce() -> io::Result<bool>) -> Result<(), WriteError> {
        self.file()
            .sync_all()
            .map_err(|e| WriteError::io("flush to disk the new version of", &self.target, e))?;
        match unchanged() {
            Ok(true) => {}
            Ok(false) => return Err(WriteError::Changed),
            Err(e) => return Err(WriteError::io("check for changes", &self.target, e)),
        }
        let AtomicFile {
            staged,
            target,
            dir,
            name,
        } = self;
        let mut temp = match staged {
            Staged::Anonymous(file) => {
                let temp = link_anonymous(&file, &dir, &name)
                    .map_err(|e| WriteError::io("name the new version of", &target, e))?;
                NamedTemp {
                    file,
                    dir: dir
                        .try_clone()
                        .map_err(|e| WriteError::io("replace", &target, e))?,
                    name: temp,
                    keep: false,
                }
            }
            Staged::Named(t) => t,
        };
        renameat(&dir, temp.name.as_os_str(), &dir, name.as_os_str())
            .map_err(|e| WriteError::io("replace", &target, e.into()))?;
        temp.keep = true;
        // The rename is only durable once the directory is on disk. Some
        // file systems cannot flush a directory; the data itself is safe.
        let _ = dir.sync_all();
        Ok(())
    }

    /// Flushes the new version to disk and leaves it under a hidden name
    /// beside the target, which it returns, for a caller that renames it
    /// later itself (ag-patch's journal).
    pub fn stage(self) -> Result<OsString, WriteError> {
        self.file()
            .sync_all()
            .map_err(|e| WriteError::io("flush to disk the new version of", &self.target, e))?;
        match self.staged {
            Staged::Anonymous(file) => link_anonymous(&file, &self.dir, &self.name)
                .map_err(|e| WriteError::io("name the new version of", &self.target, e)),
            Staged::Named(mut t) => {
                t.keep = true;
                Ok(t.name.clone())
            }
        }
    }
}

/// Gives a new file the owner (where allowed) and permissions of `meta`.
pub fn copy_metadata(file: &File, meta: &Metadata) -> io::Result<()> {
    // The owner first: changing it may clear set-user-ID bits that the
    // mode below restores. Only root (or the owner, for the group) may
    // change it; otherwise the new file is ours, as with any editor.
    let mine = file.metadata()?;
    if (mine.uid(), mine.gid()) != (meta.uid(), meta.gid()) {
        let _ = std::os::unix::fs::fchown(file, Some(meta.uid()), Some(meta.gid()));
    }
    file.set_permissions(std::fs::Permissions::from_mode(meta.mode() & 0o7777))
}

/// Opens a directory for the `*at` calls and for flushing it.
pub fn open_dir(dir: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_DIRECTORY)
        .open(dir)
}

/// Replaces `target` with `data` atomically; see [`AtomicFile`].
pub fn write_atomic(
    target: &Path,
    like: Option<&Metadata>,
    data: &[u8],
    unchanged: impl FnOnce() -> io::Result<bool>,
) -> Result<(), WriteError> {
    let mut f = AtomicFile::create(target, like)?;
    f.write_all(data)?;
    f.commit(unchanged)
}

/// Whether the file at `path` holds exactly `expected`; see [`has_content_of`].
pub fn has_content(path: &Path, expected: &[u8]) -> io::Result<bool> {
    match File::open(path) {
        Ok(f) => has_content_of(f, expected),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Whether an open file holds exactly `expected`, read in chunks so that
/// the comparison costs no second copy of a large file in memory.
pub fn has_content_of(mut file: File, expected: &[u8]) -> io::Result<bool> {
    if file.metadata()?.len() != expected.len() as u64 {
        return Ok(false);
    }
    let mut buf = vec![0u8; 256 * 1024];
    let mut seen = 0usize;
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => return Ok(seen == expected.len()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if seen + n > expected.len() || buf[..n] != expected[seen..seen + n] {
            return Ok(false);
        }
        seen += n;
    }
}

/// The content hash of the file at `path` (as `ag-read` reports it), read
/// in chunks; `None` when there is no such file.
pub fn hash_file(path: &Path) -> io::Result<Option<String>> {
    match File::open(path) {
        Ok(f) => hash_of(f).map(Some),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The content hash of an open file, read in chunks.
pub fn hash_of(mut file: File) -> io::Result<String> {
    let mut hasher = super::ContentHasher::new();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        match file.read(&mut buf) {
            Ok(0) => return Ok(hasher.finish()),
            Ok(n) => hasher.update(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Opens an anonymous file in `dir`, or `None` when the platform or the
/// file system has no such thing (then a named file is used instead).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn open_anonymous(dir: &File) -> Option<io::Result<File>> {
    // Naming the file later goes through /proc; without it, use a named file.
    if !Path::new("/proc/self/fd").is_dir() {
        return None;
    }
    let res = openat(
        dir,
        ".",
        OFlag::O_TMPFILE | OFlag::O_WRONLY | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(NEW_FILE_MODE),
    );
    match res {
        Ok(f) => Some(Ok(File::from(f))),
        // Kernels and file systems without O_TMPFILE answer with one of these.
        Err(Errno::EOPNOTSUPP | Errno::EISDIR | Errno::EINVAL) => None,
        Err(e) => Some(Err(e.into())),
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn open_anonymous(_dir: &File) -> Option<io::Result<File>> {
    None
}

/// Gives an anonymous file a hidden name next to the target, ready to be
/// renamed over it.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn link_anonymous(file: &File, dir: &File, target: &OsStr) -> io::Result<OsString> {
    use nix::fcntl::{AT_FDCWD, AtFlags};
    use nix::unistd::linkat;
    use std::os::fd::AsRawFd;
    let source = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
    let mut last = io::Error::from(io::ErrorKind::AlreadyExists);
    for _ in 0..8 {
        let temp = temp_name(target);
        match linkat(
            AT_FDCWD,
            &source,
            dir,
            temp.as_os_str(),
            AtFlags::AT_SYMLINK_FOLLOW,
        ) {
            Ok(()) => return Ok(temp),
            Err(Errno::EEXIST) => continue,
            Err(e) => last = io::Error::from(e),
        }
        break;
    }
    Err(last)
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn link_anonymous(_file: &File, _dir: &File, _target: &OsStr) -> io::Result<OsString> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// Creates a hidden file beside `target` in `dir`, never following a link.
fn named_temp(dir: &File, target: &OsStr) -> io::Result<NamedTemp> {
    let mut last = io::Error::from(io::ErrorKind::AlreadyExists);
    for _ in 0..8 {
        let name = temp_name(target);
        match openat(
            dir,
            name.as_os_str(),
            OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_WRONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::from_bits_truncate(NEW_FILE_MODE),
        ) {
            Ok(fd) => {
                return Ok(NamedTemp {
                    file: File::from(fd),
                    dir: dir.try_clone()?,
                    name,
                    keep: false,
                });
            }
            Err(Errno::EEXIST) => continue,
            Err(e) => last = io::Error::from(e),
        }
        break;
    }
    Err(last)
}

/// `.<name>.ag-` : hidden, and saying which file and which program it is for.
pub fn temp_prefix(target: &OsStr) -> OsString {
    let mut p = OsString::from(".");
    p.push(target);
    p.push(".ag-");
    p
}

fn temp_name(target: &OsStr) -> OsString {
    let id = uuid::Uuid::new_v4().simple().to_string();
    let mut name = temp_prefix(target);
    name.push(&id[..12]);
    name.push(".tmp");
    name
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn replaces_keeping_mode_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("run.sh");
        std::fs::write(&p, "old").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o750)).unwrap();
        let meta = std::fs::metadata(&p).unwrap();
        write_atomic(&p, Some(&meta), b"new", || Ok(true)).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        let mode = std::fs::metadata(&p).unwrap().mode() & 0o7777;
        assert_eq!(mode, 0o750);
        assert_eq!(names(dir.path()), vec!["run.sh"]);
    }

    #[test]
    fn refused_commit_leaves_the_target_and_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        std::fs::write(&p, "original").unwrap();
        let mut f = AtomicFile::create(&p, None).unwrap();
        f.write_all(b"mine").unwrap();
        // Someone else writes while the new version is staged.
        std::fs::write(&p, "theirs").unwrap();
        let err = f.commit(|| has_content(&p, b"original")).unwrap_err();
        assert!(matches!(err, WriteError::Changed));
        assert_eq!(std::fs::read(&p).unwrap(), b"theirs");
        assert_eq!(names(dir.path()), vec!["a.txt"]);
    }

    #[test]
    fn dropped_without_commit_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        std::fs::write(&p, "original").unwrap();
        let mut f = AtomicFile::create(&p, None).unwrap();
        f.write_all(b"half").unwrap();
        drop(f);
        assert_eq!(std::fs::read(&p).unwrap(), b"original");
        assert_eq!(names(dir.path()), vec!["a.txt"]);
    }

    #[test]
    fn named_fallback_works_too() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b.txt");
        let d = open_dir(dir.path()).unwrap();
        let t = named_temp(&d, OsStr::new("b.txt")).unwrap();
        let name = t.name.to_string_lossy().into_owned();
        assert!(name.starts_with(".b.txt.ag-"), "{name}");
        let f = AtomicFile {
            staged: Staged::Named(t),
            target: p.clone(),
            dir: d,
            name: "b.txt".into(),
        };
        let mut f = f;
        f.write_all(b"x").unwrap();
        f.commit(|| Ok(true)).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"x");
        assert_eq!(names(dir.path()), vec!["b.txt"]);
    }

    #[test]
    fn symlink_chains_resolve_to_the_final_file() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("real")).unwrap();
        std::fs::write(d.join("real/f.txt"), "x").unwrap();
        symlink("real/f.txt", d.join("l1")).unwrap();
        symlink(d.join("l1"), d.join("l2")).unwrap();
        assert_eq!(
            resolve_symlinks(&d.join("l2")).unwrap(),
            d.join("real/f.txt")
        );
        symlink("missing.txt", d.join("dangling")).unwrap();
        assert_eq!(
            resolve_symlinks(&d.join("dangling")).unwrap(),
            d.join("missing.txt")
        );
        symlink("loop2", d.join("loop1")).unwrap();
        symlink("loop1", d.join("loop2")).unwrap();
        assert!(resolve_symlinks(&d.join("loop1")).is_err());
    }

    #[test]
    fn content_checks_stream() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c");
        let body = vec![7u8; 600_000];
        std::fs::write(&p, &body).unwrap();
        assert!(has_content(&p, &body).unwrap());
        let mut other = body.clone();
        other[599_999] = 8;
        assert!(!has_content(&p, &other).unwrap());
        assert!(!has_content(&dir.path().join("none"), b"").unwrap());
        assert_eq!(
            hash_file(&p).unwrap().unwrap(),
            super::super::content_hash(&body)
        );
        assert_eq!(hash_file(&dir.path().join("none")).unwrap(), None);
    }
}
