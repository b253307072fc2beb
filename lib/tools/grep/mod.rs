//! `grep`: search file contents for a regular expression under a path,
//! with ripgrep's engine and ignore rules; matches listed by file in path
//! order, capped, with a note saying how to narrow the search.

mod collect;
mod render;
mod sink;
mod whole;

use std::sync::Arc;

use clap::Args;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use schemars::JsonSchema;
use serde::Deserialize;

use super::globs::PathGlobs;
use super::walk::{Links, Visibility, locate, walker};
use crate::tool_protocol::{Context, Tool, ToolError, ToolOutput};

pub use sink::MAX_LINE_CHARS;

/// Matching lines shown when `max_matches` is not given.
pub const DEFAULT_MATCHES: u64 = 50;
/// The largest `max_matches` accepted.
pub const MAX_MATCHES: u64 = 5000;
/// The largest `skip` accepted: the matches before it are kept in memory.
pub const MAX_SKIP: u64 = 20_000;
/// The most context lines accepted.
pub const MAX_CONTEXT: u64 = 10;

/// Arguments of `grep`.
#[derive(Debug, Clone, Args, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// The regular expression to search for (Rust regex syntax, as ripgrep: `fn \w+\(`, `TODO|FIXME`), or the exact text when `literal` is true. Matches are found within single lines.
    #[arg(value_name = "QUERY")]
    #[schemars(description = "")]
    pub query: String,
    /// File or directory to search in, relative to the working directory or absolute. Omit to search the working directory.
    #[arg(value_name = "PATH")]
    #[serde(default)]
    #[schemars(description = "")]
    pub path: Option<String>,
    /// Search for `query` as exact text: no character is special.
    #[arg(long, short = 'F')]
    #[serde(default)]
    #[schemars(description = "Plain text, not a regex.")]
    pub literal: bool,
    /// true: match case exactly; false: ignore case. Omit for smart case: case is ignored unless the query has an uppercase letter.
    #[arg(
        long,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        value_name = "BOOL"
    )]
    #[serde(default)]
    #[schemars(extend("x-empty-is-a-value" = true))]
    #[schemars(description = "")]
    pub case_sensitive: Option<bool>,
    /// Only search files matching this glob, or several separated by commas: "*.rs", "*.{ts,tsx}", "src/**/*.py". A glob without `/` matches file names at any depth; one with `/` matches paths below `path`.
    #[arg(long, short = 'g', visible_alias = "include", value_name = "GLOB")]
    #[serde(default)]
    #[schemars(description = "Globs, comma-separated.")]
    pub include_pattern: Option<String>,
    /// Skip files and directories matching this glob, or several separated by commas: "*.min.js", "tests", "vendor/**".
    #[arg(long, visible_alias = "exclude", value_name = "GLOB")]
    #[serde(default)]
    #[schemars(description = "")]
    pub exclude_pattern: Option<String>,
    /// Lines of context to show before and after each match (0 to 10).
    #[arg(long, short = 'C', value_name = "N")]
    #[serde(default)]
    #[schemars(range(max = 10))]
    #[schemars(description = "")]
    pub context: Option<u64>,
    /// Most matching lines to show (default 50, at most 5000). The first ones in path order are shown.
    #[arg(long, short = 'm', value_name = "N")]
    #[serde(default)]
    #[schemars(range(min = 1, max = 5000))]
    #[schemars(description = "")]
    pub max_matches: Option<u64>,
    /// Matching lines to leave out before the first one shown: the next page
    /// of a search whose output said "Next page: skip=N".
    #[arg(long, value_name = "N")]
    #[serde(default)]
    #[schemars(range(min = 1, max = 20000))]
    #[schemars(description = "For the next page.")]
    pub skip: Option<u64>,
    #[command(flatten)]
    #[serde(flatten)]
    pub shown: Visibility,
    #[command(flatten)]
    #[serde(flatten)]
    pub links: Links,
}

/// The `grep` tool.
pub struct GrepTool;

impl Tool for GrepTool {
    type Args = GrepArgs;
    const NAME: &'static str = "grep";
    const BIN: &'static str = "ag-grep";
    const ABOUT: &'static str = "Search file contents for a regular expression";
    const LABEL: &'static str = "Search Contents";
    const DESCRIPTION: &'static str = "Search the contents of files for a regular expression (ripgrep's syntax and engine) \
under a directory, the working directory by default. Prints matching lines grouped by file as `path:line: text`, \
files in path order. Smart case: case is ignored unless the query has an uppercase letter (set `case_sensitive` to choose). \
Like ripgrep it skips files excluded by .gitignore or .ignore, hidden files, binary files and .git; \
`include_ignored` and `include_hidden` search those too. Narrow with `include_pattern` (\"*.rs\") and \
`exclude_pattern`. Shows at most 50 matching lines unless `max_matches` says otherwise, with a note when there \
are more; lines longer than 300 characters are cut around the match. `context` adds lines around each match. \
To find files by name use the find tool.";
    const MODEL_DESCRIPTION: &'static str = "Search file contents under path for a regex (ripgrep syntax), skipping .gitignored, hidden and binary files unless asked. Case is ignored unless the query has a capital or case_sensitive is set.";

    fn run(ctx: &Context, args: GrepArgs) -> Result<ToolOutput, ToolError> {
        grep(ctx, &args)
    }
}

fn grep(ctx: &Context, args: &GrepArgs) -> Result<ToolOutput, ToolError> {
    let cap = args.max_matches.unwrap_or(DEFAULT_MATCHES);
    if cap == 0 || cap > MAX_MATCHES {
        return Err(ToolError::new(
            "grep.bad_limit",
            format!(
                "`max_matches` must be between 1 and {MAX_MATCHES}; narrow the search instead of listing more"
            ),
        ));
    }
    let skip = args.skip.unwrap_or(0);
    if skip > MAX_SKIP {
        return Err(ToolError::new(
            "grep.bad_skip",
            format!(
                "`skip` must be at most {MAX_SKIP}; narrow the search (a subdirectory as `path`, `include_pattern`) instead of paging that far"
            ),
        ));
    }
    let context = args.context.unwrap_or(0);
    if context > MAX_CONTEXT {
        return Err(ToolError::new(
            "grep.bad_context",
            format!(
                "`context` must be between 0 and {MAX_CONTEXT}; read the file with the read tool to see more around a match"
            ),
        ));
    }
    let matcher = compile(args)?;
    let include = args
        .include_pattern
        .as_deref()
        .map(|g| PathGlobs::parse(g, "include_pattern"))
        .transpose()?;
    let exclude = args
        .exclude_pattern
        .as_deref()
        .map(|g| PathGlobs::parse(g, "exclude_pattern"))
        .transpose()?
        .map(Arc::new);
    let start = locate(ctx, args.path.as_deref(), "grep.not_found")?;
    if !start.meta.is_file() && !start.meta.is_dir() {
        return Err(ToolError::new(
            "grep.not_a_file",
            format!(
                "`{}` is not a regular file or a directory (a FIFO, socket or device), so it was not searched.",
                start.shown
            ),
        ));
    }
    let shared = collect::Shared {
        ctx,
        matcher,
        start: start.path.clone(),
        include,
        // The skipped matches are found again to know where the page starts.
        cap: (skip + cap) as usize,
        context: context as usize,
    };
    let found =
        shared.search(walker(ctx, &start.path, args.shown, args.links, exclude).build_parallel());
    let page = render::Page {
        skip: skip as usize,
        cap: cap as usize,
        budget: crate::tools::budget::from_env(),
    };
    Ok(render::render(ctx, args, &start, page, found))
}

/// Compiles the query as ripgrep would: smart case unless told, matches
/// confined to one line.
fn compile(args: &GrepArgs) -> Result<RegexMatcher, ToolError> {
    if args.query.is_empty() {
        return Err(ToolError::new(
            "grep.empty_query",
            "`query` is empty; give the text or regular expression to search for",
        ));
    }
    if args.query.len() > super::globs::MAX_PATTERN_BYTES {
        return Err(ToolError::new(
            "grep.query_too_long",
            format!(
                "`query` is {} bytes long, more than the {} KiB a query may be; search for a shorter, distinctive part of the text.",
                args.query.len(),
                super::globs::MAX_PATTERN_BYTES / 1024
            ),
        ));
    }
    let mut builder = RegexMatcherBuilder::new();
    builder
        .line_terminator(Some(b'\n'))
        .fixed_strings(args.literal);
    match args.case_sensitive {
        None => builder.case_smart(true),
        Some(sensitive) => builder.case_insensitive(!sensitive),
    };
    builder.build(&args.query).map_err(|e| {
        let hint = if args.query.contains('\n') {
            "Matches are found within one line: search for a single line of the text."
        } else {
            "Escape special characters with a backslash (`\\(`, `\\.`, `\\[`), or set literal=true to search for the text exactly as written."
        };
        ToolError::new(
            "grep.bad_regex",
            format!("`query` is not a valid regular expression: {e}\nhint: {hint}"),
        )
    })
}
