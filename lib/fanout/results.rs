//! Result lines: printed whole on stdout, written whole into a results
//! directory (one `N.json` per line number of the tasks file, for the
//! cluster engines), and counted into the summary.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::cli::Stdout;
use crate::protocol::{FanoutRecord, FanoutResult, FanoutSummary};

/// One record as a line.
pub fn line(record: &FanoutRecord) -> Vec<u8> {
    // Plain data: encoding cannot fail.
    let mut line = serde_json::to_vec(record).unwrap_or_default();
    line.push(b'\n');
    line
}

/// Prints a result line on stdout in one write.
pub fn print(result: &FanoutResult) -> io::Result<()> {
    print_line(&line(&FanoutRecord::Result(Box::new(result.clone()))))
}

/// Prints a line (already ending in a newline) on stdout in one write; a
/// reader that went away is not an error.
pub fn print_line(line: &[u8]) -> io::Result<()> {
    match Stdout::new().write_all_flush(line) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// The file of line `n`'s result in a results directory.
pub fn file_of(dir: &Path, n: u64) -> PathBuf {
    dir.join(format!("{n}.json"))
}

/// Writes a result into `dir` as `N.json` (N its line), whole or not at all.
pub fn write(dir: &Path, result: &FanoutResult) -> Result<(), String> {
    let path = file_of(dir, result.line);
    let bytes = line(&FanoutRecord::Result(Box::new(result.clone())));
    crate::fsutil::write_atomic(&path, None, &bytes, || Ok(true))
        .map_err(|e| format!("cannot write the result to `{}`: {e}", path.display()))
}

/// Writes a result line of line `n`, as a pod printed it, into `dir`,
/// whole or not at all.
pub fn write_line(dir: &Path, n: u64, line: &[u8]) -> Result<(), String> {
    let path = file_of(dir, n);
    crate::fsutil::write_atomic(&path, None, line, || Ok(true))
        .map_err(|e| format!("cannot write the result to `{}`: {e}", path.display()))
}

/// The result line of line `n` in a task's output (the last one, with its
/// newline), if there is one: what a pod's log holds among its notes.
pub fn find_line(output: &str, n: u64) -> Option<Vec<u8>> {
    output.lines().rev().find_map(|l| {
        let v: Value = serde_json::from_str(l.trim()).ok()?;
        let ok = v.get("type").and_then(Value::as_str) == Some("result")
            && v.get("line").and_then(Value::as_u64) == Some(n);
        ok.then(|| format!("{}\n", l.trim()).into_bytes())
    })
}

/// The result of task `n` that its engine ended without one: `outcome`
/// `killed` (the engine's doing) or `failed`, with the engine's own word
/// for it in `engine_state`.
pub fn ended(
    tasks: &super::tasks_file::TasksFile,
    n: u64,
    outcome: &str,
    state: &str,
    error: String,
) -> FanoutResult {
    let mut result = FanoutResult::not_run(n, outcome);
    if let Ok(t) = tasks.task(n) {
        (result.id, result.model) = (t.id, t.model);
    }
    result.error = Some(error);
    result.engine_state = Some(state.to_string());
    result
}

/// The end of a task's output (its last 1000 bytes at most), for the
/// `error` of a result the engine ended: where the output says anything,
/// it says there what happened.
pub fn output_tail(text: &str) -> String {
    let mut start = text.len().saturating_sub(1000);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text[start..].trim().to_string()
}

/// The result in `dir` of line `n`, if there is a whole one.
pub fn read(dir: &Path, n: u64) -> Option<Vec<u8>> {
    let bytes = std::fs::read(file_of(dir, n)).ok()?;
    let ok = bytes.ends_with(b"\n")
        && serde_json::from_slice::<Value>(&bytes)
            .is_ok_and(|v| v.get("type").and_then(Value::as_str) == Some("result"));
    ok.then_some(bytes)
}

/// The counts over the last result of each task id.
#[derive(Default)]
pub struct Summary {
    results: BTreeMap<String, (String, f64)>,
}

impl Summary {
    /// Counts a line if it is a result.
    pub fn add(&mut self, line: &[u8]) {
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        if v.get("type").and_then(Value::as_str) != Some("result") {
            return;
        }
        let id = match v.get("id") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => "null".to_string(),
        };
        let outcome = match v.get("outcome") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => "null".to_string(),
        };
        let cost = v.get("cost").and_then(Value::as_f64).unwrap_or(0.0);
        self.results.insert(id, (outcome, cost));
    }

    /// Prints a result line (a reader gone away is no error) and counts it.
    pub fn show(&mut self, line: &[u8]) {
        let _ = print_line(line);
        self.add(line);
    }

    /// The summary record.
    pub fn record(&self) -> FanoutSummary {
        let mut outcomes: BTreeMap<String, u64> = BTreeMap::new();
        let mut cost = 0.0;
        for (outcome, c) in self.results.values() {
            *outcomes.entry(outcome.clone()).or_default() += 1;
            cost += c;
        }
        let failed = self
            .results
            .values()
            .filter(|(o, _)| o != "finished")
            .count() as u64;
        FanoutSummary {
            tasks: self.results.len() as u64,
            outcomes,
            cost: (cost * 1e10).round() / 1e10,
            failed,
        }
    }

    /// Prints the summary line.
    pub fn print(&self) -> io::Result<FanoutSummary> {
        let record = self.record();
        print_line(&line(&FanoutRecord::Summary(record.clone())))?;
        Ok(record)
    }
}

/// How a run ends once its tasks have: the summary line on stdout, its
/// description on stderr, and the exit status (a failure when any task
/// failed).
pub fn finish(summary: &Summary) -> crate::cli::ExitStatus {
    use crate::cli::{ExitStatus, error_line};
    let record = match summary.print() {
        Ok(r) => r,
        Err(e) => {
            error_line(super::BIN, &format!("cannot write the summary: {e}"), None);
            return ExitStatus::Input;
        }
    };
    let _ = crate::cli::stderr_line(format!("{}: {}\n", super::BIN, describe(&record)).as_bytes());
    if record.failed > 0 {
        ExitStatus::Failure
    } else {
        ExitStatus::Success
    }
}

/// The line for stderr at the end of a run: `ag-fanout: 12 tasks, 6
/// finished, 3 invalid_task, cost $13.0000`.
pub fn describe(summary: &FanoutSummary) -> String {
    let outcomes: Vec<String> = summary
        .outcomes
        .iter()
        .map(|(k, v)| format!("{v} {k}"))
        .collect();
    let mut text = format!("{} tasks", summary.tasks);
    if !outcomes.is_empty() {
        text.push_str(", ");
        text.push_str(&outcomes.join(", "));
    }
    text.push_str(&format!(", cost ${:.4}", summary.cost));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_counts_the_last_result_of_each_task() {
        let mut s = Summary::default();
        s.add(br#"{"type":"result","id":"a","outcome":"turn_limit","cost":1.5}"#);
        s.add(br#"{"type":"result","id":"b","outcome":"finished","cost":0.25}"#);
        s.add(br#"{"type":"result","id":"a","outcome":"finished","cost":2}"#);
        s.add(b"not json");
        s.add(br#"{"type":"summary","tasks":9}"#);
        let r = s.record();
        assert_eq!(r.tasks, 2);
        assert_eq!(r.failed, 0);
        assert_eq!(r.cost, 2.25);
        assert_eq!(r.outcomes["finished"], 2);
        assert_eq!(describe(&r), "2 tasks, 2 finished, cost $2.2500");
    }
}
