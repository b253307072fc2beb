//! Running the git command line for the git tool: `git -C <cwd>` with no
//! pager, literal pathspecs, no colour, no terminal prompt and stdin
//! closed, so that it never waits for a person; the user's config and hooks
//! apply as they would in a shell. Output is kept whole up to a cap, or as a
//! head and a tail with the middle counted, so memory stays bounded.
//!
//! git runs through core/proc in a process group of its own; SIGINT or
//! SIGTERM to ag-git (ag-loop ending the call) ends that group, so git and
//! any hook it started end with it.

use std::ffi::OsStr;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::proc::{self, Cancel, CaptureLimit, Output, TerminationGuard};

use crate::tool_protocol::{Context, ToolError};

/// Bytes of stderr kept: git's messages and hook output.
const STDERR_KEEP: usize = 64 * 1024;

/// How much of a command's stdout to keep.
#[derive(Debug, Clone, Copy)]
pub struct Cap {
    /// Bytes kept from the start.
    pub head: usize,
    /// Bytes kept from the end, after the head.
    pub tail: usize,
}

impl Cap {
    /// Keep everything up to `bytes`, then only the start.
    pub const fn whole(bytes: usize) -> Cap {
        Cap {
            head: bytes,
            tail: 0,
        }
    }
}

pub use crate::proc::Captured;

/// What one git command did.
#[derive(Debug)]
pub struct GitRun {
    /// The exit code; `None` when git was killed by a signal.
    pub code: Option<i32>,
    /// Its stdout, capped.
    pub stdout: Captured,
    /// Its stderr, the first 64 KiB, lossily decoded.
    pub stderr: String,
}

impl GitRun {
    /// True when git exited with status 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// Stdout when it was kept whole, as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.stdout.head).into_owned()
    }

    /// What git said, for an error message: stderr, else stdout, trimmed
    /// and shortened.
    pub fn said(&self) -> String {
        let text = if self.stderr.trim().is_empty() {
            self.text()
        } else {
            self.stderr.clone()
        };
        shorten(text.trim(), 4000)
    }
}

/// A git working tree, as seen from the call's working directory.
#[derive(Debug, Clone)]
pub struct Repo {
    /// The call's working directory; git runs with `-C` here.
    pub cwd: PathBuf,
    /// The top of the working tree.
    pub toplevel: PathBuf,
    /// The working directory relative to the top, `sub/dir/` or empty.
    pub prefix: String,
}

impl Repo {
    /// Finds the working tree around the call's directory.
    pub fn discover(ctx: &Context) -> Result<Repo, ToolError> {
        let run = run_git(
            &ctx.cwd,
            ["rev-parse", "--show-toplevel", "--show-prefix"],
            Cap::whole(64 * 1024),
            true,
        )?;
        let text = run.text();
        let mut lines = text.lines();
        match (run.success(), lines.next()) {
            (true, Some(top)) if !top.is_empty() => Ok(Repo {
                cwd: ctx.cwd.clone(),
                toplevel: PathBuf::from(top),
                prefix: lines.next().unwrap_or("").to_string(),
            }),
            _ => Err(ToolError::new(
                "git.not_a_repository",
                format!(
                    "`{}` is not inside a git working tree (git said: {}). Work in a repository's directory, or create one with bash(command=\"git init\").",
                    ctx.cwd.display(),
                    run.said()
                ),
            )),
        }
    }

    /// Runs git in the working directory. `read_only` commands skip the
    /// optional index refresh so that they never contend for git's lock.
    pub fn git<I, S>(&self, args: I, cap: Cap, read_only: bool) -> Result<GitRun, ToolError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        run_git(&self.cwd, args, cap, read_only)
    }

    /// A path git printed (relative to the top of the tree) as the model
    /// should see it: relative to the working directory.
    pub fn show(&self, top_relative: &str) -> String {
        if self.prefix.is_empty() {
            return top_relative.to_string();
        }
        if let Some(rest) = top_relative.strip_prefix(&self.prefix) {
            return if rest.is_empty() {
                "./".to_string()
            } else {
                rest.to_string()
            };
        }
        let depth = self.prefix.split('/').filter(|s| !s.is_empty()).count();
        format!("{}{top_relative}", "../".repeat(depth))
    }
}

/// The rule by which git ignores `path`, a file it does not track, as
/// "`source` line N: `pattern`"; `None` when git does not ignore it, or
/// there is no repository (or no git) around `cwd`.
pub fn ignore_rule(cwd: &Path, path: &Path) -> Option<String> {
    let args: [&OsStr; 4] = [
        "check-ignore".as_ref(),
        "-v".as_ref(),
        "--".as_ref(),
        path.as_os_str(),
    ];
    let run = run_git_with(cwd, args, Cap::whole(64 * 1024), true, false).ok()?;
    if !run.success() {
        return None;
    }
    // `source:line:pattern<TAB>path`; `-z` needs `--stdin`, and the source
    // is a path that may hold a colon, so the line number is what splits.
    let text = run.text();
    let (rule, _) = text.split_once('\t')?;
    let (source, line, pattern) = split_rule(rule)?;
    // A negated pattern that matches keeps the path in.
    if pattern.is_empty() || pattern.starts_with('!') {
        return None;
    }
    Some(format!("`{source}` line {line}: `{pattern}`"))
}

/// `source:line:pattern` split at the first `:digits:`.
fn split_rule(rule: &str) -> Option<(&str, &str, &str)> {
    let bytes = rule.as_bytes();
    let mut at = 0;
    while let Some(i) = rule[at..].find(':').map(|i| i + at) {
        let digits = bytes[i + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits > 0 && bytes.get(i + 1 + digits) == Some(&b':') {
            return Some((
                &rule[..i],
                &rule[i + 1..i + 1 + digits],
                &rule[i + 2 + digits..],
            ));
        }
        at = i + 1;
    }
    None
}

/// A path given in a call, checked against `--root`, as a pathspec relative
/// to the working directory (git runs there with literal pathspecs).
pub fn pathspec(ctx: &Context, given: &str) -> Result<String, ToolError> {
    let resolved = ctx.resolve(given)?;
    Ok(relative(&ctx.cwd, &resolved))
}

/// `path` relative to `base`, both absolute, with `..` where needed.
fn relative(base: &Path, path: &Path) -> String {
    let base: Vec<Component> = base.components().collect();
    let path: Vec<Component> = path.components().collect();
    let common = base
        .iter()
        .zip(path.iter())
        .take_while(|(a, b)| a == b)
        .count();
    let mut out = PathBuf::new();
    for _ in common..base.len() {
        out.push("..");
    }
    for c in &path[common..] {
        out.push(c);
    }
    if out.as_os_str().is_empty() {
        ".".to_string()
    } else {
        out.to_string_lossy().into_owned()
    }
}

fn run_git<I, S>(cwd: &Path, args: I, cap: Cap, read_only: bool) -> Result<GitRun, ToolError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    run_git_with(cwd, args, cap, read_only, true)
}

/// [`run_git`], with literal pathspecs or not (`check-ignore` takes no
/// pathspec magic, and refuses `--literal-pathspecs`).
fn run_git_with<I, S>(
    cwd: &Path,
    args: I,
    cap: Cap,
    read_only: bool,
    literal: bool,
) -> Result<GitRun, ToolError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let io_error =
        |e: &dyn std::fmt::Display| ToolError::new("git.io", format!("cannot run git: {e}"));
    let cancel = Cancel::new().map_err(|e| io_error(&e))?;
    // An interrupt to ag-git (ag-loop ending the call) ends git and its hooks.
    let _guard = TerminationGuard::install(&cancel).map_err(|e| io_error(&e))?;
    let mut cmd = proc::Command::new("git")
        .arg("-C")
        .arg(cwd)
        .arg("--no-pager");
    if literal {
        cmd = cmd.arg("--literal-pathspecs");
    }
    cmd = cmd
        .arg("-c")
        .arg("core.quotepath=false")
        .arg("-c")
        .arg("color.ui=false");
    for a in args {
        cmd = cmd.arg(a);
    }
    cmd = cmd
        .env("GIT_TERMINAL_PROMPT", "0")
        .cancel(&cancel)
        .output(Output::Separate {
            stdout: CaptureLimit {
                max_bytes: cap.head + cap.tail,
                head_bytes: cap.head,
                ..CaptureLimit::new(cap.head + cap.tail)
            },
            stderr: CaptureLimit {
                max_bytes: STDERR_KEEP,
                head_bytes: STDERR_KEEP,
                ..CaptureLimit::new(STDERR_KEEP)
            },
        });
    if read_only {
        cmd = cmd.env("GIT_OPTIONAL_LOCKS", "0");
    }
    let outcome = cmd.run().map_err(|e| match e {
        proc::Error::Spawn { source, .. } if source.kind() == io::ErrorKind::NotFound => ToolError::new(
            "git.not_installed",
            "git is not installed (there is no `git` on PATH); install it, or do without version control",
        ),
        other => io_error(&other),
    })?;
    let code = match outcome.status {
        proc::Status::Exited(c) if outcome.stopped.is_none() => Some(c),
        _ => None,
    };
    Ok(GitRun {
        code,
        stderr: String::from_utf8_lossy(&outcome.stderr.head).into_owned(),
        stdout: outcome.stdout,
    })
}

/// Text cut to about `max` bytes: its start and end with a note between.
pub fn shorten(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let head_end = floor_char(text, max * 2 / 3);
    let tail_start = ceil_char(text, text.len() - max / 3);
    format!(
        "{}\n[... {} bytes omitted ...]\n{}",
        &text[..head_end],
        tail_start - head_end,
        &text[tail_start..]
    )
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ignore_rule_splits_at_its_line_number() {
        assert_eq!(
            split_rule(".gitignore:1:.env"),
            Some((".gitignore", "1", ".env"))
        );
        // A colon in the source's path, and in the pattern.
        assert_eq!(
            split_rule("/home/a:b/.config/git/ignore:12:*.log:x"),
            Some(("/home/a:b/.config/git/ignore", "12", "*.log:x"))
        );
        assert_eq!(split_rule("no line number"), None);
    }

    #[test]
    fn paths_relative_to_the_working_directory() {
        assert_eq!(
            relative(Path::new("/r/a/b"), Path::new("/r/a/b/c.rs")),
            "c.rs"
        );
        assert_eq!(
            relative(Path::new("/r/a/b"), Path::new("/r/x.rs")),
            "../../x.rs"
        );
        assert_eq!(relative(Path::new("/r/a"), Path::new("/r/a")), ".");
        let repo = Repo {
            cwd: PathBuf::from("/r/sub/dir"),
            toplevel: PathBuf::from("/r"),
            prefix: "sub/dir/".into(),
        };
        assert_eq!(repo.show("sub/dir/f.rs"), "f.rs");
        assert_eq!(repo.show("top.rs"), "../../top.rs");
    }

    #[test]
    fn shorten_keeps_both_ends_on_char_boundaries() {
        let text = "é".repeat(3000);
        let short = shorten(&text, 1000);
        assert!(short.len() < 1100);
        assert!(short.contains("bytes omitted"));
        assert_eq!(shorten("short", 1000), "short");
    }
}
