//! Property tests of hunk placement: random files of distinct (or
//! repeated, look-alike) lines and hunks copied from them with the slips
//! models make. A hunk lands where it was copied from, every other line
//! keeps its bytes, an exact hunk is never loose and wins over tolerated
//! places, and the ladder's escapes and elision steps keep to the same.

use super::tests::hunk;
use super::*;
use proptest::prelude::*;

fn line(id: usize) -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["", "    ", "\t"]),
        prop::collection::vec(
            prop::sample::select(vec![
                "x",
                "=",
                "\u{201c}a\u{201d}",
                "a\u{2013}b",
                "f(y)",
                "{",
            ]),
            1..4,
        ),
        prop::sample::select(vec![" ", "  ", "\t"]),
        prop::sample::select(vec!["", " "]),
    )
        .prop_map(move |(i, w, sep, t)| format!("{i}id{id};{sep}{}{t}", w.join(sep)))
}

/// The file made of `lines`, and the one hunk of `spec` placed in it.
fn placing(lines: &[String], spec: &str) -> (String, FileLines, Result<Vec<Placed>, Miss>) {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let file = FileLines::new(text.as_bytes());
    let h = hunk(spec.trim_end_matches('\n'));
    let placed = place(&file, std::slice::from_ref(&h));
    (text, file, placed)
}

/// The file's text with the placed hunks applied.
fn applied(text: &str, file: &FileLines, placed: &[Placed]) -> String {
    let bytes = crate::tools::matching::lines::apply(text.as_bytes(), &edits(file, placed))
        .expect("the placed hunks apply");
    String::from_utf8(bytes).expect("UTF-8 in, UTF-8 out")
}

fn slip(l: &str, s: [bool; 4]) -> String {
    let mut l = l.to_string();
    if s[0] {
        l = l.trim_end().to_string();
    }
    if s[1] {
        l = format!("  {}", l.trim_start());
    }
    if s[2] {
        l = l
            .replace(['\u{201c}', '\u{201d}'], "\"")
            .replace('\u{2013}', "-");
    }
    if s[3] {
        let ind = l.len() - l.trim_start().len();
        let words: Vec<&str> = l[ind..]
            .split([' ', '\t'])
            .filter(|w| !w.is_empty())
            .collect();
        l = format!("{}{}", &l[..ind], words.join(" "));
    }
    l
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn loose_hunks_land_where_they_came_from(
        lines in (2usize..9).prop_flat_map(|n| (0..n).map(|i| line(i).boxed()).collect::<Vec<_>>()),
        pick in (0usize..100, 0usize..3),
        s in any::<[bool; 4]>(),
    ) {
        let n = lines.len();
        let a = pick.0 % n;
        let b = (a + 1 + pick.1).min(n);
        // Context before, the first line removed and changed, the rest context.
        let mut spec = String::new();
        for (k, l) in lines[a..b].iter().enumerate() {
            let t = slip(l, s);
            if k == 0 {
                spec.push_str(&format!("-{t}\n+{t} // new\n"));
            } else {
                spec.push_str(&format!(" {t}\n"));
            }
        }
        let (text, file, placed) = placing(&lines, &spec);
        let placed = placed.map_err(|m| TestCaseError::fail(format!("{m:?}\n{text:?}\n{spec}")))?;
        prop_assert_eq!(placed[0].at, a);
        prop_assert_eq!(placed[0].fuzz == Fuzz::Exact, !s.iter().any(|&x| x) || lines[a..b].iter().all(|l| slip(l, s) == *l));
        let out = applied(&text, &file, &placed);
        let got: Vec<&str> = out.lines().collect();
        prop_assert_eq!(got.len(), n);
        for k in (0..n).filter(|&k| k != a) {
            prop_assert_eq!(got[k], lines[k].as_str());
        }
        // The changed line is the file's, with the change: none of
        // the slips made in copying it reach the file.
        // (Whitespace the model's line has before its change is
        // the model's.)
        let t = slip(&lines[a], s);
        let want = format!("{}{} // new", lines[a].trim_end(), &t[t.trim_end().len()..]);
        prop_assert_eq!(got[a], want.as_str());
    }

    /// Lines that repeat and look alike: an exact hunk wins over
    /// any tolerated place (several exact places are refused), and
    /// whatever is placed changes no line but the one it changes.
    #[test]
    fn exact_hunks_win_and_nothing_outside_changes(
        lines in prop::collection::vec((0usize..3).prop_flat_map(line), 2..9),
        pick in (0usize..100, 0usize..3),
        s in any::<[bool; 4]>(),
    ) {
        let n = lines.len();
        let a = pick.0 % n;
        let b = (a + 1 + pick.1).min(n);
        let old: Vec<String> = lines[a..b].iter().map(|l| slip(l, s)).collect();
        let mut spec = format!("-{}\n+{} // new\n", old[0], old[0]);
        for t in &old[1..] {
            spec.push_str(&format!(" {t}\n"));
        }
        let len = old.len();
        let exact = (0..=n - len).filter(|&i| lines[i..i + len] == old[..]).count();
        let (text, file, placed) = placing(&lines, &spec);
        match placed {
            Ok(placed) => {
                prop_assert!(exact <= 1, "{exact} exact places, yet placed");
                let at = placed[0].at;
                if exact == 1 {
                    prop_assert_eq!(placed[0].fuzz, Fuzz::Exact);
                    prop_assert!(placed[0].steps.is_empty());
                    prop_assert_eq!(&lines[at..at + len], &old[..]);
                }
                let out = applied(&text, &file, &placed);
        let got: Vec<&str> = out.lines().collect();
                prop_assert_eq!(got.len(), n);
                for k in (0..n).filter(|&k| k != at) {
                    prop_assert_eq!(got[k], lines[k].as_str());
                }
                prop_assert!(got[at].ends_with(" // new"), "{:?}", got[at]);
            }
            Err(Miss::Ambiguous { fuzz, .. }) => {
                prop_assert!(exact != 1, "one exact place, yet refused");
                if exact > 1 {
                    prop_assert_eq!(fuzz, Fuzz::Exact);
                }
            }
            Err(other) => prop_assert!(exact == 0, "{other:?} with an exact place"),
        }
    }

    /// The last two steps of the ladder: a hunk whose lines were
    /// double-encoded, or whose middle lines were left out behind
    /// `...`, lands where it was copied from and changes no other
    /// line; copied as it is, it takes neither step.
    #[test]
    fn escaped_or_elided_hunks_land_where_they_came_from(
        lines in (3usize..10).prop_flat_map(|n| (0..n).map(|i| {
            (prop::sample::select(vec!["", "\t", "    "]), prop::sample::select(vec!["a", "b c", "x\ty"]))
                .prop_map(move |(ind, w)| format!("{ind}call{i}(\"{w}\");"))
                .boxed()
        }).collect::<Vec<_>>()),
        pick in (0usize..100, 0usize..100),
        escape in any::<bool>(),
        elide in any::<bool>(),
    ) {
        let n = lines.len();
        let a = pick.0 % (n - 1);
        let b = a + 1 + pick.1 % (n - a - 1);
        let elided = elide && b > a + 1;
        let enc = |l: &str| {
            if escape {
                l.replace('\t', "\\t").replace('"', "\\\"")
            } else {
                l.to_string()
            }
        };
        let mut spec = format!("-{}\n+{}\n", enc(&lines[a]), enc(&format!("{} // new", lines[a])));
        if elided {
            spec.push_str(" ...\n");
            spec.push_str(&format!(" {}\n", enc(&lines[b])));
        } else {
            for l in &lines[a + 1..=b] {
                spec.push_str(&format!(" {}\n", enc(l)));
            }
        }
        let (text, file, placed) = placing(&lines, &spec);
        let placed = placed.map_err(|m| TestCaseError::fail(format!("{m:?}\n{text:?}\n{spec}")))?;
        prop_assert_eq!(placed[0].at, a);
        for p in &placed {
            prop_assert_eq!(p.steps.contains(&Step::Escapes), escape);
            prop_assert_eq!(p.steps.contains(&Step::Elision), elided);
            prop_assert_eq!(p.fuzz, Fuzz::Exact);
        }
        let out = applied(&text, &file, &placed);
        let got: Vec<&str> = out.lines().collect();
        prop_assert_eq!(got.len(), n);
        for k in (0..n).filter(|&k| k != a) {
            prop_assert_eq!(got[k], lines[k].as_str());
        }
        prop_assert_eq!(got[a].to_string(), format!("{} // new", lines[a]));
    }
}
