//! The text of a PDF, page by page, through lopdf. A malformed file can
//! make a parser panic; that is caught and reported as a file that cannot
//! be read, never a crash of ag-loop.

use std::panic::{AssertUnwindSafe, catch_unwind};

/// Bytes a page's content may inflate to before its text is given up: a
/// small compressed stream must not fill the memory.
const MAX_PAGE_CONTENT: usize = 32 * 1024 * 1024;

/// One page's text, or why it has none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Page {
    /// The text found on the page (possibly empty: a scanned page).
    Text(String),
    /// The page could not be read.
    Unreadable(String),
}

/// The pages of a PDF, in order; an error when the file cannot be read as
/// a PDF at all (or is encrypted with a password).
pub fn pages(bytes: &[u8]) -> Result<Vec<Page>, String> {
    let parsed = catch_unwind(AssertUnwindSafe(|| extract(bytes)));
    match parsed {
        Ok(r) => r,
        Err(_) => Err("the PDF parser failed on this file (it may be damaged)".into()),
    }
}

fn extract(bytes: &[u8]) -> Result<Vec<Page>, String> {
    let doc = lopdf::Document::load_mem(bytes).map_err(|e| format!("not a readable PDF: {e}"))?;
    if doc.is_encrypted() {
        return Err("the PDF is encrypted; decrypt it first (for example `qpdf --decrypt`)".into());
    }
    let numbers: Vec<u32> = doc.get_pages().keys().copied().collect();
    let mut out = Vec::with_capacity(numbers.len());
    for n in numbers {
        let page = catch_unwind(AssertUnwindSafe(|| {
            doc.extract_text_with_limit(&[n], MAX_PAGE_CONTENT)
        }));
        out.push(match page {
            Ok(Ok(text)) => Page::Text(tidy(&text)),
            Ok(Err(e)) => Page::Unreadable(e.to_string()),
            Err(_) => Page::Unreadable("the PDF parser failed on this page".into()),
        });
    }
    Ok(out)
}

/// The page's text with trailing spaces and runs of blank lines removed.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(pages(b"not a pdf at all").is_err());
        assert!(pages(b"%PDF-1.4\n1 0 obj << /Type /Catalog").is_err());
        assert!(pages(b"").is_err());
    }

    #[test]
    fn tidy_drops_trailing_space_and_blank_runs() {
        assert_eq!(tidy("a  \n\n\n\nb\n\n"), "a\n\nb");
    }
}
