//! What is kept of one file's search: its matching lines up to the cap with
//! their context, the count of all its matching lines, and whether it turned
//! out to be binary. Nothing is allocated for a file without a match, and
//! when the file's whole text is at hand its lines are numbered only where
//! one is kept (see [`super::whole`]).

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

/// What a file's search kept, once it is over.
#[derive(Debug, Default)]
pub struct Kept {
    /// Kept lines, in order.
    pub lines: Vec<HitLine>,
    /// Every matching line of the file, kept or not.
    pub matched: u64,
    /// Matching lines kept.
    pub kept: usize,
    /// The file has a NUL byte: it is binary and its matches do not count.
    pub binary: bool,
}

/// Where a sink's line numbers come from.
enum Numbers<'t> {
    /// The searcher counts every line and reports the numbers.
    Searcher,
    /// The searcher counts nothing: the sink counts the newlines of `text`,
    /// the whole file, up to each line it keeps. `upto` is where the count
    /// stands and `line` the number of the line that starts there.
    Counted {
        text: &'t [u8],
        upto: usize,
        line: u64,
    },
}

impl Numbers<'_> {
    /// The number of the line at byte `offset`, as the searcher reported
    /// it or counted from where the last count stopped (lines come in
    /// order).
    fn of(&mut self, reported: Option<u64>, offset: u64) -> u64 {
        match self {
            Numbers::Searcher => reported.unwrap_or(0),
            Numbers::Counted { text, upto, line } => {
                let offset = (offset as usize).min(text.len());
                if offset > *upto {
                    *line += memchr::memchr_iter(b'\n', &text[*upto..offset]).count() as u64;
                    *upto = offset;
                }
                *line
            }
        }
    }
}

/// Collects one file's matches.
pub struct FileSink<'m, 't> {
    matcher: &'m RegexMatcher,
    numbers: Numbers<'t>,
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
    /// The cap is reached and the context after the last kept match is done.
    past_tail: bool,
    gap: bool,
}

impl<'m, 't> FileSink<'m, 't> {
    /// A sink keeping at most `cap` matching lines and `after` lines of
    /// context after the last of them, numbered by a searcher that counts
    /// lines.
    pub fn new(matcher: &'m RegexMatcher, cap: usize, after: u64) -> Self {
        Self::with_numbers(matcher, cap, after, Numbers::Searcher)
    }

    /// The same for a search of `text`, a whole file, by a searcher that
    /// does not count lines: the sink numbers the lines it keeps itself.
    pub fn counting(matcher: &'m RegexMatcher, cap: usize, after: u64, text: &'t [u8]) -> Self {
        let numbers = Numbers::Counted {
            text,
            upto: 0,
            line: 1,
        };
        Self::with_numbers(matcher, cap, after, numbers)
    }

    /// What the search kept.
    pub fn finish(self) -> Kept {
        Kept {
            lines: self.lines,
            matched: self.matched,
            kept: self.kept,
            binary: self.binary,
        }
    }

    fn with_numbers(
        matcher: &'m RegexMatcher,
        cap: usize,
        after: u64,
        numbers: Numbers<'t>,
    ) -> Self {
        FileSink {
            matcher,
            numbers,
            lines: Vec::new(),
            matched: 0,
            kept: 0,
            binary: false,
            cap,
            after,
            last_kept: 0,
            past_tail: false,
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

impl Sink for FileSink<'_, '_> {
    type Error = io::Error;

    // Without multi-line search a match is exactly one line.
    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.matched += 1;
        if self.kept < self.cap {
            let number = self
                .numbers
                .of(mat.line_number(), mat.absolute_byte_offset());
            self.push(number, mat.bytes(), true);
            self.kept += 1;
            self.last_kept = number;
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, io::Error> {
        let full = self.kept >= self.cap;
        // Once the cap is reached, only the context that follows the last
        // kept match stays: a file with nothing kept, or a line past that
        // context, needs no number (and no count of newlines up to it).
        if full && (self.kept == 0 || self.past_tail) {
            return Ok(true);
        }
        let number = self
            .numbers
            .of(ctx.line_number(), ctx.absolute_byte_offset());
        if !full || number <= self.last_kept + self.after {
            self.push(number, ctx.bytes(), false);
        } else {
            self.past_tail = true;
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

    /// The lines a stream's search keeps (the searcher numbering them),
    /// and what the whole text's search keeps (the sink numbering them).
    fn both(text: &[u8], cap: usize, context: usize) -> (Kept, Kept) {
        use grep_searcher::{BinaryDetection, SearcherBuilder};
        let matcher = RegexMatcher::new("x").unwrap();
        let build = |numbered: bool| {
            SearcherBuilder::new()
                .line_number(numbered)
                .binary_detection(BinaryDetection::none())
                .before_context(context)
                .after_context(context)
                .build()
        };
        let mut stream = FileSink::new(&matcher, cap, context as u64);
        build(true)
            .search_reader(&matcher, text, &mut stream)
            .unwrap();
        let mut whole = FileSink::counting(&matcher, cap, context as u64, text);
        build(false)
            .search_slice(&matcher, text, &mut whole)
            .unwrap();
        (stream.finish(), whole.finish())
    }

    proptest::proptest! {
        #[test]
        fn lines_counted_by_the_sink_are_numbered_as_the_searcher_numbers_them(
            lines in proptest::collection::vec("[ax]{0,3}(\r)?", 0..40),
            ends_with_newline: bool,
            cap in 0usize..6,
            context in 0usize..3,
        ) {
            let mut text = lines.join("\n");
            if ends_with_newline {
                text.push('\n');
            }
            let (stream, whole) = both(text.as_bytes(), cap, context);
            proptest::prop_assert_eq!(&stream.lines, &whole.lines);
            proptest::prop_assert_eq!(stream.matched, whole.matched);
            proptest::prop_assert_eq!(stream.kept, whole.kept);
        }
    }
}
