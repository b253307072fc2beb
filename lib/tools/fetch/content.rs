//! What a body becomes for the model, by its type: HTML its main content
//! in markdown, a PDF its text page by page, JSON, markdown and other text
//! as they are (decoded from their charset), anything else one line that
//! says what it is. A body without a usable type is known by its first
//! bytes.

use super::http::{Cut, Fetched, essence};

/// Bytes of a page or text kept.
pub const MAX_TEXT_BYTES: usize = 10 * 1024 * 1024;
/// Bytes of a PDF kept: its text can only be read from the whole file.
pub const MAX_PDF_BYTES: usize = 32 * 1024 * 1024;
/// Characters of a PDF's text read: a thousand pages of prose or so.
pub const MAX_PDF_CHARS: usize = 2_000_000;

/// What a body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Html,
    Pdf,
    Json,
    Markdown,
    Text,
    /// Not shown: described in one line.
    Other,
}

impl Kind {
    /// Its name in `details.kind`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Html => "html",
            Kind::Pdf => "pdf",
            Kind::Json => "json",
            Kind::Markdown => "markdown",
            Kind::Text => "text",
            Kind::Other => "other",
        }
    }
}

/// The kind a type announces; `None` when it says nothing usable (no
/// type, `application/octet-stream`), and the body's bytes must tell.
fn announced(essence: &str) -> Option<Kind> {
    let kind = match essence {
        "" | "application/octet-stream" | "binary/octet-stream" => return None,
        "text/html" | "application/xhtml+xml" => Kind::Html,
        "application/pdf" | "application/x-pdf" => Kind::Pdf,
        "text/markdown" | "text/x-markdown" => Kind::Markdown,
        e if e == "application/json" || e.ends_with("+json") || e.ends_with("/x-ndjson") => {
            Kind::Json
        }
        e if e.starts_with("text/") => Kind::Text,
        "application/xml"
        | "application/javascript"
        | "application/ecmascript"
        | "application/x-javascript"
        | "application/yaml"
        | "application/x-yaml"
        | "application/toml"
        | "application/x-sh"
        | "application/sql" => Kind::Text,
        e if e.ends_with("+xml") => Kind::Text,
        _ => Kind::Other,
    };
    Some(kind)
}

/// Bytes of a body of this type that are read: none for a type that is
/// only described.
pub fn max_bytes(essence: &str) -> usize {
    match announced(essence) {
        Some(Kind::Other) => 0,
        Some(Kind::Pdf) => MAX_PDF_BYTES,
        _ => MAX_TEXT_BYTES,
    }
}

/// The kind of a body: as its type says, else by its first bytes.
pub fn kind(essence: &str, body: &[u8]) -> Kind {
    if let Some(k) = announced(essence) {
        return k;
    }
    let head = &body[..body.len().min(8192)];
    let start = String::from_utf8_lossy(&head[..head.len().min(512)]).to_ascii_lowercase();
    let start = start.trim_start_matches('\u{feff}').trim_start();
    if head.starts_with(b"%PDF-") {
        Kind::Pdf
    } else if start.starts_with("<!doctype html") || start.starts_with("<html") {
        Kind::Html
    } else if memchr::memchr(0, head).is_none() && utf8(head) {
        Kind::Text
    } else {
        Kind::Other
    }
}

/// Valid UTF-8, perhaps cut inside a character at its end (where the
/// probe or the download stopped).
fn utf8(bytes: &[u8]) -> bool {
    match std::str::from_utf8(bytes) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none(),
    }
}

/// A body's text, decoded by its charset: the type's `charset`, else for
/// HTML a `<meta>` in its first bytes, else UTF-8 (a byte-order mark wins
/// over all). Undecodable bytes become U+FFFD; `true` when there were any.
pub fn decode(body: &[u8], content_type: Option<&str>, html: bool) -> (String, bool) {
    let label = content_type
        .and_then(charset_param)
        .or_else(|| html.then(|| meta_charset(body)).flatten());
    let encoding = label
        .and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, lossy) = encoding.decode(body);
    (text.into_owned(), lossy)
}

fn charset_param(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| v.trim().trim_matches(['"', '\'']).to_string())
    })
}

/// `<meta charset="x">` or `<meta http-equiv=... content="...; charset=x">`
/// within the first 1024 bytes, as browsers look for it.
fn meta_charset(body: &[u8]) -> Option<String> {
    let head = String::from_utf8_lossy(&body[..body.len().min(1024)]).to_ascii_lowercase();
    let at = head.find("charset=")? + "charset=".len();
    let value: String = head[at..]
        .trim_start_matches(['"', '\''])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
        .collect();
    (!value.is_empty()).then_some(value)
}

/// The body shown: its text, its title, and what the model should know
/// about how it was made.
#[derive(Debug, Clone)]
pub struct Document {
    pub kind: Kind,
    pub title: Option<String>,
    pub text: String,
    /// Where an HTML page's main content was found.
    pub found: Option<&'static str>,
    /// Notes about the text (undecodable bytes, unreadable PDF pages).
    pub notes: Vec<String>,
}

/// Turns what came back into what the model reads; an error when a PDF
/// cannot be read.
pub fn document(f: &Fetched) -> Result<Document, String> {
    let essence = essence(f.content_type.as_deref());
    let kind = if f.skipped {
        Kind::Other
    } else {
        kind(&essence, &f.body)
    };
    let mut notes = Vec::new();
    let mut doc = Document {
        kind,
        title: None,
        text: String::new(),
        found: None,
        notes: Vec::new(),
    };
    match kind {
        Kind::Html => {
            let (text, lossy) = decode(&f.body, f.content_type.as_deref(), true);
            if lossy {
                notes.push(lossy_note());
            }
            let within = std::time::Duration::from_secs(super::html::CONVERT_SECS);
            let c = super::html::to_markdown(text, f.final_url.clone(), within);
            if let Some(why) = c.plain {
                notes.push(format!("This is the page's text without markup: {why}."));
            }
            doc.title = c.title;
            doc.found = Some(c.found);
            doc.text = c.markdown;
        }
        Kind::Json | Kind::Markdown | Kind::Text => {
            let (text, lossy) = decode(&f.body, f.content_type.as_deref(), false);
            if lossy {
                notes.push(lossy_note());
            }
            doc.text = text;
        }
        Kind::Pdf => {
            if let Some(Cut::Size(max)) = f.cut {
                return Err(format!(
                    "the PDF is larger than the {} fetch reads{}, and its text can only be read from the whole file; download it with the bash tool (curl -o) if the network allows, or find an HTML version",
                    crate::tools::bash::human_bytes(max as u64),
                    f.content_length
                        .map(|n| format!(" ({})", crate::tools::bash::human_bytes(n)))
                        .unwrap_or_default()
                ));
            }
            doc.text = pdf_text(&f.body, &mut notes)?;
        }
        Kind::Other => {
            let size = f
                .content_length
                .map(crate::tools::bash::human_bytes)
                .or_else(|| {
                    (!f.skipped).then(|| crate::tools::bash::human_bytes(f.body.len() as u64))
                })
                .unwrap_or_else(|| "size not given".into());
            let what = if essence.is_empty() {
                "binary data of no stated type".to_string()
            } else {
                essence.clone()
            };
            doc.text = format!(
                "`{}` is {what}, {size}: fetch shows web pages, PDFs, JSON and text, not this.\n",
                f.final_url
            );
        }
    }
    doc.notes = notes;
    Ok(doc)
}

fn lossy_note() -> String {
    "Some bytes were not valid in the page's charset; they are shown as U+FFFD (\u{fffd}).".into()
}

/// A PDF's text with `--- page N ---` before each page, through ag's PDF
/// reader (the one attachments use, with its bounds on what a small file
/// may make it inflate or build), read as far as [`MAX_PDF_CHARS`].
fn pdf_text(body: &[u8], notes: &mut Vec<String>) -> Result<String, String> {
    // The one PDF reader of ag, with one set of bounds (attachments use it
    // too).
    use crate::pdf;
    let doc = pdf::read(body, MAX_PDF_CHARS).map_err(|refusal| refusal.to_string())?;
    let mut out = String::new();
    let mut empty = 0;
    for (i, page) in doc.pages.iter().enumerate() {
        out.push_str(&format!("--- page {} ---\n", i + 1));
        match (&page.problem, page.text.is_empty()) {
            (None, true) => {
                empty += 1;
                out.push_str("(no text on this page: it may be a scanned image)");
            }
            (None, false) => out.push_str(&page.text),
            (Some(why), true) => {
                out.push_str(&format!("(the text of this page could not be read: {why})"))
            }
            (Some(why), false) => out.push_str(&format!(
                "{}\n(some of this page's text could not be read: {why})",
                page.text
            )),
        }
        out.push('\n');
    }
    let read = doc.pages.len();
    if empty > 0 {
        notes.push(format!(
            "{empty} of the {read} pages read have no text (scanned images, perhaps); fetch does not read text in images."
        ));
    }
    match doc.end {
        pdf::End::Text if read < doc.count => notes.push(format!(
            "The PDF's text was read as far as page {read} of {}: {MAX_PDF_CHARS} characters are the most fetch reads of one PDF, and the pages after it are left out.",
            doc.count
        )),
        pdf::End::Content if read < doc.count => notes.push(format!(
            "Pages {}-{} are left out: reading them would inflate more than the {} MiB of page content ag reads of one PDF.",
            read + 1,
            doc.count,
            pdf::limits::MAX_CONTENT >> 20
        )),
        _ => {}
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_type_then_by_bytes() {
        assert_eq!(kind("text/html", b""), Kind::Html);
        assert_eq!(kind("application/problem+json", b""), Kind::Json);
        assert_eq!(kind("text/csv", b""), Kind::Text);
        assert_eq!(kind("image/png", b"\x89PNG"), Kind::Other);
        assert_eq!(kind("", b"%PDF-1.7\n"), Kind::Pdf);
        assert_eq!(
            kind("application/octet-stream", b"\n <!DOCTYPE html><p>"),
            Kind::Html
        );
        assert_eq!(kind("", b"plain words"), Kind::Text);
        assert_eq!(kind("", b"\x00\x01\x02"), Kind::Other);
        // Cut inside a character at the end is still text.
        assert_eq!(
            kind("", "caf\u{e9}".as_bytes().split_last().unwrap().1),
            Kind::Text
        );
        assert_eq!(max_bytes("image/png"), 0);
        assert_eq!(max_bytes("application/pdf"), MAX_PDF_BYTES);
        assert_eq!(max_bytes(""), MAX_TEXT_BYTES);
    }

    #[test]
    fn charsets_from_the_header_the_meta_or_utf8() {
        let latin1 = b"caf\xe9";
        assert_eq!(
            decode(latin1, Some("text/plain; charset=ISO-8859-1"), false),
            ("caf\u{e9}".to_string(), false)
        );
        let page = b"<html><head><meta charset=\"windows-1252\"></head>caf\xe9";
        assert!(
            decode(page, Some("text/html"), true)
                .0
                .ends_with("caf\u{e9}")
        );
        let (text, lossy) = decode(latin1, None, false);
        assert!(lossy && text.ends_with('\u{fffd}'));
    }
}
