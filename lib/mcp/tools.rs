//! The tools ag-mcp serves: ag's tool binaries (found beside the ag-mcp
//! executable, else on `PATH`) and any command that speaks the tool
//! protocol, each learned through `--schema` and run as one subprocess per
//! call (by [`crate::tool_protocol::exec`]), so that a crash or a hang in one call
//! cannot take the server down and a cancelled call ends everything it
//! started.

use std::path::PathBuf;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::protocol::{ToolDefinition, ToolResult};
use crate::tool_protocol::ArgsCheck;
use crate::tool_protocol::exec::{self, CallOptions, SchemaError, ToolProgram};
use crate::tool_protocol::hashes;
use crate::tools::offer::{self, Split};

/// The ag tools served when `--tools` is not given, by the names clients
/// see (binary `ag-<name>`, or the binary of an offered tool, see
/// [`crate::tools::offer`]); those not installed are left out. ag-todo and
/// ag-notify are not among them: they belong to an ag session, which an
/// MCP client does not have. `bash` is the command tool alone; its
/// background-job tools are served when asked for (`--tools bash`).
pub const DEFAULT_TOOLS: &[&str] = &[
    "read",
    "write",
    "edit",
    "edit_lines",
    "delete",
    "patch",
    "bash",
    "grep",
    "find",
    "ls",
    "git_status",
    "git_diff",
    "git_log",
    "git_commit",
];

/// ag tools that only look, never change anything: their MCP definitions
/// carry `readOnlyHint`, so that clients may run them without asking.
const READ_ONLY_TOOLS: &[&str] = &["read", "grep", "find", "ls"];

/// Which tools to serve.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// ag tool names (`read`, `grep`); `None` serves [`DEFAULT_TOOLS`] that
    /// are installed, `Some` requires every name to be found.
    pub names: Option<Vec<String>>,
    /// Command lines of other tools (`--tool 'CMD ARGS'`), run by `sh -c`.
    pub commands: Vec<String>,
    /// Passed to every ag tool as `--root DIR`.
    pub root: Option<PathBuf>,
}

/// Why the tools could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// An ag tool asked for by name is not installed.
    #[error(
        "tool `{name}`: no `ag-{name}` beside ag-mcp or on PATH; install it or leave it out of --tools"
    )]
    NotFound {
        /// The tool name.
        name: String,
    },
    /// A tool did not print a usable definition for `--schema`.
    #[error(transparent)]
    Schema(#[from] SchemaError),
    /// A `--tool` command line is blank.
    #[error("--tool needs a command")]
    EmptyCommand,
    /// Two tools have the same name.
    #[error("two tools are named `{name}`: `{first}` and `{second}`; leave one out")]
    Duplicate {
        /// The clashing name.
        name: String,
        /// The command of the first.
        first: String,
        /// The command of the second.
        second: String,
    },
}

/// One tool: how to start it and what it takes.
pub struct ToolCommand {
    program: ToolProgram,
    /// Its definition, from `--schema`.
    pub definition: ToolDefinition,
    /// True for ag tools that change nothing.
    pub read_only: bool,
    /// An ag tool whose `expected_hash` the server hides from the client
    /// and fills in itself (see [`crate::tool_protocol::hashes`]).
    pub server_hash: bool,
    check: ArgsCheck,
    /// A binary offered as one tool per mode (see [`crate::tools::offer`]):
    /// clients see those instead of `definition`.
    split: Option<Split>,
    /// The environment of its calls: the tools the client sees (see
    /// [`offer::MODEL_TOOLS_ENV`]).
    env: Vec<(String, String)>,
}

/// The tools of a server, in the order they are listed.
pub struct ToolBox {
    tools: Vec<ToolCommand>,
    /// Default tools that are installed but could not be loaded: left out,
    /// so that one broken tool does not keep the others from being served.
    pub skipped: Vec<LoadError>,
}

impl ToolBox {
    /// Finds the selected tools and asks each for its definition (all at
    /// once: a slow tool does not hold up the others).
    pub async fn load(selection: &Selection) -> Result<ToolBox, LoadError> {
        // (how to run it, (read only, required, one of ag's own))
        let mut wanted: Vec<(ToolProgram, (bool, bool, bool))> = Vec::new();
        let explicit = selection.names.is_some();
        // A binary's name given (`bash`, `git`) serves all of its tools;
        // the default's `bash` is the command tool alone.
        let names: Vec<String> = match &selection.names {
            Some(n) => n.iter().flat_map(|n| offer::expand_binary(n)).collect(),
            None => DEFAULT_TOOLS.iter().map(|s| s.to_string()).collect(),
        };
        let root_args: Vec<String> = match &selection.root {
            Some(r) => vec!["--root".into(), r.display().to_string()],
            None => Vec::new(),
        };
        let mut parts: Vec<Option<Vec<String>>> = Vec::new();
        for (name, named) in offer::by_binary(&names) {
            match ToolProgram::ag(&name) {
                Some(p) => {
                    wanted.push((
                        p.with_args(root_args.iter().cloned()),
                        (READ_ONLY_TOOLS.contains(&name.as_str()), explicit, true),
                    ));
                    parts.push(named);
                }
                None if explicit => return Err(LoadError::NotFound { name }),
                None => {}
            }
        }
        for cmd in &selection.commands {
            let program = ToolProgram::shell(cmd).ok_or(LoadError::EmptyCommand)?;
            wanted.push((program, (false, true, false)));
        }
        let (programs, flags): (Vec<ToolProgram>, Vec<(bool, bool, bool)>) =
            wanted.into_iter().unzip();
        let answers = exec::load_schemas(programs, None, crate::tools::mains::definition).await;
        let mut tools: Vec<ToolCommand> = Vec::new();
        let mut skipped: Vec<LoadError> = Vec::new();
        for (i, ((program, answer), (read_only, required, own))) in
            answers.into_iter().zip(flags).enumerate()
        {
            let mut definition = match answer {
                Ok(d) => d,
                Err(e) if !required => {
                    skipped.push(e.into());
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            if let Some(first) = tools.iter().find(|o| o.definition.name == definition.name) {
                return Err(LoadError::Duplicate {
                    name: definition.name,
                    first: first.program.label().to_string(),
                    second: program.label().to_string(),
                });
            }
            // The check keeps the whole schema: the tool still takes the
            // hash the server passes itself.
            let check = ArgsCheck::new(definition.parameters.clone());
            let server_hash = own && hashes::hide_hash_field(&mut definition.parameters);
            let split = (own && offer::is_split(&definition.name))
                .then(|| Split::new(&definition, parts.get(i).and_then(|n| n.as_deref())));
            tools.push(ToolCommand {
                program,
                definition,
                read_only,
                server_hash,
                check,
                split,
                env: Vec::new(),
            });
        }
        let mut tool_box = ToolBox { tools, skipped };
        let seen: Vec<String> = tool_box.listed().into_iter().map(|(d, _)| d.name).collect();
        for t in &mut tool_box.tools {
            t.env = vec![
                (offer::MODEL_TOOLS_ENV.to_string(), seen.join(",")),
                // An agent editing through ag-mcp gets the errors its
                // changes bring in, as under ag-loop (AG_LSP_DIAGNOSTICS=0
                // in ag-mcp's environment turns them off).
                (
                    crate::tools::lsp::after_edit::ENV.to_string(),
                    std::env::var(crate::tools::lsp::after_edit::ENV)
                        .unwrap_or_else(|_| "1".to_string()),
                ),
                // What the calls keep warm (the browser, the language
                // servers: crate::proc::warm) ends with this server, not
                // after the idle time of a helper run from a shell. Under
                // an ag session, the session stays the owner.
                (
                    "AG_SESSION_PID".to_string(),
                    std::env::var("AG_SESSION_PID")
                        .ok()
                        .filter(|p| !p.trim().is_empty())
                        .unwrap_or_else(|| std::process::id().to_string()),
                ),
            ];
        }
        Ok(tool_box)
    }

    /// The tools, in order.
    pub fn tools(&self) -> &[ToolCommand] {
        &self.tools
    }

    /// The tool that answers a call named `called`: by its own name, or by
    /// the name of one of its offered tools (`git_status` is ag-git's).
    pub fn get(&self, called: &str) -> Option<&ToolCommand> {
        let named = |t: &&ToolCommand| t.definition.name == called;
        let offers = |t: &&ToolCommand| t.split.as_ref().is_some_and(|s| s.answers(called));
        self.tools
            .iter()
            .find(named)
            .or_else(|| self.tools.iter().find(offers))
    }

    /// What clients see: each tool's definition and whether it only looks,
    /// a split binary's offered tools in its place.
    pub fn listed(&self) -> Vec<(ToolDefinition, bool)> {
        self.tools
            .iter()
            .flat_map(|t| match &t.split {
                Some(split) => split
                    .offers
                    .iter()
                    .map(|o| (o.definition.clone(), o.offered.read_only))
                    .collect(),
                None => vec![(t.definition.clone(), t.read_only)],
            })
            .collect()
    }
}

impl ToolCommand {
    /// Checks arguments against the tool's schema; the message lists every
    /// problem, for the model to correct its call.
    /// The arguments are normalized in place first (see
    /// [`crate::tool_protocol::lenient`]): the tool is called with what the model meant.
    /// A call named `called` goes to a split binary through the offered
    /// tool it names (see [`Split::route`]); the answer is the note for
    /// its result, if any.
    pub fn validate(
        &self,
        called: &str,
        arguments: &mut Map<String, Value>,
    ) -> Result<Option<String>, String> {
        if self.server_hash {
            hashes::drop_guessed_hash(arguments);
        }
        let mut value = Value::Object(std::mem::take(arguments));
        let checked = match &self.split {
            Some(split) => split.route(called, &mut value).map(|r| r.note),
            None => self
                .check
                .prepare(&self.definition.name, &mut value)
                .map(|()| None),
        };
        if let Value::Object(map) = value {
            *arguments = map;
        }
        checked
    }

    /// Runs one call as a subprocess in its own process group. Cancelling
    /// `cancel` ends the group (SIGTERM, then SIGKILL after a grace
    /// period) and gives an aborted result; whatever the tool left running
    /// in its group when it ended is killed too.
    pub async fn call(
        &self,
        id: &str,
        arguments: &Map<String, Value>,
        cancel: &CancellationToken,
    ) -> ToolResult {
        // The tool is never given the keys, so it cannot see one in its
        // URL: the server looks before the call runs.
        if matches!(self.program.label(), "ag-fetch" | "ag-browser")
            && let Some(message) = crate::tools::fetch::secrets::refusal_of_call(arguments)
        {
            return exec::error_result(id, crate::tools::fetch::secrets::CODE, message);
        }
        let options = CallOptions {
            env: &self.env,
            ..CallOptions::default()
        };
        let name = &self.definition.name;
        self.program
            .call(name, id, arguments, &options, cancel)
            .await
    }
}
