//! Reading a small text file that may have been put there by someone else
//! (a cloned repository's AGENTS.md, an agent identity, a skill): at most
//! a given number of bytes, only from a regular file on a real file
//! system, and, when a root is given, only if the path stays beneath it.
//!
//! `std::fs::read_to_string` would follow the path wherever it leads and
//! read until the end: a link to `/proc/self/pagemap` never ends (1 GiB in
//! two seconds), a FIFO blocks the reader forever, `/dev/zero` fills the
//! memory. Here the kind of file is checked before it is opened (opening
//! some devices does something) and again on the opened file, which is
//! opened without blocking (a FIFO that became one meanwhile does not
//! hang), and files of the kernel's own file systems (`/proc`, `/sys`, ...),
//! regular as they look, are refused too: their size says nothing of what
//! they hold, and what they hold is the machine's, not the project's.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use nix::fcntl::OFlag;
use nix::sys::stat::Mode;
use nix::sys::statfs::{self, FsType};

/// A file's text, or as much of it as the limit allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmallText {
    /// The text, whole or cut at the limit (on a character boundary).
    pub text: String,
    /// The file's size, when it is larger than the limit and the text was
    /// cut.
    pub cut_from: Option<u64>,
}

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub enum SmallTextError {
    /// Not a regular file: a directory, a FIFO, a device, a socket.
    #[error("it is {0}, not a regular file")]
    NotRegular(&'static str),
    /// A file of the kernel's: `/proc`, `/sys` and the like.
    #[error("it is a file of the kernel's {0} file system, not a file that holds text")]
    Kernel(&'static str),
    /// The path leads outside the root.
    #[error("it leads outside `{}` (through a symlink or `..`)", .0.display())]
    Outside(PathBuf),
    /// Not UTF-8.
    #[error("it is not UTF-8 text")]
    NotText,
    /// It could not be opened or read.
    #[error("{0}")]
    Io(#[from] io::Error),
}

impl SmallTextError {
    /// Whether the file is not there at all.
    pub fn is_missing(&self) -> bool {
        matches!(self, SmallTextError::Io(e) if e.kind() == io::ErrorKind::NotFound)
    }
}

/// Reads at most `max` bytes of text from `path`, a regular file, only if
/// the path stays beneath `within` (symlinks and `..` included) when that
/// is given.
pub fn read_small_text(
    path: &Path,
    max: usize,
    within: Option<&Path>,
) -> Result<SmallText, SmallTextError> {
    // The kind of what the path leads to, before it is opened for reading:
    // opening a device can do something (a tape rewinds, a watchdog
    // starts). Beneath a root, an `O_PATH` descriptor tells without
    // opening anything, and a path that leads out fails there first.
    let pre = match within {
        Some(root) => File::from(open_within(path, root, OFlag::O_PATH)?).metadata()?,
        None => std::fs::metadata(path)?,
    };
    if !pre.file_type().is_file() {
        return Err(SmallTextError::NotRegular(kind(&pre.file_type())));
    }
    let flags = OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_NOCTTY;
    let file = match within {
        Some(root) => File::from(open_within(path, root, flags)?),
        None => std::fs::OpenOptions::new()
            .read(true)
            .custom_flags((OFlag::O_NONBLOCK | OFlag::O_NOCTTY).bits())
            .open(path)?,
    };
    // Again on what was opened: the path may have changed meanwhile.
    let meta = file.metadata()?;
    if !meta.file_type().is_file() {
        return Err(SmallTextError::NotRegular(kind(&meta.file_type())));
    }
    if let Some(fs) = kernel_fs(&file) {
        return Err(SmallTextError::Kernel(fs));
    }
    let mut bytes = Vec::new();
    (&file).take(max as u64 + 1).read_to_end(&mut bytes)?;
    let cut_from = if bytes.len() > max {
        bytes.truncate(max);
        // A character the limit split is left out whole.
        let keep = match std::str::from_utf8(&bytes) {
            Ok(_) => max,
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => return Err(SmallTextError::NotText),
        };
        bytes.truncate(keep);
        Some(meta.len().max(max as u64 + 1))
    } else {
        None
    };
    let text = String::from_utf8(bytes).map_err(|_| SmallTextError::NotText)?;
    Ok(SmallText { text, cut_from })
}

fn open_within(path: &Path, root: &Path, flags: OFlag) -> Result<OwnedFd, SmallTextError> {
    let outside = || SmallTextError::Outside(root.to_path_buf());
    let rel = path.strip_prefix(root).map_err(|_| outside())?;
    let real_root = root.canonicalize()?;
    let root_fd = super::beneath::open_root(&real_root)?;
    match super::beneath::open_beneath(root_fd.as_fd(), &real_root, rel, flags, Mode::empty()) {
        Ok(fd) => Ok(fd),
        Err(e) if super::beneath::is_outside(&e) => Err(outside()),
        Err(e) => Err(e.into()),
    }
}

/// The name of the kernel's file system the file is on, if it is one of
/// those whose files are made up when read.
fn kernel_fs(file: &File) -> Option<&'static str> {
    let kind = statfs::fstatfs(file).ok()?.filesystem_type();
    let known: [(FsType, &str); 8] = [
        (statfs::PROC_SUPER_MAGIC, "proc"),
        (statfs::SYSFS_MAGIC, "sysfs"),
        (statfs::DEBUGFS_MAGIC, "debugfs"),
        (statfs::TRACEFS_MAGIC, "tracefs"),
        (statfs::SECURITYFS_MAGIC, "securityfs"),
        (statfs::CGROUP_SUPER_MAGIC, "cgroup"),
        (statfs::BPF_FS_MAGIC, "bpf"),
        (statfs::SELINUX_MAGIC, "selinuxfs"),
    ];
    known
        .iter()
        .find(|(magic, _)| *magic == kind)
        .map(|(_, name)| *name)
}

fn kind(t: &std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_file_is_read_whole_and_a_large_one_cut_on_a_character() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.md");
        std::fs::write(&p, "héllo").unwrap();
        let t = read_small_text(&p, 100, None).unwrap();
        assert_eq!((t.text.as_str(), t.cut_from), ("héllo", None));
        // The limit falls inside the é: it is left out whole.
        let t = read_small_text(&p, 2, None).unwrap();
        assert_eq!((t.text.as_str(), t.cut_from), ("h", Some(6)));
        std::fs::write(&p, b"\xff\xfe").unwrap();
        assert!(matches!(
            read_small_text(&p, 100, None),
            Err(SmallTextError::NotText)
        ));
        assert!(
            read_small_text(&dir.path().join("none"), 100, None)
                .unwrap_err()
                .is_missing()
        );
    }

    #[test]
    fn special_and_kernel_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, Mode::from_bits_truncate(0o600)).unwrap();
        // Refused at once: a read would wait for a writer forever.
        let e = read_small_text(&fifo, 100, None).unwrap_err();
        assert_eq!(e.to_string(), "it is a FIFO, not a regular file");
        let e = read_small_text(Path::new("/dev/zero"), 100, None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "it is a character device, not a regular file"
        );
        let e = read_small_text(Path::new("/proc/self/pagemap"), 100, None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "it is a file of the kernel's proc file system, not a file that holds text"
        );
        assert!(matches!(
            read_small_text(dir.path(), 100, None),
            Err(SmallTextError::NotRegular("a directory"))
        ));
    }

    #[test]
    fn beneath_a_root_a_link_out_is_refused_and_one_inside_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::write(root.join("docs/agents.md"), "inside").unwrap();
        std::fs::write(dir.path().join("secret"), "outside").unwrap();
        std::os::unix::fs::symlink("docs/agents.md", root.join("AGENTS.md")).unwrap();
        std::os::unix::fs::symlink("../secret", root.join("CLAUDE.md")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), root.join("abs.md")).unwrap();
        let inside = read_small_text(&root.join("AGENTS.md"), 100, Some(&root)).unwrap();
        assert_eq!(inside.text, "inside");
        for name in ["CLAUDE.md", "abs.md"] {
            let e = read_small_text(&root.join(name), 100, Some(&root)).unwrap_err();
            assert!(matches!(e, SmallTextError::Outside(_)), "{name}: {e}");
        }
        // A device is outside, and what is inside but not a file is named.
        std::os::unix::fs::symlink("/dev/zero", root.join("zero.md")).unwrap();
        let e = read_small_text(&root.join("zero.md"), 100, Some(&root)).unwrap_err();
        assert!(matches!(e, SmallTextError::Outside(_)), "{e}");
        nix::unistd::mkfifo(&root.join("fifo.md"), Mode::from_bits_truncate(0o600)).unwrap();
        let e = read_small_text(&root.join("fifo.md"), 100, Some(&root)).unwrap_err();
        assert_eq!(e.to_string(), "it is a FIFO, not a regular file");
        // Without a root, the person's own link is followed.
        assert_eq!(
            read_small_text(&root.join("CLAUDE.md"), 100, None)
                .unwrap()
                .text,
            "outside"
        );
    }
}
