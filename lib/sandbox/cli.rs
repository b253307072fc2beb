//! `ag-sandbox`: the command line. Runs one command confined, attached to
//! the terminal like `bwrap` or `sandbox-exec`, and exits with its status;
//! a denial it can attribute is named on stderr after the command ends.

use super::ConfineCommand;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use super::{Enforcement, Mode, Policy};
use crate::cli::{ExitStatus, error_line};
use crate::proc::{self, Status};

const BIN: &str = "ag-sandbox";

/// Run a command confined by the kernel (Landlock, seccomp): it writes only
/// in the workspace, reads all but the deny list, and has no network unless
/// allowed. No root, no namespaces.
#[derive(Debug, Parser)]
#[command(
    name = "ag-sandbox",
    version,
    long_about = LONG_ABOUT,
    after_help = AFTER_HELP,
)]
pub struct Args {
    /// How much the command may write: `workspace-write` (the workspace,
    /// the --write directories and a private $TMPDIR) or `read-only`
    /// (nothing but /dev/null-style devices).
    #[arg(
        long,
        value_enum,
        default_value = "workspace-write",
        value_name = "MODE"
    )]
    pub mode: Mode,
    /// The workspace (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Also allow writes beneath DIR (repeatable; workspace-write only).
    #[arg(long, value_name = "DIR")]
    pub write: Vec<PathBuf>,
    /// Also deny reading PATH and all beneath it (repeatable), on top of the
    /// default deny list.
    #[arg(long, value_name = "PATH")]
    pub deny_read: Vec<PathBuf>,
    /// Allow the network (TCP, UDP, raw sockets).
    #[arg(long)]
    pub net: bool,
    /// `auto` confines where the kernel can and otherwise warns and runs
    /// unconfined; `require` refuses to run unconfined (exit 2); `off` runs
    /// unconfined.
    #[arg(long, value_enum, default_value = "auto", value_name = "WHEN")]
    pub sandbox: Enforcement,
    /// The command and its arguments (after `--`).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    pub command: Vec<OsString>,
}

const LONG_ABOUT: &str = "\
Runs CMD confined by the kernel, with no root and no namespaces, so it works inside containers \
whose seccomp profile forbids user namespaces. Landlock (ABI 3 or later, Linux 6.2) keeps writes \
to the workspace, the --write directories, a private $TMPDIR (removed afterwards; by the next run when ag-sandbox was killed outright) and \
/dev/null-style devices (/dev/null, /dev/zero, /dev/full, /dev/random, /dev/urandom, /dev/tty, \
/dev/ptmx, /dev/pts); in read-only mode only the devices are writable. Everything is readable \
except the deny list: ~/.ssh, ~/.gnupg, ~/.aws, ~/.azure, ~/.config/gcloud, ~/.config/gh, ~/.kube, \
~/.netrc, ~/.git-credentials, ~/.docker/config.json, shell histories (bash, zsh, fish, python) \
and $AG_HOME/models.json, plus each --deny-read (names in a denied directory can still be \
listed, contents not read; a listed path that does not exist when CMD starts is left out). The network is off unless --net: Landlock refuses TCP connect and \
bind, and a seccomp filter refuses creating AF_INET, AF_INET6 and AF_PACKET sockets (so UDP and \
raw sockets too) and io_uring; Unix sockets stay allowed. Making a file setuid or setgid (chmod) and \
setting extended attributes (file capabilities) are refused with or without --net (the latter as not supported, so \
that sed -i and cp -a keep the mode alone without a warning). no_new_privs is set, so setuid \
binaries gain nothing. Children, background jobs and processes that leave the session \
(setsid, nohup) stay confined, and what is still running when CMD ends is ended with it (killed), \
so that nothing confined outlives the checks below. The confined command sees its policy as JSON \
in $AG_SANDBOX.

A write to .git/hooks, or a change to .git/config that makes git run a command (core.hooksPath, \
core.fsmonitor, filters, ! aliases, includes, ...), is undone when CMD ends and reported on \
stderr: a hook planted now would run later, outside the sandbox. Watched are the workspace's \
repository and those one level below it (DIR/*/.git), with their submodules, including \
repositories CMD creates there.

When a permission error in CMD's output cannot be told apart from the command's own failure, \
ag-sandbox says nothing: it does not capture the output. ag-bash --sandbox does, and names the \
denied operation. AG_SANDBOX_UNAVAILABLE=1 makes ag-sandbox act as on a kernel without Landlock \
(for tests).";

const AFTER_HELP: &str = "\
Exit status: CMD's own status (128+N when killed by signal N); 2 when ag-sandbox could not run \
it (usage, a policy it cannot set up, --sandbox require on a kernel that cannot enforce the \
policy, CMD not found).";

/// Runs ag-sandbox with the process's arguments.
pub fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => return ExitStatus::from_clap(e, BIN).code(),
    };
    run(args)
}

fn run(args: Args) -> ExitCode {
    let workspace = match args
        .workspace
        .clone()
        .map_or_else(std::env::current_dir, Ok)
    {
        Ok(w) => w,
        Err(e) => {
            error_line(
                BIN,
                &format!("cannot tell the current directory: {e}"),
                None,
            );
            return ExitStatus::Input.code();
        }
    };
    let mut policy = Policy::new(args.mode, workspace.clone());
    policy.write = args.write.clone();
    policy.deny_read.extend(args.deny_read.iter().cloned());
    policy.net = args.net;
    let prepared = match super::prepare(&policy, args.sandbox) {
        Ok(p) => p,
        Err(e) => {
            let hint = match &e {
                super::Error::Unavailable(_) => {
                    Some("`--sandbox auto` runs it unconfined with a warning")
                }
                _ => None,
            };
            error_line(BIN, &e.to_string(), hint);
            return ExitStatus::Input.code();
        }
    };
    let Some((program, rest)) = args.command.split_first() else {
        error_line(BIN, "no command given", Some("Try `ag-sandbox --help`"));
        return ExitStatus::Input.code();
    };
    let guard = prepared
        .as_ref()
        .filter(|p| p.policy().mode == Mode::WorkspaceWrite)
        .map(|p| super::HooksGuard::snapshot(&p.policy().workspace));
    let mut cmd = proc::Command::new(program).args(rest);
    if let Some(p) = &prepared {
        cmd = cmd.sandbox(p);
        // What the command leaves running outside its group (setsid) comes
        // back here when its parents end, and is ended with it: else it
        // could plant a hook once the guard has looked.
        let _ = proc::adopt_orphans();
    }
    let result = cmd.run_attached();
    if prepared.is_some() {
        proc::end_adopted(0);
    }
    if let Some(g) = guard {
        for c in g.restore() {
            let undone = if c.undone {
                "undone".to_string()
            } else {
                format!(
                    "NOT undone: {}",
                    c.error.as_deref().unwrap_or("unknown error")
                )
            };
            crate::cli::warn(
                BIN,
                &format!(
                    "blocked by the sandbox: `{}` was {} during the command ({undone})",
                    c.path.display(),
                    c.change
                ),
            );
        }
    }
    drop(prepared);
    match result {
        Ok(Status::Exited(c)) => ExitCode::from(u8::try_from(c & 0xff).unwrap_or(1)),
        Ok(Status::Signaled(n)) => ExitStatus::Signal(n).code(),
        Err(e) => {
            error_line(BIN, &e.to_string(), None);
            ExitStatus::Input.code()
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        super::Args::command().debug_assert();
    }
}
