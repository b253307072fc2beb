//! The `slurm` engine: the tasks become one job array (`sbatch --array`,
//! the index is the task's line number, `%` caps how many run at once).
//! Each array task runs `ag-fanout --task N --results-dir DIR/results
//! TASKS`, which writes its result line whole into the work directory, on
//! the file system the cluster shares. ag-fanout follows the array there
//! and in `squeue`, printing result lines as tasks end; a task that Slurm
//! ended without a result (time limit, cancelled, node failure,
//! preemption) gets a `killed` line with Slurm's own state.
//!
//! The work directory keeps the run: `job.sh` (the batch script, which
//! holds no secret: the provider keys reach the tasks in the environment
//! that sbatch exports), `jobs` (the arrays submitted), `results/` and
//! `logs/` (each task's output). `--resume` prints the results already
//! there, follows the tasks still queued or running in an earlier array
//! (after ag-fanout itself was killed), and submits only the rest.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::signal::unix::SignalKind;
use tokio_util::sync::CancellationToken;

use super::BIN;
use super::parallel::shell_quote;
use super::results::{self, Summary, print_line};
use super::tasks_file::TasksFile;
use crate::cli::{ExitStatus, Signal, error_line, note};
use crate::proc::{CaptureLimit, Command, Output};
use crate::protocol::{FanoutRecord, FanoutResult};

/// How often the results directory and the queue are looked at.
const POLL: Duration = Duration::from_millis(500);
/// Successful looks at the queue that must miss a task (the array purged
/// from the controller) before it is taken as ended without a trace.
const MISSES: u32 = 6;

/// The sbatch flags the user chose.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Tasks at a time: the array's `%` cap.
    pub jobs: Option<u32>,
    /// `--partition`.
    pub partition: Option<String>,
    /// `--time`, in Slurm's forms (`30`, `2:00:00`, `1-0`).
    pub time: Option<String>,
    /// `--cpus-per-task`.
    pub cpus_per_task: Option<u32>,
    /// `--mem`, in Slurm's form (`4G`).
    pub mem: Option<String>,
    /// Go on with the run in the work directory.
    pub resume: bool,
    /// The work directory.
    pub work_dir: PathBuf,
    /// How the user called ag-fanout, for the hints.
    pub call: Vec<String>,
}

/// The work directory's files.
struct WorkDir {
    root: PathBuf,
}

impl WorkDir {
    fn results(&self) -> PathBuf {
        self.root.join("results")
    }
    fn logs(&self) -> PathBuf {
        self.root.join("logs")
    }
    fn jobs(&self) -> PathBuf {
        self.root.join("jobs")
    }
    fn tasks_hash(&self) -> PathBuf {
        self.root.join("tasks.hash")
    }
    fn script(&self) -> PathBuf {
        self.root.join("job.sh")
    }

    /// The arrays submitted so far.
    fn job_ids(&self) -> Vec<String> {
        std::fs::read_to_string(self.jobs())
            .unwrap_or_default()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect()
    }

    /// Whether it holds anything of an earlier run.
    fn used(&self) -> bool {
        self.jobs().exists()
            || std::fs::read_dir(self.results()).is_ok_and(|mut d| d.next().is_some())
    }
}

/// A usage error with the caller's own call, corrected.
fn refuse(message: &str, hint: &str) -> ExitStatus {
    error_line(BIN, message, Some(hint));
    ExitStatus::Input
}

/// The caller's call with `--resume` added after the program.
fn with_resume(call: &[String]) -> String {
    let mut words: Vec<String> = call.iter().map(|w| shell_quote(w)).collect();
    if words.is_empty() {
        words.push(BIN.to_string());
    }
    words.insert(1, "--resume".to_string());
    words.join(" ")
}

/// Runs every task of `tasks_path` as a Slurm job array.
pub async fn run(tasks_path: &Path, opts: &Options) -> ExitStatus {
    let tasks = match TasksFile::read(tasks_path) {
        Ok(t) => t,
        Err(e) => {
            error_line(BIN, &e, None);
            return ExitStatus::Input;
        }
    };
    let work = WorkDir {
        root: match std::path::absolute(&opts.work_dir) {
            Ok(p) => p,
            Err(e) => {
                error_line(
                    BIN,
                    &format!("cannot resolve `{}`: {e}", opts.work_dir.display()),
                    None,
                );
                return ExitStatus::Input;
            }
        },
    };
    let hash = crate::fsutil::content_hash(&tasks.lines.concat());
    if opts.resume {
        match std::fs::read_to_string(work.tasks_hash()) {
            Ok(h) if h.trim() == hash => {}
            Ok(_) => {
                return refuse(
                    &format!(
                        "`{}` changed since the run in `{}` began: line numbers name the tasks there",
                        tasks.path.display(),
                        work.root.display()
                    ),
                    "put the tasks file back as it was, or start a new run with another --work-dir",
                );
            }
            Err(_) => {
                let mut call = opts.call.clone();
                call.retain(|w| w != "--resume");
                return refuse(
                    &format!(
                        "--resume: no run to go on with in `{}`",
                        work.root.display()
                    ),
                    &format!(
                        "start one: {}",
                        call.iter()
                            .map(|w| shell_quote(w))
                            .collect::<Vec<_>>()
                            .join(" ")
                    ),
                );
            }
        }
    } else if work.used() {
        return refuse(
            &format!(
                "`{}` holds an earlier run of these tasks",
                work.root.display()
            ),
            &format!(
                "go on with it: {}; or remove `{}` to start again",
                with_resume(&opts.call),
                work.root.display()
            ),
        );
    }
    for dir in [work.results(), work.logs()] {
        if let Err(e) = std::fs::create_dir_all(&dir) {
            error_line(BIN, &format!("cannot make `{}`: {e}", dir.display()), None);
            return ExitStatus::Input;
        }
    }
    if let Err(e) = crate::fsutil::write_atomic(
        &work.tasks_hash(),
        None,
        format!("{hash}\n").as_bytes(),
        || Ok(true),
    ) {
        error_line(
            BIN,
            &format!("cannot write `{}`: {e}", work.tasks_hash().display()),
            None,
        );
        return ExitStatus::Input;
    }

    let mut summary = Summary::default();
    let all: Vec<u64> = tasks.task_numbers();
    let mut waiting: BTreeSet<u64> = BTreeSet::new();
    for n in &all {
        match results::read(&work.results(), *n) {
            // The resumed run's stdout holds every task's result.
            Some(line) => {
                let _ = print_line(&line);
                summary.add(&line);
            }
            None => {
                waiting.insert(*n);
            }
        }
    }
    let mut jobs: Vec<String> = Vec::new();
    let mut to_submit = waiting.clone();
    if opts.resume {
        // Tasks still queued or running in an earlier array are followed,
        // not submitted again.
        let earlier = work.job_ids();
        if !earlier.is_empty() {
            match queue(&earlier).await {
                Ok(states) => {
                    for ((job, n), state) in states {
                        if active(&state) && to_submit.remove(&n) && !jobs.contains(&job) {
                            jobs.push(job);
                        }
                    }
                }
                Err(e) => {
                    error_line(BIN, &e, Some("is the Slurm controller up? `sinfo` says"));
                    return ExitStatus::Input;
                }
            }
        }
    }
    if !to_submit.is_empty() {
        match submit(&tasks, &work, &to_submit, opts).await {
            Ok(job) => {
                note(
                    BIN,
                    &format!(
                        "submitted job array {job} ({} tasks); its output is in `{}`",
                        to_submit.len(),
                        work.logs().display()
                    ),
                );
                jobs.push(job);
            }
            Err(e) => {
                error_line(BIN, &e, None);
                return ExitStatus::Input;
            }
        }
    }
    follow(&tasks, &work, waiting, &jobs, summary).await
}

/// The array's index list: `1-8,10,12-20`.
fn array_spec(numbers: &BTreeSet<u64>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut it = numbers.iter().copied().peekable();
    while let Some(start) = it.next() {
        let mut end = start;
        while it.peek() == Some(&(end + 1)) {
            end += 1;
            it.next();
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
    }
    parts.join(",")
}

/// The batch script: one array task runs one line. No secret is in it.
fn script(tasks: &TasksFile, work: &WorkDir) -> String {
    let me = std::env::current_exe()
        .map_or_else(|_| BIN.to_string(), |p| p.to_string_lossy().into_owned());
    // The array outlives ag-fanout on purpose: sbatch exports the mark of
    // ag-fanout's watchdog with the rest of the environment, and on this
    // machine the watchdog would end the tasks if ag-fanout were killed.
    format!(
        "#!/bin/sh\n# ag-fanout's Slurm array task: line $SLURM_ARRAY_TASK_ID of the tasks file.\n\
         unset {}\n\
         exec {} --task \"$SLURM_ARRAY_TASK_ID\" --results-dir {} {}\n",
        crate::proc::WATCHDOG_VAR,
        shell_quote(&me),
        shell_quote(&work.results().to_string_lossy()),
        shell_quote(&tasks.path.to_string_lossy()),
    )
}

/// Submits the tasks `numbers` as one array; its job id.
async fn submit(
    tasks: &TasksFile,
    work: &WorkDir,
    numbers: &BTreeSet<u64>,
    opts: &Options,
) -> Result<String, String> {
    let path = work.script();
    crate::fsutil::write_atomic(&path, None, script(tasks, work).as_bytes(), || Ok(true))
        .map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
    let mut array = array_spec(numbers);
    if let Some(j) = opts.jobs {
        array.push_str(&format!("%{j}"));
    }
    let mut args: Vec<OsString> = vec![
        "--parsable".into(),
        format!("--array={array}").into(),
        "--job-name=ag-fanout".into(),
        // Every variable of this environment, the provider keys among
        // them: that is how they reach the tasks, and only that way.
        "--export=ALL".into(),
        format!("--output={}/%a.out", work.logs().display()).into(),
    ];
    if let Some(p) = &opts.partition {
        args.push(format!("--partition={p}").into());
    }
    if let Some(t) = &opts.time {
        args.push(format!("--time={t}").into());
    }
    if let Some(c) = opts.cpus_per_task {
        args.push(format!("--cpus-per-task={c}").into());
    }
    if let Some(m) = &opts.mem {
        args.push(format!("--mem={m}").into());
    }
    args.push(path.into_os_string());
    let out = slurm_command("sbatch", &args).await?;
    // `--parsable` prints `JOBID` or `JOBID;CLUSTER`.
    let job = out.split(';').next().unwrap_or("").trim().to_string();
    if job.is_empty() || !job.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("sbatch answered `{}`, not a job id", out.trim()));
    }
    let mut ids = work.job_ids();
    ids.push(job.clone());
    crate::fsutil::write_atomic(
        &work.jobs(),
        None,
        (ids.join("\n") + "\n").as_bytes(),
        || Ok(true),
    )
    .map_err(|e| format!("cannot write `{}`: {e}", work.jobs().display()))?;
    Ok(job)
}

/// Runs a Slurm client command; its stdout, or an error that says what
/// failed.
async fn slurm_command(program: &str, args: &[OsString]) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        .timeout(Duration::from_secs(60))
        .output(Output::Separate {
            stdout: CaptureLimit::new(16 * 1024 * 1024),
            stderr: CaptureLimit::new(8192),
        })
        .collect(&CancellationToken::new())
        .await
        .map_err(|e| match e {
            crate::proc::Error::Spawn { .. } => format!(
                "cannot run Slurm's `{program}` ({e}): is slurm-client installed and on PATH?"
            ),
            other => format!("{program}: {other}"),
        })?;
    if out.code() != 0 {
        return Err(format!(
            "{program} failed ({}): {}",
            out.status,
            out.stderr.lossy().trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout.head).into_owned())
}

/// Whether a job state is one a task can still end from by itself.
fn active(state: &str) -> bool {
    matches!(
        state,
        "PENDING"
            | "RUNNING"
            | "CONFIGURING"
            | "COMPLETING"
            | "SUSPENDED"
            | "REQUEUED"
            | "REQUEUE_FED"
            | "REQUEUE_HOLD"
            | "RESIZING"
            | "SIGNALING"
            | "STAGE_OUT"
            | "STOPPED"
            | "RESV_DEL_HOLD"
    )
}

/// The state of every array task of `jobs` that the controller still
/// knows, by (array job id, index).
async fn queue(jobs: &[String]) -> Result<BTreeMap<(String, u64), String>, String> {
    let mut states = BTreeMap::new();
    // One array at a time: squeue refuses the whole list when one of them
    // was purged from the controller.
    for job in jobs {
        let args: Vec<OsString> = vec![
            "--noheader".into(),
            "--array".into(),
            "--states=all".into(),
            format!("--jobs={job}").into(),
            "--format=%F|%K|%T".into(),
        ];
        let out = match slurm_command("squeue", &args).await {
            Ok(o) => o,
            Err(e) if e.contains("Invalid job id") => continue,
            Err(e) => return Err(e),
        };
        for line in out.lines() {
            let mut f = line.trim().split('|');
            let (Some(job), Some(index), Some(state)) = (f.next(), f.next(), f.next()) else {
                continue;
            };
            // A pending range not yet split (`4-20%4`) is one line.
            let range = index.split('%').next().unwrap_or("");
            for part in range.split(',') {
                let (a, b) = part.split_once('-').unwrap_or((part, part));
                if let (Ok(a), Ok(b)) = (a.parse::<u64>(), b.parse::<u64>()) {
                    for n in a..=b.min(a + 1_000_000) {
                        states.insert((job.to_string(), n), state.to_string());
                    }
                }
            }
        }
    }
    Ok(states)
}

/// Prints result lines as the tasks in `waiting` end, until none is left
/// or a signal comes (then the arrays are cancelled).
async fn follow(
    tasks: &TasksFile,
    work: &WorkDir,
    mut waiting: BTreeSet<u64>,
    jobs: &[String],
    mut summary: Summary,
) -> ExitStatus {
    let mut interrupt = Signal::new(SignalKind::interrupt());
    let mut terminate = Signal::new(SignalKind::terminate());
    let mut hangup = Signal::new(SignalKind::hangup());
    let mut misses: BTreeMap<u64, u32> = BTreeMap::new();
    let mut stopped: Option<i32> = None;
    let results_dir = work.results();
    while !waiting.is_empty() {
        let done: Vec<u64> = waiting
            .iter()
            .copied()
            .filter_map(|n| {
                results::read(&results_dir, n).map(|line| {
                    let _ = print_line(&line);
                    summary.add(&line);
                    n
                })
            })
            .collect();
        for n in done {
            waiting.remove(&n);
        }
        if waiting.is_empty() {
            break;
        }
        match queue(jobs).await {
            Ok(states) => {
                let mut by_line: BTreeMap<u64, (&String, &String)> = BTreeMap::new();
                for ((job, n), state) in &states {
                    // The newest array's word counts.
                    by_line.insert(*n, (job, state));
                }
                let mut ended: Vec<u64> = Vec::new();
                for n in waiting.iter().copied() {
                    let (job, state) = match by_line.get(&n) {
                        Some((_, s)) if active(s) => {
                            misses.remove(&n);
                            continue;
                        }
                        Some((job, state)) => ((*job).clone(), (*state).clone()),
                        None => {
                            let m = misses.entry(n).or_default();
                            *m += 1;
                            if *m < MISSES {
                                continue;
                            }
                            (jobs.join(","), "UNKNOWN".to_string())
                        }
                    };
                    // The result may have come just as the task ended.
                    let line = match results::read(&results_dir, n) {
                        Some(line) => line,
                        None => results::line(&FanoutRecord::Result(Box::new(ended_by_slurm(
                            tasks, work, n, &job, &state,
                        )))),
                    };
                    let _ = print_line(&line);
                    summary.add(&line);
                    ended.push(n);
                }
                for n in ended {
                    waiting.remove(&n);
                }
            }
            Err(e) => crate::cli::warn(BIN, &format!("{e}; trying again")),
        }
        if waiting.is_empty() {
            break;
        }
        tokio::select! {
            () = tokio::time::sleep(POLL) => {}
            () = interrupt.recv() => { stopped = Some(2); break; }
            () = terminate.recv() => { stopped = Some(15); break; }
            () = hangup.recv() => { stopped = Some(1); break; }
        }
    }
    if let Some(sig) = stopped {
        let args: Vec<OsString> = jobs.iter().map(OsString::from).collect();
        if let Err(e) = slurm_command("scancel", &args).await {
            error_line(
                BIN,
                &e,
                Some(&format!(
                    "cancel the arrays yourself: scancel {}",
                    jobs.join(" ")
                )),
            );
        }
        let _ = summary.print();
        note(
            BIN,
            &format!(
                "interrupted; job arrays {} cancelled. The tasks that did not end have no result line: run again with --resume to do them",
                jobs.join(", ")
            ),
        );
        return ExitStatus::Signal(sig);
    }
    super::results::finish(&summary)
}

/// The result of a task that Slurm ended without one.
fn ended_by_slurm(
    tasks: &TasksFile,
    work: &WorkDir,
    n: u64,
    job: &str,
    state: &str,
) -> FanoutResult {
    let (id, model) = match tasks.task(n) {
        Ok(t) => (t.id, t.model),
        Err(_) => (n.to_string(), None),
    };
    let log = work.logs().join(format!("{n}.out"));
    // A task that exited by itself without a result failed before it could
    // write one (its output says why); any other end is Slurm's doing.
    let outcome = if matches!(state, "COMPLETED" | "FAILED") {
        "failed"
    } else {
        "killed"
    };
    let mut error = if state == "UNKNOWN" {
        format!(
            "Slurm no longer knows array task {n} of job {job}, and it left no result; its output is in `{}`",
            log.display()
        )
    } else {
        format!(
            "Slurm ended array task {n} of job {job} with state {state}; its output is in `{}`",
            log.display()
        )
    };
    // The end of that output says what happened, where it says anything.
    let tail = log_tail(&log);
    if !tail.is_empty() {
        error.push_str(", ending: ");
        error.push_str(&tail);
    }
    FanoutResult {
        id,
        line: n,
        dir: None,
        model,
        outcome: outcome.into(),
        exit: None,
        session: None,
        cost: 0.0,
        usage: None,
        diff: None,
        diff_truncated: None,
        seconds: 0.0,
        error: Some(error),
        check: None,
        check_exit: None,
        check_output: None,
        engine_state: Some(state.to_string()),
    }
}

/// The last lines of a task's output (at most 1000 bytes).
fn log_tail(path: &Path) -> String {
    let Ok(bytes) = std::fs::read(path) else {
        return String::new();
    };
    let start = bytes.len().saturating_sub(1000);
    String::from_utf8_lossy(&bytes[start..]).trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_array_spec_joins_runs_of_lines() {
        let set: BTreeSet<u64> = [1, 2, 3, 5, 7, 8, 10].into_iter().collect();
        assert_eq!(array_spec(&set), "1-3,5,7-8,10");
        assert_eq!(array_spec(&BTreeSet::from([4])), "4");
    }

    #[test]
    fn resume_goes_after_the_program_in_the_hint() {
        let call: Vec<String> = ["ag-fanout", "--engine", "slurm", "my tasks.jsonl"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            with_resume(&call),
            "ag-fanout --resume --engine slurm 'my tasks.jsonl'"
        );
    }
}
