//! One prompt's run: turns of a streamed model call and the tool calls it
//! asks for, until the model answers without tools, a limit is reached or
//! the user interrupts. Events come out in the order of seed 002's loop.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::control::Control;
use super::model::ModelClient;
use super::window;
use crate::agent::calls::gates::{Gates, Verdict};
use crate::agent::calls::repeats::FailureGuard;
use crate::agent::calls::toolset::{CallEnv, ToolSet, cap_output};
use crate::agent::events::emit::Emitter;
use crate::agent::setup::args::CompactMode;
use crate::agent::setup::output_schema::Judgement;
use crate::agent::setup::until::CheckVerdict;
use crate::protocol::{
    AfterRequest, AgentEvent, AssistantMessage, ContentBlock, GateRequest, LlmRequest, Message,
    Outcome, Reasoning, StopReason, ToolChoice, ToolResult, ToolResultMessage, Usage, UserContent,
    Work,
};
use crate::tool_protocol::exec::error_result;
use crate::tool_protocol::exec::interrupted_result;
use crate::tool_protocol::hashes::FileHashes;
use crate::tools::offer;

/// Settings of a run.
pub struct AgentSettings {
    /// The agent identity answering, by the name `--agent` takes.
    pub agent: Option<String>,
    /// `provider/model`.
    pub model: String,
    /// The system prompt.
    pub system: String,
    /// Reasoning effort.
    pub reasoning: Option<Reasoning>,
    /// The tool set as asked for (`None`: the default), for `settings`
    /// events.
    pub tool_set: Option<Vec<String>>,
    /// Output token limit per call.
    pub max_tokens: Option<u64>,
    /// Sampling temperature of every call (`None`: the provider's).
    pub temperature: Option<f64>,
    /// Model calls per prompt before stopping.
    pub max_turns: u32,
    /// Stop once a prompt has cost this many dollars.
    pub max_cost: Option<f64>,
    /// Run a message's tool calls one after another instead of together.
    pub sequential: bool,
    /// What a gate would have asked about, with nobody to ask, is refused.
    pub refuse_unasked: bool,
    /// Failed tool calls in a row that stop a prompt's run (0: no limit).
    pub max_failed_calls: u32,
    /// The working directory of tool calls.
    pub cwd: PathBuf,
    /// Environment given to tools (`AG_SESSION_ID`, `AG_SESSION_DIR`).
    pub tool_env: Vec<(String, String)>,
    /// The model's context window in tokens, when known.
    pub context_window: Option<u64>,
    /// How to shorten the conversation when it nears the window.
    pub compact: CompactMode,
    /// Gates before and hooks after every tool call.
    pub gates: Gates,
    /// Approvals are asked on the terminal (else by `approval` commands on stdin).
    pub interactive: bool,
    /// A client on stdin answers approvals, so the gates may ask.
    pub approve_on_stdin: bool,
    /// The session's id, for gates.
    pub session_id: Option<String>,
    // The sandbox (issue 19).
    /// What confines every tool call, when the sandbox is on.
    pub sandbox: Option<Arc<crate::agent::calls::sandbox::LoopSandbox>>,
    // Structured output (--output-schema).
    /// The schema the final answer must match, and the retries allowed.
    pub output: Option<crate::agent::setup::output_schema::OutputSpec>,
    // Checkpoints (issue 20).
    /// Records the working tree before turns that may change it.
    pub checkpoints: super::checkpoint_ledger::CheckpointState,
    // Questions and attachments (issue 31).
    /// Who answers the model's questions (the `ask` tool).
    pub questions: Arc<crate::agent::calls::ask::Questions>,
    /// Where attached files are looked for: this machine's working
    /// directory, also when the tools run in another workspace.
    pub attach_dir: PathBuf,
    // Runs that end when a check passes (issue 35).
    /// The `--until` command and the stop hooks a final answer must pass.
    pub checks: crate::agent::setup::until::StopChecks,
    /// The budget this run shares with the other agents of its tree (its
    /// subagents and the agents above it), when it is in one.
    pub tree: Option<Arc<crate::agent::delegation::tree_budget::Tree>>,
    /// Whether a prompt's first model call must be a tool call
    /// (`--first-call`); `None`: only for a small context window (see
    /// [`AgentSettings::first_call_required`]).
    pub first_call: Option<ToolChoice>,
    /// Whether a prompt carries the project's files, the changes not yet
    /// committed and the files it names (`--show-context`); `None`: only
    /// for a small context window (see [`AgentSettings::shows_context`]).
    pub show_context: Option<bool>,
    /// Whether the tools' definitions show all their parameters
    /// (`--tool-params`); `None`: the default (see
    /// [`AgentSettings::shows_all_params`]).
    pub all_params: Option<bool>,
    /// Without a session, a directory of the run's own for its task list
    /// (`AG_TODO_FILE`), removed when the run ends.
    pub scratch: Option<tempfile::TempDir>,
}

impl AgentSettings {
    /// Whether a prompt's first model call asks for a tool call. By default
    /// only for a model with a small context window (the size local
    /// servers give small models, as for the small tool set): measured on
    /// such a model, its first answer was otherwise often a claim of work
    /// it had not done (docs/models.md). A question still gets its answer
    /// after the one call, from the next request, which is free.
    pub fn first_call_required(&self) -> bool {
        match self.first_call {
            Some(choice) => choice == ToolChoice::Required,
            None => self
                .context_window
                .is_some_and(|w| w <= crate::agent::config::named_sets::SMALL_CONTEXT),
        }
    }

    /// Whether a prompt carries the project's files, the changes not yet
    /// committed and the files it names. By default only for a model with
    /// a small context window, as for the first call: measured on such a
    /// model, 22 of 48 first calls of a task were edits of a file it had
    /// never read, whose text it made up (docs/models.md).
    pub fn shows_context(&self) -> bool {
        self.show_context.unwrap_or_else(|| {
            self.context_window
                .is_some_and(|w| w <= crate::agent::config::named_sets::SMALL_CONTEXT)
        })
    }

    /// Whether the tools' definitions show every parameter, or only those
    /// a call needs (see [`crate::agent::calls::params`]). By default all.
    pub fn shows_all_params(&self) -> bool {
        self.all_params.unwrap_or(true)
    }

    /// True when a person can answer an approval request, on the terminal
    /// or through a client on stdin; the gates may ask only then.
    pub fn someone_answers(&self) -> bool {
        self.interactive || self.approve_on_stdin
    }
}

/// The agent: settings, the conversation so far and where events go.
pub struct Agent {
    /// Settings.
    pub settings: AgentSettings,
    /// The model.
    pub model: ModelClient,
    /// The tools.
    pub tools: Arc<ToolSet>,
    /// The whole conversation.
    pub messages: Vec<Message>,
    /// Where events go.
    pub emitter: Emitter,
    hashes: FileHashes,
    /// Failing calls counted over the current prompt.
    guard: FailureGuard,
    /// The next prompt's own words, kept by `attach` before it added
    /// blocks: a prompt of attached files alone has none.
    pub(in crate::agent) own_words: Option<String>,
    /// The current prompt's own words (see [`crate::agent::calls::request_words`]).
    request: String,
    /// ag's own notes to the model this prompt (`calls/echo.rs`).
    notes_given: Vec<String>,
    /// The lines naming the current prompt's attachments (`calls/echo.rs`).
    attached: Vec<String>,
    /// Tools the person approved for the rest of the run ("always").
    pub(in crate::agent) always: Vec<String>,
    /// How `@NAME` prompts find their identity's profile.
    pub(in crate::agent) router: Option<super::profile::Router>,
    /// A call of the prompt under way was denied by a gate or a person:
    /// its answer then goes to them as it is (see evidence.rs).
    pub(in crate::agent) denied: bool,
    /// A call whose arguments looped (see stuck_text.rs): whether calls
    /// are still watched in the prompt under way (one is stopped at most,
    /// as a file's content may repeat on purpose), and what the model is
    /// told of the call that was stopped, before its next turn.
    watch_calls: bool,
    stopped_call: Option<String>,
}

/// How a prompt ended, for the exit status.
#[derive(Debug, Clone)]
pub struct RunEnd {
    /// The outcome.
    pub outcome: Outcome,
    /// The reason when it did not finish.
    pub error: Option<String>,
    /// Steering messages that came too late for the run (after its last
    /// turn, or when it ended early): the caller runs them as the next
    /// prompts.
    pub steers: Vec<UserContent>,
    /// What the run did, as `agent_end` says it.
    pub work: Work,
}

impl RunEnd {
    fn new(outcome: Outcome, error: Option<String>) -> RunEnd {
        RunEnd {
            outcome,
            error,
            steers: Vec::new(),
            work: Work::default(),
        }
    }

    /// Whether the run did what was asked of it as far as ag can tell:
    /// the exit status of ag-loop. A run stopped for repeating a call that
    /// had succeeded kept its work, and counts as done when it changed
    /// files.
    pub fn succeeded(&self) -> bool {
        match self.outcome {
            Outcome::Finished => true,
            Outcome::RepeatedCall => !self.work.changed.is_empty() || self.work.more_changed > 0,
            _ => false,
        }
    }
}

/// A tool call as its stream began.
#[derive(Debug, Clone)]
struct CallId {
    id: String,
    name: String,
}

pub(in crate::agent) struct Turns {
    pub(in crate::agent) new: Vec<Message>,
    pub(in crate::agent) usage: Usage,
    /// Model calls made so far (what is left goes to subagents).
    pub(in crate::agent) turn: u32,
}

impl Agent {
    /// An agent over a conversation (empty, or loaded from a session).
    pub fn new(
        settings: AgentSettings,
        model: ModelClient,
        tools: Arc<ToolSet>,
        messages: Vec<Message>,
        emitter: Emitter,
    ) -> Self {
        Agent {
            guard: FailureGuard::new(settings.max_failed_calls),
            own_words: None,
            request: String::new(),
            attached: Vec::new(),
            notes_given: Vec::new(),
            settings,
            model,
            tools,
            messages,
            emitter,
            hashes: FileHashes::default(),
            always: Vec::new(),
            router: None,
            denied: false,
            watch_calls: true,
            stopped_call: None,
        }
    }

    /// Lets `@NAME` prompts be answered by the identity NAME.
    pub fn with_router(mut self, router: super::profile::Router) -> Self {
        self.router = Some(router);
        self
    }

    fn push(&mut self, turns: &mut Turns, message: Message) -> io::Result<()> {
        self.emitter.emit(AgentEvent::MessageStart {
            message: message.clone(),
        })?;
        self.emitter.emit(AgentEvent::MessageEnd {
            message: message.clone(),
        })?;
        self.messages.push(message.clone());
        turns.new.push(message);
        Ok(())
    }

    /// Leaves the last answer, just ended, out of the conversation (the
    /// session file keeps it, with the `withdrawn` event that a resumed
    /// session reads), so that the same request goes to the model again.
    fn withdraw(&mut self, turns: &mut Turns) -> io::Result<()> {
        if !matches!(self.messages.last(), Some(Message::Assistant(_))) {
            return Ok(());
        }
        self.messages.pop();
        if matches!(turns.new.last(), Some(Message::Assistant(_))) {
            turns.new.pop();
        }
        self.emitter.emit(AgentEvent::Withdrawn {
            reason: super::evidence::WITHDRAWN.into(),
        })
    }

    /// Runs one prompt to its end.
    pub async fn prompt(&mut self, content: UserContent, control: &Control) -> io::Result<RunEnd> {
        let cancel = control.begin();
        let result = self.run(content, control, &cancel).await;
        let steers = control.end();
        result.map(|mut end| {
            end.steers = steers;
            end
        })
    }

    /// Runs one prompt to its end as `profile` (an `@NAME` prompt's
    /// identity), then goes back to the run's own.
    pub async fn prompt_as(
        &mut self,
        profile: Option<super::profile::Profile>,
        content: UserContent,
        control: &Control,
    ) -> io::Result<RunEnd> {
        let Some(profile) = profile else {
            return self.prompt(content, control).await;
        };
        let own = self.swap_profile(profile);
        let result = self.prompt(content, control).await;
        self.swap_profile(own);
        result
    }

    async fn run(
        &mut self,
        content: UserContent,
        control: &Control,
        cancel: &CancellationToken,
    ) -> io::Result<RunEnd> {
        self.emitter.emit(AgentEvent::AgentStart {
            session_id: self.settings.session_id.clone(),
            agent: self.settings.agent.clone(),
        })?;
        let own_words = self.own_words.take().unwrap_or_else(|| {
            content
                .texts()
                .first()
                .copied()
                .unwrap_or_default()
                .to_string()
        });
        self.guard.begin(&own_words);
        self.request = own_words;
        self.attached = crate::attach::headers(&content);
        self.notes_given.clear();
        self.denied = false;
        self.watch_calls = true;
        self.stopped_call = None;
        self.settings.checkpoints.prompt = Default::default();
        self.model.forget_silence();
        if let Some(tree) = &self.settings.tree {
            // Without its ledger the subagents would go unbounded: say so.
            if let Err(e) = tree.start_prompt(self.settings.max_turns, self.settings.max_cost) {
                self.emitter.emit(AgentEvent::error(format!(
                    "the ledger of this run's agent tree cannot be written ({e}); its subagents' turns and cost are not counted against --max-turns and --max-cost"
                )))?;
            }
        }
        let mut turns = Turns {
            new: Vec::new(),
            usage: Usage::default(),
            turn: 0,
        };
        self.push(
            &mut turns,
            Message::User {
                content: self.scrub_prompt(content),
                timestamp: Some(crate::session::now()),
            },
        )?;
        let mut turn = 0u32;
        let mut overflow_retried = false;
        // Structured output: the valid answer, and the wrong ones so far.
        let (mut output, mut wrong_answers) = (None, 0u32);
        // Checks of the final answer made so far (--until, --stop).
        let mut checks_made = 0u32;
        // Whether an answer was sent back for changes that did not land.
        let mut sent_back_unlanded = false;
        // Whether a first answer without a call was sent back.
        let mut sent_back_no_call = false;
        // Whether the next model call is the prompt's first request, and
        // whether a first answer without a call was withdrawn and the
        // request asked again.
        let (mut first_request, mut asked_again) = (true, false);
        let end = loop {
            if cancel.is_cancelled() {
                self.emitter.emit(AgentEvent::Interrupted)?;
                break RunEnd::new(Outcome::Interrupted, None);
            }
            if let Some(end) = self.limit_reached(turn, &turns) {
                break end;
            }
            if let Some(tree) = &self.settings.tree
                && let Err(out) = tree.take_turn()
            {
                break self.tree_out_of_turns(&out);
            }
            turn += 1;
            // Steering that arrived since the last model call (during the
            // tools, or before the first call) goes with the next one.
            self.deliver_steering(&mut turns, control)?;
            if let Some(window) = self.settings.context_window.filter(|w| *w > 0)
                && window::estimate_tokens(&self.messages) as f64
                    > window as f64 * window::THRESHOLD
            {
                self.compact(window, &mut turns, cancel).await?;
            }
            self.emitter.emit(AgentEvent::TurnStart)?;
            self.note_turn_start();
            let was_first = std::mem::replace(&mut first_request, false);
            let assistant = self.model_call(was_first, cancel).await?;
            if let Some(tree) = &self.settings.tree {
                tree.spend(assistant.usage.cost.total);
            }
            turns.usage.add(&assistant.usage);
            let message = Message::Assistant(assistant.clone());
            self.messages.push(message.clone());
            turns.new.push(message.clone());
            self.emitter.emit(AgentEvent::MessageEnd { message })?;

            match assistant.stop_reason {
                StopReason::Error
                    if !overflow_retried
                        && assistant.content.is_empty()
                        && assistant
                            .error_message
                            .as_deref()
                            .is_some_and(window::is_overflow) =>
                {
                    // One compaction and a retry instead of ending the run.
                    overflow_retried = true;
                    self.emitter.emit(AgentEvent::TurnEnd {
                        message: assistant.clone(),
                        tool_results: Vec::new(),
                    })?;
                    let window = self
                        .settings
                        .context_window
                        .filter(|w| *w > 0)
                        .unwrap_or_else(|| window::estimate_tokens(&self.messages));
                    self.compact(window, &mut turns, cancel).await?;
                    turn -= 1;
                    first_request = was_first;
                    continue;
                }
                StopReason::Error | StopReason::Refusal => {
                    self.emitter.emit(AgentEvent::TurnEnd {
                        message: assistant.clone(),
                        tool_results: Vec::new(),
                    })?;
                    break RunEnd::new(
                        Outcome::ModelError,
                        assistant
                            .error_message
                            .clone()
                            .or_else(|| Some("the model call failed".into())),
                    );
                }
                StopReason::Aborted => {
                    // Keep the conversation valid: every call gets a result.
                    let results = self.answer_unrun(&mut turns, &assistant)?;
                    self.emitter.emit(AgentEvent::TurnEnd {
                        message: assistant.clone(),
                        tool_results: results,
                    })?;
                    self.emitter.emit(AgentEvent::Interrupted)?;
                    break RunEnd::new(Outcome::Interrupted, None);
                }
                _ => {}
            }
            let calls: Vec<(String, String, Value)> = assistant
                .tool_calls()
                .map(|(id, name, args)| (id.to_string(), name.to_string(), args.clone()))
                .collect();
            if calls.is_empty() {
                self.emitter.emit(AgentEvent::TurnEnd {
                    message: assistant.clone(),
                    tool_results: Vec::new(),
                })?;
                // A call stopped in a loop is no answer: the model is told
                // and goes on (the limits still stop it at the loop's top).
                if self.tell_stopped_call(&mut turns)? {
                    continue;
                }
                // The first answer was asked to be a call, and a server
                // that cannot enforce `tool_choice` (llama.cpp with a chat
                // template whose calls it parses but cannot constrain)
                // answered in text. It is withdrawn and the same request
                // asked again, once: a claim left in the conversation is
                // what a small model holds to. A second such answer goes
                // back, as the server should have refused it (see
                // evidence.rs).
                if was_first
                    && !asked_again
                    && self.settings.first_call_required()
                    && self.limit_reached(turn, &turns).is_none()
                {
                    asked_again = true;
                    first_request = true;
                    self.withdraw(&mut turns)?;
                    continue;
                }
                if was_first
                    && !sent_back_no_call
                    && self.settings.first_call_required()
                    && self.limit_reached(turn, &turns).is_none()
                {
                    sent_back_no_call = true;
                    let back = Message::User {
                        content: UserContent::Text(super::evidence::NO_CALL_YET.into()),
                        timestamp: Some(crate::session::now()),
                    };
                    self.push(&mut turns, back)?;
                    continue;
                }
                // An answer after attempts to change files that all failed,
                // or after bash commands that would have written files
                // when the checkpoints show none changed, goes back once,
                // with what failed (see evidence.rs).
                let unlanded = if !sent_back_unlanded
                    && !self.denied
                    && self.limit_reached(turn, &turns).is_none()
                {
                    match super::evidence::unlanded_changes(&turns.new) {
                        Some(s) => Some(s),
                        None => self.writes_without_change(&turns.new).await?,
                    }
                } else {
                    None
                };
                if let Some(statement) = unlanded {
                    sent_back_unlanded = true;
                    let back = Message::User {
                        content: UserContent::Text(statement),
                        timestamp: Some(crate::session::now()),
                    };
                    self.push(&mut turns, back)?;
                    continue;
                }
                if let Some(spec) = &self.settings.output {
                    match spec.judge(&assistant.text(), wrong_answers) {
                        Judgement::Valid(value) => output = Some(value),
                        Judgement::Retry(problems) => {
                            wrong_answers += 1;
                            let retry = Message::User {
                                content: UserContent::Text(problems),
                                timestamp: Some(crate::session::now()),
                            };
                            self.push(&mut turns, retry)?;
                            continue;
                        }
                        Judgement::Invalid(reason) => {
                            break RunEnd::new(Outcome::InvalidOutput, Some(reason));
                        }
                    }
                }
                // A steer sent while the model wrote this answer gets one
                // more turn, when the limits allow one; otherwise the
                // caller runs it as the next prompt.
                if control.has_steering() && self.limit_reached(turn, &turns).is_none() {
                    continue;
                }
                if self.settings.checks.active() {
                    checks_made += 1;
                    let verdict = self
                        .run_checks(&assistant.text(), checks_made, cancel)
                        .await?;
                    match verdict {
                        CheckVerdict::Pass => {}
                        CheckVerdict::Interrupted => {
                            self.emitter.emit(AgentEvent::Interrupted)?;
                            break RunEnd::new(Outcome::Interrupted, None);
                        }
                        CheckVerdict::CannotRun(why) => {
                            output = None;
                            break RunEnd::new(Outcome::CheckFailed, Some(why));
                        }
                        CheckVerdict::SendBack { prompt, failure } => {
                            let tries = self.settings.checks.config.tries;
                            if checks_made >= tries {
                                output = None;
                                break RunEnd::new(
                                    Outcome::CheckFailed,
                                    Some(format!(
                                        "{failure} on the last of {tries} checks (--until-tries); continue the session to go on, with a higher --until-tries if need be"
                                    )),
                                );
                            }
                            // The model goes back to work: --max-turns and
                            // --max-cost still stop it at the loop's top.
                            output = None;
                            let back = Message::User {
                                content: UserContent::Text(prompt),
                                timestamp: Some(crate::session::now()),
                            };
                            self.push(&mut turns, back)?;
                            continue;
                        }
                    }
                }
                break RunEnd::new(Outcome::Finished, None);
            }
            self.checkpoint_before_tools(&calls).await?;
            turns.turn = turn;
            let results = self.run_tools(&mut turns, calls, control, cancel).await?;
            self.emitter.emit(AgentEvent::TurnEnd {
                message: assistant.clone(),
                tool_results: results,
            })?;
            self.tell_stopped_call(&mut turns)?;
            self.guard.end_answer();
            if cancel.is_cancelled() {
                self.emitter.emit(AgentEvent::Interrupted)?;
                break RunEnd::new(Outcome::Interrupted, None);
            }
            if let Some(stop) = self.guard.stop() {
                break RunEnd::new(stop.outcome(), Some(stop.reason()));
            }
        };
        self.checkpoint_at_end().await?;
        let mut end = end;
        end.work = self.emitter.work();
        self.emitter.emit(AgentEvent::AgentEnd {
            messages: turns.new,
            outcome: end.outcome,
            usage: turns.usage,
            error: end.error.clone(),
            output,
            work: Some(end.work.clone()),
        })?;
        Ok(end)
    }

    /// How the run ends when another turn would pass `--max-turns` or
    /// `--max-cost`; `None` while one is allowed.
    fn limit_reached(&self, turn: u32, turns: &Turns) -> Option<RunEnd> {
        if turn >= self.settings.max_turns {
            return Some(RunEnd::new(
                Outcome::TurnLimit,
                Some(format!(
                    "stopped after {} turns (--max-turns); run again with a higher limit or continue the session",
                    self.settings.max_turns
                )),
            ));
        }
        if let Some(out) = self.settings.tree.as_ref().and_then(|t| t.out_of_turns()) {
            return Some(self.tree_out_of_turns(&out));
        }
        if let Some(limit) = self.settings.max_cost
            && turns.usage.cost.total >= limit
        {
            return Some(RunEnd::new(
                Outcome::CostLimit,
                Some(format!(
                    "stopped at ${:.4}, past --max-cost ${limit}",
                    turns.usage.cost.total
                )),
            ));
        }
        None
    }

    /// How the run ends when the tree's ledgers have no turn or no money
    /// left for it: its own (spent with its subagents') or one above.
    fn tree_out_of_turns(&self, out: &crate::agent::delegation::tree_budget::OutOfTurns) -> RunEnd {
        let root = self.settings.tree.as_ref().is_some_and(|t| t.is_root());
        if out.cost {
            let why = if out.own || root {
                format!(
                    "stopped at --max-cost ${}, its subagents' cost included; run again with a higher limit or continue the session",
                    self.settings.max_cost.unwrap_or_default()
                )
            } else {
                "stopped: nothing is left of the --max-cost of the agents above this one (the whole tree of agents counts against it)".to_string()
            };
            return RunEnd::new(Outcome::CostLimit, Some(why));
        }
        let why = if out.own || root {
            format!(
                "stopped after {} turns (--max-turns), its subagents' turns included; run again with a higher limit or continue the session",
                self.settings.max_turns
            )
        } else {
            "stopped: no turns are left of the --max-turns of the agents above this one (the whole tree of agents counts against it)".to_string()
        };
        RunEnd::new(Outcome::TurnLimit, Some(why))
    }

    /// Adds the queued steering messages to the conversation, each as a
    /// user message; an empty one is reported and left out.
    fn deliver_steering(&mut self, turns: &mut Turns, control: &Control) -> io::Result<()> {
        for steer in control.take_steering() {
            if steer.is_blank() {
                self.emitter.emit(AgentEvent::error(
                    "an empty steer was skipped: its content has no text and no image",
                ))?;
                continue;
            }
            let content = self.scrub_prompt(steer);
            self.push(
                turns,
                Message::User {
                    content,
                    timestamp: Some(crate::session::now()),
                },
            )?;
        }
        Ok(())
    }

    /// One streamed model call; the `first` of a prompt may have to be a
    /// tool call (see [`AgentSettings::first_call_required`]).
    async fn model_call(
        &mut self,
        first: bool,
        cancel: &CancellationToken,
    ) -> io::Result<AssistantMessage> {
        let request = LlmRequest {
            model: self.settings.model.clone(),
            system: Some(self.settings.system.clone()),
            messages: self.messages.clone(),
            tools: self.tools.definitions(self.settings.shows_all_params()),
            reasoning: self.settings.reasoning,
            max_tokens: self.settings.max_tokens,
            temperature: self.settings.temperature,
            base_url: None,
            output_schema: self
                .settings
                .output
                .as_ref()
                .map(|o| o.schema.schema.clone()),
            tool_choice: (first && self.settings.first_call_required())
                .then_some(ToolChoice::Required),
        };
        self.emitter.emit(AgentEvent::MessageStart {
            message: Message::Assistant(AssistantMessage {
                model: Some(self.settings.model.clone()),
                ..Default::default()
            }),
        })?;
        let mut emit_error: Option<io::Error> = None;
        let emitter = &mut self.emitter;
        // Text stuck in a loop stops the call (see stuck_text.rs); the
        // caller's cancel still stops it as an interruption.
        let stop = cancel.child_token();
        let mut watcher = (0usize, super::stuck_text::Watcher::default());
        let mut stuck: Option<(usize, super::stuck_text::Loop)> = None;
        // So is a call whose arguments loop, once a prompt.
        let watch_calls = self.watch_calls;
        let mut call_watcher: Option<(usize, CallId, super::stuck_text::Watcher)> = None;
        // The call stopped, its loop, and whether its end came all the same.
        let mut stuck_call: Option<(usize, CallId, super::stuck_text::Loop, bool)> = None;
        // A first answer that must be a call and is long text without one
        // will go back whatever it says: it is stopped rather than read to
        // its end (see evidence.rs).
        let must_call = request.tool_choice == Some(ToolChoice::Required);
        let (mut text_bytes, mut called, mut overlong) = (0usize, false, false);
        // The same call again and again in one answer stops it
        // (copied_calls.rs).
        let mut completed = super::copied_calls::Counter::default();
        let mut repeated: Option<(String, usize)> = None;
        let mut sink = |event: crate::protocol::LlmEvent| {
            // The final message is carried by message_end.
            if matches!(
                event,
                crate::protocol::LlmEvent::Done { .. } | crate::protocol::LlmEvent::Error { .. }
            ) {
                return;
            }
            if let crate::protocol::LlmEvent::TextDelta { index, delta } = &event
                && stuck.is_none()
            {
                if watcher.0 != *index {
                    watcher = (*index, super::stuck_text::Watcher::default());
                }
                if let Some(found) = watcher.1.push(delta) {
                    stuck = Some((*index, found));
                    stop.cancel();
                }
                text_bytes += delta.len();
                if must_call
                    && !called
                    && !overlong
                    && text_bytes > super::evidence::FIRST_TEXT_LIMIT
                {
                    overlong = true;
                    stop.cancel();
                }
            }
            match &event {
                crate::protocol::LlmEvent::ToolCallStart { index, id, name } => {
                    called = true;
                    if watch_calls {
                        let call = CallId {
                            id: id.clone(),
                            name: name.clone(),
                        };
                        call_watcher =
                            Some((*index, call, super::stuck_text::Watcher::arguments()));
                    }
                }
                crate::protocol::LlmEvent::ToolCallDelta { index, delta }
                    if stuck.is_none() && stuck_call.is_none() =>
                {
                    if let Some((at, call, w)) = &mut call_watcher
                        && at == index
                        && let Some(found) = w.push(delta)
                    {
                        stuck_call = Some((*at, call.clone(), found, false));
                        stop.cancel();
                    }
                }
                crate::protocol::LlmEvent::ToolCallEnd {
                    index,
                    name,
                    arguments,
                    ..
                } => {
                    if let Some((at, _, _, ended)) = &mut stuck_call
                        && at == index
                    {
                        *ended = true;
                    }
                    let count = completed.push(name, arguments);
                    if count >= super::copied_calls::STOP_AT && repeated.is_none() {
                        repeated = Some((name.clone(), count));
                        stop.cancel();
                    }
                }
                _ => {}
            }
            if emit_error.is_none()
                && let Err(e) = emitter.emit(AgentEvent::MessageUpdate { event })
            {
                emit_error = Some(e);
            }
        };
        let mut message = self.model.stream(&request, &mut sink, &stop).await;
        if let Some(e) = emit_error {
            return Err(e);
        }
        if let Some((index, found)) = stuck
            && !cancel.is_cancelled()
        {
            self.cut_stuck_text(&mut message, index, found)?;
        } else if let Some((_, call, found, ended)) = stuck_call
            && !cancel.is_cancelled()
        {
            self.stop_looping_call(&mut message, &call, found, ended)?;
        } else if let Some((name, copies)) = repeated
            && !cancel.is_cancelled()
        {
            self.drop_repeated_calls(&mut message, &name, copies)?;
        } else if overlong && !cancel.is_cancelled() {
            message.stop_reason = StopReason::Length;
            message.error_message = None;
            self.emitter.emit(AgentEvent::Note {
                message: format!(
                    "the first answer, asked to be a tool call, ran past {} bytes of text without one: the call was stopped there",
                    super::evidence::FIRST_TEXT_LIMIT
                ),
                tool_call_id: None,
            })?;
        }
        if message.timestamp.is_none() {
            message.timestamp = Some(crate::session::now());
        }
        Ok(message)
    }

    /// A message whose text was stopped in a loop: cut after the second
    /// copy and ended as if by the output limit, with a note that says so.
    fn cut_stuck_text(
        &mut self,
        message: &mut AssistantMessage,
        index: usize,
        found: super::stuck_text::Loop,
    ) -> io::Result<()> {
        // The stream's blocks keep their indexes in the message until
        // empty text blocks are dropped: find the text by its content.
        let text_blocks: Vec<usize> = message
            .content
            .iter()
            .enumerate()
            .filter(|(_, b)| matches!(b, ContentBlock::Text { .. }))
            .map(|(i, _)| i)
            .collect();
        let at = if message
            .content
            .get(index)
            .is_some_and(|b| matches!(b, ContentBlock::Text { .. }))
        {
            Some(index)
        } else {
            text_blocks.last().copied()
        };
        if let Some(ContentBlock::Text { text }) = at.and_then(|i| message.content.get_mut(i))
            && found.keep <= text.len()
            && text.is_char_boundary(found.keep)
        {
            text.truncate(found.keep);
        }
        // Calls that never completed were dropped with the stream.
        message.stop_reason = StopReason::Length;
        message.error_message = None;
        let message = if found.block == 0 {
            format!(
                "the model's answer went on with nothing but whitespace ({} bytes): the call was stopped there and its text kept up to it",
                found.copies
            )
        } else {
            format!(
                "the model's answer repeated the same {} characters {} times in a row: the call was stopped there and its text kept up to the second copy",
                found.block, found.copies
            )
        };
        self.emitter.emit(AgentEvent::Note {
            message,
            tool_call_id: None,
        })
    }

    /// A message stopped inside a call whose arguments looped: the call
    /// does not run. It was dropped with the stream when it never
    /// completed; a server that had already sent its end (`ended`) sent a
    /// loop, and the last call of its id and name is taken out. The
    /// message ends as if by the output limit, and the model is told
    /// before its next turn. Calls are not watched again in this prompt.
    fn stop_looping_call(
        &mut self,
        message: &mut AssistantMessage,
        call: &CallId,
        found: super::stuck_text::Loop,
        ended: bool,
    ) -> io::Result<()> {
        let name = &call.name;
        if ended
            && let Some(at) = message.content.iter().rposition(|b| {
                matches!(b, ContentBlock::ToolCall { id, name, .. } if *id == call.id && *name == call.name)
            })
        {
            message.content.remove(at);
        }
        message.stop_reason = StopReason::Length;
        message.error_message = None;
        self.watch_calls = false;
        self.stopped_call = Some(format!(
            "Your `{name}` call was not run: its arguments repeated the same {} characters {} times in a row, so it was stopped there. Send the call again with each part in it once.",
            found.block, found.copies
        ));
        self.emitter.emit(AgentEvent::Note {
            message: format!(
                "the model's `{name}` call repeated the same {} characters {} times in a row in its arguments: the call was stopped there and not run",
                found.block, found.copies
            ),
            tool_call_id: None,
        })
    }

    /// A message stopped because it sent one call `copies` times
    /// (copied_calls.rs): each call runs once, the copies are taken out,
    /// and the model is told after the results.
    fn drop_repeated_calls(
        &mut self,
        message: &mut AssistantMessage,
        name: &str,
        copies: usize,
    ) -> io::Result<()> {
        super::copied_calls::drop_copies(&mut message.content);
        message.stop_reason = StopReason::ToolUse;
        message.error_message = None;
        self.stopped_call = Some(format!(
            "Your answer sent the same `{name}` call {copies} times, so it was stopped there and each call ran once; its result is above. Send each call once, and act on what it returned."
        ));
        self.emitter.emit(AgentEvent::Note {
            message: format!(
                "the model's answer sent the same `{name}` call {copies} times: the answer was stopped there, and each call runs once"
            ),
            tool_call_id: None,
        })
    }

    /// Tells the model of a call stopped in a loop, as a user message;
    /// whether there was one.
    fn tell_stopped_call(&mut self, turns: &mut Turns) -> io::Result<bool> {
        let Some(text) = self.stopped_call.take() else {
            return Ok(false);
        };
        let back = Message::User {
            content: UserContent::Text(text),
            timestamp: Some(crate::session::now()),
        };
        self.push(turns, back)?;
        Ok(true)
    }

    /// Results for the tool calls of an interrupted message.
    fn answer_unrun(
        &mut self,
        turns: &mut Turns,
        assistant: &AssistantMessage,
    ) -> io::Result<Vec<ToolResultMessage>> {
        let mut out = Vec::new();
        for (id, name, _) in assistant.tool_calls() {
            let msg = to_message(name, interrupted_result(id));
            self.push(turns, Message::ToolResult(msg.clone()))?;
            out.push(msg);
        }
        Ok(out)
    }

    async fn run_tools(
        &mut self,
        turns: &mut Turns,
        calls: Vec<(String, String, Value)>,
        control: &Control,
        cancel: &CancellationToken,
    ) -> io::Result<Vec<ToolResultMessage>> {
        let mut results: Vec<Option<ToolResult>> = vec![None; calls.len()];
        // What the loop adds to a result: how a call was routed.
        let mut notes: Vec<Option<String>> = vec![None; calls.len()];
        let mut prepared = Vec::new();
        for (i, (id, called, args)) in calls.iter().enumerate() {
            // Another agent's name for an ag tool (seed 003's `read_file`)
            // runs that tool; the result keeps the name the model called.
            // An offered tool of a split binary (`git_status`) runs as the
            // binary (`git` with its action): gates, hooks and events see
            // the binary's call.
            let named = self.tool_name(called);
            let mut args = args.clone();
            let spec = self.tools.find(&named);
            let name = &spec.map_or(named.clone(), |s| s.definition.name.clone());
            let check = match spec {
                None => Err((
                    "call.unknown_tool",
                    format!(
                        "There is no tool named `{named}`. The tools are: {}.",
                        self.tools.names().join(", ")
                    ),
                )),
                Some(spec) => spec
                    .validate(&named, &mut args)
                    .map_err(|msg| ("call.invalid_arguments", msg)),
            };
            // ag's own answer to an earlier call, handed back as the text
            // to write or to notify, is refused before it runs (echo.rs).
            let check = check.and_then(|note| {
                let echo = crate::agent::calls::echo::echoed(name, &args, &turns.new, |n| {
                    self.tool_name(n)
                });
                let copied = || {
                    let own = crate::agent::config::named_sets::own_name(name);
                    crate::agent::calls::echo::copied_note(own, &args, &self.notes_given).or_else(
                        || {
                            crate::agent::calls::echo::copied_prompt(
                                own,
                                &args,
                                &self.request,
                                &self.attached,
                            )
                        },
                    )
                };
                let again = || {
                    let own = crate::agent::config::named_sets::own_name(name);
                    crate::agent::calls::echo::notified_already(own, &args, &turns.new, |n| {
                        crate::agent::config::named_sets::own_name(&self.tool_name(n)).to_string()
                    })
                };
                match (echo.or_else(copied), again) {
                    (Some(why), _) => Err(("call.echoed_answer", why)),
                    (None, again) => match again() {
                        Some(why) => Err(("call.notified_already", why)),
                        None => Ok(note),
                    },
                }
            });
            if let Ok(Some(note)) = &check {
                notes[i] = Some(note.clone());
            }
            // The event shows what the call runs with (the arguments after
            // leniency), or what the model sent when they were refused; the
            // model's own text is in its message either way. The read-hash
            // guard's value is added only after, as the model never sees it.
            self.emitter.emit(AgentEvent::ToolExecutionStart {
                tool_call_id: id.clone(),
                tool_name: name.clone(),
                arguments: args.clone(),
            })?;
            match check {
                Err((code, msg)) => {
                    let mut r = error_result(id, code, msg);
                    self.end_call(id, name, &args, &mut r)?;
                    results[i] = Some(r);
                }
                Ok(_) => {
                    self.hashes.guard(name, &self.settings.cwd, &mut args);
                    prepared.push((i, id.clone(), name.clone(), args));
                }
            }
        }
        let prepared = self
            .apply_gates(prepared, &mut results, control, cancel)
            .await?;
        // Progress and questions come from the running calls through this
        // channel, and go out in order between their start and end.
        let (events, mut updates) = mpsc::unbounded_channel::<AgentEvent>();
        // Subagents get what is left of this prompt's budget.
        let own_left = self.settings.max_turns.saturating_sub(turns.turn);
        let budget = crate::agent::delegation::Budget {
            turns: self
                .settings
                .tree
                .as_ref()
                .and_then(|t| t.turns_left())
                .map_or(own_left, |left| left.min(own_left)),
            cost: {
                let own = self
                    .settings
                    .max_cost
                    .map(|limit| limit - turns.usage.cost.total);
                let tree = self.settings.tree.as_ref().and_then(|t| t.cost_left());
                match (own, tree) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                }
            },
        };
        let run_one = {
            let tools = self.tools.clone();
            let cwd = self.settings.cwd.clone();
            let mut env = self.settings.tool_env.clone();
            // A tool's advice names the tools this model sees (`job_list`),
            // not its binary's mode fields.
            env.push((
                offer::MODEL_TOOLS_ENV.to_string(),
                self.tools.names().join(","),
            ));
            if self.tools.no_deletes {
                env.push((
                    crate::tools::patch::NO_DELETE_ENV.to_string(),
                    "1".to_string(),
                ));
            }
            let sandbox = self.settings.sandbox.clone();
            let questions = self.settings.questions.clone();
            let session_id = self.settings.session_id.clone();
            let events = events.clone();
            move |id: String,
                  name: String,
                  args: Value,
                  answer: Option<oneshot::Receiver<String>>,
                  cancel: CancellationToken| {
                let tools = tools.clone();
                let cwd = cwd.clone();
                let env = env.clone();
                let sandbox = sandbox.clone();
                let questions = questions.clone();
                let session_id = session_id.clone();
                let events = events.clone();
                async move {
                    match tools.get(&name) {
                        Some(spec) if spec.is_ask() => {
                            let asking = crate::agent::calls::ask::Asking {
                                questions: &questions,
                                answer,
                                events: &events,
                                cwd: &cwd,
                                session_id: session_id.as_deref(),
                            };
                            crate::agent::calls::ask::run(&id, &args, asking, &cancel).await
                        }
                        Some(spec) if spec.subagents().is_some() => match spec.subagents() {
                            Some(sub) => sub.run(&id, &args, budget, &events, &cancel).await,
                            None => error_result(&id, "call.unknown_tool", name),
                        },
                        Some(spec) => {
                            let sink =
                                crate::agent::calls::progress::progress_sink(&id, &name, events);
                            let call_env = CallEnv {
                                cwd: &cwd,
                                env: &env,
                                sandbox: sandbox.as_deref(),
                                progress: Some(&sink),
                            };
                            let own = crate::agent::config::named_sets::own_name(&name);
                            let watched = crate::agent::calls::unwritten::watch(own, &args, &cwd);
                            let mut r = spec.call(&id, &args, &call_env, &cancel).await;
                            if let Some(note) = watched.and_then(|w| w.note(&r)) {
                                offer::add_note(&mut r, &note);
                            }
                            r
                        }
                        None => error_result(
                            &id,
                            "call.unknown_tool",
                            format!("no tool named `{name}`"),
                        ),
                    }
                }
            }
        };
        drop(events);
        let mut finished_args: Vec<(usize, String, Value)> = Vec::new();
        let names: Vec<&str> = prepared.iter().map(|(_, _, n, _)| n.as_str()).collect();
        if self.settings.sequential || self.in_order(&names) {
            for (i, id, name, args) in prepared {
                let r = if cancel.is_cancelled() {
                    interrupted_result(&id)
                } else {
                    let answer = self.answer_slot(&name, &id, control);
                    let call = run_one(
                        id.clone(),
                        name.clone(),
                        args.clone(),
                        answer,
                        cancel.clone(),
                    );
                    self.pump(call, &mut updates).await?
                };
                let r = self.escalate(&id, &name, &args, r, control, cancel).await?;
                let mut r = self.after_hooks(&id, &name, &args, r).await?;
                if let Some(note) = &notes[i] {
                    self.add_note(&mut r, note);
                }
                self.end_call(&id, &name, &calls[i].2, &mut r)?;
                finished_args.push((i, name, args));
                results[i] = Some(r);
            }
        } else {
            let mut set = tokio::task::JoinSet::new();
            let mut meta = Vec::new();
            for (i, id, name, args) in prepared {
                let answer = self.answer_slot(&name, &id, control);
                let fut = run_one(
                    id.clone(),
                    name.clone(),
                    args.clone(),
                    answer,
                    cancel.clone(),
                );
                set.spawn(async move { (i, fut.await) });
                meta.push((i, id, name, args));
            }
            loop {
                let joined = tokio::select! {
                    biased;
                    Some(event) = updates.recv() => {
                        self.emitter.emit(event)?;
                        continue;
                    }
                    joined = set.join_next() => joined,
                };
                let Some(joined) = joined else { break };
                let (i, r) = match joined {
                    Ok(v) => v,
                    Err(e) => return Err(io::Error::other(format!("a tool task failed: {e}"))),
                };
                // Whatever the call reported before it ended goes out first.
                self.flush_updates(&mut updates)?;
                let mut r = r;
                if let Some((_, id, name, args)) = meta.iter().find(|(j, ..)| *j == i) {
                    r = self.escalate(id, name, args, r, control, cancel).await?;
                    r = self.after_hooks(id, name, args, r).await?;
                    if let Some(note) = &notes[i] {
                        self.add_note(&mut r, note);
                    }
                    self.end_call(id, name, &calls[i].2, &mut r)?;
                    finished_args.push((i, name.clone(), args.clone()));
                }
                results[i] = Some(r);
            }
        }
        for (i, name, args) in finished_args {
            if let Some(r) = &results[i] {
                self.hashes
                    .learn(&name, &self.settings.cwd, &args, &r.details, r.is_error);
            }
        }
        // Results enter the conversation in the order the model asked.
        let mut out = Vec::new();
        for (i, (id, name, _)) in calls.iter().enumerate() {
            let r = results[i].take().unwrap_or_else(|| interrupted_result(id));
            // A subagent's tokens and cost are this run's too (and count
            // against --max-cost at the next turn).
            if self
                .tools
                .get(name)
                .is_some_and(|t| t.subagents().is_some())
                && let Some(u) = r.details.get("usage")
                && let Ok(u) = serde_json::from_value::<Usage>(u.clone())
            {
                turns.usage.add(&u);
            }
            let msg = to_message(name, r);
            self.push(turns, Message::ToolResult(msg.clone()))?;
            out.push(msg);
        }
        Ok(out)
    }

    /// Puts every prepared call through the gates; denied calls get their
    /// results here, asked ones wait for a person.
    async fn apply_gates(
        &mut self,
        prepared: Vec<(usize, String, String, Value)>,
        results: &mut [Option<ToolResult>],
        control: &Control,
        cancel: &CancellationToken,
    ) -> io::Result<Vec<(usize, String, String, Value)>> {
        if self.settings.gates.before.is_empty() {
            return Ok(prepared);
        }
        let mut out = Vec::new();
        for (i, id, name, args) in prepared {
            let request = GateRequest {
                tool: name.clone(),
                arguments: args.clone(),
                cwd: self.settings.cwd.display().to_string(),
                session_id: self.settings.session_id.clone(),
                tool_call_id: Some(id.clone()),
                interactive: self.settings.someone_answers(),
                sandbox: self.settings.sandbox.as_ref().map(|s| s.gate(None)),
            };
            let (verdict, problems) = self.settings.gates.check(request).await;
            for p in problems {
                self.emitter.emit(AgentEvent::error(p))?;
            }
            let refused = match verdict {
                Verdict::Allow(a) => {
                    out.push((i, id, name, a));
                    continue;
                }
                Verdict::NotAsked(_, reason) if self.settings.refuse_unasked => format!(
                    "This call was not run: a person would have been asked about it ({reason}), and nobody can be asked here. Do not retry it as it is; find another way, or end with what you have and say what needs a person's approval."
                ),
                Verdict::NotAsked(a, reason) => {
                    // Unattended: what ran without a person's yes is on record.
                    let message =
                        format!("the `{name}` call runs without a person's approval: {reason}");
                    if !self.emitter.is_pretty() {
                        crate::cli::note("ag-loop", &message);
                    }
                    self.emitter.emit(AgentEvent::Note {
                        message,
                        tool_call_id: Some(id.clone()),
                    })?;
                    out.push((i, id, name, a));
                    continue;
                }
                Verdict::Deny(reason) => format!(
                    "This call was not run: the policy refused it ({reason}). Do not retry it as it is; find another way or ask the user."
                ),
                Verdict::Ask(a, reason) => {
                    if self.always.contains(&name)
                        || self
                            .ask_person(&id, &name, &a, &reason, control, cancel)
                            .await?
                    {
                        out.push((i, id, name, a));
                        continue;
                    }
                    if cancel.is_cancelled() {
                        let mut r = interrupted_result(&id);
                        self.end_call(&id, &name, &args, &mut r)?;
                        results[i] = Some(r);
                        continue;
                    }
                    format!(
                        "The user did not approve this call ({reason}), so it was not run. Do not retry it; ask the user or find another way."
                    )
                }
            };
            self.denied = true;
            let mut r = error_result(&id, "call.denied", refused);
            self.end_call(&id, &name, &args, &mut r)?;
            results[i] = Some(r);
        }
        Ok(out)
    }

    /// Passes a result through the after-hooks.
    async fn after_hooks(
        &mut self,
        id: &str,
        name: &str,
        args: &Value,
        mut r: ToolResult,
    ) -> io::Result<ToolResult> {
        // After-hooks are programs too: they get no key a tool let out.
        self.scrub(&mut r);
        if self.settings.gates.after.is_empty() {
            return Ok(r);
        }
        let request = AfterRequest {
            tool: name.to_string(),
            arguments: args.clone(),
            cwd: self.settings.cwd.display().to_string(),
            session_id: self.settings.session_id.clone(),
            tool_call_id: Some(id.to_string()),
            output: r.output.clone(),
            details: r.details.clone(),
            is_error: r.is_error,
        };
        let (output, is_error, problems) = self.settings.gates.after(request).await;
        for p in problems {
            self.emitter.emit(AgentEvent::error(p))?;
        }
        r.output = output;
        r.is_error = is_error;
        Ok(r)
    }

    /// Hides provider keys in what a person typed: the model needs none, and
    /// the conversation goes to the provider on every turn.
    fn scrub_prompt(&self, mut content: UserContent) -> UserContent {
        let redactor = self.emitter.redactor();
        match &mut content {
            UserContent::Text(t) => {
                redactor.string(t);
            }
            UserContent::Blocks(blocks) => {
                for b in blocks {
                    if let ContentBlock::Text { text } = b {
                        redactor.string(text);
                    }
                }
            }
        }
        content
    }

    /// Hides provider keys in a result.
    fn scrub(&self, r: &mut ToolResult) {
        let redactor = self.emitter.redactor();
        redactor.string(&mut r.output);
        redactor.value(&mut r.details);
    }

    /// Adds ag's `note` to the result `r`, kept so that a call copying it
    /// back as its content is known for an echo.
    fn add_note(&mut self, r: &mut ToolResult, note: &str) {
        offer::add_note(r, note);
        self.notes_given.push(note.to_string());
    }

    /// Reports a finished call. The result is cleared of provider keys and
    /// given the repeated-failure notes here, before it is shown or enters
    /// the conversation, so that the event shows what the model reads.
    /// `args` are the arguments as the model sent them.
    fn end_call(
        &mut self,
        id: &str,
        name: &str,
        args: &Value,
        r: &mut ToolResult,
    ) -> io::Result<()> {
        self.scrub(r);
        // The last-resort cut (for tools that ignore AG_OUTPUT_BUDGET) comes
        // before the notes, so that neither is lost and the event shows the
        // text the model reads.
        r.output = cap_output(std::mem::take(&mut r.output));
        let own = crate::agent::config::named_sets::own_name(name);
        if let Some(note) = crate::agent::calls::request_words::note(&self.request, own, args, r) {
            self.add_note(r, &note);
        }
        let before = r.output.len();
        self.guard.note(name, args, r);
        if let Some(added) = r.output.get(before..).filter(|a| !a.is_empty()) {
            self.notes_given.push(added.to_string());
        }
        self.emitter.emit(AgentEvent::ToolExecutionEnd {
            tool_call_id: id.to_string(),
            tool_name: name.to_string(),
            output: r.output.clone(),
            details: r.details.clone(),
            is_error: r.is_error,
        })?;
        if name == "notify"
            && !r.is_error
            && let Some(message) = r.details.get("message").and_then(Value::as_str)
        {
            let level = r
                .details
                .get("level")
                .and_then(Value::as_str)
                .unwrap_or("info");
            self.emitter.emit(AgentEvent::Notify {
                message: message.to_string(),
                level: level.to_string(),
            })?;
        }
        Ok(())
    }
}

impl Agent {
    /// Whether a message's calls run one after another although
    /// `--sequential` is off: when there are several and one of them may
    /// change files (any call that is neither a look nor a subagent). Run at
    /// once, an edit and a write of one file race: each reads what the
    /// other is replacing, and the results say what the file no longer
    /// holds (a small model sent two edits and three writes of one page in
    /// one message). Looks around such a change see it in the order asked.
    /// Subagents still run at once: each keeps to its own files or works
    /// in a worktree of its own.
    fn in_order(&self, names: &[&str]) -> bool {
        names.len() > 1
            && names.iter().any(|n| {
                let own = crate::agent::config::named_sets::own_name(n);
                let subagent = self.tools.get(n).is_some_and(|t| t.subagents().is_some());
                !(super::checkpoint_ledger::READ_ONLY.contains(&own) || subagent)
            })
    }

    /// The offered tool a call's name means: the name itself, else the ag
    /// tool another agent's name stands for, when that one is offered.
    fn tool_name(&self, called: &str) -> String {
        let own = crate::agent::config::named_sets::own_name(called);
        if self.tools.find(called).is_none() && self.tools.find(own).is_some() {
            own.to_string()
        } else {
            called.to_string()
        }
    }
}

fn to_message(name: &str, r: ToolResult) -> ToolResultMessage {
    let mut content = vec![ContentBlock::Text { text: r.output }];
    for img in r.images {
        content.push(ContentBlock::Image {
            data: img.data,
            mime_type: img.mime_type,
        });
    }
    ToolResultMessage {
        tool_call_id: r.id.unwrap_or_default(),
        tool_name: name.to_string(),
        content,
        details: r.details,
        is_error: r.is_error,
        timestamp: Some(crate::session::now()),
    }
}
