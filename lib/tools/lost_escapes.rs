//! Escapes a model's JSON turned into the characters they stand for.
//!
//! A file's `printf("done\n")` holds a backslash and an `n`. To send that
//! line back in a JSON string, a model must write `\\n`; a weak one writes
//! `\n`, which JSON reads as a line break, and the file would get
//! `printf("done` and `")` on two lines (or a real tab for `\t`, a carriage
//! return for `\r`). When a whole file is written again, most of its lines
//! are the old ones: a line of the new text that is not a line of the old
//! file, but becomes one when such characters are written back as escapes,
//! is that line with its escapes lost, and is written as the file held it.
//! Only whole old lines are restored, so a change the model made on
//! purpose is never undone.

use std::collections::HashSet;

/// How many lines one lost `\n` run may have been split into.
const MOST_PARTS: usize = 8;

/// `new` with the escapes restored that `old`'s lines held and `new` has as
/// the characters they stand for, and the 1-based numbers (in the text
/// returned) of the lines restored; `None` when there is none.
pub fn restored(old: &str, new: &str) -> Option<(String, Vec<usize>)> {
    // Only a file that holds such an escape can have lost one.
    if !holds_escape(old) {
        return None;
    }
    let held: HashSet<&str> = old.split('\n').map(without_cr).collect();
    let lines: Vec<&str> = new.split('\n').collect();
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut fixed = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = without_cr(lines[i]);
        if held.contains(line) {
            out.push(lines[i].to_string());
            i += 1;
            continue;
        }
        if let Some(found) = (1..=MOST_PARTS.min(lines.len() - i)).find_map(|k| {
            let parts: Vec<&str> = lines[i..i + k].iter().map(|l| without_cr(l)).collect();
            let joined = escaped(&parts.join("\\n"));
            // One part alone must have lost a tab or carriage return to
            // count; several parts lost the line breaks between them.
            (k > 1 || joined != line)
                .then_some(joined)
                .filter(|j| held.contains(j.as_str()))
                .map(|j| (k, j))
        }) {
            let (k, joined) = found;
            // The last part's own line ending (a CRLF file's) is kept.
            let ending = if lines[i + k - 1].ends_with('\r') {
                "\r"
            } else {
                ""
            };
            out.push(format!("{joined}{ending}"));
            fixed.push(out.len());
            i += k;
            continue;
        }
        out.push(lines[i].to_string());
        i += 1;
    }
    (!fixed.is_empty()).then(|| (out.join("\n"), fixed))
}

/// Whether `text` holds a backslash escape of a line break, tab, carriage
/// return, backspace or form feed.
fn holds_escape(text: &str) -> bool {
    memchr::memchr_iter(b'\\', text.as_bytes()).any(|at| {
        matches!(
            text.as_bytes().get(at + 1),
            Some(b'n' | b't' | b'r' | b'b' | b'f')
        )
    })
}

/// A line without the carriage return of a CRLF ending.
fn without_cr(line: &str) -> &str {
    line.strip_suffix('\r').unwrap_or(line)
}

/// `s` with a tab, carriage return, backspace or form feed written as its
/// escape.
fn escaped(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_break_that_was_an_escape_is_written_as_the_file_held_it() {
        let old = "int main() {\n    printf(\"done\\n\");\n    return 0;\n}\n";
        // The model's JSON had `\n` where it needed `\\n`.
        let new = "int main() {\n    printf(\"done\n\");\n    return 1;\n}\n";
        let (text, lines) = restored(old, new).unwrap();
        assert_eq!(
            text,
            "int main() {\n    printf(\"done\\n\");\n    return 1;\n}\n"
        );
        assert_eq!(lines, vec![2]);
    }

    #[test]
    fn tabs_and_carriage_returns_that_were_escapes_are_restored() {
        let old = "process.stdout.write(`\\r${t} `);\nconst row = a + \"\\t\" + b;\n";
        let new = "process.stdout.write(`\r${t} `);\nconst row = a + \"\t\" + b;\n";
        let (text, lines) = restored(old, new).unwrap();
        assert_eq!(text, old);
        assert_eq!(lines, vec![1, 2]);
    }

    #[test]
    fn several_lost_line_breaks_in_one_line_are_joined() {
        let old = "msg = \"a\\nb\\nc\"\nprint(msg)\n";
        let new = "msg = \"a\nb\nc\"\nprint(msg)\n";
        assert_eq!(restored(old, new).unwrap(), (old.to_string(), vec![1]));
    }

    #[test]
    fn a_change_made_on_purpose_is_kept() {
        // The model changed the message: its line is no old line, whatever
        // its escapes, so it is written as sent.
        let old = "print(\"hi\\n\")\n";
        let new = "print(\"hello\n\")\n";
        assert_eq!(restored(old, new), None);
        // A real tab in a Makefile recipe, where the file had one too.
        let old = "all:\n\techo \"a\\tb\"\n";
        let new = "all:\n\techo \"a\\tb\"\n\techo c\n";
        assert_eq!(restored(old, new), None);
        // A file with no escapes is never looked at.
        assert_eq!(restored("a\tb\n", "a\tb\nc\td\n"), None);
    }

    #[test]
    fn crlf_lines_keep_their_endings() {
        let old = "echo \"a\\tb\"\r\nexit\r\n";
        let new = "echo \"a\tb\"\r\nexit\r\n";
        assert_eq!(restored(old, new).unwrap(), (old.to_string(), vec![1]));
    }
}
