//! File helpers the file tools share: content hashes that prove a caller
//! saw the current file, names to suggest when a path does not exist,
//! binary detection, atomic replacement of a file ([`AtomicFile`]),
//! opening paths confined to a directory ([`beneath`]), and reading a small
//! text file that someone else may have put there ([`read_small_text`]).

mod atomic;
pub mod beneath;
mod small;

pub use atomic::{
    AtomicFile, WriteError, copy_metadata, has_content, has_content_of, hash_file, hash_of,
    resolve_symlinks, write_atomic,
};
pub use small::{SmallText, SmallTextError, read_small_text};

use std::path::Path;

/// Bytes examined for a NUL to decide that a file is binary (as `git diff` does).
pub const BINARY_PROBE: usize = 8192;

/// Whether content that starts with `head` is binary: a NUL in the first
/// [`BINARY_PROBE`] bytes.
pub fn looks_binary(head: &[u8]) -> bool {
    memchr::memchr(0, &head[..head.len().min(BINARY_PROBE)]).is_some()
}

/// A streaming hasher for file content; the digest is what `ag-read`
/// reports and what `expected_hash` is compared with.
#[derive(Default)]
pub struct ContentHasher(xxhash_rust::xxh3::Xxh3);

impl ContentHasher {
    /// A new hasher.
    pub fn new() -> Self {
        Self::default()
    }
    /// Adds bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    /// The digest as `xxh3:<32 hex digits>`.
    pub fn finish(&self) -> String {
        format!("xxh3:{:032x}", self.0.digest128())
    }
}

/// The content hash of some bytes.
pub fn content_hash(bytes: &[u8]) -> String {
    let mut h = ContentHasher::new();
    h.update(bytes);
    h.finish()
}

/// Names in the directory of `path` that look like its file name, best first
/// (at most three), for "did you mean" messages.
pub fn similar_names(path: &Path) -> Vec<String> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Vec::new();
    };
    let wanted = name.to_string_lossy().to_lowercase();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut scored: Vec<(usize, String)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let candidate = e.file_name().to_string_lossy().into_owned();
            let lower = candidate.to_lowercase();
            let distance = edit_distance(&wanted, &lower);
            let close = distance <= wanted.chars().count().max(3) / 3
                || lower.starts_with(&wanted)
                || wanted.starts_with(&lower)
                || stem(&lower) == stem(&wanted);
            close.then_some((distance, candidate))
        })
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, n)| n).collect()
}

/// Files beside `path` whose names are one slip from its own: the same
/// name in another case (`README.md` for `readme.md`), with or without a
/// leading dot (`gitconfig` for `.gitconfig`), or one letter or mark
/// added, left out or changed (`style.css` for `styles.css`). A changed
/// digit is no slip (`v1.py` beside `v2.py`: files numbered on purpose),
/// and names under five characters are left alone. For a new file, to name
/// the file that may have been meant.
pub fn one_slip_names(path: &Path) -> Vec<String> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Vec::new();
    };
    let name = name.to_string_lossy();
    if name.chars().count() < 5 {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    }) else {
        return Vec::new();
    };
    let mut found: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let other = e.file_name().to_string_lossy().into_owned();
            // The name first: a directory of many files costs one look at
            // each name, and a stat only for the near ones.
            (other != name
                && one_slip(&name, &other)
                && std::fs::metadata(e.path()).is_ok_and(|m| m.is_file()))
            .then_some(other)
        })
        .collect();
    found.sort();
    found.truncate(3);
    found
}

/// Whether two different names are one slip apart (see [`one_slip_names`]).
fn one_slip(a: &str, b: &str) -> bool {
    let (a, b) = (a.to_lowercase(), b.to_lowercase());
    if a == b || a.strip_prefix('.') == Some(&b) || b.strip_prefix('.') == Some(&a) {
        return true;
    }
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let (short, long) = if a.len() <= b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    if long.len() - short.len() > 1 {
        return false;
    }
    let head = short
        .iter()
        .zip(long.iter())
        .take_while(|(x, y)| x == y)
        .count();
    let slipped = if short.len() == long.len() {
        // One character changed: the rest must match.
        short[head + 1..] == long[head + 1..]
            && !short[head].is_ascii_digit()
            && !long[head].is_ascii_digit()
    } else {
        // One character added.
        short[head..] == long[head + 1..] && !long[head].is_ascii_digit()
    };
    head < long.len() && slipped
}

fn stem(name: &str) -> &str {
    name.split('.').next().unwrap_or(name)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_near_names() {
        let dir = tempfile::tempdir().unwrap();
        for n in ["main.rs", "lib.rs", "README.md"] {
            std::fs::write(dir.path().join(n), "").unwrap();
        }
        assert_eq!(similar_names(&dir.path().join("mian.rs")), vec!["main.rs"]);
        assert_eq!(
            similar_names(&dir.path().join("readme.md")),
            vec!["README.md"]
        );
        assert!(similar_names(&dir.path().join("zzz.py")).is_empty());
    }

    #[test]
    fn names_one_slip_apart() {
        for (a, b) in [
            ("styles.css", "style.css"),
            (".gitconfig", "gitconfig"),
            ("readme.md", "README.md"),
            ("config.yml", "config.yaml"),
            ("utils.js", "util.js"),
            ("index.htm", "index.html"),
        ] {
            assert!(one_slip(a, b) && one_slip(b, a), "{a} {b}");
        }
        for (a, b) in [
            ("notes2.txt", "notes1.txt"),
            ("v10.py", "v1.py"),
            ("style.css", "script.js"),
            ("styles.css", "styles.css.bak"),
        ] {
            assert!(!one_slip(a, b) && !one_slip(b, a), "{a} {b}");
        }
        let dir = tempfile::tempdir().unwrap();
        for n in ["style.css", "notes1.txt", "a.py"] {
            std::fs::write(dir.path().join(n), "").unwrap();
        }
        std::fs::create_dir(dir.path().join("styles")).unwrap();
        assert_eq!(
            one_slip_names(&dir.path().join("styles.css")),
            vec!["style.css"]
        );
        assert!(one_slip_names(&dir.path().join("notes2.txt")).is_empty());
        // Short names and directories are left alone.
        assert!(one_slip_names(&dir.path().join("b.py")).is_empty());
        assert!(one_slip_names(&dir.path().join("style")).is_empty());
    }

    #[test]
    fn hash_is_stable() {
        assert_eq!(content_hash(b"abc"), content_hash(b"abc"));
        assert_ne!(content_hash(b"abc"), content_hash(b"abd"));
    }
}
