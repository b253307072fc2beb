//! What a parsed patch is, whichever format it came in: a list of file
//! changes (add, delete, update with hunks, move, mode change), each hunk
//! a sequence of context, removed and added lines with what is known about
//! where it goes.

use crate::tools::matching::ladder::{is_elision, unescape};

/// The two formats ag-patch reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `diff -u` / `git diff` output.
    Unified,
    /// `*** Begin Patch` ... `*** End Patch`.
    Envelope,
}

impl Format {
    /// The name in details.
    pub fn name(self) -> &'static str {
        match self {
            Format::Unified => "unified",
            Format::Envelope => "begin_patch",
        }
    }
}

/// What one line of a hunk does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Unchanged; must be in the file.
    Context,
    /// Must be in the file; is removed.
    Remove,
    /// Is added.
    Add,
}

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkLine {
    /// What it does.
    pub op: Op,
    /// The text, without line ending.
    pub text: String,
}

/// One hunk: a stretch of the file and what it becomes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hunk {
    /// Lines that must occur, in order, before the hunk (`@@ def f():` in
    /// the begin/end format); the hunk is looked for after the last.
    pub anchors: Vec<String>,
    /// The lines.
    pub lines: Vec<HunkLine>,
    /// The first old line's number (1-based) from a `@@ -N,M +K,L @@`
    /// header; for a hunk with no old lines, the line it goes after.
    pub old_start: Option<usize>,
    /// The hunk must end at the end of the file (`*** End of File`, or a
    /// `\ No newline at end of file` marker).
    pub at_eof: bool,
    /// The old side's last line has no newline (unified diffs).
    pub old_no_newline: bool,
    /// The new side's last line has no newline (unified diffs).
    pub new_no_newline: bool,
    /// The header as written, for messages.
    pub header: String,
    /// How many of its lines came without their leading ` `, `-` or `+`
    /// and were read as context (a small model's slip), for a notice.
    pub unprefixed: usize,
}

impl Hunk {
    /// The lines the file must have: context and removed lines.
    pub fn old(&self) -> Vec<&str> {
        self.side(Op::Remove)
    }

    /// The lines the file will have: context and added lines.
    pub fn new_lines(&self) -> Vec<&str> {
        self.side(Op::Add)
    }

    fn side(&self, changed: Op) -> Vec<&str> {
        self.lines
            .iter()
            .filter(|l| l.op == Op::Context || l.op == changed)
            .map(|l| l.text.as_str())
            .collect()
    }

    /// Whether the hunk changes anything.
    pub fn changes(&self) -> bool {
        self.lines.iter().any(|l| l.op != Op::Context)
    }

    /// The same hunk without its last line, when that is an empty context
    /// line: models often add one for the file's final newline.
    /// The hunk without the blank context lines at its start and end
    /// (models add them for spacing the file does not have there), with
    /// how many were dropped at the start; `None` when there are none.
    pub fn without_blank_edges(&self) -> Option<(Hunk, usize)> {
        let blank = |l: &&HunkLine| l.op == Op::Context && l.text.trim().is_empty();
        let lead = self.lines.iter().take_while(blank).count();
        if lead == self.lines.len() {
            return None;
        }
        let trail = self.lines.iter().rev().take_while(blank).count();
        if lead == 0 && trail == 0 {
            return None;
        }
        let mut h = self.clone();
        h.lines = self.lines[lead..self.lines.len() - trail].to_vec();
        h.old_start = self.old_start.map(|s| s + lead);
        Some((h, lead))
    }

    /// The hunk with the escapes a model double-encoded decoded (the
    /// ladder's step 8, by its [`unescape`]): a line holding a `\n` becomes
    /// several lines with the same op. Added lines are decoded likewise,
    /// unless one of them holds a real tab (then they were written as
    /// meant). `None` unless a context or removed line had such an escape.
    pub fn decoded(&self) -> Option<Hunk> {
        let old_escaped = self
            .lines
            .iter()
            .any(|l| l.op != Op::Add && unescape(&l.text).is_some());
        if !old_escaped {
            return None;
        }
        let adds_raw = self
            .lines
            .iter()
            .any(|l| l.op == Op::Add && l.text.contains('\t'));
        let mut h = self.clone();
        h.lines = Vec::with_capacity(self.lines.len());
        for l in &self.lines {
            let text = match unescape(&l.text) {
                Some(t) if !(l.op == Op::Add && adds_raw) => t,
                _ => {
                    h.lines.push(l.clone());
                    continue;
                }
            };
            for part in text.split('\n') {
                h.lines.push(HunkLine {
                    op: l.op,
                    text: part.strip_suffix('\r').unwrap_or(part).to_string(),
                });
            }
        }
        Some(h)
    }

    /// The parts of the hunk around its context lines that are only
    /// `...` (aider's elision, the ladder's step 10: lines left out), in
    /// order; the first keeps the anchors and line number, the last the
    /// end-of-file marks. `None` without such a line.
    pub fn elided_parts(&self) -> Option<Vec<Hunk>> {
        let elision = |l: &HunkLine| l.op == Op::Context && is_elision(&l.text);
        if !self.lines.iter().any(elision) {
            return None;
        }
        let mut parts: Vec<Hunk> = Vec::new();
        let mut cur: Vec<HunkLine> = Vec::new();
        for l in &self.lines {
            if elision(l) {
                parts.push(self.part(std::mem::take(&mut cur), parts.is_empty()));
            } else {
                cur.push(l.clone());
            }
        }
        parts.push(self.part(cur, parts.is_empty()));
        let last = parts.len() - 1;
        parts[last].at_eof = self.at_eof;
        parts[last].old_no_newline = self.old_no_newline;
        parts[last].new_no_newline = self.new_no_newline;
        Some(parts)
    }

    fn part(&self, lines: Vec<HunkLine>, first: bool) -> Hunk {
        Hunk {
            anchors: if first {
                self.anchors.clone()
            } else {
                Vec::new()
            },
            lines,
            old_start: self.old_start.filter(|_| first),
            header: self.header.clone(),
            ..Default::default()
        }
    }

    /// The hunk without a blank last context line; `None` when it has none.
    pub fn without_trailing_blank(&self) -> Option<Hunk> {
        let last = self.lines.last()?;
        if last.op != Op::Context || !last.text.trim().is_empty() {
            return None;
        }
        let mut h = self.clone();
        h.lines.pop();
        Some(h)
    }
}

/// What happens to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Create the file with this content.
    Add {
        /// The content.
        content: Vec<u8>,
        /// Its mode from a git header (`100755`).
        mode: Option<u32>,
        /// Whether an existing file may be replaced (the begin/end format's
        /// `Add File` does so; a unified diff's new file must not exist).
        overwrite: bool,
    },
    /// Delete the file; the hunks, if any, must match its whole content.
    Delete {
        /// What the file holds, as a unified diff shows it.
        hunks: Vec<Hunk>,
    },
    /// Change the file.
    Update {
        /// The hunks, in file order.
        hunks: Vec<Hunk>,
        /// A new path for it.
        move_to: Option<String>,
        /// A new mode from a git header.
        mode: Option<u32>,
    },
}

/// One file's change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch {
    /// The path, as the patch names it (prefixes stripped).
    pub path: String,
    /// What happens to it.
    pub change: Change,
}

impl FilePatch {
    /// Whether the patch marks any change for the file: a file added or
    /// deleted, a move, or a hunk line that is not context. A model that
    /// quotes the lines it means to change, all as context, sends a patch
    /// without one.
    pub fn marks_a_change(&self) -> bool {
        match &self.change {
            Change::Add { .. } | Change::Delete { .. } => true,
            Change::Update { hunks, move_to, .. } => {
                move_to.is_some() || hunks.iter().any(Hunk::changes)
            }
        }
    }
}

/// What a patch whose hunks hold only context lines is told: the marks it
/// lacks.
pub const ONLY_CONTEXT: &str = "every hunk line is context (starts with a space), so the patch changes nothing: start each line to take out with `-` and each new line with `+`";

/// A parsed patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// Its format.
    pub format: Format,
    /// The file changes, in order.
    pub files: Vec<FilePatch>,
}

impl Patch {
    /// Each hunk that had lines read as context without their leading
    /// space: its file, its number in that file (from 1) and how many.
    pub fn unprefixed_hunks(&self) -> Vec<(String, usize, usize)> {
        let mut out = Vec::new();
        for f in &self.files {
            let hunks = match &f.change {
                Change::Update { hunks, .. } | Change::Delete { hunks } => hunks,
                Change::Add { .. } => continue,
            };
            for (i, h) in hunks.iter().enumerate() {
                if h.unprefixed > 0 {
                    out.push((f.path.clone(), i + 1, h.unprefixed));
                }
            }
        }
        out
    }
}

/// Text lines of a patch: the text split at LF, each with a carriage
/// return before the LF removed and remembered.
pub fn split_lines(text: &str) -> Vec<(&str, bool)> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    if body.is_empty() && text.is_empty() {
        return Vec::new();
    }
    body.split('\n')
        .map(|l| match l.strip_suffix('\r') {
            Some(s) => (s, true),
            None => (l, false),
        })
        .collect()
}

/// Content built from added lines: each ends with a newline (CRLF when
/// every line came with one), unless `no_newline`.
pub fn content_of(lines: &[(String, bool)], no_newline: bool) -> Vec<u8> {
    let crlf = !lines.is_empty() && lines.iter().all(|(_, cr)| *cr);
    let eol: &[u8] = if crlf { b"\r\n" } else { b"\n" };
    let mut out = Vec::new();
    for (i, (l, _)) in lines.iter().enumerate() {
        out.extend_from_slice(l.as_bytes());
        if i + 1 < lines.len() || !no_newline {
            out.extend_from_slice(eol);
        }
    }
    out
}

/// A model's patch often comes wrapped: in a Markdown code fence, in a
/// shell heredoc (`apply_patch <<'EOF'` ... `EOF`), or with blank lines
/// around it. Returns the patch without the wrapping.
pub fn unwrap(text: &str) -> &str {
    let mut t = text.trim_matches(['\n', '\r']);
    // A heredoc, possibly after a command name.
    if let Some((first, rest)) = t.split_once('\n') {
        let f = first.trim();
        let heredoc = f
            .rsplit_once("<<")
            .map(|(cmd, tag)| (cmd.trim(), tag.trim().trim_matches(['\'', '"']).to_string()));
        if let Some((cmd, tag)) = heredoc
            && !tag.is_empty()
            && (cmd.is_empty() || cmd.ends_with("apply_patch") || cmd.ends_with("patch"))
            && let Some(inner) = rest.trim_end().strip_suffix(tag.as_str())
        {
            t = inner.trim_matches(['\n', '\r']);
        }
    }
    // A code fence around the whole patch.
    if let Some(inner) = crate::tools::code_fence::inside(t) {
        t = inner.trim_end_matches(['\n', '\r']);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrappers_are_removed() {
        let p = "*** Begin Patch\n*** End Patch";
        assert_eq!(unwrap(&format!("```diff\n{p}\n```\n")), p);
        assert_eq!(unwrap(&format!("apply_patch <<'EOF'\n{p}\nEOF\n")), p);
        assert_eq!(unwrap(&format!("<<\"EOF\"\n{p}\nEOF")), p);
        assert_eq!(unwrap(&format!("\n\n{p}\n\n")), p);
        assert_eq!(unwrap("--- a\n+++ b\n"), "--- a\n+++ b");
    }

    #[test]
    fn lines_and_content() {
        assert_eq!(split_lines("a\r\nb\n"), vec![("a", true), ("b", false)]);
        assert!(split_lines("").is_empty());
        let l = vec![("x".to_string(), true), ("y".to_string(), true)];
        assert_eq!(content_of(&l, false), b"x\r\ny\r\n");
        assert_eq!(content_of(&l, true), b"x\r\ny");
        assert_eq!(content_of(&[], false), b"");
    }

    fn h(spec: &[(Op, &str)]) -> Hunk {
        Hunk {
            lines: spec
                .iter()
                .map(|(op, t)| HunkLine {
                    op: *op,
                    text: t.to_string(),
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn double_encoded_lines_are_decoded_and_split() {
        use Op::*;
        let d = h(&[
            (Context, "def f():\\n\\treturn \\\"a\\\""),
            (Remove, "x"),
            (Add, "say(\\\"b\\\")"),
        ])
        .decoded()
        .unwrap();
        assert_eq!(
            d,
            h(&[
                (Context, "def f():"),
                (Context, "\treturn \"a\""),
                (Remove, "x"),
                (Add, "say(\"b\")")
            ])
        );
        // Added lines with a real tab were written as meant.
        let d = h(&[(Remove, "a\\tb"), (Add, "\tc\\n")]).decoded().unwrap();
        assert_eq!(d, h(&[(Remove, "a\tb"), (Add, "\tc\\n")]));
        // Only added lines escaped: nothing to decode.
        assert_eq!(h(&[(Remove, "a"), (Add, "b\\n")]).decoded(), None);
    }

    #[test]
    fn elided_parts_split_at_dots_lines() {
        use Op::*;
        let mut whole = h(&[
            (Context, "a"),
            (Context, "..."),
            (Remove, "b"),
            (Add, "c"),
            (Context, "  ...  "),
        ]);
        whole.anchors = vec!["class A".into()];
        whole.old_start = Some(4);
        whole.at_eof = true;
        let parts = whole.elided_parts().unwrap();
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[0].old(), vec!["a"]);
        assert_eq!((parts[0].anchors.len(), parts[0].old_start), (1, Some(4)));
        assert_eq!((parts[1].anchors.len(), parts[1].old_start), (0, None));
        assert_eq!(parts[1].new_lines(), vec!["c"]);
        assert!(parts[2].lines.is_empty() && parts[2].at_eof && !parts[0].at_eof);
        // A removed `...` line is text to remove, not an elision.
        assert_eq!(h(&[(Remove, "..."), (Add, "x")]).elided_parts(), None);
    }

    #[test]
    fn trailing_blank_context_can_be_dropped() {
        let h = Hunk {
            lines: vec![
                HunkLine {
                    op: Op::Remove,
                    text: "a".into(),
                },
                HunkLine {
                    op: Op::Context,
                    text: "".into(),
                },
            ],
            ..Default::default()
        };
        assert_eq!(h.without_trailing_blank().unwrap().lines.len(), 1);
        assert_eq!(h.old(), vec!["a", ""]);
        assert!(h.new_lines() == vec![""]);
    }
}
