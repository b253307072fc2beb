//! The gate protocol: before ag-loop runs a tool call it hands the call to
//! each gate program as one [`GateRequest`] on stdin, and the gate answers
//! one [`GateDecision`] on stdout. Any program that does so is a gate;
//! `ag-gate` is the default one.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool call about to run, as a gate receives it: one JSON object per line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GateRequest {
    /// The name of the tool the model called (`bash`, `write`, `read`, ...).
    pub tool: String,
    /// The call's arguments as the model gave them, normally an object.
    pub arguments: Value,
    /// The working directory the tool runs in; relative paths in the
    /// arguments resolve against it.
    pub cwd: String,
    /// The session the call belongs to, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The tool call's identifier, as in the assistant message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// True when a person can be asked (ag-loop runs on a terminal or a JSONL
    /// client answers approvals).
    #[serde(default)]
    pub interactive: bool,
    // The sandbox (issue 19).
    /// The OS sandbox the call runs in (`ag-loop --sandbox`); absent when it
    /// runs unconfined. A gate may pass what the kernel stops anyway;
    /// ag-gate's default policy does (see its man page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<GateSandbox>,
}

/// The sandbox a tool call runs in, as a gate sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GateSandbox {
    /// What the call may write.
    pub mode: SandboxMode,
    /// The directory writes are confined to in `workspace-write` mode.
    pub workspace: String,
    /// True when the network is open (`--allow-net`); otherwise TCP, UDP
    /// and raw sockets are denied (Unix sockets stay open).
    #[serde(default)]
    pub net: bool,
    /// Set when the call already ran confined and the sandbox blocked it:
    /// what was denied (such as: write to `/etc/hosts`). The gate is asked whether
    /// to run the call again outside the sandbox: allow runs it unconfined,
    /// ask puts the question to a person, deny keeps it confined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked: Option<String>,
}

/// What a confined call may write (`--sandbox-mode`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Nothing, except `/dev/null`-style devices.
    ReadOnly,
    /// The workspace, the directories given to be writable (ag-loop adds
    /// those its tools keep their files in), a private `$TMPDIR` and devices
    /// such as `/dev/null`.
    #[default]
    WorkspaceWrite,
}

/// A gate's answer to one request: one JSON object per line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum GateDecision {
    /// The call may run.
    Allow {
        /// Rewritten arguments to run the call with instead of the model's;
        /// absent when the call runs as given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments: Option<Value>,
        /// Why, for logs and the session (not the model). ag-gate always
        /// gives one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// True when a person would have been asked about the call, but
        /// nobody can answer (approval mode `never`): it runs without a
        /// person's yes, and ag-loop leaves a `note` event with `reason`.
        #[serde(default, skip_serializing_if = "is_false")]
        not_asked: bool,
    },
    /// The call must not run; the reason is shown to the model as the tool's
    /// result, so it says what to do instead.
    Deny {
        /// Why the call is refused, written for the model.
        reason: String,
    },
    /// A person must approve the call before it runs.
    Ask {
        /// Why approval is needed, shown to the person asked.
        reason: String,
    },
}

impl GateDecision {
    /// Allows the call as given, for `reason`.
    pub fn allow(reason: impl Into<String>) -> Self {
        GateDecision::Allow {
            arguments: None,
            reason: Some(reason.into()),
            not_asked: false,
        }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// What an after-hook (`ag-loop --after CMD`) receives once a tool call has
/// run: the call and its result, as one JSON object on stdin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AfterRequest {
    /// The tool's name.
    pub tool: String,
    /// The arguments the call ran with.
    pub arguments: Value,
    /// The working directory.
    pub cwd: String,
    /// The session, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The call's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The tool's output text.
    pub output: String,
    /// The tool's details.
    #[serde(default)]
    pub details: Value,
    /// True when the call failed.
    #[serde(default)]
    pub is_error: bool,
}

/// An after-hook's answer: an empty object leaves the result as it is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AfterAnswer {
    /// Replaces the output text the model reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// Added after the output, as a note the model reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append: Option<String>,
    /// Marks the result as failed (or not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
}

// Runs that end when a check passes (issue 35).
/// What a stop hook (`ag-loop --stop CMD`) receives when the model ends its
/// turn without tool calls: its final answer, as one JSON object on stdin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StopRequest {
    /// The text of the model's final answer.
    pub answer: String,
    /// The working directory.
    pub cwd: String,
    /// The session, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Which check of this prompt's run it is, from 1.
    pub attempt: u32,
    /// How many checks the run may make (`--until-tries`); on the last one,
    /// `continue` ends the run with the outcome `check_failed`.
    pub tries: u32,
}

/// A stop hook's answer: one JSON object on stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum StopDecision {
    /// The run may end (as far as this hook goes).
    Stop {
        /// Why, for the `check` event and the session (not the model).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// The work is not done: `message` goes to the model as the next prompt.
    Continue {
        /// What the model reads: what is still wrong, and what to do.
        message: String,
    },
}
