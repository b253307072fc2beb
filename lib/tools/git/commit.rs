//! `commit`: stages the named paths (new, changed or deleted files) and
//! commits exactly them, or without paths commits what is already staged.
//! Refuses when there is nothing to commit. Runs `git commit` itself, so the
//! user's identity, signing and hooks apply; it never pushes.

use serde_json::json;

use super::cmd::{Cap, Repo, shorten};
use super::status::{self, Entry};
use crate::tool_protocol::{ToolError, ToolOutput};

/// Bytes of git's and the hooks' output returned.
const MAX_SAID: usize = 8 * 1024;

/// Makes the commit.
pub fn commit(repo: &Repo, message: &str, specs: &[String]) -> Result<ToolOutput, ToolError> {
    if message.trim().is_empty() {
        return Err(ToolError::new(
            "git.empty_message",
            "the commit message is empty; give `message`: a short summary line, then optionally a blank line and details",
        ));
    }
    if !specs.is_empty() {
        let mut args = vec!["add", "--all", "--"];
        args.extend(specs.iter().map(String::as_str));
        let run = repo.git(&args, Cap::whole(MAX_SAID), false)?;
        if !run.success() {
            return Err(ToolError::new(
                "git.stage_failed",
                format!(
                    "could not stage {}: {}. Nothing was committed; check the paths with action=status.",
                    list(specs),
                    run.said()
                ),
            ));
        }
    }
    let before = status_of(repo, specs)?;
    if !before.conflicted.is_empty() {
        let names: Vec<&str> = before.conflicted.iter().map(|e| e.path.as_str()).collect();
        return Err(ToolError::new(
            "git.conflicts",
            format!(
                "cannot commit while {} {} unresolved merge conflicts; resolve them, then commit with those paths",
                names.join(", "),
                if names.len() == 1 { "has" } else { "have" }
            ),
        ));
    }
    if before.staged.is_empty() {
        return Err(nothing_staged(repo, message, specs, &before));
    }
    let mut args = vec!["commit", "-m", message];
    if !specs.is_empty() {
        // Only the named paths: other staged changes stay staged for later.
        args.push("--");
        args.extend(specs.iter().map(String::as_str));
    }
    let staged_note = if specs.is_empty() {
        "The staged changes are still staged"
    } else {
        "The named paths are staged"
    };
    let mut run = repo.git(&args, Cap::whole(MAX_SAID * 4), false)?;
    let mut stood_in = false;
    if !run.success() && !has_identity(repo)? {
        let Some(identity) = stand_in_identity(repo)? else {
            return Err(no_identity(staged_note));
        };
        let mut again = vec![
            "-c".to_string(),
            format!("user.name={}", identity.name),
            "-c".to_string(),
            format!("user.email={}", identity.email),
        ];
        again.extend(args.iter().map(|a| a.to_string()));
        run = repo.git(&again, Cap::whole(MAX_SAID * 4), false)?;
        stood_in = true;
    }
    if !run.success() {
        return Err(ToolError::new(
            "git.commit_failed",
            format!(
                "git commit failed (exit status {}), nothing was committed. {staged_note}; fix what git or the hook reports below and commit again.\n{}",
                run.code.map_or("signal".to_string(), |c| c.to_string()),
                shorten(&combined(&run.text(), &run.stderr), MAX_SAID)
            ),
        ));
    }
    let head = repo.git(
        [
            "log",
            "-1",
            "--no-color",
            "--format=%H%x00%h%x00%an <%ae>%x00%s",
        ],
        Cap::whole(64 * 1024),
        true,
    )?;
    let head_text = head.text();
    let mut fields = head_text.trim_end_matches('\n').split('\0');
    let (hash, short, author, subject) = (
        fields.next().unwrap_or_default(),
        fields.next().unwrap_or_default(),
        fields.next().unwrap_or_default(),
        fields.next().unwrap_or_default(),
    );
    let after = status_of(repo, &[])?;
    let output = shorten(
        &combined(run.text().trim_end(), run.stderr.trim_end()),
        MAX_SAID,
    );
    let left_staged = (!specs.is_empty() && !after.staged.is_empty()).then(|| {
        let n = after.staged.len();
        format!(
            "{n} other staged change{} {} not part of this commit and {} still staged.",
            if n == 1 { "" } else { "s" },
            if n == 1 { "was" } else { "were" },
            if n == 1 { "is" } else { "are" },
        )
    });
    let details = json!({
        "action": "commit",
        "commit": hash,
        "short_commit": short,
        "subject": subject,
        "branch": after.branch,
        "files": before.staged.iter().map(|e| shown(repo, e)).collect::<Vec<_>>(),
        "paths": specs,
        "still_staged": after.staged.len(),
    });
    // The author as git recorded it: a GIT_AUTHOR_* variable outranks
    // the stand-in given as config.
    let stood_in = stood_in.then(|| {
        format!(
            "git has no name and email to commit under here, so this commit was made as `{author}`. To make it the user's own: set user.name and user.email with git config, then `git commit --amend --reset-author --no-edit`."
        )
    });
    Ok(ToolOutput::new(output, details).with_notes(stood_in.into_iter().chain(left_staged)))
}

/// Whether git has a name and email to commit under. `git var` asks git
/// itself, so the user's config, the `GIT_AUTHOR_*` variables and
/// `user.useConfigOnly` all count, as they do for the commit.
fn has_identity(repo: &Repo) -> Result<bool, ToolError> {
    for who in ["GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"] {
        if !repo.git(["var", who], Cap::whole(4096), true)?.success() {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The name and email a commit is made under when git has none.
struct Identity {
    name: String,
    email: String,
}

/// The identity ag commits under when git has none, as git itself would
/// commit under one it guessed from the host if it could: the user's own
/// name or email where only the other is missing, `ag <ag@localhost>`
/// otherwise; the result says so. `None` when the user set
/// `user.useConfigOnly`, which asks git never to guess.
fn stand_in_identity(repo: &Repo) -> Result<Option<Identity>, ToolError> {
    let only = repo.git(
        ["config", "--type=bool", "--get", "user.useConfigOnly"],
        Cap::whole(4096),
        true,
    )?;
    if only.success() && only.text().trim() == "true" {
        return Ok(None);
    }
    let get = |key: &str, or: &str| -> Result<String, ToolError> {
        let run = repo.git(["config", "--get", key], Cap::whole(4096), true)?;
        let value = run.text().trim().to_string();
        Ok(if run.success() && !value.is_empty() {
            value
        } else {
            or.to_string()
        })
    };
    Ok(Some(Identity {
        name: get("user.name", "ag")?,
        email: get("user.email", "ag@localhost")?,
    }))
}

/// A commit that failed for want of an identity the user requires
/// (`user.useConfigOnly`). A name and email stand for a person, so the
/// model is told to ask rather than make one up, and that the work does
/// not need the commit (a weak model otherwise retries the commit or
/// checks the status again and again).
fn no_identity(staged_note: &str) -> ToolError {
    ToolError::new(
        "git.no_identity",
        format!(
            "nothing was committed: git has no name and email to commit under here (user.name and user.email are not set, and user.useConfigOnly says git must not guess them). {staged_note}, and every change is in the working tree: a change does not need a commit to take effect. Commit only if the user asked for one; then ask them for the name and email to use, which they set with `git config user.name \"Their Name\"` and `git config user.email \"their@address\"` (do not make them up), and commit again."
        ),
    )
}

/// The status of the whole tree, or of the named paths.
fn status_of(repo: &Repo, specs: &[String]) -> Result<status::Status, ToolError> {
    let mut args = vec!["status", "--porcelain=v2", "--branch", "-z", "--"];
    args.extend(specs.iter().map(String::as_str));
    let run = repo.git(&args, Cap::whole(32 << 20), false)?;
    if !run.success() {
        return Err(ToolError::new(
            "git.status_failed",
            format!("git status failed: {}", run.said()),
        ));
    }
    Ok(status::parse(&run.stdout.head))
}

fn nothing_staged(
    repo: &Repo,
    message: &str,
    specs: &[String],
    before: &status::Status,
) -> ToolError {
    if !specs.is_empty() {
        // What else changed decides the next step: a commit of other
        // files, or the change itself, still to be made (a weak model
        // commits first, then asks for the status again and again).
        let tree = status_of(repo, &[]);
        let (changed, clean) = match &tree {
            Ok(t) => (changed_files(repo, t, true), t.clean()),
            Err(_) => (Vec::new(), false),
        };
        let next = if let Some(last) = last_commit_of(repo, specs) {
            // Committed already, by the caller's own earlier call as often
            // as not: "make the change first" would send a weak model to
            // make it again. But the last commit may as well be the
            // project's own, from before the task (a weak model commits
            // before it has changed anything), so it is not called the
            // caller's: its age and both readings are given.
            let also = if changed.is_empty() {
                String::new()
            } else {
                format!(
                    " Changed since: {}; to commit those, call {}.",
                    shown_list(&changed),
                    commit_call(message, changed),
                )
            };
            let (them, are) = if specs.len() == 1 {
                ("it", "it is")
            } else {
                ("them", "they are")
            };
            format!(
                " The last commit, {last}, holds {them} as {are} now. If you changed {them} and committed that change, it is committed already: go on with what is left of the task, or give your answer. If you have not changed {them} yet, the change is still to be made: read {them}, change {them}, then commit.{also}",
            )
        } else if clean {
            " The working tree is clean: no file has changed since the last commit, so there is nothing to commit yet. Make the change first, then commit it.".to_string()
        } else if changed.is_empty() {
            " Check action=status for what changed.".to_string()
        } else {
            format!(
                " Changed: {}. To commit those, call {}.",
                shown_list(&changed),
                commit_call(message, changed),
            )
        };
        return ToolError::new(
            "git.nothing_to_commit",
            format!(
                "nothing to commit: {} {} no changes against the last commit.{next}",
                list(specs),
                if specs.len() == 1 { "has" } else { "have" }
            ),
        );
    }
    let changed = changed_files(repo, before, false);
    let hint = if changed.is_empty() {
        "The working tree has no changes either.".to_string()
    } else {
        format!(
            "Changed but not staged: {}. Name the files to commit in `paths` (they are staged for you), as in {}.",
            shown_list(&changed),
            commit_call(message, changed),
        )
    };
    ToolError::new(
        "git.nothing_to_commit",
        format!("nothing to commit: no changes are staged. {hint}"),
    )
}

/// The last commit, as `abc1234 ("its subject", made 3 minutes ago)`, when it changed one of
/// the paths `specs` names; `None` when it did not, or there is none.
fn last_commit_of(repo: &Repo, specs: &[String]) -> Option<String> {
    let mut args = vec![
        "diff-tree",
        "--root",
        "--no-commit-id",
        "--name-only",
        "-r",
        "HEAD",
        "--",
    ];
    args.extend(specs.iter().map(String::as_str));
    let touched = repo.git(&args, Cap::whole(1 << 20), true).ok()?;
    if !touched.success() || touched.stdout.head.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let log = repo
        .git(
            ["log", "-1", "--format=%h%x00%s%x00%ct", "HEAD"],
            Cap::whole(64 << 10),
            true,
        )
        .ok()?;
    let text = String::from_utf8_lossy(&log.stdout.head);
    let mut fields = text.trim_end().splitn(3, '\0');
    let (hash, subject) = (fields.next()?, fields.next()?);
    let age = fields
        .next()
        .and_then(|t| t.trim().parse::<i64>().ok())
        .map(|at| {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(at, |d| d.as_secs() as i64);
            format!(", made {}", ago(now - at))
        })
        .unwrap_or_default();
    Some(format!("{hash} (\"{subject}\"{age})"))
}

/// `secs` as a person says how long ago something was: "40 seconds ago",
/// "3 hours ago". A commit dated in the future (a clock set wrong) is
/// "just now".
fn ago(secs: i64) -> String {
    let (n, unit) = match secs {
        s if s < 1 => return "just now".to_string(),
        s if s < 120 => (s, "second"),
        s if s < 2 * 3600 => (s / 60, "minute"),
        s if s < 2 * 86400 => (s / 3600, "hour"),
        s => (s / 86400, "day"),
    };
    format!("{n} {unit}{} ago", if n == 1 { "" } else { "s" })
}

/// The files of `status` changed and not committed, as the caller names
/// them: those not staged and the untracked ones, and the staged ones too
/// when `staged`.
fn changed_files(repo: &Repo, status: &status::Status, staged: bool) -> Vec<String> {
    let staged = staged.then_some(&status.staged).into_iter().flatten();
    staged
        .chain(&status.unstaged)
        .map(|e| repo.show(&e.path))
        .chain(status.untracked.iter().map(|p| repo.show(p)))
        .collect()
}

/// The caller's own commit call, with (at most ten of) the repository's
/// changed `files` as its paths.
fn commit_call(message: &str, mut files: Vec<String>) -> serde_json::Value {
    files.truncate(10);
    serde_json::json!({"action": "commit", "message": message, "paths": files})
}

/// `files` as a list of at most ten, with `...` for the rest.
fn shown_list(files: &[String]) -> String {
    let shown = files
        .iter()
        .take(10)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if files.len() > 10 {
        format!("{shown}, ...")
    } else {
        shown
    }
}

fn shown(repo: &Repo, e: &Entry) -> serde_json::Value {
    let mut v = json!({"path": repo.show(&e.path), "status": e.status});
    if let Some(from) = &e.from {
        v["from"] = json!(repo.show(from));
    }
    v
}

fn combined(stdout: &str, stderr: &str) -> String {
    match (stdout.trim().is_empty(), stderr.trim().is_empty()) {
        (false, false) => format!("{}\n{}", stdout.trim_end(), stderr.trim_end()),
        (true, false) => stderr.trim_end().to_string(),
        _ => stdout.trim_end().to_string(),
    }
}

fn list(specs: &[String]) -> String {
    specs
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::ago;

    #[test]
    fn ages_read_as_a_person_says_them() {
        assert_eq!(ago(-5), "just now");
        assert_eq!(ago(0), "just now");
        assert_eq!(ago(1), "1 second ago");
        assert_eq!(ago(119), "119 seconds ago");
        assert_eq!(ago(120), "2 minutes ago");
        assert_eq!(ago(2 * 3600 - 1), "119 minutes ago");
        assert_eq!(ago(2 * 3600), "2 hours ago");
        assert_eq!(ago(3 * 86400), "3 days ago");
    }
}
