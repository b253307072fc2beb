//! Git worktrees of subagents (`agent` calls with `isolation: "worktree"`):
//! each child works in `$AG_HOME/worktrees/<name>` on a branch
//! `ag/agent-<call id>` of the repository; when it ends, what it changed
//! is committed on that branch and the worktree removed, so the parent (or
//! the person) merges the branch. A record beside each worktree names the
//! process that made it: `ag-session clean-worktrees` finds those whose
//! process is gone (a killed run), commits what they hold on their branch,
//! and removes them.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::proc::{CaptureLimit, Command, Output};

/// How long one git command may take.
const GIT_TIMEOUT: Duration = Duration::from_secs(120);

/// Where the worktrees and their records are.
pub fn dir() -> PathBuf {
    super::ag_home().join("worktrees")
}

/// The record beside a worktree (`<name>.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    /// The process (an ag-loop) whose subagent works there.
    pub pid: u32,
    /// The repository's top directory.
    pub repo: PathBuf,
    /// The worktree.
    pub dir: PathBuf,
    /// Its branch.
    pub branch: String,
    /// The commit it started from.
    pub base: String,
}

/// A subagent's worktree while it works.
#[derive(Debug)]
pub struct Worktree {
    /// Where the child works: the worktree, or the same subdirectory of it
    /// as the parent's.
    pub dir: PathBuf,
    record: Record,
    done: bool,
}

/// What a finished worktree left on its branch.
#[derive(Debug, Clone)]
pub struct Branch {
    /// The branch.
    pub branch: String,
    /// `git diff --stat` of the branch against where it started.
    pub diff_stat: String,
    /// The files it changed.
    pub files: Vec<String>,
}

/// Runs git in `dir`; its stdout, or what went wrong.
pub async fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .args(args)
        .cwd(dir)
        .timeout(GIT_TIMEOUT)
        .output(Output::Separate {
            stdout: CaptureLimit::new(16 << 20),
            stderr: CaptureLimit::new(64 << 10),
        })
        .collect(&CancellationToken::new())
        .await
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.code() == 0 {
        Ok(out.stdout.lossy())
    } else {
        Err(format!(
            "`git {}` failed: {}",
            args.join(" "),
            out.stderr.lossy().trim()
        ))
    }
}

/// A name git takes for a branch and a directory.
fn clean_name(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(80)
        .collect()
}

/// Makes a worktree for the call `id` from the repository `cwd` is in, at
/// its HEAD; an error says why not (not a repository, no commit yet, the
/// branch taken).
pub async fn add(cwd: &Path, id: &str) -> Result<Worktree, String> {
    let repo = git(cwd, &["rev-parse", "--show-toplevel"])
        .await
        .map_err(|_| {
            format!(
                "isolation \"worktree\" needs a git repository, and {} is in none; leave isolation out",
                cwd.display()
            )
        })?;
    let repo = PathBuf::from(repo.trim());
    let base = git(&repo, &["rev-parse", "HEAD"]).await.map_err(|_| {
        "isolation \"worktree\" needs a commit to start from, and the repository has none yet; commit first or leave isolation out".to_string()
    })?;
    let base = base.trim().to_string();
    let name = clean_name(id);
    let branch = format!("ag/agent-{name}");
    let repo_name = repo
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "repo".into());
    let root = dir();
    std::fs::create_dir_all(&root).map_err(|e| format!("cannot create {}: {e}", root.display()))?;
    let wt = root.join(format!(
        "{}-{name}-{}",
        clean_name(&repo_name),
        std::process::id()
    ));
    let record = Record {
        pid: std::process::id(),
        repo: repo.clone(),
        dir: wt.clone(),
        branch: branch.clone(),
        base: base.clone(),
    };
    // The record first: a run killed during `worktree add` leaves nothing
    // that clean-worktrees cannot find.
    write_record(&record)?;
    let wt_s = wt.display().to_string();
    if let Err(e) = git(&repo, &["worktree", "add", "-b", &branch, &wt_s, &base]).await {
        let _ = std::fs::remove_file(record_path(&wt));
        return Err(format!(
            "cannot make a worktree for this call: {e}; call again without isolation, or remove the branch `{branch}` if it is stale"
        ));
    }
    let sub = cwd.strip_prefix(&repo).unwrap_or(Path::new(""));
    Ok(Worktree {
        dir: wt.join(sub),
        record,
        done: false,
    })
}

fn record_path(wt: &Path) -> PathBuf {
    wt.with_extension("json")
}

fn write_record(r: &Record) -> Result<(), String> {
    let path = record_path(&r.dir);
    let text = serde_json::to_string(r).map_err(|e| e.to_string())?;
    // Whole or not at all: written aside, then renamed.
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text.as_bytes())
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

impl Worktree {
    /// Commits what the child changed on its branch and removes the
    /// worktree: the branch and its diff stat, or `None` when nothing
    /// changed (the branch is then deleted too).
    pub async fn finish(&mut self) -> Result<Option<Branch>, String> {
        if self.done {
            return Ok(None);
        }
        self.done = true;
        finish(&self.record).await
    }
}

/// See [`Worktree::finish`].
async fn finish(r: &Record) -> Result<Option<Branch>, String> {
    let result = commit(r).await;
    let wt = r.dir.display().to_string();
    let removed = git(&r.repo, &["worktree", "remove", "--force", &wt]).await;
    if removed.is_err() {
        // A directory git no longer knows: prune forgets it.
        let _ = std::fs::remove_dir_all(&r.dir);
        let _ = git(&r.repo, &["worktree", "prune"]).await;
    }
    let _ = std::fs::remove_file(record_path(&r.dir));
    let committed = result?;
    if !committed {
        let _ = git(&r.repo, &["branch", "-D", &r.branch]).await;
        return Ok(None);
    }
    let range = format!("{}..{}", r.base, r.branch);
    let diff_stat = git(&r.repo, &["diff", "--stat", &range]).await?;
    let files = git(&r.repo, &["diff", "--name-only", &range])
        .await?
        .lines()
        .map(str::to_string)
        .collect();
    Ok(Some(Branch {
        branch: r.branch.clone(),
        diff_stat: diff_stat.trim_end().to_string(),
        files,
    }))
}

/// Commits everything in the worktree on its branch; whether the branch
/// now differs from where it started (the child may have committed too).
async fn commit(r: &Record) -> Result<bool, String> {
    if !r.dir.is_dir() {
        return Ok(false);
    }
    git(&r.dir, &["add", "-A"]).await?;
    let staged = git(&r.dir, &["diff", "--cached", "--quiet"]).await.is_err();
    if staged {
        git(
            &r.dir,
            &[
                "-c",
                "user.name=ag subagent",
                "-c",
                "user.email=ag@localhost",
                "commit",
                "--quiet",
                "--no-verify",
                "-m",
                &format!("ag subagent's work on {}", r.branch),
            ],
        )
        .await?;
    }
    let head = git(&r.dir, &["rev-parse", "HEAD"]).await?;
    Ok(head.trim() != r.base)
}

/// The worktrees whose process is gone, each committed on its branch and
/// removed: a line each for the person. `dry_run` only lists them.
pub async fn clean(dry_run: bool) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir()) else {
        return out;
    };
    let mut records: Vec<Record> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter_map(|p| std::fs::read(&p).ok())
        .filter_map(|b| serde_json::from_slice::<Record>(&b).ok())
        .filter(|r| !crate::proc::process_alive(r.pid))
        .collect();
    records.sort_by(|a, b| a.dir.cmp(&b.dir));
    for r in records {
        if dry_run {
            out.push(format!(
                "{}\t{}\tleft by process {} (gone)",
                r.dir.display(),
                r.branch,
                r.pid
            ));
            continue;
        }
        let line = match finish(&r).await {
            Ok(Some(b)) => format!(
                "{}\tremoved; its work is on the branch {} ({} files)",
                r.dir.display(),
                b.branch,
                b.files.len()
            ),
            Ok(None) => format!(
                "{}\tremoved; it held no changes, the branch {} is deleted",
                r.dir.display(),
                r.branch
            ),
            Err(e) => format!(
                "{}\tremoved; its changes could not be committed: {e}",
                r.dir.display()
            ),
        };
        out.push(line);
    }
    out
}
