//! `patch`: apply a unified diff (`git diff`, `diff -u`) or a `*** Begin
//! Patch` patch to any number of files, all or nothing. Every hunk of every
//! file is placed in memory first; only when all fit are the files written
//! (keeping their line endings, BOM and permissions), through a journal
//! that keeps the whole patch all or nothing even under SIGKILL
//! (`journal.rs`).

mod apply;
mod envelope;
mod journal;
mod model;
mod place;
mod report;
mod stage;
mod unified;

use std::io::Read;
use std::path::PathBuf;

use clap::Args;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::tool_protocol::{Context, Note, Tool, ToolError, ToolOutput};
use crate::tools::matching::ladder::unescape;
use model::{Change, Format, Patch, unwrap};
use stage::Stage;

/// `1`: a patch that deletes a file is refused, whole. ag-loop sets it for
/// a run whose tools leave `delete` out (a small window's default set).
pub const NO_DELETE_ENV: &str = "AG_PATCH_NO_DELETE";

/// Arguments of `patch`.
#[derive(Debug, Clone, Default, Args, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchArgs {
    /// The patch text: a unified diff as `git diff` writes it (`--- a/path`, `+++ b/path`, `@@ -N,M +N,M @@` hunks; `/dev/null` to add or delete a file), or the begin/end format (`*** Begin Patch`, `*** Add File: path` / `*** Update File: path` / `*** Delete File: path`, `*** End Patch`). It may change several files.
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    #[serde(alias = "input", alias = "diff", alias = "patch_text")]
    #[schemars(required)]
    #[schemars(description = "")]
    pub patch: Option<String>,
    /// Only check that the patch applies and show its diff; change nothing.
    #[arg(long = "check", visible_alias = "dry-run")]
    #[serde(default, alias = "check")]
    #[schemars(description = "Check only, change nothing.")]
    pub dry_run: bool,
    /// For a unified diff: remove this many leading components from its paths (as `patch -pN`). By default git's `a/` and `b/` prefixes are removed and other paths are kept. A strip whose paths are not there, where the default names only files that are, is set aside with a notice.
    #[arg(short = 'p', long, value_name = "N")]
    #[serde(default)]
    #[schemars(description = "Leading path parts to drop, as patch -p (guessed by default).")]
    pub strip: Option<usize>,
    /// Command line only: a file holding the patch, `-` for stdin.
    #[arg(value_name = "PATCHFILE", conflicts_with = "patch")]
    #[serde(skip)]
    #[schemars(skip)]
    pub patch_file: Option<PathBuf>,
    /// Command line only: finish the patches that a stopped ag-patch left half done (their journal, `.ag-patch.journal`, in the working directory, the directories above it or below it), then exit. The next ag-patch touching a file below such a directory finishes it too.
    #[arg(long, conflicts_with_all = ["patch", "patch_file", "dry_run"])]
    #[serde(skip)]
    #[schemars(skip)]
    pub recover: bool,
}

/// The `patch` tool.
pub struct PatchTool;

impl Tool for PatchTool {
    type Args = PatchArgs;
    const NAME: &'static str = "patch";
    const BIN: &'static str = "ag-patch";
    const ABOUT: &'static str =
        "Apply unified diffs and begin/end patches across files, all or nothing";
    const LABEL: &'static str = "Apply Patch";
    const DESCRIPTION: &'static str = "Apply a patch to one or more files, all or nothing: if any hunk does not fit, \
no file changes and the error names the file, the hunk, its lines and the closest text in the file. Two formats:\n\
1. A unified diff, as `git diff` writes it: `--- a/path` and `+++ b/path` lines (`/dev/null` for a new or deleted \
file), then hunks `@@ -N,M +N,M @@` of ` ` context, `-` removed and `+` added lines; renames and new files as git \
writes them. Line numbers help but may be approximate (or left out: `@@ @@`).\n\
2. The begin/end format:\n\
*** Begin Patch\n*** Add File: path/new.py\n+line of the new file\n*** Update File: path/old.py\n*** Move to: path/renamed.py\n\
@@ class Foo\n context line\n-removed line\n+added line\n*** Delete File: path/gone.py\n*** End Patch\n\
An `@@ text` line names a line before the hunk (a class or function header) to tell repeated code apart; \
`*** End of File` after a hunk means it ends the file. Give about 3 lines of context around each change.\n\
Hunks apply in order; context that differs from the file as edit tolerates (whitespace, Unicode look-alikes, blank \
lines at a hunk's ends, double-encoded escapes, a ` ...` context line for unchanged lines, a context line without its leading space) still \
matches when unique, and `details.tolerant_matches` says so. A hunk that could fit several places is refused: add context. Files keep their line endings, BOM \
and permissions. `details.files` lists each file's action and line counts; `details.diff` is the combined diff. \
Set `dry_run` to only check.";
    const MODEL_DESCRIPTION: &'static str = "Apply a patch to one or more files, all or nothing: a unified diff as git diff writes it (line numbers may be rough), or the `*** Begin Patch` format with `*** Update File:`, `*** Add File:`, `*** Delete File:` and `*** End Patch`. Give about 3 lines of context.";

    fn run(ctx: &Context, args: PatchArgs) -> Result<ToolOutput, ToolError> {
        run(ctx, args)
    }
}

fn run(ctx: &Context, args: PatchArgs) -> Result<ToolOutput, ToolError> {
    if args.recover {
        let done = journal::recover_all(ctx, &ctx.cwd)?;
        let text = if done.is_empty() {
            "No interrupted patch was found.".to_string()
        } else {
            done.join("\n")
        };
        return Ok(ToolOutput::new(
            text,
            serde_json::json!({"recovered": done.len()}),
        ));
    }
    let text = patch_text(&args)?;
    // A patch that is one line holding `\n` escapes (a model that encoded
    // its JSON twice) is no patch as it is: its escapes are decoded, as the
    // matching ladder's escapes step decodes an old_string.
    let unescaped = (!text.trim_end().contains('\n'))
        .then(|| unescape(&text))
        .flatten()
        .filter(|t| t.trim_end().contains('\n'));
    let text = unescaped.clone().unwrap_or(text);
    let (patch, restripped) = parse(ctx, &text, args.strip)?;
    if patch.files.is_empty() {
        return Err(ToolError::new(
            "patch.empty",
            "the patch changes no file: put the file sections (`*** Add File:`, `*** Update File:`, `*** Delete File:`) between `*** Begin Patch` and `*** End Patch`.",
        ));
    }
    if std::env::var(NO_DELETE_ENV).is_ok_and(|v| v.trim() == "1") {
        refuse_deletes(&patch)?;
    }
    let mut stage = Stage::new(ctx);
    apply::apply(&mut stage, &patch)?;
    if !stage.entries.iter().any(stage::Entry::changed) {
        let why = if patch.files.iter().any(model::FilePatch::marks_a_change) {
            "its hunks add and remove the same lines".to_string()
        } else {
            model::ONLY_CONTEXT.to_string()
        };
        return Err(ToolError::new(
            "patch.no_change",
            format!("the patch leaves every file exactly as it is, so nothing was written: {why}."),
        ));
    }
    if !args.dry_run {
        stage.commit()?;
    }
    let mut out = report::report(&stage, patch.format, args.dry_run);
    if unescaped.is_some() {
        report::unescaped(&mut out);
    }
    report::unprefixed(&mut out, &patch.unprefixed_hunks());
    let out = out
        .with_notes(restripped)
        .with_notes(stage.recovered.clone());
    if args.dry_run {
        return Ok(out);
    }
    let changed: Vec<crate::tools::after_change::Changed> = stage
        .entries
        .iter()
        .filter(|e| e.changed())
        .filter_map(|e| {
            Some(crate::tools::after_change::Changed {
                real: &e.target.real,
                shown: &e.target.shown,
                before: e.original.as_deref(),
                after: e.current.as_deref()?,
            })
        })
        .collect();
    Ok(crate::tools::after_change::known(ctx, out, &changed))
}

/// Refuses a patch that deletes a file, naming each such file and how to
/// take lines out of it instead.
fn refuse_deletes(patch: &Patch) -> Result<(), ToolError> {
    let gone: Vec<&str> = patch
        .files
        .iter()
        .filter(|f| matches!(f.change, Change::Delete { .. }))
        .map(|f| f.path.as_str())
        .collect();
    let Some(first) = gone.first() else {
        return Ok(());
    };
    let named = gone
        .iter()
        .map(|p| format!("`{p}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let how = match patch.format {
        Format::Envelope => format!(
            "To take lines out of a file, give them as `-` lines under `*** Update File: {first}` (with `@@` and a line of context) instead of `*** Delete File: {first}`."
        ),
        Format::Unified => format!(
            "To take lines out of a file, diff it to itself (`+++ b/{first}`, not `/dev/null`), the lines to remove as `-` lines."
        ),
    };
    Err(ToolError::new(
        "patch.delete_refused",
        format!(
            "the patch deletes {named}, and this run deletes no files: nothing was changed. {how}"
        ),
    ))
}

/// The patch text from the call, a file, or stdin.
fn patch_text(args: &PatchArgs) -> Result<String, ToolError> {
    if let Some(p) = &args.patch {
        return Ok(p.clone());
    }
    let bad = |m: String| ToolError::new("patch.invalid_arguments", m);
    let Some(file) = &args.patch_file else {
        return Err(bad(
            "`patch` is missing: give the patch text (a unified diff or a `*** Begin Patch` patch).".into(),
        ));
    };
    let bytes = if file.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .read_to_end(&mut buf)
            .map_err(|e| bad(format!("cannot read the patch from stdin: {e}")))?;
        buf
    } else {
        std::fs::read(file).map_err(|e| {
            bad(format!(
                "cannot read the patch file `{}`: {e}",
                file.display()
            ))
        })?
    };
    String::from_utf8(bytes).map_err(|_| bad("the patch is not UTF-8 text".into()))
}

/// The patch, and a note when the caller's `strip` was set aside (see
/// [`strip_kept_the_path`]).
fn parse(
    ctx: &Context,
    text: &str,
    strip: Option<usize>,
) -> Result<(Patch, Option<Note>), ToolError> {
    let body = unwrap(text);
    let invalid = |format: Format, (line, msg): (usize, String)| {
        let name = match format {
            Format::Unified => "unified diff",
            Format::Envelope => "begin/end patch",
        };
        ToolError::new(
            "patch.invalid",
            format!("line {line} of the {name}: {msg}. Nothing was changed."),
        )
        .with_details(serde_json::json!({"line": line}))
    };
    if envelope::looks_like(body) {
        return Ok((
            envelope::parse(body).map_err(|e| invalid(Format::Envelope, e))?,
            None,
        ));
    }
    if unified::looks_like(body) {
        let exists = |p: &str| ctx.resolve(p).is_ok_and(|path| path.is_file());
        let patch =
            unified::parse(body, strip, &exists).map_err(|e| invalid(Format::Unified, e))?;
        if let Some(n) = strip
            && let Some((auto, note)) = strip_kept_the_path(body, n, &patch, &exists)?
        {
            return Ok((auto, Some(note)));
        }
        return Ok((patch, None));
    }
    if body.trim().is_empty() {
        return Err(ToolError::new(
            "patch.empty",
            "the patch is empty: give a unified diff or a `*** Begin Patch` ... `*** End Patch` patch.",
        ));
    }
    Err(ToolError::new(
        "patch.invalid",
        "this is not a patch ag-patch reads: give a unified diff (`--- a/path`, `+++ b/path`, `@@` hunks) or the begin/end format (`*** Begin Patch`, `*** Update File: path`, hunks, `*** End Patch`). To replace text in one file, edit may be simpler.",
    ))
}

/// A `strip` that names a missing file where the patch read without it
/// names one that is there: a small model sends `strip: 0` with git's
/// `a/stats.c` as readily as a person mistypes `-p`, and sent it again
/// after an error that said to leave it out. When the patch read without
/// it names only files that are there (or new ones), that reading is the
/// one the call can mean, and it is taken with a note; otherwise the error
/// names the path the caller's own strip made and the call that works.
fn strip_kept_the_path(
    body: &str,
    n: usize,
    patch: &Patch,
    exists: &dyn Fn(&str) -> bool,
) -> Result<Option<(Patch, Note)>, ToolError> {
    let Ok(auto) = unified::parse(body, None, exists) else {
        return Ok(None);
    };
    let changed = |f: &&model::FilePatch| !matches!(f.change, Change::Add { .. });
    let pairs = patch.files.iter().zip(&auto.files);
    let Some((given, plain)) = pairs
        .filter(|(given, _)| changed(given))
        .find(|(given, plain)| {
            !exists(&given.path) && given.path != plain.path && exists(&plain.path)
        })
    else {
        return Ok(None);
    };
    // The other reading is taken only when it moves no file that the
    // caller's strip names and that is there (a real `a/` directory).
    let pairs = patch.files.iter().zip(&auto.files);
    let moves_none = pairs
        .filter(|(given, _)| changed(given))
        .all(|(given, plain)| given.path == plain.path || !exists(&given.path));
    if moves_none && auto.files.iter().filter(changed).all(|f| exists(&f.path)) {
        let note = Note::notice(format!(
            "`{}`, the path this patch names with strip {n}, is not there, so the patch was read without strip (which takes off the `a/` and `b/` of a git diff by itself), as `{}`. For a git diff, leave strip out.",
            given.path, plain.path
        ));
        return Ok(Some((auto, note)));
    }
    Err(ToolError::new(
        "patch.not_found",
        format!(
            "File not found: `{}`, the path this patch names with strip {n}. Without strip (which takes off the `a/` and `b/` of a git diff by itself) it is `{}`, which is there: send the same patch without strip (`-p`). Nothing was changed.",
            given.path, plain.path
        ),
    )
    .with_details(serde_json::json!({"file_path": given.path, "suggestions": [plain.path]})))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: PatchArgs,
    }

    #[test]
    fn command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn codex_style_arguments_are_accepted() {
        let a: PatchArgs =
            serde_json::from_value(serde_json::json!({"input": "*** Begin Patch"})).unwrap();
        assert_eq!(a.patch.as_deref(), Some("*** Begin Patch"));
        assert!(
            serde_json::from_value::<PatchArgs>(serde_json::json!({"patch_file": "x"})).is_err()
        );
    }

    #[test]
    fn what_is_not_a_patch_is_named() {
        let ctx = Context {
            cwd: std::env::temp_dir(),
            root: None,
        };
        assert_eq!(
            parse(&ctx, "hello", None).unwrap_err().code,
            "patch.invalid"
        );
        assert_eq!(parse(&ctx, "\n\n", None).unwrap_err().code, "patch.empty");
        let e = parse(
            &ctx,
            "*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n",
            None,
        )
        .unwrap_err();
        assert!(e.message.contains("cut short"), "{}", e.message);
    }

    #[test]
    fn a_strip_that_keeps_gits_prefix_is_set_aside_when_only_that_reading_fits() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("stats.c"), "int x;\n").unwrap();
        let ctx = Context {
            cwd: dir.path().to_path_buf(),
            root: None,
        };
        let diff = "diff --git a/stats.c b/stats.c\n--- a/stats.c\n+++ b/stats.c\n@@ -1 +1 @@\n-int x;\n+int y;\n";
        let (patch, note) = parse(&ctx, diff, Some(0)).unwrap();
        assert_eq!(patch.files[0].path, "stats.c");
        let said = note.unwrap().text;
        assert!(
            said.contains("`a/stats.c`, the path this patch names with strip 0, is not there")
                && said.contains("as `stats.c`"),
            "{said}"
        );
        // With a second file that neither reading finds, the error names
        // the path the strip made and the call that works.
        let two = format!("{diff}--- a/gone.c\n+++ b/gone.c\n@@ -1 +1 @@\n-a\n+b\n");
        let e = parse(&ctx, &two, Some(0)).unwrap_err();
        assert_eq!(e.code, "patch.not_found");
        assert!(
            e.message
                .contains("`a/stats.c`, the path this patch names with strip 0")
                && e.message
                    .contains("it is `stats.c`, which is there: send the same patch without strip"),
            "{}",
            e.message
        );
        // The strip that works, no strip, and a strip 0 whose path is
        // there (a diff without prefixes) are taken as they are.
        for (text, strip) in [(diff, Some(1)), (diff, None)] {
            let (patch, note) = parse(&ctx, text, strip).unwrap();
            assert_eq!((patch.files[0].path.as_str(), note), ("stats.c", None));
        }
        let plain = "--- stats.c\n+++ stats.c\n@@ -1 +1 @@\n-int x;\n+int y;\n";
        assert_eq!(
            parse(&ctx, plain, Some(0)).unwrap().0.files[0].path,
            "stats.c"
        );
        // A file that is there as the strip names it is not moved: with a
        // real `a/` directory beside the top-level copy, the error stands.
        std::fs::create_dir(dir.path().join("a")).unwrap();
        std::fs::write(dir.path().join("a/x.c"), "int x;\n").unwrap();
        std::fs::write(dir.path().join("x.c"), "int x;\n").unwrap();
        let mixed = format!("{diff}--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n-int x;\n+int y;\n");
        assert_eq!(
            parse(&ctx, &mixed, Some(0)).unwrap_err().code,
            "patch.not_found"
        );
        // With an update, a new file goes where the git diff means it.
        let both = format!("{diff}--- /dev/null\n+++ b/new.c\n@@ -0,0 +1 @@\n+int z;\n");
        let (patch, _) = parse(&ctx, &both, Some(0)).unwrap();
        assert_eq!(patch.files[1].path, "new.c");
        // A new file alone is not looked for.
        let add = "--- /dev/null\n+++ b/new.c\n@@ -0,0 +1 @@\n+int z;\n";
        assert_eq!(
            parse(&ctx, add, Some(0)).unwrap().0.files[0].path,
            "b/new.c"
        );
    }
}
