//! The guard against going round in circles, over one prompt's run: every
//! identical failing call (same tool, same arguments, same error) is
//! counted wherever it comes, in one turn or across turns and whatever
//! succeeds in between; and so is the streak of failed calls of any kind.
//! The model reads a note on the failing result (the event carries the
//! same text), and past a limit the run stops after the turn. A call that
//! succeeds but returns what it returned before (a test run whose failure
//! the model keeps re-running without a change in between) is answered,
//! the second time, with the request quoted back (the prompt's own words):
//! a model that looks again at what it has seen has lost its aim. The
//! third time it earns a note which names the last call that failed, since
//! a weak model often circles back to looking at the state instead of
//! acting on an error it was given; and at the fifth such call the run
//! stops with its work kept (a model that has done the job and keeps
//! repeating its last call would otherwise run into the turn limit, a
//! failure). A command that exits non-zero and prints why ran, so its
//! result is no error, but it failed: made the fifth time with the same
//! output it stops the run as a repeated failure, and what it printed is
//! the failure a later look is pointed back to. A call waiting on
//! something outside looks the same, but five identical answers in one
//! prompt say that nothing is moving.
//!
//! A file tool's call made again after the identical call succeeded in the
//! same prompt (the same `edit` once more, which now fails because its
//! old text is gone) is the same circle: the work is done and the model
//! does not see it. Its failure says so rather than counting as a new
//! one, and the fifth making of the call stops the run with its work kept.

use std::collections::HashMap;

use serde_json::Value;

use crate::protocol::{Outcome, ToolResult};
use crate::tool_protocol::exec::ABORTED;

/// Identical failing calls before the model is told so.
pub const SAME_WARN: u32 = 2;
/// Identical failing calls that stop the run.
pub const SAME_STOP: u32 = 5;
/// Identical successful calls with identical output before the model is
/// given the request again: a weak model that looks at the same thing a
/// second time has lost sight of what it was asked (sampled on a stalled
/// run, the repeat went from every answer to half of them).
pub const SAME_OUTPUT_RESTATE: u32 = 2;
/// Characters of the request quoted back.
const REQUEST_QUOTED: usize = 600;
/// Identical successful calls with identical output before the model is
/// told that nothing changed.
pub const SAME_OUTPUT_WARN: u32 = 3;
/// Identical successful calls with identical output that stop the run.
pub const SAME_OUTPUT_STOP: u32 = 5;
/// Characters of the last failure quoted in a note.
const FAILURE_QUOTED: usize = 300;
/// The default limit on failed calls in a row, of any kind.
pub const DEFAULT_MAX_FAILED: u32 = 8;

/// The tools whose only job is to change files.
pub(in crate::agent) const FILE_CHANGERS: &[&str] =
    &["write", "edit", "edit_lines", "patch", "delete"];

/// Why the guard stops a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// One call failed the same way this many times.
    Same(u32),
    /// This many calls in a row failed.
    Streak(u32),
    /// One call succeeded with the same output this many times.
    SameOutput(u32),
    /// A file tool's call that had succeeded was made this many times.
    DoneAgain(u32),
    /// One command ran this many times, exiting non-zero with the same
    /// output, not empty, each time.
    SameExit(u32),
    /// The model made the same calls in this many answers in a row, and
    /// nothing moved (`same_answer.rs`).
    SameAnswer(super::same_answer::Repeated),
}

impl Stop {
    /// The reason given on stderr and in `agent_end`.
    pub fn reason(&self) -> String {
        match self {
            Stop::Same(n) => format!(
                "stopped: the model made the same failing tool call {n} times (same tool, arguments and error)"
            ),
            Stop::Streak(n) => format!(
                "stopped: {n} tool calls in a row failed (--max-failed-calls); raise the limit or give the model more guidance"
            ),
            Stop::SameOutput(n) => format!(
                "stopped: the model made the same tool call {n} times, and it ran each time with the same output; its work is kept"
            ),
            Stop::DoneAgain(n) => format!(
                "stopped: the model made the same file change {n} times, after the first had succeeded; its work is kept"
            ),
            Stop::SameExit(n) => format!(
                "stopped: the model ran the same command {n} times, and each time it exited non-zero with the same output"
            ),
            Stop::SameAnswer(r) => format!(
                "stopped: the model sent the same {} tool calls in {} answers in a row, and nothing they looked at or changed moved in between{}",
                r.calls,
                r.answers,
                if r.failed { "" } else { "; its work is kept" }
            ),
        }
    }

    /// The outcome a run stopped this way has.
    pub fn outcome(&self) -> Outcome {
        match self {
            Stop::Same(_) | Stop::Streak(_) | Stop::SameExit(_) => Outcome::RepeatedFailure,
            Stop::SameOutput(_) | Stop::DoneAgain(_) => Outcome::RepeatedCall,
            Stop::SameAnswer(r) if r.failed => Outcome::RepeatedFailure,
            Stop::SameAnswer(_) => Outcome::RepeatedCall,
        }
    }
}

/// Counts of one run.
#[derive(Debug, Default)]
pub struct FailureGuard {
    /// Calls seen, by tool, arguments, error code and output; the output
    /// is hashed, so a long run keeps a few bytes a call.
    same: HashMap<(String, u64), u32>,
    streak: u32,
    /// Failed calls in a row that stop the run; 0 for no limit.
    max_failed: u32,
    stop: Option<Stop>,
    /// The last call that failed: its tool, the start of its error and
    /// the call's key (a command failing again is not quoted to itself).
    last_failure: Option<(String, String, u64)>,
    /// File tools' calls that succeeded, by tool and arguments: how many
    /// times each was made since.
    made: HashMap<u64, u32>,
    /// The prompt's own words, on one line, to quote back.
    request: String,
    /// The answers, whole.
    answers: super::same_answer::SameAnswer,
}

impl FailureGuard {
    /// A guard that stops after `max_failed` failed calls in a row (0: never).
    pub fn new(max_failed: u32) -> Self {
        FailureGuard {
            max_failed,
            ..Default::default()
        }
    }

    /// Forgets everything: a new prompt starts, asking `request` (its
    /// own words, without what ag attached to them).
    pub fn begin(&mut self, request: &str) {
        *self = FailureGuard::new(self.max_failed);
        self.request = one_line(request, REQUEST_QUOTED);
    }

    /// Ends the answer whose calls were noted since the last end: the
    /// third in a row with the calls of the one before, that moved
    /// nothing, stops the run.
    pub fn end_answer(&mut self) {
        if let Some(r) = self.answers.end() {
            self.stop.get_or_insert(Stop::SameAnswer(r));
        }
    }

    /// Why the run must stop, once a limit was reached.
    pub fn stop(&self) -> Option<&Stop> {
        self.stop.as_ref()
    }

    /// Counts a finished call and adds to its output the note the model
    /// should read. Interrupted calls count neither way.
    pub fn note(&mut self, name: &str, args: &Value, r: &mut ToolResult) {
        if r.error_code.as_deref() == Some(ABORTED) {
            return;
        }
        let key = (
            format!(
                "{name}\0{}\0{}\0{}",
                r.is_error,
                canonical(args),
                r.error_code.as_deref().unwrap_or("")
            ),
            xxhash_rust::xxh3::xxh3_64(without_digits(&r.output).as_bytes()),
        );
        let called = xxhash_rust::xxh3::xxh3_64(format!("{name}\0{}", canonical(args)).as_bytes());
        let call = FILE_CHANGERS
            .contains(&crate::agent::config::named_sets::own_name(name))
            .then_some(called);
        let changed_file =
            call.is_some() && !r.is_error && r.details.get("unchanged") != Some(&Value::Bool(true));
        self.answers.call(
            called,
            (!r.is_error).then_some(key.1),
            r.is_error || exited_non_zero(r),
            changed_file || looks_at_a_job(name, args),
        );
        if let (true, Some(call)) = (r.is_error, call)
            && let Some(made) = self.made.get_mut(&call)
        {
            *made += 1;
            let n = *made;
            r.output.push_str(
                "\n\nThis same call succeeded earlier in this request, so the change it made is in place; it fails now because that change was already made. Do not make it again: go on to what is left of the request, or give your answer.",
            );
            if n >= SAME_OUTPUT_STOP {
                r.output
                    .push_str(" ag-loop stops after this turn, keeping what was done.");
                self.stop.get_or_insert(Stop::DoneAgain(n));
            }
            return;
        }
        let key_hash = xxhash_rust::xxh3::xxh3_64(key.0.as_bytes());
        let n = {
            let n = self.same.entry(key).or_insert(0);
            *n += 1;
            *n
        };
        if !r.is_error {
            // What a command that failed printed, before any note is
            // added. One that failed without a word (a grep that found
            // nothing, checking that a line is gone) has nothing to act
            // on, and its repeats are looks like any other.
            let exited = (exited_non_zero(r) && said_something(r)).then(|| quoted(&r.output));
            // A file change is counted by the call alone: made again, it
            // answers otherwise ("already holds exactly this text").
            let n = match call {
                Some(call) => {
                    let made = self.made.entry(call).or_insert(0);
                    *made += 1;
                    *made
                }
                None => n,
            };
            self.streak = 0;
            // A write of the text the file held changed nothing, as a look
            // does: the model took it for the change asked, and has lost
            // its aim as one that looks again has.
            let changed = call.is_some() && r.details.get("unchanged") != Some(&Value::Bool(true));
            if n == SAME_OUTPUT_RESTATE && !changed && !self.request.is_empty() {
                let lead = if call.is_some() {
                    "This call changed nothing: the file already held that text."
                } else {
                    "This call returned what it returned before: nothing it looks at changed in between."
                };
                r.output.push_str(&format!(
                    "\n\n{lead} The request was: \"{}\" Act on it now: change the files it needs changed, or answer it if it asks a question.",
                    self.request
                ));
            } else if n >= SAME_OUTPUT_WARN && changed {
                // A file change made again did change the file (an edit
                // whose old text is still there applies once more), so
                // "nothing changed" would be false here.
                r.output.push_str(&format!(
                    "\n\nThis same file change has now been made {n} times. It is in place: making it again does not take the request further (an edit whose old text is still in the file changes it once more). Go on to what is left of the request, or give your answer."
                ));
            } else if n >= SAME_OUTPUT_WARN {
                r.output.push_str(&format!(
                    "\n\nThis exact call has now returned the same output {n} times: nothing it looks at changed in between. Repeating it will not change the result; make a change first, or try a different approach."
                ));
            }
            if n >= SAME_OUTPUT_WARN {
                if let Some((tool, said, _)) =
                    self.last_failure.as_ref().filter(|f| f.2 != key_hash)
                {
                    r.output.push_str(&format!(
                        " The last call that failed was `{tool}`, and it said: \"{said}\". Act on what it said."
                    ));
                }
                if n >= SAME_OUTPUT_STOP && exited.is_some() {
                    r.output.push_str(" ag-loop stops after this turn.");
                    self.stop.get_or_insert(Stop::SameExit(n));
                } else if n >= SAME_OUTPUT_STOP {
                    r.output
                        .push_str(" ag-loop stops after this turn, keeping what was done.");
                    self.stop.get_or_insert(Stop::SameOutput(n));
                }
            }
            // A command that said why it failed is the failure a later
            // look is pointed back to (`git commit` run through bash, with
            // git's word on the missing identity).
            if let Some(said) = exited {
                self.last_failure = Some((name.to_string(), said, key_hash));
            }
            return;
        }
        self.last_failure = Some((name.to_string(), quoted(&r.output), key_hash));
        self.streak += 1;
        let mut notes = Vec::new();
        if n >= SAME_WARN {
            notes.push(format!(
                "This exact call has now failed {n} times with the same error. Do not repeat it: read the error, check the current state (read the file again, list the directory), and try a different approach."
            ));
        }
        let streak_warn = self.max_failed.div_ceil(2).max(2);
        if self.max_failed > 0 && self.streak >= self.max_failed {
            notes.push(format!(
                "Your last {} tool calls all failed; ag-loop stops after this turn.",
                self.streak
            ));
            self.stop.get_or_insert(Stop::Streak(self.streak));
        } else if self.max_failed > 0 && self.streak >= streak_warn {
            notes.push(format!(
                "Your last {} tool calls all failed. Step back: check the current state and change the approach (after {} failed calls in a row ag-loop stops).",
                self.streak, self.max_failed
            ));
        }
        if n >= SAME_STOP {
            notes.push("ag-loop stops after this turn.".to_string());
            self.stop.get_or_insert(Stop::Same(n));
        }
        if !notes.is_empty() {
            r.output.push_str("\n\n");
            r.output.push_str(&notes.join(" "));
        }
    }
}

/// Whether a call looks at ag-bash's background jobs (`job_output`,
/// `job_list`): `bash` with a job, or with no command at all (the guard
/// gets the model's own arguments, and `job_list` has none).
fn looks_at_a_job(name: &str, args: &Value) -> bool {
    crate::agent::config::named_sets::own_name(name) == "bash"
        && (args.get("job").is_some() || args.get("command").is_none())
}

/// Whether a call that ran reports failure by its exit status: the tool
/// did its job (the result is no error), but the command it ran failed.
fn exited_non_zero(r: &ToolResult) -> bool {
    r.details
        .get("exit_code")
        .and_then(Value::as_i64)
        .is_some_and(|c| c != 0)
}

/// Whether a command printed anything, beyond the exit status ag adds.
fn said_something(r: &ToolResult) -> bool {
    r.details
        .get("output_bytes")
        .and_then(Value::as_u64)
        .is_none_or(|b| b > 0)
}

/// The start of a failure's text on one line, for a note.
fn quoted(output: &str) -> String {
    one_line(output, FAILURE_QUOTED)
}

/// `text` on one line, cut at `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= max {
        return line;
    }
    line.chars()
        .take(max)
        .collect::<String>()
        .trim_end()
        .to_string()
        + "…"
}

/// The arguments with object keys sorted, so that the same call with its
/// fields in another order counts as the same.
fn canonical(v: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&m[k])))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(v).to_string()
}

/// An error with its numbers blanked: a time, a pid or a count that
/// differs between two runs of the same failing call does not make the
/// error a new one.
fn without_digits(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_number = false;
    for c in s.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('#');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn succeeded() -> ToolResult {
        ToolResult {
            id: None,
            output: "fine".into(),
            details: Value::Null,
            is_error: false,
            error_code: None,
            images: Vec::new(),
        }
    }

    fn failed(output: &str) -> ToolResult {
        ToolResult {
            output: output.into(),
            is_error: true,
            error_code: Some("edit.not_found".into()),
            ..succeeded()
        }
    }

    #[test]
    fn counts_identical_failures_across_successes_and_key_order() {
        let mut g = FailureGuard::new(0);
        let ok = succeeded;
        for i in 1..=5 {
            let args = if i % 2 == 0 {
                json!({"b": 2, "a": 1})
            } else {
                json!({"a": 1, "b": 2})
            };
            let mut r = failed("not found (took 12 ms)");
            g.note("edit", &args, &mut r);
            g.note("read", &json!({}), &mut ok());
            if i >= SAME_WARN {
                assert!(
                    r.output.contains(&format!("failed {i} times")),
                    "{}",
                    r.output
                );
            } else {
                assert_eq!(r.output, "not found (took 12 ms)");
            }
        }
        assert_eq!(g.stop(), Some(&Stop::Same(5)));
    }

    #[test]
    fn a_file_change_made_again_after_it_succeeded_says_so_then_stops_with_the_work_kept() {
        let mut g = FailureGuard::new(3);
        let fix =
            json!({"file_path": "README.md", "old_string": "recieve", "new_string": "receive"});
        g.note("edit", &fix, &mut succeeded());
        for n in 2..=SAME_OUTPUT_STOP {
            let mut r = failed("old_string was not found in the file.");
            g.note("edit", &fix, &mut r);
            assert!(
                r.output
                    .contains("This same call succeeded earlier in this request"),
                "{}",
                r.output
            );
            assert!(!r.output.contains("failed 2 times"), "{}", r.output);
            // Not a new failure: the streak of 3 would have stopped it first.
            assert_eq!(g.stop().is_some(), n == SAME_OUTPUT_STOP, "{n}");
        }
        assert_eq!(g.stop(), Some(&Stop::DoneAgain(SAME_OUTPUT_STOP)));
        assert_eq!(g.stop().unwrap().outcome(), Outcome::RepeatedCall);
        assert!(g.stop().unwrap().reason().contains("its work is kept"));

        // Another edit, a bash command, or the same edit failing before any
        // success: counted as failures, as before.
        let mut g = FailureGuard::new(0);
        g.note("bash", &json!({"command": "npm test"}), &mut succeeded());
        let mut r = failed("1 test failed");
        g.note("bash", &json!({"command": "npm test"}), &mut r);
        assert!(!r.output.contains("succeeded earlier"), "{}", r.output);
        let mut r = failed("not found");
        g.note("edit", &fix, &mut r);
        assert!(!r.output.contains("succeeded earlier"), "{}", r.output);
    }

    #[test]
    fn a_file_change_made_again_and_again_is_not_said_to_change_nothing() {
        let mut g = FailureGuard::new(0);
        let edit = json!({"file_path": "settings.json", "old_string": "debug", "new_string": "debug=true"});
        let said = |i: u32, r: &ToolResult| {
            assert!(
                !r.output.contains("nothing it looks at changed"),
                "call {i}: {}",
                r.output
            );
            r.output.contains("This same file change has now been made")
        };
        for i in 1..=SAME_OUTPUT_STOP {
            let mut r = ToolResult {
                output: "Replaced 1 occurrence in settings.json (1 line changed)".into(),
                ..succeeded()
            };
            g.note("edit", &edit, &mut r);
            assert_eq!(said(i, &r), i >= SAME_OUTPUT_WARN, "call {i}: {}", r.output);
        }
        assert_eq!(g.stop(), Some(&Stop::SameOutput(SAME_OUTPUT_STOP)));
    }

    #[test]
    fn the_same_output_again_and_again_is_pointed_out_then_stops_the_run() {
        let mut g = FailureGuard::new(2);
        let test_run = |out: &str| ToolResult {
            output: out.into(),
            ..succeeded()
        };
        let args = json!({"command": "cargo test"});
        for i in 1..SAME_OUTPUT_STOP {
            let mut r = test_run("1 failed (in 0.42 s)");
            g.note("bash", &args, &mut r);
            assert_eq!(
                r.output.contains("same output"),
                i >= SAME_OUTPUT_WARN,
                "call {i}: {}",
                r.output
            );
            assert_eq!(g.stop(), None, "call {i}");
        }
        // Another output (the model changed something) starts afresh.
        let mut r = test_run("all passed");
        g.note("bash", &args, &mut r);
        assert_eq!(r.output, "all passed");
        let mut r = test_run("1 failed (in 0.40 s)");
        g.note("bash", &args, &mut r);
        assert!(r.output.contains("stops after this turn"), "{}", r.output);
        assert_eq!(g.stop(), Some(&Stop::SameOutput(SAME_OUTPUT_STOP)));
        assert_eq!(g.stop().unwrap().outcome(), Outcome::RepeatedCall);
    }

    /// A look made a second time, with nothing changed, brings back the
    /// request: the prompt's own words, on one line; a file change made
    /// again does not (it says otherwise), nor does a third look.
    #[test]
    fn a_second_identical_look_restates_the_request() {
        let mut g = FailureGuard::new(0);
        g.begin("The report counts cancelled orders.\n\nLeave them out.");
        let status = json!({"paths": []});
        let look = |g: &mut FailureGuard| {
            let mut r = ToolResult {
                output: "Nothing to commit, working tree clean.".into(),
                ..succeeded()
            };
            g.note("git_status", &status, &mut r);
            r.output
        };
        assert_eq!(look(&mut g), "Nothing to commit, working tree clean.");
        let second = look(&mut g);
        assert!(
            second.ends_with("The request was: \"The report counts cancelled orders. Leave them out.\" Act on it now: change the files it needs changed, or answer it if it asks a question."),
            "{second}"
        );
        let third = look(&mut g);
        assert!(!third.contains("The request was"), "{third}");
        assert!(third.contains("same output 3 times"), "{third}");

        let edit = json!({"file_path": "a.txt", "old_string": "x", "new_string": "xy"});
        for _ in 0..2 {
            let mut r = ToolResult {
                output: "Replaced 1 occurrence".into(),
                ..succeeded()
            };
            g.note("edit", &edit, &mut r);
            assert!(!r.output.contains("The request was"), "{}", r.output);
        }

        // A long request is cut; none at all (a guard never begun) says nothing.
        let mut g = FailureGuard::new(0);
        g.begin(&"word ".repeat(400));
        look(&mut g);
        let cut = look(&mut g);
        assert!(cut.contains("word word…\" Act on it now"), "{cut}");
        let mut g = FailureGuard::new(0);
        look(&mut g);
        assert_eq!(look(&mut g), "Nothing to commit, working tree clean.");
    }

    /// A write of the text the file held, made again, changed nothing:
    /// it brings back the request as a look does, and is never said to
    /// be "in place".
    #[test]
    fn a_write_that_changed_nothing_made_again_restates_the_request() {
        let mut g = FailureGuard::new(0);
        g.begin("Put the day in the archive's name.");
        let write = json!({"file_path": "backup.sh", "content": "tar -czf notes.tgz notes"});
        let mut outputs = Vec::new();
        for i in 1..=SAME_OUTPUT_STOP {
            let mut r = if i == 1 {
                ToolResult {
                    output: "Overwrote backup.sh (24 bytes)".into(),
                    ..succeeded()
                }
            } else {
                ToolResult {
                    output:
                        "backup.sh already holds exactly this text (24 bytes): nothing was changed"
                            .into(),
                    details: json!({"unchanged": true}),
                    ..succeeded()
                }
            };
            g.note("write", &write, &mut r);
            assert!(!r.output.contains("in place"), "call {i}: {}", r.output);
            outputs.push(r.output);
        }
        assert!(
            outputs[1].ends_with("This call changed nothing: the file already held that text. The request was: \"Put the day in the archive's name.\" Act on it now: change the files it needs changed, or answer it if it asks a question."),
            "{}",
            outputs[1]
        );
        assert!(outputs[2].contains("same output 3 times"), "{}", outputs[2]);
        assert!(outputs[4].contains("stops after this turn, keeping what was done"));
        assert_eq!(g.stop(), Some(&Stop::SameOutput(SAME_OUTPUT_STOP)));
    }

    /// A command's result as ag-bash gives it: no error, whatever its
    /// exit status.
    fn ran(output: &str, code: i64) -> ToolResult {
        ToolResult {
            output: format!("{output}\n\nexit code: {code}\n"),
            details: json!({"exit_code": code, "output_bytes": output.len()}),
            ..succeeded()
        }
    }

    /// The model that circles back to `git status` after a commit failed
    /// is shown the failure it is not acting on, whether the commit failed
    /// as a tool's error or as a command's exit status.
    #[test]
    fn a_repeated_look_names_the_last_failure() {
        let said = "Author identity unknown\n\n*** Please tell me who you are.\n\nRun\n\n  git config user.email \"you@example.com\"";
        for commit in [
            ToolResult {
                output: said.into(),
                ..failed("")
            },
            ran(said, 128),
        ] {
            let mut g = FailureGuard::new(0);
            let mut r = commit;
            g.note("bash", &json!({"command": "git commit -m x"}), &mut r);
            let mut r = succeeded();
            for _ in 0..SAME_OUTPUT_WARN {
                r = succeeded();
                g.note("bash", &json!({"command": "git status"}), &mut r);
            }
            assert!(
                r.output.contains("The last call that failed was `bash`, and it said: \"Author identity unknown *** Please tell me who you are. Run git config user.email"),
                "{}",
                r.output
            );
        }

        // A command that failed without a word (grep finding nothing) is
        // not a failure to act on.
        let mut g = FailureGuard::new(0);
        g.note(
            "bash",
            &json!({"command": "grep -r TODO src"}),
            &mut ran("", 1),
        );
        let mut r = succeeded();
        for _ in 0..SAME_OUTPUT_WARN {
            r = succeeded();
            g.note("bash", &json!({"command": "git status"}), &mut r);
        }
        assert!(
            !r.output.contains("The last call that failed"),
            "{}",
            r.output
        );
    }

    /// The same command failing by its exit status, five times with the
    /// same output, stops the run as a repeated failure, not as a repeated
    /// call whose work is kept; its notes never quote it to itself.
    #[test]
    fn a_command_failing_the_same_way_again_and_again_is_a_repeated_failure() {
        let mut g = FailureGuard::new(0);
        let copy = json!({"command": "cp sales.csv sales.csv"});
        let mut r = ran("cp: cannot stat 'sales.csv': No such file or directory", 1);
        for _ in 0..SAME_OUTPUT_STOP {
            r = ran("cp: cannot stat 'sales.csv': No such file or directory", 1);
            g.note("bash", &copy, &mut r);
            assert!(
                !r.output.contains("The last call that failed"),
                "{}",
                r.output
            );
        }
        assert!(
            r.output.ends_with("ag-loop stops after this turn."),
            "{}",
            r.output
        );
        let stop = g.stop().unwrap();
        assert_eq!(stop, &Stop::SameExit(SAME_OUTPUT_STOP));
        assert_eq!(stop.outcome(), Outcome::RepeatedFailure);
        assert!(
            stop.reason().contains("exited non-zero"),
            "{}",
            stop.reason()
        );

        // The failure quoted later is what the command printed, not the
        // notes its repeats were given.
        let mut g = FailureGuard::new(0);
        g.begin("Back up the sales file.");
        for _ in 0..SAME_OUTPUT_RESTATE {
            g.note("bash", &copy, &mut ran("cp: cannot stat 'sales.csv'", 1));
        }
        let mut r = succeeded();
        for _ in 0..SAME_OUTPUT_WARN {
            r = succeeded();
            g.note("ls", &json!({}), &mut r);
        }
        assert!(
            r.output
                .contains("it said: \"cp: cannot stat 'sales.csv' exit code: 1\". Act on"),
            "{}",
            r.output
        );

        // Exiting 0 the same way five times is still the work kept, and so
        // is a grep that finds nothing five times (the line it checks for
        // is gone): it failed without a word.
        for code in [0, 1] {
            let mut g = FailureGuard::new(0);
            for _ in 0..SAME_OUTPUT_STOP {
                g.note("bash", &copy, &mut ran("", code));
            }
            assert_eq!(g.stop().unwrap().outcome(), Outcome::RepeatedCall, "{code}");
        }
    }

    #[test]
    fn a_streak_of_different_failures_stops() {
        let mut g = FailureGuard::new(4);
        for i in 0..3 {
            let mut r = failed(&format!("error {}", "x".repeat(i + 1)));
            g.note("bash", &json!({"command": format!("c{i}")}), &mut r);
            assert_eq!(g.stop(), None);
            if i >= 1 {
                assert!(r.output.contains("all failed"), "{}", r.output);
            }
        }
        let mut r = failed("error 4");
        g.note("bash", &json!({"command": "c4"}), &mut r);
        assert_eq!(g.stop(), Some(&Stop::Streak(4)));
        assert!(r.output.contains("stops after this turn"));
    }

    #[test]
    fn a_success_ends_the_streak_and_aborts_are_neutral() {
        let mut g = FailureGuard::new(2);
        g.note("bash", &json!({"command": "a"}), &mut failed("x"));
        g.note("bash", &json!({}), &mut succeeded());
        g.note("bash", &json!({"command": "b"}), &mut failed("y"));
        let mut aborted = failed("stopped");
        aborted.error_code = Some(ABORTED.into());
        g.note("bash", &json!({"command": "c"}), &mut aborted);
        assert_eq!(g.stop(), None);
        g.note("bash", &json!({"command": "d"}), &mut failed("z"));
        assert_eq!(g.stop(), Some(&Stop::Streak(2)));
    }

    #[test]
    fn the_same_answer_again_stops_unless_it_looks_at_a_job() {
        let answer = |g: &mut FailureGuard, calls: &[(&str, Value)]| {
            for (name, args) in calls {
                g.note(name, args, &mut succeeded());
            }
            g.end_answer();
        };
        let looks = [
            ("read", json!({"file_path": "a.py"})),
            ("grep", json!({"query": "main"})),
        ];
        let mut g = FailureGuard::new(0);
        answer(&mut g, &looks);
        answer(&mut g, &looks);
        assert_eq!(g.stop(), None);
        answer(&mut g, &looks);
        let stop = g.stop().expect("stopped").clone();
        assert_eq!(stop.outcome(), Outcome::RepeatedCall);
        assert!(
            stop.reason()
                .contains("same 2 tool calls in 3 answers in a row"),
            "{}",
            stop.reason()
        );
        // A background job looked at beside a command: it may be working
        // quietly, so only each call's own count applies.
        for job in [json!({"job": "1"}), json!({})] {
            let polls = [("bash", job), ("bash", json!({"command": "ls"}))];
            let mut g = FailureGuard::new(0);
            for _ in 0..SAME_OUTPUT_STOP - 1 {
                answer(&mut g, &polls);
            }
            assert_eq!(g.stop(), None);
        }
    }
}
