//! Marker lines of code sketches: the lines that stand for unchanged code
//! left out. Models write them in the comment syntax of the file at hand
//! (`// ... existing code ...`, `# ... rest of file ...`, `<!-- ... -->`,
//! `{/* ... */}`, `--[[ ... ]]`, `{# ... #}`), sometimes bare
//! (`... existing code ...`), sometimes without the ellipsis
//! (`// existing code`). A marker is recognised by its shape alone; the
//! caller also requires that the line is not in the file, so that a real
//! comment shaped like a marker stays code.

/// Comment openers, longer ones before their prefixes (`{{!--` before
/// `{{!`, `--[[` before `--`).
const OPENERS: [&str; 22] = [
    "<!--", "{{!--", "{{!", "{/*", "{#", "{-", "<%#", "@*", "--[[", "/*", "(*", "//", "--", "#",
    ";", "%", "'", "\"", "!", "*", "REM ", "::",
];

/// Comment closers, longer ones before their suffixes.
const CLOSERS: [&str; 12] = [
    "--}}", "-->", "*/}", "}}", "*/", "*)", "#}", "-}", "%>", "*@", "]]", "\"",
];

/// How many words a comment without an ellipsis that ends like a marker
/// may have: `// rest of the code unchanged` is one, a sentence that
/// happens to end with `unchanged` is a real comment.
const MAX_PLAIN_WORDS: usize = 6;

/// Whether `line` is a marker for left-out code: a comment (in any of the
/// syntaxes above) holding an ellipsis and at most a few plain words, or a
/// comment that only says the code is existing or unchanged, or a bare
/// ellipsis line with words that say so (`... existing code ...`; a bare
/// `...` alone is Python and YAML, and `...rest` is a JavaScript spread).
pub fn is_marker(line: &str) -> bool {
    let t = line.trim();
    match OPENERS.iter().find_map(|o| t.strip_prefix(o)) {
        Some(body) => {
            let body = body.trim_start_matches(['/', '#', ';', '*', '-', '%', '!']);
            let body = CLOSERS
                .iter()
                .find_map(|c| body.trim_end().strip_suffix(c))
                .unwrap_or(body)
                .trim();
            let body = unbracket(body);
            let words = plain_words(body);
            match words {
                Some(w) if has_ellipsis(body) => w.len() <= 80,
                Some(w) => says_left_out(w),
                None => false,
            }
        }
        None => {
            let body = unbracket(t);
            let starts = body.starts_with("...") || body.starts_with('…');
            let ends = body.ends_with("...") || body.ends_with('…');
            match plain_words(body) {
                Some(w) if starts && !w.is_empty() && w.len() <= 80 => {
                    ends || (says_left_out(w) && w.split_whitespace().count() >= 2)
                }
                _ => false,
            }
        }
    }
}

/// `[... existing code ...]` and `(... rest ...)` as their inside.
fn unbracket(s: &str) -> &str {
    for (a, b) in [('[', ']'), ('(', ')'), ('<', '>')] {
        if let Some(inner) = s.strip_prefix(a).and_then(|r| r.strip_suffix(b)) {
            return inner.trim();
        }
    }
    s
}

fn has_ellipsis(body: &str) -> bool {
    body.starts_with("...") || body.starts_with('…') || body.ends_with("...") || body.ends_with('…')
}

/// The words of a marker's body once its ellipses are trimmed, if they are
/// plain prose (no code punctuation such as `=`, `;`, `{` or quotes at the
/// ends).
fn plain_words(body: &str) -> Option<&str> {
    let words = body.trim_matches(|c: char| c == '.' || c == '…' || c.is_whitespace());
    let plain = words
        .chars()
        .all(|c| c.is_alphanumeric() || c.is_whitespace() || "-_,:'()/`.…&".contains(c));
    let quoted = words.starts_with('\'') || words.ends_with('\'');
    (plain && !quoted).then_some(words)
}

/// Whether words (without an ellipsis, or after a bare one) say the line
/// stands for code left out: they begin with `existing code` (at most four
/// words) or end with `unchanged`, `omitted`, `as before`, `stays the
/// same`. (`rest of` alone is not enough: `// rest of args` is a comment.)
fn says_left_out(words: &str) -> bool {
    let w = words
        .to_lowercase()
        .trim_end_matches(|c: char| !c.is_alphanumeric())
        .to_string();
    let n = w.split_whitespace().count();
    (w.starts_with("existing code") && n <= 4)
        || (["unchanged", "omitted", "as before", "stays the same"]
            .iter()
            .any(|e| w.ends_with(e))
            && n <= MAX_PLAIN_WORDS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_in_any_comment_syntax() {
        for m in [
            "// ... existing code ...",
            "    // ... existing code ...",
            "# ... rest of file ...",
            "# ... keep existing ...",
            "-- ... existing code ...",
            "/* ... */",
            "/** ... existing methods ... */",
            "<!-- ... existing markup ... -->",
            "<!-- ... -->",
            "; ... existing code ...",
            ";; ... existing code ...",
            "{/* ... existing JSX ... */}",
            "// …",
            "// ...existing code...",
            "// rest of the function ...",
            "// ... rest of the file unchanged ...",
            "// ... (existing code) ...",
            "// [... existing code ...]",
            "--[[ ... existing code ... ]]",
            "{# ... existing blocks ... #}",
            "{{!-- ... --}}",
            "<%# ... existing code ... %>",
            "@* ... existing markup ... *@",
            "{- ... existing code ... -}",
            "(* ... existing code ... *)",
            "% ... existing preamble ...",
            "! ... existing code ...",
            "' ... existing code ...",
            "REM ... existing code ...",
            ":: ... existing code ...",
            " * ... existing code ...",
            "// existing code",
            "# Existing code here",
            "// rest of the code unchanged",
            "# rest unchanged",
            "... existing code ...",
            "...rest of the file unchanged",
            "[... existing code ...]",
        ] {
            assert!(is_marker(m), "{m}");
        }
    }

    #[test]
    fn code_and_real_comments_are_not_markers() {
        for not in [
            "...",
            "…",
            "x = foo(...)",
            "// TODO: fix this",
            "# comment",
            "// see foo(a, b); ...",
            "print('...')",
            "'...'",
            "\"...\",",
            "...rest",
            "  ...props,",
            "...args)",
            "{...state}",
            "// Rest of args",
            "// existing clients need the old path, so the flag stays on by default for now",
            "// reuse existing code paths for old clients",
            "# the cache is unchanged between runs when the key did not change at all",
            "#!/bin/sh",
            "/* eslint-disable */",
            "-->",
        ] {
            assert!(!is_marker(not), "{not}");
        }
    }
}
