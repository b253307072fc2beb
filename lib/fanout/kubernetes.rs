//! The `kubernetes` engine: the tasks become one Indexed Job
//! (`kube_manifest.rs`), made with kubectl, its provider keys in a Secret
//! made from the environment. ag-fanout follows the Job (`kubectl get`)
//! and, as each index ends, reads the result line its pod printed
//! (`kubectl logs`), writes it whole into the work directory and prints
//! it; a pod that Kubernetes ended without a result (its deadline, an
//! eviction, the memory limit) gets a `killed` line with Kubernetes' own
//! reason. When every task has its line, the Job, its ConfigMap and its
//! Secret are deleted; Ctrl-C deletes them at once.
//!
//! The work directory keeps the run: `jobs` (one line per Job: its name
//! and the lines of the tasks file its indexes run, in order), each Job's
//! manifest as `NAME.json` (no secret is in it), and `results/`.
//! `--resume` prints the results there, collects those of earlier Jobs
//! that ended meanwhile, follows their indexes still running, and makes a
//! new Job of only the tasks left.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::BIN;
use super::kube_manifest::{self, CONTAINER, Spec};
use super::results::{self, Summary};
use super::stops::{Stops, interrupted};
use super::tasks_file::TasksFile;
use super::work_dir::{self, Prepared, WorkDir};
use crate::cli::{ExitStatus, error_line, note, warn};
use crate::proc::{CaptureLimit, Command, Input, Output};
use crate::protocol::FanoutRecord;

/// How often the Jobs are looked at.
const POLL: Duration = Duration::from_secs(1);
/// The longest an interrupted run spends reading the results of pods that
/// ended since its last look, before it deletes the Jobs.
const COLLECT_LIMIT: Duration = Duration::from_secs(20);
/// Looks in a row that must fail (a Job gone, a log that cannot be read)
/// before a task is given up as ended without a result.
const MISSES: u32 = 6;
/// The bytes of a pod's log kept: a result line holds a diff of up to
/// 1 MiB (FANOUT_MAX_DIFF), JSON-escaped.
const MAX_LOG: usize = 16 * 1024 * 1024;
/// The bytes of `kubectl get` kept: the pods of a Job of thousands of tasks.
const MAX_GET: usize = 256 * 1024 * 1024;

/// What the caller chose.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The Job's shape.
    pub spec: Spec,
    /// Environment variables that reach the pods through the Secret.
    pub secret_env: Vec<String>,
    /// Go on with the run in the work directory.
    pub resume: bool,
    /// The work directory.
    pub work_dir: PathBuf,
    /// How the user called ag-fanout, for the hints.
    pub call: Vec<String>,
}

/// Runs every task of `tasks_path` as a Kubernetes Indexed Job.
pub async fn run(tasks_path: &Path, opts: &Options) -> ExitStatus {
    let tasks = match TasksFile::read(tasks_path) {
        Ok(t) => t,
        Err(e) => {
            error_line(BIN, &e, None);
            return ExitStatus::Input;
        }
    };
    // Every key is read before anything is made, so that a missing one
    // stops the run here rather than in every pod.
    let mut keys: Vec<(String, String)> = Vec::new();
    for name in &opts.secret_env {
        match std::env::var(name) {
            Ok(v) => keys.push((name.clone(), v)),
            Err(_) => {
                error_line(
                    BIN,
                    &format!("--secret-env {name}: `{name}` is not set in this environment"),
                    Some(&format!(
                        "export {name}=... before running ag-fanout, or leave out --secret-env {name}"
                    )),
                );
                return ExitStatus::Input;
            }
        }
    }
    let Prepared {
        work,
        mut summary,
        mut waiting,
    } = match work_dir::prepare(&tasks, &opts.work_dir, opts.resume, &opts.call) {
        Ok(p) => p,
        Err(status) => return status,
    };
    let kube = Kube {
        namespace: opts.spec.namespace.clone(),
    };
    // Which Job index runs each task still waiting.
    let mut covered: BTreeMap<u64, (String, u64)> = BTreeMap::new();
    if opts.resume {
        for (job, lines) in earlier_jobs(&work) {
            let indexes: Vec<u64> = (0..lines.len() as u64).collect();
            let view = match kube.look(&job, &indexes).await {
                Ok(Some(v)) => v,
                Ok(None) => continue,
                Err(e) => {
                    error_line(
                        BIN,
                        &e,
                        Some("is the cluster reachable? `kubectl get jobs` says"),
                    );
                    return ExitStatus::Input;
                }
            };
            for (index, n) in lines.iter().copied().enumerate() {
                if !waiting.contains(&n) {
                    continue;
                }
                match kube.settle(&view, &job, index as u64, n).await {
                    Settled::Result(line) => {
                        keep(&work, n, &line, &mut summary);
                        waiting.remove(&n);
                    }
                    Settled::Pending | Settled::Retry(_) => {
                        covered.insert(n, (job.clone(), index as u64));
                    }
                    // Ended without a result: it runs again.
                    Settled::Ended { .. } => {}
                }
            }
        }
    }
    let to_submit: BTreeSet<u64> = waiting
        .iter()
        .copied()
        .filter(|n| !covered.contains_key(n))
        .collect();
    if !to_submit.is_empty() {
        match submit(&kube, &tasks, &work, &to_submit, opts, &keys).await {
            Ok(job) => {
                note(
                    BIN,
                    &format!(
                        "made job {job} ({} tasks); its manifest is `{}`",
                        to_submit.len(),
                        work.root.join(format!("{job}.json")).display()
                    ),
                );
                for (index, n) in to_submit.iter().copied().enumerate() {
                    covered.insert(n, (job.clone(), index as u64));
                }
            }
            Err(e) => {
                error_line(BIN, &e, None);
                return ExitStatus::Input;
            }
        }
    }
    follow(&kube, &tasks, &work, waiting, covered, summary).await
}

/// The Jobs of `jobs`, each with the lines its indexes run.
fn earlier_jobs(work: &WorkDir) -> Vec<(String, Vec<u64>)> {
    work.job_lines()
        .iter()
        .filter_map(|l| {
            let (name, lines) = l.split_once(' ')?;
            Some((
                name.to_string(),
                work_dir::parse_ranges(lines).into_iter().collect(),
            ))
        })
        .collect()
}

/// A new Job's name: unique enough that runs never meet (a DNS label).
fn job_name(work: &WorkDir) -> String {
    let seed = format!(
        "{}\0{}\0{:?}",
        work.root.display(),
        std::process::id(),
        std::time::SystemTime::now()
    );
    let hash = crate::fsutil::content_hash(seed.as_bytes());
    let hex: String = hash.chars().filter(char::is_ascii_hexdigit).collect();
    format!("ag-fanout-{}", &hex[hex.len().saturating_sub(10)..])
}

/// Makes the Secret, the ConfigMap and the Job for the tasks `lines`; the
/// Job's name.
async fn submit(
    kube: &Kube,
    tasks: &TasksFile,
    work: &WorkDir,
    lines: &BTreeSet<u64>,
    opts: &Options,
    keys: &[(String, String)],
) -> Result<String, String> {
    let name = job_name(work);
    let mut spec = opts.spec.clone();
    spec.secret = !keys.is_empty();
    let manifest = kube_manifest::manifest(tasks, &name, lines, &spec)?;
    let path = work.root.join(format!("{name}.json"));
    let text = serde_json::to_string_pretty(&manifest).unwrap_or_default() + "\n";
    crate::fsutil::write_atomic(&path, None, text.as_bytes(), || Ok(true))
        .map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
    // Named in `jobs` before it exists, so that whatever happens next,
    // the run knows what to delete.
    work.add_job_line(&format!("{name} {}", work_dir::ranges(lines)))?;
    if spec.secret {
        // `create`, not `apply`: apply would copy the keys into an
        // annotation. On stdin only: never on disk or in an argument.
        let secret = kube_manifest::secret(&name, spec.namespace.as_deref(), keys);
        kube.run(
            &["create", "-f", "-", "-o", "name"],
            Some(serde_json::to_vec(&secret).unwrap_or_default()),
        )
        .await
        .map_err(|e| format!("cannot make the Secret of the provider keys: {e}"))?;
    }
    // `create` again: apply's annotation would hold the tasks file twice,
    // and an annotation holds at most 256 KiB.
    let path_arg = path.to_string_lossy().into_owned();
    if let Err(e) = kube
        .run(&["create", "-f", &path_arg, "-o", "name"], None)
        .await
    {
        kube.delete(std::slice::from_ref(&name)).await;
        return Err(format!("cannot make the Job: {e}"));
    }
    Ok(name)
}

/// Prints a pod's result line and keeps it in the work directory.
fn keep(work: &WorkDir, n: u64, line: &[u8], summary: &mut Summary) {
    if let Err(e) = results::write_line(&work.results(), n, line) {
        warn(BIN, &e);
    }
    summary.show(line);
}

/// Prints result lines as the tasks in `waiting` end, until none is left
/// or a signal comes (then the Jobs are deleted).
async fn follow(
    kube: &Kube,
    tasks: &TasksFile,
    work: &WorkDir,
    mut waiting: BTreeSet<u64>,
    covered: BTreeMap<u64, (String, u64)>,
    mut summary: Summary,
) -> ExitStatus {
    let mut stops = Stops::listen();
    let mut misses: BTreeMap<u64, u32> = BTreeMap::new();
    let mut gone: BTreeMap<String, u32> = BTreeMap::new();
    let mut stopped: Option<i32> = None;
    while !waiting.is_empty() {
        let mut views: BTreeMap<String, JobView> = BTreeMap::new();
        for (job, indexes) in by_job(&waiting, &covered) {
            match kube.look(job, &indexes).await {
                Ok(Some(v)) => {
                    gone.remove(job);
                    views.insert(job.clone(), v);
                }
                // Deleted by someone else: its pods and their logs with it.
                Ok(None) => {
                    let m = gone.entry(job.clone()).or_default();
                    *m += 1;
                    if *m >= MISSES {
                        views.insert(job.clone(), JobView::deleted());
                    }
                }
                Err(e) => warn(BIN, &format!("{e}; trying again")),
            }
        }
        let mut ended: Vec<u64> = Vec::new();
        for n in waiting.iter().copied() {
            let Some((job, index)) = covered.get(&n) else {
                continue;
            };
            let Some(view) = views.get(job) else {
                continue;
            };
            match kube.settle(view, job, *index, n).await {
                Settled::Pending => {}
                Settled::Result(line) => {
                    keep(work, n, &line, &mut summary);
                    ended.push(n);
                }
                Settled::Retry(why) => {
                    let m = misses.entry(n).or_default();
                    *m += 1;
                    if *m >= MISSES {
                        let r = results::ended(tasks, n, "failed", "LogUnavailable", why);
                        let line = results::line(&FanoutRecord::Result(Box::new(r)));
                        summary.show(&line);
                        ended.push(n);
                    }
                }
                Settled::Ended {
                    outcome,
                    state,
                    error,
                } => {
                    // Not kept in the work directory: --resume runs it again.
                    let r = results::ended(tasks, n, outcome, &state, error);
                    let line = results::line(&FanoutRecord::Result(Box::new(r)));
                    summary.show(&line);
                    ended.push(n);
                }
            }
        }
        for n in ended {
            waiting.remove(&n);
        }
        if waiting.is_empty() {
            break;
        }
        stopped = stops.pause(POLL).await;
        if stopped.is_some() {
            break;
        }
    }
    if stopped.is_some() {
        // Results of indexes that ended since the last look are read now,
        // before the Jobs are deleted with their pods' logs: the
        // interrupted run's output has every task that ended. An
        // unreachable cluster, or a second Ctrl-C, does not hold up the
        // ending for long: what was kept by then stays kept.
        let collect = collect_ended(kube, work, &mut waiting, &covered, &mut summary);
        tokio::select! {
            biased;
            _ = stops.next() => {}
            _ = tokio::time::timeout(COLLECT_LIMIT, collect) => {}
        }
    }
    let all: Vec<String> = earlier_jobs(work).into_iter().map(|(j, _)| j).collect();
    kube.delete(&all).await;
    if let Some(sig) = stopped {
        return interrupted(
            &summary,
            sig,
            &format!(
                "jobs {} deleted. The tasks that did not end have no result line: run again with --resume to do them",
                all.join(", ")
            ),
        );
    }
    results::finish(&summary)
}

/// Each Job with its indexes that run a task of `waiting`.
fn by_job<'a>(
    waiting: &BTreeSet<u64>,
    covered: &'a BTreeMap<u64, (String, u64)>,
) -> BTreeMap<&'a String, Vec<u64>> {
    let mut jobs: BTreeMap<&String, Vec<u64>> = BTreeMap::new();
    for n in waiting {
        if let Some((j, i)) = covered.get(n) {
            jobs.entry(j).or_default().push(*i);
        }
    }
    jobs
}

/// Keeps and prints the result line of each task of `waiting` whose pod
/// has printed one, and takes it out of `waiting`; the others are left
/// as they are.
async fn collect_ended(
    kube: &Kube,
    work: &WorkDir,
    waiting: &mut BTreeSet<u64>,
    covered: &BTreeMap<u64, (String, u64)>,
    summary: &mut Summary,
) {
    for (job, indexes) in by_job(waiting, covered) {
        let Ok(Some(view)) = kube.look(job, &indexes).await else {
            continue;
        };
        for (n, (j, index)) in covered {
            if j != job || !waiting.contains(n) {
                continue;
            }
            if let Settled::Result(line) = kube.settle(&view, job, *index, *n).await {
                keep(work, *n, &line, summary);
                waiting.remove(n);
            }
        }
    }
}

/// Where one task stands.
enum Settled {
    /// Its index has not ended.
    Pending,
    /// Its pod's result line.
    Result(Vec<u8>),
    /// Ended without a result line.
    Ended {
        /// `killed` (Kubernetes ended it) or `failed` (it ended by itself).
        outcome: &'static str,
        /// Kubernetes' reason.
        state: String,
        /// What happened, for the result's `error`.
        error: String,
    },
    /// Ended, but its log could not be read this time.
    Retry(String),
}

/// One pod of a Job, as far as ag-fanout cares.
#[derive(Debug, Clone)]
struct Pod {
    name: String,
    phase: String,
    /// Kubernetes' word for how it ended, where it gives one.
    reason: Option<String>,
    message: Option<String>,
    exit: Option<i64>,
    created: String,
}

impl Pod {
    fn from_json(v: &Value) -> Option<(u64, Pod)> {
        let meta = &v["metadata"];
        let key = "batch.kubernetes.io/job-completion-index";
        let index = meta["annotations"][key]
            .as_str()
            .or_else(|| meta["labels"][key].as_str())?
            .parse()
            .ok()?;
        let status = &v["status"];
        let text = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_string);
        let terminated = status["containerStatuses"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["name"] == CONTAINER))
            .map(|c| &c["state"]["terminated"]);
        let disruption = status["conditions"].as_array().and_then(|c| {
            c.iter()
                .find(|c| c["type"] == "DisruptionTarget" && c["status"] == "True")
        });
        // The pod's own reason (DeadlineExceeded, Evicted) first, then why
        // it was disrupted (preemption, a drained node), then how its
        // container ended (OOMKilled, Error).
        let reason = text(&status["reason"])
            .or_else(|| disruption.and_then(|d| text(&d["reason"])))
            .or_else(|| terminated.and_then(|t| text(&t["reason"])));
        let message = text(&status["message"])
            .or_else(|| disruption.and_then(|d| text(&d["message"])))
            .or_else(|| terminated.and_then(|t| text(&t["message"])));
        Some((
            index,
            Pod {
                name: text(&meta["name"])?,
                phase: text(&status["phase"]).unwrap_or_else(|| "Unknown".into()),
                reason,
                message,
                exit: terminated.and_then(|t| t["exitCode"].as_i64()),
                created: text(&meta["creationTimestamp"]).unwrap_or_default(),
            },
        ))
    }

    fn terminal(&self) -> bool {
        self.phase == "Succeeded" || self.phase == "Failed"
    }
}

/// A Job's state: which indexes ended, and its pods by index.
#[derive(Debug, Default)]
struct JobView {
    /// Why the whole Job ended (`Complete`, or a Failed condition's
    /// reason), if it did.
    ended: Option<String>,
    completed: BTreeSet<u64>,
    failed: BTreeSet<u64>,
    pods: BTreeMap<u64, Vec<Pod>>,
}

impl JobView {
    /// A Job that is no longer there.
    fn deleted() -> JobView {
        JobView {
            ended: Some("JobDeleted".into()),
            ..JobView::default()
        }
    }

    /// Whether index `i` will run no more.
    fn index_ended(&self, i: u64) -> bool {
        self.completed.contains(&i) || self.failed.contains(&i) || self.ended.is_some()
    }

    fn from_json(job: &Value, pods: &Value) -> JobView {
        let status = &job["status"];
        let conditions = status["conditions"].as_array().cloned().unwrap_or_default();
        let ended = conditions
            .iter()
            .filter(|c| c["status"] == "True")
            .find_map(|c| match c["type"].as_str() {
                Some("Complete") => Some("Complete".to_string()),
                Some("Failed") => Some(c["reason"].as_str().unwrap_or("Failed").to_string()),
                _ => None,
            });
        let set = |key: &str| work_dir::parse_ranges(status[key].as_str().unwrap_or(""));
        let mut by_index: BTreeMap<u64, Vec<Pod>> = BTreeMap::new();
        for item in pods["items"].as_array().into_iter().flatten() {
            if let Some((i, pod)) = Pod::from_json(item) {
                by_index.entry(i).or_default().push(pod);
            }
        }
        for list in by_index.values_mut() {
            list.sort_by(|a, b| a.created.cmp(&b.created));
        }
        JobView {
            ended,
            completed: set("completedIndexes"),
            failed: set("failedIndexes"),
            pods: by_index,
        }
    }
}

/// kubectl, in the run's namespace.
struct Kube {
    namespace: Option<String>,
}

impl Kube {
    /// Runs kubectl; its stdout, or what went wrong. `Err` starting with
    /// `NotFound` when the object is not there.
    async fn run(&self, args: &[&str], stdin: Option<Vec<u8>>) -> Result<String, String> {
        let mut all: Vec<OsString> = Vec::new();
        if let Some(ns) = &self.namespace {
            all.extend(["--namespace".into(), ns.into()]);
        }
        all.extend(args.iter().map(OsString::from));
        let mut cmd = Command::new("kubectl")
            .args(&all)
            .timeout(Duration::from_secs(120))
            .output(Output::Separate {
                // The first bytes, all of them: JSON and logs are read whole.
                stdout: CaptureLimit::head_only(if args.first() == Some(&"get") {
                    MAX_GET
                } else {
                    MAX_LOG
                }),
                stderr: CaptureLimit::new(8192),
            });
        if let Some(bytes) = stdin {
            cmd = cmd.stdin(Input::Bytes(bytes));
        }
        let out = cmd
            .collect(&CancellationToken::new())
            .await
            .map_err(|e| match e {
                crate::proc::Error::Spawn { .. } => format!(
                    "cannot run `kubectl` ({e}): install it and make its current context the cluster's (`kubectl config current-context`)"
                ),
                other => format!("kubectl: {other}"),
            })?;
        if out.code() != 0 {
            let err = out.stderr.lossy();
            let prefix = if err.contains("(NotFound)") {
                "NotFound: "
            } else {
                ""
            };
            return Err(format!(
                "{prefix}kubectl {} failed ({}): {}",
                args.first().copied().unwrap_or(""),
                out.status,
                err.trim()
            ));
        }
        if out.stdout.truncated() {
            return Err(format!(
                "kubectl {} printed more than ag-fanout reads ({} bytes)",
                args.join(" "),
                out.stdout.head.len()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout.head).into_owned())
    }

    /// The Job `name`, and its pods when one of the `indexes` ended (a
    /// Job of thousands of pods is not listed every second for nothing);
    /// `None` when it is not there.
    async fn look(&self, name: &str, indexes: &[u64]) -> Result<Option<JobView>, String> {
        let job = match self.run(&["get", "job", name, "-o", "json"], None).await {
            Ok(text) => text,
            Err(e) if e.starts_with("NotFound") => return Ok(None),
            Err(e) => return Err(e),
        };
        let parse = |text: &str| -> Result<Value, String> {
            serde_json::from_str(text).map_err(|e| format!("kubectl get printed no JSON: {e}"))
        };
        let job = parse(&job)?;
        let mut view = JobView::from_json(&job, &Value::Null);
        if indexes.iter().any(|i| view.index_ended(*i)) {
            let selector = format!("job-name={name}");
            let pods = self
                .run(&["get", "pods", "-l", &selector, "-o", "json"], None)
                .await?;
            view = JobView::from_json(&job, &parse(&pods)?);
        }
        Ok(Some(view))
    }

    /// Where the task of line `n`, index `index` of `job`, stands.
    async fn settle(&self, view: &JobView, job: &str, index: u64, n: u64) -> Settled {
        if !view.index_ended(index) {
            return Settled::Pending;
        }
        let pods = view.pods.get(&index).map(Vec::as_slice).unwrap_or(&[]);
        let Some(pod) = pods.iter().rev().find(|p| p.terminal()).or(pods.last()) else {
            let why = view.ended.clone().unwrap_or_else(|| "NoPod".into());
            return Settled::Ended {
                outcome: "killed",
                state: why.clone(),
                error: format!(
                    "Kubernetes ended job {job} ({why}) with no pod for index {index} (line {n})"
                ),
            };
        };
        let log = self.run(&["logs", &pod.name, "-c", CONTAINER], None).await;
        let tail = match &log {
            Ok(text) => {
                if let Some(line) = results::find_line(text, n) {
                    return Settled::Result(line);
                }
                results::output_tail(text)
            }
            // A pod that succeeded printed its result: try again.
            Err(e) if pod.phase == "Succeeded" => {
                return Settled::Retry(format!(
                    "pod {} of job {job} succeeded, but its log could not be read: {e}",
                    pod.name
                ));
            }
            Err(_) => String::new(),
        };
        let state = pod
            .reason
            .clone()
            .or_else(|| view.ended.clone().filter(|_| !pod.terminal()))
            .unwrap_or_else(|| pod.phase.clone());
        // A container that exited by itself failed before it could print
        // a result (its log says why); anything else is Kubernetes' doing.
        let outcome = if matches!(state.as_str(), "Error" | "Completed" | "Succeeded") {
            "failed"
        } else {
            "killed"
        };
        let mut error = format!(
            "Kubernetes ended pod {} (index {index} of job {job}, phase {}) with reason {state}",
            pod.name, pod.phase
        );
        if let Some(m) = &pod.message {
            error.push_str(&format!(": {m}"));
        }
        if let Some(code) = pod.exit {
            error.push_str(&format!("; its container exited with {code}"));
        }
        if !tail.is_empty() {
            error.push_str("; its log ends: ");
            error.push_str(&tail);
        }
        Settled::Ended {
            outcome,
            state,
            error,
        }
    }

    /// Deletes the Jobs `names` (their pods with them), their ConfigMaps
    /// and their Secrets; says so when it cannot.
    async fn delete(&self, names: &[String]) {
        if names.is_empty() {
            return;
        }
        let mut args: Vec<String> = vec!["delete".into()];
        for n in names {
            args.extend([
                format!("job/{n}"),
                format!("configmap/{n}"),
                format!("secret/{n}"),
            ]);
        }
        args.extend(["--ignore-not-found".into(), "--wait=false".into()]);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        if let Err(e) = self.run(&refs, None).await {
            let mut again = vec!["kubectl".to_string()];
            if let Some(ns) = &self.namespace {
                again.extend(["--namespace".into(), ns.clone()]);
            }
            again.extend(args);
            error_line(
                BIN,
                &e,
                Some(&format!("delete them yourself: {}", again.join(" "))),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_pod_says_how_kubernetes_ended_it() {
        let pod = json!({
            "metadata": {"name": "j-1-x", "creationTimestamp": "2026-01-01T00:00:00Z",
                         "annotations": {"batch.kubernetes.io/job-completion-index": "1"}},
            "status": {"phase": "Failed", "reason": "DeadlineExceeded",
                       "message": "Pod was active on the node longer than the specified deadline"}
        });
        let (i, p) = Pod::from_json(&pod).unwrap();
        assert_eq!(i, 1);
        assert_eq!(p.reason.as_deref(), Some("DeadlineExceeded"));
        let oom = json!({
            "metadata": {"name": "j-0-y", "labels": {"batch.kubernetes.io/job-completion-index": "0"}},
            "status": {"phase": "Failed", "containerStatuses": [{"name": "fanout",
                "state": {"terminated": {"reason": "OOMKilled", "exitCode": 137}}}]}
        });
        let (i, p) = Pod::from_json(&oom).unwrap();
        assert_eq!(
            (i, p.reason.as_deref(), p.exit),
            (0, Some("OOMKilled"), Some(137))
        );
    }

    #[test]
    fn a_job_view_reads_its_indexes_and_its_end() {
        let job = json!({"status": {"completedIndexes": "0-2,5", "failedIndexes": "3",
            "conditions": [{"type": "FailureTarget", "status": "True", "reason": "FailedIndexes"},
                           {"type": "Failed", "status": "True", "reason": "FailedIndexes"}]}});
        let v = JobView::from_json(&job, &json!({"items": []}));
        assert_eq!(v.completed, BTreeSet::from([0, 1, 2, 5]));
        assert_eq!(v.failed, BTreeSet::from([3]));
        assert_eq!(v.ended.as_deref(), Some("FailedIndexes"));
        let running = JobView::from_json(&json!({"status": {"active": 2}}), &json!({}));
        assert_eq!(running.ended, None);
    }
}
