//! What can go wrong while ag-loop sets itself up (before the first event):
//! one error type for the config file, the identity, the flags' values, the
//! model client, the tools, the MCP servers, the session and the default
//! gate. Each variant carries the path or name concerned; its text is what
//! the user reads after `ag-loop: error:`, and every one exits with status 2.

use std::path::PathBuf;

/// A set-up failure of ag-loop.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The process's own working directory is unreadable.
    #[error("cannot read the working directory: {0}")]
    WorkingDir(#[source] std::io::Error),
    /// The directory a run without a session keeps its task list in
    /// cannot be made (under `$TMPDIR`).
    #[error("cannot make the run's own directory (for its task list) under `{dir}`: {0}; set TMPDIR to a writable directory", dir = std::env::temp_dir().display())]
    RunDir(#[source] std::io::Error),
    /// `--cwd` names no directory.
    #[error("--cwd `{}` is not a directory", .0.display())]
    NotADirectory(PathBuf),
    /// `--skills` names no directory.
    #[error("--skills `{}` is not a directory: give a folder that holds skill folders (each with a SKILL.md), e.g. `--skills .agents/skills`", .0.display())]
    NoSkillsDir(PathBuf),
    /// The config file could not be read.
    #[error("cannot read config `{}`: {source}", path.display())]
    ConfigRead {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The config file is not valid TOML of the known keys.
    #[error("config `{}`: {source}", path.display())]
    ConfigParse {
        /// The file.
        path: PathBuf,
        /// Why.
        source: Box<toml::de::Error>,
    },
    /// The config's `idle_timeout` is negative or not finite.
    #[error("config: `idle_timeout` must be a number of seconds, 0 or more")]
    ConfigIdleTimeout(f64),
    /// The config's `temperature` is negative or not finite.
    #[error("config: `temperature` must be a number, 0 or more, not {0}")]
    ConfigTemperature(f64),
    /// The config's `ask_timeout` is negative or not finite.
    #[error("config: `ask_timeout` must be a number of seconds, 0 or more (0: no limit), not {0}")]
    ConfigAskTimeout(f64),
    /// An `--attach` file cannot be attached.
    #[error("{0}")]
    Attach(#[from] crate::attach::AttachError),
    /// No identity file of that name in any directory searched.
    #[error(
        "no agent `{name}`: looked for `{name}.md` in {}; `ag-loop --list-agents` shows the ones there are",
        dirs.iter().map(|d| format!("`{}`", d.display())).collect::<Vec<_>>().join(", ")
    )]
    NoIdentity {
        /// The name asked for.
        name: String,
        /// Where it was looked for.
        dirs: Vec<PathBuf>,
    },
    /// An identity file could not be read.
    #[error("cannot read `{}`: {source}", path.display())]
    IdentityRead {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// An identity's front matter has no closing `---`.
    #[error("`{}`: the front matter opened with `---` is never closed", .0.display())]
    IdentityUnclosed(PathBuf),
    /// A front matter line that cannot be read.
    #[error("`{}` line {line}: {why}", path.display())]
    IdentityLine {
        /// The file.
        path: PathBuf,
        /// The line number in the file.
        line: usize,
        /// What is wrong and what to write.
        why: String,
    },
    /// A front matter key ag-loop does not know.
    #[error(
        "`{}` line {line}: unknown key `{key}` (known: name, role, model, reasoning, tools (or toolSet), output_schema, sandbox, sandbox_mode, allow_net, workspace)",
        path.display()
    )]
    IdentityKey {
        /// The file.
        path: PathBuf,
        /// The line number in the file.
        line: usize,
        /// The key.
        key: String,
    },
    /// An identity's `reasoning` is not one of the efforts.
    #[error("agent `{agent}`: reasoning `{value}` is not off, low, medium or high")]
    Reasoning {
        /// The identity's name as given to --agent.
        agent: String,
        /// What its front matter says.
        value: String,
    },
    /// An event of set-up (a note on a resumed session) could not be written.
    #[error("cannot write an event: {0}")]
    Emit(#[source] std::io::Error),
    /// The model library could not start (models.json, the HTTP client).
    #[error("{0}")]
    Llm(#[from] crate::llm::LlmError),
    /// The model cannot be used: an unknown id or a missing key.
    #[error("{message}")]
    Model {
        /// The model id.
        model: String,
        /// The library's explanation.
        message: String,
    },
    /// A tool asked for by name is not installed.
    #[error(
        "tool `{0}`: no `ag-{0}` beside ag-loop or on PATH; install it or leave it out of --tools (or of an identity's or the config file's `tools`), which take ag tool names and these sets: {sets}",
        sets = super::named_sets::SETS.iter().map(|(n, what)| format!("{n} = {what}")).collect::<Vec<_>>().join("; ")
    )]
    ToolMissing(String),
    // Runs that end when a check passes (issue 35).
    /// A flag of `--until` with a value that cannot work.
    #[error("{0}")]
    Until(String),
    /// A `--tool` (or config `tool`) command line is empty.
    #[error("--tool needs a command")]
    ToolCommandEmpty,
    /// A tool did not answer `--schema` usefully.
    #[error("{0}")]
    ToolSchema(#[from] crate::tool_protocol::exec::SchemaError),
    /// Two tools share a name.
    #[error("two tools are named `{name}`: `{first}` and `{second}`; leave one out")]
    ToolClash {
        /// The shared name.
        name: String,
        /// The first tool's command.
        first: String,
        /// The second tool's command.
        second: String,
    },
    /// An MCP server could not be started or asked for its tools.
    #[error("MCP server `{spec}`: {source}")]
    Mcp {
        /// The server, as given to --mcp.
        spec: String,
        /// Why.
        source: crate::mcp::client::McpError,
    },
    /// `AG_MCP_HEADERS` is not what it must be (the message never shows a
    /// header's value).
    #[error("{0}")]
    McpHeaders(String),
    /// Two of an MCP server's tools end up with the same name.
    #[error("MCP server `{spec}`: two tools would be named `{name}`; leave one server out")]
    McpClash {
        /// The server, as given to --mcp.
        spec: String,
        /// The name.
        name: String,
    },
    /// The session store refused (no such id, an ambiguous prefix, a file
    /// it cannot create).
    #[error("{0}")]
    Store(#[from] crate::session::StoreError),
    /// A session file could not be read or opened for appending.
    #[error("{source}")]
    SessionFile {
        /// The session file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Another process runs the session (one writer per session), or its
    /// lock could not be taken.
    #[error("{0}{hint}", hint = in_use_hint(.0))]
    SessionLock(#[from] crate::session::LockError),
    /// ag-gate's rules file, used when no --gate is given, is broken.
    #[error(
        "the default gate: {0}; fix the file (its format is in `man ag-gate`), or pass --gate CMD or --no-gate"
    )]
    DefaultGate(#[source] crate::gate::config::ConfigError),
    // The sandbox (issue 19).
    /// An identity's sandbox key has a value ag-loop does not know.
    #[error("`{}`: `{key}: {value}` is not one of {known}", path.display())]
    SandboxValue {
        /// The identity file.
        path: PathBuf,
        /// The key.
        key: &'static str,
        /// What it says.
        value: String,
        /// The values there are.
        known: &'static str,
    },
    /// `--sandbox require` on a kernel that cannot confine the tools, or a
    /// sandbox that could not be set up.
    #[error("{0}")]
    Sandbox(String),
    // Structured output (--output-schema).
    /// The output schema cannot be read, is not JSON or is no JSON Schema.
    #[error("{origin}: {reason}")]
    OutputSchema {
        /// Who gave it: the flag, the config file, the identity.
        origin: String,
        /// What is wrong with it.
        reason: String,
    },
    // Tools in another workspace (issue 22).
    /// The workspace URI is bad, or the workspace could not be reached or
    /// given the tools.
    #[error("{0}")]
    Workspace(String),
}

/// What to do about a session another process runs.
fn in_use_hint(e: &crate::session::LockError) -> &'static str {
    match e {
        crate::session::LockError::InUse { .. } => {
            "\nhint: wait for it to end, or pass --wait-for-session to wait for it here"
        }
        crate::session::LockError::Io { .. } => "",
    }
}
