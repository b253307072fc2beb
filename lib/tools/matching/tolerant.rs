//! Tolerant matching of a string: when `old_string` is not in the file
//! exactly, find where it would be at one of the ladder's looser line
//! levels ([`Fuzz`]), and build what to put there so that the lines the
//! model did not mean to change keep the file's own bytes.
//!
//! Matching is by line: the first line of `old_string` must end a file line,
//! the middle lines must equal file lines, the last must begin one (all
//! after normalising both sides); a single line may also match inside a
//! line when the level folds characters. The region found has exact byte
//! bounds in the original text.
//!
//! The replacement undoes the tolerance where the model did not change
//! anything: a line of `new_string` equal to its line of `old_string` is
//! written as the file has it (its quotes, dashes, spaces, indentation and
//! trailing whitespace); a changed line keeps the file's bytes in the part
//! before and after the change, and other new lines are re-indented when
//! the level ignored indentation.

use std::borrow::Cow;

use similar::{Algorithm, DiffOp, capture_diff_slices};

use super::normalize::{Fuzz, Mapped};
use super::seek::{indent, indent_pairs, reindent};

/// A region of the text that matches, and what to put there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Byte range in the text.
    pub start: usize,
    /// End of the byte range (exclusive).
    pub end: usize,
    /// The replacement.
    pub replacement: String,
}

/// Matches found beyond this are only counted as "more".
const MAX_FOUND: usize = 20;

/// Where a match lies before its replacement is built.
#[derive(Debug, Clone, Copy)]
struct Region {
    /// Index of the first file line.
    j: usize,
    start: usize,
    end: usize,
    /// The first line of `old_string` covers the whole content of its line.
    first_whole: bool,
    /// The last line (of several) equals the whole content of its line.
    last_whole: bool,
}

/// A text cut into lines (without their `\n`; a `\r` stays).
struct Lines<'a> {
    starts: Vec<usize>,
    lines: Vec<&'a str>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Lines<'a> {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        let lines = starts
            .iter()
            .enumerate()
            .map(|(i, &s)| {
                let end = starts.get(i + 1).map_or(text.len(), |&n| n - 1);
                &text[s..end]
            })
            .collect();
        Lines { starts, lines }
    }
}

/// Where `old` matches `text` at `fuzz` (a level looser than exact): at
/// most `MAX_FOUND + 1` regions, each with its replacement built from `new`.
pub fn find(text: &str, old: &str, new: &str, fuzz: Fuzz) -> Vec<Found> {
    if old.trim().is_empty() || fuzz == Fuzz::Exact {
        return Vec::new();
    }
    let old_lines: Vec<&str> = old.split('\n').collect();
    let file = Lines::new(text);
    let norms: Vec<Cow<str>> = file.lines.iter().map(|l| fuzz.norm(l)).collect();
    let mut regions = Vec::new();
    if old_lines.len() == 1 {
        find_single(&file, &norms, old, fuzz, &mut regions);
    } else {
        find_multi(&file, &norms, &old_lines, fuzz, &mut regions);
    }
    regions.sort_by_key(|r| (r.start, r.end));
    regions.dedup_by_key(|r| (r.start, r.end));
    regions
        .into_iter()
        .map(|r| build(text, &file, r, &old_lines, new, fuzz))
        .collect()
}

fn find_multi(
    file: &Lines,
    norms: &[Cow<str>],
    old_lines: &[&str],
    fuzz: Fuzz,
    found: &mut Vec<Region>,
) {
    let k = old_lines.len();
    if file.lines.len() < k {
        return;
    }
    let first = fuzz.mapped(old_lines[0], true, true).text;
    let middle: Vec<Cow<str>> = old_lines[1..k - 1].iter().map(|l| fuzz.norm(l)).collect();
    // The last line of old_string may stop inside a file line, so its end
    // is not trimmed unless it then equals the whole line.
    let last_open = fuzz.mapped(old_lines[k - 1], true, false).text;
    let last_full = fuzz.norm(old_lines[k - 1]);
    // A blank first line, or a last one that is only whitespace, would
    // match the end or start of any line: an anchor that says nothing, and
    // a way to make a match look unique that is not. Those are left to the
    // ladder's edge step, which leaves them out.
    if first.is_empty() || (!old_lines[k - 1].is_empty() && last_full.is_empty()) {
        return;
    }
    for j in 0..=file.lines.len() - k {
        if !norms[j].ends_with(first.as_str()) {
            continue;
        }
        if !middle.iter().zip(&norms[j + 1..]).all(|(m, l)| m == l) {
            continue;
        }
        let last_line = file.lines[j + k - 1];
        let (end_in_line, last_whole) = if old_lines[k - 1].is_empty() {
            (Some(0), false)
        } else if norms[j + k - 1] == last_full {
            let m = fuzz.mapped(last_line, true, true);
            (m.orig(m.text.len()), true)
        } else if norms[j + k - 1].starts_with(last_open.as_str()) {
            (
                fuzz.mapped(last_line, true, true).orig(last_open.len()),
                false,
            )
        } else {
            continue;
        };
        let fm = fuzz.mapped(file.lines[j], true, true);
        let q = fm.text.len() - first.len();
        let (Some(start_in_line), Some(end_in_line)) = (fm.orig(q), end_in_line) else {
            continue;
        };
        found.push(Region {
            j,
            start: file.starts[j] + start_in_line,
            end: file.starts[j + k - 1] + end_in_line,
            first_whole: q == 0,
            last_whole,
        });
        if found.len() > MAX_FOUND {
            return;
        }
    }
}

fn find_single(file: &Lines, norms: &[Cow<str>], old: &str, fuzz: Fuzz, found: &mut Vec<Region>) {
    let whole = fuzz.norm(old);
    // Levels that fold characters can match inside a line too.
    let inside = matches!(fuzz, Fuzz::Unicode | Fuzz::InnerWhitespace)
        .then(|| fuzz.fragment(old))
        .filter(|s| !s.is_empty());
    for (j, line) in file.lines.iter().enumerate() {
        if norms[j] == whole {
            let m = fuzz.mapped(line, true, true);
            if let (Some(a), Some(b)) = (m.orig(0), m.orig(m.text.len())) {
                found.push(Region {
                    j,
                    start: file.starts[j] + a,
                    end: file.starts[j] + b,
                    first_whole: true,
                    last_whole: true,
                });
            }
        } else if let Some(sub) = &inside
            && fuzz.fragment(line).contains(sub.as_str())
        {
            let m = fuzz.mapped(line, false, false);
            for (i, _) in m.text.match_indices(sub.as_str()) {
                if let (Some(a), Some(b)) = (m.orig(i), m.orig(i + sub.len())) {
                    found.push(Region {
                        j,
                        start: file.starts[j] + a,
                        end: file.starts[j] + b,
                        first_whole: false,
                        last_whole: false,
                    });
                }
            }
        }
        if found.len() > MAX_FOUND {
            return;
        }
    }
}

/// The replacement for a region: see the module's notes.
fn build(text: &str, file: &Lines, r: Region, old_lines: &[&str], new: &str, fuzz: Fuzz) -> Found {
    let k = old_lines.len();
    let mut start = r.start;
    // A first line matched whole at a level that ignores indentation takes
    // its indentation along, so that a re-indented first line fits.
    if fuzz.reindents() && r.first_whole {
        start = file.starts[r.j];
    }
    let line_end = |i: usize| file.starts[r.j + i] + file.lines[r.j + i].len();
    // What the file has for each line of old_string.
    let segs: Vec<&str> = (0..k)
        .map(|i| {
            let a = if i == 0 { start } else { file.starts[r.j + i] };
            let b = if i + 1 == k { r.end } else { line_end(i) };
            &text[a..b]
        })
        .collect();
    // Whether line i of old_string matched a whole file line.
    let whole = |i: usize| {
        if i == 0 {
            r.first_whole && (k > 1 || r.last_whole)
        } else if i + 1 == k {
            r.last_whole
        } else {
            true
        }
    };
    let pairs = if fuzz.reindents() {
        let (theirs, ours): (Vec<&str>, Vec<&str>) = (0..k)
            .filter(|&i| whole(i))
            .map(|i| (old_lines[i], file.lines[r.j + i]))
            .unzip();
        indent_pairs(&theirs, &ours)
    } else {
        Vec::new()
    };
    let new_lines: Vec<&str> = new.split('\n').collect();
    // The first line placed after a fragment stays as written.
    let fresh = |n: usize, line: &str| {
        if n == 0 && !(r.first_whole && fuzz.reindents()) {
            line.to_string()
        } else {
            reindent(&pairs, line)
        }
    };
    let mut out: Vec<Cow<str>> = Vec::with_capacity(new_lines.len());
    for op in capture_diff_slices(Algorithm::Myers, old_lines, &new_lines) {
        match op {
            DiffOp::Equal { old_index, len, .. } => {
                // The same lines as old_string's: the file's own bytes.
                out.extend(
                    segs[old_index..old_index + len]
                        .iter()
                        .map(|s| Cow::Borrowed(*s)),
                );
            }
            DiffOp::Delete { .. } => {}
            DiffOp::Insert {
                new_index, new_len, ..
            } => {
                for (n, line) in new_lines.iter().enumerate().skip(new_index).take(new_len) {
                    out.push(Cow::Owned(fresh(n, line)));
                }
            }
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                for t in 0..new_len {
                    let n = new_index + t;
                    let kept = (old_len == new_len && whole(old_index + t))
                        .then(|| {
                            let i = old_index + t;
                            keep_unchanged_ends(
                                old_lines[i],
                                new_lines[n],
                                file.lines[r.j + i],
                                fuzz,
                            )
                        })
                        .flatten();
                    out.push(Cow::Owned(kept.unwrap_or_else(|| fresh(n, new_lines[n]))));
                }
            }
        }
    }
    let mut end = r.end;
    // A whole last line that is changed takes its trailing part along.
    if k > 1 && r.last_whole && out.last().map(|l| l.as_ref()) != Some(segs[k - 1]) {
        end = line_end(k - 1) - usize::from(file.lines[r.j + k - 1].ends_with('\r'));
    }
    if k == 1 && r.first_whole && r.last_whole && out.len() == 1 && out[0] != segs[0] {
        end = line_end(0) - usize::from(file.lines[r.j].ends_with('\r'));
    }
    Found {
        start,
        end,
        replacement: out.join("\n"),
    }
}

/// A changed line written with the file's bytes around the change: the
/// part before and after it, equal to the old line at `fuzz`, is taken from
/// the file line (keeping its indentation, look-alikes and trailing
/// whitespace). `None` when that does not apply: the indentation changed,
/// or the change is only in what the level ignores (then the model meant
/// it, and its line is written as given).
pub fn keep_unchanged_ends(old: &str, new: &str, file_line: &str, fuzz: Fuzz) -> Option<String> {
    if indent(old) != indent(new) {
        return None;
    }
    let file_line = file_line.strip_suffix('\r').unwrap_or(file_line);
    let (o, n, f) = (
        fuzz.mapped(old, true, true),
        fuzz.mapped(new, true, true),
        fuzz.mapped(file_line, true, true),
    );
    if o.text != f.text || o.text == n.text {
        return None;
    }
    let (p, s) = common_ends(&o.text, &n.text);
    let (f_a, n_a) = boundary_down(&f, &n, p)?;
    let (f_b, n_b) = boundary_up(&f, &n, f.text.len() - s, n.text.len() - s)?;
    // Past a change that reaches the end, the file's trailing whitespace
    // goes with the rewritten text.
    let tail = if s == 0 { "" } else { &file_line[f_b..] };
    Some(format!(
        "{}{}{tail}",
        &file_line[..f_a],
        &new[n_a..n_b.max(n_a)],
    ))
}

/// Lengths of the common prefix and suffix of `a` and `b` (not
/// overlapping in either), on character boundaries.
pub(super) fn common_ends(a: &str, b: &str) -> (usize, usize) {
    let p: usize = a
        .chars()
        .zip(b.chars())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x.len_utf8())
        .sum();
    let room = a.len().min(b.len()) - p;
    let mut s = 0;
    for (x, y) in a[p..].chars().rev().zip(b[p..].chars().rev()) {
        if x != y || s + x.len_utf8() > room {
            break;
        }
        s += x.len_utf8();
    }
    (p, s)
}

/// The largest position at most `q` that both texts map back from.
fn boundary_down(f: &Mapped, n: &Mapped, mut q: usize) -> Option<(usize, usize)> {
    loop {
        if let (Some(a), Some(b)) = (f.orig(q), n.orig(q)) {
            return Some((a, b));
        }
        q = q.checked_sub(1)?;
    }
}

/// The smallest positions from `qf` in `f` and `qn` in `n` (moved
/// together) that both texts map back from.
fn boundary_up(f: &Mapped, n: &Mapped, mut qf: usize, mut qn: usize) -> Option<(usize, usize)> {
    loop {
        if let (Some(a), Some(b)) = (f.orig(qf), n.orig(qn)) {
            return Some((a, b));
        }
        qf += 1;
        qn += 1;
        if qf > f.text.len() || qn > n.text.len() {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(text: &str, f: &Found) -> String {
        format!("{}{}{}", &text[..f.start], f.replacement, &text[f.end..])
    }

    #[test]
    fn trailing_whitespace_kept_on_unchanged_lines() {
        let text = "fn a() {  \n    x();\t\n}\n";
        let f = find(
            text,
            "fn a() {\n    x();\n}",
            "fn a() {\n    y();\n}",
            Fuzz::TrailingWhitespace,
        );
        assert_eq!(f.len(), 1);
        assert_eq!(apply(text, &f[0]), "fn a() {  \n    y();\t\n}\n");
    }

    #[test]
    fn quotes_inside_a_line() {
        let text = "say(“hello”);\nsay(“hello”, 2);\n";
        let f = find(text, "say(\"hello\", 2)", "say(\"bye\", 2)", Fuzz::Unicode);
        assert_eq!(f.len(), 1);
        assert_eq!(apply(text, &f[0]), "say(“hello”);\nsay(\"bye\", 2);\n");
        assert!(find(text, "say(\"hello\", 2)", "x", Fuzz::TrailingWhitespace).is_empty());
    }

    #[test]
    fn look_alikes_kept_around_a_change() {
        let text = "a\nlet s = “x — y”; // n=1\nb\n";
        let f = find(
            text,
            "a\nlet s = \"x - y\"; // n=1\nb",
            "a\nlet s = \"x - y\"; // n=2\nb",
            Fuzz::Unicode,
        );
        assert_eq!(f.len(), 1);
        assert_eq!(apply(text, &f[0]), "a\nlet s = “x — y”; // n=2\nb\n");
    }

    #[test]
    fn indentation_reindents_new_string() {
        let text = "impl A {\n    fn f() {\n        g();\n    }\n}\n";
        let f = find(
            text,
            "fn f() {\n    g();\n}",
            "fn f() {\n    h();\n    i();\n}",
            Fuzz::Indentation,
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
            Fuzz::Indentation,
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
            Fuzz::Indentation,
        );
        assert_eq!(
            apply(text, &f[0]),
            "mod m {\n    fn f() {\n        if c {\n            a();\n        }\n    }\n}\n"
        );
    }

    #[test]
    fn runs_of_spaces_inside_lines() {
        let text = "const  x   =  1;\nconst y = 2;\n";
        let f = find(text, "const x = 1;", "const x = 3;", Fuzz::InnerWhitespace);
        assert_eq!(f.len(), 1);
        assert_eq!(apply(text, &f[0]), "const  x   =  3;\nconst y = 2;\n");
        assert!(find(text, "const x = 1;", "q", Fuzz::Indentation).is_empty());
    }

    #[test]
    fn old_string_ending_in_newline_ends_at_line_start() {
        let text = "a  \n    b\nc\n";
        let f = find(text, "a\n", "z\n", Fuzz::TrailingWhitespace);
        assert_eq!(f.len(), 1);
        assert_eq!(apply(text, &f[0]), "z\n    b\nc\n");
    }

    #[test]
    fn blank_edge_lines_are_no_anchor() {
        let text = "y = f(b)\ny = f(b)\n";
        assert!(find(text, "  \n  y = f(b)", "  \n  y = f(c)", Fuzz::Indentation).is_empty());
        assert!(find(text, "y = f(b)\n  ", "y = f(c)\n  ", Fuzz::Indentation).is_empty());
    }

    #[test]
    fn ambiguous_matches_are_all_reported() {
        let text = "x = 1  \ny\nx = 1 \ny\n";
        let f = find(text, "x = 1\ny", "q", Fuzz::TrailingWhitespace);
        assert_eq!(f.len(), 2);
    }

    #[test]
    fn last_line_may_stop_inside_a_line() {
        let text = "one  \ntwo three\n";
        let f = find(text, "one\ntwo", "1\n2", Fuzz::TrailingWhitespace);
        assert_eq!(f.len(), 1);
        assert_eq!(apply(text, &f[0]), "1\n2 three\n");
    }
}
