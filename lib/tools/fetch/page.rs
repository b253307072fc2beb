//! A long page in pages, as `read` pages a file: by line, from `offset`,
//! as many whole lines as fit in the page's characters (the caller's
//! output budget when there is one), with a note that says how long the
//! whole is and which offset reads on. A line longer than
//! [`MAX_LINE_CHARS`] (minified JSON, a paragraph without breaks) is
//! broken into pieces of that length, each a line of its own, so that
//! every line fits in a page; the note says so.

/// Characters of one line before it is broken.
pub const MAX_LINE_CHARS: usize = 2_000;

/// Characters of a page when the caller gives no budget.
pub const PAGE_CHARS: usize = 100_000;

/// The lines of a text, long ones broken; also how many were broken.
pub fn lines(text: &str) -> (Vec<&str>, usize) {
    let mut out = Vec::new();
    let mut broken = 0;
    for line in text.lines() {
        if piece_end(line) == line.len() {
            out.push(line);
            continue;
        }
        broken += 1;
        let mut rest = line;
        while !rest.is_empty() {
            let cut = piece_end(rest);
            out.push(&rest[..cut]);
            rest = &rest[cut..];
        }
    }
    (out, broken)
}

/// Where the first piece of an overlong line ends: after the last space
/// within [`MAX_LINE_CHARS`] characters when there is one in its second
/// half, else at that many characters.
fn piece_end(line: &str) -> usize {
    if line.len() <= MAX_LINE_CHARS {
        return line.len();
    }
    let hard = line
        .char_indices()
        .nth(MAX_LINE_CHARS)
        .map_or(line.len(), |(i, _)| i);
    if hard == line.len() {
        return hard;
    }
    match line[..hard].rfind(' ') {
        Some(space) if space >= hard / 2 => space + 1,
        _ => hard,
    }
}

/// One page: lines `[first, first + count)` (0-based) of `lines`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The first line shown, 1-based.
    pub offset: usize,
    /// Lines shown.
    pub count: usize,
    /// The page's text, lines joined by newlines.
    pub text: String,
}

/// The page from line `offset` (1-based), at most `max_chars` characters
/// of whole lines, and always at least one line. `None` when `offset` is
/// past the end.
pub fn page(lines: &[&str], offset: usize, max_chars: usize) -> Option<Page> {
    if offset == 0 || (offset > lines.len() && !(offset == 1 && lines.is_empty())) {
        return None;
    }
    let mut text = String::new();
    let mut chars = 0;
    let mut count = 0;
    for line in &lines[offset - 1..] {
        let n = line.chars().count() + 1;
        if count > 0 && chars + n > max_chars {
            break;
        }
        text.push_str(line);
        text.push('\n');
        chars += n;
        count += 1;
    }
    Some(Page {
        offset,
        count,
        text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_broken_at_a_space_or_at_the_limit() {
        let words = "word ".repeat(1000);
        let text = format!("short\n{words}\n{}", "x".repeat(4500));
        let (ls, broken) = lines(&text);
        assert_eq!(broken, 2);
        assert_eq!(ls[0], "short");
        assert!(ls[1..].iter().all(|l| l.chars().count() <= MAX_LINE_CHARS));
        assert_eq!(
            ls[1..].concat(),
            format!("{}{}", words.trim_end_matches('\n'), "x".repeat(4500))
        );
        assert!(ls[1].ends_with("word "), "{:?}", &ls[1][ls[1].len() - 10..]);
    }

    #[test]
    fn pages_hold_whole_lines_within_the_characters() {
        let ls = ["aaaa", "bbbb", "cccc", "dddd"];
        let p = page(&ls, 1, 10).unwrap();
        assert_eq!((p.offset, p.count, p.text.as_str()), (1, 2, "aaaa\nbbbb\n"));
        let p = page(&ls, 3, 10).unwrap();
        assert_eq!((p.count, p.text.as_str()), (2, "cccc\ndddd\n"));
        // A line longer than the page still comes, alone.
        assert_eq!(page(&ls, 2, 1).unwrap().count, 1);
        assert_eq!(page(&ls, 5, 10), None);
        assert_eq!(page(&[], 1, 10).unwrap().count, 0);
    }
}
