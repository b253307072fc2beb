//! A name changed in one file is seldom used in that file alone. When an
//! edit turns one identifier into another (`calcTotal` into `orderTotal`)
//! and the file now defines the new name (`function orderTotal`, `def`,
//! `class`, `const`...), the other files of the project that still use the
//! old name are named in the result, with their lines, after a successful
//! edit and after one found already made. An edit of a word that is
//! defined nowhere in the file (`true` made `false`, `debug` made `info`)
//! is no rename and gets no note. A small model renamed a function in its module
//! with `replace_all`, then sent the same edit four more times, told only
//! that it was in place, while the program and the test that called the
//! function still used the old name.

use std::path::Path;

use super::EditArgs;
use crate::tool_protocol::{Context, Note, display_path};
use crate::tools::walk::{Links, Visibility, walker};

/// Names shorter than this are too common to look for (`i`, `id`).
const SHORTEST: usize = 3;
/// Entries of the walk looked at, as for a file's namesakes.
const LOOK: usize = 20_000;
/// Bytes read in all before the search gives up (a huge tree).
const READ_AT_MOST: u64 = 32 << 20;
/// Files larger than this are not searched (data, bundles).
const LARGEST: u64 = 1 << 20;
/// Files named, and lines named in each.
const FILES_NAMED: usize = 5;
const LINES_NAMED: usize = 3;

/// The old and the new name, when the call's one replacement (or each of
/// its `edits`, all alike) turns an identifier into another.
pub(super) fn renamed(args: &EditArgs) -> Option<(String, String)> {
    let mut pairs: Vec<(&str, &str)> = args
        .edits
        .iter()
        .map(|e| (e.old_string.as_str(), e.new_string.as_str()))
        .collect();
    if let (Some(old), Some(new)) = (&args.old_string, &args.new_string) {
        pairs.push((old, new));
    }
    let (old, new) = *pairs.first()?;
    let (old, new) = (old.trim(), new.trim());
    let same = pairs
        .iter()
        .all(|(o, n)| o.trim() == old && n.trim() == new);
    (same && old != new && identifier(old) && identifier(new))
        .then(|| (old.to_string(), new.to_string()))
}

/// Whether `s` is one name of code: letters, digits, `_` and `$`, not
/// starting with a digit, at least [`SHORTEST`] long.
fn identifier(s: &str) -> bool {
    s.len() >= SHORTEST && !s.starts_with(|c: char| c.is_ascii_digit()) && s.chars().all(word_char)
}

fn word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// The words that, before a name, define it, in the languages a project
/// most often holds.
const DEFINING: &[&str] = &[
    "function",
    "def",
    "class",
    "fn",
    "func",
    "const",
    "let",
    "var",
    "type",
    "struct",
    "enum",
    "interface",
    "trait",
    "macro",
    "sub",
    "proc",
    "module",
];

/// Whether `text` defines `name`: a line where the name follows one of
/// [`DEFINING`] (`async function name`, `pub fn name`, `export const
/// name`).
fn defines(text: &str, name: &str) -> bool {
    text.lines().any(|line| {
        line.match_indices(name).any(|(at, _)| {
            let after = line[at + name.len()..].chars().next();
            let before = line[..at].trim_end();
            let word = before
                .rsplit(|c: char| !word_char(c))
                .next()
                .unwrap_or_default();
            before.len() < line[..at].len()
                && !after.is_some_and(word_char)
                && DEFINING.contains(&word)
        })
    })
}

/// The note naming the other files of the workspace, besides `edited`,
/// where `old` still occurs as a whole word, when `edited` defines `new`;
/// `None` when it does not, or there are none.
pub(super) fn still_used(ctx: &Context, edited: &Path, old: &str, new: &str) -> Option<Note> {
    if !std::fs::read_to_string(edited).is_ok_and(|text| defines(&text, new)) {
        return None;
    }
    let top = ctx.root.clone().unwrap_or_else(|| ctx.cwd.clone());
    let edited = edited
        .canonicalize()
        .unwrap_or_else(|_| edited.to_path_buf());
    let mut read = 0u64;
    let mut found: Vec<(String, Vec<usize>)> = Vec::new();
    let mut more = 0usize;
    let walk = walker(ctx, &top, Visibility::default(), Links::default(), None).build();
    for entry in walk.take(LOOK).filter_map(Result::ok) {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        if meta.len() > LARGEST {
            continue;
        }
        if entry.path().canonicalize().ok().as_deref() == Some(edited.as_path()) {
            continue;
        }
        read += meta.len();
        if read > READ_AT_MOST {
            break;
        }
        let Ok(bytes) = std::fs::read(entry.path()) else {
            continue;
        };
        let Ok(text) = std::str::from_utf8(&bytes) else {
            continue;
        };
        let lines = lines_using(text, old);
        if lines.is_empty() {
            continue;
        }
        if found.len() == FILES_NAMED {
            more += 1;
            continue;
        }
        found.push((display_path(&ctx.cwd, entry.path()), lines));
    }
    if found.is_empty() {
        return None;
    }
    found.sort();
    let places: Vec<String> = found
        .iter()
        .map(|(file, lines)| {
            let shown: Vec<String> = lines
                .iter()
                .take(LINES_NAMED)
                .map(|l| l.to_string())
                .collect();
            let rest = if lines.len() > LINES_NAMED {
                ", ..."
            } else {
                ""
            };
            let word = if lines.len() == 1 { "line" } else { "lines" };
            format!("`{file}` ({word} {}{rest})", shown.join(", "))
        })
        .collect();
    let others = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    Some(Note::aside(format!(
        "`{old}` is still used in {}{others}. If this is a rename, change it there too: edit each file with old_string `{old}`, new_string `{new}` and replace_all true.",
        places.join(", ")
    )))
}

/// The 1-based numbers of the lines of `text` holding `name` as a whole
/// word.
fn lines_using(text: &str, name: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| {
            line.match_indices(name).any(|(at, _)| {
                let before = line[..at].chars().next_back();
                let after = line[at + name.len()..].chars().next();
                !before.is_some_and(word_char) && !after.is_some_and(word_char)
            })
        })
        .map(|(i, _)| i + 1)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_whole_words_count() {
        let text = "import { calcTotal } from './cart';\nconst calcTotals = 1;\n$calcTotal;\nx.calcTotal(a)\n";
        assert_eq!(lines_using(text, "calcTotal"), vec![1, 4]);
    }

    #[test]
    fn a_rename_is_of_a_name_the_file_defines() {
        for line in [
            "function orderTotal(items) {",
            "export async function orderTotal() {}",
            "def order_total(items):",
            "pub fn order_total() {}",
            "func OrderTotal(items []Item) int {",
            "const orderTotal = (items) => 0;",
            "class OrderTotal:",
        ] {
            let name = line
                .split(|c: char| !word_char(c))
                .find(|w| w.to_lowercase().replace('_', "") == "ordertotal")
                .unwrap();
            assert!(defines(line, name), "{line}");
        }
        for (text, name) in [
            ("debug = false\nlevel = info\n", "false"),
            ("return orderTotal(items);", "orderTotal"),
            ("x = functionorderTotal", "orderTotal"),
            ("const orderTotals = 1;", "orderTotal"),
        ] {
            assert!(!defines(text, name), "{text}");
        }
    }

    #[test]
    fn names_only() {
        for (old, new, yes) in [
            ("calcTotal", "orderTotal", true),
            ("calc_total", "order_total", true),
            ("id", "key", false),
            ("a + b", "a - b", false),
            ("2fast", "fast2", false),
            ("same", "same", false),
        ] {
            assert_eq!(
                identifier(old) && identifier(new) && old != new,
                yes,
                "{old}"
            );
        }
    }
}
