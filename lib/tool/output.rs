//! A successful call's output: the result itself, and apart from it the
//! notes about the result (what was cut, skipped or not found, what to try
//! next). The model reads both as one text, laid out here; the plain
//! command line prints the result on stdout and the notes on stderr, so
//! that `ag-grep fn src | wc -l` counts matches and nothing else.

use serde_json::Value;

use crate::protocol::ImageData;

/// A successful call's output.
#[derive(Debug, Clone, Default)]
pub struct ToolOutput {
    /// The result itself, and all that the plain command line prints on
    /// stdout: matching lines, file names, numbered lines, a summary of
    /// what was changed. Empty when nothing was found.
    pub output: String,
    /// Notes about the result, one paragraph each, for the model and on
    /// the plain command line for stderr. Add them with
    /// [`ToolOutput::with_note`].
    pub notes: Vec<String>,
    /// Whether the model reads the notes before the output rather than
    /// after it.
    pub notes_first: bool,
    /// Structured details.
    pub details: Value,
    /// Pictures, for tools that return them.
    pub images: Vec<ImageData>,
}

impl ToolOutput {
    /// Output text with details.
    pub fn new(output: impl Into<String>, details: Value) -> Self {
        ToolOutput {
            output: output.into(),
            details,
            ..ToolOutput::default()
        }
    }

    /// Adds a note after those already there.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// Adds notes after those already there.
    pub fn with_notes(mut self, notes: impl IntoIterator<Item = String>) -> Self {
        self.notes.extend(notes);
        self
    }

    /// Puts the notes before the output in the model's text, for a note the
    /// model must not miss, such as a file read only in part.
    pub fn notes_first(mut self) -> Self {
        self.notes_first = true;
        self
    }

    /// The text the model reads: the output and the notes, one per line,
    /// a blank line between the two. After a line-oriented output (one that
    /// ends with a newline) the notes end with one too.
    pub fn into_text(self) -> String {
        if self.notes.is_empty() {
            return self.output;
        }
        let notes = self.notes.join("\n");
        if self.notes_first {
            return format!("{notes}\n\n{}", self.output);
        }
        let lines = self.output.ends_with('\n');
        let mut text = self.output;
        text.reserve(notes.len() + 3);
        if !text.is_empty() {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push('\n');
        }
        text.push_str(&notes);
        if lines {
            text.push('\n');
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(body: &str, notes: &[&str]) -> ToolOutput {
        ToolOutput::new(body, Value::Null).with_notes(notes.iter().map(|n| n.to_string()))
    }

    #[test]
    fn without_notes_the_text_is_the_output() {
        assert_eq!(out("a\nb\n", &[]).into_text(), "a\nb\n");
        assert_eq!(out("", &[]).into_text(), "");
    }

    #[test]
    fn notes_follow_lines_after_a_blank_line() {
        assert_eq!(
            out("a:1: x\n", &["[cut]", "[skipped]"]).into_text(),
            "a:1: x\n\n[cut]\n[skipped]\n"
        );
    }

    #[test]
    fn notes_follow_a_summary_after_a_blank_line() {
        assert_eq!(
            out("Replaced 1 occurrence", &["Note: loose"]).into_text(),
            "Replaced 1 occurrence\n\nNote: loose"
        );
    }

    #[test]
    fn notes_alone_when_nothing_was_found() {
        assert_eq!(
            out("", &["No matches.", "Hidden files were skipped."]).into_text(),
            "No matches.\nHidden files were skipped."
        );
    }

    #[test]
    fn notes_first_lead_the_text() {
        assert_eq!(
            out("     1\ta\n", &["WARNING: more"])
                .notes_first()
                .into_text(),
            "WARNING: more\n\n     1\ta\n"
        );
    }
}
