//! Files attached to a prompt (`ag-loop --attach FILE`, `@path` mentions,
//! the `attachments` of a prompt command, ag-tui's `/attach`): an image
//! becomes an image block, a PDF the text of its pages with page markers, any
//! other file a text block headed by its name. Limits keep a prompt in
//! bounds, and whatever they cut is said in the block, with how to read the
//! rest. What may be read at all, and whether the model takes images, is the
//! caller's (ag-loop's) to decide: this module only reads and shapes.

pub mod mentions;
use crate::pdf;

use std::fs::File;
use std::io::Read;

use base64::Engine;

use crate::protocol::ContentBlock;

/// Characters of one file's text attached, at most.
pub const MAX_TEXT_CHARS: usize = 100_000;
/// Characters of text attached to one prompt, all files together.
pub const MAX_TOTAL_CHARS: usize = 250_000;
/// The largest image attached (what the providers take per image).
pub const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;
/// Images attached to one prompt, at most.
pub const MAX_IMAGES: usize = 20;
/// The largest PDF read.
pub const MAX_PDF_BYTES: u64 = 64 * 1024 * 1024;
/// Bytes looked at to tell an image, a PDF, text and other binary files apart.
const PROBE_BYTES: usize = 8192;

/// A file that could not be attached: a stable code and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot attach `{shown}`: {message}")]
pub struct AttachError {
    /// The file as the person named it.
    pub shown: String,
    /// `attach.binary`, `attach.too_large`, ...
    pub code: &'static str,
    /// Why, and what would work.
    pub message: String,
}

impl AttachError {
    /// An error about `shown`.
    pub fn new(shown: &str, code: &'static str, message: impl Into<String>) -> Self {
        AttachError {
            shown: shown.to_string(),
            code,
            message: message.into(),
        }
    }
}

/// What kind of file it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// An image of this media type.
    Image(&'static str),
    /// A PDF of this many pages.
    Pdf(usize),
    /// Text.
    Text,
}

/// An attached file, as blocks for the user message.
#[derive(Debug, Clone, PartialEq)]
pub struct Attached {
    /// The file as the person named it.
    pub shown: String,
    /// What it is.
    pub kind: Kind,
    /// A text block naming it, then its content (text or an image).
    pub blocks: Vec<ContentBlock>,
    /// Characters of text it used of the prompt's budget.
    pub chars: usize,
    /// What the limits cut, when they cut something.
    pub cut: Option<String>,
}

/// Reads an opened file as an attachment, within `budget` characters of
/// text. `shown` names it in the blocks and in errors.
pub fn load(mut file: File, shown: &str, budget: usize) -> Result<Attached, AttachError> {
    let io =
        |e: std::io::Error| AttachError::new(shown, "attach.io", format!("cannot read it: {e}"));
    let meta = file.metadata().map_err(io)?;
    if meta.is_dir() {
        return Err(AttachError::new(
            shown,
            "attach.directory",
            "it is a directory; attach the files in it one by one",
        ));
    }
    let size = meta.len();
    let mut probe = Vec::with_capacity(PROBE_BYTES);
    (&mut file)
        .take(PROBE_BYTES as u64)
        .read_to_end(&mut probe)
        .map_err(io)?;
    if let Some(mime) = image_type(&probe) {
        return image(file, probe, shown, mime, size);
    }
    if is_pdf(&probe) {
        return pdf_text(file, probe, shown, size, budget);
    }
    if probe.contains(&0) {
        return Err(AttachError::new(
            shown,
            "attach.binary",
            "it is a binary file; images (PNG, JPEG, GIF, WebP), PDFs and text files can be attached",
        ));
    }
    text(file, probe, shown, size, budget)
}

/// Reads an opened file as an attachment of text only: an image, a PDF or
/// another binary file is `attach.not_text` without being read further
/// (for files shown with a prompt unasked, where only text is wanted).
pub fn load_text(mut file: File, shown: &str, budget: usize) -> Result<Attached, AttachError> {
    let io =
        |e: std::io::Error| AttachError::new(shown, "attach.io", format!("cannot read it: {e}"));
    let meta = file.metadata().map_err(io)?;
    let mut probe = Vec::with_capacity(PROBE_BYTES);
    (&mut file)
        .take(PROBE_BYTES as u64)
        .read_to_end(&mut probe)
        .map_err(io)?;
    if meta.is_dir() || image_type(&probe).is_some() || is_pdf(&probe) || probe.contains(&0) {
        return Err(AttachError::new(
            shown,
            "attach.not_text",
            "it is not a text file",
        ));
    }
    text(file, probe, shown, meta.len(), budget)
}

/// The media type of an image by its first bytes.
fn image_type(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if head.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// A PDF's header may follow up to a kilobyte of other bytes.
fn is_pdf(head: &[u8]) -> bool {
    let window = &head[..head.len().min(1024)];
    window.windows(5).any(|w| w == b"%PDF-")
}

fn read_rest(
    file: File,
    mut bytes: Vec<u8>,
    limit: u64,
    shown: &str,
) -> Result<Vec<u8>, AttachError> {
    file.take(limit.saturating_sub(bytes.len() as u64))
        .read_to_end(&mut bytes)
        .map_err(|e| AttachError::new(shown, "attach.io", format!("cannot read it: {e}")))?;
    Ok(bytes)
}

fn image(
    file: File,
    probe: Vec<u8>,
    shown: &str,
    mime: &'static str,
    size: u64,
) -> Result<Attached, AttachError> {
    if size > MAX_IMAGE_BYTES {
        return Err(AttachError::new(
            shown,
            "attach.too_large",
            format!(
                "the image is {}, more than the {} an image may have; scale it down or crop it, then attach that",
                human_bytes(size),
                human_bytes(MAX_IMAGE_BYTES)
            ),
        ));
    }
    let bytes = read_rest(file, probe, MAX_IMAGE_BYTES + 1, shown)?;
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    Ok(Attached {
        shown: shown.to_string(),
        kind: Kind::Image(mime),
        blocks: vec![
            ContentBlock::Text {
                text: format!(
                    "[Attached image `{shown}` ({mime}, {})]",
                    human_bytes(bytes.len() as u64)
                ),
            },
            ContentBlock::Image {
                data,
                mime_type: mime.to_string(),
            },
        ],
        chars: 0,
        cut: None,
    })
}

fn pdf_text(
    file: File,
    probe: Vec<u8>,
    shown: &str,
    size: u64,
    budget: usize,
) -> Result<Attached, AttachError> {
    if size > MAX_PDF_BYTES {
        return Err(AttachError::new(
            shown,
            "attach.too_large",
            format!(
                "the PDF is {}, more than the {} a PDF may have; {}",
                human_bytes(size),
                human_bytes(MAX_PDF_BYTES),
                smaller_part(shown)
            ),
        ));
    }
    let bytes = read_rest(file, probe, MAX_PDF_BYTES + 1, shown)?;
    let pdf = pdf::read(&bytes, budget).map_err(|refusal| {
        if refusal.is_limit() {
            AttachError::new(
                shown,
                "attach.too_large",
                format!("{refusal}; {}", smaller_part(shown)),
            )
        } else {
            AttachError::new(shown, "attach.pdf", refusal.to_string())
        }
    })?;
    drop(bytes);
    let count = pdf.count;
    let read = pdf.pages.len();
    let limit = if budget < MAX_TEXT_CHARS {
        " left for this prompt"
    } else {
        " for one file"
    };
    let mut body = String::new();
    let mut used = 0usize;
    let mut cut = None;
    for (i, page) in pdf.pages.iter().enumerate() {
        let n = i + 1;
        body.push_str(&format!("--- page {n} ---\n"));
        let text = shown_page(page);
        let len = text.chars().count();
        let room = budget - used;
        // The last page read, when the text stopped on it, goes on.
        let goes_on = n == read && pdf.end == pdf::End::Text;
        if len <= room && !goes_on {
            body.push_str(&text);
            body.push('\n');
            used += len;
            continue;
        }
        body.extend(text.chars().take(room));
        used += len.min(room);
        let rest = match count - n {
            0 => format!("the rest of page {n} is"),
            1 => format!("the rest of page {n} and page {count} are"),
            _ => format!("the rest of page {n} and pages {}-{count} are", n + 1),
        };
        let note = format!(
            "{rest} left out: {used} characters of the PDF's text are attached (the limit{limit}); {}",
            pages_apart(shown, n, count)
        );
        body.push_str(&format!("\n[... cut: {note} ...]\n"));
        cut = Some(note);
        break;
    }
    if pdf.end == pdf::End::Content && read < count {
        let first = read + 1;
        let pages = if first == count {
            format!("page {first} is")
        } else {
            format!("pages {first}-{count} are")
        };
        let note = format!(
            "{pages} left out: reading them would inflate more than the {} MiB of page content ag reads of one PDF; {}",
            pdf::limits::MAX_CONTENT >> 20,
            pages_apart(shown, first, count)
        );
        body.push_str(&format!("[... cut: {note} ...]\n"));
        cut = Some(note);
    }
    let header = format!(
        "[Attached PDF `{shown}`: {count} page{}, its text]\n",
        if count == 1 { "" } else { "s" }
    );
    Ok(Attached {
        shown: shown.to_string(),
        kind: Kind::Pdf(count),
        blocks: vec![ContentBlock::Text {
            text: format!("{header}{}", body.trim_end()),
        }],
        chars: used,
        cut,
    })
}

/// A page's text as attached: what could not be read is said.
fn shown_page(page: &pdf::Page) -> String {
    match (&page.problem, page.text.is_empty()) {
        (None, true) => "(no text on this page: it may be a scanned image)".to_string(),
        (None, false) => page.text.clone(),
        (Some(why), true) => format!("(the text of this page could not be read: {why})"),
        (Some(why), false) => format!(
            "{}\n(some of this page's text could not be read: {why})",
            page.text
        ),
    }
}

/// What to do with a PDF that is over a limit.
fn smaller_part(shown: &str) -> String {
    let name = shell_word(shown);
    format!(
        "attach a part of it (the first 50 pages: `qpdf {name} --pages . 1-50 -- part.pdf`) or its text (`pdftotext {name} part.txt`)"
    )
}

/// How to attach pages `from`-`to` of a PDF on their own.
fn pages_apart(shown: &str, from: usize, to: usize) -> String {
    let range = if from == to {
        from.to_string()
    } else {
        format!("{from}-{to}")
    };
    format!(
        "to read on, attach those pages on their own (`qpdf {} --pages . {range} -- rest.pdf`)",
        shell_word(shown)
    )
}

/// `text` as one word for a shell, quoted only when it needs to be.
fn shell_word(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "._-/+,:@".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

fn text(
    file: File,
    probe: Vec<u8>,
    shown: &str,
    size: u64,
    budget: usize,
) -> Result<Attached, AttachError> {
    // Enough bytes for `budget` characters, and one more to know the
    // text goes on.
    let want = (budget as u64).saturating_mul(4).saturating_add(4);
    let bytes = read_rest(file, probe, want, shown)?;
    let valid_up_to = match std::str::from_utf8(&bytes) {
        Ok(_) => bytes.len(),
        Err(e) => e.valid_up_to(),
    };
    let decoded = String::from_utf8_lossy(&bytes);
    let mut kept: String = decoded.chars().take(budget).collect();
    let more = kept.len() < decoded.len() || (bytes.len() as u64) < size;
    let lossy = kept.len() > valid_up_to;
    let mut cut = None;
    if more {
        let next_line = kept.matches('\n').count() + 1;
        let note = format!(
            "the file has {} ({}); its first {} characters are attached (the limit{}); the read tool shows the rest from line {next_line}",
            human_bytes(size),
            if size > bytes.len() as u64 {
                "more than was read".to_string()
            } else {
                format!("{} characters", decoded.chars().count())
            },
            kept.chars().count(),
            if budget < MAX_TEXT_CHARS {
                " left for this prompt"
            } else {
                " for one file"
            }
        );
        if !kept.ends_with('\n') {
            kept.push('\n');
        }
        kept.push_str(&format!("[... cut: {note} ...]"));
        cut = Some(note);
    }
    if lossy {
        kept.push_str("\n[The file is not valid UTF-8; invalid bytes are shown as U+FFFD.]");
    }
    let chars = kept.chars().count().min(budget);
    Ok(Attached {
        shown: shown.to_string(),
        kind: Kind::Text,
        blocks: vec![ContentBlock::Text {
            text: format!(
                "[Attached file `{shown}` ({})]\n{}",
                human_bytes(size),
                kept.trim_end_matches('\n')
            ),
        }],
        chars,
        cut,
    })
}

/// Marks the block that names an attached file (see [`shown_text`]).
const HEADER: &str = "[Attached ";

/// The line that names each attachment of `content` (a file, an image, a
/// PDF, the project's list): ag's words about the prompt, never text of a
/// file (`crate::agent::calls::echo` refuses a write that holds one).
pub fn headers(content: &crate::protocol::UserContent) -> Vec<String> {
    match content {
        crate::protocol::UserContent::Text(_) => Vec::new(),
        crate::protocol::UserContent::Blocks(blocks) => blocks
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } if text.starts_with(HEADER) => {
                    Some(text.lines().next().unwrap_or_default().trim().to_string())
                }
                _ => None,
            })
            .collect(),
    }
}

/// A prompt as a display shows it: its text, and each attached file as
/// the one line that names it, not its whole content.
pub fn shown_text(content: &crate::protocol::UserContent) -> String {
    use crate::protocol::UserContent;
    match content {
        UserContent::Text(t) => t.clone(),
        UserContent::Blocks(blocks) => blocks
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } if text.starts_with(HEADER) => {
                    Some(text.lines().next().unwrap_or_default().to_string())
                }
                ContentBlock::Text { text } => Some(text.clone()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// `12 bytes`, `3 KiB`, `1.5 MiB`.
fn human_bytes(n: u64) -> String {
    crate::tools::bash::human_bytes(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file(bytes: &[u8]) -> File {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(bytes).unwrap();
        use std::io::Seek;
        f.rewind().unwrap();
        f
    }

    fn text_of(a: &Attached) -> String {
        a.blocks
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } => Some(text.clone()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn a_text_file_is_a_block_headed_by_its_name() {
        let a = load(file(b"line one\nline two\n"), "notes.md", MAX_TEXT_CHARS).unwrap();
        assert_eq!(a.kind, Kind::Text);
        assert_eq!(
            text_of(&a),
            "[Attached file `notes.md` (18 bytes)]\nline one\nline two"
        );
        assert_eq!(a.cut, None);
        assert_eq!(a.chars, 18);
    }

    #[test]
    fn a_long_text_is_cut_and_says_where_to_read_on() {
        let body: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let a = load(file(body.as_bytes()), "big.log", 50).unwrap();
        let t = text_of(&a);
        assert!(t.contains("line 1\n"), "{t}");
        assert!(!t.contains("line 20\n"), "{t}");
        let cut = a.cut.unwrap();
        assert!(
            cut.contains("its first 50 characters are attached"),
            "{cut}"
        );
        assert!(cut.contains("from line 8"), "{cut}");
        assert!(cut.contains("left for this prompt"), "{cut}");
        assert!(t.ends_with(&format!("[... cut: {cut} ...]")), "{t}");
    }

    #[test]
    fn invalid_utf8_is_said() {
        let a = load(file(b"caf\xe9 au lait\n"), "menu.txt", MAX_TEXT_CHARS).unwrap();
        let t = text_of(&a);
        assert!(t.contains("caf\u{fffd} au lait"), "{t}");
        assert!(t.contains("not valid UTF-8"), "{t}");
        // A cut inside a character is not taken for bad bytes.
        let a = load(file("é".repeat(100).as_bytes()), "e.txt", 10).unwrap();
        assert!(!text_of(&a).contains("not valid UTF-8"));
    }

    #[test]
    fn images_by_their_bytes_and_binaries_refused() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        let a = load(file(png), "shot.png", MAX_TEXT_CHARS).unwrap();
        assert_eq!(a.kind, Kind::Image("image/png"));
        let ContentBlock::Image { data, mime_type } = &a.blocks[1] else {
            panic!("{a:?}")
        };
        assert_eq!(mime_type, "image/png");
        assert_eq!(
            base64::engine::general_purpose::STANDARD
                .decode(data)
                .unwrap(),
            png
        );
        // The name does not decide: a PNG called .txt is an image.
        assert!(matches!(
            load(file(png), "x.txt", 10).unwrap().kind,
            Kind::Image(_)
        ));
        let e = load(file(b"\x7fELF\x02\x01\0\0"), "a.out", 10).unwrap_err();
        assert_eq!(e.code, "attach.binary");
        assert!(
            e.to_string()
                .starts_with("cannot attach `a.out`: it is a binary file"),
            "{e}"
        );
    }

    const TWO_PAGES: &[u8] = include_bytes!("../../tests/fixtures/attach/two-pages.pdf");

    #[test]
    fn a_pdf_is_its_text_with_page_markers() {
        let a = load(file(TWO_PAGES), "spec.pdf", MAX_TEXT_CHARS).unwrap();
        assert_eq!(a.kind, Kind::Pdf(2));
        let t = text_of(&a);
        assert!(
            t.starts_with("[Attached PDF `spec.pdf`: 2 pages, its text]\n--- page 1 ---\n"),
            "{t}"
        );
        let one = t.find("apples").unwrap();
        let two = t.find("--- page 2 ---").unwrap();
        let answer = t.find("42").unwrap();
        assert!(one < two && two < answer, "{t}");
        assert_eq!(a.cut, None);
        // Cut within the budget: the page where it stopped and the pages after.
        let a = load(file(TWO_PAGES), "spec.pdf", 20).unwrap();
        let cut = a.cut.clone().unwrap();
        assert!(
            cut.starts_with("the rest of page 1 and page 2 are left out"),
            "{cut}"
        );
        assert!(!text_of(&a).contains("--- page 2 ---"));
        assert_eq!(a.chars, 20);
    }

    #[test]
    fn a_damaged_pdf_is_an_error() {
        let e = load(file(b"%PDF-1.4\ngarbage"), "bad.pdf", 10).unwrap_err();
        assert_eq!(e.code, "attach.pdf");
    }

    #[test]
    fn a_display_shows_an_attachment_as_its_header_line() {
        use crate::protocol::UserContent;
        let a = load(file(b"one\ntwo\n"), "notes.md", MAX_TEXT_CHARS).unwrap();
        let mut blocks = vec![ContentBlock::Text {
            text: "summarise\n@notes.md".into(),
        }];
        blocks.extend(a.blocks);
        assert_eq!(
            shown_text(&UserContent::Blocks(blocks)),
            "summarise\n@notes.md\n[Attached file `notes.md` (8 bytes)]"
        );
    }

    #[test]
    fn a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let e = load(File::open(dir.path()).unwrap(), "src", 10).unwrap_err();
        assert_eq!(e.code, "attach.directory");
    }
}
