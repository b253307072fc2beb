//! Line-range edits (seed 001): replace lines `start_line..=end_line` with
//! new text, delete them, or insert before a line. All ranges refer to the
//! file as it was read; they are applied bottom-up so that earlier line
//! numbers stay valid, and overlapping ranges are refused. The file's BOM,
//! line endings and final newline (or its absence) are kept.

use schemars::JsonSchema;
use serde::Deserialize;

use super::text::{LF, bom_len, eol_near};

/// One line-range edit.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LineEdit {
    /// First line to replace (1-indexed, as `read` numbers them).
    #[schemars(range(min = 1))]
    #[schemars(description = "")]
    pub start_line: u64,
    /// Last line to replace (inclusive). Use `start_line - 1` to insert before `start_line` without replacing anything (so `start_line` = last line + 1 appends at the end).
    #[schemars(description = "")]
    pub end_line: u64,
    /// The new text for those lines; an empty string deletes them. Its line endings are made to match the file's.
    #[schemars(description = "")]
    pub replacement: String,
}

impl LineEdit {
    fn is_insert(&self) -> bool {
        self.end_line + 1 == self.start_line
    }

    /// "lines 3-5", "line 3", "before line 3".
    pub fn describe(&self) -> String {
        if self.is_insert() {
            format!("before line {}", self.start_line)
        } else if self.start_line == self.end_line {
            format!("line {}", self.start_line)
        } else {
            format!("lines {}-{}", self.start_line, self.end_line)
        }
    }
}

/// Applies line edits to `content`. The error is a message for the model.
pub fn apply(content: &[u8], edits: &[LineEdit]) -> Result<Vec<u8>, String> {
    let bom = bom_len(content);
    // starts[i] is where line i+1 starts; starts[total] is the end of the file.
    let mut starts = vec![bom];
    starts.extend(
        memchr::memchr_iter(b'\n', &content[bom..])
            .map(|i| bom + i + 1)
            .filter(|&s| s < content.len()),
    );
    let total = if content.len() == bom {
        0
    } else {
        starts.len() as u64
    };
    starts.push(content.len());
    let ends_with_newline = content.len() == bom || content.last() == Some(&b'\n');

    for (i, e) in edits.iter().enumerate() {
        validate(e, i, edits.len(), total)?;
    }
    let mut order: Vec<&LineEdit> = edits.iter().collect();
    order.sort_by_key(|e| (e.start_line, e.end_line));
    for pair in order.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if a.is_insert() && b.is_insert() && a.start_line == b.start_line {
            return Err(format!(
                "two line edits insert before line {}; put both texts in one edit.",
                a.start_line
            ));
        }
        if !a.is_insert() && b.start_line <= a.end_line {
            return Err(format!(
                "line edits overlap: {} and {}. Give each line to at most one edit, or merge them into one edit.",
                a.describe(),
                b.describe()
            ));
        }
    }

    let line_start = |n: u64| starts[(n - 1) as usize];
    let mut out = Vec::with_capacity(
        content.len() + edits.iter().map(|e| e.replacement.len() + 2).sum::<usize>(),
    );
    let mut cursor = 0usize;
    // Applying in ascending order against the original is the same as
    // applying bottom-up: no edit sees another's line numbers shift.
    for e in order {
        let mut start = line_start(e.start_line);
        let end = if e.is_insert() {
            start
        } else {
            line_start(e.end_line + 1)
        };
        let eol = eol_near(content, start.min(content.len().saturating_sub(1)));
        let eol = if total == 0 { LF } else { eol };
        let body = body_lines(&e.replacement, eol);
        let at_end = end == content.len();
        let mut new = Vec::with_capacity(body.len() + 2);
        if e.is_insert() {
            if body.is_empty() && e.replacement.is_empty() {
                return Err(format!(
                    "the line edit {} inserts nothing; give the text to insert in `replacement`.",
                    e.describe()
                ));
            }
            if at_end && !ends_with_newline {
                // Appending to a file without a final newline: the newline
                // goes before the new lines, and the file still ends without one.
                new.extend_from_slice(eol);
                new.extend_from_slice(&body);
            } else {
                new.extend_from_slice(&body);
                new.extend_from_slice(eol);
            }
        } else if e.replacement.is_empty() {
            if at_end && !ends_with_newline && e.start_line > 1 {
                // Deleting the last lines: the new last line loses its newline,
                // as the old one had none.
                start -= if content[..start].ends_with(b"\r\n") {
                    2
                } else {
                    1
                };
            }
        } else {
            new.extend_from_slice(&body);
            if !at_end || ends_with_newline {
                new.extend_from_slice(eol);
            }
        }
        out.extend_from_slice(&content[cursor..start]);
        out.extend_from_slice(&new);
        cursor = end;
    }
    out.extend_from_slice(&content[cursor..]);
    Ok(out)
}

/// The replacement's lines joined with `eol`, without a final line ending
/// (one trailing newline in the replacement is taken as ending its last line).
fn body_lines(replacement: &str, eol: &[u8]) -> Vec<u8> {
    let text = replacement
        .strip_suffix("\r\n")
        .or_else(|| replacement.strip_suffix('\n'))
        .unwrap_or(replacement);
    let mut out = Vec::with_capacity(text.len() + 16);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.extend_from_slice(eol);
        }
        out.extend_from_slice(line.strip_suffix('\r').unwrap_or(line).as_bytes());
    }
    out
}

fn validate(e: &LineEdit, i: usize, n: usize, total: u64) -> Result<(), String> {
    let which = if n > 1 {
        format!("line edit {} of {n}", i + 1)
    } else {
        "the line edit".to_string()
    };
    let lines = format!(
        "the file has {total} line{}",
        if total == 1 { "" } else { "s" }
    );
    if e.start_line == 0 {
        return Err(format!(
            "{which}: start_line is 1-indexed; use 1 for the first line."
        ));
    }
    if e.end_line + 1 < e.start_line {
        return Err(format!(
            "{which}: end_line {} is before start_line {}. Use end_line >= start_line to replace lines, or end_line = start_line - 1 to insert before start_line.",
            e.end_line, e.start_line
        ));
    }
    if e.start_line > total + 1 || e.end_line > total {
        return Err(format!(
            "{which}: {} is past the end ({lines}). To append, insert with start_line={} and end_line={total}.",
            e.describe(),
            total + 1
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(s: u64, e: u64, r: &str) -> LineEdit {
        LineEdit {
            start_line: s,
            end_line: e,
            replacement: r.into(),
        }
    }

    fn run(content: &str, edits: &[LineEdit]) -> String {
        String::from_utf8(apply(content.as_bytes(), edits).unwrap()).unwrap()
    }

    #[test]
    fn replace_delete_insert_bottom_up() {
        let f = "1\n2\n3\n4\n5\n";
        assert_eq!(
            run(
                f,
                &[
                    edit(2, 3, "two\nthree\nthree-b"),
                    edit(5, 5, ""),
                    edit(1, 0, "zero")
                ]
            ),
            "zero\n1\ntwo\nthree\nthree-b\n4\n"
        );
        assert_eq!(run(f, &[edit(6, 5, "6\n")]), "1\n2\n3\n4\n5\n6\n");
    }

    #[test]
    fn keeps_crlf_bom_and_missing_final_newline() {
        assert_eq!(
            run("a\r\nb\r\nc", &[edit(2, 2, "B\nB2")]),
            "a\r\nB\r\nB2\r\nc"
        );
        assert_eq!(run("a\nb", &[edit(2, 2, "c")]), "a\nc");
        assert_eq!(run("a\nb", &[edit(2, 2, "")]), "a");
        assert_eq!(run("a\nb", &[edit(3, 2, "c")]), "a\nb\nc");
        assert_eq!(run("\u{feff}a\nb\n", &[edit(1, 1, "A")]), "\u{feff}A\nb\n");
        assert_eq!(run("", &[edit(1, 0, "x")]), "x\n");
    }

    #[test]
    fn overlaps_and_bad_ranges_are_refused() {
        let f = "1\n2\n3\n";
        let err = apply(f.as_bytes(), &[edit(1, 2, "x"), edit(2, 3, "y")]).unwrap_err();
        assert!(err.contains("overlap"), "{err}");
        let err = apply(f.as_bytes(), &[edit(2, 4, "x")]).unwrap_err();
        assert!(err.contains("3 lines"), "{err}");
        assert!(apply(f.as_bytes(), &[edit(0, 1, "x")]).is_err());
        assert!(apply(f.as_bytes(), &[edit(3, 1, "x")]).is_err());
        // An insertion right before a replaced range is fine.
        assert_eq!(run(f, &[edit(2, 1, "x"), edit(2, 2, "y")]), "1\nx\ny\n3\n");
    }
}
