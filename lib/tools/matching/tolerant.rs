//! Tolerant matching: when `old_string` is not in the file exactly, find
//! where it would be if small differences a model often makes were ignored,
//! in growing order of leniency: trailing whitespace, then typographic
//! quotes, then indentation. The caller uses a match only when it is the
//! only one at its level, and says that it was used.
//!
//! Matching is by line: the first line of `old_string` must end a file line,
//! the middle lines must equal file lines, the last must begin one (all
//! after normalising both sides), so the region found has exact byte bounds
//! in the original text.

use std::borrow::Cow;

/// How lenient a match is; each level also ignores what the ones before it do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Whitespace at the ends of lines.
    TrailingWhitespace,
    /// Also typographic quotes (‘ ’ “ ”) against straight ones.
    Quotes,
    /// Also the indentation of each line; `new_string` is re-indented.
    Indentation,
}

impl Level {
    /// Every level, most exact first.
    pub const ALL: [Level; 3] = [Level::TrailingWhitespace, Level::Quotes, Level::Indentation];

    /// What was ignored, for the result message.
    pub fn describe(self) -> &'static str {
        match self {
            Level::TrailingWhitespace => "trailing whitespace was ignored",
            Level::Quotes => "typographic quotes were matched as straight quotes",
            Level::Indentation => {
                "indentation was ignored and new_string was re-indented to match the file"
            }
        }
    }

    /// A short name for details.
    pub fn name(self) -> &'static str {
        match self {
            Level::TrailingWhitespace => "trailing_whitespace",
            Level::Quotes => "quotes",
            Level::Indentation => "indentation",
        }
    }
}

/// A region of the text that matches, and what to put there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Byte range in the text.
    pub start: usize,
    /// End of the byte range (exclusive).
    pub end: usize,
    /// The replacement, re-indented when the level asks for it.
    pub replacement: String,
}

/// Matches found beyond this are only counted as "more".
const MAX_FOUND: usize = 20;

/// Where `old` matches `text` at `level`: at most `MAX_FOUND + 1` regions.
pub fn find(text: &str, old: &str, new: &str, level: Level) -> Vec<Found> {
    let old_lines: Vec<&str> = old.split('\n').collect();
    if old.trim().is_empty() {
        return Vec::new();
    }
    let starts = line_starts(text);
    let file_lines: Vec<&str> = starts
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let end = starts.get(i + 1).map_or(text.len(), |&n| n - 1);
            &text[s..end]
        })
        .collect();
    let mut found = Vec::new();
    if old_lines.len() == 1 {
        find_single(&starts, &file_lines, old, new, level, &mut found);
    } else {
        find_multi(&starts, &file_lines, &old_lines, new, level, &mut found);
    }
    found.sort_by_key(|f| (f.start, f.end));
    found.dedup_by_key(|f| (f.start, f.end));
    found
}

fn line_starts(text: &str) -> Vec<usize> {
    let mut v = vec![0];
    v.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
    v
}

fn find_multi(
    starts: &[usize],
    file_lines: &[&str],
    old_lines: &[&str],
    new: &str,
    level: Level,
    found: &mut Vec<Found>,
) {
    let k = old_lines.len();
    if file_lines.len() < k {
        return;
    }
    let first = norm(old_lines[0], level);
    let middle: Vec<Cow<str>> = old_lines[1..k - 1].iter().map(|l| norm(l, level)).collect();
    // The last line of old_string may stop inside a file line, so its end
    // is not trimmed unless it then equals the whole line.
    let last_open = norm_open_end(old_lines[k - 1], level);
    let last_full = norm(old_lines[k - 1], level);
    let normalized: Vec<Cow<str>> = file_lines.iter().map(|l| norm(l, level)).collect();
    for j in 0..=file_lines.len() - k {
        if !normalized[j].ends_with(&*first) {
            continue;
        }
        if !middle
            .iter()
            .enumerate()
            .all(|(i, m)| normalized[j + 1 + i] == *m)
        {
            continue;
        }
        let last = &normalized[j + k - 1];
        let last_len = if last.starts_with(&*last_open) {
            last_open.len()
        } else if *last == last_full {
            last.len()
        } else {
            continue;
        };
        // Exact byte bounds from the normalised positions.
        let (first_map, first_norm_len) = offsets(file_lines[j], level);
        let start_in_line = first_map[first_norm_len - first.len()];
        let last_line = file_lines[j + k - 1];
        let end_in_line = if last_open.is_empty() {
            0
        } else {
            offsets(last_line, level).0[last_len]
        };
        let mut m = Found {
            start: starts[j] + start_in_line,
            end: starts[j + k - 1] + end_in_line,
            replacement: new.to_string(),
        };
        if level == Level::Indentation {
            reindent(&mut m, starts[j], file_lines, j, old_lines, start_in_line);
        }
        found.push(m);
        if found.len() > MAX_FOUND {
            return;
        }
    }
}

fn find_single(
    starts: &[usize],
    file_lines: &[&str],
    old: &str,
    new: &str,
    level: Level,
    found: &mut Vec<Found>,
) {
    let whole = norm(old, level);
    // Quotes can differ anywhere in a line, not only at whole-line matches.
    let quoted = (level != Level::TrailingWhitespace && has_quotes(old)).then(|| map_quotes(old));
    for (j, line) in file_lines.iter().enumerate() {
        let n = norm(line, level);
        if *n == *whole {
            let (map, len) = offsets(line, level);
            let mut m = Found {
                start: starts[j] + map[0],
                end: starts[j] + map[len],
                replacement: new.to_string(),
            };
            if level == Level::Indentation {
                reindent(&mut m, starts[j], file_lines, j, &[old], map[0]);
            }
            found.push(m);
        } else if let Some(q) = &quoted {
            let mapped = map_quotes(line);
            if matches!(mapped, Cow::Borrowed(_)) && q.as_ref() == old {
                // No typographic quote on either side: an exact search
                // has looked here already.
                continue;
            }
            let (map, _) = quote_offsets(line);
            for (i, _) in mapped.match_indices(q.as_ref()) {
                found.push(Found {
                    start: starts[j] + map[i],
                    end: starts[j] + map[i + q.len()],
                    replacement: new.to_string(),
                });
            }
        }
        if found.len() > MAX_FOUND {
            return;
        }
    }
}

/// Re-indents the replacement of a match found by ignoring indentation.
/// Each line of `old_string` that matched a whole file line pairs its
/// indentation with the file's; every line of `new_string` then has its
/// indentation translated by the pair with the longest matching prefix,
/// so relative indentation inside `new_string` is kept.
fn reindent(
    m: &mut Found,
    first_line_start: usize,
    file_lines: &[&str],
    j: usize,
    old_lines: &[&str],
    start_in_line: usize,
) {
    let k = old_lines.len();
    let at_content_start = file_lines[j][..start_in_line].trim().is_empty();
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for (i, old) in old_lines.iter().enumerate() {
        let whole = if i == 0 {
            at_content_start
                && (k > 1
                    || norm(old, Level::Indentation) == norm(file_lines[j], Level::Indentation))
        } else if i + 1 == k {
            norm(old, Level::Indentation) == norm(file_lines[j + i], Level::Indentation)
        } else {
            true
        };
        if !whole || old.trim().is_empty() {
            continue;
        }
        let (o, f) = (indent(old), indent(file_lines[j + i]));
        if !pairs.iter().any(|(seen, _)| *seen == o) {
            pairs.push((o, f));
        }
    }
    if pairs.is_empty() || (!at_content_start && pairs.iter().all(|(o, f)| o == f)) {
        return;
    }
    let mut out = String::with_capacity(m.replacement.len() + 64);
    for (n, line) in m.replacement.split('\n').enumerate() {
        if n > 0 {
            out.push('\n');
        }
        let translated = if (n == 0 && !at_content_start) || line.trim().is_empty() {
            None
        } else {
            let ind = indent(line);
            pairs
                .iter()
                .filter(|(o, _)| ind.starts_with(o))
                .max_by_key(|(o, _)| o.len())
                .map(|(o, f)| (o.len(), *f))
        };
        match translated {
            Some((cut, to)) => {
                out.push_str(to);
                out.push_str(&line[cut..]);
            }
            None => out.push_str(line),
        }
    }
    m.replacement = out;
    if at_content_start {
        // The first line's indentation is now part of the replacement.
        m.start = first_line_start;
    }
}

fn indent(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// The byte bounds `[a, b)` of a line that a level keeps.
fn bounds(line: &str, level: Level, trim_end: bool) -> (usize, usize) {
    let b = if trim_end {
        line.trim_end().len()
    } else {
        line.len()
    };
    let a = if level == Level::Indentation {
        b - line[..b].trim_start().len()
    } else {
        0
    };
    (a, b)
}

fn norm(line: &str, level: Level) -> Cow<'_, str> {
    normalize(line, level, true)
}

fn norm_open_end(line: &str, level: Level) -> Cow<'_, str> {
    normalize(line, level, false)
}

fn normalize(line: &str, level: Level, trim_end: bool) -> Cow<'_, str> {
    let (a, b) = bounds(line, level, trim_end);
    let kept = &line[a..b];
    if level != Level::TrailingWhitespace {
        map_quotes(kept)
    } else {
        Cow::Borrowed(kept)
    }
}

/// For each byte of the normalised line, its offset in the line, and one
/// more entry for the end; with the normalised length.
fn offsets(line: &str, level: Level) -> (Vec<usize>, usize) {
    let (a, b) = bounds(line, level, true);
    let quotes = level != Level::TrailingWhitespace;
    let mut map = Vec::with_capacity(b - a + 1);
    for (i, c) in line[a..b].char_indices() {
        let width = if quotes && straight(c).is_some() {
            1
        } else {
            c.len_utf8()
        };
        map.extend(std::iter::repeat_n(a + i, width));
    }
    let len = map.len();
    map.push(b);
    (map, len)
}

fn quote_offsets(line: &str) -> (Vec<usize>, usize) {
    let mut map = Vec::with_capacity(line.len() + 1);
    for (i, c) in line.char_indices() {
        let width = if straight(c).is_some() {
            1
        } else {
            c.len_utf8()
        };
        map.extend(std::iter::repeat_n(i, width));
    }
    let len = map.len();
    map.push(line.len());
    (map, len)
}

fn straight(c: char) -> Option<char> {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{201b}' | '\u{2032}' => Some('\''),
        '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{201f}' | '\u{2033}' => Some('"'),
        _ => None,
    }
}

fn has_quotes(s: &str) -> bool {
    s.chars()
        .any(|c| straight(c).is_some() || c == '\'' || c == '"')
}

fn map_quotes(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| straight(c).is_some()) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(s.chars().map(|c| straight(c).unwrap_or(c)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(text: &str, f: &Found) -> String {
        format!("{}{}{}", &text[..f.start], f.replacement, &text[f.end..])
    }

    #[test]
    fn trailing_whitespace() {
        let text = "fn a() {  \n    x();\t\n}\n";
        let f = find(
            text,
            "fn a() {\n    x();\n}",
            "fn b() {\n    y();\n}",
            Level::TrailingWhitespace,
        );
        assert_eq!(f.len(), 1);
        assert_eq!(apply(text, &f[0]), "fn b() {\n    y();\n}\n");
    }

    #[test]
    fn quotes_inside_a_line() {
        let text = "say(“hello”);\nsay(“hello”, 2);\n";
        let f = find(text, "say(\"hello\", 2)", "say(\"bye\", 2)", Level::Quotes);
        assert_eq!(f.len(), 1);
        assert_eq!(apply(text, &f[0]), "say(“hello”);\nsay(\"bye\", 2);\n");
        assert!(find(text, "say(\"hello\", 2)", "x", Level::TrailingWhitespace).is_empty());
    }

    #[test]
    fn indentation_reindents_new_string() {
        let text = "impl A {\n    fn f() {\n        g();\n    }\n}\n";
        let f = find(
            text,
            "fn f() {\n    g();\n}",
            "fn f() {\n    h();\n    i();\n}",
            Level::Indentation,
        );
        assert_eq!(f.len(), 1);
        assert_eq!(
            apply(text, &f[0]),
            "impl A {\n    fn f() {\n        h();\n        i();\n    }\n}\n"
        );
    }

    #[test]
    fn spaces_for_tabs_and_dropped_indentation() {
        let text = "fn main() {\n\tlet x = 1;\n}\n";
        let f = find(
            text,
            "fn main() {\n    let x = 1;\n}",
            "fn main() {\n    let x = 2;\n    go(x);\n}",
            Level::Indentation,
        );
        assert_eq!(
            apply(text, &f[0]),
            "fn main() {\n\tlet x = 2;\n\tgo(x);\n}\n"
        );
        let text = "mod m {\n    fn f() {\n        a();\n    }\n}\n";
        let f = find(
            text,
            "fn f() {\na();\n}",
            "fn f() {\n    if c {\n        a();\n    }\n}",
            Level::Indentation,
        );
        assert_eq!(
            apply(text, &f[0]),
            "mod m {\n    fn f() {\n        if c {\n            a();\n        }\n    }\n}\n"
        );
    }

    #[test]
    fn old_string_ending_in_newline_ends_at_line_start() {
        let text = "a  \n    b\nc\n";
        let f = find(text, "a\n", "z\n", Level::TrailingWhitespace);
        assert_eq!(f.len(), 1);
        assert_eq!(apply(text, &f[0]), "z\n    b\nc\n");
    }

    #[test]
    fn ambiguous_matches_are_all_reported() {
        let text = "x = 1  \ny\nx = 1 \ny\n";
        let f = find(text, "x = 1\ny", "q", Level::TrailingWhitespace);
        assert_eq!(f.len(), 2);
    }

    #[test]
    fn last_line_may_stop_inside_a_line() {
        let text = "one  \ntwo three\n";
        let f = find(text, "one\ntwo", "1\n2", Level::TrailingWhitespace);
        assert_eq!(f.len(), 1);
        assert_eq!(apply(text, &f[0]), "1\n2 three\n");
    }
}
