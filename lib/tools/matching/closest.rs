//! Explaining a miss: when `old_string` is not in the file, find the
//! stretch of the file it was most likely meant to be, show it with line
//! numbers, and show where the two differ with whitespace made visible, so
//! that the model can correct its call in one try.

use std::collections::HashMap;

use similar::{Algorithm, DiffTag, capture_diff_slices};

use super::text::visible;

/// Lines of the file shown at most.
const MAX_SHOWN: usize = 30;
/// Lines scanned for a fuzzy match when no line matches even trimmed.
const MAX_FUZZY_LINES: usize = 200_000;
/// How alike two lines must be (0 to 1) for a fuzzy match.
const FUZZY_MIN: f64 = 0.5;
/// Differing lines shown at most.
const MAX_DIFF_LINES: usize = 40;

/// The explanation to add to a "not found" message: the closest stretch
/// and how it differs, or a note that nothing resembles `old`.
pub fn explain(content: &[u8], old: &str) -> String {
    explain_as(content, old, "old_string")
}

/// [`explain`], naming the searched text `what` (`old_string`, "the
/// hunk's lines") in the message.
pub fn explain_as(content: &[u8], old: &str, what: &str) -> String {
    let text = String::from_utf8_lossy(content);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let file: Vec<&str> = text.split('\n').collect();
    // A final newline leaves an empty last piece that is no line.
    let file = match file.split_last() {
        Some((&"", rest)) => rest,
        _ => &file[..],
    };
    let old_lines: Vec<&str> = old
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let old_lines = match old_lines.split_last() {
        Some((last, rest)) if last.is_empty() && !rest.is_empty() => rest.to_vec(),
        _ => old_lines,
    };
    let Some(start) = best_window(file, &old_lines) else {
        return format!(
            "No line of {what} occurs in the file, even ignoring whitespace: \
check that this is the right file, and read it again before editing."
        );
    };
    let k = old_lines.len().min(file.len() - start);
    let window: Vec<&str> = file[start..start + k]
        .iter()
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let equal = window
        .iter()
        .zip(&old_lines)
        .filter(|(a, b)| a == b)
        .count();
    let mut out = String::new();
    let (first, last) = (start + 1, start + k);
    let span = if first == last {
        format!("line {first}")
    } else {
        format!("lines {first}-{last}")
    };
    if old_lines.len() == 1 {
        out.push_str(&format!("The closest line in the file is {span}:\n"));
    } else {
        out.push_str(&format!(
            "The closest text in the file is at {span} ({equal} of {} lines identical):\n",
            old_lines.len()
        ));
    }
    let width = 6.max(last.to_string().len());
    for (i, line) in window.iter().take(MAX_SHOWN).enumerate() {
        out.push_str(&format!("{:>width$}\t{line}\n", first + i));
    }
    if window.len() > MAX_SHOWN {
        out.push_str(&format!("{:>width$}\t...\n", ""));
    }
    if equal == old_lines.len() && k == old_lines.len() {
        // Only a search that starts past it misses text that is there.
        out.push_str(&format!(
            "That is {what} exactly as written, but it was not looked for there: a hunk, or a part of one, is looked for only after the one before it. Check their order.\n"
        ));
        return out;
    }
    let differing: Vec<(&[&str], &[&str])> =
        capture_diff_slices(Algorithm::Myers, &old_lines, &window)
            .into_iter()
            .map(|op| op.as_tag_tuple())
            .filter(|(tag, _, _)| *tag != DiffTag::Equal)
            .map(|(_, o, n)| (&old_lines[o], &window[n]))
            .collect();
    let whitespace_only = differing
        .iter()
        .all(|(removed, added)| squash(&removed.concat()) == squash(&added.concat()));
    // Markers only where the whitespace is the difference: a weak model
    // copies a `+` line into new_string, markers and all.
    let show: fn(&str) -> String = match whitespace_only {
        true => {
            out.push_str(&format!(
                "Where they differ (- {what}, + the file; · is a space, → a tab, ␍ a carriage return):\n"
            ));
            visible
        }
        false => {
            out.push_str(&format!("Where they differ (- {what}, + the file):\n"));
            str::to_string
        }
    };
    let mut shown = 0;
    for (removed, added) in differing {
        for (sign, lines) in [('-', removed), ('+', added)] {
            for l in lines {
                if shown < MAX_DIFF_LINES {
                    out.push(sign);
                    out.push_str(&show(l));
                    out.push('\n');
                }
                shown += 1;
            }
        }
    }
    if shown > MAX_DIFF_LINES {
        out.push_str(&format!(
            "... ({} more differing lines)\n",
            shown - MAX_DIFF_LINES
        ));
    }
    if whitespace_only {
        out.push_str("They differ only in whitespace.\n");
    }
    out
}

/// The first line of the stretch of `file` that looks most like `old`:
/// each line of `old` found in the file (ignoring surrounding whitespace)
/// votes for where the stretch would start, weighted by its length; when
/// none is found, the line most like the longest line of `old` decides.
fn best_window(file: &[&str], old: &[&str]) -> Option<usize> {
    let mut wanted: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, l) in old.iter().enumerate() {
        let t = l.trim();
        if !t.is_empty() {
            wanted.entry(t).or_default().push(i);
        }
    }
    let mut votes: HashMap<usize, usize> = HashMap::new();
    for (j, line) in file.iter().enumerate() {
        if let Some(idx) = wanted.get(line.trim()) {
            for &i in idx {
                let start = j.saturating_sub(i);
                *votes.entry(start).or_default() += line.trim().len() + 1;
            }
        }
    }
    if let Some((&start, _)) = votes.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))) {
        return Some(start);
    }
    // Nothing equal: the line most like the longest line of old_string.
    let (i, longest) = old
        .iter()
        .enumerate()
        .max_by_key(|(_, l)| l.trim().len())
        .map(|(i, l)| (i, l.trim()))?;
    if longest.is_empty() {
        return None;
    }
    let want = bigrams(longest);
    let words = longest.split_whitespace().count();
    let mut best: Option<(f64, usize)> = None;
    for (j, line) in file.iter().enumerate().take(MAX_FUZZY_LINES) {
        let score = dice(&want, &bigrams(line.trim())).max(part_score(line, words, &want));
        if score >= FUZZY_MIN && best.is_none_or(|(s, _)| score > s) {
            best = Some((score, j));
        }
    }
    best.map(|(_, j)| j.saturating_sub(i))
}

/// How alike the most alike run of `words` words of `line` is to the
/// searched text (its bigrams `want`): a misspelt word (`receive` for a
/// file's `recieve`) is found in a line much longer than itself. Only for
/// short searches, which a whole line's score drowns.
fn part_score(line: &str, words: usize, want: &[(char, char)]) -> f64 {
    if words == 0 || words > 8 {
        return 0.0;
    }
    let all: Vec<&str> = line.split_whitespace().collect();
    all.windows(words.min(all.len()).max(1))
        .map(|w| dice(want, &bigrams(&w.join(" "))))
        .fold(0.0, f64::max)
}

fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// How alike two lines are, from 0 to 1 (Sørensen–Dice over character
/// pairs, surrounding whitespace ignored).
pub fn similarity(a: &str, b: &str) -> f64 {
    dice(&bigrams(a.trim()), &bigrams(b.trim()))
}

fn bigrams(s: &str) -> Vec<(char, char)> {
    let chars: Vec<char> = s.chars().collect();
    let mut v: Vec<(char, char)> = chars.windows(2).map(|w| (w[0], w[1])).collect();
    v.sort_unstable();
    v
}

/// Sørensen–Dice similarity of two sorted bigram lists.
fn dice(a: &[(char, char)], b: &[(char, char)]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    2.0 * common as f64 / (a.len() + b.len()) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_the_stretch_and_the_difference() {
        let file = "fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n";
        let msg = explain(
            file.as_bytes(),
            "fn main() {\n    let x = 2;\n    println!(\"{x}\");",
        );
        assert!(msg.contains("lines 1-3 (2 of 3 lines identical)"), "{msg}");
        assert!(msg.contains("     2\t    let x = 1;"), "{msg}");
        // Not a whitespace difference: the lines as they are.
        assert!(msg.contains("-    let x = 2;\n+    let x = 1;"), "{msg}");
        assert!(!msg.contains('·'), "{msg}");
        assert!(!msg.contains("only in whitespace"), "{msg}");
    }

    #[test]
    fn text_that_is_there_is_not_called_different() {
        let e = explain_as(b"a\nb\nc\n", "b", "the hunk");
        assert!(e.contains("That is the hunk exactly"), "{e}");
        assert!(!e.contains("differ"), "{e}");
    }

    #[test]
    fn whitespace_only_differences_are_named() {
        let file = "a\n\tb();\nc\n";
        let msg = explain(file.as_bytes(), "a\n    b();\nc");
        assert!(msg.contains("+→b();"), "{msg}");
        assert!(msg.contains("only in whitespace"), "{msg}");
    }

    #[test]
    fn fuzzy_when_no_line_is_equal() {
        let file = "alpha\nlet total_count = compute(items);\nomega\n";
        let msg = explain(file.as_bytes(), "let total_count = compute(item);");
        assert!(msg.contains("is line 2:"), "{msg}");
        let msg = explain(file.as_bytes(), "zzz qqq");
        assert!(msg.starts_with("No line of old_string"), "{msg}");
    }
}
