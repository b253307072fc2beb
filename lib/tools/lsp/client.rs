//! One language server, as the warm host keeps it: started through
//! `core/proc` (its pipes raw, confined to write only its cache), spoken to
//! with async-lsp, initialised once, its documents kept in step with the
//! files, and the diagnostics it publishes kept as they come.
//!
//! Dropping a [`Client`] ends the server's whole process group.

use crate::sandbox::ConfineCommand;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_lsp::router::Router;
use async_lsp::{MainLoop, ServerSocket};
use lsp_types::notification::{
    DidChangeTextDocument, DidOpenTextDocument, DidSaveTextDocument, Exit, Initialized,
    PublishDiagnostics,
};
use lsp_types::request::{Initialize, Shutdown};
use lsp_types::{
    ClientCapabilities, ClientInfo, DidChangeTextDocumentParams, DidOpenTextDocumentParams,
    DidSaveTextDocumentParams, DocumentSymbolClientCapabilities, GotoCapability,
    HoverClientCapabilities, InitializeParams, InitializedParams, MarkupKind,
    PublishDiagnosticsClientCapabilities, ReferenceClientCapabilities,
    TextDocumentClientCapabilities, TextDocumentContentChangeEvent, TextDocumentIdentifier,
    TextDocumentItem, TextDocumentSyncClientCapabilities, Url, VersionedTextDocumentIdentifier,
    WorkspaceClientCapabilities, WorkspaceFolder, WorkspaceSymbolClientCapabilities,
};
use tokio::sync::watch;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};
use tokio_util::sync::CancellationToken;

use super::servers::Server;
use crate::proc::{CaptureLimit, Command, Running};

/// How long a publish without a version waits for a versioned one (see
/// `Client::published`).
const SETTLE: Duration = Duration::from_millis(500);

/// What a server printed on stderr that is kept, to say why it ended.
const STDERR_KEPT: usize = 16 * 1024;

/// A document as the server has it.
struct Doc {
    version: i32,
    text: String,
    /// The publish count when its last version was sent: a publish after
    /// it is about that version or a later one.
    sent_at: u64,
}

/// The diagnostics last published for a document.
#[derive(Clone)]
struct Published {
    version: Option<i32>,
    seq: u64,
    items: Vec<lsp_types::Diagnostic>,
}

/// What the router's handlers share with the client.
#[derive(Default)]
struct Shared {
    published: HashMap<Url, Published>,
    seq: u64,
    /// Set once the connection ended: why.
    ended: Option<String>,
}

/// Whether `initialize` was answered.
type Ready = Option<Result<(), String>>;

/// One running language server.
pub struct Client {
    /// The server's entry.
    pub server: Server,
    socket: ServerSocket,
    shared: Arc<Mutex<Shared>>,
    bumps: watch::Receiver<u64>,
    ready: watch::Receiver<Ready>,
    docs: tokio::sync::Mutex<HashMap<Url, Doc>>,
    running: Running,
    _sandbox: Option<crate::sandbox::Prepared>,
}

impl Client {
    /// Starts the server in `root`, writing only `cache`, and sends
    /// `initialize` (answered in the background: see [`Client::ready`]).
    /// Must be called within the host's runtime.
    pub fn start(server: &Server, root: &Path, cache: &Path) -> Result<Arc<Client>, String> {
        let what = describe(server);
        let tmp = cache.join("tmp");
        std::fs::create_dir_all(&tmp)
            .map_err(|e| format!("cannot make {}'s cache {}: {e}", what, cache.display()))?;
        let mut cmd = Command::new(&server.command[0])
            .args(&server.command[1..])
            .cwd(root)
            // Caches that servers and their tools write go to its own.
            .env("XDG_CACHE_HOME", cache)
            .env("CARGO_TARGET_DIR", cache.join("target"))
            .grace(Duration::from_secs(1));
        for (k, v) in &server.env {
            cmd = cmd.env(k, v);
        }
        // Confined like a tool call: it reads what the user may, writes
        // only its cache, and reaches no network.
        let mut policy =
            crate::sandbox::Policy::new(crate::sandbox::Mode::WorkspaceWrite, cache.to_path_buf());
        policy.tmpdir = Some(tmp);
        let sandbox = crate::sandbox::prepare(&policy, crate::sandbox::Enforcement::Auto)
            .map_err(|e| format!("cannot confine {what}: {e}"))?;
        if let Some(s) = &sandbox {
            cmd = cmd.sandbox(s);
        }
        let piped = cmd
            .stream_pipes(CaptureLimit::new(STDERR_KEPT), &CancellationToken::new())
            .map_err(|e| format!("cannot start {what}: {e}"))?;
        let shared = Arc::new(Mutex::new(Shared::default()));
        let (bump_tx, bumps) = watch::channel(0u64);
        let bump_tx = Arc::new(bump_tx);
        let (mainloop, socket) = MainLoop::new_client(|_| router(shared.clone(), bump_tx.clone()));
        {
            let shared = shared.clone();
            let bump_tx = bump_tx.clone();
            let stdout = piped.stdout;
            let stdin = piped.stdin;
            // The main loop must not see its last socket go (it panics
            // then); it ends when the server's stdout closes, which the
            // client's drop brings about.
            let keep = socket.clone();
            tokio::spawn(async move {
                let _keep = keep;
                let r = mainloop
                    .run_buffered(stdout.compat(), stdin.compat_write())
                    .await;
                let why = match r {
                    Ok(()) => "it closed the connection".to_string(),
                    Err(e) => format!("the connection ended: {e}"),
                };
                if let Ok(mut s) = shared.lock() {
                    s.ended.get_or_insert(why);
                }
                bump_tx.send_modify(|n| *n += 1);
            });
        }
        let (ready_tx, ready) = watch::channel(None);
        {
            let socket = socket.clone();
            let params = initialize_params(server, root)?;
            let limit = Duration::from_secs_f64(server.init_timeout);
            tokio::spawn(async move {
                let answer =
                    tokio::time::timeout(limit, socket.request::<Initialize>(params)).await;
                let ready = match answer {
                    Ok(Ok(_)) => socket
                        .notify::<Initialized>(InitializedParams {})
                        .map_err(|e| format!("cannot send `initialized`: {e}")),
                    Ok(Err(e)) => Err(format!("it answered `initialize` with an error: {e}")),
                    Err(_) => Err(format!(
                        "it did not answer `initialize` within {} s",
                        limit.as_secs_f64()
                    )),
                };
                let _ = ready_tx.send(Some(ready));
            });
        }
        Ok(Arc::new(Client {
            server: server.clone(),
            socket,
            shared,
            bumps,
            ready,
            docs: tokio::sync::Mutex::new(HashMap::new()),
            running: piped.running,
            _sandbox: sandbox,
        }))
    }

    /// Whether the server answered `initialize`.
    pub fn is_ready(&self) -> bool {
        matches!(*self.ready.borrow(), Some(Ok(())))
    }

    /// Why the server cannot be used, once it cannot: `initialize` failed
    /// or the connection ended.
    pub fn failure(&self) -> Option<String> {
        // The end of the process says more (its status, its last line)
        // than the failed `initialize` that the end caused.
        let ended = self.shared.lock().ok().and_then(|s| s.ended.clone());
        if let Some(ended) = ended {
            return Some(self.ending(&ended));
        }
        if let Some(Err(e)) = &*self.ready.borrow() {
            return Some(e.clone());
        }
        None
    }

    /// The end of the connection in words, with the exit status and the
    /// last line the server printed, when known.
    fn ending(&self, why: &str) -> String {
        match self.running.ended() {
            Some(Ok(out)) => {
                let err = out.stderr.lossy();
                let last = err
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .map(|l| format!(": {}", l.trim()))
                    .unwrap_or_default();
                format!("it ended ({}){last}", out.status)
            }
            _ => why.to_string(),
        }
    }

    /// Waits for `initialize`'s answer.
    pub async fn ready(&self) -> Result<(), String> {
        let mut rx = self.ready.clone();
        let mut bumps = self.bumps.clone();
        loop {
            if let Some(r) = rx.borrow().clone() {
                return r;
            }
            if self.failure().is_some() {
                return Err(self.failed().await);
            }
            tokio::select! {
                r = rx.changed() => if r.is_err() { return Err("the server's start was abandoned".into()) },
                r = bumps.changed() => if r.is_err() { return Err("the server's connection is gone".into()) },
            }
        }
    }

    /// Says politely that the session is over: `shutdown`, then `exit`.
    pub async fn shutdown(&self) {
        if self.is_ready() && self.failure().is_none() {
            let _ = self.socket.request::<Shutdown>(()).await;
            let _ = self.socket.notify::<Exit>(());
        }
    }

    /// The socket, to send requests.
    pub fn socket(&self) -> &ServerSocket {
        &self.socket
    }

    /// Puts `text` in the server as `file`'s content (opening it first),
    /// unless it has that already; returns the version it has.
    async fn sync_text(
        &self,
        docs: &mut HashMap<Url, Doc>,
        uri: &Url,
        file: &Path,
        text: &str,
    ) -> Result<i32, String> {
        let seq = self.seq();
        match docs.get_mut(uri) {
            Some(doc) if doc.text == text => Ok(doc.version),
            Some(doc) => {
                doc.version += 1;
                doc.text = text.to_string();
                doc.sent_at = seq;
                self.socket
                    .notify::<DidChangeTextDocument>(DidChangeTextDocumentParams {
                        text_document: VersionedTextDocumentIdentifier {
                            uri: uri.clone(),
                            version: doc.version,
                        },
                        content_changes: vec![TextDocumentContentChangeEvent {
                            range: None,
                            range_length: None,
                            text: text.to_string(),
                        }],
                    })
                    .map_err(|e| self.lost(e))?;
                Ok(doc.version)
            }
            None => {
                self.socket
                    .notify::<DidOpenTextDocument>(DidOpenTextDocumentParams {
                        text_document: TextDocumentItem {
                            uri: uri.clone(),
                            language_id: self.server.language_of(file),
                            version: 1,
                            text: text.to_string(),
                        },
                    })
                    .map_err(|e| self.lost(e))?;
                docs.insert(
                    uri.clone(),
                    Doc {
                        version: 1,
                        text: text.to_string(),
                        sent_at: seq,
                    },
                );
                Ok(1)
            }
        }
    }

    fn lost(&self, e: async_lsp::Error) -> String {
        self.failure()
            .unwrap_or_else(|| format!("cannot write to the server: {e}"))
    }

    fn seq(&self) -> u64 {
        self.shared.lock().map(|s| s.seq).unwrap_or(0)
    }

    /// Waits for the diagnostics of `uri`'s current version. A publish
    /// without a version is taken as about it when it comes after the
    /// version was sent; with `settle`, only after a moment without a
    /// versioned one: a server that has just had the file opened may first
    /// publish what it found in the file on disk (gopls does), which is not
    /// the text it was sent.
    async fn published(
        &self,
        docs: &HashMap<Url, Doc>,
        uri: &Url,
        settle: bool,
    ) -> Result<Vec<lsp_types::Diagnostic>, String> {
        let Some(doc) = docs.get(uri) else {
            return Ok(Vec::new());
        };
        let mut bumps = self.bumps.clone();
        let mut unversioned: Option<(Vec<lsp_types::Diagnostic>, tokio::time::Instant)> = None;
        loop {
            if self.failure().is_some() {
                return Err(self.failed().await);
            }
            let found = self.shared.lock().ok().and_then(|s| {
                s.published
                    .get(uri)
                    .filter(|p| p.seq > doc.sent_at && p.version.is_none_or(|v| v >= doc.version))
                    .cloned()
            });
            match found {
                Some(p) if p.version.is_some() || !settle => return Ok(p.items),
                Some(p) => {
                    let since = unversioned
                        .as_ref()
                        .map_or_else(tokio::time::Instant::now, |u| u.1);
                    unversioned = Some((p.items, since));
                }
                None => {}
            }
            let next = bumps.changed();
            match &unversioned {
                Some((_, since)) => match tokio::time::timeout_at(*since + SETTLE, next).await {
                    Ok(r) if r.is_err() => return Err(self.failed().await),
                    Ok(_) => {}
                    Err(_) => return Ok(unversioned.map(|u| u.0).unwrap_or_default()),
                },
                None => {
                    if next.await.is_err() {
                        return Err(self.failed().await);
                    }
                }
            }
        }
    }

    /// Why the server cannot be used, waiting a moment for its exit status
    /// when the connection has just ended.
    async fn failed(&self) -> String {
        if matches!(&*self.ready.borrow(), Some(Err(_))) {
            return self.failure().unwrap_or_default();
        }
        let _ = tokio::time::timeout(Duration::from_secs(1), self.running.wait()).await;
        self.failure()
            .unwrap_or_else(|| "the server's connection is gone".to_string())
    }

    /// Opens `file` as it is on disk (or brings the server's copy up to
    /// date), and returns its text: before any request about it.
    pub async fn open(&self, file: &Path) -> Result<String, String> {
        self.ready().await?;
        let text = read_text(file)?;
        let uri = uri_of(file)?;
        let mut docs = self.docs.lock().await;
        self.sync_text(&mut docs, &uri, file, &text).await?;
        Ok(text)
    }

    /// A file's diagnostics as it is on disk, and its text.
    pub async fn diagnostics(
        &self,
        file: &Path,
    ) -> Result<(Vec<lsp_types::Diagnostic>, String), String> {
        self.ready().await?;
        let text = read_text(file)?;
        let uri = uri_of(file)?;
        let mut docs = self.docs.lock().await;
        self.sync_text(&mut docs, &uri, file, &text).await?;
        let items = self.published(&docs, &uri, false).await?;
        Ok((items, text))
    }

    /// A change of `file`: the diagnostics of its text `before` (none for a
    /// new file), then of its text now on disk, and that text.
    pub async fn changed(
        &self,
        file: &Path,
        before: Option<&str>,
    ) -> Result<
        (
            Vec<lsp_types::Diagnostic>,
            Vec<lsp_types::Diagnostic>,
            String,
        ),
        String,
    > {
        self.ready().await?;
        let uri = uri_of(file)?;
        let mut docs = self.docs.lock().await;
        let opened = !docs.contains_key(&uri);
        let old = match before {
            Some(b) => {
                self.sync_text(&mut docs, &uri, file, b).await?;
                self.published(&docs, &uri, opened).await?
            }
            None => Vec::new(),
        };
        let text = read_text(file)?;
        self.sync_text(&mut docs, &uri, file, &text).await?;
        // Some servers check on save (rust-analyzer's cargo check).
        let _ = self
            .socket
            .notify::<DidSaveTextDocument>(DidSaveTextDocumentParams {
                text_document: TextDocumentIdentifier { uri: uri.clone() },
                text: None,
            });
        let new = self.published(&docs, &uri, false).await?;
        Ok((old, new, text))
    }

    /// The text the server has for `file`, if it has it open.
    pub async fn text_of(&self, file: &Path) -> Option<String> {
        let uri = uri_of(file).ok()?;
        self.docs.lock().await.get(&uri).map(|d| d.text.clone())
    }
}

/// The server's name and program, for messages: `python (pyright-langserver)`.
pub fn describe(server: &Server) -> String {
    let program = Path::new(&server.command[0])
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{} ({program})", server.name)
}

/// The router for what a server sends: diagnostics kept, its requests
/// answered with nothing (ag offers no configuration, no edits), other
/// notifications let pass.
fn router(shared: Arc<Mutex<Shared>>, bumps: Arc<watch::Sender<u64>>) -> Router<()> {
    let mut router = Router::new(());
    router
        .notification::<PublishDiagnostics>(move |_, params| {
            if std::env::var_os("AG_LSP_TRACE").is_some() {
                use std::io::Write;
                let _ = writeln!(
                    std::io::stderr(),
                    "publish {} version {:?}: {:?}",
                    params.uri,
                    params.version,
                    params
                        .diagnostics
                        .iter()
                        .map(|d| &d.message)
                        .collect::<Vec<_>>()
                );
            }
            if let Ok(mut s) = shared.lock() {
                s.seq += 1;
                let seq = s.seq;
                s.published.insert(
                    params.uri,
                    Published {
                        version: params.version,
                        seq,
                        items: params.diagnostics,
                    },
                );
            }
            bumps.send_modify(|n| *n += 1);
            ControlFlow::Continue(())
        })
        .unhandled_notification(|_, _| ControlFlow::Continue(()))
        .unhandled_request(|_, req| {
            // `workspace/configuration` asks for one value per item.
            let n = req
                .params
                .get("items")
                .and_then(|i| i.as_array())
                .map(Vec::len);
            let answer = match n {
                Some(n) if req.method == "workspace/configuration" => {
                    serde_json::Value::Array(vec![serde_json::Value::Null; n])
                }
                _ => serde_json::Value::Null,
            };
            async move { Ok(answer) }
        });
    router
}

fn initialize_params(server: &Server, root: &Path) -> Result<InitializeParams, String> {
    let root_uri = uri_of(root)?;
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into());
    #[allow(deprecated)]
    Ok(InitializeParams {
        process_id: Some(std::process::id()),
        root_path: Some(root.to_string_lossy().into_owned()),
        root_uri: Some(root_uri.clone()),
        initialization_options: server.options.clone(),
        capabilities: ClientCapabilities {
            workspace: Some(WorkspaceClientCapabilities {
                workspace_folders: Some(true),
                symbol: Some(WorkspaceSymbolClientCapabilities::default()),
                ..Default::default()
            }),
            text_document: Some(TextDocumentClientCapabilities {
                synchronization: Some(TextDocumentSyncClientCapabilities {
                    did_save: Some(true),
                    ..Default::default()
                }),
                hover: Some(HoverClientCapabilities {
                    content_format: Some(vec![MarkupKind::PlainText, MarkupKind::Markdown]),
                    ..Default::default()
                }),
                references: Some(ReferenceClientCapabilities::default()),
                definition: Some(GotoCapability {
                    link_support: Some(false),
                    ..Default::default()
                }),
                document_symbol: Some(DocumentSymbolClientCapabilities {
                    hierarchical_document_symbol_support: Some(true),
                    ..Default::default()
                }),
                publish_diagnostics: Some(PublishDiagnosticsClientCapabilities {
                    version_support: Some(true),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        },
        workspace_folders: Some(vec![WorkspaceFolder {
            uri: root_uri,
            name,
        }]),
        client_info: Some(ClientInfo {
            name: "ag-lsp".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
        ..Default::default()
    })
}

/// A file's URI.
pub fn uri_of(path: &Path) -> Result<Url, String> {
    Url::from_file_path(path).map_err(|()| format!("`{}` is not an absolute path", path.display()))
}

/// A URI's file.
pub fn path_of(uri: &Url) -> Option<PathBuf> {
    uri.to_file_path().ok()
}

/// A file's text; a file that is not UTF-8 is refused.
pub fn read_text(file: &Path) -> Result<String, String> {
    let bytes =
        std::fs::read(file).map_err(|e| format!("cannot read `{}`: {e}", file.display()))?;
    String::from_utf8(bytes).map_err(|_| format!("`{}` is not UTF-8 text", file.display()))
}
