//! What is kept of one file's search: its matching lines up to the cap with
//! their context, the count of all its matching lines, and whether it turned
//! out to be binary. Nothing is allocated for a file without a match.

use std::borrow::Cow;
use std::io;

use grep_matcher::Matcher;
use grep_regex::RegexMatcher;
use grep_searcher::{Searcher, Sink, SinkContext, SinkMatch};

/// Characters of a line shown before it is cut.
pub const MAX_LINE_CHARS: usize = 300;
/// Characters kept before the match when a long line is cut around it.
const LEAD_CHARS: usize = 80;

/// One line of output: a match or a context line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HitLine {
    /// 1-based line number.
    pub number: u64,
    /// The text, without its line ending, cut when long.
    pub text: String,
    /// A matching line (else a context line).
    pub is_match: bool,
    /// Lines were left out between the previous line and this one.
    pub gap_before: bool,
    /// The line was long and is cut.
    pub cut: bool,
}

/// Collects one file's matches.
pub struct FileSink<'m> {
    matcher: &'m RegexMatcher,
    /// Kept lines, in order.
    pub lines: Vec<HitLine>,
    /// Every matching line of the file, kept or not.
    pub matched: u64,
    /// Matching lines kept.
    pub kept: usize,
    /// The file has a NUL byte: it is binary and its matches do not count.
    pub binary: bool,
    cap: usize,
    after: u64,
    last_kept: u64,
    gap: bool,
}

impl<'m> FileSink<'m> {
    /// A sink keeping at most `cap` matching lines and `after` lines of
    /// context after the last of them.
    pub fn new(matcher: &'m RegexMatcher, cap: usize, after: u64) -> Self {
        FileSink {
            matcher,
            lines: Vec::new(),
            matched: 0,
            kept: 0,
            binary: false,
            cap,
            after,
            last_kept: 0,
            gap: false,
        }
    }

    fn push(&mut self, number: u64, bytes: &[u8], is_match: bool) {
        let bytes = trim_line_end(bytes);
        let text = String::from_utf8_lossy(bytes);
        let cut = if text.len() <= MAX_LINE_CHARS {
            None
        } else {
            let focus = if is_match { self.focus(bytes) } else { 0 };
            cut_around(&text, focus)
        };
        let (text, cut) = match cut {
            Some(c) => (c, true),
            None => (text.into_owned(), false),
        };
        let gap_before = std::mem::take(&mut self.gap) && !self.lines.is_empty();
        self.lines.push(HitLine {
            number,
            text,
            is_match,
            gap_before,
            cut,
        });
    }

    /// The character position of the first match in a line.
    fn focus(&self, line: &[u8]) -> usize {
        match self.matcher.find(line) {
            Ok(Some(m)) => lossy_chars(&line[..m.start()]),
            _ => 0,
        }
    }
}

impl Sink for FileSink<'_> {
    type Error = io::Error;

    // Without multi-line search a match is exactly one line.
    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.matched += 1;
        if self.kept < self.cap {
            let number = mat.line_number().unwrap_or(0);
            self.push(number, mat.bytes(), true);
            self.kept += 1;
            self.last_kept = number;
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, io::Error> {
        let number = ctx.line_number().unwrap_or(0);
        // After the cap only the context that follows the last kept match stays.
        if self.kept < self.cap || (self.kept > 0 && number <= self.last_kept + self.after) {
            self.push(number, ctx.bytes(), false);
        }
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, io::Error> {
        self.gap = true;
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}

fn trim_line_end(bytes: &[u8]) -> &[u8] {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    bytes.strip_suffix(b"\r").unwrap_or(bytes)
}

/// Characters that some bytes stand for, invalid bytes counting as one
/// replacement character each run, as `from_utf8_lossy` shows them.
fn lossy_chars(bytes: &[u8]) -> usize {
    match String::from_utf8_lossy(bytes) {
        Cow::Borrowed(s) => s.chars().count(),
        Cow::Owned(s) => s.chars().count(),
    }
}

/// A window of [`MAX_LINE_CHARS`] characters of a long line, placed so that
/// the character at `focus` (the match) is in view; `…` marks each cut end.
/// `None` when the line is short enough after all.
pub fn cut_around(text: &str, focus: usize) -> Option<String> {
    let total = text.chars().count();
    if total <= MAX_LINE_CHARS {
        return None;
    }
    let start = focus.saturating_sub(LEAD_CHARS).min(total - MAX_LINE_CHARS);
    let mut out = String::with_capacity(MAX_LINE_CHARS * 4 + 6);
    if start > 0 {
        out.push('…');
    }
    out.extend(text.chars().skip(start).take(MAX_LINE_CHARS));
    if start + MAX_LINE_CHARS < total {
        out.push('…');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_cut_around_the_match() {
        let line = format!("{}NEEDLE{}", "a".repeat(5000), "b".repeat(5000));
        let cut = cut_around(&line, 5000).unwrap();
        assert!(cut.starts_with('…') && cut.ends_with('…'));
        assert!(cut.contains("NEEDLE"));
        assert_eq!(cut.chars().count(), MAX_LINE_CHARS + 2);
        let head = cut_around(&line, 3).unwrap();
        assert!(!head.starts_with('…'));
        let tail = cut_around(&line, 10_005).unwrap();
        assert!(tail.ends_with('b') && tail.starts_with('…'));
        assert_eq!(cut_around("short", 0), None);
        // Multi-byte characters are counted as characters.
        assert_eq!(cut_around(&"é".repeat(MAX_LINE_CHARS), 0), None);
    }

    #[test]
    fn sink_caps_and_keeps_trailing_context() {
        use grep_searcher::SearcherBuilder;
        let matcher = RegexMatcher::new("x").unwrap();
        let mut searcher = SearcherBuilder::new()
            .line_number(true)
            .before_context(1)
            .after_context(1)
            .build();
        let text = "x1\na\nx2\nb\nc\nd\nx3\ne\n";
        let mut sink = FileSink::new(&matcher, 2, 1);
        searcher
            .search_slice(&matcher, text.as_bytes(), &mut sink)
            .unwrap();
        assert_eq!(sink.matched, 3);
        assert_eq!(sink.kept, 2);
        let shown: Vec<(u64, &str, bool)> = sink
            .lines
            .iter()
            .map(|l| (l.number, l.text.as_str(), l.gap_before))
            .collect();
        assert_eq!(
            shown,
            vec![
                (1, "x1", false),
                (2, "a", false),
                (3, "x2", false),
                (4, "b", false)
            ]
        );
    }
}
