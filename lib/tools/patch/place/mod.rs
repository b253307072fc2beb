//! Where each hunk of one file's patch goes, and the line-range edits that
//! make it. Hunks are placed in order, each after the one before:
//!
//! - its `@@` anchor lines first, each the first match after the last;
//! - then its context and removed lines by the matching ladder (see
//!   `matching/ladder.rs`), on whole lines: exactly if they are anywhere
//!   after that, else at the looser line levels ([`Fuzz`]: trailing
//!   whitespace, Unicode look-alikes, indentation, runs of spaces), else
//!   without blank context lines at the hunk's ends, else with escapes a
//!   model double-encoded decoded (in its added lines too), else, when it
//!   has context lines that are only `...`, as the parts around them: each
//!   part placed after the one before and unique there;
//! - among several matches: the one at the header's line number (shifted by
//!   how far the hunks before it moved), the one at the end for a hunk that
//!   must end the file, the first after an anchor; otherwise the first, but
//!   only if no later match would leave room for the hunks after it, so a
//!   hunk whose context repeats is refused rather than applied to a guess.
//!
//! Only the removed and added lines become edits: context lines are never
//! rewritten, so the file keeps their exact bytes even when they matched
//! loosely; a removed line replaced by an added one keeps the file's bytes
//! before and after the change.

use super::model::{Hunk, Op};
use crate::tools::matching::ladder::Step;
use crate::tools::matching::lines::LineEdit;
use crate::tools::matching::seek::{FileLines, Fuzz, indent_pairs, reindent};
use crate::tools::matching::tolerant::keep_unchanged_ends;

/// Matches looked at for one hunk; more is too repetitive to place.
const MAX_CANDIDATES: usize = 50;

/// A placed hunk.
#[derive(Debug, Clone)]
pub struct Placed {
    /// The hunk as placed (a trailing blank context line may be dropped,
    /// escapes decoded; one part of it when it elided lines).
    pub hunk: Hunk,
    /// 0-based index of the hunk in the file's hunks (the parts of an
    /// elided hunk share it).
    pub index: usize,
    /// 0-based index of the first old line (for a hunk with no old lines,
    /// the line the new ones go before).
    pub at: usize,
    /// How loosely it matched.
    pub fuzz: Fuzz,
    /// Lines from where the header said, when it gave a number.
    pub offset: Option<isize>,
    /// The ladder's steps past the line levels that placing it took
    /// (edge whitespace, escapes, elision), in ladder order.
    pub steps: Vec<Step>,
}

/// Why a hunk could not be placed; `hunk` is its 0-based index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Miss {
    /// An `@@` anchor line is not in the file after `from`.
    Anchor {
        /// The hunk.
        hunk: usize,
        /// The anchor line.
        anchor: String,
        /// 0-based line the search started at.
        from: usize,
    },
    /// The old lines are not in the file after `from`.
    NotFound {
        /// The hunk.
        hunk: usize,
        /// 0-based line the search started at.
        from: usize,
    },
    /// The old lines match several places that all leave room for the
    /// hunks after it.
    Ambiguous {
        /// The hunk.
        hunk: usize,
        /// 1-based lines where it matches.
        lines: Vec<usize>,
        /// At what level.
        fuzz: Fuzz,
        /// The ladder's further steps taken to find them.
        steps: Vec<Step>,
    },
    /// The old lines are missing but the new ones are there.
    AlreadyApplied {
        /// The hunk.
        hunk: usize,
        /// 1-based line where the new lines are.
        line: usize,
    },
    /// The old lines are there, but only inside a copy of the new ones:
    /// the hunk adds lines beside its context and was applied before.
    Repeated {
        /// The hunk.
        hunk: usize,
        /// 1-based line where the copy of the new lines starts.
        line: usize,
    },
    /// One part of a hunk around its `...` lines did not fit.
    Elided {
        /// The hunk.
        hunk: usize,
        /// The parts; `miss` is about them (its `hunk` is `part`).
        parts: Vec<Hunk>,
        /// 0-based index of the part.
        part: usize,
        /// Why it did not fit.
        miss: Box<Miss>,
    },
    /// A part of a hunk around its `...` lines adds lines but has no line
    /// of the file to place them by.
    LooseAddition {
        /// The hunk.
        hunk: usize,
        /// 1-based index of the part.
        part: usize,
    },
}

/// Places every hunk of a file, in order.
pub fn place(file: &FileLines, hunks: &[Hunk]) -> Result<Vec<Placed>, Miss> {
    let mut out: Vec<Placed> = Vec::with_capacity(hunks.len());
    let mut cursor = 0;
    let mut offset: isize = 0;
    for (k, h) in hunks.iter().enumerate() {
        let (from, anchor_line) = anchors_end(file, h, cursor).map_err(|anchor| Miss::Anchor {
            hunk: k,
            anchor,
            from: cursor,
        })?;
        // A hunk whose first line repeats its anchor starts at the anchor.
        let from = match (anchor_line, h.old().first()) {
            (Some(a), Some(first)) if file.matches_at(&[first], a, Fuzz::Indentation) => a,
            _ => from,
        };
        let rest = &hunks[k + 1..];
        let single = match place_one(file, h, from, offset, rest, k) {
            Err(Miss::NotFound { .. }) if anchor_line.is_some_and(|a| a + 1 == from) => {
                place_one(file, h, from - 1, offset, rest, k)
            }
            other => other,
        };
        let group = match single {
            Ok(p) => vec![p],
            Err(Miss::NotFound { hunk, .. }) => match h.elided_parts() {
                Some(parts) => place_elided(file, parts, from, offset, k)?,
                None => return Err(Miss::NotFound { hunk, from }),
            },
            Err(m) => return Err(m),
        };
        for placed in group {
            let old_len = placed.hunk.old().len();
            if let Some(o) = placed.offset {
                offset += o;
            }
            // A pure addition appended at the end (no anchor, no number)
            // does not move the search, as in Codex.
            let appended = old_len == 0 && h.anchors.is_empty() && h.old_start.is_none();
            if !appended {
                cursor = placed.at + old_len;
            }
            out.push(placed);
        }
    }
    Ok(out)
}

/// The ladder's last step for a hunk that is nowhere as a whole: the parts
/// around its `...` lines, each placed after the one before by the other
/// steps, and unique there (no later hunks are weighed: the parts are one
/// hunk). A part of only context lines is matched but changes nothing.
fn place_elided(
    file: &FileLines,
    parts: Vec<Hunk>,
    from: usize,
    offset: isize,
    k: usize,
) -> Result<Vec<Placed>, Miss> {
    let mut out: Vec<Placed> = Vec::new();
    let mut from = from;
    for (i, part) in parts.iter().enumerate() {
        if part.old().is_empty() {
            if part.changes() {
                return Err(Miss::LooseAddition {
                    hunk: k,
                    part: i + 1,
                });
            }
            continue;
        }
        match place_one(file, part, from, offset, &[], k) {
            Ok(p) => {
                from = p.at + p.hunk.old().len();
                out.push(p.with_step(Step::Elision));
            }
            Err(miss) => {
                return Err(Miss::Elided {
                    hunk: k,
                    part: i,
                    miss: Box::new(miss.renumbered(i, from)),
                    parts,
                });
            }
        }
    }
    if out.is_empty() {
        return Err(Miss::NotFound { hunk: k, from });
    }
    Ok(out)
}

impl Placed {
    /// The same place, found with `step` too.
    fn with_step(mut self, step: Step) -> Placed {
        add_step(&mut self.steps, step);
        self
    }
}

/// `step` in `steps`, kept in ladder order and once.
fn add_step(steps: &mut Vec<Step>, step: Step) {
    if !steps.contains(&step) {
        steps.push(step);
        steps.sort();
    }
}

impl Miss {
    /// The same miss, found with `step` too (for an ambiguous match).
    fn with_step(mut self, step: Step) -> Miss {
        if let Miss::Ambiguous { steps, .. } = &mut self {
            add_step(steps, step);
        }
        self
    }

    /// The same miss about hunk `k` (searched for from line `from`).
    fn renumbered(self, k: usize, from: usize) -> Miss {
        match self {
            Miss::Anchor { anchor, from, .. } => Miss::Anchor {
                hunk: k,
                anchor,
                from,
            },
            Miss::NotFound { .. } => Miss::NotFound { hunk: k, from },
            Miss::Ambiguous {
                lines, fuzz, steps, ..
            } => Miss::Ambiguous {
                hunk: k,
                lines,
                fuzz,
                steps,
            },
            Miss::AlreadyApplied { line, .. } => Miss::AlreadyApplied { hunk: k, line },
            Miss::Repeated { line, .. } => Miss::Repeated { hunk: k, line },
            m => m,
        }
    }
}

/// Where the search for a hunk starts after its anchors, and the line of
/// the last anchor; the anchor not found is the error.
fn anchors_end(file: &FileLines, h: &Hunk, from: usize) -> Result<(usize, Option<usize>), String> {
    let mut from = from;
    let mut last = None;
    for a in &h.anchors {
        match file.find_first(&[a.as_str()], from) {
            Some((at, _)) => {
                from = at + 1;
                last = Some(at);
            }
            None => return Err(a.clone()),
        }
    }
    Ok((from, last))
}

/// One hunk by the ladder's steps up to escapes (see the module's head);
/// a hunk whose new lines are there but not its old ones, or whose old
/// ones are there only inside a copy of its new ones, is said to be
/// applied already.
fn place_one(
    file: &FileLines,
    h: &Hunk,
    from: usize,
    offset: isize,
    rest: &[Hunk],
    k: usize,
) -> Result<Placed, Miss> {
    let placed = 'placed: {
        match place_levels(file, h, from, offset, rest, k) {
            Err(Miss::NotFound { .. }) => {}
            other => break 'placed other,
        }
        // The literal text is nowhere, so escapes were likely double-encoded.
        if let Some(decoded) = h.decoded() {
            match place_levels(file, &decoded, from, offset, rest, k) {
                Ok(p) => break 'placed Ok(p.with_step(Step::Escapes)),
                Err(m @ Miss::Ambiguous { .. }) => break 'placed Err(m.with_step(Step::Escapes)),
                Err(_) => {}
            }
        }
        let new = h.new_lines();
        if h.changes()
            && !new.is_empty()
            && let Some((at, fuzz)) = file.find_first(&new, from)
            && fuzz <= Fuzz::TrailingWhitespace
        {
            return Err(Miss::AlreadyApplied {
                hunk: k,
                line: at + 1,
            });
        }
        Err(Miss::NotFound { hunk: k, from })
    }?;
    match made_already(file, &placed, from) {
        Some(line) => Err(Miss::Repeated { hunk: k, line }),
        None => Ok(placed),
    }
}

/// Where a placed hunk that adds lines beside its context would sit inside
/// a copy of its own new lines, at or after `from` (lines before it are the
/// earlier hunks'): the 1-based line of that copy. Such a hunk finds its
/// context again once applied, and a weak model sends the patch that
/// succeeded again; applied twice, its lines would be there twice. Lines
/// that add only blank or short text (a lone `}`) occur by chance and are
/// no sign of a repeat.
fn made_already(file: &FileLines, p: &Placed, from: usize) -> Option<usize> {
    // Line comparisons spent looking for the old lines inside the new
    // ones: a hostile hunk (many context lines, many added lines alike)
    // would otherwise cost the product of its sides.
    const BUDGET: usize = 100_000;
    // Copies of the new lines looked at in the file, each costing a pass
    // over the new lines.
    const MAX_COPIES: usize = 64;
    let h = &p.hunk;
    let (old, new) = (h.old(), h.new_lines());
    let added: Vec<&str> = h
        .lines
        .iter()
        .filter(|l| l.op == Op::Add)
        .map(|l| l.text.trim())
        .filter(|t| !t.is_empty())
        .collect();
    let telling = added.len() > 1 || added.first().is_some_and(|t| t.len() >= 8);
    if old.is_empty() || new.len() <= old.len() || !telling || p.at < from {
        return None;
    }
    let fuzz = p.fuzz.max(Fuzz::TrailingWhitespace);
    let mut budget = BUDGET;
    let mut copies = 0;
    for k in 0..=(new.len() - old.len()).min(p.at - from) {
        let mut same = true;
        for (a, b) in new[k..].iter().zip(&old) {
            budget = budget.checked_sub(1)?;
            if a != b {
                same = false;
                break;
            }
        }
        if same {
            if file.matches_at(&new, p.at - k, fuzz) {
                return Some(p.at - k + 1);
            }
            copies += 1;
            if copies == MAX_COPIES {
                return None;
            }
        }
    }
    None
}

/// The line levels, then without blank context lines at the ends.
fn place_levels(
    file: &FileLines,
    h: &Hunk,
    from: usize,
    offset: isize,
    rest: &[Hunk],
    k: usize,
) -> Result<Placed, Miss> {
    let old = h.old();
    let n = file.len();
    if old.is_empty() {
        let at = match h.old_start {
            Some(a) if !h.at_eof => (a as isize + offset).clamp(from as isize, n as isize) as usize,
            _ if !h.anchors.is_empty() && !h.at_eof => from,
            _ => n,
        };
        return Ok(Placed {
            hunk: h.clone(),
            index: k,
            at,
            fuzz: Fuzz::Exact,
            offset: None,
            steps: Vec::new(),
        });
    }
    let expected = h
        .old_start
        .map(|s| (s as isize - 1 + offset).max(0) as usize);
    for fuzz in Fuzz::ALL {
        let cands = file.find(&old, from, fuzz, MAX_CANDIDATES);
        let Some(&first) = cands.first() else {
            continue;
        };
        let end = n - old.len();
        let at = if let Some(e) = expected.filter(|e| cands.contains(e)) {
            e
        } else if h.at_eof && cands.contains(&end) {
            end
        } else if !h.anchors.is_empty() && fuzz == Fuzz::Exact {
            first
        } else {
            let alternative = cands[1..].iter().any(|&q| fits(file, rest, q + old.len()));
            if alternative || cands.len() >= MAX_CANDIDATES {
                return Err(Miss::Ambiguous {
                    hunk: k,
                    lines: cands.iter().map(|c| c + 1).collect(),
                    fuzz,
                    steps: Vec::new(),
                });
            }
            first
        };
        return Ok(Placed {
            hunk: h.clone(),
            index: k,
            at,
            fuzz,
            offset: expected.map(|e| at as isize - e as isize),
            steps: Vec::new(),
        });
    }
    // Models often end a hunk with an empty context line for the file's
    // final newline, or begin one with a blank line for spacing; the file
    // has no such line there.
    if let Some(trimmed) = h.without_trailing_blank()
        && !trimmed.old().is_empty()
        && let Ok(p) = place_levels(file, &trimmed, from, offset, rest, k)
    {
        return Ok(p.with_step(Step::EdgeWhitespace));
    }
    if let Some((trimmed, lead)) = h.without_blank_edges()
        && lead > 0
        && !trimmed.old().is_empty()
    {
        match place_levels(file, &trimmed, from, offset, rest, k) {
            Ok(p) => return Ok(p.with_step(Step::EdgeWhitespace)),
            Err(m @ Miss::Ambiguous { .. }) => return Err(m.with_step(Step::EdgeWhitespace)),
            Err(_) => {}
        }
    }
    Err(Miss::NotFound { hunk: k, from })
}

/// Whether `rest` can still be placed, in order, from line `from`.
fn fits(file: &FileLines, rest: &[Hunk], from: usize) -> bool {
    let mut from = from;
    for h in rest {
        let Ok((after, _)) = anchors_end(file, h, from) else {
            return false;
        };
        let old = h.old();
        if old.is_empty() {
            from = after;
            continue;
        }
        let found =
            |old: &[&str], from: usize| file.find_first(old, from).map(|(at, _)| at + old.len());
        // The whole hunk, decoded, or its parts around `...` lines in order.
        let end = found(&old, after)
            .or_else(|| h.decoded().and_then(|d| found(&d.old(), after)))
            .or_else(|| {
                h.elided_parts()?.iter().try_fold(after, |at, p| {
                    let old = p.old();
                    if old.is_empty() {
                        Some(at)
                    } else {
                        found(&old, at)
                    }
                })
            });
        match end {
            Some(end) => from = end,
            None => return false,
        }
    }
    true
}

/// The line-range edits of placed hunks: one per run of removed and added
/// lines, in file order, insertions at one place merged.
pub fn edits(file: &FileLines, placed: &[Placed]) -> Vec<LineEdit> {
    let mut out: Vec<LineEdit> = Vec::new();
    for p in placed {
        let h = &p.hunk;
        let old = h.old();
        let pairs = if p.fuzz.reindents() {
            let matched: Vec<&str> = file.lines[p.at..p.at + old.len()]
                .iter()
                .map(String::as_str)
                .collect();
            indent_pairs(&old, &matched)
        } else {
            Vec::new()
        };
        let mut i = p.at;
        // A run of removed lines (their text and file line) and added lines.
        type Run<'a> = (usize, Vec<(&'a str, usize)>, Vec<&'a str>);
        let mut run: Option<Run> = None;
        let flush = |run: &mut Option<Run>, out: &mut Vec<LineEdit>| {
            if let Some((start, removed, added)) = run.take() {
                // A changed line keeps the file's bytes around the change
                // when the match was loose (see `tolerant`).
                let paired = p.fuzz != Fuzz::Exact && removed.len() == added.len();
                let lines: Vec<String> = added
                    .iter()
                    .enumerate()
                    .map(|(n, a)| {
                        paired
                            .then(|| {
                                let (old, at) = removed[n];
                                keep_unchanged_ends(old, a, &file.lines[at], p.fuzz)
                            })
                            .flatten()
                            .unwrap_or_else(|| reindent(&pairs, a))
                    })
                    .collect();
                out.push(LineEdit {
                    start_line: start as u64 + 1,
                    end_line: (start + removed.len()) as u64,
                    replacement: lines_text(&lines),
                });
            }
        };
        for l in &h.lines {
            match l.op {
                Op::Context => {
                    flush(&mut run, &mut out);
                    i += 1;
                }
                Op::Remove => {
                    run.get_or_insert_with(|| (i, Vec::new(), Vec::new()))
                        .1
                        .push((&l.text, i));
                    i += 1;
                }
                Op::Add => run
                    .get_or_insert_with(|| (i, Vec::new(), Vec::new()))
                    .2
                    .push(&l.text),
            }
        }
        flush(&mut run, &mut out);
    }
    out.sort_by_key(|e| (e.start_line, e.end_line));
    let mut merged: Vec<LineEdit> = Vec::with_capacity(out.len());
    for e in out {
        match merged.last_mut() {
            Some(prev)
                if prev.start_line == e.start_line
                    && prev.end_line + 1 == prev.start_line
                    && e.end_line + 1 == e.start_line =>
            {
                prev.replacement.push_str(&e.replacement);
            }
            _ => merged.push(e),
        }
    }
    merged
}

/// Lines as a line edit's replacement: each ends with a newline, and no
/// lines is the empty string (which deletes).
fn lines_text(lines: &[String]) -> String {
    let mut s = String::new();
    for l in lines {
        s.push_str(l);
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod props;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::patch::model::HunkLine;

    pub(super) fn hunk(spec: &str) -> Hunk {
        let mut h = Hunk::default();
        for l in spec.lines() {
            if let Some(a) = l.strip_prefix("@@ ") {
                h.anchors.push(a.to_string());
                continue;
            }
            let op = match &l[..1] {
                " " => Op::Context,
                "-" => Op::Remove,
                _ => Op::Add,
            };
            h.lines.push(HunkLine {
                op,
                text: l[1..].to_string(),
            });
        }
        h
    }

    fn apply(text: &str, hunks: &[Hunk]) -> Result<String, Miss> {
        let file = FileLines::new(text.as_bytes());
        let placed = place(&file, hunks)?;
        let edits = edits(&file, &placed);
        Ok(String::from_utf8(
            crate::tools::matching::lines::apply(text.as_bytes(), &edits).unwrap(),
        )
        .unwrap())
    }

    #[test]
    fn repeated_context_is_placed_by_order_or_refused() {
        let f = "foo\nbar\nfoo\nbar\n";
        // Two hunks with the same context: order decides.
        assert_eq!(
            apply(f, &[hunk(" foo\n-bar\n+BAR"), hunk(" foo\n-bar\n+BAZ")]).unwrap(),
            "foo\nBAR\nfoo\nBAZ\n"
        );
        // One hunk that fits both places: refused.
        assert_eq!(
            apply(f, &[hunk(" foo\n-bar\n+BAR")]).unwrap_err(),
            Miss::Ambiguous {
                hunk: 0,
                lines: vec![1, 3],
                fuzz: Fuzz::Exact,
                steps: Vec::new(),
            }
        );
    }

    #[test]
    fn anchors_narrow_the_search() {
        let f = "class A:\n    def f(self):\n        return 1\nclass B:\n    def f(self):\n        return 1\n";
        assert_eq!(
            apply(
                f,
                &[hunk(
                    "@@ class B:\n@@     def f(self):\n-        return 1\n+        return 2"
                )]
            )
            .unwrap(),
            "class A:\n    def f(self):\n        return 1\nclass B:\n    def f(self):\n        return 2\n"
        );
        // The anchor repeated as the hunk's first line.
        assert_eq!(
            apply(f, &[hunk("@@ class B:\n class B:\n     def f(self):\n-        return 1\n+        return 3")])
                .unwrap(),
            "class A:\n    def f(self):\n        return 1\nclass B:\n    def f(self):\n        return 3\n"
        );
        assert!(matches!(
            apply(f, &[hunk("@@ class C:\n-x")]),
            Err(Miss::Anchor { .. })
        ));
    }

    #[test]
    fn loose_matches_keep_the_file_lines_and_reindent() {
        let f = "fn main() {\n\tlet x = 1;  \n\tgo(x);\n}\n";
        assert_eq!(
            apply(
                f,
                &[hunk(
                    " fn main() {\n-    let x = 1;\n+    let x = 2;\n+    log(x);\n     go(x);"
                )]
            )
            .unwrap(),
            "fn main() {\n\tlet x = 2;\n\tlog(x);\n\tgo(x);\n}\n"
        );
    }

    #[test]
    fn additions_and_already_applied() {
        // Pure additions go at the end; a trailing blank context is dropped.
        assert_eq!(
            apply("a\nb\n", &[hunk("+c"), hunk("+d")]).unwrap(),
            "a\nb\nc\nd\n"
        );
        assert_eq!(apply("a\nb\n", &[hunk(" b\n+c\n ")]).unwrap(), "a\nb\nc\n");
        assert_eq!(
            apply("a\nB\n", &[hunk(" a\n-b\n+B")]).unwrap_err(),
            Miss::AlreadyApplied { hunk: 0, line: 1 }
        );
        assert_eq!(
            apply("a\n", &[hunk("-zzz")]).unwrap_err(),
            Miss::NotFound { hunk: 0, from: 0 }
        );
    }

    #[test]
    fn a_hunk_that_adds_beside_its_context_is_not_applied_twice() {
        let once = apply("import os\nrun()\n", &[hunk(" import os\n+import sys")]).unwrap();
        assert_eq!(once, "import os\nimport sys\nrun()\n");
        assert_eq!(
            apply(&once, &[hunk(" import os\n+import sys")]).unwrap_err(),
            Miss::Repeated { hunk: 0, line: 1 }
        );
        // Added before the context, and with trailing whitespace in the file.
        assert_eq!(
            apply(
                "x = 1\nlog_value(x)  \nmain()\n",
                &[hunk("+log_value(x)\n main()")]
            )
            .unwrap_err(),
            Miss::Repeated { hunk: 0, line: 2 }
        );
        // The same context elsewhere without the addition, where the
        // header's line number points, is still patched.
        let mut h = hunk(" import os\n+import sys");
        h.old_start = Some(4);
        assert_eq!(
            apply("import os\nimport sys\n\nimport os\n", &[h]).unwrap(),
            "import os\nimport sys\n\nimport os\nimport sys\n"
        );
        // In a file with CRLF line endings, as the second of two hunks.
        let crlf = "x = 1\r\nimport os\r\nimport sys\r\n";
        assert_eq!(
            apply(
                crlf,
                &[hunk("-x = 1\n+x = 2"), hunk(" import os\n+import sys")]
            )
            .unwrap_err(),
            Miss::Repeated { hunk: 1, line: 2 }
        );
        // A line added once more on purpose needs context on both sides.
        let layers = "    nn.Linear(4, 4),\n    nn.ReLU(),\n    nn.ReLU(),\n)\n";
        assert_eq!(
            apply(layers, &[hunk("     nn.ReLU(),\n+    nn.ReLU(),\n )")]).unwrap_err(),
            Miss::Repeated { hunk: 0, line: 2 }
        );
        let both = "     nn.Linear(4, 4),\n     nn.ReLU(),\n+    nn.ReLU(),\n     nn.ReLU(),\n )";
        assert_eq!(
            apply(layers, &[hunk(both)]).unwrap(),
            "    nn.Linear(4, 4),\n    nn.ReLU(),\n    nn.ReLU(),\n    nn.ReLU(),\n)\n"
        );
        // A copy that starts before where this hunk may go (in lines an
        // earlier hunk rewrites) is no repeat of it.
        assert_eq!(
            apply(
                "import sys\nimport os\nrun()\n",
                &[
                    hunk("-import sys\n+import json"),
                    hunk("+import sys\n import os")
                ]
            )
            .unwrap(),
            "import json\nimport sys\nimport os\nrun()\n"
        );
        // A short or blank addition is no sign of a repeat.
        assert_eq!(
            apply("f() {\n}\n}\n", &[hunk(" f() {\n+}")]).unwrap(),
            "f() {\n}\n}\n}\n"
        );
    }

    /// A repeat found only after comparing many lines (context lines
    /// that the added ones nearly repeat) is past the check's budget: the
    /// hunk is then judged as any other, so a hostile hunk costs no more.
    #[test]
    fn the_repeat_check_is_bounded_on_a_hostile_hunk() {
        let repeat = |n: usize| {
            let spec = format!("{}+zz zz zz\n{}", "+x\n".repeat(n - 1), " x\n".repeat(n));
            let file = format!("{}zz zz zz\n{}", "x\n".repeat(n - 1), "x\n".repeat(n));
            apply(&file, &[hunk(spec.trim_end())])
        };
        assert_eq!(repeat(10).unwrap_err(), Miss::Repeated { hunk: 0, line: 1 });
        assert_eq!(repeat(1_000).unwrap().lines().count(), 3_000);
    }

    fn steps(text: &str, hunks: &[Hunk]) -> Vec<Vec<&'static str>> {
        let file = FileLines::new(text.as_bytes());
        place(&file, hunks)
            .unwrap()
            .iter()
            .map(|p| p.steps.iter().map(|s| s.name()).collect())
            .collect()
    }

    #[test]
    fn double_encoded_escapes_are_decoded_last_but_one() {
        let f = "def f():\n\tprint(\"hi\")\n\treturn 1\n";
        let h = hunk(" def f():\\n\\tprint(\\\"hi\\\")\n-\\treturn 1\n+\\treturn 2");
        assert_eq!(
            apply(f, std::slice::from_ref(&h)).unwrap(),
            "def f():\n\tprint(\"hi\")\n\treturn 2\n"
        );
        assert_eq!(steps(f, &[h]), vec![vec!["escapes"]]);
        // Text that is in the file with its backslashes is taken as it is.
        let f = "s = \"a\\n\"\nt = 1\n";
        let h = hunk(" s = \"a\\n\"\n-t = 1\n+t = \"b\\n\"");
        assert_eq!(
            apply(f, std::slice::from_ref(&h)).unwrap(),
            "s = \"a\\n\"\nt = \"b\\n\"\n"
        );
        assert_eq!(steps(f, &[h]), vec![Vec::<&str>::new()]);
        // Decoded, it fits two places: refused.
        let f = "if a:\n\tgo(\"x\")\nif b:\n\tgo(\"x\")\n";
        assert!(matches!(
            apply(f, &[hunk("-\\tgo(\\\"x\\\")\n+\\tgo(\\\"y\\\")")]),
            Err(Miss::Ambiguous { .. })
        ));
    }

    #[test]
    fn elided_lines_split_a_hunk_into_parts_each_unique() {
        let f =
            "def f():\n    a = 1\n    b = 2\n    c = 3\n    return a\n\ndef g():\n    return a\n";
        let h = hunk(
            " def f():\n-    a = 1\n+    a = 10\n ...\n-    return a\n+    return a + c\n \n def g():",
        );
        assert_eq!(
            apply(f, std::slice::from_ref(&h)).unwrap(),
            "def f():\n    a = 10\n    b = 2\n    c = 3\n    return a + c\n\ndef g():\n    return a\n"
        );
        assert_eq!(steps(f, &[h]), vec![vec!["elision"], vec!["elision"]]);
        // A part that fits two places after the one before it: refused.
        let h = hunk(" def f():\n ...\n-    return a\n+    return b");
        match apply(f, &[h]) {
            Err(Miss::Elided { part: 1, miss, .. }) => {
                assert!(matches!(*miss, Miss::Ambiguous { hunk: 1, .. }), "{miss:?}")
            }
            other => panic!("{other:?}"),
        }
        // Parts out of file order: the second is not after the first.
        let h = hunk(" def g():\n ...\n-    a = 1\n+    a = 2");
        match apply(f, &[h]) {
            Err(Miss::Elided { part: 1, miss, .. }) => {
                assert!(
                    matches!(*miss, Miss::NotFound { hunk: 1, from: 7 }),
                    "{miss:?}"
                )
            }
            other => panic!("{other:?}"),
        }
        // Added lines after `...` with nothing to place them by.
        assert_eq!(
            apply(f, &[hunk(" def g():\n ...\n+x")]).unwrap_err(),
            Miss::LooseAddition { hunk: 0, part: 2 }
        );
        // A file that has a `...` line matches it as text.
        let f = "def stub():\n    ...\n";
        assert_eq!(
            apply(f, &[hunk(" def stub():\n-    ...\n+    pass")]).unwrap(),
            "def stub():\n    pass\n"
        );
    }

    #[test]
    fn line_numbers_pick_among_repeats() {
        let f = "x\ny\nx\ny\n";
        let mut h = hunk(" x\n-y\n+Y");
        h.old_start = Some(3);
        assert_eq!(apply(f, &[h]).unwrap(), "x\ny\nx\nY\n");
    }
}
