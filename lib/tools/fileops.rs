//! What the file-changing tools (write, edit, delete) share: finding the
//! file a path names (through symlinks, inside `--root`), the checks made
//! before changing it (read-only, `expected_hash`), and the messages for
//! the model when something is wrong.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::fsutil::{WriteError, resolve_symlinks, similar_names};
use crate::tool_protocol::{Context, Note, PathProblem, ToolError, display_path};

/// A path from a call, resolved.
#[derive(Debug, Clone)]
pub struct Target {
    /// The path as given, made absolute.
    pub path: PathBuf,
    /// The file that is really read and written: `path` with a chain of
    /// symlinks followed (the same as `path` when it is no link).
    pub real: PathBuf,
    /// `path` as the model should see it.
    pub shown: String,
}

impl Target {
    /// Whether the path is a symlink that writes go through.
    pub fn via_link(&self) -> bool {
        self.real != self.path
    }

    /// Where the link leads, for messages (`None` when it is no link).
    pub fn link_note(&self, ctx: &Context) -> Option<String> {
        self.via_link().then(|| ctx.show(&self.real))
    }
}

/// Resolves `file_path` for a tool that writes: symlinks followed to the
/// file they name, which must lie inside the root too.
pub fn resolve_target(ctx: &Context, file_path: &str, tool: &str) -> Result<Target, ToolError> {
    let path = ctx.resolve(file_path)?;
    let shown = ctx.show(&path);
    let real = resolve_symlinks(&path).map_err(|e| {
        ToolError::new(
            "path.bad_symlink",
            format!("cannot follow the symlink `{shown}`: {e}. Give the path of the file itself to {tool}."),
        )
    })?;
    ctx.confine(file_path, &real)?;
    Ok(Target { path, real, shown })
}

/// The error for an I/O failure on `shown`: a path that led outside the
/// root (a symlink swapped mid-call) or a FIFO, socket or device says so;
/// anything else is `io_code` with "cannot <verb> `<shown>`".
pub fn io_failed(io_code: &'static str, verb: &str, shown: &str, err: io::Error) -> ToolError {
    match PathProblem::of(&err) {
        Some(PathProblem::Outside(msg)) => ToolError::new(
            "path.outside_root",
            format!("{msg}; nothing was changed. Use a path inside it."),
        ),
        Some(PathProblem::NotAFile(msg)) => ToolError::new(
            "path.not_a_file",
            format!("{msg}; only regular files are read and changed."),
        ),
        None => ToolError::new(io_code, format!("cannot {verb} `{shown}`: {err}")),
    }
}

/// The error for a file that does not exist, with near names from its
/// directory, else the files of the same name elsewhere in the workspace.
/// `hint` (how to create a file, say) is left out when such a file exists:
/// a path whose directories were guessed means that file, not a new one.
pub fn not_found(code: &'static str, target: &Target, ctx: &Context, hint: &str) -> ToolError {
    let near = similar_names(&target.path);
    if near.is_empty() {
        let elsewhere = super::walk::same_name_elsewhere(ctx, &target.path);
        if !elsewhere.is_empty() {
            let shown: Vec<String> = elsewhere
                .iter()
                .map(|p| display_path(&ctx.cwd, p))
                .collect();
            let listed: Vec<String> = shown.iter().map(|s| format!("`{s}`")).collect();
            return ToolError::new(
                code,
                format!(
                    "File not found: `{}`. A file of that name is at {}: use that path.",
                    target.shown,
                    listed.join(" and ")
                ),
            )
            .with_details(json!({"file_path": target.shown, "suggestions": shown}));
        }
    }
    let did_you_mean = if near.is_empty() {
        String::new()
    } else {
        let dir = target
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let names: Vec<String> = near
            .iter()
            .map(|n| format!("`{}`", display_path(&ctx.cwd, &dir.join(n))))
            .collect();
        format!(" Did you mean {}?", names.join(" or "))
    };
    ToolError::new(
        code,
        format!("File not found: `{}`.{did_you_mean} {hint}", target.shown),
    )
    .with_details(json!({"file_path": target.shown, "suggestions": near}))
}

/// Refuses a file that its permissions mark read-only: that is the user
/// saying it should not change, even though a rename could replace it.
pub fn check_writable(code: &'static str, real: &Path, shown: &str) -> Result<(), ToolError> {
    use nix::unistd::{AccessFlags, access};
    use std::os::unix::fs::PermissionsExt;
    let refuse = || {
        Err(ToolError::new(
            code,
            format!(
                "`{shown}` is read-only, so it was not changed. If it should change, make it writable first (bash: chmod u+w {shown})."
            ),
        ))
    };
    // No write bit at all is read-only even for root, who passes access().
    if let Ok(meta) = std::fs::metadata(real)
        && meta.permissions().mode() & 0o222 == 0
    {
        return refuse();
    }
    match access(real, AccessFlags::W_OK) {
        Ok(()) => Ok(()),
        Err(nix::errno::Errno::EACCES | nix::errno::Errno::EROFS) => refuse(),
        // Anything else (a vanished file, say) shows up, better explained,
        // when the file is opened.
        Err(_) => Ok(()),
    }
}

/// Whether `text` is shaped like a hash of [`crate::fsutil::content_hash`].
pub fn is_content_hash(text: &str) -> bool {
    text.strip_prefix("xxh3:")
        .is_some_and(|hex| hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Refuses the call when the file's content is not what the caller saw,
/// and a hash that ag did not make as such.
pub fn check_hash(
    code: &'static str,
    shown: &str,
    expected: Option<&str>,
    actual: Option<&str>,
) -> Result<(), ToolError> {
    let Some(expected) = expected else {
        return Ok(());
    };
    if !is_content_hash(expected) {
        // A value the model made up (`...`, `not provided`, a file name):
        // saying the file changed would send the model to read it again
        // for nothing.
        return Err(ToolError::new(
            "call.invalid_arguments",
            format!(
                "`expected_hash` {} is not a hash that ag made (those look like `xxh3:` and 32 hex digits), so `{shown}` was not changed. Omit `expected_hash`, or pass the hash that read returned (`details.hash`).",
                serde_json::Value::from(expected)
            ),
        )
        .with_details(json!({"file_path": shown, "expected_hash": expected})));
    }
    match actual {
        Some(actual) if actual == expected => Ok(()),
        Some(actual) => Err(ToolError::new(
            code,
            format!(
                "`{shown}` has changed since you read it (its hash is now {actual}, not {expected}), so it was not changed. Read it again and redo the change against what it holds now."
            ),
        )
        .with_details(json!({"file_path": shown, "expected_hash": expected, "hash": actual}))),
        None => Err(ToolError::new(
            code,
            format!(
                "`{shown}` no longer exists, but expected_hash says you read it. Check whether it was moved or deleted (ls, find) before writing it again."
            ),
        )
        .with_details(json!({"file_path": shown, "expected_hash": expected}))),
    }
}

/// The error for an atomic write that failed; the file is unchanged.
/// `changed` and `io` are the tool's codes for the two kinds of failure.
pub fn write_failed(
    changed: &'static str,
    io_code: &'static str,
    shown: &str,
    err: WriteError,
) -> ToolError {
    match err {
        WriteError::Changed => ToolError::new(
            changed,
            format!(
                "`{shown}` was changed by someone else while this call was writing it; their version was kept and this change was not made. Read the file again and redo the change."
            ),
        ),
        WriteError::Io { source, .. } if PathProblem::of(&source).is_some() => {
            io_failed(io_code, "write", shown, source)
        }
        WriteError::Io { .. } => {
            let advice = match err.kind() {
                Some(io::ErrorKind::PermissionDenied) => {
                    " The directory is not writable; nothing was changed."
                }
                Some(io::ErrorKind::StorageFull) => " The disk is full; nothing was changed.",
                _ => " Nothing was changed.",
            };
            ToolError::new(io_code, format!("{err}.{advice}"))
        }
    }
}

/// A note for a file that had other hard links: the atomic rename gave
/// this name a new file, and the other names still show the old content.
pub fn hard_link_note(meta: Option<&std::fs::Metadata>) -> Option<Note> {
    use std::os::unix::fs::MetadataExt;
    let links = meta?.nlink();
    (links > 1).then(|| {
        Note::notice(format!(
            "the file had {} other hard link{}; they still hold the old content (the new version is a new file under this name).",
            links - 1,
            plural(links - 1)
        ))
    })
}

/// Plural suffix.
pub fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The files beside a new file `real` whose names are one slip from its
/// own (see [`crate::fsutil::one_slip_names`]), as the model sees them, and
/// what to tell it: a weak model writes the name it remembers
/// (`styles.css` beside `style.css`), and the file meant is still as it
/// was. `None` when there are none.
pub fn near_names_beside(cwd: &Path, real: &Path) -> Option<(Vec<String>, String)> {
    let dir = real.parent()?;
    let near: Vec<String> = crate::fsutil::one_slip_names(real)
        .iter()
        .map(|n| crate::tool_protocol::display_path(cwd, &dir.join(n)))
        .collect();
    if near.is_empty() {
        return None;
    }
    let listed: Vec<String> = near.iter().map(|f| format!("`{f}`")).collect();
    let (names, are) = if near.len() == 1 {
        ("a near name, is", "that is")
    } else {
        ("near names, are", "one of them is")
    };
    let said = format!(
        "{}, {names} beside it, unchanged. If {are} the file meant, change it instead of making a new one",
        listed.join(" and ")
    );
    Some((near, said))
}

/// Refuses a new file's path that starts with the working directory's own
/// name (`project/dice.js`, run in `project`) when there is no directory of
/// that name inside it and the rest of the path is a file that exists
/// (`dice.js`), naming the path meant: a weak model puts the folder it was
/// told it is in before the path, and writing it would make
/// `project/project/` with a second copy beside the file meant.
pub fn refuse_repeated_working_directory(
    ctx: &Context,
    path: &Path,
    shown: &str,
) -> Result<(), ToolError> {
    let Some(meant) = repeats_working_directory(ctx, path) else {
        return Ok(());
    };
    let meant = display_path(&ctx.cwd, &meant);
    let own = ctx.cwd.file_name().unwrap_or_default().to_string_lossy();
    Err(ToolError::new(
        "write.repeats_working_directory",
        format!(
            "{}: the file is `{meant}`. Nothing was written; call write again with {{\"file_path\": \"{meant}\"}} \
             and the same content. (To make a folder `{own}` inside `{own}`, create it first.)",
            starts_with_own_name(shown, &own)
        ),
    )
    .with_details(json!({"file_path": shown, "suggestions": [meant]})))
}

/// What both [`refuse_repeated_working_directory`] and [`take_path_meant`]
/// say of the path given.
fn starts_with_own_name(given: &str, own: &str) -> String {
    format!(
        "`{given}` starts with `{own}`, the name of the working directory itself, which holds no `{own}`"
    )
}

/// For a tool that reads or changes a file that exists (read, edit):
/// replaces `file_path` by the path the call means when the path it gives
/// starts with the working directory's own name and names nothing (see
/// [`refuse_repeated_working_directory`]), and returns a note that says so
/// for the result. The path given can mean nothing else, and a weak model
/// told "not found" wrote the whole file anew instead of reading it.
pub fn take_path_meant(ctx: &Context, file_path: &mut String) -> Option<Note> {
    let path = ctx.resolve(file_path).ok()?;
    let meant = display_path(&ctx.cwd, &repeats_working_directory(ctx, &path)?);
    let own = ctx.cwd.file_name()?.to_string_lossy().into_owned();
    let note = Note::aside(format!(
        "{}: this is `{meant}`. Give paths from the working directory (`{meant}`).",
        starts_with_own_name(file_path, &own)
    ));
    *file_path = meant;
    Some(note)
}

/// Files of `real`'s name in the folders above its own, up to the top of
/// the workspace (`--root`, else the working directory), nearest first:
/// `README.md` for a new `docs/README.md`. A few lookups, no walk.
pub fn namesakes_above(ctx: &Context, real: &Path) -> Vec<PathBuf> {
    let top = ctx.root.as_deref().unwrap_or(&ctx.cwd);
    let Some(name) = real.file_name() else {
        return Vec::new();
    };
    real.ancestors()
        .skip(2)
        .take_while(|dir| dir.starts_with(top))
        .map(|dir| dir.join(name))
        .filter(|p| ctx.metadata(p).is_ok_and(|m| m.is_file()))
        .collect()
}

fn repeats_working_directory(ctx: &Context, path: &Path) -> Option<PathBuf> {
    let rest = path.strip_prefix(&ctx.cwd).ok()?;
    let mut parts = rest.components();
    let first = parts.next()?;
    let own = ctx.cwd.file_name()?;
    if first.as_os_str() != own || ctx.metadata(&ctx.cwd.join(first)).is_ok() {
        return None;
    }
    let meant = ctx.cwd.join(parts.as_path());
    if meant == ctx.cwd || !ctx.metadata(&meant).is_ok_and(|m| m.is_file()) {
        return None;
    }
    Some(meant)
}
