//! One string replacement on a file's bytes: the exact match first (with
//! memmem, so a large file costs one pass), then the same text with the
//! file's line endings, then tolerant matching; and when all fail, why.

use std::borrow::Cow;

use memchr::memmem;

use crate::tools::matching::text::{
    CRLF, LF, bom_len, crlf_to_lf, eol_near, has_crlf, lines_of, with_eol,
};
use crate::tools::matching::tolerant::{self, Level};

/// Lines of an ambiguous match listed in the error.
const MAX_LISTED: usize = 20;

/// One replacement to make.
#[derive(Debug, Clone, Copy)]
pub struct Replacement<'a> {
    /// The text to find.
    pub old: &'a str,
    /// What to put in its place.
    pub new: &'a str,
    /// Replace every occurrence instead of requiring exactly one.
    pub all: bool,
}

/// How a match that was not exact was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tolerance {
    /// `old_string` had other line endings than the file.
    LineEndings,
    /// A tolerant match.
    Lenient(Level),
}

impl Tolerance {
    /// What was ignored, for the result message.
    pub fn describe(self) -> &'static str {
        match self {
            Tolerance::LineEndings => {
                "old_string was matched with the file's line endings (CRLF and LF), which were kept"
            }
            Tolerance::Lenient(level) => level.describe(),
        }
    }

    /// A short name for details.
    pub fn name(self) -> &'static str {
        match self {
            Tolerance::LineEndings => "line_endings",
            Tolerance::Lenient(level) => level.name(),
        }
    }
}

/// A replacement made.
#[derive(Debug)]
pub struct Done {
    /// The new content.
    pub content: Vec<u8>,
    /// Occurrences replaced.
    pub count: usize,
    /// Set when the match was not exact.
    pub tolerance: Option<Tolerance>,
}

/// Why a replacement could not be made.
#[derive(Debug, PartialEq, Eq)]
pub enum Miss {
    /// `old_string` is empty and the file is not.
    EmptyOld,
    /// `old_string` equals `new_string`.
    Unchanged,
    /// More than one occurrence and not `replace_all`.
    Ambiguous {
        /// Occurrences found.
        count: usize,
        /// Lines of the first ones.
        lines: Vec<u64>,
        /// Set when the occurrences were found by tolerant matching.
        tolerance: Option<Tolerance>,
    },
    /// `old_string` is not there but `new_string` is.
    AlreadyApplied {
        /// Where `new_string` is.
        line: u64,
    },
    /// Not found at all.
    NotFound,
}

/// Makes one replacement in `content`.
pub fn replace(content: &[u8], r: Replacement) -> Result<Done, Miss> {
    if r.old == r.new {
        return Err(Miss::Unchanged);
    }
    if r.old.is_empty() {
        // An empty file can be filled by replacing its (empty) content.
        let bom = bom_len(content);
        if content.len() == bom {
            let mut out = content.to_vec();
            out.extend_from_slice(r.new.as_bytes());
            return Ok(Done {
                content: out,
                count: 1,
                tolerance: None,
            });
        }
        return Err(Miss::EmptyOld);
    }
    if let Some(res) = exact(content, r.old.as_bytes(), r.new, r.all, None) {
        return res;
    }
    if r.old.contains('\n') {
        let variant: Option<Cow<[u8]>> = if r.old.contains("\r\n") {
            Some(Cow::Owned(crlf_to_lf(r.old).into_owned().into_bytes()))
        } else if has_crlf(content) {
            Some(with_eol(r.old.as_bytes(), CRLF))
        } else {
            None
        };
        if let Some(v) = variant
            && let Some(res) = exact(content, &v, r.new, r.all, Some(Tolerance::LineEndings))
        {
            return res;
        }
    }
    // Tolerant matching only ever picks one place; replace_all needs the
    // exact text so that it cannot touch lines the model did not mean.
    if !r.all {
        let bom = bom_len(content);
        if let Ok(text) = std::str::from_utf8(&content[bom..]) {
            for level in Level::ALL {
                let found = tolerant::find(text, r.old, r.new, level);
                let tolerance = Some(Tolerance::Lenient(level));
                match found.len() {
                    0 => continue,
                    1 => {
                        let f = &found[0];
                        let (start, end) = (bom + f.start, bom + f.end);
                        let new = fit_eol(content, start, &f.replacement);
                        return Ok(Done {
                            content: splice(content, start, end, &new),
                            count: 1,
                            tolerance,
                        });
                    }
                    n => {
                        let starts: Vec<usize> = found
                            .iter()
                            .take(MAX_LISTED)
                            .map(|f| bom + f.start)
                            .collect();
                        return Err(Miss::Ambiguous {
                            count: n,
                            lines: lines_of(content, &starts),
                            tolerance,
                        });
                    }
                }
            }
        }
    }
    if looks_applied(r.new) {
        let new = with_eol(r.new.as_bytes(), if has_crlf(content) { CRLF } else { LF });
        if let Some(pos) =
            memmem::find(content, &new).or_else(|| memmem::find(content, r.new.as_bytes()))
        {
            return Err(Miss::AlreadyApplied {
                line: lines_of(content, &[pos])[0],
            });
        }
    }
    Err(Miss::NotFound)
}

/// Whether finding `new` in the file says much: a short or blank text
/// occurs by chance.
fn looks_applied(new: &str) -> bool {
    let t = new.trim();
    !t.is_empty() && (t.contains('\n') || t.len() >= 8)
}

/// Exact occurrences of `old`; `None` when there are none.
fn exact(
    content: &[u8],
    old: &[u8],
    new: &str,
    all: bool,
    tolerance: Option<Tolerance>,
) -> Option<Result<Done, Miss>> {
    let finder = memmem::Finder::new(old);
    let first = finder.find(content)?;
    let new_bytes = fit_eol(content, first, new);
    if all {
        let mut out = Vec::with_capacity(content.len());
        let mut last = 0;
        let mut count = 0;
        for pos in finder.find_iter(&content[first..]).map(|p| p + first) {
            out.extend_from_slice(&content[last..pos]);
            out.extend_from_slice(&new_bytes);
            last = pos + old.len();
            count += 1;
        }
        out.extend_from_slice(&content[last..]);
        return Some(Ok(Done {
            content: out,
            count,
            tolerance,
        }));
    }
    let after = first + old.len();
    let mut more = finder.find_iter(&content[after..]).map(|p| p + after);
    match more.next() {
        None => Some(Ok(Done {
            content: splice(content, first, after, &new_bytes),
            count: 1,
            tolerance,
        })),
        Some(second) => {
            let mut starts = vec![first, second];
            let mut count = 2;
            for p in more {
                if starts.len() < MAX_LISTED {
                    starts.push(p);
                }
                count += 1;
            }
            Some(Err(Miss::Ambiguous {
                count,
                lines: lines_of(content, &starts),
                tolerance,
            }))
        }
    }
}

/// `new` with the line ending in use where it goes (CRLF files stay CRLF).
fn fit_eol<'a>(content: &[u8], at: usize, new: &'a str) -> Cow<'a, [u8]> {
    let eol = eol_near(content, at);
    if eol == CRLF {
        with_eol(new.as_bytes(), CRLF)
    } else if new.contains("\r\n") && !has_crlf(content) {
        Cow::Owned(crlf_to_lf(new).into_owned().into_bytes())
    } else {
        Cow::Borrowed(new.as_bytes())
    }
}

fn splice(content: &[u8], start: usize, end: usize, with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(content.len() - (end - start) + with.len());
    out.extend_from_slice(&content[..start]);
    out.extend_from_slice(with);
    out.extend_from_slice(&content[end..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one<'a>(old: &'a str, new: &'a str) -> Replacement<'a> {
        Replacement {
            old,
            new,
            all: false,
        }
    }

    fn text(d: &Done) -> &str {
        std::str::from_utf8(&d.content).unwrap()
    }

    #[test]
    fn exact_unique_and_ambiguous() {
        let d = replace(b"a = 1;\nb = 2;\n", one("b = 2", "b = 3")).unwrap();
        assert_eq!(text(&d), "a = 1;\nb = 3;\n");
        assert_eq!((d.count, d.tolerance), (1, None));
        let miss = replace(b"x\ny\nx\n", one("x", "z")).unwrap_err();
        assert_eq!(
            miss,
            Miss::Ambiguous {
                count: 2,
                lines: vec![1, 3],
                tolerance: None
            }
        );
        let all = Replacement {
            old: "x",
            new: "z",
            all: true,
        };
        let d = replace(b"x\ny\nx\n", all).unwrap();
        assert_eq!((text(&d), d.count), ("z\ny\nz\n", 2));
    }

    #[test]
    fn crlf_files_stay_crlf() {
        let d = replace(b"one\r\ntwo\r\nthree\r\n", one("one\ntwo\n", "1\n2\n2b\n")).unwrap();
        assert_eq!(text(&d), "1\r\n2\r\n2b\r\nthree\r\n");
        assert_eq!(d.tolerance, Some(Tolerance::LineEndings));
        // An exact single-line match still gets CRLF in its new lines.
        let d = replace(b"a\r\nb\r\n", one("a", "a\nx")).unwrap();
        assert_eq!(text(&d), "a\r\nx\r\nb\r\n");
        assert_eq!(d.tolerance, None);
    }

    #[test]
    fn tolerant_match_is_reported_and_unique() {
        let d = replace(
            b"if x {   \n    go();\n}\n",
            one("if x {\n    go();", "if y {\n    go();"),
        )
        .unwrap();
        assert_eq!(text(&d), "if y {\n    go();\n}\n");
        assert_eq!(
            d.tolerance,
            Some(Tolerance::Lenient(Level::TrailingWhitespace))
        );
    }

    #[test]
    fn already_applied_and_not_found() {
        let miss = replace(
            b"let port = env_port();\n",
            one("let port = 3000;", "let port = env_port();"),
        )
        .unwrap_err();
        assert_eq!(miss, Miss::AlreadyApplied { line: 1 });
        let miss = replace(b"abc\n", one("xyz", "q")).unwrap_err();
        assert_eq!(miss, Miss::NotFound);
        assert_eq!(replace(b"abc", one("", "q")).unwrap_err(), Miss::EmptyOld);
        assert_eq!(text(&replace(b"", one("", "q")).unwrap()), "q");
        assert_eq!(replace(b"abc", one("a", "a")).unwrap_err(), Miss::Unchanged);
    }
}
