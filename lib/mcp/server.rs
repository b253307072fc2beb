//! ag-mcp's MCP server: answers `tools/list` with the definitions of the
//! tools in a [`ToolBox`] and `tools/call` by running the tool as a
//! subprocess. The client's `notifications/cancelled` for a call ends the
//! call's process group; so does the end of the session (stdin closed, or
//! SIGTERM/SIGINT), and the server waits for those groups to be gone
//! before it exits.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use tokio::sync::RwLock;
use tokio_util::sync::CancellationToken;

use super::convert::{to_mcp_result, to_mcp_tool};
use super::tools::ToolBox;
use super::wire::LineTransport;
use crate::tool_protocol::hashes::FileHashes;

/// How results are shaped.
#[derive(Debug, Clone, Copy)]
pub struct ServeOptions {
    /// Send each result's details in its `_meta` (`ag/details`).
    pub details: bool,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions { details: true }
    }
}

/// The MCP face of a [`ToolBox`].
#[derive(Clone)]
pub struct AgServer {
    tools: Arc<ToolBox>,
    listed: Arc<Vec<Tool>>,
    options: ServeOptions,
    /// Cancelled when the session ends: every running call stops.
    shutdown: CancellationToken,
    /// Each running call holds a read guard; the write guard is had once
    /// every call has ended (and its process group is gone).
    running: Arc<RwLock<()>>,
    /// What the client read, for the stale-edit guard: one server serves
    /// one client, so this is that client's view of the files.
    hashes: Arc<Mutex<FileHashes>>,
    /// Where relative paths resolve (the tools run here).
    cwd: PathBuf,
}

impl AgServer {
    /// A server for these tools.
    pub fn new(tools: ToolBox, options: ServeOptions) -> AgServer {
        let listed = tools
            .listed()
            .iter()
            .map(|(definition, read_only)| to_mcp_tool(definition, *read_only))
            .collect();
        AgServer {
            tools: Arc::new(tools),
            listed: Arc::new(listed),
            options,
            shutdown: CancellationToken::new(),
            running: Arc::new(RwLock::new(())),
            hashes: Arc::default(),
            cwd: std::env::current_dir().unwrap_or_default(),
        }
    }

    /// Stops every running call and waits until their process groups have
    /// ended (each gets SIGTERM, then SIGKILL after the grace period).
    pub async fn stop_calls(&self) {
        self.shutdown.cancel();
        let _all_done = self.running.write().await;
    }

    /// The guard's memory; a call that panicked while holding it left
    /// nothing half-done in it (each change is one map operation).
    fn file_hashes(&self) -> std::sync::MutexGuard<'_, FileHashes> {
        self.hashes.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn instructions(&self) -> String {
        let names: Vec<&str> = self.listed.iter().map(|t| t.name.as_ref()).collect();
        let cwd = std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_else(|_| "the server's working directory".into());
        format!(
            "ag's coding tools ({}). Relative paths resolve against {cwd}. \
             A failed call's text says what to do instead.",
            names.join(", ")
        )
    }
}

impl ServerHandler for AgServer {
    fn get_info(&self) -> ServerConfig {
        let mut server = Implementation::new("ag-mcp", env!("CARGO_PKG_VERSION"));
        server.title = Some("ag".into());
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(server)
            .with_instructions(self.instructions())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.listed.as_ref().clone(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.listed.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = self.tools.get(&request.name) else {
            let known: Vec<&str> = self.listed.iter().map(|t| t.name.as_ref()).collect();
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{}`; the tools are: {}",
                    request.name,
                    known.join(", ")
                ),
                None,
            ));
        };
        let mut arguments = request.arguments.unwrap_or_default();
        let id = context.id.to_string();
        let note = match tool.validate(&request.name, &mut arguments) {
            Ok(note) => note,
            Err(message) => {
                let result = crate::tool_protocol::exec::error_result(
                    &id,
                    "call.invalid_arguments",
                    message,
                );
                return Ok(to_mcp_result(result, self.options.details).into());
            }
        };
        if tool.server_hash {
            let mut value = serde_json::Value::Object(std::mem::take(&mut arguments));
            self.file_hashes()
                .guard(&request.name, &self.cwd, &mut value);
            if let serde_json::Value::Object(map) = value {
                arguments = map;
            }
        }
        let _running = self.running.read().await;
        // The request's own token is cancelled by `notifications/cancelled`;
        // the server's by the end of the session.
        let cancel = context.ct.child_token();
        let stop = self.shutdown.clone();
        let link = cancel.clone();
        let linker = tokio::spawn(async move {
            stop.cancelled().await;
            link.cancel();
        });
        let mut result = tool.call(&id, &arguments, &cancel).await;
        linker.abort();
        if let Some(note) = &note {
            crate::tools::offer::add_note(&mut result, note);
        }
        self.file_hashes().learn(
            &request.name,
            &self.cwd,
            &serde_json::Value::Object(arguments),
            &result.details,
            result.is_error,
        );
        Ok(to_mcp_result(result, self.options.details).into())
    }
}

/// ag-mcp's stdin and stdout, with every line checked before rmcp sees it.
fn stdio_transport() -> LineTransport<rmcp::transport::StdioReader, rmcp::transport::StdioWriter> {
    let (read, write) = rmcp::transport::stdio_pipes();
    LineTransport::new(read, write)
}

/// Serves `tools` over stdin and stdout until the client closes stdin or a
/// termination signal arrives, then stops the running calls. Returns the
/// signal that ended the session, if one did.
pub async fn serve_stdio(tools: ToolBox, options: ServeOptions) -> Result<Option<i32>, String> {
    use tokio::signal::unix::{SignalKind, signal};
    let server = AgServer::new(tools, options);
    let mut term = signal(SignalKind::terminate()).map_err(|e| format!("signals: {e}"))?;
    let mut int = signal(SignalKind::interrupt()).map_err(|e| format!("signals: {e}"))?;
    let (sigterm, sigint) = (
        SignalKind::terminate().as_raw_value(),
        SignalKind::interrupt().as_raw_value(),
    );
    // A signal during the handshake ends ag-mcp too: there is nothing to stop.
    let running = tokio::select! {
        r = server.clone().serve(stdio_transport()) => {
            r.map_err(|e| format!("the MCP session did not start: {e}"))?
        }
        _ = term.recv() => return Ok(Some(sigterm)),
        _ = int.recv() => return Ok(Some(sigint)),
    };
    let session = running.cancellation_token();
    let ended_by = tokio::select! {
        quit = running.waiting() => {
            quit.map_err(|e| format!("the MCP session failed: {e}"))?;
            None
        }
        _ = term.recv() => Some(sigterm),
        _ = int.recv() => Some(sigint),
    };
    session.cancel();
    server.stop_calls().await;
    Ok(ended_by)
}
