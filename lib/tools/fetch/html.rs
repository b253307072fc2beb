//! A web page's main content as markdown. html5ever parses the page (as a
//! browser would, tag soup included) and htmd writes the markdown
//! (headings, lists, fenced code with its language, tables, links); in
//! between, this file finds the main content and prunes what is not:
//!
//! 1. the page's own word for it: `<main>` or `role="main"`, else its one
//!    `<article>`;
//! 2. else a short form of readability's scoring (Mozilla's reader view):
//!    every paragraph scores its ancestors by its length and commas, a
//!    container's class or id (`content`, `article` against `sidebar`,
//!    `comment`) weighs in, links count against, and the best container
//!    wins; the whole body when none scores;
//! 3. inside what was found: no navigation, header (but an article's, or
//!    one holding the title), footer, aside, form
//!    controls, scripts, styles, frames, hidden elements, and no element
//!    whose class or id says it is an ad, a menu, a banner, a share bar or
//!    the like (never inside code, whose highlighting classes say
//!    `comment`).
//!
//! Links and images become absolute against the page's final URL; images
//! without alternative text (decoration, tracking pixels) and inline data
//! images are left out. A page nested deeper than `MAX_DEPTH` has its
//! deeper elements flattened to their text, so that nothing here or in
//! htmd recurses without bound on a hostile page; the conversion also runs
//! on a thread with a large stack. The parser's time grows with the square
//! of the nesting (each new element looks down the stack of open ones), so
//! a page of a million nested `<div>`s would keep it busy for hours: the
//! conversion is given [`CONVERT_SECS`], and a page it does not finish in
//! that time, or that makes it panic, comes back as its text without
//! markup ([`text_only`], one pass), with a note.

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::{Arc, mpsc};
use std::time::Duration;

use markup5ever_rcdom::{Handle, NodeData};
use url::Url;

/// Elements deeper than this are flattened to their text.
const MAX_DEPTH: usize = 200;

/// Stack of the conversion thread: room for htmd's recursion at
/// [`MAX_DEPTH`] with margin.
const STACK_BYTES: usize = 64 * 1024 * 1024;

/// Seconds the conversion to markdown may take before the page's plain
/// text is shown instead (a 2 MB page takes a fraction of one).
pub const CONVERT_SECS: u64 = 10;

/// Elements that are never the content.
const DROPPED_TAGS: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "canvas", "iframe", "frame", "frameset",
    "object", "embed", "nav", "aside", "footer", "input", "select", "button", "textarea", "dialog",
    "link", "meta", "head", "title",
];

/// ARIA roles of what is not the content.
const DROPPED_ROLES: &[&str] = &[
    "navigation",
    "banner",
    "contentinfo",
    "complementary",
    "search",
    "dialog",
    "alertdialog",
    "menu",
    "menubar",
    "toolbar",
    "tablist",
];

/// Class or id words (whole words of a class or id split at `-`, `_`
/// and spaces) of what is not the content; short ones such as `ad` only
/// as a whole word, so that `header` or `shadow` is not read as an ad.
const BOILERPLATE_WORDS: &[&str] = &[
    "ad",
    "ads",
    "adsbygoogle",
    "advert",
    "advertisement",
    "advertising",
    "banner",
    "breadcrumb",
    "breadcrumbs",
    "cookie",
    "cookies",
    "consent",
    "gdpr",
    "menu",
    "navbar",
    "nav",
    "sidebar",
    "share",
    "sharing",
    "social",
    "sponsor",
    "sponsored",
    "promo",
    "newsletter",
    "subscribe",
    "popup",
    "modal",
    "related",
    "comments",
    "disqus",
    "pagination",
    "pager",
    "skyscraper",
    "footer",
    "masthead",
    "toolbar",
    "outbrain",
    "taboola",
];

/// Words that keep an element whatever else its class says
/// (readability's `okMaybeItsACandidate`).
const CONTENT_WORDS: &[&str] = &[
    "article",
    "body",
    "content",
    "main",
    "post",
    "entry",
    "story",
    "text",
    "prose",
    "markdown",
    "docs",
    "documentation",
];

/// What a page became.
#[derive(Debug, Clone)]
pub struct Converted {
    /// The page's `<title>`.
    pub title: Option<String>,
    /// The main content as markdown.
    pub markdown: String,
    /// Where the main content was found (`text` when the page came back
    /// as its plain text).
    pub found: &'static str,
    /// Why the page is its plain text rather than markdown, if it is.
    pub plain: Option<String>,
}

/// Converts a page, read from `base`, on a thread of its own, within
/// `within`; past that, or when the converter panics, the page's plain
/// text. A conversion given up on runs on until the process ends (a tool
/// call is a process of its own), since a thread cannot be stopped.
pub fn to_markdown(html: String, base: Url, within: Duration) -> Converted {
    let html: Arc<str> = Arc::from(html);
    let (tx, rx) = mpsc::channel();
    let page = html.clone();
    let started = std::thread::Builder::new()
        .name("ag-fetch-html".into())
        .stack_size(STACK_BYTES)
        .spawn(move || {
            let done =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| convert(&page, &base)));
            let _ = tx.send(done.ok());
        });
    let why = match started.map(|_| rx.recv_timeout(within)) {
        Ok(Ok(Some(c))) => return c,
        Ok(Ok(None)) => "the converter failed on it".to_string(),
        Ok(Err(_)) => format!(
            "converting it to markdown took more than {} s (a page nested very deep?)",
            within.as_secs()
        ),
        Err(e) => format!("the conversion could not start: {e}"),
    };
    Converted {
        title: None,
        markdown: text_only(&html),
        found: "text",
        plain: Some(why),
    }
}

fn convert(html: &str, base: &Url) -> Converted {
    use htmd::options::{BulletListMarker, Options};
    let converter = htmd::HtmlToMarkdown::builder()
        .options(Options {
            bullet_list_marker: BulletListMarker::Dash,
            ul_bullet_spacing: 1,
            ol_number_spacing: 1,
            ..Options::default()
        })
        // Belt and braces: pruning removes these already.
        .skip_tags(vec!["script", "style", "noscript", "template", "head"])
        // <noscript> parsed as markup, not text, since no script runs here.
        .scripting_enabled(false)
        .build();
    // Parsing a string cannot fail (html5ever takes any input); an error
    // would come from the I/O the string does not do.
    let Ok(document) = converter.html_to_tree(html) else {
        return Converted {
            title: None,
            markdown: String::new(),
            found: "body",
            plain: None,
        };
    };
    flatten_deep(&document);
    let title = find(&document, &|n| tag(n) == Some("title")).map(|t| squeeze(&text_of(&t)));
    let body = find(&document, &|n| tag(n) == Some("body")).unwrap_or_else(|| document.clone());
    let (root, found) = match semantic_root(&body) {
        Some(found) => found,
        None => {
            prune(&body, base, false);
            match scored_root(&body) {
                Some(root) => (root, "scored"),
                None => (body.clone(), "body"),
            }
        }
    };
    prune(&root, base, tag(&root) == Some("article"));
    let mut markdown = tidy(&converter.tree_to_markdown(&root));
    let has_h1 = find(&root, &|n| tag(n) == Some("h1")).is_some();
    if let Some(t) = title.as_deref().filter(|t| !t.is_empty() && !has_h1) {
        markdown = format!("# {t}\n\n{markdown}");
    }
    Converted {
        title: title.filter(|t| !t.is_empty()),
        markdown,
        found,
        plain: None,
    }
}

/// A page's text without markup, in one pass over it: what is inside
/// `script`, `style` and comments left out, block elements as line
/// breaks, the common character references decoded.
pub fn text_only(html: &str) -> String {
    const SKIPPED: [&str; 4] = ["script", "style", "noscript", "template"];
    const BLOCKS: [&str; 17] = [
        "p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "section",
        "article", "table", "ul", "ol",
    ];
    let lower = html.to_ascii_lowercase();
    let mut out = String::with_capacity(html.len() / 2);
    let mut i = 0;
    while let Some(lt) = html[i..].find('<').map(|p| i + p) {
        out.push_str(&decode_entities(&html[i..lt]));
        if lower[lt..].starts_with("<!--") {
            i = lower[lt..].find("-->").map_or(html.len(), |e| lt + e + 3);
            continue;
        }
        let Some(gt) = html[lt..].find('>').map(|p| lt + p) else {
            i = html.len();
            break;
        };
        let name: String = lower[lt + 1..gt]
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        i = gt + 1;
        if SKIPPED.contains(&name.as_str()) && !lower[lt + 1..].starts_with('/') {
            let close = format!("</{name}");
            i = lower[i..].find(&close).map_or(html.len(), |e| i + e);
        } else if BLOCKS.contains(&name.as_str()) {
            out.push('\n');
        }
    }
    if i < html.len() {
        out.push_str(&decode_entities(&html[i..]));
    }
    let mut text = String::with_capacity(out.len());
    let mut blank = 0;
    for line in out.lines() {
        let line = squeeze(line);
        if line.is_empty() {
            blank += 1;
            if blank > 1 || text.is_empty() {
                continue;
            }
        } else {
            blank = 0;
        }
        text.push_str(&line);
        text.push('\n');
    }
    text.truncate(text.trim_end().len());
    text.push('\n');
    text
}

/// `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&#39;`, `&apos;`, `&nbsp;` and
/// numeric references; others are left as they are.
fn decode_entities(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains('&') {
        return s.into();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let end = rest[..rest.len().min(12)].find(';');
        let decoded = end.and_then(|e| {
            let name = &rest[1..e];
            let c = match name {
                "amp" => '&',
                "lt" => '<',
                "gt" => '>',
                "quot" => '"',
                "apos" | "#39" => '\'',
                "nbsp" => ' ',
                _ => {
                    let n = match name.strip_prefix("#x").or_else(|| name.strip_prefix("#X")) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok(),
                        None => name.strip_prefix('#').and_then(|d| d.parse().ok()),
                    };
                    n.and_then(char::from_u32)?
                }
            };
            Some((c, e + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out.into()
}

fn tag(node: &Handle) -> Option<&str> {
    match &node.data {
        NodeData::Element { name, .. } => Some(&name.local),
        _ => None,
    }
}

fn attr(node: &Handle, key: &str) -> Option<String> {
    match &node.data {
        NodeData::Element { attrs, .. } => attrs
            .borrow()
            .iter()
            .find(|a| &*a.name.local == key)
            .map(|a| a.value.to_string()),
        _ => None,
    }
}

/// The first node (this one or below, in document order) that `is` holds for.
fn find(node: &Handle, is: &dyn Fn(&Handle) -> bool) -> Option<Handle> {
    let mut stack = vec![node.clone()];
    while let Some(n) = stack.pop() {
        if is(&n) {
            return Some(n);
        }
        stack.extend(n.children.borrow().iter().rev().cloned());
    }
    None
}

/// Every node below `node` that `is` holds for, in document order.
fn find_all(node: &Handle, is: &dyn Fn(&Handle) -> bool) -> Vec<Handle> {
    let mut out = Vec::new();
    let mut stack = vec![node.clone()];
    while let Some(n) = stack.pop() {
        if is(&n) {
            out.push(n.clone());
        }
        stack.extend(n.children.borrow().iter().rev().cloned());
    }
    out
}

/// The text below a node, iteratively (the tree may be deep).
fn text_of(node: &Handle) -> String {
    let mut out = String::new();
    let mut stack = vec![node.clone()];
    while let Some(n) = stack.pop() {
        if let NodeData::Text { contents } = &n.data {
            out.push_str(&contents.borrow());
        }
        stack.extend(n.children.borrow().iter().rev().cloned());
    }
    out
}

/// Runs of whitespace as one space, trimmed.
fn squeeze(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Replaces what lies below [`MAX_DEPTH`] with its text, kept in the first
/// text node found there (rcdom makes no new nodes without its string
/// type, which htmd does not export; reusing one keeps the text).
fn flatten_deep(document: &Handle) {
    let mut stack = vec![(document.clone(), 0usize)];
    while let Some((node, depth)) = stack.pop() {
        if depth < MAX_DEPTH {
            for child in node.children.borrow().iter() {
                stack.push((child.clone(), depth + 1));
            }
            continue;
        }
        if node.children.borrow().is_empty() {
            continue;
        }
        let text = squeeze(&text_of(&node));
        let keeper = find(&node, &|n| matches!(n.data, NodeData::Text { .. }))
            .filter(|k| !Rc::ptr_eq(k, &node));
        let mut children = node.children.borrow_mut();
        children.clear();
        if let Some(keeper) = keeper {
            if let NodeData::Text { contents } = &keeper.data {
                let mut c = contents.borrow_mut();
                c.clear();
                c.push_slice(&text);
            }
            keeper.parent.set(Some(Rc::downgrade(&node)));
            children.push(keeper);
        }
    }
}

/// `<main>` (or `role="main"`) holding the most text, else the one
/// `<article>`.
fn semantic_root(body: &Handle) -> Option<(Handle, &'static str)> {
    let mains = find_all(body, &|n| {
        tag(n) == Some("main") || attr(n, "role").is_some_and(|r| r.eq_ignore_ascii_case("main"))
    });
    if let Some(main) = mains
        .into_iter()
        .filter(|m| !hidden(m))
        .max_by_key(|m| text_of(m).trim().len())
        .filter(|m| !text_of(m).trim().is_empty())
    {
        return Some((main, "main"));
    }
    let articles = find_all(body, &|n| tag(n) == Some("article"));
    match articles.as_slice() {
        [one] if !text_of(one).trim().is_empty() => Some((one.clone(), "article")),
        _ => None,
    }
}

/// Hidden from readers: `hidden`, `aria-hidden="true"`, `display: none`.
fn hidden(node: &Handle) -> bool {
    attr(node, "hidden").is_some()
        || attr(node, "aria-hidden").is_some_and(|v| v.eq_ignore_ascii_case("true"))
        || attr(node, "style").is_some_and(|s| {
            let s = s.to_ascii_lowercase().replace(' ', "");
            s.contains("display:none") || s.contains("visibility:hidden")
        })
}

/// The words of an element's class and id, lower case.
fn words(node: &Handle) -> Vec<String> {
    let mut out = Vec::new();
    for key in ["class", "id"] {
        if let Some(v) = attr(node, key) {
            out.extend(
                v.to_ascii_lowercase()
                    .split(|c: char| !c.is_ascii_alphanumeric())
                    .filter(|w| !w.is_empty())
                    .map(str::to_string),
            );
        }
    }
    out
}

/// Whether the element's class or id says it is not content.
fn boilerplate(node: &Handle) -> bool {
    let w = words(node);
    w.iter().any(|x| BOILERPLATE_WORDS.contains(&x.as_str()))
        && !w.iter().any(|x| CONTENT_WORDS.contains(&x.as_str()))
}

/// Removes below `root` what is not content (see the module's doc), and
/// makes links and images absolute. `in_article`: `root` is an article,
/// whose `<header>` holds its title and byline.
fn prune(root: &Handle, base: &Url, in_article: bool) {
    // (node, inside an article, inside code)
    let mut stack = vec![(root.clone(), in_article, false)];
    while let Some((node, article, code)) = stack.pop() {
        let mut kept = Vec::new();
        let children: Vec<Handle> = node.children.borrow().clone();
        for child in children {
            let Some(t) = tag(&child).map(str::to_string) else {
                if !matches!(child.data, NodeData::Comment { .. }) {
                    kept.push(child);
                }
                continue;
            };
            let t = t.as_str();
            let drop = DROPPED_TAGS.contains(&t)
                || (t == "header" && !article && !titled(&child))
                || hidden(&child)
                || attr(&child, "role")
                    .is_some_and(|r| DROPPED_ROLES.contains(&r.to_ascii_lowercase().as_str()))
                || (!code
                    && !matches!(t, "a" | "main" | "article" | "body")
                    && boilerplate(&child))
                || (t == "img" && !keep_image(&child, base));
            if drop {
                continue;
            }
            if t == "a" {
                absolute_link(&child, base);
            }
            let code = code || matches!(t, "pre" | "code");
            stack.push((child.clone(), article || t == "article", code));
            kept.push(child);
        }
        *node.children.borrow_mut() = kept;
    }
}

/// A `<header>` that holds the page's title (`<main><header><h1>`), which
/// is the content's head, not the site's.
fn titled(header: &Handle) -> bool {
    find(header, &|n| matches!(tag(n), Some("h1" | "h2"))).is_some()
}

/// An image with alternative text, its source made absolute; decoration
/// (no alt), inline data and unreadable sources are dropped.
fn keep_image(img: &Handle, base: &Url) -> bool {
    if attr(img, "alt").is_none_or(|a| a.trim().is_empty()) {
        return false;
    }
    let Some(src) = attr(img, "src") else {
        return false;
    };
    if src.trim_start().starts_with("data:") {
        return false;
    }
    match base.join(src.trim()) {
        Ok(abs) => set_attr(img, "src", Some(abs.as_str())),
        Err(_) => return false,
    }
    true
}

/// A link made absolute; a link within the page (`#section`) or to
/// script becomes its text alone, which is all a reader can use.
fn absolute_link(a: &Handle, base: &Url) {
    let Some(href) = attr(a, "href") else {
        return;
    };
    let href = href.trim();
    let target = if href.starts_with('#') {
        None
    } else {
        base.join(href)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https" | "mailto" | "ftp"))
    };
    match target {
        Some(u) => set_attr(a, "href", Some(u.as_str())),
        None => set_attr(a, "href", None),
    }
}

/// Sets an attribute that is there, or removes it (`None`).
fn set_attr(node: &Handle, key: &str, value: Option<&str>) {
    if let NodeData::Element { attrs, .. } = &node.data {
        let mut attrs = attrs.borrow_mut();
        match value {
            Some(v) => {
                if let Some(a) = attrs.iter_mut().find(|a| &*a.name.local == key) {
                    a.value.clear();
                    a.value.push_slice(v);
                }
            }
            None => attrs.retain(|a| &*a.name.local != key),
        }
    }
}

/// readability's candidate selection, short: paragraphs score their
/// ancestors, class and id weigh, link density counts against. `None`
/// when nothing scores (no paragraph of 25 characters).
fn scored_root(body: &Handle) -> Option<Handle> {
    let mut scores: HashMap<*const markup5ever_rcdom::Node, (Handle, f64)> = HashMap::new();
    let paragraphs = find_all(body, &|n| {
        matches!(tag(n), Some("p" | "pre" | "td" | "blockquote"))
            || (tag(n) == Some("div") && !has_block_child(n))
    });
    for p in paragraphs {
        let text = squeeze(&text_of(&p));
        if text.chars().count() < 25 {
            continue;
        }
        let score = 1.0 + text.matches(',').count() as f64 + (text.len() as f64 / 100.0).min(3.0);
        let mut level = 0usize;
        let mut up = parent(&p);
        while let Some(anc) = up {
            if level >= 5 || tag(&anc).is_none() {
                break;
            }
            let entry = scores
                .entry(Rc::as_ptr(&anc))
                .or_insert_with(|| (anc.clone(), initial_score(&anc)));
            let divider = match level {
                0 => 1.0,
                1 => 2.0,
                n => n as f64 * 3.0,
            };
            entry.1 += score / divider;
            level += 1;
            up = parent(&anc);
        }
    }
    scores
        .into_values()
        .map(|(n, s)| {
            let density = link_density(&n);
            (n, s * (1.0 - density))
        })
        .filter(|(n, _)| tag(n) != Some("body") && tag(n) != Some("html"))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(n, _)| n)
}

fn parent(node: &Handle) -> Option<Handle> {
    let weak = node.parent.take();
    let up = weak.as_ref().and_then(std::rc::Weak::upgrade);
    node.parent.set(weak);
    up
}

fn has_block_child(node: &Handle) -> bool {
    node.children.borrow().iter().any(|c| {
        matches!(
            tag(c),
            Some(
                "div"
                    | "p"
                    | "pre"
                    | "table"
                    | "ul"
                    | "ol"
                    | "dl"
                    | "blockquote"
                    | "section"
                    | "article"
                    | "h1"
                    | "h2"
                    | "h3"
                    | "h4"
                    | "h5"
                    | "h6"
                    | "img"
                    | "figure"
            )
        )
    })
}

/// A candidate's starting score: its kind of element and its class words.
fn initial_score(node: &Handle) -> f64 {
    let by_tag = match tag(node) {
        Some("div" | "section" | "article" | "main") => 5.0,
        Some("pre" | "td" | "blockquote") => 3.0,
        Some("address" | "ol" | "ul" | "dl" | "dd" | "dt" | "li" | "form") => -3.0,
        Some("h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "th") => -5.0,
        _ => 0.0,
    };
    let w = words(node);
    let content = w.iter().any(|x| CONTENT_WORDS.contains(&x.as_str()));
    let noise = w.iter().any(|x| {
        BOILERPLATE_WORDS.contains(&x.as_str())
            || matches!(
                x.as_str(),
                "comment" | "meta" | "tags" | "widget" | "hidden"
            )
    });
    by_tag + if content { 25.0 } else { 0.0 } - if noise { 25.0 } else { 0.0 }
}

/// The share of a node's text that is inside links.
fn link_density(node: &Handle) -> f64 {
    let total = text_of(node).len();
    if total == 0 {
        return 0.0;
    }
    let linked: usize = find_all(node, &|n| tag(n) == Some("a"))
        .iter()
        .map(|a| text_of(a).len())
        .sum();
    (linked as f64 / total as f64).min(1.0)
}

/// Blank lines at most two in a row, no blank lines at the ends.
fn tidy(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut blank = 0;
    for line in markdown.lines() {
        if line.trim().is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
            out.push('\n');
        } else {
            blank = 0;
            out.push_str(line);
            out.push('\n');
        }
    }
    out.trim_matches('\n').to_string() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(html: &str) -> Converted {
        to_markdown(
            html.into(),
            Url::parse("https://site.example/docs/page").unwrap(),
            Duration::from_secs(600),
        )
    }

    #[test]
    fn the_article_without_its_page_around_it() {
        let c = md(
            r##"<html><head><title>Guide</title><script>var x = 1;</script>
            <style>body{}</style></head><body>
            <header class="site"><a href="/">Home</a> <nav><a href="/a">A</a></nav></header>
            <div class="ad-slot ads">BUY NOW</div>
            <main><article><header><h1>The guide</h1><p>by someone</p></header>
            <p>First paragraph, with <a href="../other#x">a link</a> and <a href="#top">an anchor</a>.</p>
            <pre><code class="language-rust">fn main() { /* comment */ }</code></pre>
            <div class="share-buttons">Share this</div>
            <img src="/i.png" alt="A diagram"><img src="/pixel.gif">
            </article><aside>Related posts</aside></main>
            <footer>Copyright</footer></body></html>"##,
        );
        let m = &c.markdown;
        assert_eq!(c.found, "main");
        assert_eq!(c.title.as_deref(), Some("Guide"));
        assert!(m.starts_with("# The guide"), "{m}");
        assert!(m.contains("by someone"), "{m}");
        assert!(m.contains("[a link](https://site.example/other#x)"), "{m}");
        assert!(m.contains("an anchor") && !m.contains("#top"), "{m}");
        assert!(
            m.contains("```rust\nfn main() { /* comment */ }\n```"),
            "{m}"
        );
        assert!(
            m.contains("![A diagram](https://site.example/i.png)"),
            "{m}"
        );
        for gone in [
            "var x",
            "BUY NOW",
            "Home",
            "Share this",
            "Related",
            "Copyright",
            "pixel",
        ] {
            assert!(!m.contains(gone), "{gone} in {m}");
        }
    }

    #[test]
    fn without_main_or_article_the_densest_container_wins() {
        let para = "This paragraph has words, commas, and enough length to count as content here. ";
        let html = format!(
            r#"<body><div id="menu"><a href="/1">One</a> <a href="/2">Two</a></div>
            <div class="wrapper"><div class="post-body"><p>{para}</p><p>{para}</p><p>{para}</p></div>
            <div class="links"><p><a href="/x">a very long link text that is only a link, nothing more</a></p></div></div>
            </body>"#
        );
        let c = md(&html);
        assert_eq!(c.found, "scored");
        assert!(c.markdown.contains("This paragraph"), "{}", c.markdown);
        assert!(!c.markdown.contains("One"), "{}", c.markdown);
        assert!(!c.markdown.contains("only a link"), "{}", c.markdown);
    }

    #[test]
    fn a_header_with_the_title_stays_a_site_header_goes() {
        let c = md(
            "<body><main><header><h1>Install</h1><p>Two steps.</p></header>\
                    <header class=\"bar\"><a href=\"/\">Logo</a></header><p>Run it.</p></main></body>",
        );
        assert!(
            c.markdown.starts_with("# Install\n\nTwo steps."),
            "{}",
            c.markdown
        );
        assert!(!c.markdown.contains("Logo"), "{}", c.markdown);
    }

    #[test]
    fn tables_and_lists_stay() {
        let c = md(
            "<main><h2>T</h2><table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>\
                    <ul><li>x</li><li>y</li></ul><ol><li>first</li></ol></main>",
        );
        let m = &c.markdown;
        assert!(m.contains("| a | b |"), "{m}");
        assert!(m.contains("| 1 | 2 |"), "{m}");
        assert!(m.contains("- x\n- y"), "{m}");
        assert!(m.contains("1. first"), "{m}");
    }

    #[test]
    fn a_page_nested_deeper_than_the_limit_is_flattened_not_a_crash() {
        let depth = 3 * MAX_DEPTH;
        let html = format!(
            "<body><main><p>top</p>{}deep <b>text</b>{}</main></body>",
            "<div>".repeat(depth),
            "</div>".repeat(depth)
        );
        let c = md(&html);
        assert!(c.plain.is_none());
        assert!(c.markdown.contains("top\n\ndeep text"), "{}", c.markdown);
    }

    #[test]
    fn a_page_not_converted_in_time_comes_back_as_its_text() {
        // Nothing converts this page in no time: the plain text comes back.
        let depth = 50_000;
        let html = format!(
            "<body><script>x()</script><p>Fish &amp; chips &#x263A;</p><!-- hidden -->{}deep{}</body>",
            "<div>".repeat(depth),
            "</div>".repeat(depth)
        );
        let url = Url::parse("https://site.example/").unwrap();
        let c = to_markdown(html, url, Duration::ZERO);
        assert_eq!(c.found, "text");
        assert!(c.plain.unwrap().contains("took more than 0 s"));
        assert_eq!(c.markdown, "Fish & chips \u{263a}\n\ndeep\n");
    }

    #[test]
    fn plain_text_of_tag_soup() {
        assert_eq!(
            text_only(
                "<style>p{}</style><h1>Title</h1><p>a &lt;b&gt;<br>c &bogus; &#65;</p><script"
            ),
            "Title\n\na <b>\nc &bogus; A\n"
        );
    }
}
