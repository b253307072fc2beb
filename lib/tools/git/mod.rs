//! `git`: status, diff, commit and log of the repository around the working
//! directory, as readable text for the model and structured details for
//! programs. Everything goes through the git command line, so the user's
//! config, identity and hooks apply; nothing is ever pushed.

pub mod cmd;
pub mod commit;
pub mod diff;
pub mod log;
pub mod status;

use clap::Args;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::tool_protocol::{Context, Tool, ToolError, ToolOutput};
use cmd::{Cap, Repo, pathspec};

/// What a call does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum GitAction {
    // Branch, upstream, staged, unstaged, untracked and conflicted files.
    Status,
    // The unstaged changes, or with `staged` the staged ones.
    Diff,
    // Commit `paths` (staged for you) or what is staged, with `message`.
    Commit,
    // The latest commits.
    Log,
}

/// Arguments of `git`.
#[derive(Debug, Clone, Args, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitArgs {
    /// `status`: the branch, its upstream (ahead/behind) and the staged, unstaged, untracked and conflicted files. `diff`: the unstaged changes as a unified diff (with `staged`: the staged ones). `commit`: commit with `message`; with `paths`, stages those files (new, changed or deleted) and commits exactly them; without, commits what is staged. `log`: the latest `count` commits.
    #[arg(value_enum, value_name = "ACTION")]
    #[schemars(description = "")]
    pub action: GitAction,
    /// Files or directories, relative to the working directory: what to commit, or what to limit status, diff and log to.
    #[arg(value_name = "PATH")]
    #[serde(default)]
    #[schemars(description = "")]
    pub paths: Vec<String>,
    /// For `commit`: the commit message, a short summary line, then optionally a blank line and details.
    #[arg(short, long)]
    #[serde(default)]
    #[schemars(description = "")]
    pub message: Option<String>,
    /// For `diff`: show the staged changes (what would be committed) instead of the unstaged ones.
    #[arg(long)]
    #[serde(default)]
    #[schemars(description = "")]
    pub staged: bool,
    /// For `log`: how many commits, newest first (default 10, at most 500).
    #[arg(short = 'n', long)]
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    #[schemars(description = "")]
    pub count: Option<u32>,
}

/// The `git` tool.
pub struct GitTool;

impl Tool for GitTool {
    type Args = GitArgs;
    const NAME: &'static str = "git";
    const BIN: &'static str = "ag-git";
    const ABOUT: &'static str = "Git status, diff, commit and log as structured results";
    const LABEL: &'static str = "Git";
    const DESCRIPTION: &'static str = "Git for the repository around the working directory. \
action=status: the branch, how far it is ahead of or behind its upstream, and the staged, unstaged, untracked and conflicted files. \
action=diff: the unstaged changes as a unified diff; staged=true shows the staged ones instead; limit it with paths. \
Diffs over 100 KiB keep their start and end, and a note in between lists every file's line counts. \
action=commit with message: with paths, stages those files (new, changed or deleted) and commits exactly them; \
without paths, commits what is already staged. It refuses when there is nothing to commit. \
Hooks run as they would for the user; if one fails, nothing is committed and its output says why. It never pushes. \
action=log: the latest commits (count, default 10), optionally only those touching paths. \
A field of another action (staged or count on a commit, message on status, diff or log) is set aside, and a note in the result says so.";
    const MODEL_DESCRIPTION: &'static str = "Git in this repository, never pushing: status; diff (staged for the staged changes); commit with message (with paths, stages and commits exactly those); log (count commits). paths limits diff and log.";

    fn run(ctx: &Context, args: GitArgs) -> Result<ToolOutput, ToolError> {
        let ignored = check_arguments(&args)?;
        let specs = args
            .paths
            .iter()
            .map(|p| pathspec(ctx, p))
            .collect::<Result<Vec<_>, _>>()?;
        let repo = Repo::discover(ctx)?;
        let result = match args.action {
            GitAction::Status => status(&repo, &specs),
            GitAction::Diff => diff::diff(&repo, args.staged, &specs),
            GitAction::Commit => {
                let message = args.message.as_deref().ok_or_else(|| {
                    ToolError::new(
                        "git.missing_message",
                        format!(
                            "`commit` needs `message`, a short summary of what the commit changes; nothing was committed. Add it to this call: {}",
                            shown_call(&args)
                        ),
                    )
                })?;
                commit::commit(&repo, message, &specs)
            }
            GitAction::Log => log::log(&repo, args.count, &specs),
        };
        let unknown = match args.action {
            GitAction::Commit => None,
            action => unknown_paths(ctx, &repo, &args.paths, &specs, action),
        };
        result.map(|out| out.with_notes(ignored).with_notes(unknown))
    }
}

/// The most `paths` looked up for [`unknown_paths`].
const UNKNOWN_LOOKED_AT: usize = 16;

/// The `paths` of a status, diff or log that name nothing: no file or
/// directory there, and nothing git has in the index or at HEAD. Such a
/// path narrows the answer to nothing, which reads as "clean" (a small
/// model passed a misspelt name, and the branch's name, as `paths`).
fn unknown_paths(
    ctx: &Context,
    repo: &Repo,
    given: &[String],
    specs: &[String],
    action: GitAction,
) -> Option<String> {
    let mut unknown = Vec::new();
    // Two git commands a path at most: a call with a thousand paths that
    // are not on disk is looked at for its first few.
    for (g, spec) in given.iter().zip(specs).take(UNKNOWN_LOOKED_AT) {
        let Ok(p) = ctx.resolve(g) else { continue };
        if std::fs::symlink_metadata(&p).is_ok() {
            continue;
        }
        // A repository without commits has no HEAD to look in: no note.
        let known = repo
            .git(
                ["ls-files", "--with-tree=HEAD", "--", spec.as_str()],
                Cap::whole(4096),
                true,
            )
            .map_or(true, |r| !r.success() || !r.stdout.head.is_empty());
        if known {
            continue;
        }
        let branch = repo
            .git(
                [
                    "rev-parse",
                    "--verify",
                    "--quiet",
                    &format!("refs/heads/{g}"),
                ],
                Cap::whole(256),
                true,
            )
            .is_ok_and(|r| r.success());
        unknown.push(if branch {
            format!("`{g}` (a branch, not a path)")
        } else {
            format!("`{g}`")
        });
    }
    let (last, rest) = unknown.split_last()?;
    let listed = if rest.is_empty() {
        format!("{last} names")
    } else {
        format!("{} and {last} name", rest.join(", "))
    };
    Some(format!(
        "{listed} no file or directory here, and nothing git has: this {} says nothing about {}. Give paths that exist, or leave out `paths` for the whole repository.",
        action_name(action),
        if rest.is_empty() { "it" } else { "them" }
    ))
}

fn status(repo: &Repo, specs: &[String]) -> Result<ToolOutput, ToolError> {
    let mut args = vec!["status", "--porcelain=v2", "--branch", "-z", "--"];
    args.extend(specs.iter().map(String::as_str));
    let run = repo.git(&args, Cap::whole(32 << 20), true)?;
    if !run.success() {
        return Err(ToolError::new(
            "git.status_failed",
            format!("git status failed: {}", run.said()),
        ));
    }
    let mut st = status::parse(&run.stdout.head);
    st.map_paths(|p| repo.show(p));
    // A path that is the top of the tree (`.` run there) narrows nothing.
    let narrowed = !specs.is_empty()
        && !specs
            .iter()
            .any(|s| repo.cwd.join(s).canonicalize().ok() == repo.toplevel.canonicalize().ok());
    let mut output = status::render(&st, narrowed);
    if let Some(next) = status::next_step(&st, crate::tools::offer::model_tools().as_deref()) {
        output.push_str(&next);
        output.push('\n');
    }
    let too_long = run
        .stdout
        .truncated()
        .then(|| "The status was too long to read whole; pass `paths` to narrow it.".to_string());
    let clean = st.clean();
    let counts = json!({
        "staged": st.staged.len(),
        "unstaged": st.unstaged.len(),
        "untracked": st.untracked.len(),
        "conflicted": st.conflicted.len(),
    });
    st.staged.truncate(status::MAX_DETAIL_ENTRIES);
    st.unstaged.truncate(status::MAX_DETAIL_ENTRIES);
    st.untracked.truncate(status::MAX_DETAIL_ENTRIES);
    st.conflicted.truncate(status::MAX_DETAIL_ENTRIES);
    let mut details = json!({"action": "status"});
    if let (serde_json::Value::Object(d), Ok(serde_json::Value::Object(s))) =
        (&mut details, serde_json::to_value(&st))
    {
        d.extend(s);
    }
    details["clean"] = json!(clean);
    details["counts"] = counts;
    details["root"] = json!(repo.toplevel.display().to_string());
    Ok(ToolOutput::new(output, details).with_notes(too_long))
}

/// The call as the model sent it, in its own values, for a message.
fn shown_call(args: &GitArgs) -> String {
    let mut call = serde_json::Map::new();
    call.insert("action".into(), json!(action_name(args.action)));
    if let Some(m) = &args.message {
        call.insert("message".into(), json!(m));
    }
    if !args.paths.is_empty() {
        call.insert("paths".into(), json!(args.paths));
    }
    serde_json::Value::Object(call).to_string()
}

fn action_name(action: GitAction) -> &'static str {
    match action {
        GitAction::Status => "status",
        GitAction::Diff => "diff",
        GitAction::Commit => "commit",
        GitAction::Log => "log",
    }
}

/// Arguments that belong to another action are set aside, and a note says
/// so: small models fill every field of a schema, and refusing
/// `{"action":"commit","message":"...","staged":true}` only made them
/// repeat it. Ignoring one cannot do what the model did not mean: `staged`
/// and `count` only shape what diff and log show, and a commit without
/// `paths` commits what is staged anyway; `message` beside a read-only
/// action commits nothing, and the note says how to commit.
fn check_arguments(args: &GitArgs) -> Result<Option<String>, ToolError> {
    let mut stray = Vec::new();
    if let (Some(m), false) = (&args.message, args.action == GitAction::Commit) {
        stray.push(format!("`message: {}`", json!(m)));
    }
    if args.staged && args.action != GitAction::Diff {
        stray.push("`staged: true`".to_string());
    }
    if let (Some(n), false) = (args.count, args.action == GitAction::Log) {
        stray.push(format!("`count: {n}`"));
    }
    if stray.is_empty() {
        return Ok(None);
    }
    let action = action_name(args.action);
    let them = if stray.len() == 1 {
        "it is"
    } else {
        "they are"
    };
    let nothing_committed = match &args.message {
        Some(m) if args.action != GitAction::Commit => format!(
            " Nothing was committed; to commit, call {}.",
            json!({"action": "commit", "message": m})
        ),
        _ => String::new(),
    };
    Ok(Some(format!(
        "Set aside {}: {them} not used by `{action}`.{nothing_committed}",
        stray.join(", "),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_is_consistent() {
        crate::tool_protocol::tool_command::<GitTool>().debug_assert();
    }

    #[test]
    fn stray_arguments_are_set_aside_with_a_note() {
        let args: GitArgs =
            serde_json::from_value(json!({"action": "status", "message": "x", "count": 1}))
                .unwrap();
        let note = check_arguments(&args).unwrap().unwrap();
        assert!(note.contains("`message: \"x\"`, `count: 1`"), "{note}");
        assert!(
            note.contains(r#"to commit, call {"action":"commit","message":"x"}"#),
            "{note}"
        );
        let args: GitArgs = serde_json::from_value(
            json!({"action": "commit", "message": "x", "staged": true, "count": 1}),
        )
        .unwrap();
        let note = check_arguments(&args).unwrap().unwrap();
        assert_eq!(
            note,
            "Set aside `staged: true`, `count: 1`: they are not used by `commit`."
        );
        let args: GitArgs =
            serde_json::from_value(json!({"action": "diff", "staged": true})).unwrap();
        assert_eq!(check_arguments(&args).unwrap(), None);
    }
}
