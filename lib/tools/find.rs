//! `find`: the files under a path whose path matches a glob, most recently
//! modified first (or in path order), capped with a note. Same walk and
//! ignore rules as `grep`.

use std::cmp::Reverse;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use clap::{Args, ValueEnum};
use ignore::DirEntry;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::globs::PathGlobs;
use super::walk::{
    FileVisitor, Links, Start, Visibility, WalkErrors, locate, relative, visit_files, walker,
    widen_hint,
};
use crate::tool_protocol::{Context, Note, Tool, ToolError, ToolOutput};

/// Files listed when `limit` is not given.
pub const DEFAULT_LIMIT: u64 = 100;
/// The largest `limit` accepted.
pub const MAX_LIMIT: u64 = 100_000;

/// The order of the files.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum FindSort {
    // Most recently modified first (ties in path order). Plain comments:
    // documented variants would make the schema a `oneOf` instead of an `enum`.
    #[default]
    Modified,
    // By path.
    Path,
}

/// Arguments of `find`.
#[derive(Debug, Clone, Args, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindArgs {
    /// A glob, or several separated by commas. Without `/` it matches file names at any depth ("*.rs", "Cargo.toml", "*.{ts,tsx}"); with `/` it matches paths below `path` ("src/*.rs" directly in src, "src/**/*.rs" anywhere below it, "**/test_*.py").
    #[arg(value_name = "PATTERN")]
    #[schemars(description = "")]
    pub pattern: String,
    /// Directory to search under, relative to the working directory or absolute. Omit to search the working directory.
    #[arg(value_name = "PATH")]
    #[serde(default)]
    #[schemars(description = "")]
    pub path: Option<String>,
    /// The order: "modified" (most recently modified first, the default) or "path".
    #[arg(long, value_enum, value_name = "ORDER", default_value_t)]
    #[serde(default)]
    #[schemars(description = "")]
    pub sort: FindSort,
    /// Most files to list (default 100, at most 100000).
    #[arg(long, short = 'n', value_name = "N")]
    #[serde(default)]
    #[schemars(range(min = 1, max = 100000))]
    #[schemars(description = "")]
    pub limit: Option<u64>,
    /// Skip files and directories matching this glob, or several separated by commas: "*.min.js", "tests", "vendor/**".
    #[arg(long, visible_alias = "exclude", value_name = "GLOB")]
    #[serde(default)]
    #[schemars(description = "")]
    pub exclude_pattern: Option<String>,
    #[command(flatten)]
    #[serde(flatten)]
    pub shown: Visibility,
    #[command(flatten)]
    #[serde(flatten)]
    pub links: Links,
}

/// The `find` tool.
pub struct FindTool;

impl Tool for FindTool {
    type Args = FindArgs;
    const NAME: &'static str = "find";
    const BIN: &'static str = "ag-find";
    const ABOUT: &'static str = "Find files by glob, most recently modified first";
    const LABEL: &'static str = "Find Files";
    const DESCRIPTION: &'static str = "Find files whose path matches a glob under a directory (the working directory by default), \
one path per line, most recently modified first (`sort`=\"path\" for path order). \
A glob without `/` matches file names at any depth (\"*.rs\"); with `/` it matches paths below `path` (\"src/**/*.rs\"). \
Like ripgrep it skips files excluded by .gitignore or .ignore, hidden files and .git; `include_ignored` and \
`include_hidden` list those too. Lists at most 100 files unless `limit` says otherwise, with a note when there are more. \
To search file contents use the grep tool; to see a directory's layout use the ls tool.";
    const MODEL_DESCRIPTION: &'static str = "Find files by glob under path, newest first (or sort by path); a glob without / matches names at any depth. Skips .gitignored and hidden files unless asked.";

    fn run(ctx: &Context, args: FindArgs) -> Result<ToolOutput, ToolError> {
        find(ctx, &args)
    }
}

/// A file found, with what it is sorted by.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Hit {
    /// Newest first: `None` (no time) sorts last.
    modified: Reverse<Option<SystemTime>>,
    path: PathBuf,
}

/// What the walk found.
#[derive(Debug, Default)]
struct Found {
    hits: Vec<Hit>,
    total: u64,
    errors: WalkErrors,
}

impl Found {
    /// Keeps the first `limit` hits in order; sorting only when the list has doubled keeps the cost linear.
    fn trim(&mut self, limit: usize) {
        if self.hits.len() > limit {
            self.hits.sort_unstable();
            self.hits.truncate(limit);
        }
    }
}

fn find(ctx: &Context, args: &FindArgs) -> Result<ToolOutput, ToolError> {
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    if limit == 0 || limit > MAX_LIMIT {
        return Err(ToolError::new(
            "find.bad_limit",
            format!("`limit` must be between 1 and {MAX_LIMIT}; narrow the pattern instead"),
        ));
    }
    let globs = PathGlobs::parse(&args.pattern, "pattern")?;
    let exclude = args
        .exclude_pattern
        .as_deref()
        .map(|g| PathGlobs::parse(g, "exclude_pattern"))
        .transpose()?
        .map(Arc::new);
    let start = locate(ctx, args.path.as_deref(), "find.not_found")?;
    let sort = args.sort;
    let shared = Shared {
        ctx,
        start: start.path.clone(),
        globs,
        by_time: sort == FindSort::Modified,
        limit: limit as usize,
    };
    let parts = visit_files(
        walker(ctx, &start.path, args.shown, args.links, exclude).build_parallel(),
        || Visitor {
            shared: &shared,
            found: Found::default(),
        },
    );
    let mut found = Found::default();
    for part in parts {
        found.total += part.total;
        found.errors.merge(part.errors);
        found.hits.extend(part.hits);
        found.trim(limit as usize * 2);
    }
    found.hits.sort_unstable();
    found.hits.truncate(limit as usize);
    Ok(render(ctx, args, &start, sort, found))
}

fn render(
    ctx: &Context,
    args: &FindArgs,
    start: &Start,
    sort: FindSort,
    found: Found,
) -> ToolOutput {
    let files: Vec<String> = found
        .hits
        .iter()
        .map(|h| {
            if h.path == start.path {
                start.shown.clone()
            } else {
                ctx.show(&h.path)
            }
        })
        .collect();
    let mut out = String::new();
    for f in &files {
        out.push_str(f);
        out.push('\n');
    }
    let shown = files.len() as u64;
    let truncated = found.total > shown;
    let mut notes = Vec::new();
    if truncated {
        let order = match sort {
            FindSort::Modified => "most recently modified",
            FindSort::Path => "first in path order",
        };
        notes.push(Note::aside(format!(
            "Showing the {shown} {order} of {} files matching `{}`. Narrow `pattern` or `path`, or raise `limit` (at most {MAX_LIMIT}).",
            found.total, args.pattern
        )));
    }
    if found.total == 0 {
        notes.push(Note::plain(format!(
            "No files match `{}` under `{}`.",
            args.pattern, start.shown
        )));
        if args.pattern.contains('/') && start.shown != "." {
            notes.push(Note::plain(format!(
                "A glob with `/` matches paths relative to `{}`, not to the working directory.",
                start.shown
            )));
        }
        notes.extend(widen_hint(args.shown).map(Note::plain));
    }
    if let Some(note) = found.errors.note() {
        notes.push(Note::aside(note));
    }
    let mut details = json!({
        "files": files,
        "total_files": found.total,
        "truncated": truncated,
        "sort": match sort { FindSort::Modified => "modified", FindSort::Path => "path" },
    });
    if found.errors.count > 0 {
        details["errors"] = json!(found.errors.first);
        details["error_count"] = json!(found.errors.count);
    }
    ToolOutput::new(out, details).with_notes(notes)
}

struct Shared<'a> {
    ctx: &'a Context,
    start: PathBuf,
    globs: PathGlobs,
    by_time: bool,
    limit: usize,
}

/// One walker thread's search.
struct Visitor<'s, 'a> {
    shared: &'s Shared<'a>,
    found: Found,
}

impl FileVisitor for Visitor<'_, '_> {
    type Found = Found;

    fn file(&mut self, entry: DirEntry) {
        let shared = self.shared;
        let rel = if entry.depth() == 0 {
            // The start itself is a file: its name is what the glob sees.
            Path::new(entry.file_name())
        } else {
            relative(entry.path(), &shared.start)
        };
        if !shared.globs.is_match(rel) {
            return;
        }
        // The walk lists directories by path; under --root a directory
        // swapped for a symlink meanwhile could have shown names from
        // outside. A name counts only if it is, at this moment, the same
        // file inside the root.
        if shared.ctx.root.is_some() && !still_inside(shared.ctx, &entry) {
            return;
        }
        self.found.total += 1;
        let modified = if shared.by_time {
            entry.metadata().ok().and_then(|m| m.modified().ok())
        } else {
            None
        };
        self.found.hits.push(Hit {
            modified: Reverse(modified),
            path: entry.into_path(),
        });
        if self.found.hits.len() >= shared.limit * 2 {
            self.found.trim(shared.limit);
        }
    }

    fn error(&mut self, err: &ignore::Error) {
        if reportable(self.shared.ctx, err) {
            self.found.errors.record(self.shared.ctx, err);
        }
    }

    fn finish(self) -> Found {
        self.found
    }
}

/// Whether a walk's entry is the file of that name inside the root now:
/// its directory opened inside the root holds it, with the same inode.
/// (ag-grep asks too.)
pub(crate) fn still_inside(ctx: &Context, entry: &DirEntry) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Some(ino) = entry.ino() else {
        return ctx.lstat(entry.path()).is_ok();
    };
    // A followed symlink may be numbered as the link or as its target.
    ctx.lstat(entry.path())
        .is_ok_and(|(_, _, meta)| meta.ino() == ino)
        || entry.path_is_symlink() && ctx.metadata(entry.path()).is_ok_and(|m| m.ino() == ino)
}

/// Whether an error of the walk may be reported: under --root, an error
/// about a path that is not inside the root now came from a directory
/// listed while a swapped symlink pointed out, and even its name stays
/// unsaid.
pub(crate) fn reportable(ctx: &Context, err: &ignore::Error) -> bool {
    fn path_of(err: &ignore::Error) -> Option<&Path> {
        match err {
            ignore::Error::WithPath { path, .. } => Some(path),
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
                path_of(err)
            }
            ignore::Error::Loop { child, .. } => Some(child),
            ignore::Error::Partial(errs) => errs.first().and_then(path_of),
            _ => None,
        }
    }
    match (&ctx.root, path_of(err)) {
        (Some(_), Some(path)) => ctx.lstat(path).is_ok(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn newest_first_then_by_path() {
        let t = SystemTime::UNIX_EPOCH;
        let hit = |secs: u64, p: &str| Hit {
            modified: Reverse(Some(t + Duration::from_secs(secs))),
            path: p.into(),
        };
        let mut found = Found {
            hits: vec![hit(1, "b"), hit(3, "c"), hit(3, "a"), hit(2, "d")],
            ..Found::default()
        };
        found.trim(3);
        let order: Vec<_> = found.hits.iter().map(|h| h.path.clone()).collect();
        assert_eq!(order, vec![PathBuf::from("a"), "c".into(), "d".into()]);
    }
}
