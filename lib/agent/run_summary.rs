//! What a run's events say of it, gathered as they go by: its outcome,
//! answer, cost and the files it changed. The `agent` tool learns its
//! child's result this way, and `--result-line` prints it.

use serde_json::{Value, json};

use crate::protocol::{AgentEvent, Message, Outcome, Usage};

/// What a run's events say of it: what a parent learns of its child,
/// and what `--result-line` prints.
#[derive(Default)]
pub struct RunSummary {
    pub(super) session_id: Option<String>,
    pub(super) outcome: Option<Outcome>,
    pub(super) error: Option<String>,
    /// Its final answer.
    pub(super) answer: String,
    /// `agent_end`'s usage (its own subagents' included), when it came.
    end_usage: Option<Usage>,
    /// The usage of its model calls, should `agent_end` never come.
    calls_usage: Usage,
    /// Files its write, edit and delete calls named, in order.
    pub(super) paths: Vec<String>,
    /// Tool calls under way: their tool and path.
    calls: Vec<(String, String, Option<String>)>,
    /// `--output-schema`'s value.
    output: Option<Value>,
}

impl RunSummary {
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
                ..
            } => {
                if let Some(i) = self.calls.iter().position(|c| &c.0 == tool_call_id) {
                    let (_, _, path) = self.calls.remove(i);
                    if let Some(p) = path.filter(|_| !is_error)
                        && !self.paths.contains(&p)
                    {
                        self.paths.push(p);
                    }
                }
            }
            AgentEvent::AgentEnd {
                messages,
                outcome,
                usage,
                error,
                output,
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

    /// The `--result-line` line.
    pub fn line(self) -> Value {
        let usage = self.usage();
        let mut line = json!({
            "type": "result",
            "outcome": self.outcome,
            "answer": self.answer,
            "changed": self.paths,
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

    pub(super) fn usage(&self) -> Usage {
        self.end_usage
            .clone()
            .unwrap_or_else(|| self.calls_usage.clone())
    }
}
