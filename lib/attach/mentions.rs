//! `@path` mentions in a prompt: a word that starts with `@` (at the start
//! of the prompt or after white space) and names an existing file attaches
//! that file. `@"a path with spaces"` quotes one. A word that names no file
//! (`@alice`, `@everyone`, an e-mail address, which has no `@` at its
//! start) is left as text, and so is trailing punctuation that the file's
//! name does not have (`see @notes.md.`).
//!
//! [`named`] finds the files a prompt names without an `@` (`fix
//! convert.py`, `"notes/shopping list.txt"`), for ag-loop to show a weak
//! model what it would otherwise edit unseen.

/// Characters taken off the end of a mention that names no file with them.
const TRAILING: &[char] = &['.', ',', ';', ':', '!', '?', ')', ']', '}', '\'', '"', '`'];

/// One mention: where its word starts in the text (a byte offset), and the
/// path it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    /// The byte offset of its `@`.
    pub at: usize,
    /// The path, as written (relative paths are the caller's to resolve).
    pub path: String,
}

/// The mentions in `text` that name a file, as `is_file` tells, in order.
pub fn find(text: &str, is_file: impl Fn(&str) -> bool) -> Vec<Mention> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        // `@` is one byte, so `i` is on a character boundary here.
        if bytes[i] != b'@' || !(i == 0 || text[..i].ends_with(char::is_whitespace)) {
            i += 1;
            continue;
        }
        let rest = &text[i + 1..];
        if let Some(quoted) = rest.strip_prefix('"')
            && let Some(end) = quoted.find('"')
        {
            let path = &quoted[..end];
            if !path.is_empty() && is_file(path) {
                out.push(Mention {
                    at: i,
                    path: path.to_string(),
                });
            }
            i += 1 + 1 + end + 1;
            continue;
        }
        let word_len = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let mut word = &rest[..word_len];
        while !word.is_empty() {
            if is_file(word) {
                out.push(Mention {
                    at: i,
                    path: word.to_string(),
                });
                break;
            }
            match word.strip_suffix(TRAILING) {
                Some(shorter) => word = shorter,
                None => break,
            }
        }
        i += 1 + word_len;
    }
    out
}

/// Characters taken off the start of a word that names a file with none.
const LEADING: &[char] = &['(', '[', '{', '\'', '"', '`', '<'];

/// The words of `text`, and the spans it quotes, that name a file by a
/// relative path as `is_file` tells, each once, in order. `@` mentions,
/// absolute paths, `~` paths and addresses (`https://...`) are not names
/// here: a mention is attached on its own, and the rest are outside the
/// project.
pub fn named(text: &str, is_file: impl Fn(&str) -> bool) -> Vec<String> {
    let offset = |part: &str| part.as_ptr() as usize - text.as_ptr() as usize;
    // (where it starts, the text, whether it is a whole quoted span)
    let mut candidates: Vec<(usize, &str, bool)> = Vec::new();
    for quote in ['"', '\'', '`'] {
        let parts: Vec<&str> = text.split(quote).collect();
        // The spans between a quote and the next one: every second part,
        // when a quote closes it.
        for i in (1..parts.len().saturating_sub(1)).step_by(2) {
            candidates.push((offset(parts[i]), parts[i], true));
        }
    }
    for word in text.split(char::is_whitespace) {
        candidates.push((offset(word), word, false));
    }
    // In the order the prompt names them.
    candidates.sort_by_key(|c| c.0);
    let mut out: Vec<String> = Vec::new();
    for (_, candidate, quoted) in candidates {
        let mut word = if quoted {
            candidate
        } else {
            candidate.trim_start_matches(LEADING)
        };
        loop {
            let plain = !word.is_empty()
                && !word.starts_with(['@', '/', '~', '-'])
                && !word.contains("://")
                && !word.split('/').any(|part| part == "..");
            if plain && is_file(word) {
                if !out.iter().any(|o| o == word) {
                    out.push(word.to_string());
                }
                break;
            }
            match word.strip_suffix(TRAILING).filter(|_| !quoted) {
                Some(shorter) => word = shorter,
                None => break,
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(text: &str, files: &[&str]) -> Vec<String> {
        find(text, |p| files.contains(&p))
            .into_iter()
            .map(|m| m.path)
            .collect()
    }

    #[test]
    fn words_that_start_with_at_and_name_a_file_are_mentions() {
        let files = ["src/main.rs", "notes.md", "a b.txt", "v1.2", "x)"];
        assert_eq!(
            paths("look at @src/main.rs and @notes.md.", &files),
            ["src/main.rs", "notes.md"]
        );
        assert_eq!(paths("@notes.md, please", &files), ["notes.md"]);
        assert_eq!(paths("(see @notes.md)", &files), ["notes.md"]);
        // Not at the start of a word.
        assert_eq!(paths("see (@notes.md)", &files), Vec::<String>::new());
        assert_eq!(paths("tag @v1.2.", &files), ["v1.2"]);
        assert_eq!(paths("odd @x)", &files), ["x)"]);
        assert_eq!(paths("quoted @\"a b.txt\" here", &files), ["a b.txt"]);
        // No file, an address, a lone @: text.
        assert!(paths("ask @alice or me@notes.md or @ alone", &files).is_empty());
        assert!(paths("@\"unclosed a b.txt", &files).is_empty());
        assert!(paths("", &files).is_empty());
        assert_eq!(
            find("  @notes.md", |p| p == "notes.md"),
            [Mention {
                at: 2,
                path: "notes.md".into()
            }]
        );
    }

    #[test]
    fn files_named_without_an_at_are_found_in_order() {
        let files = [
            "convert.py",
            "README.md",
            "notes/shopping list.txt",
            "Makefile",
            "lib/x.rs",
        ];
        let find = |t: &str| named(t, |p| files.contains(&p));
        assert_eq!(
            find("cli.py has an option that README.md doesn't list; see convert.py."),
            ["README.md", "convert.py"]
        );
        assert_eq!(
            find("bash backup.sh fails on \"notes/shopping list.txt\". Fix (lib/x.rs)"),
            ["notes/shopping list.txt", "lib/x.rs"]
        );
        assert_eq!(find("the Makefile uses tabs; `Makefile`"), ["Makefile"]);
        // Mentions, absolute, home and parent paths, addresses and flags
        // are not names of the project's files.
        let odd = |p: &str| !p.is_empty();
        assert!(
            named(
                "@a /etc/passwd ~/.ssh/id ../up/x a/../b https://h/x --flag",
                odd
            )
            .is_empty()
        );
        assert!(named("", odd).is_empty());
        assert!(named("nothing here names a file", |_| false).is_empty());
        // An unclosed quote leaves its words to be read one by one.
        assert_eq!(
            named("open \"convert.py and go", |p| files.contains(&p)),
            ["convert.py"]
        );
    }

    #[test]
    fn unicode_around_mentions_is_safe() {
        let files = ["é.txt"];
        assert_eq!(paths("voilà @é.txt… ok", &["é.txt…", "é.txt"]), ["é.txt…"]);
        assert_eq!(paths("naïve\u{00a0}@é.txt", &files), ["é.txt"]);
        assert!(paths("@", &files).is_empty());
    }
}
