//! What a prompt carries with `--show-context` (by default for a small
//! context window), after its attachments: the list of the project's files,
//! the changes not yet committed, and the files its words name without an
//! `@` (with a conversation's first prompt, a small project's every
//! file). A weak model otherwise edits files it has never read, with text it
//! makes up, and guesses paths (`path/to/version.txt`).
//!
//! None of it was asked for by name, so what cannot be shown is left out
//! without a word: a named file that is binary, a FIFO or a device, outside
//! the working directory, kept from the tools by the sandbox, or not allowed
//! outright by a gate; the status outside a repository or when git is slow.
//! The model can still look, and meets the rules then.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::runner::Agent;
use crate::agent::calls::gates::Verdict;
use crate::attach;
use crate::proc::{CaptureLimit, Command, Output};
use crate::protocol::{ContentBlock, Message};
use crate::tool_protocol::Context;
use crate::tools::walk::{self, Links, Visibility};

/// Characters of one file a prompt names shown with it, at most.
const NAMED_FILE_CHARS: usize = 12_000;
/// Characters of all the files a prompt names shown with it, at most: at
/// about four characters a token, an eighth of a 32,768-token window,
/// which every later request carries. A smaller window gets half a
/// character for each of its tokens.
const NAMED_TOTAL_CHARS: usize = 16_000;
/// Files a prompt names shown with it, at most.
const NAMED_FILES: usize = 4;
/// Lines of `git status --short` shown with a prompt, at most.
const STATUS_LINES: usize = 20;
/// How long `git status` may take before the prompt goes without it.
const STATUS_TIMEOUT: Duration = Duration::from_secs(5);
/// Files a project may have to be listed whole; a larger one is listed by
/// its top-level entries, this many at most.
const LISTED_FILES: usize = 50;
/// Files a project may have to be shown whole with a conversation's first
/// prompt (its hidden files left out), when their text fits the budget of
/// the named files too.
const WHOLE_FILES: usize = 10;

impl Agent {
    /// The blocks `--show-context` adds: the project's files, the changes
    /// not yet committed, then the files of `named` that can be shown (not
    /// in `seen`, the files already attached), within `left` characters.
    pub(super) async fn context_blocks(
        &mut self,
        named: Vec<String>,
        seen: &mut Vec<PathBuf>,
        left: usize,
    ) -> Vec<ContentBlock> {
        let window = self.settings.context_window.map(|w| (w / 2) as usize);
        let mut left = left
            .min(NAMED_TOTAL_CHARS)
            .min(window.unwrap_or(usize::MAX));
        let dir = self.settings.attach_dir.clone();
        let Ok(root) = dir.canonicalize() else {
            return Vec::new();
        };
        let ctx = Context {
            cwd: dir.clone(),
            root: None,
        };
        let mut blocks = Vec::new();
        let listed = listing(&ctx, &dir);
        if let Some(list) = &listed {
            blocks.push(ContentBlock::Text {
                text: list.text.clone(),
            });
        }
        if let Some(status) = uncommitted(&dir).await {
            blocks.push(ContentBlock::Text { text: status });
        }
        // A project small enough is shown whole with the first prompt: a
        // weak model then edits text it has seen, whether or not the
        // prompt names the file (a question about the CI names no file).
        let first = !self
            .messages
            .iter()
            .any(|m| matches!(m, Message::User { .. }));
        // Hidden files are listed, not shown unasked: `.env` holds secrets
        // more often than not.
        let whole = match &listed {
            Some(Listing {
                whole: Some(files), ..
            }) if first => {
                let shown: Vec<String> = files.iter().filter(|f| !hidden(f)).cloned().collect();
                match shown.len() <= WHOLE_FILES && fits(&dir, &shown, left) {
                    true => shown,
                    false => Vec::new(),
                }
            }
            _ => Vec::new(),
        };
        let most = if whole.is_empty() {
            NAMED_FILES
        } else {
            WHOLE_FILES
        };
        let mut shown = 0;
        for name in named.into_iter().chain(whole) {
            let budget = left.min(NAMED_FILE_CHARS);
            if shown == most || budget == 0 {
                break;
            }
            let path = dir.join(&name);
            let Ok(real) = path.canonicalize() else {
                continue;
            };
            if !real.starts_with(&root) || seen.contains(&real) || !self.may_show(&real).await {
                continue;
            }
            let Ok(file) = ctx.open_read(&path) else {
                continue;
            };
            // Images and PDFs go with a prompt when it asks for them.
            let Ok(a) = attach::load_text(file, &name, budget) else {
                continue;
            };
            seen.push(real);
            left -= a.chars.min(left);
            shown += 1;
            blocks.extend(a.blocks);
        }
        blocks
    }

    /// Whether a file the prompt names may go with it unasked: not kept
    /// from the tools by the sandbox, and allowed outright by the gates
    /// (a gate that would ask leaves it to the model's own `read`).
    async fn may_show(&mut self, real: &Path) -> bool {
        if self.sandbox_denies(real).is_some() {
            return false;
        }
        if self.settings.gates.before.is_empty() {
            return true;
        }
        matches!(self.gate_verdict(real).await, Verdict::Allow(_))
    }
}

/// The project's files, as listed with a prompt.
struct Listing {
    /// The block's text.
    text: String,
    /// Every file, relative to the directory, when the list holds them all.
    whole: Option<Vec<String>>,
}

/// Whether a relative path has a hidden component (`.env`, `.github/x`).
fn hidden(path: &str) -> bool {
    Path::new(path)
        .components()
        .any(|c| c.as_os_str().to_string_lossy().starts_with('.'))
}

/// Whether the files' bytes together fit in `left` characters.
fn fits(dir: &Path, files: &[String], left: usize) -> bool {
    let mut total = 0u64;
    for f in files {
        match std::fs::symlink_metadata(dir.join(f)) {
            Ok(m) if m.is_file() => total += m.len(),
            _ => {}
        }
    }
    total <= left as u64
}

/// The project's files, by the rules ag-find walks by (.gitignore obeyed)
/// but with hidden entries (`.github/`, `.env.example`) and without `.git`:
/// every file of a project of at most [`LISTED_FILES`], else its top-level
/// entries (directories with a `/`); `None` for an empty directory.
fn listing(ctx: &Context, dir: &Path) -> Option<Listing> {
    let seen = Visibility {
        include_hidden: true,
        include_ignored: false,
    };
    let walk = |depth: Option<usize>| {
        walk::walker(ctx, dir, seen, Links::default(), None)
            .max_depth(depth)
            .sort_by_file_name(std::ffi::OsStr::cmp)
            .build()
            .flatten()
            .filter(|e| e.depth() > 0)
    };
    let files: Vec<String> = walk(None)
        .filter(|e| e.file_type().is_some_and(|t| !t.is_dir()))
        .take(LISTED_FILES + 1)
        .map(|e| walk::relative(e.path(), dir).display().to_string())
        .collect();
    if files.is_empty() {
        return None;
    }
    if files.len() <= LISTED_FILES {
        return Some(Listing {
            text: format!(
                "[Attached the list of the project's files ({})]\n{}",
                files.len(),
                files.join("\n")
            ),
            whole: Some(files),
        });
    }
    let top: Vec<String> = walk(Some(1))
        .take(LISTED_FILES)
        .map(|e| {
            let name = walk::relative(e.path(), dir).display().to_string();
            match e.file_type().is_some_and(|t| t.is_dir()) {
                true => format!("{name}/"),
                false => name,
            }
        })
        .collect();
    Some(Listing {
        text: format!(
            "[Attached the top of the project: more than {LISTED_FILES} files in all, which find and ls show]\n{}",
            top.join("\n")
        ),
        whole: None,
    })
}

/// The changes not yet committed in `dir`'s repository, as a block's text
/// (`git status --short`, at most [`STATUS_LINES`] lines); `None` outside
/// a repository, with nothing to commit, or when git cannot say in time.
async fn uncommitted(dir: &Path) -> Option<String> {
    let cancel = tokio_util::sync::CancellationToken::new();
    let out = Command::new("git")
        // No fsmonitor: a repository's config must not start a command
        // because a prompt was sent.
        .args(["--no-optional-locks", "-c", "core.quotepath=false"])
        .args(["-c", "core.fsmonitor=false"])
        .args(["status", "--short", "--untracked-files=normal"])
        .cwd(dir)
        .timeout(STATUS_TIMEOUT)
        .output(Output::Separate {
            stdout: CaptureLimit::new(64 << 10),
            stderr: CaptureLimit::new(4 << 10),
        })
        .collect(&cancel)
        .await
        .ok()?;
    if out.code() != 0 {
        return None;
    }
    let text = out.stdout.lossy();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return None;
    }
    let mut block = format!(
        "[Attached `git status --short`: the changes not yet committed]\n{}",
        lines[..lines.len().min(STATUS_LINES)].join("\n")
    );
    if lines.len() > STATUS_LINES {
        block.push_str(&format!("\n... and {} more", lines.len() - STATUS_LINES));
    }
    Some(block)
}
