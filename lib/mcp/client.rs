//! A client of other MCP servers, for ag-loop: start a server over stdio
//! from a command line (in its own process group) or connect to a
//! streamable-HTTP URL, list its tools as ag [`ToolDefinition`]s, and call
//! them for ag [`ToolResult`]s.
//!
//! ```no_run
//! # async fn demo() -> Result<(), ag::mcp::client::McpError> {
//! use ag::mcp::client::McpClient;
//! use tokio_util::sync::CancellationToken;
//!
//! let mut server = McpClient::connect("npx -y @modelcontextprotocol/server-everything").await?;
//! for tool in server.tools() {
//!     eprintln!("{}: {}", tool.name, tool.description);
//! }
//! let args = serde_json::json!({"message": "hi"});
//! let result = server.call("echo", &args, &CancellationToken::new()).await;
//! if result.error_code.as_deref() == Some(ag::mcp::client::SERVER_GONE) {
//!     server.restart().await?; // once; a second restart is refused
//! }
//! server.close().await;
//! # Ok(())
//! # }
//! ```
//!
//! A call never fails with a Rust error: every failure is a [`ToolResult`]
//! with `is_error` set and a message for the model. A server that has died
//! gives results coded [`SERVER_GONE`] that say why (its exit status and the
//! end of its stderr); [`McpClient::restart`] starts it again, once.

use crate::sandbox::ConfineCommand;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, Implementation,
};
use rmcp::service::{RunningService, ServiceError};
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::sync::CancellationToken;

use super::convert::{from_mcp_result, from_mcp_tool};
use crate::proc::{
    self, CaptureLimit, Ended, Input, LineLimits, Lines, Running, Status, Streaming,
};
use crate::protocol::{ToolDefinition, ToolResult};
use crate::tool_protocol::exec::{CANCELLED, aborted_result, error_result};

/// The error code of a call's result when the server is gone (exited,
/// unreachable): restart it, or drop its tools.
pub const SERVER_GONE: &str = "mcp.server_gone";

/// Bytes of a stdio server's stderr kept, for the message when it dies.
const STDERR_TAIL: usize = 4096;
/// The longest message line read from a stdio server (rmcp's own limit).
const MAX_LINE: usize = 16 * 1024 * 1024;
/// How long a server stopped by [`McpClient::close`] gets to exit after its
/// stdin is closed, before its process group is signalled.
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// How to connect.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// How long the server may take to start and answer `initialize` and
    /// `tools/list` (a first `npx -y` may download the server).
    pub startup_timeout: Duration,
    /// The working directory of a stdio server (default: this process's).
    pub cwd: Option<PathBuf>,
    /// The sandbox that confines a stdio server (ag-loop's `--sandbox`).
    pub sandbox: Option<std::sync::Arc<crate::sandbox::Prepared>>,
    /// HTTP headers sent with every request to an HTTP server (see
    /// [`super::headers`]).
    pub headers: Vec<(String, String)>,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            startup_timeout: Duration::from_secs(60),
            cwd: None,
            sandbox: None,
            headers: Vec::new(),
        }
    }
}

/// Why a server could not be reached or started.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The spec is neither a command line nor an http(s) URL.
    #[error(
        "`{spec}` is not an MCP server: give a command line (`npx -y PACKAGE`) or an http(s) URL"
    )]
    Spec {
        /// The spec given.
        spec: String,
    },
    /// The server's command could not be started.
    #[error("cannot start the MCP server `{command}`: {source}")]
    Spawn {
        /// The command line.
        command: String,
        /// Why.
        source: proc::Error,
    },
    /// The server started but did not complete the handshake or the tool
    /// listing.
    #[error("the MCP server `{server}` did not start: {message}{}", stderr_note(.stderr))]
    Startup {
        /// The spec of the server.
        server: String,
        /// What went wrong.
        message: String,
        /// The end of the server's stderr, when it is a local process.
        stderr: String,
    },
    /// [`McpClient::restart`] was called a second time.
    #[error("the MCP server `{server}` was restarted once already and is not restarted again")]
    RestartLimit {
        /// The spec of the server.
        server: String,
    },
}

impl McpError {
    /// A stable code for messages and events.
    pub fn code(&self) -> &'static str {
        match self {
            McpError::Spec { .. } => "mcp.spec",
            McpError::Spawn { .. } => "mcp.spawn",
            McpError::Startup { .. } => "mcp.startup",
            McpError::RestartLimit { .. } => "mcp.restart_limit",
        }
    }
}

fn stderr_note(stderr: &str) -> String {
    match stderr.trim() {
        "" => String::new(),
        t => format!("; its stderr ends with:\n{t}"),
    }
}

/// Where the server is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Spec {
    /// A shell command line, run by `sh -c`.
    Command(String),
    /// A streamable-HTTP endpoint.
    Url(String),
}

impl Spec {
    fn parse(spec: &str) -> Result<Spec, McpError> {
        let s = spec.trim();
        if s.is_empty() {
            return Err(McpError::Spec { spec: spec.into() });
        }
        let lower = s.to_ascii_lowercase();
        if lower.starts_with("http://") || lower.starts_with("https://") {
            if s.contains(char::is_whitespace) {
                return Err(McpError::Spec { spec: spec.into() });
            }
            return Ok(Spec::Url(s.to_string()));
        }
        Ok(Spec::Command(s.to_string()))
    }

    fn text(&self) -> &str {
        match self {
            Spec::Command(s) | Spec::Url(s) => s,
        }
    }
}

/// A connected MCP server and its tools.
pub struct McpClient {
    spec: Spec,
    options: ConnectOptions,
    live: Live,
    name: String,
    tools: Vec<ToolDefinition>,
    restarted: bool,
}

/// One run of the server: the MCP session, and for a stdio server its
/// process.
struct Live {
    service: RunningService<RoleClient, ClientConfig>,
    /// Set when a call found the server unreachable (HTTP has no exit status).
    unreachable: Arc<Mutex<Option<String>>>,
    /// A stdio server's run: tells how it ended, and stops it (also when
    /// dropped, so a client dropped without [`McpClient::close`] still ends
    /// the server's group).
    process: Option<Running>,
}

impl McpClient {
    /// Starts or reaches the server named by `spec` and lists its tools: a
    /// command line (`npx -y @modelcontextprotocol/server-filesystem .`, run
    /// by `sh -c` in its own process group) or a streamable-HTTP URL.
    pub async fn connect(spec: &str) -> Result<McpClient, McpError> {
        McpClient::connect_with(spec, ConnectOptions::default()).await
    }

    /// [`McpClient::connect`] with options.
    pub async fn connect_with(spec: &str, options: ConnectOptions) -> Result<McpClient, McpError> {
        let spec = Spec::parse(spec)?;
        let (live, name, tools) = start(&spec, &options).await?;
        Ok(McpClient {
            spec,
            options,
            live,
            name,
            tools,
            restarted: false,
        })
    }

    /// The server's name: the one it reports in its `serverInfo`, else one
    /// made from its command or URL.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The spec it was connected with.
    pub fn spec(&self) -> &str {
        self.spec.text()
    }

    /// Its tools, as listed when it (re)started.
    pub fn tools(&self) -> &[ToolDefinition] {
        &self.tools
    }

    /// Why the server is gone, if it is known to be: a stdio server that
    /// exited, or an HTTP server a call could not reach.
    pub fn gone(&self) -> Option<String> {
        if let Some(ended) = self.live.process.as_ref().and_then(Running::ended) {
            return Some(describe_end(&ended));
        }
        self.live.unreachable.lock().ok().and_then(|g| g.clone())
    }

    /// Whether [`McpClient::restart`] may still be called.
    pub fn can_restart(&self) -> bool {
        !self.restarted
    }

    /// Calls a tool with a JSON object of arguments. Cancelling `cancel`
    /// abandons the call (the server is sent `notifications/cancelled`) and
    /// gives an aborted result. The result's `id` is unset: callers set
    /// their own.
    pub async fn call(
        &self,
        name: &str,
        arguments: &Value,
        cancel: &CancellationToken,
    ) -> ToolResult {
        let mut result = self.call_inner(name, arguments, cancel).await;
        result.id = None;
        result
    }

    async fn call_inner(
        &self,
        name: &str,
        arguments: &Value,
        cancel: &CancellationToken,
    ) -> ToolResult {
        let id = "";
        if let Some(why) = self.gone() {
            return self.gone_result(id, name, &why, false);
        }
        let args = match arguments {
            Value::Object(m) => Some(m.clone()),
            Value::Null => None,
            other => {
                return error_result(
                    id,
                    "call.invalid_arguments",
                    format!(
                        "the arguments of `{name}` must be a JSON object, not {}; call it again with an object",
                        crate::protocol::json_kind(other)
                    ),
                );
            }
        };
        let mut params = CallToolRequestParams::new(name.to_string());
        params.arguments = args;
        let peer = self.live.service.peer().clone();
        // Dropping the request when cancelled makes rmcp send
        // `notifications/cancelled` for it.
        let outcome = tokio::select! {
            _ = cancel.cancelled() => return aborted_result(id, CANCELLED),
            r = peer.call_tool_once(params) => r,
        };
        match outcome {
            Ok(CallToolResponse::Complete(result)) => from_mcp_result(id, result),
            Ok(_) => error_result(
                id,
                "mcp.unsupported",
                format!(
                    "`{name}` on the MCP server `{}` asked for more input or started a task, which ag does not support; do without this tool",
                    self.name
                ),
            ),
            Err(ServiceError::McpError(e)) => error_result(
                id,
                "mcp.call_failed",
                format!(
                    "the MCP server `{}` refused the call of `{name}`: {}. Check the tool's name and its arguments against its schema.",
                    self.name, e.message
                ),
            ),
            Err(ServiceError::Cancelled { .. }) => aborted_result(id, CANCELLED),
            Err(e) => {
                let why = self.wait_gone(&e).await;
                self.gone_result(id, name, &why, true)
            }
        }
    }

    /// Stops the server and starts it again (or reconnects), and lists its
    /// tools anew. Allowed once in the life of the client.
    pub async fn restart(&mut self) -> Result<(), McpError> {
        if self.restarted {
            return Err(McpError::RestartLimit {
                server: self.spec.text().to_string(),
            });
        }
        self.restarted = true;
        let (live, name, tools) = start(&self.spec, &self.options).await?;
        let old = std::mem::replace(&mut self.live, live);
        stop(old).await;
        self.name = name;
        self.tools = tools;
        Ok(())
    }

    /// Ends the session: closes the server's stdin (as the MCP spec asks),
    /// gives it a moment to exit, then ends its process group.
    pub async fn close(self) {
        stop(self.live).await;
    }

    /// After a transport failure: why the server is gone. A stdio server
    /// that died is given a moment to be reaped, for its exit status.
    async fn wait_gone(&self, err: &ServiceError) -> String {
        if let Some(p) = &self.live.process
            && let Ok(ended) = tokio::time::timeout(Duration::from_secs(1), p.wait()).await
        {
            return describe_end(&ended);
        }
        let why = format!("the connection failed: {err}");
        if let Ok(mut g) = self.live.unreachable.lock() {
            *g = Some(why.clone());
        }
        why
    }

    fn gone_result(&self, id: &str, tool: &str, why: &str, during: bool) -> ToolResult {
        let what = if during {
            "did not finish"
        } else {
            "did not run"
        };
        let mut r = error_result(
            id,
            SERVER_GONE,
            format!(
                "the MCP server `{}` is gone ({why}), so `{tool}` {what}. It may be restarted once: call the tool again; if that fails too, do without it.",
                self.name
            ),
        );
        r.details = serde_json::json!({"server": self.name, "reason": why});
        r
    }
}

/// Starts a session: spawns or reaches the server, initializes, lists tools.
async fn start(
    spec: &Spec,
    options: &ConnectOptions,
) -> Result<(Live, String, Vec<ToolDefinition>), McpError> {
    let handler = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("ag", env!("CARGO_PKG_VERSION")),
    );
    let fail = |message: String, stderr: String| McpError::Startup {
        server: spec.text().to_string(),
        message,
        stderr,
    };
    let (service, process) = match spec {
        Spec::Command(cmd) => {
            let mut command = proc::Command::new("sh")
                .arg("-c")
                .arg(cmd)
                .stdin(Input::Pipe);
            if let Some(dir) = &options.cwd {
                command = command.cwd(dir);
            }
            if let Some(sandbox) = &options.sandbox {
                command = command.sandbox(sandbox);
            }
            // Its own variables from `AG_MCP_ENV`, set on it alone.
            for (name, value) in super::env::for_command(cmd) {
                command = command.env(name, value);
            }
            let limits = LineLimits {
                max_line: MAX_LINE,
                max_total: None,
                stderr: CaptureLimit {
                    head_bytes: 0,
                    ..CaptureLimit::new(STDERR_TAIL)
                },
            };
            let streaming = command
                .stream_lines(limits, &CancellationToken::new())
                .map_err(|source| McpError::Spawn {
                    command: cmd.clone(),
                    source,
                })?;
            let Streaming {
                lines,
                stdin: Some(stdin),
                running,
            } = streaming
            else {
                return Err(fail("no pipe to the server's stdin".into(), String::new()));
            };
            let reader = LineReader {
                lines,
                line: Vec::new(),
                pos: 0,
            };
            let session = tokio::time::timeout(
                options.startup_timeout,
                handler.clone().serve((reader, stdin)),
            )
            .await;
            match session {
                Ok(Ok(s)) => (s, Some(running)),
                Ok(Err(e)) => {
                    let message = e.to_string();
                    let stderr = stop_process(running, Duration::ZERO).await;
                    return Err(fail(message, stderr));
                }
                Err(_) => {
                    let stderr = stop_process(running, Duration::ZERO).await;
                    return Err(fail(
                        format!(
                            "no answer to `initialize` within {:?}",
                            options.startup_timeout
                        ),
                        stderr,
                    ));
                }
            }
        }
        Spec::Url(url) => {
            crate::tls::install_provider();
            let config =
                rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
                    url.as_str(),
                )
                .custom_headers(super::headers::to_map(&options.headers));
            let transport = rmcp::transport::StreamableHttpClientTransport::from_config(config);
            let session =
                tokio::time::timeout(options.startup_timeout, handler.clone().serve(transport))
                    .await;
            match session {
                Ok(Ok(s)) => (s, None),
                Ok(Err(e)) => return Err(fail(e.to_string(), String::new())),
                Err(_) => {
                    return Err(fail(
                        format!(
                            "no answer to `initialize` within {:?}",
                            options.startup_timeout
                        ),
                        String::new(),
                    ));
                }
            }
        }
    };
    let live = Live {
        service,
        unreachable: Arc::new(Mutex::new(None)),
        process,
    };
    let listed = tokio::time::timeout(
        options.startup_timeout,
        live.service.peer().list_all_tools(),
    )
    .await;
    let tools = match listed {
        Ok(Ok(t)) => t,
        Ok(Err(e)) => {
            let message = format!("`tools/list` failed: {e}");
            let stderr = stop(live).await;
            return Err(fail(message, stderr));
        }
        Err(_) => {
            let stderr = stop(live).await;
            return Err(fail(
                format!(
                    "no answer to `tools/list` within {:?}",
                    options.startup_timeout
                ),
                stderr,
            ));
        }
    };
    let name = live
        .service
        .peer()
        .peer_info()
        .and_then(|i| i.server_info.as_ref().map(|s| s.name.clone()))
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| fallback_name(spec));
    let tools = tools.iter().map(from_mcp_tool).collect();
    Ok((live, name, tools))
}

/// Ends a session and, for a stdio server, its process group; returns the
/// end of the server's stderr.
async fn stop(mut live: Live) -> String {
    // Closing the transport closes the server's stdin: the polite way to ask
    // a stdio server to exit.
    let _ = live.service.close_with_timeout(EXIT_WAIT).await;
    match live.process.take() {
        Some(p) => stop_process(p, EXIT_WAIT).await,
        None => String::new(),
    }
}

/// Gives a stdio server `wait` to exit, then ends its group; returns the
/// end of its stderr.
async fn stop_process(p: Running, wait: Duration) -> String {
    match p.finish(wait).await {
        Ok(o) => o.stderr.lossy().trim().to_string(),
        Err(_) => String::new(),
    }
}

/// Why a stdio server's run ended, with the last lines of its stderr.
fn describe_end(ended: &Ended) -> String {
    let o = match ended {
        Ok(o) => o,
        Err(e) => return format!("cannot wait for it: {e}"),
    };
    let why = match (o.stopped, o.status) {
        (Some(_), _) => "stopped by ag".to_string(),
        (None, Status::Exited(c)) => format!("it exited with status {c}"),
        (None, Status::Signaled(s)) => format!("it was killed by {}", proc::signal_name(s)),
    };
    match o.stderr.lossy().trim() {
        "" => why,
        t => format!("{why}; its stderr ends with: {}", last_lines(t, 3)),
    }
}

/// The server's stdout as rmcp reads it: the lines of [`Lines`] (each
/// within [`MAX_LINE`]; a longer one is skipped, as rmcp itself would),
/// each with its newline back.
struct LineReader {
    lines: Lines,
    line: Vec<u8>,
    pos: usize,
}

impl AsyncRead for LineReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let me = self.get_mut();
        loop {
            if me.pos < me.line.len() {
                let n = buf.remaining().min(me.line.len() - me.pos);
                buf.put_slice(&me.line[me.pos..me.pos + n]);
                me.pos += n;
                return Poll::Ready(Ok(()));
            }
            match me.lines.poll_next(cx) {
                Poll::Ready(Some(Ok(mut line))) => {
                    line.push(b'\n');
                    me.line = line;
                    me.pos = 0;
                }
                // Too long to be a message anyone can use: skipped, and
                // the request it answered fails by its own timeout.
                Poll::Ready(Some(Err(_))) => {}
                // The end of the output.
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" / ")
}

/// A name for a server that reports none: the program's base name, or the
/// URL's host.
fn fallback_name(spec: &Spec) -> String {
    match spec {
        Spec::Command(cmd) => cmd
            .split_whitespace()
            .find(|w| !w.contains('='))
            .and_then(|w| w.rsplit('/').next())
            .unwrap_or("mcp")
            .to_string(),
        Spec::Url(url) => url
            .split("://")
            .nth(1)
            .and_then(|rest| rest.split(['/', ':', '?']).next())
            .filter(|h| !h.is_empty())
            .unwrap_or("mcp")
            .to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_are_commands_or_urls() {
        assert_eq!(
            Spec::parse(" npx -y pkg ").unwrap(),
            Spec::Command("npx -y pkg".into())
        );
        assert_eq!(
            Spec::parse("HTTP://127.0.0.1:3001/mcp").unwrap(),
            Spec::Url("HTTP://127.0.0.1:3001/mcp".into())
        );
        assert_eq!(Spec::parse("   ").unwrap_err().code(), "mcp.spec");
        assert_eq!(Spec::parse("http://a b").unwrap_err().code(), "mcp.spec");
    }

    #[test]
    fn fallback_names_come_from_the_program_or_the_host() {
        let n = |s: &str| fallback_name(&Spec::parse(s).unwrap());
        assert_eq!(n("FOO=1 /usr/bin/my-server --x"), "my-server");
        assert_eq!(n("https://mcp.example.com:8443/mcp"), "mcp.example.com");
        assert_eq!(n("http://127.0.0.1/"), "127.0.0.1");
    }

    #[test]
    fn the_last_lines_of_stderr_are_joined() {
        assert_eq!(last_lines("a\n\nb\nc\nd\n", 3), "b / c / d");
        assert_eq!(last_lines("only", 3), "only");
    }
}
