//! One ACP session: an ag-loop (`--json --approve-on-stdin`, started through
//! `crate::proc` and resumed with `--session` when it has to start again)
//! and a task that owns it. The task takes the editor's prompts one at a
//! time (a prompt sent while one runs waits its turn, as ag-loop would
//! queue it), turns ag-loop's events into `session/update`s, asks the
//! editor about the calls ag-gate wants a person to approve, and answers
//! each prompt when its run ends, or when ag-loop refused it (see
//! `refused`). A cancel is ag-loop's interrupt: the run ends as ag-loop
//! ends it, so the conversation stays valid.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    PromptResponse, RequestPermissionOutcome, SessionUpdate, StopReason as AcpStop,
};
use agent_client_protocol::{Error, ErrorCode, RequestCancellationHandle};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::commands::{self, Slash};
use super::editor_fs;
use super::modes::Mode;
use super::peer::Peer;
use super::questions;
use super::refused::{self, Before};
use super::translate::{Ending, Translator, text_chunk};
use super::transport::Outbox;
use crate::cli::warn;
use crate::proc::sibling;
use crate::proc::{CaptureLimit, Command, Input, LineLimits, Lines, Output, Running};
use crate::protocol::{AgentCommand, AgentEvent, AgentEventRecord, Usage, UserContent};

const BIN: &str = "ag-acp";

/// How long a cancelled prompt waits for its editor's terminals to be
/// killed and released (an editor that never answers those requests
/// holds the answer no longer than this).
const SETTLE: Duration = Duration::from_secs(3);

/// What every session shares: how ag-loop is started and the editor.
pub struct Shared {
    /// Run this shell command line instead of `ag-loop --json`.
    pub loop_cmd: Option<String>,
    /// More ag-loop flags, after the session's own.
    pub loop_args: Vec<String>,
    /// The model, passed as `-m`.
    pub model: Option<String>,
    /// How long the editor has to answer a permission request.
    pub permission_timeout: Option<Duration>,
    /// The editor.
    pub peer: Peer,
}

/// What a session is asked to do.
pub enum Work {
    /// A prompt for the model: the person's words, and the editor's data
    /// blocks (never read for mentions).
    Prompt(UserContent, Vec<crate::protocol::ContentBlock>),
    /// A slash command.
    Slash(Slash),
}

/// A message to a session's task.
pub enum Cmd {
    /// Run this, then answer (boxed: a responder is large).
    Prompt(Work, Box<Responder<PromptResponse>>),
    /// Stop the running prompt and drop the waiting ones.
    Cancel,
    /// Use this mode from the next prompt on.
    SetMode(Mode),
    /// End the session; the sender is told when ag-loop is gone.
    Close(oneshot::Sender<()>),
    /// The editor answered a permission request (or did not in time).
    Permission {
        tool_call_id: String,
        approved: bool,
        always: bool,
    },
    /// The editor answered a question of the model's (empty: it gave no
    /// answer).
    Answer {
        tool_call_id: String,
        answer: String,
    },
}

/// Where a session works and how its ag-loop starts.
pub struct Spec {
    /// The ACP session id, which is also ag's session id.
    pub id: String,
    /// The editor's directory for it.
    pub cwd: PathBuf,
    /// The editor's MCP servers.
    pub mcp: McpSpecs,
    /// The mode it starts in.
    pub mode: Mode,
}

/// The editor's MCP servers for ag-loop.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct McpSpecs {
    /// `--mcp` specs.
    pub specs: Vec<String>,
    /// The HTTP servers' headers, as `AG_MCP_HEADERS` (JSON), if any: in
    /// ag-loop's environment, not on its command line, where `ps` shows
    /// them.
    pub headers: Option<String>,
    /// The stdio servers' variables, as `AG_MCP_ENV` (JSON), if any:
    /// likewise.
    pub env: Option<String>,
}

/// The handle of a running session.
#[derive(Clone)]
pub struct Handle {
    tx: mpsc::UnboundedSender<Cmd>,
}

impl Handle {
    /// Sends a command; false when the session is over.
    pub fn send(&self, cmd: Cmd) -> bool {
        self.tx.send(cmd).is_ok()
    }

    /// Sends a prompt; the responder comes back when the session is over.
    pub fn send_prompt(
        &self,
        work: Work,
        responder: Responder<PromptResponse>,
    ) -> Result<(), Box<Responder<PromptResponse>>> {
        match self.tx.send(Cmd::Prompt(work, Box::new(responder))) {
            Ok(()) => Ok(()),
            Err(mpsc::error::SendError(Cmd::Prompt(_, r))) => Err(r),
            Err(_) => Ok(()),
        }
    }
}

/// Starts a session's task (and its ag-loop) with a translator that may
/// already hold a replayed history.
pub fn start(spec: Spec, translator: Translator, shared: Arc<Shared>) -> Handle {
    let (tx, rx) = mpsc::unbounded_channel();
    let mut actor = Actor {
        id: spec.id.clone(),
        ag_id: spec.id,
        cwd: spec.cwd,
        mcp: spec.mcp,
        mode: spec.mode,
        restart: false,
        shared,
        child: None,
        lines: None,
        translator,
        queue: VecDeque::new(),
        running: None,
        permissions: HashMap::new(),
        syncs: 0,
        me: tx.downgrade(),
        bridge: None,
    };
    let shows = actor.translator.shows();
    if shows.editor_read || shows.editor_write || shows.editor_terminal {
        if actor.shared.loop_args.iter().any(|a| names_tools(a)) {
            warn(
                BIN,
                &format!(
                    "session {}: --editor-fs and --editor-terminal are not used with --tools after `--`; ag's own tools work on disk and run commands",
                    actor.id
                ),
            );
        } else {
            match editor_fs::open(
                &actor.id,
                &actor.cwd,
                actor.shared.peer.clone(),
                shows.editor_terminal,
            ) {
                Ok(b) => {
                    actor.translator.set_terminals(b.terminals());
                    actor.bridge = Some(b);
                }
                Err(e) => warn(
                    BIN,
                    &format!(
                        "session {}: cannot open the socket for --editor-fs and --editor-terminal ({e}); ag's own tools work on disk and run commands",
                        actor.id
                    ),
                ),
            }
        }
    }
    // Started now, so that the first prompt does not wait for its set-up.
    if let Ok((child, lines)) = actor.spawn_loop() {
        actor.child = Some(child);
        actor.lines = Some(lines);
    }
    tokio::spawn(actor.run(rx));
    Handle { tx }
}

/// An ag-loop (its output lines are the actor's `lines`).
struct Child {
    stdin: Option<ChildStdin>,
    running: Running,
}

/// The prompt under way.
struct Current {
    responder: Box<Responder<PromptResponse>>,
    /// A compaction (ends at its `compaction` or `error` event) rather
    /// than a prompt (ends at `agent_end`).
    compact: bool,
    cancelled: bool,
    /// Its `agent_start` came: its `agent_end` answers it.
    started: bool,
    /// The `error` events before it started: why it was not run, if it
    /// never starts.
    errors: Vec<String>,
    /// The sync written after it (see `refused`), if one was.
    sync: Option<String>,
}

impl Current {
    fn new(responder: Box<Responder<PromptResponse>>, compact: bool) -> Current {
        Current {
            responder,
            compact,
            cancelled: false,
            started: false,
            errors: Vec::new(),
            sync: None,
        }
    }

    /// ag-loop did not run the prompt: answered with why, in ag-loop's
    /// words (its stable code, if any, in `data`), or as cancelled when
    /// the editor cancelled it meanwhile.
    fn not_run(self, code: Option<&str>) {
        if self.cancelled {
            let _ = self
                .responder
                .respond(PromptResponse::new(AcpStop::Cancelled));
            return;
        }
        let why = if self.errors.is_empty() {
            "ag-loop did not run the prompt and said nothing of why (ag-acp's stderr shows ag-loop's); send it again".to_string()
        } else {
            self.errors.join("; ")
        };
        let mut error = Error::new(ErrorCode::INVALID_PARAMS, why);
        if let Some(code) = code {
            error = error.data(json!({ "code": code }));
        }
        let _ = self.responder.respond_with_error(error);
    }
}

struct Actor {
    id: String,
    /// ag's session: the ACP id, until /rewind forks it.
    ag_id: String,
    cwd: PathBuf,
    mcp: McpSpecs,
    mode: Mode,
    /// ag-loop must start again (with the new mode) before the next prompt.
    restart: bool,
    shared: Arc<Shared>,
    child: Option<Child>,
    /// The output of `child`, until it ends.
    lines: Option<Lines>,
    translator: Translator,
    queue: VecDeque<(Work, Box<Responder<PromptResponse>>)>,
    running: Option<Current>,
    /// Permission requests waiting for the editor, by tool call.
    permissions: HashMap<String, RequestCancellationHandle>,
    /// The syncs written so far, for their ids.
    syncs: u64,
    me: mpsc::WeakUnboundedSender<Cmd>,
    /// `--editor-fs`: the socket the tools reach the editor by.
    bridge: Option<editor_fs::Bridge>,
}

/// Whether an ag-loop flag sets the tool list.
fn names_tools(arg: &str) -> bool {
    ["--tools", "--toolset"]
        .iter()
        .any(|f| arg == *f || arg.strip_prefix(f).is_some_and(|r| r.starts_with('=')))
}

impl Actor {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Cmd>) {
        let mut closed: Option<oneshot::Sender<()>> = None;
        loop {
            if !self.dispatch().await {
                break;
            }
            let outbox = self.shared.peer.outbox.clone();
            let has_lines = self.lines.is_some();
            let has_child = self.child.is_some();
            tokio::select! {
                cmd = rx.recv() => match cmd {
                    None => break,
                    Some(Cmd::Close(done)) => {
                        closed = Some(done);
                        break;
                    }
                    Some(cmd) => {
                        if !self.command(cmd).await {
                            break;
                        }
                    }
                },
                line = next_line(&outbox, self.lines.as_mut()), if has_lines => match line {
                    Some(Ok(bytes)) => {
                        if !self.line(&bytes).await {
                            break;
                        }
                    }
                    Some(Err(e)) => warn(BIN, &format!("session {}: ag-loop: {e}", self.id)),
                    None => self.lines = None,
                },
                ended = child_end(self.child.as_ref()), if has_child && !has_lines => {
                    self.child = None;
                    self.child_gone(ended);
                }
            }
        }
        self.close().await;
        if let Some(done) = closed {
            let _ = done.send(());
        }
    }

    /// Starts what waits, while nothing runs; false when the editor is gone.
    async fn dispatch(&mut self) -> bool {
        while self.running.is_none() {
            let Some((work, responder)) = self.queue.pop_front() else {
                return true;
            };
            let command = match work {
                Work::Slash(Slash::Cost) => {
                    let text = commands::cost_text(&self.translator.usage);
                    if !self.say(&text) {
                        return false;
                    }
                    let _ = responder.respond(PromptResponse::new(AcpStop::EndTurn));
                    continue;
                }
                Work::Slash(Slash::Rewind(turn)) => {
                    let text = self.rewind(turn).await;
                    if !self.say(&text) {
                        return false;
                    }
                    let _ = responder.respond(PromptResponse::new(AcpStop::EndTurn));
                    continue;
                }
                Work::Slash(Slash::Compact) => AgentCommand::Compact,
                Work::Prompt(content, data) => AgentCommand::Prompt {
                    content,
                    attachments: Vec::new(),
                    data,
                },
            };
            let compact = matches!(command, AgentCommand::Compact);
            if self.restart || self.child.is_none() {
                self.restart = false;
                if let Some(old) = self.child.take() {
                    stop(old, self.lines.take()).await;
                }
                match self.spawn_loop() {
                    Ok((c, lines)) => {
                        self.child = Some(c);
                        self.lines = Some(lines);
                    }
                    Err(e) => {
                        let _ = responder.respond_with_error(internal(&e));
                        continue;
                    }
                }
            }
            if let Err(e) = self.write(&command).await {
                let _ = responder.respond_with_error(internal(&e));
                continue;
            }
            self.running = Some(Current::new(responder, compact));
        }
        true
    }

    /// Handles a command; false when the session must end.
    async fn command(&mut self, cmd: Cmd) -> bool {
        match cmd {
            Cmd::Prompt(work, responder) => self.queue.push_back((work, responder)),
            Cmd::Cancel => {
                for (_, r) in self.queue.drain(..) {
                    let _ = r.respond(PromptResponse::new(AcpStop::Cancelled));
                }
                // ag-loop counts an unanswered approval as no when
                // interrupted; the editor's requests are withdrawn.
                for (_, h) in self.permissions.drain() {
                    let _ = h.cancel();
                }
                if let Some(cur) = self.running.as_mut()
                    && !cur.cancelled
                {
                    cur.cancelled = true;
                    // A prompt ag-loop already refused has nothing for
                    // the interrupt to end: the sync's echo frees it.
                    let unstarted = !cur.compact && !cur.started;
                    if let Err(e) = self.write(&AgentCommand::Interrupt).await {
                        warn(BIN, &format!("session {}: {e}", self.id));
                    }
                    if unstarted {
                        self.sync().await;
                    }
                }
            }
            Cmd::SetMode(mode) => {
                if mode != self.mode {
                    self.mode = mode;
                    self.restart = true;
                }
            }
            Cmd::Close(_) => return false,
            Cmd::Permission {
                tool_call_id,
                approved,
                always,
            } => {
                // An answer to a request withdrawn (the prompt was
                // cancelled) has nobody waiting for it in ag-loop.
                if self.permissions.remove(&tool_call_id).is_some() {
                    let cmd = AgentCommand::Approval {
                        tool_call_id,
                        approved,
                        always: approved && always,
                    };
                    if let Err(e) = self.write(&cmd).await {
                        warn(BIN, &format!("session {}: {e}", self.id));
                    }
                }
            }
            Cmd::Answer {
                tool_call_id,
                answer,
            } => {
                // Likewise: ag-loop may have moved on (its --ask-timeout,
                // an interrupt).
                if self.permissions.remove(&tool_call_id).is_some() {
                    let cmd = AgentCommand::Answer {
                        tool_call_id,
                        answer,
                    };
                    if let Err(e) = self.write(&cmd).await {
                        warn(BIN, &format!("session {}: {e}", self.id));
                    }
                }
            }
        }
        true
    }

    /// One line of ag-loop's output; false when the editor is gone.
    async fn line(&mut self, bytes: &[u8]) -> bool {
        let record: AgentEventRecord = match serde_json::from_slice(bytes) {
            Ok(r) => r,
            Err(e) => {
                warn(
                    BIN,
                    &format!(
                        "session {}: a line from ag-loop is not an event ({e}): {}",
                        self.id,
                        String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
                    ),
                );
                return true;
            }
        };
        let event = record.event;
        if let AgentEvent::Error { message, .. } = &event
            && refused::is_sync_echo(message)
        {
            // Ours, not the editor's: it answers a prompt ag-loop did not
            // run, or comes after one that ran.
            if let Some(cur) = self.running.take_if(|c| {
                !c.started
                    && c.sync
                        .as_deref()
                        .is_some_and(|id| refused::echoes(message, id))
            }) {
                cur.not_run(None);
            }
            return true;
        }
        for update in self.translator.event(&event, false) {
            if !self.shared.peer.update(&self.id, update) {
                return false;
            }
        }
        match event {
            AgentEvent::AgentStart { .. } => {
                if let Some(cur) = self.running.as_mut() {
                    cur.started = true;
                }
            }
            AgentEvent::AgentEnd {
                outcome,
                error,
                usage,
                ..
            } => {
                if let Some(cur) = self.running.take_if(|c| !c.compact) {
                    if cur.cancelled
                        && let Some(b) = &self.bridge
                    {
                        // The cancelled call's terminal/kill and release
                        // go out before the prompt's answer.
                        b.settled(SETTLE).await;
                    }
                    let ending = if cur.cancelled {
                        Ending::Stop(AcpStop::Cancelled)
                    } else {
                        self.translator.ending(outcome, error.as_deref())
                    };
                    answer(cur.responder, ending, &usage);
                }
                self.permissions.clear();
            }
            AgentEvent::Compaction { .. } => self.compacted(),
            AgentEvent::Error { message, code } => {
                if self.running.as_ref().is_some_and(|c| c.compact) {
                    self.compacted();
                } else {
                    self.error_before_start(message, code).await;
                }
            }
            AgentEvent::ApprovalRequest {
                tool_call_id,
                tool_name,
                arguments,
                reason,
                always,
            } => self.ask(tool_call_id, &tool_name, &arguments, &reason, always),
            AgentEvent::Question {
                tool_call_id,
                question,
                options,
            } => self.question(tool_call_id, &question, options),
            // The call ended without the editor's answer (ag-loop's
            // --ask-timeout, an interrupt): the editor stops asking.
            AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
                if let Some(h) = self.permissions.remove(&tool_call_id) {
                    let _ = h.cancel();
                }
            }
            _ => {}
        }
        true
    }

    /// A `/compact` ended (with its `compaction` or an `error`).
    fn compacted(&mut self) {
        if let Some(cur) = self.running.take_if(|c| c.compact) {
            let stop = if cur.cancelled {
                AcpStop::Cancelled
            } else {
                AcpStop::EndTurn
            };
            let _ = cur.responder.respond(PromptResponse::new(stop));
        }
    }

    /// An `error` event: one before the running prompt started may be its
    /// refusal (see `refused`).
    async fn error_before_start(&mut self, message: String, code: Option<String>) {
        let Some(cur) = self.running.as_mut().filter(|c| !c.started) else {
            return;
        };
        match refused::before_start(code.as_deref()) {
            Before::Warning => {}
            Before::Refused => {
                cur.errors.push(message);
                if let Some(cur) = self.running.take() {
                    cur.not_run(code.as_deref());
                }
            }
            Before::Unsure => {
                cur.errors.push(message);
                self.sync().await;
            }
        }
    }

    /// Writes a sync after the running prompt, once (see `refused`).
    async fn sync(&mut self) {
        if self.running.as_ref().is_none_or(|c| c.sync.is_some()) {
            return;
        }
        self.syncs += 1;
        let id = refused::sync_id(self.syncs);
        if let Err(e) = self.write(&refused::sync_command(&id)).await {
            warn(BIN, &format!("session {}: {e}", self.id));
        }
        if let Some(cur) = self.running.as_mut() {
            cur.sync = Some(id);
        }
    }

    /// Asks the editor a question of the model's (see `questions`): the
    /// answer comes back as a [`Cmd::Answer`]. ag-loop's --ask-timeout
    /// bounds the wait; its end of the call withdraws the request.
    fn question(&mut self, id: String, question: &str, options: Vec<String>) {
        let Some(me) = self.me.upgrade() else { return };
        let cx = &self.shared.peer.cx;
        let session = self.id.clone();
        let answer: std::pin::Pin<Box<dyn Future<Output = String> + Send>> =
            if self.translator.shows().forms {
                let sent = cx.send_request(questions::form(&self.id, &id, question, &options));
                self.permissions
                    .insert(id.clone(), sent.cancellation_handle());
                Box::pin(async move {
                    match sent.block_task().await {
                        Ok(r) => questions::form_answer(&r),
                        Err(e) => {
                            warn(BIN, &format!("session {session}: the question failed: {e}"));
                            String::new()
                        }
                    }
                })
            } else if !options.is_empty() {
                let sent = cx.send_request(questions::choices(&self.id, &id, question, &options));
                self.permissions
                    .insert(id.clone(), sent.cancellation_handle());
                Box::pin(async move {
                    match sent.block_task().await {
                        Ok(r) => questions::choice_answer(&r, &options),
                        Err(e) => {
                            warn(BIN, &format!("session {session}: the question failed: {e}"));
                            String::new()
                        }
                    }
                })
            } else {
                return;
            };
        tokio::spawn(async move {
            let answer = answer.await;
            let _ = me.send(Cmd::Answer {
                tool_call_id: id,
                answer,
            });
        });
    }

    /// Asks the editor whether a call may run; the answer comes back as a
    /// [`Cmd::Permission`]. An editor that does not answer in time is taken
    /// to refuse, as nobody approving refuses in an unattended run.
    fn ask(
        &mut self,
        id: String,
        tool: &str,
        arguments: &Value,
        reason: &str,
        always: Option<String>,
    ) {
        let request = questions::approval(
            &self.id,
            &id,
            tool,
            arguments,
            reason,
            always.as_deref(),
            &self.cwd,
        );
        let sent = self.shared.peer.cx.send_request(request);
        let withdraw = sent.cancellation_handle();
        self.permissions.insert(id.clone(), withdraw.clone());
        let Some(me) = self.me.upgrade() else { return };
        let timeout = self.shared.permission_timeout;
        let session = self.id.clone();
        tokio::spawn(async move {
            let answer = match timeout {
                Some(t) => tokio::time::timeout(t, sent.block_task()).await.ok(),
                None => Some(sent.block_task().await),
            };
            let (approved, always) = match answer {
                Some(Ok(r)) => match r.outcome {
                    RequestPermissionOutcome::Selected(s) => match &*s.option_id.0 {
                        "allow" => (true, false),
                        "always" => (true, true),
                        _ => (false, false),
                    },
                    _ => (false, false),
                },
                Some(Err(e)) => {
                    warn(
                        BIN,
                        &format!("session {session}: the permission request failed: {e}"),
                    );
                    (false, false)
                }
                None => {
                    warn(
                        BIN,
                        &format!(
                            "session {session}: no answer to the permission request for {id} in time; the call is refused"
                        ),
                    );
                    // The editor stops asking.
                    let _ = withdraw.cancel();
                    (false, false)
                }
            };
            let _ = me.send(Cmd::Permission {
                tool_call_id: id,
                approved,
                always,
            });
        });
    }

    /// ag-loop ended by itself (it crashed, or could not start): the prompt
    /// under way fails with what it said; the next prompt starts it again.
    fn child_gone(&mut self, how: String) {
        self.permissions.clear();
        warn(BIN, &format!("session {}: {how}", self.id));
        if let Some(cur) = self.running.take() {
            let ending = if cur.cancelled {
                Ending::Stop(AcpStop::Cancelled)
            } else {
                Ending::Failed(how)
            };
            answer(cur.responder, ending, &Usage::default());
        }
    }

    /// Sends text as the agent's answer; false when the editor is gone.
    fn say(&self, text: &str) -> bool {
        self.shared
            .peer
            .update(&self.id, SessionUpdate::AgentMessageChunk(text_chunk(text)))
    }

    async fn write(&mut self, command: &AgentCommand) -> Result<(), String> {
        let Some(stdin) = self.child.as_mut().and_then(|c| c.stdin.as_mut()) else {
            return Err("ag-loop is not running".into());
        };
        let mut line = serde_json::to_string(command).map_err(|e| e.to_string())?;
        line.push('\n');
        stdin
            .write_all(line.as_bytes())
            .await
            .map_err(|e| format!("cannot write to ag-loop: {e}"))
    }

    /// Starts ag-loop on the session.
    fn spawn_loop(&self) -> Result<(Child, Lines), String> {
        let mut extra: Vec<String> = vec![
            "--session".into(),
            self.ag_id.clone(),
            "--cwd".into(),
            self.cwd.display().to_string(),
        ];
        if let Some(m) = &self.shared.model {
            extra.extend(["-m".to_string(), m.clone()]);
        }
        for spec in &self.mcp.specs {
            extra.extend(["--mcp".to_string(), spec.clone()]);
        }
        extra.extend(questions::ask_timeout(
            self.translator.shows().forms,
            self.shared.permission_timeout,
            &self.shared.loop_args,
        ));
        let editor = self.bridge.as_ref().map(|bridge| {
            let shows = self.translator.shows();
            let tools = self
                .mode
                .tools()
                .or_else(|| crate::agent::named_set("minimal", &[]))
                .unwrap_or_default();
            let tools: Vec<&str> = tools.iter().map(String::as_str).collect();
            let mut which = Vec::new();
            if shows.editor_read {
                which.push(editor_fs::Which::Read);
            }
            if shows.editor_write {
                which.push(editor_fs::Which::Write);
            }
            if shows.editor_read && shows.editor_write {
                which.push(editor_fs::Which::Edit);
            }
            if shows.editor_terminal {
                which.push(editor_fs::Which::Bash);
            }
            editor_fs::loop_flags(&tools, &which, bridge, &self.id)
        });
        extra.extend(self.mode.loop_flags(&sibling("ag-gate"), editor.is_some()));
        extra.extend(editor.unwrap_or_default());
        extra.extend(self.shared.loop_args.iter().cloned());
        let cmd = crate::proc::loop_command(self.shared.loop_cmd.as_deref(), &extra);
        let limits = LineLimits {
            max_line: 16 << 20,
            max_total: None,
            stderr: CaptureLimit::new(64 << 10),
        };
        // Its own process group (as every child), but not a session of
        // its own: a new session is a new scheduling autogroup on Linux,
        // and on a busy machine its wake-ups then wait for their share
        // (milliseconds between a prompt and ag-loop reading it).
        let cmd = match &self.mcp.headers {
            Some(h) => cmd.env(crate::mcp::headers::ENV, h),
            None => cmd,
        };
        let cmd = match &self.mcp.env {
            Some(v) => cmd.env(crate::mcp::env::ENV, v),
            None => cmd,
        };
        let s = cmd
            .cwd(&self.cwd)
            .stdin(Input::Pipe)
            .stream_lines(limits, &CancellationToken::new())
            .map_err(|e| format!("cannot start ag-loop: {e}"))?;
        if let Some(b) = &self.bridge {
            b.set_loop_pid(s.running.pid());
        }
        Ok((
            Child {
                stdin: s.stdin,
                running: s.running,
            },
            s.lines,
        ))
    }

    /// `/rewind`: the files and the conversation back to before a turn
    /// (by default the first turn of the last prompt), through
    /// `ag-session rewind`, which forks the conversation; ag-loop goes on
    /// in the fork. What to tell the person.
    async fn rewind(&mut self, turn: Option<u64>) -> String {
        let Some(turn) = turn.or(self.translator.prompt_turn) else {
            return "Nothing to rewind yet: no prompt has run in this session.".into();
        };
        if let Some(old) = self.child.take() {
            stop(old, self.lines.take()).await;
        }
        let out = Command::new(sibling("ag-session"))
            .args(["rewind", &self.ag_id, "--turn", &turn.to_string()])
            .cwd(&self.cwd)
            .timeout(Duration::from_secs(120))
            .output(Output::Separate {
                stdout: CaptureLimit::new(64 << 10),
                stderr: CaptureLimit::new(64 << 10),
            })
            .collect(&CancellationToken::new())
            .await;
        match out {
            Ok(o) if o.code() == 0 => {
                let new = o.stdout.lossy().trim().to_string();
                if new.is_empty() {
                    return "ag-session rewind printed no session id; nothing was changed here."
                        .into();
                }
                self.ag_id = new.clone();
                self.translator.turns = turn.saturating_sub(1);
                self.translator.prompt_turn = None;
                format!(
                    "Rewound to before turn {turn}: the files are as they were then, and the conversation goes on from there (ag session {new}). The messages above it are no longer part of it."
                )
            }
            Ok(o) => format!(
                "Cannot rewind to before turn {turn}: {}",
                o.stderr.lossy().trim()
            ),
            Err(e) => format!("Cannot run ag-session: {e}"),
        }
    }

    /// Ends the session: what waits and what runs is answered as
    /// cancelled, and ag-loop is stopped.
    async fn close(&mut self) {
        for (_, r) in self.queue.drain(..) {
            let _ = r.respond(PromptResponse::new(AcpStop::Cancelled));
        }
        for (_, h) in self.permissions.drain() {
            let _ = h.cancel();
        }
        if let Some(cur) = self.running.take() {
            let _ = cur
                .responder
                .respond(PromptResponse::new(AcpStop::Cancelled));
        }
        if let Some(c) = self.child.take() {
            stop(c, self.lines.take()).await;
        }
    }
}

/// The next line of ag-loop once the editor has room for more.
async fn next_line(outbox: &Outbox, lines: Option<&mut Lines>) -> Option<crate::proc::Line> {
    let Some(lines) = lines else {
        return std::future::pending().await;
    };
    outbox.room().await;
    lines.next().await
}

/// How ag-loop ended, with the end of its stderr.
async fn child_end(child: Option<&Child>) -> String {
    let Some(c) = child else {
        return std::future::pending().await;
    };
    match c.running.wait().await {
        Ok(o) => {
            let mut s = match o.signal() {
                Some(n) => format!("ag-loop was killed by signal {n}"),
                None => format!("ag-loop exited with status {}", o.code()),
            };
            let err = o.stderr.lossy();
            let tail: Vec<&str> = err.lines().rev().take(12).collect();
            for l in tail.into_iter().rev() {
                s.push('\n');
                s.push_str(l);
            }
            s
        }
        Err(e) => format!("ag-loop ended: {e}"),
    }
}

/// `ag-session fork`: a new ag session holding the conversation of `id`;
/// its id.
pub async fn fork(id: &str, cwd: &Path) -> Result<String, String> {
    let out = Command::new(sibling("ag-session"))
        .args(["fork", id])
        .cwd(cwd)
        .timeout(Duration::from_secs(120))
        .output(Output::Separate {
            stdout: CaptureLimit::new(64 << 10),
            stderr: CaptureLimit::new(64 << 10),
        })
        .collect(&CancellationToken::new())
        .await
        .map_err(|e| format!("cannot run ag-session: {e}"))?;
    if out.code() != 0 {
        return Err(format!(
            "cannot fork session `{id}`: {}",
            out.stderr.lossy().trim()
        ));
    }
    let printed = out.stdout.lossy();
    match printed.split('\t').next().map(str::trim) {
        Some(new) if !new.is_empty() => Ok(new.to_string()),
        _ => Err(format!("ag-session fork printed no session id for `{id}`")),
    }
}

/// Ends an ag-loop: stdin closed (its way to finish), then stopped if it
/// lingers.
async fn stop(child: Child, lines: Option<Lines>) {
    drop(child.stdin);
    drop(lines);
    let _ = child.running.finish(Duration::from_secs(2)).await;
}

/// Answers a prompt. The run's tokens and cost go in `_meta` (ACP's
/// answer has no stable place for them).
fn answer(responder: Box<Responder<PromptResponse>>, ending: Ending, usage: &Usage) {
    match ending {
        Ending::Stop(stop) => {
            let meta = json!({"ag": {"usage": usage}});
            let meta = meta.as_object().cloned();
            let _ = responder.respond(PromptResponse::new(stop).meta(meta));
        }
        Ending::Failed(message) => {
            let _ = responder.respond_with_error(internal(&message));
        }
    }
}

fn internal(message: &str) -> Error {
    Error::new(ErrorCode::INTERNAL_ERROR, message.to_string())
}
