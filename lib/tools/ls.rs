//! `ls`: a directory as a tree picture (`├──`, `└──`), directories first,
//! to a depth limit, with an entry budget spent level by level so that one
//! huge directory (`node_modules`) cannot crowd out the rest. Hidden and
//! ignored entries are left out like ripgrep leaves them out, and counted.

use std::collections::VecDeque;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use ignore::{IncrementalIgnore, WalkBuilder};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::walk::{Start, Visibility, locate};
use crate::tool_protocol::{Context, EntryKind, Note, Tool, ToolError, ToolOutput};

/// Levels shown when `depth` is not given.
pub const DEFAULT_DEPTH: u64 = 2;
/// The deepest `depth` accepted.
pub const MAX_DEPTH: u64 = 10;
/// Entries shown when `limit` is not given.
pub const DEFAULT_LIMIT: u64 = 200;
/// The largest `limit` accepted.
pub const MAX_LIMIT: u64 = 5000;
/// Entries shown of one directory below the first level.
pub const NESTED_DIR_CAP: usize = 30;
/// Names of left-out entries shown in the note.
const NAMES_SHOWN: usize = 10;

/// Arguments of `ls`.
#[derive(Debug, Clone, Args, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LsArgs {
    /// Directory to list, relative to the working directory or absolute. Omit to list the working directory.
    #[arg(value_name = "PATH")]
    #[serde(default)]
    #[schemars(description = "")]
    pub path: Option<String>,
    /// Levels to show: 1 lists only the directory's own entries (default 2, at most 10). Deeper directories are shown with their entry count.
    #[arg(long, short = 'd', value_name = "N")]
    #[serde(default)]
    #[schemars(range(min = 1, max = 10))]
    #[schemars(description = "")]
    pub depth: Option<u64>,
    /// Most entries to show in all (default 200, at most 5000). Directories below the first level show at most 30 entries each.
    #[arg(long, short = 'n', value_name = "N")]
    #[serde(default)]
    #[schemars(range(min = 1, max = 5000))]
    #[schemars(description = "")]
    pub limit: Option<u64>,
    #[command(flatten)]
    #[serde(flatten)]
    pub shown: Visibility,
}

/// The `ls` tool.
pub struct LsTool;

impl Tool for LsTool {
    type Args = LsArgs;
    const NAME: &'static str = "ls";
    const BIN: &'static str = "ag-ls";
    const ABOUT: &'static str = "List a directory as a tree";
    const LABEL: &'static str = "List Directory";
    const DESCRIPTION: &'static str = "List a directory (the working directory by default) as a tree picture, \
directories first (marked with a trailing `/`), two levels deep unless `depth` says otherwise; directories below \
that show how many entries they hold. Shows at most 200 entries (`limit`), and at most 30 of any directory below the \
first level, saying how many more there are. Like ripgrep it leaves out entries excluded by .gitignore or .ignore \
and hidden entries, and says how many it left out; `include_ignored` and `include_hidden` show them. \
Use find to look for files by name and grep to search their contents.";
    const MODEL_DESCRIPTION: &'static str = "List a directory as a tree, two levels deep unless depth says otherwise, leaving out .gitignored and hidden entries unless asked.";

    fn run(ctx: &Context, args: LsArgs) -> Result<ToolOutput, ToolError> {
        ls(ctx, &args)
    }
}

/// What an entry is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Dir,
    File,
    /// A symbolic link, with its target as written and whether it leads to a directory.
    Link {
        target: String,
        to_dir: bool,
    },
    Other,
}

impl Kind {
    fn sorts_as_dir(&self) -> bool {
        matches!(self, Kind::Dir | Kind::Link { to_dir: true, .. })
    }

    fn name(&self) -> &'static str {
        match self {
            Kind::Dir => "dir",
            Kind::File => "file",
            Kind::Link { .. } => "symlink",
            Kind::Other => "other",
        }
    }
}

/// One entry of the tree.
#[derive(Debug)]
struct Node {
    name: String,
    path: PathBuf,
    kind: Kind,
    children: Vec<usize>,
    /// What the directory holds that is not shown as children.
    rest: Rest,
}

/// The part of a directory not drawn below it.
#[derive(Debug, Default)]
enum Rest {
    /// Everything is drawn (or this is not a directory).
    #[default]
    None,
    /// Not listed: `.git`, whose contents are git's.
    Skipped,
    /// Not expanded, deeper than the depth limit or past the budget.
    Unexpanded(Counts),
    /// Expanded, but some entries are left out for the budget.
    More(Counts),
    /// Could not be read.
    Unreadable(String),
}

/// Entries counted but not drawn.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    dirs: usize,
    files: usize,
    left_out: usize,
}

/// Everything found, and what was left out.
struct Tree {
    nodes: Vec<Node>,
    ignored: Vec<String>,
    ignored_count: u64,
    hidden: Vec<String>,
    hidden_count: u64,
    cut_by_budget: bool,
    cut_by_depth: bool,
    unreadable: u64,
}

fn ls(ctx: &Context, args: &LsArgs) -> Result<ToolOutput, ToolError> {
    let depth = args.depth.unwrap_or(DEFAULT_DEPTH);
    if depth == 0 || depth > MAX_DEPTH {
        return Err(ToolError::new(
            "ls.bad_depth",
            format!("`depth` must be between 1 and {MAX_DEPTH}; list a subdirectory to go deeper"),
        ));
    }
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    if limit == 0 || limit > MAX_LIMIT {
        return Err(ToolError::new(
            "ls.bad_limit",
            format!("`limit` must be between 1 and {MAX_LIMIT}; list a subdirectory instead"),
        ));
    }
    let start = locate(ctx, args.path.as_deref(), "ls.not_found")?;
    if !start.meta.is_dir() {
        return Ok(single_file(&start));
    }
    let tree = build(ctx, &start, args.shown, depth as usize, limit as usize);
    Ok(render(ctx, &start, depth, limit, &tree))
}

/// `ls` of a file: the file alone, as coreutils' ls does.
fn single_file(start: &Start) -> ToolOutput {
    ToolOutput::new(
        format!("{}\n", start.shown),
        json!({
            "path": start.shown,
            "entries": [{"path": start.shown, "type": "file"}],
            "truncated": false,
            "ignored": 0,
            "hidden": 0,
        }),
    )
}

/// Decides for each entry whether it is shown.
struct Classifier {
    base: PathBuf,
    shown: Visibility,
    /// Ignore rules as ripgrep applies them; `None` when ignored entries are shown.
    matcher: Option<IncrementalIgnore>,
}

enum Class {
    Shown,
    Hidden,
    Ignored,
}

impl Classifier {
    fn new(ctx: &Context, base: &Path, shown: Visibility) -> Self {
        let matcher = if shown.include_ignored {
            None
        } else {
            let mut builder = WalkBuilder::new(base);
            // Hidden entries are told apart by name, so that they are counted apart.
            builder
                .hidden(false)
                .require_git(super::walk::in_git_repository(base))
                .current_dir(ctx.cwd.clone());
            builder.build_matchers().pop()
        };
        Classifier {
            base: base.to_path_buf(),
            shown,
            matcher,
        }
    }

    fn class(&mut self, path: &Path, name: &str, is_dir: bool) -> Class {
        if let Some(m) = &mut self.matcher {
            let rel = path.strip_prefix(&self.base).unwrap_or(path);
            if m.matched(rel, is_dir).is_ignore() {
                return Class::Ignored;
            }
        }
        if !self.shown.include_hidden && name.starts_with('.') {
            return Class::Hidden;
        }
        Class::Shown
    }
}

/// A directory's entries: those shown, sorted, and those left out.
struct Listing {
    shown: Vec<Node>,
    ignored: Vec<String>,
    hidden: Vec<String>,
}

fn list(ctx: &Context, classifier: &mut Classifier, dir: &Path) -> std::io::Result<Listing> {
    let mut listing = Listing {
        shown: Vec::new(),
        ignored: Vec::new(),
        hidden: Vec::new(),
    };
    // Listed through a descriptor of the directory, opened inside the root:
    // a directory swapped for a symlink cannot show what is outside.
    for entry in ctx.read_dir(dir)? {
        let name = entry.name.to_string_lossy().into_owned();
        let path = dir.join(&entry.name);
        let kind = match entry.kind {
            EntryKind::Dir => Kind::Dir,
            EntryKind::File => Kind::File,
            EntryKind::Link { target, to_dir } => Kind::Link {
                target: target.to_string_lossy().into_owned(),
                to_dir,
            },
            EntryKind::Other => Kind::Other,
        };
        let node = Node {
            name,
            path,
            kind,
            children: Vec::new(),
            rest: Rest::None,
        };
        match classifier.class(&node.path, &node.name, node.kind == Kind::Dir) {
            Class::Shown => listing.shown.push(node),
            Class::Hidden => listing.hidden.push(label(&node)),
            Class::Ignored => listing.ignored.push(label(&node)),
        }
    }
    listing.ignored.sort();
    listing.hidden.sort();
    listing.shown.sort_by(|a, b| {
        b.kind
            .sorts_as_dir()
            .cmp(&a.kind.sorts_as_dir())
            .then_with(|| a.name.to_lowercase().cmp(&b.name.to_lowercase()))
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok(listing)
}

/// An entry's name with `/` after a directory.
fn label(node: &Node) -> String {
    if node.kind == Kind::Dir {
        format!("{}/", node.name)
    } else {
        node.name.clone()
    }
}

/// Lists the tree breadth first, so that the budget reaches every level.
fn build(ctx: &Context, start: &Start, shown: Visibility, depth: usize, limit: usize) -> Tree {
    let mut classifier = Classifier::new(ctx, &start.path, shown);
    let mut tree = Tree {
        nodes: vec![Node {
            name: start.shown.clone(),
            path: start.path.clone(),
            kind: Kind::Dir,
            children: Vec::new(),
            rest: Rest::None,
        }],
        ignored: Vec::new(),
        ignored_count: 0,
        hidden: Vec::new(),
        hidden_count: 0,
        cut_by_budget: false,
        cut_by_depth: false,
        unreadable: 0,
    };
    let mut budget = limit;
    let mut queue = VecDeque::from([(0usize, 0usize)]);
    while let Some((idx, level)) = queue.pop_front() {
        if level > 0 && tree.nodes[idx].name == ".git" {
            tree.nodes[idx].rest = Rest::Skipped;
            continue;
        }
        let listing = match list(ctx, &mut classifier, &tree.nodes[idx].path) {
            Ok(l) => l,
            Err(e) => {
                tree.unreadable += 1;
                tree.nodes[idx].rest = Rest::Unreadable(e.kind().to_string());
                continue;
            }
        };
        if level >= depth {
            tree.cut_by_depth |= !listing.shown.is_empty();
            tree.nodes[idx].rest = Rest::Unexpanded(count(&listing.shown, &listing));
            continue;
        }
        let room = if level == 0 {
            budget
        } else {
            budget.min(NESTED_DIR_CAP)
        };
        if room == 0 && !listing.shown.is_empty() {
            // Past the budget: counted, like a directory past the depth limit.
            tree.cut_by_budget = true;
            tree.nodes[idx].rest = Rest::Unexpanded(count(&listing.shown, &listing));
            continue;
        }
        let dir_rel = if level == 0 {
            String::new()
        } else {
            let rel = super::walk::relative(&tree.nodes[idx].path, &start.path);
            format!("{}/", rel.display())
        };
        tree.ignored_count += listing.ignored.len() as u64;
        tree.hidden_count += listing.hidden.len() as u64;
        for (names, out) in [
            (&listing.ignored, &mut tree.ignored),
            (&listing.hidden, &mut tree.hidden),
        ] {
            for n in names {
                if out.len() < NAMES_SHOWN {
                    out.push(format!("{dir_rel}{n}"));
                }
            }
        }
        if listing.shown.is_empty() {
            // Say so, rather than draw a directory that looks unexpanded.
            tree.nodes[idx].rest = Rest::Unexpanded(count(&listing.shown, &listing));
            continue;
        }
        let shown_here = listing.shown.len().min(room);
        budget -= shown_here;
        let mut shown = listing.shown;
        let rest: Vec<Node> = shown.split_off(shown_here);
        if !rest.is_empty() {
            tree.cut_by_budget = true;
            tree.nodes[idx].rest = Rest::More(Counts {
                dirs: rest.iter().filter(|n| n.kind.sorts_as_dir()).count(),
                files: rest.iter().filter(|n| !n.kind.sorts_as_dir()).count(),
                left_out: 0,
            });
        }
        for node in shown {
            let is_dir = node.kind == Kind::Dir;
            let child = tree.nodes.len();
            tree.nodes.push(node);
            tree.nodes[idx].children.push(child);
            if is_dir {
                queue.push_back((child, level + 1));
            }
        }
    }
    tree
}

fn count(shown: &[Node], listing: &Listing) -> Counts {
    Counts {
        dirs: shown.iter().filter(|n| n.kind.sorts_as_dir()).count(),
        files: shown.iter().filter(|n| !n.kind.sorts_as_dir()).count(),
        left_out: listing.ignored.len() + listing.hidden.len(),
    }
}

fn render(ctx: &Context, start: &Start, depth: u64, limit: u64, tree: &Tree) -> ToolOutput {
    let mut out = String::new();
    let root = &tree.nodes[0];
    out.push_str(&start.shown);
    if !start.shown.ends_with('/') {
        out.push('/');
    }
    out.push_str(&suffix(root));
    out.push('\n');
    let mut entries = Vec::new();
    draw(ctx, tree, 0, "", &mut out, &mut entries);
    let mut notes = Vec::new();
    if tree.ignored_count + tree.hidden_count > 0 {
        let mut parts = Vec::new();
        if tree.ignored_count > 0 {
            parts.push(format!(
                "{} ignored ({})",
                tree.ignored_count,
                names(&tree.ignored, tree.ignored_count)
            ));
        }
        if tree.hidden_count > 0 {
            parts.push(format!(
                "{} hidden ({})",
                tree.hidden_count,
                names(&tree.hidden, tree.hidden_count)
            ));
        }
        let switch = match (tree.ignored_count > 0, tree.hidden_count > 0) {
            (true, true) => "include_ignored=true or include_hidden=true",
            (true, false) => "include_ignored=true",
            _ => "include_hidden=true",
        };
        notes.push(Note::aside(format!(
            "Not shown: {}; set {switch} to list them.",
            parts.join(", ")
        )));
    }
    if tree.cut_by_budget {
        notes.push(Note::aside(format!(
            "Some directories are cut short (`… N more`) to keep the listing within {limit} entries and {NESTED_DIR_CAP} per subdirectory; list one of them by its path, or raise `limit` (at most {MAX_LIMIT})."
        )));
    }
    if tree.cut_by_depth {
        notes.push(Note::aside(format!(
            "Directories deeper than depth {depth} show only their counts; list them by path or raise `depth`."
        )));
    }
    if tree.unreadable > 0 {
        notes.push(Note::aside(format!(
            "{} director{} could not be read.",
            tree.unreadable,
            if tree.unreadable == 1 { "y" } else { "ies" }
        )));
    }
    let details = json!({
        "path": start.shown,
        "entries": entries,
        "truncated": tree.cut_by_budget || tree.cut_by_depth,
        "ignored": tree.ignored_count,
        "hidden": tree.hidden_count,
        "depth": depth,
    });
    ToolOutput::new(out, details).with_notes(notes)
}

fn names(shown: &[String], total: u64) -> String {
    let mut s = shown.join(", ");
    if total as usize > shown.len() {
        s.push_str(", …");
    }
    s
}

/// Draws the children of a node below it.
fn draw(
    ctx: &Context,
    tree: &Tree,
    idx: usize,
    prefix: &str,
    out: &mut String,
    entries: &mut Vec<Value>,
) {
    let node = &tree.nodes[idx];
    let more = match &node.rest {
        Rest::More(c) => Some(*c),
        _ => None,
    };
    let last_index = node.children.len().saturating_sub(1);
    for (i, &child) in node.children.iter().enumerate() {
        let last = i == last_index && more.is_none();
        let c = &tree.nodes[child];
        let _ = write!(
            out,
            "{prefix}{}{}{}",
            if last { "└── " } else { "├── " },
            label(c),
            suffix(c)
        );
        out.push('\n');
        entries.push(json!({"path": ctx.show(&c.path), "type": c.kind.name()}));
        let deeper = format!("{prefix}{}", if last { "    " } else { "│   " });
        draw(ctx, tree, child, &deeper, out, entries);
    }
    if let Some(c) = more {
        let _ = writeln!(
            out,
            "{prefix}└── … {} more ({})",
            c.dirs + c.files,
            split(c)
        );
    }
}

/// What follows an entry's name: a link's target, or what an unexpanded
/// directory holds.
fn suffix(node: &Node) -> String {
    match (&node.kind, &node.rest) {
        (Kind::Link { target, .. }, _) => format!(" -> {target}"),
        (_, Rest::Unexpanded(c)) => {
            let n = c.dirs + c.files;
            match (n, c.left_out) {
                (0, 0) => " (empty)".to_string(),
                (0, hidden) => format!(" ({hidden} hidden or ignored)"),
                _ => format!(" ({})", split(*c)),
            }
        }
        (_, Rest::Unreadable(why)) => format!(" (unreadable: {why})"),
        (_, Rest::Skipped) => " (git's data, not listed)".to_string(),
        _ => String::new(),
    }
}

fn split(c: Counts) -> String {
    let part = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    match (c.dirs, c.files) {
        (0, f) => part(f, "file", "files"),
        (d, 0) => part(d, "dir", "dirs"),
        (d, f) => format!("{}, {}", part(d, "dir", "dirs"), part(f, "file", "files")),
    }
}
