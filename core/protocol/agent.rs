//! ag-loop's protocol: commands on stdin, events on stdout.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    AssistantMessage, ContentBlock, LlmEvent, Message, Reasoning, ToolResultMessage, Usage,
    UserContent,
};

/// One line of ag-loop's stdin (a line that is not JSON is a prompt).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentCommand {
    /// A new task; queued while the agent is busy. A text that starts with
    /// `@NAME ` runs as the agent identity NAME. An empty one (no text but
    /// whitespace, no image) is skipped with an `error` event.
    Prompt {
        /// Text, or text and image blocks. A word `@PATH` naming an
        /// existing file attaches that file, as `attachments` does.
        content: UserContent,
        /// Files to attach, as `ag-loop --attach` does: an image becomes an
        /// image block, a PDF its text with page markers, any other file a
        /// text block with its name. Relative paths are taken from ag-loop's
        /// working directory.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        attachments: Vec<String>,
        /// Blocks that carry data rather than a person's words (a file an
        /// editor embedded, a link's name): put after `content` and the
        /// attachments, and never read for `@PATH` mentions, so that a word
        /// inside a file cannot attach another.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        data: Vec<ContentBlock>,
    },
    /// Seed 002's name for `prompt`, taken the same way.
    Message {
        /// Text, or text and image blocks.
        content: UserContent,
    },
    /// A message delivered after the running tool calls, before the next
    /// model call. Sent while the model writes its final answer, it gets one
    /// more turn of the same run; sent when no run is going (or after the
    /// last turn of one), it is the next prompt. It is never dropped.
    Steer {
        /// Text, or text and image blocks.
        content: UserContent,
    },
    /// Stop the model and the running tools now.
    Interrupt,
    /// The answer to an `approval_request`.
    Approval {
        /// The tool call asked about.
        tool_call_id: String,
        /// Whether it may run.
        approved: bool,
        /// Approve the like for the rest of the session too (what the
        /// request's `always` names); only with `approved`.
        #[serde(default, skip_serializing_if = "is_false")]
        always: bool,
    },
    /// Shorten the conversation now, as ag-loop does when it nears the
    /// context window (a `compaction` event follows); queued like a prompt.
    Compact,
    /// Switch the model from the next prompt on (queued like a prompt); a
    /// `settings` event records the switch in the session.
    SetModel {
        /// The model, as `provider/model`.
        model: String,
    },
    /// Switch the reasoning effort from the next prompt on (queued like a
    /// prompt); a `settings` event records the switch in the session.
    SetReasoning {
        /// `off`, `low`, `medium` or `high`.
        level: Reasoning,
    },
    /// The answer to a `question` the model asked with the `ask` tool.
    Answer {
        /// The `ask` call the question came from.
        tool_call_id: String,
        /// The answer: one of the question's options (or its number,
        /// counting from 1), or any text; empty when the person gave none
        /// (then `--ask-default`, or the model decides itself).
        answer: String,
    },
}

/// One line of ag-loop's stdout, and of a session file after its header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentEventRecord {
    /// When the event happened (RFC 3339, UTC).
    pub timestamp: String,
    /// The event.
    #[serde(flatten)]
    pub event: AgentEvent,
}

/// What happened in the agent loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// The agent took a prompt.
    AgentStart {
        /// The session the events are recorded in (absent with `--no-session`),
        /// for `ag-session` commands on it while it runs.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
        /// The agent identity that answers this prompt (`--agent`,
        /// `default.md`, or `@NAME` at the start of the prompt); absent
        /// without one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
    },
    /// A model call begins.
    TurnStart,
    /// A message begins (user, assistant or tool result).
    MessageStart {
        /// The message as it stands. An assistant message has no
        /// `stop_reason` yet: that is known only at `message_end`.
        #[serde(serialize_with = "message_as_started")]
        message: Message,
    },
    /// A piece of the assistant message streamed in.
    MessageUpdate {
        /// The stream event.
        event: LlmEvent,
    },
    /// A message is complete.
    MessageEnd {
        /// The whole message.
        message: Message,
    },
    /// A tool call begins.
    ToolExecutionStart {
        /// The call's identifier.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// The arguments.
        arguments: Value,
    },
    /// A running tool call's progress (ag-bash: the lines of a long
    /// command as they come), as the tool reported it on its stderr (see
    /// `ToolProgress`). Throttled by the tool; only for display: the model
    /// reads the result alone.
    ToolExecutionUpdate {
        /// The call's identifier.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// What is new since the last update: for ag-bash, the lines the
        /// command printed since then (the last of them is the latest).
        output: String,
        /// The tool's details of the update, if any.
        #[serde(default, skip_serializing_if = "Value::is_null")]
        details: Value,
    },
    /// A tool call ended.
    ToolExecutionEnd {
        /// The call's identifier.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// The tool's output text.
        output: String,
        /// The tool's details.
        #[serde(default)]
        details: Value,
        /// True when the call failed.
        is_error: bool,
    },
    /// A model call and its tool calls are done.
    TurnEnd {
        /// The assistant message of this turn.
        message: AssistantMessage,
        /// The results of its tool calls.
        tool_results: Vec<ToolResultMessage>,
    },
    /// The agent finished a prompt.
    AgentEnd {
        /// The messages this prompt added to the conversation.
        messages: Vec<Message>,
        /// How it ended.
        outcome: Outcome,
        /// Tokens and cost of this prompt.
        usage: Usage,
        /// The reason, when it did not finish.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// Structured output (`--output-schema`): the final answer as the
        /// JSON value it is, valid against the schema; absent without a
        /// schema or when the run did not finish with a valid answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<Value>,
        /// What the run did, from its own record rather than from what the
        /// model says: so that a caller can tell a finished run that
        /// changed files from one that changed nothing. Absent in session
        /// files written before it was recorded.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        work: Option<Work>,
    },
    /// The running work was interrupted.
    Interrupted,
    /// A tool call waits for a person's approval.
    ApprovalRequest {
        /// The call's identifier, to answer with an `approval` command.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// The arguments.
        arguments: Value,
        /// Why approval is needed.
        reason: String,
        /// What an answer with `always` approves for the rest of the
        /// session (a tool, or the command prefixes of a bash call).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        always: Option<String>,
    },
    /// The model asks the person something (the `ask` tool) and the run
    /// waits for an `answer` command on stdin (or a typed line). Emitted
    /// only when someone can answer: a run nobody attends answers through
    /// `--ask-cmd`, `--ask-default` or by telling the model to decide.
    Question {
        /// The `ask` call; the `answer` command names it.
        tool_call_id: String,
        /// The question.
        question: String,
        /// The choices offered, if any; an answer may still be any text.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        options: Vec<String>,
    },
    /// The conversation was shortened to fit the model's context window:
    /// from here on it is `summary` followed by the last `kept` messages.
    /// The session file still holds the full history before this event.
    Compaction {
        /// The message that stands for the older part: a summary (or a marker
        /// when the older part was simply dropped) and the facts kept mechanically.
        summary: Message,
        /// How many of the latest messages were kept verbatim.
        kept: usize,
        /// How many older messages the summary replaced.
        replaced: usize,
        /// The estimated tokens of the conversation before.
        tokens_before: u64,
        /// `summary` (a model wrote it) or `prune` (older turns were dropped).
        method: String,
        /// Tokens and cost of the summarising call.
        #[serde(default)]
        usage: Usage,
    },
    /// The model told the person something without ending its turn (the `notify` tool).
    Notify {
        /// What it said.
        message: String,
        /// `info`, `warning` or `urgent`.
        level: String,
    },
    /// The session's model, reasoning, tools or identity changed from here
    /// on: a `set_model` or `set_reasoning` command, or a flag given when
    /// the session was resumed. It holds all four as they now are, and
    /// resuming the session starts from the last one (else from the
    /// header's `config`).
    Settings {
        /// The model, as `provider/model`.
        model: String,
        /// The reasoning effort; absent: the model's default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning: Option<Reasoning>,
        /// The tool set as asked for (`full`, `minimal`, `chat`, ... or tool
        /// names); absent: the default set.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tools: Option<Vec<String>>,
        /// The agent identity; absent: none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
        // Runs that end when a check passes (issue 35).
        /// The check that must pass before a run ends (`--until`);
        /// absent: none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        until: Option<UntilCheck>,
    },
    /// Something went wrong that the stream should know about.
    Error {
        /// What went wrong.
        message: String,
        /// A stable code for what went wrong, for clients that act on it
        /// (`sandbox.unavailable`: tools run unconfined); absent on most.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    },
    // Checkpoints (issue 20).
    /// The working tree was recorded before a turn's tool calls (or at the
    /// end of a run whose tools changed files): `ag-session rewind ID --turn N`
    /// puts it back. A tree that did not change since the last checkpoint
    /// keeps the last one's id.
    Checkpoint {
        /// The checkpoint: a git commit on `refs/ag/checkpoints/<session-id>`
        /// in `git_dir`.
        id: String,
        /// The turn of the session (counting every `turn_start` of the
        /// session file, from 1) whose tool calls come after this state; at
        /// the end of a run, the number of the turn after the last one whose
        /// tools may have changed files.
        turn: u64,
        /// Files added since the previous checkpoint (relative to `work_tree`).
        #[serde(default)]
        added: Vec<String>,
        /// Files whose content or mode changed since the previous checkpoint.
        #[serde(default)]
        changed: Vec<String>,
        /// Files deleted since the previous checkpoint.
        #[serde(default)]
        deleted: Vec<String>,
        /// Paths left out of the three lists above (they stop at 100 each).
        #[serde(default, skip_serializing_if = "is_zero")]
        more: u64,
        /// The top of the recorded working tree.
        work_tree: String,
        /// The repository holding the checkpoint (a shadow repository under
        /// `$AG_HOME/checkpoints/repos` when the directory has no git).
        git_dir: String,
        /// What was left out (files over the size limit, unreadable files).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    // Runs that end when a check passes (issue 35).
    /// The model ended its turn and a check ran before the run may end: the
    /// `--until` command (confined as a tool call) or a stop hook
    /// (`--stop`). When it fails, the model is sent back with its output as
    /// the next prompt; when it passes, the run ends.
    Check {
        /// `until` (the `--until` command) or `stop` (a stop hook).
        kind: CheckKind,
        /// The command, as given.
        command: String,
        /// Which check of this prompt's run it is, from 1.
        attempt: u32,
        /// How many checks the run may make (`--until-tries`).
        tries: u32,
        /// True when the run may end: the command exited 0, or the hook
        /// answered `stop`.
        passed: bool,
        /// The command's exit status; absent for a stop hook, and when the
        /// command did not exit by itself (timed out, interrupted, not run).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        /// The end of the command's output, or the hook's message, as the
        /// model reads it when it is sent back.
        #[serde(default)]
        output: String,
        /// Why the check could not decide (it timed out, was interrupted,
        /// could not be run, or the hook gave no answer).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// Something the person should know, and the record should show, that
    /// is neither an error nor a question: what a flag changed in a resumed
    /// session, or a tool call that runs without a person's approval
    /// because nobody can answer (approval mode `never`), with the gate's
    /// reason.
    Note {
        /// What happened, for a person reading the events or the session.
        message: String,
        /// The tool call it is about, when it is about one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_call_id: Option<String>,
    },
    /// The assistant message of the last `message_end` is left out of the
    /// conversation from here on, and the same request goes to the model
    /// again. The session file keeps the message; a resumed session leaves
    /// it out too. ag-loop withdraws a prompt's first answer when it was
    /// asked to be a tool call and came as text.
    Withdrawn {
        /// Why, for a person reading the events or the session.
        reason: String,
    },
    // Subagents (issue 35).
    /// An event of a subagent: the child ag-loop that an `agent` tool call
    /// runs. Its events come in its parent's stream (and session) wrapped
    /// in this one, under the call that started it; a grandchild's are
    /// wrapped twice, so the nesting is the depth.
    SubagentEvent {
        /// The parent's `agent` tool call.
        tool_call_id: String,
        /// The child's event, with its own timestamp.
        event: Box<AgentEventRecord>,
    },
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl AgentEvent {
    // Runs that end when a check passes (issue 35).
    /// A `check` event in one line for a person: `check 1/5 `make test`
    /// failed: exit status 2`; `None` for any other event.
    pub fn check_summary(&self) -> Option<String> {
        let AgentEvent::Check {
            kind,
            command,
            attempt,
            tries,
            passed,
            exit_code,
            error,
            ..
        } = self
        else {
            return None;
        };
        let what = match kind {
            CheckKind::Until => "check",
            CheckKind::Stop => "stop hook",
        };
        let result = match (passed, exit_code, error) {
            (true, _, _) => "passed".to_string(),
            (false, _, Some(e)) => format!("failed: {e}"),
            (false, Some(c), None) => format!("failed: exit status {c}"),
            (false, None, None) => "sent the model back".to_string(),
        };
        Some(format!("{what} {attempt}/{tries} `{command}` {result}"))
    }

    // Subagents (issue 35).
    /// What a subagent's event says in one line, for showing under the
    /// `agent` call that runs it (`read {"path":"a.txt"}`, the first line of
    /// an answer, an error); `None` for events that say nothing on their
    /// own (deltas, turn markers). A grandchild's line is its own.
    pub fn subagent_line(&self) -> Option<String> {
        let line = match self {
            AgentEvent::SubagentEvent { event, .. } => return event.event.subagent_line(),
            AgentEvent::ToolExecutionStart {
                tool_name,
                arguments,
                ..
            } => format!("{tool_name} {arguments}"),
            AgentEvent::ToolExecutionEnd {
                tool_name,
                is_error: true,
                output,
                ..
            } => format!(
                "{tool_name} failed: {}",
                output.lines().next().unwrap_or_default()
            ),
            AgentEvent::MessageEnd {
                message: Message::Assistant(a),
            } => a.text().lines().find(|l| !l.trim().is_empty())?.to_string(),
            AgentEvent::Error { message, .. } | AgentEvent::Note { message, .. } => message.clone(),
            AgentEvent::Withdrawn { reason } => format!("withdrawn: {reason}"),
            AgentEvent::Interrupted => "interrupted".to_string(),
            AgentEvent::AgentEnd { outcome, usage, .. } => format!(
                "ended: {} (${:.4})",
                serde_json::to_value(outcome)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                usage.cost.total
            ),
            _ => return None,
        };
        let mut line = line.replace('\n', " ");
        if line.chars().count() > 160 {
            line = line.chars().take(159).collect::<String>() + "…";
        }
        Some(line)
    }

    /// How deep a subagent's event is nested: 1 for a child's own, 2 for
    /// a grandchild's, 0 for an event of this run.
    pub fn subagent_depth(&self) -> usize {
        match self {
            AgentEvent::SubagentEvent { event, .. } => 1 + event.event.subagent_depth(),
            _ => 0,
        }
    }

    /// An `error` event without a code.
    pub fn error(message: impl Into<String>) -> AgentEvent {
        AgentEvent::Error {
            message: message.into(),
            code: None,
        }
    }
}

/// What a prompt's run did, from its own record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Work {
    /// Tool calls made (a subagent's own calls not counted).
    pub calls: u32,
    /// Of those, the ones whose result was an error (the tool could not
    /// do what it was asked). A command that ran and exited non-zero is
    /// not one: its exit status is in its result's `details.exit_code`.
    pub failed_calls: u32,
    /// Files changed: the paths of the file tools' successful calls and
    /// what the run's checkpoints saw change (where `bash`'s changes
    /// show), relative to the working directory when beneath it. Without
    /// checkpoints only the file tools' paths are known.
    pub changed: Vec<String>,
    /// Changed files the checkpoints counted but did not list.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more_changed: u64,
}

/// How an agent run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The model answered without asking for more tools.
    Finished,
    /// It was interrupted.
    Interrupted,
    /// It reached `--max-turns`.
    TurnLimit,
    /// It reached `--max-cost`.
    CostLimit,
    /// The model call failed, or the model declined to answer (then the
    /// last assistant message's `stop_reason` is `refusal`).
    ModelError,
    /// The model kept making the same failing tool call (a command that
    /// exits non-zero with the same output, not empty, counts as failing).
    RepeatedFailure,
    /// The model kept making a call that had succeeded, with the same
    /// output each time: the run stopped there, its work kept. ag-loop
    /// exits 0 when the run changed files, 1 when it changed none.
    RepeatedCall,
    /// The final answer still did not match `--output-schema` after the
    /// retries (`--output-retries`).
    InvalidOutput,
    /// The `--until` check (or a stop hook) still failed after
    /// `--until-tries` checks, or could not be run at all.
    CheckFailed,
}

// Runs that end when a check passes (issue 35).
/// What a `check` event checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// The `--until` command.
    Until,
    /// A stop hook (`--stop`).
    Stop,
}

/// The check a session's runs must pass before they end (`ag-loop
/// --until`), as `settings` events record it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UntilCheck {
    /// The command, run by bash in the working directory, confined as a
    /// tool call; exit status 0 passes.
    pub command: String,
    /// Checks a prompt's run may make before it ends with `check_failed`.
    pub tries: u32,
    /// Seconds one check may take before it counts as failed.
    pub timeout: f64,
}

/// A message as `message_start` shows it: an assistant message's stop
/// reason is left out, since nothing has been generated yet.
fn message_as_started<S: serde::Serializer>(message: &Message, s: S) -> Result<S::Ok, S::Error> {
    match message {
        Message::Assistant(_) => {
            let mut v = serde_json::to_value(message).map_err(serde::ser::Error::custom)?;
            if let Some(obj) = v.as_object_mut() {
                obj.remove("stop_reason");
            }
            v.serialize(s)
        }
        other => other.serialize(s),
    }
}
