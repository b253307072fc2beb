//! `log`: the latest commits of the current branch, optionally only those
//! touching some paths, one line each and as structured details.

use serde::Serialize;
use serde_json::json;

use super::cmd::{Cap, Repo};
use crate::tool_protocol::{ToolError, ToolOutput};

/// Commits shown when no count is given.
pub const DEFAULT_COUNT: u32 = 10;
/// The largest count accepted.
pub const MAX_COUNT: u32 = 500;

/// One commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogEntry {
    /// The full hash.
    pub commit: String,
    /// The abbreviated hash.
    pub short_commit: String,
    /// The author's name.
    pub author: String,
    /// The author's email.
    pub email: String,
    /// The author date, ISO 8601.
    pub date: String,
    /// The first line of the message.
    pub subject: String,
}

/// Lists the commits.
pub fn log(repo: &Repo, count: Option<u32>, specs: &[String]) -> Result<ToolOutput, ToolError> {
    let count = count.unwrap_or(DEFAULT_COUNT);
    if count == 0 || count > MAX_COUNT {
        return Err(ToolError::new(
            "git.bad_count",
            format!("`count` must be between 1 and {MAX_COUNT}"),
        ));
    }
    let mut args = vec![
        "log".to_string(),
        format!("--max-count={count}"),
        "--no-color".to_string(),
        "-z".to_string(),
        "--format=%H%x1f%h%x1f%an%x1f%ae%x1f%aI%x1f%s".to_string(),
        "--".to_string(),
    ];
    args.extend(specs.iter().cloned());
    let run = repo.git(&args, Cap::whole(16 << 20), true)?;
    if !run.success() {
        // A branch without commits has no log; that is an answer, not a failure.
        let head = repo.git(
            ["rev-parse", "--verify", "--quiet", "HEAD"],
            Cap::whole(4096),
            true,
        )?;
        if head.code == Some(1) {
            return Ok(ToolOutput::new("", json!({"action": "log", "commits": []}))
                .with_note("No commits yet."));
        }
        return Err(ToolError::new(
            "git.log_failed",
            format!("git log failed: {}", run.said()),
        ));
    }
    let commits = parse(&run.text());
    let output = commits
        .iter()
        .map(|c| {
            format!(
                "{} {} {}  {}",
                c.short_commit,
                c.date.get(..10).unwrap_or(&c.date),
                c.author,
                c.subject
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    let none = commits.is_empty().then(|| {
        if specs.is_empty() {
            "No commits.".to_string()
        } else {
            "No commits touch the given paths.".to_string()
        }
    });
    Ok(ToolOutput::new(
        output,
        json!({"action": "log", "paths": specs, "commits": commits}),
    )
    .with_notes(none))
}

/// Reads NUL-separated commits of unit-separated fields.
fn parse(text: &str) -> Vec<LogEntry> {
    text.split('\0')
        .filter_map(|rec| {
            let rec = rec.trim_start_matches('\n');
            let f: Vec<&str> = rec.splitn(6, '\x1f').collect();
            match f[..] {
                [commit, short, author, email, date, subject] => Some(LogEntry {
                    commit: commit.to_string(),
                    short_commit: short.to_string(),
                    author: author.to_string(),
                    email: email.to_string(),
                    date: date.to_string(),
                    subject: subject.to_string(),
                }),
                _ => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_records() {
        let text = "abc123\x1fabc\x1fAda\x1fada@x\x1f2024-05-01T10:00:00+02:00\x1fFirst: a \x1f b\0def456\x1fdef\x1fBob\x1fb@x\x1f2024-05-02T10:00:00Z\x1fSecond\0";
        let c = parse(text);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].subject, "First: a \x1f b");
        assert_eq!(c[1].author, "Bob");
    }
}
