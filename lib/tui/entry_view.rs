//! One conversation entry as rows of a given width, and the cache that
//! keeps those rows: an entry is rendered again only when its revision or
//! the width changed. A streaming answer keeps the rows of its finished
//! paragraphs and re-renders only the paragraph still growing, so a long
//! answer costs each frame its tail, not its whole text.

use ratatui::text::{Line, Span};
use serde_json::Value;

use super::markdown::{render, wrap};
use super::state::{Answer, Block, Entry, NoticeKind, ToolCall, ToolStatus};
use super::theme::Theme;

/// Lines of output an expanded call shows at most.
const EXPANDED_MAX: usize = 400;

/// Rendered rows per entry.
#[derive(Debug, Default)]
pub struct Cache {
    slots: Vec<Option<Slot>>,
    /// Entries rendered so far, and markdown bytes parsed: what the
    /// incremental rendering saves is measured by these.
    pub work: Work,
}

/// Rendering done, counted.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Work {
    /// Entries rendered.
    pub entries: u64,
    /// Markdown bytes parsed.
    pub bytes: u64,
}

#[derive(Debug)]
struct Slot {
    rev: u64,
    width: usize,
    rows: Vec<Line<'static>>,
    /// For a streaming answer: its last text block's rows up to a paragraph
    /// boundary, which later deltas cannot change.
    stable: Option<Stable>,
}

#[derive(Debug, Clone, Default)]
struct Stable {
    /// The block's position among the answer's blocks.
    block: usize,
    /// Bytes of the block's text rendered.
    upto: usize,
    /// Whether `upto` lies inside a fenced code block.
    in_fence: bool,
    rows: Vec<Line<'static>>,
}

impl Cache {
    /// Forgets everything (a cleared conversation).
    pub fn clear(&mut self) {
        self.slots.clear();
    }

    /// The rows of entry `i` at `width`, rendered again only if needed.
    pub fn rows(
        &mut self,
        i: usize,
        entry: &Entry,
        rev: u64,
        width: usize,
        theme: &Theme,
    ) -> &[Line<'static>] {
        if self.slots.len() <= i {
            self.slots.resize_with(i + 1, || None);
        }
        let slot = &mut self.slots[i];
        let fresh = slot
            .as_ref()
            .is_some_and(|s| s.rev == rev && s.width == width);
        if !fresh {
            let mut stable = slot
                .take()
                .and_then(|s| s.stable.filter(|_| s.width == width));
            let rows = render_entry(entry, width, theme, &mut stable, &mut self.work);
            self.work.entries += 1;
            *slot = Some(Slot {
                rev,
                width,
                rows,
                stable,
            });
        }
        slot.as_ref().map_or(&[], |s| s.rows.as_slice())
    }
}

fn render_entry(
    entry: &Entry,
    width: usize,
    theme: &Theme,
    stable: &mut Option<Stable>,
    work: &mut Work,
) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    match entry {
        Entry::User(text) => {
            for (n, l) in text.lines().enumerate() {
                let lead = if n == 0 { "› " } else { "  " };
                lines.push(Line::from(vec![
                    Span::styled(lead, theme.user),
                    Span::styled(l.to_string(), theme.user),
                ]));
            }
        }
        Entry::Assistant(a) => return answer_rows(a, width, theme, stable, work),
        Entry::Tool(t) => tool_lines(t, width, theme, &mut lines),
        Entry::Notice(kind, text) => {
            let style = match kind {
                NoticeKind::Info => theme.dim,
                NoticeKind::Warning => theme.warning,
                NoticeKind::Error => theme.error,
            };
            for l in text.lines() {
                lines.push(Line::from(Span::styled(format!("  {l}"), style)));
            }
        }
    }
    let mut rows = Vec::new();
    for l in &lines {
        wrap(l, width, &mut rows);
    }
    rows
}

fn answer_rows(
    a: &Answer,
    width: usize,
    theme: &Theme,
    stable: &mut Option<Stable>,
    work: &mut Work,
) -> Vec<Line<'static>> {
    let mut rows = Vec::new();
    let last = a.blocks.len().saturating_sub(1);
    for (n, (_, block)) in a.blocks.iter().enumerate() {
        match block {
            Block::Thinking(t) => {
                let words = t.split_whitespace().count();
                let line = Line::from(Span::styled(
                    format!("  ▸ thinking ({words} words)"),
                    theme.dim,
                ));
                wrap(&line, width, &mut rows);
            }
            Block::Text(t) if !a.done && n == last => {
                // Only the growing tail is rendered anew.
                let s = stable.get_or_insert_with(Stable::default);
                if s.block != n {
                    *s = Stable {
                        block: n,
                        ..Stable::default()
                    };
                }
                advance_stable(s, t, width, theme, work);
                rows.extend(s.rows.iter().cloned());
                if !s.rows.is_empty() && s.upto < t.len() {
                    rows.push(Line::default());
                }
                markdown_rows(&t[s.upto..], width, theme, &mut rows, work);
            }
            Block::Text(t) => markdown_rows(t, width, theme, &mut rows, work),
        }
    }
    if a.done {
        *stable = None;
    }
    if let Some(e) = &a.error {
        let line = Line::from(Span::styled(format!("  model error: {e}"), theme.error));
        wrap(&line, width, &mut rows);
    }
    rows
}

/// Renders the paragraphs of `text` past `s.upto` that are complete: those
/// followed by a blank line outside a code fence.
fn advance_stable(s: &mut Stable, text: &str, width: usize, theme: &Theme, work: &mut Work) {
    if s.upto > text.len() || !text.is_char_boundary(s.upto) {
        *s = Stable {
            block: s.block,
            ..Stable::default()
        };
    }
    let mut pos = s.upto;
    let mut fence = s.in_fence;
    let mut cut = None;
    let mut prev_blank = false;
    for line in text[s.upto..].split_inclusive('\n') {
        if !line.ends_with('\n') {
            break;
        }
        let trimmed = line.trim();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = !fence;
        }
        pos += line.len();
        let blank = trimmed.is_empty();
        if blank && !fence && !prev_blank {
            cut = Some((pos, fence));
        }
        prev_blank = blank;
    }
    if let Some((cut, in_fence)) = cut {
        if !s.rows.is_empty() {
            s.rows.push(Line::default());
        }
        markdown_rows(&text[s.upto..cut], width, theme, &mut s.rows, work);
        s.upto = cut;
        s.in_fence = in_fence;
    }
}

fn markdown_rows(
    text: &str,
    width: usize,
    theme: &Theme,
    rows: &mut Vec<Line<'static>>,
    work: &mut Work,
) {
    work.bytes += text.len() as u64;
    for l in render(text, theme) {
        wrap(&l, width, rows);
    }
}

/// A tool call: one line, or with its diff or output when expanded.
fn tool_lines(t: &ToolCall, width: usize, theme: &Theme, lines: &mut Vec<Line<'static>>) {
    let (mark, word, style) = match t.status {
        ToolStatus::Asking => ("?", "asking", theme.warning),
        ToolStatus::Running => ("…", "running", theme.running),
        ToolStatus::Done => ("✓", "done", theme.ok),
        ToolStatus::Failed => ("✗", "failed", theme.error),
        ToolStatus::Denied => ("⊘", "denied", theme.warning),
    };
    let mut spans = vec![
        Span::styled(format!("  {mark} "), style),
        Span::styled(t.name.clone(), theme.heading),
        Span::raw(" "),
    ];
    let args = crate::session::export::short_args(&t.arguments);
    let mut status = format!(" {word}");
    if let Some(d) = t.duration {
        status.push_str(&format!(" {}", duration(d)));
    }
    let result = short_result(t);
    // The arguments give way first, so status and result stay visible.
    let room = width
        .saturating_sub(5 + t.name.chars().count() + status.chars().count())
        .saturating_sub(if result.is_empty() {
            0
        } else {
            3 + result.chars().count().min(30)
        });
    spans.push(Span::raw(cut(&args, room)));
    spans.push(Span::styled(status, style));
    if !result.is_empty() {
        let used: usize = spans.iter().map(|s| s.width()).sum();
        let left = width.saturating_sub(used + 3);
        if left > 0 {
            spans.push(Span::styled(
                format!(" · {}", cut(&result, left)),
                theme.dim,
            ));
        }
    }
    lines.push(Line::from(spans));
    // A running call's latest progress, under its line.
    if let (ToolStatus::Running, Some(p)) = (t.status, &t.progress) {
        let p = p.replace('\t', "    ");
        lines.push(Line::from(Span::styled(
            format!("    {}", cut(&p, width.saturating_sub(4))),
            theme.dim,
        )));
    }
    // The errors a change brought in, shown folded or not: what the
    // person must not miss.
    if let Some(d) = crate::protocol::ChangeDiagnostics::from_details(&t.details) {
        let style = if d.new_errors() > 0 {
            theme.removed
        } else {
            theme.dim
        };
        for l in d.summary(if t.expanded { EXPANDED_MAX } else { 3 }) {
            lines.push(Line::from(Span::styled(
                format!("    {}", cut(&l, width.saturating_sub(4))),
                style,
            )));
        }
    }
    if !t.expanded {
        return;
    }
    if let Some(diff) = find_diff(&t.details) {
        for l in diff.lines().take(EXPANDED_MAX) {
            let style = if l.starts_with('+') && !l.starts_with("+++") {
                theme.added
            } else if l.starts_with('-') && !l.starts_with("---") {
                theme.removed
            } else if l.starts_with("@@") {
                theme.label
            } else {
                theme.dim
            };
            lines.push(Line::from(Span::styled(format!("    {l}"), style)));
        }
        return;
    }
    let total = t.output.lines().count();
    for l in t.output.lines().take(EXPANDED_MAX) {
        let l = l.replace('\t', "    ");
        lines.push(Line::from(Span::styled(format!("    {l}"), theme.dim)));
    }
    if total > EXPANDED_MAX {
        lines.push(Line::from(Span::styled(
            format!("    … {} more lines", total - EXPANDED_MAX),
            theme.dim,
        )));
    }
}

/// The first line of the output, with the line count when there are more.
fn short_result(t: &ToolCall) -> String {
    if t.output.is_empty() {
        return String::new();
    }
    let first = t
        .output
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .replace('\t', " ");
    let n = t.output.lines().count();
    if n > 1 {
        format!("{first} (+{} lines)", n - 1)
    } else {
        first.to_string()
    }
}

/// A diff in a tool's details (`diff` at the top, or in its `files`).
fn find_diff(details: &Value) -> Option<String> {
    if let Some(d) = details.get("diff").and_then(Value::as_str) {
        return Some(d.to_string());
    }
    let files = details.get("files")?.as_array()?;
    let all: Vec<&str> = files
        .iter()
        .filter_map(|f| f.get("diff").and_then(Value::as_str))
        .collect();
    (!all.is_empty()).then(|| all.join("\n"))
}

fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// `850ms`, `2.3s`, `1m05s`.
pub fn duration(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        format!("{}m{:02}s", ms / 60_000, (ms / 1000) % 60)
    }
}
