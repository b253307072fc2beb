//! A directory's tree recorded as a git tree object, before and after a
//! task, without touching the repository's HEAD, index or branches: through
//! a private index in the repository itself, or in a throwaway repository
//! (in the task's scratch directory) when there is none.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::proc::{Cancel, CaptureLimit, Command, Output};

/// The bytes of git's output an answer (a path, a tree id) may have.
const ANSWER: usize = 64 * 1024;

/// Where a tree is recorded from, and how.
pub struct Snapshot {
    top: PathBuf,
    env: Vec<(&'static str, OsString)>,
    cancel: Cancel,
}

/// Runs git in `cwd` with `env`, keeping at most `limit` bytes of stdout.
fn git(
    cwd: &Path,
    args: &[&str],
    env: &[(&'static str, OsString)],
    limit: usize,
    cancel: &Cancel,
) -> Result<(Vec<u8>, u64), String> {
    let mut c = Command::new("git")
        .args(args)
        .cwd(cwd)
        // The repository of `cwd`, whatever the caller's environment names.
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .cancel(cancel)
        .output(Output::Separate {
            stdout: CaptureLimit::head_only(limit),
            stderr: CaptureLimit::new(4096),
        });
    for (k, v) in env {
        c = c.env(k, v);
    }
    let out = c
        .run()
        .map_err(|e| format!("git {}: {e}", args.join(" ")))?;
    if out.stopped.is_some() {
        return Err("stopped".to_string());
    }
    if out.code() != 0 {
        return Err(format!(
            "git {}: {}",
            args.join(" "),
            out.stderr.lossy().trim()
        ));
    }
    Ok((out.stdout.head, out.stdout.total_bytes))
}

fn answer(bytes: Vec<u8>) -> String {
    String::from_utf8_lossy(&bytes).trim().to_string()
}

impl Snapshot {
    /// Prepares to record `directory`, with its private files in `scratch`.
    pub fn new(directory: &Path, scratch: &Path, cancel: &Cancel) -> Result<Snapshot, String> {
        let index = scratch.join("index");
        let mut env = vec![("GIT_INDEX_FILE", index.clone().into_os_string())];
        let top = git(
            directory,
            &["rev-parse", "--show-toplevel"],
            &[],
            ANSWER,
            cancel,
        );
        let top = match top {
            Ok((out, _)) => {
                let top = PathBuf::from(answer(out));
                // Starting from the repository's own index keeps its stat
                // cache: only changed files are hashed again.
                let (own, _) = git(
                    &top,
                    &["rev-parse", "--path-format=absolute", "--git-path", "index"],
                    &[],
                    ANSWER,
                    cancel,
                )?;
                let own = PathBuf::from(answer(own));
                if own.exists() {
                    std::fs::copy(&own, &index)
                        .map_err(|e| format!("cannot copy `{}`: {e}", own.display()))?;
                }
                top
            }
            Err(e) if e == "stopped" => return Err(e),
            Err(_) => {
                let shadow = scratch.join("shadow.git");
                let shadow_arg = shadow.to_string_lossy().into_owned();
                git(
                    scratch,
                    &["init", "-q", "--bare", &shadow_arg],
                    &[],
                    ANSWER,
                    cancel,
                )?;
                env.push(("GIT_DIR", shadow.into_os_string()));
                env.push(("GIT_WORK_TREE", directory.as_os_str().to_owned()));
                directory.to_path_buf()
            }
        };
        Ok(Snapshot {
            top,
            env,
            cancel: cancel.clone(),
        })
    }

    /// The tree as it is now.
    pub fn tree(&self) -> Result<String, String> {
        git(
            &self.top,
            &["add", "-A", "."],
            &self.env,
            ANSWER,
            &self.cancel,
        )?;
        let (out, _) = git(&self.top, &["write-tree"], &self.env, ANSWER, &self.cancel)?;
        Ok(answer(out))
    }

    /// The binary diff from `before` to `after`, its first `cap` bytes, and
    /// whether it was longer.
    pub fn diff(&self, before: &str, after: &str, cap: usize) -> Result<(Vec<u8>, bool), String> {
        let (out, total) = git(
            &self.top,
            // The same shape whatever the user's git configuration says.
            &[
                "diff",
                "--binary",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--src-prefix=a/",
                "--dst-prefix=b/",
                before,
                after,
            ],
            &self.env,
            cap,
            &self.cancel,
        )?;
        Ok((out, total > cap as u64))
    }
}
