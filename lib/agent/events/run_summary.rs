//! What a run's events say of it, gathered as they go by: its outcome,
//! answer, cost and the files it changed. The `agent` tool learns its
//! child's result this way, and `--result-line` prints it.
//!
//! The files it changed: the paths of its write, edit and delete calls and
//! of its patches, and what its checkpoints saw change between the first
//! (the tree before its first turn that could change files) and the last
//! (the tree it left), which is where files that `bash` changed show, in
//! git or not (a shadow repository). Without checkpoints
//! (`--no-checkpoints`, no session) only the calls' paths are known; and
//! the checkpoints see the whole tree, so subagents running at once in one
//! directory may find each other's files in their lists.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::protocol::{AgentEvent, Message, Outcome, Usage, Work};

/// What a run's events say of it: what a parent learns of its child,
/// and what `--result-line` prints.
#[derive(Default)]
pub struct RunSummary {
    pub(in crate::agent) session_id: Option<String>,
    pub(in crate::agent) outcome: Option<Outcome>,
    pub(in crate::agent) error: Option<String>,
    /// Its final answer.
    pub(in crate::agent) answer: String,
    /// `agent_end`'s usage (its own subagents' included), when it came.
    end_usage: Option<Usage>,
    /// The usage of its model calls, should `agent_end` never come.
    calls_usage: Usage,
    /// Files it changed, in the order they were seen (see the module's
    /// doc): relative to `cwd` when they are beneath it.
    pub(in crate::agent) paths: Vec<String>,
    /// Changed files its checkpoints left out of their lists.
    pub(in crate::agent) more: u64,
    /// Checkpoints seen so far.
    checkpoints: u32,
    /// The run's working directory, when known.
    cwd: Option<PathBuf>,
    /// Tool calls under way: their tool and path.
    calls: Vec<(String, String, Option<String>)>,
    /// `--output-schema`'s value.
    output: Option<Value>,
    /// Tool calls ended, and of those the failed ones.
    ended_calls: u32,
    failed_calls: u32,
}

impl RunSummary {
    /// A summary of a run in `cwd`, to which the paths are made relative.
    pub fn in_dir(cwd: &Path) -> RunSummary {
        RunSummary {
            cwd: Some(cwd.to_path_buf()),
            ..RunSummary::default()
        }
    }

    /// A new summary for the next prompt, in the same directory.
    pub fn fresh(&self) -> RunSummary {
        RunSummary {
            cwd: self.cwd.clone(),
            ..RunSummary::default()
        }
    }

    fn add_path(&mut self, path: &Path) {
        let shown = match &self.cwd {
            Some(cwd) => {
                let abs = cwd.join(path);
                abs.strip_prefix(cwd).unwrap_or(&abs).display().to_string()
            }
            None => path.display().to_string(),
        };
        if !self.paths.contains(&shown) {
            self.paths.push(shown);
        }
    }

    /// Takes one event of the run.
    pub fn note(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::AgentStart { session_id, .. } if self.session_id.is_none() => {
                self.session_id.clone_from(session_id);
            }
            AgentEvent::MessageEnd {
                message: Message::Assistant(a),
            } => {
                self.calls_usage.add(&a.usage);
            }
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                arguments,
            } => {
                let path = matches!(tool_name.as_str(), "write" | "edit" | "delete")
                    .then(|| {
                        ["file_path", "path"]
                            .iter()
                            .find_map(|k| arguments.get(*k).and_then(Value::as_str))
                    })
                    .flatten()
                    .map(str::to_string);
                self.calls
                    .push((tool_call_id.clone(), tool_name.clone(), path));
            }
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                is_error,
                details,
                tool_name,
                ..
            } => {
                self.ended_calls += 1;
                if *is_error {
                    self.failed_calls += 1;
                }
                if let Some(i) = self.calls.iter().position(|c| &c.0 == tool_call_id) {
                    let (_, _, path) = self.calls.remove(i);
                    if let Some(p) = path.filter(|_| !is_error) {
                        self.add_path(Path::new(&p));
                    }
                }
                if tool_name == "patch" && !is_error && details["dry_run"] != true {
                    let files = details["files"].as_array().cloned().unwrap_or_default();
                    for f in files {
                        if let Some(p) = f["path"].as_str() {
                            self.add_path(Path::new(p));
                        }
                    }
                }
            }
            AgentEvent::Checkpoint {
                added,
                changed,
                deleted,
                more,
                work_tree,
                ..
            } => {
                // The first is the tree before any change: its lists say
                // what changed before the run.
                self.checkpoints += 1;
                if self.checkpoints > 1 {
                    for p in added.iter().chain(changed).chain(deleted) {
                        self.add_path(&Path::new(work_tree).join(p));
                    }
                    self.more += more;
                }
            }
            AgentEvent::AgentEnd {
                messages,
                outcome,
                usage,
                error,
                output,
                ..
            } => {
                self.output.clone_from(output);
                self.outcome = Some(*outcome);
                self.end_usage = Some(usage.clone());
                self.error.clone_from(error);
                self.answer = super::render::final_answer(messages);
            }
            _ => {}
        }
    }

    /// What the run did so far, from its events.
    pub fn work(&self) -> Work {
        Work {
            calls: self.ended_calls,
            failed_calls: self.failed_calls,
            changed: self.paths.clone(),
            more_changed: self.more,
        }
    }

    /// The `--result-line` line.
    pub fn line(self) -> Value {
        let usage = self.usage();
        let mut line = json!({
            "type": "result",
            "outcome": self.outcome,
            "answer": self.answer,
            "changed": self.paths,
            "calls": self.ended_calls,
            "failed_calls": self.failed_calls,
            "cost": usage.cost.total,
            "usage": usage,
            "session_id": self.session_id,
        });
        if let Some(e) = self.error {
            line["error"] = json!(e);
        }
        if let Some(o) = self.output {
            line["output"] = o;
        }
        line
    }

    pub(in crate::agent) fn usage(&self) -> Usage {
        self.end_usage
            .clone()
            .unwrap_or_else(|| self.calls_usage.clone())
    }
}
