//! Finding a run of whole lines in a file, exactly or with the whitespace
//! differences a model makes when it copies code: trailing whitespace,
//! indentation, then runs of spaces and typographic punctuation. Patches
//! (ag-patch's hunks) and code sketches (ag-edit's `code_edit`) are placed
//! with it; the callers decide which matches are unique enough to use.
//! Also the re-indentation of new lines when a match ignored indentation.

use std::borrow::Cow;
use std::cell::OnceCell;

/// How loosely two lines are compared; each level also ignores what the
/// ones before it do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fuzz {
    /// Byte for byte (a carriage return at the end aside).
    Exact,
    /// Whitespace at the ends of lines ignored.
    TrailingWhitespace,
    /// Indentation ignored too; new lines are re-indented.
    Indentation,
    /// Runs of whitespace inside lines, typographic quotes and dashes and
    /// no-break spaces ignored too.
    Punctuation,
}

impl Fuzz {
    /// Every level, strictest first.
    pub const ALL: [Fuzz; 4] = [
        Fuzz::Exact,
        Fuzz::TrailingWhitespace,
        Fuzz::Indentation,
        Fuzz::Punctuation,
    ];

    /// What was ignored, for result messages.
    pub fn describe(self) -> &'static str {
        match self {
            Fuzz::Exact => "matched exactly",
            Fuzz::TrailingWhitespace => "trailing whitespace was ignored",
            Fuzz::Indentation => {
                "indentation was ignored (the new lines were re-indented to match the file)"
            }
            Fuzz::Punctuation => {
                "whitespace and typographic quotes and dashes were ignored (new lines re-indented)"
            }
        }
    }

    /// A short name for details.
    pub fn name(self) -> &'static str {
        match self {
            Fuzz::Exact => "exact",
            Fuzz::TrailingWhitespace => "trailing_whitespace",
            Fuzz::Indentation => "indentation",
            Fuzz::Punctuation => "whitespace_and_punctuation",
        }
    }

    /// Whether new lines should be re-indented after a match at this level.
    pub fn reindents(self) -> bool {
        self >= Fuzz::Indentation
    }

    /// `line` as this level compares it.
    pub fn norm(self, line: &str) -> Cow<'_, str> {
        match self {
            Fuzz::Exact => Cow::Borrowed(line),
            Fuzz::TrailingWhitespace => Cow::Borrowed(line.trim_end()),
            Fuzz::Indentation => Cow::Borrowed(line.trim()),
            Fuzz::Punctuation => Cow::Owned(loosen(line)),
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Whitespace runs as one space, the ends trimmed, typographic punctuation
/// as ASCII.
fn loosen(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut space = false;
    for c in line.trim().chars() {
        let c = match c {
            '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{201b}' | '\u{2032}' => '\'',
            '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{201f}' | '\u{2033}' => '"',
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
            | '\u{2212}' => '-',
            c if c.is_whitespace() => ' ',
            c => c,
        };
        if c == ' ' {
            if !space {
                out.push(' ');
            }
            space = true;
        } else {
            out.push(c);
            space = false;
        }
    }
    out
}

/// A file's lines (without line endings or BOM), with their normalised
/// forms computed when first needed.
pub struct FileLines {
    /// The lines.
    pub lines: Vec<String>,
    norms: [OnceCell<Vec<String>>; 3],
}

impl FileLines {
    /// Splits `content` into lines: a BOM is skipped, CRLF and LF both
    /// end a line, and a final line ending does not start another line.
    /// Bytes that are not UTF-8 become U+FFFD (such lines match nothing
    /// a patch writes, so they are never silently rewritten).
    pub fn new(content: &[u8]) -> FileLines {
        let body = content.strip_prefix(super::text::BOM).unwrap_or(content);
        let text = String::from_utf8_lossy(body);
        let mut lines: Vec<String> = text
            .split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
            .collect();
        if lines.last().is_some_and(String::is_empty) {
            lines.pop();
        }
        FileLines::from_lines(lines)
    }

    /// From lines already split.
    pub fn from_lines(lines: Vec<String>) -> FileLines {
        FileLines {
            lines,
            norms: Default::default(),
        }
    }

    /// Number of lines.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    fn normalized(&self, fuzz: Fuzz) -> &[String] {
        match fuzz {
            Fuzz::Exact => &self.lines,
            _ => self.norms[fuzz.index() - 1].get_or_init(|| {
                self.lines
                    .iter()
                    .map(|l| fuzz.norm(l).into_owned())
                    .collect()
            }),
        }
    }

    /// Whether `pat` matches the lines starting at `at`.
    pub fn matches_at(&self, pat: &[&str], at: usize, fuzz: Fuzz) -> bool {
        let norm = self.normalized(fuzz);
        at + pat.len() <= norm.len()
            && pat
                .iter()
                .zip(&norm[at..])
                .all(|(p, l)| fuzz.norm(p) == l.as_str())
    }

    /// Where `pat` matches whole lines at or after line index `from`, at
    /// most `limit` places, in order. An empty pattern matches nowhere.
    pub fn find(&self, pat: &[&str], from: usize, fuzz: Fuzz, limit: usize) -> Vec<usize> {
        let mut found = Vec::new();
        if pat.is_empty() || pat.len() > self.len() {
            return found;
        }
        let norm = self.normalized(fuzz);
        let pat: Vec<Cow<str>> = pat.iter().map(|p| fuzz.norm(p)).collect();
        let last = self.len() - pat.len();
        for at in from..=last {
            if norm[at] == *pat[0] && pat[1..].iter().zip(&norm[at + 1..]).all(|(p, l)| **p == *l) {
                found.push(at);
                if found.len() >= limit {
                    break;
                }
            }
        }
        found
    }

    /// The first place at or after `from` where `pat` matches at the
    /// strictest level that finds it.
    pub fn find_first(&self, pat: &[&str], from: usize) -> Option<(usize, Fuzz)> {
        Fuzz::ALL
            .iter()
            .find_map(|&f| self.find(pat, from, f, 1).first().map(|&at| (at, f)))
    }
}

/// The leading whitespace of a line.
pub fn indent(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// How to translate indentation learned from lines that matched loosely:
/// pairs of (indentation in the model's text, indentation in the file),
/// one per distinct indentation of the model's text. Empty when nothing
/// needs translating.
pub fn indent_pairs<'a>(theirs: &[&'a str], file: &[&'a str]) -> Vec<(&'a str, &'a str)> {
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for (t, f) in theirs.iter().zip(file) {
        if t.trim().is_empty() || f.trim().is_empty() {
            continue;
        }
        let (ti, fi) = (indent(t), indent(f));
        if !pairs.iter().any(|(seen, _)| *seen == ti) {
            pairs.push((ti, fi));
        }
    }
    if pairs.iter().all(|(t, f)| t == f) {
        pairs.clear();
    }
    pairs
}

/// `line` with its indentation translated by the pair whose model-side
/// indentation is the longest prefix of the line's, so that indentation
/// relative to the matched lines is kept.
pub fn reindent(pairs: &[(&str, &str)], line: &str) -> String {
    if pairs.is_empty() || line.trim().is_empty() {
        return line.to_string();
    }
    let ind = indent(line);
    match pairs
        .iter()
        .filter(|(t, _)| ind.starts_with(t))
        .max_by_key(|(t, _)| t.len())
    {
        Some((t, f)) => format!("{f}{}", &line[t.len()..]),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> FileLines {
        FileLines::new(text.as_bytes())
    }

    #[test]
    fn splits_like_an_editor() {
        let f = FileLines::new(b"\xEF\xBB\xBFa\r\nb\nc");
        assert_eq!(f.lines, vec!["a", "b", "c"]);
        assert_eq!(file("a\n").lines, vec!["a"]);
        assert_eq!(file("").len(), 0);
        assert_eq!(file("\n").lines, vec![""]);
    }

    #[test]
    fn levels_from_strict_to_loose() {
        let f = file("fn a() {  \n\tx = “1”;\n}\n");
        assert_eq!(
            f.find(&["fn a() {"], 0, Fuzz::Exact, 5),
            Vec::<usize>::new()
        );
        assert_eq!(
            f.find(&["fn a() {"], 0, Fuzz::TrailingWhitespace, 5),
            vec![0]
        );
        assert_eq!(f.find(&["    x = “1”;"], 0, Fuzz::Indentation, 5), vec![1]);
        assert_eq!(f.find(&["x  =  \"1\";"], 0, Fuzz::Punctuation, 5), vec![1]);
        assert_eq!(
            f.find_first(&["fn a() {", "  x = \"1\";", "}"], 0),
            Some((0, Fuzz::Punctuation))
        );
        assert!(f.matches_at(&["}"], 2, Fuzz::Exact));
        assert!(!f.matches_at(&["}", "x"], 2, Fuzz::Exact));
    }

    #[test]
    fn finds_every_place_from_a_line() {
        let f = file("x\ny\nx\ny\nx\n");
        assert_eq!(f.find(&["x", "y"], 0, Fuzz::Exact, 9), vec![0, 2]);
        assert_eq!(f.find(&["x", "y"], 1, Fuzz::Exact, 9), vec![2]);
        assert_eq!(f.find(&["x"], 0, Fuzz::Exact, 2), vec![0, 2]);
        assert!(f.find(&[], 0, Fuzz::Exact, 9).is_empty());
    }

    #[test]
    fn reindents_relative_to_the_matched_lines() {
        let theirs = ["fn f() {", "    a();", "}"];
        let file = ["    fn f() {", "        a();", "    }"];
        let pairs = indent_pairs(&theirs, &file);
        assert_eq!(reindent(&pairs, "    b();"), "        b();");
        assert_eq!(reindent(&pairs, "        c();"), "            c();");
        assert_eq!(reindent(&pairs, "g();"), "    g();");
        assert!(indent_pairs(&["a", " b"], &["a", " b"]).is_empty());
    }
}
