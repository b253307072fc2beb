//! Code sketches (seed 001's `edit_file`): the new code, with unchanged
//! stretches left out behind marker lines such as `// ... existing code ...`
//! (in any comment syntax, see [`marker`]), placed deterministically.
//!
//! The sketch is cut at its markers into segments. A segment that begins
//! and ends with lines that are in the file (its anchors) replaces the
//! file lines between the anchors with its lines between them. Segments
//! are placed in order, each after the one before; among the places a
//! segment's anchors allow, the one that removes the fewest file lines
//! wins (a sketch shows every line it keeps, so the tightest reading is
//! the intended one), more matched anchor lines breaking ties, and a tie
//! beyond that is refused as ambiguous. Anchors match
//! exactly, else ignoring trailing whitespace, else indentation
//! (re-indenting the new lines). A first segment without a marker before
//! it may start at the top of the file when its first line is new, and a
//! last segment without a marker after it may run to the end of the file
//! likewise, if what it replaces there is visibly what it rewrites
//! ([`one_sided::past_the_edge`]). A segment anchored on one end only
//! inserts, or replaces the body of the block it is indented under, by the
//! rule in [`one_sided`].
//!
//! A sketch without markers replaces the whole file only when it is
//! clearly the whole file: it starts and ends with the file's first and
//! last lines and holds at least half of the file's lines. Otherwise it is
//! placed as one segment anchored on both ends.

use std::collections::HashSet;

use crate::tools::matching::lines::LineEdit;
use crate::tools::matching::seek::{FileLines, Fuzz, indent_pairs, reindent};

mod marker;
mod one_sided;
#[cfg(test)]
mod props;

pub use marker::is_marker;

/// Anchor candidates looked at for one end of a segment.
const MAX_CANDIDATES: usize = 2000;

/// Where one segment went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentPlace {
    /// 1-based first and last line of the segment in `code_edit`.
    pub sketch_lines: (usize, usize),
    /// 1-based first line replaced, and how many (0 for an insertion
    /// before that line).
    pub start: usize,
    /// Lines of the file replaced.
    pub replaced: usize,
    /// Lines put in their place.
    pub with: usize,
    /// How loosely its anchors matched.
    pub fuzz: Fuzz,
    /// Which reading placed it.
    pub how: How,
    /// Blank lines at the start or end of the whole sketch (not next to a
    /// marker) were left out: the ladder's edge step, reported as such.
    pub edge_blanks: bool,
}

/// How a segment's place was read from its anchors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// Between a head and a tail anchor (or the file's start or end).
    Between,
    /// Inserted right after its only anchor.
    After,
    /// Inserted right before its only anchor.
    Before,
    /// Inserted at the top of the file: no line of it is in the file, and
    /// no marker stands before it.
    FileStart,
    /// Appended at the end of the file, likewise.
    FileEnd,
    /// Replacing the body of the block its only anchor opens (1-based
    /// line of the opener): see [`one_sided`].
    Body {
        /// The opener's line.
        opener: usize,
    },
}

impl How {
    /// A short name for details.
    pub fn name(self) -> &'static str {
        match self {
            How::Between => "between_anchors",
            How::After => "inserted_after_anchor",
            How::Before => "inserted_before_anchor",
            How::FileStart => "inserted_at_file_start",
            How::FileEnd => "appended_at_file_end",
            How::Body { .. } => "replaced_block_body",
        }
    }
}

/// A sketch placed.
#[derive(Debug, Clone)]
pub struct Placement {
    /// The line edits that make it.
    pub edits: Vec<LineEdit>,
    /// Each changing segment.
    pub segments: Vec<SegmentPlace>,
    /// The sketch had no markers and replaced the whole file.
    pub whole_file: bool,
    /// Segments in the sketch (changing or not).
    pub segment_count: usize,
}

struct Segment {
    lines: Vec<String>,
    /// 1-based line of its first line in the sketch.
    first: usize,
    /// It may start at the top of the file.
    head_free: bool,
    /// It may run to the end of the file.
    tail_free: bool,
    /// It may be anchored on one end only (then it inserts).
    one_sided: bool,
    /// The marker line right after it, if any.
    marker_after: Option<String>,
    /// Blank lines at the sketch's own start or end were dropped.
    edge_blanks: bool,
}

/// Places a sketch on the file's content; the error is a message for the
/// model saying where and why it could not.
pub fn place(content: &[u8], sketch: &str) -> Result<Placement, String> {
    let file = FileLines::new(content);
    let mut lines: Vec<&str> = sketch
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    if lines.iter().all(|l| l.trim().is_empty()) {
        return Err("code_edit is empty: give the new code, with `// ... existing code ...` (in the file's comment syntax) where unchanged code is left out.".into());
    }
    let in_file: HashSet<&str> = file.lines.iter().map(|l| l.trim()).collect();
    let marker = |l: &str| is_marker(l) && !in_file.contains(l.trim());
    if !lines.iter().any(|l| marker(l))
        && let Some(p) = whole_file(&file, &lines)
    {
        return Ok(p);
    }
    let has_markers = lines.iter().any(|l| marker(l));
    let segments = split(&lines, &marker, has_markers);
    let count = segments.len();
    let mut cursor = 0;
    let mut edits = Vec::new();
    let mut placed = Vec::new();
    for (i, seg) in segments.iter().enumerate() {
        let p = place_segment(&file, seg, cursor).map_err(|why| {
            let which = if count > 1 {
                format!("segment {} of {count} of code_edit", i + 1)
            } else {
                "code_edit".to_string()
            };
            let last = seg.first + seg.lines.len() - 1;
            let after = if cursor > 0 {
                format!(" (segments are placed in order; this one is looked for after line {cursor})")
            } else {
                String::new()
            };
            let no_markers = if !has_markers {
                " code_edit has no `... existing code ...` marker lines and does not look like the whole file, so it is placed as one changed stretch."
            } else {
                ""
            };
            format!(
                "{which} (its lines {}-{last}) could not be placed: {why}{after}.{no_markers}",
                seg.first
            )
        })?;
        cursor = p.end;
        if let Some((edit, place)) = p.edit(seg, &file) {
            edits.push(edit);
            placed.push(place);
        }
    }
    Ok(Placement {
        edits,
        segments: placed,
        whole_file: false,
        segment_count: count,
    })
}

/// The segments of a sketch: stretches between markers, blank lines at
/// their edges dropped (they stand next to left-out code, not for new
/// blank lines). Without markers, the one segment is a replacement that
/// must be anchored on both ends.
fn split(lines: &[&str], marker: &dyn Fn(&str) -> bool, has_markers: bool) -> Vec<Segment> {
    let mut segments = Vec::new();
    let mut start = 0;
    let n = lines.len();
    for i in 0..=n {
        if i < n && !marker(lines[i]) {
            continue;
        }
        let mut a = start;
        let mut b = i;
        while a < b && lines[a].trim().is_empty() {
            a += 1;
        }
        while b > a && lines[b - 1].trim().is_empty() {
            b -= 1;
        }
        if a < b {
            segments.push(Segment {
                lines: lines[a..b].iter().map(|l| l.to_string()).collect(),
                first: a + 1,
                head_free: has_markers && start == 0,
                tail_free: has_markers && i == n,
                one_sided: has_markers,
                marker_after: (i < n).then(|| lines[i].to_string()),
                edge_blanks: (start == 0 && a > 0) || (i == n && b < n),
            });
        }
        start = i + 1;
    }
    segments
}

/// The whole-file reading of a sketch without markers, when it is clearly
/// the whole file.
fn whole_file(file: &FileLines, lines: &[&str]) -> Option<Placement> {
    fn first<'a>(mut v: impl Iterator<Item = &'a str>) -> Option<&'a str> {
        v.find(|l| !l.trim().is_empty()).map(str::trim)
    }
    let sketch_first = first(lines.iter().copied());
    let sketch_last = first(lines.iter().rev().copied());
    let file_first = first(file.lines.iter().map(String::as_str));
    let file_last = first(file.lines.iter().rev().map(String::as_str));
    let clear = if file_first.is_none() {
        // An empty (or blank) file: the sketch is its content.
        true
    } else {
        let ours: HashSet<&str> = lines.iter().map(|l| l.trim()).collect();
        let non_blank: Vec<&str> = file
            .lines
            .iter()
            .map(|l| l.trim())
            .filter(|l| !l.is_empty())
            .collect();
        let kept = non_blank.iter().filter(|l| ours.contains(*l)).count();
        sketch_first == file_first && sketch_last == file_last && kept * 2 >= non_blank.len()
    };
    if !clear {
        return None;
    }
    let mut replacement = lines.join("\n");
    replacement.push('\n');
    let edit = LineEdit {
        start_line: 1,
        end_line: file.len() as u64,
        replacement,
    };
    Some(Placement {
        edits: vec![edit],
        segments: vec![SegmentPlace {
            sketch_lines: (1, lines.len()),
            start: 1,
            replaced: file.len(),
            with: lines.len(),
            fuzz: Fuzz::Exact,
            how: How::Between,
            edge_blanks: false,
        }],
        whole_file: true,
        segment_count: 1,
    })
}

/// A segment's place: file lines `[start, end)`, of which the first `head`
/// and last `tail` are its anchors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Spot {
    start: usize,
    end: usize,
    head: usize,
    tail: usize,
    fuzz: Fuzz,
    how: How,
}

impl Spot {
    fn removed(&self) -> usize {
        self.end - self.tail - (self.start + self.head)
    }

    /// The edit (none when the segment changes nothing here).
    fn edit(&self, seg: &Segment, file: &FileLines) -> Option<(LineEdit, SegmentPlace)> {
        let m = seg.lines.len();
        let new: Vec<&str> = seg.lines[self.head..m - self.tail]
            .iter()
            .map(String::as_str)
            .collect();
        let from = self.start + self.head;
        let to = self.end - self.tail;
        let old: Vec<&str> = file.lines[from..to].iter().map(String::as_str).collect();
        if old == new {
            return None;
        }
        let pairs = if self.fuzz.reindents() {
            let theirs: Vec<&str> = seg.lines[..self.head]
                .iter()
                .chain(&seg.lines[m - self.tail..])
                .map(String::as_str)
                .collect();
            let ours: Vec<&str> = file.lines[self.start..self.start + self.head]
                .iter()
                .chain(&file.lines[self.end - self.tail..self.end])
                .map(String::as_str)
                .collect();
            indent_pairs(&theirs, &ours)
        } else {
            Vec::new()
        };
        let mut replacement = String::new();
        for l in &new {
            replacement.push_str(&reindent(&pairs, l));
            replacement.push('\n');
        }
        let edit = LineEdit {
            start_line: from as u64 + 1,
            end_line: to as u64,
            replacement,
        };
        let place = SegmentPlace {
            sketch_lines: (seg.first, seg.first + m - 1),
            start: from + 1,
            replaced: to - from,
            with: new.len(),
            fuzz: self.fuzz,
            how: self.how,
            edge_blanks: seg.edge_blanks,
        };
        Some((edit, place))
    }
}

/// A placed segment: where it ends in the file (the next one starts
/// after), and its spot.
struct Placed {
    end: usize,
    spot: Spot,
}

impl Placed {
    fn edit(&self, seg: &Segment, file: &FileLines) -> Option<(LineEdit, SegmentPlace)> {
        self.spot.edit(seg, file)
    }
}

/// One end of a segment placed in the file: where (the head's first line,
/// or the line after the tail), and how many of its lines match there (0
/// for the file's own start or end).
#[derive(Debug, Clone, Copy)]
struct End {
    at: usize,
    run: usize,
}

fn place_segment(file: &FileLines, seg: &Segment, cursor: usize) -> Result<Placed, String> {
    let m = seg.lines.len();
    let lines: Vec<&str> = seg.lines.iter().map(String::as_str).collect();
    let n = file.len();
    let mut why = String::new();
    for fuzz in Fuzz::ALL {
        // The whole segment as it is in the file: nothing to change.
        if let Some(&at) = file.find(&lines, cursor, fuzz, 1).first() {
            return Ok(Placed {
                end: at + m,
                spot: Spot {
                    start: at,
                    end: at + m,
                    head: m,
                    tail: 0,
                    fuzz,
                    how: How::Between,
                },
            });
        }
        let mut heads: Vec<End> = file
            .find(&lines[..1], cursor, fuzz, MAX_CANDIDATES)
            .into_iter()
            .map(|p| End {
                at: p,
                run: run_forward(file, &lines, p, fuzz),
            })
            .collect();
        let mut tails: Vec<End> = file
            .find(&lines[m - 1..], cursor, fuzz, MAX_CANDIDATES)
            .into_iter()
            .map(|q| End {
                at: q + 1,
                run: run_backward(file, &lines, q + 1, cursor, fuzz),
            })
            .collect();
        let (head_missing, tail_missing) = (heads.is_empty(), tails.is_empty());
        // A missing end is read as the file's own start or end, or leaves
        // the segment anchored on one end, only when it is in the file at
        // no level: a tolerated anchor wins over those readings.
        let nowhere = |l: &str| {
            Fuzz::ALL
                .iter()
                .all(|&f| file.find(&[l], cursor, f, 1).is_empty())
        };
        let (head_nowhere, tail_nowhere) = (
            head_missing && nowhere(lines[0]),
            tail_missing && nowhere(lines[m - 1]),
        );
        if head_missing != head_nowhere || tail_missing != tail_nowhere {
            // An end missing here is in the file at a looser level: read
            // the segment as anchored on both ends there rather than on
            // one here.
            continue;
        }
        let heads_edge = head_nowhere && seg.head_free && cursor == 0;
        let tails_edge = tail_nowhere && seg.tail_free;
        if heads_edge {
            heads.push(End { at: 0, run: 0 });
        }
        if tails_edge {
            tails.push(End { at: n, run: 0 });
        }
        // One end missing: the segment's new lines go after its head (or
        // before its tail), or replace the body its head opens.
        if seg.one_sided
            && heads.is_empty() != tails.is_empty()
            && let Some(placed) = one_sided::place(file, seg, &lines, &heads, &tails, fuzz)
        {
            return placed;
        }
        let mut best: Vec<Spot> = Vec::new();
        for h in &heads {
            for t in &tails {
                if t.at < h.at {
                    continue;
                }
                // Both ends may claim the same file lines (a blank line
                // between them): shorten the tail, then the head.
                let mut tail = t.run.min(m);
                let mut head = h.run.min(m - tail);
                let over = (head + tail).saturating_sub(t.at - h.at);
                let cut = over.min(tail);
                tail -= cut;
                head -= over - cut;
                if h.run > 0 && head == 0 {
                    // The head left with no line of its own: the tail comes
                    // before it (`}` just above `fn b() {`), which would
                    // insert the whole segment there. (A tail inside the
                    // head's run leaves an insertion after the head.)
                    continue;
                }
                let spot = Spot {
                    start: h.at,
                    end: t.at,
                    head,
                    tail,
                    fuzz,
                    how: How::Between,
                };
                let key = |s: &Spot| (s.removed(), usize::MAX - (s.head + s.tail));
                match best.first().map(|b| key(&spot).cmp(&key(b))) {
                    None | Some(std::cmp::Ordering::Equal) => best.push(spot),
                    Some(std::cmp::Ordering::Less) => best = vec![spot],
                    Some(std::cmp::Ordering::Greater) => {}
                }
            }
        }
        match best.as_slice() {
            [] => {}
            [one] if one.head + one.tail == 0 => {
                // Placed by the file's start or end alone: new code, unless
                // its first or last line looks like a changed file line.
                if let Some(near) = resembled(file, &lines) {
                    return Err(near);
                }
                return Ok(Placed {
                    end: one.end,
                    spot: *one,
                });
            }
            [one] => {
                let edge = (heads_edge && one.start == 0 && one.head == 0)
                    || (tails_edge && one.end == n && one.tail == 0);
                if edge && let Some(why) = one_sided::past_the_edge(file, &lines, one) {
                    return Err(why);
                }
                return Ok(Placed {
                    end: one.end,
                    spot: *one,
                });
            }
            many => {
                return Err(ambiguous(many.iter().map(|s| s.start + s.head).collect()));
            }
        }
        if why.is_empty() {
            why = if head_missing && tail_missing && !(seg.head_free || seg.tail_free) {
                format!(
                    "neither its first line `{}` nor its last line `{}` is in the file. Begin and end each changed stretch with an unchanged line copied from the file, and mark left-out code with a `... existing code ...` comment line",
                    lines[0].trim(),
                    lines[m - 1].trim()
                )
            } else if head_missing || tail_missing {
                let (which, line, hint) = if head_missing {
                    (
                        "first",
                        lines[0],
                        "Begin it with the unchanged line just before the change",
                    )
                } else {
                    (
                        "last",
                        lines[m - 1],
                        "End it with the unchanged line just after the change",
                    )
                };
                format!(
                    "its {which} line `{}` is not in the file, and the other end alone does not tell where it goes. {hint}, copied from the file",
                    line.trim()
                )
            } else {
                format!(
                    "its first line `{}` and its last line `{}` are in the file, but never in that order with room for the lines between. Check that both are copied from the same place",
                    lines[0].trim(),
                    lines[m - 1].trim()
                )
            };
        }
    }
    Err(why)
}

/// The refusal of a segment that fits several places equally well, each
/// given by the 0-based line its new lines would start at.
fn ambiguous(places: Vec<usize>) -> String {
    let listed: Vec<String> = places
        .iter()
        .take(5)
        .map(|&p| match p {
            0 => "at the top of the file".to_string(),
            p => format!("after line {p}"),
        })
        .collect();
    format!(
        "it fits {} places equally well ({}{}). Include one or two more unchanged lines before and after the change, copied from the file, so that it fits one place",
        places.len(),
        listed.join(", "),
        if places.len() > 5 { ", ..." } else { "" }
    )
}

/// How alike a line must be to a file line to be taken for a changed
/// version of it.
const RESEMBLES: f64 = 0.75;

/// When a segment with no line in the file begins or ends with a line much
/// like a file line, the sketch more likely changes that code than adds
/// new code at the file's start or end: the reason to refuse it.
fn resembled(file: &FileLines, seg: &[&str]) -> Option<String> {
    let ends = [seg[0], seg[seg.len() - 1]];
    let mut best: Option<(f64, usize, &str)> = None;
    for own in ends.iter().filter(|l| l.trim().len() >= 4) {
        for (i, l) in file.lines.iter().enumerate() {
            let s = crate::tools::matching::closest::similarity(own, l);
            if s >= RESEMBLES && best.is_none_or(|(b, _, _)| s > b) {
                best = Some((s, i, own));
            }
        }
    }
    let (_, i, own) = best?;
    Some(format!(
        "none of its lines is in the file, and `{}` looks like a changed version of line {} `{}`. If it changes that code, begin and end it with unchanged lines from around the change; if it is new code, put a `... existing code ...` marker line on its other side too and an unchanged line next to where it goes",
        own.trim(),
        i + 1,
        file.lines[i].trim()
    ))
}

/// How many lines of `seg`, from its start, match the file from `p`.
fn run_forward(file: &FileLines, seg: &[&str], p: usize, fuzz: Fuzz) -> usize {
    let mut k = 0;
    while k < seg.len() && p + k < file.len() && file.matches_at(&seg[k..=k], p + k, fuzz) {
        k += 1;
    }
    k
}

/// How many lines of `seg`, from its end, match the file ending at `q`
/// (exclusive), not reaching above `floor`.
fn run_backward(file: &FileLines, seg: &[&str], q: usize, floor: usize, fuzz: Fuzz) -> usize {
    let m = seg.len();
    let mut k = 0;
    while k < m && q > floor + k && file.matches_at(&seg[m - 1 - k..m - k], q - 1 - k, fuzz) {
        k += 1;
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(file: &str, sketch: &str) -> Result<String, String> {
        let p = place(file.as_bytes(), sketch)?;
        Ok(String::from_utf8(
            crate::tools::matching::lines::apply(file.as_bytes(), &p.edits).unwrap(),
        )
        .unwrap())
    }

    const FILE: &str = "use std::io;\n\nfn a() {\n    one();\n}\n\nfn b() {\n    two();\n}\n\nfn main() {\n    a();\n    b();\n}\n";

    #[test]
    fn segments_replace_between_their_anchors() {
        let out = apply(
            FILE,
            "// ... existing code ...\nfn b() {\n    two();\n    three();\n}\n// ... existing code ...\nfn main() {\n    a();\n}\n",
        )
        .unwrap();
        assert_eq!(
            out,
            FILE.replace("    two();\n", "    two();\n    three();\n")
                .replace("    a();\n    b();\n", "    a();\n")
        );
    }

    #[test]
    fn the_tightest_place_wins_and_ties_are_refused() {
        // Inserting a function between two others: `}` and `fn main() {`
        // anchor it; the closest `}` before `fn main` is the one meant.
        let out = apply(
            FILE,
            "// ... existing code ...\n}\n\nfn c() {}\n\nfn main() {\n// ... existing code ...\n",
        )
        .unwrap();
        assert!(
            out.contains("    two();\n}\n\nfn c() {}\n\nfn main() {\n"),
            "{out}"
        );
        let err = apply("a\n}\nb\na\n}\nb\n", "// ...\n}\nNEW\nb\n// ...\n").unwrap_err();
        assert!(err.contains("fits 2 places"), "{err}");
    }

    #[test]
    fn a_tail_above_the_head_is_no_place() {
        // The `}` of fn a ends right where `fn b() {` starts: pairing them
        // would insert the whole segment there, a second fn b.
        let out = apply(
            "fn a() {\n}\nfn b() {\n    x();\n}\n",
            "// ...\nfn b() {\n}\n// ...\n",
        )
        .unwrap();
        assert_eq!(out, "fn a() {\n}\nfn b() {\n}\n");
    }

    #[test]
    fn file_ends_anchor_a_new_first_or_last_line() {
        let out = apply("b\nc\n", "a\nb\n// ... existing code ...\n").unwrap();
        assert_eq!(out, "a\nb\nc\n");
        let out = apply("a\nb\n", "// ... existing code ...\nb\nc\n").unwrap();
        assert_eq!(out, "a\nb\nc\n");
        // A first line that is in the file anchors there, not at the top;
        // with no line after the change, the new lines are inserted.
        assert_eq!(
            apply("x\nfn main() {\nz\n", "fn main() {\n    y();\n// ...\n").unwrap(),
            "x\nfn main() {\n    y();\nz\n"
        );
        // A lone `}` is no anchor for new lines on its own.
        assert!(apply("a\n}\nb\n", "// ...\n}\nnew();\n// ...\n").is_err());
        assert_eq!(
            apply("x\ny\n", "import q\n// ...\n").unwrap(),
            "import q\nx\ny\n"
        );
        assert_eq!(
            apply("x\ny\n", "// ...\ny\nlast\n").unwrap(),
            "x\ny\nlast\n"
        );
    }

    #[test]
    fn whole_file_only_when_clearly_whole() {
        let p = place(b"a\nb\nc\n", "a\nB\nc\n").unwrap();
        assert!(p.whole_file);
        assert!(!place(b"", "new\n").unwrap().segments.is_empty());
        // A fragment without markers is anchored on both ends.
        let out = apply(FILE, "fn a() {\n    uno();\n}\n").unwrap();
        assert_eq!(out, FILE.replace("one()", "uno()"));
        let err = apply(FILE, "fn z() {\n    zz();\n}\n").unwrap_err();
        assert!(err.contains("no `... existing code ...` marker"), "{err}");
    }

    #[test]
    fn loose_anchors_reindent() {
        let file = "impl A {\n    fn f(&self) {\n        old();\n    }\n}\n";
        let out = apply(
            file,
            "// ... existing code ...\nfn f(&self) {\n    new();\n}\n// ... existing code ...\n",
        )
        .unwrap();
        assert_eq!(
            out,
            "impl A {\n    fn f(&self) {\n        new();\n    }\n}\n"
        );
    }

    #[test]
    fn unchanged_segments_change_nothing() {
        let p = place(FILE.as_bytes(), "// ...\nfn a() {\n    one();\n}\n// ...\n").unwrap();
        assert!(p.edits.is_empty());
    }
}
