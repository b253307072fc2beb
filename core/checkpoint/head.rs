//! The session's last checkpoint as this machine last wrote it: a small file
//! beside the private index, `<session-id>.head`, holding the commit and its
//! tree. It spares a checkpoint the `git for-each-ref` that would read the
//! ref, which is a process of its own on every turn.
//!
//! The file is a hint, never the truth: the ref is. Anything may have moved
//! the ref since (the user, `ag-session checkpoint` or `rewind --force`, a
//! second ag-loop on the same session, a prune), so every use is checked by
//! git itself. A new commit is written onto the ref only if the ref is still
//! at the cached commit (`update-ref <ref> <new> <old>`), and a tree equal
//! to the cached one is taken as "no change" only after the ref was read.
//! A missing, unreadable or malformed file is no hint at all.

use std::path::{Path, PathBuf};

/// A checkpoint commit and its tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// The commit on the session's ref.
    pub commit: String,
    /// Its tree.
    pub tree: String,
}

/// The file that caches the head of the session whose private index is
/// `index`.
pub fn path(index: &Path) -> PathBuf {
    let mut name = index.as_os_str().to_owned();
    name.push(".head");
    PathBuf::from(name)
}

/// The cached head, if the file holds one that looks right.
pub fn read(index: &Path) -> Option<Head> {
    let text = std::fs::read_to_string(path(index)).ok()?;
    let mut words = text.split_whitespace();
    let commit = words.next()?;
    let tree = words.next()?;
    if words.next().is_some() || !is_oid(commit) || !is_oid(tree) {
        return None;
    }
    Some(Head {
        commit: commit.to_string(),
        tree: tree.to_string(),
    })
}

/// Remembers `head` (or forgets, for `None`). Written whole or not at all
/// (a temporary file renamed over it), so that two writers never leave a
/// commit of one with the tree of the other. A failure only costs the next
/// checkpoint a read of the ref, so it is not reported.
pub fn write(index: &Path, head: Option<&Head>) {
    let file = path(index);
    let Some(head) = head else {
        let _ = std::fs::remove_file(&file);
        return;
    };
    let mut tmp = file.clone().into_os_string();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let text = format!("{} {}\n", head.commit, head.tree);
    if std::fs::write(&tmp, text).is_err() || std::fs::rename(&tmp, &file).is_err() {
        let _ = std::fs::remove_file(&tmp);
        let _ = std::fs::remove_file(&file);
    }
}

/// True for a file of the index directory that is not an index (a cached
/// head, its temporary file, a lock, a run's lock), which must never seed a
/// new index.
pub fn is_not_an_index(name: &str) -> bool {
    name.ends_with(".lock")
        || name.ends_with(".head")
        || name.ends_with(".tmp")
        || name.ends_with(".alive")
}

/// A full object id (SHA-1 or SHA-256), lower-case hex.
fn is_oid(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_is_written_read_and_forgotten() {
        let tmp = tempfile::tempdir().unwrap();
        let index = tmp.path().join("s1");
        assert_eq!(read(&index), None);
        let h = Head {
            commit: "a".repeat(40),
            tree: "b".repeat(40),
        };
        write(&index, Some(&h));
        assert_eq!(read(&index), Some(h));
        write(&index, None);
        assert_eq!(read(&index), None);
        assert!(!path(&index).exists());
    }

    #[test]
    fn a_malformed_file_is_no_hint() {
        let tmp = tempfile::tempdir().unwrap();
        let index = tmp.path().join("s1");
        for text in [
            "",
            "abc def\n",
            &format!("{} \n", "a".repeat(40)),
            &format!("{} {} x\n", "a".repeat(40), "b".repeat(40)),
            &format!("{} {}\n", "g".repeat(40), "b".repeat(40)),
        ] {
            std::fs::write(path(&index), text).unwrap();
            assert_eq!(read(&index), None, "{text:?}");
        }
    }

    #[test]
    fn heads_and_temporary_files_never_seed_an_index() {
        assert!(is_not_an_index("s1.head"));
        assert!(is_not_an_index("s1.head.42.tmp"));
        assert!(is_not_an_index("s1.lock"));
        assert!(is_not_an_index("run-0195f0a1.alive"));
        assert!(!is_not_an_index("0195f0a1-b2c3"));
    }
}
