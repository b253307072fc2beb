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
use crate::tool_protocol::{Context, Note, ToolOutput};
use crate::tools::walk::{Start, widen_hint};

/// Renders what a search found: the matching lines after the first `skip`,
/// at most `cap` of them, and no more than fit in `budget` characters (the
/// caller's output budget) when there is one.
pub fn render(
    ctx: &Context,
    args: &GrepArgs,
    start: &Start,
    page: Page,
    found: Found,
) -> ToolOutput {
    let Page { skip, cap, budget } = page;
    let context = args.context.unwrap_or(0);
    let body_budget = budget.map_or(usize::MAX, crate::tools::budget::for_body);
    let mut out = String::new();
    let mut chars = 0usize;
    let mut matches: Vec<Value> = Vec::new();
    // After each shown match: the text's length, its characters, the cut lines so far.
    let mut checkpoints: Vec<(usize, usize, u64)> = Vec::new();
    let mut cut = 0u64;
    let mut before = 0usize;
    let mut files_shown: Vec<(usize, String)> = Vec::new();
    for (path, hits) in &found.files {
        let room = cap - matches.len();
        if room == 0 {
            break;
        }
        let name = shown_path(ctx, start, path);
        let skipped_here = hits
            .lines
            .iter()
            .filter(|l| l.is_match)
            .count()
            .min(skip.saturating_sub(before));
        before += skipped_here;
        let lines = visible(&hits.lines, skipped_here, room, context);
        if lines.is_empty() {
            continue;
        }
        let mut piece = String::new();
        if !out.is_empty() {
            piece.push('\n');
        }
        files_shown.push((matches.len(), name.clone()));
        let mut previous: Option<u64> = None;
        for line in lines {
            // As ripgrep: `--` between groups of context, none without context.
            if context > 0 && previous.is_some_and(|p| line.number > p + 1) {
                piece.push_str("--\n");
            }
            previous = Some(line.number);
            let sep = if line.is_match { ':' } else { '-' };
            let _ = write!(piece, "{name}{sep}{}{sep}", line.number);
            if !line.text.is_empty() {
                piece.push(' ');
                piece.push_str(&line.text);
            }
            piece.push('\n');
            cut += u64::from(line.cut);
            chars += piece.chars().count();
            out.push_str(&piece);
            piece.clear();
            if line.is_match {
                matches.push(json!({"path": name, "line": line.number, "text": line.text}));
                checkpoints.push((out.len(), chars, cut));
            }
        }
    }
    // Past the budget, the page ends after the last match that fits (at
    // least one is shown, however long).
    let mut over_budget = false;
    if chars > body_budget {
        let keep = checkpoints
            .iter()
            .rposition(|(_, c, _)| *c <= body_budget)
            .unwrap_or(0);
        let (len, _, cut_then) = checkpoints[keep];
        out.truncate(len);
        cut = cut_then;
        matches.truncate(keep + 1);
        over_budget = true;
    }
    let last_file = files_shown
        .iter()
        .rev()
        .find(|(first, _)| *first < matches.len())
        .map(|(_, n)| n.clone())
        .unwrap_or_default();
    let shown = matches.len() as u64;
    let skip = skip as u64;
    let next = skip + shown;
    let truncated = found.total_matches > next;
    let mut notes = Vec::new();
    if truncated {
        let why = if over_budget {
            format!(
                " (what fits in the caller's output budget of {} characters)",
                budget.unwrap_or_default()
            )
        } else {
            String::new()
        };
        let which = if skip == 0 {
            format!("{shown} of {}", found.total_matches)
        } else {
            format!("{}-{next} of {}", skip + 1, found.total_matches)
        };
        notes.push(Note::aside(format!(
            "Showing {which} matching lines{why}, found in {} files; files are in path order and the list stops in `{last_file}`. \
Next page: the same call with skip={next}. Or narrow the search (a more specific query, a subdirectory as `path`, `include_pattern` \
such as \"*.rs\", `exclude_pattern`) or raise `max_matches` (at most {}).",
            found.files_matched,
            super::MAX_MATCHES
        )));
    } else if skip > 0 && shown > 0 {
        // The last page of a search paged with skip, or a small model's
        // skip=1 on its first search: without a word, the matches passed
        // over would look like none.
        let first = if skip == 1 {
            "the first".to_string()
        } else {
            format!("the first {skip}")
        };
        notes.push(Note::aside(format!(
            "Showing {}-{next} of {} matching lines: skip={skip} passed over {first}. The same call with skip=0 (or without skip) shows them all.",
            skip + 1,
            found.total_matches
        )));
    } else if skip > 0 && shown == 0 && found.total_matches > 0 {
        // A small model sends skip=1 as readily as skip=0, and then pages
        // on past the end: the note says what its own skip did.
        let (are, them) = match found.total_matches {
            1 => ("is 1".to_string(), "it"),
            n => (format!("are {n}"), "them"),
        };
        notes.push(Note::aside(format!(
            "No matching lines after skip={skip}: there {are} in all, and skip={skip} passes over {them}. \
The same call with skip=0 (or without skip) shows {them}."
        )));
    }
    if found.total_matches == 0 {
        notes.extend(
            no_match_notes(args, start, &found)
                .into_iter()
                .map(Note::plain),
        );
    }
    if cut > 0 {
        notes.push(Note::aside(format!(
            "Lines longer than {MAX_LINE_CHARS} characters are cut around the match; `…` marks the cut. Read the file with the read tool to see them whole."
        )));
    }
    if let Some(note) = found.errors.note() {
        notes.push(Note::aside(note));
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

/// Which part of the matches to show.
#[derive(Debug, Clone, Copy)]
pub struct Page {
    /// Matching lines (in path order) left out before the page.
    pub skip: usize,
    /// Most matching lines on the page.
    pub cap: usize,
    /// The caller's output budget in characters, when there is one.
    pub budget: Option<usize>,
}

/// The lines of a file to show when its first `skip` matching lines belong
/// to earlier pages and `room` matching lines are left: those matches and
/// the context lines within `context` of them, up to the next match that
/// does not fit.
fn visible(lines: &[HitLine], skip: usize, room: usize, context: u64) -> Vec<&HitLine> {
    let mut shown_matches = Vec::new();
    let mut seen = 0usize;
    let mut stop = lines.len();
    for (i, line) in lines.iter().enumerate() {
        if line.is_match {
            if seen >= skip + room {
                stop = i;
                break;
            }
            if seen >= skip {
                shown_matches.push(line.number);
            }
            seen += 1;
        }
    }
    lines[..stop]
        .iter()
        .filter(|line| {
            shown_matches
                .iter()
                .any(|m| line.number.abs_diff(*m) <= context)
                && (!line.is_match || shown_matches.contains(&line.number))
        })
        .collect()
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
    notes.extend(widen_hint(args.shown));
    notes
}
