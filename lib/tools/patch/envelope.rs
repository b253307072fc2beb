//! The `*** Begin Patch` format that OpenAI's models are trained to write:
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path          (then every line starts with +)
//! *** Delete File: path
//! *** Update File: path
//! *** Move to: new/path       (optional)
//! @@ class Foo                (optional lines that must come before the hunk)
//!  context
//! -removed
//! +added
//! *** End of File             (optional: the hunk ends the file)
//! *** End Patch
//! ```
//!
//! Parsed leniently where a model's slip cannot change the meaning: markers
//! padded with spaces, an empty line standing for an empty context line,
//! several `@@` lines in a row (each narrows the search), `@@ -12,5 +12,6 @@`
//! taken as a line number, a missing `*** Begin Patch`. A missing
//! `*** End Patch` is refused: the patch may have been cut short.

use super::model::{
    Change, FilePatch, Format, Hunk, HunkLine, ONLY_CONTEXT, Op, Patch, content_of, split_lines,
};
use super::unified::parse_range_header;
use crate::tools::matching::ladder::is_elision;

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const EOF: &str = "*** End of File";

/// A parse error: the 1-based line of the patch and what is wrong there.
pub type ParseError = (usize, String);

/// Whether `text` (unwrapped) is in this format.
pub fn looks_like(text: &str) -> bool {
    text.lines().take(50).any(|l| {
        let t = l.trim();
        t == BEGIN || t.starts_with(UPDATE) || t.starts_with(ADD) || t.starts_with(DELETE)
    })
}

/// Parses a begin/end patch.
pub fn parse(text: &str) -> Result<Patch, ParseError> {
    let lines = split_lines(text);
    let mut i = 0;
    while i < lines.len() && lines[i].0.trim().is_empty() {
        i += 1;
    }
    match lines.get(i) {
        Some((l, _)) if l.trim() == BEGIN => i += 1,
        Some((l, _)) if is_file_header(l) => {}
        Some((l, _)) => {
            return Err((
                i + 1,
                format!("the patch must start with `{BEGIN}`, not `{}`", l.trim()),
            ));
        }
        None => return Err((1, "the patch is empty".into())),
    }
    let mut files = Vec::new();
    loop {
        while i < lines.len() && lines[i].0.trim().is_empty() {
            i += 1;
        }
        let Some((line, _)) = lines.get(i) else {
            // Both slips at once: naming only the end would send back a
            // whole patch that still changes nothing.
            let and_marks = if !files.is_empty() && !files.iter().any(FilePatch::marks_a_change) {
                format!("; and {ONLY_CONTEXT}")
            } else {
                String::new()
            };
            return Err((
                lines.len(),
                format!(
                    "the patch does not end with `{END}`, so it may have been cut short; send the whole patch, ending with `{END}`{and_marks}"
                ),
            ));
        };
        let t = line.trim();
        if t == END {
            i += 1;
            break;
        }
        if let Some(path) = t.strip_prefix(ADD) {
            let path = file_path(path, i)?;
            let (content, used) = add_lines(&lines[i + 1..], i + 1)?;
            files.push(FilePatch {
                path,
                change: Change::Add {
                    content,
                    mode: None,
                    overwrite: true,
                },
            });
            i += 1 + used;
        } else if let Some(path) = t.strip_prefix(DELETE) {
            files.push(FilePatch {
                path: file_path(path, i)?,
                change: Change::Delete { hunks: Vec::new() },
            });
            i += 1;
        } else if let Some(path) = t.strip_prefix(UPDATE) {
            let path = file_path(path, i)?;
            i += 1;
            let mut move_to = None;
            if let Some((l, _)) = lines.get(i)
                && let Some(to) = l.trim().strip_prefix(MOVE)
            {
                move_to = Some(file_path(to, i)?);
                i += 1;
            }
            let (hunks, used) = update_hunks(&lines[i..], i)?;
            // The same file added right after (a small model's way of
            // saying "replace it"): name the two ways to change it.
            let added_again = lines
                .get(i + used)
                .and_then(|(l, _)| l.trim().strip_prefix(ADD))
                .is_some_and(|p| p.trim().trim_matches('`') == path);
            if hunks.is_empty() && move_to.is_none() && added_again {
                return Err((
                    i,
                    format!(
                        "`{UPDATE} {path}` has no hunks, and the next line adds the same file again (`{ADD} {path}`): name each file once. To change some of its lines, give them under `{UPDATE} {path}` (`@@`, then ` context`, `-old`, `+new` lines); to replace all of it, `{ADD} {path}` alone, with every line of the new text as a `+` line"
                    ),
                ));
            }
            if hunks.is_empty() && move_to.is_none() {
                return Err((
                    i,
                    format!(
                        "`{UPDATE} {path}` has no hunks: give the lines to change after it (`@@`, then ` context`, `-old`, `+new` lines)"
                    ),
                ));
            }
            files.push(FilePatch {
                path,
                change: Change::Update {
                    hunks,
                    move_to,
                    mode: None,
                },
            });
            i += used;
        } else {
            return Err((
                i + 1,
                format!(
                    "`{t}` is not a file header; each file starts with `{ADD} path`, `{DELETE} path` or `{UPDATE} path`"
                ),
            ));
        }
    }
    if let Some(extra) = lines[i..].iter().position(|(l, _)| !l.trim().is_empty()) {
        return Err((
            i + extra + 1,
            format!("text after `{END}`; send one patch per call"),
        ));
    }
    Ok(Patch {
        format: Format::Envelope,
        files,
    })
}

fn is_file_header(line: &str) -> bool {
    let t = line.trim();
    t.starts_with(ADD) || t.starts_with(DELETE) || t.starts_with(UPDATE)
}

fn file_path(raw: &str, i: usize) -> Result<String, ParseError> {
    let p = raw.trim().trim_matches('`');
    if p.is_empty() {
        return Err((i + 1, "a file header without a path".into()));
    }
    Ok(p.to_string())
}

/// The content of an added file: lines starting with `+`. An empty line
/// between two of them is taken as an empty line of the file.
fn add_lines(lines: &[(&str, bool)], first: usize) -> Result<(Vec<u8>, usize), ParseError> {
    let mut content: Vec<(String, bool)> = Vec::new();
    let mut blanks = 0;
    let mut used = 0;
    for (k, (l, cr)) in lines.iter().enumerate() {
        if let Some(text) = l.strip_prefix('+') {
            for _ in 0..blanks {
                content.push((String::new(), *cr));
            }
            blanks = 0;
            content.push((text.to_string(), *cr));
            used = k + 1;
        } else if l.trim().is_empty() {
            blanks += 1;
        } else if l.trim_start().starts_with("***") {
            break;
        } else {
            return Err((
                first + k + 1,
                format!(
                    "`{l}`: every line of an added file starts with `+` (write `+` alone for an empty line)"
                ),
            ));
        }
    }
    Ok((content_of(&content, false), used))
}

/// The hunks of an `Update File`, up to the next `***` line; returns them
/// and the number of lines used.
fn update_hunks(lines: &[(&str, bool)], first: usize) -> Result<(Vec<Hunk>, usize), ParseError> {
    let mut hunks = Vec::new();
    let mut cur: Option<Hunk> = None;
    // How many of the current hunk's last lines were empty patch lines.
    let mut trailing_empty = 0;
    let mut anchors: Vec<String> = Vec::new();
    let mut start: Option<usize> = None;
    let mut header = String::new();
    let mut used = 0;
    let finish = |cur: &mut Option<Hunk>, empty: &mut usize, hunks: &mut Vec<Hunk>| {
        if let Some(mut h) = cur.take() {
            // Empty lines at the end of a hunk are more likely separators
            // than context; dropping context never changes what is written.
            for _ in 0..*empty {
                h.lines.pop();
            }
            if !h.lines.is_empty() {
                hunks.push(h);
            }
        }
        *empty = 0;
    };
    for (k, (raw, _)) in lines.iter().enumerate() {
        let t = raw.trim();
        if raw.trim_start().starts_with("***") {
            if t == EOF {
                match cur.as_mut() {
                    Some(h) => h.at_eof = true,
                    None => {
                        return Err((
                            first + k + 1,
                            format!("`{EOF}` with no hunk lines before it"),
                        ));
                    }
                }
                finish(&mut cur, &mut trailing_empty, &mut hunks);
                used = k + 1;
                continue;
            }
            break;
        }
        used = k + 1;
        if let Some(rest) = t.strip_prefix("@@") {
            finish(&mut cur, &mut trailing_empty, &mut hunks);
            let rest = rest.trim();
            if let Some((old_start, _, _)) = parse_range_header(rest) {
                start = Some(old_start);
            } else if !rest.is_empty() {
                anchors.push(rest.trim_end_matches("@@").trim_end().to_string());
            }
            header = t.to_string();
            continue;
        }
        let unprefixed =
            !raw.is_empty() && !matches!(raw.as_bytes()[0], b' ' | b'-' | b'+') && !is_elision(raw);
        let (op, text) = if raw.is_empty() {
            (Op::Context, "")
        } else {
            match raw.as_bytes()[0] {
                b' ' => (Op::Context, &raw[1..]),
                b'-' => (Op::Remove, &raw[1..]),
                b'+' => (Op::Add, &raw[1..]),
                // aider's `...` for lines left out, written without the
                // context line's space: placed by the ladder's elision.
                _ if is_elision(raw) => (Op::Context, raw.trim()),
                // A context line whose space a model left out; placing
                // the hunk checks it against the file like any other.
                _ => (Op::Context, &raw[..]),
            }
        };
        let h = cur.get_or_insert_with(|| Hunk {
            anchors: std::mem::take(&mut anchors),
            old_start: start.take(),
            header: if header.is_empty() {
                "@@".to_string()
            } else {
                std::mem::take(&mut header)
            },
            ..Default::default()
        });
        h.lines.push(HunkLine {
            op,
            text: text.to_string(),
        });
        h.unprefixed += usize::from(unprefixed);
        if raw.is_empty() {
            trailing_empty += 1;
        } else {
            trailing_empty = 0;
        }
    }
    finish(&mut cur, &mut trailing_empty, &mut hunks);
    if !anchors.is_empty() {
        return Err((
            first + used,
            format!(
                "`@@ {}` has no hunk lines after it; follow it with ` context`, `-old` and `+new` lines",
                anchors.join(" ")
            ),
        ));
    }
    Ok((hunks, used))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(p: &Patch, i: usize) -> (&[Hunk], Option<&String>) {
        match &p.files[i].change {
            Change::Update { hunks, move_to, .. } => (hunks, move_to.as_ref()),
            c => panic!("not an update: {c:?}"),
        }
    }

    #[test]
    fn every_kind_of_file_change() {
        let p = parse(
            "*** Begin Patch\n*** Add File: a.txt\n+one\n+\n+three\n*** Delete File: b.txt\n\
             *** Update File: c.py\n*** Move to: d.py\n@@ def f():\n-    pass\n+    return 1\n\
             *** End of File\n*** End Patch\n",
        )
        .unwrap();
        assert_eq!(p.files.len(), 3);
        assert_eq!(
            p.files[0].change,
            Change::Add {
                content: b"one\n\nthree\n".to_vec(),
                mode: None,
                overwrite: true
            }
        );
        assert_eq!(p.files[1].path, "b.txt");
        let (hunks, to) = update(&p, 2);
        assert_eq!(to.map(String::as_str), Some("d.py"));
        assert_eq!(hunks[0].anchors, vec!["def f():"]);
        assert_eq!(hunks[0].old(), vec!["    pass"]);
        assert!(hunks[0].at_eof);
    }

    #[test]
    fn lenient_where_meaning_is_clear() {
        let p = parse(
            "  *** Begin Patch  \n*** Update File: x\n@@ class A\n@@ def f\n a\n\n-b\n+c\n\n\n@@ -40,2 +40,2 @@\n-y\n+z\n *** End Patch ",
        )
        .unwrap();
        let (hunks, _) = update(&p, 0);
        assert_eq!(hunks.len(), 2);
        assert_eq!(hunks[0].anchors, vec!["class A", "def f"]);
        // The empty line inside is context; the ones at the end are not.
        assert_eq!(hunks[0].old(), vec!["a", "", "b"]);
        assert_eq!(hunks[1].old_start, Some(40));
        // No Begin Patch line.
        assert!(parse("*** Delete File: a\n*** End Patch").is_ok());
    }

    #[test]
    fn refusals_name_the_line() {
        assert_eq!(
            parse("*** Begin Patch\n*** Update File: a\n@@\n x\n")
                .unwrap_err()
                .0,
            4
        );
        let (line, msg) = parse("*** Begin Patch\n*** Update File: a\n*** End Patch").unwrap_err();
        assert_eq!(line, 2);
        assert!(msg.contains("no hunks"), "{msg}");
        let (line, msg) = parse(
            "*** Begin Patch\n*** Update File: web/robots.txt\n*** Add File: web/robots.txt\n*** End Patch",
        )
        .unwrap_err();
        assert_eq!(line, 2);
        assert!(
            msg.contains("the next line adds the same file again (`*** Add File: web/robots.txt`): name each file once")
                && msg.contains("to replace all of it, `*** Add File: web/robots.txt` alone"),
            "{msg}"
        );
        let (line, msg) = parse("*** Begin Patch\n*** Frobnicate: a\n*** End Patch").unwrap_err();
        assert_eq!(line, 2);
        assert!(msg.contains("not a file header"), "{msg}");
        // A hunk line without its prefix is context that lost its space
        // (placing the hunk checks it against the file).
        let p = parse("*** Begin Patch\n*** Update File: a\n@@\nx\n-y\n*** End Patch").unwrap();
        assert_eq!(p.unprefixed_hunks(), vec![("a".to_string(), 1, 1)]);
        let (line, _) =
            parse("*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch").unwrap_err();
        assert_eq!(line, 3);
        // Context lines only and no end: both are named.
        let (_, msg) = parse("*** Begin Patch\n*** Update File: a\n@@\n x\n y\n").unwrap_err();
        assert!(
            msg.contains("does not end with `*** End Patch`")
                && msg.contains("every hunk line is context")
                && msg.contains("`-`"),
            "{msg}"
        );
        let (_, msg) = parse("*** Begin Patch\n*** Update File: a\n@@\n x\n-y\n").unwrap_err();
        assert!(!msg.contains("hunk line is context"), "{msg}");
        assert!(parse("hello").is_err());
        assert!(
            parse("*** Begin Patch\n*** End Patch")
                .unwrap()
                .files
                .is_empty()
        );
    }
}
