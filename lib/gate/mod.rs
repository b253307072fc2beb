//! `ag-gate`, the default gate in front of every tool call: a classifier
//! that finds dangerous bash commands and file-tool calls that write outside
//! the working directory, a policy (approval mode, allow and deny lists,
//! rules from a config file) that turns its findings into a decision, and
//! the command line that answers gate requests on stdin.

mod bash;
pub mod cli;
mod commands;
pub mod config;
mod files;
mod git;
mod glob;
pub mod net;
pub mod place;
pub mod policy;
mod runtime;
pub mod sandboxed;
pub mod shell;
mod wrappers;

pub use bash::{analyse_bash_call, analyse_command};
pub use config::Approval;
pub use files::analyse_file_call;
pub use policy::Policy;

use std::path::PathBuf;

use config::ConfigError;

/// A kind of dangerous action the classifier recognises. Each has the short
/// reason a decision carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Danger {
    /// `rm -r`, `find -delete`, `find -exec rm`, `xargs rm`, `rsync --delete`,
    /// `delete` with `recursive`.
    RecursiveDelete,
    /// `git push --force`, `+refspec`, `--mirror`.
    ForcePush,
    /// `git push --delete`, `:branch`, `--prune`.
    RemoteDelete,
    /// `git branch -D`, `git update-ref -d`.
    BranchDelete,
    /// `git reset --hard`.
    HardReset,
    /// `git clean -f`.
    GitClean,
    /// `git checkout -- .`, `git restore .`, `git switch --discard-changes`.
    DiscardChanges,
    /// `git stash drop`, `git stash clear`.
    StashDrop,
    /// `git reflog expire`, `git gc --prune=now`, `git prune`,
    /// `git filter-branch`: the history that could bring work back.
    HistoryLoss,
    /// `curl ... | sh`, `bash <(curl ...)`, `sh -c "$(wget -O- ...)"`.
    PipeToShell,
    /// `base64 -d x | sh`, `echo "$X" | bash`: a script the classifier cannot read.
    PipedScript,
    /// `sudo`, `su`, `doas`, `pkexec`, `run0`.
    Privilege,
    /// `mkfs`, `fdisk`, `parted`, `wipefs`, `dd of=/dev/sda`.
    DiskTool,
    /// `chmod -R 777`.
    WorldWritable,
    /// `chown -R`, `chgrp -R`.
    RecursiveChown,
    /// `shutdown`, `reboot`, `poweroff`, `halt`, `systemctl reboot`.
    Shutdown,
    /// `:(){ :|:& };:`.
    ForkBomb,
    /// A write or redirection to a path outside the working directory.
    WriteOutside,
    /// A delete or move of a path outside the working directory.
    DeleteOutside,
    /// Commands nested deeper than the classifier reads.
    TooDeep,
    /// Code put together at run time, which cannot be read before it runs:
    /// `$(echo rm) -rf /`, `$cmd`, `eval "$x"`, `bash -c "$x"`,
    /// `source <(base64 -d x)`, `git -c core.hooksPath=h commit`.
    Unchecked,
    /// A write to `.git/hooks/` or `.git/config`: code git runs later.
    GitHooks,
    /// `kill -9 -1`, `killall5`, `pkill -u me`: every process in reach.
    KillAll,
    /// `crontab -r`, `crontab file`: replaces or removes the user's crontab.
    Crontab,
    /// ag-browser's `evaluate`: JavaScript run in a page, with the page's
    /// rights (its cookies, its forms, its requests).
    PageScript,
}

impl Danger {
    /// The reason a decision carries, before the command or path it is about.
    pub fn reason(self) -> &'static str {
        match self {
            Danger::RecursiveDelete => "recursive delete",
            Danger::ForcePush => "force push",
            Danger::RemoteDelete => "deletes a remote branch",
            Danger::BranchDelete => "force-deletes a branch",
            Danger::HardReset => "git reset --hard discards uncommitted changes",
            Danger::GitClean => "git clean -f deletes untracked files",
            Danger::DiscardChanges => "discards uncommitted changes",
            Danger::StashDrop => "drops stashed changes",
            Danger::HistoryLoss => "deletes or rewrites git history for good",
            Danger::PipeToShell => "runs code downloaded from the network",
            Danger::PipedScript => "runs a script piped in from another command",
            Danger::Privilege => "runs as another user",
            Danger::DiskTool => "disk tool",
            Danger::WorldWritable => "recursive chmod 777",
            Danger::RecursiveChown => "recursive chown",
            Danger::Shutdown => "shutdown or reboot",
            Danger::ForkBomb => "fork bomb",
            Danger::WriteOutside => "write outside the working directory",
            Danger::DeleteOutside => "delete outside the working directory",
            Danger::TooDeep => "commands nested too deeply to check",
            Danger::Unchecked => "runs code that cannot be checked before it runs",
            Danger::GitHooks => "changes git's hooks or settings, which run commands later",
            Danger::KillAll => "kills every process it can reach",
            Danger::Crontab => "replaces or removes the user's crontab",
            Danger::PageScript => "runs JavaScript in the browser's page",
        }
    }
}

/// One dangerous thing found in a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// What kind of danger.
    pub danger: Danger,
    /// The command (for bash) or path (for file tools) it is about.
    pub detail: String,
    /// For bash: the index of the simple command in [`Analysis::segments`].
    pub segment: Option<usize>,
    /// The path written, when the danger is about one.
    pub path: Option<PathBuf>,
}

impl Finding {
    /// "recursive delete: `rm -rf build`".
    pub fn describe(&self) -> String {
        let mut text = format!("{}: `{}`", self.danger.reason(), self.detail);
        // `cd /etc && echo x > passwd`: say where the write lands.
        if let Some(path) = self
            .path
            .as_ref()
            .filter(|_| matches!(self.danger, Danger::WriteOutside | Danger::DeleteOutside))
        {
            let shown = path.to_string_lossy();
            // Already there as a word of its own (`echo x >/etc/y`), not as
            // the tail of a relative path (`../../etc/y`).
            let named = self.detail.match_indices(shown.as_ref()).any(|(at, _)| {
                self.detail[..at]
                    .chars()
                    .next_back()
                    .is_none_or(|c| c.is_whitespace() || "<>=:'\"".contains(c))
            });
            if !named {
                text.push_str(&format!(" (`{shown}`)"));
            }
        }
        text
    }
}

/// What the classifier found in one call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    /// The dangers, in the order found.
    pub findings: Vec<Finding>,
    /// For bash: every simple command the line runs, nested ones included,
    /// as its words joined by spaces (`rm -rf build`, `echo x >/etc/y`).
    /// Config rules with a `command` regex match these.
    pub segments: Vec<String>,
    /// The paths the call writes or deletes (absolute, normalised), as far
    /// as the classifier can tell. Config rules with a `path` match these.
    pub paths: Vec<PathBuf>,
}

/// The policy `ag-gate` applies when run without flags: the config file
/// `$AG_HOME/gate.toml` when there is one, else the built-in defaults.
pub fn default_policy() -> Result<Policy, ConfigError> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let config = match config::default_path() {
        Some(path) => config::load(&path, home.as_deref())?,
        None => config::Config::default(),
    };
    Ok(Policy::new(None, &[], &[], config))
}
