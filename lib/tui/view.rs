//! Drawing a frame: the conversation (only the rows that fit, taken from
//! the bottom up through the render cache), the question or queue above
//! the editor, the editor, the footer with usage, cost and context, and
//! the completion list or the session picker on top. It reads the app and
//! never changes it, apart from the cache.

use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::app::{App, Child};
use super::entry_view::Cache;
use super::markdown::wrap;
use super::slash;
use super::theme::Theme;

/// Rows the editor may take at most.
const EDITOR_MAX: usize = 8;

/// The view: the theme and the rendered rows kept between frames.
pub struct View {
    /// The styles.
    pub theme: Theme,
    /// Rows per entry.
    pub cache: Cache,
}

impl View {
    /// A view with this theme.
    pub fn new(theme: Theme) -> View {
        View {
            theme,
            cache: Cache::default(),
        }
    }

    /// Draws the whole frame.
    pub fn draw(&mut self, f: &mut Frame<'_>, app: &App) {
        let area = f.area();
        if area.width < 4 || area.height < 4 {
            return;
        }
        let width = area.width as usize;
        let theme = self.theme;

        // Bottom up: footer, editor, what stands above the editor.
        let footer = footer(app, &theme, width);
        let (rows, cursor) = app.editor.rows(width.saturating_sub(2));
        let first = cursor.0.saturating_sub(EDITOR_MAX - 1);
        let editor_h = rows.len().clamp(1, EDITOR_MAX);
        let mut above = Vec::new();
        self.above_editor(app, width, &mut above);
        let above_max = (area.height as usize).saturating_sub(editor_h + 2) / 2;
        if above.len() > above_max {
            above.drain(..above.len() - above_max);
        }
        let h = area.height as usize;
        let conv_h = h.saturating_sub(1 + editor_h + above.len() + 1);

        let conv = Rect::new(area.x, area.y, area.width, conv_h as u16);
        let sep_y = area.y + conv_h as u16;
        let above_y = sep_y + 1;
        let editor_y = above_y + above.len() as u16;
        let footer_y = editor_y + editor_h as u16;

        let lines = self.conversation(app, width, conv_h);
        f.render_widget(Paragraph::new(lines), conv);
        f.render_widget(
            Paragraph::new(Line::from(Span::styled("─".repeat(width), theme.dim))),
            Rect::new(area.x, sep_y, area.width, 1),
        );
        f.render_widget(
            Paragraph::new(above),
            Rect::new(
                area.x,
                above_y,
                area.width,
                footer_y - editor_h as u16 - above_y,
            ),
        );

        let mut ed = Vec::new();
        for (n, r) in rows.iter().enumerate().skip(first).take(editor_h) {
            let lead = if n == 0 { "› " } else { "  " };
            ed.push(Line::from(vec![
                Span::styled(lead, theme.user),
                Span::raw(r.clone()),
            ]));
        }
        f.render_widget(
            Paragraph::new(ed),
            Rect::new(area.x, editor_y, area.width, editor_h as u16),
        );
        f.render_widget(
            Paragraph::new(footer),
            Rect::new(area.x, footer_y, area.width, 1),
        );
        if app.picker.is_none() {
            f.set_cursor_position(Position::new(
                area.x + 2 + cursor.1 as u16,
                editor_y + (cursor.0 - first) as u16,
            ));
        }

        // Completions just above the editor.
        let found = slash::candidates(app.editor.text());
        if !found.is_empty() && app.editor.search.is_none() {
            let n = found.len().min(editor_y as usize);
            let list: Vec<Line> = found
                .iter()
                .take(n)
                .map(|(name, what)| {
                    Line::from(vec![
                        Span::styled(format!(" {name:<9}"), theme.heading),
                        Span::styled(format!(" {what} "), theme.dim),
                    ])
                })
                .collect();
            let r = Rect::new(area.x, editor_y - n as u16, area.width, n as u16);
            f.render_widget(Clear, r);
            f.render_widget(Paragraph::new(list), r);
        }
        if let Some(p) = &app.picker {
            self.picker(f, p, area);
        }
    }

    /// The rows that fit in `height`, the newest at the bottom, moved up by
    /// the scroll. Entries above the visible rows are not rendered.
    fn conversation(&mut self, app: &App, width: usize, height: usize) -> Vec<Line<'static>> {
        let want = height + app.scroll;
        let mut chunks: Vec<Vec<Line<'static>>> = Vec::new();
        let mut have = 0;
        let entries = &app.state.entries;
        for i in (0..entries.len()).rev() {
            if have >= want {
                break;
            }
            let rows = self
                .cache
                .rows(i, &entries[i], app.state.revs[i], width, &self.theme);
            // A blank row between entries, except between tool calls.
            let gap = i > 0
                && !(matches!(entries[i], super::state::Entry::Tool(_))
                    && matches!(entries[i - 1], super::state::Entry::Tool(_)));
            if rows.is_empty() {
                continue;
            }
            let mut chunk = Vec::with_capacity(rows.len() + 1);
            if gap {
                chunk.push(Line::default());
            }
            // Only the rows that can show are copied out of the cache.
            let skip = rows.len().saturating_sub(want - have);
            chunk.extend(rows[skip..].iter().cloned());
            have += chunk.len();
            chunks.push(chunk);
        }
        let mut lines: Vec<Line<'static>> = chunks.into_iter().rev().flatten().collect();
        let scroll = app.scroll.min(lines.len().saturating_sub(height));
        let end = lines.len() - scroll;
        let start = end.saturating_sub(height);
        lines.truncate(end);
        lines.drain(..start);
        // Short conversations sit at the bottom, next to the editor.
        let mut out = vec![Line::default(); height.saturating_sub(lines.len())];
        out.extend(lines);
        out
    }

    /// The approval question, the model's question, the search, the files to
    /// attach, the queue, or how the child ended.
    fn above_editor(&self, app: &App, width: usize, out: &mut Vec<Line<'static>>) {
        let t = &self.theme;
        let mut lines = Vec::new();
        if let Child::Ended(why) = &app.child {
            for (n, l) in why.lines().enumerate() {
                let style = if n == 0 { t.error } else { t.dim };
                lines.push(Line::from(Span::styled(l.to_string(), style)));
            }
        }
        if let Some(a) = app.state.approvals.first() {
            lines.push(Line::from(vec![
                Span::styled("Allow ", t.warning),
                Span::styled(a.tool_name.clone(), t.heading),
                Span::raw(format!(
                    " {}? ",
                    crate::session::export::short_args(&a.arguments)
                )),
                Span::styled(format!("({}) ", a.reason), t.dim),
                Span::styled(
                    match &a.always {
                        Some(what) => format!("[y]es / [n]o / [a]lways for {what}"),
                        None => "[y]es / [n]o / [a]lways".into(),
                    },
                    t.warning,
                ),
            ]));
        }
        if let Some(q) = app.state.questions.first() {
            lines.push(Line::from(vec![
                Span::styled("The agent asks: ", t.warning),
                Span::styled(q.question.clone(), t.heading),
            ]));
            for (n, o) in q.options.iter().enumerate() {
                let style = if n == q.selected {
                    t.bar
                } else {
                    Style::default()
                };
                let mark = if n == q.selected { "›" } else { " " };
                lines.push(Line::from(Span::styled(
                    format!("  {mark} {}. {o}", n + 1),
                    style,
                )));
            }
            lines.push(Line::from(Span::styled(
                if q.options.is_empty() {
                    "  type your answer and press Enter"
                } else {
                    "  Up/Down and Enter pick a choice, or type your own answer"
                },
                t.dim,
            )));
        }
        if let Some(s) = &app.editor.search {
            let found = app.editor.search_found().unwrap_or("");
            lines.push(Line::from(vec![
                Span::styled(format!("(search) `{}`: ", s.query), t.warning),
                Span::raw(found.lines().next().unwrap_or("").to_string()),
            ]));
        }
        if !app.attachments.is_empty() {
            lines.push(Line::from(vec![
                Span::styled("attached to the next prompt: ", t.dim),
                Span::raw(app.attachments.join(", ")),
                Span::styled("  (/detach drops them)", t.dim),
            ]));
        }
        for q in &app.queue {
            lines.push(Line::from(vec![
                Span::styled("queued: ", t.dim),
                Span::raw(q.lines().next().unwrap_or("").to_string()),
                Span::styled("  (Ctrl+S steers)", t.dim),
            ]));
        }
        for l in &lines {
            wrap(l, width, out);
        }
    }

    fn picker(&self, f: &mut Frame<'_>, p: &super::app::Picker, area: Rect) {
        let t = &self.theme;
        let h = (p.choices.len() + 2).min(area.height as usize - 2) as u16;
        let r = Rect::new(area.x, area.y + 1, area.width, h);
        let visible = (h as usize).saturating_sub(2);
        let first = p.selected.saturating_sub(visible.saturating_sub(1));
        let mut lines = vec![Line::from(Span::styled(
            "Resume which session? (Up/Down, Enter, Esc)",
            t.heading,
        ))];
        for (n, c) in p.choices.iter().enumerate().skip(first).take(visible) {
            let style = if n == p.selected {
                t.bar
            } else {
                Style::default()
            };
            let when = c.when.get(..16).unwrap_or(&c.when).replace('T', " ");
            let prompt = c.prompt.lines().next().unwrap_or("");
            lines.push(Line::from(Span::styled(
                format!(
                    "{} {}  {when}  {prompt}",
                    if n == p.selected { "›" } else { " " },
                    c.id.get(..13).unwrap_or(&c.id)
                ),
                style,
            )));
        }
        lines.push(Line::from(Span::styled(
            "─".repeat(area.width as usize),
            t.dim,
        )));
        f.render_widget(Clear, r);
        f.render_widget(Paragraph::new(lines), r);
    }
}

/// The identity answering, model and reasoning, tokens, cost, context, and
/// what the agent is doing.
fn footer(app: &App, theme: &Theme, width: usize) -> Line<'static> {
    let s = &app.state;
    let mut model = s
        .model
        .clone()
        .or_else(|| app.model.clone())
        .unwrap_or_default();
    if let Some(r) = s.reasoning
        && let Ok(serde_json::Value::String(level)) = serde_json::to_value(r)
    {
        model = format!("{model} ({level})");
    }
    if let Some(agent) = &s.agent {
        model = format!("@{agent} · {model}");
    }
    let u = &s.usage;
    let waiting = !s.approvals.is_empty() || !s.questions.is_empty();
    let doing = match (&app.child, s.working, !waiting) {
        (Child::Ended(_), _, _) => "ag-loop ended",
        (_, _, false) => "waiting for you",
        (_, true, _) => "working · Esc interrupts",
        _ => "ready · /help",
    };
    let text = format!(
        " {model} · ↑{} ↓{} · ${:.4} · ctx {} · {doing}",
        tokens(u.input + u.cache_read + u.cache_write),
        tokens(u.output),
        u.cost.total,
        tokens(s.context),
    );
    let mut text: String = text.chars().take(width).collect();
    let pad = width.saturating_sub(super::markdown::width(&text));
    text.push_str(&" ".repeat(pad));
    Line::from(Span::styled(text, theme.bar))
}

/// `950`, `12.3k`, `1.2M`.
fn tokens(n: u64) -> String {
    if n < 1000 {
        n.to_string()
    } else if n < 1_000_000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        format!("{:.1}M", n as f64 / 1_000_000.0)
    }
}
