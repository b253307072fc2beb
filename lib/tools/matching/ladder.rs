//! The matching ladder for a string edit, in one place: where `old_string`
//! goes in a file, trying each step only when the ones before it found
//! nothing, and taking a step's match only when it is the only one there:
//!
//! 1. exactly;
//! 2. with the file's line endings (CRLF against LF);
//! 3. to 6. the looser line levels of [`Fuzz`]: trailing whitespace,
//!    Unicode look-alikes, indentation, runs of spaces inside lines;
//! 7. without blank lines and whitespace at the start and end of
//!    `old_string` that the file does not have there (then 1 to 6 again);
//! 8. with escapes a model double-encoded (`\n`, `\t`, `\"` written out)
//!    decoded, in `old_string` and likewise in `new_string` (then 1 to 7);
//! 9. with the line breaks and tabs of `old_string` read as the `\n` and
//!    `\t` escapes the file holds there, where a model's JSON turned them
//!    into those characters (`unescaped`), and `new_string`'s written as
//!    escapes to match (then 1 to 8);
//! 10. with a line that is only `...` taken as lines left out (aider's
//!     elision): the parts around it are matched in order, each on its own
//!     and each unique (through 1 to 9), and `new_string` must have the
//!     same `...` lines, its parts replacing them one for one.
//!
//! Several matches at the first step that finds any is a refusal that
//! lists them: a wrong edit is worse than none. ag-patch climbs the same
//! ladder for each hunk, on whole lines: the line levels (3 to 6) through
//! `seek`, then blank context lines at the hunk's ends, then escapes and
//! `...` lines decoded and split with this module's [`unescape`] and
//! [`is_elision`] (see `tools/patch/place/`).

use memchr::memmem;

use super::normalize::Fuzz;
use super::text::{CRLF, crlf_to_lf, has_crlf, lines_of, with_eol};
use super::tolerant;

/// Places of an ambiguous match listed at most.
pub const MAX_LISTED: usize = 20;

/// One step of the ladder past the exact match, in ladder order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    /// `old_string` had other line endings than the file.
    LineEndings,
    /// A looser line level.
    Level(Fuzz),
    /// Blank lines or whitespace at the ends of `old_string` left out.
    EdgeWhitespace,
    /// Double-encoded escapes decoded.
    Escapes,
    /// Escapes of the file's that `old_string` has as the characters they
    /// stand for, read as the file holds them.
    LostEscapes,
    /// `...` lines taken as left-out lines.
    Elision,
    /// The markers ag's diffs show for whitespace (`·`, `→`, `␍`), copied
    /// into old_string from one, read as what they stand for (ag-edit
    /// only, before the ladder: see `text::unmarked`).
    Markers,
}

impl Step {
    /// A short name for details (`details.tolerant_matches[].kind`).
    pub fn name(self) -> &'static str {
        match self {
            Step::LineEndings => "line_endings",
            Step::Level(f) => f.name(),
            Step::EdgeWhitespace => "edge_whitespace",
            Step::Escapes => "escapes",
            Step::LostEscapes => "lost_escapes",
            Step::Elision => "elision",
            Step::Markers => "whitespace_markers",
        }
    }

    /// What was tolerated, for the result message.
    pub fn describe(self) -> &'static str {
        match self {
            Step::LineEndings => {
                "old_string was matched with the file's line endings (CRLF and LF), which were kept"
            }
            Step::Level(f) => f.describe(),
            Step::EdgeWhitespace => {
                "blank lines and whitespace at the start or end of old_string, which the file does not have there, were left out"
            }
            Step::Escapes => {
                "old_string had escapes written out (a literal \\n, \\t or \\\"), which were decoded, in new_string too"
            }
            Step::LostEscapes => {
                "old_string had line breaks or tabs where the file has the escapes `\\n` or `\\t` (in a JSON string a backslash is written `\\\\`), which were matched as the file has them, and new_string's were written as escapes where old_string's were"
            }
            Step::Elision => {
                "old_string's `...` lines were taken as lines left out, and the parts around them were each matched and replaced on their own"
            }
            Step::Markers => {
                "old_string had the ·, → or ␍ that ag's diffs show for a space, a tab or a carriage return, which the file does not have; they were read as what they stand for (in new_string too)"
            }
        }
    }
}

/// One stretch of the file to replace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// Byte range in the content.
    pub start: usize,
    /// End of the byte range (exclusive).
    pub end: usize,
    /// What goes there, with the file's line endings.
    pub with: Vec<u8>,
}

/// A unique match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// The stretches to replace, in file order, not overlapping (one
    /// unless `old_string` elided lines).
    pub pieces: Vec<Piece>,
    /// The steps taken, in ladder order; empty for an exact match.
    pub steps: Vec<Step>,
}

impl Hit {
    /// `content` with the pieces replaced.
    pub fn apply(&self, content: &[u8]) -> Vec<u8> {
        let grow: usize = self.pieces.iter().map(|p| p.with.len()).sum();
        let mut out = Vec::with_capacity(content.len() + grow);
        let mut at = 0;
        for p in &self.pieces {
            out.extend_from_slice(&content[at..p.start]);
            out.extend_from_slice(&p.with);
            at = p.end;
        }
        out.extend_from_slice(&content[at..]);
        out
    }
}

/// What the ladder found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Search {
    /// Exactly one place.
    Found(Hit),
    /// Several places at the first step that found any.
    Ambiguous {
        /// Places found (counted up to a limit).
        count: usize,
        /// 1-based lines of the first ones.
        lines: Vec<u64>,
        /// The steps it took to find them.
        steps: Vec<Step>,
    },
    /// `old_string` elides lines with `...` in a way that cannot be
    /// applied; the reason is a message for the model.
    BadElision(String),
    /// Nowhere.
    Missing,
}

/// Where `old` goes in `content` (after `bom` bytes of BOM), and what
/// `new` becomes there.
pub fn search(content: &[u8], bom: usize, old: &str, new: &str) -> Search {
    search_below(content, bom, old, new, None)
}

/// The ladder, with the transforming steps (7 to 10) limited to those
/// before `limit`, so that a transformed `old_string` is not transformed
/// again the same way.
fn search_below(content: &[u8], bom: usize, old: &str, new: &str, limit: Option<Step>) -> Search {
    if old.is_empty() {
        return Search::Missing;
    }
    let exact = exact_unique(content, old.as_bytes(), new, Vec::new());
    if !matches!(exact, Search::Missing) {
        return exact;
    }
    if old.contains('\n') {
        let variant = if old.contains("\r\n") {
            Some(crlf_to_lf(old).into_owned().into_bytes())
        } else if has_crlf(content) {
            Some(with_eol(old.as_bytes(), CRLF).into_owned())
        } else {
            None
        };
        if let Some(v) = variant {
            let found = exact_unique(content, &v, new, vec![Step::LineEndings]);
            if !matches!(found, Search::Missing) {
                return found;
            }
        }
    }
    if let Ok(text) = std::str::from_utf8(&content[bom..]) {
        for fuzz in &Fuzz::ALL[1..] {
            let found = tolerant::find(text, old, new, *fuzz);
            match found.len() {
                0 => continue,
                1 => {
                    let f = &found[0];
                    let start = bom + f.start;
                    return Search::Found(Hit {
                        pieces: vec![Piece {
                            start,
                            end: bom + f.end,
                            with: fit_eol(content, start, &f.replacement),
                        }],
                        steps: vec![Step::Level(*fuzz)],
                    });
                }
                n => {
                    let starts: Vec<usize> = found
                        .iter()
                        .take(MAX_LISTED)
                        .map(|f| bom + f.start)
                        .collect();
                    return Search::Ambiguous {
                        count: n,
                        lines: lines_of(content, &starts),
                        steps: vec![Step::Level(*fuzz)],
                    };
                }
            }
        }
    }
    let allowed = |s: Step| limit.is_none_or(|l| s < l);
    if allowed(Step::EdgeWhitespace)
        && let Some((o, n)) = trim_edges(old, new)
    {
        let found = search_below(content, bom, &o, &n, Some(Step::EdgeWhitespace));
        if !matches!(found, Search::Missing) {
            return with_step(found, Step::EdgeWhitespace);
        }
    }
    if allowed(Step::Escapes)
        && let Some(o) = unescape(old)
    {
        let n = if new.contains(['\n', '\t']) {
            new.to_string()
        } else {
            unescape(new).unwrap_or_else(|| new.to_string())
        };
        let found = search_below(content, bom, &o, &n, Some(Step::Escapes));
        if !matches!(found, Search::Missing) {
            return with_step(found, Step::Escapes);
        }
    }
    if allowed(Step::LostEscapes)
        && let Some((o, n)) = super::unescaped::restored(&content[bom..], old, new)
    {
        let found = search_below(content, bom, &o, &n, Some(Step::LostEscapes));
        if !matches!(found, Search::Missing) {
            return with_step(found, Step::LostEscapes);
        }
    }
    if allowed(Step::Elision)
        && let Some(parts) = split_elided(old)
    {
        return with_step(elided(content, bom, &parts, new), Step::Elision);
    }
    Search::Missing
}

/// The steps of `found` with `step` first.
fn with_step(found: Search, step: Step) -> Search {
    match found {
        Search::Found(mut hit) => {
            hit.steps.insert(0, step);
            Search::Found(hit)
        }
        Search::Ambiguous {
            count,
            lines,
            mut steps,
        } => {
            steps.insert(0, step);
            Search::Ambiguous {
                count,
                lines,
                steps,
            }
        }
        other => other,
    }
}

/// Exact occurrences of `old`, by memmem so that a large file costs one pass.
fn exact_unique(content: &[u8], old: &[u8], new: &str, steps: Vec<Step>) -> Search {
    let finder = memmem::Finder::new(old);
    let mut it = finder.find_iter(content);
    let Some(first) = it.next() else {
        return Search::Missing;
    };
    let Some(second) = it.next() else {
        return Search::Found(Hit {
            pieces: vec![Piece {
                start: first,
                end: first + old.len(),
                with: fit_eol(content, first, new),
            }],
            steps,
        });
    };
    let mut starts = vec![first, second];
    let mut count = 2;
    for p in it {
        if starts.len() < MAX_LISTED {
            starts.push(p);
        }
        count += 1;
    }
    Search::Ambiguous {
        count,
        lines: lines_of(content, &starts),
        steps,
    }
}

/// Where the `count` matches of an ambiguous text are, from the lines of
/// the first few (`lines`, in order, one per match): `at lines 1, 4`, a
/// line with several once (`at lines 7 (2 times), 9`; `on line 7, 2
/// times`), and `, ...` when more matches than listed.
pub fn places(count: usize, lines: &[u64]) -> String {
    let mut runs: Vec<(u64, usize)> = Vec::new();
    for &l in lines {
        match runs.last_mut() {
            Some((last, n)) if *last == l => *n += 1,
            _ => runs.push((l, 1)),
        }
    }
    let more = if count > lines.len() { ", ..." } else { "" };
    match runs.as_slice() {
        [(line, n)] if more.is_empty() && *n > 1 => format!("on line {line}, {n} times"),
        [(line, 1)] => format!("at line {line}{more}"),
        _ => {
            let listed: Vec<String> = runs
                .iter()
                .map(|(l, n)| match n {
                    1 => l.to_string(),
                    n => format!("{l} ({n} times)"),
                })
                .collect();
            format!("at lines {}{more}", listed.join(", "))
        }
    }
}

/// `new` with the line ending in use where it goes (CRLF files stay CRLF).
pub fn fit_eol(content: &[u8], at: usize, new: &str) -> Vec<u8> {
    let eol = super::text::eol_near(content, at);
    if eol == CRLF {
        with_eol(new.as_bytes(), CRLF).into_owned()
    } else if new.contains("\r\n") && !has_crlf(content) {
        crlf_to_lf(new).into_owned().into_bytes()
    } else {
        new.as_bytes().to_vec()
    }
}

/// `old` without the blank lines at its start and end and the whitespace
/// around its first and last lines' text; `new` without as many blank
/// lines at each end and the same whitespace, where it has them. `None`
/// when there is nothing to leave out.
fn trim_edges(old: &str, new: &str) -> Option<(String, String)> {
    let lines: Vec<&str> = old.split('\n').collect();
    let blank = |l: &&&str| l.trim().is_empty();
    let lead = lines.iter().take_while(blank).count();
    if lead == lines.len() {
        return None;
    }
    let trail = lines.iter().rev().take_while(blank).count();
    let kept = &lines[lead..lines.len() - trail];
    let first = kept[0];
    let last = kept[kept.len() - 1];
    let lead_ws = &first[..first.len() - first.trim_start().len()];
    let trail_ws = &last[last.trim_end().len()..];
    if lead == 0 && trail == 0 && lead_ws.is_empty() && trail_ws.is_empty() {
        return None;
    }
    let o = kept.join("\n");
    let o = o[lead_ws.len()..o.len() - trail_ws.len()].to_string();

    let nl: Vec<&str> = new.split('\n').collect();
    let n_lead = nl.iter().take(lead).take_while(blank).count();
    let n_trail = nl[n_lead..]
        .iter()
        .rev()
        .take(trail)
        .take_while(blank)
        .count();
    let n = nl[n_lead..nl.len() - n_trail].join("\n");
    let n = n.strip_prefix(lead_ws).unwrap_or(&n);
    let n = n.strip_suffix(trail_ws).unwrap_or(n);
    Some((o, n.to_string()))
}

/// `s` with the escapes a model double-encoded decoded: `\n`, `\t`, `\"`
/// (and `\\`, `\'`, `\r` with them). `None` unless one of the first three
/// was there. ag-patch decodes hunk lines with it too.
pub(crate) fn unescape(s: &str) -> Option<String> {
    if !s.contains('\\') {
        return None;
    }
    let mut out = String::with_capacity(s.len());
    let mut changed = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let decoded = match chars.peek() {
            Some('n') => Some(('\n', true)),
            Some('t') => Some(('\t', true)),
            Some('"') => Some(('"', true)),
            Some('\\') => Some(('\\', false)),
            Some('\'') => Some(('\'', false)),
            Some('r') => Some(('\r', false)),
            _ => None,
        };
        match decoded {
            Some((d, counts)) => {
                chars.next();
                out.push(d);
                changed |= counts;
            }
            None => out.push(c),
        }
    }
    changed.then_some(out)
}

/// Whether a line stands for lines left out (in patches too).
pub(crate) fn is_elision(line: &str) -> bool {
    matches!(line.trim(), "..." | "\u{2026}")
}

/// The parts of `s` around its `...` lines (the newline before such a line
/// stays with the part before it); `None` without such a line.
fn split_elided(s: &str) -> Option<Vec<&str>> {
    let mut parts = Vec::new();
    let mut from = 0;
    let mut at = 0;
    for line in s.split('\n') {
        let end = at + line.len();
        if is_elision(line.strip_suffix('\r').unwrap_or(line)) {
            parts.push(&s[from..at]);
            from = (end + 1).min(s.len());
        }
        at = end + 1;
    }
    if parts.is_empty() {
        return None;
    }
    parts.push(&s[from.min(s.len())..]);
    Some(parts)
}

/// Step 9: each part of `old` matched on its own, replaced by the part of
/// `new` in the same place among its `...` lines.
fn elided(content: &[u8], bom: usize, parts: &[&str], new: &str) -> Search {
    let count = parts.len() - 1;
    let new_parts = split_elided(new).unwrap_or_else(|| vec![new]);
    if new_parts.len() != parts.len() {
        return Search::BadElision(format!(
            "old_string has {count} `...` line{} standing for lines left out, and new_string has {}: give new_string the same `...` lines, in the same places, so that each part around them replaces its part of old_string; or copy the left-out lines into both.",
            if count == 1 { "" } else { "s" },
            new_parts.len() - 1
        ));
    }
    let mut pieces: Vec<Piece> = Vec::new();
    let mut steps: Vec<Step> = Vec::new();
    for (i, (o, n)) in parts.iter().zip(&new_parts).enumerate() {
        if o.trim().is_empty() {
            if n.trim().is_empty() {
                continue;
            }
            return Search::BadElision(format!(
                "part {} of new_string (around its `...` lines) has text where old_string's part is empty, so there is no place to put it: begin or end old_string with a line copied from the file instead of `...`.",
                i + 1
            ));
        }
        match search_below(content, bom, o, n, Some(Step::Elision)) {
            Search::Found(hit) => {
                for s in hit.steps {
                    if !steps.contains(&s) {
                        steps.push(s);
                    }
                }
                for p in hit.pieces {
                    if pieces.last().is_some_and(|last| p.start < last.end) {
                        return Search::BadElision(format!(
                            "part {} of old_string (around its `...` lines) is in the file before the part ahead of it, or overlaps it: the parts must be in file order.",
                            i + 1
                        ));
                    }
                    pieces.push(p);
                }
            }
            Search::Ambiguous { count, lines, .. } => {
                return Search::BadElision(format!(
                    "part {} of old_string (around its `...` lines) occurs {count} times in the file, {}: include more lines in that part so that it matches one place.",
                    i + 1,
                    places(count, &lines)
                ));
            }
            other => return other,
        }
    }
    if pieces.is_empty() {
        return Search::Missing;
    }
    steps.sort();
    Search::Found(Hit { pieces, steps })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_name_a_line_once_with_how_many_matches_it_holds() {
        assert_eq!(places(3, &[1, 2, 3]), "at lines 1, 2, 3");
        // `"test": "node test.js"` and `test`: twice on one line.
        assert_eq!(places(2, &[7, 7]), "on line 7, 2 times");
        assert_eq!(places(3, &[7, 7, 9]), "at lines 7 (2 times), 9");
        assert_eq!(places(5, &[4, 4]), "at lines 4 (2 times), ...");
        assert_eq!(places(9, &[4]), "at line 4, ...");
    }

    fn run(content: &str, old: &str, new: &str) -> Result<(String, Vec<&'static str>), Search> {
        match search(content.as_bytes(), 0, old, new) {
            Search::Found(hit) => Ok((
                String::from_utf8(hit.apply(content.as_bytes())).unwrap(),
                hit.steps.iter().map(|s| s.name()).collect(),
            )),
            other => Err(other),
        }
    }

    #[test]
    fn exact_wins_over_every_step() {
        let f = "a - b\na \u{2013} b\n";
        assert_eq!(
            run(f, "a - b", "x").unwrap(),
            ("x\na \u{2013} b\n".into(), vec![])
        );
        assert_eq!(
            run(f, "a \u{2013} b", "x").unwrap(),
            ("a - b\nx\n".into(), vec![])
        );
        // Both lines are "a - b" once look-alikes are folded.
        assert!(matches!(
            run(f, "a \u{2014} b", "x"),
            Err(Search::Ambiguous { count: 2, .. })
        ));
    }

    #[test]
    fn edge_blank_lines_and_file_end() {
        let f = "fn a() {}\nfn b() {}";
        assert_eq!(
            run(f, "\nfn b() {}\n", "\nfn c() {}\n").unwrap(),
            ("fn a() {}\nfn c() {}".into(), vec!["edge_whitespace"])
        );
    }

    #[test]
    fn double_encoded_escapes() {
        let f = "if x {\n\tsay(\"hi\");\n}\n";
        assert_eq!(
            run(
                f,
                "if x {\\n\\tsay(\\\"hi\\\");",
                "if x {\\n\\tsay(\\\"bye\\\");"
            )
            .unwrap(),
            ("if x {\n\tsay(\"bye\");\n}\n".into(), vec!["escapes"])
        );
        // Text that is in the file with its backslashes is matched as it is.
        let f = "printf(\"a\\n\");\n";
        assert_eq!(
            run(f, "printf(\"a\\n\");", "printf(\"b\\n\");").unwrap(),
            ("printf(\"b\\n\");\n".into(), vec![])
        );
    }

    #[test]
    fn elision_matches_parts_in_order() {
        let f = "def f():\n    a = 1\n    b = 2\n    c = 3\n    return a\n";
        assert_eq!(
            run(
                f,
                "def f():\n    a = 1\n...\n    return a",
                "def f():\n    a = 10\n...\n    return a + c"
            )
            .unwrap(),
            (
                "def f():\n    a = 10\n    b = 2\n    c = 3\n    return a + c\n".into(),
                vec!["elision"]
            )
        );
        assert!(matches!(
            run(f, "a = 1\n...\nreturn a", "a = 2\nreturn a"),
            Err(Search::BadElision(_))
        ));
        assert!(matches!(
            run(f, "    return a\n...\n    a = 1", "x\n...\ny"),
            Err(Search::BadElision(_))
        ));
    }

    #[test]
    fn splitting_helpers() {
        assert_eq!(split_elided("a\n...\nb"), Some(vec!["a\n", "b"]));
        assert_eq!(split_elided("...\nb"), Some(vec!["", "b"]));
        assert_eq!(split_elided("a\n  ...  "), Some(vec!["a\n", ""]));
        assert_eq!(split_elided("a...b"), None);
        assert_eq!(unescape("a\\nb\\\\n"), Some("a\nb\\n".into()));
        assert_eq!(unescape("a\\db"), None);
        assert_eq!(
            trim_edges("\n\n  x\n  y  \n", "\n\n  x\n  z  \n"),
            Some(("x\n  y".into(), "x\n  z".into()))
        );
        assert_eq!(trim_edges("x\ny", "z"), None);
    }
}
