//! `delete`: remove a file, a symlink (never what it points to), or, when
//! asked with `recursive`, a directory and everything in it; and say what
//! was removed. The working directory, its parents and the root are never
//! removed.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use nix::fcntl::{OFlag, openat, readlinkat};
use nix::sys::stat::Mode;
use nix::unistd::{UnlinkatFlags, unlinkat};

use clap::Args;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::fileops::{Target, check_hash, not_found, plural};
use crate::fsutil::hash_of;
use crate::tool_protocol::{Context, Tool, ToolError, ToolOutput};

/// Arguments of `delete`.
#[derive(Debug, Clone, Args, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteArgs {
    /// Path to the file, symlink or directory to delete, relative to the working directory or absolute. A symlink is removed itself, not what it points to.
    #[arg(value_name = "PATH")]
    #[serde(alias = "file_path", alias = "target_file")]
    #[schemars(description = "")]
    pub path: String,
    /// Delete a directory and everything in it. Without it, directories are refused.
    #[arg(short, long)]
    #[serde(default)]
    #[schemars(description = "")]
    pub recursive: bool,
    /// For a file: the `hash` from your last read of it; the delete is refused if the file has changed since.
    #[arg(long, value_name = "HASH")]
    #[serde(default)]
    #[schemars(
        description = "The hash read reported (details.hash): refuse if the file changed since."
    )]
    pub expected_hash: Option<String>,
}

/// The `delete` tool.
pub struct DeleteTool;

impl Tool for DeleteTool {
    type Args = DeleteArgs;
    const NAME: &'static str = "delete";
    const BIN: &'static str = "ag-delete";
    const ABOUT: &'static str = "Delete a file, a symlink, or a directory with --recursive";
    const LABEL: &'static str = "Delete File";
    const DESCRIPTION: &'static str = "Delete a file. A symlink is removed itself, not the file it points to. \
Directories are refused unless `recursive` is true, which deletes the directory and everything in it. \
The result says what was removed (bytes, or entries of a directory).";
    const MODEL_DESCRIPTION: &'static str = "Delete a file, or with recursive a directory and all it holds. A symlink is removed, not its target.";

    fn run(ctx: &Context, args: DeleteArgs) -> Result<ToolOutput, ToolError> {
        delete(ctx, &args)
    }
}

fn delete(ctx: &Context, args: &DeleteArgs) -> Result<ToolOutput, ToolError> {
    let path = ctx.resolve(&args.path)?;
    let shown = ctx.show(&path);
    refuse_vital(ctx, &path, &shown)?;
    // Everything below works on the name inside its directory, opened
    // once (inside the root): a directory on the way swapped for a symlink
    // meanwhile cannot turn the delete to a file elsewhere.
    let (dir, name, meta) = match ctx.lstat(&path) {
        Ok(found) => found,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let target = Target {
                real: path.clone(),
                path: path.clone(),
                shown: shown.clone(),
            };
            return Err(not_found(
                "delete.not_found",
                &target,
                ctx,
                "Nothing was deleted.",
            ));
        }
        Err(e) => return Err(io_error(&shown, "inspect", e)),
    };
    let name = name.as_os_str();
    let kind = meta.file_type();
    if kind.is_symlink() {
        let points_to = readlinkat(&dir, name)
            .map(|p| Path::new(&p).display().to_string())
            .unwrap_or_default();
        unlinkat(&dir, name, UnlinkatFlags::NoRemoveDir)
            .map_err(|e| io_error(&shown, "delete", e.into()))?;
        return Ok(ToolOutput::new(
            format!("Deleted symlink {shown} (it pointed to {points_to}, which was left alone)"),
            json!({"path": shown, "kind": "symlink", "target": points_to}),
        ));
    }
    if kind.is_dir() {
        return delete_dir(&dir, name, &path, &shown, args.recursive);
    }
    if args.expected_hash.is_some() {
        let actual = if kind.is_file() {
            let file = openat(
                &dir,
                name,
                OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| io_error(&shown, "read", e.into()))?;
            Some(hash_of(File::from(file)).map_err(|e| io_error(&shown, "read", e))?)
        } else {
            None
        };
        check_hash(
            "delete.stale",
            &shown,
            args.expected_hash.as_deref(),
            actual.as_deref(),
        )?;
    }
    unlinkat(&dir, name, UnlinkatFlags::NoRemoveDir)
        .map_err(|e| io_error(&shown, "delete", e.into()))?;
    let bytes = meta.len();
    let (what, word) = if kind.is_file() {
        ("file", "file")
    } else {
        ("other", "special file")
    };
    Ok(ToolOutput::new(
        format!("Deleted {word} {shown} ({bytes} byte{})", plural(bytes)),
        json!({"path": shown, "kind": what, "bytes": bytes}),
    ))
}

fn delete_dir(
    parent: &File,
    name: &OsStr,
    path: &Path,
    shown: &str,
    recursive: bool,
) -> Result<ToolOutput, ToolError> {
    // The directory is reached through the descriptor of its parent: the
    // kernel resolves `/proc/self/fd/N` to that very directory, and the
    // standard library's removal opens each level without following links.
    // Without /proc, the path itself is used.
    let proc_dir = PathBuf::from(format!("/proc/self/fd/{}", parent.as_raw_fd()));
    let at = if proc_dir.is_dir() {
        proc_dir.join(name)
    } else {
        path.to_path_buf()
    };
    let before = tally(&at);
    if !recursive {
        let what = if before.entries() == 0 {
            "an empty directory".to_string()
        } else {
            format!("a directory holding {}", before.describe())
        };
        return Err(ToolError::new(
            "delete.is_directory",
            format!(
                "`{shown}` is {what}; nothing was deleted. To delete it and everything in it, call delete again with recursive=true."
            ),
        )
        .with_details(json!({"path": shown, "kind": "directory", "entries": before.entries()})));
    }
    if let Err(e) = std::fs::remove_dir_all(&at) {
        let left = tally(&at);
        let exists = std::fs::symlink_metadata(&at).is_ok();
        let msg = if exists {
            format!(
                "could not delete all of `{shown}`: {e}. Still there: {} (of {} at first). Check the permissions of what is left.",
                left.describe(),
                before.describe()
            )
        } else {
            format!("could not delete `{shown}`: {e}")
        };
        return Err(ToolError::new("delete.io", msg));
    }
    Ok(ToolOutput::new(
        format!(
            "Deleted directory {shown} and everything in it: {}",
            before.describe()
        ),
        json!({
            "path": shown,
            "kind": "directory",
            "entries": before.entries(),
            "files": before.files,
            "directories": before.dirs,
            "bytes": before.bytes,
        }),
    ))
}

/// What a directory holds, counted without following symlinks.
#[derive(Debug, Default)]
struct Tally {
    files: u64,
    dirs: u64,
    bytes: u64,
}

impl Tally {
    fn entries(&self) -> u64 {
        self.files + self.dirs
    }

    fn describe(&self) -> String {
        format!(
            "{} file{}, {} director{}, {} byte{}",
            self.files,
            plural(self.files),
            self.dirs,
            if self.dirs == 1 { "y" } else { "ies" },
            self.bytes,
            plural(self.bytes)
        )
    }
}

fn tally(dir: &Path) -> Tally {
    let mut t = Tally::default();
    let mut stack: Vec<PathBuf> = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => {
                    t.dirs += 1;
                    stack.push(e.path());
                }
                Ok(m) => {
                    t.files += 1;
                    t.bytes += m.len();
                }
                Err(_) => t.files += 1,
            }
        }
    }
    t
}

/// Refuses to delete the working directory, one of its parents, or the root.
fn refuse_vital(ctx: &Context, path: &Path, shown: &str) -> Result<(), ToolError> {
    // The path itself, not where a symlink leads: removing a link to the
    // working directory removes only the link.
    let real = match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => dir
            .canonicalize()
            .map(|d| d.join(name))
            .unwrap_or_else(|_| path.to_path_buf()),
        _ => path.to_path_buf(),
    };
    let cwd = ctx.cwd.canonicalize().unwrap_or_else(|_| ctx.cwd.clone());
    let is_root = ctx.root.as_deref() == Some(real.as_path());
    if cwd.starts_with(&real) || is_root || real.parent().is_none() {
        return Err(ToolError::new(
            "delete.refused",
            format!(
                "refusing to delete `{shown}`: it is the working directory, one of its parents, or the root. Delete what is inside it instead."
            ),
        ));
    }
    Ok(())
}

fn io_error(shown: &str, what: &str, e: io::Error) -> ToolError {
    if crate::tool_protocol::PathProblem::of(&e).is_some() {
        return super::fileops::io_failed("delete.io", what, shown, e);
    }
    let advice = match e.kind() {
        io::ErrorKind::PermissionDenied => " The directory holding it is not writable.",
        _ => "",
    };
    ToolError::new(
        "delete.io",
        format!("cannot {what} `{shown}`: {e}.{advice}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: DeleteArgs,
    }

    #[test]
    fn command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn tally_counts_without_following_links() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("t/sub")).unwrap();
        std::fs::write(d.join("t/a"), "12345").unwrap();
        std::fs::write(d.join("t/sub/b"), "1").unwrap();
        std::os::unix::fs::symlink("/", d.join("t/root-link")).unwrap();
        let t = tally(&d.join("t"));
        assert_eq!((t.files, t.dirs), (3, 1));
        assert!(t.bytes >= 6);
    }
}
