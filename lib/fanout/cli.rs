//! `ag-fanout`'s command line: which engine runs the tasks, one task
//! alone (`--task`), or the summary of saved results (`--summary`).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};

use super::{BIN, kube_manifest, kubernetes, one_task, parallel, results, slurm};
use crate::cli::{ExitStatus, error_line};

/// Many ag-loop sessions from a tasks file: on GNU parallel (here or over
/// ssh), as a Slurm job array, or as a Kubernetes Indexed Job.
///
/// TASKS holds one JSON object a line; blank lines and lines starting with
/// # are not tasks:
///
///   {"id": "fix-1", "dir": "/src/app", "prompt": "fix the failing test",
///    "model": "anthropic/claude-sonnet-4-5", "args": ["--max-turns", "30"]}
///
/// dir is the directory ag-loop works in, relative to TASKS (required
/// unless repo is given); prompt the prompt (required); model
/// provider/model; id the task's name in its result line (default: its
/// line number); repo a git URL or path cloned into dir first when dir does
/// not exist (into a temporary directory, removed afterwards, when dir is
/// absent); args more ag-loop flags, as a list of strings; check a shell
/// command that exits 0 when the task is done (ag-loop --until), with
/// check_tries and check_timeout as --until-tries and --until-timeout. Any
/// other field is refused.
///
/// stdout gets one JSON result line per task as it ends, then one summary
/// line:
///
///   {"type":"result","id","line","dir","model","outcome","exit","session",
///    "cost","usage","diff","diff_truncated","seconds","error",
///    "check","check_exit","check_output","engine_state"}
///   {"type":"summary","tasks","outcomes":{...},"cost","failed"}
///
/// (schemas/fanout-record.json). outcome is ag-loop's (finished,
/// turn_limit, cost_limit, model_error, check_failed, ...) or ag-fanout's
/// own: invalid_task, no_directory, clone_failed, failed (ag-loop ended
/// without saying how), killed (the engine ended the task; engine_state
/// says how, e.g. Slurm's TIMEOUT). diff is what the task changed, as git
/// diff --binary, cut at $FANOUT_MAX_DIFF bytes (1 MiB) with
/// diff_truncated. ag-loop is the one beside ag-fanout, else on PATH, or
/// $FANOUT_AG_LOOP.
///
/// Engine parallel (the default): every argument between ag-fanout's own
/// options and TASKS goes to GNU parallel unchanged: --joblog FILE and
/// --resume (or --resume-failed) to go on after an interruption,
/// --sshlogin / --sshloginfile to run on other machines (which need git and
/// the ag binaries on the PATH of a non-interactive ssh command, TASKS at
/// the same absolute path, and the tasks' directories), --env NAME to send
/// a provider key along, --timeout SECONDS.
///
/// Engine slurm: one job array (sbatch --array, -j as its % cap), followed
/// until it ends; Ctrl-C cancels it (scancel). Engine kubernetes: one
/// Indexed Job made with kubectl (its current context, or --namespace), the
/// tasks file in a ConfigMap, the keys named by --secret-env in a Secret;
/// each pod runs `ag-fanout --task N` in --image and prints its result line,
/// which ag-fanout reads with kubectl logs. Ctrl-C deletes the Job. Both
/// keep their run in --work-dir: --resume goes on from there, running only
/// the tasks without a result.
#[derive(Debug, Parser)]
#[command(
    name = "ag-fanout",
    version,
    after_help = "Exit status: 0 every task finished, 1 some task did not, 2 usage error (or the engine missing), 128+N interrupted by signal N.\n\nSee docs/remote.md, \"Running many sessions\"."
)]
pub struct Args {
    /// Where the tasks run.
    #[arg(long, value_enum, default_value_t = Engine::Parallel)]
    pub engine: Engine,

    /// Runs only line N of TASKS (from 1) and prints its result line: what
    /// each engine runs for one task.
    #[arg(long, value_name = "N", conflicts_with = "summary")]
    pub task: Option<u64>,

    /// With --task: also writes the result line into DIR as N.json, whole
    /// or not at all (what the cluster engines' tasks do).
    #[arg(long, value_name = "DIR", requires = "task")]
    pub results_dir: Option<PathBuf>,

    /// Prints the summary of saved result lines (the last result of each
    /// task id counts), for runs resumed into several files: the arguments
    /// are result files.
    #[arg(long)]
    pub summary: bool,

    /// Tasks at a time (GNU parallel's -j; the Slurm array's % cap; the
    /// Kubernetes Job's parallelism).
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub jobs: Option<String>,

    /// Goes on with an interrupted run: GNU parallel's --resume (with
    /// --joblog); with slurm and kubernetes, prints the results already in
    /// the work directory, collects those that ended meanwhile, follows the
    /// tasks still queued or running, and submits only the tasks that have
    /// no result.
    #[arg(long)]
    pub resume: bool,

    /// Engines slurm and kubernetes: the run's directory (default:
    /// TASKS.fanout beside the tasks file); for slurm on a file system the
    /// cluster shares with this machine. It keeps what was submitted and
    /// each task's result, so that --resume can go on.
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,

    /// Slurm: the partition (sbatch --partition).
    #[arg(long, value_name = "NAME", help_heading = "Slurm")]
    pub partition: Option<String>,

    /// Slurm and Kubernetes: each task's time limit, in Slurm's forms
    /// (MINUTES, MINUTES:SECONDS, HOURS:MINUTES:SECONDS, DAYS-HOURS, ...):
    /// sbatch --time, or the pod's activeDeadlineSeconds. A task past it is
    /// reported with engine_state TIMEOUT (Slurm) or DeadlineExceeded.
    #[arg(long, value_name = "TIME", help_heading = "Slurm and Kubernetes")]
    pub time: Option<String>,

    /// Slurm and Kubernetes: CPUs per task (sbatch --cpus-per-task; the
    /// pod's cpu request and limit).
    #[arg(long, value_name = "N", help_heading = "Slurm and Kubernetes")]
    pub cpus_per_task: Option<u32>,

    /// Slurm and Kubernetes: memory per task (sbatch --mem, e.g. 4G; the
    /// pod's memory request and limit, e.g. 4Gi).
    #[arg(long, value_name = "SIZE", help_heading = "Slurm and Kubernetes")]
    pub mem: Option<String>,

    /// Kubernetes: the pods' container image, which holds the ag binaries
    /// (ag-fanout on PATH) and git (examples/k8s/Dockerfile builds one).
    #[arg(long, value_name = "IMAGE", help_heading = "Kubernetes")]
    pub image: Option<String>,

    /// Kubernetes: the namespace (kubectl's current one by default).
    #[arg(long, value_name = "NAME", help_heading = "Kubernetes")]
    pub namespace: Option<String>,

    /// Kubernetes: an environment variable (a provider key) that reaches
    /// the pods through a Secret made for the run from this environment
    /// and deleted with the Job; repeat it for more.
    #[arg(long, value_name = "VAR", help_heading = "Kubernetes")]
    pub secret_env: Vec<String>,

    /// GNU parallel's options (engine parallel), then the tasks file; with
    /// --summary, result files.
    #[arg(
        value_name = "ARGS",
        allow_hyphen_values = true,
        trailing_var_arg = true,
        num_args = 0..
    )]
    pub rest: Vec<OsString>,
}

/// Where the tasks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Engine {
    /// GNU parallel, on this machine or over ssh.
    Parallel,
    /// One Slurm job array (sbatch --array), followed until it ends.
    Slurm,
    /// One Kubernetes Indexed Job (kubectl), followed until it ends.
    Kubernetes,
}

/// ag-fanout's main.
pub fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => return ExitStatus::from_clap(e, BIN).code(),
    };
    run(args).code()
}

fn run(args: Args) -> ExitStatus {
    if args.summary {
        return summarize(&args.rest);
    }
    if let Some(n) = args.task {
        let [tasks] = args.rest.as_slice() else {
            error_line(
                BIN,
                "--task takes a line number and the tasks file",
                Some(&format!("ag-fanout --task {n} TASKS")),
            );
            return ExitStatus::Input;
        };
        return one_task::run(&PathBuf::from(tasks), n, args.results_dir.as_deref());
    }
    let Some((tasks, before)) = args.rest.split_last() else {
        error_line(
            BIN,
            "the tasks file is missing",
            Some("ag-fanout [OPTIONS] TASKS; `ag-fanout --help` describes it"),
        );
        return ExitStatus::Input;
    };
    if tasks.to_string_lossy().starts_with('-') {
        error_line(
            BIN,
            &format!(
                "the tasks file comes last, after `{}`",
                tasks.to_string_lossy()
            ),
            Some("ag-fanout [OPTIONS] [PARALLEL-OPTIONS] TASKS"),
        );
        return ExitStatus::Input;
    }
    let tasks = PathBuf::from(tasks);
    if let Some(status) = misplaced_flags(&args) {
        return status;
    }
    match args.engine {
        Engine::Parallel => {
            let mut pass: Vec<OsString> = Vec::new();
            if let Some(j) = &args.jobs {
                pass.extend(["-j".into(), j.into()]);
            }
            if args.resume {
                pass.push("--resume".into());
            }
            pass.extend(before.iter().cloned());
            let runtime = match crate::cli::runtime(BIN) {
                Ok(r) => r,
                Err(s) => return s,
            };
            runtime.block_on(parallel::run(&tasks, &pass))
        }
        Engine::Slurm => {
            if let Some(first) = before.first() {
                return refuse_passthrough(first, "slurm");
            }
            let jobs = match cluster_jobs(
                args.jobs.as_deref(),
                "the slurm engine takes a number of tasks at a time",
            ) {
                Ok(j) => j,
                Err(s) => return s,
            };
            let opts = slurm::Options {
                jobs,
                partition: args.partition.clone(),
                time: args.time.clone(),
                cpus_per_task: args.cpus_per_task,
                mem: args.mem.clone(),
                resume: args.resume,
                work_dir: args
                    .work_dir
                    .clone()
                    .unwrap_or_else(|| default_work_dir(&tasks)),
                call: std::env::args().collect(),
            };
            let runtime = match crate::cli::runtime(BIN) {
                Ok(r) => r,
                Err(s) => return s,
            };
            runtime.block_on(slurm::run(&tasks, &opts))
        }
        Engine::Kubernetes => kubernetes(&args, &tasks, before),
    }
}

/// A cluster engine's `-j`: a whole number, 1 or more. The error shows the
/// caller's own command with that value made 1.
fn cluster_jobs(given: Option<&str>, what: &str) -> Result<Option<u32>, ExitStatus> {
    let Some(given) = given else {
        return Ok(None);
    };
    match given.parse::<u32>() {
        Ok(j) if j > 0 => Ok(Some(j)),
        _ => {
            let call: Vec<String> = std::env::args().collect();
            error_line(
                BIN,
                &format!("-j `{given}`: {what}, 1 or more"),
                Some(&with_jobs_one(&call, given).join(" ")),
            );
            Err(ExitStatus::Input)
        }
    }
}

/// `call` with its `-j`/`--jobs` value `bad` replaced by 1, in whichever
/// form it was given (`-j X`, `-jX`, `--jobs X`, `--jobs=X`).
fn with_jobs_one(call: &[String], bad: &str) -> Vec<String> {
    let mut out = call.to_vec();
    for i in 0..out.len() {
        let a = out[i].as_str();
        if (a == "-j" || a == "--jobs") && out.get(i + 1).map(String::as_str) == Some(bad) {
            out[i + 1] = "1".into();
            break;
        }
        if a == format!("-j{bad}") {
            out[i] = "-j1".into();
            break;
        }
        if a == format!("--jobs={bad}") {
            out[i] = "--jobs=1".into();
            break;
        }
    }
    out
}

/// The kubernetes engine's run, its flags checked.
fn kubernetes(args: &Args, tasks: &std::path::Path, before: &[OsString]) -> ExitStatus {
    if let Some(first) = before.first() {
        return refuse_passthrough(first, "kubernetes");
    }
    let call: Vec<String> = std::env::args().collect();
    let Some(image) = args.image.clone() else {
        let mut fixed = call.clone();
        fixed.insert(1.min(fixed.len()), "--image IMAGE".into());
        error_line(
            BIN,
            "the kubernetes engine needs the pods' image: --image IMAGE (one with the ag binaries and git; examples/k8s/Dockerfile builds one)",
            Some(&fixed.join(" ")),
        );
        return ExitStatus::Input;
    };
    let jobs = match cluster_jobs(
        args.jobs.as_deref(),
        "the kubernetes engine takes a number of pods at a time",
    ) {
        Ok(j) => j,
        Err(s) => return s,
    };
    let deadline = match args.time.as_deref() {
        None => None,
        Some(t) => match kube_manifest::seconds(t) {
            Some(s) => Some(s),
            None => {
                error_line(
                    BIN,
                    &format!("--time `{t}`: not a time limit in Slurm's forms"),
                    Some(
                        "MINUTES (30), MINUTES:SECONDS (0:45), HOURS:MINUTES:SECONDS (2:00:00) or DAYS-HOURS (1-0)",
                    ),
                );
                return ExitStatus::Input;
            }
        },
    };
    let opts = kubernetes::Options {
        spec: kube_manifest::Spec {
            image,
            namespace: args.namespace.clone(),
            parallelism: jobs,
            deadline_seconds: deadline,
            cpus: args.cpus_per_task,
            memory: args.mem.clone(),
            secret: false,
        },
        secret_env: args.secret_env.clone(),
        resume: args.resume,
        work_dir: args
            .work_dir
            .clone()
            .unwrap_or_else(|| default_work_dir(tasks)),
        call,
    };
    let runtime = match crate::cli::runtime(BIN) {
        Ok(r) => r,
        Err(s) => return s,
    };
    runtime.block_on(kubernetes::run(tasks, &opts))
}

/// A flag given to an engine that does not take it: refused, rather than
/// silently ignored.
fn misplaced_flags(args: &Args) -> Option<ExitStatus> {
    let slurm_only = [("--partition", args.partition.is_some())];
    let kube_only = [
        ("--image", args.image.is_some()),
        ("--namespace", args.namespace.is_some()),
        ("--secret-env", !args.secret_env.is_empty()),
    ];
    let cluster = [
        ("--work-dir", args.work_dir.is_some()),
        ("--time", args.time.is_some()),
        ("--cpus-per-task", args.cpus_per_task.is_some()),
        ("--mem", args.mem.is_some()),
    ];
    let (name, engines) = match args.engine {
        Engine::Parallel => slurm_only
            .iter()
            .chain(&kube_only)
            .chain(&cluster)
            .find(|(_, given)| *given)
            .map(|(n, _)| (*n, "slurm or kubernetes"))?,
        Engine::Slurm => kube_only
            .iter()
            .find(|(_, given)| *given)
            .map(|(n, _)| (*n, "kubernetes"))?,
        Engine::Kubernetes => slurm_only
            .iter()
            .find(|(_, given)| *given)
            .map(|(n, _)| (*n, "slurm"))?,
    };
    let engine = format!("{:?}", args.engine).to_lowercase();
    error_line(
        BIN,
        &format!("{name} is an option of the {engines} engine, not of the {engine} engine"),
        Some("`ag-fanout --help` says which options go with which engine"),
    );
    Some(ExitStatus::Input)
}

/// `TASKS.fanout` beside the tasks file.
fn default_work_dir(tasks: &std::path::Path) -> PathBuf {
    let mut name = tasks.as_os_str().to_owned();
    name.push(".fanout");
    PathBuf::from(name)
}

/// An argument that is neither ag-fanout's nor the tasks file, with an
/// engine that takes no GNU parallel options.
fn refuse_passthrough(arg: &OsString, engine: &str) -> ExitStatus {
    error_line(
        BIN,
        &format!(
            "`{}` is not an option of ag-fanout, and the {engine} engine passes nothing to GNU parallel",
            arg.to_string_lossy()
        ),
        Some("`ag-fanout --help` lists the options; the tasks file comes last"),
    );
    ExitStatus::Input
}

fn summarize(files: &[OsString]) -> ExitStatus {
    if files.is_empty() {
        error_line(
            BIN,
            "--summary takes result files",
            Some("ag-fanout --summary results.jsonl"),
        );
        return ExitStatus::Input;
    }
    let mut summary = results::Summary::default();
    for f in files {
        let text = match std::fs::read(f) {
            Ok(t) => t,
            Err(e) => {
                error_line(
                    BIN,
                    &format!("cannot read results file `{}`: {e}", f.to_string_lossy()),
                    None,
                );
                return ExitStatus::Input;
            }
        };
        for line in text.split(|b| *b == b'\n') {
            summary.add(line);
        }
    }
    match summary.print() {
        Ok(r) if r.failed > 0 => ExitStatus::Failure,
        Ok(_) => ExitStatus::Success,
        Err(e) => {
            error_line(BIN, &format!("cannot write the summary: {e}"), None);
            ExitStatus::Input
        }
    }
}

#[cfg(test)]
mod tests {
    use super::with_jobs_one;

    fn call(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn a_bad_jobs_value_is_made_one_in_the_form_it_was_given() {
        for (given, fixed) in [
            (
                &["ag-fanout", "-j", "x", "t.jsonl"][..],
                &["ag-fanout", "-j", "1", "t.jsonl"][..],
            ),
            (
                &["ag-fanout", "-j0", "t.jsonl"],
                &["ag-fanout", "-j1", "t.jsonl"],
            ),
            (
                &["ag-fanout", "--jobs", "0", "t.jsonl"],
                &["ag-fanout", "--jobs", "1", "t.jsonl"],
            ),
            (
                &["ag-fanout", "--jobs=-2", "t.jsonl"],
                &["ag-fanout", "--jobs=1", "t.jsonl"],
            ),
        ] {
            let bad = given
                .iter()
                .find_map(|a| {
                    a.strip_prefix("--jobs=")
                        .or_else(|| a.strip_prefix("-j").filter(|r| !r.is_empty()))
                })
                .or_else(|| {
                    given
                        .iter()
                        .position(|a| *a == "-j" || *a == "--jobs")
                        .map(|i| given[i + 1])
                })
                .unwrap();
            assert_eq!(with_jobs_one(&call(given), bad), call(fixed), "{given:?}");
        }
    }
}
