//! A successful call's output: the result itself, and apart from it the
//! notes about the result (what was cut, skipped or not found, what to try
//! next). The model reads both as one text, laid out here; the plain
//! command line prints the result on stdout and the notes on stderr, so
//! that `ag-grep fn src | wc -l` counts matches and nothing else.

use serde_json::Value;

use crate::protocol::ImageData;

/// How a note stands apart from the output in the model's text. The plain
/// command line needs no mark: its notes go to stderr after `bin: note:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteLevel {
    /// A sentence that reads as part of the answer: "No matches for `x`."
    Plain,
    /// An aside about the output, such as where it was cut: `[...]`.
    Aside,
    /// Something the model should check: `Note: ...`.
    Notice,
    /// Something the model must not miss: `WARNING: ...`.
    Warning,
}

/// One note about a call's output: its text without marks, and its level,
/// which decides the marks the model reads around it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// How the note is marked for the model.
    pub level: NoteLevel,
    /// The note itself, as the plain command line prints it.
    pub text: String,
}

impl Note {
    /// A note at `level`.
    pub fn new(level: NoteLevel, text: impl Into<String>) -> Self {
        Note {
            level,
            text: text.into(),
        }
    }

    /// An unmarked note.
    pub fn plain(text: impl Into<String>) -> Self {
        Note::new(NoteLevel::Plain, text)
    }

    /// An aside, in brackets for the model.
    pub fn aside(text: impl Into<String>) -> Self {
        Note::new(NoteLevel::Aside, text)
    }

    /// A `Note: ` for the model.
    pub fn notice(text: impl Into<String>) -> Self {
        Note::new(NoteLevel::Notice, text)
    }

    /// A `WARNING: ` for the model.
    pub fn warning(text: impl Into<String>) -> Self {
        Note::new(NoteLevel::Warning, text)
    }

    /// The note as the model reads it, with its marks.
    pub fn model_text(&self) -> String {
        let t = &self.text;
        match self.level {
            NoteLevel::Plain => t.clone(),
            NoteLevel::Aside => format!("[{t}]"),
            NoteLevel::Notice => format!("Note: {t}"),
            NoteLevel::Warning => format!("WARNING: {t}"),
        }
    }
}

impl From<String> for Note {
    fn from(text: String) -> Self {
        Note::plain(text)
    }
}

impl From<&str> for Note {
    fn from(text: &str) -> Self {
        Note::plain(text)
    }
}

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
    pub notes: Vec<Note>,
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
    pub fn with_note(mut self, note: impl Into<Note>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// Adds notes after those already there.
    pub fn with_notes<N: Into<Note>>(mut self, notes: impl IntoIterator<Item = N>) -> Self {
        self.notes.extend(notes.into_iter().map(Into::into));
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
        let notes = self
            .notes
            .iter()
            .map(Note::model_text)
            .collect::<Vec<_>>()
            .join("\n");
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

    fn out(body: &str, notes: &[Note]) -> ToolOutput {
        ToolOutput::new(body, Value::Null).with_notes(notes.iter().cloned())
    }

    #[test]
    fn without_notes_the_text_is_the_output() {
        assert_eq!(out("a\nb\n", &[]).into_text(), "a\nb\n");
        assert_eq!(out("", &[]).into_text(), "");
    }

    #[test]
    fn notes_follow_lines_after_a_blank_line() {
        assert_eq!(
            out("a:1: x\n", &[Note::aside("cut"), Note::aside("skipped")]).into_text(),
            "a:1: x\n\n[cut]\n[skipped]\n"
        );
    }

    #[test]
    fn notes_follow_a_summary_after_a_blank_line() {
        assert_eq!(
            out("Replaced 1 occurrence", &[Note::notice("loose")]).into_text(),
            "Replaced 1 occurrence\n\nNote: loose"
        );
    }

    #[test]
    fn notes_alone_when_nothing_was_found() {
        assert_eq!(
            out(
                "",
                &["No matches.".into(), "Hidden files were skipped.".into()]
            )
            .into_text(),
            "No matches.\nHidden files were skipped."
        );
    }

    #[test]
    fn notes_first_lead_the_text() {
        assert_eq!(
            out("     1\ta\n", &[Note::warning("more")])
                .notes_first()
                .into_text(),
            "WARNING: more\n\n     1\ta\n"
        );
    }

    #[test]
    fn a_note_is_marked_once_for_the_model_and_kept_whole_for_stderr() {
        // Brackets inside the text are the text's own: nothing strips them.
        let n = Note::aside("stops in `[id].tsx`.");
        assert_eq!(n.model_text(), "[stops in `[id].tsx`.]");
        assert_eq!(n.text, "stops in `[id].tsx`.");
        let n = Note::plain("[a] and [b]");
        assert_eq!(n.model_text(), "[a] and [b]");
        assert_eq!(Note::notice("Note: x").model_text(), "Note: Note: x");
    }
}
