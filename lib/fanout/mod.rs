//! `ag-fanout`: many ag-loop sessions from a tasks file. This room owns the
//! tasks-file format (`tasks_file.rs`), what one task does (`one_task.rs`: one
//! ag-loop session in its directory, its diff through `snapshot.rs`, one
//! result line), the result lines and the summary (`results.rs`), and the
//! engines that run the tasks: GNU parallel (`parallel.rs`), a Slurm
//! job array (`slurm.rs`) and a Kubernetes Indexed Job (`kubernetes.rs`,
//! its manifest in `kube_manifest.rs`). Every engine stops on the same
//! signals the same way (`stops.rs`). The cluster engines keep their run
//! in a work directory (`work_dir.rs`) for `--resume`. Each engine runs
//! `ag-fanout --task N TASKS` for each task line; only the scheduling is
//! theirs.

pub mod cli;
mod kube_manifest;
mod kubernetes;
mod one_task;
mod parallel;
mod results;
mod slurm;
mod snapshot;
mod stops;
mod tasks_file;
mod work_dir;

pub use cli::{Args, main};

/// The binary's name in diagnostics.
const BIN: &str = "ag-fanout";
