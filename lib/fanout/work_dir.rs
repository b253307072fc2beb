//! The run's directory of the cluster engines (Slurm, Kubernetes): the
//! tasks file's hash, the jobs submitted, and `results/` (one `N.json` per
//! line, whole or absent). What `--resume` goes on from, so that a run
//! interrupted, cancelled or killed outright loses no result.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::BIN;
use super::parallel::shell_quote;
use super::results::{self, Summary};
use super::tasks_file::TasksFile;
use crate::cli::{ExitStatus, error_line};

/// The work directory's files.
pub struct WorkDir {
    /// Its absolute path.
    pub root: PathBuf,
}

/// A run made ready: its work directory, the results already there
/// (printed and counted) and the tasks still without one.
pub struct Prepared {
    /// The work directory.
    pub work: WorkDir,
    /// The results already there, counted.
    pub summary: Summary,
    /// The line numbers of the tasks that have no result yet.
    pub waiting: BTreeSet<u64>,
}

impl WorkDir {
    /// `results/`: one `N.json` per task that has its result.
    pub fn results(&self) -> PathBuf {
        self.root.join("results")
    }
    /// `jobs`: what was submitted, one job a line.
    pub fn jobs(&self) -> PathBuf {
        self.root.join("jobs")
    }
    fn tasks_hash(&self) -> PathBuf {
        self.root.join("tasks.hash")
    }

    /// The lines of `jobs`: the jobs submitted so far.
    pub fn job_lines(&self) -> Vec<String> {
        std::fs::read_to_string(self.jobs())
            .unwrap_or_default()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect()
    }

    /// Adds a line to `jobs`, whole.
    pub fn add_job_line(&self, line: &str) -> Result<(), String> {
        let mut lines = self.job_lines();
        lines.push(line.to_string());
        crate::fsutil::write_atomic(
            &self.jobs(),
            None,
            (lines.join("\n") + "\n").as_bytes(),
            || Ok(true),
        )
        .map_err(|e| format!("cannot write `{}`: {e}", self.jobs().display()))
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
pub fn with_resume(call: &[String]) -> String {
    let mut words: Vec<String> = call.iter().map(|w| shell_quote(w)).collect();
    if words.is_empty() {
        words.push(BIN.to_string());
    }
    words.insert(1, "--resume".to_string());
    words.join(" ")
}

/// Makes the work directory ready for a run of `tasks`: a new run is
/// refused where an earlier one is, `--resume` where there is none or the
/// tasks file changed since. The results already there are printed.
pub fn prepare(
    tasks: &TasksFile,
    dir: &Path,
    resume: bool,
    call: &[String],
) -> Result<Prepared, ExitStatus> {
    let work = WorkDir {
        root: std::path::absolute(dir).map_err(|e| {
            error_line(
                BIN,
                &format!("cannot resolve `{}`: {e}", dir.display()),
                None,
            );
            ExitStatus::Input
        })?,
    };
    let hash = crate::fsutil::content_hash(&tasks.lines.concat());
    if resume {
        match std::fs::read_to_string(work.tasks_hash()) {
            Ok(h) if h.trim() == hash => {}
            Ok(_) => {
                return Err(refuse(
                    &format!(
                        "`{}` changed since the run in `{}` began: line numbers name the tasks there",
                        tasks.path.display(),
                        work.root.display()
                    ),
                    "put the tasks file back as it was, or start a new run with another --work-dir",
                ));
            }
            Err(_) => {
                let mut call = call.to_vec();
                call.retain(|w| w != "--resume");
                return Err(refuse(
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
                ));
            }
        }
    } else if work.used() {
        return Err(refuse(
            &format!(
                "`{}` holds an earlier run of these tasks",
                work.root.display()
            ),
            &format!(
                "go on with it: {}; or remove `{}` to start again",
                with_resume(call),
                work.root.display()
            ),
        ));
    }
    if let Err(e) = std::fs::create_dir_all(work.results()) {
        error_line(
            BIN,
            &format!("cannot make `{}`: {e}", work.results().display()),
            None,
        );
        return Err(ExitStatus::Input);
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
        return Err(ExitStatus::Input);
    }
    let mut summary = Summary::default();
    let mut waiting = BTreeSet::new();
    for n in tasks.task_numbers() {
        match results::read(&work.results(), n) {
            // The resumed run's stdout holds every task's result.
            Some(line) => {
                summary.show(&line);
            }
            None => {
                waiting.insert(n);
            }
        }
    }
    Ok(Prepared {
        work,
        summary,
        waiting,
    })
}

/// A set of numbers as runs: `1-8,10,12-20` (Slurm's array list, and
/// Kubernetes' completed and failed indexes).
pub fn ranges(numbers: &BTreeSet<u64>) -> String {
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

/// The numbers of a list of runs (`1-3,5`); what is not a number or a run
/// is left out.
pub fn parse_ranges(text: &str) -> BTreeSet<u64> {
    let mut set = BTreeSet::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(a), Ok(b)) = (a.trim().parse::<u64>(), b.trim().parse::<u64>()) {
            // Bounded: a corrupt list must not take all memory.
            set.extend(a..=b.min(a + 1_000_000));
        }
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_join_runs_and_parse_back() {
        let set: BTreeSet<u64> = [1, 2, 3, 5, 7, 8, 10].into_iter().collect();
        assert_eq!(ranges(&set), "1-3,5,7-8,10");
        assert_eq!(ranges(&BTreeSet::from([4])), "4");
        assert_eq!(parse_ranges("1-3,5,7-8,10"), set);
        assert_eq!(parse_ranges(""), BTreeSet::new());
        assert_eq!(parse_ranges("0,x,2-1"), BTreeSet::from([0]));
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
