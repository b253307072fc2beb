//! The unified diff of an edit and its line counts. Only the stretch
//! between the common start and the common end of the two versions is
//! diffed (with `similar`), so editing one line of a huge file costs a
//! memcmp of it, not a diff of it.

use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp, capture_diff_slices_deadline, group_diff_ops};

use super::text::line_of;

/// Lines of context around each change.
const CONTEXT: usize = 3;
/// Diff text kept in details; the rest is summarised.
const MAX_DIFF_BYTES: usize = 64 * 1024;
/// A diff of an unusually large change stops looking for the smallest
/// diff after this long and reports a correct but larger one.
const DIFF_TIME: Duration = Duration::from_secs(2);

/// What changed between two versions of a file.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Change {
    /// A unified diff, possibly cut (see `truncated`).
    pub diff: String,
    /// Lines only in the new version.
    pub added: u64,
    /// Lines only in the old version.
    pub removed: u64,
    /// Lines changed: a replaced line counts once, an added or removed one once.
    pub changed: u64,
    /// Whether the diff text was cut at [`MAX_DIFF_BYTES`].
    pub truncated: bool,
}

/// The change from `old` to `new`, as a unified diff labelled with `name`.
pub fn diff(name: &str, old: &[u8], new: &[u8]) -> Change {
    let prefix = common_prefix(old, new);
    let limit = old.len().min(new.len()) - prefix;
    let suffix = common_suffix(old, new, limit);
    if prefix == old.len() && prefix == new.len() {
        return Change::default();
    }
    // Widen to whole lines, plus context, on both sides.
    let mut start = line_start(old, prefix);
    for _ in 0..CONTEXT {
        if start == 0 {
            break;
        }
        start = line_start(old, start - 1);
    }
    let old_end_base = old.len() - suffix;
    let mut end = line_end(old, old_end_base);
    for _ in 0..CONTEXT {
        if end >= old.len() {
            break;
        }
        end = memchr::memchr(b'\n', &old[end..]).map_or(old.len(), |i| end + i + 1);
    }
    let grow = end - old_end_base;
    let old_part = &old[start..end];
    let new_part = &new[start..new.len() - suffix + grow];
    let first_line = line_of(old, start);

    let old_lines = split_lines(old_part);
    let new_lines = split_lines(new_part);
    let ops = capture_diff_slices_deadline(
        Algorithm::Myers,
        &old_lines,
        &new_lines,
        Some(Instant::now() + DIFF_TIME),
    );
    let mut change = Change::default();
    for op in &ops {
        let (o, n) = (op.old_range().len() as u64, op.new_range().len() as u64);
        match op {
            DiffOp::Equal { .. } => {}
            _ => {
                change.added += n;
                change.removed += o;
                change.changed += o.max(n);
            }
        }
    }
    let mut text = String::new();
    let label = if name.starts_with('/') {
        name.to_string()
    } else {
        format!("a/{name}")
    };
    let label_new = if name.starts_with('/') {
        name.to_string()
    } else {
        format!("b/{name}")
    };
    text.push_str(&format!("--- {label}\n+++ {label_new}\n"));
    let mut cut_at = None;
    for group in group_diff_ops(ops, CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (o0, o1) = (first.old_range().start, last.old_range().end);
        let (n0, n1) = (first.new_range().start, last.new_range().end);
        text.push_str(&format!(
            "@@ -{} +{} @@\n",
            range(first_line, o0, o1 - o0),
            range(first_line, n0, n1 - n0)
        ));
        for op in &group {
            let (tag, old_r, new_r) = op.as_tag_tuple();
            match tag {
                similar::DiffTag::Equal => push_lines(&mut text, ' ', &old_lines[old_r]),
                similar::DiffTag::Delete => push_lines(&mut text, '-', &old_lines[old_r]),
                similar::DiffTag::Insert => push_lines(&mut text, '+', &new_lines[new_r]),
                similar::DiffTag::Replace => {
                    push_lines(&mut text, '-', &old_lines[old_r]);
                    push_lines(&mut text, '+', &new_lines[new_r]);
                }
            }
        }
        if text.len() > MAX_DIFF_BYTES {
            cut_at = Some(text.len());
            break;
        }
    }
    if let Some(len) = cut_at {
        let mut keep = MAX_DIFF_BYTES.min(len);
        while !text.is_char_boundary(keep) {
            keep -= 1;
        }
        let keep = text[..keep].rfind('\n').map_or(0, |i| i + 1);
        text.truncate(keep);
        text.push_str("... (diff cut here; the whole change is in the file)\n");
        change.truncated = true;
    }
    change.diff = text;
    change
}

/// `start,len` of a hunk in unified-diff terms (an empty range names the
/// line before it).
fn range(first_line: u64, index: usize, len: usize) -> String {
    let line = first_line + index as u64;
    match len {
        0 => format!("{},0", line - 1),
        1 => format!("{line}"),
        n => format!("{line},{n}"),
    }
}

fn push_lines(out: &mut String, sign: char, lines: &[&[u8]]) {
    for line in lines {
        out.push(sign);
        let (body, newline) = match line.strip_suffix(b"\n") {
            Some(b) => (b.strip_suffix(b"\r").unwrap_or(b), true),
            None => (*line, false),
        };
        out.push_str(&String::from_utf8_lossy(body));
        out.push('\n');
        if !newline {
            out.push_str("\\ No newline at end of file\n");
        }
    }
}

/// Lines with their newlines.
fn split_lines(text: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut at = 0;
    for i in memchr::memchr_iter(b'\n', text) {
        out.push(&text[at..=i]);
        at = i + 1;
    }
    if at < text.len() {
        out.push(&text[at..]);
    }
    out
}

/// Start of the line that byte `pos` is on.
fn line_start(text: &[u8], pos: usize) -> usize {
    memchr::memrchr(b'\n', &text[..pos.min(text.len())]).map_or(0, |i| i + 1)
}

/// The end (after the newline) of the line that ends at or after `pos`,
/// where `pos` is not yet at a line start.
fn line_end(text: &[u8], pos: usize) -> usize {
    if pos == 0 || pos >= text.len() || text[pos - 1] == b'\n' {
        return pos.min(text.len());
    }
    memchr::memchr(b'\n', &text[pos..]).map_or(text.len(), |i| pos + i + 1)
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const CHUNK: usize = 4096;
    let n = a.len().min(b.len());
    let mut i = 0;
    // Whole chunks compare with memcmp; only the differing one byte by byte.
    while i + CHUNK <= n && a[i..i + CHUNK] == b[i..i + CHUNK] {
        i += CHUNK;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

fn common_suffix(a: &[u8], b: &[u8], limit: usize) -> usize {
    const CHUNK: usize = 4096;
    let (la, lb) = (a.len(), b.len());
    let mut i = 0;
    while i + CHUNK <= limit && a[la - i - CHUNK..la - i] == b[lb - i - CHUNK..lb - i] {
        i += CHUNK;
    }
    while i < limit && a[la - i - 1] == b[lb - i - 1] {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_changed_line_with_context() {
        let old: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 10\n", "line ten\n");
        let c = diff("f.txt", old.as_bytes(), new.as_bytes());
        assert_eq!(
            c.diff,
            "--- a/f.txt\n+++ b/f.txt\n@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+line ten\n line 11\n line 12\n line 13\n"
        );
        assert_eq!((c.added, c.removed, c.changed), (1, 1, 1));
    }

    #[test]
    fn insertion_at_the_top_and_missing_newline() {
        let c = diff("f", b"a\nb", b"x\na\nb");
        assert_eq!(
            c.diff,
            "--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n+x\n a\n b\n\\ No newline at end of file\n"
        );
        let c = diff("/abs/f", b"", b"x\n");
        assert_eq!(c.diff, "--- /abs/f\n+++ /abs/f\n@@ -0,0 +1 @@\n+x\n");
        let c = diff("f", b"a\nb", b"a\nc");
        assert_eq!(
            c.diff,
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
        );
        assert_eq!(c.changed, 1);
    }

    #[test]
    fn identical_is_empty_and_prefix_suffix_are_exact() {
        assert_eq!(diff("f", b"same", b"same"), Change::default());
        assert_eq!(common_prefix(b"abcX", b"abcY"), 3);
        let big_a = vec![b'x'; 10_000];
        let mut big_b = big_a.clone();
        big_b[5000] = b'y';
        assert_eq!(common_prefix(&big_a, &big_b), 5000);
        assert_eq!(common_suffix(&big_a, &big_b, 10_000), 4999);
    }
}
