//! The warm host: ag-lsp started as a `proc::warm` server, one per
//! session. It keeps a [`Client`] per server and project root, started on
//! the first job for it and kept until the session ends, and answers each
//! request within the wait its caller gives. A change's diagnostics that
//! come after that wait are kept and go out with the next reply.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lsp_types::request::{
    DocumentSymbolRequest, GotoDefinition, HoverRequest, References, WorkspaceSymbolRequest,
};
use lsp_types::{
    DocumentSymbolParams, DocumentSymbolResponse, GotoDefinitionParams, GotoDefinitionResponse,
    HoverContents, HoverParams, Location, MarkedString, OneOf, PartialResultParams, Position,
    ReferenceContext, ReferenceParams, TextDocumentIdentifier, TextDocumentPositionParams,
    WorkDoneProgressParams, WorkspaceSymbolParams, WorkspaceSymbolResponse,
};

use super::client::{self, Client, describe, path_of, uri_of};
use super::text;
use super::wire::{Answer, At, Job, Place, Reply, Request, Symbol, Work};
use crate::protocol::{Diagnostic, DiagnosticsStatus, FileDiagnostics};

/// How long a change's diagnostics are waited for in the background, after
/// its caller's wait ran out.
const LATE_LIMIT: Duration = Duration::from_secs(120);

/// How many times a server that ran and ended is started in one session;
/// one that never started is not tried again.
const MAX_STARTS: u32 = 3;

/// When ag-lsp was started as the warm host: serves until the session
/// ends. `None` otherwise.
pub fn serve_main() -> Option<ExitCode> {
    crate::proc::warm::serve_main(|| {
        let mut host = Host::new()?;
        Ok(move |line: &str| host.handle(line))
    })
}

type Key = (String, Vec<String>, PathBuf);

struct Slot {
    client: Option<Arc<Client>>,
    starts: u32,
    last: Option<String>,
    /// It never got through `initialize`: not tried again this session.
    never_started: bool,
}

struct Host {
    rt: tokio::runtime::Runtime,
    slots: HashMap<Key, Slot>,
    late: Arc<Mutex<Late>>,
}

/// Diagnostics that came after their reply, and the newest change of each
/// file, so that a late answer about a file changed since is dropped.
#[derive(Default)]
struct Late {
    entries: Vec<(PathBuf, u64, FileDiagnostics)>,
    newest: HashMap<PathBuf, u64>,
    next: u64,
}

impl Host {
    fn new() -> Result<Host, String> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the async runtime: {e}"))?;
        Ok(Host {
            rt,
            slots: HashMap::new(),
            late: Arc::default(),
        })
    }

    fn handle(&mut self, line: &str) -> String {
        let reply = match serde_json::from_str::<Request>(line) {
            Ok(req) => self.serve(req),
            Err(e) => Reply {
                answers: vec![Answer::Failed(format!(
                    "the lsp helper cannot read the request: {e}"
                ))],
                late: Vec::new(),
            },
        };
        serde_json::to_string(&reply).unwrap_or_default()
    }

    fn serve(&mut self, req: Request) -> Reply {
        let deadline = Instant::now() + Duration::from_millis(req.wait_ms);
        let wait = Duration::from_millis(req.wait_ms);
        let mut pending = Vec::new();
        for job in req.jobs {
            let client = self.client_for(&job);
            let (tx, rx) = tokio::sync::oneshot::channel::<Answer>();
            match client {
                Err(why) => {
                    let _ = tx.send(unavailable(&job, why));
                }
                Ok(c) => {
                    let late = self.late.clone();
                    let stamp = match &job.work {
                        Work::Changed { file, .. } => {
                            let mut l = lock(&late);
                            l.next += 1;
                            let n = l.next;
                            l.newest.insert(file.clone(), n);
                            // An older change's late answer is stale now.
                            l.entries.retain(|(f, _, _)| f != file);
                            Some(n)
                        }
                        _ => None,
                    };
                    let job2 = job.clone();
                    let c2 = c.clone();
                    self.rt.spawn(async move {
                        let limit = if stamp.is_some() { LATE_LIMIT } else { wait };
                        let answer = match tokio::time::timeout(limit, run(&c2, &job2)).await {
                            Ok(a) => a,
                            Err(_) => unavailable(
                                &job2,
                                format!(
                                    "{} did not answer within {} s",
                                    describe(&c2.server),
                                    limit.as_secs()
                                ),
                            ),
                        };
                        if let Err(Answer::Diagnostics(mut d)) = tx.send(answer)
                            && let (Some(n), Work::Changed { file, .. }) = (stamp, &job2.work)
                        {
                            let mut l = lock(&late);
                            if l.newest.get(file) == Some(&n) {
                                d.late = true;
                                l.entries.push((file.clone(), n, d));
                            }
                        }
                    });
                    pending.push((job, Some(c), rx));
                    continue;
                }
            }
            pending.push((job, None, rx));
        }
        let answers = self.rt.block_on(async {
            let mut out = Vec::new();
            for (job, client, rx) in pending {
                let until = tokio::time::Instant::from_std(deadline);
                match tokio::time::timeout_at(until, rx).await {
                    Ok(Ok(a)) => out.push(a),
                    Ok(Err(_)) => out.push(Answer::Failed("the job was dropped".into())),
                    Err(_) => out.push(timed_out(&job, client.as_deref(), wait)),
                }
            }
            out
        });
        let late = {
            let mut l = lock(&self.late);
            std::mem::take(&mut l.entries)
                .into_iter()
                .map(|(_, _, d)| d)
                .collect()
        };
        Reply { answers, late }
    }

    /// The client for a job's server and root: the running one, or a new
    /// one when none runs (or the last one ended, a few times at most).
    fn client_for(&mut self, job: &Job) -> Result<Arc<Client>, String> {
        let key = (
            job.server.name.clone(),
            job.server.command.clone(),
            job.root.clone(),
        );
        let slot = self.slots.entry(key).or_insert(Slot {
            client: None,
            starts: 0,
            last: None,
            never_started: false,
        });
        if let Some(c) = &slot.client {
            match c.failure() {
                None => return Ok(c.clone()),
                Some(why) => {
                    // A server that never got through `initialize` (rustup's
                    // proxy for a component not installed, a wrong command)
                    // fails the same way again: trying it on every edit cost
                    // each a start. One that ran and then ended may be
                    // started again.
                    slot.never_started |= !c.is_ready();
                    slot.last = Some(why);
                    slot.client = None;
                }
            }
        }
        if slot.never_started {
            return Err(format!(
                "{} could not be started this session, and is not tried again: {}",
                describe(&job.server),
                slot.last.as_deref().unwrap_or("no reason known")
            ));
        }
        if slot.starts >= MAX_STARTS {
            return Err(format!(
                "{} failed {} times this session, and is not started again: {}",
                describe(&job.server),
                slot.starts,
                slot.last.as_deref().unwrap_or("no reason known")
            ));
        }
        slot.starts += 1;
        let _inside = self.rt.enter();
        let c = Client::start(&job.server, &job.root, &job.cache).inspect_err(|e| {
            // Not started at all: the same start would fail the same way.
            slot.never_started = true;
            slot.last = Some(e.clone());
        })?;
        slot.client = Some(c.clone());
        Ok(c)
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let clients: Vec<Arc<Client>> = self
            .slots
            .values_mut()
            .filter_map(|s| s.client.take())
            .collect();
        self.rt.block_on(async {
            let all = futures::future::join_all(clients.iter().map(|c| c.shutdown()));
            let _ = tokio::time::timeout(Duration::from_secs(1), all).await;
        });
        // Dropping them ends their process groups.
        drop(clients);
    }
}

fn lock(late: &Mutex<Late>) -> std::sync::MutexGuard<'_, Late> {
    late.lock().unwrap_or_else(|p| p.into_inner())
}

/// A job's answer when its server cannot be used.
fn unavailable(job: &Job, why: String) -> Answer {
    match &job.work {
        Work::Changed { shown, .. } | Work::Diagnostics { shown, .. } => {
            Answer::Diagnostics(FileDiagnostics {
                path: shown.clone(),
                server: job.server.name.clone(),
                status: DiagnosticsStatus::Unavailable,
                new: Vec::new(),
                existing: 0,
                late: false,
                reason: Some(format!("{}: {why}", describe(&job.server))),
            })
        }
        _ => Answer::Failed(format!("{}: {why}", describe(&job.server))),
    }
}

/// A job's answer when the caller's wait ran out.
fn timed_out(job: &Job, client: Option<&Client>, wait: Duration) -> Answer {
    let starting = client.is_some_and(|c| !c.is_ready());
    let secs = wait.as_secs_f64();
    let what = describe(&job.server);
    match &job.work {
        Work::Changed { shown, .. } => Answer::Diagnostics(FileDiagnostics {
            path: shown.clone(),
            server: job.server.name.clone(),
            status: DiagnosticsStatus::Pending,
            new: Vec::new(),
            existing: 0,
            late: false,
            reason: Some(if starting {
                format!("{what} is still starting (waited {secs} s)")
            } else {
                format!("{what} had not answered within {secs} s")
            }),
        }),
        Work::Diagnostics { shown, .. } => Answer::Diagnostics(FileDiagnostics {
            path: shown.clone(),
            server: job.server.name.clone(),
            status: DiagnosticsStatus::Pending,
            new: Vec::new(),
            existing: 0,
            late: false,
            reason: Some(if starting {
                format!("{what} is still starting (waited {secs} s); call again")
            } else {
                format!("{what} had not answered within {secs} s; call again")
            }),
        }),
        _ if starting => Answer::Failed(format!(
            "{what} is still starting (waited {secs} s); call again in a moment"
        )),
        _ => Answer::Failed(format!("{what} did not answer within {secs} s")),
    }
}

/// Does one job.
async fn run(c: &Client, job: &Job) -> Answer {
    let done = match &job.work {
        Work::Changed {
            file,
            shown,
            before,
        } => c
            .changed(file, before.as_deref())
            .await
            .map(|(old, new, now)| Answer::Diagnostics(compare(job, shown, &old, &new, &now))),
        Work::Diagnostics { file, shown } => c.diagnostics(file).await.map(|(items, now)| {
            let new = items
                .iter()
                .filter(|d| is_problem(d))
                .map(|d| diagnostic(d, &now))
                .collect();
            Answer::Diagnostics(FileDiagnostics {
                path: shown.clone(),
                server: job.server.name.clone(),
                status: DiagnosticsStatus::Checked,
                new,
                existing: 0,
                late: false,
                reason: None,
            })
        }),
        Work::Definition { file, at } => places(c, file, at, Kind::Definition).await,
        Work::References { file, at } => places(c, file, at, Kind::References).await,
        Work::Hover { file, at } => hover(c, file, at).await,
        Work::DocumentSymbols { file } => document_symbols(c, file).await.map(Answer::Symbols),
        Work::WorkspaceSymbols { query } => workspace_symbols(c, query).await.map(Answer::Symbols),
    };
    done.unwrap_or_else(|why| unavailable(job, why))
}

fn is_error(d: &lsp_types::Diagnostic) -> bool {
    d.severity
        .is_none_or(|s| s == lsp_types::DiagnosticSeverity::ERROR)
}

fn is_problem(d: &lsp_types::Diagnostic) -> bool {
    is_error(d) || d.severity == Some(lsp_types::DiagnosticSeverity::WARNING)
}

/// The errors of the text now that were not there before (matched by
/// message, as lines move with the change), and a count of the others.
fn compare(
    job: &Job,
    shown: &str,
    old: &[lsp_types::Diagnostic],
    new: &[lsp_types::Diagnostic],
    now: &str,
) -> FileDiagnostics {
    let mut before: Vec<&str> = old
        .iter()
        .filter(|d| is_error(d))
        .map(|d| d.message.as_str())
        .collect();
    let mut brought = Vec::new();
    let mut existing = 0;
    for d in new.iter().filter(|d| is_error(d)) {
        match before.iter().position(|m| *m == d.message) {
            Some(i) => {
                before.swap_remove(i);
                existing += 1;
            }
            None => brought.push(diagnostic(d, now)),
        }
    }
    brought.sort_by_key(|d| (d.line, d.column));
    FileDiagnostics {
        path: shown.to_string(),
        server: job.server.name.clone(),
        status: DiagnosticsStatus::Checked,
        new: brought,
        existing,
        late: false,
        reason: None,
    }
}

fn diagnostic(d: &lsp_types::Diagnostic, text_now: &str) -> Diagnostic {
    let line = d.range.start.line;
    let column = text::char_of(
        text::line_of(text_now, line as usize),
        d.range.start.character,
    );
    Diagnostic {
        line: line + 1,
        column: column + 1,
        message: d.message.clone(),
        severity: if is_error(d) { "error" } else { "warning" }.to_string(),
        code: d.code.as_ref().map(|c| match c {
            lsp_types::NumberOrString::Number(n) => n.to_string(),
            lsp_types::NumberOrString::String(s) => s.clone(),
        }),
    }
}

enum Kind {
    Definition,
    References,
}

/// Where `at` is in `file`, as a position for the server and as a place
/// to show.
async fn locate(c: &Client, file: &Path, at: &At) -> Result<(Position, Place), String> {
    let content = c.open(file).await?;
    let (line, ch) = match at {
        At::Position { line, column } => {
            let l = line.saturating_sub(1);
            if l as usize >= content.split('\n').count() {
                return Err(format!(
                    "`{}` has no line {line}: it has {}",
                    file.display(),
                    content.lines().count()
                ));
            }
            (l, column.saturating_sub(1))
        }
        At::Name { name, line } => {
            let declared = match line {
                Some(_) => None,
                None => declared_at(c, file, name).await,
            };
            match declared.or_else(|| text::find_name(&content, name, *line)) {
                Some(p) => p,
                None => {
                    return Err(format!(
                        "`{}` does not contain `{}`{}",
                        file.display(),
                        text::simple_name(name),
                        line.map(|l| format!(" (looked on and around line {l})"))
                            .unwrap_or_default()
                    ));
                }
            }
        }
    };
    let line_text = text::line_of(&content, line as usize);
    let pos = Position::new(line, text::utf16_of(line_text, ch as usize));
    Ok((
        pos,
        Place {
            path: file.to_path_buf(),
            line: line + 1,
            column: ch + 1,
            text: line_text.trim().to_string(),
        },
    ))
}

/// Where the file's outline declares `name` (`speak`, or `Dog.speak` for
/// the one inside `Dog`): line and character, from 0.
async fn declared_at(c: &Client, file: &Path, name: &str) -> Option<(u32, u32)> {
    let symbols = document_symbols(c, file).await.ok()?;
    let word = text::simple_name(name);
    let outer = name
        .strip_suffix(word)
        .map(|o| o.trim_end_matches(['.', ':']))
        .filter(|o| !o.is_empty())
        .map(text::simple_name);
    symbols
        .iter()
        .find(|s| s.name == word && outer.is_none_or(|o| s.container.as_deref() == Some(o)))
        .map(|s| (s.place.line - 1, s.place.column - 1))
}

async fn places(c: &Client, file: &Path, at: &At, kind: Kind) -> Result<Answer, String> {
    let (pos, at_place) = locate(c, file, at).await?;
    let doc = TextDocumentPositionParams {
        text_document: TextDocumentIdentifier { uri: uri_of(file)? },
        position: pos,
    };
    let found: Vec<Location> = match kind {
        Kind::Definition => {
            let r = c
                .socket()
                .request::<GotoDefinition>(GotoDefinitionParams {
                    text_document_position_params: doc,
                    work_done_progress_params: WorkDoneProgressParams::default(),
                    partial_result_params: PartialResultParams::default(),
                })
                .await
                .map_err(|e| {
                    c.failure()
                        .unwrap_or_else(|| format!("definition failed: {e}"))
                })?;
            match r {
                None => Vec::new(),
                Some(GotoDefinitionResponse::Scalar(l)) => vec![l],
                Some(GotoDefinitionResponse::Array(v)) => v,
                Some(GotoDefinitionResponse::Link(v)) => v
                    .into_iter()
                    .map(|l| Location::new(l.target_uri, l.target_selection_range))
                    .collect(),
            }
        }
        Kind::References => c
            .socket()
            .request::<References>(ReferenceParams {
                text_document_position: doc,
                work_done_progress_params: WorkDoneProgressParams::default(),
                partial_result_params: PartialResultParams::default(),
                context: ReferenceContext {
                    include_declaration: true,
                },
            })
            .await
            .map_err(|e| {
                c.failure()
                    .unwrap_or_else(|| format!("references failed: {e}"))
            })?
            .unwrap_or_default(),
    };
    let mut texts = Texts::new(c).await;
    let mut out = Vec::new();
    for l in found {
        if let Some(p) = texts.place(&l.uri, l.range.start).await {
            out.push(p);
        }
    }
    out.sort_by(|a, b| (&a.path, a.line, a.column).cmp(&(&b.path, b.line, b.column)));
    out.dedup();
    Ok(Answer::Places {
        at: at_place,
        places: out,
    })
}

async fn hover(c: &Client, file: &Path, at: &At) -> Result<Answer, String> {
    let (pos, at_place) = locate(c, file, at).await?;
    let r = c
        .socket()
        .request::<HoverRequest>(HoverParams {
            text_document_position_params: TextDocumentPositionParams {
                text_document: TextDocumentIdentifier { uri: uri_of(file)? },
                position: pos,
            },
            work_done_progress_params: WorkDoneProgressParams::default(),
        })
        .await
        .map_err(|e| c.failure().unwrap_or_else(|| format!("hover failed: {e}")))?;
    let marked = |m: MarkedString| match m {
        MarkedString::String(s) => s,
        MarkedString::LanguageString(l) => format!("```{}\n{}\n```", l.language, l.value),
    };
    let text = r.map(|h| match h.contents {
        HoverContents::Scalar(m) => marked(m),
        HoverContents::Array(v) => v.into_iter().map(marked).collect::<Vec<_>>().join("\n\n"),
        HoverContents::Markup(m) => m.value,
    });
    Ok(Answer::Hover {
        at: at_place,
        text: text.filter(|t| !t.trim().is_empty()),
    })
}

async fn document_symbols(c: &Client, file: &Path) -> Result<Vec<Symbol>, String> {
    c.open(file).await?;
    let uri = uri_of(file)?;
    let r = c
        .socket()
        .request::<DocumentSymbolRequest>(DocumentSymbolParams {
            text_document: TextDocumentIdentifier { uri: uri.clone() },
            work_done_progress_params: WorkDoneProgressParams::default(),
            partial_result_params: PartialResultParams::default(),
        })
        .await
        .map_err(|e| {
            c.failure()
                .unwrap_or_else(|| format!("symbols failed: {e}"))
        })?;
    let mut texts = Texts::new(c).await;
    let mut out = Vec::new();
    match r {
        None => {}
        Some(DocumentSymbolResponse::Flat(v)) => {
            for s in v {
                if let Some(place) = texts.place(&s.location.uri, s.location.range.start).await {
                    out.push(Symbol {
                        name: s.name,
                        kind: kind_name(s.kind),
                        container: s.container_name,
                        depth: 0,
                        place,
                    });
                }
            }
        }
        Some(DocumentSymbolResponse::Nested(v)) => {
            let mut stack: Vec<(lsp_types::DocumentSymbol, u32, Option<String>)> =
                v.into_iter().rev().map(|s| (s, 0, None)).collect();
            while let Some((s, depth, container)) = stack.pop() {
                let Some(place) = texts.place(&uri, s.selection_range.start).await else {
                    continue;
                };
                for child in s.children.clone().unwrap_or_default().into_iter().rev() {
                    stack.push((child, depth + 1, Some(s.name.clone())));
                }
                out.push(Symbol {
                    name: s.name,
                    kind: kind_name(s.kind),
                    container,
                    depth,
                    place,
                });
            }
        }
    }
    Ok(out)
}

async fn workspace_symbols(c: &Client, query: &str) -> Result<Vec<Symbol>, String> {
    c.ready().await?;
    let r = c
        .socket()
        .request::<WorkspaceSymbolRequest>(WorkspaceSymbolParams {
            query: query.to_string(),
            work_done_progress_params: WorkDoneProgressParams::default(),
            partial_result_params: PartialResultParams::default(),
        })
        .await
        .map_err(|e| {
            c.failure()
                .unwrap_or_else(|| format!("symbols failed: {e}"))
        })?;
    let mut texts = Texts::new(c).await;
    let mut out = Vec::new();
    let items: Vec<(
        String,
        lsp_types::SymbolKind,
        Option<String>,
        Option<Location>,
    )> = match r {
        None => Vec::new(),
        Some(WorkspaceSymbolResponse::Flat(v)) => v
            .into_iter()
            .map(|s| (s.name, s.kind, s.container_name, Some(s.location)))
            .collect(),
        Some(WorkspaceSymbolResponse::Nested(v)) => v
            .into_iter()
            .map(|s| {
                let loc = match s.location {
                    OneOf::Left(l) => Some(l),
                    OneOf::Right(_) => None,
                };
                (s.name, s.kind, s.container_name, loc)
            })
            .collect(),
    };
    for (name, kind, container, loc) in items {
        let Some(loc) = loc else { continue };
        if let Some(place) = texts.place(&loc.uri, loc.range.start).await {
            out.push(Symbol {
                name,
                kind: kind_name(kind),
                container,
                depth: 0,
                place,
            });
        }
    }
    Ok(out)
}

/// `TypeParameter` as `type parameter`.
fn kind_name(kind: lsp_types::SymbolKind) -> String {
    let pascal = format!("{kind:?}");
    let mut out = String::new();
    for (i, ch) in pascal.chars().enumerate() {
        if ch.is_uppercase() && i > 0 {
            out.push(' ');
        }
        out.extend(ch.to_lowercase());
    }
    out
}

/// The texts of the files an answer names, read once each: the server's
/// copy when it has the file open, else the file on disk.
struct Texts<'a> {
    client: &'a Client,
    read: HashMap<PathBuf, Option<String>>,
}

impl<'a> Texts<'a> {
    async fn new(client: &'a Client) -> Texts<'a> {
        Texts {
            client,
            read: HashMap::new(),
        }
    }

    async fn place(&mut self, uri: &lsp_types::Url, pos: Position) -> Option<Place> {
        let path = path_of(uri)?;
        if !self.read.contains_key(&path) {
            let t = match self.client.text_of(&path).await {
                Some(t) => Some(t),
                None => client::read_text(&path).ok(),
            };
            self.read.insert(path.clone(), t);
        }
        let (column, text) = match self.read.get(&path).and_then(Option::as_ref) {
            Some(t) => {
                let line = text::line_of(t, pos.line as usize);
                (text::char_of(line, pos.character), line.trim().to_string())
            }
            None => (pos.character, String::new()),
        };
        Some(Place {
            path,
            line: pos.line + 1,
            column: column + 1,
            text,
        })
    }
}
