//! Background jobs: a command started detached with its output in a log
//! file, watched by a supervisor process (see `supervisor.rs`) that
//! records how it ended and stops it when the agent session ends.
//!
//! Each job is a directory `<jobs dir>/<id>/` holding `job.json` (the
//! record, replaced atomically) and `output.log`. The jobs directory is
//! `$AG_SESSION_DIR/jobs` when ag-loop runs the tool, else `$AG_HOME/jobs`
//! (`~/.ag/jobs`). The agent session is the process `$AG_SESSION_PID`, or
//! when only `$AG_SESSION_DIR` is set, ag-bash's parent (ag-loop): when it
//! ends, its jobs are stopped unless started with `keep`. Outside a session
//! there is nothing to end with, and a job runs until it ends or is
//! stopped. `ag-bash --job all --stop` stops every running job (what ag-loop
//! can run at exit).

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;

use super::record::{JobRecord, JobState, LOG, now_ms};
use super::{GRACE, render, supervisor};
use crate::proc::{self, Signal};
use crate::tool_protocol::{ToolError, ToolOutput};
use crate::tools::offer::call_text;

/// Lines of the log shown when none are asked for, and the most shown.
const DEFAULT_LINES: u64 = 50;
const MAX_LINES: u64 = 1000;
/// Bytes of the end of a log read to find its last lines.
const TAIL_WINDOW: u64 = 256 * 1024;
/// How long starting waits for the supervisor to report the job running.
const START_WAIT: Duration = Duration::from_secs(10);
/// Ended jobs older than this are removed when a new job starts.
const PRUNE_AFTER_MS: i64 = 24 * 3600 * 1000;

/// The directory holding the jobs.
pub fn jobs_dir() -> Result<PathBuf, ToolError> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = var("AG_SESSION_DIR") {
        return Ok(PathBuf::from(d).join("jobs"));
    }
    if let Some(d) = var("AG_HOME") {
        return Ok(PathBuf::from(d).join("jobs"));
    }
    match var("HOME") {
        Some(h) => Ok(PathBuf::from(h).join(".ag").join("jobs")),
        None => Err(ToolError::new(
            "bash.no_jobs_dir",
            "cannot tell where to keep background jobs: set AG_HOME (or HOME)",
        )),
    }
}

fn job_dir(id: &str) -> Result<PathBuf, ToolError> {
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ToolError::new(
            "bash.bad_job",
            format!(
                "`{id}` is not a job id; job ids are numbers{}",
                advice(" (", "job_list", json!({}), " lists them)")
            ),
        ));
    }
    Ok(jobs_dir()?.join(id))
}

fn load_job(id: &str) -> Result<(PathBuf, JobRecord), ToolError> {
    let dir = job_dir(id)?;
    match JobRecord::load(&dir) {
        Ok(r) => {
            let r = r.current(&dir);
            Ok((dir, r))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(ToolError::new(
            "bash.job_not_found",
            format!(
                "there is no job {id}{}",
                advice("; ", "job_list", json!({}), " lists the jobs")
            ),
        )),
        Err(e) => Err(ToolError::new(
            "bash.io",
            format!("cannot read job {id}: {e}"),
        )),
    }
}

/// `before`, the call of the offered tool `name` and `after`, if the caller
/// has that tool (see [`call_text`]); else nothing.
fn advice(before: &str, name: &str, arguments: serde_json::Value, after: &str) -> String {
    call_text(name, arguments).map_or_else(String::new, |c| format!("{before}{c}{after}"))
}

/// How to see and stop the job `id`, with the calls the caller has.
fn job_advice(id: &serde_json::Value) -> String {
    let see = advice(
        "see its output with ",
        "job_output",
        json!({ "job": id }),
        "",
    );
    let stop = advice("stop it with ", "job_stop", json!({ "job": id }), "");
    match (see.is_empty(), stop.is_empty()) {
        (true, true) => String::new(),
        (false, true) => format!(" S{}.", &see[1..]),
        (true, false) => format!(" S{}.", &stop[1..]),
        (false, false) => format!(" S{}, {stop}.", &see[1..]),
    }
}

/// Every job, oldest first.
fn all_jobs() -> Result<Vec<(PathBuf, JobRecord)>, ToolError> {
    let root = jobs_dir()?;
    let entries = match fs::read_dir(&root) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(ToolError::new(
                "bash.io",
                format!("cannot list `{}`: {e}", root.display()),
            ));
        }
    };
    let mut jobs: Vec<(u64, PathBuf, JobRecord)> = entries
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_str()?.parse::<u64>().ok()?;
            let dir = e.path();
            let rec = JobRecord::load(&dir).ok()?.current(&dir);
            Some((n, dir, rec))
        })
        .collect();
    jobs.sort_by_key(|(n, _, _)| *n);
    Ok(jobs.into_iter().map(|(_, d, r)| (d, r)).collect())
}

/// Starts a background job.
pub fn start(
    command: &str,
    cwd: &Path,
    shell: &str,
    keep: bool,
    sandbox: Option<crate::sandbox::Policy>,
) -> Result<ToolOutput, ToolError> {
    let root = jobs_dir()?;
    let io_err =
        |what: String, e: io::Error| ToolError::new("bash.io", format!("cannot {what}: {e}"));
    fs::create_dir_all(&root).map_err(|e| io_err(format!("create `{}`", root.display()), e))?;
    prune(&root);
    let (id, dir) = allocate(&root).map_err(|e| io_err("allocate a job id".into(), e))?;
    let owner_pid = proc::session_owner();
    let started = jiff::Timestamp::now();
    let record = JobRecord {
        id: id.clone(),
        command: command.to_string(),
        cwd: cwd.to_path_buf(),
        shell: shell.to_string(),
        started: started.to_string(),
        started_ms: started.as_millisecond(),
        owner_pid,
        keep,
        state: JobState::Starting,
        supervisor_pid: None,
        pid: None,
        exit_code: None,
        signal: None,
        ended_ms: None,
        reason: None,
    };
    record
        .save(&dir)
        .map_err(|e| io_err(format!("write `{}`", dir.display()), e))?;
    File::create(dir.join(LOG)).map_err(|e| io_err("create the job's log".into(), e))?;
    let exe =
        supervisor::ag_bash_exe().map_err(|e| io_err("find the ag-bash program".into(), e))?;
    let mut supervisor = proc::Command::new(&exe).env(supervisor::SUPERVISE_ENV, &dir);
    // The supervisor confines the job's command itself (it stays free to
    // write the job's record).
    supervisor = match &sandbox {
        Some(p) => supervisor.env(super::sandbox::JOB_SANDBOX_ENV, p.to_env()),
        None => supervisor.env_remove(super::sandbox::JOB_SANDBOX_ENV),
    };
    supervisor
        .new_session()
        .spawn_detached()
        .map_err(|e| ToolError::new(e.code(), format!("cannot start job {id}: {e}")))?;
    // The supervisor reports the command running (or failing) in the record.
    let deadline = Instant::now() + START_WAIT;
    let rec = loop {
        let rec = JobRecord::load(&dir).ok();
        match rec {
            Some(r) if r.state != JobState::Starting => break r,
            _ if Instant::now() >= deadline => {
                return Err(ToolError::new(
                    "bash.job_start",
                    format!(
                        "job {id} did not start within {} s{}",
                        START_WAIT.as_secs(),
                        advice("; see it with ", "job_output", json!({ "job": id }), "")
                    ),
                ));
            }
            _ => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    if rec.state == JobState::Failed {
        return Err(ToolError::new(
            "bash.job_start",
            format!(
                "job {id} could not start: {}",
                rec.reason.as_deref().unwrap_or("unknown error")
            ),
        ));
    }
    let log = dir.join(LOG);
    let ends = match (keep, owner_pid) {
        (true, _) => "It keeps running after the session ends.".to_string(),
        (false, Some(_)) => "It is stopped when the agent session ends.".to_string(),
        (false, None) => "It runs until it ends or is stopped.".to_string(),
    };
    let output = format!(
        "started job {id} (pid {}): {}\nlog: {}\n{ends}{}\n",
        rec.pid.unwrap_or(0),
        one_line(command),
        log.display(),
        job_advice(&json!(id)),
    );
    Ok(ToolOutput::new(output, job_details(&rec, &dir)))
}

/// Picks the next free id, creating its directory.
fn allocate(root: &Path) -> io::Result<(String, PathBuf)> {
    let highest = fs::read_dir(root)?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    let mut n = highest + 1;
    loop {
        let dir = root.join(n.to_string());
        match fs::create_dir(&dir) {
            Ok(()) => return Ok((n.to_string(), dir)),
            // Another ag-bash took it a moment ago.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => n += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Removes jobs that ended long ago.
fn prune(root: &Path) {
    let Ok(entries) = fs::read_dir(root) else {
        return;
    };
    let now = now_ms();
    for e in entries.flatten() {
        let dir = e.path();
        if let Ok(r) = JobRecord::load(&dir)
            && r.state.ended()
            && r.ended_ms.is_some_and(|t| now - t > PRUNE_AFTER_MS)
        {
            let _ = fs::remove_dir_all(&dir);
        }
    }
}

/// Lists the jobs.
pub fn list() -> Result<ToolOutput, ToolError> {
    let jobs = all_jobs()?;
    if jobs.is_empty() {
        return Ok(ToolOutput::new("no background jobs\n", json!({"jobs": []})));
    }
    let mut text = String::new();
    let mut details = Vec::new();
    for (dir, r) in &jobs {
        text.push_str(&format!(
            "job {}  {}  {}  {}\n",
            r.id,
            state_text(r),
            age_text(r),
            one_line(&r.command)
        ));
        details.push(job_details(r, dir));
    }
    // The calls shown name the newest job's real id: a model copies what
    // it is shown, so what it copies must work.
    let newest = jobs.last().map_or_else(String::new, |(_, r)| r.id.clone());
    let advice = job_advice(&json!(newest));
    if !advice.is_empty() {
        text.push_str(advice.trim_start());
        text.push('\n');
    }
    Ok(ToolOutput::new(text, json!({ "jobs": details })))
}

/// A job's state and the end of its log.
pub fn show(id: &str, lines: Option<u64>, raw: bool) -> Result<ToolOutput, ToolError> {
    if id == "all" {
        return list();
    }
    let (dir, r) = load_job(id)?;
    let n = lines_of(lines)?;
    let mut text = format!(
        "job {}: {}, {}: {}\n",
        r.id,
        state_text(&r),
        age_text(&r),
        one_line(&r.command)
    );
    text.push_str(&log_tail(&dir, n, raw));
    Ok(ToolOutput::new(text, job_details(&r, &dir)))
}

/// Stops a job (or every running job with `all`).
pub fn stop(id: &str, lines: Option<u64>, raw: bool) -> Result<ToolOutput, ToolError> {
    if id == "all" {
        let mut text = String::new();
        let mut stopped = Vec::new();
        for (dir, r) in all_jobs()? {
            if r.state.ended() {
                continue;
            }
            let r = stop_one(&dir, r);
            text.push_str(&format!(
                "job {}: {}: {}\n",
                r.id,
                state_text(&r),
                one_line(&r.command)
            ));
            stopped.push(job_details(&r, &dir));
        }
        if stopped.is_empty() {
            text.push_str("no running jobs\n");
        }
        return Ok(ToolOutput::new(text, json!({ "jobs": stopped })));
    }
    let (dir, r) = load_job(id)?;
    let n = lines_of(lines)?;
    let was_running = !r.state.ended();
    let r = if was_running { stop_one(&dir, r) } else { r };
    let mut text = if was_running {
        format!(
            "job {} {}: {}\n",
            r.id,
            state_text(&r),
            one_line(&r.command)
        )
    } else {
        format!(
            "job {} had already ended ({}): {}\n",
            r.id,
            state_text(&r),
            one_line(&r.command)
        )
    };
    text.push_str(&log_tail(&dir, n, raw));
    Ok(ToolOutput::new(text, job_details(&r, &dir)))
}

/// Asks the supervisor to stop the job and waits for it to record the end;
/// stops the process group directly if the supervisor is gone.
fn stop_one(dir: &Path, r: JobRecord) -> JobRecord {
    let wait = GRACE + Duration::from_secs(3);
    if let Some(sup) = r.supervisor_pid
        && proc::session_of(sup) == Some(sup)
        && proc::signal_process(sup, Signal::SIGTERM)
    {
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline {
            if let Ok(now) = JobRecord::load(dir)
                && now.state.ended()
            {
                return now;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    // No supervisor to do it: stop the group here.
    let mut r = JobRecord::load(dir).unwrap_or(r);
    if r.state.ended() {
        return r;
    }
    if let Some(pgid) = r.pid {
        proc::signal_group(pgid, Signal::SIGTERM);
        proc::signal_group(pgid, Signal::SIGCONT);
        let deadline = Instant::now() + GRACE;
        while Instant::now() < deadline && proc::foreign_group_alive(pgid) {
            std::thread::sleep(Duration::from_millis(10));
        }
        proc::signal_group(pgid, Signal::SIGKILL);
    }
    r.state = JobState::Stopped;
    r.reason = Some("stopped on request (its supervisor was gone)".into());
    r.ended_ms = Some(now_ms());
    let _ = r.save(dir);
    r
}

fn lines_of(lines: Option<u64>) -> Result<u64, ToolError> {
    let n = lines.unwrap_or(DEFAULT_LINES);
    if !(1..=MAX_LINES).contains(&n) {
        return Err(ToolError::new(
            "bash.bad_lines",
            format!(
                "`lines` must be from 1 to {MAX_LINES} (got {n}); read the whole log with the read tool"
            ),
        ));
    }
    Ok(n)
}

/// "log: PATH (12 KiB), last N lines:" and the lines.
fn log_tail(dir: &Path, n: u64, raw: bool) -> String {
    let path = dir.join(LOG);
    let (mut bytes, size) = match tail_bytes(&path, n) {
        Ok(t) => t,
        Err(e) => return format!("log: {} cannot be read: {e}\n", path.display()),
    };
    // Under a caller's output budget, the oldest of those lines give way
    // (whole lines); the header names the log, which holds them all.
    if let Some(budget) = crate::tools::budget::from_env() {
        let room = crate::tools::budget::for_body(budget);
        if bytes.len() > room {
            let from = bytes.len() - room;
            let start = memchr::memchr(b'\n', &bytes[from..]).map_or(from, |i| from + i + 1);
            bytes.drain(..start);
        }
    }
    if size == 0 {
        return format!("log: {} (empty)\n", path.display());
    }
    let text = if raw {
        String::from_utf8_lossy(&bytes).into_owned()
    } else {
        String::from_utf8_lossy(&render::clean(&bytes)).into_owned()
    };
    let shown = text.lines().count();
    let mut out = format!(
        "log: {} ({}); last {shown} line{}:\n",
        path.display(),
        super::human_bytes(size),
        if shown == 1 { "" } else { "s" }
    );
    out.push_str(&text);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// The last `n` lines of a file (from at most its last TAIL_WINDOW bytes),
/// and its size.
fn tail_bytes(path: &Path, n: u64) -> io::Result<(Vec<u8>, u64)> {
    let mut f = File::open(path)?;
    let size = f.metadata()?.len();
    let start = size.saturating_sub(TAIL_WINDOW);
    f.seek(SeekFrom::Start(start))?;
    let mut buf = Vec::new();
    f.take(TAIL_WINDOW).read_to_end(&mut buf)?;
    // Skip a partial first line when the window starts mid-file.
    if start > 0
        && let Some(i) = memchr::memchr(b'\n', &buf)
    {
        buf.drain(..=i);
    }
    let body = buf.strip_suffix(b"\n").unwrap_or(&buf);
    let mut cut = 0;
    let mut seen = 0;
    for i in memchr::memrchr_iter(b'\n', body) {
        seen += 1;
        if seen == n {
            cut = i + 1;
            break;
        }
    }
    Ok((buf[cut..].to_vec(), size))
}

fn state_text(r: &JobRecord) -> String {
    match r.state {
        JobState::Starting => "starting".into(),
        JobState::Running => format!("running (pid {})", r.pid.unwrap_or(0)),
        JobState::Exited => match (&r.signal, r.exit_code) {
            (Some(sig), _) => format!("killed by {sig}"),
            (None, Some(c)) => format!("exited with code {c}"),
            (None, None) => "exited".into(),
        },
        JobState::Stopped => format!(
            "stopped{}",
            r.reason
                .as_deref()
                .map(|why| format!(", {why}"))
                .unwrap_or_default()
        ),
        JobState::Failed => format!(
            "failed to start: {}",
            r.reason.as_deref().unwrap_or("unknown error")
        ),
    }
}

fn age_text(r: &JobRecord) -> String {
    let end = r.ended_ms.unwrap_or_else(now_ms);
    let secs = (end - r.started_ms).max(0) / 1000;
    let span = if secs >= 3600 {
        format!("{}h {}m", secs / 3600, secs % 3600 / 60)
    } else if secs >= 60 {
        format!("{}m {}s", secs / 60, secs % 60)
    } else {
        format!("{secs}s")
    };
    if r.state.ended() {
        format!("ran {span}")
    } else {
        format!("running for {span}")
    }
}

fn one_line(command: &str) -> String {
    let first = command.lines().next().unwrap_or("");
    let mut s: String = first.chars().take(120).collect();
    if s.len() < command.len() {
        s.push_str(" ...");
    }
    format!("`{s}`")
}

fn job_details(r: &JobRecord, dir: &Path) -> serde_json::Value {
    let mut d = json!({
        "job": r.id,
        "command": r.command,
        "state": r.state,
        "log": dir.join(LOG).display().to_string(),
        "started": r.started,
        "keep": r.keep,
    });
    if let Some(p) = r.pid {
        d["pid"] = json!(p);
    }
    if let Some(c) = r.exit_code {
        d["job_exit_code"] = json!(c);
    }
    if let Some(s) = &r.signal {
        d["signal"] = json!(s);
    }
    if let Some(why) = &r.reason {
        d["reason"] = json!(why);
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("log");
        let body: String = (1..=100).map(|i| format!("l{i}\n")).collect();
        fs::write(&p, &body).unwrap();
        let (t, size) = tail_bytes(&p, 3).unwrap();
        assert_eq!(t, b"l98\nl99\nl100\n");
        assert_eq!(size, body.len() as u64);
        let (t, _) = tail_bytes(&p, 500).unwrap();
        assert_eq!(t, body.as_bytes());
        fs::write(&p, "no newline at end").unwrap();
        assert_eq!(tail_bytes(&p, 2).unwrap().0, b"no newline at end");
    }

    #[test]
    fn job_ids_are_numbers() {
        assert_eq!(job_dir("../x").unwrap_err().code, "bash.bad_job");
        assert_eq!(job_dir("").unwrap_err().code, "bash.bad_job");
    }

    #[test]
    fn ids_are_allocated_in_order() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(allocate(dir.path()).unwrap().0, "1");
        assert_eq!(allocate(dir.path()).unwrap().0, "2");
        fs::create_dir(dir.path().join("7")).unwrap();
        assert_eq!(allocate(dir.path()).unwrap().0, "8");
    }
}
