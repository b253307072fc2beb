//! Wrappers: commands that run another command (`sudo`, `env`, `xargs`,
//! `timeout`, `nohup`, `command`, shells with `-c`, `eval`, ...), and what
//! each leaves to run once its own options are skipped.

use super::Danger;
use super::shell::Word;

/// Shells that run a script given with `-c`, or read one from stdin.
pub(super) const SHELLS: [&str; 9] = [
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "yash",
];

/// What a wrapper command (`sudo`, `env`, `timeout`, ...) leaves to run.
pub(super) enum Inner<'a> {
    /// Another command line, given as words.
    Argv(&'a [Word]),
    /// A script given as one string (`su -c '...'`, `watch '...'`);
    /// `literal` unless a word it was made of expands (`eval "$x"`).
    Script { src: String, literal: bool },
    /// Nothing runs (`command -v rm`, `sudo -l`).
    Nothing,
    /// Commands come from the input at run time (`parallel` without a
    /// command, `xargs sh -c` without a script).
    Unreadable,
}

/// Skips leading `NAME=value` assignments.
pub(super) fn skip_assignments(words: &[Word]) -> &[Word] {
    let n = words.iter().take_while(|w| is_assignment(&w.text)).count();
    &words[n..]
}

/// `NAME=value`, and bash's `NAME+=value` and `NAME[index]=value`.
pub(super) fn is_assignment(text: &str) -> bool {
    match text.split_once('=') {
        Some((name, _)) => {
            let name = name.strip_suffix('+').unwrap_or(name);
            let name = match name.split_once('[') {
                Some((base, index)) if index.ends_with(']') => base,
                _ => name,
            };
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// The name a word runs: `/bin/rm` and `\rm` are `rm`.
pub(super) fn command_name(word: &Word) -> &str {
    let text = word.text.as_str();
    text.rsplit('/').next().unwrap_or(text)
}

/// The command the words finally run, with every wrapper taken off.
pub(super) fn effective(words: &[Word]) -> &[Word] {
    let mut words = skip_assignments(words);
    for _ in 0..16 {
        match unwrap(words) {
            Some((Inner::Argv(rest), _)) => words = skip_assignments(rest),
            _ => break,
        }
    }
    words
}

/// What a shell's options say: `-c` given, `-s` given, the first operand.
pub(super) struct ShellOptions<'a> {
    pub command: bool,
    pub stdin: bool,
    pub operand: Option<&'a Word>,
}

/// Reads `bash -lc 'x'`, `sh -e -c 'x'`, `bash -o pipefail -c 'x'`, `zsh -s`.
pub(super) fn shell_options(args: &[Word]) -> ShellOptions<'_> {
    let mut opts = ShellOptions {
        command: false,
        stdin: false,
        operand: None,
    };
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        i += 1;
        if t == "--" || t == "-" {
            break;
        }
        if matches!(t, "--rcfile" | "--init-file" | "-o" | "+o" | "-O" | "+O") {
            i += 1;
        } else if t == "--command" {
            opts.command = true;
        } else if t.starts_with("--") {
        } else if let Some(flags) = t.strip_prefix('-').or_else(|| t.strip_prefix('+')) {
            opts.command |= t.starts_with('-') && flags.contains('c');
            opts.stdin |= t.starts_with('-') && flags.contains('s');
            // `-o opt` inside a group (`-eo pipefail`) takes the next word.
            if flags.contains('o') || flags.contains('O') {
                i += 1;
            }
        } else {
            i -= 1;
            break;
        }
    }
    opts.operand = args.get(i);
    opts
}

/// Takes a wrapper off a command: what it leaves to run, and the danger of
/// the wrapper itself (`sudo`). None when the command is not a wrapper.
pub(super) fn unwrap(words: &[Word]) -> Option<(Inner<'_>, Option<Danger>)> {
    let first = words.first()?;
    let args = &words[1..];
    let name = command_name(first);
    let rest_after = |with_value: &[&str]| -> &[Word] { skip_options(args, with_value) };
    let inner = match name {
        // Keywords and words that run what follows them.
        "!" | "{" | "}" | "then" | "do" | "else" | "elif" | "if" | "while" | "until"
        | "builtin" | "nohup" | "chronic" | "unbuffer" | "busybox" | "catchsegv" => {
            Inner::Argv(args)
        }
        "for" | "case" | "select" | "function" | "fi" | "done" | "esac" | "in" => Inner::Nothing,
        "time" => Inner::Argv(rest_after(&[])),
        "exec" => Inner::Argv(rest_after(&["-a"])),
        "setsid" | "caffeinate" | "valgrind" | "fakeroot" | "proxychains" | "proxychains4"
        | "torsocks" | "xvfb-run" | "dbus-run-session" | "firejail" | "unshare" | "prlimit" => {
            Inner::Argv(rest_after(&[]))
        }
        "strace" | "ltrace" => Inner::Argv(rest_after(&[
            "-o", "-e", "-p", "-s", "-u", "-E", "-P", "-a", "-b", "-I", "-X", "-O", "-S", "-n",
        ])),
        "systemd-run" => Inner::Argv(rest_after(&[
            "-p",
            "--property",
            "-u",
            "--unit",
            "-E",
            "--setenv",
            "--uid",
            "--gid",
            "-M",
            "--machine",
            "--slice",
            "--description",
            "--working-directory",
        ])),
        // The first operand (a CPU mask, a priority, a directory, a time)
        // comes before the command; with `-p` they change a running process.
        "taskset" | "chrt" | "chroot" | "faketime" => {
            let rest = rest_after(&["--userspec", "--groups", "-f"]);
            if args.iter().any(|w| w.text == "-p" || w.text == "--pid") {
                Inner::Nothing
            } else {
                Inner::Argv(rest.get(1..).unwrap_or(&[]))
            }
        }
        // `coproc cmd`, `coproc NAME { cmd; }`.
        "coproc" => match args {
            [_, next, ..] if next.text == "{" || next.text == "(" => Inner::Argv(&args[1..]),
            _ => Inner::Argv(args),
        },
        // `sg group -c 'cmd'`, `script -c 'cmd' log`: a script.
        "sg" | "script" => match args
            .iter()
            .position(|w| w.text == "-c" || w.text == "--command")
        {
            Some(i) => script_of(args.get(i + 1..i + 2).unwrap_or(&[])),
            None if name == "sg" => Inner::Argv(args.get(1..).unwrap_or(&[])),
            None => Inner::Nothing,
        },
        // GNU parallel runs its command on each input, or each input line
        // as a command when no command is given.
        "parallel" => {
            let rest = rest_after(&[
                "-j",
                "--jobs",
                "-S",
                "--sshlogin",
                "--halt",
                "-N",
                "-n",
                "-L",
                "-l",
                "-d",
                "-I",
                "--delay",
                "--timeout",
                "--joblog",
                "-a",
                "--arg-file",
                "--colsep",
                "-C",
                "--tmpdir",
                "--results",
            ]);
            let end = rest
                .iter()
                .position(|w| w.text.starts_with(":::"))
                .unwrap_or(rest.len());
            if end == 0 {
                Inner::Unreadable
            } else {
                Inner::Argv(&rest[..end])
            }
        }
        "command" => {
            if args
                .iter()
                .take_while(|w| w.text.starts_with('-'))
                .any(|w| w.text.contains('v') || w.text.contains('V'))
            {
                Inner::Nothing
            } else {
                Inner::Argv(rest_after(&[]))
            }
        }
        "nice" => {
            // `nice -n 5 cmd`, `nice -5 cmd`, `nice --adjustment=5 cmd`.
            let mut rest = args;
            while let Some(w) = rest.first() {
                if w.text == "-n" || w.text == "--adjustment" {
                    rest = rest.get(2..).unwrap_or(&[]);
                } else if w.text.starts_with('-') && w.text != "--" {
                    rest = &rest[1..];
                } else {
                    if w.text == "--" {
                        rest = &rest[1..];
                    }
                    break;
                }
            }
            Inner::Argv(rest)
        }
        "timeout" => {
            let rest = rest_after(&["-s", "-k", "--signal", "--kill-after"]);
            // The duration comes before the command.
            Inner::Argv(rest.get(1..).unwrap_or(&[]))
        }
        "stdbuf" => Inner::Argv(rest_after(&["-i", "-o", "-e"])),
        "ionice" => {
            if args.iter().any(|w| w.text == "-p" || w.text == "-P") {
                Inner::Nothing
            } else {
                Inner::Argv(rest_after(&["-c", "-n", "--class", "--classdata"]))
            }
        }
        "env" => return Some((env_inner(args), None)),
        "xargs" => xargs_inner(
            args,
            rest_after(&[
                "-I",
                "-n",
                "-L",
                "-P",
                "-s",
                "-d",
                "-E",
                "-a",
                "--max-args",
                "--max-lines",
                "--max-procs",
                "--max-chars",
                "--delimiter",
                "--arg-file",
                "--process-slot-var",
            ]),
        ),
        "flock" => {
            if let Some(i) = args
                .iter()
                .position(|w| w.text == "-c" || w.text == "--command")
            {
                script_of(args.get(i + 1..i + 2).unwrap_or(&[]))
            } else {
                let rest = rest_after(&["-w", "-E", "--timeout", "--conflict-exit-code"]);
                // The lock file or descriptor comes before the command.
                Inner::Argv(rest.get(1..).unwrap_or(&[]))
            }
        }
        "watch" => {
            let rest = rest_after(&["-n", "--interval", "-q", "--equexit"]);
            if args.iter().any(|w| w.text == "-x" || w.text == "--exec") {
                Inner::Argv(rest)
            } else {
                // watch joins its arguments and runs them with `sh -c`.
                script_of(rest)
            }
        }
        "sudo" | "doas" | "pkexec" | "run0" => {
            let with_value: &[&str] = match name {
                "sudo" => &[
                    "-u",
                    "-g",
                    "-h",
                    "-p",
                    "-C",
                    "-D",
                    "-r",
                    "-t",
                    "-U",
                    "-T",
                    "-R",
                    "--user",
                    "--group",
                    "--host",
                    "--prompt",
                    "--close-from",
                    "--chdir",
                    "--role",
                    "--type",
                    "--other-user",
                    "--command-timeout",
                    "--chroot",
                ],
                "doas" => &["-u", "-C"],
                "pkexec" => &["--user"],
                _ => &["--user", "-u", "--chdir", "-D", "--setenv", "--property"],
            };
            let listing = name == "sudo"
                && args
                    .iter()
                    .take_while(|w| w.text.starts_with('-'))
                    .any(|w| {
                        matches!(
                            w.text.as_str(),
                            "-l" | "--list" | "-v" | "--validate" | "-k" | "-K"
                        )
                    });
            let inner = if listing {
                Inner::Nothing
            } else {
                Inner::Argv(rest_after(with_value))
            };
            return Some((inner, Some(Danger::Privilege)));
        }
        "su" => {
            let script = args.iter().enumerate().find_map(|(i, w)| {
                if w.text == "-c" || w.text == "--command" {
                    args.get(i + 1).cloned()
                } else {
                    w.text.strip_prefix("--command=").map(|s| Word {
                        text: s.to_string(),
                        ..w.clone()
                    })
                }
            });
            let inner = script.map_or(Inner::Nothing, |w| script_of(&[w]));
            return Some((inner, Some(Danger::Privilege)));
        }
        // The substitution itself is read as a command like any other.
        "eval" if evals_shell_setup(args) => Inner::Nothing,
        "eval" => script_of(args),
        "trap" => {
            // `trap 'rm -rf x' EXIT` runs its first argument later.
            match args.iter().position(|w| !w.text.starts_with('-')) {
                Some(i) => script_of(&args[i..=i]),
                None => Inner::Nothing,
            }
        }
        n if SHELLS.contains(&n) => {
            let opts = shell_options(args);
            if opts.command {
                script_of(opts.operand.map(std::slice::from_ref).unwrap_or(&[]))
            } else {
                return None;
            }
        }
        _ => return None,
    };
    Some((inner, None))
}

/// What `xargs` runs: its command, unless it is a shell whose script is
/// the input itself (`xargs sh -c`, `xargs -I{} bash -c '{}'`).
fn xargs_inner<'a>(args: &'a [Word], rest: &'a [Word]) -> Inner<'a> {
    let mut replace: Option<String> = None;
    for (i, w) in args.iter().enumerate() {
        let t = w.text.as_str();
        if t == "-I" {
            replace = args.get(i + 1).map(|w| w.text.clone());
        } else if let Some(r) = t
            .strip_prefix("-I")
            .or_else(|| t.strip_prefix("--replace="))
        {
            replace = Some(r.to_string());
        } else if t == "-i" || t == "--replace" {
            replace = Some("{}".into());
        } else if let Some(r) = t.strip_prefix("-i") {
            replace = Some(r.to_string());
        }
    }
    let Some(first) = rest.first() else {
        return Inner::Argv(rest);
    };
    if SHELLS.contains(&command_name(first)) {
        let opts = shell_options(&rest[1..]);
        let fed = match (opts.operand, &replace) {
            (None, _) => opts.command,
            (Some(script), Some(r)) => opts.command && script.text.contains(r.as_str()),
            (Some(_), None) => false,
        };
        if fed {
            return Inner::Unreadable;
        }
    }
    if replace.is_some_and(|r| first.text.contains(r.as_str())) {
        return Inner::Unreadable;
    }
    Inner::Argv(rest)
}

/// `env -i A=1 -u B cmd`, `env -S 'cmd args'`, `env --chdir=d cmd`.
fn env_inner(args: &[Word]) -> Inner<'_> {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        if t == "-S" || t == "--split-string" {
            return script_of(args.get(i + 1..).unwrap_or(&[]));
        }
        if let Some(s) = t
            .strip_prefix("--split-string=")
            .or_else(|| t.strip_prefix("-S").filter(|s| !s.is_empty()))
        {
            let mut words = vec![Word {
                text: s.to_string(),
                ..w.clone()
            }];
            words.extend(args.iter().skip(i + 1).cloned());
            return script_of(&words);
        }
        if matches!(t, "-u" | "--unset" | "-C" | "--chdir") {
            i += 2;
        } else if t == "--" {
            i += 1;
            break;
        } else if t.starts_with('-') || is_assignment(t) {
            i += 1;
        } else {
            break;
        }
    }
    Inner::Argv(args.get(i..).unwrap_or(&[]))
}

/// The words after a wrapper's options; the options in `with_value` take
/// the next word (their attached forms, `-u0` or `--user=x`, are one word).
fn skip_options<'a>(args: &'a [Word], with_value: &[&str]) -> &'a [Word] {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        if t == "--" {
            return args.get(i + 1..).unwrap_or(&[]);
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        i += if with_value.contains(&t) { 2 } else { 1 };
    }
    args.get(i..).unwrap_or(&[])
}

/// A script made of words joined by spaces, literal unless one expands.
/// Programs that print shell code for the shell to `eval`, to set itself
/// up: `eval "$(ssh-agent -s)"`, `eval "$(direnv hook bash)"`. What they
/// print is theirs, not data from outside, so such an eval is no more
/// unknown than running the program.
const SHELL_SETUP: &[&str] = &[
    "ssh-agent",
    "gpg-agent",
    "keychain",
    "direnv",
    "dircolors",
    "pyenv",
    "rbenv",
    "nodenv",
    "goenv",
    "jenv",
    "plenv",
    "conda",
    "mamba",
    "micromamba",
    "opam",
    "brew",
    "fnm",
    "mise",
    "rtx",
    "zoxide",
    "starship",
    "luarocks",
];

/// `eval "$(ssh-agent -s)"`: the whole argument is the output of one
/// command of [`SHELL_SETUP`], itself written out in full.
fn evals_shell_setup(args: &[Word]) -> bool {
    let [arg] = args else { return false };
    let [sub] = arg.substitutions.as_slice() else {
        return false;
    };
    let whole = arg
        .text
        .strip_prefix("$(")
        .and_then(|t| t.strip_suffix(')'))
        == Some(sub.as_str())
        || arg.text.strip_prefix('`').and_then(|t| t.strip_suffix('`')) == Some(sub.as_str());
    let cmds = super::shell::parse(sub);
    let [cmd] = cmds.as_slice() else { return false };
    whole
        && cmd.redirects.is_empty()
        && cmd
            .words
            .first()
            .is_some_and(|w| SHELL_SETUP.contains(&command_name(w)) && !w.built_at_run_time())
        && cmd.words.iter().all(|w| !w.expands)
}

fn script_of(words: &[Word]) -> Inner<'static> {
    Inner::Script {
        src: join(words),
        literal: !words.iter().any(|w| w.expands),
    }
}

pub(super) fn join(words: &[Word]) -> String {
    words
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}
