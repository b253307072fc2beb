//! The prompt editor: a multi-line buffer with a cursor and readline's
//! keys (Ctrl+A/E/W/U/K), history across sessions (Up and Down on the
//! first and last line, Ctrl+R to search it), and pasted text taken whole.
//! It only edits text; what a key means beyond that is the app's business.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use unicode_width::UnicodeWidthChar;

/// Entries of the history file read at start (the newest).
const HISTORY_KEPT: usize = 1000;

/// The editor.
#[derive(Debug, Clone, Default)]
pub struct Editor {
    text: String,
    /// Byte offset of the cursor, on a character boundary.
    cursor: usize,
    history: Vec<String>,
    /// Which history entry is shown, while browsing.
    browsing: Option<usize>,
    /// What was typed before browsing began.
    draft: String,
    /// A Ctrl+R search in progress: its query and the entry it found.
    pub search: Option<Search>,
    file: Option<PathBuf>,
}

/// A reverse search through the history.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Search {
    /// What is searched for.
    pub query: String,
    /// The entry found, by index.
    pub found: Option<usize>,
}

impl Editor {
    /// An editor whose history lives in `file` (one JSON string per line),
    /// read now; a missing or unreadable file is an empty history.
    pub fn with_history(file: Option<PathBuf>) -> Editor {
        let history = file.as_deref().map(read_history).unwrap_or_default();
        Editor {
            history,
            file,
            ..Editor::default()
        }
    }

    /// The text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// True when nothing is typed.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The cursor's byte offset.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Replaces the text, cursor at the end.
    pub fn set(&mut self, text: &str) {
        self.text = text.to_string();
        self.cursor = self.text.len();
    }

    /// Types a character.
    pub fn insert(&mut self, c: char) {
        self.browsing = None;
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
    }

    /// Pastes text: line ends normalised, tabs kept, other control
    /// characters dropped (a paste must not smuggle escapes into the prompt).
    pub fn paste(&mut self, text: &str) {
        self.browsing = None;
        let clean: String = text
            .replace("\r\n", "\n")
            .replace('\r', "\n")
            .chars()
            .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
            .collect();
        self.text.insert_str(self.cursor, &clean);
        self.cursor += clean.len();
    }

    /// Deletes the character before the cursor.
    pub fn backspace(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
            self.text.remove(self.cursor);
        }
    }

    /// Deletes the character under the cursor.
    pub fn delete(&mut self) {
        if self.cursor < self.text.len() {
            self.text.remove(self.cursor);
        }
    }

    /// One character left.
    pub fn left(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
        }
    }

    /// One character right.
    pub fn right(&mut self) {
        if let Some(c) = self.text[self.cursor..].chars().next() {
            self.cursor += c.len_utf8();
        }
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |i| self.cursor + i)
    }

    /// Ctrl+A: the start of the line.
    pub fn home(&mut self) {
        self.cursor = self.line_start();
    }

    /// Ctrl+E: the end of the line.
    pub fn end(&mut self) {
        self.cursor = self.line_end();
    }

    /// Ctrl+U: deletes from the start of the line to the cursor.
    pub fn kill_to_start(&mut self) {
        let start = self.line_start();
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Ctrl+K: deletes from the cursor to the end of the line.
    pub fn kill_to_end(&mut self) {
        let end = self.line_end();
        self.text.replace_range(self.cursor..end, "");
    }

    /// Ctrl+W: deletes the word before the cursor (and the blanks after it).
    pub fn kill_word(&mut self) {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end_matches([' ', '\t']);
        let start = trimmed
            .rfind(|c: char| c.is_whitespace())
            .map_or(0, |i| i + 1);
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Up: the line above, or on the first line the previous history entry.
    pub fn up(&mut self) {
        let start = self.line_start();
        if start == 0 {
            self.history_prev();
            return;
        }
        let col = self.text[start..self.cursor].chars().count();
        let prev_start = self.text[..start - 1].rfind('\n').map_or(0, |i| i + 1);
        self.cursor = advance(&self.text, prev_start, start - 1, col);
    }

    /// Down: the line below, or on the last line the next history entry.
    pub fn down(&mut self) {
        let end = self.line_end();
        if end == self.text.len() {
            self.history_next();
            return;
        }
        let col = self.text[self.line_start()..self.cursor].chars().count();
        let next_start = end + 1;
        let next_end = self.text[next_start..]
            .find('\n')
            .map_or(self.text.len(), |i| next_start + i);
        self.cursor = advance(&self.text, next_start, next_end, col);
    }

    fn history_prev(&mut self) {
        let i = match self.browsing {
            Some(0) => return,
            Some(i) => i - 1,
            None if self.history.is_empty() => return,
            None => {
                self.draft = std::mem::take(&mut self.text);
                self.history.len() - 1
            }
        };
        self.browsing = Some(i);
        self.set(&self.history[i].clone());
    }

    fn history_next(&mut self) {
        let Some(i) = self.browsing else { return };
        if i + 1 < self.history.len() {
            self.browsing = Some(i + 1);
            self.set(&self.history[i + 1].clone());
        } else {
            self.browsing = None;
            let draft = std::mem::take(&mut self.draft);
            self.set(&draft);
        }
    }

    /// Ctrl+R: starts a search, or finds the next older match.
    pub fn search_next(&mut self) {
        let search = self.search.get_or_insert_with(Search::default);
        let before = search.found.unwrap_or(self.history.len());
        search.found = find_back(&self.history, &search.query, before).or(search.found);
    }

    /// Types into the search query.
    pub fn search_type(&mut self, c: Option<char>) {
        let Some(search) = self.search.as_mut() else {
            return;
        };
        match c {
            Some(c) => search.query.push(c),
            None => {
                search.query.pop();
            }
        }
        search.found = find_back(&self.history, &search.query, self.history.len());
    }

    /// Ends the search, taking the entry found when `accept`.
    pub fn search_end(&mut self, accept: bool) {
        if let Some(s) = self.search.take()
            && accept
            && let Some(i) = s.found
        {
            self.set(&self.history[i].clone());
        }
    }

    /// The entry a search found.
    pub fn search_found(&self) -> Option<&str> {
        let i = self.search.as_ref()?.found?;
        self.history.get(i).map(String::as_str)
    }

    /// Takes the text to send: the editor empties, the text joins the
    /// history (and its file) unless it repeats the last entry.
    pub fn take(&mut self) -> String {
        let text = std::mem::take(&mut self.text);
        self.cursor = 0;
        self.browsing = None;
        self.draft.clear();
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            self.history.push(text.clone());
            if let Some(file) = &self.file {
                // The history is a convenience: failing to save it must not
                // stop the prompt.
                let _ = append_history(file, &text);
            }
        }
        text
    }

    /// Clears the text (Ctrl+C on a non-empty line).
    pub fn clear(&mut self) {
        self.text.clear();
        self.cursor = 0;
        self.browsing = None;
    }

    /// The text cut into rows of `width` columns, and the cursor's
    /// (row, column) among them.
    pub fn rows(&self, width: usize) -> (Vec<String>, (usize, usize)) {
        let width = width.max(2);
        let mut rows = vec![String::new()];
        let mut col = 0;
        let mut at = (0, 0);
        for (i, c) in self.text.char_indices() {
            if i == self.cursor {
                at = (rows.len() - 1, col);
            }
            if c == '\n' {
                rows.push(String::new());
                col = 0;
                continue;
            }
            let w = c.width().unwrap_or(0);
            if col + w > width {
                rows.push(String::new());
                col = 0;
                if i == self.cursor {
                    at = (rows.len() - 1, 0);
                }
            }
            if let Some(r) = rows.last_mut() {
                r.push(if c == '\t' { ' ' } else { c });
            }
            col += w;
        }
        if self.cursor >= self.text.len() {
            if col >= width {
                rows.push(String::new());
                col = 0;
            }
            at = (rows.len() - 1, col);
        }
        (rows, at)
    }
}

/// The byte offset `col` characters into the line `start..end`.
fn advance(text: &str, start: usize, end: usize, col: usize) -> usize {
    text[start..end]
        .char_indices()
        .nth(col)
        .map_or(end, |(i, _)| start + i)
}

fn find_back(history: &[String], query: &str, before: usize) -> Option<usize> {
    if query.is_empty() {
        return None;
    }
    history[..before.min(history.len())]
        .iter()
        .rposition(|h| h.contains(query))
}

fn read_history(file: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(file) else {
        return Vec::new();
    };
    let mut all: Vec<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<String>(l).ok())
        .collect();
    let skip = all.len().saturating_sub(HISTORY_KEPT);
    all.drain(..skip);
    all
}

fn append_history(file: &Path, text: &str) -> std::io::Result<()> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut line = serde_json::to_string(text).map_err(std::io::Error::other)?;
    line.push('\n');
    // One write of a whole line in append mode: two TUIs writing at once
    // interleave lines, never bytes within a line.
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)?
        .write_all(line.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(s: &str) -> Editor {
        let mut e = Editor::default();
        for c in s.chars() {
            e.insert(c);
        }
        e
    }

    #[test]
    fn readline_keys_edit_the_current_line_only() {
        let mut e = typed("first line\nsecond word");
        e.kill_word();
        assert_eq!(e.text(), "first line\nsecond ");
        e.home();
        e.insert('>');
        assert_eq!(e.text(), "first line\n>second ");
        e.end();
        e.kill_to_start();
        assert_eq!(e.text(), "first line\n");
        e.up();
        e.home();
        e.kill_to_end();
        assert_eq!(e.text(), "\n");
    }

    #[test]
    fn multibyte_text_never_splits_a_character() {
        let mut e = typed("héllo 日本");
        e.left();
        e.backspace();
        assert_eq!(e.text(), "héllo 本");
        e.home();
        e.right();
        e.right();
        e.delete();
        assert_eq!(e.text(), "hélo 本");
        e.kill_word();
        assert_eq!(e.text(), "lo 本");
    }

    #[test]
    fn up_and_down_walk_lines_then_history_and_restore_the_draft() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("h/history.jsonl");
        let mut e = Editor::with_history(Some(file.clone()));
        e.paste("one\ntwo");
        assert_eq!(e.take(), "one\ntwo");
        e.paste("three");
        e.take();
        e.paste("draft");
        e.up();
        assert_eq!(e.text(), "three");
        e.up();
        assert_eq!(e.text(), "one\ntwo");
        // On the last line of a multi-line entry, Up moves within it.
        e.up();
        assert_eq!(e.text(), "one\ntwo");
        assert_eq!(e.cursor(), 3);
        e.down();
        e.down();
        assert_eq!(e.text(), "three");
        e.down();
        assert_eq!(e.text(), "draft");
        // A new editor reads what the first one saved, multi-line intact.
        let mut again = Editor::with_history(Some(file));
        again.up();
        assert_eq!(again.text(), "three");
        again.up();
        assert_eq!(again.text(), "one\ntwo");
    }

    #[test]
    fn ctrl_r_finds_older_matches_in_turn() {
        let mut e = Editor::default();
        for h in ["cargo test", "git status", "cargo build"] {
            e.set(h);
            e.take();
        }
        e.search_next();
        for c in "cargo".chars() {
            e.search_type(Some(c));
        }
        assert_eq!(e.search_found(), Some("cargo build"));
        e.search_next();
        assert_eq!(e.search_found(), Some("cargo test"));
        // No older match: stays on the last one found.
        e.search_next();
        assert_eq!(e.search_found(), Some("cargo test"));
        e.search_end(true);
        assert_eq!(e.text(), "cargo test");
    }

    #[test]
    fn paste_normalises_line_ends_and_drops_escapes() {
        let mut e = Editor::default();
        e.paste("a\r\nb\rc\x1b[31m\td");
        assert_eq!(e.text(), "a\nb\nc[31m\td");
    }

    #[test]
    fn rows_wrap_at_the_width_and_place_the_cursor() {
        let mut e = typed("abcdef\ngh");
        assert_eq!(
            e.rows(4),
            (vec!["abcd".into(), "ef".into(), "gh".into()], (2, 2))
        );
        e.set("abcd");
        assert_eq!(e.rows(4), (vec!["abcd".into(), String::new()], (1, 0)));
        e.home();
        assert_eq!(e.rows(4).1, (0, 0));
    }
}
