//! One task (`ag-fanout --task N TASKS`): its repository cloned when it
//! names one, its session made, ag-loop run in its directory, its check
//! reported, its diff taken, and one result line printed (and, for the
//! cluster engines, written whole to a results directory). What every
//! engine runs for each task, here, on another machine, in a Slurm array
//! task or in a pod.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{Value, json};

use super::snapshot::Snapshot;
use super::tasks_file::{Task, TasksFile};
use super::{BIN, results};
use crate::cli::{ExitStatus, error_line};
use crate::proc::{Cancel, CaptureLimit, Command, Output, TerminationGuard};
use crate::protocol::{FanoutResult, FanoutUsage};

/// ag-loop's default `--until-timeout`, which ag-fanout's own run of a
/// check takes too.
const CHECK_TIMEOUT: &str = "600";
/// The characters of a check's output a result line keeps.
const CHECK_OUTPUT_CHARS: usize = 2000;
/// The bytes of ag-loop's stderr an error quotes.
const STDERR_TAIL: usize = 2000;
/// The longest event line looked at; longer ones (a huge tool output) are
/// no `agent_end` or check anyway.
const MAX_EVENT_LINE: usize = 16 * 1024 * 1024;

/// Why a task's run stopped short: a termination signal (the engine ended
/// it), after which no result is printed.
struct Stopped;

/// Runs line `n` of `tasks`, prints its result line and, with
/// `results_dir`, writes it there as `N.json`. Exit status 0 when the task
/// finished, 1 when it did not, 2 when it could not be tried, 128+N when a
/// signal ended it (then there is no result).
pub fn run(tasks_path: &Path, n: u64, results_dir: Option<&Path>) -> ExitStatus {
    let tasks = match TasksFile::read(tasks_path) {
        Ok(t) => t,
        Err(e) => {
            error_line(BIN, &e, None);
            return ExitStatus::Input;
        }
    };
    if n < 1 || n > tasks.lines.len() as u64 {
        error_line(
            BIN,
            &format!(
                "--task {n}: `{}` has {} lines",
                tasks_path.display(),
                tasks.lines.len()
            ),
            Some("line numbers start at 1"),
        );
        return ExitStatus::Input;
    }
    if !super::tasks_file::is_task(&tasks.lines[n as usize - 1]) {
        return ExitStatus::Success; // a blank or comment line: no task, no result
    }
    // Ended by the engine (an interrupt, a time limit): ag-loop is stopped,
    // the scratch directory removed on the way out, and no result printed.
    let cancel = match Cancel::new() {
        Ok(c) => c,
        Err(e) => {
            error_line(BIN, &format!("cannot make a cancel handle: {e}"), None);
            return ExitStatus::Input;
        }
    };
    let guard = TerminationGuard::install(&cancel);
    let started = Instant::now();
    let mut result = FanoutResult::not_run(n, "failed");
    let ran = match tasks.task(n) {
        Err(e) => {
            result.outcome = "invalid_task".into();
            result.error = Some(e);
            Ok(())
        }
        Ok(task) => {
            result.id = task.id.clone();
            result.model = task.model.clone();
            match tempfile::Builder::new().prefix("fanout-").tempdir() {
                Ok(scratch) => run_session(&tasks, &task, &mut result, scratch.path(), &cancel)
                    .or_else(|e| match e {
                        Err(msg) => {
                            result.error = Some(msg);
                            Ok(())
                        }
                        Ok(Stopped) => Err(Stopped),
                    }),
                Err(e) => {
                    result.error = Some(format!("cannot make a scratch directory: {e}"));
                    Ok(())
                }
            }
        }
    };
    if ran.is_err() || cancel.is_cancelled() {
        drop(guard);
        let sig = crate::proc::termination_signal().unwrap_or(15);
        return ExitStatus::Signal(sig);
    }
    result.seconds = (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
    let finished = result.outcome == "finished";
    // The result line is written whole: a signal from here on only waits
    // (the guard holds it) for the exit.
    if let Some(dir) = results_dir
        && let Err(e) = results::write(dir, &result)
    {
        error_line(BIN, &e, None);
        return ExitStatus::Input;
    }
    if let Err(e) = results::print(&result) {
        error_line(BIN, &format!("cannot write the result: {e}"), None);
        return ExitStatus::Input;
    }
    drop(guard);
    if finished {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    }
}

/// `Err(Ok(Stopped))` when a signal ended the run, `Err(Err(message))`
/// when something failed that the result's `error` should say.
type Step<T> = Result<T, Result<Stopped, String>>;

fn fail<T>(msg: String) -> Step<T> {
    if msg == "stopped" {
        Err(Ok(Stopped))
    } else {
        Err(Err(msg))
    }
}

fn run_session(
    tasks: &TasksFile,
    task: &Task,
    result: &mut FanoutResult,
    scratch: &Path,
    cancel: &Cancel,
) -> Step<()> {
    // Relative to the tasks file, wherever ag-fanout runs (a remote
    // machine's home directory, an array task's node, a pod).
    let base = tasks.base();
    let directory = match &task.dir {
        Some(d) => base.join(d),
        None => scratch.join("repo"),
    };
    if let Some(repo) = &task.repo
        && !directory.exists()
    {
        let out = Command::new("git")
            .args(["clone", "-q", "--", repo])
            .arg(&directory)
            .cwd(&base)
            .cancel(cancel)
            .output(Output::Separate {
                stdout: CaptureLimit::new(4096),
                stderr: CaptureLimit::new(4096),
            })
            .run()
            .or_else(|e| fail(format!("git clone `{repo}`: {e}")))?;
        if out.stopped.is_some() {
            return Err(Ok(Stopped));
        }
        if out.code() != 0 {
            result.dir = Some(directory.to_string_lossy().into_owned());
            result.outcome = "clone_failed".into();
            result.error = Some(format!("git clone `{repo}`: {}", out.stderr.lossy().trim()));
            return Ok(());
        }
    }
    result.dir = Some(directory.to_string_lossy().into_owned());
    if !directory.is_dir() {
        result.outcome = "no_directory".into();
        result.error = Some(format!("`{}` is not a directory", directory.display()));
        return Ok(());
    }

    let snap = Snapshot::new(&directory, scratch, cancel).or_else(fail)?;
    let before = snap.tree().or_else(fail)?;
    // The session is made first so that its id is known whatever happens
    // to ag-loop, even with many sessions of one directory running at once.
    let store = crate::session::Store::from_env();
    let (file, _) = store
        .create(&directory, json!({}), None)
        .or_else(|e| fail(format!("cannot make the task's session: {e}")))?;
    result.session = Some(file.id.clone());

    let loop_bin = std::env::var_os("FANOUT_AG_LOOP")
        .map_or_else(|| crate::proc::sibling("ag-loop"), PathBuf::from);
    let mut args: Vec<String> = vec![
        "--json".into(),
        "--session".into(),
        file.id.clone(),
        "--cwd".into(),
        directory.to_string_lossy().into_owned(),
    ];
    if let Some(m) = &task.model {
        args.extend(["--model".into(), m.clone()]);
    }
    if let Some(check) = &task.check {
        args.extend(["--until".into(), check.clone()]);
        if let Some(t) = task.check_tries {
            args.extend(["--until-tries".into(), t.to_string()]);
        }
        if let Some(t) = &task.check_timeout {
            args.extend(["--until-timeout".into(), t.to_string()]);
        }
    }
    args.extend(task.args.iter().cloned());
    args.extend(["--".into(), task.prompt.clone()]);
    let watch = Arc::new(Mutex::new(EventWatch::default()));
    let w = watch.clone();
    let out = Command::new(&loop_bin)
        .args(&args)
        .cwd(&directory)
        .cancel(cancel)
        .on_output(move |bytes| {
            if let Ok(mut w) = w.lock() {
                w.feed(bytes);
            }
        })
        .output(Output::Separate {
            stdout: CaptureLimit::new(0),
            stderr: CaptureLimit {
                max_bytes: STDERR_TAIL,
                head_bytes: 0,
                ..CaptureLimit::new(STDERR_TAIL)
            },
        })
        .run()
        .or_else(|e| fail(format!("cannot run `{}`: {e}", loop_bin.display())))?;
    if out.stopped.is_some() {
        return Err(Ok(Stopped));
    }
    let code = out.code();
    result.exit = Some(code);
    let (end, last_check) = match watch.lock() {
        Ok(mut w) => {
            w.finish();
            (w.end.take(), w.last_check.take())
        }
        Err(_) => (None, None),
    };
    if let Some(end) = &end {
        let usage = end.get("usage").cloned().unwrap_or(Value::Null);
        result.outcome = end
            .get("outcome")
            .and_then(Value::as_str)
            .unwrap_or("failed")
            .to_string();
        result.cost = usage
            .pointer("/cost/total")
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
        let count = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
        result.usage = Some(FanoutUsage {
            input: count("input"),
            output: count("output"),
            cache_read: count("cache_read"),
            cache_write: count("cache_write"),
        });
        if let Some(e) = end.get("error").and_then(Value::as_str)
            && !e.is_empty()
        {
            result.error = Some(e.to_string());
        }
    }
    if end.is_none() || (code != 0 && result.outcome == "finished") {
        let mut tail = out.stderr.head.clone();
        tail.extend_from_slice(&out.stderr.tail);
        let tail = String::from_utf8_lossy(&tail).trim().to_string();
        if end.is_none() {
            result.outcome = "failed".into();
        }
        let mut msg = format!("ag-loop exited with status {code}");
        if !tail.is_empty() {
            msg.push_str(": ");
            msg.push_str(&tail);
        }
        result.error = Some(msg);
    }

    if let Some(check) = &task.check {
        report_check(
            task,
            check,
            &directory,
            result,
            end.as_ref(),
            last_check,
            &loop_bin,
            cancel,
        )?;
    }

    let after = snap.tree().or_else(fail)?;
    let cap = std::env::var("FANOUT_MAX_DIFF")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(1024 * 1024);
    let (diff, truncated) = snap.diff(&before, &after, cap).or_else(fail)?;
    result.diff_truncated = Some(truncated);
    result.diff = Some(String::from_utf8_lossy(&diff).into_owned());
    Ok(())
}

/// Puts pass or fail on the result line: ag-loop's last check when it
/// judged the tree the run left, else one run of the check now.
#[allow(clippy::too_many_arguments)]
fn report_check(
    task: &Task,
    check: &str,
    directory: &Path,
    result: &mut FanoutResult,
    end: Option<&Value>,
    last_check: Option<Value>,
    loop_bin: &Path,
    cancel: &Cancel,
) -> Step<()> {
    let outcome = end.and_then(|e| e.get("outcome")).and_then(Value::as_str);
    if let Some(last) = last_check
        && matches!(outcome, Some("finished" | "check_failed"))
    {
        let passed = last.get("passed").and_then(Value::as_bool) == Some(true);
        result.check = Some(if passed { "pass" } else { "fail" }.into());
        result.check_exit = Some(
            last.get("exit_code")
                .and_then(Value::as_i64)
                .and_then(|c| i32::try_from(c).ok()),
        );
        let output = last.get("output").and_then(Value::as_str).unwrap_or("");
        result.check_output = Some(last_chars(output, CHECK_OUTPUT_CHARS));
        return Ok(());
    }
    // The run ended otherwise (a limit, a model error): the check tells
    // what the task left, confined as ag-loop would have run it, by the
    // ag-bash beside the ag-loop that ran.
    let beside = loop_bin
        .parent()
        .map(|d| d.join("ag-bash"))
        .filter(|p| p.is_file());
    let bash = beside.unwrap_or_else(|| crate::proc::sibling("ag-bash"));
    let timeout = task
        .check_timeout
        .as_ref()
        .map_or_else(|| CHECK_TIMEOUT.to_string(), ToString::to_string);
    let run = Command::new(&bash)
        .args(["--sandbox", "auto", "--timeout", &timeout, "--", check])
        .cwd(directory)
        .cancel(cancel)
        .output(Output::Merged(CaptureLimit {
            max_bytes: 4 * CHECK_OUTPUT_CHARS * 4,
            head_bytes: 0,
            ..CaptureLimit::new(0)
        }))
        .run();
    let out = match run {
        Ok(o) => o,
        Err(e) => {
            result.check = Some("fail".into());
            result.check_exit = Some(None);
            result.check_output = Some(format!("cannot run ag-bash: {e}"));
            return Ok(());
        }
    };
    if out.stopped.is_some() {
        return Err(Ok(Stopped));
    }
    let mut bytes = out.stdout.head.clone();
    bytes.extend_from_slice(&out.stdout.tail);
    let text = last_chars(&String::from_utf8_lossy(&bytes), CHECK_OUTPUT_CHARS);
    let code = out.code();
    // No status of the check's own: ag-bash failed (125), or stopped it at
    // its timeout (124 and its note), as ag-loop's check event says.
    let stopped = code == 125 || (code == 124 && text.contains("\ntimed out after "));
    result.check = Some(if code == 0 { "pass" } else { "fail" }.into());
    result.check_exit = Some(if stopped { None } else { Some(code) });
    result.check_output = Some(text);
    Ok(())
}

/// The last `n` characters of `text`.
fn last_chars(text: &str, n: usize) -> String {
    let count = text.chars().count();
    text.chars().skip(count.saturating_sub(n)).collect()
}

/// ag-loop's events as they come: only the `agent_end` and the last
/// `--until` check are kept.
#[derive(Default)]
struct EventWatch {
    line: Vec<u8>,
    too_long: bool,
    end: Option<Value>,
    last_check: Option<Value>,
}

impl EventWatch {
    fn feed(&mut self, mut bytes: &[u8]) {
        while let Some(at) = bytes.iter().position(|b| *b == b'\n') {
            self.push(&bytes[..at]);
            self.take_line();
            bytes = &bytes[at + 1..];
        }
        self.push(bytes);
    }

    fn push(&mut self, bytes: &[u8]) {
        if self.line.len() + bytes.len() > MAX_EVENT_LINE {
            self.too_long = true;
            self.line.clear();
        } else if !self.too_long {
            self.line.extend_from_slice(bytes);
        }
    }

    fn take_line(&mut self) {
        let line = std::mem::take(&mut self.line);
        if std::mem::take(&mut self.too_long) {
            return;
        }
        // Most events are neither: no parse for them.
        let wanted = memchr::memmem::find(&line, b"\"agent_end\"").is_some()
            || memchr::memmem::find(&line, b"\"check\"").is_some();
        if !wanted {
            return;
        }
        let Ok(ev) = serde_json::from_slice::<Value>(&line) else {
            return;
        };
        match ev.get("type").and_then(Value::as_str) {
            Some("agent_end") => self.end = Some(ev),
            Some("check") if ev.get("kind").and_then(Value::as_str) == Some("until") => {
                self.last_check = Some(ev);
            }
            _ => {}
        }
    }

    /// A last line without its newline.
    fn finish(&mut self) {
        if !self.line.is_empty() {
            self.take_line();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watch_keeps_the_end_and_the_last_until_check_across_pieces() {
        let mut w = EventWatch::default();
        let text = concat!(
            "{\"type\":\"check\",\"kind\":\"until\",\"passed\":false}\n",
            "{\"type\":\"message\",\"text\":\"\\\"check\\\"\"}\n",
            "{\"type\":\"check\",\"kind\":\"until\",\"passed\":true}\n",
            "{\"type\":\"check\",\"kind\":\"other\"}\n",
            "{\"type\":\"agent_end\",\"outcome\":\"finished\"}"
        );
        for piece in text.as_bytes().chunks(7) {
            w.feed(piece);
        }
        w.finish();
        assert_eq!(w.end.unwrap()["outcome"], "finished");
        assert_eq!(w.last_check.unwrap()["passed"], true);
    }

    #[test]
    fn last_chars_counts_characters_not_bytes() {
        assert_eq!(last_chars("aé€z", 2), "€z");
        assert_eq!(last_chars("ab", 5), "ab");
    }
}
