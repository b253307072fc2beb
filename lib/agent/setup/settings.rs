//! How ag-loop weighs what it was told: the flags, the config file, the
//! `--agent` identity, the environment and the built-in defaults, resolved
//! into one [`LoopConfig`] before anything is started. Every precedence rule
//! lives here, and nothing here reads a file, the environment or the
//! terminal: the caller passes them in, so each rule is tested alone.
//!
//! The rules: a single value comes from the flag, else the identity, else
//! `$AG_MODEL` (the model only), else the config file, else the default;
//! lists (`mcp`, `tool`, `after`, `gate`, `pass_env`) are the config's
//! followed by the flags'. A resumed session's own model, reasoning and
//! tool set come right after the flags (and after an identity that a flag
//! named): resuming keeps what the session was.

use std::time::Duration;

use serde_json::json;

use super::args::Args;
use super::args::CompactMode;
use crate::agent::config::error::SetupError;
use crate::agent::config::file::Config;
use crate::agent::config::identity::Identity;
use crate::agent::config::named_sets::expand;
use crate::agent::events::emit::OutputMode;
use crate::protocol::Reasoning;

/// The model when nobody names one.
pub const DEFAULT_MODEL: &str = "anthropic/claude-sonnet-4-5";

/// Model calls per prompt when nobody says.
pub const DEFAULT_MAX_TURNS: u32 = 100;

/// What set-up reads from the environment and the terminal.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// `$AG_MODEL`, if set.
    pub ag_model: Option<String>,
    /// `$AG_CONTEXT_WINDOW`, if set.
    pub context_window: Option<String>,
    /// Whether `$NO_COLOR` is set.
    pub no_color: bool,
    /// Whether stdout is a terminal.
    pub stdout_tty: bool,
    /// Whether stdin and stderr are both a terminal (someone to ask).
    pub interactive: bool,
    /// The CLI agent tools that are installed, which `full` adds.
    pub cli_agents: Vec<String>,
    /// Whether a Chromium is found: a tool list that names `full` then
    /// adds ag-browser's tools (the default set does not: see
    /// [`crate::agent::config::named_sets::DEFAULT_TOOLS`]).
    pub browser: bool,
    /// Whether stdin is a pipe, socket or terminal, where a client may
    /// answer questions, rather than a file or /dev/null.
    pub stdin_live: bool,
}

impl Env {
    /// Reads this process's environment and terminal.
    pub fn from_process() -> Env {
        use std::io::IsTerminal;
        Env {
            ag_model: std::env::var("AG_MODEL").ok(),
            context_window: std::env::var("AG_CONTEXT_WINDOW").ok(),
            no_color: std::env::var_os("NO_COLOR").is_some(),
            stdout_tty: std::io::stdout().is_terminal(),
            interactive: std::io::stdin().is_terminal() && std::io::stderr().is_terminal(),
            cli_agents: crate::agent::delegation::cli_agents::installed(),
            browser: crate::tools::browser::launch::available(),
            stdin_live: stdin_live(),
        }
    }
}

/// Whether stdin may have someone at its other end: a pipe, a socket or a
/// terminal, not a regular file or a device such as /dev/null.
fn stdin_live() -> bool {
    use std::io::IsTerminal;
    use std::os::fd::AsFd;
    use std::os::unix::fs::FileTypeExt;
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return true;
    }
    let Ok(fd) = stdin.as_fd().try_clone_to_owned() else {
        return false;
    };
    match std::fs::File::from(fd).metadata() {
        Ok(m) => {
            let t = m.file_type();
            t.is_fifo() || t.is_socket()
        }
        Err(_) => false,
    }
}

/// Which gates see each tool call.
#[derive(Debug, Clone, PartialEq)]
pub enum GateChoice {
    /// None at all (`--no-gate`).
    Off,
    /// These programs, in order.
    Programs(Vec<String>),
    /// ag-gate's policy, in-process.
    Default,
}

/// Which session the events go to.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionChoice {
    /// No session file.
    Off,
    /// The session with this id or prefix.
    Resume(String),
    /// The working directory's latest session, else a new one.
    Latest,
    /// A new session.
    New,
}

/// What a resumed session was, from its header's `config` and its last
/// `settings` event. `None`: not recorded (a session of an older ag);
/// `Some(None)`: recorded as none (the model's default reasoning, the
/// default tool set, no identity).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resumed {
    /// Its model.
    pub model: Option<String>,
    /// Its reasoning effort.
    pub reasoning: Option<Option<Reasoning>>,
    /// Its tool set as asked for.
    pub tools: Option<Option<Vec<String>>>,
    /// Its identity.
    pub agent: Option<Option<String>>,
    // Runs that end when a check passes (issue 35).
    /// Its `--until` check.
    pub until: Option<Option<crate::protocol::UntilCheck>>,
}

/// ag-loop's settings once every source has been weighed.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopConfig {
    /// `provider/model`.
    pub model: String,
    /// Where the model came from (`-m/--model`, `$AG_MODEL`, the default, ...).
    pub model_source: String,
    /// Reasoning effort, if any was asked for.
    pub reasoning: Option<Reasoning>,
    /// Model calls per prompt.
    pub max_turns: u32,
    /// Failed calls in a row that stop a run (0: no limit).
    pub max_failed_calls: u32,
    /// The tool set as asked for (a set name, tool names); `None`: the
    /// default, `full`. The session records it.
    pub tool_set: Option<Vec<String>>,
    /// The ag tools to offer, by name.
    pub tools: Vec<String>,
    /// Whether the tools were named (so a missing one is an error).
    pub tools_explicit: bool,
    /// The identity answering, by the name `--agent` takes.
    pub agent: Option<String>,
    /// The identity's body, put above the project context.
    pub identity_prompt: Option<String>,
    /// Extra tool command lines.
    pub extra_tools: Vec<String>,
    /// MCP servers.
    pub mcp: Vec<String>,
    /// Gates.
    pub gates: GateChoice,
    /// After-hooks, in order.
    pub after: Vec<String>,
    /// How long a gate or after-hook may take.
    pub gate_timeout: Duration,
    /// Provider key variables that children inherit anyway.
    pub pass_env: Vec<String>,
    /// The idle timeout the flag asks for.
    pub idle_timeout: Option<Duration>,
    /// The config file's idle timeout, below the provider's own.
    pub default_idle_timeout: Option<Duration>,
    /// The context window `$AG_CONTEXT_WINDOW` forces.
    pub context_window: Option<u64>,
    /// The system prompt replacing the built-in one (`--system-prompt`).
    pub system_prompt: Option<String>,
    /// Text added to the system prompt.
    pub append_system_prompt: Option<String>,
    /// The session to write.
    pub session: SessionChoice,
    /// How events are shown.
    pub output: OutputMode,
    /// Whether the readable view is coloured.
    pub color: bool,
    /// Whether approvals are asked on the terminal.
    pub interactive: bool,
    /// Whether a client on stdin answers approvals (`--approve-on-stdin`).
    pub approve_on_stdin: bool,
    /// Output tokens per model call.
    pub max_tokens: Option<u64>,
    /// Sampling temperature of every model call (`None`: the provider's).
    pub temperature: Option<f64>,
    /// Dollars per prompt.
    pub max_cost: Option<f64>,
    /// One tool call at a time.
    pub sequential: bool,
    /// How to shorten the conversation.
    pub compact: CompactMode,
    // The sandbox (issue 19).
    /// How tool calls are confined.
    pub sandbox: crate::agent::calls::sandbox::SandboxChoice,
    // Checkpoints (issue 20).
    /// Record the tree before turns that may change it.
    pub checkpoints: bool,
    /// Files larger than this are left out of checkpoints.
    pub checkpoint_max_file_bytes: u64,
    // Tools in another workspace (issue 22).
    /// Where the ag tools run, and a project identity's workspace set aside.
    pub workspace: super::workspace::Choice,
    // Questions (issue 31).
    /// Who answers the model's questions.
    pub questions: crate::agent::calls::ask::Questions,
    // Runs that end when a check passes (issue 35).
    /// The `--until` check and the stop hooks.
    pub checks: super::until::CheckConfig,
}

impl LoopConfig {
    /// Weighs the flags, the config, the identity, the environment and,
    /// when the session is resumed, what it was.
    pub fn resolve(
        args: &Args,
        config: &Config,
        ident: Option<&Identity>,
        env: &Env,
        resumed: &Resumed,
    ) -> Result<LoopConfig, SetupError> {
        // An identity named by a flag brings its own settings, before the
        // session's; the session's own identity comes after them.
        let (flagged, own) = match args.agent {
            Some(_) => (ident, None),
            None => (None, ident),
        };
        let (model, model_source) = pick_model(args, config, flagged, own, env, resumed);
        let from_identity = |i: Option<&Identity>| -> Result<Option<Reasoning>, SetupError> {
            let Some((i, r)) = i.and_then(|i| i.reasoning.as_deref().map(|r| (i, r))) else {
                return Ok(None);
            };
            serde_json::from_value(json!(r))
                .map(Some)
                .map_err(|_| SetupError::Reasoning {
                    agent: i.stem.clone(),
                    value: r.to_string(),
                })
        };
        let reasoning = match args.reasoning {
            Some(r) => Some(r.into()),
            None => match (from_identity(flagged)?, resumed.reasoning) {
                (Some(r), _) => Some(r),
                (None, Some(r)) => r,
                (None, None) => from_identity(own)?,
            },
        };
        // Only the model library reads it: an --llm-cmd run ignores it.
        let default_idle_timeout = match config.idle_timeout {
            Some(secs) if args.llm_cmd.is_none() => Some(
                Duration::try_from_secs_f64(secs)
                    .map_err(|_| SetupError::ConfigIdleTimeout(secs))?,
            ),
            _ => None,
        };
        let (tool_set, tools_explicit) = tool_set(args, config, flagged, own, resumed);
        // `full` named in a list adds the browser's tools when Chromium is
        // there; the default (`full` unnamed) leaves them out, as their
        // definitions would take the first request past its budget.
        let mut full_extras = env.cli_agents.clone();
        if tool_set.is_some() && env.browser {
            full_extras.extend(crate::tools::offer::expand_binary("browser"));
        }
        let mut tools = expand(
            tool_set.as_deref().unwrap_or(&["full".to_string()]),
            &full_extras,
        );
        let questions = questions(args, config, env)?;
        // A question nobody can answer costs a turn and every request the
        // tool's definition: `ask` is offered only when some answer can
        // come, from the default and a named set alike (a small model sent
        // its own request to the unattended run as a question, five times
        // over). A list that names `ask` itself offers it anyway.
        if !asks_for_ask(tool_set.as_deref()) && !questions.answerable() {
            tools.retain(|t| t != crate::agent::calls::ask::NAME);
        }
        Ok(LoopConfig {
            model,
            model_source,
            reasoning,
            tool_set,
            agent: ident.map(|i| i.stem.clone()),
            identity_prompt: ident.map(|i| i.prompt.clone()),
            max_turns: args
                .max_turns
                .or(config.max_turns)
                .unwrap_or(DEFAULT_MAX_TURNS),
            max_failed_calls: args
                .max_failed_calls
                .or(config.max_failed_calls)
                .unwrap_or(crate::agent::calls::repeats::DEFAULT_MAX_FAILED),
            tools,
            tools_explicit,
            extra_tools: added(&config.tool, &args.extra_tools),
            mcp: added(&config.mcp, &args.mcp),
            gates: gates(args, config),
            after: added(&config.after, &args.after),
            gate_timeout: Duration::from_secs_f64(args.gate_timeout.clamp(0.1, 3600.0)),
            pass_env: added(&args.pass_env, &config.pass_env),
            idle_timeout: args.idle_timeout,
            default_idle_timeout,
            // For models the table does not know, and for tests; a value
            // that is not a number is ignored.
            context_window: env.context_window.as_deref().and_then(|v| v.parse().ok()),
            system_prompt: args.system_prompt.clone(),
            append_system_prompt: args.append_system_prompt.clone(),
            session: session_choice(args),
            output: output(args, env),
            color: env.stdout_tty && !env.no_color,
            // With prompts from the arguments nothing else reads the terminal.
            interactive: env.interactive && !args.prompts.is_empty(),
            approve_on_stdin: args.approve_on_stdin,
            max_tokens: args.max_tokens,
            // The flag, then the identity's (checked as it was read),
            // then the config's.
            temperature: match (
                args.temperature,
                ident.and_then(|i| i.temperature),
                config.temperature,
            ) {
                (Some(t), _, _) | (None, Some(t), _) => Some(t),
                (None, None, Some(t)) if crate::llm::cli::is_temperature(t) => Some(t),
                (None, None, Some(t)) => return Err(SetupError::ConfigTemperature(t)),
                (None, None, None) => None,
            },
            max_cost: args.max_cost,
            sequential: args.sequential,
            compact: args.compact,
            sandbox: crate::agent::calls::sandbox::resolve(&args.sandbox, config, ident)?,
            checkpoints: !args.no_checkpoints && config.checkpoints != Some(false),
            checkpoint_max_file_bytes: config
                .checkpoint_max_file_size
                .unwrap_or(crate::checkpoint::DEFAULT_MAX_FILE_BYTES),
            workspace: super::workspace::resolve(args, config, ident),
            questions,
            checks: super::until::CheckConfig::resolve(args, resumed.until.as_ref())?,
        })
    }
}

/// Who answers the model's questions: the program (flag, else config),
/// then a person (the terminal when prompts are arguments, the client on
/// stdin when prompts come from a live stdin), then the default.
fn questions(
    args: &Args,
    config: &Config,
    env: &Env,
) -> Result<crate::agent::calls::ask::Questions, SetupError> {
    use crate::agent::calls::ask::Person;
    let person = if env.interactive && !args.prompts.is_empty() {
        Person::Terminal
    } else if args.prompts.is_empty() && env.stdin_live {
        Person::Stdin
    } else {
        Person::Nobody
    };
    let timeout = match (args.ask_timeout, config.ask_timeout) {
        (Some(d), _) => Some(d),
        (None, Some(secs)) => Some(
            Duration::try_from_secs_f64(secs).map_err(|_| SetupError::ConfigAskTimeout(secs))?,
        ),
        (None, None) => None,
    };
    Ok(crate::agent::calls::ask::Questions {
        person,
        cmd: args
            .ask_cmd
            .clone()
            .or_else(|| config.ask_cmd.clone())
            .filter(|c| !c.trim().is_empty()),
        default: args
            .ask_default
            .clone()
            .or_else(|| config.ask_default.clone()),
        // 0 is no limit, as for the idle timeout.
        timeout: timeout.filter(|d| !d.is_zero()),
    })
}

/// The model and where it came from: the flag, else the flagged
/// identity's, else the resumed session's, else the identity's, else
/// `$AG_MODEL`, else the config's, else the default.
fn pick_model(
    args: &Args,
    config: &Config,
    flagged: Option<&Identity>,
    own: Option<&Identity>,
    env: &Env,
    resumed: &Resumed,
) -> (String, String) {
    let identity = |i: &Identity| format!("the identity `{}`", i.path.display());
    if let Some(m) = &args.model {
        return (m.clone(), "-m/--model".into());
    }
    if let Some(i) = flagged
        && let Some(m) = &i.model
    {
        return (m.clone(), identity(i));
    }
    if let Some(m) = &resumed.model {
        return (m.clone(), "the resumed session".into());
    }
    if let Some(i) = own
        && let Some(m) = &i.model
    {
        return (m.clone(), identity(i));
    }
    if let Some(m) = env.ag_model.clone().filter(|m| !m.is_empty()) {
        return (m, "$AG_MODEL".into());
    }
    if let Some(m) = &config.model {
        return (m.clone(), "the config file".into());
    }
    (DEFAULT_MODEL.into(), "the default".into())
}

/// Whether the tool list names `ask` itself, not through a set.
fn asks_for_ask(list: Option<&[String]>) -> bool {
    list.into_iter().flatten().any(|item| {
        crate::agent::config::named_sets::own_name(item.trim()) == crate::agent::calls::ask::NAME
    })
}

/// The tool set as asked for: the flag's, else the flagged identity's, else
/// the resumed session's, else the identity's, else the config's; `None`
/// for the default. Whether it was named: a set a session recorded is not
/// (a tool since uninstalled is left out), nor the default.
fn tool_set(
    args: &Args,
    config: &Config,
    flagged: Option<&Identity>,
    own: Option<&Identity>,
    resumed: &Resumed,
) -> (Option<Vec<String>>, bool) {
    if let Some(list) = args
        .tools
        .as_ref()
        .or(flagged.and_then(|i| i.tools.as_ref()))
    {
        return (Some(list.clone()), true);
    }
    if let Some(recorded) = &resumed.tools {
        return (recorded.clone(), false);
    }
    match own.and_then(|i| i.tools.as_ref()).or(config.tools.as_ref()) {
        Some(list) => (Some(list.clone()), true),
        None => (None, false),
    }
}

/// `--no-gate` turns off even the config's gates; with none named, ag-gate's
/// policy decides.
fn gates(args: &Args, config: &Config) -> GateChoice {
    if args.no_gate {
        return GateChoice::Off;
    }
    let programs = added(&config.gate, &args.gates);
    if programs.is_empty() {
        GateChoice::Default
    } else {
        GateChoice::Programs(programs)
    }
}

/// The session the flags ask for.
pub fn session_choice(args: &Args) -> SessionChoice {
    if args.no_session {
        SessionChoice::Off
    } else if let Some(id) = &args.session {
        SessionChoice::Resume(id.clone())
    } else if args.continue_ {
        SessionChoice::Latest
    } else {
        SessionChoice::New
    }
}

/// JSONL unless asked otherwise or stdout is a terminal.
fn output(args: &Args, env: &Env) -> OutputMode {
    if args.json {
        OutputMode::Json
    } else if args.result_line {
        OutputMode::Result
    } else if args.quiet {
        OutputMode::Quiet
    } else if args.pretty || env.stdout_tty {
        OutputMode::Pretty
    } else {
        OutputMode::Json
    }
}

/// A list given in two places: the first's items, then the second's.
fn added(first: &[String], then: &[String]) -> Vec<String> {
    first.iter().chain(then).cloned().collect()
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use clap::Parser;

    use super::*;

    fn args(flags: &[&str]) -> Args {
        Args::try_parse_from(std::iter::once("ag-loop").chain(flags.iter().copied())).unwrap()
    }

    fn resolve(flags: &[&str], config: &Config, ident: Option<&Identity>) -> LoopConfig {
        LoopConfig::resolve(
            &args(flags),
            config,
            ident,
            &Env::default(),
            &Resumed::default(),
        )
        .unwrap()
    }

    /// The set-up error a config without flags gives.
    fn config_error(config: &Config) -> String {
        LoopConfig::resolve(
            &args(&[]),
            config,
            None,
            &Env::default(),
            &Resumed::default(),
        )
        .unwrap_err()
        .to_string()
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    fn identity() -> Identity {
        Identity {
            stem: "rev".into(),
            name: "rev".into(),
            model: Some("ident/model".into()),
            reasoning: Some("high".into()),
            tools: Some(strings(&["readonly"])),
            prompt: "You review.".into(),
            path: PathBuf::from("rev.md"),
            ..Default::default()
        }
    }

    fn config() -> Config {
        Config {
            model: Some("config/model".into()),
            tools: Some(strings(&["minimal"])),
            mcp: strings(&["config-mcp"]),
            gate: strings(&["config-gate"]),
            after: strings(&["config-after"]),
            tool: strings(&["config-tool"]),
            max_turns: Some(7),
            max_failed_calls: Some(3),
            pass_env: strings(&["CONFIG_KEY"]),
            idle_timeout: Some(12.5),
            ..Config::default()
        }
    }

    #[test]
    fn checkpoints_on_unless_the_flag_or_the_config_says_off() {
        let none = Config::default();
        let c = resolve(&[], &none, None);
        assert!(c.checkpoints);
        assert_eq!(c.checkpoint_max_file_bytes, 10 * 1024 * 1024);
        assert!(!resolve(&["--no-checkpoints"], &none, None).checkpoints);
        let off = Config {
            checkpoints: Some(false),
            checkpoint_max_file_size: Some(5),
            ..Default::default()
        };
        let c = resolve(&[], &off, None);
        assert!(!c.checkpoints);
        assert_eq!(c.checkpoint_max_file_bytes, 5);
    }

    #[test]
    fn model_flag_then_identity_then_env_then_config_then_default() {
        let (c, i) = (config(), identity());
        let env = Env {
            ag_model: Some("env/model".into()),
            ..Env::default()
        };
        let model = |flags: &[&str], ident: Option<&Identity>, config: &Config, env: &Env| {
            LoopConfig::resolve(&args(flags), config, ident, env, &Resumed::default())
                .unwrap()
                .model
        };
        assert_eq!(
            model(&["-m", "flag/model"], Some(&i), &c, &env),
            "flag/model"
        );
        assert_eq!(model(&[], Some(&i), &c, &env), "ident/model");
        assert_eq!(model(&[], None, &c, &env), "env/model");
        assert_eq!(model(&[], None, &c, &Env::default()), "config/model");
        assert_eq!(
            model(&[], None, &Config::default(), &Env::default()),
            DEFAULT_MODEL
        );
        // An empty $AG_MODEL counts as unset.
        let empty = Env {
            ag_model: Some(String::new()),
            ..Env::default()
        };
        assert_eq!(model(&[], None, &c, &empty), "config/model");
    }

    #[test]
    fn reasoning_flag_then_identity_and_a_bad_identity_value_is_refused() {
        let i = identity();
        let none = Config::default();
        assert_eq!(
            resolve(&["--reasoning", "low"], &none, Some(&i)).reasoning,
            Some(Reasoning::Low)
        );
        assert_eq!(
            resolve(&[], &none, Some(&i)).reasoning,
            Some(Reasoning::High)
        );
        assert_eq!(resolve(&[], &none, None).reasoning, None);
        let bad = Identity {
            reasoning: Some("hard".into()),
            ..identity()
        };
        let e = LoopConfig::resolve(
            &args(&["--agent", "rev"]),
            &none,
            Some(&bad),
            &Env::default(),
            &Resumed::default(),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "agent `rev`: reasoning `hard` is not off, low, medium or high"
        );
        // The flag wins before the identity's value is even read.
        assert_eq!(
            resolve(&["--reasoning", "off"], &none, Some(&bad)).reasoning,
            Some(Reasoning::Off)
        );
    }

    #[test]
    fn tools_flag_then_identity_then_config_then_every_ag_tool() {
        let (c, i) = (config(), identity());
        let r = resolve(&["--tools", "read,bash,read"], &c, Some(&i));
        // `bash` named is all of ag-bash: the command and the job tools.
        assert_eq!(
            (r.tools, r.tools_explicit),
            (
                strings(&[
                    "read",
                    "bash",
                    "bash_background",
                    "job_output",
                    "job_stop",
                    "job_list"
                ]),
                true
            )
        );
        let r = resolve(&[], &c, Some(&i));
        assert_eq!(
            (r.tools, r.tools_explicit),
            (strings(&["read", "grep", "find", "ls"]), true)
        );
        // With nobody to answer a question (Env::default), `ask` is left
        // out, of the config's set and of the default alike.
        let without_ask: Vec<&str> = crate::agent::config::named_sets::DEFAULT_TOOLS
            .iter()
            .copied()
            .filter(|t| *t != "ask")
            .collect();
        let r = resolve(&[], &c, None);
        assert_eq!((r.tools, r.tools_explicit), (strings(&without_ask), true));
        let r = resolve(&[], &Config::default(), None);
        assert_eq!(r.tools, strings(&without_ask));
        assert_eq!(r.tool_set, None, "the default is recorded as such");
        assert!(
            !r.tools_explicit,
            "the default set leaves missing tools out"
        );
        // `--tools chat` is an explicit set: notify and ask, where someone
        // can answer.
        let r = resolve(&["--tools", "chat", "--ask-default", "no"], &c, None);
        assert_eq!(
            (r.tools, r.tools_explicit),
            (strings(&["notify", "ask"]), true)
        );
        // `full` adds the CLI agents that are installed.
        let env = Env {
            cli_agents: strings(&["codex_cli"]),
            ..Env::default()
        };
        let r = LoopConfig::resolve(
            &args(&[]),
            &Config::default(),
            None,
            &env,
            &Resumed::default(),
        )
        .unwrap();
        assert_eq!(r.tools.last().map(String::as_str), Some("codex_cli"));
        // Where Chromium is found, `full` named adds the browser's tools;
        // the default set stays without them.
        let env = Env {
            browser: true,
            ..Env::default()
        };
        let with = |flags: &[&str]| {
            LoopConfig::resolve(
                &args(flags),
                &Config::default(),
                None,
                &env,
                &Resumed::default(),
            )
            .unwrap()
            .tools
        };
        assert!(
            with(&["--tools", "full"])
                .iter()
                .any(|t| t == "browser_navigate")
        );
        assert!(!with(&[]).iter().any(|t| t.starts_with("browser_")));
    }

    #[test]
    fn a_resumed_session_keeps_its_settings_unless_a_flag_says_otherwise() {
        let (c, i) = (config(), identity());
        let env = Env {
            ag_model: Some("env/model".into()),
            ..Env::default()
        };
        let was = Resumed {
            model: Some("session/model".into()),
            reasoning: Some(None),
            tools: Some(Some(strings(&["basic"]))),
            agent: Some(Some("rev".into())),
            until: None,
        };
        let on = |flags: &[&str], ident: Option<&Identity>| {
            LoopConfig::resolve(&args(flags), &c, ident, &env, &was).unwrap()
        };
        // The session's own identity does not outrank what the session was.
        let r = on(&[], Some(&i));
        assert_eq!(r.model, "session/model");
        assert_eq!(r.reasoning, None, "recorded as the model's default");
        assert_eq!(r.tool_set, Some(strings(&["basic"])));
        assert!(!r.tools_explicit);
        // Flags do.
        let r = on(
            &["-m", "flag/model", "--reasoning", "low", "--tools", "read"],
            Some(&i),
        );
        assert_eq!(r.model, "flag/model");
        assert_eq!(r.reasoning, Some(Reasoning::Low));
        assert_eq!(r.tools, strings(&["read"]));
        // So does an identity named by a flag, for what it sets.
        let r = on(&["--agent", "rev"], Some(&i));
        assert_eq!(r.model, "ident/model");
        assert_eq!(r.reasoning, Some(Reasoning::High));
        assert_eq!(r.tools, strings(&["read", "grep", "find", "ls"]));
        // A session that recorded nothing (an older ag) resolves as before.
        let r = LoopConfig::resolve(&args(&[]), &c, None, &env, &Resumed::default()).unwrap();
        assert_eq!(r.model, "env/model");
    }

    #[test]
    fn numbers_flag_then_config_then_default() {
        let c = config();
        let r = resolve(&["--max-turns", "2", "--max-failed-calls", "0"], &c, None);
        assert_eq!((r.max_turns, r.max_failed_calls), (2, 0));
        let r = resolve(&[], &c, None);
        assert_eq!((r.max_turns, r.max_failed_calls), (7, 3));
        let r = resolve(&[], &Config::default(), None);
        assert_eq!(
            (r.max_turns, r.max_failed_calls),
            (
                DEFAULT_MAX_TURNS,
                crate::agent::calls::repeats::DEFAULT_MAX_FAILED
            )
        );
    }

    #[test]
    fn lists_are_the_configs_then_the_flags() {
        let r = resolve(
            &[
                "--mcp",
                "flag-mcp",
                "--tool",
                "flag-tool",
                "--after",
                "flag-after",
                "--gate",
                "flag-gate",
                "--pass-env",
                "FLAG_KEY",
            ],
            &config(),
            None,
        );
        assert_eq!(r.mcp, strings(&["config-mcp", "flag-mcp"]));
        assert_eq!(r.extra_tools, strings(&["config-tool", "flag-tool"]));
        assert_eq!(r.after, strings(&["config-after", "flag-after"]));
        assert_eq!(
            r.gates,
            GateChoice::Programs(strings(&["config-gate", "flag-gate"]))
        );
        assert_eq!(r.pass_env, strings(&["FLAG_KEY", "CONFIG_KEY"]));
    }

    #[test]
    fn gates_off_or_programs_or_the_default_policy() {
        // --no-gate drops the config's gates too.
        assert_eq!(
            resolve(&["--no-gate"], &config(), None).gates,
            GateChoice::Off
        );
        assert_eq!(
            resolve(&[], &config(), None).gates,
            GateChoice::Programs(strings(&["config-gate"]))
        );
        assert_eq!(
            resolve(&[], &Config::default(), None).gates,
            GateChoice::Default
        );
        let r = resolve(&["--gate-timeout", "0"], &Config::default(), None);
        assert_eq!(r.gate_timeout, Duration::from_millis(100));
        let r = resolve(&["--gate-timeout", "99999"], &Config::default(), None);
        assert_eq!(r.gate_timeout, Duration::from_secs(3600));
    }

    #[test]
    fn idle_timeout_flag_and_config_are_kept_apart() {
        let r = resolve(&["--idle-timeout", "5"], &config(), None);
        assert_eq!(r.idle_timeout, Some(Duration::from_secs(5)));
        assert_eq!(r.default_idle_timeout, Some(Duration::from_millis(12_500)));
        let bad = Config {
            idle_timeout: Some(-1.0),
            ..Config::default()
        };
        assert_eq!(
            config_error(&bad),
            "config: `idle_timeout` must be a number of seconds, 0 or more"
        );
        // An --llm-cmd run does not use it, so does not check it.
        let r = resolve(&["--llm-cmd", "x"], &bad, None);
        assert_eq!(r.default_idle_timeout, None);
    }

    #[test]
    fn temperature_from_the_flag_else_the_config() {
        let cool = Config {
            temperature: Some(0.2),
            ..Config::default()
        };
        assert_eq!(resolve(&[], &cool, None).temperature, Some(0.2));
        assert_eq!(
            resolve(&["--temperature", "0"], &cool, None).temperature,
            Some(0.0)
        );
        assert_eq!(resolve(&[], &Config::default(), None).temperature, None);
        // An identity's comes between the flag and the config.
        let warm = Identity {
            temperature: Some(0.7),
            ..Identity::default()
        };
        assert_eq!(resolve(&[], &cool, Some(&warm)).temperature, Some(0.7));
        assert_eq!(
            resolve(&["--temperature", "0"], &cool, Some(&warm)).temperature,
            Some(0.0)
        );
        let bad = Config {
            temperature: Some(-1.0),
            ..Config::default()
        };
        assert_eq!(
            config_error(&bad),
            "config: `temperature` must be a number, 0 or more, not -1"
        );
    }

    #[test]
    fn context_window_from_the_environment_when_it_is_a_number() {
        let with = |v: &str| {
            let env = Env {
                context_window: Some(v.into()),
                ..Env::default()
            };
            LoopConfig::resolve(
                &args(&[]),
                &Config::default(),
                None,
                &env,
                &Resumed::default(),
            )
            .unwrap()
            .context_window
        };
        assert_eq!(with("32000"), Some(32000));
        assert_eq!(with("lots"), None);
        assert_eq!(resolve(&[], &Config::default(), None).context_window, None);
    }

    #[test]
    fn system_prompt_flag_then_identity_body() {
        let i = identity();
        let none = Config::default();
        let r = resolve(
            &[
                "--system-prompt",
                "Be brief.",
                "--append-system-prompt",
                "More.",
            ],
            &none,
            Some(&i),
        );
        assert_eq!(r.system_prompt.as_deref(), Some("Be brief."));
        assert_eq!(r.append_system_prompt.as_deref(), Some("More."));
        let r = resolve(&[], &none, Some(&i));
        assert_eq!(r.system_prompt, None);
        assert_eq!(r.identity_prompt.as_deref(), Some("You review."));
        assert_eq!(r.agent.as_deref(), Some("rev"));
        assert_eq!(resolve(&[], &none, None).identity_prompt, None);
    }

    #[test]
    fn session_off_then_named_then_latest_then_new() {
        let none = Config::default();
        assert_eq!(
            resolve(&["--no-session"], &none, None).session,
            SessionChoice::Off
        );
        assert_eq!(
            resolve(&["--session", "ab12"], &none, None).session,
            SessionChoice::Resume("ab12".into())
        );
        assert_eq!(resolve(&["-c"], &none, None).session, SessionChoice::Latest);
        assert_eq!(resolve(&[], &none, None).session, SessionChoice::New);
    }

    #[test]
    fn output_mode_colour_and_asking_follow_the_flags_and_the_terminal() {
        let none = Config::default();
        let tty = Env {
            stdout_tty: true,
            interactive: true,
            ..Env::default()
        };
        let on = |flags: &[&str], env: &Env| {
            LoopConfig::resolve(&args(flags), &none, None, env, &Resumed::default()).unwrap()
        };
        assert_eq!(on(&[], &Env::default()).output, OutputMode::Json);
        assert_eq!(on(&[], &tty).output, OutputMode::Pretty);
        assert_eq!(
            on(&["--pretty"], &Env::default()).output,
            OutputMode::Pretty
        );
        assert_eq!(on(&["--json"], &tty).output, OutputMode::Json);
        assert_eq!(on(&["-q"], &tty).output, OutputMode::Quiet);
        assert!(on(&[], &tty).color);
        assert!(
            !on(&["--pretty"], &Env::default()).color,
            "colour only on a terminal"
        );
        let no_color = Env {
            no_color: true,
            ..tty.clone()
        };
        assert!(!on(&[], &no_color).color);
        // Prompts from stdin leave the terminal to the prompts.
        assert!(!on(&[], &tty).interactive);
        assert!(on(&["hello"], &tty).interactive);
        assert!(!on(&["hello"], &Env::default()).interactive);
    }

    #[test]
    fn questions_go_to_whoever_can_answer() {
        use crate::agent::calls::ask::Person;
        let none = Config::default();
        let on = |flags: &[&str], env: &Env| {
            LoopConfig::resolve(&args(flags), &none, None, env, &Resumed::default())
                .unwrap()
                .questions
        };
        let tty = Env {
            interactive: true,
            stdin_live: true,
            ..Env::default()
        };
        let pipe = Env {
            stdin_live: true,
            ..Env::default()
        };
        assert_eq!(on(&["hi"], &tty).person, Person::Terminal);
        assert_eq!(on(&[], &tty).person, Person::Stdin);
        assert_eq!(on(&[], &pipe).person, Person::Stdin);
        // A file or /dev/null on stdin, or prompts as arguments without a
        // terminal: nobody.
        assert_eq!(on(&[], &Env::default()).person, Person::Nobody);
        assert_eq!(on(&["hi"], &pipe).person, Person::Nobody);
        let config = Config {
            ask_cmd: Some("judge".into()),
            ask_default: Some("yes".into()),
            ask_timeout: Some(30.0),
            ..Config::default()
        };
        let q = LoopConfig::resolve(
            &args(&["--ask-default", "no"]),
            &config,
            None,
            &pipe,
            &Resumed::default(),
        )
        .unwrap()
        .questions;
        assert_eq!(q.cmd.as_deref(), Some("judge"));
        assert_eq!(q.default.as_deref(), Some("no"));
        assert_eq!(q.timeout, Some(Duration::from_secs(30)));
        let q = LoopConfig::resolve(
            &args(&["--ask-timeout", "0"]),
            &config,
            None,
            &pipe,
            &Resumed::default(),
        )
        .unwrap()
        .questions;
        assert_eq!(q.timeout, None);
        let bad = Config {
            ask_timeout: Some(-1.0),
            ..Config::default()
        };
        assert!(LoopConfig::resolve(&args(&[]), &bad, None, &pipe, &Resumed::default()).is_err());
    }

    #[test]
    fn the_default_tools_offer_ask_only_when_an_answer_can_come() {
        let none = Config::default();
        let tools = |flags: &[&str], env: &Env| {
            LoopConfig::resolve(&args(flags), &none, None, env, &Resumed::default())
                .unwrap()
                .tools
        };
        let pipe = Env {
            stdin_live: true,
            ..Env::default()
        };
        let has_ask = |t: Vec<String>| t.iter().any(|n| n == "ask");
        assert!(has_ask(tools(&[], &pipe)));
        assert!(!has_ask(tools(&["go"], &Env::default())));
        assert!(has_ask(tools(
            &["--ask-default", "yes", "go"],
            &Env::default()
        )));
        assert!(has_ask(tools(
            &["--ask-cmd", "judge", "go"],
            &Env::default()
        )));
        // Named, it is offered anyway.
        assert!(has_ask(tools(
            &["--tools", "read,ask", "go"],
            &Env::default()
        )));
        // A set names it only as one of its members: nobody can answer,
        // so it is left out of `full` and `minimal` too, but not when some
        // answer can come.
        assert!(!has_ask(tools(&["--tools", "full", "go"], &Env::default())));
        assert!(!has_ask(tools(
            &["--tools", "minimal", "go"],
            &Env::default()
        )));
        assert!(has_ask(tools(&["--tools", "minimal"], &pipe)));
        assert!(has_ask(tools(
            &["--tools", "minimal,ask", "go"],
            &Env::default()
        )));
    }
}
