//! The text of a PDF, page by page, through lopdf, with no more work than
//! the text that can be attached needs.
//!
//! A PDF is a small file that may stand for a great deal: streams inflate
//! (lopdf caps one stream, not their sum), pages may share one content
//! stream, and a few bytes can make a parser build the same thing over and
//! over. So before lopdf reads the file, `scan` skims it and refuses what
//! is over the [`limits`]; `guard` watches lopdf's load; and the pages
//! are read one by one only until the text reaches the characters that can
//! be attached, each page's content inflated once within a budget for the
//! whole file, its operations read one at a time, and each font's
//! character map checked before lopdf builds it and kept for the pages
//! after. A malformed file can still make a parser panic; that is caught
//! and reported as a file that cannot be read, never a crash of ag-loop.

mod guard;
pub mod limits;
mod scan;

use std::collections::{BTreeMap, HashMap};
use std::panic::{AssertUnwindSafe, catch_unwind};

use lopdf::content::Content;
use lopdf::{Dictionary, Document, Encoding, Object, ObjectId};

use limits::{
    MAX_CMAP, MAX_CMAP_CODES, MAX_CMAP_CODES_TOTAL, MAX_CONTENT, MAX_OPERANDS, MAX_PAGES,
    MAX_STREAM, Refusal, thousands,
};

/// One page's text, and what kept some or all of it from being read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Page {
    /// The text found on the page (possibly empty: a scanned page).
    pub text: String,
    /// Why some of it, or all of it, could not be read.
    pub problem: Option<String>,
}

/// Where the reading stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Every page was read.
    All,
    /// The text reached the characters asked for, on the last page read.
    Text,
    /// The page content inflated so far reached [`MAX_CONTENT`]; the pages
    /// after the last one read were not read.
    Content,
}

/// What was read of a PDF.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pdf {
    /// Its pages.
    pub count: usize,
    /// The pages read, from the first.
    pub pages: Vec<Page>,
    /// Why the pages after them were not read.
    pub end: End,
}

/// Reads the pages of a PDF until their text passes `chars` characters;
/// an error when the file cannot be read as a PDF at all, is encrypted, or
/// is over a limit.
pub fn read(bytes: &[u8], chars: usize) -> Result<Pdf, Refusal> {
    match catch_unwind(AssertUnwindSafe(|| extract(bytes, chars))) {
        Ok(r) => r,
        Err(_) => Err(Refusal::Crashed),
    }
}

fn extract(bytes: &[u8], chars: usize) -> Result<Pdf, Refusal> {
    scan::check_file(bytes)?;
    let doc = guard::load(bytes)?;
    if doc.is_encrypted() {
        return Err(Refusal::Encrypted);
    }
    let ids: Vec<ObjectId> = doc.page_iter().take(MAX_PAGES + 1).collect();
    if ids.len() > MAX_PAGES {
        return Err(Refusal::Pages(doc.page_iter().count()));
    }
    let mut reader = Reader {
        doc: &doc,
        fonts: HashMap::new(),
        cmap_codes: 0,
        content_left: MAX_CONTENT,
    };
    let mut pages = Vec::new();
    let mut used = 0usize;
    let mut end = End::All;
    for id in &ids {
        // One character more than there is room for tells that the text
        // goes on.
        let room = chars.saturating_sub(used);
        let Some((page, more)) = reader.page(*id, room + 1) else {
            end = End::Content;
            break;
        };
        used += page.text.chars().count();
        pages.push(page);
        if more || used > chars {
            end = End::Text;
            break;
        }
    }
    Ok(Pdf {
        count: ids.len(),
        pages,
        end,
    })
}

/// Reads pages of one document, keeping what the pages share.
struct Reader<'a> {
    doc: &'a Document,
    /// Each font's encoding, by the address of its dictionary in the
    /// document (the document does not change while it is read, so the
    /// address names the font; pages share fonts, and building an encoding
    /// can cost a CMap's parse).
    fonts: HashMap<usize, Result<Encoding<'a>, String>>,
    /// Character codes the fonts' CMaps map, all together.
    cmap_codes: u64,
    /// Bytes of page content that may still be inflated.
    content_left: usize,
}

impl<'a> Reader<'a> {
    /// The text of a page, up to `limit` characters, and whether it goes
    /// on; `None` when the content budget for the file is spent.
    fn page(&mut self, id: ObjectId, limit: usize) -> Option<(Page, bool)> {
        let unreadable = |why: String| {
            Some((
                Page {
                    text: String::new(),
                    problem: Some(why),
                },
                false,
            ))
        };
        let allowed = MAX_STREAM.min(self.content_left);
        let content = match self.doc.get_page_content_with_limit(id, allowed) {
            Ok(c) => c,
            Err(lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded {
                ..
            })) => {
                self.content_left -= allowed;
                if allowed < MAX_STREAM {
                    return None;
                }
                return unreadable(format!(
                    "its content inflates to more than {} MiB",
                    MAX_STREAM >> 20
                ));
            }
            Err(e) => return unreadable(e.to_string()),
        };
        self.content_left -= content.len().min(self.content_left);
        if scan::largest_operation(&content) > MAX_OPERANDS {
            return unreadable(format!(
                "an operator in its content takes more than {} operands",
                thousands(MAX_OPERANDS as u64)
            ));
        }
        let fonts = match self.doc.get_page_fonts(id) {
            Ok(f) => f,
            Err(e) => return unreadable(format!("its fonts cannot be read: {e}")),
        };
        let names = self.encodings(fonts);
        let mut text = String::new();
        let mut count = 0usize;
        let mut more = false;
        let mut problem: Option<String> = None;
        let mut current: Option<usize> = None;
        for op in Content::decode_iter(&content) {
            let op = match op {
                Ok(op) => op,
                Err(e) => {
                    problem = Some(format!("its content is damaged ({e})"));
                    break;
                }
            };
            let before = text.len();
            let shown: &[Object] = match op.operator.as_str() {
                "Tf" => {
                    current = op
                        .operands
                        .first()
                        .and_then(|o| o.as_name().ok())
                        .and_then(|n| names.get(n).copied());
                    if let Some(Err(why)) = current.and_then(|k| self.fonts.get(&k))
                        && problem.is_none()
                    {
                        problem = Some(why.clone());
                    }
                    &[]
                }
                "Tj" | "TJ" => &op.operands,
                // `'` is `T*` then `Tj`; `"` sets spacing, then does `'`
                // with its third operand (ISO 32000-1, 9.4.3).
                "'" | "\"" => {
                    if !text.is_empty() && !text.ends_with('\n') {
                        text.push('\n');
                    }
                    let at = if op.operator == "'" { 0 } else { 2 };
                    op.operands.get(at..at + 1).unwrap_or_default()
                }
                "T*" | "ET" => {
                    if !text.is_empty() && !text.ends_with('\n') {
                        text.push('\n');
                    }
                    &[]
                }
                _ => &[],
            };
            if !shown.is_empty()
                && let Some(Ok(encoding)) = current.and_then(|k| self.fonts.get(&k))
                && collect(&mut text, encoding, shown).is_err()
                && problem.is_none()
            {
                problem = Some("some of its text is in codes its font does not map".into());
            }
            count += text[before..].chars().count();
            if count >= limit {
                more = true;
                break;
            }
        }
        Some((
            Page {
                text: tidy(&text),
                problem,
            },
            more,
        ))
    }

    /// The page's font names, each with the key of its encoding in
    /// [`Reader::fonts`], building the encodings not yet built.
    fn encodings(&mut self, fonts: BTreeMap<Vec<u8>, &'a Dictionary>) -> HashMap<Vec<u8>, usize> {
        let mut names = HashMap::new();
        for (name, font) in fonts {
            let key = std::ptr::from_ref(font) as usize;
            if !self.fonts.contains_key(&key) {
                let encoding = self.encoding(font).map_err(|why| {
                    format!(
                        "the font `{}` cannot be read: {why}",
                        String::from_utf8_lossy(&name)
                    )
                });
                self.fonts.insert(key, encoding);
            }
            names.insert(name, key);
        }
        names
    }

    /// A font's encoding, once its ToUnicode CMap is known to be in bounds:
    /// lopdf builds a reverse map with an entry for every code a CMap maps.
    fn encoding(&mut self, font: &'a Dictionary) -> Result<Encoding<'a>, String> {
        if let Ok(cmap) = font
            .get_deref(b"ToUnicode", self.doc)
            .and_then(Object::as_stream)
        {
            let bytes = cmap
                .get_plain_content_with_limit(MAX_CMAP)
                .map_err(|_| format!("its character map is larger than {} MiB", MAX_CMAP >> 20))?;
            let codes = scan::cmap_codes(&bytes);
            if codes > MAX_CMAP_CODES {
                return Err(format!(
                    "its character map maps {} codes, more than the {} ag reads of one font",
                    thousands(codes),
                    thousands(MAX_CMAP_CODES)
                ));
            }
            if self.cmap_codes + codes > MAX_CMAP_CODES_TOTAL {
                return Err(format!(
                    "the fonts read before it map {} codes, and ag reads at most {} of one PDF",
                    thousands(self.cmap_codes),
                    thousands(MAX_CMAP_CODES_TOTAL)
                ));
            }
            self.cmap_codes += codes;
        }
        font.get_font_encoding_with_limit(self.doc, MAX_CMAP)
            .map_err(|e| e.to_string())
    }
}

/// Appends the text that a text-showing operator's operands show: its
/// strings decoded, a space after an array (a `TJ`) and for a large
/// negative adjustment between its strings (a word gap), as lopdf does.
fn collect(text: &mut String, encoding: &Encoding<'_>, operands: &[Object]) -> lopdf::Result<()> {
    for operand in operands {
        match operand {
            Object::String(bytes, _) => encoding.write_to_string(bytes, text)?,
            Object::Array(items) => {
                for item in items {
                    match item {
                        Object::String(bytes, _) => encoding.write_to_string(bytes, text)?,
                        Object::Integer(i) if *i < -100 => text.push(' '),
                        Object::Real(r) if *r < -100.0 => text.push(' '),
                        _ => {}
                    }
                }
                text.push(' ');
            }
            _ => {}
        }
    }
    Ok(())
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

/// PDFs made in the tests.
#[cfg(test)]
pub(crate) mod testing {
    /// A PDF of these object bodies (object 1 the catalog), with a
    /// cross-reference table of the offsets of the objects `xref` names in
    /// place of the real ones when given.
    pub fn file<T: AsRef<[u8]>>(objects: &[T], xref: Option<&[usize]>) -> Vec<u8> {
        let mut out = b"%PDF-1.4\n".to_vec();
        let mut offsets = Vec::new();
        for (i, body) in objects.iter().enumerate() {
            offsets.push(out.len());
            out.extend(format!("{} 0 obj\n", i + 1).as_bytes());
            out.extend(body.as_ref());
            out.extend(b"\nendobj\n");
        }
        let offsets: Vec<usize> = match xref {
            Some(x) => x.iter().map(|i| offsets[*i]).collect(),
            None => offsets,
        };
        let at = out.len();
        out.extend(format!("xref\n0 {}\n0000000000 65535 f \n", offsets.len() + 1).as_bytes());
        for o in &offsets {
            out.extend(format!("{o:010} 00000 n \n").as_bytes());
        }
        out.extend(
            format!(
                "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{at}\n%%EOF\n",
                offsets.len() + 1
            )
            .as_bytes(),
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_PAGES: &[u8] = include_bytes!("../../tests/fixtures/attach/two-pages.pdf");

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(read(b"not a pdf at all", 100).is_err());
        assert!(read(b"%PDF-1.4\n1 0 obj << /Type /Catalog", 100).is_err());
        assert!(read(b"", 100).is_err());
    }

    #[test]
    fn tidy_drops_trailing_space_and_blank_runs() {
        assert_eq!(tidy("a  \n\n\n\nb\n\n"), "a\n\nb");
    }

    #[test]
    fn pages_are_read_until_the_text_is_enough() {
        let all = read(TWO_PAGES, 1000).unwrap();
        assert_eq!(all.count, 2);
        assert_eq!(all.end, End::All);
        assert_eq!(all.pages[0].text, "The first page talks about apples.");
        assert_eq!(all.pages[1].text, "The answer is on page two: 42.");
        // Room for ten characters: the first page is where it stops, and
        // the second is not read at all.
        let some = read(TWO_PAGES, 10).unwrap();
        assert_eq!(some.end, End::Text);
        assert_eq!(some.pages.len(), 1);
        assert!(some.pages[0].text.starts_with("The first"));
    }

    /// One page showing `content` (not deflated) with fonts F1
    /// (Helvetica) and F2 (two-byte codes mapped by `cmap`).
    fn page_with(content: &str, cmap: &str) -> Vec<u8> {
        let stream =
            |data: &str| format!("<< /Length {} >>\nstream\n{data}\nendstream", data.len());
        testing::file(
            &[
                "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
                "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
                "<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> /Contents 4 0 R >>".to_string(),
                stream(content),
                "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_string(),
                "<< /Type /Font /Subtype /Type0 /BaseFont /X /Encoding /Identity-H /ToUnicode 7 0 R >>".to_string(),
                stream(cmap),
            ],
            None,
        )
    }

    fn cmap(range: &str) -> String {
        format!(
            "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n/CMapName /X-UCS def\n1 begincodespacerange\n<0000> <ffff>\nendcodespacerange\n1 beginbfrange\n{range}\nendbfrange\nendcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n"
        )
    }

    #[test]
    fn a_font_whose_map_is_too_large_is_left_out_and_said() {
        let content = "BT /F2 12 Tf <00410042> Tj ET BT /F1 12 Tf (plain text) Tj ET";
        // A map of two-byte codes reads.
        let ok = read(&page_with(content, &cmap("<0041> <0042> <0061>")), 1000).unwrap();
        assert_eq!(ok.pages[0].text, "ab\nplain text");
        assert_eq!(ok.pages[0].problem, None);
        // One line that maps every four-byte code: lopdf would build an
        // entry for each of 4,294,967,296 codes.
        let bomb = cmap("<00000000> <ffffffff> <0061>");
        let pdf = read(&page_with(content, &bomb), 1000).unwrap();
        assert_eq!(pdf.pages[0].text, "plain text");
        assert_eq!(
            pdf.pages[0].problem.as_deref(),
            Some(
                "the font `F2` cannot be read: its character map maps 4,294,967,296 codes, more than the 131,072 ag reads of one font"
            )
        );
    }

    #[test]
    fn an_operator_with_too_many_operands_leaves_its_page_out() {
        let content = format!("BT /F1 12 Tf [{}] TJ ET", "(a) ".repeat(MAX_OPERANDS));
        let pdf = read(&page_with(&content, &cmap("<0041> <0042> <0061>")), 1000).unwrap();
        assert_eq!(pdf.pages[0].text, "");
        assert_eq!(
            pdf.pages[0].problem.as_deref(),
            Some("an operator in its content takes more than 100,000 operands")
        );
    }
}
