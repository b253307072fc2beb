//! Turning captured bytes into text for the model: cut at line boundaries
//! around a truncation, ANSI escape sequences and carriage-return progress
//! lines removed (unless raw output is asked for), invalid UTF-8 shown
//! lossily.

use crate::proc::Captured;

/// Text made from captured output.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Rendered {
    /// The first part; all of the output when nothing was cut.
    pub head: String,
    /// The last part when something was cut.
    pub tail: Option<String>,
    /// Bytes left out (including the partial lines at the cut).
    pub cut_bytes: u64,
    /// Lines left out.
    pub cut_lines: u64,
    /// Invalid UTF-8 was replaced.
    pub lossy: bool,
}

/// How far back a cut may move to reach a line boundary.
const LINE_SNAP: usize = 4096;

/// Renders a capture.
pub fn render(c: &Captured, raw: bool) -> Rendered {
    let mut lossy = false;
    let mut text = |bytes: &[u8]| {
        let cleaned;
        let bytes = if raw {
            bytes
        } else {
            cleaned = clean(bytes);
            &cleaned[..]
        };
        let s = String::from_utf8_lossy(bytes);
        lossy |= matches!(s, std::borrow::Cow::Owned(_));
        s.into_owned()
    };
    if !c.truncated() {
        let head = text(&c.head);
        return Rendered {
            head,
            lossy,
            ..Rendered::default()
        };
    }
    // Cut whole lines: the head back to its last newline, the tail forward
    // past its first, unless that would drop a lot (one huge line).
    let head_end = match memchr::memrchr(b'\n', &c.head) {
        Some(i) if c.head.len() - (i + 1) <= LINE_SNAP => i + 1,
        _ => c.head.len(),
    };
    let tail_start = match memchr::memchr(b'\n', &c.tail) {
        Some(i) if i < LINE_SNAP && i + 1 < c.tail.len() => i + 1,
        _ => 0,
    };
    let dropped = (c.head.len() - head_end + tail_start) as u64;
    let head = text(&c.head[..head_end]);
    let tail = text(&c.tail[tail_start..]);
    // Newlines inside the dropped partial lines: the one ending the tail's
    // first partial line.
    let extra_lines = u64::from(tail_start > 0);
    Rendered {
        head,
        tail: Some(tail),
        cut_bytes: c.cut_bytes() + dropped,
        cut_lines: c.cut_lines() + extra_lines,
        lossy,
    }
}

/// Removes ANSI escape sequences and BEL, folds `\r\n` into `\n`, and keeps
/// of a line rewritten with bare `\r` (a progress bar) only its last state.
pub fn clean(bytes: &[u8]) -> Vec<u8> {
    let stripped = strip_ansi(bytes);
    let mut out = Vec::with_capacity(stripped.len());
    for (i, line) in stripped.split(|&b| b == b'\n').enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        // What a terminal would show last: the text after the last `\r`
        // that is followed by something.
        let last = line
            .split(|&b| b == b'\r')
            .rfind(|part| !part.is_empty())
            .unwrap_or(&[]);
        out.extend_from_slice(last);
    }
    out
}

/// Removes escape sequences: CSI (`ESC [ ... final`), OSC (`ESC ] ... BEL`
/// or `ESC \`), DCS/SOS/PM/APC strings, two- and three-byte escapes, and BEL.
pub fn strip_ansi(bytes: &[u8]) -> Vec<u8> {
    if memchr::memchr2(0x1b, 0x07, bytes).is_none() {
        return bytes.to_vec();
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == 0x07 {
            i += 1;
            continue;
        }
        if b != 0x1b {
            out.push(b);
            i += 1;
            continue;
        }
        i += 1;
        let Some(&kind) = bytes.get(i) else {
            break;
        };
        i += 1;
        match kind {
            b'[' => {
                // Parameters and intermediates, then one final byte.
                while i < bytes.len() && (0x20..=0x3f).contains(&bytes[i]) {
                    i += 1;
                }
                if i < bytes.len() && (0x40..=0x7e).contains(&bytes[i]) {
                    i += 1;
                }
            }
            b']' | b'P' | b'X' | b'^' | b'_' => {
                // A string ended by BEL (OSC only) or ST (`ESC \`).
                while i < bytes.len() {
                    if bytes[i] == 0x07 && kind == b']' {
                        i += 1;
                        break;
                    }
                    if bytes[i] == 0x1b && bytes.get(i + 1) == Some(&b'\\') {
                        i += 2;
                        break;
                    }
                    i += 1;
                }
            }
            0x20..=0x2f => {
                // `ESC ( B` and the like: intermediates, then a final byte.
                while i < bytes.len() && (0x20..=0x2f).contains(&bytes[i]) {
                    i += 1;
                }
                if i < bytes.len() {
                    i += 1;
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_colours_titles_and_charset_switches() {
        let s = b"\x1b[1;31merror\x1b[0m: \x1b]0;title\x07x\x1b(By\x1b[?25l\x07";
        assert_eq!(strip_ansi(s), b"error: xy");
        assert_eq!(strip_ansi(b"plain"), b"plain");
        assert_eq!(
            strip_ansi(b"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"),
            b"link"
        );
        // A sequence cut off at the end of the capture.
        assert_eq!(strip_ansi(b"ok\x1b[31"), b"ok");
    }

    #[test]
    fn folds_progress_lines_and_crlf() {
        assert_eq!(clean(b"a\r\nb\r\n"), b"a\nb\n");
        assert_eq!(clean(b" 10%\r 50%\r100%\ndone\n"), b"100%\ndone\n");
        assert_eq!(clean(b"working...\r\n"), b"working...\n");
        assert_eq!(clean(b"x\r\r\n"), b"x\n");
    }

    #[test]
    fn truncated_output_is_cut_at_lines() {
        let c = Captured {
            head: b"line1\nline2\npart".to_vec(),
            tail: b"ial\nline9\nline10\n".to_vec(),
            total_bytes: 1000,
            total_lines: 100,
            spill: None,
            spill_complete: false,
        };
        let r = render(&c, false);
        assert_eq!(r.head, "line1\nline2\n");
        assert_eq!(r.tail.as_deref(), Some("line9\nline10\n"));
        assert_eq!(r.cut_bytes, 1000 - 12 - 13);
        // 100 lines in all, 2 in the head and 2 in the tail shown.
        assert_eq!(r.cut_lines, 96);
    }

    #[test]
    fn invalid_utf8_is_lossy_and_raw_keeps_escapes() {
        let head = b"caf\xe9 \x1b[32mok\x1b[0m\n".to_vec();
        let c = Captured {
            total_bytes: head.len() as u64,
            head,
            ..Captured::default()
        };
        let r = render(&c, false);
        assert_eq!(r.head, "caf\u{fffd} ok\n");
        assert!(r.lossy);
        let r = render(&c, true);
        assert!(r.head.contains("\x1b[32m"));
    }
}
