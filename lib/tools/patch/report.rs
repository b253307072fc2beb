//! The result of a patch applied (or only checked): one line per file for
//! the model, notes on hunks that matched loosely or files replaced, and
//! details with per-file counts, hashes and the combined diff.

use serde_json::{Value, json};

use super::model::Format;
use super::stage::{Entry, Stage};
use crate::fsutil::content_hash;
use crate::tool_protocol::{Note, ToolOutput};
use crate::tools::fileops::{near_names_beside, plural};
use crate::tools::matching::diff;
use crate::tools::matching::ladder::Step;
use crate::tools::matching::seek::Fuzz;

/// Combined diff text kept in details; each file's is capped too.
const MAX_DIFF_BYTES: usize = 128 * 1024;

/// Builds the result.
pub fn report(stage: &Stage, format: Format, dry_run: bool) -> ToolOutput {
    let mut lines = Vec::new();
    let mut files = Vec::new();
    let mut notes = Vec::new();
    let mut tolerant = Vec::new();
    let mut combined = String::new();
    let mut truncated = false;
    let (mut added, mut removed) = (0u64, 0u64);
    for e in &stage.entries {
        if e.moved_to.is_some() && e.current.is_none() {
            continue; // Reported with the file it was moved to.
        }
        let source = e.moved_from.map(|i| &stage.entries[i]);
        if !e.changed() && source.is_none() {
            continue;
        }
        let old = source.map_or(&e.original, |s| &s.original);
        let action = match (source, old, &e.current) {
            (Some(_), _, _) => "move",
            (None, None, Some(_)) => "add",
            (None, Some(_), None) => "delete",
            (None, Some(o), Some(n)) if o == n => "mode",
            _ => "update",
        };
        let empty = Vec::new();
        let change = diff::diff(
            e.shown(),
            old.as_ref().unwrap_or(&empty),
            e.current.as_ref().unwrap_or(&empty),
        );
        added += change.added;
        removed += change.removed;
        let counts = match (change.added, change.removed) {
            (0, 0) => String::new(),
            (a, 0) => format!(" (+{a})"),
            (0, r) => format!(" (-{r})"),
            (a, r) => format!(" (+{a} -{r})"),
        };
        let letter = match action {
            "add" => "A",
            "delete" => "D",
            "move" => "R",
            _ => "M",
        };
        let name = match source {
            Some(s) => format!("{} -> {}", s.shown(), e.shown()),
            None => e.shown().to_string(),
        };
        let mode = e.mode.map(|m| format!(", mode {m:o}")).unwrap_or_default();
        lines.push(format!("{letter} {name}{counts}{mode}"));
        if !change.diff.is_empty() && !truncated {
            let text = relabel(&change.diff, source.map(Entry::shown), e.shown(), action);
            if combined.len() + text.len() > MAX_DIFF_BYTES {
                combined.push_str("... (diff cut here; the whole change is in the files)\n");
                truncated = true;
            } else {
                combined.push_str(&text);
            }
        }
        truncated |= change.truncated;
        let mut file = json!({
            "path": e.shown(),
            "action": action,
            "lines_added": change.added,
            "lines_removed": change.removed,
        });
        if let Some(s) = source {
            file["from"] = json!(s.shown());
        }
        if let Some(c) = &e.current {
            file["hash"] = json!(content_hash(c));
        }
        if let Some(m) = e.mode {
            file["mode"] = json!(format!("{m:o}"));
        }
        if action == "add"
            && let Some((near, said)) = near_names_beside(stage.cwd(), &e.target.real)
        {
            notes.push(Note::notice(format!(
                "`{}` is a new file; {said}.",
                e.shown()
            )));
            file["near_names_beside"] = json!(near);
        }
        let placed = source.map_or(&e.hunks, |s| &s.hunks);
        if !placed.is_empty() {
            file["hunks"] = Value::Array(
                placed
                    .iter()
                    .map(|p| {
                        let mut h = json!({"hunk": p.hunk, "line": p.line, "match": p.fuzz.name()});
                        if let Some(o) = p.offset.filter(|o| *o != 0) {
                            h["offset"] = json!(o);
                        }
                        if !p.steps.is_empty() {
                            h["steps"] =
                                json!(p.steps.iter().map(|s| s.name()).collect::<Vec<_>>());
                        }
                        h
                    })
                    .collect(),
            );
        }
        // Each step once per hunk (the parts of an elided hunk repeat them).
        let mut seen: Vec<(usize, Step)> = Vec::new();
        for p in placed {
            let steps = (p.fuzz != Fuzz::Exact)
                .then_some(Step::Level(p.fuzz))
                .into_iter()
                .chain(p.steps.iter().copied());
            for step in steps {
                if seen.contains(&(p.hunk, step)) {
                    continue;
                }
                seen.push((p.hunk, step));
                notes.push(Note::notice(format!(
                    "`{}` hunk {} did not match exactly; {}. Check the diff in details.",
                    e.shown(),
                    p.hunk,
                    hunk_words(step.describe())
                )));
                tolerant.push(json!({"path": e.shown(), "hunk": p.hunk, "kind": step.name()}));
            }
        }
        notes.extend(e.notes.iter().map(|n| Note::notice(n.clone())));
        files.push(file);
    }
    let n = files.len() as u64;
    let head = if dry_run {
        format!(
            "The patch applies to {n} file{} (+{added} -{removed}); nothing was changed, as only a check was asked for (`dry_run`, `--check`): leave that out to apply it.",
            plural(n)
        )
    } else {
        format!(
            "Applied the patch to {n} file{} (+{added} -{removed}):",
            plural(n)
        )
    };
    let mut output = head;
    for l in &lines {
        output.push('\n');
        output.push_str(l);
    }
    let mut details = json!({
        "format": format.name(),
        "files": files,
        "lines_added": added,
        "lines_removed": removed,
        "diff": combined,
    });
    if dry_run {
        details["dry_run"] = Value::Bool(true);
    }
    if truncated {
        details["diff_truncated"] = Value::Bool(true);
    }
    if !tolerant.is_empty() {
        details["tolerant_matches"] = Value::Array(tolerant);
    }
    ToolOutput::new(output, details).with_notes(notes)
}

/// Marks a result whose patch came as one line of `\n` escapes, decoded.
pub fn unescaped(out: &mut ToolOutput) {
    out.details["unescaped"] = Value::Bool(true);
    let mut all = out.details["tolerant_matches"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    all.insert(0, json!({"kind": Step::Escapes.name()}));
    out.details["tolerant_matches"] = Value::Array(all);
    out.notes.push(Note::notice(
        "the patch was one line holding `\\n` escapes, so they were read as line breaks (and `\\t`, `\\\"`, `\\\\` as a tab, a quote, a backslash). Send real line breaks; check the diff in details.",
    ));
}

/// Notes the hunks that had lines without their leading ` `, `-` or `+`,
/// read as context: `(path, hunk number, lines)`.
pub fn unprefixed(out: &mut ToolOutput, hunks: &[(String, usize, usize)]) {
    if hunks.is_empty() {
        return;
    }
    let mut all = out.details["tolerant_matches"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for (path, hunk, lines) in hunks {
        all.push(json!({"path": path, "hunk": hunk, "kind": "unprefixed_context"}));
        out.notes.push(Note::notice(format!(
            "`{path}` hunk {hunk}: {lines} line{} started with none of ` `, `-`, `+` and {} read as context; start each context line with a space.",
            plural(*lines as u64),
            if *lines == 1 { "was" } else { "were" },
        )));
    }
    out.details["tolerant_matches"] = Value::Array(all);
}

/// A ladder step's description, which speaks of `old_string` and
/// `new_string`, said of a hunk.
pub(super) fn hunk_words(text: &str) -> String {
    text.replace("old_string's", "the hunk's")
        .replace("old_string", "the hunk's context and removed lines")
        .replace("new_string", "its added lines")
}

/// A file's diff with the labels of its action: `/dev/null` for an added
/// or deleted file, the old name for a moved one.
fn relabel(diff: &str, from: Option<&str>, name: &str, action: &str) -> String {
    let label = |prefix: &str, n: &str| {
        if n.starts_with('/') {
            n.to_string()
        } else {
            format!("{prefix}{n}")
        }
    };
    let old = match action {
        "add" => "/dev/null".to_string(),
        _ => label("a/", from.unwrap_or(name)),
    };
    let new = match action {
        "delete" => "/dev/null".to_string(),
        _ => label("b/", name),
    };
    let body = diff.splitn(3, '\n').nth(2).unwrap_or_default();
    format!("--- {old}\n+++ {new}\n{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_follow_the_action() {
        let d = "--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+hi\n";
        assert_eq!(
            relabel(d, None, "x", "add"),
            "--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+hi\n"
        );
        assert!(relabel(d, None, "x", "delete").starts_with("--- a/x\n+++ /dev/null\n"));
        assert!(relabel(d, Some("old"), "x", "move").starts_with("--- a/old\n+++ b/x\n"));
    }
}
