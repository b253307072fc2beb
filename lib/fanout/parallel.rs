//! The `parallel` engine: GNU parallel runs `ag-fanout --task N TASKS` for
//! each task line, here or over ssh. The scheduling, the remote machines,
//! the job log and resumption are parallel's: ag-fanout only builds its
//! command line, so that every parallel option works as parallel documents
//! it.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::BIN;
use super::results::Summary;
use super::stops::{Stops, interrupted};
use super::tasks_file::TasksFile;
use crate::cli::{ExitStatus, error_line};
use crate::proc::{CaptureLimit, Command, Input, LineLimits};

/// A result line may carry a diff of 1 MiB, escaped.
const MAX_LINE: usize = 64 * 1024 * 1024;
/// The bytes of parallel's stderr kept to show.
const STDERR_KEPT: usize = 256 * 1024;
/// parallel's own time to end its jobs after our SIGTERM.
const PARALLEL_GRACE: Duration = Duration::from_secs(30);

/// Whether `program` is on PATH.
fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
}

/// Runs every task of `tasks_path` through GNU parallel with
/// `parallel_args` before the command.
pub async fn run(tasks_path: &Path, parallel_args: &[OsString]) -> ExitStatus {
    if !on_path("parallel") {
        error_line(
            BIN,
            "GNU parallel is not installed (Debian and Ubuntu: apt-get install parallel)",
            Some("or run the tasks on a cluster: --engine slurm or --engine kubernetes"),
        );
        return ExitStatus::Input;
    }
    let tasks = match TasksFile::read(tasks_path) {
        Ok(t) => t,
        Err(e) => {
            error_line(BIN, &e, None);
            return ExitStatus::Input;
        }
    };
    let numbers: String = tasks
        .task_numbers()
        .iter()
        .map(|n| format!("{n}\n"))
        .collect();
    let remote = parallel_args.iter().any(|a| {
        let a = a.to_string_lossy();
        ["--sshlogin", "-S", "--slf", "--sshloginfile"]
            .iter()
            .any(|p| a.starts_with(p))
    });
    // One shell command line for parallel to run, remote or local; {} is
    // the line number. On another machine ag-fanout is found on its PATH.
    let me = if remote {
        BIN.to_string()
    } else {
        std::env::current_exe()
            .map_or_else(|_| BIN.to_string(), |p| p.to_string_lossy().into_owned())
    };
    let command = format!(
        "{} --task {{}} {}",
        shell_quote(&me),
        shell_quote(&tasks.path.to_string_lossy())
    );
    let cancel = CancellationToken::new();
    let started = Command::new("parallel")
        .arg("--will-cite")
        .args(parallel_args)
        .arg(command)
        .stdin(Input::Bytes(numbers.into_bytes()))
        .grace(PARALLEL_GRACE)
        .stream_lines(
            LineLimits {
                max_line: MAX_LINE,
                max_total: None,
                // parallel's own messages (a bad option, a warning), shown
                // when it ends.
                stderr: CaptureLimit::new(STDERR_KEPT),
            },
            &cancel,
        );
    let mut streaming = match started {
        Ok(s) => s,
        Err(e) => {
            error_line(BIN, &format!("cannot run GNU parallel: {e}"), None);
            return ExitStatus::Input;
        }
    };
    let mut stops = Stops::listen();
    let mut stopped: Option<i32> = None;
    let mut summary = Summary::default();
    loop {
        let line = tokio::select! {
            line = streaming.lines.next() => line,
            sig = stops.next() => { stopped.get_or_insert(sig); streaming.running.stop(); continue; }
        };
        let Some(line) = line else { break };
        let Ok(mut line) = line else { continue };
        line.push(b'\n');
        // What is not a result (parallel's usage text after a bad option)
        // goes to stderr: stdout stays JSON lines.
        if serde_json::from_slice::<serde_json::Value>(&line).is_ok() {
            summary.show(&line);
        } else {
            let _ = crate::cli::stderr_line(&line);
        }
    }
    let ended = streaming.running.wait().await;
    if let Ok(o) = &ended {
        let text = o.stderr.lossy();
        if !text.is_empty() {
            let _ = crate::cli::stderr_line(text.as_bytes());
        }
    }
    if let Some(sig) = stopped {
        return interrupted(
            &summary,
            sig,
            "the tasks that did not end have no result line (with --joblog, run again with --resume to do them)",
        );
    }
    let status = match ended {
        Ok(o) => o.code(),
        Err(e) => {
            error_line(BIN, &format!("GNU parallel: {e}"), None);
            return ExitStatus::Input;
        }
    };
    // parallel's own failures (a bad option, a job log it cannot write)
    // are 255; 1 to 101 count the failed jobs, which the result lines say.
    if status > 101 {
        error_line(
            BIN,
            &format!("GNU parallel failed with status {status}"),
            Some("`ag-fanout --help` lists ag-fanout's own options; the others go to GNU parallel"),
        );
        return ExitStatus::Input;
    }
    super::results::finish(&summary)
}

/// `s` as one word of a POSIX shell line.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@%".contains(&b))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_quoted_only_when_they_need_it() {
        assert_eq!(shell_quote("/usr/bin/ag-fanout"), "/usr/bin/ag-fanout");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
