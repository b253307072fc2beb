//! Finding a run of whole lines in a file, exactly or at the looser line
//! levels of the matching ladder ([`Fuzz`], defined in `normalize`). Patches
//! (ag-patch's hunks) and code sketches (ag-edit's `code_edit`) are placed
//! with it; the callers decide which matches are unique enough to use.
//! Also the re-indentation of new lines when a match ignored indentation.

use std::borrow::Cow;
use std::cell::OnceCell;

pub use super::normalize::Fuzz;

/// A file's lines (without line endings or BOM), with their normalised
/// forms computed when first needed.
pub struct FileLines {
    /// The lines.
    pub lines: Vec<String>,
    norms: [OnceCell<Vec<String>>; Fuzz::ALL.len() - 1],
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
            _ => self.norms[fuzz as usize - 1].get_or_init(|| {
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
        assert_eq!(
            f.find(&["x = \"1\";"], 0, Fuzz::Unicode, 5),
            Vec::<usize>::new()
        );
        assert_eq!(f.find(&["\tx = \"1\";"], 0, Fuzz::Unicode, 5), vec![1]);
        assert_eq!(
            f.find(&["x  =  \"1\";"], 0, Fuzz::InnerWhitespace, 5),
            vec![1]
        );
        assert_eq!(
            f.find_first(&["fn a() {", "  x = \"1\";", "}"], 0),
            Some((0, Fuzz::Indentation))
        );
        assert_eq!(
            f.find_first(&["fn a() {", "  x  = \"1\";", "}"], 0),
            Some((0, Fuzz::InnerWhitespace))
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
