//! How much of a PDF is read, and what is said when a file is over it.
//!
//! An attachment shows at most [`crate::attach::MAX_TEXT_CHARS`]
//! characters, so a PDF is worth no more work than it takes to find them.
//! The limits are far above what documents of a few thousand pages need,
//! and together keep a hostile file (a few kilobytes that inflate to
//! gigabytes, or that make the parser build the same object over and over)
//! to a few hundred MiB of memory at most, in a time bounded by the limits
//! rather than by what the file declares.

use std::fmt;

/// Bytes any one stream may inflate to: an object stream, a
/// cross-reference stream (both while the file is loaded), or one page's
/// content, all its streams together.
pub const MAX_STREAM: usize = 8 * 1024 * 1024;

/// Bytes the object streams of one file may inflate to, all together.
pub const MAX_INFLATED: usize = 64 * 1024 * 1024;

/// Bytes of page content inflated for one file, all pages together (pages
/// may share one content stream, so this is counted per page read).
pub const MAX_CONTENT: usize = 64 * 1024 * 1024;

/// Values (numbers, names, strings, each array and dictionary) outside
/// streams and in object streams: lopdf keeps about 120 bytes for each.
pub const MAX_VALUES: usize = 1_500_000;

/// Objects the file may hold.
pub const MAX_OBJECTS: usize = 250_000;

/// Entries its cross-reference streams may declare.
pub const MAX_XREF_ENTRIES: usize = 2 * MAX_OBJECTS;

/// Pages of one file.
pub const MAX_PAGES: usize = 20_000;

/// Operands of one operator in a page's content (a `TJ` array counts each
/// value in it): lopdf holds them all at once.
pub const MAX_OPERANDS: usize = 100_000;

/// Bytes of a font's ToUnicode CMap.
pub const MAX_CMAP: usize = 1024 * 1024;

/// Character codes one ToUnicode CMap may map (two whole planes of
/// two-byte codes).
pub const MAX_CMAP_CODES: u64 = 2 * 65_536;

/// Character codes all the fonts read may map together (lopdf keeps an
/// entry of a few dozen bytes for each).
pub const MAX_CMAP_CODES_TOTAL: u64 = 1_000_000;

/// Why a PDF is not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// It is encrypted.
    Encrypted,
    /// More than [`MAX_VALUES`] values.
    Values,
    /// More than [`MAX_OBJECTS`] objects.
    Objects,
    /// An object stream or cross-reference stream over [`MAX_STREAM`].
    StreamSize,
    /// Object streams over [`MAX_INFLATED`] together.
    Inflated,
    /// Cross-reference streams over [`MAX_XREF_ENTRIES`].
    XrefEntries,
    /// An object stream whose objects overlap or hold a stream.
    Overlap,
    /// An object stream's or cross-reference stream's name where only a
    /// forged offset would lead.
    Hidden,
    /// The same objects read over and over: a cross-reference table that
    /// names one place many times.
    Repeated,
    /// More than [`MAX_PAGES`] pages.
    Pages(usize),
    /// Not a PDF lopdf can read.
    Unreadable(String),
    /// The parser failed on it.
    Crashed,
}

impl Refusal {
    /// Whether the file is fine as a PDF but over a limit of ag's, so that
    /// a smaller part of it could be attached.
    pub fn is_limit(&self) -> bool {
        !matches!(
            self,
            Refusal::Encrypted | Refusal::Unreadable(_) | Refusal::Crashed
        )
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mib = |n: usize| n / (1024 * 1024);
        match self {
            Refusal::Encrypted => {
                write!(
                    f,
                    "the PDF is encrypted; decrypt it first (for example `qpdf --decrypt`)"
                )
            }
            Refusal::Values => write!(
                f,
                "the PDF holds more than {} values outside its page content, more than ag reads of one PDF",
                thousands(MAX_VALUES as u64)
            ),
            Refusal::Objects => write!(
                f,
                "the PDF has more than {} objects, more than ag reads of one PDF",
                thousands(MAX_OBJECTS as u64)
            ),
            Refusal::StreamSize => write!(
                f,
                "one of the PDF's object streams inflates to more than {} MiB, more than ag inflates of one stream",
                mib(MAX_STREAM)
            ),
            Refusal::Inflated => write!(
                f,
                "the PDF's object streams inflate to more than {} MiB together, more than ag inflates of one PDF",
                mib(MAX_INFLATED)
            ),
            Refusal::XrefEntries => write!(
                f,
                "the PDF's cross-reference streams list more than {} objects, more than ag reads of one PDF",
                thousands(MAX_XREF_ENTRIES as u64)
            ),
            Refusal::Overlap => write!(
                f,
                "one of the PDF's object streams has objects that overlap, so reading it would take far more than its size (the file may be damaged or made to exhaust memory)"
            ),
            Refusal::Hidden => write!(
                f,
                "the PDF has an object stream, a cross-reference stream or an encryption key inside another object's data, where only a forged offset leads (the file may be damaged or made to exhaust memory)"
            ),
            Refusal::Repeated => write!(
                f,
                "the PDF's cross-reference table names the same data over and over, so reading it would take far more than its size (the file may be damaged or made to exhaust memory)"
            ),
            Refusal::Pages(n) => write!(
                f,
                "the PDF has more than {} pages (it lists {}), more than ag reads of one PDF",
                thousands(MAX_PAGES as u64),
                thousands(*n as u64)
            ),
            Refusal::Unreadable(why) => write!(f, "not a readable PDF: {why}"),
            Refusal::Crashed => write!(f, "the PDF parser failed on this file (it may be damaged)"),
        }
    }
}

/// `1,500,000`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_500_000), "1,500,000");
    }
}
