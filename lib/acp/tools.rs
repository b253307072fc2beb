//! How an ag tool call looks to an editor: its ACP `kind`, a title, the
//! places it touches (so the editor can follow along) and, once it ran,
//! its result as ACP content: the unified diff an edit or patch reports
//! becomes `diff` content (path, old text, new text) so that the editor
//! shows its own diff view. Pure functions of the tool's name, arguments
//! and result; nothing here runs a tool.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    ContentBlock, Diff, TextContent, ToolCallContent, ToolCallLocation, ToolKind,
};
use serde_json::Value;

/// Longest tool output put into an update, in bytes: an editor shows the
/// start; the model saw what ag-loop let through.
const MAX_OUTPUT: usize = 64 << 10;

/// The ACP kind of a tool, by ag's name for it (with or without `ag-`).
/// An MCP tool (`server__tool`) and anything unknown is `other`.
pub fn kind(tool: &str) -> ToolKind {
    match tool.strip_prefix("ag-").unwrap_or(tool) {
        "read" | "ls" => ToolKind::Read,
        "write" | "edit" | "patch" => ToolKind::Edit,
        "delete" => ToolKind::Delete,
        "grep" | "find" => ToolKind::Search,
        "bash" | "git" => ToolKind::Execute,
        "todo" => ToolKind::Think,
        "fetch" | "web_fetch" | "web_search" => ToolKind::Fetch,
        _ => ToolKind::Other,
    }
}

fn str_arg<'a>(arguments: &'a Value, key: &str) -> Option<&'a str> {
    arguments
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// A short title: the tool and what it works on (`read src/main.rs`,
/// `bash: cargo test`).
pub fn title(tool: &str, arguments: &Value) -> String {
    let name = tool.strip_prefix("ag-").unwrap_or(tool);
    let subject = match name {
        "read" | "write" | "edit" => str_arg(arguments, "file_path").map(str::to_string),
        "delete" | "ls" => str_arg(arguments, "path").map(str::to_string),
        "bash" => str_arg(arguments, "command").map(|c| first_line(c, 120)),
        "grep" => str_arg(arguments, "query").map(|q| format!("`{}`", first_line(q, 80))),
        "find" => str_arg(arguments, "pattern").map(|p| format!("`{}`", first_line(p, 80))),
        "git" => str_arg(arguments, "action").map(str::to_string),
        "patch" => {
            let files = patch_paths(str_arg(arguments, "patch").unwrap_or(""));
            (!files.is_empty()).then(|| files.join(", "))
        }
        _ => None,
    };
    match subject {
        Some(s) if name == "bash" => format!("bash: {s}"),
        Some(s) => format!("{name} {s}"),
        None => name.to_string(),
    }
}

fn first_line(s: &str, max: usize) -> String {
    let line = s.lines().next().unwrap_or("");
    let mut out: String = line.chars().take(max).collect();
    if out.len() < line.len() || s.lines().nth(1).is_some() {
        out.push('…');
    }
    out
}

/// `path` made absolute against the session's directory (ACP wants
/// absolute paths).
fn absolute(cwd: &Path, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

/// The files a call touches, known before it runs: the path (and the first
/// line asked for) of the file tools; the files a patch names.
pub fn locations(tool: &str, arguments: &Value, cwd: &Path) -> Vec<ToolCallLocation> {
    let name = tool.strip_prefix("ag-").unwrap_or(tool);
    match name {
        "read" => str_arg(arguments, "file_path")
            .map(|p| {
                let line = arguments
                    .get("offset")
                    .and_then(Value::as_u64)
                    .and_then(|n| u32::try_from(n).ok())
                    .filter(|n| *n > 0);
                vec![ToolCallLocation::new(absolute(cwd, p)).line(line)]
            })
            .unwrap_or_default(),
        "write" | "edit" => str_arg(arguments, "file_path")
            .map(|p| vec![ToolCallLocation::new(absolute(cwd, p))])
            .unwrap_or_default(),
        "delete" | "ls" | "grep" | "find" => str_arg(arguments, "path")
            .map(|p| vec![ToolCallLocation::new(absolute(cwd, p))])
            .unwrap_or_default(),
        "patch" => patch_paths(str_arg(arguments, "patch").unwrap_or(""))
            .into_iter()
            .map(|p| ToolCallLocation::new(absolute(cwd, &p)))
            .collect(),
        _ => Vec::new(),
    }
}

/// Where a finished call changed files: the first changed line of each
/// file of its diff (the editor jumps there).
pub fn result_locations(details: &Value, cwd: &Path) -> Vec<ToolCallLocation> {
    let Some(diff) = details.get("diff").and_then(Value::as_str) else {
        return Vec::new();
    };
    parse_diff(diff)
        .into_iter()
        .map(|f| ToolCallLocation::new(absolute(cwd, &f.path)).line(f.first_line))
        .collect()
}

/// The files a patch names (`*** Update File: x`, `+++ b/x`), in order,
/// each once.
fn patch_paths(patch: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in patch.lines() {
        let path = ["*** Update File: ", "*** Add File: ", "*** Delete File: "]
            .iter()
            .find_map(|p| line.strip_prefix(p))
            .or_else(|| line.strip_prefix("+++ ").map(strip_diff_prefix));
        if let Some(p) = path.map(str::trim)
            && !p.is_empty()
            && p != "/dev/null"
            && !out.iter().any(|o| o == p)
        {
            out.push(p.to_string());
        }
    }
    out
}

fn strip_diff_prefix(p: &str) -> &str {
    let p = p.split('\t').next().unwrap_or(p);
    p.strip_prefix("a/")
        .or_else(|| p.strip_prefix("b/"))
        .unwrap_or(p)
}

/// One file of a unified diff, as old and new text of its hunks.
#[derive(Debug, PartialEq)]
struct FileDiff {
    path: String,
    /// None for a file the diff creates.
    old: Option<String>,
    new: String,
    first_line: Option<u32>,
}

/// Splits a unified diff into files; each file's hunks become one old and
/// one new text (context and removed lines, context and added lines),
/// hunks apart joined by a `…` line, so an editor diffs the changed parts.
/// Hunk lines are counted by their headers, so a removed line that reads
/// like a file header stays a removed line.
fn parse_diff(diff: &str) -> Vec<FileDiff> {
    let mut files: Vec<FileDiff> = Vec::new();
    let mut old_path: Option<String> = None;
    // Lines of the current hunk still to come: (old, new).
    let mut left = (0u64, 0u64);
    for line in diff.lines() {
        if left.0 > 0 || left.1 > 0 {
            let Some(file) = files.last_mut() else {
                left = (0, 0);
                continue;
            };
            match line.as_bytes().first() {
                Some(b'+') => {
                    left.1 = left.1.saturating_sub(1);
                    file.new.push_str(&line[1..]);
                    file.new.push('\n');
                }
                Some(b'-') => {
                    left.0 = left.0.saturating_sub(1);
                    if let Some(o) = file.old.as_mut() {
                        o.push_str(&line[1..]);
                        o.push('\n');
                    }
                }
                // `\ No newline at end of file`.
                Some(b'\\') => {}
                _ => {
                    left.0 = left.0.saturating_sub(1);
                    left.1 = left.1.saturating_sub(1);
                    let text = line.get(1..).unwrap_or("");
                    file.new.push_str(text);
                    file.new.push('\n');
                    if let Some(o) = file.old.as_mut() {
                        o.push_str(text);
                        o.push('\n');
                    }
                }
            }
            continue;
        }
        if let Some(p) = line.strip_prefix("--- ") {
            old_path = Some(strip_diff_prefix(p).to_string());
            continue;
        }
        if let Some(p) = line.strip_prefix("+++ ")
            && let Some(old) = old_path.take()
        {
            let created = old == "/dev/null";
            let mut path = strip_diff_prefix(p).to_string();
            if path == "/dev/null" {
                path = old;
            }
            files.push(FileDiff {
                path,
                old: if created { None } else { Some(String::new()) },
                new: String::new(),
                first_line: None,
            });
            continue;
        }
        let (Some(rest), Some(file)) = (line.strip_prefix("@@"), files.last_mut()) else {
            continue;
        };
        let Some((old_count, new_count, start)) = hunk_header(rest) else {
            continue;
        };
        left = (old_count, new_count);
        if file.first_line.is_none() {
            file.first_line = Some(start);
        }
        let started = !file.new.is_empty() || file.old.as_ref().is_some_and(|o| !o.is_empty());
        if started {
            file.new.push_str("…\n");
            if let Some(o) = file.old.as_mut() {
                o.push_str("…\n");
            }
        }
    }
    files
}

/// A hunk header's line counts and the new file's first line
/// (` -1,3 +2,4 @@`: 3, 4, 2; a count left out is 1).
fn hunk_header(rest: &str) -> Option<(u64, u64, u32)> {
    let mut words = rest.split_whitespace();
    let range = |w: &str| -> Option<(u64, u64)> {
        let mut parts = w.splitn(2, ',');
        let start = parts.next()?.parse().ok()?;
        let count = match parts.next() {
            Some(c) => c.parse().ok()?,
            None => 1,
        };
        Some((start, count))
    };
    let (_, old) = range(words.next()?.strip_prefix('-')?)?;
    let (start, new) = range(words.next()?.strip_prefix('+')?)?;
    Some((old, new, u32::try_from(start.max(1)).unwrap_or(u32::MAX)))
}

/// The content of a finished call: for edits and patches, a `diff` per
/// file from the diff the tool reported (a new file written whole is its
/// content); for everything else, the output text (cut to a size an
/// editor shows).
pub fn result_content(
    tool: &str,
    arguments: &Value,
    output: &str,
    details: &Value,
    is_error: bool,
    cwd: &Path,
) -> Vec<ToolCallContent> {
    let name = tool.strip_prefix("ag-").unwrap_or(tool);
    let mut content = Vec::new();
    if !is_error {
        if let Some(diff) = details.get("diff").and_then(Value::as_str) {
            for f in parse_diff(diff) {
                content.push(ToolCallContent::Diff(
                    Diff::new(absolute(cwd, &f.path), f.new).old_text(f.old),
                ));
            }
        } else if name == "write"
            && let (Some(path), Some(text)) = (
                str_arg(arguments, "file_path"),
                arguments.get("content").and_then(Value::as_str),
            )
        {
            // ag-write reports no diff; a new file's whole text is the
            // diff, an overwritten file's old text is not known here.
            content.push(ToolCallContent::Diff(Diff::new(absolute(cwd, path), text)));
        }
    }
    if content.is_empty() || is_error {
        content.push(text_content(output));
    } else if let Some(d) = crate::protocol::ChangeDiagnostics::from_details(details) {
        // Beside the diff, the errors the change brought in: the editor
        // shows the diff alone otherwise.
        content.push(text_content(&d.summary(20).join("\n")));
    }
    content
}

/// Text as tool call content, cut at 64 KiB on a character boundary.
pub fn text_content(text: &str) -> ToolCallContent {
    let mut t = text;
    let mut cut = false;
    if t.len() > MAX_OUTPUT {
        let mut end = MAX_OUTPUT;
        while !t.is_char_boundary(end) {
            end -= 1;
        }
        t = &t[..end];
        cut = true;
    }
    let mut s = t.to_string();
    if cut {
        s.push_str(&format!(
            "\n… ({} more bytes not shown here)",
            text.len() - t.len()
        ));
    }
    ToolCallContent::from(ContentBlock::Text(TextContent::new(s)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds_follow_what_the_tool_does() {
        assert_eq!(kind("read"), ToolKind::Read);
        assert_eq!(kind("ag-edit"), ToolKind::Edit);
        assert_eq!(kind("patch"), ToolKind::Edit);
        assert_eq!(kind("delete"), ToolKind::Delete);
        assert_eq!(kind("grep"), ToolKind::Search);
        assert_eq!(kind("bash"), ToolKind::Execute);
        assert_eq!(kind("todo"), ToolKind::Think);
        assert_eq!(kind("everything__echo"), ToolKind::Other);
    }

    #[test]
    fn titles_name_the_subject() {
        assert_eq!(
            title("read", &json!({"file_path": "src/a.rs"})),
            "read src/a.rs"
        );
        assert_eq!(
            title("bash", &json!({"command": "cargo test\nmore"})),
            "bash: cargo test…"
        );
        assert_eq!(
            title("grep", &json!({"query": "fn main"})),
            "grep `fn main`"
        );
        assert_eq!(title("edit", &json!({})), "edit");
        assert_eq!(title("bash", &json!({"command": 3})), "bash");
    }

    #[test]
    fn locations_are_absolute_with_the_line_asked_for() {
        let cwd = Path::new("/p");
        let l = locations("read", &json!({"file_path": "a.rs", "offset": 40}), cwd);
        assert_eq!(l, vec![ToolCallLocation::new("/p/a.rs").line(40)]);
        let l = locations("edit", &json!({"file_path": "/abs/b.rs"}), cwd);
        assert_eq!(l, vec![ToolCallLocation::new("/abs/b.rs")]);
        let l = locations(
            "patch",
            &json!({"patch": "*** Begin Patch\n*** Update File: x.rs\n@@\n-a\n+b\n*** Add File: y.rs\n+z\n*** End Patch\n"}),
            cwd,
        );
        assert_eq!(
            l,
            vec![
                ToolCallLocation::new("/p/x.rs"),
                ToolCallLocation::new("/p/y.rs")
            ]
        );
        assert!(locations("bash", &json!({"command": "ls"}), cwd).is_empty());
    }

    #[test]
    fn an_edit_diff_becomes_old_and_new_text() {
        let details =
            json!({"diff": "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n+B2\n c\n"});
        let c = result_content("edit", &json!({}), "ok", &details, false, Path::new("/w"));
        assert_eq!(
            c,
            vec![ToolCallContent::Diff(
                Diff::new("/w/f.txt", "a\nB\nB2\nc\n").old_text("a\nb\nc\n".to_string())
            )]
        );
        assert_eq!(
            result_locations(&details, Path::new("/w")),
            vec![ToolCallLocation::new("/w/f.txt").line(1)]
        );
    }

    #[test]
    fn a_patch_diff_gives_one_diff_per_file_and_new_files_have_no_old_text() {
        let diff = "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+new\n--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-B\n+X\n@@ -9,1 +9,1 @@\n-y\n+z\n";
        let files = parse_diff(diff);
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].path, "n.txt");
        assert_eq!(files[0].old, None);
        assert_eq!(files[0].new, "new\n");
        assert_eq!(files[1].old.as_deref(), Some("a\nB\n…\ny\n"));
        assert_eq!(files[1].new, "a\nX\n…\nz\n");
        assert_eq!(files[1].first_line, Some(1));
    }

    #[test]
    fn removed_lines_that_look_like_headers_stay_in_the_hunk() {
        let diff = "--- a/f\n+++ b/f\n@@ -1,2 +1,1 @@\n--- a/x\n keep\n";
        let files = parse_diff(diff);
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].old.as_deref(), Some("-- a/x\nkeep\n"));
        assert_eq!(files[0].new, "keep\n");
    }

    #[test]
    fn a_written_file_is_its_content_and_failures_are_text() {
        let c = result_content(
            "write",
            &json!({"file_path": "n.txt", "content": "x\n"}),
            "Created",
            &json!({"is_new": true}),
            false,
            Path::new("/w"),
        );
        assert_eq!(c, vec![ToolCallContent::Diff(Diff::new("/w/n.txt", "x\n"))]);
        let c = result_content(
            "edit",
            &json!({}),
            "not found",
            &json!({}),
            true,
            Path::new("/w"),
        );
        assert_eq!(c, vec![text_content("not found")]);
    }

    #[test]
    fn long_output_is_cut_on_a_character_boundary() {
        let long = "é".repeat(MAX_OUTPUT);
        let ToolCallContent::Content(c) = text_content(&long) else {
            panic!("not text")
        };
        let ContentBlock::Text(t) = c.content else {
            panic!("not text")
        };
        assert!(t.text.len() < MAX_OUTPUT + 100);
        assert!(t.text.contains("more bytes not shown"));
    }
}
