//! ag-loop's events as ACP `session/update`s: text and thinking deltas
//! become message and thought chunks, each tool call a `tool_call` then
//! `tool_call_update`s (kind, locations, diff content), ag-todo's list a
//! `plan`, each turn's tokens a `usage_update`. The same translation
//! replays a session file for `session/load`, where whole messages stand
//! in for the deltas. A pure state machine over the events: no I/O.

use std::collections::HashMap;
use std::path::PathBuf;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Cost, ImageContent, Notice, NoticeSeverity, Plan, PlanEntry,
    PlanEntryPriority, PlanEntryStatus, SessionUpdate, StopReason as AcpStop, Terminal,
    TextContent, ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
    UsageUpdate,
};
use serde_json::Value;

use super::refused;
use super::tools;
use crate::protocol::{
    AgentEvent, AssistantMessage, ContentBlock as AgBlock, LlmEvent, Message, Outcome, StopReason,
    Usage, UserContent,
};

/// What the client said it can show, beyond what every client shows.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClientShows {
    /// `notice` updates (`session.notices`).
    pub notices: bool,
    /// Elicitation forms (`elicitation.form`), by which the model's
    /// questions are asked.
    pub forms: bool,
    /// `read` goes through the editor (`--editor-fs` and
    /// `fs.readTextFile`).
    pub editor_read: bool,
    /// `write` goes through the editor (`--editor-fs` and
    /// `fs.writeTextFile`).
    pub editor_write: bool,
    /// `bash` runs in the editor's terminal (`--editor-terminal` and
    /// `terminal`).
    pub editor_terminal: bool,
}

/// A tool call as far as it is known.
#[derive(Debug, Clone)]
pub struct Call {
    /// The tool.
    pub name: String,
    /// Its arguments.
    pub arguments: Value,
}

/// How a prompt ended, for its `session/prompt` answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// A stop reason.
    Stop(AcpStop),
    /// The run failed (the model call): an error answer.
    Failed(String),
}

/// Tells a model's context window (`provider/model`), when known.
pub type WindowOf = Box<dyn Fn(&str) -> Option<u64> + Send>;

/// The translation state of one session.
pub struct Translator {
    cwd: PathBuf,
    shows: ClientShows,
    /// Tool calls announced and not yet ended.
    calls: HashMap<String, Call>,
    /// Whether the assistant message under way streamed text or thinking
    /// (then its `message_end` adds nothing).
    streamed: bool,
    /// `turn_start` events so far (ag-session rewind counts them too).
    pub turns: u64,
    /// The first turn of the latest prompt.
    pub prompt_turn: Option<u64>,
    /// The session's tokens and cost so far.
    pub usage: Usage,
    /// The stop reason of the latest assistant message.
    last_stop: Option<StopReason>,
    /// The context window of a model, when known (`provider/model`).
    window: WindowOf,
    /// The editor's terminals the calls ran in (`--editor-terminal`).
    terminals: Option<super::editor_terminal::Terminals>,
}

impl Translator {
    /// A translator for a session working in `cwd`; `window` tells a
    /// model's context window (for `usage_update`), when known.
    pub fn new(cwd: PathBuf, shows: ClientShows, window: WindowOf) -> Translator {
        Translator {
            cwd,
            shows,
            calls: HashMap::new(),
            streamed: false,
            turns: 0,
            prompt_turn: None,
            usage: Usage::default(),
            last_stop: None,
            window,
            terminals: None,
        }
    }

    /// Where the calls that ran in the editor's terminal are noted: their
    /// last update shows the terminal too.
    pub fn set_terminals(&mut self, terminals: super::editor_terminal::Terminals) {
        self.terminals = Some(terminals);
    }

    /// What the client said it can show.
    pub fn shows(&self) -> ClientShows {
        self.shows
    }

    /// The tool call with this id, if it is under way.
    pub fn call(&self, id: &str) -> Option<&Call> {
        self.calls.get(id)
    }

    /// A call begins: `under` is the `agent` call (or calls, `a/b`) of the
    /// subagent that makes it, if one does.
    fn call_started(
        &mut self,
        id: String,
        under: Option<&str>,
        tool_name: &str,
        arguments: &Value,
    ) -> SessionUpdate {
        self.calls.insert(
            id.clone(),
            Call {
                name: tool_name.to_string(),
                arguments: arguments.clone(),
            },
        );
        let title = tools::title(tool_name, arguments);
        let title = match under {
            Some(agent) => format!("agent {agent}: {title}"),
            None => title,
        };
        SessionUpdate::ToolCall(
            ToolCall::new(id, title)
                .kind(tools::kind(tool_name))
                .status(ToolCallStatus::InProgress)
                .locations(tools::locations(tool_name, arguments, &self.cwd))
                .raw_input(arguments.clone()),
        )
    }

    /// A call ended, with its result; `own`: the session's own call (not
    /// a subagent's), which may have run in the editor's terminal.
    fn call_ended(
        &mut self,
        id: String,
        own: bool,
        tool_name: &str,
        output: &str,
        details: &Value,
        is_error: bool,
    ) -> SessionUpdate {
        let arguments = self
            .calls
            .remove(&id)
            .map(|c| c.arguments)
            .unwrap_or(Value::Null);
        let status = if is_error {
            ToolCallStatus::Failed
        } else {
            ToolCallStatus::Completed
        };
        let mut content =
            tools::result_content(tool_name, &arguments, output, details, is_error, &self.cwd);
        // The terminal the call ran in stays shown (the editor keeps a
        // released terminal's output), before the result.
        if own
            && let Some(tid) = self
                .terminals
                .as_ref()
                .and_then(|t| t.lock().ok()?.remove(&id))
        {
            content.insert(0, ToolCallContent::Terminal(Terminal::new(tid)));
        }
        let mut fields = ToolCallUpdateFields::new().status(status).content(content);
        let changed = tools::result_locations(details, &self.cwd);
        if !changed.is_empty() {
            fields = fields.locations(changed);
        }
        SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id, fields))
    }

    /// The updates for one event. `replay` is set when the event comes from
    /// a session file: the person's own messages are shown too, and whole
    /// messages stand in for their deltas.
    pub fn event(&mut self, event: &AgentEvent, replay: bool) -> Vec<SessionUpdate> {
        let mut out = Vec::new();
        match event {
            AgentEvent::AgentStart { .. } => {
                self.prompt_turn = Some(self.turns + 1);
                self.last_stop = None;
            }
            AgentEvent::TurnStart => self.turns += 1,
            AgentEvent::MessageStart { message } => {
                if matches!(message, Message::Assistant(_)) {
                    self.streamed = false;
                }
            }
            AgentEvent::MessageUpdate { event } if !replay => match event {
                LlmEvent::TextDelta { delta, .. } if !delta.is_empty() => {
                    self.streamed = true;
                    out.push(SessionUpdate::AgentMessageChunk(text_chunk(delta)));
                }
                LlmEvent::ThinkingDelta { delta, .. } if !delta.is_empty() => {
                    self.streamed = true;
                    out.push(SessionUpdate::AgentThoughtChunk(text_chunk(delta)));
                }
                _ => {}
            },
            AgentEvent::MessageUpdate { .. } => {}
            AgentEvent::MessageEnd { message } => match message {
                Message::User { content, .. } if replay => {
                    for block in user_blocks(content) {
                        out.push(SessionUpdate::UserMessageChunk(ContentChunk::new(block)));
                    }
                }
                Message::Assistant(a) => {
                    self.last_stop = Some(a.stop_reason);
                    if !self.streamed || replay {
                        out.extend(whole_message(a));
                    }
                    self.streamed = false;
                }
                _ => {}
            },
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                arguments,
            } => out.push(self.call_started(tool_call_id.clone(), None, tool_name, arguments)),
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                output,
                details,
                is_error,
            } => {
                out.push(self.call_ended(
                    tool_call_id.clone(),
                    true,
                    tool_name,
                    output,
                    details,
                    *is_error,
                ));
                if !*is_error && let Some(plan) = plan(tool_name, details) {
                    out.push(SessionUpdate::Plan(plan));
                }
            }
            AgentEvent::TurnEnd {
                message,
                tool_results,
            } => {
                self.usage.add(&message.usage);
                if let Some(u) = self.usage_update(message) {
                    out.push(SessionUpdate::UsageUpdate(u));
                }
                // A tool's pictures (ag-browser's screenshots) come only
                // with the turn's results: the call's content is sent
                // again, its text and then the pictures as image content.
                for r in tool_results {
                    let images: Vec<ToolCallContent> = r
                        .content
                        .iter()
                        .filter_map(|b| match b {
                            AgBlock::Image { data, mime_type } => {
                                Some(ToolCallContent::from(ContentBlock::Image(
                                    ImageContent::new(data.clone(), mime_type.clone()),
                                )))
                            }
                            _ => None,
                        })
                        .collect();
                    if images.is_empty() {
                        continue;
                    }
                    let text: Vec<&str> = r
                        .content
                        .iter()
                        .filter_map(|b| match b {
                            AgBlock::Text { text } => Some(text.as_str()),
                            _ => None,
                        })
                        .collect();
                    let mut content = tools::result_content(
                        &r.tool_name,
                        &Value::Null,
                        &text.join("\n"),
                        &r.details,
                        r.is_error,
                        &self.cwd,
                    );
                    content.extend(images);
                    out.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                        r.tool_call_id.clone(),
                        ToolCallUpdateFields::new().content(content),
                    )));
                }
            }
            AgentEvent::AgentEnd { .. } | AgentEvent::Interrupted => {}
            AgentEvent::ApprovalRequest { .. } | AgentEvent::Checkpoint { .. } => {}
            // A subagent's tool calls show as calls of their own, titled
            // with the `agent` call they run under, so that the editor can
            // follow along; the rest of its steps (its text, its plan)
            // stay inside the `agent` call, whose result is its answer.
            AgentEvent::SubagentEvent {
                tool_call_id,
                event,
            } => {
                let mut under = vec![tool_call_id.as_str()];
                let mut inner = &event.event;
                while let AgentEvent::SubagentEvent {
                    tool_call_id,
                    event,
                } = inner
                {
                    under.push(tool_call_id);
                    inner = &event.event;
                }
                let prefix = under.join("/");
                match inner {
                    AgentEvent::ToolExecutionStart {
                        tool_call_id,
                        tool_name,
                        arguments,
                    } => out.push(self.call_started(
                        format!("{prefix}/{tool_call_id}"),
                        Some(&prefix),
                        tool_name,
                        arguments,
                    )),
                    AgentEvent::ToolExecutionEnd {
                        tool_call_id,
                        tool_name,
                        output,
                        details,
                        is_error,
                    } => out.push(self.call_ended(
                        format!("{prefix}/{tool_call_id}"),
                        false,
                        tool_name,
                        output,
                        details,
                        *is_error,
                    )),
                    _ => {}
                }
            }
            AgentEvent::Compaction {
                replaced,
                kept,
                usage,
                ..
            } => {
                self.usage.add(usage);
                out.push(self.note(
                    NoticeSeverity::Info,
                    &format!(
                        "The conversation was compacted: {replaced} older messages became a summary, the last {kept} were kept."
                    ),
                ));
            }
            AgentEvent::Notify { message, .. } => {
                out.push(SessionUpdate::AgentMessageChunk(text_chunk(&format!(
                    "\n{message}\n"
                ))));
            }
            // ag-acp's own (see `refused`), in a session file replayed.
            AgentEvent::Error { message, .. } if refused::is_sync_echo(message) => {}
            AgentEvent::Error { message, .. } => {
                out.push(self.note(NoticeSeverity::Warning, message));
            }
            AgentEvent::Note { message, .. } => {
                out.push(self.note(NoticeSeverity::Info, message));
            }
            AgentEvent::Withdrawn { reason } => {
                out.push(self.note(NoticeSeverity::Info, &format!("withdrawn: {reason}")));
            }
            // Runs that end when a check passes (issue 35).
            AgentEvent::Check { .. } => {
                if let Some(text) = event.check_summary() {
                    out.push(self.note(NoticeSeverity::Info, &text));
                }
            }
            // A client without forms is not asked a free-text question
            // (see `questions`): it is shown, and ag-loop's --ask-timeout
            // (set by ag-acp) moves the run on when nobody answers.
            AgentEvent::Question {
                question, options, ..
            } if !self.shows.forms && options.is_empty() => {
                let mut text = format!("the agent asks: {question}");
                if !options.is_empty() {
                    text.push_str(&format!(" ({})", options.join(" / ")));
                }
                out.push(self.note(NoticeSeverity::Info, &text));
            }
            AgentEvent::Question { .. } => {}
            AgentEvent::ToolExecutionUpdate { .. } | AgentEvent::Settings { .. } => {}
        }
        out
    }

    /// Something the person should see that is not the model's answer: a
    /// notice where the client shows them, else a line of the answer.
    fn note(&self, severity: NoticeSeverity, text: &str) -> SessionUpdate {
        if self.shows.notices {
            SessionUpdate::Notice(Notice::new(severity, text))
        } else {
            SessionUpdate::AgentMessageChunk(text_chunk(&format!("\n[ag] {text}\n")))
        }
    }

    /// The context in use after a turn and the window, when the window is
    /// known; the session's cost so far.
    fn usage_update(&self, message: &AssistantMessage) -> Option<UsageUpdate> {
        let size = message.model.as_deref().and_then(|m| (self.window)(m))?;
        let u = &message.usage;
        let used = u.input + u.cache_read + u.cache_write + u.output;
        Some(UsageUpdate::new(used, size).cost(Cost::new(self.usage.cost.total, "USD")))
    }

    /// How a prompt ended, from its `agent_end`.
    pub fn ending(&self, outcome: Outcome, error: Option<&str>) -> Ending {
        match outcome {
            Outcome::Finished if self.last_stop == Some(StopReason::Length) => {
                Ending::Stop(AcpStop::MaxTokens)
            }
            Outcome::Finished
            | Outcome::RepeatedFailure
            | Outcome::RepeatedCall
            | Outcome::InvalidOutput
            | Outcome::CheckFailed => Ending::Stop(AcpStop::EndTurn),
            Outcome::Interrupted => Ending::Stop(AcpStop::Cancelled),
            Outcome::TurnLimit | Outcome::CostLimit => Ending::Stop(AcpStop::MaxTurnRequests),
            // A refusal is no failure of the call: ACP has a stop reason
            // for it, and the editor says the model declined.
            Outcome::ModelError if self.last_stop == Some(StopReason::Refusal) => {
                Ending::Stop(AcpStop::Refusal)
            }
            Outcome::ModelError => Ending::Failed(
                error
                    .unwrap_or("the model call failed (see ag-loop's stderr)")
                    .to_string(),
            ),
        }
    }
}

/// Text as a message chunk.
pub fn text_chunk(text: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(text)))
}

fn user_blocks(content: &UserContent) -> Vec<ContentBlock> {
    match content {
        UserContent::Text(t) => vec![ContentBlock::Text(TextContent::new(t.clone()))],
        UserContent::Blocks(blocks) => blocks
            .iter()
            .filter_map(|b| match b {
                AgBlock::Text { text } => Some(ContentBlock::Text(TextContent::new(text.clone()))),
                AgBlock::Image { data, mime_type } => Some(ContentBlock::Image(ImageContent::new(
                    data.clone(),
                    mime_type.clone(),
                ))),
                _ => None,
            })
            .collect(),
    }
}

/// A whole assistant message's text and thinking, in order.
fn whole_message(a: &AssistantMessage) -> Vec<SessionUpdate> {
    a.content
        .iter()
        .filter_map(|b| match b {
            AgBlock::Text { text } if !text.is_empty() => {
                Some(SessionUpdate::AgentMessageChunk(text_chunk(text)))
            }
            AgBlock::Thinking { thinking, .. } if !thinking.is_empty() => {
                Some(SessionUpdate::AgentThoughtChunk(text_chunk(thinking)))
            }
            _ => None,
        })
        .collect()
}

/// ag-todo's list as a plan (`details.items`: id, content, status).
fn plan(tool: &str, details: &Value) -> Option<Plan> {
    if tool.strip_prefix("ag-").unwrap_or(tool) != "todo" {
        return None;
    }
    let items = details.get("items")?.as_array()?;
    let entries = items
        .iter()
        .filter_map(|i| {
            let content = i.get("content")?.as_str()?;
            let status = match i.get("status").and_then(Value::as_str) {
                Some("in_progress") => PlanEntryStatus::InProgress,
                Some("done") | Some("completed") => PlanEntryStatus::Completed,
                _ => PlanEntryStatus::Pending,
            };
            Some(PlanEntry::new(content, PlanEntryPriority::Medium, status))
        })
        .collect();
    Some(Plan::new(entries))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{AgentEventRecord, ToolResultMessage};
    use serde_json::json;

    fn translator() -> Translator {
        Translator::new(
            PathBuf::from("/w"),
            ClientShows::default(),
            Box::new(|m| (m == "p/m").then_some(1000)),
        )
    }

    fn assistant(text: &str, stop: StopReason) -> AssistantMessage {
        AssistantMessage {
            content: vec![AgBlock::Text { text: text.into() }],
            stop_reason: stop,
            model: Some("p/m".into()),
            usage: Usage {
                input: 10,
                output: 5,
                ..Usage::default()
            },
            ..AssistantMessage::default()
        }
    }

    fn json_of(u: &[SessionUpdate]) -> Value {
        serde_json::to_value(u).unwrap()
    }

    #[test]
    fn deltas_stream_and_the_end_adds_nothing() {
        let mut t = translator();
        let a = assistant("hello", StopReason::Stop);
        t.event(
            &AgentEvent::MessageStart {
                message: Message::Assistant(a.clone()),
            },
            false,
        );
        let u = t.event(
            &AgentEvent::MessageUpdate {
                event: LlmEvent::ThinkingDelta {
                    index: 0,
                    delta: "hmm".into(),
                },
            },
            false,
        );
        assert_eq!(json_of(&u)[0]["sessionUpdate"], "agent_thought_chunk");
        let u = t.event(
            &AgentEvent::MessageUpdate {
                event: LlmEvent::TextDelta {
                    index: 1,
                    delta: "hel".into(),
                },
            },
            false,
        );
        assert_eq!(json_of(&u)[0]["content"]["text"], "hel");
        let u = t.event(
            &AgentEvent::MessageEnd {
                message: Message::Assistant(a),
            },
            false,
        );
        assert!(u.is_empty(), "{u:?}");
    }

    #[test]
    fn a_replay_shows_whole_messages_and_the_person_too() {
        let mut t = translator();
        let u = t.event(
            &AgentEvent::MessageEnd {
                message: Message::User {
                    content: UserContent::Text("hi".into()),
                    timestamp: None,
                },
            },
            true,
        );
        assert_eq!(json_of(&u)[0]["sessionUpdate"], "user_message_chunk");
        let u = t.event(
            &AgentEvent::MessageUpdate {
                event: LlmEvent::TextDelta {
                    index: 0,
                    delta: "x".into(),
                },
            },
            true,
        );
        assert!(u.is_empty());
        let u = t.event(
            &AgentEvent::MessageEnd {
                message: Message::Assistant(assistant("whole", StopReason::Stop)),
            },
            true,
        );
        assert_eq!(json_of(&u)[0]["content"]["text"], "whole");
        // Live, the person's prompt is the client's own: not echoed.
        let u = t.event(
            &AgentEvent::MessageEnd {
                message: Message::User {
                    content: UserContent::Text("hi".into()),
                    timestamp: None,
                },
            },
            false,
        );
        assert!(u.is_empty());
    }

    #[test]
    fn a_tool_call_starts_and_ends_with_its_diff() {
        let mut t = translator();
        let u = t.event(
            &AgentEvent::ToolExecutionStart {
                tool_call_id: "c1".into(),
                tool_name: "edit".into(),
                arguments: json!({"file_path": "f.txt", "old_string": "b", "new_string": "B"}),
            },
            false,
        );
        let j = json_of(&u);
        assert_eq!(j[0]["sessionUpdate"], "tool_call");
        assert_eq!(j[0]["kind"], "edit");
        assert_eq!(j[0]["status"], "in_progress");
        assert_eq!(j[0]["locations"][0]["path"], "/w/f.txt");
        assert!(t.call("c1").is_some());
        let u = t.event(
            &AgentEvent::ToolExecutionEnd {
                tool_call_id: "c1".into(),
                tool_name: "edit".into(),
                output: "Replaced".into(),
                details: json!({"diff": "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-b\n+B\n"}),
                is_error: false,
            },
            false,
        );
        let j = json_of(&u);
        assert_eq!(j[0]["sessionUpdate"], "tool_call_update");
        assert_eq!(j[0]["status"], "completed");
        assert_eq!(j[0]["content"][0]["type"], "diff");
        assert_eq!(j[0]["content"][0]["oldText"], "b\n");
        assert_eq!(j[0]["content"][0]["newText"], "B\n");
        assert!(t.call("c1").is_none());
    }

    #[test]
    fn the_todo_list_becomes_a_plan() {
        let mut t = translator();
        let u = t.event(
            &AgentEvent::ToolExecutionEnd {
                tool_call_id: "c".into(),
                tool_name: "todo".into(),
                output: "[ ] a".into(),
                details: json!({"items": [
                    {"id": 1, "content": "a", "status": "done"},
                    {"id": 2, "content": "b", "status": "in_progress"},
                    {"id": 3, "content": "c", "status": "pending"}]}),
                is_error: false,
            },
            false,
        );
        let j = json_of(&u);
        assert_eq!(j[1]["sessionUpdate"], "plan");
        let statuses: Vec<&str> = j[1]["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["status"].as_str().unwrap())
            .collect();
        assert_eq!(statuses, ["completed", "in_progress", "pending"]);
    }

    #[test]
    fn usage_goes_out_when_the_window_is_known() {
        let mut t = translator();
        let u = t.event(
            &AgentEvent::TurnEnd {
                message: assistant("x", StopReason::Stop),
                tool_results: Vec::<ToolResultMessage>::new(),
            },
            false,
        );
        let j = json_of(&u);
        assert_eq!(j[0]["sessionUpdate"], "usage_update");
        assert_eq!(j[0]["used"], 15);
        assert_eq!(j[0]["size"], 1000);
        let mut unknown = assistant("x", StopReason::Stop);
        unknown.model = Some("other/model".into());
        let u = t.event(
            &AgentEvent::TurnEnd {
                message: unknown,
                tool_results: Vec::new(),
            },
            false,
        );
        assert!(u.is_empty());
        assert_eq!(t.usage.input, 20);
    }

    #[test]
    fn outcomes_map_to_stop_reasons() {
        let mut t = translator();
        assert_eq!(
            t.ending(Outcome::Finished, None),
            Ending::Stop(AcpStop::EndTurn)
        );
        t.event(
            &AgentEvent::MessageEnd {
                message: Message::Assistant(assistant("x", StopReason::Length)),
            },
            false,
        );
        assert_eq!(
            t.ending(Outcome::Finished, None),
            Ending::Stop(AcpStop::MaxTokens)
        );
        assert_eq!(
            t.ending(Outcome::Interrupted, None),
            Ending::Stop(AcpStop::Cancelled)
        );
        assert_eq!(
            t.ending(Outcome::TurnLimit, None),
            Ending::Stop(AcpStop::MaxTurnRequests)
        );
        assert_eq!(
            t.ending(Outcome::ModelError, Some("401")),
            Ending::Failed("401".into())
        );
        t.event(
            &AgentEvent::MessageEnd {
                message: Message::Assistant(assistant("", StopReason::Refusal)),
            },
            false,
        );
        assert_eq!(
            t.ending(Outcome::ModelError, Some("the model refused: no")),
            Ending::Stop(AcpStop::Refusal)
        );
    }

    #[test]
    fn turns_are_counted_for_rewind() {
        let mut t = translator();
        t.event(
            &AgentEvent::AgentStart {
                session_id: None,
                agent: None,
            },
            false,
        );
        t.event(&AgentEvent::TurnStart, false);
        t.event(&AgentEvent::TurnStart, false);
        t.event(
            &AgentEvent::AgentStart {
                session_id: None,
                agent: None,
            },
            false,
        );
        t.event(&AgentEvent::TurnStart, false);
        assert_eq!(t.turns, 3);
        assert_eq!(t.prompt_turn, Some(3));
    }

    /// `event` as a subagent's, under the `agent` calls `under` (outermost
    /// first).
    fn nested(under: &[&str], event: AgentEvent) -> AgentEvent {
        under
            .iter()
            .rev()
            .fold(event, |inner, id| AgentEvent::SubagentEvent {
                tool_call_id: id.to_string(),
                event: Box::new(AgentEventRecord {
                    timestamp: "2026-01-01T00:00:00Z".into(),
                    event: inner,
                }),
            })
    }

    #[test]
    fn a_subagents_tool_calls_show_as_calls_titled_with_its_agent_call() {
        let mut t = translator();
        let start = |id: &str| AgentEvent::ToolExecutionStart {
            tool_call_id: id.into(),
            tool_name: "read".into(),
            arguments: json!({"file_path": "a.txt"}),
        };
        let end = |id: &str, tool: &str, details: Value| AgentEvent::ToolExecutionEnd {
            tool_call_id: id.into(),
            tool_name: tool.into(),
            output: "1\ta".into(),
            details,
            is_error: false,
        };
        let j = json_of(&t.event(&nested(&["ag1"], start("c1")), false));
        assert_eq!(j[0]["sessionUpdate"], "tool_call");
        assert_eq!(j[0]["toolCallId"], "ag1/c1");
        assert_eq!(j[0]["title"], "agent ag1: read a.txt");
        assert_eq!(j[0]["kind"], "read");
        assert_eq!(j[0]["locations"][0]["path"], "/w/a.txt");
        // The same id from another subagent, or the session's own, is
        // another call.
        let j = json_of(&t.event(&nested(&["ag1", "ag2"], start("c1")), false));
        assert_eq!(j[0]["toolCallId"], "ag1/ag2/c1");
        assert_eq!(j[0]["title"], "agent ag1/ag2: read a.txt");
        let j = json_of(&t.event(&nested(&["ag1"], end("c1", "read", json!({}))), false));
        assert_eq!(j[0]["sessionUpdate"], "tool_call_update");
        assert_eq!(j[0]["toolCallId"], "ag1/c1");
        assert_eq!(j[0]["status"], "completed");
        assert!(t.call("ag1/ag2/c1").is_some() && t.call("ag1/c1").is_none());
        // A child's todo list is not the session's plan; its text stays
        // inside the agent call.
        let todo = json!({"items": [{"id": 1, "content": "a", "status": "done"}]});
        let u = t.event(&nested(&["ag1"], end("c2", "todo", todo)), false);
        assert_eq!(u.len(), 1);
        let text = AgentEvent::MessageUpdate {
            event: LlmEvent::TextDelta {
                index: 0,
                delta: "child says".into(),
            },
        };
        assert!(t.event(&nested(&["ag1"], text), false).is_empty());
    }
}
