//! `ag-gate`: the command line. Reads gate requests on stdin (one JSON
//! object per line, or one object spread over several lines) and answers a
//! decision per request on stdout.

use std::io::{self, BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use super::config::Approval;
use super::config::{self, Config};
use super::policy::Policy;
use crate::cli::{ExitStatus, Stdout, error_line, warn};
use crate::protocol::GateDecision;

const BIN: &str = "ag-gate";
/// The most text and lines one request spread over several lines may
/// take before its first line is given up on as garbage.
const MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;
const MAX_REQUEST_LINES: usize = 10_000;

/// The default gate in front of every tool call: allow, deny or ask.
#[derive(Debug, Parser)]
#[command(
    name = "ag-gate",
    version,
    long_about = LONG_ABOUT,
    after_help = "Exit status: 0 success (every request answered, invalid ones denied), 2 usage or config error."
)]
pub struct Args {
    /// When to ask a person: `never` allows everything not denied,
    /// `dangerous` asks for the calls the classifier flags, `always` asks
    /// for every call not allowed. Default: the config file's `approval`,
    /// else `dangerous` when the request says `interactive`, `never` otherwise.
    #[arg(long, value_enum, value_name = "MODE")]
    pub approval: Option<Approval>,
    /// Tools always allowed, comma-separated (`read,grep,find,ls`).
    #[arg(long, value_name = "TOOLS", value_delimiter = ',')]
    pub allow: Vec<String>,
    /// Tools always denied, comma-separated; the model is told to do
    /// without them.
    #[arg(long, value_name = "TOOLS", value_delimiter = ',')]
    pub deny: Vec<String>,
    /// Read rules from FILE (TOML) instead of `$AG_HOME/gate.toml`.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Read no config file, not even `$AG_HOME/gate.toml`.
    #[arg(long, conflicts_with = "config")]
    pub no_config: bool,
}

const LONG_ABOUT: &str = "\
ag-loop runs its gates before each tool call; without --gate it applies ag-gate's policy itself, \
in-process, with the same config file (read once, at start). A gate reads the call as one JSON object on stdin, \
{\"tool\": \"bash\", \"arguments\": {...}, \"cwd\": \"/project\", \"session_id\": \"...\", \
\"tool_call_id\": \"...\", \"interactive\": true}, and answers one JSON object on stdout: \
{\"decision\": \"allow\"}, {\"decision\": \"deny\", \"reason\": \"...\"} (the reason goes to the model) or \
{\"decision\": \"ask\", \"reason\": \"...\"} (a person must approve). Every decision ag-gate gives \
carries its reason, an allow too. ag-gate answers every request of \
its stdin, one per line (an object may also span several lines). A request that cannot be read \
is denied with a reason saying so (a line longer than 64 MiB with \"line too long\", without being \
held in memory); ag-gate never stops on bad input.

Approval modes (--approval): never allows everything that is not denied; dangerous asks for the \
calls the classifier flags and the `ask` rules match; always asks for every call that the allow \
list or `allow` rules do not cover. Without --approval the config file's `approval` applies, and \
without that the mode is `dangerous` when the request says \"interactive\": true (ag-loop on a \
terminal, or a JSONL client that answers approvals) and `never` otherwise.

Order of precedence: (1) a tool on the deny list (--deny, config `deny`) or a matching `deny` \
rule is denied; (2) a tool on the allow list (--allow, config `allow`) is allowed; (3) a matching \
`ask` rule, or a classifier finding that no `allow` rule covers, is asked (under `never`: allowed \
with \"not_asked\": true, the reason kept in the decision, and ag-loop leaves a `note` event \
with it); (4) under `always` every other call is asked unless `allow` \
rules cover it; (5) the rest is allowed. Tool names match with or without the `ag-` prefix.

Fetch: a `fetch` call is judged by the host of its `url`, after the deny and allow lists: a host \
--allow-host names (ag-loop's built-in gate: ag-loop's --allow-host and allow_hosts, `*` with \
--allow-net) is allowed; another host is asked, and denied under `never`, since nobody is there to \
say yes to a host the policy does not name. Where a host's addresses lead (loopback, private, \
169.254.169.254) the tool checks itself when it connects.

With the sandbox: a request whose \"sandbox\" says the call runs in ag-loop's sandbox ({\"mode\": \"workspace-write\" or \"read-only\", \"workspace\": \"/project\", \"net\": false}) does not ask about what the kernel stops: recursive deletes, writes and deletes outside the working directory, disk tools, crontab, writes to .git/hooks and .git/config, and (without net) `curl | sh`; in read-only mode also the git commands that drop work. Force pushes, sudo, chmod -R 777, chown -R, kill -9 -1, shutdown, fork bombs and code that cannot be read are asked as before. A request whose sandbox also says \"blocked\": \"...\" asks whether a call the sandbox blocked may run again outside it: asked whatever the allow lists say, denied under never.

The classifier flags bash commands (tool `bash`, `arguments.command`) that: delete recursively \
(rm -r/-R/--recursive, find -delete, find -exec rm, xargs rm, rsync --delete); force push (git push -f, \
--force, --force-with-lease, --mirror, +refspec); delete a remote branch (git push --delete, \
:branch); discard work (git reset --hard, git clean -f, git checkout -- PATHS / . / -f, \
git restore PATHS without --staged, git switch --discard-changes, git stash drop/clear, \
git branch -D, git update-ref -d); delete or rewrite git history for good (git reflog expire/delete, \
git gc --prune=now, git prune, git filter-branch, git filter-repo); run code downloaded from the \
network (curl/wget ... | sh, bash <(curl ...), sh -c \"$(curl ...)\"); pipe into a shell a script \
that cannot be read before it runs (base64 -d x | sh, echo \"$X\" | bash; echo 'cmd' | sh and \
cat <<EOF | sh are read instead); run code that is only put together when the line runs, which \
cannot be checked: a command word made by an expansion, a substitution, a glob or a brace list \
($(echo rm) -rf /, `echo rm`, $cmd, \"$@\", rm${IFS}-rf${IFS}/, /bin/r? -rf /, {rm,-rf,/}, the {} of \
find -exec {}; but a variable that only names the directory of a program written out, \
$HOME/bin/tool, is fine), eval, bash -c, su -c, watch, trap or env -S given text that expands \
(eval \"$x\", eval \"$(...)\", sh -c \"make $T\"; but not eval of what a shell set-up program prints, \
eval \"$(ssh-agent -s)\", direnv, pyenv, conda, brew shellenv and the like), a here-document or here-string that expands fed to a shell, \
source, . or a shell reading a process substitution that does more than print text \
(source <(base64 -d x); source <(echo 'cmd') is read) or a script whose name expands (source \"$f\"), \
xargs or parallel running their input as commands (xargs sh -c, xargs -I{} bash -c '{}', parallel \
without a command), variables that load code (LD_PRELOAD, LD_AUDIT, BASH_ENV, ENV, GIT_CONFIG_*), \
git settings that load code (core.hooksPath, include.path, includeIf.*.path, init.templateDir, \
protocol.*.allow, --exec-path=, clone --template, ext:: remotes), and a bash call whose \
`arguments.shell` is not bash or a POSIX shell (python3, fish, a script: the command is not \
bash's language); kill every process in reach \
(kill -1, kill -9 -1, kill -- -1, killall5, pkill -u USER, killall -u USER); replace or remove the \
crontab (crontab -r, -e or FILE; crontab -l is fine); run as another user (sudo, su, doas, \
pkexec, run0); use disk tools (mkfs, mke2fs, mkswap, fdisk, sfdisk, gdisk, parted, wipefs, \
blkdiscard; dd of=/dev/...; listing with -l stays allowed); chmod -R a world-writable mode (777, \
o+w); chown/chgrp -R; shut down or reboot (shutdown, reboot, poweroff, halt, init 0/6, systemctl \
reboot); fork bombs; change git's hooks or settings, which run commands later (a write to .git/hooks/ or \
.git/config, by redirection, cp, tee, ... or by a file tool); and write outside the working directory: redirections (> /etc/x, \
>> ~/.bashrc), tee, cp, mv, install, ln, rsync, touch, mkdir, truncate, sed -i, chmod, chown, rm, \
shred, dd of=, curl -o, wget -O, tar -x -C, unzip -d, git clone, git config --global/--system/--file. \
Paths are resolved against the request's cwd after `cd`, `~`, `$HOME`, `$PWD`, `..` and \
symlinks; temporary directories (/tmp, /var/tmp, /dev/shm, $TMPDIR) and /dev/null-like devices \
count as inside, and a path hidden behind another variable ($OUT) is not flagged. A variable or \
substitution as an argument is fine (ls $HOME, cat $(git ls-files)); as the command word it is not.

The bash call's `arguments.stdin` is read as a script when the command runs what it reads \
(bash, sh -s, source /dev/stdin). Commands are found after ; && || | & and newlines, inside $(...), backticks, <(...), subshells, \
groups, functions, if/while/for bodies, bash -c '...', eval, trap, watch, su -c, sg -c, script -c, \
env -S, here-documents and here-strings fed to a shell, text printed into a shell or source \
(echo 'cmd' | sh, source <(echo 'cmd'), echo 'cmd' | at now), alias definitions, and behind \
/bin/rm, \\rm, 'r'm, $'\\x72m', command, builtin, exec, env, nice, nohup, time, timeout, stdbuf, \
ionice, setsid, flock, xargs, parallel, coproc, strace, ltrace, valgrind, taskset, chrt, chroot, \
faketime, unshare, prlimit, fakeroot, firejail, proxychains, torsocks, xvfb-run, systemd-run, \
sudo and find -exec. Values that a program runs as a shell command are read as commands too: \
git settings given with -c, --config or git config (core.sshCommand, core.pager, core.editor, \
core.fsmonitor, core.gitProxy, core.askPass, sequence.editor, diff.external, diff.*.textconv, \
filter.*.clean/smudge/process, merge.*.driver, credential and gpg helpers, alias.* as a shell \
command after ! and else as a git command line), GIT_SSH_COMMAND, GIT_SSH, GIT_PAGER, GIT_EDITOR, GIT_SEQUENCE_EDITOR, \
GIT_EXTERNAL_DIFF, GIT_ASKPASS, GIT_PROXY_COMMAND, SSH_ASKPASS, PAGER, EDITOR, VISUAL and \
PROMPT_COMMAND (set before a command or exported), git rebase --exec, fetch/pull/clone \
--upload-pack, push --receive-pack, submodule foreach, bisect run, filter-branch's filters, \
difftool --extcmd, ssh -o ProxyCommand/LocalCommand, rsync -e, and tar --to-command, \
--checkpoint-action=exec=, -I/--use-compress-program, --info-script. Text that is only data is \
not flagged: echo \"rm -rf /\", git commit -m \"rm -rf\", grep -r 'git push -f', a here-document \
written to a file.

Not inspected (the classifier does not flag a call for these): the contents of \
scripts and programs run from files (bash script.sh, ./run.sh, source env.sh, make and its \
Makefile, npm/yarn/cargo/pip scripts and build files, a binary just built, git hooks already in \
the repository, files named by git's helper settings such as credential.helper=/path); code for \
other interpreters (python -c, node -e, perl -e, ruby -e, php -r, awk programs with system() or \
redirections, sed's e and w commands, jq, SQL given to psql or sqlite3); aliases and functions \
defined outside the command line (in ~/.bashrc, in an earlier call) and programs put on PATH \
earlier under a harmless name; settings files that programs read (~/.gitconfig, .git/config written \
earlier, ssh_config and ssh -F, editors' and pagers' own commands such as vim -c); commands run \
elsewhere (over ssh, in containers with docker, podman or kubectl exec, on a remote by git push \
hooks, later by cron or systemd timers set up earlier); what a command does to data it is given at \
run time (rm $(cat list), rm $FILES, a path in an unknown variable); deletes and changes through \
programs the classifier has no rule for (docker system prune, kubectl delete, terraform destroy, API calls made with curl -X DELETE); and \
using up resources other than by a fork bomb (filling the disk, endless loops). The gate decides \
when a person is asked; it is not a sandbox.

For the other tools the classifier flags write, edit, multi_edit, delete, patch, apply_patch and \
notebook_edit calls whose `file_path`, `path` or `paths` (or the files named in a patch's \
headers) lie outside the working directory after resolution (.., absolute paths, ~, symlinks) \
or inside .git/hooks/ or at .git/config, and delete calls with \"recursive\": true. Reading tools are never flagged by the classifier.

The config file (--config FILE, else $AG_HOME/gate.toml when it exists; AG_HOME defaults to \
~/.ag) is TOML:

  approval = \"dangerous\"            # default mode; --approval overrides it
  allow = [\"read\", \"grep\", \"find\", \"ls\"]
  deny = [\"web_fetch\"]

  [[rule]]
  command = '^npm publish\\b'        # a regex (Rust regex syntax)
  action = \"deny\"                   # allow, ask or deny
  reason = \"releases are published by CI\"

  [[rule]]
  command = '^rm -rf (target|node_modules|dist)$'
  action = \"allow\"

  [[rule]]
  tool = [\"write\", \"edit\"]         # one name or a list; \"*\" for every tool
  path = \".env*\"                    # a path pattern
  action = \"ask\"
  reason = \"secrets file\"

A rule matches a call when every condition it has holds. `tool` defaults to bash for rules with \
a `command` and to every tool otherwise. `command` is matched against the whole command line and \
against each simple command in it, written as its words after quote removal joined by single \
spaces (`rm -rf build`, `echo x >/tmp/y`), nested ones included; anchor with ^ and $ to match a \
whole command. `path` is matched against the paths a call names (file tools: file_path, path, \
paths, patch headers) or writes (bash: redirections and the commands listed above). Path \
patterns read like .gitignore: without a slash they match a name at any depth (.env*, .git), \
with a leading / or ~/ they match absolute paths (/etc/**, ~/.ssh), otherwise paths relative to \
the working directory (src/**/*.rs); * and ? stay within a directory, ** crosses them, [abc] and \
{a,b} choose, and a pattern that matches a directory matches everything in it. An `allow` rule \
does not open the deny list; it covers the classifier's findings about the commands its regex \
matches and the paths its pattern matches, and under `always` a bash call is allowed when each \
of its commands matches some `allow` rule. `reason` is what the decision carries: the model \
reads it on deny, a person on ask.

Examples:

  $ echo '{\"tool\":\"bash\",\"arguments\":{\"command\":\"rm -rf build\"},\"cwd\":\".\"}' \\
      | ag-gate --approval dangerous
  {\"decision\":\"ask\",\"reason\":\"recursive delete: `rm -rf build`\"}

  $ ag-loop --gate 'ag-gate --allow read,grep,find,ls' \"fix the failing test\"";

/// Runs `ag-gate`.
pub fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => return ExitStatus::from_clap(e, BIN).code(),
    };
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let config_path = if args.no_config {
        None
    } else {
        args.config.clone().or_else(config::default_path)
    };
    let config = match config_path {
        None => Config::default(),
        Some(path) => match config::load(&path, home.as_deref()) {
            Ok(c) => c,
            Err(e) => {
                error_line(
                    BIN,
                    &e.to_string(),
                    Some("fix the file (the format is in `man ag-gate`), or pass `--no-config`"),
                );
                return ExitStatus::Input.code();
            }
        },
    };
    let policy = Policy::new(args.approval, &args.allow, &args.deny, config);
    if io::stdin().is_terminal() {
        warn(
            BIN,
            "reading gate requests from the terminal, one JSON object per line (Ctrl-D to end); see --help",
        );
    }
    match serve(&policy, io::stdin().lock(), Stdout::new()) {
        Ok(()) => ExitStatus::Success.code(),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitStatus::Success.code(),
        Err(e) => {
            error_line(BIN, &format!("I/O error: {e}"), None);
            ExitStatus::Input.code()
        }
    }
}

/// Answers every request of `input`. A request is one line, or several
/// lines when the first opens a JSON object that a later one closes; lines
/// that never make a request are each denied. Fails only when the output
/// cannot be written.
pub fn serve(policy: &Policy, mut input: impl BufRead, mut output: impl Write) -> io::Result<()> {
    use crate::tool_protocol::serve::{InputLine, MAX_LINE_BYTES, read_line_capped};
    let mut pending = Pending::default();
    while let Some(line) = read_line_capped(&mut input, MAX_LINE_BYTES)? {
        let line = match line {
            InputLine::Line(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            InputLine::TooLong { bytes, .. } => {
                // Counted, not kept, and denied. It cannot finish a request
                // the lines before it began: those are answered first.
                pending.settle(policy, true, &mut output)?;
                let decision = GateDecision::Deny {
                    reason: format!(
                        "line too long: the request is {bytes} bytes, over ag-gate's {} MiB limit, so it was not read and the call is denied",
                        MAX_LINE_BYTES >> 20
                    ),
                };
                write_decision(&mut output, &decision)?;
                continue;
            }
        };
        if pending.lines.is_empty() && line.trim().is_empty() {
            continue;
        }
        pending.push(line);
        pending.settle(policy, false, &mut output)?;
    }
    pending.settle(policy, true, &mut output)
}

/// Lines read but not answered yet, with how much each one opens (`{`, `[`)
/// or closes outside strings. JSON strings never span lines, so a line's
/// balance does not depend on the lines before it.
#[derive(Default)]
struct Pending {
    lines: Vec<String>,
    balance: Vec<i64>,
    bytes: usize,
}

impl Pending {
    fn push(&mut self, line: String) {
        self.balance.push(balance(&line));
        self.bytes += line.len() + 1;
        self.lines.push(line);
    }

    fn remove_first(&mut self) -> String {
        self.balance.remove(0);
        let line = self.lines.remove(0);
        self.bytes -= line.len() + 1;
        line
    }

    /// Answers what the pending lines hold: a whole request, or the first
    /// line as garbage (then tries again from the next one). With `at_end`
    /// nothing more will come, so an unfinished request is garbage too.
    fn settle(&mut self, policy: &Policy, at_end: bool, output: &mut impl Write) -> io::Result<()> {
        while !self.lines.is_empty() {
            let opens_object = self.lines[0].trim_start().starts_with(['{', '[']);
            let full = self.bytes >= MAX_REQUEST_BYTES || self.lines.len() >= MAX_REQUEST_LINES;
            let closed = self.balance.iter().sum::<i64>() <= 0;
            if opens_object && !closed && !full && !at_end {
                return Ok(());
            }
            let text = self.lines.join("\n");
            let parsed = serde_json::from_str::<serde_json::Value>(&text);
            let decision = match parsed {
                Err(e) if e.is_eof() && self.lines.len() > 1 && !full && !at_end => return Ok(()),
                Err(_) if self.lines.len() > 1 => {
                    // The first line began something the next ones do not
                    // finish: it alone is garbage; the rest is read again.
                    let first = self.remove_first();
                    while self.lines.first().is_some_and(|l| l.trim().is_empty()) {
                        self.remove_first();
                    }
                    policy.decide_line(&first)
                }
                _ => {
                    *self = Pending::default();
                    policy.decide_line(&text)
                }
            };
            write_decision(&mut *output, &decision)?;
        }
        Ok(())
    }
}

/// How many brackets a line opens minus how many it closes, outside strings.
fn balance(line: &str) -> i64 {
    let mut depth = 0;
    let mut in_string = false;
    let mut escaped = false;
    for c in line.chars() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
        } else {
            match c {
                '"' => in_string = true,
                '{' | '[' => depth += 1,
                '}' | ']' => depth -= 1,
                _ => {}
            }
        }
    }
    depth
}

fn write_decision(output: &mut impl Write, decision: &GateDecision) -> io::Result<()> {
    let mut line = serde_json::to_vec(decision).map_err(io::Error::other)?;
    line.push(b'\n');
    output.write_all(&line)?;
    output.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_is_well_formed() {
        Args::command().debug_assert();
    }

    fn answers(input: &str) -> Vec<serde_json::Value> {
        let policy = Policy::new(Some(Approval::Dangerous), &[], &[], Config::default());
        let mut out = Vec::new();
        serve(&policy, input.as_bytes(), &mut out).unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn one_answer_per_request_whatever_the_layout() {
        let ok = r#"{"tool":"read","arguments":{"file_path":"a"},"cwd":"/p"}"#;
        let pretty = "{\n  \"tool\": \"bash\",\n  \"arguments\": {\"command\": \"rm -rf x\"},\n  \"cwd\": \"/p\"\n}";
        let input = format!("{ok}\n\n{pretty}\nnot json\n{{\"tool\":\n{ok}\n{{\"unfinished\": ");
        let out = answers(&input);
        let kinds: Vec<&str> = out
            .iter()
            .map(|d| d["decision"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            vec!["allow", "ask", "deny", "deny", "allow", "deny"],
            "{out:?}"
        );
        assert!(
            out[2]["reason"]
                .as_str()
                .unwrap()
                .starts_with("invalid gate request")
        );
        assert!(answers("").is_empty());
        assert!(answers("\n \n").is_empty());
    }
}
