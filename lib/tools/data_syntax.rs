//! A data file's syntax after a change: ag-write, ag-edit and ag-patch
//! parse a `.json` or `.toml` file they changed, in-process, and a
//! change that left it unreadable says so in its result. No language
//! server checks such files, and a weak model that writes `port: 9000`
//! over a JSON config takes "Overwrote config.json" for success; the
//! program that reads the file fails later, far from the cause.
//!
//! Only a change that broke the file warns: a file that did not parse
//! before (JSON with comments, a template) is left to its owner, and a
//! new file that does not parse is named as such.

use std::path::{Path, PathBuf};

use crate::tool_protocol::{Context, Note, ToolError, ToolOutput};

/// Larger files are not parsed again after each change.
const MAX_BYTES: u64 = 8 << 20;

/// The formats checked, by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Json,
    Toml,
}

impl Format {
    fn of(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "json" => Some(Format::Json),
            "toml" => Some(Format::Toml),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Format::Json => "JSON",
            Format::Toml => "TOML",
        }
    }

    /// Why `text` is not valid in this format, with its line and column;
    /// `None` when it is, or when TOML nests deeper than its parser goes
    /// (80 levels): the file may well be valid, and a warning that it is
    /// not would send the caller to fix what is not broken.
    fn error(self, text: &[u8]) -> Option<String> {
        match self {
            // Skipping over values, serde_json keeps no depth: any
            // nesting is read.
            Format::Json => serde_json::from_slice::<serde::de::IgnoredAny>(text)
                .err()
                .map(|e| e.to_string()),
            Format::Toml => {
                let text = match std::str::from_utf8(text) {
                    Ok(t) => t,
                    Err(e) => return Some(format!("not UTF-8 text ({e})")),
                };
                let e = toml::from_str::<toml::Table>(text).err()?;
                let message = e.message().trim_end().to_string();
                if message.contains("recurse further") || message.starts_with("recursion limit") {
                    return None;
                }
                Some(match e.span() {
                    Some(span) => {
                        let (line, column) = line_column(text, span.start);
                        format!("{message} at line {line} column {column}")
                    }
                    None => message,
                })
            }
        }
    }
}

/// The 1-based line and column of byte `at` in `text`.
fn line_column(text: &str, at: usize) -> (usize, usize) {
    let before = &text.as_bytes()[..at.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&before[start..]).chars().count() + 1;
    (line, column)
}

/// The warning for `shown`, a file changed from `before` (`None`: it is
/// new) to `after`: `None` unless it is JSON or TOML by its name and the
/// change made it unreadable in that format.
pub fn broken(shown: &str, before: Option<&[u8]>, after: &[u8]) -> Option<Note> {
    let format = Format::of(Path::new(shown))?;
    if before.is_some_and(|b| format.error(b).is_some()) {
        return None;
    }
    let why = format.error(after)?;
    let name = format.name();
    Some(Note::warning(match before {
        Some(_) => format!(
            "`{shown}` was valid {name} before this change and is not now: {why}. What reads it will fail; fix that spot."
        ),
        None => {
            format!("`{shown}` is not valid {name}: {why}. What reads it will fail; fix that spot.")
        }
    }))
}

/// Why ag-write refuses to put `after` in place of `before` in `shown`: the
/// file is valid JSON or TOML by its name and its text, and `after` is not
/// (nor, for JSON, with comments and trailing commas allowed, as
/// tsconfig.json has them). A weak model wrote `max_age_hours` over a JSON
/// config, and `key: value` lines over a settings.json, each warned and
/// each left broken. `None`: the write may go ahead. An edit or a patch is
/// only warned: one change of several may leave the file broken on the
/// way.
pub fn refused_write(shown: &str, before: &[u8], after: &[u8]) -> Option<String> {
    let format = Format::of(Path::new(shown))?;
    if !checked(shown, before.len() as u64) || format.error(before).is_some() {
        return None;
    }
    let why = format.error(after)?;
    if format == Format::Json && Format::Json.error(&without_comments(after)).is_none() {
        return None;
    }
    let name = format.name();
    Some(format!(
        "`{shown}` holds valid {name}, and this content is not {name} ({why}), so nothing was written: what reads the file would fail. Send the whole file as {name} with the change made in it, or change only that part with edit."
    ))
}

/// Whether a file of this name and size is checked at all: JSON or TOML
/// by its name, and small enough to parse again after each change.
pub fn checked(shown: &str, len: u64) -> bool {
    Format::of(Path::new(shown)).is_some() && len <= MAX_BYTES
}

/// JSON text with its comments (`//`, `/* */`) and trailing commas taken
/// out, for the question whether it is JSON as tools that allow those
/// read it.
fn without_comments(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    let mut in_string = false;
    while i < text.len() {
        let b = text[i];
        if in_string {
            out.push(b);
            if b == b'\\' && i + 1 < text.len() {
                out.push(text[i + 1]);
                i += 1;
            } else if b == b'"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        match (b, text.get(i + 1)) {
            (b'"', _) => in_string = true,
            (b'/', Some(b'/')) => {
                while i < text.len() && text[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            (b'/', Some(b'*')) => {
                i += 2;
                while i < text.len() && !(text[i] == b'*' && text.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i += 2;
                out.push(b' ');
                continue;
            }
            _ => {}
        }
        out.push(b);
        i += 1;
    }
    // A comma followed only by blanks and a closing bracket.
    let mut kept = Vec::with_capacity(out.len());
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in out.iter().enumerate() {
        if in_string {
            in_string = escaped || b != b'"';
            escaped = !escaped && b == b'\\';
        } else if b == b'"' {
            in_string = true;
        } else if b == b','
            && matches!(
                out[i + 1..].iter().find(|c| !c.is_ascii_whitespace()),
                Some(b'}' | b']')
            )
        {
            continue;
        }
        kept.push(b);
    }
    kept
}

/// A file about to be changed by ag-write or ag-edit, with its text
/// before: `None` when it is not JSON or TOML, or too large.
pub struct Watch {
    real: PathBuf,
    shown: String,
    before: Option<Vec<u8>>,
}

impl Watch {
    /// Before a change of `path` (as the call gives it).
    pub fn file(ctx: &Context, path: &str) -> Option<Watch> {
        Format::of(Path::new(path))?;
        let real = ctx.resolve(path).ok()?;
        let before = match ctx.metadata(&real) {
            Ok(m) if m.len() > MAX_BYTES => return None,
            Ok(_) => Some(ctx.read(&real).ok()?),
            Err(_) => None,
        };
        Some(Watch {
            shown: ctx.show(&real),
            real,
            before,
        })
    }

    /// After the change: `out` with the warning, if the change broke the
    /// file.
    pub fn finish(self, ctx: &Context, out: ToolOutput) -> ToolOutput {
        let after = match ctx.metadata(&self.real) {
            Ok(m) if m.len() <= MAX_BYTES => ctx.read(&self.real).ok(),
            _ => None,
        };
        match after.and_then(|a| broken(&self.shown, self.before.as_deref(), &a)) {
            Some(note) => out.with_note(note),
            None => out,
        }
    }

    /// `e`, an edit refused as already applied, with a word on the file
    /// when it is not valid JSON or TOML as it is now (nor, for JSON, with
    /// comments and trailing commas allowed). A weak model's edit broke a
    /// config.json, was warned, and was then sent four times more, each
    /// told only that it looked applied: the change in place is the one
    /// to fix.
    pub fn on_refusal(&self, ctx: &Context, mut e: ToolError) -> ToolError {
        if e.code != "edit.already_applied" {
            return e;
        }
        let Some(format) = Format::of(Path::new(&self.shown)) else {
            return e;
        };
        let Some(now) = ctx
            .read(&self.real)
            .ok()
            .filter(|t| t.len() as u64 <= MAX_BYTES)
        else {
            return e;
        };
        let Some(why) = format.error(&now) else {
            return e;
        };
        if format == Format::Json && Format::Json.error(&without_comments(&now)).is_none() {
            return e;
        }
        e.message.push_str(&format!(
            "\n`{}` is not valid {} as it is now: {why}. The change in place may be the wrong one: read the file and fix that spot.",
            self.shown,
            format.name()
        ));
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_that_would_break_json_or_toml_is_refused() {
        let good = b"{\"max_age_days\": 30, \"folder\": \"logs\"}\n";
        assert_eq!(
            refused_write("cleanup.json", good, b"max_age_hours").unwrap(),
            "`cleanup.json` holds valid JSON, and this content is not JSON (expected value at line 1 column 1), so nothing was written: what reads the file would fail. Send the whole file as JSON with the change made in it, or change only that part with edit."
        );
        assert!(refused_write("cleanup.json", good, b"{\"max_age_days\": 7}").is_none());
        // JSON as tsconfig.json has it: comments, a trailing comma, and
        // comment-like text inside strings left alone.
        let commented =
            b"// strict, for the build\n{\"a\": \"http://x/*y*/\", /* b */ \"c\": [1, 2,],\n}\n";
        assert!(refused_write("tsconfig.json", good, commented).is_none());
        assert!(refused_write("tsconfig.json", good, b"{\"a\": 1 /* open").is_some());
        assert!(refused_write("tsconfig.json", good, b"{\"a\": \"x,}\"").is_some());
        // Not valid before, not JSON by its name, or new: left to its owner.
        assert!(refused_write("data.json", b"{oops", b"port: 1").is_none());
        assert!(refused_write("notes.txt", good, b"port: 1").is_none());
        let toml = b"[server]\nport = 8080\n";
        let e = refused_write("app.toml", toml, b"[server]\nport: 9000\n").unwrap();
        assert!(
            e.starts_with("`app.toml` holds valid TOML, and this content is not TOML ("),
            "{e}"
        );
    }

    #[test]
    fn a_change_that_breaks_json_or_toml_says_where() {
        let good = br#"{"port": 8080}"#;
        let n = broken("config.json", Some(good), b"port: 9000").unwrap();
        assert_eq!(
            n.model_text(),
            "WARNING: `config.json` was valid JSON before this change and is not now: expected value at line 1 column 1. What reads it will fail; fix that spot."
        );
        assert!(broken("config.json", Some(good), br#"{"port": 9000}"#).is_none());
        // Broken before (JSON with comments): not this change's doing.
        assert!(broken("tsconfig.json", Some(b"// c\n{}"), b"// d\n{").is_none());
        let n = broken("new.json", None, b"{\"a\": 1,}").unwrap();
        assert!(
            n.text.starts_with(
                "`new.json` is not valid JSON: key must be a string at line 1 column 9."
            ),
            "{}",
            n.text
        );
        let n = broken(
            "Cargo.toml",
            Some(b"[package]\nname = \"x\"\n"),
            b"[package]\nname = x\n",
        )
        .unwrap();
        assert!(
            n.text
                .contains("was valid TOML before this change and is not now")
                && n.text.contains("at line 2 column 8"),
            "{}",
            n.text
        );
        assert!(broken("notes.txt", Some(good), b"port: 9000").is_none());
        assert!(broken("A.JSON", Some(good), b"{").is_some());
    }

    /// A deeply nested file is not called broken: JSON is read to any
    /// depth, and TOML deeper than its parser goes is not known either
    /// way. The TOML parser does stop there (so one that changes its
    /// message fails here rather than warning), and an error within the
    /// depth it reads is still named.
    #[test]
    fn a_file_deeper_than_the_parser_goes_gets_no_warning() {
        let json = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert!(broken("deep.json", Some(b"{}"), json(10_000).as_bytes()).is_none());
        assert!(broken("deep.json", None, json(10_000).as_bytes()).is_none());
        // Unclosed: broken, and said.
        assert!(broken("open.json", Some(b"{}"), "[".repeat(100).as_bytes()).is_some());
        let toml = |depth: usize| format!("a = {}{}\n", "[".repeat(depth), "]".repeat(depth));
        assert!(toml::from_str::<toml::Table>(&toml(400)).is_err());
        assert!(broken("deep.toml", Some(b"a = 1\n"), toml(400).as_bytes()).is_none());
        let open = format!("a = {}\n", "[".repeat(50));
        assert!(broken("open.toml", Some(b"a = 1\n"), open.as_bytes()).is_some());
        // A shallow error in a deep file is still an error, as the parser
        // stops at the first.
        let n = broken("d.json", Some(b"{}"), format!("x{}", json(400)).as_bytes()).unwrap();
        assert!(
            n.text.contains("expected value at line 1 column 1"),
            "{}",
            n.text
        );
    }

    #[test]
    fn the_watch_reads_the_file_before_and_after() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Context {
            cwd: dir.path().to_path_buf(),
            root: None,
        };
        std::fs::write(dir.path().join("c.json"), "{}").unwrap();
        let w = Watch::file(&ctx, "c.json").unwrap();
        std::fs::write(dir.path().join("c.json"), "{").unwrap();
        let out = w.finish(
            &ctx,
            ToolOutput::new("Overwrote c.json", serde_json::json!({})),
        );
        assert_eq!(out.notes.len(), 1);
        assert!(Watch::file(&ctx, "c.txt").is_none());
        let fresh = Watch::file(&ctx, "d.json").unwrap();
        std::fs::write(dir.path().join("d.json"), "[1]").unwrap();
        let out = fresh.finish(
            &ctx,
            ToolOutput::new("Created d.json", serde_json::json!({})),
        );
        assert!(out.notes.is_empty());
    }
}
