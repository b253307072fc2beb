//! Property tests of sketch placement: for random files (from a small
//! alphabet, so that lines repeat and places compete) and sketches cut from
//! them, a sketch placed mechanically only ever changes the stretch between
//! copies of its own anchors, and lands where it was cut from when its
//! anchors are unique.

use proptest::prelude::*;

use super::place;

/// File lines: repeats, indentation variants and block openers, no blank
/// lines (blank lines at a segment's edge are dropped, which would blur
/// which lines are anchors).
const ALPHABET: [&str; 10] = [
    "a",
    "b",
    "c",
    "  x",
    "x",
    "}",
    "def f():",
    "    return 1",
    "    y = 2",
    "end",
];

/// New lines: never in the file (`    return 10` looks like a changed
/// `    return 1`, so that new bodies are placed too).
const NEW: [&str; 5] = [
    "NEW one",
    "NEW two",
    "    NEW deeper",
    "  NEW half",
    "    return 10",
];

fn lines(s: &[&str]) -> String {
    s.iter().map(|l| format!("{l}\n")).collect()
}

fn applied(file: &[&str], sketch: &str) -> Option<Vec<String>> {
    let content = lines(file);
    let p = place(content.as_bytes(), sketch).ok()?;
    let out = crate::tools::matching::lines::apply(content.as_bytes(), &p.edits).ok()?;
    Some(
        String::from_utf8_lossy(&out)
            .lines()
            .map(str::to_string)
            .collect(),
    )
}

/// `file[..a] + new + file[b..]`.
fn spliced(file: &[&str], a: usize, new: &[&str], b: usize) -> Vec<String> {
    file[..a]
        .iter()
        .chain(new)
        .chain(&file[b..])
        .map(|l| l.to_string())
        .collect()
}

/// Whether `got` is the file with some stretch replaced by the middle of
/// `seg`, between a copy of its first `k >= 1` lines just before and a
/// copy of its last `l >= 1` lines just after: any reading of the segment
/// as anchors and new lines, but nothing changed outside the anchors.
fn flanked(file: &[&str], seg: &[&str], got: &[String]) -> bool {
    let (n, m) = (file.len(), seg.len());
    (1..m).any(|k| {
        (1..=m - k).any(|l| {
            (k..=n).any(|a| {
                file[a - k..a] == seg[..k]
                    && (a..=n - l.min(n)).any(|b| {
                        b + l <= n
                            && file[b..b + l] == seg[m - l..]
                            && got == spliced(file, a, &seg[k..m - l], b)
                    })
            })
        })
    }) || got.iter().map(String::as_str).eq(file.iter().copied())
}

fn indent_width(l: &str) -> usize {
    l.len() - l.trim_start().len()
}

fn arbitrary_file() -> impl Strategy<Value = Vec<&'static str>> {
    prop::collection::vec(prop::sample::select(&ALPHABET[..]), 4..24)
}

fn arbitrary_new() -> impl Strategy<Value = Vec<&'static str>> {
    prop::collection::vec(prop::sample::select(&NEW[..]), 0..3)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Anchored on both ends, with markers around: the result is the file
    /// with a stretch replaced between a copy of the segment's first lines
    /// and a copy of its last lines, nothing else changed; and where its
    /// first and last lines are each unique in the file, exactly where it
    /// was cut from.
    #[test]
    fn two_anchors_change_only_what_lies_between(
        file in arbitrary_file(),
        new in arbitrary_new(),
        h in 1usize..3,
        t in 1usize..3,
        pick_a: usize,
        pick_b: usize,
    ) {
        let n = file.len();
        prop_assume!(n >= h + t);
        let i = h + pick_a % (n - t - h + 1);
        let j = i + pick_b % (n - t - i + 1);
        let head = &file[i - h..i];
        let tail = &file[j..j + t];
        let mut sketch = vec!["// ... existing code ..."];
        sketch.extend(head);
        sketch.extend(&new);
        sketch.extend(tail);
        sketch.push("// ... existing code ...");
        let Some(got) = applied(&file, &lines(&sketch)) else {
            return Ok(());
        };
        prop_assert!(
            flanked(&file, &sketch[1..sketch.len() - 1], &got),
            "placed outside its anchors:\nfile {file:?}\nsketch {sketch:?}\ngot {got:?}"
        );
        let once = |l: &str| file.iter().filter(|f| **f == l).count() == 1;
        if once(head[0]) && once(tail[t - 1]) {
            prop_assert_eq!(got, spliced(&file, i, &new, j));
        }
    }

    /// Anchored above only, a marker after: the new lines are inserted
    /// right after a copy of the head, or replace lines all indented deeper
    /// than a head line (the body of the block it opens); nothing else.
    #[test]
    fn one_anchor_inserts_or_replaces_only_a_body(
        file in arbitrary_file(),
        new in prop::collection::vec(prop::sample::select(&NEW[..]), 1..3),
        h in 1usize..3,
        pick: usize,
        marker_indent in prop::sample::select(&["", "    "][..]),
    ) {
        let n = file.len();
        prop_assume!(n > h);
        let i = h + pick % (n - h);
        let head = &file[i - h..i];
        let marker = format!("{marker_indent}# ... existing code ...");
        let mut sketch: Vec<&str> = vec!["# ... existing code ..."];
        sketch.extend(head);
        sketch.extend(&new);
        sketch.push(&marker);
        let Some(got) = applied(&file, &lines(&sketch)) else {
            return Ok(());
        };
        let shallowest = head.iter().map(|l| indent_width(l)).min().unwrap_or(0);
        let valid = (h..=n).any(|a| {
            file[a - h..a] == *head
                && (a..=n).any(|b| {
                    file[a..b].iter().all(|l| indent_width(l) > shallowest)
                        && got == spliced(&file, a, &new, b)
                })
        });
        prop_assert!(valid, "changed more than a body:\nfile {file:?}\nsketch {sketch:?}\ngot {got:?}");
    }

    /// A new body after an opener, the marker outside the block: it
    /// replaces the whole body of one copy of the opener (every line up to
    /// the next one indented like the opener), or is inserted right after
    /// it, or is refused; it never reaches past the block.
    #[test]
    fn a_new_body_replaces_one_whole_body(
        blocks in prop::collection::vec(
            (
                prop::sample::select(&["def f():", "def g():", "x = 1"][..]),
                prop::collection::vec(
                    prop::sample::select(&["    return 1", "    y = 2", "        z", ""][..]),
                    0..4,
                ),
            ),
            1..6,
        ),
        opener in prop::sample::select(&["def f():", "def g():"][..]),
    ) {
        let file: Vec<&str> = blocks
            .iter()
            .flat_map(|(head, body)| std::iter::once(*head).chain(body.iter().copied()))
            .collect();
        let n = file.len();
        let sketch = [
            "# ... existing code ...",
            opener,
            "    return 10",
            "# ... existing code ...",
        ];
        let Some(got) = applied(&file, &lines(&sketch)) else {
            return Ok(());
        };
        let valid = (1..=n).any(|a| {
            file[a - 1] == opener
                && (a..=n).any(|b| {
                    let body = file[a..b].iter().all(|l| l.trim().is_empty() || l.starts_with(' '));
                    let whole = b == n || !file[b].starts_with(' ') || b == a;
                    body && whole && got == spliced(&file, a, &["    return 10"], b)
                })
        });
        prop_assert!(valid, "not one whole body:\nfile {file:?}\nsketch {sketch:?}\ngot {got:?}");
    }
}
