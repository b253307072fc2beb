//! `ag-loop`: the command line over the agent loop. Prompts come from the
//! arguments or, one per line, from stdin (with `steer`, `interrupt`,
//! `approval`, `compact`, `set_model` and `set_reasoning` commands); events
//! go to stdout and the session file.
//!
//! `run` reads top to bottom: set up (the working directory, the config
//! file, the identity, what they resolve to, the model client, the tools,
//! the session, the gates), then drive the agent through the prompts. Any
//! set-up failure is one [`SetupError`], reported before the first event
//! with exit status 2.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use serde_json::json;
use tokio::sync::mpsc;

use super::calls::gates::{Gate, Gates};
use super::calls::toolset::ToolSet;
use super::config::error::SetupError;
use super::config::file as config_file;
use super::config::identity;
use super::config::prompt::{Head, Parts};
use super::events::emit::Emitter;
use super::run::checkpoint_ledger::CheckpointState;
use super::run::control::{Answer, Control};
use super::run::model::ModelClient;
use super::run::profile::Router;
use super::run::runner::{Agent, AgentSettings};
pub use super::setup::args::Args;
use super::setup::args::{ShowContext, ToolParams};
use super::setup::resume;
use super::setup::settings::{Env, GateChoice, LoopConfig};
use crate::cli::{ExitStatus, error_line, warn};
use crate::llm::keys::{Redactor, key_env_names};
use crate::llm::{Llm, LlmOptions, ModelTable};
use crate::protocol::{
    AgentCommand, AgentEvent, ContentBlock, Message, Outcome, Reasoning, UserContent,
};
use crate::session::{SessionFile, SessionLock, Store, Writer, messages as session_messages};

const BIN: &str = "ag-loop";

/// Runs `ag-loop`.
pub fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => return ExitStatus::from_clap(e, BIN).code(),
    };
    // Before any thread exists: a tool must not read the provider keys in
    // this process's /proc/PID/environ (see `hide_own_environment`).
    crate::proc::hide_own_environment_or_warn(BIN);
    let runtime = match crate::cli::runtime(BIN) {
        Ok(r) => r,
        Err(status) => return status.code(),
    };
    let code = runtime.block_on(run(args));
    // The stdin reader may sit in a blocking read (a pipe nobody closes);
    // do not wait for it.
    runtime.shutdown_background();
    code
}

async fn run(args: Args) -> ExitCode {
    if args.check {
        return super::check::run(&args).await.code();
    }
    if let Some(n) = args.prompts.iter().position(|p| p.trim().is_empty()) {
        // Checked before set-up: an empty prompt would only be skipped.
        error_line(
            BIN,
            &format!("prompt argument {} is empty", n + 1),
            Some("give the task as text, or leave the arguments out to read prompts from stdin"),
        );
        return ExitStatus::Input.code();
    }
    if args.wait_for_session && args.session.is_none() && !args.continue_ {
        error_line(
            BIN,
            "--wait-for-session waits for a session that another process runs, and none is resumed",
            Some("resume one with --session ID or --continue, or leave --wait-for-session out"),
        );
        return ExitStatus::Input.code();
    }
    let mut agent = match set_up(&args).await {
        Ok(Some(agent)) => agent,
        // --list-agents: listed, nothing to run.
        Ok(None) => return ExitStatus::Success.code(),
        Err(e) => {
            error_line(BIN, &e.to_string(), None);
            return ExitStatus::Input.code();
        }
    };
    // Every --attach file is read now, so that one that cannot be
    // attached stops the run before any event.
    if !args.attach.is_empty()
        && let Err(e) = agent.check_attachments(&args.attach).await
    {
        error_line(BIN, &SetupError::from(e).to_string(), None);
        return ExitStatus::Input.code();
    }
    drive(agent, &args.prompts, &args.attach).await.code()
}

/// Everything before the first event: the agent, ready for prompts, or
/// `None` when the flags asked for something else (`--list-agents`).
async fn set_up(args: &Args) -> Result<Option<Agent>, SetupError> {
    let cwd = working_dir(args.cwd.as_deref())?;
    let config = config_file::load(args.config.as_deref())?;
    if args.list_agents {
        list_agents(&cwd);
        return Ok(None);
    }
    if let Some(d) = args.skills.iter().find(|d| !cwd.join(d).is_dir()) {
        return Err(SetupError::NoSkillsDir(d.clone()));
    }
    if args.list_skills {
        list_skills(args, &cwd);
        return Ok(None);
    }
    let env = Env::from_process();
    let store = Store::from_env();
    let choice = super::setup::settings::session_choice(args);
    let existing = resume::existing(&choice, &store, &cwd)?;
    // First of all: a session another process runs is refused (or waited
    // for) before anything is started or its header is read.
    let existing = match existing {
        Some(f) => {
            let lock = claim_session(&f, args.wait_for_session)?;
            Some((f, lock))
        }
        None => None,
    };
    let was = match &existing {
        Some((f, _)) => resume::recorded(&f.path)?,
        None => Default::default(),
    };
    let (ident, lost_identity) = resume::identity(args, &was, &cwd)?;
    let resolved = LoopConfig::resolve(args, &config, ident.as_ref(), &env, &was)?;
    let changed = match &existing {
        Some(_) => resume::changes(&was, &resolved, args),
        None => Vec::new(),
    };
    let mut sandbox_plan = super::calls::sandbox::Plan::new(&resolved.sandbox, &cwd)?;
    let config_path = args
        .config
        .clone()
        .unwrap_or_else(config_file::default_path);
    let output =
        super::setup::output_schema::from_setup(args, &config, ident.as_ref(), &config_path)?;
    // A resumed session's own model that cannot be used now (no key here)
    // is named as the session's, with the way to go on with another.
    let sessions_model = args.model.is_none() && was.model.as_deref() == Some(&resolved.model);
    let (model, found_window) = model_client(args, &resolved).await.map_err(|e| match e {
        SetupError::Model { model, message } if sessions_model => SetupError::Model {
            message: format!(
                "{message}\nhint: `{model}` is the resumed session's own model; `-m PROVIDER/MODEL` resumes it with another"
            ),
            model,
        },
        other => other,
    })?;
    let context_window = resolved
        .context_window
        .or(found_window.as_ref().map(|w| w.0));
    let mcp_headers = crate::mcp::headers::from_env().map_err(SetupError::McpHeaders)?;
    let mcp_env = crate::mcp::env::from_env().map_err(SetupError::McpHeaders)?;
    let redactor = withhold_keys(
        args.api_key.as_deref(),
        &resolved.pass_env,
        &model,
        &mcp_headers,
        &mcp_env,
    );
    crate::mcp::env::register(mcp_env);
    // A fetch URL is checked for them before it runs (the tool never has them).
    crate::llm::keys::hold(redactor.clone());
    let mut tools = load_tools(
        &resolved,
        context_window,
        &cwd,
        sandbox_plan.for_mcp()?,
        &mcp_headers,
    )
    .await?;
    // The subagents' environment is this run's to hand down, never a tool's.
    crate::proc::withhold_env([
        super::delegation::tree_budget::TREE_ENV,
        super::delegation::tree_budget::TURNS_ENV,
        super::delegation::subagent::PARENT_ENV,
    ]);
    let tree = join_tree(args, &resolved, &cwd);
    let delegate: Option<Arc<dyn super::delegation::Delegate>> =
        super::inherit::setup(args, &resolved, &model, &cwd, tree.clone())
            .map(|s| Arc::new(s) as _);
    if let Some(d) = &delegate
        && resolved.tools.iter().any(|t| t == super::delegation::NAME)
    {
        tools.add_agent(d.clone());
    }
    let mut check_bash = super::setup::until::load_bash(&resolved.checks, &cwd).await?;
    let workspace =
        super::setup::workspace::open(&resolved.workspace, &mut tools, check_bash.as_mut(), &cwd)
            .await?;
    let tools = Arc::new(tools);
    let session = open_session(&resolved, &cwd, &tools, found_window, &store, existing)?;
    let session_dir = session.id.as_ref().map(|_| PathBuf::from(&session.dir));
    // Without a session the task list still lasts the run (the default
    // set offers `todo`), in a directory that ends with it.
    let scratch = match &session.id {
        Some(_) => None,
        None => Some(
            tempfile::Builder::new()
                .prefix("ag-loop-run-")
                .tempdir()
                .map_err(SetupError::RunDir)?,
        ),
    };
    // Neither confines nor records anything in another workspace.
    let sandbox = sandbox_plan
        .for_tools(session_dir.as_deref(), scratch.as_ref().map(|d| d.path()))?
        .filter(|_| workspace.is_none());
    let checkpoints = match (&session.id, &session.writer) {
        (Some(id), Some(w)) if resolved.checkpoints && workspace.is_none() => {
            CheckpointState::on(&cwd, id, Some(w.path()), resolved.checkpoint_max_file_bytes)
        }
        (None, _) if resolved.checkpoints && workspace.is_none() => {
            CheckpointState::for_run(&cwd, resolved.checkpoint_max_file_bytes)
        }
        _ => CheckpointState::off(),
    };
    let mut tool_env = vec![
        // Background jobs that tools start (ag-bash) end with this process.
        ("AG_SESSION_PID".to_string(), std::process::id().to_string()),
        // Each tool fits its default output in what enters the conversation.
        (
            crate::tools::budget::ENV.to_string(),
            super::calls::toolset::MAX_OUTPUT_CHARS.to_string(),
        ),
    ];
    // ag-fetch reaches the hosts of the network policy, and another host
    // only when the gates (which ask a person for it) passed the call.
    let hosts = net_hosts(&resolved.sandbox);
    tool_env.push((
        crate::tools::fetch::policy::HOSTS_ENV.to_string(),
        hosts.join(","),
    ));
    if !matches!(resolved.gates, GateChoice::Off) {
        tool_env.push((
            crate::tools::fetch::policy::GATED_ENV.to_string(),
            "1".to_string(),
        ));
    }
    // Writes, edits and patches report the errors they brought in.
    tool_env.push((
        crate::tools::lsp::after_edit::ENV.to_string(),
        if args.no_lsp_diagnostics { "0" } else { "1" }.to_string(),
    ));
    if let Some(secs) = args.lsp_wait {
        tool_env.push((
            crate::tools::lsp::after_edit::WAIT_ENV.to_string(),
            secs.to_string(),
        ));
    }
    if let Some(id) = &session.id {
        tool_env.push(("AG_SESSION_ID".to_string(), id.clone()));
        tool_env.push(("AG_SESSION_DIR".to_string(), session.dir.clone()));
    }
    if let Some(dir) = &scratch {
        tool_env.push((
            crate::tools::todo::store::RUN_FILE_VAR.to_string(),
            dir.path()
                .join(crate::tools::todo::store::FILE_NAME)
                .display()
                .to_string(),
        ));
    }
    let mut emitter = Emitter::new(resolved.output, session.writer, resolved.color)
        .with_redactor(redactor)
        .with_result_dir(&cwd)
        .with_structured_output(output.is_some());
    super::calls::sandbox::announce(&sandbox_plan, &resolved.sandbox, &mut emitter)?;
    super::setup::workspace::announce(workspace.as_deref(), &mut emitter)?;
    let local_cwd = cwd.clone();
    let (cwd, project_files) = super::setup::workspace::cwd_and_files(workspace.as_deref(), &cwd);
    // The project's MEMORY.md is read here only when the project is here.
    let memory = super::config::prompt::memory_files(workspace.is_none().then_some(cwd.as_path()));
    let skills = skills_of(args, &local_cwd);
    let head = match (&resolved.system_prompt, &resolved.identity_prompt) {
        (Some(text), _) => Head::Replace(text),
        (None, Some(body)) => Head::Identity(body),
        (None, None) => Head::Builtin,
    };
    let system = Parts {
        cwd: &cwd,
        files: &project_files,
        memory: &memory,
        head,
        append: resolved.append_system_prompt.as_deref(),
        tool_names: &tools.names(),
        skills: &skills,
    }
    .build();
    let before = before_gates(&resolved.gates, &hosts)?;
    let router = Router {
        args: args.clone(),
        config: config.clone(),
        env,
        cwd: local_cwd.clone(),
        prompt_cwd: cwd.clone(),
        project_files,
        memory,
        skills,
        workspace: workspace.clone(),
        cache: Default::default(),
        delegate,
    };
    if let Some(note) = lost_identity {
        warn(BIN, &note);
        emitter
            .emit(AgentEvent::Note {
                message: note,
                tool_call_id: None,
            })
            .map_err(SetupError::Emit)?;
    }
    let settings = AgentSettings {
        agent: resolved.agent,
        model: resolved.model,
        system,
        reasoning: resolved.reasoning,
        tool_set: resolved.tool_set,
        max_tokens: resolved.max_tokens,
        temperature: resolved.temperature,
        max_turns: resolved.max_turns,
        max_cost: resolved.max_cost,
        sequential: resolved.sequential,
        refuse_unasked: args.refuse_unasked,
        max_failed_calls: resolved.max_failed_calls,
        cwd,
        tool_env,
        context_window,
        compact: resolved.compact,
        gates: Gates {
            before,
            after: resolved.after,
            timeout: resolved.gate_timeout,
        },
        interactive: resolved.interactive,
        approve_on_stdin: resolved.approve_on_stdin,
        session_id: session.id,
        sandbox,
        output,
        checkpoints,
        questions: Arc::new(resolved.questions),
        attach_dir: local_cwd,
        checks: super::setup::until::StopChecks {
            config: resolved.checks,
            bash: check_bash.map(Arc::new),
        },
        tree,
        first_call: args.first_call.map(Into::into),
        // The files are this machine's, so not in another workspace.
        show_context: match args.show_context {
            _ if workspace.is_some() => Some(false),
            ShowContext::Auto => None,
            ShowContext::Always => Some(true),
            ShowContext::Never => Some(false),
        },
        all_params: args.tool_params.map(|p| p == ToolParams::All),
        scratch,
    };
    let mut agent =
        Agent::new(settings, model, tools, session.history, emitter).with_router(router);
    if !changed.is_empty() {
        // Said, and recorded: the session goes on with what the flags chose.
        let message = format!("resumed session with {}", changed.join("; "));
        agent
            .emitter
            .emit(AgentEvent::Note {
                message,
                tool_call_id: None,
            })
            .map_err(SetupError::Emit)?;
        agent.emit_settings().map_err(SetupError::Emit)?;
    }
    Ok(Some(agent))
}

/// `--cwd` made absolute, else the process's own directory.
fn working_dir(cwd: Option<&Path>) -> Result<PathBuf, SetupError> {
    let here = std::env::current_dir().map_err(SetupError::WorkingDir)?;
    match cwd {
        Some(c) => match here.join(c).canonicalize() {
            Ok(d) if d.is_dir() => Ok(d),
            _ => Err(SetupError::NotADirectory(c.to_path_buf())),
        },
        None => Ok(here),
    }
}

/// Prints the identities `--agent` can load: the name it takes, the role,
/// the file.
fn list_agents(cwd: &Path) {
    let mut text = String::new();
    for id in identity::list(cwd) {
        text.push_str(&format!(
            "{}\t{}\t{}\n",
            id.stem,
            id.role.as_deref().unwrap_or(""),
            id.path.display()
        ));
    }
    let _ = crate::cli::Stdout::new().write_all_flush(text.as_bytes());
}

/// The skills the system prompt lists: none with --no-skills.
fn skills_of(args: &Args, cwd: &Path) -> Vec<super::config::skills::Skill> {
    if args.no_skills {
        return Vec::new();
    }
    super::config::skills::find(&super::config::skills::search_dirs(cwd, &args.skills)).0
}

/// Prints the skills the system prompt lists: the name, the description,
/// the SKILL.md; a folder that is passed over is said on stderr with why.
fn list_skills(args: &Args, cwd: &Path) {
    if args.no_skills {
        return;
    }
    let (skills, skipped) =
        super::config::skills::find(&super::config::skills::search_dirs(cwd, &args.skills));
    let mut text = String::new();
    for s in skills {
        text.push_str(&format!(
            "{}\t{}\t{}\n",
            s.name,
            s.description,
            s.path.display()
        ));
    }
    for s in skipped {
        warn(
            BIN,
            &format!("skill {} is not listed: it {}", s.path.display(), s.reason),
        );
    }
    let _ = crate::cli::Stdout::new().write_all_flush(text.as_bytes());
}

/// The model client, and the context window it found with where it came
/// from (`None` when `$AG_CONTEXT_WINDOW` set it, or nobody knew it).
async fn model_client(
    args: &Args,
    resolved: &LoopConfig,
) -> Result<(ModelClient, Option<(u64, String)>), SetupError> {
    if let Some(cmd) = &args.llm_cmd {
        return Ok((ModelClient::Command(cmd.clone()), None));
    }
    let llm = Llm::new(LlmOptions {
        api_key: args.api_key.clone(),
        base_url: args.base_url.clone(),
        ag_home: None,
    })?
    .with_idle_timeout(resolved.idle_timeout)
    .with_default_idle_timeout(resolved.default_idle_timeout);
    let model = &resolved.model;
    // A bad model id or a missing key: exit 2 before any event. Without a
    // key, the servers on this machine that need none are offered.
    if let Err(f) = llm.check(model) {
        let mut message = f.message;
        if f.kind == crate::llm::error::FailureKind::Auth {
            let argv: Vec<String> = std::env::args().collect();
            let found = llm.local_servers().await;
            message.push_str(&crate::llm::local::no_key_hint(&llm, &argv, &found));
        }
        return Err(SetupError::Model {
            model: model.clone(),
            message,
        });
    }
    let mut found = None;
    if resolved.context_window.is_none() {
        // The table's, else asked of the server once for the session.
        match llm.context_window(model).await {
            Some(w) => {
                if w.source != "the model table" && !args.quiet {
                    crate::cli::note(
                        BIN,
                        &format!(
                            "context window of `{model}`: {} tokens, {}",
                            w.tokens, w.source
                        ),
                    );
                }
                found = Some((w.tokens, w.source));
            }
            None => warn(
                BIN,
                &format!(
                    "the context window of `{model}` is unknown (not in the model table, and its server did not say or could not be reached), so the conversation is never compacted\nhint: set `context_window` in models.json, or AG_CONTEXT_WINDOW"
                ),
            ),
        }
    }
    Ok((ModelClient::Library(Arc::new(llm)), found))
}

/// The ag tools, the extra commands and the MCP servers' tools; ag tools
/// of the default set that are not installed are left out with a warning,
/// and so are, for a model whose `window` is small, those it leaves out
/// (see [`for_window`](super::config::named_sets::for_window)).
async fn load_tools(
    resolved: &LoopConfig,
    window: Option<u64>,
    cwd: &Path,
    mcp_sandbox: Option<Arc<crate::sandbox::Prepared>>,
    mcp_headers: &crate::mcp::headers::Headers,
) -> Result<ToolSet, SetupError> {
    let names = &super::config::named_sets::for_window(
        &resolved.tools,
        resolved.tool_set.is_none(),
        window,
    );
    let mut tools =
        ToolSet::load(names, resolved.tools_explicit, &resolved.extra_tools, cwd).await?;
    tools.no_deletes = super::config::named_sets::small_window(resolved.tool_set.is_none(), window);
    tools
        .add_mcp(&resolved.mcp, cwd, mcp_sandbox, mcp_headers)
        .await?;
    if !resolved.tools_explicit {
        let missing: Vec<&str> = names
            .iter()
            .map(String::as_str)
            .filter(|n| tools.find(n).is_none())
            .collect();
        if !missing.is_empty() {
            warn(
                BIN,
                &format!(
                    "tools not found beside ag-loop or on PATH, left out: {}",
                    missing.join(", ")
                ),
            );
        }
    }
    Ok(tools)
}

/// The session the events go to, and the conversation it already holds.
struct Session {
    /// Its id, when there is a session.
    id: Option<String>,
    /// The directory beside its file, for tools' own files.
    dir: String,
    /// Where events are appended.
    writer: Option<Writer>,
    /// The messages of a resumed session.
    history: Vec<Message>,
}

/// Takes a resumed session's one-writer lock: refused at once when
/// another process holds it, or (with `--wait-for-session`) taken once that
/// process has ended.
fn claim_session(file: &SessionFile, wait: bool) -> Result<SessionLock, SetupError> {
    Ok(if wait {
        SessionLock::acquire_waiting(&file.path, |holder| {
            crate::cli::note(
                BIN,
                &format!(
                    "session {} is in use by {holder}; waiting for it to end (--wait-for-session)",
                    file.id
                ),
            );
        })?
    } else {
        SessionLock::try_acquire(&file.path)?
    })
}

/// Resumes the session found and locked at set-up, or creates one
/// (recording the model, reasoning, tool set, identity, tools, the turn
/// limit and a context window found at set-up), or none. A resumed
/// session's conversation is read only now, under its lock, so that it
/// holds everything its last writer wrote.
fn open_session(
    resolved: &LoopConfig,
    cwd: &Path,
    tools: &ToolSet,
    found_window: Option<(u64, String)>,
    store: &Store,
    existing: Option<(SessionFile, SessionLock)>,
) -> Result<Session, SetupError> {
    if resolved.session == super::setup::settings::SessionChoice::Off {
        return Ok(Session {
            id: None,
            dir: String::new(),
            writer: None,
            history: Vec::new(),
        });
    }
    let mut history = Vec::new();
    let (file, lock) = match existing {
        Some((f, lock)) => {
            let (_, msgs, damage) =
                session_messages(&f.path).map_err(|source| SetupError::SessionFile {
                    path: f.path.clone(),
                    source,
                })?;
            for d in damage {
                warn(BIN, &format!("{}: {d}", f.path.display()));
            }
            history = msgs;
            (f, lock)
        }
        None => {
            let mut config = resume::header_config(resolved, &tools.names());
            if let Some((tokens, source)) = found_window {
                config["context_window"] = json!({"tokens": tokens, "source": source});
            }
            let file = store.create(cwd, config, None)?.0;
            // Nobody else knows its id yet: the lock is free.
            let lock = SessionLock::try_acquire(&file.path)?;
            (file, lock)
        }
    };
    let writer = Writer::open(&file.path)
        .map_err(|source| SetupError::SessionFile {
            path: file.path.clone(),
            source,
        })?
        .holding(lock);
    Ok(Session {
        dir: file.path.with_extension("d").display().to_string(),
        id: Some(file.id),
        writer: Some(writer),
        history,
    })
}

/// The gates each tool call passes before it runs; the built-in one
/// allows `fetch` calls to `hosts` without asking.
fn before_gates(choice: &GateChoice, hosts: &[String]) -> Result<Vec<Gate>, SetupError> {
    Ok(match choice {
        GateChoice::Off => Vec::new(),
        GateChoice::Programs(programs) => programs.iter().cloned().map(Gate::Program).collect(),
        GateChoice::Default => vec![Gate::Builtin(Arc::new(
            crate::gate::default_policy()
                .map_err(SetupError::DefaultGate)?
                .with_hosts(hosts),
        ))],
    })
}

/// The network policy's hosts for `fetch`: those named, and `*` (any
/// public host) when the run may use the network anyway (`--allow-net`:
/// bash could reach them with curl).
fn net_hosts(choice: &super::calls::sandbox::SandboxChoice) -> Vec<String> {
    let mut hosts = choice.hosts.clone();
    if choice.net {
        hosts.push("*".into());
    }
    hosts
}

/// Runs the prompts (from the arguments, else from stdin) through the agent
/// until they run out or a signal ends the run; the worst outcome decides
/// the exit status. `attach` goes with the first prompt.
async fn drive(mut agent: Agent, prompts: &[String], attach: &[String]) -> ExitStatus {
    let control = Arc::new(Control::new());
    spawn_signal_handlers(control.clone());
    super::run::control::watch_parent(control.clone());
    let (tx, mut rx) = mpsc::unbounded_channel::<Queued>();
    if prompts.is_empty() {
        spawn_stdin_reader(control.clone(), tx);
    } else {
        for p in prompts {
            let n = control.queue_prompt();
            let _ = tx.send((
                Input::Prompt(n, UserContent::Text(p.clone()), Vec::new(), Vec::new()),
                None,
            ));
        }
        drop(tx);
        control.close_input();
    }
    let mut first_attachments = attach.to_vec();

    let mut status = ExitStatus::Success;
    // Steers that came too late for the run they were sent to: they go
    // first, before the prompts still queued behind it.
    let mut steers: std::collections::VecDeque<UserContent> = Default::default();
    loop {
        let next = match steers.pop_front() {
            Some(steer) => Some(Input::Steered(steer)),
            None => tokio::select! {
                _ = control.quit.cancelled() => None,
                // The prompt's room in the queue is given back as it is taken.
                p = rx.recv() => p.map(|(input, _room)| input),
            },
        };
        let (n, content, mut attachments, data) = match next {
            None => break,
            Some(Input::Prompt(_, content, attachments, data))
                if content.is_blank()
                    && attachments.is_empty()
                    && data.is_empty()
                    && first_attachments.is_empty() =>
            {
                // Nothing to ask: no model call is made (and paid for).
                let message = "an empty prompt was skipped (no model call): its content has no text and no image";
                warn(BIN, message);
                if let Err(e) = agent.emitter.emit(AgentEvent::error(message)) {
                    error_line(BIN, &format!("cannot write an event: {e}"), None);
                    return ExitStatus::Input;
                }
                continue;
            }
            Some(Input::Prompt(n, content, attachments, data)) => {
                (Some(n), content, attachments, data)
            }
            Some(Input::Steered(content)) => (None, content, Vec::new(), Vec::new()),
            Some(Input::SetModel(model)) => {
                if let Err(e) = agent.set_model(model).await {
                    error_line(BIN, &format!("cannot write an event: {e}"), None);
                    return ExitStatus::Input;
                }
                continue;
            }
            Some(Input::SetReasoning(level)) => {
                if let Err(e) = agent.set_reasoning(level) {
                    error_line(BIN, &format!("cannot write an event: {e}"), None);
                    return ExitStatus::Input;
                }
                continue;
            }
            Some(Input::Compact) => {
                match agent.compact_now(&control).await {
                    Ok(left) => steers.extend(left),
                    Err(e) => {
                        error_line(BIN, &format!("cannot write an event: {e}"), None);
                        return ExitStatus::Input;
                    }
                }
                continue;
            }
            Some(Input::Unreadable(message)) => {
                // Reported in the stream, in order with the prompts around it.
                warn(BIN, &message);
                if let Err(e) = agent.emitter.emit(AgentEvent::error(message)) {
                    error_line(BIN, &format!("cannot write an event: {e}"), None);
                    return ExitStatus::Input;
                }
                continue;
            }
        };
        control.take_prompt(n);
        // The identity first: an `@NAME` that names one is not a file.
        let (profile, content) = match agent.route(content).await {
            Ok(routed) => routed,
            Err(refusal) => {
                // Not run, and said so in the stream; the run's status says
                // a prompt failed. Steers sent to it run as prompts.
                steers.extend(control.end());
                error_line(BIN, &refusal.message, None);
                let event = AgentEvent::Error {
                    message: refusal.message,
                    code: Some(refusal.code.to_string()),
                };
                if let Err(e) = agent.emitter.emit(event) {
                    error_line(BIN, &format!("cannot write an event: {e}"), None);
                    return ExitStatus::Input;
                }
                if status == ExitStatus::Success {
                    status = ExitStatus::Failure;
                }
                continue;
            }
        };
        if !first_attachments.is_empty() {
            attachments.splice(0..0, std::mem::take(&mut first_attachments));
        }
        let content = match agent.attach(content, &attachments).await {
            Ok(c) => c.with_blocks(data),
            Err(e) => {
                // Not run, and said in the stream: nothing is dropped
                // without a word.
                steers.extend(control.end());
                let message = format!("{e}; the prompt was not run");
                error_line(BIN, &message, None);
                let event = AgentEvent::Error {
                    message,
                    code: Some(e.code.to_string()),
                };
                if let Err(e) = agent.emitter.emit(event) {
                    error_line(BIN, &format!("cannot write an event: {e}"), None);
                    return ExitStatus::Input;
                }
                if status == ExitStatus::Success {
                    status = ExitStatus::Failure;
                }
                continue;
            }
        };
        match agent.prompt_as(profile, content, &control).await {
            Ok(end) => {
                let this = match end.outcome {
                    _ if end.succeeded() => ExitStatus::Success,
                    Outcome::Interrupted => ExitStatus::Signal(2),
                    _ => ExitStatus::Failure,
                };
                if let Some(reason) = &end.error {
                    error_line(BIN, reason, None);
                }
                if this != ExitStatus::Success && status == ExitStatus::Success {
                    status = this;
                }
                steers.extend(end.steers);
            }
            Err(e) => {
                error_line(BIN, &format!("cannot write an event: {e}"), None);
                return ExitStatus::Input;
            }
        }
        if control.quit.is_cancelled() {
            status = ExitStatus::Signal(2);
            break;
        }
    }
    // Stopped by a signal with steers still to run: said, not dropped.
    for _ in &steers {
        let message = "a steer was not run: ag-loop was stopped before its turn";
        warn(BIN, message);
        let _ = agent.emitter.emit(AgentEvent::error(message));
    }
    status
}

/// This run's part of a tree of agents: the one it was started in as a
/// subagent, or a new one when it may start subagents itself (its tools,
/// or an identity's that an `@NAME` prompt may call on, name `agent`).
fn join_tree(
    args: &Args,
    resolved: &LoopConfig,
    cwd: &Path,
) -> Option<Arc<super::delegation::tree_budget::Tree>> {
    let named = |tools: &[String]| tools.iter().any(|t| t == super::delegation::NAME);
    let own = args.max_depth > 0
        && (named(&resolved.tools)
            || identity::list(cwd)
                .iter()
                .any(|i| i.tools.as_deref().is_some_and(named)));
    match super::delegation::tree_budget::Tree::join(own, args.max_agents) {
        Ok(tree) => tree.map(Arc::new),
        Err(e) => {
            warn(
                BIN,
                &format!(
                    "`agent` is not offered: the directory its subagents share cannot be made: {e}"
                ),
            );
            None
        }
    }
}

/// Keeps the provider key variables, `AG_MCP_HEADERS` and `AG_MCP_ENV` out
/// of every child from here on (tools, gates, after-hooks, MCP servers)
/// except those passed on purpose, and returns what hides their values (and
/// the MCP servers' header and variable values) in events.
fn withhold_keys(
    api_key: Option<&str>,
    pass: &[String],
    model: &ModelClient,
    mcp_headers: &crate::mcp::headers::Headers,
    mcp_env: &crate::mcp::env::Vars,
) -> Arc<Redactor> {
    let table = match model {
        ModelClient::Library(llm) => llm.table().clone(),
        // The table still names the keys that sit in the environment.
        ModelClient::Command(_) => ModelTable::load(&crate::llm::models::default_ag_home())
            .unwrap_or_else(|e| {
                warn(
                    BIN,
                    &format!("{e}; only the built-in key variables are withheld"),
                );
                ModelTable::builtin()
            }),
    };
    crate::proc::withhold_env(
        key_env_names(&table)
            .into_iter()
            .filter(|n| !pass.contains(n)),
    );
    crate::proc::withhold_env([crate::mcp::headers::ENV, crate::mcp::env::ENV]);
    let mut extra: Vec<(&str, String)> = api_key
        .iter()
        .map(|k| ("--api-key", k.to_string()))
        .collect();
    for (_, value) in mcp_headers.values().flatten() {
        extra.push(("MCP header", value.clone()));
        // `Bearer TOKEN`: the token alone too.
        if let Some((_, credentials)) = value.split_once(' ') {
            extra.push(("MCP header", credentials.to_string()));
        }
    }
    for (_, value) in mcp_env.values().flatten() {
        extra.push(("MCP server variable", value.clone()));
    }
    Arc::new(Redactor::for_keys(&table, &extra))
}

fn spawn_signal_handlers(control: Arc<Control>) {
    use tokio::signal::unix::{SignalKind, signal};
    // Registered here, before the first prompt runs, not in the tasks: a
    // SIGTERM that comes early (a parent stopping its subagent just after
    // it began) must be an interrupt, not the default death that loses
    // the run's last events.
    let sigint = signal(SignalKind::interrupt());
    let sigterm = signal(SignalKind::terminate());
    let c = control.clone();
    tokio::spawn(async move {
        let Ok(mut sigint) = sigint else {
            return;
        };
        while sigint.recv().await.is_some() {
            // The first interrupts the running prompt; one with nothing to
            // interrupt (a second press) quits.
            if !c.interrupt() {
                c.quit.cancel();
            }
        }
    });
    tokio::spawn(async move {
        let Ok(mut sigterm) = sigterm else {
            return;
        };
        if sigterm.recv().await.is_some() {
            control.interrupt();
            control.quit.cancel();
        }
    });
}

/// What the stdin reader hands the prompt loop.
enum Input {
    /// A prompt to run, numbered as it was queued, the files to attach to
    /// it, and its data blocks (never read for mentions).
    Prompt(u64, UserContent, Vec<String>, Vec<ContentBlock>),
    /// A steer that came too late for its run, run as the next prompt
    /// ahead of the queue (it has no number: an `interrupt` line counts
    /// the prompts that were queued).
    Steered(UserContent),
    /// A line that could not be read, reported as an `error` event.
    Unreadable(String),
    /// A `compact` command.
    Compact,
    /// A `set_model` command.
    SetModel(String),
    /// A `set_reasoning` command.
    SetReasoning(Reasoning),
}

/// An input and, for a prompt, the room it holds in the queue.
type Queued = (Input, Option<tokio::sync::OwnedSemaphorePermit>);

fn spawn_stdin_reader(control: Arc<Control>, tx: mpsc::UnboundedSender<Queued>) {
    tokio::spawn(async move {
        let mut reader = tokio::io::BufReader::new(tokio::io::stdin());
        let budget = super::stdin_lines::Budget::default();
        let send = |input: Input| tx.send((input, None)).is_ok();
        let mut n = 0usize;
        while let Ok(Some(line)) =
            super::stdin_lines::next_line(&mut reader, super::stdin_lines::MAX_LINE).await
        {
            n += 1;
            let bytes = match line {
                super::stdin_lines::Line::Whole(bytes) => bytes,
                super::stdin_lines::Line::TooLong(len) => {
                    send(Input::Unreadable(format!(
                        "stdin line {n} is {len} bytes, over the {} MiB a line may hold, skipped; send a large file as an attachment (`attachments` of a prompt command) rather than inline",
                        super::stdin_lines::MAX_LINE / (1024 * 1024)
                    )));
                    continue;
                }
            };
            // Waits while the prompts queued ahead fill the budget.
            let room = budget.hold(bytes.len()).await;
            let prompt = |input: Input| tx.send((input, room)).is_ok();
            // One bad line costs that line, not every prompt after it.
            let line = match String::from_utf8(bytes) {
                Ok(l) => l,
                Err(e) => {
                    send(Input::Unreadable(format!(
                        "stdin line {n} is not valid UTF-8 (bad byte at offset {}), skipped; send prompts as UTF-8 text",
                        e.utf8_error().valid_up_to()
                    )));
                    continue;
                }
            };
            let line = line.strip_suffix('\r').unwrap_or(&line).to_string();
            let text = line.trim();
            if text.is_empty() {
                continue;
            }
            if !text.starts_with('{') {
                // A y, n or a typed while a call waits for approval answers it.
                if control.awaiting_approval()
                    && let Some(answer) = Answer::from_word(text)
                {
                    control.approve_oldest(answer);
                    continue;
                }
                // A line typed while the model waits for an answer is it.
                if control.answer_oldest(text.to_string()) {
                    continue;
                }
                prompt(Input::Prompt(
                    control.queue_prompt(),
                    UserContent::Text(line.clone()),
                    Vec::new(),
                    Vec::new(),
                ));
                continue;
            }
            match serde_json::from_str::<AgentCommand>(text) {
                Ok(AgentCommand::Prompt {
                    content,
                    attachments,
                    data,
                }) => {
                    prompt(Input::Prompt(
                        control.queue_prompt(),
                        content,
                        attachments,
                        data,
                    ));
                }
                // Seed 002 writes `message` for a prompt.
                Ok(AgentCommand::Message { content }) => {
                    prompt(Input::Prompt(
                        control.queue_prompt(),
                        content,
                        Vec::new(),
                        Vec::new(),
                    ));
                }
                Ok(AgentCommand::Steer { content }) => {
                    // Steering with nothing running is simply the next prompt.
                    if let Some(content) = control.steer(content) {
                        prompt(Input::Prompt(
                            control.queue_prompt(),
                            content,
                            Vec::new(),
                            Vec::new(),
                        ));
                    }
                }
                Ok(AgentCommand::Answer {
                    tool_call_id,
                    answer,
                }) => {
                    if !control.answer(&tool_call_id, answer) {
                        // In the stream too: the client learns its answer
                        // went nowhere (the question was answered by then,
                        // or never asked).
                        send(Input::Unreadable(format!(
                            "stdin line {n}: answer for `{tool_call_id}` ignored: no question with that id is waiting for an answer"
                        )));
                    }
                }
                Ok(AgentCommand::Interrupt) => {
                    // Stops the prompt it follows, even one not begun yet.
                    control.interrupt_in_order();
                }
                Ok(AgentCommand::Compact) => {
                    send(Input::Compact);
                }
                Ok(AgentCommand::SetModel { model }) => {
                    send(Input::SetModel(model));
                }
                Ok(AgentCommand::SetReasoning { level }) => {
                    send(Input::SetReasoning(level));
                }
                Ok(AgentCommand::Approval {
                    tool_call_id,
                    approved,
                    always,
                }) => {
                    if !control.approve(&tool_call_id, Answer::from_command(approved, always)) {
                        warn(
                            BIN,
                            &format!(
                                "stdin line {n}: approval for `{tool_call_id}` ignored: no call with that id is waiting for approval"
                            ),
                        );
                    }
                }
                Err(e) => {
                    // Reported in the stream too: a client reading only
                    // stdout must learn that its line was not taken.
                    send(Input::Unreadable(super::stdin_hint::message(n, text, &e)));
                }
            }
        }
        control.close_input();
    });
}
