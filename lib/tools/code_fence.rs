//! A Markdown code fence around a whole text: how a chat shows code, and
//! not part of the code. A weak model writes a file's content, or a patch,
//! as it would show it in a chat.

/// The text inside a code fence that wraps all of `text`: an opening line
/// of three backticks (with or without a language) and a closing one, the
/// inner text keeping the line ending before the closing fence. `None`
/// when `text` is not one fenced block: a fence line inside it means
/// several blocks, or text that holds fences of its own.
pub fn inside(text: &str) -> Option<&str> {
    let t = text.trim_end_matches(['\n', '\r', ' ', '\t']);
    let (first, rest) = t.split_once('\n')?;
    let first = first.trim_end_matches('\r');
    // An opening fence names at most a language (```python, ```json).
    let lang = first.strip_prefix("```")?;
    if lang.contains('`') || lang.trim().contains(char::is_whitespace) {
        return None;
    }
    let inner = rest.strip_suffix("```")?;
    if !(inner.is_empty() || inner.ends_with('\n')) {
        return None;
    }
    if inner.lines().any(|l| l.starts_with("```")) {
        return None;
    }
    Some(inner)
}

/// Whether a file of this name may hold a code fence as its own text
/// (Markdown and plain text, or a name without an extension); in any other
/// file, a fence around the whole content is the chat's, not the file's.
pub fn may_hold_fences(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => matches!(
            ext.to_ascii_lowercase().as_str(),
            "md" | "markdown" | "mdx" | "txt" | "text" | "rst" | "adoc" | "org"
        ),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_around_the_whole_text_is_found() {
        assert_eq!(inside("```python\nprint(1)\n```\n"), Some("print(1)\n"));
        assert_eq!(inside("```\na\nb\n```"), Some("a\nb\n"));
        assert_eq!(inside("```js\r\nx();\r\n```\r\n"), Some("x();\r\n"));
        assert_eq!(inside("```\n```"), Some(""));
        // Not one fenced block: text around it, two blocks, a fence inside.
        assert_eq!(inside("Here:\n```\na\n```"), None);
        assert_eq!(inside("```\na\n```\n\n```\nb\n```"), None);
        assert_eq!(inside("```\na\n```sh\nb\n```"), None);
        assert_eq!(inside("```\na```"), None);
        assert_eq!(inside("print(1)\n"), None);
        assert_eq!(inside("``` not a language\na\n```"), None);
    }

    #[test]
    fn prose_files_may_hold_fences() {
        for p in [
            "README.md",
            "docs/notes.txt",
            "Makefile",
            "LICENSE",
            ".bashrc",
        ] {
            assert!(may_hold_fences(p), "{p}");
        }
        for p in ["app.py", "src/main.rs", "config.json", "index.HTML"] {
            assert!(!may_hold_fences(p), "{p}");
        }
    }
}
