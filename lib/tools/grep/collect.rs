//! The parallel search: one visitor per walker thread, each with its own
//! searchers, matcher and read buffer, keeping only the files that can still
//! be among the first `cap` matches in path order. That bound keeps memory
//! small on huge trees and makes the output the same whatever order the
//! threads finish in.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use grep_regex::RegexMatcher;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::{DirEntry, WalkParallel};

use super::sink::{FileSink, HitLine, Kept};
use super::whole::{self, Taken};
use crate::tool_protocol::Context;
use crate::tools::globs::PathGlobs;
use crate::tools::walk::{FileVisitor, WalkErrors, relative, visit_files};

/// The kept matches of one file.
#[derive(Debug)]
pub struct FileHits {
    /// Kept lines, matches and context.
    pub lines: Vec<HitLine>,
    /// Matching lines among `lines`.
    pub kept: usize,
}

/// What a search found: counts over everything searched, and the files whose
/// matches come first in path order.
#[derive(Debug, Default)]
pub struct Found {
    /// Files with their kept lines, in path order.
    pub files: BTreeMap<PathBuf, FileHits>,
    kept_total: usize,
    /// Files searched (binary ones included).
    pub files_searched: u64,
    /// Files with at least one matching line.
    pub files_matched: u64,
    /// Matching lines in all files.
    pub total_matches: u64,
    /// Files skipped because they are binary.
    pub binary_skipped: u64,
    /// Paths that could not be read.
    pub errors: WalkErrors,
}

impl Found {
    /// Adds a file, then drops the files (last in path order) that can no
    /// longer be among the first `cap` matches.
    fn add(&mut self, path: PathBuf, hits: FileHits, cap: usize) {
        self.kept_total += hits.kept;
        if let Some(old) = self.files.insert(path, hits) {
            self.kept_total -= old.kept;
        }
        while let Some((_, last)) = self.files.last_key_value() {
            if self.kept_total - last.kept < cap {
                break;
            }
            self.kept_total -= last.kept;
            self.files.pop_last();
        }
    }

    /// Whether `cap` matches are already kept from files before `path`, so
    /// that none of its own can be shown.
    fn is_full_before(&self, path: &Path, cap: usize) -> bool {
        self.kept_total >= cap
            && self
                .files
                .last_key_value()
                .is_some_and(|(last, _)| path > last.as_path())
    }

    /// Folds another thread's findings into these.
    pub fn merge(&mut self, other: Found, cap: usize) {
        self.files_searched += other.files_searched;
        self.files_matched += other.files_matched;
        self.total_matches += other.total_matches;
        self.binary_skipped += other.binary_skipped;
        self.errors.merge(other.errors);
        for (path, hits) in other.files {
            self.add(path, hits, cap);
        }
    }
}

/// What every visitor shares.
pub struct Shared<'a> {
    /// The call's context (for error messages).
    pub ctx: &'a Context,
    /// The compiled query.
    pub matcher: RegexMatcher,
    /// Where the walk starts; include globs match paths relative to it.
    pub start: PathBuf,
    /// Only files matching these are searched.
    pub include: Option<PathGlobs>,
    /// Matching lines to keep.
    pub cap: usize,
    /// Context lines before and after each match.
    pub context: usize,
}

impl Shared<'_> {
    /// Searches the files of `walk`, one visitor per walker thread, and
    /// merges what they found.
    pub fn search(&self, walk: WalkParallel) -> Found {
        let parts = visit_files(walk, || Visitor {
            shared: self,
            // Each thread gets its own matcher, as ripgrep does, so that
            // threads do not contend for the regex's scratch space.
            matcher: self.matcher.clone(),
            streams: SearcherBuilder::new()
                .line_number(true)
                .binary_detection(BinaryDetection::quit(b'\x00'))
                .before_context(self.context)
                .after_context(self.context)
                .build(),
            // The whole text's search: its binary check is made before
            // (over the whole file, as a stream's is), its lines are
            // numbered by the sink.
            wholes: SearcherBuilder::new()
                .line_number(false)
                .binary_detection(BinaryDetection::none())
                .before_context(self.context)
                .after_context(self.context)
                .build(),
            buf: Vec::new(),
            found: Found::default(),
        });
        let mut all = Found::default();
        for part in parts {
            all.merge(part, self.cap);
        }
        all
    }
}

/// One walker thread's search.
struct Visitor<'s, 'a> {
    shared: &'s Shared<'a>,
    matcher: RegexMatcher,
    /// Searches a stream and numbers its lines: a file too large to read
    /// whole, or one with a byte-order mark (transcoded as it is read).
    streams: Searcher,
    /// Searches a file's whole text without numbering lines.
    wholes: Searcher,
    /// The thread's read buffer (see [`whole::read`]).
    buf: Vec<u8>,
    found: Found,
}

impl Visitor<'_, '_> {
    /// Searches `file` into `sink` as [`super::whole`] explains: whole
    /// when it is small, as a stream (the bytes already read, then the
    /// rest) when it is not.
    fn search(&mut self, file: &File, cap: usize) -> io::Result<Kept> {
        let context = self.shared.context as u64;
        let Visitor {
            matcher,
            streams,
            wholes,
            buf,
            ..
        } = self;
        let matcher = &*matcher;
        match whole::read(file, buf)? {
            Taken::All(n) => {
                let text = &buf[..n];
                if has_bom(text) {
                    // Transcoded by the searcher, as a stream's would be.
                    let mut sink = FileSink::new(matcher, cap, context);
                    streams.search_slice(matcher, text, &mut sink)?;
                    Ok(sink.finish())
                } else if memchr::memchr(0, text).is_some() {
                    Ok(Kept {
                        binary: true,
                        ..Kept::default()
                    })
                } else {
                    let mut sink = FileSink::counting(matcher, cap, context, text);
                    wholes.search_slice(matcher, text, &mut sink)?;
                    Ok(sink.finish())
                }
            }
            Taken::Head(n) => {
                let mut sink = FileSink::new(matcher, cap, context);
                let stream = io::Cursor::new(&buf[..n]).chain(file);
                streams.search_reader(matcher, stream, &mut sink)?;
                Ok(sink.finish())
            }
        }
    }
}

/// Whether a text starts with a byte-order mark the searcher transcodes
/// (UTF-8, UTF-16LE or UTF-16BE: all that `for_bom` knows).
fn has_bom(text: &[u8]) -> bool {
    encoding_rs::Encoding::for_bom(text).is_some()
}

impl FileVisitor for Visitor<'_, '_> {
    type Found = Found;

    fn file(&mut self, entry: DirEntry) {
        let shared = self.shared;
        // The start itself, when it is a file, is searched whatever its name.
        if entry.depth() > 0
            && let Some(include) = &shared.include
            && !include.is_match(relative(entry.path(), &shared.start))
        {
            return;
        }
        // A file after enough kept matches is only counted: its lines would
        // be dropped anyway, so they are not copied.
        let cap = if self.found.is_full_before(entry.path(), shared.cap) {
            0
        } else {
            shared.cap
        };
        // Opened through the context: under --root in one step from the
        // root, so that a directory of the walk swapped for a symlink cannot
        // lead the search outside; FIFOs, sockets and devices (which the
        // walk can meet through a symlink or a swap) are skipped unopened.
        // A name that leads outside the root came from a directory listed
        // while a swapped symlink pointed out: it is not part of the tree,
        // and not even its name is reported.
        let file = match shared.ctx.open_read(entry.path()) {
            Ok(f) => f,
            Err(e)
                if crate::tool_protocol::is_not_a_file(&e)
                    || crate::tool_protocol::is_outside_root(&e) =>
            {
                return;
            }
            Err(_)
                if shared.ctx.root.is_some()
                    && !crate::tools::find::still_inside(shared.ctx, &entry) =>
            {
                return;
            }
            Err(e) => {
                self.found
                    .errors
                    .push(format!("{}: {e}", shared.ctx.show(entry.path())));
                return;
            }
        };
        self.found.files_searched += 1;
        let sink = match self.search(&file, cap) {
            Ok(sink) => sink,
            Err(e) => {
                self.found
                    .errors
                    .push(format!("{}: {e}", shared.ctx.show(entry.path())));
                return;
            }
        };
        if sink.binary {
            self.found.binary_skipped += 1;
            return;
        }
        if sink.matched == 0 {
            return;
        }
        self.found.files_matched += 1;
        self.found.total_matches += sink.matched;
        if sink.kept == 0 {
            return;
        }
        let hits = FileHits {
            lines: sink.lines,
            kept: sink.kept,
        };
        self.found.add(entry.into_path(), hits, shared.cap);
    }

    fn error(&mut self, err: &ignore::Error) {
        if crate::tools::find::reportable(self.shared.ctx, err) {
            self.found.errors.record(self.shared.ctx, err);
        }
    }

    fn finish(self) -> Found {
        self.found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(n: usize) -> FileHits {
        FileHits {
            lines: (0..n)
                .map(|i| HitLine {
                    number: i as u64 + 1,
                    text: String::new(),
                    is_match: true,
                    gap_before: false,
                    cut: false,
                })
                .collect(),
            kept: n,
        }
    }

    #[test]
    fn keeps_only_files_that_can_still_be_shown() {
        let mut f = Found::default();
        f.add("c".into(), hits(2), 3);
        f.add("d".into(), hits(1), 3);
        // c(2)+d(1) = 3: d is still needed.
        assert_eq!(f.files.len(), 2);
        f.add("a".into(), hits(3), 3);
        // a alone fills the cap.
        assert_eq!(
            f.files.keys().collect::<Vec<_>>(),
            vec![&PathBuf::from("a")]
        );
        let mut other = Found::default();
        other.add("b".into(), hits(1), 3);
        f.merge(other, 3);
        assert_eq!(f.files.len(), 1);
        assert!(f.is_full_before(Path::new("b"), 3));
        assert!(!f.is_full_before(Path::new("0"), 3));
        assert!(!f.is_full_before(Path::new("b"), 4));
    }
}
