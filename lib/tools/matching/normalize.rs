//! The line levels of the matching ladder, in one place: how loosely a line
//! of the model's text is compared with a line of the file (exactly, then
//! ignoring trailing whitespace, Unicode look-alikes, indentation, and
//! runs of spaces inside the line), and the normalised text of a line at
//! each level with a map back to the original bytes, so that a loose match
//! still has exact byte bounds in the file. ag-edit's string matching,
//! ag-patch's hunks and code sketches all compare lines through here.

use std::borrow::Cow;

use unicode_normalization::UnicodeNormalization;

/// How loosely two lines are compared; each level also ignores what the
/// ones before it do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fuzz {
    /// Byte for byte (a carriage return at the end aside).
    Exact,
    /// Whitespace at the ends of lines ignored.
    TrailingWhitespace,
    /// Unicode look-alikes taken as their plain forms too: typographic
    /// quotes and dashes, Unicode spaces, full-width and other NFKC
    /// compatibility forms; zero-width characters ignored.
    Unicode,
    /// Indentation ignored too; new lines are re-indented.
    Indentation,
    /// Runs of spaces and tabs inside lines taken as one space too.
    InnerWhitespace,
}

impl Fuzz {
    /// Every level, strictest first.
    pub const ALL: [Fuzz; 5] = [
        Fuzz::Exact,
        Fuzz::TrailingWhitespace,
        Fuzz::Unicode,
        Fuzz::Indentation,
        Fuzz::InnerWhitespace,
    ];

    /// What was ignored, for result messages.
    pub fn describe(self) -> &'static str {
        match self {
            Fuzz::Exact => "matched exactly",
            Fuzz::TrailingWhitespace => "trailing whitespace was ignored",
            Fuzz::Unicode => {
                "Unicode look-alikes (typographic quotes and dashes, Unicode spaces, full-width forms) were matched as their plain forms"
            }
            Fuzz::Indentation => {
                "indentation was ignored (the new lines were re-indented to match the file)"
            }
            Fuzz::InnerWhitespace => {
                "runs of spaces and tabs inside lines were matched as one space (new lines re-indented)"
            }
        }
    }

    /// A short name for details.
    pub fn name(self) -> &'static str {
        match self {
            Fuzz::Exact => "exact",
            Fuzz::TrailingWhitespace => "trailing_whitespace",
            Fuzz::Unicode => "unicode",
            Fuzz::Indentation => "indentation",
            Fuzz::InnerWhitespace => "inner_whitespace",
        }
    }

    /// Whether new lines should be re-indented after a match at this level.
    pub fn reindents(self) -> bool {
        self >= Fuzz::Indentation
    }

    /// A whole `line` as this level compares it.
    pub fn norm(self, line: &str) -> Cow<'_, str> {
        match self {
            Fuzz::Exact => Cow::Borrowed(line),
            Fuzz::TrailingWhitespace => Cow::Borrowed(line.trim_end()),
            _ => {
                let (a, b) = self.bounds(line, true, true);
                if line[a..b].is_ascii() && (self < Fuzz::InnerWhitespace || !has_run(&line[a..b]))
                {
                    Cow::Borrowed(&line[a..b])
                } else {
                    Cow::Owned(self.fold(line, true, true, None))
                }
            }
        }
    }

    /// `line` as this level compares it, with the map back to its bytes.
    /// `trim_start` and `trim_end` say whether the ends may be trimmed
    /// (when the level ignores them): a fragment of a line keeps the ends
    /// that do not fall on the line's own ends.
    pub fn mapped(self, line: &str, trim_start: bool, trim_end: bool) -> Mapped {
        let mut map = Vec::with_capacity(line.len() + 1);
        let text = self.fold(line, trim_start, trim_end, Some(&mut map));
        Mapped { text, map }
    }

    /// The byte bounds of `line` that this level keeps.
    fn bounds(self, line: &str, trim_start: bool, trim_end: bool) -> (usize, usize) {
        let b = if trim_end && self >= Fuzz::TrailingWhitespace {
            line.trim_end().len()
        } else {
            line.len()
        };
        let a = if trim_start && self >= Fuzz::Indentation {
            b - line[..b].trim_start().len()
        } else {
            0
        };
        (a, b)
    }

    fn fold(
        self,
        line: &str,
        trim_start: bool,
        trim_end: bool,
        mut map: Option<&mut Vec<usize>>,
    ) -> String {
        let (a, b) = self.bounds(line, trim_start, trim_end);
        let kept = &line[a..b];
        let mut out = String::with_capacity(kept.len());
        let collapse = self >= Fuzz::InnerWhitespace;
        let mut in_run = false;
        let mut push = |c: char, at: usize, out: &mut String| {
            if collapse && c.is_whitespace() {
                if in_run {
                    return;
                }
                in_run = true;
                out.push(' ');
                if let Some(m) = map.as_deref_mut() {
                    m.push(at);
                }
                return;
            }
            in_run = false;
            out.push(c);
            if let Some(m) = map.as_deref_mut() {
                m.extend(std::iter::repeat_n(at, c.len_utf8()));
            }
        };
        for (i, c) in kept.char_indices() {
            let at = a + i;
            if self < Fuzz::Unicode || c.is_ascii() {
                push(c, at, &mut out);
            } else {
                match look_alike(c) {
                    LookAlike::Is(p) => push(p, at, &mut out),
                    LookAlike::Nothing => {}
                    LookAlike::Compat => {
                        for d in std::iter::once(c).nfkc() {
                            push(d, at, &mut out);
                        }
                    }
                }
            }
        }
        if let Some(m) = map {
            m.push(b);
        }
        out
    }
}

/// A line as a level compares it, and where each of its bytes came from.
#[derive(Debug, Clone)]
pub struct Mapped {
    /// The normalised text.
    pub text: String,
    /// For each byte of `text`, the offset in the line of the character it
    /// came from; one more entry for the end.
    map: Vec<usize>,
}

impl Mapped {
    /// The offset in the line of position `q` of the normalised text, when
    /// `q` falls between characters of the line (not inside what one
    /// character became, such as the middle of a ligature's letters).
    pub fn orig(&self, q: usize) -> Option<usize> {
        let n = self.text.len();
        if q > n || !self.text.is_char_boundary(q) {
            return None;
        }
        if q == 0 || q == n || self.map[q] != self.map[q - 1] {
            Some(self.map[q])
        } else {
            None
        }
    }
}

enum LookAlike {
    /// Stands for this plain character.
    Is(char),
    /// Stands for nothing (zero-width).
    Nothing,
    /// Taken as its NFKC compatibility form.
    Compat,
}

fn look_alike(c: char) -> LookAlike {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{201b}' | '\u{2032}' | '\u{ff07}' => {
            LookAlike::Is('\'')
        }
        '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{201f}' | '\u{2033}' | '\u{ff02}' => {
            LookAlike::Is('"')
        }
        '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{fe58}' | '\u{fe63}' | '\u{ff0d}' => {
            LookAlike::Is('-')
        }
        '\u{200b}' | '\u{200c}' | '\u{200d}' | '\u{2060}' | '\u{feff}' => LookAlike::Nothing,
        c if c.is_whitespace() => LookAlike::Is(' '),
        _ => LookAlike::Compat,
    }
}

fn has_run(s: &str) -> bool {
    let b = s.as_bytes();
    b.windows(2)
        .any(|w| w[0].is_ascii_whitespace() && w[1].is_ascii_whitespace())
        || b.contains(&b'\t')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn look_alikes_both_ways() {
        for (a, b) in [
            ("a \u{2013} b", "a - b"),
            ("x\u{a0}=\u{2009}1", "x = 1"),
            ("f\u{ff08}x\u{ff09}\u{ff1b}", "f(x);"),
            ("say(\u{201c}hi\u{201d})", "say(\"hi\")"),
            ("wait\u{2026}", "wait..."),
            ("zero\u{200b}width", "zerowidth"),
        ] {
            assert_eq!(Fuzz::Unicode.norm(a), Fuzz::Unicode.norm(b), "{a:?}");
            assert_ne!(
                Fuzz::TrailingWhitespace.norm(a),
                Fuzz::TrailingWhitespace.norm(b)
            );
        }
    }

    #[test]
    fn levels_are_cumulative() {
        let line = "\t let  x\u{2014}=\t1;  ";
        assert_eq!(Fuzz::Exact.norm(line), line);
        assert_eq!(
            Fuzz::TrailingWhitespace.norm(line),
            "\t let  x\u{2014}=\t1;"
        );
        assert_eq!(Fuzz::Unicode.norm(line), "\t let  x-=\t1;");
        assert_eq!(Fuzz::Indentation.norm(line), "let  x-=\t1;");
        assert_eq!(Fuzz::InnerWhitespace.norm(line), "let x-= 1;");
        for f in Fuzz::ALL {
            assert_eq!(f.norm(line), f.mapped(line, true, true).text, "{f:?}");
        }
    }

    #[test]
    fn maps_lead_back_to_whole_characters() {
        let m = Fuzz::InnerWhitespace.mapped("a  \u{fb01}x", false, false);
        assert_eq!(m.text, "a fix");
        assert_eq!(m.orig(0), Some(0));
        assert_eq!(m.orig(2), Some(3));
        // Inside the ligature's letters: no byte of the line is there.
        assert_eq!(m.orig(3), None);
        assert_eq!(m.orig(4), Some(6));
        assert_eq!(m.orig(5), Some(7));
    }
}
