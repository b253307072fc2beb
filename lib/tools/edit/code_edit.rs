//! The `code_edit` argument end to end: the sketch placed deterministically
//! ([`super::sketch`]), else by the planner model when one is configured
//! ([`super::planner`]), turned into line edits, and what the result says
//! about how it was placed.

use serde_json::{Value, json};

use super::planner::{self, Planner};
use super::sketch::{self, How};
use crate::tool_protocol::{Note, ToolError};
use crate::tools::fileops::plural;
use crate::tools::matching::ladder::Step;
use crate::tools::matching::lines::LineEdit;
use crate::tools::matching::seek::Fuzz;

/// A sketch turned into line edits.
#[derive(Debug, Clone)]
pub struct Sketched {
    /// The edits.
    pub edits: Vec<LineEdit>,
    /// The result's first line, after "Applied the code sketch to FILE".
    pub summary: String,
    /// Notes for the result.
    pub notes: Vec<Note>,
    /// `details.sketch`.
    pub details: Value,
    /// What the ladder tolerated in placing it, for
    /// `details.tolerant_matches` (as ag-edit's other forms report it).
    pub tolerant: Vec<Value>,
}

/// Turns `code` into line edits for `content`.
pub fn resolve(
    shown: &str,
    content: &[u8],
    code: &str,
    instructions: Option<&str>,
    planner: Option<&Planner>,
) -> Result<Sketched, ToolError> {
    let why = match sketch::place(content, code) {
        Ok(p) => return Ok(describe(p)),
        Err(why) => why,
    };
    let why = match Escaped::of(code, content) {
        Escaped::Decoded(decoded) => match sketch::place(content, &decoded) {
            Ok(p) => {
                let mut s = describe(p);
                s.notes.push(Note::notice(
                    "code_edit was one line holding `\\n` escapes, which the file does not hold, so they were read as line breaks (and `\\t`, `\\\"`, `\\\\` as a tab, a quote, a backslash). Send real line breaks; check the diff in details.",
                ));
                s.details["unescaped"] = Value::Bool(true);
                s.tolerant.insert(0, json!({"kind": Step::Escapes.name()}));
                return Ok(s);
            }
            // As one line it fits nowhere, so say why the lines it meant
            // do not fit either.
            Err(decoded_why) => format!(
                "code_edit is one line holding `\\n` escapes, which were read as line breaks; then: {decoded_why}"
            ),
        },
        Escaped::Literal => format!(
            "{why} code_edit is one line holding `\\n` sequences, and the file holds such sequences too, so they were taken literally: send the sketch with real line breaks."
        ),
        Escaped::No => why,
    };
    let Some(planner) = planner else {
        return Err(ToolError::new(
            "edit.sketch_unplaced",
            format!(
                "{why}\nNothing was changed.\nhint: make each changed stretch of code_edit begin and end with unchanged lines copied exactly from the file, with `// ... existing code ...` (in the file's comment syntax) where code is left out{}",
                other_ways()
            ),
        ));
    };
    let edits = planner::plan(planner, shown, content, instructions, code, &why).map_err(|e| {
        ToolError::new(
            "edit.sketch_unplaced",
            format!(
                "{why}\nThe planner could not place it either: {e}.\nNothing was changed.\nhint: give unchanged lines around each change so that it can be placed, or use old_string/new_string."
            ),
        )
    })?;
    let n = edits.len();
    Ok(Sketched {
        summary: format!(
            "placed by the planner model {} as {n} line edit{}",
            planner.model,
            plural(n as u64)
        ),
        notes: vec![Note::notice(format!(
            "the sketch could not be placed by its unchanged lines ({why}); the planner model `{}` chose the lines to change. Check the diff in details.",
            planner.model
        ))],
        details: json!({
            "placed_by": "planner",
            "planner": planner.model,
            "edits": edits.iter().map(|e| json!({"start_line": e.start_line, "end_line": e.end_line})).collect::<Vec<_>>(),
        }),
        edits,
        tolerant: Vec::new(),
    })
}

/// A sketch that a model double-encoded: one line with `\n` escapes
/// where line breaks were meant.
enum Escaped {
    /// Not such a sketch.
    No,
    /// Such a sketch, but the file holds literal `\n` too, so the escapes
    /// may be meant (a C string): it stays as it is.
    Literal,
    /// Such a sketch, decoded.
    Decoded(String),
}

impl Escaped {
    fn of(code: &str, content: &[u8]) -> Escaped {
        if code.contains('\n') || !code.contains("\\n") {
            return Escaped::No;
        }
        if content.windows(2).any(|w| w == b"\\n") {
            return Escaped::Literal;
        }
        let mut out = String::with_capacity(code.len());
        let mut chars = code.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => {}
                Some('"') => out.push('"'),
                Some('\\') => out.push('\\'),
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => out.push('\\'),
            }
        }
        Escaped::Decoded(out)
    }
}

fn describe(p: sketch::Placement) -> Sketched {
    let mut notes = Vec::new();
    let mut parts = Vec::new();
    for s in &p.segments {
        let what = match (s.replaced, s.with) {
            (0, w) => format!(
                "{w} line{} inserted before line {}",
                plural(w as u64),
                s.start
            ),
            (r, 0) => format!("lines {}-{} removed", s.start, s.start + r - 1),
            (r, w) => format!(
                "line{} {} replaced by {w} line{}",
                plural(r as u64),
                if r == 1 {
                    s.start.to_string()
                } else {
                    format!("{}-{}", s.start, s.start + r - 1)
                },
                plural(w as u64)
            ),
        };
        match s.how {
            How::Body { opener } => {
                parts.push(format!("{what} (the body of the block at line {opener})"));
                notes.push(Note::notice(format!(
                    "code_edit lines {}-{} had no unchanged line after the change, and the marker after them is indented no deeper than the line they are indented under (line {opener}), so they replaced that block's body rather than being inserted at its start (to insert, indent the marker like the body). Check the diff in details.",
                    s.sketch_lines.0, s.sketch_lines.1
                )));
            }
            _ => parts.push(what),
        }
        if s.fuzz != Fuzz::Exact {
            notes.push(Note::notice(format!(
                "the unchanged lines around code_edit lines {}-{} did not match exactly; {}. Check the diff in details.",
                s.sketch_lines.0,
                s.sketch_lines.1,
                s.fuzz.describe()
            )));
        }
    }
    if p.whole_file {
        notes.push(Note::notice(
            "code_edit has no `... existing code ...` markers and starts and ends like the file, so it replaced the whole file.",
        ));
    }
    let mut tolerant = Vec::new();
    for s in &p.segments {
        let lines = [s.sketch_lines.0, s.sketch_lines.1];
        if s.edge_blanks {
            tolerant.push(json!({"code_edit_lines": lines, "kind": Step::EdgeWhitespace.name()}));
        }
        if s.fuzz != Fuzz::Exact {
            tolerant.push(json!({"code_edit_lines": lines, "kind": s.fuzz.name()}));
        }
    }
    let summary = if p.whole_file {
        "the whole file replaced".to_string()
    } else {
        parts.join("; ")
    };
    Sketched {
        summary,
        notes,
        details: json!({
            "placed_by": if p.whole_file { "whole_file" } else { "anchors" },
            "segments": p.segment_count,
            "changes": p.segments.iter().map(change).collect::<Vec<_>>(),
        }),
        edits: p.edits,
        tolerant,
    }
}

/// One entry of `details.sketch.changes`.
fn change(s: &sketch::SegmentPlace) -> Value {
    let mut v = json!({
        "code_edit_lines": [s.sketch_lines.0, s.sketch_lines.1],
        "start_line": s.start,
        "lines_replaced": s.replaced,
        "lines_new": s.with,
        "match": s.fuzz.name(),
        "placement": s.how.name(),
    });
    if let How::Body { opener } = s.how {
        v["block_line"] = json!(opener);
    }
    v
}

/// The other ways to make the change, as the caller has them: `edit` and
/// `edit_lines` for a model that sees those tools, the binary's fields
/// when used by itself.
fn other_ways() -> String {
    let ways: Vec<String> = [
        crate::tools::offer::way_text("edit", "old_string/new_string"),
        crate::tools::offer::way_text("edit_lines", "line_edits")
            .map(|w| format!("{w} with the line numbers read shows")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if ways.is_empty() {
        ".".to_string()
    } else {
        format!("; or use {}.", ways.join(", or "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str =
        "def a():\n    value = compute()\n    return value\n\n\ndef b():\n    return 2\n";

    fn placed(code: &str) -> Sketched {
        resolve("m.py", FILE.as_bytes(), code, None, None).unwrap()
    }

    #[test]
    fn details_say_whether_new_lines_were_inserted_or_replaced_a_body() {
        // The marker is not indented under `def a():`: a new body.
        let s = placed("def a():\n    return value * 10\n# ... existing code ...\n");
        let change = &s.details["changes"][0];
        assert_eq!(change["placement"], "replaced_block_body", "{}", s.details);
        assert_eq!(change["block_line"], 1);
        assert_eq!(change["start_line"], 2);
        assert_eq!(change["lines_replaced"], 2);
        assert!(
            s.summary.contains("the body of the block at line 1"),
            "{}",
            s.summary
        );
        assert!(
            s.notes
                .iter()
                .any(|n| n.text.contains("replaced that block's body")),
            "{:?}",
            s.notes
        );
        // The marker is indented like the body: inserted at its start.
        let s = placed("def a():\n    log('a')\n    # ... existing code ...\n");
        let change = &s.details["changes"][0];
        assert_eq!(
            change["placement"], "inserted_after_anchor",
            "{}",
            s.details
        );
        assert_eq!(change["lines_replaced"], 0);
        assert!(change.get("block_line").is_none());
        assert!(s.notes.is_empty(), "{:?}", s.notes);
        // Both ends anchored.
        let s = placed("# ...\ndef b():\n    return 3\n");
        assert_eq!(s.details["changes"][0]["placement"], "between_anchors");
        // Before a lone anchor, after a marker.
        let s = placed("# ... existing code ...\nimport sys\ndef a():\n# ... existing code ...\n");
        assert_eq!(
            s.details["changes"][0]["placement"], "inserted_before_anchor",
            "{}",
            s.details
        );
    }

    #[test]
    fn what_was_tolerated_is_listed_like_other_edits() {
        // Anchors that match only with their quotes made plain.
        let file = "const greeting = \"hello\";\nconst width = 80;\n";
        let code =
            "const greeting = \u{201c}hello\u{201d};\nconst height = 24;\nconst width = 80;\n";
        let s = resolve("g.js", file.as_bytes(), code, None, None).unwrap();
        assert_eq!(
            serde_json::to_value(&s.tolerant).unwrap(),
            json!([{"code_edit_lines": [1, 3], "kind": "unicode"}])
        );
        // Blank lines before the sketch's first line, which the file
        // does not have there.
        let s = resolve(
            "g.js",
            file.as_bytes(),
            "\n\nconst greeting = \"hello\";\nconst height = 24;\n// ...\n",
            None,
            None,
        )
        .unwrap();
        assert_eq!(
            serde_json::to_value(&s.tolerant).unwrap(),
            json!([{"code_edit_lines": [3, 4], "kind": "edge_whitespace"}])
        );
        // An exact sketch tolerates nothing.
        assert!(
            placed("def a():\n    log('a')\n    # ... existing code ...\n")
                .tolerant
                .is_empty()
        );
        // A double-encoded sketch.
        let s = placed("# ... existing code ...\\ndef b():\\n    return 3\\n");
        assert_eq!(s.tolerant[0]["kind"], "escapes", "{:?}", s.tolerant);
    }
}
