//! How ag-loop reads the files of instructions that a project or the
//! person gives it (AGENTS.md, CLAUDE.md, MEMORY.md, identities, skills):
//! bounded, regular files only, and a project's own from inside it; what
//! cannot be read said once on stderr; and what a project's text says made
//! printable before ag prints it.

use std::path::{Path, PathBuf};

use crate::fsutil::SmallTextError;

/// Bytes read of an AGENTS.md, CLAUDE.md or MEMORY.md, an agent identity
/// or a SKILL.md: far more than instructions need, and what every request
/// would carry. A longer file is cut there, with a warning.
pub const MAX_FILE: usize = 256 * 1024;

/// The repository `cwd` is in: the nearest directory up from it that holds
/// `.git`.
pub fn repository_root(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

/// Reads a file of instructions (AGENTS.md, MEMORY.md, an identity, a
/// SKILL.md) with [`crate::fsutil::read_small_text`]: at most [`MAX_FILE`]
/// bytes of a regular file. `within` is given for a project's file, which
/// comes with the code being worked on (a clone of anyone's repository):
/// it is read only if it stays inside that directory, links and all, so
/// that a repository cannot make ag read `/proc`, a device, or a file of
/// the person's into the prompt. The person's own files (`$AG_HOME`,
/// `~/.agents`, `--skills`) are followed wherever their links lead.
/// A file cut at the limit is said on stderr, once.
pub fn read_file(path: &Path, within: Option<&Path>) -> Result<String, SmallTextError> {
    let read = crate::fsutil::read_small_text(path, MAX_FILE, within)?;
    if let Some(size) = read.cut_from {
        warn_once(
            path,
            &format!(
                "`{}` is {}; only its first {} is read (ag reads at most that much of an AGENTS.md, MEMORY.md, identity or SKILL.md): shorten it",
                path.display(),
                crate::tools::bash::human_bytes(size),
                crate::tools::bash::human_bytes(MAX_FILE as u64)
            ),
        );
    }
    Ok(read.text)
}

/// [`read_file`], with what keeps a file from being read said on stderr
/// (once) instead of returned; a file that is not there is no news.
pub fn read_or_warn(path: &Path, within: Option<&Path>) -> Option<String> {
    match read_file(path, within) {
        Ok(text) => Some(text),
        Err(e) if e.is_missing() => None,
        Err(e) => {
            warn_once(path, &not_read(path, &e));
            None
        }
    }
}

/// Why a file of instructions is not read, and what to do.
pub fn not_read(path: &Path, e: &SmallTextError) -> String {
    let fix = match e {
        SmallTextError::Outside(_) => {
            "; a project's files are read only from inside it: put the text itself there"
        }
        SmallTextError::NotRegular(_) | SmallTextError::Kernel(_) => {
            "; make it a regular file that holds the text"
        }
        SmallTextError::NotText => "; save it as UTF-8",
        SmallTextError::Io(_) => "",
    };
    format!("`{}` is not read: {e}{fix}", path.display())
}

/// A warning about a file, once per file for the life of the process:
/// identities and skills are looked up again during a run.
pub fn warn_once(path: &Path, message: &str) {
    static WARNED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    let mut warned = WARNED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !warned.iter().any(|p| p == path) {
        warned.push(path.to_path_buf());
        crate::cli::warn("ag-loop", message);
    }
}

/// `text` without the characters that would act on a terminal rather
/// than show, for what a project's files say that ag prints (a skill's
/// name, an identity's role): C0 and C1 controls (escape sequences start
/// with ESC or CSI; newlines and tabs go too, each such text being one
/// field of one line), DEL, and the bidirectional overrides that make a
/// line show in another order than it reads.
pub fn printable(text: &str) -> String {
    text.chars()
        .filter(|c| {
            !c.is_control() && !matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .collect()
}
