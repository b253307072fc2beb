//! Running git for checkpoints: through core/proc, with a fixed set of
//! settings that keep the user's configuration from running anything or
//! changing what is stored. No hooks, no fsmonitor daemon, no external diff
//! or textconv, no signing, no reflog, and `.gitattributes` read from the
//! empty tree, so that no clean filter, end-of-line conversion or LFS
//! rewrites the bytes on their way into a checkpoint: a rewind must put back
//! exactly what was on disk. Variables that would point git elsewhere
//! (`GIT_DIR`, `GIT_INDEX_FILE`, ...) are removed from its environment;
//! each call names the repository, work tree and index itself.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::proc::{self, CaptureLimit, Input, Output};

use super::Error;

/// The empty tree: git knows it without storing it.
pub const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// A checkpoint of a large tree may hash many files; nothing should take
/// longer than this, and a stuck git must not hang the agent forever.
const TIME_LIMIT: Duration = Duration::from_secs(600);

/// Variables that would make git use another repository, index or
/// settings than the ones each call names.
const CLEARED: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG",
    "GIT_EXTERNAL_DIFF",
    "GIT_DIFF_OPTS",
    "GIT_ATTR_SOURCE",
    "GIT_INDEX_VERSION",
    "GIT_QUARANTINE_PATH",
    "GIT_REPLACE_REF_BASE",
    "GIT_GRAFT_FILE",
    "GIT_SHALLOW_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
];

/// Settings given on every call, after the user's, so they win.
const SETTINGS: &[&str] = &[
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.untrackedCache=true",
    "core.splitIndex=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.symlinks=true",
    "core.fileMode=true",
    "core.ignoreCase=false",
    "core.precomposeUnicode=false",
    "core.quotePath=false",
    "core.logAllRefUpdates=false",
    "core.attributesFile=/dev/null",
    "core.sparseCheckout=false",
    "index.sparse=false",
    "commit.gpgSign=false",
    "diff.external=",
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
    "diff.relative=false",
    "color.ui=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "advice.addEmbeddedRepo=false",
    "advice.addIgnoredFile=false",
];

/// Where git works: the repository, the work tree, and the private index.
#[derive(Debug, Clone)]
pub struct Git {
    /// The repository (`.git` or a shadow repository).
    pub git_dir: PathBuf,
    /// The top of the working tree.
    pub work_tree: PathBuf,
    /// ag's own index for this session, never the user's.
    pub index: Option<PathBuf>,
}

/// What one git command printed.
#[derive(Debug)]
pub struct Ran {
    /// Its exit code (`None`: stopped).
    pub code: Option<i32>,
    /// Stdout, whole.
    pub stdout: Vec<u8>,
    /// Stderr, lossily decoded.
    pub stderr: String,
}

impl Ran {
    /// True on exit status 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// Stdout as text, trimmed.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).trim().to_string()
    }
}

/// Runs git with `args` in `dir` without naming a repository (discovery).
pub fn plain(dir: &Path, args: &[&str]) -> Result<Ran, Error> {
    // Looking at the user's repository must not rewrite its index.
    let mut cmd = base().env("GIT_OPTIONAL_LOCKS", "0").arg("-C").arg(dir);
    for a in args {
        cmd = cmd.arg(a);
    }
    run(cmd, Input::Null, args)
}

impl Git {
    /// Runs git in this repository; stdout is kept whole (up to 1 GiB).
    pub fn run(&self, args: &[&str]) -> Result<Ran, Error> {
        self.run_with(args, Input::Null)
    }

    /// Like [`Git::run`] with bytes on stdin.
    pub fn run_with(&self, args: &[&str], input: Input) -> Result<Ran, Error> {
        let mut cmd = base()
            .arg("-C")
            .arg(&self.work_tree)
            .arg(flag("--git-dir=", &self.git_dir))
            .arg(flag("--work-tree=", &self.work_tree));
        // `.gitattributes` from the empty tree: no filter or conversion.
        cmd = cmd.arg(format!("--attr-source={EMPTY_TREE}"));
        if self.index.is_some() {
            // The private index is written up to three times a checkpoint;
            // its trailing checksum of the whole file guards nothing that
            // git reads back (only fsck checks it), so it is not computed.
            cmd = cmd.arg("-c").arg("index.skipHash=true");
        }
        for a in args {
            cmd = cmd.arg(a);
        }
        if let Some(index) = &self.index {
            cmd = cmd.env("GIT_INDEX_FILE", index);
        }
        run(cmd, input, args)
    }

    /// Runs git and fails unless it exits 0.
    pub fn ok(&self, args: &[&str]) -> Result<Ran, Error> {
        let ran = self.run(args)?;
        check(ran, args)
    }

    /// [`Git::ok`] with bytes on stdin.
    pub fn ok_with(&self, args: &[&str], input: Vec<u8>) -> Result<Ran, Error> {
        let ran = self.run_with(args, Input::Bytes(input))?;
        check(ran, args)
    }
}

/// Fails with what git said unless it exited 0.
pub fn check(ran: Ran, args: &[&str]) -> Result<Ran, Error> {
    if ran.success() {
        return Ok(ran);
    }
    Err(Error::Git {
        command: format!("git {}", args.join(" ")),
        said: said(&ran),
    })
}

/// What git said, for a message.
pub fn said(ran: &Ran) -> String {
    let text = if ran.stderr.trim().is_empty() {
        String::from_utf8_lossy(&ran.stdout).into_owned()
    } else {
        ran.stderr.clone()
    };
    let text = text.trim();
    match text.char_indices().nth(2000) {
        Some((i, _)) => format!("{} ...", &text[..i]),
        None => text.to_string(),
    }
}

fn flag(name: &str, path: &Path) -> OsString {
    let mut s = OsString::from(name);
    s.push(path.as_os_str());
    s
}

fn base() -> proc::Command {
    let mut cmd = proc::Command::new("git")
        .arg("--no-pager")
        .arg("--no-replace-objects");
    for s in SETTINGS {
        cmd = cmd.arg("-c").arg(s);
    }
    for v in CLEARED {
        cmd = cmd.env_remove(v);
    }
    cmd.env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_AUTHOR_NAME", "ag")
        .env("GIT_AUTHOR_EMAIL", "ag@localhost")
        .env("GIT_COMMITTER_NAME", "ag")
        .env("GIT_COMMITTER_EMAIL", "ag@localhost")
        .env("LC_ALL", "C")
        .timeout(TIME_LIMIT)
}

fn run(cmd: proc::Command, input: Input, args: &[&str]) -> Result<Ran, Error> {
    const STDOUT: usize = 1 << 30;
    const STDERR: usize = 64 * 1024;
    let cmd = cmd.stdin(input).output(Output::Separate {
        stdout: CaptureLimit::head_only(STDOUT),
        stderr: CaptureLimit::head_only(STDERR),
    });
    let outcome = cmd.run().map_err(|e| match e {
        proc::Error::Spawn { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            Error::NoGit
        }
        other => Error::Git {
            command: format!("git {}", args.join(" ")),
            said: other.to_string(),
        },
    })?;
    if outcome.stdout.truncated() {
        return Err(Error::Git {
            command: format!("git {}", args.join(" ")),
            said: "its output was larger than 1 GiB".into(),
        });
    }
    let code = match outcome.status {
        proc::Status::Exited(c) if outcome.stopped.is_none() => Some(c),
        _ => None,
    };
    Ok(Ran {
        code,
        stdout: outcome.stdout.head,
        stderr: String::from_utf8_lossy(&outcome.stderr.head).into_owned(),
    })
}
