//! ag-fanout's output: one result line per task of a tasks file, then one
//! summary line. ag-serve's `--fanout` view reads the same lines.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One line of ag-fanout's stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FanoutRecord {
    /// How one task ended.
    Result(Box<FanoutResult>),
    /// The counts over every task's last result.
    Summary(FanoutSummary),
}

/// How one task of a tasks file ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FanoutResult {
    /// The task's `id`, or its line number when it has none (or is no task).
    pub id: String,
    /// Its line in the tasks file, from 1.
    pub line: u64,
    /// The directory ag-loop worked in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
    /// The task's `model`, when it names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// ag-loop's outcome (`finished`, `turn_limit`, `cost_limit`,
    /// `model_error`, `check_failed`, ...) or ag-fanout's own when there was
    /// no run to the end: `invalid_task`, `no_directory`, `clone_failed`,
    /// `failed` (ag-loop ended without saying how), `killed` (the engine
    /// ended the task: `engine_state` says how).
    pub outcome: String,
    /// ag-loop's exit status (128+N when a signal ended it); null without a run.
    pub exit: Option<i32>,
    /// The session made for the task before ag-loop started.
    pub session: Option<String>,
    /// The run's cost in dollars.
    pub cost: f64,
    /// The run's tokens, when ag-loop said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<FanoutUsage>,
    /// What the task changed, as `git diff --binary`; null without a run.
    pub diff: Option<String>,
    /// The diff was cut at `FANOUT_MAX_DIFF` bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff_truncated: Option<bool>,
    /// Wall time of the task.
    pub seconds: f64,
    /// Why the task did not finish, when something says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// With a `check`: `pass` or `fail` for the tree the task left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    /// The check's exit status; null when it timed out or could not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_exit: Option<Option<i32>>,
    /// The end of the check's output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_output: Option<String>,
    /// The engine's own word for how it ended the task (Slurm's job state,
    /// such as `TIMEOUT`, `CANCELLED`, `NODE_FAIL` or `PREEMPTED`; a
    /// Kubernetes pod's reason), with `outcome` `killed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_state: Option<String>,
}

impl FanoutResult {
    /// The result of task line `line` before anything of it ran: no
    /// session, diff or cost, with the outcome given; the callers fill in
    /// what they learn.
    pub fn not_run(line: u64, outcome: &str) -> Self {
        FanoutResult {
            id: line.to_string(),
            line,
            dir: None,
            model: None,
            outcome: outcome.into(),
            exit: None,
            session: None,
            cost: 0.0,
            usage: None,
            diff: None,
            diff_truncated: None,
            seconds: 0.0,
            error: None,
            check: None,
            check_exit: None,
            check_output: None,
            engine_state: None,
        }
    }
}

/// Tokens of a task's run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FanoutUsage {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from the provider's cache.
    pub cache_read: u64,
    /// Input tokens written to the provider's cache.
    pub cache_write: u64,
}

/// The counts over the last result of each task id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FanoutSummary {
    /// Tasks with a result.
    pub tasks: u64,
    /// Tasks by outcome.
    pub outcomes: BTreeMap<String, u64>,
    /// Their cost in dollars.
    pub cost: f64,
    /// Tasks whose outcome is not `finished`.
    pub failed: u64,
}
