//! `edit`: change a file in place. Exact string replacements (one, all
//! occurrences, or a batch applied in order), line-range edits, code
//! sketches with `// ... existing code ...` markers (placed by their
//! unchanged lines, or by a planner model), tolerant matching when the
//! exact text is not there, and on a miss an error that shows the closest
//! text. All edits of a call succeed together or none is
//! made; the file is replaced atomically, only if nobody changed it
//! meanwhile, keeping its line endings, BOM, final newline, permissions and
//! symlinks.

mod code_edit;
mod planner;
mod rename;
mod replace;
mod sketch;

use std::fs::Metadata;
use std::io;

use clap::Args;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

pub use super::matching::lines::LineEdit;

use super::fileops::{
    Target, check_hash, check_writable, hard_link_note, io_failed, not_found, plural,
    resolve_target, write_failed,
};
use super::matching::ladder::Step;
use super::matching::{closest, diff, lines, misspelt, text};
use crate::fsutil::{BINARY_PROBE, content_hash, looks_binary};
use crate::tool_protocol::{Context, Note, Tool, ToolError, ToolOutput};
use replace::{Miss, Replacement};

/// Largest file edited; larger ones are better changed with a streaming tool.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024 * 1024;

/// Arguments of `edit`.
#[derive(Debug, Clone, Default, Args, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditArgs {
    /// Path to the file to edit, relative to the working directory or absolute.
    #[arg(value_name = "FILE")]
    #[serde(alias = "target_file")]
    #[schemars(description = "")]
    pub file_path: String,
    /// The exact text to replace, including whitespace and indentation. It must occur exactly once unless `replace_all` is set; include a few surrounding lines to make it unique.
    #[arg(
        long = "old",
        visible_alias = "old-string",
        value_name = "TEXT",
        allow_hyphen_values = true
    )]
    #[serde(default, alias = "old_str")]
    #[schemars(extend("x-empty-is-a-value" = true))]
    #[schemars(description = "")]
    pub old_string: Option<String>,
    /// The text to put in its place (an empty string deletes `old_string`).
    #[arg(
        long = "new",
        visible_alias = "new-string",
        value_name = "TEXT",
        allow_hyphen_values = true
    )]
    #[serde(default, alias = "new_str")]
    #[schemars(extend("x-empty-is-a-value" = true))]
    #[schemars(description = "")]
    pub new_string: Option<String>,
    /// Replace every occurrence of `old_string` instead of requiring exactly one.
    #[arg(long = "all", visible_alias = "replace-all")]
    #[serde(default)]
    #[schemars(description = "")]
    pub replace_all: bool,
    /// Several replacements, applied in order (each to the result of the ones before); all succeed or none is made.
    #[arg(skip)]
    #[serde(default)]
    #[schemars(description = "")]
    pub edits: Vec<StringEdit>,
    /// Line-range edits, numbered as the file was read (`read` shows the numbers): each replaces lines `start_line..=end_line` with `replacement`. They may not overlap, and are applied before `edits`.
    #[arg(skip)]
    #[serde(default)]
    #[schemars(description = "end_line = start_line - 1 inserts.")]
    pub line_edits: Vec<LineEdit>,
    /// A code sketch: the new code of the changed part, with unchanged code left out behind marker lines such as `// ... existing code ...` (in the file's comment syntax: `# ...`, `<!-- ... -->`, `/* ... */`, ...). Begin and end each changed stretch with unchanged lines copied from the file, so it can be placed. A stretch with an unchanged line only before it is inserted right after that line, unless its lines are indented under that line and the marker after them is not: then they replace the rest of that block's body, if their last line looks like a changed version of the body's last line (else refused). Without markers it must be the whole file. Use it instead of old_string/new_string.
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    #[serde(default)]
    #[schemars(description = "")]
    pub code_edit: Option<String>,
    /// With code_edit: one sentence saying what it changes (used if a planner model has to place it).
    #[arg(long, value_name = "TEXT", requires = "code_edit")]
    #[serde(default)]
    #[schemars(description = "For code_edit: what it changes.")]
    pub instructions: Option<String>,
    /// The `hash` from the read (or the last write or edit) of this file. When given, the edit is refused if the file has changed since.
    #[arg(long, value_name = "HASH")]
    #[serde(default)]
    #[schemars(
        description = "The hash read reported (details.hash): refuse if the file changed since."
    )]
    pub expected_hash: Option<String>,
    /// A model (`provider/model`) that places a code_edit its unchanged lines cannot place, as line edits; also AG_EDIT_PLANNER. Without one, such a code_edit is refused. It is asked through ag-llm (beside ag-edit, else on PATH), which reads the provider's key from the environment; under ag-loop, which gives tools no provider key, pass it with `ag-loop --pass-env NAME`.
    #[arg(long, value_name = "MODEL")]
    #[serde(default)]
    #[schemars(skip)]
    pub planner: Option<String>,
    /// The planner's base URL instead of its provider's (`http://127.0.0.1:11434/v1`); also AG_EDIT_PLANNER_BASE_URL.
    #[arg(long, value_name = "URL")]
    #[serde(default)]
    #[schemars(skip)]
    pub planner_base_url: Option<String>,
    /// Command line only: `edits` as a JSON array.
    #[arg(long = "edits", value_name = "JSON")]
    #[serde(skip)]
    #[schemars(skip)]
    pub edits_json: Option<String>,
    /// Command line only: `line_edits` as a JSON array.
    #[arg(long = "line-edits", value_name = "JSON")]
    #[serde(skip)]
    #[schemars(skip)]
    pub line_edits_json: Option<String>,
    /// Command line only: replace lines START:END (or one line N, or insert before START with START:START-1) with the text of --new.
    #[arg(long, value_name = "START:END", conflicts_with = "old_string")]
    #[serde(skip)]
    #[schemars(skip)]
    pub lines: Option<String>,
}

/// One replacement of a batch.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StringEdit {
    /// The exact text to replace.
    #[serde(alias = "old_str")]
    #[schemars(description = "")]
    pub old_string: String,
    /// The text to put in its place.
    #[serde(alias = "new_str")]
    #[schemars(description = "")]
    pub new_string: String,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    #[schemars(description = "")]
    pub replace_all: bool,
}

/// The `edit` tool.
pub struct EditTool;

impl Tool for EditTool {
    type Args = EditArgs;
    const NAME: &'static str = "edit";
    const BIN: &'static str = "ag-edit";
    const ABOUT: &'static str =
        "Change a file in place: exact replacements, batches, line ranges, code sketches";
    const LABEL: &'static str = "Edit File";
    const DESCRIPTION: &'static str = "Change part of a file. Replace `old_string` with `new_string`: old_string must be \
copied exactly from the file (without read's line-number prefix) and occur exactly once, unless `replace_all` is set. \
For several changes to one file use `edits` (applied in order, all or nothing). `line_edits` replace line ranges \
(numbers as read shows them; end_line = start_line - 1 inserts before start_line). If old_string is not found, \
the error shows the closest text in the file, and when old_string is a letter or two off one place in it \
(a misspelt word), the file's own spelling to use. Differences models often make (line endings, whitespace, Unicode \
look-alikes such as typographic quotes and dashes, double-encoded escapes, a file's `\\n` or `\\t` escapes sent as a line break or tab, blank lines at the ends, a `...` line \
for unchanged lines) are tolerated when the match is still unique, and `details.tolerant_matches` says which. Or give `code_edit`: the new code with unchanged parts left out behind \
`// ... existing code ...` lines (any comment syntax); each changed stretch must begin and end with unchanged \
lines from the file, which place it. The file's line endings, BOM and permissions are kept. \
To create a file or replace all of it, use write.";
    const MODEL_DESCRIPTION: &'static str = "Replace old_string (copied exactly as read shows it, without line numbers; unique unless replace_all) with new_string in a file. Several at once: edits. By line numbers: line_edits. Or code_edit: the new code, unchanged parts left out as `// ... existing code ...`.";
    const PROCESS_FLAGS: &'static [&'static str] = &["planner", "planner_base_url"];

    fn run(ctx: &Context, mut args: EditArgs) -> Result<ToolOutput, ToolError> {
        let meant = crate::tools::fileops::take_path_meant(ctx, &mut args.file_path);
        let watch = crate::tools::after_change::Watch::file(ctx, &args.file_path);
        // A rename: the other files that still use the old name, once the
        // edit is made or found made already.
        let renamed = rename::renamed(&args);
        let file = args.file_path.clone();
        let uses = || {
            let (old, new) = renamed.as_ref()?;
            rename::still_used(ctx, &ctx.resolve(&file).ok()?, old, new)
        };
        let out = edit(ctx, args).map_err(|mut e| {
            if e.code == "edit.already_applied"
                && let Some(note) = uses()
            {
                e.message = format!("{}\n\n{}", e.message, note.text);
            }
            watch.refused(ctx, e)
        })?;
        Ok(watch.finish(ctx, out).with_notes(meant).with_notes(uses()))
    }
}

/// What the caller asked for, gathered from the single-edit fields, the
/// batch and the command-line forms.
#[derive(Debug)]
struct Plan {
    replacements: Vec<StringEdit>,
    line_edits: Vec<LineEdit>,
    /// A code sketch, to be turned into `line_edits` once the file is read.
    sketch: Option<String>,
}

fn plan(args: &mut EditArgs) -> Result<Plan, ToolError> {
    let bad = |msg: String| ToolError::new("edit.invalid_arguments", msg);
    let mut replacements = Vec::new();
    let mut line_edits = std::mem::take(&mut args.line_edits);
    if let Some(json) = &args.edits_json {
        let more: Vec<StringEdit> = serde_json::from_str(json).map_err(|e| {
            bad(format!(
                "--edits is not a JSON array of {{\"old_string\", \"new_string\", \"replace_all\"?}} objects: {e}"
            ))
        })?;
        args.edits.extend(more);
    }
    if let Some(json) = &args.line_edits_json {
        let more: Vec<LineEdit> = serde_json::from_str(json).map_err(|e| {
            bad(format!(
                "--line-edits is not a JSON array of {{\"start_line\", \"end_line\", \"replacement\"}} objects: {e}"
            ))
        })?;
        line_edits.extend(more);
    }
    if let Some(spec) = &args.lines {
        let replacement = args.new_string.take().ok_or_else(|| {
            bad(
                "--lines needs --new with the new text of those lines (--new '' deletes them)"
                    .into(),
            )
        })?;
        let (start_line, end_line) = parse_lines(spec).ok_or_else(|| {
            bad(format!(
                "--lines takes START:END (1-indexed, inclusive), N for one line, or START:START-1 to insert; got `{spec}`"
            ))
        })?;
        line_edits.push(LineEdit {
            start_line,
            end_line,
            replacement,
        });
    }
    let had_pair = args.old_string.is_some();
    let had_edits = !args.edits.is_empty();
    match (args.old_string.take(), args.new_string.take()) {
        (Some(old_string), Some(new_string)) => replacements.push(StringEdit {
            old_string,
            new_string,
            replace_all: args.replace_all,
        }),
        (Some(_), None) => {
            return Err(bad(
                "old_string is given without new_string; give the replacement text (an empty string deletes old_string).".into(),
            ));
        }
        (None, Some(_)) => {
            return Err(bad(
                "new_string is given without old_string; give the exact text to replace (to create a file use write).".into(),
            ));
        }
        (None, None) => {}
    }
    replacements.append(&mut args.edits);
    let sketch = args.code_edit.take();
    if sketch.is_some() && !(replacements.is_empty() && line_edits.is_empty()) {
        let mut others = Vec::new();
        if had_pair {
            others.push("`old_string`/`new_string`");
        }
        if had_edits {
            others.push("`edits`");
        }
        if !line_edits.is_empty() {
            others.push("`line_edits`");
        }
        return Err(bad(format!(
            "`code_edit` cannot be combined with {}, which this call gave too. Call again with one form: the same call without {}, or without `code_edit`.",
            others.join(" and "),
            others.join(" and ")
        )));
    }
    if replacements.is_empty() && line_edits.is_empty() && sketch.is_none() {
        return Err(bad(format!(
            "nothing to do: this call gave no change. Beside `file_path` \"{}\", give `old_string` (text copied from the file) and `new_string` (what replaces it); or `edits`, `line_edits` or `code_edit`.",
            args.file_path
        )));
    }
    Ok(Plan {
        replacements,
        line_edits,
        sketch,
    })
}

fn parse_lines(spec: &str) -> Option<(u64, u64)> {
    match spec.split_once(':') {
        Some((a, b)) => Some((a.trim().parse().ok()?, b.trim().parse().ok()?)),
        None => {
            let n = spec.trim().parse().ok()?;
            Some((n, n))
        }
    }
}

/// Where an edit reads the file's text and writes the new text: the disk
/// ([`Disk`]), or an editor's buffer (ag-acp's `--editor-fs`). Everything
/// else (the matching, the all-or-nothing batch, the stale check, the
/// diff) is the same for both.
pub trait FileIo {
    /// The file's bytes, with its metadata when it is read from disk.
    fn load(
        &self,
        ctx: &Context,
        target: &Target,
    ) -> Result<(Option<Metadata>, Vec<u8>), ToolError>;
    /// Writes `new` in place of `original`, unless the file no longer holds
    /// `original`: then whoever changed it meanwhile keeps their version.
    fn commit(
        &self,
        ctx: &Context,
        target: &Target,
        meta: Option<&Metadata>,
        original: &[u8],
        new: &[u8],
    ) -> Result<(), ToolError>;
}

/// The file on disk, written atomically.
pub struct Disk;

impl FileIo for Disk {
    fn load(
        &self,
        ctx: &Context,
        target: &Target,
    ) -> Result<(Option<Metadata>, Vec<u8>), ToolError> {
        load(ctx, target).map(|(m, c)| (Some(m), c))
    }

    fn commit(
        &self,
        ctx: &Context,
        target: &Target,
        meta: Option<&Metadata>,
        original: &[u8],
        new: &[u8],
    ) -> Result<(), ToolError> {
        commit(ctx, target, meta, original, new)
    }
}

fn edit(ctx: &Context, args: EditArgs) -> Result<ToolOutput, ToolError> {
    edit_with(ctx, args, &Disk)
}

/// An edit, with the file read and written through `io`.
pub fn edit_with(
    ctx: &Context,
    mut args: EditArgs,
    io: &dyn FileIo,
) -> Result<ToolOutput, ToolError> {
    let mut plan = plan(&mut args)?;
    let target = resolve_target(ctx, &args.file_path, "edit")?;
    let shown = target.shown.clone();
    let (meta, original) = io.load(ctx, &target)?;
    if let Some(expected) = args.expected_hash.as_deref() {
        check_hash(
            "edit.stale",
            &shown,
            Some(expected),
            Some(&content_hash(&original)),
        )?;
    }
    let sketched = match &plan.sketch {
        Some(code) => {
            let planner = planner::Planner::configured(
                args.planner.as_deref(),
                args.planner_base_url.as_deref(),
            );
            let s = code_edit::resolve(
                &shown,
                &original,
                code,
                args.instructions.as_deref(),
                planner.as_ref(),
            )?;
            if s.edits.is_empty() {
                return Err(ToolError::new(
                    "edit.no_change",
                    format!(
                        "code_edit matches `{shown}` as it is: it changes nothing, so nothing was written."
                    ),
                ));
            }
            plan.line_edits = s.edits.clone();
            Some(s)
        }
        None => None,
    };
    let outcome = apply(&original, &plan)
        .map_err(|e| with_name_as_text(e, &plan, &args.file_path, &shown))?;
    if outcome.content == original {
        return Err(ToolError::new(
            "edit.no_change",
            format!("these edits leave `{shown}` exactly as it was, so nothing was written."),
        ));
    }
    io.commit(ctx, &target, meta.as_ref(), &original, &outcome.content)?;
    let out = report(ctx, &target, &plan, &original, &outcome, sketched.as_ref());
    Ok(out.with_notes(hard_link_note(meta.as_ref())))
}

/// A failed match whose old_string is the file's own name
/// (`scripts/build.sh`), not text in it, says so on its first line: a weak
/// model, asked to change a script, sent its path as old_string four
/// times, each told only that it was not found.
fn with_name_as_text(mut e: ToolError, plan: &Plan, file_path: &str, shown: &str) -> ToolError {
    if e.code != "edit.not_found" {
        return e;
    }
    let file_name = std::path::Path::new(shown)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let names = [file_path, shown, file_name.as_str()];
    let named = plan.replacements.iter().find_map(|r| {
        let old = r.old_string.trim();
        let bare = old.strip_prefix("./").unwrap_or(old);
        names
            .iter()
            .any(|n| !n.is_empty() && (*n == old || n.strip_prefix("./").unwrap_or(n) == bare))
            .then_some(old)
    });
    if let Some(old) = named {
        let said = format!(
            " `{old}` is the name of the file, not text in it: old_string must be text the file holds, copied from what read shows of it."
        );
        let at = e.message.find('\n').unwrap_or(e.message.len());
        e.message.insert_str(at, &said);
    }
    e
}

/// Replaces the file with `new`, unless it no longer holds `original`:
/// then whoever changed it meanwhile keeps their version.
fn commit(
    ctx: &Context,
    target: &Target,
    meta: Option<&Metadata>,
    original: &[u8],
    new: &[u8],
) -> Result<(), ToolError> {
    let real = &target.real;
    ctx.write_atomic(real, meta, new, || ctx.has_content(real, original))
        .map_err(|e| write_failed("edit.changed_on_disk", "edit.io", &target.shown, e))
}

/// What to do about a file that is not there. A name like a constant or a
/// function (`src/TIMEOUT_SECONDS`, `parseArgs`) is what the model meant to
/// change inside some file: a small model told "use write" wrote a new file
/// under that name, over and over. It is pointed at grep for the name.
fn missing_file_hint(path: &std::path::Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    if looks_like_identifier(&name) {
        // With the tool the model has: grep, else a grep through bash.
        use crate::tools::offer::has_tool;
        let how = if has_tool("grep") {
            format!(" with grep {}", serde_json::json!({ "query": name }))
        } else if has_tool("bash") {
            let command = format!("grep -rn {name} .");
            format!(" with bash {}", serde_json::json!({ "command": command }))
        } else {
            String::new()
        };
        return format!(
            "`{name}` looks like a name in the code, not a file: find the file that defines it{how}, then edit that file."
        );
    }
    "To create a new file, use write.".to_string()
}

/// A word of letters, digits and `_`, with an `_` or a capital after a
/// small letter (`MAX_SIZE`, `parse_args`, `parseArgs`); file names without
/// an extension such as `Makefile` or `LICENSE` are not.
fn looks_like_identifier(name: &str) -> bool {
    let word = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    let camel = name
        .as_bytes()
        .windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    word && (name.trim_matches('_').contains('_') || camel)
}

/// Reads the file to edit, after the checks that need no content.
pub fn load(ctx: &Context, target: &Target) -> Result<(Metadata, Vec<u8>), ToolError> {
    let shown = &target.shown;
    let meta = match ctx.metadata(&target.real) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(not_found(
                "edit.not_found",
                target,
                ctx,
                &missing_file_hint(&target.path),
            ));
        }
        Err(e) => return Err(io_failed("edit.io", "open", shown, e)),
    };
    if meta.is_dir() {
        return Err(ToolError::new(
            "edit.is_directory",
            format!(
                "`{shown}` is a directory; edit changes files. List it with ls to find the file."
            ),
        ));
    }
    if !meta.is_file() {
        return Err(ToolError::new(
            "edit.not_a_file",
            format!(
                "`{shown}` is not a regular file (a device, socket or pipe); edit only changes regular files."
            ),
        ));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(ToolError::new(
            "edit.too_large",
            format!(
                "`{shown}` is {} MiB, more than the {} MiB edit loads; change it with a streaming tool through bash (sed -i, for example).",
                meta.len() / 1024 / 1024,
                MAX_FILE_BYTES / 1024 / 1024
            ),
        ));
    }
    check_writable("edit.read_only", &target.real, shown)?;
    let content = ctx
        .read(&target.real)
        .map_err(|e| io_failed("edit.io", "read", shown, e))?;
    if looks_binary(&content[..content.len().min(BINARY_PROBE)]) {
        return Err(ToolError::new(
            "edit.binary",
            format!(
                "`{shown}` is a binary file; edit changes text. Replace it whole with write, or use bash with a tool made for its format."
            ),
        ));
    }
    Ok((meta, content))
}

/// The result of applying every edit in memory.
struct Outcome {
    content: Vec<u8>,
    /// Occurrences replaced, over all string edits.
    matches: usize,
    /// (edit number, step) for each step of the matching ladder an edit
    /// took to be matched tolerantly.
    tolerances: Vec<(usize, Step)>,
    /// (edit number, lines) for the occurrences a `replace_all` left as
    /// they were, since the change was made there already.
    kept: Vec<(usize, Vec<u64>)>,
}

fn apply(original: &[u8], plan: &Plan) -> Result<Outcome, ToolError> {
    let total = plan.replacements.len() + plan.line_edits.len();
    let batch = total > 1;
    let all_or_nothing = if batch {
        " Nothing was changed: the edits of a call are applied all or nothing."
    } else {
        ""
    };
    let mut content: Option<Vec<u8>> = None;
    if !plan.line_edits.is_empty() {
        let out = lines::apply(original, &plan.line_edits).map_err(|msg| {
            ToolError::new("edit.bad_line_range", format!("{msg}{all_or_nothing}"))
        })?;
        content = Some(out);
    }
    let mut matches = 0;
    let mut tolerances = Vec::new();
    let mut kept = Vec::new();
    let n = plan.replacements.len();
    for (i, r) in plan.replacements.iter().enumerate() {
        let current = content.as_deref().unwrap_or(original);
        let which = if n > 1 {
            format!("edit {} of {n}: ", i + 1)
        } else {
            String::new()
        };
        let unmarked = text::unmarked(current, &r.old_string, &r.new_string);
        let (old, new) = match &unmarked {
            Some((old, new)) => (old.as_str(), new.as_str()),
            None => (r.old_string.as_str(), r.new_string.as_str()),
        };
        let rep = Replacement {
            old,
            new,
            all: r.replace_all,
        };
        match replace::replace(current, rep) {
            Ok(done) => {
                matches += done.count;
                if unmarked.is_some() {
                    tolerances.push((i + 1, Step::Markers));
                }
                tolerances.extend(done.tolerance.iter().map(|&t| (i + 1, t)));
                if !done.kept.is_empty() {
                    kept.push((i + 1, done.kept));
                }
                content = Some(done.content);
            }
            Err(miss) => {
                let earlier = !plan.line_edits.is_empty() || i > 0;
                // The hint speaks of the text as it was looked for.
                let looked_for = unmarked.map(|(old_string, new_string)| StringEdit {
                    old_string,
                    new_string,
                    replace_all: r.replace_all,
                });
                return Err(miss_error(
                    miss,
                    current,
                    looked_for.as_ref().unwrap_or(r),
                    &which,
                    earlier,
                    all_or_nothing,
                ));
            }
        }
    }
    Ok(Outcome {
        content: content.unwrap_or_else(|| original.to_vec()),
        matches,
        tolerances,
        kept,
    })
}

/// ", or use `edit_lines` to insert", naming the way the caller has.
fn or_insert_by_line() -> String {
    crate::tools::offer::way_text("edit_lines", "line_edits")
        .map(|w| format!(", or use {w} to insert"))
        .unwrap_or_default()
}

fn miss_error(
    miss: Miss,
    current: &[u8],
    r: &StringEdit,
    which: &str,
    earlier: bool,
    all_or_nothing: &str,
) -> ToolError {
    let seen = if earlier {
        " (as it is after the edits before this one)"
    } else {
        ""
    };
    match miss {
        // A model that meant to add lines sends the anchor alone on both
        // sides, and sent it again after a bare "nothing to change" (in 5
        // of 5 samples, against 1 of 5 told how to add; docs/models.md).
        Miss::Unchanged => {
            let both = if r.old_string.contains('\n') || r.old_string.chars().count() > 60 {
                String::new()
            } else {
                format!(" (both `{}`)", r.old_string)
            };
            ToolError::new(
                "edit.no_change",
                format!(
                    "{which}old_string and new_string are the same{both}, so this edit changes nothing. To add new lines, put in old_string a line of the file they go after, copied exactly, and in new_string that same line followed by the new lines{}.{all_or_nothing}",
                    or_insert_by_line(),
                ),
            )
        }
        Miss::EmptyOld => ToolError::new(
            "edit.empty_old_string",
            format!(
                "{which}old_string is empty. Give the exact text to replace; to add text, include a neighbouring line in old_string and in new_string{}. To replace the whole file, use write.{all_or_nothing}{}",
                or_insert_by_line(),
                append_hint(current, r)
                    .map(|h| format!("\n{h}"))
                    .unwrap_or_default()
            ),
        ),
        Miss::Ambiguous {
            count,
            lines,
            tolerance,
        } => {
            let how = if tolerance.is_empty() {
                String::new()
            } else {
                let steps: Vec<&str> = tolerance.iter().map(|t| t.describe()).collect();
                format!(" (found only after {}: no exact match)", steps.join("; "))
            };
            let hint = ambiguous_hint(current, r, count, &lines, tolerance.is_empty());
            ToolError::new(
                "edit.ambiguous",
                format!(
                    "{which}old_string occurs {count} times in the file{seen}{how}, {}. Include more surrounding lines in old_string so that it matches exactly one place, or set replace_all to change every occurrence.{all_or_nothing}{hint}",
                    crate::tools::matching::ladder::places(count, &lines)
                ),
            )
            .with_details(json!({"match_count": count, "lines": lines}))
        }
        Miss::BadElision(why) => ToolError::new(
            "edit.bad_elision",
            format!("{which}{why}{all_or_nothing}"),
        ),
        Miss::AlreadyApplied { line } => ToolError::new(
            "edit.already_applied",
            format!(
                "{which}old_string is not in the file{seen}, but new_string already is, at line {line}: this edit looks already applied, so nothing was changed. If it is not, read the file again and copy old_string exactly.{all_or_nothing}"
            ),
        )
        .with_details(json!({"line": line})),
        Miss::MadeAlready { line } => ToolError::new(
            "edit.already_applied",
            format!(
                "{which}old_string is in the file{seen} only as part of new_string, at line {line}: this edit looks already made, and making it again would add its new text a second time, so nothing was changed. If the text there needs another change, read it and send old_string as it is now.{all_or_nothing}"
            ),
        )
        .with_details(json!({"line": line})),
        Miss::NotFound => {
            let mut all_note = if r.replace_all {
                " With replace_all, old_string must match exactly (no tolerant matching).".to_string()
            } else {
                String::new()
            };
            if has_line_numbers(&r.old_string) {
                all_note.push_str(
                    " old_string seems to start its lines with the line numbers that read shows (like `    12\t`); those are not in the file, so leave them out.",
                );
            }
            ToolError::new(
                "edit.not_found",
                format!(
                    "{which}old_string was not found in the file{seen}.{all_note}{all_or_nothing}\n{}\n{}",
                    closest::explain(current, &r.old_string).trim_end(),
                    near_miss_hint(current, r)
                ),
            )
        }
    }
}

/// For an edit with an empty old_string (a small model's way of adding
/// a line: `*.log` to a .gitignore), the call that adds new_string after
/// the file's last line: the fewest last lines that occur once in the
/// file as old_string, and the same followed by new_string as new_string.
fn append_hint(current: &[u8], r: &StringEdit) -> Option<String> {
    let text = std::str::from_utf8(current).ok()?;
    let added = r.new_string.trim_end_matches('\n');
    if added.is_empty() || added.len() > 400 {
        return None;
    }
    let lines: Vec<&str> = text.trim_end_matches('\n').split('\n').collect();
    (1..=lines.len().min(5)).find_map(|n| {
        let tail = lines[lines.len() - n..].join("\n");
        (!tail.trim().is_empty() && text.matches(tail.as_str()).count() == 1).then(|| {
            let quoted = |s: &str| serde_json::to_string(s).unwrap_or_default();
            format!(
                "hint: to add new_string after the last line of the file, call edit again with old_string {} and new_string {}.",
                quoted(&tail),
                quoted(&format!("{tail}\n{added}"))
            )
        })
    })
}

/// The closing hint of an ambiguous old_string: the caller's call with
/// `replace_all` (when the matches were exact: replace_all takes no
/// tolerance), and the first match's whole line as old_string when that
/// line is once in the file. Empty when neither applies.
fn ambiguous_hint(
    current: &[u8],
    r: &StringEdit,
    count: usize,
    lines: &[u64],
    exact: bool,
) -> String {
    let quoted = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let mut ways = Vec::new();
    if exact && r.old_string.chars().count() <= 200 && r.new_string.chars().count() <= 200 {
        ways.push(format!(
            "to change all {count}, call edit again with old_string {}, new_string {} and replace_all true",
            quoted(&r.old_string),
            quoted(&r.new_string)
        ));
    }
    let text = String::from_utf8_lossy(current);
    let first = lines
        .first()
        .and_then(|n| text.lines().nth((*n as usize).saturating_sub(1)));
    if let Some(line) = first.filter(|l| {
        !l.trim().is_empty()
            && l.chars().count() <= 200
            && text.lines().filter(|o| o == l).count() == 1
    }) {
        ways.push(format!(
            "to change only line {}, give its whole line as old_string: {}",
            lines[0],
            quoted(line)
        ));
    }
    if ways.is_empty() {
        return String::new();
    }
    format!("\nhint: {}.", ways.join("; "))
}

/// The closing hint of a miss: the call with the file's own text when
/// old_string is off by a letter or two from one place in the file (see
/// [`misspelt`]), else to copy old_string from the file.
fn near_miss_hint(current: &[u8], r: &StringEdit) -> String {
    let Some(near) = misspelt::near_miss(current, &r.old_string) else {
        return "hint: copy old_string exactly from the file, without the line-number prefix that read adds, and call edit again.".into();
    };
    let quoted = |s: &str| serde_json::to_string(s).unwrap_or_default();
    if near.text == r.new_string.trim() {
        // The closest text is new_string itself: an edit already made
        // (a model repeating its fix), not a misspelling to copy.
        return format!(
            "hint: line {} already has new_string {}, and nowhere else in the file: this edit looks already applied, so there is nothing to change. Read the file to check, and go on with the task.",
            near.line,
            quoted(&near.text)
        );
    }
    // The file's correction made in new_string too, so that the call the
    // hint names does not put the old slip back (`port: 8080` where the
    // file has `"port": 3000`).
    let carried = misspelt::carry(&r.old_string, &near.text, &r.new_string);
    let new = match &carried {
        Some(c) if c.chars().count() <= 200 => {
            format!("new_string {} (yours, with the same correction)", quoted(c))
        }
        _ if r.new_string.chars().count() <= 200 => {
            format!("new_string {}", quoted(&r.new_string))
        }
        _ => "your new_string".into(),
    };
    let chars = if near.distance == 1 {
        "1 character"
    } else {
        &format!("{} characters", near.distance)
    };
    format!(
        "hint: line {} has {}, {chars} away from old_string and nowhere else in the file. If that is the text to change, call edit again with old_string {} and {new}.",
        near.line,
        quoted(&near.text),
        quoted(&near.text)
    )
}

/// Whether every non-blank line starts like a line of read's output
/// (spaces, a number, a tab): a model that copied them into old_string.
fn has_line_numbers(old: &str) -> bool {
    let mut lines = old.lines().filter(|l| !l.trim().is_empty()).peekable();
    lines.peek().is_some()
        && lines.all(|l| {
            let t = l.trim_start_matches(' ');
            let digits = t.bytes().take_while(u8::is_ascii_digit).count();
            digits > 0 && t.as_bytes().get(digits) == Some(&b'\t')
        })
}

fn report(
    ctx: &Context,
    target: &Target,
    plan: &Plan,
    original: &[u8],
    outcome: &Outcome,
    sketched: Option<&code_edit::Sketched>,
) -> ToolOutput {
    let shown = &target.shown;
    let change = diff::diff(shown, original, &outcome.content);
    let changed = format!("{} line{} changed", change.changed, plural(change.changed));
    let r = plan.replacements.len();
    let l = plan.line_edits.len();
    let mut output = match (r, l) {
        _ if sketched.is_some() => format!(
            "Applied the code sketch to {shown} ({changed}): {}",
            sketched.map(|s| s.summary.as_str()).unwrap_or_default()
        ),
        (1, 0) => format!(
            "Replaced {} occurrence{} in {shown} ({changed})",
            outcome.matches,
            plural(outcome.matches as u64)
        ),
        (0, 1) => format!(
            "Replaced {} in {shown} ({changed})",
            plan.line_edits[0].describe()
        )
        .replace("Replaced before", "Inserted before"),
        _ => {
            let mut parts = Vec::new();
            if l > 0 {
                parts.push(format!("{l} line edit{}", plural(l as u64)));
            }
            if r > 0 {
                parts.push(format!(
                    "{r} replacement edit{} ({} occurrence{})",
                    plural(r as u64),
                    outcome.matches,
                    plural(outcome.matches as u64)
                ));
            }
            format!("Applied {} to {shown} ({changed})", parts.join(" and "))
        }
    };
    if let Some(real) = target.link_note(ctx) {
        output.push_str(&format!(", through the symlink to {real}"));
    }
    let mut notes = Vec::new();
    for (i, t) in &outcome.tolerances {
        let which = if r > 1 {
            format!("edit {i}")
        } else {
            "old_string".to_string()
        };
        notes.push(Note::notice(format!(
            "{which} did not match exactly; {}. Check the diff in details.",
            t.describe()
        )));
    }
    for (i, lines) in &outcome.kept {
        let which = if r > 1 {
            format!("edit {i}'s old_string")
        } else {
            "old_string".to_string()
        };
        let listed: Vec<String> = lines.iter().map(u64::to_string).collect();
        let listed = listed.join(", ");
        let why = "new_string's text was there already, so the change had been made there before";
        notes.push(Note::notice(if lines.len() == 1 {
            format!("1 place of {which} was left as it was (line {listed}): {why}.")
        } else {
            format!(
                "{} places of {which} were left as they were (lines {listed}): {why}.",
                lines.len()
            )
        }));
    }
    let mut details = json!({
        "file_path": shown,
        "match_count": outcome.matches,
        "lines_changed": change.changed,
        "lines_added": change.added,
        "lines_removed": change.removed,
        "diff": change.diff,
        "hash": content_hash(&outcome.content),
        "total_lines": text::count_lines(&outcome.content),
    });
    if change.truncated {
        details["diff_truncated"] = Value::Bool(true);
    }
    if !outcome.kept.is_empty() {
        details["kept_as_made"] = outcome
            .kept
            .iter()
            .map(|(i, lines)| json!({"edit": i, "lines": lines}))
            .collect();
    }
    if !outcome.tolerances.is_empty() {
        details["tolerant_matches"] = Value::Array(
            outcome
                .tolerances
                .iter()
                .map(|(i, t)| json!({"edit": i, "kind": t.name()}))
                .collect(),
        );
    }
    if let Some(real) = target.link_note(ctx) {
        details["symlink_target"] = json!(real);
    }
    if let Some(s) = sketched {
        notes.extend(s.notes.iter().cloned());
        details["sketch"] = s.details.clone();
        if !s.tolerant.is_empty() {
            let mut all = details["tolerant_matches"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            all.extend(s.tolerant.iter().cloned());
            details["tolerant_matches"] = Value::Array(all);
        }
    }
    ToolOutput::new(output, details).with_notes(notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: EditArgs,
    }

    #[test]
    fn a_missing_file_named_like_a_constant_is_pointed_at_grep() {
        for name in ["src/TIMEOUT_SECONDS", "parse_args", "lib/parseArgs"] {
            let hint = missing_file_hint(std::path::Path::new(name));
            assert!(hint.contains("grep {\"query\":"), "{name}: {hint}");
            assert!(!hint.contains("write"), "{name}: {hint}");
        }
        for name in [
            "Makefile",
            "LICENSE",
            "src/new.rs",
            "notes.md",
            "_private",
            "a-b",
        ] {
            let hint = missing_file_hint(std::path::Path::new(name));
            assert_eq!(hint, "To create a new file, use write.", "{name}");
        }
    }

    #[test]
    fn an_old_string_that_is_the_files_name_is_said_to_be_one() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Context {
            cwd: dir.path().to_path_buf(),
            root: None,
        };
        std::fs::create_dir(dir.path().join("scripts")).unwrap();
        std::fs::write(dir.path().join("scripts/build.sh"), "mkdir -p public\n").unwrap();
        for old in ["scripts/build.sh", "./scripts/build.sh", "build.sh"] {
            let args = EditArgs {
                file_path: "scripts/build.sh".into(),
                old_string: Some(old.into()),
                new_string: Some("bash ./scripts/build.sh".into()),
                ..EditArgs::default()
            };
            let err = edit_with(&ctx, args, &Disk).unwrap_err();
            assert_eq!(err.code, "edit.not_found");
            let first = err.message.lines().next().unwrap();
            assert!(
                first.contains(&format!("`{old}` is the name of the file, not text in it")),
                "{}",
                err.message
            );
        }
        // Text that is not the file's name is told only that it is not
        // there.
        let args = EditArgs {
            file_path: "scripts/build.sh".into(),
            old_string: Some("rm -rf public".into()),
            new_string: Some("x".into()),
            ..EditArgs::default()
        };
        let err = edit_with(&ctx, args, &Disk).unwrap_err();
        assert!(!err.message.contains("name of the file"), "{}", err.message);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("scripts/build.sh")).unwrap(),
            "mkdir -p public\n"
        );
    }

    #[test]
    fn command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn command_line_forms_become_a_plan() {
        let mut cli = Cli::parse_from(["ag-edit", "f", "--lines", "3:4", "--new", "x"]);
        let p = plan(&mut cli.args).unwrap();
        assert_eq!(p.line_edits[0].start_line, 3);
        assert_eq!(p.line_edits[0].end_line, 4);
        assert!(p.replacements.is_empty());
        let mut cli = Cli::parse_from([
            "ag-edit",
            "f",
            "--old",
            "-a",
            "--new",
            "b",
            "--edits",
            r#"[{"old_string":"c","new_string":"d"}]"#,
        ]);
        let p = plan(&mut cli.args).unwrap();
        assert_eq!(p.replacements.len(), 2);
        assert_eq!(p.replacements[0].old_string, "-a");
        let mut empty = EditArgs::default();
        assert_eq!(plan(&mut empty).unwrap_err().code, "edit.invalid_arguments");
    }

    #[test]
    fn a_file_changed_after_reading_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Context {
            cwd: dir.path().to_path_buf(),
            root: None,
        };
        std::fs::write(dir.path().join("f.txt"), "v1\n").unwrap();
        let target = resolve_target(&ctx, "f.txt", "edit").unwrap();
        let (meta, original) = load(&ctx, &target).unwrap();
        // Someone else saves the file between our read and our write.
        std::fs::write(dir.path().join("f.txt"), "theirs\n").unwrap();
        let err = commit(&ctx, &target, Some(&meta), &original, b"ours\n").unwrap_err();
        assert_eq!(err.code, "edit.changed_on_disk");
        assert!(
            err.message.contains("their version was kept"),
            "{}",
            err.message
        );
        assert_eq!(
            std::fs::read(dir.path().join("f.txt")).unwrap(),
            b"theirs\n"
        );
        // Unchanged, the same commit goes through.
        let (meta, original) = load(&ctx, &target).unwrap();
        commit(&ctx, &target, Some(&meta), &original, b"ours\n").unwrap();
        assert_eq!(std::fs::read(dir.path().join("f.txt")).unwrap(), b"ours\n");
    }

    #[test]
    fn copied_line_numbers_are_noticed() {
        assert!(has_line_numbers("     1\tfn main() {\n     2\t}"));
        assert!(!has_line_numbers("fn main() {\n}"));
        assert!(!has_line_numbers("12 apples\n"));
    }

    #[test]
    fn json_fields_for_the_command_line_only_are_refused() {
        let r: Result<EditArgs, _> =
            serde_json::from_value(json!({"file_path": "f", "lines": "1:2"}));
        assert!(r.is_err());
        let a: EditArgs =
            serde_json::from_value(json!({"file_path": "f", "old_str": "a", "new_str": "b"}))
                .unwrap();
        assert_eq!(a.old_string.as_deref(), Some("a"));
    }
}
