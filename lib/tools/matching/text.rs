//! Byte-level facts about a file's text that every kind of edit needs:
//! its BOM, the line ending in use at a place, line numbers of offsets,
//! and whitespace made visible for messages.

use std::borrow::Cow;

/// The UTF-8 byte order mark.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";
/// Line endings.
pub const LF: &[u8] = b"\n";
/// Line endings.
pub const CRLF: &[u8] = b"\r\n";

/// Length of the BOM at the start of `content` (0 or 3).
pub fn bom_len(content: &[u8]) -> usize {
    if content.starts_with(BOM) {
        BOM.len()
    } else {
        0
    }
}

/// The line ending in use at `pos`: that of the line `pos` is on, else of
/// the line before, else LF. Taken locally so that a file with mixed
/// endings keeps each part as it was.
pub fn eol_near(content: &[u8], pos: usize) -> &'static [u8] {
    let pos = pos.min(content.len());
    let found = memchr::memchr(b'\n', &content[pos..])
        .map(|i| pos + i)
        .or_else(|| memchr::memrchr(b'\n', &content[..pos]));
    match found {
        Some(i) if i > 0 && content[i - 1] == b'\r' => CRLF,
        _ => LF,
    }
}

/// Whether the file has any CRLF line ending.
pub fn has_crlf(content: &[u8]) -> bool {
    memchr::memmem::find(content, CRLF).is_some()
}

/// `text` with every lone LF turned into `eol` (a CRLF stays a CRLF).
pub fn with_eol<'a>(text: &'a [u8], eol: &[u8]) -> Cow<'a, [u8]> {
    if eol == LF || !text.contains(&b'\n') {
        return Cow::Borrowed(text);
    }
    let mut out = Vec::with_capacity(text.len() + text.len() / 16);
    let mut prev = 0u8;
    for &b in text {
        if b == b'\n' && prev != b'\r' {
            out.push(b'\r');
        }
        out.push(b);
        prev = b;
    }
    Cow::Owned(out)
}

/// `text` with every CRLF turned into LF.
pub fn crlf_to_lf(text: &str) -> Cow<'_, str> {
    if text.contains("\r\n") {
        Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// The 1-based number of the line that byte `pos` is on.
pub fn line_of(content: &[u8], pos: usize) -> u64 {
    bytecount::count(&content[..pos.min(content.len())], b'\n') as u64 + 1
}

/// Line numbers of sorted byte offsets, counting newlines only once.
pub fn lines_of(content: &[u8], positions: &[usize]) -> Vec<u64> {
    let mut line = 1u64;
    let mut at = 0usize;
    positions
        .iter()
        .map(|&p| {
            line += bytecount::count(&content[at..p], b'\n') as u64;
            at = p;
            line
        })
        .collect()
}

/// Whitespace made visible: `·` a space, `→` a tab, `␍` a carriage return,
/// `⍽` a no-break space, so that a model can see where two lines differ.
pub fn visible(line: &str) -> String {
    line.chars()
        .map(|c| match c {
            ' ' => '·',
            '\t' => '→',
            '\r' => '␍',
            '\u{a0}' => '⍽',
            c => c,
        })
        .collect()
}

/// The markers [`visible`] shows for whitespace, and what each stands for
/// (not `⍽`: a no-break space is rarely meant).
const MARKERS: [(char, char); 3] = [('·', ' '), ('→', '\t'), ('␍', '\r')];

/// `old` and `new` with the markers of [`visible`] read back as the
/// whitespace they stand for, when `old` has a marker that `file` has
/// nowhere: a model copied a line of a diff that ag showed it, markers
/// and all. Such an `old` can never match as it is, so reading it back
/// loses nothing; `new`, copied from the same diff, is read the same way.
///
/// A `new` copied alone from a diff's `+` line reads the same way: one
/// with a `·` wherever it would have a space and no space at all, when
/// neither `old` nor `file` has a `·`, and read back it is text of the
/// file (written into the file, it would be ag's display, not the text
/// meant; a `·` meant as text, `2·3`, is not the file's text read back).
///
/// `None` when neither has such markers.
pub fn unmarked(file: &[u8], old: &str, new: &str) -> Option<(String, String)> {
    let absent = |m: char| {
        let mut buf = [0u8; 4];
        memchr::memmem::find(file, m.encode_utf8(&mut buf).as_bytes()).is_none()
    };
    let mut used: Vec<(char, char)> = MARKERS
        .into_iter()
        .filter(|&(m, _)| old.contains(m) && absent(m))
        .collect();
    if used.is_empty() {
        let copied = new.contains('\u{b7}') && !new.contains(' ') && !old.contains('\u{b7}');
        if !copied || !absent('\u{b7}') {
            return None;
        }
        used = MARKERS
            .into_iter()
            .filter(|&(m, _)| new.contains(m) && !old.contains(m) && absent(m))
            .collect();
    }
    let read = |s: &str| -> String {
        s.chars()
            .map(|c| used.iter().find(|(m, _)| *m == c).map_or(c, |(_, w)| *w))
            .collect()
    };
    let (old_read, new_read) = (read(old), read(new));
    // A new_string read back alone must be a copy of the file's text (a
    // `+` line of a diff is the file's line): "2·3" meant as text is not.
    if old_read == old && memchr::memmem::find(file, new_read.as_bytes()).is_none() {
        return None;
    }
    Some((old_read, new_read))
}

/// The line count of a text as an editor shows it (a last line without a
/// newline counts; an empty text has none).
pub fn count_lines(content: &[u8]) -> u64 {
    let n = bytecount::count(content, b'\n') as u64;
    if content.last().is_some_and(|&b| b != b'\n') {
        n + 1
    } else {
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_copied_from_a_diff_are_read_back_only_where_the_file_has_none() {
        let file = b"        print(\"DEBUG\", p)\n";
        assert_eq!(
            unmarked(file, "print(\"DEBUG\",\u{b7}p)", "x\u{b7}=\u{b7}1"),
            Some(("print(\"DEBUG\", p)".to_string(), "x = 1".to_string()))
        );
        // Nothing to read back, or a file that has the marker itself.
        assert_eq!(unmarked(file, "print", ""), None);
        assert_eq!(unmarked("a\u{b7}b\n".as_bytes(), "a\u{b7}b", ""), None);
        // A tab marker is read back though the file has middle dots.
        assert_eq!(
            unmarked("\u{b7}\tx\n".as_bytes(), "\u{2192}x", "\u{b7}"),
            Some(("\tx".to_string(), "\u{b7}".to_string()))
        );
        // A new_string copied alone from a `+` line, spaces all shown:
        // read back, it is the file's text.
        let file = b"A small cache,\tkept.\n";
        assert_eq!(
            unmarked(file, "small", "A\u{b7}small\u{b7}cache,\u{2192}kept."),
            Some(("small".to_string(), "A small cache,\tkept.".to_string()))
        );
        // A middle dot meant as text: with spaces, not the file's text
        // read back ("2·3"), or already in the file.
        assert_eq!(unmarked(file, "cache,", "cache \u{b7} kept."), None);
        assert_eq!(unmarked(file, "small", "2\u{b7}3"), None);
        assert_eq!(unmarked("a\u{b7}b\n".as_bytes(), "b", "c\u{b7}d"), None);
    }

    #[test]
    fn line_endings_are_taken_locally() {
        let mixed = b"a\nb\r\nc";
        assert_eq!(eol_near(mixed, 0), LF);
        assert_eq!(eol_near(mixed, 2), CRLF);
        assert_eq!(eol_near(mixed, 6), CRLF);
        assert_eq!(eol_near(b"no newline", 3), LF);
        assert_eq!(&*with_eol(b"x\ny\r\nz", CRLF), b"x\r\ny\r\nz");
        assert_eq!(&*with_eol(b"x\ny", LF), b"x\ny");
    }

    #[test]
    fn counts_and_positions() {
        assert_eq!(count_lines(b""), 0);
        assert_eq!(count_lines(b"a"), 1);
        assert_eq!(count_lines(b"a\n"), 1);
        assert_eq!(count_lines(b"a\nb"), 2);
        assert_eq!(lines_of(b"a\nb\nc\n", &[0, 2, 4]), vec![1, 2, 3]);
        assert_eq!(line_of(b"a\nb\n", 3), 2);
        assert_eq!(visible("\tx  \r"), "→x··␍");
        assert_eq!(bom_len(b"\xEF\xBB\xBFx"), 3);
    }
}
