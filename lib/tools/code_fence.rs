//! A Markdown code fence around a whole text, or the HTML block a chat page
//! renders it as (`<pre><code>`): how a chat shows code, and not part of
//! the code. A weak model writes a file's content, or a patch, as it would
//! show it in a chat.

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

/// How a chat wrapped a whole text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wrapper {
    /// A Markdown code fence (```` ```python ````).
    Fence,
    /// An HTML code block (`<pre><code>`), as a chat page renders a fence.
    Pre,
}

impl Wrapper {
    /// The wrapper as a result names it.
    pub fn shown(self) -> &'static str {
        match self {
            Wrapper::Fence => "``` code fence",
            Wrapper::Pre => "<pre><code> block",
        }
    }

    /// Whether a file of this name may hold this wrapper as its own text.
    pub fn may_be_held_by(self, path: &str) -> bool {
        match self {
            Wrapper::Fence => may_hold_fences(path),
            Wrapper::Pre => may_hold_markup(path),
        }
    }
}

/// The text inside a chat's wrapper around all of `text`, and which one.
pub fn unwrapped(text: &str) -> Option<(&str, Wrapper)> {
    inside(text)
        .map(|inner| (inner, Wrapper::Fence))
        .or_else(|| inside_pre(text).map(|inner| (inner, Wrapper::Pre)))
}

/// The text inside `<pre><code>` (attributes allowed, as a language's
/// `class`) and `</code></pre>` around all of `text`, a line break after the
/// opening tags left out; `None` when another block opens or closes
/// inside, or the text before the closing tags does not end its line.
fn inside_pre(text: &str) -> Option<&str> {
    let t = text.trim_end_matches(['\n', '\r', ' ', '\t']);
    let rest = t.strip_prefix("<pre><code")?;
    let (attributes, rest) = rest.split_once('>')?;
    if !(attributes.is_empty() || attributes.starts_with(' ')) || attributes.contains(['<', '\n']) {
        return None;
    }
    let rest = rest
        .strip_prefix("\r\n")
        .or_else(|| rest.strip_prefix('\n'))
        .unwrap_or(rest);
    let inner = rest.strip_suffix("</code></pre>")?;
    if !(inner.is_empty() || inner.ends_with('\n'))
        || inner.contains("<pre")
        || inner.contains("</pre>")
    {
        return None;
    }
    Some(inner)
}

/// Whether a file of this name may hold HTML as its own text: markup,
/// templates and components, prose, or a name without an extension.
fn may_hold_markup(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => matches!(
            ext.to_ascii_lowercase().as_str(),
            "html"
                | "htm"
                | "xhtml"
                | "xml"
                | "svg"
                | "md"
                | "markdown"
                | "mdx"
                | "txt"
                | "text"
                | "rst"
                | "adoc"
                | "org"
                | "jsx"
                | "tsx"
                | "vue"
                | "svelte"
                | "astro"
                | "php"
                | "erb"
                | "ejs"
                | "hbs"
                | "mustache"
                | "njk"
                | "jinja"
                | "j2"
                | "liquid"
                | "twig"
                | "tmpl"
                | "tpl"
        ),
        _ => true,
    }
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
    fn a_pre_code_block_around_the_whole_text_is_found() {
        let js = "<pre><code>const a = 1;\nif (a < 2) {}\n</code></pre>\n";
        assert_eq!(
            unwrapped(js),
            Some(("const a = 1;\nif (a < 2) {}\n", Wrapper::Pre))
        );
        assert_eq!(
            unwrapped("<pre><code class=\"language-py\">\nx = 1\n</code></pre>"),
            Some(("x = 1\n", Wrapper::Pre))
        );
        assert_eq!(unwrapped("```\na\n```"), Some(("a\n", Wrapper::Fence)));
        // Not one block: text after it, two blocks, no line end, other tags.
        assert_eq!(unwrapped("<pre><code>a\n</code></pre>\nb\n"), None);
        assert_eq!(
            unwrapped("<pre><code>a\n</code></pre>\n<pre><code>b\n</code></pre>"),
            None
        );
        assert_eq!(unwrapped("<pre><code>a</code></pre>"), None);
        assert_eq!(unwrapped("<pre><codex>a\n</code></pre>"), None);
        assert_eq!(unwrapped("<pre>a\n</pre>"), None);
        // Where it may be the file's own text, it stays.
        for p in [
            "page.html",
            "App.tsx",
            "notes.md",
            "templates/x.j2",
            "LICENSE",
        ] {
            assert!(Wrapper::Pre.may_be_held_by(p), "{p}");
        }
        for p in ["cards.js", "app.py", "main.go", "style.css", "a.json"] {
            assert!(!Wrapper::Pre.may_be_held_by(p), "{p}");
        }
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
