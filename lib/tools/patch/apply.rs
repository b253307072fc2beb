//! Applying a parsed patch to the staged files, in memory and in order (so
//! a file added early in a patch can be changed later in it), and the
//! errors that say which file, which hunk and which lines did not fit.

use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use super::model::{Change, Format, Hunk, ONLY_CONTEXT, Op, Patch};
use super::place::{self, Miss};
use super::report::hunk_words;
use super::stage::{Kind, Stage};
use crate::tool_protocol::ToolError;
use crate::tools::fileops::{check_writable, not_found};
use crate::tools::matching::seek::{FileLines, Fuzz};
use crate::tools::matching::text::{CRLF, LF, eol_near};
use crate::tools::matching::{closest, lines};

/// Hunk lines shown in an error at most.
const MAX_SHOWN: usize = 15;

/// The sentence every refusal ends with.
const NOTHING: &str = "Nothing was changed: a patch applies all or nothing.";

/// Applies every file change of `patch` to `stage`.
pub fn apply(stage: &mut Stage, patch: &Patch) -> Result<(), ToolError> {
    for fp in &patch.files {
        let idx = stage.entry(&fp.path)?;
        match &fp.change {
            Change::Add {
                content,
                mode,
                overwrite,
            } => add(stage, idx, content, *mode, *overwrite)?,
            Change::Delete { hunks } => delete(stage, idx, hunks)?,
            Change::Update {
                hunks,
                move_to,
                mode,
            } => update(stage, idx, hunks, move_to.as_deref(), *mode, patch.format)?,
        }
    }
    Ok(())
}

fn add(
    stage: &mut Stage,
    idx: usize,
    content: &[u8],
    mode: Option<u32>,
    overwrite: bool,
) -> Result<(), ToolError> {
    let e = &mut stage.entries[idx];
    let shown = e.shown().to_string();
    match (e.kind, &e.current) {
        (Kind::Dir, None) => {
            return Err(ToolError::new(
                "patch.is_directory",
                format!(
                    "`{shown}` is a directory, so the patch cannot add a file there. {NOTHING}"
                ),
            ));
        }
        (Kind::Other, _) => return Err(not_regular(&shown)),
        (_, Some(existing)) if !overwrite => {
            let (code, why) = if existing.as_slice() == content {
                (
                    "patch.already_applied",
                    "already exists with exactly this content: the patch looks already applied",
                )
            } else {
                (
                    "patch.exists",
                    "already exists, but the diff creates it as a new file (`--- /dev/null`)",
                )
            };
            return Err(ToolError::new(
                code,
                format!(
                    "`{shown}` {why}. {NOTHING}\nhint: to change the file, diff against its current content (read it first); to replace it whole, use write."
                ),
            ));
        }
        (_, Some(existing)) => {
            if e.original.is_some() {
                check_writable("patch.read_only", &e.target.real, &shown)?;
            }
            if existing.as_slice() != content {
                e.notes.push(format!(
                    "`{shown}` already existed; the added file replaced it."
                ));
            }
        }
        _ => {}
    }
    e.current = Some(content.to_vec());
    // Git records 644 or 755; only the executable bit is worth setting
    // (the rest follows the umask, as for any new file).
    if let Some(m) = mode.filter(|m| m & 0o111 != 0) {
        let base = e
            .meta
            .as_ref()
            .map_or(0o644, |m| m.permissions().mode() & 0o7777);
        e.mode = Some(base | (m & 0o111));
    }
    Ok(())
}

/// The checks before a file is changed or deleted.
fn existing(stage: &Stage, idx: usize, verb: &str) -> Result<(), ToolError> {
    let e = &stage.entries[idx];
    let shown = e.shown();
    match (e.kind, &e.current) {
        (Kind::Dir, _) => Err(ToolError::new(
            "patch.is_directory",
            format!("`{shown}` is a directory; the patch can only {verb} files. {NOTHING}"),
        )),
        (Kind::Other, _) => Err(not_regular(shown)),
        (Kind::Missing, None) => {
            let mut err = not_found(
                "patch.not_found",
                &e.target,
                stage.ctx(),
                "Check the path in the patch (paths are relative to the working directory); to create a file, add it (`*** Add File:` or a diff from /dev/null).",
            );
            err.message.push(' ');
            err.message.push_str(NOTHING);
            Err(err)
        }
        (_, None) => Err(ToolError::new(
            "patch.not_found",
            format!(
                "`{shown}` was deleted or moved earlier in this patch, so it cannot {verb} it. {NOTHING}"
            ),
        )),
        (Kind::File, Some(_)) if e.binary && verb == "change" => Err(ToolError::new(
            "patch.binary",
            format!("`{shown}` is a binary file; ag-patch changes text files. {NOTHING}"),
        )),
        _ => {
            if e.original.is_some() {
                check_writable("patch.read_only", &e.target.real, shown)?;
            }
            Ok(())
        }
    }
}

fn not_regular(shown: &str) -> ToolError {
    ToolError::new(
        "patch.not_a_file",
        format!("`{shown}` is not a regular file (a device, socket or pipe). {NOTHING}"),
    )
}

fn delete(stage: &mut Stage, idx: usize, hunks: &[Hunk]) -> Result<(), ToolError> {
    existing(stage, idx, "delete")?;
    let e = &stage.entries[idx];
    if !hunks.is_empty()
        && let Some(content) = &e.current
    {
        // The diff shows what it deletes; the file must hold just that.
        let left = apply_hunks(e.shown(), content, hunks)?.0;
        if !String::from_utf8_lossy(&left).trim().is_empty() {
            return Err(ToolError::new(
                "patch.hunk_failed",
                format!(
                    "`{}` holds more than the diff deletes ({} lines would remain), so it was not deleted. {NOTHING}\nhint: read the file and diff its whole content, or delete it with `*** Delete File:`.",
                    e.shown(),
                    crate::tools::matching::text::count_lines(&left)
                ),
            ));
        }
    }
    stage.entries[idx].current = None;
    Ok(())
}

fn update(
    stage: &mut Stage,
    idx: usize,
    hunks: &[Hunk],
    move_to: Option<&str>,
    mode: Option<u32>,
    format: Format,
) -> Result<(), ToolError> {
    existing(stage, idx, "change")?;
    let e = &stage.entries[idx];
    let content = e.current.clone().unwrap_or_default();
    let (new, placed) = if hunks.is_empty() {
        (content, Vec::new())
    } else {
        apply_hunks(e.shown(), &content, hunks)?
    };
    let e = &mut stage.entries[idx];
    e.hunks.extend(placed);
    if let Some(m) = mode {
        let base = e
            .meta
            .as_ref()
            .map_or(0o644, |m| m.permissions().mode() & 0o7777);
        let want = (base & !0o111) | (m & 0o111);
        if want != base {
            e.mode = Some(want);
        }
    }
    let Some(to) = move_to else {
        e.current = Some(new);
        return Ok(());
    };
    let dest = stage.entry(to)?;
    if dest == idx {
        stage.entries[idx].current = Some(new);
        return Ok(());
    }
    let d = &stage.entries[dest];
    let shown = d.shown().to_string();
    match (d.kind, &d.current) {
        (Kind::Dir, _) => {
            return Err(ToolError::new(
                "patch.is_directory",
                format!(
                    "cannot move to `{shown}`: it is a directory; give the new file's path. {NOTHING}"
                ),
            ));
        }
        (Kind::Other, _) => return Err(not_regular(&shown)),
        (_, Some(_)) if format == Format::Unified => {
            return Err(ToolError::new(
                "patch.exists",
                format!("cannot rename to `{shown}`: it already exists. {NOTHING}"),
            ));
        }
        (_, Some(_)) => {
            stage.entries[dest].notes.push(format!(
                "`{shown}` already existed; the moved file replaced it."
            ));
        }
        _ => {}
    }
    let (src_meta, src_mode) = {
        let s = &mut stage.entries[idx];
        s.current = None;
        s.moved_to = Some(dest);
        (s.meta.clone(), s.mode.take())
    };
    let d = &mut stage.entries[dest];
    d.current = Some(new);
    d.moved_from = Some(idx);
    d.like = src_meta;
    d.mode = src_mode;
    Ok(())
}

/// A placed hunk (or part of one) as the result reports it.
type PlacedInfo = super::stage::HunkPlace;

/// Applies hunks to a file's content: the new content and where each went.
fn apply_hunks(
    shown: &str,
    content: &[u8],
    hunks: &[Hunk],
) -> Result<(Vec<u8>, Vec<PlacedInfo>), ToolError> {
    let file = FileLines::new(content);
    let placed = place::place(&file, hunks).map_err(|m| miss_error(shown, hunks, m, content))?;
    let edits = place::edits(&file, &placed);
    let mut new = lines::apply(content, &edits).map_err(|msg| {
        ToolError::new(
            "patch.invalid",
            format!("`{shown}`: the hunks overlap once placed: {msg} {NOTHING}"),
        )
    })?;
    // A hunk that ends the file may add or remove its final newline.
    if let Some(p) = placed.last()
        && p.hunk.old_no_newline != p.hunk.new_no_newline
        && p.at + p.hunk.old().len() == file.len()
        && !new.is_empty()
    {
        let eol = if eol_near(content, content.len().saturating_sub(1)) == CRLF {
            CRLF
        } else {
            LF
        };
        let ends = new.ends_with(b"\n");
        if p.hunk.new_no_newline && ends {
            new.truncate(new.len() - if new.ends_with(CRLF) { 2 } else { 1 });
        } else if !p.hunk.new_no_newline && !ends {
            new.extend_from_slice(eol);
        }
    }
    let info = placed
        .iter()
        .map(|p| PlacedInfo {
            hunk: p.index + 1,
            line: p.at + 1,
            offset: p.offset,
            fuzz: p.fuzz,
            steps: p.steps.clone(),
        })
        .collect();
    Ok((new, info))
}

/// The error for a hunk that did not fit.
fn miss_error(shown: &str, hunks: &[Hunk], miss: Miss, content: &[u8]) -> ToolError {
    let n = hunks.len();
    let which = |k: usize| {
        let h = &hunks[k];
        let head = if h.header.len() > 2 {
            format!(" (`{}`)", h.header)
        } else {
            String::new()
        };
        if n > 1 {
            format!("hunk {} of {n}{head}", k + 1)
        } else {
            format!("the hunk{head}")
        }
    };
    match miss {
        Miss::Elided {
            hunk,
            parts,
            part,
            miss,
        } => {
            let whole = which(hunk);
            let count = parts.len();
            let name = move |i: usize| {
                format!("part {} of {count} (around its `...` lines) of {whole}", i + 1)
            };
            let mut e = miss_named(shown, &parts, *miss, content, &name);
            e.message.push_str(
                "\n(The parts of a hunk around its `...` lines are placed in order, each after the one before it, and must each fit one place there.)",
            );
            e.details["hunk"] = json!(hunk + 1);
            e.details["part"] = json!(part + 1);
            e
        }
        Miss::LooseAddition { hunk, part } => ToolError::new(
            "patch.hunk_failed",
            format!(
                "`{shown}`: part {part} (around its `...` lines) of {} adds lines but has no context or removed line, so there is no place to put them. {NOTHING}\nhint: begin or end the hunk with a line copied from the file instead of `...`, or give the lines around the added ones as context.",
                which(hunk)
            ),
        )
        .with_details(json!({"file": shown, "hunk": hunk + 1, "part": part})),
        miss => miss_named(shown, hunks, miss, content, &which),
    }
}

/// The error for a hunk (or part of one) that did not fit; `which` names
/// hunk `k` of `hunks`.
fn miss_named(
    shown: &str,
    hunks: &[Hunk],
    miss: Miss,
    content: &[u8],
    which: &dyn Fn(usize) -> String,
) -> ToolError {
    let after = |k: usize, from: usize| match (k, from) {
        (_, 0) => String::new(),
        (0, f) => format!(" after line {f}"),
        (k, f) => format!(" after line {f}, where {} ends", which(k - 1)),
    };
    match miss {
        Miss::Anchor { hunk, anchor, from } => ToolError::new(
            "patch.context_not_found",
            format!(
                "`{shown}`: {}: its line `@@ {anchor}` is not in the file{}. {NOTHING}\n{}\nhint: an `@@` line must be copied exactly from a line of the file (a function or class header) that comes before the hunk.",
                which(hunk),
                after(hunk, from),
                closest::explain_as(content, &anchor, "the @@ line").trim_end()
            ),
        )
        .with_details(json!({"file": shown, "hunk": hunk + 1})),
        Miss::NotFound { hunk, from } => {
            let h = &hunks[hunk];
            let old = h.old();
            let mut listed = String::new();
            let wanted: Vec<_> = h.lines.iter().filter(|l| l.op != Op::Add).collect();
            for l in wanted.iter().take(MAX_SHOWN) {
                let sign = if l.op == Op::Remove { '-' } else { ' ' };
                // As written: a model copies what it is shown, so `·` marks
                // go only where whitespace is the difference (the closest
                // stretch's diff below).
                listed.push_str(&format!("  {sign}{}\n", l.text));
            }
            if wanted.len() > MAX_SHOWN {
                listed.push_str(&format!("  ... ({} more)\n", wanted.len() - MAX_SHOWN));
            }
            // A hunk of context alone is often the new text, unmarked: the
            // marks are what it lacks, more than a match.
            let marks = if h.changes() {
                String::new()
            } else {
                format!(" Besides, {ONLY_CONTEXT}.")
            };
            ToolError::new(
                "patch.hunk_failed",
                format!(
                    "`{shown}`: {} does not apply: the lines it expects (context and removed) are not in the file{}:\n{listed}{}\n{NOTHING}\nhint: read the file again, then make the hunk's ` ` and `-` lines match it exactly (or give more or fewer context lines).{marks}",
                    which(hunk),
                    after(hunk, from),
                    closest::explain_as(content, &old.join("\n"), "the hunk").trim_end()
                ),
            )
            .with_details(json!({"file": shown, "hunk": hunk + 1}))
        }
        Miss::Ambiguous {
            hunk,
            lines,
            fuzz,
            steps,
        } => {
            let mut tolerated: Vec<String> = Vec::new();
            if fuzz != Fuzz::Exact {
                tolerated.push(fuzz.describe().to_string());
            }
            tolerated.extend(steps.iter().map(|s| hunk_words(s.describe())));
            let how = if tolerated.is_empty() {
                String::new()
            } else {
                format!(" (only after {})", tolerated.join("; "))
            };
            let listed: Vec<String> = lines.iter().map(usize::to_string).collect();
            ToolError::new(
                "patch.ambiguous",
                format!(
                    "`{shown}`: {} matches {} places{how}, at lines {}, and the hunks after it do not tell which is meant. {NOTHING}\nhint: add context lines that occur only at the intended place, give the right line numbers in the `@@ -N,M +N,M @@` header, or (begin/end format) add an `@@` line with the function or class the change is in.",
                    which(hunk),
                    lines.len(),
                    listed.join(", ")
                ),
            )
            .with_details(json!({"file": shown, "hunk": hunk + 1, "lines": lines}))
        }
        Miss::AlreadyApplied { hunk, line } | Miss::Repeated { hunk, line } => {
            let (how, again) = if matches!(miss, Miss::Repeated { .. }) {
                (
                    "its lines are in the file as it would leave them",
                    ", and applying it again would add them a second time",
                )
            } else {
                ("its removed lines are not in the file, but its new lines are", "")
            };
            let on_purpose = if again.is_empty() {
                ""
            } else {
                " To add these lines once more on purpose, give context lines on both sides of them."
            };
            ToolError::new(
                "patch.already_applied",
                format!(
                    "`{shown}`: {} looks already applied: {how}, at line {line}{again}. {NOTHING}\nhint: read the file to check; leave this hunk out if the change is already there.{on_purpose}",
                    which(hunk)
                ),
            )
            .with_details(json!({"file": shown, "hunk": hunk + 1, "line": line}))
        }
        // Never nested (parts are placed without elision); said as for a hunk.
        m @ (Miss::Elided { .. } | Miss::LooseAddition { .. }) => {
            miss_error(shown, hunks, m, content)
        }
    }
}
