//! The conversation as the TUI knows it: a pure function of the events
//! ag-loop printed ([`State::apply`]), plus the few facts the person's own
//! actions add (an approval answered, a notice from a slash command). No
//! agent logic: what is shown is what the stream said. Each entry carries a
//! revision number so that the view re-renders only entries that changed.

use std::time::Duration;

use serde_json::Value;

use crate::protocol::{AgentEvent, ContentBlock, LlmEvent, Message, Outcome, StopReason, Usage};

/// One thing shown in the conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// A prompt the agent took.
    User(String),
    /// An answer of the model, streaming or complete.
    Assistant(Answer),
    /// A tool call.
    Tool(Box<ToolCall>),
    /// A line from the loop or from the TUI itself.
    Notice(NoticeKind, String),
}

/// An assistant message: its text and thinking blocks in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    /// (stream index, block) in the order they began.
    pub blocks: Vec<(usize, Block)>,
    /// False while it streams.
    pub done: bool,
    /// The provider's error, when the call failed.
    pub error: Option<String>,
}

/// A block of an answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// Markdown text.
    Text(String),
    /// Reasoning, shown collapsed.
    Thinking(String),
}

/// A tool call's line.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The call's identifier.
    pub id: String,
    /// The tool.
    pub name: String,
    /// The arguments it ran with.
    pub arguments: Value,
    /// Where it stands.
    pub status: ToolStatus,
    /// When it started (RFC 3339), from its event.
    pub started: Option<String>,
    /// From start to end, by the events' timestamps.
    pub duration: Option<Duration>,
    /// The output as the model read it.
    pub output: String,
    /// The tool's details (a diff for edits and patches).
    pub details: Value,
    /// Shown in full rather than as one line.
    pub expanded: bool,
    /// While it runs: the last line of its latest progress update.
    pub progress: Option<String>,
}

/// Where a tool call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolStatus {
    /// Waiting for the person's approval.
    Asking,
    /// Running.
    Running,
    /// Ended well.
    Done,
    /// Ended with an error.
    Failed,
    /// Never ran: refused by a gate or the person, or interrupted first.
    Denied,
}

/// What kind of notice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    /// Plain information.
    Info,
    /// Something the person should look at.
    Warning,
    /// Something failed.
    Error,
}

/// A call waiting for the person's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Approval {
    /// The call asked about.
    pub tool_call_id: String,
    /// The tool.
    pub tool_name: String,
    /// The arguments.
    pub arguments: Value,
    /// Why the gate asks.
    pub reason: String,
    /// What answering "always" approves for the session, when ag-loop says.
    pub always: Option<String>,
}

/// A question the model asked (its `ask` tool), waiting for an answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// The `ask` call, which the answer names.
    pub tool_call_id: String,
    /// The question.
    pub question: String,
    /// The choices offered (the person may type anything else).
    pub options: Vec<String>,
    /// The choice Up and Down move to and Enter sends.
    pub selected: usize,
}

/// Everything the view needs.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// The conversation, oldest first.
    pub entries: Vec<Entry>,
    /// One per entry: bumped whenever the entry changes.
    pub revs: Vec<u64>,
    next_rev: u64,
    /// Between `agent_start` and `agent_end`.
    pub working: bool,
    /// Approval requests not answered yet, oldest first.
    pub approvals: Vec<Approval>,
    /// Questions of the model not answered yet, oldest first.
    pub questions: Vec<Question>,
    /// Tokens and cost so far.
    pub usage: Usage,
    /// Tokens the last model call read and wrote: how full the context is.
    pub context: u64,
    /// The model of the last answer, or the one a `settings` event set.
    pub model: Option<String>,
    /// The reasoning effort the last `settings` event set.
    pub reasoning: Option<crate::protocol::Reasoning>,
    /// The agent identity answering the prompt under way (or the last).
    pub agent: Option<String>,
    /// The index of the answer streaming now.
    streaming: Option<usize>,
    /// Checkpoints recorded (the raw events), for `/rewind`.
    pub checkpoints: Vec<Value>,
    /// The session an `agent_start` named, until the app takes it.
    pub started_session: Option<String>,
    /// The model a `settings` event switched to, until the app takes it.
    pub switched_model: Option<String>,
}

impl State {
    /// Takes one event line of ag-loop's stdout. A line that is not an
    /// event this TUI knows is shown as a notice, never dropped silently.
    pub fn apply_line(&mut self, line: &str) {
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            let shown: String = line.chars().take(200).collect();
            self.notice(NoticeKind::Warning, format!("not an event: {shown}"));
            return;
        };
        let timestamp = value
            .get("timestamp")
            .and_then(Value::as_str)
            .map(str::to_string);
        match serde_json::from_value::<AgentEvent>(value.clone()) {
            Ok(event) => self.apply(&event, timestamp.as_deref()),
            Err(_) => self.apply_unknown(&value),
        }
    }

    /// Takes one event, with its timestamp when it had one.
    pub fn apply(&mut self, event: &AgentEvent, timestamp: Option<&str>) {
        match event {
            AgentEvent::AgentStart { session_id, agent } => {
                self.working = true;
                self.started_session.clone_from(session_id);
                self.agent.clone_from(agent);
            }
            AgentEvent::TurnStart | AgentEvent::TurnEnd { .. } => {}
            AgentEvent::MessageStart { message } => match message {
                Message::User { content, .. } => {
                    // An attached file shows as its one-line header.
                    self.push(Entry::User(crate::attach::shown_text(content)));
                }
                Message::Assistant(_) => {
                    self.finish_streaming();
                    let i = self.push(Entry::Assistant(Answer::default()));
                    self.streaming = Some(i);
                }
                Message::ToolResult(_) => {}
            },
            AgentEvent::MessageUpdate { event } => self.update(event),
            AgentEvent::MessageEnd { message } => {
                if let Message::Assistant(m) = message {
                    let i = match self.streaming.take() {
                        Some(i) => i,
                        None => self.push(Entry::Assistant(Answer::default())),
                    };
                    let mut answer = Answer {
                        blocks: blocks_of(&m.content),
                        done: true,
                        error: None,
                    };
                    if matches!(m.stop_reason, StopReason::Error | StopReason::Refusal) {
                        answer.error = Some(
                            m.error_message
                                .clone()
                                .unwrap_or_else(|| "the model call failed".to_string()),
                        );
                    }
                    self.entries[i] = Entry::Assistant(answer);
                    self.touch(i);
                    self.usage.add(&m.usage);
                    let u = &m.usage;
                    let context = u.input + u.cache_read + u.cache_write + u.output;
                    if context > 0 {
                        self.context = context;
                    }
                    if m.model.is_some() {
                        self.model.clone_from(&m.model);
                    }
                }
            }
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                arguments,
            } => {
                if let Some(i) = self.tool_index(tool_call_id) {
                    if let Entry::Tool(t) = &mut self.entries[i] {
                        t.status = ToolStatus::Running;
                        t.arguments = arguments.clone();
                        t.started = timestamp.map(str::to_string);
                    }
                    self.touch(i);
                } else {
                    self.push(Entry::Tool(Box::new(ToolCall {
                        id: tool_call_id.clone(),
                        name: tool_name.clone(),
                        arguments: arguments.clone(),
                        status: ToolStatus::Running,
                        started: timestamp.map(str::to_string),
                        duration: None,
                        output: String::new(),
                        details: Value::Null,
                        expanded: false,
                        progress: None,
                    })));
                }
            }
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                output,
                details,
                is_error,
            } => {
                self.approvals.retain(|a| &a.tool_call_id != tool_call_id);
                self.questions.retain(|q| &q.tool_call_id != tool_call_id);
                let i = match self.tool_index(tool_call_id) {
                    Some(i) => i,
                    None => self.push(Entry::Tool(Box::new(ToolCall {
                        id: tool_call_id.clone(),
                        name: tool_name.clone(),
                        arguments: Value::Null,
                        status: ToolStatus::Asking,
                        started: None,
                        duration: None,
                        output: String::new(),
                        details: Value::Null,
                        expanded: false,
                        progress: None,
                    }))),
                };
                if let Entry::Tool(t) = &mut self.entries[i] {
                    // A call still asking at its end was refused, unless it
                    // succeeded: a replayed session has no event for the
                    // person's yes, only the result of the call that ran.
                    t.status = match (t.status, is_error) {
                        (ToolStatus::Asking, true) => ToolStatus::Denied,
                        (ToolStatus::Asking, false) => ToolStatus::Done,
                        (_, true) => ToolStatus::Failed,
                        (_, false) => ToolStatus::Done,
                    };
                    t.output.clone_from(output);
                    t.details = details.clone();
                    t.progress = None;
                    t.duration = match (t.started.as_deref(), timestamp) {
                        (Some(a), Some(b)) => elapsed(a, b),
                        _ => None,
                    };
                }
                self.touch(i);
            }
            AgentEvent::AgentEnd { outcome, error, .. } => {
                self.finish_streaming();
                self.working = false;
                self.approvals.clear();
                self.questions.clear();
                let why = match outcome {
                    Outcome::Finished | Outcome::Interrupted => None,
                    Outcome::TurnLimit => Some("stopped: the turn limit was reached"),
                    Outcome::CostLimit => Some("stopped: the cost limit was reached"),
                    Outcome::ModelError => Some("stopped: the model call failed"),
                    Outcome::RepeatedFailure => {
                        Some("stopped: the model kept making failing calls")
                    }
                    Outcome::RepeatedCall => {
                        Some("stopped: the model kept repeating a call that had succeeded")
                    }
                    Outcome::InvalidOutput => {
                        Some("stopped: the final answer did not match --output-schema")
                    }
                    Outcome::CheckFailed => Some("stopped: the --until check did not pass"),
                };
                if let Some(why) = why {
                    let text = match error {
                        Some(e) => format!("{why}: {e}"),
                        None => why.to_string(),
                    };
                    self.notice(NoticeKind::Warning, text);
                }
            }
            AgentEvent::Interrupted => {
                self.finish_streaming();
                self.notice(NoticeKind::Warning, "interrupted".to_string());
            }
            AgentEvent::ApprovalRequest {
                tool_call_id,
                tool_name,
                arguments,
                reason,
                always,
            } => {
                self.approvals.push(Approval {
                    tool_call_id: tool_call_id.clone(),
                    tool_name: tool_name.clone(),
                    arguments: arguments.clone(),
                    reason: reason.clone(),
                    always: always.clone(),
                });
                if let Some(i) = self.tool_index(tool_call_id) {
                    if let Entry::Tool(t) = &mut self.entries[i] {
                        t.status = ToolStatus::Asking;
                    }
                    self.touch(i);
                } else {
                    self.push(Entry::Tool(Box::new(ToolCall {
                        id: tool_call_id.clone(),
                        name: tool_name.clone(),
                        arguments: arguments.clone(),
                        status: ToolStatus::Asking,
                        started: None,
                        duration: None,
                        output: String::new(),
                        details: Value::Null,
                        expanded: false,
                        progress: None,
                    })));
                }
            }
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                output,
                ..
            } => {
                let last = output.lines().rev().find(|l| !l.trim().is_empty());
                if let (Some(i), Some(last)) = (self.tool_index(tool_call_id), last) {
                    if let Entry::Tool(t) = &mut self.entries[i]
                        && t.status == ToolStatus::Running
                    {
                        t.progress = Some(last.trim_end().to_string());
                    }
                    self.touch(i);
                }
            }
            // Subagents (issue 35): the child's latest step, under the
            // `agent` call that runs it.
            AgentEvent::SubagentEvent { tool_call_id, .. } => {
                if let (Some(i), Some(line)) =
                    (self.tool_index(tool_call_id), event.subagent_line())
                {
                    if let Entry::Tool(t) = &mut self.entries[i]
                        && t.status == ToolStatus::Running
                    {
                        t.progress = Some(format!("↳ {line}"));
                    }
                    self.touch(i);
                }
            }
            AgentEvent::Question {
                tool_call_id,
                question,
                options,
            } => {
                if !self
                    .questions
                    .iter()
                    .any(|q| &q.tool_call_id == tool_call_id)
                {
                    self.questions.push(Question {
                        tool_call_id: tool_call_id.clone(),
                        question: question.clone(),
                        options: options.clone(),
                        selected: 0,
                    });
                }
            }
            AgentEvent::Compaction {
                replaced,
                kept,
                method,
                usage,
                ..
            } => {
                self.usage.add(usage);
                self.notice(
                    NoticeKind::Info,
                    format!(
                        "context compacted ({method}): {replaced} older messages replaced, {kept} kept"
                    ),
                );
            }
            AgentEvent::Notify { message, level } => {
                let kind = match level.as_str() {
                    "info" => NoticeKind::Info,
                    _ => NoticeKind::Warning,
                };
                self.notice(kind, format!("notify: {message}"));
            }
            AgentEvent::Error { message, .. } => self.notice(NoticeKind::Error, message.clone()),
            AgentEvent::Note { message, .. } => self.notice(NoticeKind::Info, message.clone()),
            AgentEvent::Withdrawn { reason } => {
                self.notice(NoticeKind::Info, format!("withdrawn: {reason}"))
            }
            // Runs that end when a check passes (issue 35).
            AgentEvent::Check { passed, .. } => {
                let kind = if *passed {
                    NoticeKind::Info
                } else {
                    NoticeKind::Warning
                };
                self.notice(kind, event.check_summary().unwrap_or_default());
            }
            AgentEvent::Settings {
                model, reasoning, ..
            } => {
                self.model = Some(model.clone());
                self.switched_model = Some(model.clone());
                self.reasoning = *reasoning;
                let effort = reasoning
                    .and_then(|r| serde_json::to_value(r).ok())
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_else(|| "the model's default".into());
                self.notice(
                    NoticeKind::Info,
                    format!("model: {model} · reasoning: {effort}"),
                );
            }
            AgentEvent::Checkpoint { .. } => {
                if let Ok(v) = serde_json::to_value(event) {
                    self.checkpoints.push(v);
                }
            }
        }
    }

    /// Events of kinds newer than this TUI: shown by their type.
    fn apply_unknown(&mut self, value: &Value) {
        let kind = value.get("type").and_then(Value::as_str).unwrap_or("?");
        self.notice(NoticeKind::Info, format!("event `{kind}`"));
    }

    fn update(&mut self, event: &LlmEvent) {
        let (index, delta, thinking) = match event {
            LlmEvent::TextDelta { index, delta } => (*index, delta, false),
            LlmEvent::ThinkingDelta { index, delta } => (*index, delta, true),
            _ => return,
        };
        let i = match self.streaming {
            Some(i) => i,
            None => {
                let i = self.push(Entry::Assistant(Answer::default()));
                self.streaming = Some(i);
                i
            }
        };
        if let Entry::Assistant(a) = &mut self.entries[i] {
            match a.blocks.iter_mut().find(|(n, _)| *n == index) {
                Some((_, Block::Text(t) | Block::Thinking(t))) => t.push_str(delta),
                None => {
                    let block = if thinking {
                        Block::Thinking(delta.clone())
                    } else {
                        Block::Text(delta.clone())
                    };
                    a.blocks.push((index, block));
                }
            }
        }
        self.touch(i);
    }

    /// A streamed answer that will get no `message_end` (an interrupt, the
    /// end of the run) is complete as it stands.
    fn finish_streaming(&mut self) {
        if let Some(i) = self.streaming.take() {
            if let Entry::Assistant(a) = &mut self.entries[i] {
                a.done = true;
            }
            self.touch(i);
        }
    }

    /// Adds a notice (also used by the TUI's own commands).
    pub fn notice(&mut self, kind: NoticeKind, text: String) {
        self.push(Entry::Notice(kind, text));
    }

    /// The person answered an approval request: an approved call runs, a
    /// refused one stays asking until its end marks it denied.
    pub fn answered(&mut self, tool_call_id: &str, approved: bool) {
        self.approvals.retain(|a| a.tool_call_id != tool_call_id);
        if approved && let Some(i) = self.tool_index(tool_call_id) {
            if let Entry::Tool(t) = &mut self.entries[i] {
                t.status = ToolStatus::Running;
            }
            self.touch(i);
        }
    }

    /// The person answered a question: it is no longer shown.
    pub fn question_answered(&mut self, tool_call_id: &str) {
        self.questions.retain(|q| q.tool_call_id != tool_call_id);
    }

    /// Expands or collapses a tool call's entry.
    pub fn toggle(&mut self, i: usize) {
        if let Some(Entry::Tool(t)) = self.entries.get_mut(i) {
            t.expanded = !t.expanded;
            self.touch(i);
        }
    }

    /// The index of the latest tool call, for the expand key.
    pub fn last_tool(&self) -> Option<usize> {
        self.entries
            .iter()
            .rposition(|e| matches!(e, Entry::Tool(_)))
    }

    /// Forgets the conversation shown (a new session starts).
    pub fn clear(&mut self) {
        let next_rev = self.next_rev;
        *self = State::default();
        self.next_rev = next_rev;
    }

    fn tool_index(&self, id: &str) -> Option<usize> {
        self.entries
            .iter()
            .rposition(|e| matches!(e, Entry::Tool(t) if t.id == id))
    }

    fn push(&mut self, entry: Entry) -> usize {
        self.entries.push(entry);
        self.next_rev += 1;
        self.revs.push(self.next_rev);
        self.entries.len() - 1
    }

    fn touch(&mut self, i: usize) {
        self.next_rev += 1;
        if let Some(r) = self.revs.get_mut(i) {
            *r = self.next_rev;
        }
    }
}

/// The text and thinking blocks of a complete message, numbered as a
/// stream would have numbered them.
fn blocks_of(content: &[ContentBlock]) -> Vec<(usize, Block)> {
    content
        .iter()
        .enumerate()
        .filter_map(|(n, b)| match b {
            ContentBlock::Text { text } => Some((n, Block::Text(text.clone()))),
            ContentBlock::Thinking { thinking, .. } => Some((n, Block::Thinking(thinking.clone()))),
            _ => None,
        })
        .collect()
}

/// Time between two RFC 3339 timestamps, when both parse and run forward.
fn elapsed(from: &str, to: &str) -> Option<Duration> {
    let a: jiff::Timestamp = from.parse().ok()?;
    let b: jiff::Timestamp = to.parse().ok()?;
    let span = b.duration_since(a);
    Duration::try_from(span).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn feed(state: &mut State, events: &[Value]) {
        for e in events {
            state.apply_line(&e.to_string());
        }
    }

    fn at(s: u32, e: Value) -> Value {
        let mut e = e;
        e["timestamp"] = json!(format!("2026-01-01T00:00:{s:02}.500Z"));
        e
    }

    #[test]
    fn a_subagents_latest_step_shows_under_its_agent_call_and_nothing_else_is_added() {
        let mut s = State::default();
        let nested = |event: Value| {
            json!({"type": "subagent_event", "tool_call_id": "a",
                   "event": at(1, event)})
        };
        feed(
            &mut s,
            &[
                json!({"type": "tool_execution_start", "tool_call_id": "a", "tool_name": "agent", "arguments": {"task": "t"}}),
                nested(json!({"type": "turn_start"})),
                nested(
                    json!({"type": "tool_execution_start", "tool_call_id": "c1", "tool_name": "read", "arguments": {"path": "a.txt"}}),
                ),
            ],
        );
        assert_eq!(s.entries.len(), 1, "{:?}", s.entries);
        let Entry::Tool(t) = &s.entries[0] else {
            panic!("{:?}", s.entries)
        };
        assert_eq!(t.progress.as_deref(), Some(r#"↳ read {"path":"a.txt"}"#));
        // A grandchild's step shows under the same call.
        feed(
            &mut s,
            &[json!({"type": "subagent_event", "tool_call_id": "a",
                     "event": at(2, nested(json!({"type": "error", "message": "deep"})))})],
        );
        let Entry::Tool(t) = &s.entries[0] else {
            panic!("{:?}", s.entries)
        };
        assert_eq!(t.progress.as_deref(), Some("↳ deep"));
    }

    #[test]
    fn a_running_call_shows_its_latest_progress_line_until_it_ends() {
        let mut s = State::default();
        feed(
            &mut s,
            &[
                json!({"type": "tool_execution_start", "tool_call_id": "b", "tool_name": "bash", "arguments": {"command": "make"}}),
                json!({"type": "tool_execution_update", "tool_call_id": "b", "tool_name": "bash", "output": "cc a.c\ncc b.c\n\n"}),
            ],
        );
        let tool = |s: &State| match &s.entries[0] {
            Entry::Tool(t) => t.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(tool(&s).progress.as_deref(), Some("cc b.c"));
        // An update for a call not shown is no entry of its own.
        feed(
            &mut s,
            &[
                json!({"type": "tool_execution_update", "tool_call_id": "x", "tool_name": "bash", "output": "?"}),
            ],
        );
        assert_eq!(s.entries.len(), 1);
        feed(
            &mut s,
            &[
                json!({"type": "tool_execution_end", "tool_call_id": "b", "tool_name": "bash", "output": "built", "is_error": false}),
            ],
        );
        assert_eq!(tool(&s).progress, None);
    }

    #[test]
    fn a_streamed_answer_grows_by_deltas_then_takes_the_final_message() {
        let mut s = State::default();
        feed(
            &mut s,
            &[
                json!({"type": "agent_start"}),
                json!({"type": "message_start", "message": {"role": "user", "content": "hi"}}),
                json!({"type": "message_start", "message": {"role": "assistant", "content": []}}),
                json!({"type": "message_update", "event": {"type": "thinking_delta", "index": 0, "delta": "let me"}}),
                json!({"type": "message_update", "event": {"type": "text_delta", "index": 1, "delta": "Hel"}}),
                json!({"type": "message_update", "event": {"type": "text_delta", "index": 1, "delta": "lo"}}),
            ],
        );
        assert!(s.working);
        assert_eq!(s.entries[0], Entry::User("hi".into()));
        let Entry::Assistant(a) = &s.entries[1] else {
            panic!("{:?}", s.entries)
        };
        assert!(!a.done);
        assert_eq!(
            a.blocks,
            [
                (0, Block::Thinking("let me".into())),
                (1, Block::Text("Hello".into()))
            ]
        );
        let rev = s.revs[1];
        feed(
            &mut s,
            &[
                json!({"type": "message_end", "message": {"role": "assistant", "content": [{"type": "text", "text": "Hello!"}],
                    "usage": {"input": 100, "output": 7, "cost": {"total": 0.5}}, "stop_reason": "stop", "model": "p/m"}}),
                json!({"type": "agent_end", "messages": [], "outcome": "finished", "usage": {}}),
            ],
        );
        assert!(s.revs[1] > rev, "a changed entry gets a new revision");
        assert_eq!(
            s.entries[1],
            Entry::Assistant(Answer {
                blocks: vec![(0, Block::Text("Hello!".into()))],
                done: true,
                error: None
            })
        );
        assert!(!s.working);
        assert_eq!((s.usage.input, s.usage.output, s.context), (100, 7, 107));
        assert_eq!(s.model.as_deref(), Some("p/m"));
        assert_eq!(s.entries.len(), 2, "a finished run adds no notice");
    }

    #[test]
    fn tool_calls_get_status_and_duration_from_their_events() {
        let mut s = State::default();
        feed(
            &mut s,
            &[
                at(
                    1,
                    json!({"type": "tool_execution_start", "tool_call_id": "a", "tool_name": "bash", "arguments": {"command": "ls"}}),
                ),
                at(
                    1,
                    json!({"type": "tool_execution_start", "tool_call_id": "b", "tool_name": "read", "arguments": {}}),
                ),
                at(
                    3,
                    json!({"type": "tool_execution_end", "tool_call_id": "b", "tool_name": "read", "output": "no such file", "is_error": true}),
                ),
                at(
                    4,
                    json!({"type": "tool_execution_end", "tool_call_id": "a", "tool_name": "bash", "output": "x\ny", "is_error": false}),
                ),
                // Refused by a gate: an end without a start.
                at(
                    4,
                    json!({"type": "tool_execution_end", "tool_call_id": "c", "tool_name": "bash", "output": "This call was not run", "is_error": true}),
                ),
            ],
        );
        let tools: Vec<(&str, ToolStatus, Option<Duration>)> = s
            .entries
            .iter()
            .map(|e| match e {
                Entry::Tool(t) => (t.id.as_str(), t.status, t.duration),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            tools,
            [
                ("a", ToolStatus::Done, Some(Duration::from_secs(3))),
                ("b", ToolStatus::Failed, Some(Duration::from_secs(2))),
                ("c", ToolStatus::Denied, None),
            ]
        );
    }

    #[test]
    fn an_approval_request_waits_until_answered_or_ended() {
        let mut s = State::default();
        feed(
            &mut s,
            &[
                json!({"type": "agent_start"}),
                json!({"type": "approval_request", "tool_call_id": "a", "tool_name": "bash", "arguments": {"command": "rm -rf build"}, "reason": "recursive delete"}),
            ],
        );
        assert_eq!(s.approvals.len(), 1);
        assert!(matches!(&s.entries[0], Entry::Tool(t) if t.status == ToolStatus::Asking));
        s.answered("a", true);
        assert!(s.approvals.is_empty());
        feed(
            &mut s,
            &[
                json!({"type": "tool_execution_start", "tool_call_id": "a", "tool_name": "bash", "arguments": {"command": "rm -rf build"}}),
            ],
        );
        assert_eq!(s.entries.len(), 1, "the asked call's line is reused");
        assert!(matches!(&s.entries[0], Entry::Tool(t) if t.status == ToolStatus::Running));
        // Started before it was asked about, then refused: denied, not failed.
        feed(
            &mut s,
            &[
                json!({"type": "tool_execution_start", "tool_call_id": "b", "tool_name": "bash", "arguments": {}}),
                json!({"type": "approval_request", "tool_call_id": "b", "tool_name": "bash", "arguments": {}, "reason": "r"}),
            ],
        );
        s.answered("b", false);
        feed(
            &mut s,
            &[
                json!({"type": "tool_execution_end", "tool_call_id": "b", "tool_name": "bash", "output": "The user did not approve", "is_error": true}),
            ],
        );
        assert!(matches!(&s.entries[1], Entry::Tool(t) if t.status == ToolStatus::Denied));
    }

    /// A session file replayed: the yes is not in it, but a call that was
    /// asked about and then succeeded ran, and is shown done.
    #[test]
    fn a_replayed_approved_call_is_done_not_denied() {
        let mut s = State::default();
        feed(
            &mut s,
            &[
                json!({"type": "agent_start"}),
                json!({"type": "tool_execution_start", "tool_call_id": "c", "tool_name": "bash", "arguments": {"command": "rm -rf build"}}),
                json!({"type": "approval_request", "tool_call_id": "c", "tool_name": "bash", "arguments": {"command": "rm -rf build"}, "reason": "recursive delete"}),
                json!({"type": "tool_execution_end", "tool_call_id": "c", "tool_name": "bash", "output": "(no output)", "is_error": false}),
            ],
        );
        assert!(matches!(&s.entries[0], Entry::Tool(t) if t.status == ToolStatus::Done));
    }

    #[test]
    fn an_interrupt_ends_the_stream_and_says_so() {
        let mut s = State::default();
        feed(
            &mut s,
            &[
                json!({"type": "agent_start"}),
                json!({"type": "message_start", "message": {"role": "assistant", "content": []}}),
                json!({"type": "message_update", "event": {"type": "text_delta", "index": 0, "delta": "partial"}}),
                json!({"type": "interrupted"}),
                json!({"type": "agent_end", "messages": [], "outcome": "interrupted", "usage": {}}),
            ],
        );
        assert!(matches!(&s.entries[0], Entry::Assistant(a) if a.done));
        assert_eq!(
            s.entries[1],
            Entry::Notice(NoticeKind::Warning, "interrupted".into())
        );
        assert!(!s.working);
    }

    #[test]
    fn lines_it_does_not_know_are_shown_not_dropped() {
        let mut s = State::default();
        s.apply_line("garbage {");
        s.apply_line(
            r#"{"type":"checkpoint","id":"5f1c2d3e","turn":1,"added":[],"changed":["a.txt"],"deleted":[],"work_tree":"/p","git_dir":"/p/.git","timestamp":"x"}"#,
        );
        s.apply_line(r#"{"type":"something_new","timestamp":"x"}"#);
        s.apply_line(r#"{"type":"agent_end","outcome":"turn_limit","messages":[],"usage":{},"error":"100 turns"}"#);
        assert_eq!(s.checkpoints.len(), 1);
        let texts: Vec<&str> = s
            .entries
            .iter()
            .map(|e| match e {
                Entry::Notice(_, t) => t.as_str(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            texts,
            [
                "not an event: garbage {",
                "event `something_new`",
                "stopped: the turn limit was reached: 100 turns"
            ]
        );
    }
}
