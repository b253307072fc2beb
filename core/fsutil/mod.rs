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
    fn hash_is_stable() {
        assert_eq!(content_hash(b"abc"), content_hash(b"abc"));
        assert_ne!(content_hash(b"abc"), content_hash(b"abd"));
    }
}
