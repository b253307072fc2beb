//! A line break inside a quoted string of a failed command. A model that
//! writes `printf \"%d\n\"` in its call's JSON sends a real line break
//! there (JSON's `\n`), and awk, printf or a one-line script then fails on
//! a string cut in two (awk: "runaway string constant"); a small model
//! sent the same such command five times. The note names the line and how
//! to send the two characters instead.

/// The most of the line that the note quotes.
const MAX_QUOTED: usize = 80;

/// The note for `command`, which exited with `code`: `None` unless it
/// failed and a line of it ends inside a double-quoted string (the shell's
/// or, inside single quotes, the program's own).
pub fn note(command: &str, code: i32) -> Option<String> {
    if code == 0 {
        return None;
    }
    let mut quoted = false;
    let mut escaped = false;
    let mut line_start = 0;
    let mut line_no = 1;
    for (i, c) in command.char_indices() {
        match c {
            '\\' if !escaped => {
                escaped = true;
                continue;
            }
            '"' if !escaped => quoted = !quoted,
            '\n' if quoted => {
                let line = command[line_start..i].trim();
                let shown: String = line.chars().take(MAX_QUOTED).collect();
                let cut = if shown.len() < line.len() { " ..." } else { "" };
                return Some(format!(
                    "Line {line_no} of the command ends inside a quoted string (`{shown}{cut}`): a `\\n` in the call's JSON is a real line break there, not the two characters. If the program should get a backslash and an n (awk, printf, a one-line script), write `\\\\n` in the JSON."
                ));
            }
            '\n' => {
                line_start = i + 1;
                line_no += 1;
            }
            _ => {}
        }
        escaped = false;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_command_with_a_line_break_in_a_string_is_told_how_to_send_backslash_n() {
        let awk =
            "awk 'NR > 1 { total += $3 } END { printf \"total: %.2f\n\", total }' expenses.csv";
        assert_eq!(
            note(awk, 2).unwrap(),
            "Line 1 of the command ends inside a quoted string (`awk 'NR > 1 { total += $3 } END { printf \"total: %.2f`): a `\\n` in the call's JSON is a real line break there, not the two characters. If the program should get a backslash and an n (awk, printf, a one-line script), write `\\\\n` in the JSON."
        );
        // It worked: nothing to say.
        assert!(note(awk, 0).is_none());
        // Lines that end outside any string, and escaped quotes.
        assert!(note("cd src\nmake \"all\"", 2).is_none());
        assert!(note("echo \"a \\\" b\"\nfalse", 1).is_none());
        let second = note("cd src\nprintf \"x\ny\"", 1).unwrap();
        assert!(
            second.starts_with("Line 2 of the command ends inside a quoted string (`printf \"x`)"),
            "{second}"
        );
    }
}
