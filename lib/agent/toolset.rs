//! The tools offered to the model: found as executables, learned through
//! `--schema`, each call validated against its schema and run as a
//! subprocess in its own process group.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use std::sync::Arc;

use tokio::sync::RwLock;

use crate::mcp::client::{ConnectOptions, McpClient, SERVER_GONE};
use crate::protocol::{ToolDefinition, ToolResult};
use crate::tool::ArgsCheck;

/// The ag tools offered by default, by tool name (binary `ag-<name>`).
pub const DEFAULT_TOOLS: &[&str] = &[
    "read", "write", "edit", "patch", "delete", "bash", "grep", "find", "ls", "todo", "git",
    "notify",
];

/// Named tool sets: `full` (every ag tool), `minimal` (seed 002's four),
/// `readonly` (looking, no changing), `chat` (none).
pub fn named_set(name: &str) -> Option<Vec<String>> {
    let names: &[&str] = match name {
        "full" => DEFAULT_TOOLS,
        "minimal" => &["read", "write", "edit", "bash"],
        "readonly" => &["read", "grep", "find", "ls"],
        "chat" => &[],
        _ => return None,
    };
    Some(names.iter().map(|s| s.to_string()).collect())
}

/// Expands `--tools`: a set name, or names (which may include set names).
pub fn expand(list: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in list.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        for name in named_set(item).unwrap_or_else(|| vec![item.to_string()]) {
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// Bytes of a tool's stdout read before the rest is dropped.
const MAX_RESULT_LINE: u64 = 16 * 1024 * 1024;
/// Characters of tool output that enter the conversation.
pub const MAX_OUTPUT_CHARS: usize = 60_000;
/// How long a tool may take to answer `--schema`.
const SCHEMA_TIMEOUT: Duration = Duration::from_secs(10);

/// One tool: where it is and what it takes.
pub struct ToolSpec {
    /// The executable.
    pub program: PathBuf,
    /// Arguments before the call (from `--tool 'CMD ARGS'`).
    pub args: Vec<String>,
    /// Its definition.
    pub definition: ToolDefinition,
    check: ArgsCheck,
    /// Set for a tool of an MCP server: the server and the tool's own name there.
    mcp: Option<(Arc<RwLock<McpClient>>, String)>,
}

/// The tools of a run, in the order they are offered.
#[derive(Default)]
pub struct ToolSet {
    /// The tools.
    pub tools: Vec<ToolSpec>,
}

/// Finds `ag-<name>` beside the running executable, else on PATH.
pub fn find_tool_binary(name: &str) -> Option<PathBuf> {
    let bin = format!("ag-{name}");
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        let p = dir.join(&bin);
        if p.is_file() {
            return Some(p);
        }
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(&bin))
        .find(|p| p.is_file())
}

impl ToolSet {
    /// Loads the named ag tools and the extra commands. `explicit` says the
    /// names were asked for, so a missing one is an error rather than skipped.
    pub async fn load(
        names: &[String],
        explicit: bool,
        extra: &[String],
    ) -> Result<ToolSet, String> {
        let mut wanted: Vec<(PathBuf, Vec<String>, String)> = Vec::new();
        for name in names {
            match find_tool_binary(name) {
                Some(p) => wanted.push((p, Vec::new(), format!("ag-{name}"))),
                None if explicit => {
                    return Err(format!(
                        "tool `{name}`: no `ag-{name}` beside ag-loop or on PATH; install it or leave it out of --tools"
                    ));
                }
                None => {}
            }
        }
        for cmd in extra {
            let mut parts = cmd.split_whitespace().map(str::to_string);
            let Some(program) = parts.next() else {
                return Err("--tool needs a command".into());
            };
            wanted.push((PathBuf::from(&program), parts.collect(), cmd.clone()));
        }
        let mut tasks = tokio::task::JoinSet::new();
        for (i, (program, args, label)) in wanted.into_iter().enumerate() {
            tasks.spawn(async move {
                (
                    i,
                    schema_of(&program, &args, &label)
                        .await
                        .map(|d| (program, args, d)),
                )
            });
        }
        let mut loaded: Vec<(usize, ToolSpec)> = Vec::new();
        while let Some(joined) = tasks.join_next().await {
            let (i, res) = joined.map_err(|e| format!("loading tools: {e}"))?;
            let (program, args, definition) = res?;
            let check = ArgsCheck::new(definition.parameters.clone());
            loaded.push((
                i,
                ToolSpec {
                    program,
                    args,
                    definition,
                    check,
                    mcp: None,
                },
            ));
        }
        loaded.sort_by_key(|(i, _)| *i);
        let tools: Vec<ToolSpec> = loaded.into_iter().map(|(_, t)| t).collect();
        for (i, t) in tools.iter().enumerate() {
            if let Some(other) = tools[..i]
                .iter()
                .find(|o| o.definition.name == t.definition.name)
            {
                return Err(format!(
                    "two tools are named `{}`: `{}` and `{}`; leave one out",
                    t.definition.name,
                    other.program.display(),
                    t.program.display()
                ));
            }
        }
        Ok(ToolSet { tools })
    }

    /// Connects to MCP servers (`CMD ARGS` over stdio, or an http(s) URL) and
    /// adds their tools. A tool whose name is taken, or not acceptable to
    /// model APIs, is named `server__tool`.
    pub async fn add_mcp(&mut self, specs: &[String], cwd: &Path) -> Result<(), String> {
        for spec in specs {
            let options = ConnectOptions {
                cwd: Some(cwd.to_path_buf()),
                ..Default::default()
            };
            let client = McpClient::connect_with(spec, options)
                .await
                .map_err(|e| format!("MCP server `{spec}`: {e}"))?;
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
                    return Err(format!(
                        "MCP server `{spec}`: two tools would be named `{name}`; leave one server out"
                    ));
                }
                def.name = name;
                let check = ArgsCheck::new(def.parameters.clone());
                self.tools.push(ToolSpec {
                    program: PathBuf::from(spec),
                    args: Vec::new(),
                    definition: def,
                    check,
                    mcp: Some((shared.clone(), remote)),
                });
            }
        }
        Ok(())
    }

    /// The definitions, for the model.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools.iter().map(|t| t.definition.clone()).collect()
    }

    /// A tool by name.
    pub fn get(&self, name: &str) -> Option<&ToolSpec> {
        self.tools.iter().find(|t| t.definition.name == name)
    }

    /// The tool names.
    pub fn names(&self) -> Vec<&str> {
        self.tools
            .iter()
            .map(|t| t.definition.name.as_str())
            .collect()
    }
}

async fn schema_of(program: &Path, args: &[String], label: &str) -> Result<ToolDefinition, String> {
    let mut cmd = crate::proc::tokio_command(program, &[], None);
    cmd.args(args)
        .arg("--schema")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = tokio::time::timeout(SCHEMA_TIMEOUT, cmd.output())
        .await
        .map_err(|_| format!("tool `{label}` did not answer --schema within {SCHEMA_TIMEOUT:?}"))?
        .map_err(|e| format!("cannot run tool `{label}`: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "tool `{label}` --schema failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let def: ToolDefinition = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("tool `{label}` --schema did not print a tool definition: {e}"))?;
    if def.parameters.get("type").and_then(Value::as_str) != Some("object") {
        return Err(format!(
            "tool `{label}`: its parameters schema must be an object schema"
        ));
    }
    Ok(def)
}

/// Where and how a call runs.
pub struct CallEnv<'a> {
    /// The working directory.
    pub cwd: &'a Path,
    /// Extra environment (`AG_SESSION_ID`, `AG_SESSION_DIR`).
    pub env: &'a [(String, String)],
}

impl ToolSpec {
    /// Checks arguments against the schema; the error lists every problem.
    pub fn validate(&self, arguments: &Value) -> Result<(), String> {
        self.check.check(&self.definition.name, arguments)
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
        if let Some((server, remote)) = &self.mcp {
            return call_mcp(server, remote, id, arguments, cancel).await;
        }
        let name = &self.definition.name;
        let mut cmd = crate::proc::tokio_command(&self.program, &[], Some(env.cwd));
        cmd.args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env.env {
            cmd.env(k, v);
        }
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                return error_result(
                    id,
                    format!(
                        "cannot start tool `{name}` ({}): {e}",
                        self.program.display()
                    ),
                );
            }
        };
        let pid = child.id();
        let line = json!({"id": id, "arguments": arguments}).to_string() + "\n";
        let (Some(mut stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return error_result(id, format!("tool `{name}`: no pipes"));
        };
        let io = async move {
            // Closing stdin after the one call ends the tool's loop.
            let _ = stdin.write_all(line.as_bytes()).await;
            drop(stdin);
            let mut out = Vec::new();
            let mut err = Vec::new();
            let mut stdout = stdout.take(MAX_RESULT_LINE);
            let mut stderr = stderr.take(64 * 1024);
            let (a, b) = tokio::join!(stdout.read_to_end(&mut out), stderr.read_to_end(&mut err));
            (a.map(|_| out), b.map(|_| err).unwrap_or_default())
        };
        tokio::select! {
            _ = cancel.cancelled() => {
                crate::proc::kill_group(&mut child, true).await;
                aborted_result(id)
            }
            (out, err) = io => {
                let status = child.wait().await;
                // Whatever the tool left running in its group goes with it.
                crate::proc::reap_group(pid);
                let out = match out {
                    Ok(o) => o,
                    Err(e) => return error_result(id, format!("cannot read the result of `{name}`: {e}")),
                };
                let first = out.split(|b| *b == b'\n').find(|l| !l.iter().all(u8::is_ascii_whitespace));
                match first.map(serde_json::from_slice::<ToolResult>) {
                    Some(Ok(mut r)) => {
                        r.id = Some(id.to_string());
                        r
                    }
                    Some(Err(e)) => error_result(id, format!("tool `{name}` answered with something that is not a tool result ({e})")),
                    None => error_result(id, format!(
                        "tool `{name}` ended ({}) without a result{}",
                        status.map(|s| s.to_string()).unwrap_or_else(|e| e.to_string()),
                        match String::from_utf8_lossy(&err).trim() {
                            "" => String::new(),
                            t => format!(": {t}"),
                        }
                    )),
                }
            }
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

/// An error result with a message for the model.
pub fn error_result(id: &str, message: String) -> ToolResult {
    ToolResult {
        id: Some(id.to_string()),
        output: message,
        details: Value::Null,
        is_error: true,
        error_code: None,
        images: Vec::new(),
    }
}

/// The result of a call that an interrupt stopped.
pub fn aborted_result(id: &str) -> ToolResult {
    ToolResult {
        id: Some(id.to_string()),
        output: "aborted: the user interrupted this tool call before it finished".into(),
        details: json!({"aborted": true}),
        is_error: true,
        error_code: Some("call.aborted".into()),
        images: Vec::new(),
    }
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
