//! What ag-grep, ag-find and ag-ls share: the place a search starts (a path
//! that must exist, with "did you mean" on a typo) and which entries a walk
//! visits. The rules are ripgrep's, with one difference: `.gitignore` is
//! obeyed outside a git repository too (agents often work in an unpacked
//! tarball or a scratch copy, whose `.gitignore` the user means to count).
//! `.ignore`, `.git/info/exclude` and the global git excludes are obeyed,
//! hidden entries are skipped, symlinks are not followed; each has a switch.
//! `.git` directories are never entered: they hold git's data, not the
//! project's.

use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use clap::Args;
use ignore::{
    DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkParallel, WalkState,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::globs::PathGlobs;
use crate::fsutil::similar_names;
use crate::tool_protocol::{Context, ToolError};

/// What one walker thread does with the files it is handed. Each thread
/// gets its own visitor (no locking per file); when the walk ends, each
/// visitor's findings are handed back to be merged.
pub trait FileVisitor: Send {
    /// What a visitor found.
    type Found: Send;
    /// Called for every regular file of the walk.
    fn file(&mut self, entry: DirEntry);
    /// Called for every entry that could not be read.
    fn error(&mut self, err: &ignore::Error);
    /// The visitor's findings, once its thread is done.
    fn finish(self) -> Self::Found;
}

/// Runs a parallel walk with one visitor per thread, made by `make`, and
/// returns their findings (in no particular order).
pub fn visit_files<V: FileVisitor>(
    walk: WalkParallel,
    make: impl Fn() -> V + Sync,
) -> Vec<V::Found> {
    let results = Mutex::new(Vec::new());
    walk.visit(&mut Threads {
        make: &make,
        results: &results,
    });
    results.into_inner().unwrap_or_else(PoisonError::into_inner)
}

struct Threads<'s, V: FileVisitor, F> {
    make: &'s F,
    results: &'s Mutex<Vec<V::Found>>,
}

impl<'s, V: FileVisitor + 's, F: Fn() -> V + Sync> ParallelVisitorBuilder<'s>
    for Threads<'s, V, F>
{
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Thread {
            visitor: Some((self.make)()),
            results: self.results,
        })
    }
}

struct Thread<'s, V: FileVisitor> {
    visitor: Option<V>,
    results: &'s Mutex<Vec<V::Found>>,
}

impl<V: FileVisitor> ParallelVisitor for Thread<'_, V> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        if let Some(v) = &mut self.visitor {
            match entry {
                Ok(entry) if entry.file_type().is_some_and(|t| t.is_file()) => v.file(entry),
                Ok(_) => {}
                Err(e) => v.error(&e),
            }
        }
        WalkState::Continue
    }
}

// The walk drops each thread's visitor when the thread is done: that is
// where its findings are handed over.
impl<V: FileVisitor> Drop for Thread<'_, V> {
    fn drop(&mut self) {
        if let Some(v) = self.visitor.take() {
            let found = v.finish();
            self.results
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(found);
        }
    }
}

/// Which entries a listing or search takes besides the default ones: the
/// switches ag-ls, ag-find and ag-grep share, declared once for their
/// command lines (`#[command(flatten)]`) and their calls
/// (`#[serde(flatten)]`). Their names say what they do, so the model is
/// given no description of them.
#[derive(Debug, Clone, Copy, Default, Args, Deserialize, JsonSchema)]
pub struct Visibility {
    /// Also take hidden files and directories (names starting with `.`).
    #[arg(long, visible_alias = "hidden")]
    #[serde(default)]
    #[schemars(description = "")]
    pub include_hidden: bool,
    /// Also take files that .gitignore, .ignore or git's excludes leave out.
    #[arg(long, visible_alias = "no-ignore")]
    #[serde(default)]
    #[schemars(description = "")]
    pub include_ignored: bool,
}

/// Whether a walk follows symbolic links (ag-find, ag-grep; ag-ls has no
/// such switch: its tree shows a link as a link). A struct of its own
/// beside [`Visibility`] rather than one wrapping it: serde does not see
/// the fields of a flattened struct nested in another one, and the
/// arguments' `deny_unknown_fields` would refuse them.
#[derive(Debug, Clone, Copy, Default, Args, Deserialize, JsonSchema)]
pub struct Links {
    /// Follow symbolic links to files and directories.
    #[arg(long, short = 'L')]
    #[serde(default)]
    #[schemars(description = "")]
    pub follow_symlinks: bool,
}

/// Where a search starts.
#[derive(Debug, Clone)]
pub struct Start {
    /// The resolved path.
    pub path: PathBuf,
    /// What it is (symlinks followed).
    pub meta: Metadata,
    /// The path as the model should see it.
    pub shown: String,
}

/// Resolves the `path` argument of a search (the working directory when
/// absent); a path that does not exist is an error `<area>.not_found` that
/// suggests names close to it.
pub fn locate(
    ctx: &Context,
    given: Option<&str>,
    not_found: &'static str,
) -> Result<Start, ToolError> {
    let given = given.filter(|g| !g.is_empty()).unwrap_or(".");
    let path = ctx.resolve(given)?;
    let shown = shown_start(ctx, &path);
    match std::fs::metadata(&path) {
        Ok(meta) => Ok(Start { path, meta, shown }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let near = similar_names(&path);
            let hint = if near.is_empty() {
                "Check the path, or list the parent directory with the ls tool.".to_string()
            } else {
                let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
                let names: Vec<String> = near
                    .iter()
                    .map(|n| format!("`{}`", ctx.show(&dir.join(n))))
                    .collect();
                format!("Did you mean {}?", names.join(" or "))
            };
            Err(
                ToolError::new(not_found, format!("Path not found: `{shown}`. {hint}"))
                    .with_details(json!({"path": shown, "suggestions": near})),
            )
        }
        Err(e) => Err(ToolError::new(
            "path.unreadable",
            format!("cannot read `{shown}`: {e}"),
        )),
    }
}

/// The start of a search as the model should see it: `.` for the working
/// directory itself, else relative to it when inside it.
fn shown_start(ctx: &Context, path: &Path) -> String {
    if path == ctx.cwd {
        ".".to_string()
    } else {
        ctx.show(path)
    }
}

/// A walker over `start` that takes what `shown` and `links` ask for. Entries that
/// `exclude` matches (relative to `start`) are skipped, directories with
/// everything in them. When symlinks are followed under `--root`, links
/// that lead outside the root are skipped.
pub fn walker(
    ctx: &Context,
    start: &Path,
    shown: Visibility,
    links: Links,
    exclude: Option<Arc<PathGlobs>>,
) -> WalkBuilder {
    let mut builder = WalkBuilder::new(start);
    let obey = !shown.include_ignored;
    builder
        .hidden(!shown.include_hidden)
        .ignore(obey)
        .git_ignore(obey)
        .git_global(obey)
        .git_exclude(obey)
        .require_git(in_git_repository(start))
        .parents(obey)
        .follow_links(links.follow_symlinks)
        .current_dir(ctx.cwd.clone());
    let confine = if links.follow_symlinks {
        ctx.root.clone()
    } else {
        None
    };
    let base = start.to_path_buf();
    builder.filter_entry(move |entry| keep(entry, &base, exclude.as_deref(), confine.as_deref()));
    builder
}

/// Whether `start` is inside a git (or jj) repository. Inside one, the
/// walk keeps ripgrep's rules, which are git's: `.gitignore` files above the
/// repository's top do not count. Outside one, the ignore crate is told not
/// to require a repository, so that `.gitignore` files count there too;
/// telling it so inside a repository would also let it read the
/// `.gitignore` files above the repository's top.
pub fn in_git_repository(start: &Path) -> bool {
    let start = start.canonicalize().unwrap_or_else(|_| start.to_path_buf());
    start
        .ancestors()
        .any(|dir| dir.join(".git").exists() || dir.join(".jj").is_dir())
}

/// Whether the walk visits an entry (and, for a directory, what is inside).
fn keep(entry: &DirEntry, base: &Path, exclude: Option<&PathGlobs>, root: Option<&Path>) -> bool {
    if entry.depth() == 0 {
        return true;
    }
    let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
    if is_dir && entry.file_name() == ".git" {
        return false;
    }
    if let Some(exclude) = exclude
        && let Ok(rel) = entry.path().strip_prefix(base)
        && exclude.is_match(rel)
    {
        return false;
    }
    if let Some(root) = root
        && entry.path_is_symlink()
    {
        return entry
            .path()
            .canonicalize()
            .is_ok_and(|real| real.starts_with(root));
    }
    true
}

/// The path of an entry relative to the start of the walk, for globs.
pub fn relative<'a>(path: &'a Path, start: &Path) -> &'a Path {
    path.strip_prefix(start).unwrap_or(path)
}

/// A note for an empty result: which rules may have hidden what was wanted.
pub fn widen_hint(shown: Visibility) -> Option<String> {
    match (shown.include_ignored, shown.include_hidden) {
        (true, true) => None,
        (false, false) => Some(
            "Files excluded by .gitignore or .ignore and hidden files were skipped; set include_ignored=true or include_hidden=true to look there too.".into(),
        ),
        (false, true) => Some(
            "Files excluded by .gitignore or .ignore were skipped; set include_ignored=true to look there too.".into(),
        ),
        (true, false) => Some(
            "Hidden files were skipped; set include_hidden=true to look there too.".into(),
        ),
    }
}

/// Errors met during a walk: counted, the first few kept for the note.
#[derive(Debug, Default)]
pub struct WalkErrors {
    /// How many there were.
    pub count: u64,
    /// The first few, as messages.
    pub first: Vec<String>,
}

impl WalkErrors {
    const KEEP: usize = 5;

    /// Records one error.
    pub fn push(&mut self, message: String) {
        self.count += 1;
        if self.first.len() < Self::KEEP {
            self.first.push(message);
        }
    }

    /// Records an error of the walker, its paths shown relative to the
    /// working directory.
    pub fn record(&mut self, ctx: &Context, err: &ignore::Error) {
        let cwd = format!("{}/", ctx.cwd.display());
        self.push(err.to_string().replace(&cwd, ""));
    }

    /// Adds another set.
    pub fn merge(&mut self, other: WalkErrors) {
        self.count += other.count;
        for m in other.first {
            if self.first.len() < Self::KEEP {
                self.first.push(m);
            }
        }
    }

    /// The note to add to an output, if any.
    pub fn note(&self) -> Option<String> {
        if self.count == 0 {
            return None;
        }
        let mut first = self.first.clone();
        first.sort();
        Some(format!(
            "{} path{} could not be read: {}{}",
            self.count,
            if self.count == 1 { "" } else { "s" },
            first.join("; "),
            if self.count as usize > first.len() {
                "; ..."
            } else {
                ""
            }
        ))
    }
}

/// How many entries [`same_name_elsewhere`] looks at before it gives up:
/// enough for a project, few enough that a wrong path in a huge tree costs
/// a few milliseconds, not a full scan.
const SAME_NAME_LOOK: usize = 20_000;

/// Files named like `path` (its last component, exactly) elsewhere in the
/// workspace (the root, else the working directory), by the walk's own
/// rules, at most three, the shallowest first. For a path that does not
/// exist because its directories were guessed (`lib/util/x.py` for a
/// project's `x.py`), this is the file that was meant.
pub fn same_name_elsewhere(ctx: &Context, path: &Path) -> Vec<PathBuf> {
    let Some(name) = path.file_name() else {
        return Vec::new();
    };
    let top = ctx.root.clone().unwrap_or_else(|| ctx.cwd.clone());
    let mut found: Vec<PathBuf> = Vec::new();
    let walk = walker(ctx, &top, Visibility::default(), Links::default(), None).build();
    for entry in walk.take(SAME_NAME_LOOK).filter_map(Result::ok) {
        if entry.file_name() == name
            && entry.file_type().is_some_and(|t| t.is_file())
            && entry.path() != path
        {
            found.push(entry.into_path());
        }
    }
    found.sort_by_key(|p| (p.components().count(), p.clone()));
    found.truncate(3);
    found
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::super::{find::FindArgs, grep::GrepArgs, ls::LsArgs};

    fn parse<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, serde_json::Error> {
        serde_json::from_value(v)
    }

    #[test]
    fn shared_switches_are_read_and_strangers_still_refused() {
        let all = json!({"include_hidden": true, "include_ignored": true, "follow_symlinks": true});
        let mut grep = all.clone();
        grep["query"] = json!("x");
        let g: GrepArgs = parse(grep).unwrap();
        assert!(g.shown.include_hidden && g.shown.include_ignored && g.links.follow_symlinks);
        let mut find = all.clone();
        find["pattern"] = json!("*");
        let f: FindArgs = parse(find.clone()).unwrap();
        assert!(f.shown.include_hidden && f.shown.include_ignored && f.links.follow_symlinks);
        let l: LsArgs = parse(json!({"include_ignored": true})).unwrap();
        assert!(l.shown.include_ignored && !l.shown.include_hidden);
        // ag-ls never follows links; a typo is no switch.
        assert!(parse::<LsArgs>(all).is_err());
        find["include_hiden"] = json!(true);
        assert!(parse::<FindArgs>(find).is_err());
    }
}
