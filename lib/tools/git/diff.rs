//! `diff`: the unstaged or staged changes as a unified diff, capped at
//! 100 KiB by keeping its start and end, with a note in the middle that
//! says what was left out and lists every file's line counts.

use serde::Serialize;
use serde_json::json;

use super::cmd::{Cap, Captured, Repo};
use super::status;
use crate::tool_protocol::{ToolError, ToolOutput};

/// The most diff text returned, head and tail together.
pub const MAX_DIFF_BYTES: usize = 100 * 1024;
const HEAD_BYTES: usize = 64 * 1024;
const TAIL_BYTES: usize = MAX_DIFF_BYTES - HEAD_BYTES;
/// Files listed in the note of a cut diff.
const NOTE_FILES: usize = 50;

/// One file of a diff, from `git diff --numstat`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileStat {
    /// The path, relative to the working directory.
    pub path: String,
    /// For a rename, the old path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Lines added; absent for a binary file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub added: Option<u64>,
    /// Lines deleted; absent for a binary file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deleted: Option<u64>,
    /// True for a binary file.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub binary: bool,
}

/// Runs the diff.
pub fn diff(repo: &Repo, staged: bool, specs: &[String]) -> Result<ToolOutput, ToolError> {
    let base: &[&str] = if staged {
        &["diff", "--cached", "--no-color", "--no-ext-diff"]
    } else {
        &["diff", "--no-color", "--no-ext-diff"]
    };
    let with_paths = |extra: &[&str]| -> Vec<String> {
        base.iter()
            .chain(extra)
            .map(|s| s.to_string())
            .chain(std::iter::once("--".to_string()))
            .chain(specs.iter().cloned())
            .collect()
    };
    let run = repo.git(
        with_paths(&[]),
        Cap {
            head: HEAD_BYTES,
            tail: TAIL_BYTES,
        },
        true,
    )?;
    if !run.success() {
        return Err(ToolError::new(
            "git.diff_failed",
            format!("git diff failed: {}", run.said()),
        ));
    }
    let stat = repo.git(with_paths(&["--numstat", "-z"]), Cap::whole(8 << 20), true)?;
    let files: Vec<FileStat> = if stat.success() {
        parse_numstat(&stat.stdout.head)
            .into_iter()
            .map(|mut f| {
                f.path = repo.show(&f.path);
                f.from = f.from.map(|p| repo.show(&p));
                f
            })
            .collect()
    } else {
        Vec::new()
    };
    let text = &run.stdout;
    // An empty diff prints nothing, as git's does; the note says where
    // the changes are instead.
    let (output, none) = if text.total_bytes == 0 {
        (String::new(), Some(nothing_to_show(repo, staged, specs)?))
    } else if text.truncated() {
        (cut(text, &files), None)
    } else {
        (String::from_utf8_lossy(&text.head).into_owned(), None)
    };
    let details = json!({
        "action": "diff",
        "staged": staged,
        "paths": specs,
        "files": files,
        "truncated": text.truncated(),
        "total_bytes": text.total_bytes,
        "total_lines": text.total_lines,
    });
    Ok(ToolOutput::new(output, details).with_notes(none))
}

/// The head and tail of a diff too long to return whole, cut at line
/// boundaries, with a note between them.
fn cut(text: &Captured, files: &[FileStat]) -> String {
    let head_end = text
        .head
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let tail_start = text
        .tail
        .iter()
        .position(|&b| b == b'\n')
        .map_or(text.tail.len(), |i| i + 1);
    let head = &text.head[..head_end];
    let tail = &text.tail[tail_start..];
    let kept_lines = bytecount::count(head, b'\n') + bytecount::count(tail, b'\n');
    let omitted_lines = text.total_lines.saturating_sub(kept_lines as u64);
    let omitted_bytes = text.total_bytes - (head.len() + tail.len()) as u64;
    let mut note = format!(
        "[... {omitted_lines} lines ({} KiB) of the diff left out here: it is {} KiB in all, more than the {} KiB shown. To see the rest, ask for fewer files with `paths`, or read the changed files themselves. Files changed (+added -deleted):",
        omitted_bytes.div_ceil(1024),
        text.total_bytes.div_ceil(1024),
        MAX_DIFF_BYTES / 1024
    );
    for f in files.iter().take(NOTE_FILES) {
        note.push_str("\n  ");
        note.push_str(&describe(f));
    }
    if files.len() > NOTE_FILES {
        note.push_str(&format!("\n  ... and {} more", files.len() - NOTE_FILES));
    }
    note.push_str("\n...]\n");
    format!(
        "{}{note}{}",
        String::from_utf8_lossy(head),
        String::from_utf8_lossy(tail)
    )
}

fn describe(f: &FileStat) -> String {
    let name = match &f.from {
        Some(from) => format!("{from} -> {}", f.path),
        None => f.path.clone(),
    };
    match (f.added, f.deleted) {
        (Some(a), Some(d)) => format!("{name} +{a} -{d}"),
        _ => format!("{name} (binary)"),
    }
}

/// What to say when the diff is empty: where the changes are instead.
fn nothing_to_show(repo: &Repo, staged: bool, specs: &[String]) -> Result<String, ToolError> {
    let mut args = vec!["status", "--porcelain=v2", "-z", "--"];
    args.extend(specs.iter().map(String::as_str));
    let run = repo.git(&args, Cap::whole(8 << 20), true)?;
    let st = status::parse(&run.stdout.head);
    let scope = if specs.is_empty() {
        ""
    } else {
        " in the given paths"
    };
    let mut out = if staged {
        format!("Nothing is staged{scope}.")
    } else {
        format!("No unstaged changes{scope}.")
    };
    let n = |v: usize, what: &str| format!("{v} {what}{}", if v == 1 { "" } else { "s" });
    if staged && !st.unstaged.is_empty() {
        let verb = if st.unstaged.len() == 1 { "is" } else { "are" };
        out.push_str(&format!(
            " {} {verb} not staged: see them with staged=false.",
            n(st.unstaged.len(), "change")
        ));
    }
    if !staged && !st.staged.is_empty() {
        let verb = if st.staged.len() == 1 { "is" } else { "are" };
        out.push_str(&format!(
            " {} {verb} staged: see them with staged=true.",
            n(st.staged.len(), "change")
        ));
    }
    if !st.untracked.is_empty() {
        out.push_str(&format!(
            " {} not shown by diff (see them with action=status; commit with paths to add them).",
            n(st.untracked.len(), "untracked path")
        ));
    }
    // Files named that have not changed at all: a weak model asks for
    // their diff to see them, and reads "no changes" as an answer. (A
    // path that names nothing git has gets its own note, see `mod.rs`.)
    if !specs.is_empty()
        && st.staged.is_empty()
        && st.unstaged.is_empty()
        && st.untracked.is_empty()
        && all_at_head(repo, specs)
    {
        out.push_str(
            " They are as at the last commit: a diff shows only what changed. To see what a file holds, read it.",
        );
    }
    Ok(out)
}

/// Whether every path of `specs` matches a file of the last commit.
fn all_at_head(repo: &Repo, specs: &[String]) -> bool {
    let mut args = vec!["ls-files", "--error-unmatch", "--with-tree=HEAD", "--"];
    args.extend(specs.iter().map(String::as_str));
    repo.git(&args, Cap::whole(1 << 20), true)
        .is_ok_and(|r| r.success())
}

/// Reads `git diff --numstat -z`: `added\tdeleted\tpath\0`, or for a rename
/// `added\tdeleted\t\0from\0to\0`; binary files show `-` for both counts.
pub fn parse_numstat(raw: &[u8]) -> Vec<FileStat> {
    let text = String::from_utf8_lossy(raw);
    let mut parts = text.split('\0');
    let mut out = Vec::new();
    while let Some(rec) = parts.next() {
        let mut f = rec.splitn(3, '\t');
        let (Some(a), Some(d), Some(path)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let (path, from) = if path.is_empty() {
            let from = parts.next().unwrap_or_default().to_string();
            let to = parts.next().unwrap_or_default().to_string();
            (to, Some(from))
        } else {
            (path.to_string(), None)
        };
        let (added, deleted) = (a.parse().ok(), d.parse().ok());
        out.push(FileStat {
            path,
            from,
            added,
            deleted,
            binary: added.is_none() && deleted.is_none(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numstat_with_renames_and_binaries() {
        let raw = b"3\t1\tsrc/a.rs\0-\t-\tlogo.png\x000\t0\t\0old.rs\0new.rs\0";
        let files = parse_numstat(raw);
        assert_eq!(files.len(), 3);
        assert_eq!(describe(&files[0]), "src/a.rs +3 -1");
        assert_eq!(describe(&files[1]), "logo.png (binary)");
        assert_eq!(describe(&files[2]), "old.rs -> new.rs +0 -0");
    }

    #[test]
    fn cut_keeps_whole_lines_and_counts_the_rest() {
        let captured = Captured {
            head: b"line 1\nline 2\nli".to_vec(),
            tail: b"ne 9\nline 10\n".to_vec(),
            total_bytes: 200,
            total_lines: 10,
            ..Default::default()
        };
        let text = cut(&captured, &[]);
        assert!(text.starts_with("line 1\nline 2\n[... 7 lines"), "{text}");
        assert!(text.ends_with("...]\nline 10\n"), "{text}");
    }
}
