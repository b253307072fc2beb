//! The tools offered to the model: found as executables, learned through
//! `--schema`, each call validated against its schema and run as a
//! subprocess in its own process group (by [`crate::tool_protocol::exec`]), or
//! offered by an MCP server and called there.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::RwLock;
use tokio_util::sync::CancellationToken;

use crate::agent::config::error::SetupError;
use crate::mcp::client::{ConnectOptions, McpClient, SERVER_GONE};
use crate::protocol::{ToolDefinition, ToolResult};
use crate::tool_protocol::ArgsCheck;
use crate::tool_protocol::exec::{self, CallOptions, ProgressSink, ToolProgram};
use crate::tool_protocol::hashes;
use crate::tools::offer::{self, Split};

/// Characters of tool output that enter the conversation.
pub const MAX_OUTPUT_CHARS: usize = 60_000;

/// One tool: how it runs and what it takes.
pub struct ToolSpec {
    /// Its definition.
    pub definition: ToolDefinition,
    check: ArgsCheck,
    runs: Runs,
    /// A binary offered as one tool per mode (`ag-git` as `git_status`,
    /// `git_diff`, ...): the model sees those instead of `definition`.
    split: Option<Split>,
    /// An ag tool whose `expected_hash` the loop hides from the model and
    /// fills in itself: the model never sees a hash, so one it sends is a
    /// guess and is dropped.
    loop_hash: bool,
    // Tools in another workspace (issue 22).
    /// The binary of an ag tool (`ag-read`), which can run in a workspace.
    ag_binary: Option<String>,
    // CLI agents (issue 31).
    /// The CLI agent this tool wraps: its calls get the network, its key
    /// and its state directories.
    agent: Option<&'static crate::agent::delegation::cli_agents::CliAgent>,
}

/// Where a tool's calls go.
enum Runs {
    /// A subprocess per call.
    Program(ToolProgram),
    /// A tool of an MCP server: the server and the tool's own name there.
    Mcp(Arc<RwLock<McpClient>>, String),
    // Tools in another workspace (issue 22).
    /// An ag tool run in another workspace: its binary there.
    Remote(Arc<crate::workspace::Workspace>, String),
    /// A `--tool` command that stays here while the ag tools run in a
    /// workspace: the local directory it runs in.
    Here(ToolProgram, std::path::PathBuf),
    // Questions (issue 31).
    /// ag-loop's own `ask`, answered by the loop itself.
    Ask,
    // Subagents (issue 35).
    /// ag-loop's own `agent`: a child ag-loop.
    Agent(Arc<dyn crate::agent::delegation::Delegate>),
}

/// The tools of a run, in the order they are offered.
#[derive(Default)]
pub struct ToolSet {
    /// The tools.
    pub tools: Vec<ToolSpec>,
    /// Whether its calls may not delete files (a small window's default
    /// set, see [`crate::agent::config::named_sets::SMALL_WINDOW_LEAVES_OUT`]):
    /// a patch's deletions are refused.
    pub no_deletes: bool,
}

impl ToolSet {
    /// Loads the named ag tools and the extra commands (`--tool`, shell
    /// command lines), asking each for its schema in `cwd`, where its calls
    /// run too. `explicit` says the names were asked for, so a missing one
    /// is an error rather than skipped.
    pub async fn load(
        names: &[String],
        explicit: bool,
        extra: &[String],
        cwd: &Path,
    ) -> Result<ToolSet, SetupError> {
        let mut wanted: Vec<ToolProgram> = Vec::new();
        let mut agents: Vec<ToolProgram> = Vec::new();
        let ask = names.iter().any(|n| n == super::ask::NAME);
        let mut own_names: Vec<String> = Vec::new();
        for name in names
            .iter()
            .filter(|n| *n != super::ask::NAME && *n != crate::agent::delegation::NAME)
        {
            match crate::agent::delegation::cli_agents::program(name) {
                Some(p) => agents.push(p),
                None => own_names.push(name.clone()),
            }
        }
        // Per ag binary, the offered tools of it that were named.
        let mut parts: Vec<Option<Vec<String>>> = Vec::new();
        for (tool, named) in offer::by_binary(&own_names) {
            match ToolProgram::ag(&tool) {
                Some(p) => {
                    wanted.push(p);
                    parts.push(named);
                }
                None if explicit => {
                    return Err(SetupError::ToolMissing(tool));
                }
                None => {}
            }
        }
        let own = wanted.len();
        let agents_end = own + agents.len();
        // CLI agents run here, like `--tool` commands, whatever the workspace.
        wanted.extend(agents);
        for cmd in extra {
            wanted.push(ToolProgram::shell(cmd).ok_or(SetupError::ToolCommandEmpty)?);
        }
        #[allow(clippy::type_complexity)]
        let mut loaded: Vec<(
            ToolProgram,
            ToolDefinition,
            bool,
            Option<&'static crate::agent::delegation::cli_agents::CliAgent>,
        )> = Vec::new();
        let answers = exec::load_schemas(wanted, Some(cwd), crate::tools::mains::definition).await;
        for (i, (program, answer)) in answers.into_iter().enumerate() {
            let definition = answer?;
            if ask && definition.name == super::ask::NAME {
                return Err(SetupError::ToolClash {
                    name: definition.name,
                    first: "ag-loop's own `ask`".into(),
                    second: program.label().to_string(),
                });
            }
            if let Some((other, ..)) = loaded.iter().find(|(_, d, ..)| d.name == definition.name) {
                return Err(SetupError::ToolClash {
                    name: definition.name,
                    first: other.label().to_string(),
                    second: program.label().to_string(),
                });
            }
            let agent = (own..agents_end)
                .contains(&i)
                .then(|| crate::agent::delegation::cli_agents::CliAgent::find(&definition.name))
                .flatten();
            loaded.push((program, definition, i < own, agent));
        }
        let mut tools: Vec<ToolSpec> = loaded
            .into_iter()
            .enumerate()
            .map(|(i, (program, mut definition, own, agent))| {
                // The check keeps the whole schema: the tool still takes
                // the hash the loop passes itself (see `FileHashes::guard`).
                let check = ArgsCheck::new(definition.parameters.clone());
                let loop_hash = own && hashes::hide_hash_field(&mut definition.parameters);
                let ag_binary = own.then(|| program.label().to_string());
                let split = (own && offer::is_split(&definition.name)).then(|| {
                    let named = parts.get(i).and_then(|n| n.as_deref());
                    Split::new(&definition, named)
                });
                ToolSpec {
                    check,
                    definition,
                    split,
                    runs: Runs::Program(program),
                    loop_hash,
                    ag_binary,
                    agent,
                }
            })
            .collect();
        if ask {
            let definition = super::ask::definition();
            tools.insert(
                own.min(tools.len()),
                ToolSpec {
                    check: ArgsCheck::new(definition.parameters.clone()),
                    definition,
                    split: None,
                    runs: Runs::Ask,
                    loop_hash: false,
                    ag_binary: None,
                    agent: None,
                },
            );
        }
        Ok(ToolSet {
            tools,
            no_deletes: false,
        })
    }

    // Subagents (issue 35).
    /// Offers ag-loop's own `agent` tool, after the ag tools.
    pub fn add_agent(&mut self, subagents: Arc<dyn crate::agent::delegation::Delegate>) {
        let definition = subagents.definition();
        let at = self
            .tools
            .iter()
            .position(|t| t.ag_binary.is_none() && !t.is_ask())
            .unwrap_or(self.tools.len());
        self.tools.insert(
            at,
            ToolSpec {
                check: ArgsCheck::new(definition.parameters.clone()),
                definition,
                runs: Runs::Agent(subagents),
                loop_hash: false,
                ag_binary: None,
                agent: None,
                split: None,
            },
        );
    }

    /// Connects to MCP servers (`CMD ARGS` over stdio, or an http(s) URL) and
    /// adds their tools. A tool whose name is taken, or not acceptable to
    /// model APIs, is named `server__tool`.
    /// `sandbox` confines the stdio servers; `headers` go to the HTTP
    /// servers of their URL.
    pub async fn add_mcp(
        &mut self,
        specs: &[String],
        cwd: &Path,
        sandbox: Option<Arc<crate::sandbox::Prepared>>,
        headers: &crate::mcp::headers::Headers,
    ) -> Result<(), SetupError> {
        for spec in specs {
            let options = ConnectOptions {
                cwd: Some(cwd.to_path_buf()),
                sandbox: sandbox.clone(),
                headers: headers.get(spec.trim()).cloned().unwrap_or_default(),
                ..Default::default()
            };
            let client = McpClient::connect_with(spec, options)
                .await
                .map_err(|source| SetupError::Mcp {
                    spec: spec.clone(),
                    source,
                })?;
            let server = sanitize(client.name());
            let defs: Vec<ToolDefinition> = client.tools().to_vec();
            let shared = Arc::new(RwLock::new(client));
            for mut def in defs {
                let remote = def.name.clone();
                let mut name = sanitize(&remote);
                if name != remote || self.get(&name).is_some() {
                    name = format!("{server}__{}", sanitize(&remote));
                }
                if self.get(&name).is_some() {
                    return Err(SetupError::McpClash {
                        spec: spec.clone(),
                        name,
                    });
                }
                def.name = name;
                let check = ArgsCheck::new(def.parameters.clone());
                self.tools.push(ToolSpec {
                    definition: def,
                    check,
                    split: None,
                    runs: Runs::Mcp(shared.clone(), remote),
                    loop_hash: false,
                    ag_binary: None,
                    agent: None,
                });
            }
        }
        Ok(())
    }

    /// Adds `other`'s MCP tools, on the same server connections: a second
    /// tool set of the run (an `@NAME` prompt's) starts no server again.
    pub fn share_mcp(&mut self, other: &ToolSet) {
        for t in &other.tools {
            if let Runs::Mcp(server, remote) = &t.runs
                && self.get(&t.definition.name).is_none()
            {
                self.tools.push(ToolSpec {
                    definition: t.definition.clone(),
                    check: ArgsCheck::new(t.definition.parameters.clone()),
                    split: None,
                    runs: Runs::Mcp(server.clone(), remote.clone()),
                    loop_hash: false,
                    ag_binary: None,
                    agent: None,
                });
            }
        }
    }

    // Tools in another workspace (issue 22).
    /// The binaries of the ag tools (`ag-read`, ...), which a workspace needs.
    pub fn ag_binaries(&self) -> Vec<String> {
        self.tools
            .iter()
            .filter_map(|t| t.ag_binary.clone())
            .collect()
    }

    /// Runs the ag tools' calls in `workspace` from now on; `--tool`
    /// commands (in `here`, since the calls' directory becomes the
    /// workspace's) and MCP servers stay here.
    pub fn run_in(&mut self, workspace: Arc<crate::workspace::Workspace>, here: &Path) {
        for t in &mut self.tools {
            let runs = std::mem::replace(
                &mut t.runs,
                Runs::Program(ToolProgram::new("", Vec::new(), "")),
            );
            t.runs = match (runs, &t.ag_binary) {
                (Runs::Program(_), Some(binary)) => Runs::Remote(workspace.clone(), binary.clone()),
                (Runs::Program(p), None) => Runs::Here(p, here.to_path_buf()),
                (other, _) => other,
            };
        }
    }

    /// The definitions, for the model: a split binary's offered tools in
    /// its place, each with all its parameters or, unless `all_params`,
    /// those a call needs (see [`super::params::needed_only`]).
    pub fn definitions(&self, all_params: bool) -> Vec<ToolDefinition> {
        self.tools
            .iter()
            .flat_map(|t| match &t.split {
                Some(split) => split.offers.iter().map(|o| &o.definition).collect(),
                None => vec![&t.definition],
            })
            .map(|d| {
                if all_params {
                    d.clone()
                } else {
                    super::params::needed_only(d)
                }
            })
            .collect()
    }

    /// A tool by its own name (a binary's, `git`).
    pub fn get(&self, name: &str) -> Option<&ToolSpec> {
        self.tools.iter().find(|t| t.definition.name == name)
    }

    /// The tool that answers a call named `called`: by its own name, or by
    /// the name of one of its offered tools (`git_status` is ag-git's).
    pub fn find(&self, called: &str) -> Option<&ToolSpec> {
        self.get(called).or_else(|| {
            self.tools
                .iter()
                .find(|t| t.split.as_ref().is_some_and(|s| s.answers(called)))
        })
    }

    /// The tool names the model sees.
    pub fn names(&self) -> Vec<&str> {
        self.tools
            .iter()
            .flat_map(|t| match &t.split {
                Some(split) => split.offers.iter().map(|o| o.offered.name).collect(),
                None => vec![t.definition.name.as_str()],
            })
            .collect()
    }
}

/// Where and how a call runs.
pub struct CallEnv<'a> {
    /// The working directory.
    pub cwd: &'a Path,
    /// Extra environment (`AG_SESSION_ID`, `AG_SESSION_DIR`).
    pub env: &'a [(String, String)],
    /// The sandbox that confines the call, if any.
    pub sandbox: Option<&'a super::sandbox::LoopSandbox>,
    // Progress (issue 31).
    /// Where the call's progress lines go, if anywhere.
    pub progress: Option<&'a ProgressSink>,
}

impl ToolSpec {
    /// Puts the arguments in the shape the schema asks for (see
    /// [`crate::tool_protocol::lenient`]) and checks them; the error lists every
    /// problem. What the call then runs with is the normalized arguments.
    /// A call named `called` goes to a split binary through the offered
    /// tool it names (see [`Split::route`]); the answer is the note for
    /// its result, if any.
    pub fn validate(&self, called: &str, arguments: &mut Value) -> Result<Option<String>, String> {
        if let Some(split) = &self.split {
            return split.route(called, arguments).map(|r| r.note);
        }
        if self.loop_hash
            && let Some(map) = arguments.as_object_mut()
        {
            hashes::drop_guessed_hash(map);
        }
        self.check
            .prepare(&self.definition.name, arguments)
            .map(|()| None)
    }

    /// True for ag's `fetch` (ag-fetch), which needs the network.
    fn is_fetch(&self) -> bool {
        self.ag_binary.as_deref() == Some("ag-fetch")
    }

    fn is_browser(&self) -> bool {
        self.ag_binary.as_deref() == Some("ag-browser")
    }

    /// True for ag-loop's own `ask`, which the loop answers itself.
    pub fn is_ask(&self) -> bool {
        matches!(self.runs, Runs::Ask)
    }

    /// ag-loop's own `agent`: what its children inherit.
    pub fn subagents(&self) -> Option<&Arc<dyn crate::agent::delegation::Delegate>> {
        match &self.runs {
            Runs::Agent(s) => Some(s),
            _ => None,
        }
    }

    /// True for a tool of an MCP server, whose calls run inside the
    /// server's process (confined or not as the server is).
    pub fn is_mcp(&self) -> bool {
        matches!(self.runs, Runs::Mcp(..))
    }

    /// Runs one call as a subprocess (or on its MCP server); an interrupt
    /// ends it and its group.
    pub async fn call(
        &self,
        id: &str,
        arguments: &Value,
        env: &CallEnv<'_>,
        cancel: &CancellationToken,
    ) -> ToolResult {
        // The tool is never given the keys, so it cannot see one in its
        // URL: the loop looks before the call runs.
        if (self.is_fetch() || self.is_browser())
            && let Some(args) = arguments.as_object()
            && let Some(message) = crate::tools::fetch::secrets::refusal_of_call(args)
        {
            return exec::error_result(id, crate::tools::fetch::secrets::CODE, message);
        }
        let guard = env.sandbox.and_then(|s| s.guard(&self.definition.name));
        let mut r = self.run(id, arguments, env, cancel).await;
        if let Some(guard) = guard {
            super::sandbox::undo_hooks(guard, &mut r);
        }
        r
    }

    async fn run(
        &self,
        id: &str,
        arguments: &Value,
        env: &CallEnv<'_>,
        cancel: &CancellationToken,
    ) -> ToolResult {
        match &self.runs {
            Runs::Mcp(server, remote) => call_mcp(server, remote, id, arguments, cancel).await,
            Runs::Program(program) | Runs::Here(program, _) => {
                let cwd = match &self.runs {
                    Runs::Here(_, here) => here.as_path(),
                    _ => env.cwd,
                };
                let mut prepared = env.sandbox.map(|s| s.prepared());
                let mut call_env: Vec<(String, String)> = env.env.to_vec();
                if self.is_fetch()
                    && let Some(s) = env.sandbox
                {
                    match s.for_fetch() {
                        Ok(p) => prepared = Some(Arc::new(p)),
                        Err(e) => {
                            return exec::error_result(
                                id,
                                exec::SPAWN,
                                format!("cannot confine `fetch` with the network: {e}"),
                            );
                        }
                    }
                }
                if self.is_browser()
                    && let Some(s) = env.sandbox
                {
                    match s.for_browser() {
                        Ok(p) => prepared = Some(Arc::new(p)),
                        Err(e) => {
                            return exec::error_result(
                                id,
                                exec::SPAWN,
                                format!("cannot confine `browser` with the network: {e}"),
                            );
                        }
                    }
                }
                if let Some(agent) = self.agent {
                    // The wrapped agent calls its provider with its own key.
                    call_env.extend(agent.key_env());
                    if let Some(s) = env.sandbox {
                        match s.for_cli_agent(&agent.state_paths()) {
                            Ok(p) => prepared = Some(Arc::new(p)),
                            Err(e) => {
                                return exec::error_result(
                                    id,
                                    exec::SPAWN,
                                    format!(
                                        "cannot confine `{}` with its network and state directories: {e}",
                                        self.definition.name
                                    ),
                                );
                            }
                        }
                    }
                }
                let options = CallOptions {
                    cwd: Some(cwd),
                    env: &call_env,
                    aborted: exec::INTERRUPTED,
                    sandbox: prepared.as_deref(),
                    progress: env.progress,
                };
                let name = &self.definition.name;
                program.call(name, id, arguments, &options, cancel).await
            }
            Runs::Remote(workspace, binary) => {
                let call = crate::workspace::Call {
                    name: &self.definition.name,
                    binary,
                    id,
                    env: env.env,
                    aborted: exec::INTERRUPTED,
                };
                workspace.call(call, arguments, cancel).await
            }
            // The loop answers these before they would get here.
            Runs::Ask => error_result_here(id),
            Runs::Agent(_) => exec::error_result(
                id,
                "agent.unavailable",
                "`agent` can only be run by ag-loop itself; do the task yourself".into(),
            ),
        }
    }
}

/// A call on an MCP server; a server that died is restarted once and the
/// model told to call again.
async fn call_mcp(
    server: &RwLock<McpClient>,
    remote: &str,
    id: &str,
    arguments: &Value,
    cancel: &CancellationToken,
) -> ToolResult {
    let mut result = server.read().await.call(remote, arguments, cancel).await;
    if result.error_code.as_deref() == Some(exec::ABORTED) {
        // In ag-loop's words, as for every other tool.
        return exec::interrupted_result(id);
    }
    result.id = Some(id.to_string());
    if result.error_code.as_deref() == Some(SERVER_GONE) {
        let mut client = server.write().await;
        // Another call may have restarted it meanwhile.
        if client.gone().is_some() && client.can_restart() {
            match client.restart().await {
                Ok(()) => result.output.push_str(
                    "\nThe MCP server was restarted; call the tool again if it is still needed.",
                ),
                Err(e) => result
                    .output
                    .push_str(&format!("\nThe MCP server could not be restarted: {e}")),
            }
        }
    }
    result
}

/// A tool name as model APIs accept it: letters, digits, `_` and `-`, at
/// most 64 characters.
fn sanitize(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if cleaned.is_empty() {
        "tool".into()
    } else {
        cleaned
    }
}

/// What an `ask` call gets should it ever be run like a program: the loop
/// answers them itself (see `run/runner.rs`).
fn error_result_here(id: &str) -> ToolResult {
    exec::error_result(
        id,
        "ask.unavailable",
        "`ask` can only be answered by ag-loop itself; decide yourself and go on".into(),
    )
}

/// Caps tool output before it enters the conversation: the head and the
/// tail are kept (the end of a failing build matters most) with a note.
pub fn cap_output(text: String) -> String {
    let total = text.chars().count();
    if total <= MAX_OUTPUT_CHARS {
        return text;
    }
    let head_n = MAX_OUTPUT_CHARS * 2 / 3;
    let tail_n = MAX_OUTPUT_CHARS - head_n;
    let head: String = text.chars().take(head_n).collect();
    let tail: String = text.chars().skip(total - tail_n).collect();
    format!(
        "{head}\n\n[... {} characters cut by ag-loop: the output had {total}; narrow the call (a range, a filter, | head) to see the middle ...]\n\n{tail}",
        total - head_n - tail_n
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_keeps_head_and_tail() {
        let text: String = (0..20_000).map(|i| format!("{i}\n")).collect();
        let capped = cap_output(text);
        assert!(capped.starts_with("0\n1\n"));
        assert!(capped.ends_with("19999\n"));
        assert!(capped.contains("characters cut"));
        assert!(capped.chars().count() < MAX_OUTPUT_CHARS + 300);
    }
}
