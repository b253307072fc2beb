//! The rules for git: the subcommands that destroy work (force pushes,
//! remote deletes, hard resets, cleans, discarded changes, dropped stashes,
//! force-deleted branches), and every way git is made to run a command of
//! the caller's choosing: settings given with `-c`, `--config-env` or
//! `git config` (`core.sshCommand`, `core.pager`, `alias.*`, hooks,
//! helpers, filters), and options such as `rebase --exec` or
//! `--upload-pack`. Such a command is read as a script; one that cannot be
//! read (hooks from a directory, an included file, a value from a
//! variable) is flagged.

use super::Danger;
use super::bash::Walker;
use super::commands::{Parsed, parse_args};
use super::shell::Word;
use super::wrappers::join;

/// Settings whose value git runs as a shell command. A `*` stands for a
/// subsection name (`filter.lfs.clean`). Keys are compared lowercased.
const COMMAND_SETTINGS: &[&str] = &[
    "core.sshcommand",
    "core.pager",
    "core.editor",
    "core.fsmonitor",
    "core.gitproxy",
    "core.askpass",
    "core.alternaterefscommand",
    "sequence.editor",
    "diff.external",
    "diff.*.textconv",
    "diff.*.command",
    "merge.*.driver",
    "filter.*.clean",
    "filter.*.smudge",
    "filter.*.process",
    "difftool.*.cmd",
    "mergetool.*.cmd",
    "gpg.program",
    "gpg.*.program",
    "credential.helper",
    "credential.*.helper",
    "uploadpack.packobjectshook",
    "remote.*.uploadpack",
    "remote.*.receivepack",
    "man.*.cmd",
    "browser.*.cmd",
    "sendemail.tocmd",
    "sendemail.cccmd",
    "sendemail.headercmd",
    "trailer.*.command",
    "trailer.*.cmd",
];
/// Settings that make git run code this cannot read: hooks from another
/// directory, settings from another file, templates with hooks.
const CODE_SETTINGS: &[&str] = &[
    "core.hookspath",
    "include.path",
    "includeif.*.path",
    "init.templatedir",
];

/// True when `key` (lowercased) matches `pattern`, `*` standing for one
/// subsection (which may itself hold dots: `includeIf.gitdir:~/a.b.path`).
fn key_matches(key: &str, pattern: &str) -> bool {
    match pattern.split_once(".*.") {
        None => key == pattern,
        Some((section, name)) => key
            .strip_prefix(section)
            .and_then(|k| k.strip_prefix('.'))
            .and_then(|k| k.strip_suffix(name))
            .is_some_and(|sub| sub.len() > 1 && sub.ends_with('.')),
    }
}

impl Walker<'_> {
    pub(super) fn git(&mut self, args: &[Word], seg: usize, depth: usize) {
        if args.iter().any(|w| w.text.starts_with("ext::")) {
            // `ext::` remotes run a command of their own.
            self.flag_segment(Danger::Unchecked, seg, None);
        }
        let mut i = 0;
        while let Some(w) = args.get(i) {
            let t = w.text.as_str();
            if t == "-c" {
                if let Some(setting) = args.get(i + 1) {
                    self.git_setting(setting, seg, depth);
                }
                i += 2;
            } else if t == "--config-env" || t.starts_with("--config-env=") {
                // The value comes from a variable: only known at run time.
                let setting = t.strip_prefix("--config-env=").map(str::to_string);
                let setting = setting.or_else(|| args.get(i + 1).map(|w| w.text.clone()));
                if let Some((key, _)) = setting.as_deref().and_then(|s| s.split_once('=')) {
                    self.git_key(key, None, seg, depth);
                }
                i += if t == "--config-env" { 2 } else { 1 };
            } else if t.starts_with("--exec-path=") {
                // Git's own programs from elsewhere: any code at all.
                self.flag_segment(Danger::Unchecked, seg, None);
                i += 1;
            } else if matches!(t, "-C" | "--git-dir" | "--work-tree" | "--namespace") {
                i += 2;
            } else if t.starts_with('-') {
                i += 1;
            } else {
                break;
            }
        }
        let Some(sub) = args.get(i) else { return };
        let rest = args.get(i + 1..).unwrap_or(&[]);
        let danger = match sub.text.as_str() {
            "push" => {
                let p = parse_args(rest, "o", &["repo", "receive-pack", "exec", "push-option"]);
                self.git_commands(&p, &[(None, "receive-pack"), (None, "exec")], seg, depth);
                let refspecs = p.operands.get(1..).unwrap_or(&[]);
                if p.flag(
                    "f",
                    &["force", "force-with-lease", "force-if-includes", "mirror"],
                ) || refspecs.iter().any(|w| w.text.starts_with('+'))
                {
                    Some(Danger::ForcePush)
                } else if p.flag("d", &["delete", "prune"])
                    || refspecs
                        .iter()
                        .any(|w| w.text.len() > 1 && w.text.starts_with(':'))
                {
                    Some(Danger::RemoteDelete)
                } else {
                    None
                }
            }
            "reset" => parse_args(rest, "", &[])
                .long("hard")
                .then_some(Danger::HardReset),
            "clean" => {
                let p = parse_args(rest, "e", &["exclude"]);
                (p.flag("f", &["force"]) && !p.flag("n", &["dry-run"])).then_some(Danger::GitClean)
            }
            "checkout" => {
                let p = parse_args(rest, "bB", &["orphan", "conflict"]);
                (p.flag("f", &["force"])
                    || p.after_dashdash > 0
                    || p.operands.iter().any(|w| w.text == "." || w.text == ":/"))
                .then_some(Danger::DiscardChanges)
            }
            "restore" => {
                let p = parse_args(rest, "s", &["source", "pathspec-from-file"]);
                let only_staged = p.flag("S", &["staged"]) && !p.flag("W", &["worktree"]);
                (!only_staged && (!p.operands.is_empty() || p.long("pathspec-from-file")))
                    .then_some(Danger::DiscardChanges)
            }
            "switch" => {
                let p = parse_args(
                    rest,
                    "cC",
                    &["create", "force-create", "orphan", "conflict"],
                );
                p.flag("f", &["discard-changes", "force"])
                    .then_some(Danger::DiscardChanges)
            }
            "stash" => {
                let verb = rest.iter().find(|w| !w.text.starts_with('-'));
                verb.is_some_and(|w| w.text == "drop" || w.text == "clear")
                    .then_some(Danger::StashDrop)
            }
            "branch" => {
                let p = parse_args(rest, "", &[]);
                (p.short('D') || (p.flag("d", &["delete"]) && p.flag("f", &["force"])))
                    .then_some(Danger::BranchDelete)
            }
            "fetch" | "pull" | "ls-remote" | "archive" => {
                let p = parse_args(rest, "u", &["upload-pack", "exec"]);
                let commands = [(Some('u'), "upload-pack"), (None, "exec")];
                self.git_commands(&p, &commands, seg, depth);
                None
            }
            "rebase" => {
                let p = parse_args(
                    rest,
                    "xsX",
                    &["exec", "strategy", "strategy-option", "onto"],
                );
                self.git_commands(&p, &[(Some('x'), "exec")], seg, depth);
                None
            }
            "difftool" => {
                let p = parse_args(rest, "xtS", &["extcmd", "tool", "gpg-sign"]);
                self.git_commands(&p, &[(Some('x'), "extcmd")], seg, depth);
                None
            }
            "filter-branch" => {
                let filters = [
                    (None, "setup"),
                    (None, "env-filter"),
                    (None, "tree-filter"),
                    (None, "index-filter"),
                    (None, "parent-filter"),
                    (None, "msg-filter"),
                    (None, "commit-filter"),
                    (None, "tag-name-filter"),
                ];
                let names: Vec<&str> = filters.iter().map(|(_, n)| *n).collect();
                let mut with_values = names.clone();
                with_values.extend(["subdirectory-filter", "original", "state-branch"]);
                let p = parse_args(rest, "d", &with_values);
                self.git_commands(&p, &filters, seg, depth);
                Some(Danger::HistoryLoss)
            }
            "filter-repo" | "prune" => Some(Danger::HistoryLoss),
            "reflog" => rest
                .first()
                .is_some_and(|w| w.text == "expire" || w.text == "delete")
                .then_some(Danger::HistoryLoss),
            "gc" => parse_args(rest, "", &[])
                .values(None, "prune")
                .iter()
                .any(|w| w.text == "now" || w.text == "all")
                .then_some(Danger::HistoryLoss),
            "update-ref" => parse_args(rest, "m", &[])
                .short('d')
                .then_some(Danger::BranchDelete),
            "submodule" => {
                // `git submodule foreach [--recursive] 'command'`.
                let p = parse_args(rest, "", &[]);
                if p.operands.first().is_some_and(|w| w.text == "foreach") {
                    let words = &p.operands[1..];
                    let literal = !words.iter().any(|w| w.expands);
                    self.code_value(&join(words), !literal, seg, depth);
                }
                None
            }
            "bisect" => {
                // `git bisect run cmd args`: runs the command at each step.
                if rest.first().is_some_and(|w| w.text == "run") {
                    self.argv(&rest[1..], seg, depth);
                }
                None
            }
            "config" => {
                self.git_config(rest, seg, depth);
                None
            }
            "clone" => {
                let p = parse_args(
                    rest,
                    "obcju",
                    &[
                        "origin",
                        "branch",
                        "config",
                        "jobs",
                        "upload-pack",
                        "depth",
                        "reference",
                        "separate-git-dir",
                        "template",
                        "shallow-since",
                        "shallow-exclude",
                        "filter",
                    ],
                );
                if p.operands.len() >= 2
                    && let Some(dir) = p.operands.last()
                {
                    self.write(dir, seg, Danger::WriteOutside);
                }
                for setting in p.values(Some('c'), "config") {
                    self.git_setting(&setting, seg, depth);
                }
                self.git_commands(&p, &[(Some('u'), "upload-pack")], seg, depth);
                if p.long("template") {
                    // Hooks copied from a directory this cannot read.
                    self.flag_segment(Danger::Unchecked, seg, None);
                }
                None
            }
            _ => None,
        };
        if let Some(d) = danger {
            self.flag_segment(d, seg, None);
        }
    }

    /// One `key=value` setting (`-c`, `clone --config`).
    fn git_setting(&mut self, setting: &Word, seg: usize, depth: usize) {
        match setting.text.split_once('=') {
            Some((key, value)) => {
                let value = Word {
                    text: value.to_string(),
                    ..setting.clone()
                };
                self.git_key(key, Some(&value), seg, depth);
            }
            // `-c key` alone sets it to true.
            None => self.git_key(&setting.text, Some(&Word::plain("true")), seg, depth),
        }
    }

    /// A setting given a value; `None` when the value is not known here.
    fn git_key(&mut self, key: &str, value: Option<&Word>, seg: usize, depth: usize) {
        let key = key.to_ascii_lowercase();
        let runs = COMMAND_SETTINGS.iter().any(|p| key_matches(&key, p));
        let alias = key.starts_with("alias.");
        let code = CODE_SETTINGS.iter().any(|p| key_matches(&key, p))
            // `protocol.ext.allow=always` opens `ext::` remotes, which run commands.
            || (key.starts_with("protocol.") && key.ends_with(".allow"));
        if code {
            return self.flag_segment(Danger::Unchecked, seg, None);
        }
        if !runs && !alias {
            return;
        }
        let Some(value) = value else {
            return self.flag_segment(Danger::Unchecked, seg, None);
        };
        let text = value.text.trim_start();
        if let Some(shell) = text.strip_prefix('!') {
            // `alias.x=!cmd`, `credential.helper=!cmd`: a shell command.
            self.code_value(shell, value.expands, seg, depth);
        } else if alias {
            // An alias without `!` is a git command line.
            self.code_value(&format!("git {text}"), value.expands, seg, depth);
        } else if key.starts_with("credential.") {
            // A helper's name (`store`, `cache --timeout 60`) or program:
            // git runs `git credential-NAME`, a file, not a script here.
            if value.expands {
                self.flag_segment(Danger::Unchecked, seg, None);
            }
        } else {
            self.code_value(text, value.expands, seg, depth);
        }
    }

    /// The options of a subcommand whose value git runs as a command.
    fn git_commands(
        &mut self,
        p: &Parsed,
        options: &[(Option<char>, &str)],
        seg: usize,
        depth: usize,
    ) {
        for (short, long) in options {
            for value in p.values(*short, long) {
                self.code_value(&value.text, value.expands, seg, depth);
            }
        }
    }

    /// `git config [--global] KEY VALUE`, `git config set KEY VALUE`: a
    /// setting that runs a command is read, and a change to the user's or
    /// the system's settings is a write outside the working directory.
    fn git_config(&mut self, args: &[Word], seg: usize, depth: usize) {
        let p = parse_args(
            args,
            "f",
            &["file", "blob", "type", "default", "comment", "value", "url"],
        );
        let mut operands: &[Word] = &p.operands;
        const VERBS: [&str; 7] = [
            "set",
            "unset",
            "get",
            "list",
            "edit",
            "rename-section",
            "remove-section",
        ];
        let verb = operands
            .first()
            .map(|w| w.text.as_str())
            .filter(|v| VERBS.contains(v));
        if verb.is_some() {
            operands = &operands[1..];
        }
        let changes = match verb {
            Some(v) => !matches!(v, "get" | "list"),
            None => {
                operands.len() >= 2
                    || p.flag(
                        "e",
                        &[
                            "edit",
                            "unset",
                            "unset-all",
                            "add",
                            "replace-all",
                            "rename-section",
                            "remove-section",
                        ],
                    )
            }
        };
        if !changes {
            return;
        }
        if let [key, value, ..] = operands {
            self.git_key(&key.text, Some(value), seg, depth);
        }
        if p.long("global") {
            self.write(&Word::plain("~/.gitconfig"), seg, Danger::WriteOutside);
        }
        if p.long("system") {
            self.write(&Word::plain("/etc/gitconfig"), seg, Danger::WriteOutside);
        }
        for file in p.values(Some('f'), "file") {
            self.write(&file, seg, Danger::WriteOutside);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_match_with_subsections() {
        assert!(key_matches("core.sshcommand", "core.sshcommand"));
        assert!(key_matches("filter.lfs.clean", "filter.*.clean"));
        assert!(key_matches(
            "includeif.gitdir:~/a.b/.path",
            "includeif.*.path"
        ));
        assert!(!key_matches("filter.clean", "filter.*.clean"));
        assert!(!key_matches("core.sshcommandx", "core.sshcommand"));
        assert!(!key_matches("diff.textconv", "diff.*.textconv"));
    }
}
