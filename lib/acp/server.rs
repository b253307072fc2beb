//! The ACP requests ag-acp answers, each on the sessions it keeps:
//! `initialize`, `session/new`, `session/load` (the session file replayed
//! as updates first), `session/resume`, `session/list`, `session/close`,
//! `session/prompt`, `session/cancel` and `session/set_mode`. Requests the
//! SDK cannot read, and methods ag does not have, are answered by the SDK
//! with the JSON-RPC error the specification gives; the connection goes on.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AvailableCommandsUpdate, CancelNotification, CloseSessionRequest,
    CloseSessionResponse, CurrentModeUpdate, ForkSessionRequest, ForkSessionResponse,
    Implementation, InitializeRequest, InitializeResponse, ListSessionsRequest,
    ListSessionsResponse, LoadSessionRequest, LoadSessionResponse, McpCapabilities, McpServer,
    NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest, ResumeSessionRequest,
    ResumeSessionResponse, SessionCapabilities, SessionCloseCapabilities, SessionForkCapabilities,
    SessionInfo, SessionListCapabilities, SessionResumeCapabilities, SessionUpdate,
    SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error, ErrorCode};
use tokio::sync::oneshot;

use super::commands;
use super::modes::{self, Mode, shell_quote};
use super::peer::Peer;
use super::prompt::{plain_text, to_user_content};
use super::session::{self, Cmd, Handle, McpSpecs, Shared, Spec, Work};
use super::skills;
use super::translate::{ClientShows, Translator};
use super::transport::Outbox;
use crate::agent::config::skills::Skill;
use crate::cli::warn;
use crate::llm::models::{ModelTable, default_ag_home};
use crate::protocol::{AgentEventRecord, UserContent};
use crate::session::{Reader, SessionFile, Store, Summary};

const BIN: &str = "ag-acp";

/// Sessions listed per `session/list` page.
const PAGE: usize = 50;

/// How long a closing session may take to stop its ag-loop.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// How ag-acp was started.
pub struct Config {
    /// `--loop-cmd`.
    pub loop_cmd: Option<String>,
    /// The flags after `--`.
    pub loop_args: Vec<String>,
    /// `-m`.
    pub model: Option<String>,
    /// `--mode`.
    pub mode: Mode,
    /// `--permission-timeout` (None: wait for ever).
    pub permission_timeout: Option<Duration>,
    /// `--editor-fs`.
    pub editor_fs: bool,
    /// `--editor-terminal`.
    pub editor_terminal: bool,
}

/// ag-acp's state: its sessions and what the editor said it can do.
pub struct Server {
    config: Config,
    outbox: Outbox,
    shared: OnceLock<Arc<Shared>>,
    sessions: Mutex<HashMap<String, Handle>>,
    shows: Mutex<ClientShows>,
    models: OnceLock<Option<Arc<ModelTable>>>,
    /// The skills announced as commands, by session.
    skills: Mutex<HashMap<String, Vec<Skill>>>,
}

type Result = std::result::Result<(), Error>;

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::INVALID_PARAMS, message.into())
}

fn not_found(id: &str) -> Error {
    Error::new(
        ErrorCode::RESOURCE_NOT_FOUND,
        format!(
            "no session `{id}` is open here: start it with session/new, session/load or session/resume"
        ),
    )
}

impl Server {
    /// A server with no sessions yet.
    pub fn new(config: Config, outbox: Outbox) -> Server {
        Server {
            config,
            outbox,
            shared: OnceLock::new(),
            sessions: Mutex::new(HashMap::new()),
            shows: Mutex::new(ClientShows::default()),
            models: OnceLock::new(),
            skills: Mutex::new(HashMap::new()),
        }
    }

    fn shared(&self, cx: &ConnectionTo<Client>) -> Arc<Shared> {
        self.shared
            .get_or_init(|| {
                Arc::new(Shared {
                    loop_cmd: self.config.loop_cmd.clone(),
                    loop_args: self.config.loop_args.clone(),
                    model: self.config.model.clone(),
                    permission_timeout: self.config.permission_timeout,
                    peer: Peer {
                        cx: cx.clone(),
                        outbox: self.outbox.clone(),
                    },
                })
            })
            .clone()
    }

    fn handle(&self, id: &str) -> Option<Handle> {
        self.sessions.lock().ok()?.get(id).cloned()
    }

    /// A translator for a session in `cwd`, knowing the model table's
    /// context windows.
    fn translator(&self, cwd: PathBuf) -> Translator {
        let table = self
            .models
            .get_or_init(|| match ModelTable::load(&default_ag_home()) {
                Ok(t) => Some(Arc::new(t)),
                Err(e) => {
                    warn(BIN, &format!("{e}; context windows are not reported"));
                    None
                }
            })
            .clone();
        let shows = self.shows.lock().map(|s| *s).unwrap_or_default();
        Translator::new(
            cwd,
            shows,
            Box::new(move |model| {
                table
                    .as_ref()?
                    .resolve(model)
                    .map(|i| i.context_window)
                    .filter(|w| *w > 0)
            }),
        )
    }

    /// `initialize`: what ag supports.
    pub fn initialize(
        &self,
        req: InitializeRequest,
        responder: Responder<InitializeResponse>,
    ) -> Result {
        let notices = req
            .client_capabilities
            .session
            .as_ref()
            .is_some_and(|s| s.notices.is_some());
        let forms = req
            .client_capabilities
            .elicitation
            .as_ref()
            .is_some_and(|e| e.supports_form());
        if let Ok(mut s) = self.shows.lock() {
            s.notices = notices;
            s.forms = forms;
            let fs = &req.client_capabilities.fs;
            s.editor_read = self.config.editor_fs && fs.read_text_file;
            s.editor_write = self.config.editor_fs && fs.write_text_file;
            s.editor_terminal = self.config.editor_terminal && req.client_capabilities.terminal;
        }
        if self.config.editor_terminal && !req.client_capabilities.terminal {
            warn(
                BIN,
                "--editor-terminal: the editor does not offer a terminal (no `terminal` in its capabilities); bash runs in ag's own sandbox, as without the flag",
            );
        }
        let caps = AgentCapabilities::new()
            .load_session(true)
            .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
            .mcp_capabilities(McpCapabilities::new().http(true))
            .session_capabilities(
                SessionCapabilities::new()
                    .list(SessionListCapabilities::new())
                    .resume(SessionResumeCapabilities::new())
                    .fork(SessionForkCapabilities::new())
                    .close(SessionCloseCapabilities::new()),
            );
        responder.respond(
            InitializeResponse::new(ProtocolVersion::V1)
                .agent_capabilities(caps)
                .agent_info(
                    Implementation::new("ag", env!("CARGO_PKG_VERSION")).title("ag".to_string()),
                ),
        )
    }

    /// `session/new`: a new ag session in the editor's directory, with its
    /// MCP servers.
    pub fn new_session(
        &self,
        req: NewSessionRequest,
        responder: Responder<NewSessionResponse>,
        cx: ConnectionTo<Client>,
    ) -> Result {
        let cwd = match check_cwd(&req.cwd) {
            Ok(c) => c,
            Err(e) => return responder.respond_with_error(invalid(e)),
        };
        let mcp = match mcp_specs(&req.mcp_servers) {
            Ok(m) => m,
            Err(e) => return responder.respond_with_error(invalid(e)),
        };
        let file = match Store::from_env().create(&cwd, serde_json::json!({}), None) {
            Ok((f, _)) => f,
            Err(e) => {
                return responder.respond_with_error(Error::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!("cannot create the session: {e}"),
                ));
            }
        };
        let mode = self.config.mode;
        let id = file.id.clone();
        let translator = self.translator(cwd.clone());
        self.open(
            Spec {
                id: id.clone(),
                cwd: cwd.clone(),
                mcp,
                mode,
            },
            translator,
            &cx,
        );
        responder.respond(NewSessionResponse::new(id.clone()).modes(modes::state(mode)))?;
        self.announce(&cx, &id, &cwd);
        Ok(())
    }

    /// `session/load` (`replay`) and `session/resume`: an ag session goes
    /// on, after its history was sent as updates when loading.
    pub fn load(
        &self,
        id: &str,
        cwd: &Path,
        servers: &[McpServer],
        replay: bool,
        cx: &ConnectionTo<Client>,
    ) -> std::result::Result<Mode, Error> {
        let cwd = check_cwd(cwd).map_err(invalid)?;
        let mcp = mcp_specs(servers).map_err(invalid)?;
        let file = Store::from_env().find(id).map_err(|e| {
            Error::new(
                ErrorCode::RESOURCE_NOT_FOUND,
                format!("session `{id}`: {e} (session/list shows the sessions there are)"),
            )
        })?;
        self.close_quietly(&file.id);
        let mut translator = self.translator(cwd.clone());
        let peer = self.shared(cx).peer.clone();
        let mut reader = Reader::open(&file.path).map_err(|e| {
            Error::new(
                ErrorCode::INTERNAL_ERROR,
                format!("cannot read `{}`: {e}", file.path.display()),
            )
        })?;
        let _ = reader.header();
        let mut gone = false;
        reader
            .for_each_event(|_, record: AgentEventRecord| {
                let updates = translator.event(&record.event, true);
                if replay && !gone {
                    for u in updates {
                        gone |= !peer.update(&file.id, u);
                    }
                }
            })
            .map_err(|e| {
                Error::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!("cannot read `{}`: {e}", file.path.display()),
                )
            })?;
        let mode = self.config.mode;
        self.open(
            Spec {
                id: file.id.clone(),
                cwd,
                mcp,
                mode,
            },
            translator,
            cx,
        );
        Ok(mode)
    }

    /// `session/load`.
    pub fn load_session(
        &self,
        req: LoadSessionRequest,
        responder: Responder<LoadSessionResponse>,
        cx: ConnectionTo<Client>,
    ) -> Result {
        let id = req.session_id.0.to_string();
        match self.load(&id, &req.cwd, &req.mcp_servers, true, &cx) {
            Ok(mode) => {
                responder.respond(LoadSessionResponse::new().modes(modes::state(mode)))?;
                self.announce(&cx, &id, &req.cwd);
                Ok(())
            }
            Err(e) => responder.respond_with_error(e),
        }
    }

    /// `session/fork` (unstable in ACP): `ag-session fork` copies the
    /// session's conversation into a new ag session, which goes on in the
    /// editor's directory without a replay (the editor has the history).
    pub async fn fork_session(
        &self,
        req: ForkSessionRequest,
        responder: Responder<ForkSessionResponse>,
        cx: ConnectionTo<Client>,
    ) -> Result {
        let id = req.session_id.0.to_string();
        let cwd = match check_cwd(&req.cwd) {
            Ok(c) => c,
            Err(e) => return responder.respond_with_error(invalid(e)),
        };
        let source = match Store::from_env().find(&id) {
            Ok(f) => f,
            Err(e) => {
                return responder.respond_with_error(Error::new(
                    ErrorCode::RESOURCE_NOT_FOUND,
                    format!("session `{id}`: {e} (session/list shows the sessions there are)"),
                ));
            }
        };
        let forked = match session::fork(&source.id, &cwd).await {
            Ok(f) => f,
            Err(e) => {
                return responder.respond_with_error(Error::new(ErrorCode::INTERNAL_ERROR, e));
            }
        };
        match self.load(&forked, &cwd, &req.mcp_servers, false, &cx) {
            Ok(mode) => {
                responder
                    .respond(ForkSessionResponse::new(forked.clone()).modes(modes::state(mode)))?;
                self.announce(&cx, &forked, &cwd);
                Ok(())
            }
            Err(e) => responder.respond_with_error(e),
        }
    }

    /// `session/resume`.
    pub fn resume_session(
        &self,
        req: ResumeSessionRequest,
        responder: Responder<ResumeSessionResponse>,
        cx: ConnectionTo<Client>,
    ) -> Result {
        let id = req.session_id.0.to_string();
        match self.load(&id, &req.cwd, &req.mcp_servers, false, &cx) {
            Ok(mode) => {
                responder.respond(ResumeSessionResponse::new().modes(modes::state(mode)))?;
                self.announce(&cx, &id, &req.cwd);
                Ok(())
            }
            Err(e) => responder.respond_with_error(e),
        }
    }

    fn open(&self, spec: Spec, translator: Translator, cx: &ConnectionTo<Client>) {
        let id = spec.id.clone();
        let handle = session::start(spec, translator, self.shared(cx));
        if let Ok(mut s) = self.sessions.lock() {
            s.insert(id, handle);
        }
    }

    /// The slash commands, once the editor knows the session: ag-acp's
    /// own, then the skills found in its directory.
    fn announce(&self, cx: &ConnectionTo<Client>, id: &str, cwd: &Path) {
        let found = skills::find(cwd, &self.config.loop_args);
        let mut all = commands::available();
        all.extend(skills::available(&found));
        if let Ok(mut s) = self.skills.lock() {
            s.insert(id.to_string(), found);
        }
        self.shared(cx).peer.update(
            id,
            SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(all)),
        );
    }

    /// Ends a session opened here before, without waiting.
    fn close_quietly(&self, id: &str) {
        let old = self.sessions.lock().ok().and_then(|mut s| s.remove(id));
        if let Some(h) = old {
            let (tx, _) = oneshot::channel();
            h.send(Cmd::Close(tx));
        }
    }

    /// `session/list`: ag's sessions, of one directory or all, newest first.
    pub fn list_sessions(
        &self,
        req: ListSessionsRequest,
        responder: Responder<ListSessionsResponse>,
    ) -> Result {
        let store = Store::from_env();
        let files = match &req.cwd {
            Some(cwd) => store.list_dir(cwd),
            None => store.list_all(),
        };
        let mut files: Vec<SessionFile> = match files {
            Ok(f) => f,
            Err(e) => {
                return responder.respond_with_error(Error::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!("cannot list the sessions: {e}"),
                ));
            }
        };
        files.sort_by(|a, b| b.stamp.cmp(&a.stamp));
        let start = match req.cursor.as_deref().map(str::parse::<usize>) {
            None => 0,
            Some(Ok(n)) => n,
            Some(Err(_)) => {
                return responder.respond_with_error(invalid(format!(
                    "`cursor` `{}` is not one this agent gave: send the `nextCursor` of the previous page, or none for the first",
                    req.cursor.as_deref().unwrap_or_default()
                )));
            }
        };
        let page: Vec<SessionInfo> = files
            .iter()
            .skip(start)
            .take(PAGE)
            .filter_map(|f| {
                let s = Summary::of(f).ok()?;
                let title: String = s
                    .first_prompt
                    .lines()
                    .next()
                    .unwrap_or("")
                    .chars()
                    .take(120)
                    .collect();
                let updated = std::fs::metadata(&f.path)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| jiff::Timestamp::try_from(t).ok())
                    .map(|t| format!("{t:.3}"));
                Some(
                    SessionInfo::new(s.id, PathBuf::from(s.cwd))
                        .title((!title.is_empty()).then_some(title))
                        .updated_at(updated),
                )
            })
            .collect();
        let next = (start + PAGE < files.len()).then(|| (start + PAGE).to_string());
        responder.respond(ListSessionsResponse::new(page).next_cursor(next))
    }

    /// `session/close`: stops the session's ag-loop.
    pub async fn close_session(
        &self,
        req: CloseSessionRequest,
        responder: Responder<CloseSessionResponse>,
    ) -> Result {
        let id = req.session_id.0.to_string();
        if let Ok(mut s) = self.skills.lock() {
            s.remove(&id);
        }
        let Some(h) = self.sessions.lock().ok().and_then(|mut s| s.remove(&id)) else {
            return responder.respond_with_error(not_found(&id));
        };
        let (tx, rx) = oneshot::channel();
        if h.send(Cmd::Close(tx)) {
            let _ = tokio::time::timeout(CLOSE_WAIT, rx).await;
        }
        responder.respond(CloseSessionResponse::new())
    }

    /// Closes every session and waits (a bounded time) for their ag-loops
    /// to stop: at exit.
    pub async fn close_all(&self) {
        let all: Vec<Handle> = self
            .sessions
            .lock()
            .map(|mut s| s.drain().map(|(_, h)| h).collect())
            .unwrap_or_default();
        let mut waits = Vec::new();
        for h in all {
            let (tx, rx) = oneshot::channel();
            if h.send(Cmd::Close(tx)) {
                waits.push(rx);
            }
        }
        for rx in waits {
            let _ = tokio::time::timeout(CLOSE_WAIT, rx).await;
        }
    }

    /// `session/prompt`: queued in its session, answered when it ends.
    pub fn prompt(
        &self,
        req: PromptRequest,
        responder: Responder<agent_client_protocol::v1::schema::PromptResponse>,
    ) -> Result {
        let id = req.session_id.0.to_string();
        let Some(h) = self.handle(&id) else {
            return responder.respond_with_error(not_found(&id));
        };
        let text = plain_text(&req.prompt);
        let skill = text.as_deref().and_then(|t| {
            let s = self.skills.lock().ok()?;
            skills::prompt(t, s.get(&id)?)
        });
        if let Some(p) = skill {
            return match h.send_prompt(Work::Prompt(UserContent::Text(p), Vec::new()), responder) {
                Ok(()) => Ok(()),
                Err(returned) => returned.respond_with_error(not_found(&id)),
            };
        }
        let work = match text.as_deref().and_then(commands::parse) {
            Some(Ok(slash)) => Work::Slash(slash),
            Some(Err(e)) => return responder.respond_with_error(invalid(e)),
            None => match to_user_content(&req.prompt) {
                Ok(c) => Work::Prompt(c.content, c.data),
                Err(e) => return responder.respond_with_error(invalid(e.to_string())),
            },
        };
        if let Err(returned) = h.send_prompt(work, responder) {
            return returned.respond_with_error(not_found(&id));
        }
        Ok(())
    }

    /// `session/cancel`.
    pub fn cancel(&self, n: CancelNotification) -> Result {
        let id = n.session_id.0.to_string();
        match self.handle(&id) {
            Some(h) => {
                h.send(Cmd::Cancel);
            }
            None => warn(
                BIN,
                &format!("session/cancel for `{id}`, which is not open here"),
            ),
        }
        Ok(())
    }

    /// `session/set_mode`: ag-loop starts again in the mode before the
    /// next prompt.
    pub fn set_mode(
        &self,
        req: SetSessionModeRequest,
        responder: Responder<SetSessionModeResponse>,
        cx: ConnectionTo<Client>,
    ) -> Result {
        let id = req.session_id.0.to_string();
        let Some(h) = self.handle(&id) else {
            return responder.respond_with_error(not_found(&id));
        };
        let Some(mode) = Mode::from_id(&req.mode_id.0) else {
            let ids: Vec<&str> = modes::ALL.iter().map(|m| m.id()).collect();
            return responder.respond_with_error(invalid(format!(
                "no mode `{}`: the modes are {}",
                req.mode_id.0,
                ids.join(", ")
            )));
        };
        h.send(Cmd::SetMode(mode));
        responder.respond(SetSessionModeResponse::new())?;
        self.shared(&cx).peer.update(
            &id,
            SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(mode.id().to_string())),
        );
        Ok(())
    }
}

/// The editor's MCP servers as ag-loop's `--mcp` specs: a stdio server as
/// one shell command line, with its variables in `AG_MCP_ENV`; an HTTP
/// server as its URL, with its headers in `AG_MCP_HEADERS`.
pub fn mcp_specs(servers: &[McpServer]) -> std::result::Result<McpSpecs, String> {
    let mut out = Vec::new();
    let mut headers = serde_json::Map::new();
    let mut vars = serde_json::Map::new();
    for s in servers {
        match s {
            McpServer::Stdio(s) => {
                let command = s.command.display().to_string();
                if command.is_empty() {
                    return Err(format!("MCP server `{}` has an empty `command`", s.name));
                }
                let mut words = vec![shell_quote(&command)];
                words.extend(s.args.iter().map(|a| shell_quote(a)));
                let spec = words.join(" ");
                if !s.env.is_empty() {
                    let mut these = serde_json::Map::new();
                    for v in &s.env {
                        if !crate::mcp::env::is_name(&v.name) {
                            return Err(format!(
                                "MCP server `{}`: `{}` is not an environment variable name (letters, digits and _, not starting with a digit)",
                                s.name, v.name
                            ));
                        }
                        these.insert(v.name.clone(), serde_json::Value::String(v.value.clone()));
                    }
                    vars.insert(spec.clone(), serde_json::Value::Object(these));
                }
                out.push(spec);
            }
            McpServer::Http(h) => {
                if !(h.url.starts_with("http://") || h.url.starts_with("https://")) {
                    return Err(format!(
                        "MCP server `{}`: `url` must start with http:// or https://, not `{}`",
                        h.name, h.url
                    ));
                }
                if !h.headers.is_empty() {
                    let mut these = serde_json::Map::new();
                    for header in &h.headers {
                        these.insert(
                            header.name.clone(),
                            serde_json::Value::String(header.value.clone()),
                        );
                    }
                    headers.insert(h.url.trim().to_string(), serde_json::Value::Object(these));
                }
                out.push(h.url.clone());
            }
            McpServer::Sse(s) => {
                return Err(format!(
                    "MCP server `{}` uses SSE, which ag does not speak (it announces `sse: false`): use its streamable HTTP URL or stdio",
                    s.name
                ));
            }
            #[allow(unreachable_patterns)]
            _ => return Err("an MCP server of a kind ag does not know".into()),
        }
    }
    let env = if vars.is_empty() {
        None
    } else {
        let text = serde_json::Value::Object(vars).to_string();
        crate::mcp::env::parse(&text)
            .map_err(|e| e.replace(&format!("${}: ", crate::mcp::env::ENV), "MCP server "))?;
        Some(text)
    };
    let headers = if headers.is_empty() {
        None
    } else {
        let text = serde_json::Value::Object(headers).to_string();
        // Checked here, so that the editor hears of a bad header at once
        // (the message names it, never its value).
        crate::mcp::headers::parse(&text)
            .map_err(|e| e.replace(&format!("${}: ", crate::mcp::headers::ENV), "MCP server "))?;
        Some(text)
    };
    Ok(McpSpecs {
        specs: out,
        headers,
        env,
    })
}

/// The session's working directory for ag-loop, checked: ACP sends an
/// absolute path of a directory that exists.
pub fn check_cwd(cwd: &Path) -> std::result::Result<PathBuf, String> {
    if !cwd.is_absolute() {
        return Err(format!(
            "`cwd` must be an absolute path, not `{}`",
            cwd.display()
        ));
    }
    match std::fs::metadata(cwd) {
        Ok(m) if m.is_dir() => Ok(cwd.to_path_buf()),
        Ok(_) => Err(format!("`cwd` `{}` is not a directory", cwd.display())),
        Err(e) => Err(format!("`cwd` `{}`: {e}", cwd.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{
        EnvVariable, HttpHeader, McpServerHttp, McpServerStdio,
    };

    #[test]
    fn mcp_servers_become_ag_loop_specs() {
        let specs = mcp_specs(&[
            McpServer::Stdio(
                McpServerStdio::new("fs", "/usr/bin/my server")
                    .args(vec!["--root".into(), "a b".into()])
                    .env(vec![EnvVariable::new("TOKEN", "x'y")]),
            ),
            McpServer::Http(McpServerHttp::new("web", "http://127.0.0.1:9/mcp")),
        ])
        .unwrap();
        assert_eq!(
            specs.specs,
            [
                "'/usr/bin/my server' --root 'a b'",
                "http://127.0.0.1:9/mcp"
            ]
        );
        assert_eq!(specs.headers, None);
        // The variables are not on the command line, but in AG_MCP_ENV
        // under it.
        let vars = crate::mcp::env::parse(specs.env.as_deref().unwrap()).unwrap();
        assert_eq!(
            vars["'/usr/bin/my server' --root 'a b'"],
            [("TOKEN".to_string(), "x'y".to_string())]
        );
    }

    #[test]
    fn http_headers_go_to_the_environment_not_the_command_line() {
        let specs = mcp_specs(&[McpServer::Http(
            McpServerHttp::new("web", "https://h/mcp").headers(vec![HttpHeader::new(
                "Authorization",
                "Bearer s3cret-token",
            )]),
        )])
        .unwrap();
        assert_eq!(specs.specs, ["https://h/mcp"]);
        let h = crate::mcp::headers::parse(specs.headers.as_deref().unwrap()).unwrap();
        assert_eq!(h["https://h/mcp"][0].1, "Bearer s3cret-token");
        let e = mcp_specs(&[McpServer::Http(
            McpServerHttp::new("web", "https://h/mcp")
                .headers(vec![HttpHeader::new("X", "s3cret\r\nInjected: 1")]),
        )])
        .unwrap_err();
        assert!(e.contains("header `X`") && !e.contains("s3cret"), "{e}");
    }

    #[test]
    fn bad_mcp_servers_are_named() {
        let e = mcp_specs(&[McpServer::Stdio(
            McpServerStdio::new("s", "x").env(vec![EnvVariable::new("A B", "1")]),
        )])
        .unwrap_err();
        assert!(e.contains("`A B`") && e.contains("`s`"), "{e}");
        let e = mcp_specs(&[McpServer::Http(McpServerHttp::new("w", "ftp://x"))]).unwrap_err();
        assert!(e.contains("http://"), "{e}");
    }

    #[test]
    fn the_working_directory_must_be_an_absolute_directory() {
        let dir = tempfile::tempdir().unwrap();
        assert!(check_cwd(dir.path()).is_ok());
        assert!(
            check_cwd(Path::new("rel/dir"))
                .unwrap_err()
                .contains("absolute")
        );
        let file = dir.path().join("f");
        std::fs::write(&file, "").unwrap();
        assert!(check_cwd(&file).unwrap_err().contains("not a directory"));
        assert!(check_cwd(&dir.path().join("missing")).is_err());
    }
}
