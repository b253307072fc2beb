//! The supervisor of one background job: the ag-bash program started in a
//! session of its own with `AG_BASH_SUPERVISE=<job dir>`. It runs the job's
//! command with its output going to the job's log, records in `job.json`
//! when it runs and how it ended, stops it (with everything it started) on
//! SIGTERM or when the agent session's process is gone, and keeps the log
//! from filling the disk.

use crate::sandbox::ConfineCommand;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::GRACE;
use super::record::{JobRecord, JobState, LOG, now_ms};
use crate::proc::{self, Cancel, CancelReason, Output, Stop};

/// The variable that turns ag-bash into a job supervisor.
pub const SUPERVISE_ENV: &str = "AG_BASH_SUPERVISE";
/// A log past this size is emptied (the command keeps appending to it).
const LOG_MAX: u64 = 64 * 1024 * 1024;
/// How often the session's process and the log size are looked at.
const WATCH_EVERY: Duration = Duration::from_millis(500);

/// When this process was started as a supervisor, supervises and returns
/// the exit code; otherwise returns `None` at once. Call it first in main.
pub fn supervisor_main() -> Option<ExitCode> {
    let dir = std::env::var_os(SUPERVISE_ENV)?;
    Some(supervise(Path::new(&dir)))
}

/// The ag-bash program, to start supervisors with: this program when it is
/// ag-bash, else `ag-bash` beside it or on PATH (for other binaries that
/// run the bash tool in-process).
pub fn ag_bash_exe() -> std::io::Result<PathBuf> {
    let me = std::env::current_exe()?;
    if me.file_stem().is_some_and(|s| s == "ag-bash") {
        return Ok(me);
    }
    if let Some(beside) = me.parent().map(|d| d.join("ag-bash"))
        && beside.is_file()
    {
        return Ok(beside);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("ag-bash"))
        .find(|p| p.is_file())
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "ag-bash is not on PATH"))
}

fn supervise(dir: &Path) -> ExitCode {
    let Ok(mut record) = JobRecord::load(dir) else {
        return ExitCode::from(2);
    };
    let fail = |record: &mut JobRecord, why: String| {
        record.state = JobState::Failed;
        record.reason = Some(why);
        record.ended_ms = Some(now_ms());
        let _ = record.save(dir);
        ExitCode::from(1)
    };
    let _ = proc::adopt_orphans();
    let cancel = match Cancel::new() {
        Ok(c) => c,
        Err(e) => return fail(&mut record, format!("cannot set up cancellation: {e}")),
    };
    // SIGTERM from `stop` cancels the run, which stops the job's group.
    let _guard = match proc::TerminationGuard::install(&cancel) {
        Ok(g) => g,
        Err(e) => return fail(&mut record, format!("cannot install signal handlers: {e}")),
    };
    let log_path = dir.join(LOG);
    let log = match OpenOptions::new().create(true).append(true).open(&log_path) {
        Ok(f) => f,
        Err(e) => return fail(&mut record, format!("cannot open the log: {e}")),
    };
    let session_ended = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicBool::new(false));
    {
        let (cancel, session_ended, done) = (cancel.clone(), session_ended.clone(), done.clone());
        let owner = if record.keep { None } else { record.owner_pid };
        let log_path = log_path.clone();
        let _ = std::thread::Builder::new()
            .name("ag-job-watch".into())
            .spawn(move || watch(owner, &log_path, &cancel, &session_ended, &done));
    }
    let running = {
        let mut r = record.clone();
        let dir = dir.to_path_buf();
        move |pid: u32| {
            r.state = JobState::Running;
            r.pid = Some(pid);
            r.supervisor_pid = Some(std::process::id());
            let _ = r.save(&dir);
        }
    };
    let confined = match super::sandbox::for_job() {
        Ok(c) => c,
        Err(why) => return fail(&mut record, why),
    };
    let mut cmd = proc::Command::new(&record.shell)
        .arg("-c")
        .arg(&record.command)
        .cwd(&record.cwd)
        .env_remove(SUPERVISE_ENV)
        .env_remove(super::sandbox::JOB_SANDBOX_ENV)
        .output(Output::File(log))
        .grace(GRACE)
        .cancel(&cancel)
        .on_spawn(running);
    if let Some((prepared, _)) = &confined {
        cmd = cmd.sandbox(prepared);
    }
    let outcome = cmd.run();
    if let Some((_, Some(guard))) = confined {
        note_hooks(&log_path, guard.restore());
    }
    done.store(true, Ordering::SeqCst);
    // Re-read: the record now holds the pid written at spawn.
    if let Ok(r) = JobRecord::load(dir) {
        record = r;
    }
    let o = match outcome {
        Ok(o) => o,
        Err(e) => return fail(&mut record, e.to_string()),
    };
    record.ended_ms = Some(now_ms());
    record.exit_code = Some(o.code());
    record.signal = o.signal().map(proc::signal_name);
    match o.stopped {
        Some(Stop::Cancelled(reason)) => {
            record.state = JobState::Stopped;
            record.reason = Some(if session_ended.load(Ordering::SeqCst) {
                "the agent session ended".to_string()
            } else {
                match reason {
                    CancelReason::Signal(n) if n == libc_sigterm() => "on request".to_string(),
                    CancelReason::Signal(n) => format!("by {}", proc::signal_name(n)),
                    CancelReason::Requested => "on request".to_string(),
                }
            });
        }
        _ => record.state = JobState::Exited,
    }
    let _ = record.save(dir);
    ExitCode::SUCCESS
}

fn libc_sigterm() -> i32 {
    proc::Signal::SIGTERM as i32
}

/// Stops the job when the session's process is gone; keeps the log small.
fn watch(
    owner: Option<u32>,
    log_path: &Path,
    cancel: &Cancel,
    session_ended: &AtomicBool,
    done: &AtomicBool,
) {
    while !done.load(Ordering::SeqCst) && !cancel.is_cancelled() {
        std::thread::sleep(WATCH_EVERY);
        if let Some(pid) = owner
            && !proc::process_alive(pid)
        {
            session_ended.store(true, Ordering::SeqCst);
            cancel.cancel();
            return;
        }
        if let Ok(meta) = std::fs::metadata(log_path)
            && meta.len() > LOG_MAX
            && let Ok(mut f) = OpenOptions::new().append(true).open(log_path)
            && f.set_len(0).is_ok()
        {
            // The command writes in append mode, so it goes on at the new end.
            let _ = mark_log_cut(&mut f, meta.len());
        }
    }
}

/// Writes the marker line that says a log was emptied.
pub(super) fn mark_log_cut(log: &mut File, cut: u64) -> io::Result<()> {
    writeln!(
        log,
        "[ag-bash: the log reached {} and was emptied; older output is gone]",
        super::human_bytes(cut)
    )
}

/// Tells in the job's log which hook changes of a confined job were undone.
fn note_hooks(log_path: &Path, changes: Vec<crate::sandbox::HookChange>) {
    let Ok(mut log) = OpenOptions::new().append(true).open(log_path) else {
        return;
    };
    for c in changes {
        let _ = writeln!(
            log,
            "[ag-bash: blocked by the sandbox: `{}` was {} by the job and {}]",
            c.path.display(),
            c.change,
            if c.undone {
                "has been put back"
            } else {
                "could NOT be put back"
            }
        );
    }
}
