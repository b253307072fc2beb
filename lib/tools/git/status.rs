//! `git status --porcelain=v2 --branch -z` read into a structure (branch,
//! upstream, ahead/behind, staged, unstaged, untracked and conflicted
//! files) and written back as a short readable report.

use serde::Serialize;

/// Files listed per section in the readable report; details hold up to
/// [`MAX_DETAIL_ENTRIES`].
const MAX_SHOWN: usize = 200;
/// Entries per section kept in details.
pub const MAX_DETAIL_ENTRIES: usize = 5000;

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// The path, relative to the top of the working tree.
    pub path: String,
    /// For renames and copies, the path it came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// `modified`, `added`, `deleted`, `renamed`, `copied`, `type_changed`;
    /// for conflicts `both_modified`, `both_added`, `both_deleted`,
    /// `added_by_us`, `added_by_them`, `deleted_by_us`, `deleted_by_them`.
    pub status: &'static str,
    /// True for a submodule.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub submodule: bool,
}

/// The state of the working tree.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Status {
    /// The current branch; absent when HEAD is detached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// True when HEAD is detached.
    pub detached: bool,
    /// The commit HEAD points at; absent before the first commit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    /// The upstream branch, when one is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
    /// Commits on the branch and not on the upstream.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ahead: Option<u64>,
    /// Commits on the upstream and not on the branch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub behind: Option<u64>,
    /// Changes in the index, to be committed.
    pub staged: Vec<Entry>,
    /// Changes in the working tree, not staged.
    pub unstaged: Vec<Entry>,
    /// Files git does not track (directories end in `/`).
    pub untracked: Vec<String>,
    /// Files with merge conflicts.
    pub conflicted: Vec<Entry>,
}

impl Status {
    /// True when nothing is staged, changed, untracked or conflicted.
    pub fn clean(&self) -> bool {
        self.staged.is_empty()
            && self.unstaged.is_empty()
            && self.untracked.is_empty()
            && self.conflicted.is_empty()
    }

    /// Rewrites every path with `show` (relative to the working directory).
    pub fn map_paths(&mut self, show: impl Fn(&str) -> String) {
        for e in self
            .staged
            .iter_mut()
            .chain(self.unstaged.iter_mut())
            .chain(self.conflicted.iter_mut())
        {
            e.path = show(&e.path);
            if let Some(f) = &mut e.from {
                *f = show(f);
            }
        }
        for p in &mut self.untracked {
            *p = show(p);
        }
    }
}

/// Reads the NUL-separated records of porcelain v2 output. Records that do
/// not parse are skipped: a newer git may add kinds this reader does not know.
pub fn parse(raw: &[u8]) -> Status {
    let text = String::from_utf8_lossy(raw);
    let mut st = Status::default();
    let mut records = text.split('\0');
    while let Some(rec) = records.next() {
        if let Some(header) = rec.strip_prefix("# ") {
            read_header(&mut st, header);
        } else if let Some(rest) = rec.strip_prefix("1 ") {
            let f: Vec<&str> = rest.splitn(8, ' ').collect();
            if let [xy, sub, _, _, _, _, _, path] = f[..] {
                push_change(&mut st, xy, sub, path, None);
            }
        } else if let Some(rest) = rec.strip_prefix("2 ") {
            let f: Vec<&str> = rest.splitn(9, ' ').collect();
            // With -z the original path is the next record.
            let from = records.next().map(str::to_string);
            if let [xy, sub, _, _, _, _, _, _, path] = f[..] {
                push_change(&mut st, xy, sub, path, from);
            }
        } else if let Some(rest) = rec.strip_prefix("u ") {
            let f: Vec<&str> = rest.splitn(10, ' ').collect();
            if let [xy, sub, _, _, _, _, _, _, _, path] = f[..] {
                st.conflicted.push(Entry {
                    path: path.to_string(),
                    from: None,
                    status: conflict_name(xy),
                    submodule: sub.starts_with('S'),
                });
            }
        } else if let Some(path) = rec.strip_prefix("? ") {
            st.untracked.push(path.to_string());
        }
    }
    st
}

fn read_header(st: &mut Status, header: &str) {
    let (key, value) = header.split_once(' ').unwrap_or((header, ""));
    match key {
        "branch.oid" if value != "(initial)" => st.head = Some(value.to_string()),
        "branch.head" => {
            if value == "(detached)" {
                st.detached = true;
            } else {
                st.branch = Some(value.to_string());
            }
        }
        "branch.upstream" => st.upstream = Some(value.to_string()),
        "branch.ab" => {
            for part in value.split_whitespace() {
                if let Some(n) = part.strip_prefix('+') {
                    st.ahead = n.parse().ok();
                } else if let Some(n) = part.strip_prefix('-') {
                    st.behind = n.parse().ok();
                }
            }
        }
        _ => {}
    }
}

fn push_change(st: &mut Status, xy: &str, sub: &str, path: &str, from: Option<String>) {
    let mut codes = xy.chars();
    let (x, y) = (codes.next().unwrap_or('.'), codes.next().unwrap_or('.'));
    let submodule = sub.starts_with('S');
    if x != '.' {
        st.staged.push(Entry {
            path: path.to_string(),
            from: if matches!(x, 'R' | 'C') { from } else { None },
            status: change_name(x),
            submodule,
        });
    }
    if y != '.' {
        st.unstaged.push(Entry {
            path: path.to_string(),
            from: None,
            status: change_name(y),
            submodule,
        });
    }
}

fn change_name(code: char) -> &'static str {
    match code {
        'M' => "modified",
        'A' => "added",
        'D' => "deleted",
        'R' => "renamed",
        'C' => "copied",
        'T' => "type_changed",
        _ => "changed",
    }
}

fn conflict_name(xy: &str) -> &'static str {
    match xy {
        "DD" => "both_deleted",
        "AU" => "added_by_us",
        "UD" => "deleted_by_them",
        "UA" => "added_by_them",
        "DU" => "deleted_by_us",
        "AA" => "both_added",
        _ => "both_modified",
    }
}

/// The readable report; `narrowed` when git was asked about some paths
/// only, whose being clean says nothing of the rest of the tree (a weak
/// model read "working tree clean" for one path as the whole tree's).
pub fn render(st: &Status, narrowed: bool) -> String {
    let mut out = branch_line(st);
    out.push('\n');
    if st.clean() {
        out.push_str(if narrowed {
            "Nothing to commit in the paths given (the rest of the tree was not looked at).\n"
        } else {
            "Nothing to commit, working tree clean.\n"
        });
        return out;
    }
    section(&mut out, "Staged, to be committed", &st.staged);
    section(&mut out, "Not staged", &st.unstaged);
    section(
        &mut out,
        "Unmerged, resolve these conflicts",
        &st.conflicted,
    );
    if !st.untracked.is_empty() {
        out.push_str(&format!("Untracked ({}):\n", st.untracked.len()));
        for p in st.untracked.iter().take(MAX_SHOWN) {
            out.push_str(&format!("  {p}\n"));
        }
        more(&mut out, st.untracked.len());
    }
    out
}

/// What a model that sees the tools `seen` (see
/// [`crate::tools::offer::MODEL_TOOLS_ENV`]) can do next with changes
/// found, in its own tools' names: a weak model asked to commit looked at
/// the status again and again. `None` for a clean tree, while conflicts
/// are unresolved (the report says so), for a model without a way to
/// commit, and for the binary used by itself (its report reads as git's).
pub fn next_step(st: &Status, seen: Option<&[String]>) -> Option<String> {
    let seen = seen?;
    if st.clean() || !st.conflicted.is_empty() {
        return None;
    }
    let has = |n: &str| seen.iter().any(|s| s == n);
    let commit = if has("git_commit") {
        "call `git_commit`"
    } else if has("git") {
        "call `git` with action `commit`"
    } else {
        return None;
    };
    if !st.staged.is_empty() {
        return Some(format!(
            "Next, to commit what is staged: {commit} with a `message` saying what changed (no `paths`)."
        ));
    }
    let mut files: Vec<&str> = st.unstaged.iter().map(|e| e.path.as_str()).collect();
    files.extend(st.untracked.iter().map(String::as_str));
    let shown: Vec<String> = files
        .iter()
        .take(NEXT_STEP_PATHS)
        .map(|p| serde_json::Value::from(*p).to_string())
        .collect();
    let more = if files.len() > NEXT_STEP_PATHS {
        format!(" and {} more", files.len() - NEXT_STEP_PATHS)
    } else {
        String::new()
    };
    Some(format!(
        "Next, to commit these changes: {commit} with a `message` saying what changed and `paths` naming the files to commit ([{}]{more})",
        shown.join(", ")
    ))
}

/// Paths a next step names, at most.
const NEXT_STEP_PATHS: usize = 10;

fn branch_line(st: &Status) -> String {
    let mut line = match (&st.branch, &st.head) {
        (Some(b), None) => format!("On branch {b} (no commits yet)"),
        (Some(b), Some(_)) => format!("On branch {b}"),
        (None, Some(h)) => format!("HEAD detached at {}", &h[..h.len().min(12)]),
        (None, None) => "HEAD detached".to_string(),
    };
    match (&st.upstream, st.ahead, st.behind) {
        (Some(u), Some(a), Some(b)) => {
            let relation = match (a, b) {
                (0, 0) => "up to date".to_string(),
                (a, 0) => format!("ahead by {a} commit{}", plural(a)),
                (0, b) => format!("behind by {b} commit{}", plural(b)),
                (a, b) => format!("ahead by {a}, behind by {b}"),
            };
            line.push_str(&format!(", {relation} with {u}"));
        }
        (Some(u), _, _) => line.push_str(&format!(", tracking {u} (gone from the remote)")),
        (None, _, _) if st.branch.is_some() && st.head.is_some() => line.push_str(", no upstream"),
        _ => {}
    }
    line.push('.');
    line
}

fn section(out: &mut String, title: &str, entries: &[Entry]) {
    if entries.is_empty() {
        return;
    }
    out.push_str(&format!("{title} ({}):\n", entries.len()));
    for e in entries.iter().take(MAX_SHOWN) {
        let name = e.status.replace('_', " ");
        let path = match &e.from {
            Some(from) => format!("{from} -> {}", e.path),
            None => e.path.clone(),
        };
        let sub = if e.submodule { " (submodule)" } else { "" };
        out.push_str(&format!("  {:<13} {path}{sub}\n", format!("{name}:")));
    }
    more(out, entries.len());
}

fn more(out: &mut String, n: usize) {
    if n > MAX_SHOWN {
        out.push_str(&format!(
            "  ... and {} more (pass `paths` to narrow the status)\n",
            n - MAX_SHOWN
        ));
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &[u8] = b"# branch.oid 1234567890abcdef1234567890abcdef12345678\0\
# branch.head main\0\
# branch.upstream origin/main\0\
# branch.ab +2 -1\0\
1 M. N... 100644 100644 100644 aaaa bbbb src/a file.rs\0\
1 .M N... 100644 100644 100644 aaaa aaaa README.md\0\
1 MD N... 100644 100644 000000 aaaa bbbb both.rs\0\
2 R. N... 100644 100644 100644 aaaa aaaa R100 new name.rs\0old name.rs\0\
u UU N... 100644 100644 100644 100644 aaaa bbbb cccc conflict.rs\0\
? notes.txt\0\
? build/\0";

    #[test]
    fn parses_every_kind_of_record() {
        let st = parse(SAMPLE);
        assert_eq!(st.branch.as_deref(), Some("main"));
        assert_eq!(st.upstream.as_deref(), Some("origin/main"));
        assert_eq!((st.ahead, st.behind), (Some(2), Some(1)));
        let staged: Vec<(&str, &str)> = st.staged.iter().map(|e| (e.status, &*e.path)).collect();
        assert_eq!(
            staged,
            vec![
                ("modified", "src/a file.rs"),
                ("modified", "both.rs"),
                ("renamed", "new name.rs")
            ]
        );
        assert_eq!(st.staged[2].from.as_deref(), Some("old name.rs"));
        let unstaged: Vec<(&str, &str)> =
            st.unstaged.iter().map(|e| (e.status, &*e.path)).collect();
        assert_eq!(
            unstaged,
            vec![("modified", "README.md"), ("deleted", "both.rs")]
        );
        assert_eq!(st.conflicted[0].status, "both_modified");
        assert_eq!(st.untracked, vec!["notes.txt", "build/"]);
    }

    #[test]
    fn renders_a_readable_report() {
        let text = render(&parse(SAMPLE), false);
        assert!(
            text.starts_with("On branch main, ahead by 2, behind by 1 with origin/main.\n"),
            "{text}"
        );
        assert!(text.contains("Staged, to be committed (3):\n  modified:     src/a file.rs\n"));
        assert!(
            text.contains("  renamed:      old name.rs -> new name.rs\n"),
            "{text}"
        );
        assert!(text.contains("Untracked (2):\n  notes.txt\n  build/\n"));
        let fresh = parse(b"# branch.oid (initial)\0# branch.head main\0");
        assert_eq!(next_step(&fresh, Some(&["git_commit".to_string()])), None);
        assert_eq!(
            render(&fresh, false),
            "On branch main (no commits yet).\nNothing to commit, working tree clean.\n"
        );
        // Asked about some paths only: nothing said of the rest.
        assert_eq!(
            render(&fresh, true),
            "On branch main (no commits yet).\nNothing to commit in the paths given (the rest of the tree was not looked at).\n"
        );
    }

    #[test]
    fn a_model_that_can_commit_reads_how_in_its_own_tools_names() {
        let split = ["read".to_string(), "git_commit".to_string()];
        let whole = ["git".to_string()];
        let changed = parse(
            b"# branch.oid abc\x001 .M N... 100644 100644 100644 a a notes.md\0? new file.txt\0",
        );
        let said = next_step(&changed, Some(&split)).expect("a next step");
        assert_eq!(
            said,
            "Next, to commit these changes: call `git_commit` with a `message` saying what changed and `paths` naming the files to commit ([\"notes.md\", \"new file.txt\"])"
        );
        assert!(
            next_step(&changed, Some(&whole))
                .unwrap()
                .contains("call `git` with action `commit`")
        );
        // Without a tool to commit with, or by itself, nothing is added.
        assert_eq!(next_step(&changed, Some(&["read".to_string()])), None);
        assert_eq!(next_step(&changed, None), None);
        let staged = parse(b"1 M. N... 100644 100644 100644 a b notes.md\0");
        assert!(
            next_step(&staged, Some(&split))
                .unwrap()
                .contains("to commit what is staged: call `git_commit` with a `message`")
        );
        // Conflicts first: the report says to resolve them.
        let conflicted = parse(SAMPLE);
        assert_eq!(next_step(&conflicted, Some(&split)), None);
    }
}
