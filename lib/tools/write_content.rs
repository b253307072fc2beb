//! What a whole-file write does to its content before it is written, and
//! what it says of the text written beside what the file held: shared by
//! ag-write (the file on disk) and ag-acp's write through the editor (its
//! buffer), so that a model's write lands the same way through either.

use serde_json::{Value, json};

use super::code_fence::{self, Wrapper};
use crate::fsutil::content_hash;
use crate::tool_protocol::ToolOutput;

/// A write's content, made ready to be written.
pub(crate) struct Prepared {
    /// The bytes to write.
    pub content: Vec<u8>,
    /// The text inside a chat's fence that was kept (the file may hold
    /// one): a file that already holds it is left alone too.
    fenced: Option<Vec<u8>>,
    /// The wrapper around the whole content, if there was one.
    wrapper: Option<Wrapper>,
    /// Whether the wrapper was left out.
    unfenced: bool,
    /// The lines (1-based) whose lost escapes were restored.
    restored_lines: Vec<usize>,
    /// Whether the file's last line break was kept.
    ending_kept: bool,
}

/// Makes `content` ready to be written to `shown`, which holds `before`
/// (`None`: a new file, or one too large to compare with):
/// - the whole content in a chat's code fence: in a file that cannot hold
///   one (a .py, a .json), the fence is left out; in one that can (a
///   README), it is written as given, unless the text inside is the
///   file's own (`Prepared::unchanged`). A `<pre><code>` block likewise,
///   but in a file that may hold HTML it is always written as given:
///   wrapping a page's text in one is an edit a person makes;
/// - escapes of the file's that the model's JSON turned into the
///   characters they stand for are restored on lines it kept
///   (`lost_escapes`);
/// - a file that ends in a line break keeps it: a model writing a file
///   back leaves the last one out, and that alone is no change it meant.
pub(crate) fn prepare(shown: &str, before: Option<&[u8]>, content: Vec<u8>) -> Prepared {
    let wrapped = std::str::from_utf8(&content)
        .ok()
        .and_then(code_fence::unwrapped)
        .map(|(inner, wrapper)| (inner.as_bytes().to_vec(), wrapper));
    let wrapper = wrapped.as_ref().map(|(_, w)| *w);
    let (mut content, unfenced, fenced) = match wrapped {
        Some((inner, w)) if !w.may_be_held_by(shown) => (inner, true, None),
        Some((inner, Wrapper::Fence)) => (content, false, Some(inner)),
        _ => (content, false, None),
    };
    let mut restored_lines = Vec::new();
    if let Some(old) = before.and_then(|b| std::str::from_utf8(b).ok())
        && let Ok(new) = std::str::from_utf8(&content)
        && let Some((text, lines)) = super::lost_escapes::restored(old, new)
    {
        content = text.into_bytes();
        restored_lines = lines;
    }
    let ending = before.and_then(|b| {
        // A CRLF file's `\r\n`, unless the content's own lines end in `\n`
        // alone: its last line ends as its others do.
        let lf_lines = content.contains(&b'\n') && !content.windows(2).any(|w| w == b"\r\n");
        let kept: &[u8] = if b.ends_with(b"\r\n") && !lf_lines {
            b"\r\n"
        } else {
            b"\n"
        };
        (b.ends_with(b"\n") && !content.is_empty() && !content.ends_with(b"\n")).then_some(kept)
    });
    if let Some(ending) = ending {
        content.extend_from_slice(ending);
    }
    Prepared {
        content,
        fenced,
        wrapper,
        unfenced,
        restored_lines,
        ending_kept: ending.is_some(),
    }
}

impl Prepared {
    /// The answer to a write of the text the file already holds (a weak
    /// model does that and takes it for a change), or of that text inside
    /// a code fence, as a chat shows it: the file is left alone. `holds`
    /// says whether the file holds the given bytes. `None`: the write
    /// changes the file.
    pub(crate) fn unchanged(
        &self,
        shown: &str,
        holds: impl Fn(&[u8]) -> bool,
    ) -> Option<ToolOutput> {
        let (held, how) = match self.fenced.as_deref() {
            Some(inner) if holds(inner) => (
                inner,
                format!(
                    ", inside the {} the content wraps it in (a chat shows text that way; the wrapper is not the file's)",
                    self.wrapper_shown()
                ),
            ),
            _ if holds(&self.content) => (&self.content[..], String::new()),
            _ => return None,
        };
        let (_, mut details) = written(shown, held, false);
        details["unchanged"] = json!(true);
        Some(ToolOutput::new(
            format!(
                "{shown} already holds exactly this text ({} bytes){how}: nothing was changed",
                held.len()
            ),
            details,
        ))
    }

    fn wrapper_shown(&self) -> &'static str {
        self.wrapper.map_or("", Wrapper::shown)
    }

    /// Adds to the answer of a write that was made what was done to its
    /// content (`prepare`) and what the text written is beside `before`,
    /// what the file held (compared when small enough) and `size_before`,
    /// its size.
    pub(crate) fn note(
        &self,
        before: Option<&[u8]>,
        size_before: Option<u64>,
        output: &mut String,
        details: &mut Value,
    ) {
        let content = &self.content;
        if self.unfenced {
            output.push_str(&format!(
                "; the {} around the content was left out: a chat shows code that way, and this file does not hold it",
                self.wrapper_shown()
            ));
            details["unfenced"] = json!(true);
        }
        if let Some((last, rest)) = self.restored_lines.split_last() {
            let (which, were) = if rest.is_empty() {
                (format!("line {last} was the file's own line"), "it was")
            } else {
                let rest: Vec<String> = rest.iter().map(usize::to_string).collect();
                (
                    format!(
                        "lines {} and {last} were the file's own lines",
                        rest.join(", ")
                    ),
                    "they were",
                )
            };
            output.push_str(&format!(
                "; {which} with escapes (`\\n`, `\\t`, `\\r`) sent as the characters they stand for, so {were} written as the file held them (in a JSON string a backslash is written `\\\\`)"
            ));
            details["escapes_restored"] = json!(self.restored_lines);
        }
        if self.ending_kept {
            output.push_str(
                "; the content had no line break at its end, and the file's last one was kept",
            );
            details["final_line_break_kept"] = json!(true);
        }
        // The file written back with a blank line or some spaces lost: a
        // weak model takes "Overwrote" for the change it was asked to make.
        if let Some(old) = before
            && same_but_spacing(old, content)
        {
            output.push_str(
                "; it differs from what the file held only in blank lines and spaces, so its text is as it was",
            );
            details["spacing_only"] = json!(true);
        } else if let Some(old) = before
            && let Some(gone) = lines_taken_out(old, content)
        {
            // The file written back with a line or two of it lost (its
            // shebang, its first comment): nothing the model was asked for.
            let shown_lines: Vec<String> = gone
                .iter()
                .take(3)
                .map(|(n, text)| format!("{n} `{text}`"))
                .collect();
            let more = if gone.len() > 3 {
                format!(" and {} more", gone.len() - 3)
            } else {
                String::new()
            };
            output.push_str(&format!(
                "; it only took out lines the file held (line {}{more}): nothing was added or changed",
                shown_lines.join(", line ")
            ));
            details["lines_taken_out"] = json!(gone.iter().map(|(n, _)| n).collect::<Vec<_>>());
        }
        // A weak model asked to change a part of a file often writes that
        // part alone over the whole: say what went, while the checkpoint
        // still has it.
        if let Some(before) = size_before
            && before >= SHRINK_NOTED_FROM
            && before > 2 * content.len() as u64
        {
            output.push_str(&format!(
                "; it held {before} bytes before, so most of what it held is gone. To change a part of a file, edit that part instead"
            ));
            details["size_before"] = json!(before);
        }
    }
}

/// What `write` says of a file it wrote (`is_new`: it created it), and
/// its details; also the answer of a write through an editor (see
/// `crate::acp::editor_fs`).
pub fn written(shown: &str, content: &[u8], is_new: bool) -> (String, serde_json::Value) {
    let size = content.len();
    let output = if is_new {
        format!("Created new file {shown} ({size} bytes)")
    } else {
        format!("Overwrote {shown} ({size} bytes)")
    };
    let details = json!({
        "file_path": shown,
        "size": size,
        "is_new": is_new,
        "hash": content_hash(content),
    });
    (output, details)
}

/// Whether two texts hold the same words in the same lines, once blank
/// lines and the spaces around each line are left out.
fn same_but_spacing(a: &[u8], b: &[u8]) -> bool {
    fn words(t: &[u8]) -> impl Iterator<Item = &[u8]> {
        t.split(|&c| c == b'\n')
            .map(<[u8]>::trim_ascii)
            .filter(|l| !l.is_empty())
    }
    words(a).eq(words(b))
}

/// The lines (1-based number in `old`, text cut to 60 characters) that
/// `new` leaves out of `old`, when that is all it does: its lines, blank
/// ones and spaces around them aside, are `old`'s in order with some taken
/// out and none added or changed. `None` when it adds or changes one.
fn lines_taken_out(old: &[u8], new: &[u8]) -> Option<Vec<(usize, String)>> {
    let text = |l: &[u8]| String::from_utf8_lossy(l.trim_ascii()).into_owned();
    let mut kept = new
        .split(|&c| c == b'\n')
        .map(<[u8]>::trim_ascii)
        .filter(|l| !l.is_empty())
        .peekable();
    let mut gone = Vec::new();
    for (i, line) in old.split(|&c| c == b'\n').enumerate() {
        let line = line.trim_ascii();
        if line.is_empty() {
            continue;
        }
        if kept.peek() == Some(&line) {
            kept.next();
        } else {
            let t = text(line);
            let cut: String = t.chars().take(60).collect();
            gone.push((
                i + 1,
                if cut.len() < t.len() {
                    cut + "…"
                } else {
                    cut
                },
            ));
        }
    }
    (kept.peek().is_none() && !gone.is_empty()).then_some(gone)
}

/// A file at least this large that a write shrinks to under half is
/// pointed out: smaller ones are often rewritten whole on purpose.
const SHRINK_NOTED_FROM: u64 = 200;

/// Files up to this size are read before a write, to restore escapes it
/// lost and keep their last line break.
pub(crate) const COMPARED_UP_TO: u64 = 1 << 20;

/// Why a write of `content` over `shown`, a file that holds `held` bytes,
/// is refused when the content is an elision mark alone (`...`, `// ...`,
/// `<!-- … -->`): the mark stands for text the model left out, and written
/// it would put three dots in place of the whole file (a small model wrote
/// `...` over a 1,307-byte Go program). An empty file, or a new one, may
/// get any text.
pub(crate) fn elision_mark_over(shown: &str, held: u64, content: &[u8]) -> Option<String> {
    if held == 0 {
        return None;
    }
    let text = std::str::from_utf8(content).ok()?.trim();
    let inner = text
        .trim_start_matches(['/', '#', '*', '<', '!', '-', ';', ' '])
        .trim_end_matches(['/', '*', '>', '-', ' '])
        .trim();
    let mark = !inner.is_empty()
        && inner.chars().all(|c| c == '.' || c == '…' || c == ' ')
        && (inner.contains('…') || inner.matches('.').count() >= 3);
    mark.then(|| {
        format!(
            "the content is `{text}` alone, a mark for text left out, not the text of `{shown}` ({held} bytes), so nothing was written. Send the file's whole new text as content, or change only the part that changes with edit."
        )
    })
}

#[cfg(test)]
mod tests {
    use super::elision_mark_over;

    #[test]
    fn an_elision_mark_alone_is_no_file_text() {
        for mark in [
            "...",
            "…\n",
            "// ...",
            "# ...\n",
            "<!-- ... -->",
            "/* … */",
            ". . .",
        ] {
            let why = elision_mark_over("main.go", 1307, mark.as_bytes())
                .unwrap_or_else(|| panic!("{mark:?}"));
            assert!(why.contains("nothing was written"), "{why}");
        }
        // An empty or new file may get anything; text around the dots is
        // text; two dots are no mark.
        assert!(elision_mark_over("a.txt", 0, b"...").is_none());
        for text in ["..\n", "wait...", "// TODO ...", "1...3", "---"] {
            assert!(
                elision_mark_over("a.txt", 10, text.as_bytes()).is_none(),
                "{text:?}"
            );
        }
    }
}
