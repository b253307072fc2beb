//! A session as a page a person would rather read than JSONL: markdown, or
//! a self-contained HTML page with tool calls folded and diffs coloured;
//! with how its runs ended and its totals when they are given.

use std::fmt::Write as _;

use serde_json::Value;

use super::summary::{Ending, RunEnd};
use crate::protocol::{ContentBlock, Message, SessionHeader, Usage};

/// Export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Markdown, with tool calls in `<details>` blocks.
    Markdown,
    /// One self-contained HTML page.
    Html,
}

/// Renders a session's header and messages.
pub fn export(header: Option<&SessionHeader>, messages: &[Message], format: Format) -> String {
    export_session(header, messages, None, format)
}

/// Renders a session's header and messages, and how its runs ended and its
/// totals: in the header, the last run's outcome and the totals; after the
/// transcript, each run's outcome.
pub fn export_session(
    header: Option<&SessionHeader>,
    messages: &[Message],
    ending: Option<&Ending>,
    format: Format,
) -> String {
    let page = match format {
        Format::Markdown => markdown(header, messages, ending),
        Format::Html => html(header, messages, ending),
    };
    without_keys(page)
}

/// A provider key that got into a session anyway (one written before
/// ag-loop hid them, or events appended from elsewhere) is hidden on the
/// page too: the values of the key variables set here, and of models.json.
fn without_keys(page: String) -> String {
    match crate::llm::keys::Redactor::for_this_machine().text(&page) {
        std::borrow::Cow::Owned(hidden) => hidden,
        std::borrow::Cow::Borrowed(_) => page,
    }
}

/// `finished`, or `turn_limit: stopped after 10 turns (--max-turns)...`.
fn outcome(run: &RunEnd) -> String {
    let name = serde_json::to_value(run.outcome)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    match &run.error {
        Some(why) => format!("{name}: {why}"),
        None => name,
    }
}

fn tokens_and_cost(u: &Usage) -> String {
    format!(
        "{} tokens (input {}, output {}, cache read {}, cache write {}), ${:.4}",
        u.total_tokens(),
        u.input,
        u.output,
        u.cache_read,
        u.cache_write,
        u.cost.total
    )
}

/// The header's lines about the ending: the last run's outcome, the totals,
/// and what each model did when there was more than one.
fn ending_summary(e: &Ending) -> Vec<String> {
    let last = if e.unfinished {
        "the last run did not end (ag-loop was stopped, or is still running)".to_string()
    } else {
        e.runs
            .last()
            .map(outcome)
            .unwrap_or_else(|| "no run ended".into())
    };
    let runs = e.runs.len() + usize::from(e.unfinished);
    let mut lines = vec![
        format!("outcome: {last}"),
        format!(
            "totals: {} over {runs} run{}",
            tokens_and_cost(&e.usage),
            if runs == 1 { "" } else { "s" }
        ),
    ];
    if e.models.len() > 1 {
        let each: Vec<String> = e
            .models
            .iter()
            .map(|m| {
                format!(
                    "{}: {} call{}, {}",
                    m.model,
                    m.calls,
                    if m.calls == 1 { "" } else { "s" },
                    tokens_and_cost(&m.usage)
                )
            })
            .collect();
        lines.push(format!("by model: {}", each.join("; ")));
    }
    lines
}

/// One line per run, for after the transcript.
fn run_lines(e: &Ending) -> Vec<String> {
    let mut lines: Vec<String> = e
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let line = format!(
                "run {}: {}; {} tokens, ${:.4}",
                i + 1,
                outcome(r),
                r.usage.total_tokens(),
                r.usage.cost.total
            );
            // Structured output: the run's answer as the value it is.
            let line = match &r.output {
                Some(v) => format!("{line}; output: {v}"),
                None => line,
            };
            // Runs that end when a check passes (issue 35).
            match r.checks.as_slice() {
                [] => line,
                checks => format!("{line}; {}", checks.join("; ")),
            }
        })
        .collect();
    if e.unfinished {
        lines.push(format!("run {}: did not end", e.runs.len() + 1));
    }
    lines
}

fn markdown(
    header: Option<&SessionHeader>,
    messages: &[Message],
    ending: Option<&Ending>,
) -> String {
    let mut out = String::new();
    if let Some(h) = header {
        let _ = writeln!(out, "# Session {}\n", h.id);
        let _ = writeln!(out, "- started: {}\n- directory: `{}`", h.timestamp, h.cwd);
        if let Some(model) = h.config.get("model").and_then(Value::as_str) {
            let _ = writeln!(out, "- model: {model}");
        }
        if let Some(p) = &h.parent {
            let _ = writeln!(out, "- forked from: {p}");
        }
    }
    for line in ending.map(ending_summary).into_iter().flatten() {
        let _ = writeln!(out, "- {line}");
    }
    if header.is_some() || ending.is_some() {
        out.push('\n');
    }
    // An answer from another model than the one before says which.
    let mut last_model = header
        .and_then(|h| h.config.get("model"))
        .and_then(Value::as_str)
        .map(str::to_string);
    for m in messages {
        match m {
            Message::User { content, .. } => {
                let _ = writeln!(out, "## User\n\n{}\n", content.text());
            }
            Message::Assistant(a) => {
                match &a.model {
                    Some(model) if last_model.as_ref() != Some(model) => {
                        let _ = writeln!(out, "## Assistant ({model})\n");
                        last_model = Some(model.clone());
                    }
                    _ => out.push_str("## Assistant\n\n"),
                }
                for b in &a.content {
                    match b {
                        ContentBlock::Text { text } => {
                            let _ = writeln!(out, "{text}\n");
                        }
                        ContentBlock::Thinking { thinking, .. } if !thinking.is_empty() => {
                            let _ = writeln!(
                                out,
                                "<details><summary>Thinking</summary>\n\n{thinking}\n\n</details>\n"
                            );
                        }
                        ContentBlock::ToolCall {
                            name, arguments, ..
                        } => {
                            let args = serde_json::to_string_pretty(arguments).unwrap_or_default();
                            let _ = writeln!(
                                out,
                                "<details><summary>Tool call: {name} {}</summary>\n\n```json\n{args}\n```\n\n</details>\n",
                                short_args(arguments)
                            );
                        }
                        _ => {}
                    }
                }
                if let Some(e) = &a.error_message {
                    let _ = writeln!(out, "> error: {e}\n");
                }
            }
            Message::ToolResult(r) => {
                let text = block_text(&r.content);
                let mark = if r.is_error { " (error)" } else { "" };
                let fence = fence_for(&text);
                let _ = writeln!(
                    out,
                    "<details><summary>Result: {}{mark}</summary>\n\n{fence}\n{text}\n{fence}\n",
                    r.tool_name
                );
                if let Some(diff) = r.details.get("diff").and_then(Value::as_str) {
                    let fence = fence_for(diff);
                    let _ = writeln!(out, "{fence}diff\n{diff}\n{fence}\n");
                }
                out.push_str("</details>\n\n");
                // Subagents (issue 35): the steps of the child that the
                // call ran, indented by depth.
                let steps: Vec<_> = ending
                    .map(|e| e.subagent_steps.as_slice())
                    .unwrap_or_default()
                    .iter()
                    .filter(|(id, ..)| *id == r.tool_call_id)
                    .collect();
                if !steps.is_empty() {
                    out.push_str("Subagent:\n\n");
                    for (_, depth, line) in steps {
                        let indent = "  ".repeat(depth.saturating_sub(1));
                        let _ = writeln!(out, "{indent}- {}", line.replace('`', "'"));
                    }
                    out.push('\n');
                }
            }
        }
    }
    if let Some(e) = ending.filter(|e| !e.runs.is_empty() || e.unfinished) {
        out.push_str("## How it ended\n\n");
        for line in run_lines(e) {
            let _ = writeln!(out, "- {line}");
        }
    }
    out
}

const STYLE: &str = "body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}\
h1{font-size:1.4rem}.meta{color:#666}.msg{border-left:4px solid #ccc;padding:.2rem 1rem;margin:1rem 0}\
.user{border-color:#2a6fdb}.assistant{border-color:#2aa84a}.tool{border-color:#999;background:#fafafa}\
.role{font-weight:600;text-transform:uppercase;font-size:.75rem;color:#555}pre{background:#f4f4f4;padding:.6rem;overflow-x:auto;white-space:pre-wrap}\
.error{color:#b00020}.add{color:#116329;background:#dafbe1}.del{color:#82071e;background:#ffebe9}.hunk{color:#0550ae}\
summary{cursor:pointer;color:#444}";

fn html(header: Option<&SessionHeader>, messages: &[Message], ending: Option<&Ending>) -> String {
    let title = header
        .map(|h| format!("Session {}", h.id))
        .unwrap_or_else(|| "Session".into());
    let mut out = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    if let Some(h) = header {
        let _ = writeln!(
            out,
            "<p class=\"meta\">started {} in <code>{}</code>{}</p>",
            esc(&h.timestamp),
            esc(&h.cwd),
            h.parent
                .as_ref()
                .map(|p| format!(", forked from {}", esc(p)))
                .unwrap_or_default()
        );
    }
    for line in ending.map(ending_summary).into_iter().flatten() {
        let _ = writeln!(out, "<p class=\"meta\">{}</p>", esc(&line));
    }
    for m in messages {
        match m {
            Message::User { content, .. } => {
                let _ = writeln!(
                    out,
                    "<div class=\"msg user\"><div class=\"role\">user</div><pre>{}</pre></div>",
                    esc(&content.text())
                );
            }
            Message::Assistant(a) => {
                out.push_str("<div class=\"msg assistant\"><div class=\"role\">assistant</div>\n");
                for b in &a.content {
                    match b {
                        ContentBlock::Text { text } => {
                            let _ = writeln!(out, "<pre>{}</pre>", esc(text));
                        }
                        ContentBlock::Thinking { thinking, .. } if !thinking.is_empty() => {
                            let _ = writeln!(
                                out,
                                "<details><summary>thinking</summary><pre>{}</pre></details>",
                                esc(thinking)
                            );
                        }
                        ContentBlock::ToolCall {
                            name, arguments, ..
                        } => {
                            let args = serde_json::to_string_pretty(arguments).unwrap_or_default();
                            let _ = writeln!(
                                out,
                                "<details><summary>{} {}</summary><pre>{}</pre></details>",
                                esc(name),
                                esc(&short_args(arguments)),
                                esc(&args)
                            );
                        }
                        _ => {}
                    }
                }
                if let Some(e) = &a.error_message {
                    let _ = writeln!(out, "<p class=\"error\">error: {}</p>", esc(e));
                }
                out.push_str("</div>\n");
            }
            Message::ToolResult(r) => {
                let cls = if r.is_error { " error" } else { "" };
                let _ = write!(
                    out,
                    "<div class=\"msg tool\"><details><summary class=\"{cls}\">result of {}{}</summary><pre>{}</pre>",
                    esc(&r.tool_name),
                    if r.is_error { " (error)" } else { "" },
                    esc(&block_text(&r.content))
                );
                if let Some(diff) = r.details.get("diff").and_then(Value::as_str) {
                    out.push_str("<pre>");
                    for line in diff.lines() {
                        let class = if line.starts_with("+++") || line.starts_with("---") {
                            ""
                        } else if line.starts_with('+') {
                            "add"
                        } else if line.starts_with('-') {
                            "del"
                        } else if line.starts_with("@@") {
                            "hunk"
                        } else {
                            ""
                        };
                        let _ = writeln!(out, "<span class=\"{class}\">{}</span>", esc(line));
                    }
                    out.push_str("</pre>");
                }
                out.push_str("</details></div>\n");
            }
        }
    }
    if let Some(e) = ending.filter(|e| !e.runs.is_empty() || e.unfinished) {
        out.push_str("<div class=\"msg end\"><div class=\"role\">how it ended</div>\n");
        for line in run_lines(e) {
            let _ = writeln!(out, "<p>{}</p>", esc(&line));
        }
        out.push_str("</div>\n");
    }
    out.push_str("</body></html>\n");
    out
}

/// The first argument values in short, for a summary line.
pub fn short_args(arguments: &Value) -> String {
    let Some(map) = arguments.as_object() else {
        return String::new();
    };
    let parts: Vec<String> = map
        .iter()
        .take(2)
        .map(|(k, v)| {
            let s = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let one_line = s.lines().next().unwrap_or("").to_string();
            let cut: String = one_line.chars().take(60).collect();
            let more = if cut.len() < s.len() { "…" } else { "" };
            format!("{k}={cut}{more}")
        })
        .collect();
    parts.join(" ")
}

fn block_text(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            ContentBlock::Image { .. } => Some("[image]"),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A code fence longer than any run of backticks in the text.
fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat(longest.max(2) + 1)
}

fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}
