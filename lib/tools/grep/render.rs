//! The text and details of a search result: matches grouped by file as
//! `path:line: text` (context lines as `path-line- text`, `--` where lines
//! are left out), and apart from them notes on what was cut or skipped and
//! how to narrow.

use std::fmt::Write;
use std::path::Path;

use serde_json::{Value, json};

use super::GrepArgs;
use super::collect::Found;
use super::sink::{HitLine, MAX_LINE_CHARS};
use crate::tool::{Context, ToolOutput};
use crate::tools::walk::{Start, widen_hint};

/// Renders what a search found, showing at most `cap` matching lines.
pub fn render(
    ctx: &Context,
    args: &GrepArgs,
    start: &Start,
    cap: usize,
    found: Found,
) -> ToolOutput {
    let context = args.context.unwrap_or(0);
    let mut out = String::new();
    let mut matches: Vec<Value> = Vec::new();
    let mut cut = 0u64;
    let mut last_file = String::new();
    for (path, hits) in &found.files {
        let room = cap - matches.len();
        if room == 0 {
            break;
        }
        let name = shown_path(ctx, start, path);
        if !out.is_empty() {
            out.push('\n');
        }
        for line in visible(&hits.lines, room, context) {
            if line.gap_before {
                out.push_str("--\n");
            }
            let sep = if line.is_match { ':' } else { '-' };
            let _ = write!(out, "{name}{sep}{}{sep}", line.number);
            if !line.text.is_empty() {
                out.push(' ');
                out.push_str(&line.text);
            }
            out.push('\n');
            cut += u64::from(line.cut);
            if line.is_match {
                matches.push(json!({"path": name, "line": line.number, "text": line.text}));
            }
        }
        last_file = name;
    }
    let shown = matches.len() as u64;
    let truncated = found.total_matches > shown;
    let mut notes = Vec::new();
    if truncated {
        notes.push(format!(
            "[Showing {shown} of {} matching lines, found in {} files; files are in path order and the list stops in `{last_file}`. \
Narrow the search (a more specific query, a subdirectory as `path`, `include_pattern` such as \"*.rs\", `exclude_pattern`) \
or raise `max_matches` (at most {}).]",
            found.total_matches,
            found.files_matched,
            super::MAX_MATCHES
        ));
    }
    if found.total_matches == 0 {
        notes.extend(no_match_notes(args, start, &found));
    }
    if cut > 0 {
        notes.push(format!(
            "[Lines longer than {MAX_LINE_CHARS} characters are cut around the match; `…` marks the cut. Read the file with the read tool to see them whole.]"
        ));
    }
    if let Some(note) = found.errors.note() {
        notes.push(format!("[{note}]"));
    }
    let mut details = json!({
        "matches": matches,
        "files_searched": found.files_searched,
        "files_matched": found.files_matched,
        "total_matches": found.total_matches,
        "truncated": truncated,
        "binary_files_skipped": found.binary_skipped,
    });
    if found.errors.count > 0 {
        details["errors"] = json!(found.errors.first);
        details["error_count"] = json!(found.errors.count);
    }
    ToolOutput::new(out, details).with_notes(notes)
}

/// The lines of a file to show when `room` matching lines are left: up to
/// the last of them and the context that follows it.
fn visible(lines: &[HitLine], room: usize, context: u64) -> impl Iterator<Item = &HitLine> {
    let mut seen = 0usize;
    let mut last = 0u64;
    lines.iter().take_while(move |line| {
        if line.is_match {
            if seen == room {
                return false;
            }
            seen += 1;
            last = line.number;
            true
        } else {
            seen < room || line.number <= last + context
        }
    })
}

/// A matched file as the model should see it.
fn shown_path(ctx: &Context, start: &Start, path: &Path) -> String {
    if path == start.path {
        start.shown.clone()
    } else {
        ctx.show(path)
    }
}

/// Why nothing may have matched, and what to try.
fn no_match_notes(args: &GrepArgs, start: &Start, found: &Found) -> Vec<String> {
    let mut notes = vec![format!(
        "No matches for `{}` in `{}` ({} file{} searched).",
        args.query,
        start.shown,
        found.files_searched,
        if found.files_searched == 1 { "" } else { "s" }
    )];
    if start.meta.is_file() {
        if found.binary_skipped > 0 {
            notes.push(format!(
                "`{}` is a binary file and was not searched.",
                start.shown
            ));
        }
        return notes;
    }
    if args.case_sensitive.is_none() && args.query.chars().any(char::is_uppercase) {
        notes.push(
            "The search was case-sensitive because the query has an uppercase letter; set case_sensitive=false to ignore case."
                .into(),
        );
    }
    if let Some(include) = &args.include_pattern {
        notes.push(format!("Only files matching `{include}` were searched."));
    }
    if found.binary_skipped > 0 {
        notes.push(format!(
            "{} binary file{} skipped.",
            found.binary_skipped,
            if found.binary_skipped == 1 {
                " was"
            } else {
                "s were"
            }
        ));
    }
    notes.extend(widen_hint(args.filters()));
    notes
}
