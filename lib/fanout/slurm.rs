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

use tokio_util::sync::CancellationToken;

use super::BIN;
use super::parallel::shell_quote;
use super::results::{self, Summary};
use super::stops::{Stops, interrupted};
use super::tasks_file::TasksFile;
use super::work_dir::{self, Prepared, WorkDir};
use crate::cli::{ExitStatus, error_line, note};
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

/// The Slurm engine's own files in the work directory.
trait SlurmFiles {
    /// `logs/`: each task's output, `N.out`.
    fn logs(&self) -> PathBuf;
    /// `job.sh`: the batch script.
    fn script(&self) -> PathBuf;
}

impl SlurmFiles for WorkDir {
    fn logs(&self) -> PathBuf {
        self.root.join("logs")
    }
    fn script(&self) -> PathBuf {
        self.root.join("job.sh")
    }
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
    let Prepared {
        work,
        summary,
        waiting,
    } = match work_dir::prepare(&tasks, &opts.work_dir, opts.resume, &opts.call) {
        Ok(p) => p,
        Err(status) => return status,
    };
    if let Err(e) = std::fs::create_dir_all(work.logs()) {
        error_line(
            BIN,
            &format!("cannot make `{}`: {e}", work.logs().display()),
            None,
        );
        return ExitStatus::Input;
    }
    let mut jobs: Vec<String> = Vec::new();
    let mut bases = Bases::of(&work);
    let mut to_submit = waiting.clone();
    if opts.resume {
        // Tasks still queued or running in an earlier array are followed,
        // not submitted again.
        let earlier: Vec<String> = bases.0.keys().cloned().collect();
        if !earlier.is_empty() {
            match queue(&earlier, &bases).await {
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
            Ok(arrays) => {
                let ids: Vec<&str> = arrays.iter().map(|(id, _)| id.as_str()).collect();
                note(
                    BIN,
                    &format!(
                        "submitted job array{} {} ({} tasks); its output is in `{}`",
                        if ids.len() > 1 { "s" } else { "" },
                        ids.join(", "),
                        to_submit.len(),
                        work.logs().display()
                    ),
                );
                for (id, base) in arrays {
                    bases.0.insert(id.clone(), base);
                    jobs.push(id);
                }
            }
            Err(e) => {
                error_line(BIN, &e, None);
                return ExitStatus::Input;
            }
        }
    }
    follow(&tasks, &work, waiting, &jobs, &bases, summary).await
}

/// What each array's index adds up to with, to give the line number: 0,
/// unless the tasks file is longer than the cluster's MaxArraySize (an
/// index must be below it), and the lines went into several arrays.
struct Bases(BTreeMap<String, u64>);

impl Bases {
    /// The arrays in the work directory's `jobs`: `ID` or `ID BASE`.
    fn of(work: &WorkDir) -> Bases {
        Bases(
            work.job_lines()
                .iter()
                .map(|l| match l.split_once(' ') {
                    Some((id, base)) => (id.to_string(), base.trim().parse().unwrap_or(0)),
                    None => (l.clone(), 0),
                })
                .collect(),
        )
    }

    fn base(&self, job: &str) -> u64 {
        self.0.get(job).copied().unwrap_or(0)
    }
}

/// The lines `numbers` as arrays whose indexes are all below `max` (the
/// cluster's MaxArraySize): (base, indexes), index + base = line. One
/// array of the line numbers themselves when they fit.
fn split(numbers: &BTreeSet<u64>, max: u64) -> Vec<(u64, BTreeSet<u64>)> {
    let width = max.saturating_sub(1).max(1);
    if numbers.last().is_none_or(|n| *n < max) {
        return vec![(0, numbers.clone())];
    }
    let mut out: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    for n in numbers {
        let base = (n - 1) / width * width;
        out.entry(base).or_default().insert(n - base);
    }
    out.into_iter().collect()
}

/// The cluster's MaxArraySize (`scontrol show config`); Slurm's default,
/// 1001, when it does not say.
async fn max_array_size() -> u64 {
    let args: Vec<OsString> = vec!["show".into(), "config".into()];
    let Ok(out) = slurm_command("scontrol", &args).await else {
        return 1001;
    };
    out.lines()
        .filter_map(|l| l.split_once('='))
        .find(|(k, _)| k.trim() == "MaxArraySize")
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(1001)
}

/// The batch script: one array task runs one line. No secret is in it.
fn script(tasks: &TasksFile, work: &WorkDir) -> String {
    let me = std::env::current_exe()
        .map_or_else(|_| BIN.to_string(), |p| p.to_string_lossy().into_owned());
    // The array outlives ag-fanout on purpose: sbatch exports the mark of
    // ag-fanout's watchdog with the rest of the environment, and on this
    // machine the watchdog would end the tasks if ag-fanout were killed.
    format!(
        "#!/bin/sh\n# ag-fanout's Slurm array task: line $SLURM_ARRAY_TASK_ID (+ the array's base, $1) of the tasks file.\n\
         unset {}\n\
         exec {} --task \"$((SLURM_ARRAY_TASK_ID + ${{1:-0}}))\" --results-dir {} {}\n",
        crate::proc::WATCHDOG_VAR,
        shell_quote(&me),
        shell_quote(&work.results().to_string_lossy()),
        shell_quote(&tasks.path.to_string_lossy()),
    )
}

/// Submits the tasks `numbers` as one array, or as several where the
/// cluster's MaxArraySize is below their line numbers (then `-j` caps each
/// array); each array's job id and base.
async fn submit(
    tasks: &TasksFile,
    work: &WorkDir,
    numbers: &BTreeSet<u64>,
    opts: &Options,
) -> Result<Vec<(String, u64)>, String> {
    let path = work.script();
    crate::fsutil::write_atomic(&path, None, script(tasks, work).as_bytes(), || Ok(true))
        .map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
    let parts = split(numbers, max_array_size().await);
    let mut arrays = Vec::new();
    for (base, indexes) in parts {
        let id = submit_array(work, &indexes, base, opts).await?;
        arrays.push((id, base));
    }
    Ok(arrays)
}

/// The file of a task's output: `N.out` by its line, or `bBASE-INDEX.out`
/// in an array with a base.
fn log_of(work: &WorkDir, n: u64, base: u64) -> PathBuf {
    if base == 0 {
        work.logs().join(format!("{n}.out"))
    } else {
        work.logs().join(format!("b{base}-{}.out", n - base))
    }
}

/// Submits one array of `indexes` (+ `base`); its job id.
async fn submit_array(
    work: &WorkDir,
    indexes: &BTreeSet<u64>,
    base: u64,
    opts: &Options,
) -> Result<String, String> {
    let path = work.script();
    let mut array = work_dir::ranges(indexes);
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
        if base == 0 {
            format!("--output={}/%a.out", work.logs().display()).into()
        } else {
            format!("--output={}/b{base}-%a.out", work.logs().display()).into()
        },
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
    args.push(base.to_string().into());
    let out = slurm_command("sbatch", &args).await?;
    // `--parsable` prints `JOBID` or `JOBID;CLUSTER`.
    let job = out.split(';').next().unwrap_or("").trim().to_string();
    if job.is_empty() || !job.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("sbatch answered `{}`, not a job id", out.trim()));
    }
    if base == 0 {
        work.add_job_line(&job)?;
    } else {
        work.add_job_line(&format!("{job} {base}"))?;
    }
    Ok(job)
}

/// Runs a Slurm client command; its stdout, or an error that says what
/// failed.
async fn slurm_command(program: &str, args: &[OsString]) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        .timeout(Duration::from_secs(60))
        .output(Output::Separate {
            // The first bytes, all of them: squeue's lines are read whole.
            stdout: CaptureLimit::head_only(16 * 1024 * 1024),
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
/// knows, by (array job id, line number).
async fn queue(jobs: &[String], bases: &Bases) -> Result<BTreeMap<(String, u64), String>, String> {
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
            let base = bases.base(job);
            for n in work_dir::parse_ranges(range) {
                states.insert((job.to_string(), n + base), state.to_string());
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
    bases: &Bases,
    mut summary: Summary,
) -> ExitStatus {
    let mut stops = Stops::listen();
    let mut misses: BTreeMap<u64, u32> = BTreeMap::new();
    let mut stopped: Option<i32> = None;
    let results_dir = work.results();
    while !waiting.is_empty() {
        print_written(&results_dir, &mut waiting, &mut summary);
        if waiting.is_empty() {
            break;
        }
        match queue(jobs, bases).await {
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
                            tasks,
                            log_of(work, n, bases.base(&job)),
                            n,
                            &job,
                            &state,
                        )))),
                    };
                    summary.show(&line);
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
        stopped = stops.pause(POLL).await;
        if stopped.is_some() {
            break;
        }
    }
    if let Some(sig) = stopped {
        // A result written since the last look is printed now, before the
        // arrays are cancelled: the interrupted run's output has every
        // task that ended.
        print_written(&results_dir, &mut waiting, &mut summary);
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
        return interrupted(
            &summary,
            sig,
            &format!(
                "job arrays {} cancelled. The tasks that did not end have no result line: run again with --resume to do them",
                jobs.join(", ")
            ),
        );
    }
    super::results::finish(&summary)
}

/// Prints and counts the result of each task of `waiting` that has one in
/// `results_dir`, and takes it out of `waiting`.
fn print_written(results_dir: &Path, waiting: &mut BTreeSet<u64>, summary: &mut Summary) {
    waiting.retain(|&n| match results::read(results_dir, n) {
        Some(line) => {
            summary.show(&line);
            false
        }
        None => true,
    });
}

/// The result of a task that Slurm ended without one.
fn ended_by_slurm(tasks: &TasksFile, log: PathBuf, n: u64, job: &str, state: &str) -> FanoutResult {
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
    let tail = std::fs::read(&log)
        .map(|b| results::output_tail(&String::from_utf8_lossy(&b)))
        .unwrap_or_default();
    if !tail.is_empty() {
        error.push_str(", ending: ");
        error.push_str(&tail);
    }
    results::ended(tasks, n, outcome, state, error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_past_max_array_size_go_into_arrays_with_a_base() {
        let lines: BTreeSet<u64> = (2..=8).collect();
        assert_eq!(split(&lines, 1001), vec![(0, lines.clone())]);
        // Indexes must stay below 4: 1-3, then 1-3 from base 3, ...
        assert_eq!(
            split(&lines, 4),
            vec![
                (0, BTreeSet::from([2, 3])),
                (3, BTreeSet::from([1, 2, 3])),
                (6, BTreeSet::from([1, 2])),
            ]
        );
        let thousand: BTreeSet<u64> = (1..=1000).collect();
        assert_eq!(split(&thousand, 1001).len(), 1);
        let more: BTreeSet<u64> = (1..=2500).collect();
        let parts = split(&more, 1001);
        assert_eq!(parts.len(), 3);
        assert!(parts.iter().all(|(_, i)| i.last().unwrap() < &1001));
        let back: BTreeSet<u64> = parts
            .iter()
            .flat_map(|(b, i)| i.iter().map(move |x| x + b))
            .collect();
        assert_eq!(back, more);
    }
}
