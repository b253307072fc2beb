//! Markdown to styled terminal lines: headings, emphasis, lists, quotes,
//! inline code, and code blocks under a label naming their language. No
//! syntax highlighting: a highlighter (syntect and its grammars) would cost
//! megabytes and start-up time for colours a terminal user rarely misses,
//! and a code block already stands apart by its style and label. Lines come
//! out unwrapped; [`wrap`] cuts them to a width.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::theme::Theme;

/// Renders markdown text as lines.
pub fn render(text: &str, theme: &Theme) -> Vec<Line<'static>> {
    let mut r = Renderer {
        theme,
        lines: Vec::new(),
        current: Vec::new(),
        styles: vec![Style::default()],
        lists: Vec::new(),
        quote: 0,
        code: None,
        prefix_pending: None,
    };
    let parser = Parser::new_ext(text, Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES);
    for event in parser {
        r.event(event);
    }
    r.flush();
    // No blank line at the end: entries are spaced by the view.
    while r.lines.last().is_some_and(|l| l.spans.is_empty()) {
        r.lines.pop();
    }
    r.lines
}

struct Renderer<'t> {
    theme: &'t Theme,
    lines: Vec<Line<'static>>,
    current: Vec<Span<'static>>,
    styles: Vec<Style>,
    /// For each open list, the next number (None: bullets).
    lists: Vec<Option<u64>>,
    quote: usize,
    /// Inside a fenced or indented block: its language.
    code: Option<String>,
    /// The marker of a list item, written before its first text.
    prefix_pending: Option<String>,
}

impl Renderer<'_> {
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, f: impl FnOnce(Style) -> Style) {
        let s = f(self.style());
        self.styles.push(s);
    }

    fn indent(&self) -> String {
        let mut s = "│ ".repeat(self.quote);
        s.push_str(&"  ".repeat(self.lists.len().saturating_sub(1)));
        s
    }

    fn start_line(&mut self) {
        if !self.current.is_empty() {
            return;
        }
        let mut lead = self.indent();
        if let Some(p) = self.prefix_pending.take() {
            lead.push_str(&p);
        } else if !self.lists.is_empty() {
            lead.push_str("  ");
        }
        if !lead.is_empty() {
            self.current.push(Span::styled(lead, self.theme.dim));
        }
    }

    fn text(&mut self, t: &str, style: Style) {
        for (n, piece) in t.split('\n').enumerate() {
            if n > 0 {
                self.flush();
            }
            if piece.is_empty() {
                continue;
            }
            self.start_line();
            self.current.push(Span::styled(piece.to_string(), style));
        }
    }

    fn flush(&mut self) {
        if !self.current.is_empty() {
            self.lines
                .push(Line::from(std::mem::take(&mut self.current)));
        }
    }

    fn blank(&mut self) {
        self.flush();
        if self.lines.last().is_some_and(|l| !l.spans.is_empty()) {
            self.lines.push(Line::default());
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => {
                if let Some(_lang) = &self.code {
                    for line in t.lines() {
                        let mut spans =
                            vec![Span::styled(format!("{}  ", self.indent()), self.theme.dim)];
                        spans.push(Span::styled(line.to_string(), self.theme.code));
                        self.lines.push(Line::from(spans));
                    }
                } else {
                    let style = self.style();
                    self.text(&t, style);
                }
            }
            Event::Code(t) => {
                self.start_line();
                self.current
                    .push(Span::styled(t.to_string(), self.theme.inline_code));
            }
            Event::SoftBreak => {
                let style = self.style();
                self.text(" ", style);
            }
            Event::HardBreak => self.flush(),
            Event::Rule => {
                self.blank();
                self.lines
                    .push(Line::from(Span::styled("─".repeat(40), self.theme.dim)));
                self.lines.push(Line::default());
            }
            Event::TaskListMarker(done) => {
                self.start_line();
                self.current
                    .push(Span::raw(if done { "[x] " } else { "[ ] " }));
            }
            Event::Html(t) | Event::InlineHtml(t) => {
                let style = self.style();
                self.text(&t, style);
            }
            Event::FootnoteReference(t) => {
                self.start_line();
                self.current.push(Span::raw(format!("[{t}]")));
            }
            Event::InlineMath(t) | Event::DisplayMath(t) => {
                self.start_line();
                self.current
                    .push(Span::styled(t.to_string(), self.theme.inline_code));
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.flush(),
            Tag::Heading { level, .. } => {
                self.blank();
                let marks = match level {
                    HeadingLevel::H1 => "# ",
                    HeadingLevel::H2 => "## ",
                    _ => "### ",
                };
                let heading = self.theme.heading;
                self.start_line();
                self.current.push(Span::styled(marks, heading));
                self.styles.push(heading);
            }
            Tag::BlockQuote(_) => {
                self.flush();
                self.quote += 1;
            }
            Tag::CodeBlock(kind) => {
                self.blank();
                let lang = match kind {
                    CodeBlockKind::Fenced(l) => {
                        l.split(',').next().unwrap_or("").trim().to_string()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                let label = if lang.is_empty() {
                    "code".to_string()
                } else {
                    lang.clone()
                };
                self.lines.push(Line::from(vec![
                    Span::styled(format!("{}  ", self.indent()), self.theme.dim),
                    Span::styled(format!("[{label}]"), self.theme.label),
                ]));
                self.code = Some(lang);
            }
            Tag::List(start) => {
                if self.lists.is_empty() {
                    self.blank();
                } else {
                    self.flush();
                }
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush();
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => "• ".to_string(),
                };
                self.prefix_pending = Some(marker);
            }
            Tag::Emphasis => self.push_style(|s| s.add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(|s| s.add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(|s| s.add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { .. } => {
                let link = self.theme.link;
                self.push_style(|s| s.patch(link));
            }
            Tag::Image { dest_url, .. } => {
                self.start_line();
                self.current.push(Span::raw(format!("[image {dest_url}] ")));
                self.styles.push(self.style());
            }
            Tag::TableRow | Tag::TableHead => self.flush(),
            Tag::TableCell => {
                self.start_line();
                self.current.push(Span::styled("│ ", self.theme.dim));
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush();
                if self.lists.is_empty() {
                    self.lines.push(Line::default());
                }
            }
            TagEnd::Heading(_) => {
                self.styles.pop();
                self.flush();
                self.lines.push(Line::default());
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.quote = self.quote.saturating_sub(1);
            }
            TagEnd::CodeBlock => {
                self.code = None;
                self.lines.push(Line::default());
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.lines.push(Line::default());
                }
            }
            TagEnd::Item => self.flush(),
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Link
            | TagEnd::Image => {
                self.styles.pop();
            }
            TagEnd::TableHead | TagEnd::TableRow => self.flush(),
            TagEnd::Table => self.blank(),
            _ => {}
        }
    }
}

/// Cuts a line into rows of at most `width` columns, at spaces where it can;
/// the pieces keep their styles.
pub fn wrap(line: &Line<'static>, width: usize, out: &mut Vec<Line<'static>>) {
    let width = width.max(1);
    let controls = line
        .spans
        .iter()
        .any(|s| s.content.chars().any(char::is_control));
    if !controls && line.width() <= width {
        out.push(line.clone());
        return;
    }
    // Every character with its style, then rows cut from them.
    let chars: Vec<(char, Style)> = line
        .spans
        .iter()
        .flat_map(|s| {
            s.content
                .chars()
                .map(move |c| (c, line.style.patch(s.style)))
        })
        // An escape sequence in a tool's output or an answer must not reach
        // the terminal: control characters are shown, not obeyed.
        .map(|(c, s)| match c {
            '\t' => (' ', s),
            c if c.is_control() => ('\u{FFFD}', s),
            c => (c, s),
        })
        .collect();
    let mut start = 0;
    while start < chars.len() {
        let mut cols = 0;
        let mut end = start;
        let mut last_space = None;
        while end < chars.len() {
            let w = chars[end].0.width().unwrap_or(0);
            if cols + w > width {
                break;
            }
            if chars[end].0 == ' ' {
                last_space = Some(end);
            }
            cols += w;
            end += 1;
        }
        if end == start {
            // One character wider than the row: give it a row of its own.
            end = start + 1;
        } else if end < chars.len()
            && let Some(sp) = last_space.filter(|&sp| sp > start)
        {
            end = sp + 1;
        }
        out.push(row(&chars[start..end]));
        start = end;
    }
}

fn row(chars: &[(char, Style)]) -> Line<'static> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut text = String::new();
    let mut style = None;
    for &(c, s) in chars {
        if style != Some(s) {
            if let Some(st) = style {
                spans.push(Span::styled(std::mem::take(&mut text), st));
            }
            style = Some(s);
        }
        text.push(c);
    }
    if let Some(st) = style {
        spans.push(Span::styled(text, st));
    }
    Line::from(spans)
}

/// Columns a string takes.
pub fn width(s: &str) -> usize {
    s.width()
}
