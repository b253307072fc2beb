//! One background job's files, as both sides of ag-bash's job control
//! read and write them: `job.json` (the record of the job and where it is
//! in its life) and the name of its log. The tool side (`jobs.rs`)
//! starts, lists and stops jobs with them; the supervisor
//! (`supervisor.rs`) keeps them up to date while the job runs. Neither
//! side is known here.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::proc;

/// The record file in a job's directory.
pub const RECORD: &str = "job.json";
/// The log file in a job's directory.
pub const LOG: &str = "output.log";

/// Where a job is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    /// The supervisor has not started the command yet.
    Starting,
    /// The command runs.
    Running,
    /// The command ended by itself.
    Exited,
    /// It was stopped (on request, or because the session ended).
    Stopped,
    /// The command could not be started.
    Failed,
}

impl JobState {
    pub(super) fn ended(self) -> bool {
        matches!(
            self,
            JobState::Exited | JobState::Stopped | JobState::Failed
        )
    }
}

/// What `job.json` holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobRecord {
    /// The job id.
    pub id: String,
    /// The command as given.
    pub command: String,
    /// Where it runs (absolute).
    pub cwd: PathBuf,
    /// The shell that runs it with `-c`.
    pub shell: String,
    /// When it was started (RFC 3339).
    pub started: String,
    /// The same in milliseconds since the epoch.
    pub started_ms: i64,
    /// The session process whose end stops the job, if any.
    pub owner_pid: Option<u32>,
    /// The job outlives the session.
    pub keep: bool,
    /// Where it is in its life.
    pub state: JobState,
    /// The supervisor's pid (a session leader).
    #[serde(default)]
    pub supervisor_pid: Option<u32>,
    /// The command's pid, also its process group id.
    #[serde(default)]
    pub pid: Option<u32>,
    /// The command's exit code once ended (124/128+N conventions).
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// The signal that killed it, if one did.
    #[serde(default)]
    pub signal: Option<String>,
    /// When it ended, in milliseconds since the epoch.
    #[serde(default)]
    pub ended_ms: Option<i64>,
    /// Why it was stopped or failed.
    #[serde(default)]
    pub reason: Option<String>,
}

impl JobRecord {
    /// Reads a job's record.
    pub fn load(dir: &Path) -> io::Result<JobRecord> {
        let text = fs::read(dir.join(RECORD))?;
        serde_json::from_slice(&text).map_err(io::Error::other)
    }

    /// Replaces a job's record atomically.
    pub fn save(&self, dir: &Path) -> io::Result<()> {
        let tmp = dir.join(format!(".{RECORD}.{}.tmp", std::process::id()));
        let mut bytes = serde_json::to_vec_pretty(self).map_err(io::Error::other)?;
        bytes.push(b'\n');
        fs::write(&tmp, bytes)?;
        fs::rename(&tmp, dir.join(RECORD))
    }

    /// The state, with a running job whose supervisor has vanished (killed
    /// with SIGKILL, machine restarted) shown as stopped.
    pub(super) fn current(mut self, dir: &Path) -> JobRecord {
        if matches!(self.state, JobState::Running | JobState::Starting)
            && !self.supervisor_pid.is_some_and(proc::process_alive)
        {
            // The command may still run without its supervisor.
            let alive = self.pid.is_some_and(proc::foreign_group_alive);
            if !alive {
                self.state = JobState::Stopped;
                self.reason = Some("its supervisor ended unexpectedly".into());
                let _ = self.save(dir);
            }
        }
        self
    }
}

/// The time now, in milliseconds since the epoch.
pub(super) fn now_ms() -> i64 {
    jiff::Timestamp::now().as_millisecond()
}
