//! Runs that end when a check passes: when the model ends its turn, the
//! `--until` command runs through ag-bash, confined as the model's own bash
//! calls are, and the `--stop` hooks judge the final answer. A failure
//! sends the model back with what failed, up to `--until-tries` checks;
//! every check is a `check` event. This file holds the checks' settings
//! and the verdict; `run/final_checks.rs` runs them for the agent.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::args::Args;
use crate::agent::calls::toolset::ToolSet;
use crate::agent::config::error::SetupError;
use crate::protocol::UntilCheck;

/// Checks a prompt's run may make when `--until-tries` is not given.
pub const DEFAULT_TRIES: u32 = 5;
/// Seconds one check may take when `--until-timeout` is not given.
pub const DEFAULT_TIMEOUT_SECS: f64 = 600.0;
/// The longest check ag-bash runs (its own `timeout` limit).
const MAX_TIMEOUT_SECS: f64 = crate::tools::bash::MAX_TIMEOUT_SECS;
/// Characters of a failing check's output the model reads: the end, where
/// test runners and compilers sum up.
pub const OUTPUT_CHARS: usize = 8_000;
/// Bytes ag-bash keeps of the output (start and end) before the tail is
/// taken: more than the tail, so that the tail is never cut.
pub(in crate::agent) const BASH_MAX_OUTPUT: u64 = 64 * 1024;

/// The checks of a run, as the flags and a resumed session set them.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckConfig {
    /// The `--until` command, with its tries and timeout.
    pub until: Option<UntilCheck>,
    /// The stop hooks, in order.
    pub stop_hooks: Vec<String>,
    /// Checks a prompt's run may make.
    pub tries: u32,
    /// How long one check may take.
    pub timeout: Duration,
}

impl Default for CheckConfig {
    fn default() -> Self {
        CheckConfig {
            until: None,
            stop_hooks: Vec::new(),
            tries: DEFAULT_TRIES,
            timeout: Duration::from_secs_f64(DEFAULT_TIMEOUT_SECS),
        }
    }
}

impl CheckConfig {
    /// Weighs `--until`, `--no-until`, `--until-tries`, `--until-timeout`
    /// and `--stop` against the resumed session's check (`None`: not
    /// resumed, or not recorded).
    pub fn resolve(
        args: &Args,
        resumed: Option<&Option<UntilCheck>>,
    ) -> Result<CheckConfig, SetupError> {
        let tries = match args.until_tries {
            Some(0) => {
                return Err(SetupError::Until(
                    "--until-tries must be 1 or more (the first check counts as one): `--until-tries 1` checks once and ends the run with check_failed if it fails".into(),
                ));
            }
            t => t,
        };
        let timeout = match args.until_timeout.map(|d| d.as_secs_f64()) {
            Some(s) if s <= 0.0 || s > MAX_TIMEOUT_SECS => {
                return Err(SetupError::Until(format!(
                    "--until-timeout must be more than 0 and at most {MAX_TIMEOUT_SECS} seconds (got {s}), e.g. `--until-timeout 900`"
                )));
            }
            s => s,
        };
        let until = match (&args.until, args.no_until, resumed) {
            (Some(cmd), ..) if cmd.trim().is_empty() => {
                return Err(SetupError::Until(
                    "--until needs a command that exits 0 when the work is done, e.g. `--until 'cargo test'`".into(),
                ));
            }
            (Some(cmd), ..) => Some(UntilCheck {
                command: cmd.clone(),
                tries: tries.unwrap_or(DEFAULT_TRIES),
                timeout: timeout.unwrap_or(DEFAULT_TIMEOUT_SECS),
            }),
            (None, true, _) => None,
            (None, false, Some(Some(was))) => Some(UntilCheck {
                command: was.command.clone(),
                tries: tries.unwrap_or(was.tries),
                timeout: timeout.unwrap_or(was.timeout),
            }),
            (None, false, _) => None,
        };
        if until.is_none() && args.stop_hooks.is_empty() && (tries.is_some() || timeout.is_some()) {
            return Err(SetupError::Until(
                "--until-tries and --until-timeout go with a check: add `--until CMD` (a command that exits 0 when the work is done) or `--stop CMD` (a stop hook)".into(),
            ));
        }
        if let Some(bad) = args.stop_hooks.iter().find(|h| h.trim().is_empty()) {
            return Err(SetupError::Until(format!(
                "--stop needs a command (got `{bad}`): a program that reads the final answer as JSON and answers {{\"decision\":\"stop\"}} or {{\"decision\":\"continue\",\"message\":\"...\"}}"
            )));
        }
        let (tries, secs) = match &until {
            Some(u) => (u.tries, u.timeout),
            None => (
                tries.unwrap_or(DEFAULT_TRIES),
                timeout.unwrap_or(DEFAULT_TIMEOUT_SECS),
            ),
        };
        Ok(CheckConfig {
            until,
            stop_hooks: args.stop_hooks.clone(),
            tries,
            timeout: Duration::from_secs_f64(secs),
        })
    }
}

/// The checks of a run, ready to run.
#[derive(Default)]
pub struct StopChecks {
    /// What runs.
    pub config: CheckConfig,
    /// ag-bash, which runs the `--until` command as it runs the model's
    /// bash calls (in the workspace, when there is one).
    pub bash: Option<Arc<ToolSet>>,
}

impl StopChecks {
    /// True when the model's final answer is checked at all.
    pub fn active(&self) -> bool {
        self.config.until.is_some() || !self.config.stop_hooks.is_empty()
    }
}

/// Loads ag-bash for the `--until` command, when there is one.
pub async fn load_bash(config: &CheckConfig, cwd: &Path) -> Result<Option<ToolSet>, SetupError> {
    if config.until.is_none() {
        return Ok(None);
    }
    ToolSet::load(&["bash".to_string()], true, &[], cwd)
        .await
        .map(Some)
}

/// What the checks of one final answer decided.
pub(in crate::agent) enum CheckVerdict {
    /// Every check passed: the run may end.
    Pass,
    /// A check failed: `prompt` sends the model back; `failure` says in
    /// short what failed, for the run's end when no try is left.
    SendBack {
        /// The next user message.
        prompt: String,
        /// `the check `make test` failed (exit status 2)`.
        failure: String,
    },
    /// A check could not be run at all: the run ends with `check_failed`.
    CannotRun(String),
    /// The person interrupted a check.
    Interrupted,
}

/// The last `max` characters of `text`, from the start of a line when one
/// starts within them, after a note of what was cut.
pub fn tail(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_string();
    }
    let start = text
        .char_indices()
        .nth(total - max)
        .map_or(text.len(), |(i, _)| i);
    let kept = &text[start..];
    let kept = match kept.find('\n') {
        Some(nl) if nl + 1 < kept.len() => &kept[nl + 1..],
        _ => kept,
    };
    let cut = total - kept.chars().count();
    format!("[... the first {cut} characters of the output cut ...]\n{kept}")
}

/// The last non-blank line before ag-bash's `exit code:` line: what the
/// shell said about a command it could not run.
pub(in crate::agent) fn last_line(output: &str) -> &str {
    output
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("exit code:"))
        .unwrap_or("no output")
}

/// Output in a fence that no line of it closes.
pub(in crate::agent) fn fenced(text: &str) -> String {
    let mut fence = "```".to_string();
    while text.contains(&fence) {
        fence.push('`');
    }
    format!("{fence}\n{}\n{fence}", text.trim_end())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    fn args(flags: &[&str]) -> Args {
        Args::try_parse_from(std::iter::once("ag-loop").chain(flags.iter().copied())).unwrap()
    }

    fn resolve(flags: &[&str], was: Option<&Option<UntilCheck>>) -> Result<CheckConfig, String> {
        CheckConfig::resolve(&args(flags), was).map_err(|e| e.to_string())
    }

    #[test]
    fn a_resumed_check_is_kept_unless_a_flag_says_otherwise() {
        let was = Some(UntilCheck {
            command: "make test".into(),
            tries: 3,
            timeout: 60.0,
        });
        let kept = resolve(&[], Some(&was)).unwrap();
        assert_eq!(kept.until, was);
        assert_eq!((kept.tries, kept.timeout.as_secs()), (3, 60));
        let more = resolve(&["--until-tries", "9"], Some(&was)).unwrap();
        assert_eq!(more.until.as_ref().map(|u| u.tries), Some(9));
        assert_eq!(
            more.until.as_ref().map(|u| u.command.as_str()),
            Some("make test")
        );
        let other = resolve(&["--until", "cargo test"], Some(&was)).unwrap();
        assert_eq!(
            other.until,
            Some(UntilCheck {
                command: "cargo test".into(),
                tries: DEFAULT_TRIES,
                timeout: DEFAULT_TIMEOUT_SECS,
            })
        );
        assert_eq!(resolve(&["--no-until"], Some(&was)).unwrap().until, None);
        assert_eq!(resolve(&[], None).unwrap(), CheckConfig::default());
    }

    #[test]
    fn flags_that_cannot_work_say_what_to_write() {
        for (flags, says) in [
            (&["--until", "  "][..], "--until 'cargo test'"),
            (
                &["--until", "x", "--until-tries", "0"][..],
                "--until-tries 1",
            ),
            (
                &["--until", "x", "--until-timeout", "0"][..],
                "--until-timeout 900",
            ),
            (
                &["--until", "x", "--until-timeout", "4000"][..],
                "at most 3600",
            ),
            (&["--until-tries", "3"][..], "add `--until CMD`"),
            (&["--stop", ""][..], "--stop needs a command"),
        ] {
            let e = resolve(flags, None).unwrap_err();
            assert!(e.contains(says), "{flags:?}: {e}");
        }
        // Tries go with a stop hook alone too.
        let hook = resolve(&["--stop", "./judge", "--until-tries", "2"], None).unwrap();
        assert_eq!((hook.until, hook.tries), (None, 2));
    }

    #[test]
    fn the_tail_keeps_whole_lines_and_says_what_was_cut() {
        assert_eq!(tail("short\n", 100), "short\n");
        let text = format!("{}\nlast line\n", "x".repeat(50));
        let t = tail(&text, 20);
        assert_eq!(
            t,
            "[... the first 51 characters of the output cut ...]\nlast line\n"
        );
        // Multi-byte text is cut on a character boundary.
        let t = tail(&"é".repeat(30), 10);
        assert!(t.ends_with(&"é".repeat(10)), "{t}");
    }

    #[test]
    fn a_fence_is_longer_than_any_in_the_output() {
        assert_eq!(fenced("a\n"), "```\na\n```");
        assert_eq!(fenced("```x```"), "````\n```x```\n````");
    }
}
