//! The tools ag-mcp serves: ag's tool binaries (found beside the ag-mcp
//! executable, else on `PATH`) and any command that speaks the tool
//! protocol, each learned through `--schema` and run as one subprocess per
//! call, in its own process group, so that a crash or a hang in one call
//! cannot take the server down and a cancelled call ends everything it
//! started.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::protocol::{ToolDefinition, ToolResult};
use crate::tool::ArgsCheck;

/// The ag tools served when `--tools` is not given, by tool name (binary
/// `ag-<name>`); those not installed are left out. ag-todo and ag-notify
/// are not among them: they belong to an ag session, which an MCP client
/// does not have.
pub const DEFAULT_TOOLS: &[&str] = &[
    "read", "write", "edit", "delete", "patch", "bash", "grep", "find", "ls", "git",
];

/// ag tools that only look, never change anything: their MCP definitions
/// carry `readOnlyHint`, so that clients may run them without asking.
const READ_ONLY_TOOLS: &[&str] = &["read", "grep", "find", "ls"];

/// Bytes of a tool's stdout read before the rest is dropped.
const MAX_RESULT_BYTES: u64 = 16 * 1024 * 1024;
/// Bytes of a tool's stderr kept for the error message of a failed call.
const MAX_STDERR_BYTES: u64 = 64 * 1024;
/// How long a tool may take to answer `--schema`.
const SCHEMA_TIMEOUT: Duration = Duration::from_secs(10);

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
    #[error("tool `{command}`: {message}")]
    Schema {
        /// The tool's command.
        command: String,
        /// What went wrong.
        message: String,
    },
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
    program: PathBuf,
    args: Vec<String>,
    /// How the tool was named on the command line, for messages.
    label: String,
    /// Its definition, from `--schema`.
    pub definition: ToolDefinition,
    /// True for ag tools that change nothing.
    pub read_only: bool,
    check: ArgsCheck,
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
        // (program, arguments, label, read only, required)
        let mut wanted: Vec<(PathBuf, Vec<String>, String, bool, bool)> = Vec::new();
        let explicit = selection.names.is_some();
        let names: Vec<String> = match &selection.names {
            Some(n) => n.clone(),
            None => DEFAULT_TOOLS.iter().map(|s| s.to_string()).collect(),
        };
        let root_args: Vec<String> = match &selection.root {
            Some(r) => vec!["--root".into(), r.display().to_string()],
            None => Vec::new(),
        };
        for name in &names {
            match find_tool_binary(name) {
                Some(p) => wanted.push((
                    p,
                    root_args.clone(),
                    format!("ag-{name}"),
                    READ_ONLY_TOOLS.contains(&name.as_str()),
                    explicit,
                )),
                None if explicit => return Err(LoadError::NotFound { name: name.clone() }),
                None => {}
            }
        }
        for cmd in &selection.commands {
            // `sh -c 'CMD "$@"' sh ARGS`: the command line as the shell reads
            // it, with ag-mcp's own arguments (`--schema`) appended.
            wanted.push((
                PathBuf::from("sh"),
                vec!["-c".into(), format!("{cmd} \"$@\""), "sh".into()],
                cmd.clone(),
                false,
                true,
            ));
        }
        let mut tasks = tokio::task::JoinSet::new();
        for (i, (program, args, label, read_only, required)) in wanted.into_iter().enumerate() {
            tasks.spawn(async move {
                let def = schema_of(&program, &args, &label).await;
                (
                    i,
                    required,
                    def.map(|d| (program, args, label, read_only, d)),
                )
            });
        }
        let mut loaded: Vec<(usize, ToolCommand)> = Vec::new();
        let mut skipped: Vec<(usize, LoadError)> = Vec::new();
        while let Some(joined) = tasks.join_next().await {
            let (i, required, res) = joined.map_err(|e| LoadError::Schema {
                command: "?".into(),
                message: format!("loading failed: {e}"),
            })?;
            let (program, args, label, read_only, definition) = match res {
                Ok(r) => r,
                Err(e) if !required => {
                    skipped.push((i, e));
                    continue;
                }
                Err(e) => return Err(e),
            };
            let check = ArgsCheck::new(definition.parameters.clone());
            loaded.push((
                i,
                ToolCommand {
                    program,
                    args,
                    label,
                    definition,
                    read_only,
                    check,
                },
            ));
        }
        loaded.sort_by_key(|(i, _)| *i);
        let tools: Vec<ToolCommand> = loaded.into_iter().map(|(_, t)| t).collect();
        for (i, t) in tools.iter().enumerate() {
            if let Some(first) = tools[..i]
                .iter()
                .find(|o| o.definition.name == t.definition.name)
            {
                return Err(LoadError::Duplicate {
                    name: t.definition.name.clone(),
                    first: first.label.clone(),
                    second: t.label.clone(),
                });
            }
        }
        skipped.sort_by_key(|(i, _)| *i);
        Ok(ToolBox {
            tools,
            skipped: skipped.into_iter().map(|(_, e)| e).collect(),
        })
    }

    /// The tools, in order.
    pub fn tools(&self) -> &[ToolCommand] {
        &self.tools
    }

    /// A tool by name.
    pub fn get(&self, name: &str) -> Option<&ToolCommand> {
        self.tools.iter().find(|t| t.definition.name == name)
    }
}

/// Finds `ag-<name>` beside the running executable, else on `PATH`.
pub fn find_tool_binary(name: &str) -> Option<PathBuf> {
    // A name with a slash would look outside those directories.
    if name.is_empty() || name.contains('/') {
        return None;
    }
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

async fn schema_of(
    program: &Path,
    args: &[String],
    label: &str,
) -> Result<ToolDefinition, LoadError> {
    let fail = |message: String| LoadError::Schema {
        command: label.to_string(),
        message,
    };
    let mut cmd = crate::proc::tokio_command(program, &[], None);
    cmd.args(args)
        .arg("--schema")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = tokio::time::timeout(SCHEMA_TIMEOUT, cmd.output())
        .await
        .map_err(|_| fail(format!("no answer to --schema within {SCHEMA_TIMEOUT:?}")))?
        .map_err(|e| fail(format!("cannot run it: {e}")))?;
    if !out.status.success() {
        return Err(fail(format!(
            "--schema failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let def: ToolDefinition = serde_json::from_slice(&out.stdout)
        .map_err(|e| fail(format!("--schema did not print a tool definition: {e}")))?;
    if def.parameters.get("type").and_then(Value::as_str) != Some("object") {
        return Err(fail(
            "its parameters schema must be an object schema".into(),
        ));
    }
    Ok(def)
}

impl ToolCommand {
    /// Checks arguments against the tool's schema; the message lists every
    /// problem, for the model to correct its call.
    pub fn validate(&self, arguments: &Map<String, Value>) -> Result<(), String> {
        self.check
            .check(&self.definition.name, &Value::Object(arguments.clone()))
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
        let name = &self.definition.name;
        let mut cmd = crate::proc::tokio_command(&self.program, &[], None);
        cmd.args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                return error_result(
                    id,
                    "mcp.tool_spawn",
                    format!("cannot start tool `{name}` (`{}`): {e}", self.label),
                );
            }
        };
        let pid = child.id();
        let line = json!({"id": id, "arguments": arguments}).to_string() + "\n";
        let (Some(mut stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            crate::proc::kill_group(&mut child, false).await;
            return error_result(id, "mcp.tool_io", format!("tool `{name}`: no pipes"));
        };
        let io = async move {
            // Closing stdin after the one call ends the tool's loop.
            let _ = stdin.write_all(line.as_bytes()).await;
            drop(stdin);
            let mut out = Vec::new();
            let mut err = Vec::new();
            let mut stdout = stdout.take(MAX_RESULT_BYTES);
            let mut stderr = stderr.take(MAX_STDERR_BYTES);
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
                crate::proc::reap_group(pid);
                let out = match out {
                    Ok(o) => o,
                    Err(e) => return error_result(id, "mcp.tool_io", format!("cannot read the result of `{name}`: {e}")),
                };
                parse_result(id, name, &out, &err, status)
            }
        }
    }
}

/// The tool's answer: the first non-blank line of its stdout, a result.
fn parse_result(
    id: &str,
    name: &str,
    stdout: &[u8],
    stderr: &[u8],
    status: std::io::Result<std::process::ExitStatus>,
) -> ToolResult {
    let first = stdout
        .split(|b| *b == b'\n')
        .find(|l| !l.iter().all(u8::is_ascii_whitespace));
    match first.map(serde_json::from_slice::<ToolResult>) {
        Some(Ok(mut r)) => {
            r.id = Some(id.to_string());
            r
        }
        Some(Err(e)) => error_result(
            id,
            "mcp.tool_output",
            format!("tool `{name}` answered with something that is not a tool result ({e})"),
        ),
        None => error_result(
            id,
            "mcp.tool_crashed",
            format!(
                "tool `{name}` ended ({}) without a result{}",
                status
                    .map(|s| s.to_string())
                    .unwrap_or_else(|e| e.to_string()),
                match String::from_utf8_lossy(stderr).trim() {
                    "" => String::new(),
                    t => format!(": {t}"),
                }
            ),
        ),
    }
}

/// An error result with a message for the model.
pub fn error_result(id: &str, code: &str, message: String) -> ToolResult {
    ToolResult {
        id: Some(id.to_string()),
        output: message,
        details: Value::Null,
        is_error: true,
        error_code: Some(code.to_string()),
        images: Vec::new(),
    }
}

/// The result of a call that was cancelled before it finished.
pub fn aborted_result(id: &str) -> ToolResult {
    ToolResult {
        id: Some(id.to_string()),
        output: "aborted: the call was cancelled before it finished".into(),
        details: json!({"aborted": true}),
        is_error: true,
        error_code: Some("call.aborted".into()),
        images: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_line_is_taken_and_its_id_replaced() {
        let out = b"\n{\"id\":\"x\",\"output\":\"hi\",\"details\":{\"n\":1},\"is_error\":false}\n";
        let r = parse_result("7", "t", out, b"", Ok(Default::default()));
        assert_eq!(r.id.as_deref(), Some("7"));
        assert_eq!(r.output, "hi");
        assert_eq!(r.details, json!({"n": 1}));
        assert!(!r.is_error);
    }

    #[test]
    fn no_result_is_an_error_naming_the_tool_and_its_stderr() {
        let r = parse_result("1", "boom", b"", b"segfault\n", Ok(Default::default()));
        assert!(r.is_error);
        assert_eq!(r.error_code.as_deref(), Some("mcp.tool_crashed"));
        assert!(r.output.contains("`boom`"), "{}", r.output);
        assert!(r.output.contains("segfault"), "{}", r.output);
        let r = parse_result("1", "t", b"not json\n", b"", Ok(Default::default()));
        assert_eq!(r.error_code.as_deref(), Some("mcp.tool_output"));
    }

    #[test]
    fn a_name_with_a_slash_is_never_looked_up() {
        assert_eq!(find_tool_binary("../bin/sh"), None);
        assert_eq!(find_tool_binary(""), None);
    }
}
