//! An `old_string` whose escapes the model's JSON turned into the
//! characters they stand for. A file's `printf("done\n")` holds a
//! backslash and an `n`; to quote it in a JSON string a model must write
//! `\\n`, and a weak one writes `\n`, which JSON reads as a line break
//! (`\t` as a tab likewise). Such an `old_string` is nowhere in the file as
//! sent. It is matched here with each of its line breaks and tabs standing
//! for either itself or its escape, whichever the file has at that place,
//! and `new_string`'s are written as escapes where the text around them
//! says `old_string`'s were (the whole-file counterpart is
//! `tools::lost_escapes`).

use std::collections::HashMap;

use memchr::memmem;

/// Bytes of `old_string` compared with the file at most, over all the
/// places its start is found.
const WALKED_AT_MOST: usize = 64 << 20;

/// The escape a character stands for in a file's text.
fn escape_of(c: u8) -> &'static [u8] {
    match c {
        b'\n' => b"\\n",
        _ => b"\\t",
    }
}

/// The text of the file that `old` stands for, read with its escapes
/// lost, and `new` with escapes written where `old`'s were: `None` unless
/// `old` has a line break or tab whose escape the file holds, and reads as
/// one text of the file using at least one escape (the caller matches
/// that text, so it must be unique there too).
pub(super) fn restored(content: &[u8], old: &str, new: &str) -> Option<(String, String)> {
    let lost: Vec<u8> = [b'\n', b'\t']
        .into_iter()
        .filter(|&c| old.as_bytes().contains(&c) && memmem::find(content, escape_of(c)).is_some())
        .collect();
    if lost.is_empty() {
        return None;
    }
    let old_b = old.as_bytes();
    // The text before the first such character places the match; an
    // `old_string` that starts with one has its edges trimmed by the
    // ladder's own step first.
    let first = old_b.iter().position(|c| lost.contains(c))?;
    if old_b[..first].trim_ascii().is_empty() {
        return None;
    }
    let mut found: Option<(&[u8], Vec<bool>)> = None;
    // A short prefix found at many places, each walked a long way (a
    // file of one repeated line): past this many bytes walked, the step
    // gives up rather than take quadratic time.
    let mut budget = WALKED_AT_MOST;
    for start in memmem::find_iter(content, &old_b[..first]) {
        budget = budget.checked_sub(old_b.len())?;
        let Some((end, escaped)) = walk(content, start, old_b, &lost) else {
            continue;
        };
        if !escaped.contains(&true) {
            continue;
        }
        let text = &content[start..end];
        match &found {
            None => found = Some((text, escaped)),
            Some((t, _)) if *t == text => {}
            // Two different texts: which one was meant is not known.
            Some(_) => return None,
        }
    }
    let (text, escaped) = found?;
    let text = std::str::from_utf8(text).ok()?.to_string();
    Some((text, escaped_like(old, &escaped, new, &lost)))
}

/// Matches `old` at `start` in `content`, each of its `lost` characters
/// standing for itself or its escape: the end of the match and, for each
/// such character in order, whether it was an escape.
fn walk(content: &[u8], start: usize, old: &[u8], lost: &[u8]) -> Option<(usize, Vec<bool>)> {
    let mut at = start;
    let mut escaped = Vec::new();
    for &c in old {
        if content.get(at) == Some(&c) {
            at += 1;
            if lost.contains(&c) {
                escaped.push(false);
            }
        } else if lost.contains(&c) && content[at..].starts_with(escape_of(c)) {
            at += 2;
            escaped.push(true);
        } else {
            return None;
        }
    }
    Some((at, escaped))
}

/// `new` with its line breaks and tabs written as escapes where the text
/// beside them is text that, in `old`, stood beside an escape (and never
/// beside the character itself): a line the model changed on one side of
/// a lost `\n` is still known by its other side.
fn escaped_like(old: &str, escaped: &[bool], new: &str, lost: &[u8]) -> String {
    let is_lost = |c: char| c.is_ascii() && lost.contains(&(c as u8));
    // What stood before and after each such character of `old`, and
    // whether that was an escape each time (None: both, so no evidence).
    let mut before: HashMap<(&str, char), Option<bool>> = HashMap::new();
    let mut after: HashMap<(&str, char), Option<bool>> = HashMap::new();
    let parts: Vec<&str> = old.split(is_lost).collect();
    let seps: Vec<char> = old.chars().filter(|&c| is_lost(c)).collect();
    for (i, (&c, &e)) in seps.iter().zip(escaped).enumerate() {
        note(&mut before, parts[i], c, e);
        note(&mut after, parts[i + 1], c, e);
    }
    let nparts: Vec<&str> = new.split(is_lost).collect();
    let nseps: Vec<char> = new.chars().filter(|&c| is_lost(c)).collect();
    let mut out = String::with_capacity(new.len() + nseps.len());
    for (i, part) in nparts.iter().enumerate() {
        out.push_str(part);
        let Some(&c) = nseps.get(i) else { break };
        let said = [
            before.get(&(part, c)).copied().flatten(),
            after.get(&(nparts[i + 1], c)).copied().flatten(),
        ];
        if said.contains(&Some(true)) && !said.contains(&Some(false)) {
            out.push_str(if c == '\n' { "\\n" } else { "\\t" });
        } else {
            out.push(c);
        }
    }
    out
}

/// Notes that `part` stood beside a `c` that was an escape (`e`) or not;
/// both, and it says nothing.
fn note<'a>(map: &mut HashMap<(&'a str, char), Option<bool>>, part: &'a str, c: char, e: bool) {
    if part_counts(part) {
        map.entry((part, c))
            .and_modify(|v| {
                if *v != Some(e) {
                    *v = None;
                }
            })
            .or_insert(Some(e));
    }
}

/// Whether a part of a text says something of what stood beside it: not
/// one of blanks alone, which stand beside anything.
fn part_counts(part: &str) -> bool {
    !part.trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_break_sent_for_a_files_escape_is_matched_and_new_string_follows() {
        let file = b"int main() {\n    printf(\"done\\n\");\n    return 0;\n}\n";
        // The model's JSON had `\n` where it needed `\\n`, in both strings,
        // and it changed the line with the escape.
        let old = "    printf(\"done\n\");\n    return 0;";
        let new = "    printf(\"finished\n\");\n    return 1;";
        let (o, n) = restored(file, old, new).unwrap();
        assert_eq!(o, "    printf(\"done\\n\");\n    return 0;");
        assert_eq!(n, "    printf(\"finished\\n\");\n    return 1;");
    }

    #[test]
    fn a_file_of_one_line_repeated_is_not_walked_without_end() {
        // 2.8 MB of `ab\n`: the prefix `a` is at 700,000 places, each
        // walked 150,000 bytes without the budget.
        let file = "ab\\n".repeat(700_000).into_bytes();
        let old = format!("{}x", "ab\n".repeat(50_000));
        assert_eq!(restored(&file, &old, "y"), None);
    }

    #[test]
    fn a_tab_sent_for_a_files_escape_is_matched_too() {
        let file = b"print(\"a\\tb\")\n";
        let (o, n) = restored(file, "print(\"a\tb\")", "print(\"a\tc\")").unwrap();
        assert_eq!(o, "print(\"a\\tb\")");
        assert_eq!(n, "print(\"a\\tc\")");
    }

    #[test]
    fn nothing_is_restored_where_the_file_has_no_escape_or_two_readings() {
        // No escape in the file: the line breaks are the file's own.
        assert_eq!(restored(b"a\nb\n", "a\nb", "a\nc"), None);
        // The escape read would be the file's own text anyway: nothing
        // lost.
        assert_eq!(restored(b"x = \"\\n\"\na\nb\n", "a\nb", "a\nc"), None);
        // Two different texts of the file read the same once escapes are
        // lost: which was meant is not known.
        let file = b"say(\"a\\nb\nc\")\nsay(\"a\nb\\nc\")\n";
        assert_eq!(restored(file, "say(\"a\nb\nc\")", "say(\"d\")"), None);
    }

    #[test]
    fn each_line_break_of_new_string_follows_the_text_beside_it() {
        // `");` followed a lost escape once and a real line break once.
        let file = b"f(\"x\\n\");\ng(\"y\");\n";
        let (o, n) = restored(file, "f(\"x\n\");\ng(\"y\");", "f(\"z\n\");\ng(\"y\");").unwrap();
        assert_eq!(o, "f(\"x\\n\");\ng(\"y\");");
        // The first break: after `");` stood an escape; before it `f("z`
        // is new. The second: `");` stood before a real break.
        assert_eq!(n, "f(\"z\\n\");\ng(\"y\");");
    }
}
