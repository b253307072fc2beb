//! One string replacement on a file's bytes: every exact occurrence for
//! `replace_all` (with the file's line endings if need be), otherwise the
//! one place the matching ladder finds (`matching::ladder`); and when
//! nothing is found, whether the edit looks already applied.

use memchr::memmem;

use crate::tools::matching::ladder::{self, Search, Step, fit_eol};
use crate::tools::matching::text::{CRLF, LF, bom_len, crlf_to_lf, has_crlf, lines_of, with_eol};

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

/// A replacement made.
#[derive(Debug)]
pub struct Done {
    /// The new content.
    pub content: Vec<u8>,
    /// Occurrences replaced.
    pub count: usize,
    /// The ladder's steps taken when the match was not exact, in order.
    pub tolerance: Vec<Step>,
    /// The byte ranges of the original content that were replaced.
    #[cfg_attr(
        not(test),
        allow(dead_code, reason = "the property test checks edits stay inside them")
    )]
    pub ranges: Vec<(usize, usize)>,
    /// The lines of occurrences that `replace_all` left as they were,
    /// since each already lay inside a copy of the new text.
    pub kept: Vec<u64>,
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
        /// The steps it took to find them (empty when exact).
        tolerance: Vec<Step>,
    },
    /// `old_string` elides lines with `...` in a way that cannot be applied.
    BadElision(String),
    /// `old_string` is not there but `new_string` is.
    AlreadyApplied {
        /// Where `new_string` is.
        line: u64,
    },
    /// `old_string` is part of `new_string`, and is in the file only
    /// inside copies of `new_string`: the edit was made, and making it
    /// again would add its new text once more (`-p 8080 -p 8080`).
    MadeAlready {
        /// Where the first copy of `new_string` is.
        line: u64,
    },
    /// Not found at all.
    NotFound,
}

/// Makes one replacement in `content`.
pub fn replace(content: &[u8], r: Replacement) -> Result<Done, Miss> {
    if r.old == r.new {
        // A model told to fix a misspelling writes the right word on both
        // sides: when the file does not hold it, say so (with the closest
        // line, which shows the misspelling) rather than "the same".
        let held = memmem::find(content, r.old.as_bytes()).is_some()
            || (has_crlf(content)
                && memmem::find(content, &with_eol(r.old.as_bytes(), CRLF)).is_some());
        if !r.old.is_empty() && !held {
            return Err(Miss::NotFound);
        }
        return Err(Miss::Unchanged);
    }
    if let Some(line) = made_already(content, r.old, r.new) {
        return Err(Miss::MadeAlready { line });
    }
    let bom = bom_len(content);
    if r.old.is_empty() {
        // An empty file can be filled by replacing its (empty) content.
        if content.len() == bom {
            let mut out = content.to_vec();
            out.extend_from_slice(r.new.as_bytes());
            return Ok(Done {
                content: out,
                count: 1,
                tolerance: Vec::new(),
                ranges: vec![(bom, bom)],
                kept: Vec::new(),
            });
        }
        return Err(Miss::EmptyOld);
    }
    if r.all {
        // Tolerant matching only ever picks one place; replace_all needs the
        // exact text so that it cannot touch lines the model did not mean.
        // Where the change is made already, it is not made again: "a.py"
        // made "# a.py" everywhere would turn an earlier "# a.py" into
        // "# # a.py".
        let skip_made = telling_repeat(r.old, r.new);
        let every =
            |old: &[u8], tolerance| replace_every(content, old, r.new, tolerance, skip_made);
        if let Some(done) = every(r.old.as_bytes(), Vec::new()) {
            return Ok(done);
        }
        let variant = if !r.old.contains('\n') {
            None
        } else if r.old.contains("\r\n") {
            Some(crlf_to_lf(r.old).into_owned().into_bytes())
        } else if has_crlf(content) {
            Some(with_eol(r.old.as_bytes(), CRLF).into_owned())
        } else {
            None
        };
        if let Some(variant) = variant
            && let Some(done) = every(&variant, vec![Step::LineEndings])
        {
            return Ok(done);
        }
    } else {
        match ladder::search(content, bom, r.old, r.new) {
            Search::Found(hit) => {
                return Ok(Done {
                    content: hit.apply(content),
                    count: 1,
                    ranges: hit.pieces.iter().map(|p| (p.start, p.end)).collect(),
                    tolerance: hit.steps,
                    kept: Vec::new(),
                });
            }
            Search::Ambiguous {
                count,
                lines,
                steps,
            } => {
                return Err(Miss::Ambiguous {
                    count,
                    lines,
                    tolerance: steps,
                });
            }
            Search::BadElision(why) => return Err(Miss::BadElision(why)),
            Search::Missing => {}
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

/// The line of the first copy of `new` in `content`, when `old` is part
/// of `new` and every exact occurrence of `old` in the file lies inside a
/// copy of `new` at the place it has there. A weak model sends the edit
/// that succeeded again, and an edit whose old text its new text contains
/// would then apply once more each time, nesting its change.
fn made_already(content: &[u8], old: &str, new: &str) -> Option<u64> {
    let places = places_in_copies(content, old, new)?;
    let copies: Option<Vec<usize>> = places.iter().map(|&(_, copy)| copy).collect();
    copies?.first().map(|&p| lines_of(content, &[p])[0])
}

/// Each exact occurrence of `old` in `content` (with the file's line
/// endings), with the start of the copy of `new` it lies inside at the
/// place it has in `new`, if it does; `None` when that says nothing (see
/// [`telling_repeat`] and [`copies_of`]).
fn places_in_copies(content: &[u8], old: &str, new: &str) -> Option<Vec<(usize, Option<usize>)>> {
    if !telling_repeat(old, new) {
        return None;
    }
    let eol = if has_crlf(content) { CRLF } else { LF };
    copies_of(
        content,
        &with_eol(old.as_bytes(), eol),
        &with_eol(new.as_bytes(), eol),
    )
}

/// Whether finding `old` inside copies of `new` would say the edit was
/// made: not when `old` is not part of `new`, when `new` is short enough to
/// occur by chance, or when what the edit adds around `old` is only blank
/// text (a line break added after a line is no sign of a repeat).
fn telling_repeat(old: &str, new: &str) -> bool {
    !old.is_empty() && looks_applied(new) && !new.replacen(old, "", 1).trim().is_empty()
}

/// Each occurrence of the bytes `old` in `content`, with the start of the
/// copy of `new` it lies inside, if any; `None` when `old` is not in `new`
/// or is in either too often to look into.
fn copies_of(content: &[u8], old: &[u8], new: &[u8]) -> Option<Vec<(usize, Option<usize>)>> {
    const MAX_PLACES: usize = 64;
    // A repeat has its old text in a few places: many (a hostile `a` in
    // `aaaa…`) would make the check cost their product, so it is left out.
    let within: Vec<usize> = memmem::find_iter(new, old).take(MAX_PLACES + 1).collect();
    let places: Vec<usize> = memmem::find_iter(content, old)
        .take(MAX_PLACES + 1)
        .collect();
    if within.is_empty() || within.len() > MAX_PLACES || places.len() > MAX_PLACES {
        return None;
    }
    let copy_at = |pos: usize| {
        within
            .iter()
            .find(|&&k| pos >= k && content[pos - k..].starts_with(new))
            .map(|&k| pos - k)
    };
    Some(places.into_iter().map(|pos| (pos, copy_at(pos))).collect())
}

/// Whether finding `new` in the file says much: a short or blank text
/// occurs by chance.
fn looks_applied(new: &str) -> bool {
    let t = new.trim();
    !t.is_empty() && (t.contains('\n') || t.len() >= 8)
}

/// Every exact occurrence of `old` replaced, but with `skip_made` those
/// that already lie inside a copy of the new text (found with the same
/// bytes that are replaced); `None` when none is left to replace.
fn replace_every(
    content: &[u8],
    old: &[u8],
    new: &str,
    tolerance: Vec<Step>,
    skip_made: bool,
) -> Option<Done> {
    let finder = memmem::Finder::new(old);
    let first = finder.find(content)?;
    let new_bytes = fit_eol(content, first, new);
    let made: Vec<usize> = if skip_made {
        copies_of(content, old, &new_bytes)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(pos, copy)| copy.map(|_| pos))
            .collect()
    } else {
        Vec::new()
    };
    let mut out = Vec::with_capacity(content.len());
    let mut last = 0;
    let mut ranges = Vec::new();
    // Where each occurrence left as it was is in the new content.
    let mut kept = Vec::new();
    for pos in finder.find_iter(&content[first..]).map(|p| p + first) {
        if made.contains(&pos) {
            kept.push(out.len() + (pos - last));
            continue;
        }
        out.extend_from_slice(&content[last..pos]);
        out.extend_from_slice(&new_bytes);
        last = pos + old.len();
        ranges.push((pos, last));
    }
    if ranges.is_empty() {
        return None;
    }
    out.extend_from_slice(&content[last..]);
    Some(Done {
        kept: lines_of(&out, &kept),
        content: out,
        count: ranges.len(),
        tolerance,
        ranges,
    })
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
        assert_eq!((d.count, d.tolerance.is_empty()), (1, true));
        let miss = replace(b"x\ny\nx\n", one("x", "z")).unwrap_err();
        assert_eq!(
            miss,
            Miss::Ambiguous {
                count: 2,
                lines: vec![1, 3],
                tolerance: vec![]
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
        assert_eq!(d.tolerance, vec![Step::LineEndings]);
        // An exact single-line match still gets CRLF in its new lines.
        let d = replace(b"a\r\nb\r\n", one("a", "a\nx")).unwrap();
        assert_eq!(text(&d), "a\r\nx\r\nb\r\n");
        assert!(d.tolerance.is_empty());
    }

    #[test]
    fn tolerant_match_is_reported_and_unique() {
        let d = replace(
            b"if x {   \n    go();\n}\n",
            one("if x {\n    go();", "if y {\n    go();"),
        )
        .unwrap();
        // Only the changed part is rewritten: the line keeps its trailing spaces.
        assert_eq!(text(&d), "if y {   \n    go();\n}\n");
        assert_eq!(
            d.tolerance,
            vec![Step::Level(
                crate::tools::matching::normalize::Fuzz::TrailingWhitespace
            )]
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

    #[test]
    fn an_edit_whose_new_text_holds_its_old_one_is_not_made_twice() {
        let file = "// run: node server.js  (port 3000)\nconst http = require(\"http\");\n";
        let edit = one("node server.js", "node server.js -p 8080");
        let once = replace(file.as_bytes(), edit).unwrap();
        assert_eq!(
            text(&once),
            "// run: node server.js -p 8080  (port 3000)\nconst http = require(\"http\");\n"
        );
        // Sent again, it would have made `-p 8080 -p 8080`.
        assert_eq!(
            replace(&once.content, edit).unwrap_err(),
            Miss::MadeAlready { line: 1 }
        );
        let every = Replacement { all: true, ..edit };
        assert_eq!(
            replace(&once.content, every).unwrap_err(),
            Miss::MadeAlready { line: 1 }
        );
        // A line added after another, in a file with CRLF line endings.
        let add = one("import os\n", "import os\nimport sys\n");
        let crlf = replace(b"import os\r\n\r\nprint(1)\r\n", add).unwrap();
        assert_eq!(text(&crlf), "import os\r\nimport sys\r\n\r\nprint(1)\r\n");
        assert_eq!(
            replace(&crlf.content, add).unwrap_err(),
            Miss::MadeAlready { line: 1 }
        );
        // The old text also somewhere the new one is not: an edit to make
        // (here the ambiguity of the two places is what stops it), and
        // replace_all makes it only there, leaving the place made already.
        let two = b"node server.js -p 8080\nnode server.js\n";
        assert!(matches!(
            replace(two, edit).unwrap_err(),
            Miss::Ambiguous { count: 2, .. }
        ));
        let rest = replace(two, every).unwrap();
        assert_eq!(
            text(&rest),
            "node server.js -p 8080\nnode server.js -p 8080\n"
        );
        assert_eq!((rest.count, rest.kept), (1, vec![1]));
        // The lines named are those of the file as the edit leaves it, and
        // a CRLF file's copies are found with the bytes that are replaced.
        let grown = Replacement {
            all: true,
            ..one("foo()\n", "foo()\nbar()\n")
        };
        for eol in ["\n", "\r\n"] {
            let file = "foo()\nX\nfoo()\nbar()\n".replace('\n', eol);
            let done = replace(file.as_bytes(), grown).unwrap();
            let made = "foo()\nbar()\nX\nfoo()\nbar()\n".replace('\n', eol);
            assert_eq!((text(&done), &done.kept[..]), (made.as_str(), &[4][..]));
        }
        // Old text in many places of the file and of the new text: not
        // looked into (each place against each costs their product, and
        // text in this many places is no edit made once), so the edit is
        // judged as any other: here, ambiguous.
        let wide = format!("{}b", "a".repeat(2_000));
        let many = wide.repeat(10);
        assert!(matches!(
            replace(many.as_bytes(), one("a", &wide)).unwrap_err(),
            Miss::Ambiguous { count: 20_000, .. }
        ));
        // Only blank text added: no sign of a repeat.
        let blank = one("fn a() {}\n", "fn a() {}\n\n");
        let spaced = replace(b"fn a() {}\n\nfn b() {}\n", blank).unwrap();
        assert_eq!(text(&spaced), "fn a() {}\n\n\nfn b() {}\n");
        assert_eq!(
            replace(b"you will recieve it", one("receive", "receive")).unwrap_err(),
            Miss::NotFound
        );
    }

    /// Random files and edits: a tolerated match never changes text
    /// outside the stretch it matched, lands where the model's text came
    /// from when that is the only place it can mean, and an exact
    /// `old_string` always wins over a tolerated one.
    mod props {
        use super::*;
        use proptest::prelude::*;

        fn line(id: Option<usize>) -> impl Strategy<Value = String> {
            let indent = prop::sample::select(vec!["", "    ", "\t", "        "]);
            let words = prop::collection::vec(
                prop::sample::select(vec![
                    "let",
                    "x",
                    "=",
                    "1;",
                    "\u{201c}a\u{201d}",
                    "'b'",
                    "a\u{2013}b",
                    "a-b",
                    "foo(x)",
                    "{",
                    "}",
                    "\"c\"",
                ]),
                1..5,
            );
            let seps = prop::collection::vec(prop::sample::select(vec![" ", "  ", "\t"]), 5);
            let trail = prop::sample::select(vec!["", "", " ", "\t"]);
            (indent, words, seps, trail).prop_map(move |(i, w, s, t)| {
                let mut l = i.to_string();
                if let Some(id) = id {
                    l.push_str(&format!("id{id};"));
                    l.push_str(s[4]);
                }
                for (k, word) in w.iter().enumerate() {
                    if k > 0 {
                        l.push_str(s[k - 1]);
                    }
                    l.push_str(word);
                }
                l.push_str(t);
                l
            })
        }

        /// What a model gets wrong when it copies lines, each maybe.
        #[derive(Debug, Clone)]
        struct Slips {
            trailing: bool,
            indentation: bool,
            look_alikes: bool,
            no_break_space: bool,
            spaces: bool,
            edges: bool,
            escapes: bool,
        }

        fn slips() -> impl Strategy<Value = Slips> {
            (any::<[bool; 7]>()).prop_map(|b| Slips {
                trailing: b[0],
                indentation: b[1],
                look_alikes: b[2],
                no_break_space: b[3],
                spaces: b[4],
                edges: b[5],
                escapes: b[6] && b[0],
            })
        }

        fn slip(lines: &[String], s: &Slips) -> String {
            let mut out: Vec<String> = lines
                .iter()
                .map(|l| {
                    let mut l = l.clone();
                    if s.trailing {
                        l = l.trim_end().to_string();
                    }
                    if s.indentation {
                        l = l.trim_start().to_string();
                    }
                    if s.look_alikes {
                        l = l
                            .replace(['\u{201c}', '\u{201d}'], "\"")
                            .replace('\u{2013}', "-");
                    }
                    if s.spaces {
                        let ind = l.len() - l.trim_start().len();
                        let body: Vec<&str> = l[ind..]
                            .split([' ', '\t'])
                            .filter(|w| !w.is_empty())
                            .collect();
                        l = format!("{}{}", &l[..ind], body.join(" "));
                    }
                    if s.no_break_space {
                        l = l.replacen("= ", "=\u{a0}", 1);
                    }
                    l
                })
                .collect();
            if s.edges {
                out.insert(0, String::new());
                out.push(String::new());
            }
            let text = out.join("\n");
            if s.escapes {
                text.replace('\\', "\\\\")
                    .replace('\n', "\\n")
                    .replace('\t', "\\t")
                    .replace('"', "\\\"")
            } else {
                text
            }
        }

        fn file_of(lines: &[String]) -> String {
            lines.iter().map(|l| format!("{l}\n")).collect()
        }

        /// Byte span of lines `a..b` of a file made by `file_of`.
        fn span(lines: &[String], a: usize, b: usize) -> (usize, usize) {
            let start: usize = lines[..a].iter().map(|l| l.len() + 1).sum();
            let len: usize = lines[a..b].iter().map(|l| l.len() + 1).sum();
            (start, start + len)
        }

        fn unchanged_outside(before: &[u8], after: &[u8], lo: usize, hi: usize) -> bool {
            after.len() + (hi - lo) >= before.len()
                && after[..lo] == before[..lo]
                && after.ends_with(&before[hi..])
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

            /// Every line distinct (an id in each): an edit copied with
            /// slips lands on the lines it was copied from, and changes
            /// nothing else.
            #[test]
            fn tolerated_edits_land_where_they_came_from(
                lines in prop::collection::vec(0usize..1, 2..10)
                    .prop_flat_map(|v| {
                        let n = v.len();
                        (0..n).map(|i| line(Some(i)).boxed()).collect::<Vec<_>>()
                    }),
                pick in (0usize..100, 1usize..4),
                s in slips(),
                change in prop::sample::select(vec![" // new", ";", " x"]),
            ) {
                let n = lines.len();
                let a = pick.0 % n;
                let b = (a + pick.1).min(n);
                let old = slip(&lines[a..b], &s);
                let mut changed = lines[a..b].to_vec();
                changed[0].push_str(change);
                let new = slip(&changed, &s);
                let before = file_of(&lines);
                let done = replace(before.as_bytes(), one(&old, &new))
                    .map_err(|m| TestCaseError::fail(format!("{m:?}\nfile: {before:?}\nold: {old:?}")))?;
                // A match may reach into the line before or after when
                // old_string begins or ends with a newline; it puts back
                // what it takes (checked line by line below).
                let (lo, hi) = span(&lines, a.saturating_sub(1), (b + 1).min(n));
                for &(start, end) in &done.ranges {
                    prop_assert!(lo <= start && end <= hi, "matched {start}..{end}, not in {lo}..{hi}\nfile: {before:?}\nold: {old:?}");
                }
                prop_assert!(unchanged_outside(before.as_bytes(), &done.content, lo, hi));
                // The line the model changed has the change; the others are
                // as the file had them, byte for byte.
                let after = String::from_utf8(done.content.clone()).unwrap();
                let after_lines: Vec<&str> = after.lines().collect();
                prop_assert_eq!(after_lines.len(), n);
                prop_assert!(after_lines[a].ends_with(change.trim_start()) || after_lines[a].contains(change.trim()), "{:?}", after_lines[a]);
                for k in (0..n).filter(|&k| k != a) {
                    prop_assert_eq!(after_lines[k], lines[k].as_str(), "line {}\nold: {:?}", k, old);
                }
            }

            /// Lines that repeat and look alike: whatever happens, text
            /// outside the replaced stretch stays, and an exact old_string
            /// wins over any tolerated one.
            #[test]
            fn exact_wins_and_nothing_outside_changes(
                lines in prop::collection::vec(line(None), 1..10),
                pick in (0usize..100, 1usize..4),
                s in slips(),
                new in line(None),
            ) {
                let n = lines.len();
                let a = pick.0 % n;
                let b = (a + pick.1).min(n);
                let old = slip(&lines[a..b], &s);
                prop_assume!(old != new && !old.is_empty());
                let before = file_of(&lines);
                let exact = before.matches(old.as_str()).count();
                match replace(before.as_bytes(), one(&old, &new)) {
                    Ok(done) => {
                        if exact > 0 {
                            prop_assert_eq!(exact, 1);
                            prop_assert!(done.tolerance.is_empty());
                            prop_assert_eq!(
                                String::from_utf8(done.content).unwrap(),
                                before.replacen(old.as_str(), &new, 1)
                            );
                        } else {
                            prop_assert!(!done.tolerance.is_empty());
                            let lo = done.ranges.iter().map(|r| r.0).min().unwrap();
                            let hi = done.ranges.iter().map(|r| r.1).max().unwrap();
                            prop_assert!(unchanged_outside(before.as_bytes(), &done.content, lo, hi));
                        }
                    }
                    Err(Miss::Ambiguous { tolerance, count, .. }) => {
                        if exact > 0 {
                            prop_assert!(tolerance.is_empty());
                            prop_assert_eq!(count, exact);
                        }
                    }
                    Err(other) => prop_assert!(exact == 0, "{other:?} with an exact match"),
                }
            }
        }
    }
}
