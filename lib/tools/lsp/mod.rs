//! `lsp`: the project's language servers, asked for what an editor shows:
//! a file's errors, where a symbol is defined and used, what it is, and a
//! file's or the workspace's symbols. The servers ([`servers`]) are kept
//! warm for the session by ag-lsp's own warm host ([`host`], over
//! `proc::warm`), which ag-write, ag-edit and ag-patch also reach for the
//! errors a change brought in ([`after_edit`]).

pub mod after_edit;
pub mod client;
pub mod host;
pub mod servers;
pub mod text;
pub mod wire;

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::protocol::{ChangeDiagnostics, DiagnosticsStatus, FileDiagnostics};
use crate::tool_protocol::{Context, Note, Tool, ToolError, ToolOutput};
use servers::{Server, Table};
use wire::{Answer, At, Job, Place, Reply, Request, Work};

/// How long a question (definition, references, ...) may take, a server's
/// start included.
pub const QUESTION_WAIT: Duration = Duration::from_secs(60);

/// The most places or symbols a result lists.
const MAX_LISTED: usize = 200;

/// The warm helper's name.
pub const HELPER: &str = "lsp";

/// What a call asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum LspAction {
    /// The errors and warnings of the files.
    Diagnostics,
    /// Where the symbol is defined.
    Definition,
    /// Where the symbol is used, its definition included.
    References,
    /// The symbol's type and documentation.
    Hover,
    /// The file's symbols as an outline, or with `query` the workspace's
    /// symbols whose name matches.
    Symbols,
}

/// Arguments of `lsp`.
#[derive(Debug, Clone, Args, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LspArgs {
    /// diagnostics: the errors and warnings of FILE...; definition,
    /// references, hover: of the symbol named by --symbol (on or near
    /// --line) or at --line and --column; symbols: FILE's outline, or with
    /// --query the workspace's symbols.
    #[arg(value_enum, value_name = "ACTION")]
    #[schemars(description = "")]
    pub action: LspAction,
    /// The files (relative to the working directory).
    #[arg(value_name = "FILE")]
    #[serde(default)]
    #[schemars(description = "Files to check.")]
    pub paths: Vec<String>,
    /// The file (instead of a FILE argument).
    #[arg(long = "file", value_name = "FILE")]
    #[serde(default)]
    #[schemars(description = "The file.")]
    pub file_path: Option<String>,
    /// The symbol's name as the file writes it (`speak`, or `Dog.speak` for
    /// the one declared in `Dog`).
    #[arg(short, long)]
    #[serde(default)]
    #[schemars(description = "The symbol's name as written in the file, e.g. speak or Dog.speak.")]
    pub symbol: Option<String>,
    /// The line (from 1) the symbol is on, or near: which of several
    /// places of the same name is meant.
    #[arg(short, long)]
    #[serde(default)]
    #[schemars(range(min = 1))]
    #[schemars(
        description = "The line the symbol is on (from 1); needed when the name occurs more than once."
    )]
    pub line: Option<u32>,
    /// The column (from 1, in characters), with --line: the position
    /// instead of a name.
    #[arg(short, long)]
    #[serde(default)]
    #[schemars(range(min = 1))]
    #[schemars(description = "The column on `line` (from 1), instead of `symbol`.")]
    pub column: Option<u32>,
    /// For symbols: look through the workspace for symbols whose name
    /// matches this, instead of outlining a file.
    #[arg(short, long)]
    #[serde(default)]
    #[schemars(description = "A symbol name, or part of one, to look for in the whole project.")]
    pub query: Option<String>,
}

/// The `lsp` tool.
pub struct LspTool;

impl Tool for LspTool {
    type Args = LspArgs;
    const NAME: &'static str = "lsp";
    const BIN: &'static str = "ag-lsp";
    const ABOUT: &'static str =
        "Ask the project's language servers: diagnostics, definition, references, hover, symbols";
    const LABEL: &'static str = "Language Server";
    const DESCRIPTION: &'static str = "Ask the project's language server (pyright or basedpyright for \
Python, typescript-language-server for TypeScript and JavaScript, rust-analyzer, gopls, clangd, or one \
named in $AG_HOME/lsp.toml), kept running for the session. action=diagnostics: the errors and \
warnings of the files in paths. action=definition, references or hover: of the symbol named by symbol \
(as the file writes it; Dog.speak for the one declared in Dog), on or near line when given, else where \
the file declares it, or at line and column; references lists every use the server finds, the \
declaration included, so a method of the same name on another class is not among them. \
action=symbols: the outline of file_path, or with query the project's symbols whose name matches.";
    const MODEL_DESCRIPTION: &'static str = "Ask the language server: diagnostics of files; definition, references or hover of a symbol (by name, on or near a line); a file's symbols, or the project's symbols matching a query.";

    fn run(ctx: &Context, args: LspArgs) -> Result<ToolOutput, ToolError> {
        run(ctx, &args)
    }
}

fn run(ctx: &Context, args: &LspArgs) -> Result<ToolOutput, ToolError> {
    let table = Table::load().map_err(|m| ToolError::new("lsp.config", m))?;
    let top = workspace_top(ctx);
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    for p in args.file_path.iter().chain(&args.paths) {
        let real = ctx.resolve(p)?;
        if !real.is_file() {
            return Err(ToolError::new(
                "lsp.not_a_file",
                format!("`{p}` is not a file: give a source file of the project"),
            ));
        }
        files.push((real, ctx.show(&ctx.resolve(p)?)));
    }
    let server_of = |file: &Path| -> Result<Server, ToolError> {
        table
            .for_file(file)
            .cloned()
            .ok_or_else(|| ToolError::new("lsp.no_server", table.why_none(file)))
    };
    let job = |server: Server, file: &Path, work: Work| Job {
        root: server.root_for(file, &top),
        cache: cache_dir(&server),
        server,
        work,
    };
    let mut jobs = Vec::new();
    let mut asked = String::new();
    match args.action {
        LspAction::Diagnostics => {
            if files.is_empty() {
                return Err(missing(args, "paths", "the files to check"));
            }
            for (real, shown) in &files {
                let server = server_of(real)?;
                jobs.push(job(
                    server,
                    real,
                    Work::Diagnostics {
                        file: real.clone(),
                        shown: shown.clone(),
                    },
                ));
            }
        }
        LspAction::Definition | LspAction::References | LspAction::Hover => {
            let (real, shown) = one_file(args, &files)?;
            let at = match (&args.symbol, args.line, args.column) {
                (_, Some(line), Some(column)) => At::Position { line, column },
                (Some(name), line, _) if !name.trim().is_empty() => At::Name {
                    name: name.trim().to_string(),
                    line,
                },
                _ => {
                    return Err(missing(
                        args,
                        "symbol",
                        "the symbol's name as the file writes it",
                    ));
                }
            };
            asked = match &at {
                At::Name { name, .. } => format!("`{name}`"),
                At::Position { line, column } => format!("{shown}:{line}:{column}"),
            };
            let server = server_of(&real)?;
            let work = match args.action {
                LspAction::Definition => Work::Definition {
                    file: real.clone(),
                    at,
                },
                LspAction::References => Work::References {
                    file: real.clone(),
                    at,
                },
                _ => Work::Hover {
                    file: real.clone(),
                    at,
                },
            };
            jobs.push(job(server, &real, work));
        }
        LspAction::Symbols => match (&args.query, files.as_slice()) {
            (Some(q), []) if !q.trim().is_empty() => {
                let servers = servers_in(&table, &top);
                if servers.is_empty() {
                    return Err(ToolError::new(
                        "lsp.no_server",
                        format!(
                            "no language server on the PATH serves the files of `{}`; see {}",
                            ctx.show(&top),
                            servers::config_path().display()
                        ),
                    ));
                }
                for server in servers {
                    jobs.push(Job {
                        root: top.clone(),
                        cache: cache_dir(&server),
                        server,
                        work: Work::WorkspaceSymbols {
                            query: q.trim().to_string(),
                        },
                    });
                }
            }
            (None, [_]) => {
                let (real, _) = one_file(args, &files)?;
                let server = server_of(&real)?;
                jobs.push(job(
                    server,
                    &real,
                    Work::DocumentSymbols { file: real.clone() },
                ));
            }
            (Some(_), [_, ..]) => {
                return Err(ToolError::new(
                    "lsp.symbols_both",
                    format!(
                        "symbols takes a file (its outline) or a query (the project's symbols), not both: {} or {}",
                        json!({"action": "symbols", "file_path": files[0].1}),
                        json!({"action": "symbols", "query": args.query})
                    ),
                ));
            }
            _ => {
                return Err(missing(
                    args,
                    "file_path",
                    "a file to outline, or `query` to look through the project",
                ));
            }
        },
    }
    let reply = ask(
        &Request {
            wait_ms: QUESTION_WAIT.as_millis() as u64,
            jobs,
        },
        QUESTION_WAIT,
    )
    .map_err(|m| ToolError::new("lsp.unavailable", m))?;
    render(ctx, args, &asked, reply)
}

/// The one file a question is about.
fn one_file(args: &LspArgs, files: &[(PathBuf, String)]) -> Result<(PathBuf, String), ToolError> {
    match files {
        [one] => Ok(one.clone()),
        [] => Err(missing(args, "file_path", "the file the symbol is in")),
        _ => Err(ToolError::new(
            "lsp.one_file",
            format!(
                "`{}` is about one file; {} were given: call it once per file",
                action_name(args.action),
                files.len()
            ),
        )),
    }
}

fn action_name(a: LspAction) -> &'static str {
    match a {
        LspAction::Diagnostics => "diagnostics",
        LspAction::Definition => "definition",
        LspAction::References => "references",
        LspAction::Hover => "hover",
        LspAction::Symbols => "symbols",
    }
}

/// The caller's own call, with what is missing named.
fn missing(args: &LspArgs, field: &str, what: &str) -> ToolError {
    let mut call = json!({"action": action_name(args.action)});
    if let Some(f) = &args.file_path {
        call["file_path"] = json!(f);
    }
    if !args.paths.is_empty() {
        call["paths"] = json!(args.paths);
    }
    if let Some(s) = &args.symbol {
        call["symbol"] = json!(s);
    }
    if let Some(l) = args.line {
        call["line"] = json!(l);
    }
    ToolError::new(
        "lsp.missing_field",
        format!("`{field}` is missing: give {what}. The call was {call}"),
    )
}

/// The directory a project's root is looked for under.
pub fn workspace_top(ctx: &Context) -> PathBuf {
    ctx.root.clone().unwrap_or_else(|| ctx.cwd.clone())
}

/// Where a server may write: the session's directory, else `$AG_HOME`'s
/// cache ([`shared_cache`]).
pub fn cache_dir(server: &Server) -> PathBuf {
    let base = match std::env::var_os("AG_SESSION_DIR").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d).join("lsp-cache"),
        None => shared_cache(),
    };
    base.join(&server.name)
}

/// The servers' cache of a run without a session, under `$AG_HOME`: a
/// sandbox of the tool calls (which start the servers) must let them write
/// it.
pub fn shared_cache() -> PathBuf {
    crate::session::ag_home().join("cache/lsp")
}

/// The servers whose files the workspace has (the first few thousand
/// entries of a walk that obeys `.gitignore`).
fn servers_in(table: &Table, top: &Path) -> Vec<Server> {
    let mut seen: Vec<Server> = Vec::new();
    let walk = ignore::WalkBuilder::new(top).max_depth(Some(6)).build();
    for entry in walk.flatten().take(5000) {
        if let Some(s) = table.for_file(entry.path())
            && !seen.iter().any(|x| x.name == s.name)
        {
            seen.push(s.clone());
            if seen.len() == table.servers.len() {
                break;
            }
        }
    }
    seen
}

/// The path of ag-lsp: beside the running binary (all of ag's binaries
/// are installed together).
pub fn helper_exe() -> Result<PathBuf, String> {
    let me = std::env::current_exe().map_err(|e| format!("cannot find the running binary: {e}"))?;
    let exe = me.with_file_name("ag-lsp");
    if exe.is_file() {
        Ok(exe)
    } else {
        Err(format!(
            "ag-lsp is not installed beside {} (install all of ag's binaries together)",
            me.display()
        ))
    }
}

/// Sends a request to the session's warm host (starting it when needed).
pub fn ask(req: &Request, wait: Duration) -> Result<Reply, String> {
    let warm = crate::proc::warm::Warm::new(HELPER, helper_exe()?)
        .map_err(|e| format!("cannot reach the lsp helper: {e}"))?;
    let line = serde_json::to_string(req).map_err(|e| e.to_string())?;
    // The host answers when the wait is over; a margin for the way back.
    let reply = warm
        .request(&line, wait + Duration::from_secs(5))
        .map_err(|e| format!("the lsp helper: {e}"))?;
    serde_json::from_str(&reply).map_err(|e| format!("the lsp helper's reply is unreadable: {e}"))
}

fn render(
    ctx: &Context,
    args: &LspArgs,
    asked: &str,
    reply: Reply,
) -> Result<ToolOutput, ToolError> {
    let mut notes: Vec<Note> = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    let mut details = json!({"action": action_name(args.action)});
    let show = |p: &Path| ctx.show(p);
    let place_line = |p: &Place| format!("{}:{}:{}: {}", show(&p.path), p.line, p.column, p.text);
    let mut failures = Vec::new();
    let mut diagnostics = ChangeDiagnostics::default();
    let mut symbols_json = Vec::new();
    for answer in reply.answers {
        match answer {
            Answer::Failed(why) => failures.push(why),
            Answer::Diagnostics(d) => {
                match d.status {
                    DiagnosticsStatus::Checked if d.new.is_empty() => {
                        notes.push(Note::plain(format!("No errors or warnings in {}.", d.path)));
                    }
                    DiagnosticsStatus::Checked => {
                        for x in &d.new {
                            lines.push(after_edit::diagnostic_line(&d.path, x, true));
                        }
                    }
                    _ => failures.push(format!(
                        "{}: {}",
                        d.path,
                        d.reason.clone().unwrap_or_default()
                    )),
                }
                diagnostics.files.push(d);
            }
            Answer::Places { at, places } => {
                notes.push(Note::plain(taken_at(asked, &at, &show)));
                if places.is_empty() {
                    notes.push(Note::plain(format!(
                        "The server found no {} there.",
                        if args.action == LspAction::Definition {
                            "definition"
                        } else {
                            "references"
                        }
                    )));
                }
                let total = places.len();
                for p in places.iter().take(MAX_LISTED) {
                    lines.push(place_line(p));
                }
                if total > MAX_LISTED {
                    notes.push(Note::aside(format!(
                        "{total} places in all; the first {MAX_LISTED} are shown."
                    )));
                }
                details["at"] = place_json(&at, &show);
                details["locations"] = json!(
                    places
                        .iter()
                        .map(|p| place_json(p, &show))
                        .collect::<Vec<_>>()
                );
                details["total"] = json!(total);
            }
            Answer::Hover { at, text } => {
                notes.push(Note::plain(taken_at(asked, &at, &show)));
                match &text {
                    Some(t) => lines.push(t.trim_end().to_string()),
                    None => notes.push(Note::plain("The server has nothing to say there.")),
                }
                details["at"] = place_json(&at, &show);
                details["hover"] = json!(text);
            }
            Answer::Symbols(list) => {
                for s in list.iter().take(MAX_LISTED.saturating_sub(lines.len())) {
                    lines.push(match &args.query {
                        Some(_) => format!(
                            "{}:{}: {} {}{}",
                            show(&s.place.path),
                            s.place.line,
                            s.kind,
                            s.name,
                            s.container
                                .as_deref()
                                .filter(|c| !c.is_empty())
                                .map(|c| format!(" (in {c})"))
                                .unwrap_or_default()
                        ),
                        None => format!(
                            "{:>5}: {}{} {}",
                            s.place.line,
                            "  ".repeat(s.depth as usize),
                            s.kind,
                            s.name
                        ),
                    });
                }
                symbols_json.extend(list.iter().map(|s| {
                    json!({"name": s.name, "kind": s.kind, "container": s.container,
                        "path": show(&s.place.path), "line": s.place.line, "column": s.place.column})
                }));
            }
        }
    }
    if args.action == LspAction::Symbols {
        if symbols_json.len() > MAX_LISTED {
            notes.push(Note::aside(format!(
                "{} symbols in all; the first {MAX_LISTED} are shown.",
                symbols_json.len()
            )));
        }
        if symbols_json.is_empty() && failures.is_empty() {
            notes.push(Note::plain("No symbols found."));
        }
        details["total"] = json!(symbols_json.len());
        symbols_json.truncate(MAX_LISTED);
        details["symbols"] = json!(symbols_json);
    }
    if args.action == LspAction::Diagnostics {
        details["diagnostics"] = json!(diagnostics);
    }
    let late = after_edit::late_notes(&reply.late);
    if !reply.late.is_empty() {
        details["late_diagnostics"] = json!(ChangeDiagnostics {
            files: reply.late.clone()
        });
    }
    if !failures.is_empty() && lines.is_empty() && args.action != LspAction::Diagnostics {
        return Err(ToolError::new("lsp.unavailable", failures.join("\n")).with_details(details));
    }
    notes.extend(failures.into_iter().map(Note::warning));
    notes.extend(late);
    let mut output = lines.join("\n");
    if !output.is_empty() {
        output.push('\n');
    }
    Ok(ToolOutput::new(output, details).with_notes(notes))
}

/// Which place the question was taken to be about: `` `speak` is at
/// main.py:7:14: ... `` (for a position: the line's text).
fn taken_at(asked: &str, at: &Place, show: &dyn Fn(&Path) -> String) -> String {
    let place = format!("{}:{}:{}", show(&at.path), at.line, at.column);
    if asked == place {
        format!("At {place}: {}", at.text)
    } else {
        format!("{asked} is at {place}: {}", at.text)
    }
}

fn place_json(p: &Place, show: &dyn Fn(&Path) -> String) -> serde_json::Value {
    json!({"path": show(&p.path), "line": p.line, "column": p.column, "text": p.text})
}

/// A file's diagnostics entry that says why there is none.
pub fn unavailable(shown: &str, server: &str, why: String) -> FileDiagnostics {
    FileDiagnostics {
        path: shown.to_string(),
        server: server.to_string(),
        status: DiagnosticsStatus::Unavailable,
        new: Vec::new(),
        existing: 0,
        late: false,
        reason: Some(why),
    }
}
