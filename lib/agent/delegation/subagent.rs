//! The `agent` tool: a fresh ag-loop (`ag-loop --json`, through
//! [`crate::proc`]) on a self-contained task, whose final answer and the
//! files it changed are the call's result. The child inherits the parent's
//! model, sandbox, gates, workspace and tools, which a call or an identity
//! may narrow and never widen; its events come into the parent's stream
//! wrapped in `subagent_event`; its cost adds into the parent's; it gets
//! what is left of the parent's turns, cost and depth; an interrupt of the
//! parent stops it (SIGTERM, which ag-loop takes as an interrupt and a
//! quit, so it ends its own tools first).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use crate::proc::{CaptureLimit, Command, LineLimits};
use crate::protocol::{AgentEvent, AgentEventRecord, Outcome, ToolDefinition, ToolResult};
use crate::sandbox::{Enforcement, Mode};
use crate::tool_protocol::exec::INTERRUPTED;
use crate::tool_protocol::exec::{self, error_result};

use super::tree_budget::Tree;
use super::{Budget, Delegate, NAME};
use crate::agent::events::run_summary::RunSummary;

/// Characters of a child's stderr kept for an error.
const STDERR_KEPT: usize = 64 << 10;

/// Arguments of `agent`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentArgs {
    /// The task, complete in itself: the subagent sees nothing of this
    /// conversation.
    #[schemars(description = "")]
    pub task: String,
    /// An agent identity to run as (its model, tools and prompt).
    #[serde(default)]
    #[schemars(description = "")]
    pub agent: Option<String>,
    /// Fewer tools than yours, by name.
    #[serde(default)]
    #[schemars(description = "")]
    pub tools: Option<Vec<String>>,
    /// `worktree`: work in a git worktree and branch of its own.
    #[serde(default)]
    #[schemars(description = "")]
    pub isolation: Option<Isolation>,
}

/// Where a subagent works.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Isolation {
    /// In the parent's working directory (the default).
    None,
    /// In a git worktree of its own, on a branch `ag/agent-<id>`.
    Worktree,
}

/// The definition the model sees.
fn definition() -> ToolDefinition {
    ToolDefinition {
        name: NAME.into(),
        label: "Subagent".into(),
        description: "Hand a self-contained task to a fresh agent with your tools; you get its final answer and the files it changed. Several calls in one turn run in parallel; give each its own files, or isolation \"worktree\".".into(),
        parameters: crate::schema::parameters_schema::<AgentArgs>(),
    }
}

/// The sandbox as flags, and how strict it is.
#[derive(Debug, Clone)]
pub struct SandboxFlags {
    /// Confine, and what if the kernel cannot.
    pub enforcement: Enforcement,
    /// What confined calls may write.
    pub mode: Mode,
    /// Whether they may use the network.
    pub net: bool,
}

/// What every subagent of a run inherits, set up once.
#[derive(Clone)]
pub struct Subagents {
    /// ag-loop (this one's sibling).
    pub program: PathBuf,
    /// The parent's model, unless an identity names its own.
    pub model: String,
    /// Flags handed down as they are: the model's server, the config,
    /// gates, after-hooks, `--tool`, `--mcp`, the sandbox, the workspace.
    pub flags: Vec<String>,
    /// The parent's ag tools by name (`agent` among them): a child gets
    /// these or fewer.
    pub tools: Vec<String>,
    /// The parent's sandbox: a child's may only be stricter.
    pub sandbox: SandboxFlags,
    /// The working directory.
    pub cwd: PathBuf,
    /// Levels of subagents still allowed below this run.
    pub max_depth: u32,
    /// Subagents of this run at a time.
    pub max_agents: u32,
    /// Taken by each running child of this run.
    pub slots: Arc<Semaphore>,
    /// The tree's places and turn ledgers, shared with the agents above
    /// and below.
    pub tree: Arc<Tree>,
    /// Provider key variables (withheld from tools) that the child, an
    /// ag-loop itself, needs back.
    pub keys: Vec<(String, String)>,
}

/// A refused call, said so that the model can correct it.
fn refused(id: &str, message: String) -> ToolResult {
    error_result(id, "agent.refused", message)
}

impl Delegate for Subagents {
    fn definition(&self) -> ToolDefinition {
        definition()
    }

    fn run<'a>(
        &'a self,
        id: &'a str,
        args: &'a Value,
        budget: Budget,
        events: &'a mpsc::UnboundedSender<AgentEvent>,
        cancel: &'a CancellationToken,
    ) -> futures::future::BoxFuture<'a, ToolResult> {
        Box::pin(self.run_call(id, args, budget, events, cancel))
    }

    fn for_profile(&self, tools: &[String], model: &str) -> Arc<dyn Delegate> {
        Arc::new(Subagents {
            tools: tools.to_vec(),
            model: model.to_string(),
            ..self.clone()
        })
    }
}

impl Subagents {
    /// Runs one `agent` call to its end (or the parent's interrupt);
    /// the child's events go to `events`, wrapped.
    async fn run_call(
        &self,
        id: &str,
        args: &Value,
        budget: Budget,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> ToolResult {
        let call: AgentArgs = match serde_json::from_value(args.clone()) {
            Ok(c) => c,
            Err(e) => return refused(id, format!("invalid arguments: {e}")),
        };
        if call.task.trim().is_empty() {
            return refused(id, "`task` is empty: say what the subagent is to do".into());
        }
        let (tools, sandbox) = match self.child_tools(&call) {
            Ok(t) => t,
            Err(why) => return refused(id, why),
        };
        if budget.turns == 0 {
            return refused(
                id,
                "no turns are left of this run's --max-turns for a subagent".into(),
            );
        }
        if budget.cost.is_some_and(|c| c <= 0.0) {
            return refused(
                id,
                "nothing is left of this run's --max-cost for a subagent".into(),
            );
        }
        let permit = tokio::select! {
            p = self.slots.clone().acquire_owned() => p,
            _ = cancel.cancelled() => return exec::aborted_result(id, INTERRUPTED),
        };
        let Ok(_permit) = permit else {
            return refused(id, "subagents are closed for this run".into());
        };
        // Held until the child has ended (or died: the stream ends then).
        let Some(_slot) = self.tree.slot(cancel).await else {
            if cancel.is_cancelled() {
                return exec::aborted_result(id, INTERRUPTED);
            }
            return refused(
                id,
                format!(
                    "all {} places of this tree of agents (--max-agents, counted across the agents above and beside this one) are taken; do the task yourself, or call `agent` again once a subagent has ended",
                    self.tree.slots()
                ),
            );
        };
        let remote = self.flags.iter().any(|f| f == "--workspace");
        let mut place = match call.isolation {
            Some(Isolation::Worktree) if remote => {
                return refused(
                    id,
                    "isolation \"worktree\" works on this machine's repository, and this run's tools work in another workspace (--workspace); leave isolation out".into(),
                );
            }
            Some(Isolation::Worktree) => {
                match crate::session::worktrees::add(&self.cwd, id).await {
                    Ok(w) => Place::Worktree(w),
                    Err(why) => return refused(id, why),
                }
            }
            _ => Place::Here(self.cwd.clone()),
        };
        let mut cmd = Command::new(&self.program)
            .arg("--json")
            .args(&self.flags)
            .args(["--tools", &tools.join(",")])
            .args(sandbox.flags())
            .args(["--max-turns", &budget.turns.to_string()])
            .args(["--max-depth", &self.max_depth.saturating_sub(1).to_string()])
            .args(["--max-agents", &self.max_agents.to_string()])
            .arg("--cwd")
            .arg(place.dir());
        cmd = match &call.agent {
            Some(name) => cmd.args(["--agent", name]),
            None => cmd.args(["-m", &self.model]),
        };
        if let Some(c) = budget.cost {
            cmd = cmd.args(["--max-cost", &format!("{c}")]);
        }
        for (k, v) in &self.keys {
            cmd = cmd.env(k, v);
        }
        for (k, v) in self.tree.child_env() {
            cmd = cmd.env(k, v);
        }
        cmd = cmd.env(PARENT_ENV, std::process::id().to_string());
        let cmd = cmd.arg("--").arg(&call.task).cwd(place.dir());
        let limits = LineLimits {
            max_line: 16 << 20,
            max_total: None,
            stderr: CaptureLimit::new(STDERR_KEPT),
        };
        let mut stream = match cmd.stream_lines(limits, cancel) {
            Ok(s) => s,
            Err(e) => {
                place.remove().await;
                return error_result(
                    id,
                    exec::SPAWN,
                    format!("cannot start {}: {e}", self.program.display()),
                );
            }
        };
        let mut seen = RunSummary::in_dir(place.dir());
        while let Some(line) = stream.lines.next().await {
            let Ok(bytes) = line else { continue };
            let Ok(record) = serde_json::from_slice::<AgentEventRecord>(&bytes) else {
                continue;
            };
            seen.note(&record.event);
            let _ = events.send(AgentEvent::SubagentEvent {
                tool_call_id: id.to_string(),
                event: Box::new(record),
            });
        }
        let ended = stream.running.wait().await;
        let stderr = match &ended {
            Ok(o) => o.stderr.lossy().trim().to_string(),
            Err(e) => e.to_string(),
        };
        // Its calls' paths and what its checkpoints saw change (see
        // run_summary.rs).
        let mut changed = seen.paths.clone();
        let mut details = json!({
            "session_id": seen.session_id,
            "outcome": seen.outcome,
            "usage": seen.usage(),
            "changed": changed,
        });
        let mut branch_note = String::new();
        if let Place::Worktree(w) = &mut place {
            match w.finish().await {
                Ok(Some(done)) => {
                    details["branch"] = json!(done.branch);
                    details["diff_stat"] = json!(done.diff_stat);
                    details["changed"] = json!(done.files);
                    changed = done.files;
                    branch_note = format!(
                        "\nIts work is committed on the branch `{}` (merge it with `git merge {}`):\n{}",
                        done.branch, done.branch, done.diff_stat
                    );
                }
                Ok(None) => {
                    branch_note = "\nIt changed nothing in its worktree.".into();
                }
                Err(why) => {
                    branch_note = format!("\nIts worktree could not be committed: {why}");
                }
            }
        }
        let outcome = seen.outcome.unwrap_or(if cancel.is_cancelled() {
            Outcome::Interrupted
        } else {
            Outcome::ModelError
        });
        let word = serde_json::to_value(outcome)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        details["outcome"] = json!(word);
        let mut files = if changed.is_empty() {
            "none".to_string()
        } else {
            changed.join(", ")
        };
        if seen.more > 0 && branch_note.is_empty() {
            files.push_str(&format!(" and {} more", seen.more));
            details["more"] = json!(seen.more);
        }
        let mut output = format!(
            "The subagent ended: {word}, ${:.4}, session {}.\nFiles it changed: {files}{branch_note}",
            seen.usage().cost.total,
            seen.session_id.as_deref().unwrap_or("(none)"),
        );
        if let Some(e) = &seen.error {
            output.push_str(&format!("\nWhy it stopped: {e}"));
        }
        if seen.outcome.is_none() && !stderr.is_empty() {
            let tail: Vec<&str> = stderr.lines().rev().take(12).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            output.push_str(&format!("\nIts stderr:\n{}", tail.join("\n")));
        }
        output.push_str(&format!("\nIts answer:\n{}", seen.answer));
        ToolResult {
            id: Some(id.to_string()),
            output,
            details,
            // As ag-loop's exit status has it: a child stopped for repeating
            // a call that had succeeded kept its work.
            is_error: !(outcome == Outcome::Finished
                || (outcome == Outcome::RepeatedCall && (!seen.paths.is_empty() || seen.more > 0))),
            error_code: (outcome == Outcome::Interrupted).then(|| exec::ABORTED.to_string()),
            images: Vec::new(),
        }
    }

    /// The tools the child gets: the call's, else its identity's, else
    /// the parent's; a tool the parent lacks is refused, and `agent` is
    /// left out where the depth runs out. And its sandbox: the parent's,
    /// made stricter where its identity asks (never looser: refused).
    fn child_tools(&self, call: &AgentArgs) -> Result<(Vec<String>, SandboxFlags), String> {
        let mut wanted = self.tools.clone();
        let mut sandbox = self.sandbox.clone();
        if let Some(name) = &call.agent {
            let ident = crate::agent::config::identity::load(&self.cwd, name).map_err(|e| {
                format!("no agent identity `{name}` to run as: {e}; call `agent` without `agent`, or with one that `ag-loop --list-agents` lists")
            })?;
            if let Some(list) = &ident.tools {
                let list =
                    crate::agent::config::named_sets::expand(list, &super::cli_agents::installed());
                self.narrower("the identity", name, &list)?;
                wanted = list;
            }
            sandbox = self.stricter(name, &ident)?;
        }
        if let Some(list) = &call.tools {
            if list.is_empty() {
                return Err("`tools` is empty: leave it out to give the subagent your tools, or name some of them".into());
            }
            let list =
                crate::agent::config::named_sets::expand(list, &super::cli_agents::installed());
            self.narrower("the call", "", &list)?;
            wanted.retain(|t| list.contains(t));
        }
        if self.max_depth <= 1 {
            wanted.retain(|t| t != NAME);
        }
        Ok((wanted, sandbox))
    }

    /// Refuses a tool list that names a tool this run does not have.
    fn narrower(&self, whose: &str, name: &str, list: &[String]) -> Result<(), String> {
        let wider: Vec<&str> = list
            .iter()
            .filter(|t| !self.tools.contains(t))
            .map(String::as_str)
            .collect();
        if wider.is_empty() {
            return Ok(());
        }
        let whose = if name.is_empty() {
            whose.to_string()
        } else {
            format!("{whose} `{name}`")
        };
        Err(format!(
            "refused: {whose} asks for tools this agent does not have ({}); a subagent gets your tools or fewer: {}",
            wider.join(", "),
            self.tools.join(", ")
        ))
    }

    /// The child's sandbox under the identity `name`: stricter where it
    /// asks; refused where it asks for looser than this run's.
    fn stricter(
        &self,
        name: &str,
        ident: &crate::agent::config::identity::Identity,
    ) -> Result<SandboxFlags, String> {
        let looser = |what: String| {
            Err(format!(
                "refused: the identity `{name}` asks for a looser sandbox than this agent's ({what}); a subagent's sandbox may only be stricter"
            ))
        };
        let rank = |e: Enforcement| match e {
            Enforcement::Off => 0,
            Enforcement::Auto => 1,
            Enforcement::Require => 2,
        };
        let word = |v: &str| Value::String(v.to_ascii_lowercase().replace('_', "-"));
        let mut out = self.sandbox.clone();
        if let Some(v) = &ident.sandbox
            && let Ok(e) = serde_json::from_value::<Enforcement>(word(v))
        {
            if rank(e) < rank(self.sandbox.enforcement) {
                return looser(format!("sandbox: {v}"));
            }
            out.enforcement = e;
        }
        if let Some(v) = &ident.sandbox_mode
            && let Ok(m) = serde_json::from_value::<Mode>(word(v))
        {
            if m == Mode::WorkspaceWrite && self.sandbox.mode == Mode::ReadOnly {
                return looser(format!("sandbox_mode: {v}"));
            }
            out.mode = m;
        }
        if let Some(v) = &ident.allow_net {
            match v.to_ascii_lowercase().as_str() {
                "true" | "yes" | "on" if !self.sandbox.net => {
                    return looser(format!("allow_net: {v}"));
                }
                "false" | "no" | "off" => out.net = false,
                _ => {}
            }
        }
        Ok(out)
    }
}

impl SandboxFlags {
    /// As ag-loop's flags, which win over anything the child's identity
    /// or config file says.
    fn flags(&self) -> Vec<String> {
        let word = |v: Value| v.as_str().map(str::to_string).unwrap_or_default();
        let mut out = vec![
            "--sandbox".to_string(),
            word(serde_json::to_value(self.enforcement).unwrap_or_default()),
            "--sandbox-mode".to_string(),
            word(serde_json::to_value(self.mode).unwrap_or_default()),
        ];
        if self.net {
            out.push("--allow-net".into());
        }
        out
    }
}

/// Where a child works.
enum Place {
    /// The parent's directory.
    Here(PathBuf),
    /// A worktree of its own.
    Worktree(crate::session::worktrees::Worktree),
}

impl Place {
    fn dir(&self) -> &Path {
        match self {
            Place::Here(d) => d,
            Place::Worktree(w) => &w.dir,
        }
    }

    async fn remove(&mut self) {
        if let Place::Worktree(w) = self {
            let _ = w.finish().await;
        }
    }
}

/// This ag-loop's own executable, so that a child is the same version.
pub(in crate::agent) fn sibling_loop() -> PathBuf {
    std::env::current_exe()
        .ok()
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("ag-loop"))
}

/// Set in a subagent's environment to its parent's pid (see
/// `run::control::watch_parent`).
pub const PARENT_ENV: &str = "AG_SUBAGENT_OF";
