//! Segments of a sketch anchored on one end only: new lines after an
//! unchanged line, with a marker after them (or before an unchanged line,
//! with a marker before them). Where such a segment ends in the file is
//! not written in it; this module decides, by one rule that the README and
//! the tool's help state:
//!
//! - The anchor must be unique (the longest run of matching lines, a tie
//!   refused) and distinctive: two or more matching lines, a line with two
//!   words or ten characters, or the file's own first or last line where
//!   the sketch has no marker.
//! - After an anchor, the new lines are **inserted** right after it,
//!   unless they are indented under one of its lines (the opener, such as
//!   `def a():`) and the marker after them is not: then the marker stands
//!   for code after the opener's block, so the new lines are its new body
//!   and **replace** the rest of it (up to the next line indented like the
//!   opener or less), provided the segment's last line looks like a changed
//!   version of the body's last line; a last line unlike the body's is
//!   refused, as the sketch could mean either. An opener without an
//!   indented body in the file has nothing to replace: the lines are
//!   inserted.
//! - Before an anchor, the new lines are always inserted right before it.

use super::{End, How, Placed, Segment, Spot, ambiguous, resembled};
use crate::tools::matching::closest::similarity;
use crate::tools::matching::seek::{FileLines, Fuzz, indent};

/// How alike the segment's last line and the body's last line must be for
/// the one to be taken for a changed version of the other.
const CHANGED_LINE: f64 = 0.6;

/// Places a segment by the ends found on one side (`heads` or `tails`,
/// the other empty). None when no candidate is distinctive enough, so
/// that the caller explains what is missing.
pub(super) fn place(
    file: &FileLines,
    seg: &Segment,
    lines: &[&str],
    heads: &[End],
    tails: &[End],
    fuzz: Fuzz,
) -> Option<Result<Placed, String>> {
    let from_head = !heads.is_empty();
    let ends = if from_head { heads } else { tails };
    let m = lines.len();
    let n = file.len();
    let anchor_line = if from_head { lines[0] } else { lines[m - 1] };
    let distinctive = |e: &End| {
        e.run >= 2
            || e.run == 0
            || weighty(anchor_line)
            || (from_head && e.at == 0 && seg.head_free)
            || (!from_head && e.at == n && seg.tail_free)
    };
    let candidates: Vec<&End> = ends.iter().filter(|e| distinctive(e)).collect();
    let longest = candidates.iter().map(|e| e.run).max()?;
    let best: Vec<&End> = candidates
        .into_iter()
        .filter(|e| e.run == longest)
        .collect();
    if best.len() > 1 {
        let places = best
            .iter()
            .map(|e| {
                if from_head {
                    e.at + e.run
                } else {
                    e.at - e.run
                }
            })
            .collect();
        return Some(Err(ambiguous(places)));
    }
    let one = best[0];
    if one.run == 0
        && let Some(near) = resembled(file, lines)
    {
        return Some(Err(near));
    }
    let spot = if one.run == 0 {
        let how = if from_head {
            How::FileStart
        } else {
            How::FileEnd
        };
        Spot {
            start: one.at,
            end: one.at,
            head: 0,
            tail: 0,
            fuzz,
            how,
        }
    } else if from_head {
        let (end, how) = match after_head(file, lines, seg.marker_after.as_deref(), one) {
            Ok(v) => v,
            Err(e) => return Some(Err(e)),
        };
        Spot {
            start: one.at,
            end,
            head: one.run,
            tail: 0,
            fuzz,
            how,
        }
    } else {
        Spot {
            start: one.at - one.run,
            end: one.at,
            head: 0,
            tail: one.run,
            fuzz,
            how: How::Before,
        }
    };
    Some(Ok(Placed {
        end: spot.end,
        spot,
    }))
}

/// A line that can anchor new lines on its own: two words, or ten
/// characters with a letter or digit (`}`, `end` or `else:` cannot).
fn weighty(line: &str) -> bool {
    let t = line.trim();
    let words = t
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .count();
    words >= 2 || (t.len() >= 10 && words >= 1)
}

/// Indentation width (a tab counts as four columns). Only compared within
/// the sketch or within the file, never across.
pub(super) fn width(line: &str) -> usize {
    indent(line)
        .chars()
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum()
}

fn blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// Where the new lines after a head run end in the file: right after the
/// run (insertion), or at the end of the opener's body (replacement).
fn after_head(
    file: &FileLines,
    lines: &[&str],
    marker_after: Option<&str>,
    head: &End,
) -> Result<(usize, How), String> {
    let (at, run) = (head.at, head.run);
    let start = at + run;
    let n = file.len();
    let m = lines.len();
    let inserted = Ok((start, How::After));
    let Some(min_new) = lines[run..]
        .iter()
        .filter(|l| !blank(l))
        .map(|l| width(l))
        .min()
    else {
        return inserted;
    };
    let opener = (0..run)
        .rev()
        .find(|&j| !blank(lines[j]) && width(lines[j]) < min_new);
    let (Some(j), Some(marker)) = (opener, marker_after) else {
        return inserted;
    };
    if width(marker) > width(lines[j]) {
        // The marker is inside the block: it stands for the rest of it.
        return inserted;
    }
    let o = at + j;
    let shown = file.lines[o].trim();
    let ow = width(&file.lines[o]);
    let stop = (o + 1..n)
        .find(|&k| !blank(&file.lines[k]) && width(&file.lines[k]) <= ow)
        .unwrap_or(n);
    let last = lines[m - 1].trim();
    if stop < start {
        return Err(format!(
            "its last line `{last}` is not in the file, and the lines above it are indented under `{shown}` (line {}) differently from the file, so the end of its body is unclear. End the stretch with the unchanged line just after the change, copied from the file",
            o + 1
        ));
    }
    if !(o + 1..stop).any(|k| !blank(&file.lines[k])) {
        // No body in the file to replace (`z` right under `fn main() {`):
        // inserting is the only reading.
        return inserted;
    }
    let mut end = stop;
    while end > start && blank(&file.lines[end - 1]) {
        end -= 1;
    }
    let Some(body_last) = (start..end).rev().find(|&k| !blank(&file.lines[k])) else {
        // The run already shows the whole body: the new lines end it.
        return inserted;
    };
    if similarity(last, &file.lines[body_last]) < CHANGED_LINE {
        return Err(format!(
            "its last line `{last}` is not in the file, and the other end alone does not tell where it goes. Its lines are indented under `{shown}` (line {}) and the marker after them is not, which would make them the new body, replacing lines {}-{}; but `{last}` does not look like a changed version of the body's last line `{}`. To insert at the start of the body, indent the marker like the body; to replace the body, end the stretch with the unchanged line just after it, copied from the file",
            o + 1,
            start + 1,
            end,
            file.lines[body_last].trim()
        ));
    }
    Ok((end, How::Body { opener: o + 1 }))
}

/// Why a segment placed between an anchor and the file's start or end
/// (no marker on that side, and its line there not in the file) must not
/// go there. It replaces what lies between, which a model that forgot the
/// marker did not mean to remove, so that is taken only when every line
/// removed is indented under the anchor (the rest of the last block
/// rewritten), or when it removes no more lines than it writes and the
/// segment's outermost line looks like a changed version of the outermost
/// line it removes.
pub(super) fn past_the_edge(file: &FileLines, lines: &[&str], s: &Spot) -> Option<String> {
    let m = lines.len();
    let new = m - s.head - s.tail;
    let (from, to) = (s.start + s.head, s.end - s.tail);
    let kept: Vec<usize> = (from..to).filter(|&k| !blank(&file.lines[k])).collect();
    let (Some(&first), Some(&last)) = (kept.first(), kept.last()) else {
        return None;
    };
    let to_end = s.tail == 0 && s.head > 0;
    if to_end {
        let aw = width(&file.lines[from - 1]);
        if kept.iter().all(|&k| width(&file.lines[k]) > aw) {
            return None;
        }
    }
    let (theirs, ours) = if to_end {
        (lines[m - 1 - s.tail], &file.lines[last])
    } else {
        (lines[s.head], &file.lines[first])
    };
    if kept.len() <= new && similarity(theirs, ours) >= CHANGED_LINE {
        return None;
    }
    let (side, stays) = if to_end {
        (
            "after its new lines and no marker after them, so it would replace the end of the file",
            "If the code after it stays, put a `... existing code ...` marker line after it",
        )
    } else {
        (
            "before its new lines and no marker before them, so it would replace the start of the file",
            "If the code before it stays, put a `... existing code ...` marker line before it",
        )
    };
    Some(format!(
        "it has no unchanged line {side}, lines {}-{to} (`{}`), which it does not show. {stays}; to replace that code, use old_string and new_string",
        from + 1,
        ours.trim()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weighty_lines() {
        for w in ["import os", "def a():", "return x", "print_everything()"] {
            assert!(weighty(w), "{w}");
        }
        for not in ["}", "end", "else:", "});", "</div>", "pass"] {
            assert!(!weighty(not), "{not}");
        }
    }
}
