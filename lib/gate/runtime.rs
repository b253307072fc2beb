//! Code that is only put together when a bash line runs, and so cannot be
//! read before: a command word made by an expansion, a glob or a brace
//! list; `source` or `bash` of a name that expands or of a process
//! substitution that does more than print text; variables that other
//! programs run as commands (`GIT_SSH_COMMAND`, `PAGER`) or load as code
//! (`LD_PRELOAD`). Values that are commands are read as scripts when they
//! are literal, and flagged when they expand.

use super::Danger;
use super::bash::{Walker, is_download, piped_text};
use super::shell::{self, Word};
use super::wrappers::is_assignment;

/// Variables whose value programs run as a shell command (git's, the
/// editor and pager every tool starts, ssh's helpers).
const COMMAND_VARIABLES: [&str; 13] = [
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS",
    "GIT_PROXY_COMMAND",
    "SSH_ASKPASS",
    "PAGER",
    "EDITOR",
    "VISUAL",
    "PROMPT_COMMAND",
];
/// Variables naming code or settings that programs load: a library every
/// program preloads, a file bash runs first, git settings (GIT_CONFIG*).
const CODE_FILE_VARIABLES: [&str; 4] = ["LD_PRELOAD", "LD_AUDIT", "BASH_ENV", "ENV"];
impl Walker<'_> {
    /// `GIT_SSH_COMMAND='...' git fetch`, `export PAGER=...`: variables
    /// whose value another program runs as a command are read as scripts.
    pub(super) fn prefix_assignments(&mut self, words: &[Word], seg: usize, depth: usize) {
        let n = words.iter().take_while(|w| is_assignment(&w.text)).count();
        for w in &words[..n] {
            self.assignment_runs(w, seg, depth);
        }
    }

    /// Checks one `NAME=value` word whose value may be run as a command.
    pub fn assignment_runs(&mut self, word: &Word, seg: usize, depth: usize) {
        let Some((name, value)) = word.text.split_once('=') else {
            return;
        };
        let name = name.strip_suffix('+').unwrap_or(name);
        if COMMAND_VARIABLES.contains(&name) {
            self.code_value(value, word.expands, seg, depth);
        } else if CODE_FILE_VARIABLES.contains(&name)
            || (name.starts_with("GIT_CONFIG")
                && name != "GIT_CONFIG_NOSYSTEM"
                && value != "/dev/null")
        {
            // A library, a file of code, or git settings (which may name
            // commands): not readable here.
            self.flag_segment(Danger::Unchecked, seg, None);
        }
    }

    /// A value that a program runs as a shell command (`core.sshCommand`,
    /// `GIT_EDITOR`, `rebase --exec`): read as a script when it is
    /// literal; when it expands, what it holds is only known at run time.
    pub fn code_value(&mut self, value: &str, expands: bool, seg: usize, depth: usize) {
        if expands {
            self.flag_segment(Danger::Unchecked, seg, None);
        }
        self.script(value, depth + 1);
    }

    /// The script operand of `bash FILE`, `source FILE` or `. FILE`: a
    /// file is not inspected, a process substitution is read when it only
    /// prints text, and a name that expands is only known at run time.
    pub fn script_operand(&mut self, operand: &Word, seg: usize, depth: usize) {
        if operand.text.starts_with("<(") {
            let printed = operand.substitutions.first().and_then(|inner| {
                let cmds = shell::parse(inner);
                if cmds.iter().any(|c| is_download(&c.words)) {
                    // Flagged as downloaded code already.
                    return Some(None);
                }
                match cmds.as_slice() {
                    [one] => piped_text(one).map(Some),
                    _ => None,
                }
            });
            match printed {
                Some(Some(text)) => self.script(&text, depth + 1),
                Some(None) => {}
                None => self.flag_segment(Danger::Unchecked, seg, None),
            }
        } else if operand.expands {
            self.flag_segment(Danger::Unchecked, seg, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::bash::tests::dangers;
    use super::*;

    #[test]
    fn command_words_built_at_run_time_are_flagged_arguments_are_not() {
        for cmd in [
            "$(echo rm) -rf /",
            "`echo rm` -rf /",
            "rm${IFS}-rf${IFS}/",
            "IFS=_; c=rm_-rf_/; $c",
            "c=ls; $c",
            "{rm,-rf,/}",
            "/bin/r? -rf /",
            "eval \"$x\"",
            "sh -c \"echo $x\"",
            "source \"$f\"",
            ". <(base64 -d x)",
        ] {
            assert!(dangers(cmd).contains(&Danger::Unchecked), "{cmd}");
        }
        for cmd in [
            "ls $HOME",
            "cat $(git ls-files)",
            "for f in *.rs; do wc -l \"$f\"; done",
            "[ -f x ] && echo y",
            "{ ls; }",
            "eval 'echo hi'",
            "source <(echo ls)",
            "a[1]=x",
        ] {
            assert!(dangers(cmd).is_empty(), "{cmd}: {:?}", dangers(cmd));
        }
    }
}
