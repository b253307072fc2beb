//! The rules for single commands, once wrappers are off: what makes `rm`,
//! `git`, `find`, `chmod`, `dd`, the disk tools and the file-writing
//! commands dangerous, and which paths each one writes. Options are read
//! the GNU way: anywhere before `--`, short ones grouped (`-rf`), long ones
//! abbreviated (`--recur`).

use super::Danger;
use super::bash::Walker;
use super::shell::Word;
use super::wrappers::{self, SHELLS, command_name, shell_options};

/// A command's arguments split into options and operands.
#[derive(Debug, Default)]
pub(super) struct Parsed {
    /// Every short option letter given.
    pub shorts: Vec<char>,
    /// Short options with their values (`-t DIR`, `-tDIR`).
    pub short_values: Vec<(char, Word)>,
    /// Long options, without dashes, with their values.
    pub longs: Vec<(String, Option<Word>)>,
    /// The operands, those after `--` included.
    pub operands: Vec<Word>,
    /// How many operands came after `--`.
    pub after_dashdash: usize,
}

/// Splits `args`: the short letters in `short_values` and the long names in
/// `long_values` take a value (attached or the next word).
pub(super) fn parse_args(args: &[Word], short_values: &str, long_values: &[&str]) -> Parsed {
    let mut p = Parsed::default();
    let mut i = 0;
    while let Some(w) = args.get(i) {
        i += 1;
        let t = w.text.as_str();
        if t == "--" {
            let rest = args.get(i..).unwrap_or(&[]);
            p.after_dashdash = rest.len();
            p.operands.extend(rest.iter().cloned());
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            match long.split_once('=') {
                Some((name, value)) => p.longs.push((
                    name.to_string(),
                    Some(Word {
                        text: value.to_string(),
                        ..w.clone()
                    }),
                )),
                None => {
                    let value = if long_values.contains(&long) {
                        i += 1;
                        args.get(i - 1).cloned()
                    } else {
                        None
                    };
                    p.longs.push((long.to_string(), value));
                }
            }
        } else if t.len() > 1 && t.starts_with('-') {
            for (at, c) in t.char_indices().skip(1) {
                p.shorts.push(c);
                if short_values.contains(c) {
                    let attached = &t[at + c.len_utf8()..];
                    let value = if attached.is_empty() {
                        i += 1;
                        args.get(i - 1).cloned()
                    } else {
                        Some(Word {
                            text: attached.to_string(),
                            ..w.clone()
                        })
                    };
                    if let Some(v) = value {
                        p.short_values.push((c, v));
                    }
                    break;
                }
            }
        } else {
            p.operands.push(w.clone());
        }
    }
    p
}

impl Parsed {
    pub fn short(&self, c: char) -> bool {
        self.shorts.contains(&c)
    }

    /// `--name`, or an abbreviation of it of three letters or more.
    pub fn long(&self, name: &str) -> bool {
        self.longs
            .iter()
            .any(|(given, _)| given == name || (given.len() >= 3 && name.starts_with(given)))
    }

    /// Any of the short letters or long names.
    pub fn flag(&self, shorts: &str, longs: &[&str]) -> bool {
        shorts.chars().any(|c| self.short(c)) || longs.iter().any(|l| self.long(l))
    }

    /// The values given to a short letter or a long name.
    pub fn values(&self, short: Option<char>, long: &str) -> Vec<Word> {
        let shorts = self
            .short_values
            .iter()
            .filter(|(c, _)| Some(*c) == short)
            .map(|(_, v)| v.clone());
        let longs = self
            .longs
            .iter()
            .filter(|(given, _)| given == long || (given.len() >= 3 && long.starts_with(given)))
            .filter_map(|(_, v)| v.clone());
        shorts.chain(longs).collect()
    }
}

impl Walker<'_> {
    /// The rules for one command (wrappers already taken off).
    pub(super) fn rules(&mut self, words: &[Word], seg: usize, depth: usize) {
        let Some(first) = words.first() else { return };
        let name = command_name(first);
        let args = &words[1..];
        match name {
            "cd" | "pushd" => self.cd(args),
            "popd" => self.dir = None,
            "rm" => self.rm(args, seg),
            "rmdir" | "unlink" | "shred" => {
                let p = parse_args(args, "ns", &["iterations", "size", "random-source"]);
                self.writes(&p.operands, seg, Danger::DeleteOutside);
            }
            "find" => self.find(args, seg, depth),
            "git" => self.git(args, seg, depth),
            "chmod" => self.chmod(args, seg),
            "chown" | "chgrp" => {
                let p = parse_args(args, "", &["reference", "from"]);
                if p.flag("R", &["recursive"]) {
                    self.flag_segment(Danger::RecursiveChown, seg, None);
                }
                let files = if p.long("reference") {
                    &p.operands[..]
                } else {
                    p.operands.get(1..).unwrap_or(&[])
                };
                self.writes(files, seg, Danger::WriteOutside);
            }
            "dd" => self.dd(args, seg),
            "mke2fs" | "mkswap" | "wipefs" | "blkdiscard" | "cfdisk" => {
                self.flag_segment(Danger::DiskTool, seg, None);
            }
            n if n == "mkfs" || n.starts_with("mkfs.") => {
                self.flag_segment(Danger::DiskTool, seg, None);
            }
            "fdisk" | "sfdisk" | "gdisk" | "sgdisk" | "parted" => {
                let p = parse_args(args, "", &[]);
                let lists = p.flag("lp", &["list", "print"])
                    || (name == "parted" && p.operands.iter().any(|w| w.text == "print"));
                if !lists {
                    self.flag_segment(Danger::DiskTool, seg, None);
                }
            }
            "diskutil" => {
                let verb = args.iter().find(|w| !w.text.starts_with('-'));
                if verb.is_some_and(|w| {
                    let v = w.text.to_ascii_lowercase();
                    v.starts_with("erase")
                        || v.starts_with("partition")
                        || v == "zerodisk"
                        || v == "randomdisk"
                        || v == "secureerase"
                }) {
                    self.flag_segment(Danger::DiskTool, seg, None);
                }
            }
            "shutdown" | "reboot" | "poweroff" | "halt" => {
                self.flag_segment(Danger::Shutdown, seg, None);
            }
            "init" | "telinit" if args.iter().any(|w| w.text == "0" || w.text == "6") => {
                self.flag_segment(Danger::Shutdown, seg, None);
            }
            "systemctl" => {
                let p = parse_args(args, "HMtpsn", &["host", "machine", "type", "property"]);
                let verb = p.operands.first().map(|w| w.text.as_str());
                if matches!(
                    verb,
                    Some("poweroff" | "reboot" | "halt" | "kexec" | "soft-reboot")
                ) {
                    self.flag_segment(Danger::Shutdown, seg, None);
                }
            }
            "tee" => {
                let p = parse_args(args, "", &[]);
                self.writes(&p.operands, seg, Danger::WriteOutside);
            }
            "cp" | "ln" | "install" | "mv" => self.copy_like(name, args, seg),
            "rsync" => self.rsync(args, seg, depth),
            "touch" | "mkdir" | "truncate" => {
                let p = parse_args(
                    args,
                    "drtmsZ",
                    &["date", "reference", "mode", "size", "context"],
                );
                self.writes(&p.operands, seg, Danger::WriteOutside);
            }
            "sed" => {
                let p = parse_args(args, "efl", &["expression", "file", "line-length"]);
                if p.flag("i", &["in-place"]) {
                    let script_given = p.flag("ef", &["expression", "file"]);
                    let files = if script_given {
                        &p.operands[..]
                    } else {
                        p.operands.get(1..).unwrap_or(&[])
                    };
                    self.writes(files, seg, Danger::WriteOutside);
                }
            }
            "curl" => {
                let p = parse_args(args, "o", &["output", "output-dir"]);
                let mut targets = p.values(Some('o'), "output");
                targets.extend(p.values(None, "output-dir"));
                targets.retain(|w| w.text != "-");
                self.writes(&targets, seg, Danger::WriteOutside);
            }
            "wget" => {
                let p = parse_args(args, "OoP", &["output-document", "directory-prefix"]);
                let mut targets = p.values(Some('O'), "output-document");
                targets.extend(p.values(Some('P'), "directory-prefix"));
                targets.retain(|w| w.text != "-");
                self.writes(&targets, seg, Danger::WriteOutside);
            }
            "tar" => self.tar(args, seg, depth),
            "alias" => {
                // An alias runs its text wherever it is used later.
                for w in args.iter().filter(|w| w.text.contains('=')) {
                    if let Some((_, value)) = w.text.split_once('=') {
                        self.code_value(value, w.expands, seg, depth);
                    }
                }
            }
            "ssh" | "scp" | "sftp" => {
                // The command runs remotely (not inspected), but these
                // options run a command here.
                let p = parse_args(args, "bcDEeFIiJLlmOoPpQRSWw", &[]);
                for opt in p.values(Some('o'), "") {
                    let (key, value) = match opt.text.split_once(['=', ' ']) {
                        Some((k, v)) => (k.to_ascii_lowercase(), v.trim_start_matches(['=', ' '])),
                        None => continue,
                    };
                    if matches!(key.as_str(), "proxycommand" | "localcommand") {
                        self.code_value(value, opt.expands, seg, depth);
                    }
                }
            }
            "kill" if kills_everything(args) => self.flag_segment(Danger::KillAll, seg, None),
            "killall5" => self.flag_segment(Danger::KillAll, seg, None),
            "pkill" | "killall" => {
                // `pkill -u me`, `killall -u me`: every process of a user;
                // `pkill .`: every process whose name matches anything.
                let p = parse_args(
                    args,
                    "sugtPGUFn",
                    &[
                        "signal", "uid", "euid", "group", "terminal", "parent", "user",
                    ],
                );
                let by_user = p.flag("uU", &["user", "euid", "uid"]);
                let everything = p.operands.is_empty()
                    || p.operands
                        .iter()
                        .any(|w| matches!(w.text.as_str(), "." | ".*" | "^" | ""));
                if (by_user && p.operands.is_empty()) || (name == "pkill" && everything) {
                    self.flag_segment(Danger::KillAll, seg, None);
                }
            }
            "crontab" => {
                // Only listing leaves the crontab as it is; a file or `-`
                // replaces it, `-r` removes it, `-e` edits it.
                let p = parse_args(args, "uT", &[]);
                let lists = p.flag("lV", &["help", "version"]) || p.short('T');
                if !lists {
                    self.flag_segment(Danger::Crontab, seg, None);
                }
            }
            "source" | "." => {
                let operand = args.iter().find(|w| w.text != "--");
                if let Some(op) = operand {
                    self.script_operand(op, seg, depth);
                }
            }
            n if SHELLS.contains(&n) => {
                let opts = shell_options(args);
                if let Some(op) = opts.operand.filter(|_| !opts.stdin) {
                    self.script_operand(op, seg, depth);
                }
            }
            "unzip" => {
                if let Some(i) = args.iter().position(|w| w.text == "-d")
                    && let Some(dir) = args.get(i + 1)
                {
                    self.write(dir, seg, Danger::WriteOutside);
                }
            }
            _ => {}
        }
    }

    fn writes(&mut self, targets: &[Word], seg: usize, danger: Danger) {
        for t in targets {
            self.write(t, seg, danger);
        }
    }

    /// `cd DIR` moves where the following relative paths land.
    fn cd(&mut self, args: &[Word]) {
        let target = args
            .iter()
            .find(|w| !(w.text.starts_with('-') && w.text.len() > 1 && w.text != "--"));
        self.dir = match target {
            None => self.place.home.clone(),
            Some(w) if w.text == "-" => None,
            Some(w) => self.path_of(w),
        };
    }

    fn rm(&mut self, args: &[Word], seg: usize) {
        let p = parse_args(args, "", &[]);
        if p.flag("rR", &["recursive"]) {
            for w in &p.operands {
                if let Some(path) = self.path_of(w) {
                    self.out.paths.push(path);
                }
            }
            self.flag_segment(Danger::RecursiveDelete, seg, None);
        } else {
            self.writes(&p.operands, seg, Danger::DeleteOutside);
        }
    }

    fn find(&mut self, args: &[Word], seg: usize, depth: usize) {
        let mut i = 0;
        while let Some(w) = args.get(i) {
            i += 1;
            match w.text.as_str() {
                "-delete" => self.flag_segment(Danger::RecursiveDelete, seg, None),
                "-exec" | "-execdir" | "-ok" | "-okdir" => {
                    let start = i;
                    while args.get(i).is_some_and(|w| w.text != ";" && w.text != "+") {
                        i += 1;
                    }
                    let inner = &args[start..i];
                    i += 1;
                    // The command runs on every file found: a delete there
                    // is a recursive delete.
                    let runs = effective_name(inner);
                    if matches!(runs.as_deref(), Some("rm" | "rmdir" | "unlink" | "shred")) {
                        self.flag_segment(Danger::RecursiveDelete, seg, None);
                    }
                    self.argv(inner, seg, depth);
                }
                "-fprint" | "-fprint0" | "-fls" | "-fprintf" => {
                    if let Some(target) = args.get(i) {
                        self.write(target, seg, Danger::WriteOutside);
                    }
                    i += 1;
                }
                _ => {}
            }
        }
    }

    fn chmod(&mut self, args: &[Word], seg: usize) {
        // A mode may look like an option (`chmod -w f`): only groups of
        // chmod's own option letters are options.
        let mut recursive = false;
        let mut reference = false;
        let mut operands: Vec<Word> = Vec::new();
        let mut ended = false;
        for w in args {
            let t = w.text.as_str();
            if ended {
                operands.push(w.clone());
            } else if t == "--" {
                ended = true;
            } else if let Some(long) = t.strip_prefix("--") {
                let name = long.split('=').next().unwrap_or(long);
                recursive |= name.len() >= 3 && "recursive".starts_with(name);
                reference |= name.len() >= 3 && "reference".starts_with(name);
            } else if t.len() > 1
                && t.starts_with('-')
                && t[1..].chars().all(|c| "Rcfv".contains(c))
            {
                recursive |= t.contains('R');
            } else {
                operands.push(w.clone());
            }
        }
        let (mode, files) = if reference {
            (None, &operands[..])
        } else {
            (operands.first(), operands.get(1..).unwrap_or(&[]))
        };
        if recursive && mode.is_some_and(|m| world_writable(&m.text)) {
            self.flag_segment(Danger::WorldWritable, seg, None);
        }
        let files = files.to_vec();
        self.writes(&files, seg, Danger::WriteOutside);
    }

    fn dd(&mut self, args: &[Word], seg: usize) {
        for w in args {
            let Some(target) = w.text.strip_prefix("of=") else {
                continue;
            };
            let word = Word {
                text: target.to_string(),
                ..w.clone()
            };
            match self.path_of(&word) {
                Some(path) if path.starts_with("/dev") && self.place.is_outside(&path) => {
                    self.out.paths.push(path.clone());
                    self.flag_segment(Danger::DiskTool, seg, Some(path));
                }
                _ => self.write(&word, seg, Danger::WriteOutside),
            }
        }
    }

    /// `cp`, `ln`, `install` and `mv`: the destination is written; `mv`
    /// also takes its sources away.
    fn copy_like(&mut self, name: &str, args: &[Word], seg: usize) {
        let p = parse_args(
            args,
            "tSmog",
            &[
                "target-directory",
                "suffix",
                "mode",
                "owner",
                "group",
                "strip-program",
            ],
        );
        let target_dirs = p.values(Some('t'), "target-directory");
        if name == "install" && p.flag("d", &["directory"]) {
            return self.writes(&p.operands, seg, Danger::WriteOutside);
        }
        let (sources, dest): (&[Word], Vec<Word>) = match p.operands.split_last() {
            _ if !target_dirs.is_empty() => (&p.operands[..], target_dirs),
            Some((last, sources)) if !sources.is_empty() => (sources, vec![last.clone()]),
            // `ln -s target` makes its link here; `cp x` fails.
            _ => (&[], Vec::new()),
        };
        if name == "mv" {
            let sources = sources.to_vec();
            self.writes(&sources, seg, Danger::DeleteOutside);
        }
        self.writes(&dest, seg, Danger::WriteOutside);
    }

    fn rsync(&mut self, args: &[Word], seg: usize, depth: usize) {
        let p = parse_args(
            args,
            "eBfTM",
            &[
                "rsh",
                "exclude",
                "include",
                "filter",
                "exclude-from",
                "include-from",
                "files-from",
                "rsync-path",
                "log-file",
                "temp-dir",
                "backup-dir",
                "suffix",
                "chmod",
                "compare-dest",
                "copy-dest",
                "link-dest",
                "partial-dir",
                "password-file",
                "port",
                "timeout",
                "max-size",
                "min-size",
                "bwlimit",
            ],
        );
        let deletes = p.longs.iter().any(|(name, _)| {
            name.starts_with("delete") || name == "remove-source-files" || name == "del"
        });
        if deletes {
            self.flag_segment(Danger::RecursiveDelete, seg, None);
        }
        // `-e CMD` is the local command that carries the transfer.
        for rsh in p.values(Some('e'), "rsh") {
            self.code_value(&rsh.text, rsh.expands, seg, depth);
        }
        if p.operands.len() >= 2
            && let Some(dest) = p.operands.last()
        {
            let remote = dest.text.starts_with("rsync://")
                || dest
                    .text
                    .split('/')
                    .next()
                    .is_some_and(|head| head.contains(':'));
            if !remote {
                self.write(dest, seg, Danger::WriteOutside);
            }
        }
    }

    fn tar(&mut self, args: &[Word], seg: usize, depth: usize) {
        // Old style: `tar xzf a.tgz -C dir`, the first word a group of letters.
        let mut args = args.to_vec();
        if let Some(first) = args.first_mut()
            && !first.text.starts_with('-')
        {
            first.text.insert(0, '-');
        }
        let p = parse_args(
            &args,
            "CfbTXLNgIFHKV",
            &[
                "directory",
                "file",
                "files-from",
                "exclude-from",
                "to-command",
                "use-compress-program",
                "info-script",
                "new-volume-script",
            ],
        );
        if p.flag("x", &["extract", "get"]) {
            let dirs = p.values(Some('C'), "directory");
            self.writes(&dirs, seg, Danger::WriteOutside);
        }
        // Options whose value tar runs as a command.
        let mut commands = p.values(Some('I'), "use-compress-program");
        commands.extend(p.values(Some('F'), "info-script"));
        commands.extend(p.values(None, "new-volume-script"));
        commands.extend(p.values(None, "to-command"));
        for action in p.values(None, "checkpoint-action") {
            if let Some(cmd) = action.text.strip_prefix("exec=") {
                commands.push(Word {
                    text: cmd.to_string(),
                    ..action.clone()
                });
            }
        }
        for cmd in commands {
            self.code_value(&cmd.text, cmd.expands, seg, depth);
        }
    }
}

/// The name of the command `words` finally runs, wrappers taken off.
fn effective_name(words: &[Word]) -> Option<String> {
    let mut words = words;
    for _ in 0..16 {
        match wrappers::unwrap(words) {
            Some((wrappers::Inner::Argv(rest), _)) => words = rest,
            _ => break,
        }
    }
    words.first().map(|w| command_name(w).to_string())
}

/// True for `kill -9 -1`, `kill -- -1`, `kill -s KILL -1` and `kill -1`:
/// a pid of -1 means every process the caller may signal. (`kill -1`
/// alone is a signal without a pid, which does nothing, but is flagged
/// all the same since nobody needs it.)
fn kills_everything(args: &[Word]) -> bool {
    let mut rest = args;
    match rest.first().map(|w| w.text.as_str()) {
        Some("-s" | "-n") => rest = rest.get(2..).unwrap_or(&[]),
        Some("-l" | "-L") => return false,
        Some("-1") if rest.len() == 1 => return true,
        Some(t) if t.starts_with('-') && t != "--" => rest = &rest[1..],
        _ => {}
    }
    if rest.first().is_some_and(|w| w.text == "--") {
        rest = &rest[1..];
    }
    rest.iter().any(|w| w.text == "-1")
}

/// True when a chmod mode lets others write: `777`, `0666`, `o+w`, `a=rwx`.
fn world_writable(mode: &str) -> bool {
    if !mode.is_empty() && mode.chars().all(|c| c.is_digit(8)) {
        return u32::from_str_radix(mode, 8).is_ok_and(|m| m & 0o002 != 0);
    }
    mode.split(',').any(|clause| {
        let Some(op) = clause.find(['+', '=']) else {
            return false;
        };
        let who = &clause[..op];
        let perms = &clause[op + 1..];
        (who.contains('o') || who.contains('a')) && perms.contains('w')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Word> {
        s.split_whitespace().map(Word::plain).collect()
    }

    #[test]
    fn options_are_read_gnu_style() {
        let p = parse_args(&words("-rf --recur -t dir -Sbak a -- -x b"), "tS", &[]);
        assert!(p.short('r') && p.short('f') && p.short('t'));
        assert!(p.long("recursive"));
        assert!(!p.long("force"));
        assert_eq!(p.values(Some('t'), "target-directory")[0].text, "dir");
        assert_eq!(p.values(Some('S'), "suffix")[0].text, "bak");
        let ops: Vec<&str> = p.operands.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(ops, vec!["a", "-x", "b"]);
        assert_eq!(p.after_dashdash, 2);
        let p = parse_args(
            &words("--output=/etc/x --target-directory d"),
            "",
            &["target-directory"],
        );
        assert_eq!(p.values(None, "output")[0].text, "/etc/x");
        assert_eq!(p.values(None, "target-directory")[0].text, "d");
    }

    #[test]
    fn a_pid_of_minus_one_is_every_process() {
        for args in ["-9 -1", "-- -1", "-s KILL -1", "-KILL -- -1", "-1"] {
            assert!(kills_everything(&words(args)), "{args}");
        }
        for args in ["-9 1234", "-1 1234", "-l", "%1", "-9 -1234", "-s HUP 1"] {
            assert!(!kills_everything(&words(args)), "{args}");
        }
    }

    #[test]
    fn modes_that_let_others_write() {
        for m in [
            "777", "0777", "1777", "666", "o+w", "a=rwx", "u+x,o+w", "go+rw",
        ] {
            assert!(world_writable(m), "{m}");
        }
        for m in ["755", "0644", "+x", "u+w", "o-w", "a+x", "g+w", ""] {
            assert!(!world_writable(m), "{m}");
        }
    }
}
