//! `ag-loop`: the command line over the agent loop. Prompts come from the
//! arguments or, one per line, from stdin (with `steer`, `interrupt` and
//! `approval` commands); events go to stdout and the session file.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use serde_json::json;
use tokio::io::AsyncBufReadExt;
use tokio::sync::mpsc;

use super::compact::CompactMode;
use super::control::Control;
use super::emit::{Emitter, OutputMode};
use super::gates::Gate;
use super::identity::{self, Identity};
use super::model::ModelClient;
use super::prompt::system_prompt;
use super::runner::{Agent, AgentSettings};
use super::toolset::{DEFAULT_TOOLS, ToolSet, expand};
use crate::cli::{ExitStatus, error_line, warn};
use crate::llm::cli::ReasoningArg;
use crate::llm::keys::{Redactor, key_env_names};
use crate::llm::{Llm, LlmOptions, ModelTable};
use crate::protocol::{AgentCommand, AgentEvent, Message, Outcome, Reasoning, UserContent};
use crate::session::{Store, Writer, messages as session_messages};

const BIN: &str = "ag-loop";

/// The agent loop: prompts in, events out, tools run as subprocesses.
///
/// Each prompt runs turns of a streamed model call and the tool calls it asks
/// for, until the model answers without tools. Prompts come from the
/// arguments, or from stdin one per line: a plain text line is a prompt, or a
/// JSON command: {"type":"prompt","content":...}, {"type":"steer","content":...}
/// (delivered after the running tool calls), {"type":"interrupt"}; a line
/// that is not valid UTF-8 or not a command is skipped with an error event.
/// Events go to stdout as JSONL (readably on a terminal or with --pretty) and
/// to the session file under $AG_HOME/sessions (AG_HOME defaults to ~/.ag).
#[derive(Debug, Parser)]
#[command(
    name = "ag-loop",
    version,
    after_help = "Exit status: 0 the agent finished every prompt, 1 a model error or a limit stopped it, \
2 usage or set-up error, 130 interrupted.\n\nSIGINT or {\"type\":\"interrupt\"} stops the model and the running \
tools; a second SIGINT quits.\n\nShould ag-loop be killed outright (SIGKILL, the OOM killer, a CI job's time \
limit), a watchdog process it started with its first child (ag-watchdog in ps) ends everything it started (tool \
calls, gates, after-hooks, --llm-cmd, MCP servers, and their children): SIGTERM, then SIGKILL 2 s later. It finds \
them by the variable AG_WATCHDOG, which they inherit.\n\nEach tool call's child gets AG_OUTPUT_BUDGET=60000, the \
characters of a result that enter the conversation: ag-read, ag-bash and ag-grep fit their default output in it, whole \
lines, and say how to get the rest (the next offset, the file with the full output, the next page with skip). Longer \
results (from tools that ignore it) are cut to 60,000 characters, head and tail kept. No tool call, gate, after-hook \
or MCP server inherits a provider key variable (see --pass-env)."
)]
pub struct Args {
    /// Prompts to run in order (default: read prompts from stdin).
    pub prompts: Vec<String>,
    /// The model as provider/model (default: the --agent identity's, $AG_MODEL,
    /// the config file's, else anthropic/claude-sonnet-4-5).
    #[arg(short, long, value_name = "MODEL")]
    pub model: Option<String>,
    /// The API key (default: the provider's usual environment variable).
    #[arg(long, value_name = "KEY")]
    pub api_key: Option<String>,
    /// The provider's base URL.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Reasoning effort for models that think.
    #[arg(long, value_enum)]
    pub reasoning: Option<ReasoningArg>,
    /// Give up on a model response that sends nothing for SECONDS, and retry it (default: the
    /// provider's `idle_timeout` in models.json, else the config file's, else 300; 0 waits
    /// forever).
    #[arg(long, value_name = "SECONDS", value_parser = crate::llm::cli::parse_seconds)]
    pub idle_timeout: Option<std::time::Duration>,
    /// Output token limit per model call (default: the model's `max_output` from the model
    /// table or models.json).
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u64>,
    /// Model calls per prompt before the agent stops (default 100).
    #[arg(long, value_name = "N")]
    pub max_turns: Option<u32>,
    /// Stop a prompt's run once N tool calls in a row have failed, of any kind
    /// (default 8; 0 for no limit). The model is warned from half of N on.
    /// Apart from that, a call that fails the same way (same tool, arguments
    /// and error) is pointed out from its second failure and stops the run at
    /// its fifth, however many turns and successful calls lie in between. The
    /// run stops after the turn's results, with the outcome repeated_failure.
    #[arg(long, value_name = "N")]
    pub max_failed_calls: Option<u32>,
    /// Read defaults from FILE instead of $AG_HOME/config.toml (model, tools,
    /// mcp, gate, after, tool, max_turns, max_failed_calls, pass_env; flags win, lists are added to).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Stop a prompt once it has cost this many US dollars.
    #[arg(long, value_name = "USD")]
    pub max_cost: Option<f64>,
    /// The working directory of the agent and its tools.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// The tools to offer: a set (full, minimal, readonly, chat) or ag tool names,
    /// comma-separated (default: full, the ag tools that are installed).
    #[arg(
        long,
        visible_alias = "toolset",
        value_delimiter = ',',
        value_name = "SET|NAMES"
    )]
    pub tools: Option<Vec<String>>,
    /// Add any executable that answers --schema and the tool call protocol
    /// (repeatable). CMD is a shell command line, quoted as in a shell
    /// (`my-tool --flag "a b"`), run by `sh -c` in the agent's directory.
    #[arg(long = "tool", value_name = "CMD")]
    pub extra_tools: Vec<String>,
    /// Near the context window, summarise the older turns with a model call
    /// (auto), or just drop them and leave a marker (never).
    #[arg(long, value_enum, default_value = "auto")]
    pub compact: CompactMode,
    /// A gate: a program that sees each tool call first (one JSON object on
    /// stdin) and allows, denies, asks a person or rewrites it (repeatable, in
    /// order; default: ag-gate's policy, applied in-process with the rules of
    /// $AG_HOME/gate.toml, the same decisions as running `ag-gate`).
    #[arg(long = "gate", value_name = "CMD")]
    pub gates: Vec<String>,
    /// Run tool calls without any gate, not even ag-gate.
    #[arg(long, conflicts_with = "gates")]
    pub no_gate: bool,
    /// A program that sees each tool result and may annotate it (repeatable).
    #[arg(long = "after", value_name = "CMD")]
    pub after: Vec<String>,
    /// Seconds a gate or after-hook may take before it counts as a denial.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub gate_timeout: f64,
    /// Offer the tools of an MCP server: `'CMD ARGS'` started over stdio, or a
    /// streamable-HTTP URL (repeatable). Clashing names become `server__tool`.
    #[arg(long = "mcp", value_name = "CMD|URL")]
    pub mcp: Vec<String>,
    /// Run a message's tool calls one after another instead of in parallel.
    #[arg(long)]
    pub sequential: bool,
    /// Hand each model request to CMD (run with sh -c), which must speak ag-llm's protocol.
    #[arg(long, value_name = "CMD")]
    pub llm_cmd: Option<String>,
    /// Let tools, gates, after-hooks and MCP servers inherit the provider key
    /// variable NAME (repeatable; also `pass_env` in the config file). By
    /// default none of the key variables ag knows (the built-in providers'
    /// *_API_KEY names and every `api_key_env` of models.json) reaches them.
    #[arg(long = "pass-env", value_name = "NAME")]
    pub pass_env: Vec<String>,
    /// Resume the latest session of the working directory.
    #[arg(short = 'c', long = "continue", conflicts_with_all = ["session", "no_session"])]
    pub continue_: bool,
    /// Resume the session with this id (or unique prefix).
    #[arg(long, value_name = "ID", conflicts_with = "no_session")]
    pub session: Option<String>,
    /// Keep no session file.
    #[arg(long)]
    pub no_session: bool,
    /// Run as the agent identity NAME (`.ag/agents/NAME.md` in the project, then
    /// `$AG_HOME/agents/NAME.md`): its front matter sets model, reasoning and tools,
    /// its body the system prompt; flags given here still win.
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// List the agent identities that --agent can load, and exit.
    #[arg(long)]
    pub list_agents: bool,
    /// Replace the built-in system prompt.
    #[arg(long, value_name = "TEXT")]
    pub system_prompt: Option<String>,
    /// Add to the system prompt.
    #[arg(long, value_name = "TEXT")]
    pub append_system_prompt: Option<String>,
    /// Print events as JSONL even on a terminal.
    #[arg(long, conflicts_with_all = ["quiet", "pretty"])]
    pub json: bool,
    /// Print the readable view (streamed text, tool calls in short, usage)
    /// even when stdout is a pipe or a file; colour only on a terminal.
    #[arg(long, conflicts_with = "quiet")]
    pub pretty: bool,
    /// Print only the final answer (for `$(ag-loop --quiet ...)`).
    #[arg(short, long)]
    pub quiet: bool,
}

/// Runs `ag-loop`.
pub fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => return ExitStatus::from_clap(e, BIN).code(),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            error_line(BIN, &format!("cannot start the runtime: {e}"), None);
            return ExitStatus::Input.code();
        }
    };
    let code = runtime.block_on(run(args));
    // The stdin reader may sit in a blocking read (a pipe nobody closes);
    // do not wait for it.
    runtime.shutdown_background();
    code
}

fn setup_error(msg: &str) -> ExitCode {
    error_line(BIN, msg, None);
    ExitStatus::Input.code()
}

async fn run(mut args: Args) -> ExitCode {
    let here = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => return setup_error(&format!("cannot read the working directory: {e}")),
    };
    let cwd = match &args.cwd {
        Some(c) => match here.join(c).canonicalize() {
            Ok(d) if d.is_dir() => d,
            _ => return setup_error(&format!("--cwd `{}` is not a directory", c.display())),
        },
        None => here,
    };
    let config = match super::config::load(args.config.as_deref()) {
        Ok(c) => c,
        Err(e) => return setup_error(&e),
    };
    let max_turns = args.max_turns.or(config.max_turns).unwrap_or(100);
    args.mcp.splice(0..0, config.mcp.iter().cloned());
    args.extra_tools.splice(0..0, config.tool.iter().cloned());
    args.after.splice(0..0, config.after.iter().cloned());
    if !args.no_gate {
        args.gates.splice(0..0, config.gate.iter().cloned());
    }
    if args.list_agents {
        let mut text = String::new();
        for id in identity::list(&cwd) {
            text.push_str(&format!(
                "{}\t{}\t{}\n",
                id.name,
                id.role.as_deref().unwrap_or(""),
                id.path.display()
            ));
        }
        let _ = crate::cli::Stdout::new().write_all_flush(text.as_bytes());
        return ExitStatus::Success.code();
    }
    let ident: Option<Identity> = match &args.agent {
        Some(name) => match identity::load(&cwd, name) {
            Ok(i) => Some(i),
            Err(e) => return setup_error(&e),
        },
        None => None,
    };
    let model_id = args
        .model
        .clone()
        .or_else(|| ident.as_ref().and_then(|i| i.model.clone()))
        .or_else(|| std::env::var("AG_MODEL").ok().filter(|m| !m.is_empty()))
        .or_else(|| config.model.clone())
        .unwrap_or_else(|| "anthropic/claude-sonnet-4-5".into());
    let reasoning: Option<Reasoning> = match (
        args.reasoning,
        ident.as_ref().and_then(|i| i.reasoning.as_deref()),
    ) {
        (Some(r), _) => Some(r.into()),
        (None, Some(r)) => match serde_json::from_value(json!(r)) {
            Ok(r) => Some(r),
            Err(_) => {
                return setup_error(&format!(
                    "agent `{}`: reasoning `{r}` is not off, low, medium or high",
                    args.agent.as_deref().unwrap_or("")
                ));
            }
        },
        (None, None) => None,
    };

    // The window from the model table; AG_CONTEXT_WINDOW overrides it (for
    // models the table does not know, and for tests).
    let mut context_window: Option<u64> = std::env::var("AG_CONTEXT_WINDOW")
        .ok()
        .and_then(|v| v.parse().ok());
    let mut window_source: Option<String> = None;
    let model = match &args.llm_cmd {
        Some(cmd) => ModelClient::Command(cmd.clone()),
        None => match Llm::new(LlmOptions {
            api_key: args.api_key.clone(),
            base_url: args.base_url.clone(),
            ag_home: None,
        }) {
            Ok(llm) => {
                let default_idle = match config
                    .idle_timeout
                    .map(std::time::Duration::try_from_secs_f64)
                {
                    Some(Err(_)) => {
                        return setup_error(
                            "config: `idle_timeout` must be a number of seconds, 0 or more",
                        );
                    }
                    Some(Ok(d)) => Some(d),
                    None => None,
                };
                let llm = llm
                    .with_idle_timeout(args.idle_timeout)
                    .with_default_idle_timeout(default_idle);
                // A bad model id or a missing key: exit 2 before any event.
                if let Err(f) = llm.check(&model_id) {
                    return setup_error(&f.message);
                }
                if context_window.is_none() {
                    // The table's, else asked of the server once for the session.
                    match llm.context_window(&model_id).await {
                        Some(w) => {
                            if w.source != "the model table" && !args.quiet {
                                crate::cli::note(
                                    BIN,
                                    &format!(
                                        "context window of `{model_id}`: {} tokens, {}",
                                        w.tokens, w.source
                                    ),
                                );
                            }
                            context_window = Some(w.tokens);
                            window_source = Some(w.source);
                        }
                        None => warn(
                            BIN,
                            &format!(
                                "the context window of `{model_id}` is unknown (not in the model table, and its server did not say or could not be reached), so the conversation is never compacted\nhint: set `context_window` in models.json, or AG_CONTEXT_WINDOW"
                            ),
                        ),
                    }
                }
                ModelClient::Library(Arc::new(llm))
            }
            Err(e) => return setup_error(&e.to_string()),
        },
    };

    let (names, explicit) = match args
        .tools
        .as_ref()
        .or(ident.as_ref().and_then(|i| i.tools.as_ref()))
        .or(config.tools.as_ref())
    {
        Some(list) => (expand(list), true),
        None => (
            DEFAULT_TOOLS
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>(),
            false,
        ),
    };
    let redactor = withhold_keys(&args, &config, &model);
    let mut tools = match ToolSet::load(&names, explicit, &args.extra_tools, &cwd).await {
        Ok(t) => t,
        Err(e) => return setup_error(&e),
    };
    if let Err(e) = tools.add_mcp(&args.mcp, &cwd).await {
        return setup_error(&e);
    }
    let tools = Arc::new(tools);
    if !explicit {
        let missing: Vec<&str> = names
            .iter()
            .map(String::as_str)
            .filter(|n| tools.get(n).is_none())
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

    // The session: resumed, new, or none.
    let store = Store::from_env();
    let mut history: Vec<Message> = Vec::new();
    // Background jobs that tools start (ag-bash) end with this process.
    let mut tool_env = vec![
        ("AG_SESSION_PID".to_string(), std::process::id().to_string()),
        // Each tool fits its default output in what enters the conversation.
        (
            crate::tools::budget::ENV.to_string(),
            super::toolset::MAX_OUTPUT_CHARS.to_string(),
        ),
    ];
    let mut session_id: Option<String> = None;
    let writer = if args.no_session {
        None
    } else {
        let existing = if let Some(id) = &args.session {
            match store.find(id) {
                Ok(f) => Some(f),
                Err(e) => return setup_error(&e.to_string()),
            }
        } else if args.continue_ {
            store.latest(&cwd).ok().flatten()
        } else {
            None
        };
        let file = match existing {
            Some(f) => {
                match session_messages(&f.path) {
                    Ok((_, msgs, damage)) => {
                        for d in damage {
                            warn(BIN, &format!("{}: {d}", f.path.display()));
                        }
                        history = msgs;
                    }
                    Err(e) => return setup_error(&e.to_string()),
                }
                f
            }
            None => {
                let mut config = json!({
                    "model": model_id,
                    "tools": tools.names(),
                    "max_turns": max_turns,
                });
                if let (Some(w), Some(src)) = (context_window, &window_source) {
                    config["context_window"] = json!({"tokens": w, "source": src});
                }
                match store.create(&cwd, config, None) {
                    Ok((f, _)) => f,
                    Err(e) => return setup_error(&e.to_string()),
                }
            }
        };
        session_id = Some(file.id.clone());
        let dir = file.path.with_extension("d");
        tool_env.push(("AG_SESSION_ID".to_string(), file.id.clone()));
        tool_env.push(("AG_SESSION_DIR".to_string(), dir.display().to_string()));
        match Writer::open(&file.path) {
            Ok(w) => Some(w),
            Err(e) => return setup_error(&e.to_string()),
        }
    };

    let stdout_tty = std::io::stdout().is_terminal();
    let mode = if args.json {
        OutputMode::Json
    } else if args.quiet {
        OutputMode::Quiet
    } else if args.pretty || stdout_tty {
        OutputMode::Pretty
    } else {
        OutputMode::Json
    };
    let color = stdout_tty && std::env::var_os("NO_COLOR").is_none();
    let emitter = Emitter::new(mode, writer, color).with_redactor(redactor);
    let system = system_prompt(
        &cwd,
        args.system_prompt
            .as_deref()
            .or(ident.as_ref().map(|i| i.prompt.as_str())),
        args.append_system_prompt.as_deref(),
        &tools.names(),
    );
    let before = if args.no_gate {
        Vec::new()
    } else if !args.gates.is_empty() {
        args.gates.iter().cloned().map(Gate::Program).collect()
    } else {
        match crate::gate::default_policy() {
            Ok(policy) => vec![Gate::Builtin(std::sync::Arc::new(policy))],
            Err(e) => {
                return setup_error(&format!(
                    "the default gate: {e}; fix the file (its format is in `man ag-gate`), or pass --gate CMD or --no-gate"
                ));
            }
        }
    };
    // Asked on the terminal when there is one to ask on; JSONL clients
    // answer approval_request events with approval commands.
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let settings = AgentSettings {
        model: model_id,
        system,
        reasoning,
        max_tokens: args.max_tokens,
        max_turns,
        max_cost: args.max_cost,
        sequential: args.sequential,
        max_failed_calls: args
            .max_failed_calls
            .or(config.max_failed_calls)
            .unwrap_or(super::repeats::DEFAULT_MAX_FAILED),
        cwd,
        tool_env,
        context_window,
        compact: args.compact,
        gates: super::gates::Gates {
            before,
            after: args.after.clone(),
            timeout: std::time::Duration::from_secs_f64(args.gate_timeout.clamp(0.1, 3600.0)),
        },
        // With prompts from the arguments nothing else reads the terminal.
        interactive: interactive && !args.prompts.is_empty(),
        session_id,
    };
    let mut agent = Agent::new(settings, model, tools, history, emitter);

    let control = Arc::new(Control::new());
    spawn_signal_handlers(control.clone());
    let (tx, mut rx) = mpsc::unbounded_channel::<Input>();
    if args.prompts.is_empty() {
        spawn_stdin_reader(control.clone(), tx);
    } else {
        for p in &args.prompts {
            let _ = tx.send(Input::Prompt(UserContent::Text(p.clone())));
        }
        drop(tx);
        control.close_input();
    }

    let mut status = ExitStatus::Success;
    loop {
        let next = tokio::select! {
            _ = control.quit.cancelled() => None,
            p = rx.recv() => p,
        };
        let content = match next {
            None => break,
            Some(Input::Prompt(content)) => content,
            Some(Input::Unreadable(message)) => {
                // Reported in the stream, in order with the prompts around it.
                warn(BIN, &message);
                if let Err(e) = agent.emitter.emit(AgentEvent::Error { message }) {
                    error_line(BIN, &format!("cannot write an event: {e}"), None);
                    return ExitStatus::Input.code();
                }
                continue;
            }
        };
        match agent.prompt(content, &control).await {
            Ok(end) => {
                let this = match end.outcome {
                    Outcome::Finished => ExitStatus::Success,
                    Outcome::Interrupted => ExitStatus::Signal(2),
                    _ => ExitStatus::Failure,
                };
                if let Some(reason) = &end.error {
                    error_line(BIN, reason, None);
                }
                if this != ExitStatus::Success && status == ExitStatus::Success {
                    status = this;
                }
            }
            Err(e) => {
                error_line(BIN, &format!("cannot write an event: {e}"), None);
                return ExitStatus::Input.code();
            }
        }
        if control.quit.is_cancelled() {
            status = ExitStatus::Signal(2);
            break;
        }
    }
    status.code()
}

/// Keeps the provider key variables out of every child from here on (tools,
/// gates, after-hooks, MCP servers) except those passed on purpose, and
/// returns what hides their values in events.
fn withhold_keys(
    args: &Args,
    config: &super::config::Config,
    model: &ModelClient,
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
    let pass: Vec<&String> = args.pass_env.iter().chain(&config.pass_env).collect();
    crate::proc::withhold_env(
        key_env_names(&table)
            .into_iter()
            .filter(|n| !pass.contains(&n)),
    );
    let extra: Vec<(&str, String)> = args
        .api_key
        .iter()
        .map(|k| ("--api-key", k.clone()))
        .collect();
    Arc::new(Redactor::for_keys(&table, &extra))
}

fn spawn_signal_handlers(control: Arc<Control>) {
    use tokio::signal::unix::{SignalKind, signal};
    let c = control.clone();
    tokio::spawn(async move {
        let Ok(mut sigint) = signal(SignalKind::interrupt()) else {
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
        let Ok(mut sigterm) = signal(SignalKind::terminate()) else {
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
    /// A prompt to run.
    Prompt(UserContent),
    /// A line that could not be read, reported as an `error` event.
    Unreadable(String),
}

fn spawn_stdin_reader(control: Arc<Control>, tx: mpsc::UnboundedSender<Input>) {
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).split(b'\n');
        let mut n = 0usize;
        while let Ok(Some(bytes)) = lines.next_segment().await {
            n += 1;
            // One bad line costs that line, not every prompt after it.
            let line = match String::from_utf8(bytes) {
                Ok(l) => l,
                Err(e) => {
                    let _ = tx.send(Input::Unreadable(format!(
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
                // A y/n typed while a call waits for approval answers it.
                let answer = text.to_lowercase();
                if control.awaiting_approval()
                    && matches!(answer.as_str(), "y" | "yes" | "n" | "no")
                {
                    control.approve_oldest(answer.starts_with('y'));
                    continue;
                }
                let _ = tx.send(Input::Prompt(UserContent::Text(line.clone())));
                continue;
            }
            match serde_json::from_str::<AgentCommand>(text) {
                Ok(AgentCommand::Prompt { content }) => {
                    let _ = tx.send(Input::Prompt(content));
                }
                Ok(AgentCommand::Steer { content }) => {
                    // Steering with nothing running is simply the next prompt.
                    if control.busy() {
                        control.steer(content);
                    } else {
                        let _ = tx.send(Input::Prompt(content));
                    }
                }
                Ok(AgentCommand::Interrupt) => {
                    control.interrupt();
                }
                Ok(AgentCommand::Approval {
                    tool_call_id,
                    approved,
                }) => {
                    if !control.approve(&tool_call_id, approved) {
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
                    let _ = tx.send(Input::Unreadable(format!(
                        "stdin line {n}: not a command ({e}), skipped; expected {{\"type\":\"prompt\",\"content\":...}}, steer, interrupt or approval, or a plain text line"
                    )));
                }
            }
        }
        control.close_input();
    });
}
