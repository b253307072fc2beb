//! ag-serve's protocol: what a client asks of the broker, and what the
//! broker says besides the session's own events. A client's lines are
//! these requests or ag-loop's commands ([`super::AgentCommand`], for the
//! attached session); the broker's lines are ag-loop's events exactly as
//! the session file holds them, and these messages, whose types never
//! collide with an event's.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::UserContent;

/// One line a client sends to ag-serve that is not one of ag-loop's
/// commands (those go to the attached session as they are).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServeRequest {
    /// The sessions ag-serve runs or ran, with their state.
    List {
        /// Every session on this machine too (the newest 200), not only
        /// those ag-serve ran.
        #[serde(default, skip_serializing_if = "is_false")]
        all: bool,
    },
    /// A new session: ag-loop started on it, and this client attached.
    Start {
        /// The working directory (default: ag-serve's own).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
        /// More ag-loop flags (`-m`, `--tools`, `--max-cost`, ...); the
        /// session, output and approval flags are ag-serve's.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        args: Vec<String>,
        /// A first prompt.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prompt: Option<UserContent>,
        /// The name the other clients see on this one's approvals.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client: Option<String>,
    },
    /// Joins a session: the events from `from` on, first from its file,
    /// then live, with no gap and no duplicate where the two meet.
    Attach {
        /// The session's id, or a unique prefix or suffix of it.
        session: String,
        /// The offset of the first event wanted (0: from the start; the
        /// `offset` of a `detached` or `dropped` message: where that left off).
        #[serde(default, skip_serializing_if = "is_zero")]
        from: u64,
        /// Start ag-loop on the session when it is not running (resume it).
        #[serde(default, skip_serializing_if = "is_false")]
        resume: bool,
        /// With `resume`: more ag-loop flags for the resumed run.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        args: Vec<String>,
        /// The name the other clients see on this one's approvals.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client: Option<String>,
    },
    /// Leaves the attached session running; the connection stays open for
    /// more requests.
    Detach,
    /// Ends a running session: its running work is interrupted and its
    /// ag-loop told to finish (its stdin closed). It can be resumed later.
    End {
        /// The session (default: the attached one).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session: Option<String>,
    },
    /// Rewinds a session that is not working to before a turn
    /// (`ag-session rewind`): the files put back, the conversation before
    /// that turn continued in a new session, which ag-serve starts.
    Rewind {
        /// The session (default: the attached one).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session: Option<String>,
        /// The turn to go back to before (from 1, as `checkpoint` events count).
        turn: u64,
        /// Record changes made since the last checkpoint first, rather than
        /// refusing to lose them.
        #[serde(default, skip_serializing_if = "is_false")]
        force: bool,
    },
}

/// One line ag-serve sends that is not one of the session's events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServeMessage {
    /// The client is attached: the session's events from `from` follow
    /// (those before `live_from` read from its file), each counting one
    /// offset.
    Attached {
        /// The session's id.
        session: String,
        /// Its file.
        path: String,
        /// The offset of the first event that follows.
        from: u64,
        /// The events the file held when the client attached; from this
        /// offset on they come as ag-loop writes them.
        live_from: u64,
        /// The session's state now.
        state: SessionState,
        /// This client's name, as the others see it.
        client: String,
    },
    /// The client left the session, which goes on.
    Detached {
        /// The session.
        session: String,
        /// The offset of the first event the client did not get: attach
        /// with `from` set to it to go on.
        offset: u64,
    },
    /// The sessions, newest first.
    Sessions {
        /// One entry per session.
        sessions: Vec<SessionInfo>,
    },
    /// An approval request was answered, by whom.
    ApprovalAnswered {
        /// The session.
        session: String,
        /// The tool call asked about.
        tool_call_id: String,
        /// The answer.
        approved: bool,
        /// With `always`.
        #[serde(default, skip_serializing_if = "is_false")]
        always: bool,
        /// The client that answered.
        by: String,
    },
    /// The client fell too far behind (its buffer is full) and is let go;
    /// attaching again with `from` set to `offset` goes on where it left.
    Dropped {
        /// The session.
        session: String,
        /// The offset of the first event the client did not get.
        offset: u64,
        /// Why.
        reason: String,
    },
    /// The session's ag-loop ended.
    SessionEnded {
        /// The session.
        session: String,
        /// The events the session holds.
        offset: u64,
        /// How ag-loop ended (`exit status: 0`, `signal: 9 (SIGKILL)`).
        status: String,
        /// The end of its stderr, when it said something.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stderr: Option<String>,
        /// Whether the session file is there to be resumed.
        resumable: bool,
    },
    /// A session was rewound into a new one, which runs now.
    Rewound {
        /// The session rewound.
        session: String,
        /// The new session, holding the conversation before the turn.
        new_session: String,
        /// What was done, a line each.
        notes: Vec<String>,
    },
    /// A session was told to end.
    Ending {
        /// The session.
        session: String,
    },
    /// A line ag-serve did not take, and why; the connection goes on.
    Refused {
        /// What was wrong and what to send instead.
        message: String,
    },
}

/// What a session is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    /// A prompt is being worked on.
    Working,
    /// A tool call waits for a person's approval.
    WaitingForApproval,
    /// ag-loop runs and waits for a prompt.
    Idle,
    /// No ag-loop runs the session (it ended, or ran elsewhere).
    Ended,
}

/// One session in a `sessions` list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionInfo {
    /// The session's id.
    pub id: String,
    /// What it is doing.
    pub state: SessionState,
    /// Its working directory.
    pub cwd: String,
    /// Its file.
    pub path: String,
    /// The model that answered last (or was asked for), as `provider/model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Its cost so far in US dollars.
    pub cost: f64,
    /// When its last event happened (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_activity: Option<String>,
    /// Its first prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_prompt: Option<String>,
    /// The events it holds (the offset after its last one), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<u64>,
    /// The clients attached to it now.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub clients: u32,
    /// An ended session whose file is there: attach with `resume` goes on.
    #[serde(default, skip_serializing_if = "is_false")]
    pub resumable: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}
