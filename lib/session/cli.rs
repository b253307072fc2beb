//! `ag-session`: the command line over the session store.

use std::io::{self, BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};
use serde_json::json;

use super::checkpoints;
use super::reader::Reader;
use super::rewind::{Halves, rewind};
use super::store::{SessionFile, Store, short_ids};
use super::summary::Summary;
use super::{ExportFormat, Writer, ending, export_session, messages, now, stats};
use crate::cli::{ExitStatus, Stdout, error_line, note, warn};
use crate::protocol::{AgentEvent, AgentEventRecord, SessionHeader};

const BIN: &str = "ag-session";

/// List, show, resume, fork, rewind, export and account ag sessions.
///
/// Sessions live in `$AG_HOME/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl`
/// (`AG_HOME` defaults to `~/.ag`): a header line, then the events ag-loop
/// printed. IDs may be given by a unique prefix (as git does with hashes;
/// `list` shows the shortest one that works) or a unique suffix, or as the
/// path of a session file. `show` and `export` also say how each run ended
/// (finished, turn_limit, ...) and the session's tokens and cost.
#[derive(Debug, Parser)]
#[command(
    name = "ag-session",
    version,
    after_help = "Exit status: 0 success, 1 the operation failed, 2 usage or input error."
)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Sessions of the working directory, newest first: id (the shortest unique prefix), start, first prompt, messages, tokens, cost.
    List {
        /// Sessions of every directory.
        #[arg(long)]
        all: bool,
        /// One JSON object per session instead of a table.
        #[arg(long)]
        json: bool,
        /// The working directory whose sessions to list (default: the current one).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
    },
    /// A readable transcript of a session, with how each run ended and the totals.
    Show {
        /// Session id, a unique prefix or suffix of it, or a path.
        id: String,
        /// The raw records (JSONL) instead.
        #[arg(long)]
        json: bool,
    },
    /// The message array that resumes a session (what ag-loop loads), as JSON.
    Messages {
        /// Session id, a unique prefix or suffix of it, or a path.
        id: String,
    },
    /// The path of a session file.
    Path {
        /// Session id, a unique prefix or suffix of it, or a path.
        id: String,
    },
    /// The id of the newest session of the working directory.
    Latest {
        /// The working directory (default: the current one).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
    },
    /// Creates an empty session and prints its id and path (tab-separated).
    New {
        /// The working directory it belongs to (default: the current one).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// Print `{"id","path"}` as JSON instead.
        #[arg(long)]
        json: bool,
    },
    /// Appends the events read from stdin (ag-loop's JSONL output) to a session.
    ///
    /// Seed 002's session lines, which wrap each event as
    /// `{"type":"event","timestamp":...,"event":{...}}`, are taken as the
    /// event they hold. The values of the provider key variables set here,
    /// and of keys in models.json, are replaced by `[NAME redacted]` in what
    /// is written. A session that ag-loop is running is refused (exit 1,
    /// naming the process): a session has one writer at a time.
    Append {
        /// Session id, a unique prefix or suffix of it, or a path.
        id: String,
    },
    /// A new session holding the first N events of another; its header names the parent.
    Fork {
        /// Session id, a unique prefix or suffix of it, or a path.
        id: String,
        /// How many events to keep (default: all).
        #[arg(long, value_name = "N")]
        at: Option<usize>,
    },
    /// Deletes a session (asks on a terminal; `--yes` otherwise).
    Rm {
        /// Session id, a unique prefix or suffix of it, or a path.
        id: String,
        /// Do not ask.
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// A session as markdown or a self-contained HTML page, with how each run ended and the totals.
    Export {
        /// Session id, a unique prefix or suffix of it, or a path.
        id: String,
        /// The format.
        #[arg(long, value_enum, default_value = "markdown")]
        format: ExportFormat,
        /// Write to FILE instead of stdout.
        #[arg(long, short = 'o', value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Tokens and cost per day and model, of one session or of all.
    Stats {
        /// Session id, a unique prefix or suffix of it, or a path (default: the working directory's sessions).
        id: Option<String>,
        /// Every session of every directory.
        #[arg(long)]
        all: bool,
        /// One JSON object per row instead of a table.
        #[arg(long)]
        json: bool,
    },
    // Checkpoints (issue 20).
    /// Puts the working tree back as it was before turn N (from the checkpoints ag-loop took) and forks the
    /// conversation before that turn into a new session (parent = ID), whose id it prints: `ag-loop --session NEW`
    /// goes on from there. Files created since are removed, deleted ones come back, modes are kept; ignored files and
    /// files left out of checkpoints are not touched. When turn N is the first of its prompt, the prompt is left out
    /// of the new session too. Refuses, listing what would be lost, when the tree changed after the session's last
    /// checkpoint, unless --force.
    Rewind {
        /// Session id, a unique prefix or suffix of it, or a path.
        id: String,
        /// The turn to go back to (as `ag-session checkpoints` numbers them).
        #[arg(long, value_name = "N")]
        turn: u64,
        /// Put the files back only; no new session (a checkpoint of the result is added to ID).
        #[arg(long, conflicts_with = "conversation_only")]
        files_only: bool,
        /// Fork the conversation only; no file is touched.
        #[arg(long)]
        conversation_only: bool,
        /// Rewind even though the tree changed after the last checkpoint, recording those changes first as a
        /// checkpoint of ID (so that the rewind can be undone).
        #[arg(long)]
        force: bool,
    },
    /// A session's checkpoints: the turn each was taken before, its id and time, and the diffstat from the one before.
    Checkpoints {
        /// Session id, a unique prefix or suffix of it, or a path.
        id: String,
    },
    /// A unified diff from the tree before turn N (default: the session's last checkpoint) to the tree before turn M
    /// (default: the working tree now). One past the last turn is the tree the session left.
    Diff {
        /// Session id, a unique prefix or suffix of it, or a path.
        id: String,
        /// From the tree before this turn.
        #[arg(long, value_name = "N")]
        turn: Option<u64>,
        /// To the tree before this turn.
        #[arg(long, value_name = "M")]
        to: Option<u64>,
    },
    /// Records the working tree now as a checkpoint of the session (a `checkpoint` event is appended) and prints its id.
    Checkpoint {
        /// Session id, a unique prefix or suffix of it, or a path.
        id: String,
    },
    /// Deletes the sessions not written to for AGE (their files and `.d` directories) and their checkpoints: the
    /// refs/ag/checkpoints/<id> refs, ag's private indexes, and shadow repositories no session uses any more. git
    /// removes the objects only reachable from those refs at its next `git gc` once they have expired.
    Prune {
        /// The age: 30d, 12h, 2w, 90m, 45s.
        #[arg(long, value_name = "AGE", value_parser = super::checkpoints::parse_age)]
        older_than: std::time::Duration,
        /// Say what would be deleted, and delete nothing.
        #[arg(long)]
        dry_run: bool,
    },
    // Subagents (issue 35).
    /// Removes the git worktrees of subagents (`agent` calls with isolation
    /// "worktree", in $AG_HOME/worktrees) whose ag-loop is gone, as a killed
    /// run leaves them: what each holds is first committed on its branch
    /// (ag/agent-<call id>), so no work is lost; a branch that holds no
    /// change is deleted. One line each: the worktree and what was done.
    CleanWorktrees {
        /// List them, and change nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

/// A failure with its exit status.
struct Failure(ExitStatus, String);

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure(ExitStatus::Failure, e.to_string())
    }
}

/// Runs `ag-session`.
pub fn main() -> std::process::ExitCode {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => return ExitStatus::from_clap(e, BIN).code(),
    };
    match run(args) {
        Ok(()) => ExitStatus::Success.code(),
        Err(Failure(status, msg)) => {
            if !msg.is_empty() {
                error_line(BIN, &msg, None);
            }
            status.code()
        }
    }
}

fn cwd_or(cwd: Option<PathBuf>) -> Result<PathBuf, Failure> {
    let here = std::env::current_dir()?;
    let dir = cwd.map(|c| here.join(c)).unwrap_or(here);
    Ok(dir.canonicalize().unwrap_or(dir))
}

fn out(text: &str) -> Result<(), Failure> {
    match Stdout::new().write_all_flush(text.as_bytes()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

fn report_damage(path: &Path, damage: &[super::Damage]) {
    for d in damage {
        warn(BIN, &format!("{}: {d}", path.display()));
    }
}

fn run(args: Args) -> Result<(), Failure> {
    let store = Store::from_env();
    match args.command {
        Command::List { all, json, cwd } => {
            let files = if all {
                store.list_all()?
            } else {
                store.list_dir(&cwd_or(cwd)?)?
            };
            let mut text = String::new();
            let mut rows = Vec::new();
            for (f, s) in files.iter().zip(Summary::of_all(&files)) {
                let s = s?;
                for d in &s.damage {
                    warn(BIN, &format!("{}: {d}", f.path.display()));
                }
                if json {
                    text.push_str(&serde_json::to_string(&s)?);
                    text.push('\n');
                } else {
                    rows.push(s);
                }
            }
            if !json {
                // Short ids are unique among every session, as `find` looks.
                let every = if all {
                    files.clone()
                } else {
                    store.list_all()?
                };
                let every: Vec<&str> = every.iter().map(|f| f.id.as_str()).collect();
                let shown: Vec<&str> = rows.iter().map(|s| s.id.as_str()).collect();
                text = table(&rows, &short_ids(&shown, &every), all);
            }
            out(&text)
        }
        Command::Show { id, json } => {
            let f = store.find(&id)?;
            if json {
                let mut reader = Reader::open(&f.path)?;
                let mut text = String::new();
                while let Some((_, bytes, _)) = reader.next_line()? {
                    text.push_str(&String::from_utf8_lossy(bytes));
                    text.push('\n');
                }
                return out(&text);
            }
            let (header, msgs, damage) = messages(&f.path)?;
            report_damage(&f.path, &damage);
            let end = ending(&f.path)?;
            out(&export_session(
                header.as_ref(),
                &msgs,
                Some(&end),
                ExportFormat::Markdown,
            ))
        }
        Command::Messages { id } => {
            let f = store.find(&id)?;
            let (_, msgs, damage) = messages(&f.path)?;
            report_damage(&f.path, &damage);
            let mut text = serde_json::to_string(&msgs)?;
            text.push('\n');
            out(&text)
        }
        Command::Path { id } => out(&format!("{}\n", store.find(&id)?.path.display())),
        Command::Latest { cwd } => {
            let dir = cwd_or(cwd)?;
            match store.latest(&dir)? {
                Some(f) => out(&format!("{}\n", f.id)),
                None => Err(Failure(
                    ExitStatus::Failure,
                    format!(
                        "no session in `{}`; `ag-session list --all` shows the others",
                        dir.display()
                    ),
                )),
            }
        }
        Command::New { cwd, json } => {
            let dir = cwd_or(cwd)?;
            let (f, _) = store.create(&dir, json!({}), None)?;
            if json {
                out(&format!("{}\n", json!({"id": f.id, "path": f.path})))
            } else {
                out(&format!("{}\t{}\n", f.id, f.path.display()))
            }
        }
        Command::Append { id } => append(&store.find(&id)?),
        Command::Fork { id, at } => {
            let f = store.find(&id)?;
            fork(&store, &f, at)
        }
        Command::Rm { id, yes } => {
            let f = store.find(&id)?;
            if !yes {
                if !io::stdin().is_terminal() {
                    return Err(Failure(
                        ExitStatus::Input,
                        format!("not deleting `{}` without confirmation; add --yes", f.id),
                    ));
                }
                eprint_prompt(&format!(
                    "delete session {} ({})? [y/N] ",
                    f.id,
                    f.path.display()
                ));
                let mut answer = String::new();
                io::stdin().lock().read_line(&mut answer)?;
                if !matches!(answer.trim(), "y" | "Y" | "yes") {
                    return Err(Failure(ExitStatus::Failure, "not deleted".into()));
                }
            }
            checkpoints::forget_or_warn(&f);
            std::fs::remove_file(&f.path).map_err(|e| {
                Failure(
                    ExitStatus::Failure,
                    format!("cannot delete `{}`: {e}", f.path.display()),
                )
            })?;
            // Its one-writer lock file, if a run left one.
            let _ = std::fs::remove_file(super::lock_path(&f.path));
            out(&format!("deleted {}\n", f.path.display()))
        }
        Command::Export { id, format, output } => {
            let f = store.find(&id)?;
            let (header, msgs, damage) = messages(&f.path)?;
            report_damage(&f.path, &damage);
            let end = ending(&f.path)?;
            let page = export_session(header.as_ref(), &msgs, Some(&end), format);
            match output {
                Some(p) => std::fs::write(&p, page).map_err(|e| {
                    Failure(
                        ExitStatus::Failure,
                        format!("cannot write `{}`: {e}", p.display()),
                    )
                }),
                None => out(&page),
            }
        }
        Command::Rewind {
            id,
            turn,
            files_only,
            conversation_only,
            force,
        } => {
            let halves = match (files_only, conversation_only) {
                (true, _) => Halves::Files,
                (_, true) => Halves::Conversation,
                _ => Halves::Both,
            };
            let done = rewind(&store, &id, turn, halves, force).map_err(|(s, m)| Failure(s, m))?;
            for n in &done.notes {
                note(BIN, n);
            }
            out(&done.new_id.map(|i| format!("{i}\n")).unwrap_or_default())
        }
        Command::Checkpoints { id } => {
            out(&checkpoints::list(&store, &id).map_err(|(s, m)| Failure(s, m))?)
        }
        Command::Diff { id, turn, to } => {
            out(&checkpoints::diff(&store, &id, turn, to).map_err(|(s, m)| Failure(s, m))?)
        }
        Command::Checkpoint { id } => {
            out(&checkpoints::record_now(&store, &id).map_err(|(s, m)| Failure(s, m))?)
        }
        Command::Prune {
            older_than,
            dry_run,
        } => out(&checkpoints::prune(&store, older_than, dry_run).map_err(|(s, m)| Failure(s, m))?),
        Command::CleanWorktrees { dry_run } => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| {
                    Failure(
                        ExitStatus::Failure,
                        format!("cannot start the async runtime: {e}"),
                    )
                })?;
            let lines = runtime.block_on(super::worktrees::clean(dry_run));
            let mut text = String::new();
            for l in lines {
                text.push_str(&l);
                text.push('\n');
            }
            out(&text)
        }
        Command::Stats { id, all, json } => {
            let files = match (id, all) {
                (Some(id), _) => vec![store.find(&id)?],
                (None, true) => store.list_all()?,
                (None, false) => store.list_dir(&cwd_or(None)?)?,
            };
            let rows = stats(&files)?;
            if json {
                let mut text = String::new();
                for r in &rows {
                    text.push_str(&serde_json::to_string(r)?);
                    text.push('\n');
                }
                return out(&text);
            }
            let mut text = format!(
                "{:<10}  {:<36}  {:>6}  {:>10}  {:>10}  {:>10}  {:>9}\n",
                "day", "model", "calls", "input", "output", "cache", "cost $"
            );
            let mut total = crate::protocol::Usage::default();
            for r in &rows {
                total.add(&r.usage);
                text.push_str(&format!(
                    "{:<10}  {:<36}  {:>6}  {:>10}  {:>10}  {:>10}  {:>9.4}\n",
                    r.day,
                    r.model,
                    r.calls,
                    r.usage.input,
                    r.usage.output,
                    r.usage.cache_read + r.usage.cache_write,
                    r.usage.cost.total
                ));
            }
            text.push_str(&format!(
                "{:<10}  {:<36}  {:>6}  {:>10}  {:>10}  {:>10}  {:>9.4}\n",
                "total",
                "",
                rows.iter().map(|r| r.calls).sum::<u64>(),
                total.input,
                total.output,
                total.cache_read + total.cache_write,
                total.cost.total
            ));
            out(&text)
        }
    }
}

#[allow(clippy::print_stderr)]
fn eprint_prompt(text: &str) {
    let mut err = io::stderr().lock();
    let _ = write!(err, "{text}");
    let _ = err.flush();
}

fn table(rows: &[Summary], ids: &[String], all: bool) -> String {
    let width = ids
        .iter()
        .map(|i| i.chars().count())
        .max()
        .unwrap_or(0)
        .max(8);
    let mut text = String::new();
    text.push_str(&format!(
        "{:<width$}  {:<19}  {:>5}  {:>9}  {:>8}  {}{}\n",
        "id",
        "started",
        "msgs",
        "tokens",
        "cost $",
        if all { "directory  " } else { "" },
        "first prompt"
    ));
    for (s, id) in rows.iter().zip(ids) {
        let prompt: String = s
            .first_prompt
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(60)
            .collect();
        text.push_str(&format!(
            "{:<width$}  {:<19}  {:>5}  {:>9}  {:>8.4}  {}{}\n",
            id,
            s.timestamp
                .chars()
                .take(19)
                .collect::<String>()
                .replace('T', " "),
            s.messages,
            s.usage.total_tokens(),
            s.usage.cost.total,
            if all {
                format!("{}  ", s.cwd)
            } else {
                String::new()
            },
            prompt
        ));
    }
    text
}

fn append(f: &SessionFile) -> Result<(), Failure> {
    // One writer at a time: events appended while ag-loop runs the session
    // would land between its turns.
    let lock = super::SessionLock::try_acquire(&f.path)?;
    let mut writer = Writer::open(&f.path)?.holding(lock);
    // Events made elsewhere may carry a provider key that ag-loop would
    // have hidden; the session file gets them with the key hidden too.
    let redactor = crate::llm::keys::Redactor::for_this_machine();
    let mut rejected = 0usize;
    for (i, line) in io::stdin().lock().split(b'\n').enumerate() {
        let line = line?;
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let mut value: serde_json::Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                warn(
                    BIN,
                    &format!("stdin line {}: not JSON, skipped: {e}", i + 1),
                );
                rejected += 1;
                continue;
            }
        };
        if value.get("type").and_then(|t| t.as_str()) == Some("session") {
            continue;
        }
        // Seed 002's session lines wrap the event:
        // {"type":"event","timestamp":...,"event":{...}}.
        if value.get("type").and_then(|t| t.as_str()) == Some("event")
            && let Some(serde_json::Value::Object(mut inner)) = value.get("event").cloned()
        {
            if let Some(ts) = value.get("timestamp").filter(|t| t.is_string()) {
                inner.insert("timestamp".into(), ts.clone());
            }
            value = serde_json::Value::Object(inner);
        }
        redactor.value(&mut value);
        let record = match serde_json::from_value::<AgentEventRecord>(value.clone()) {
            Ok(r) => r,
            // An event without a timestamp gets one.
            Err(_) => match serde_json::from_value::<AgentEvent>(value) {
                Ok(event) => AgentEventRecord {
                    timestamp: now(),
                    event,
                },
                Err(e) => {
                    warn(
                        BIN,
                        &format!("stdin line {}: not an ag-loop event, skipped: {e}", i + 1),
                    );
                    rejected += 1;
                    continue;
                }
            },
        };
        writer.append(&record)?;
    }
    if rejected > 0 {
        return Err(Failure(
            ExitStatus::Failure,
            format!("{rejected} line(s) were not events and were skipped"),
        ));
    }
    Ok(())
}

fn fork(store: &Store, f: &SessionFile, at: Option<usize>) -> Result<(), Failure> {
    let mut reader = Reader::open(&f.path)?;
    let header: SessionHeader = reader.header()?.ok_or_else(|| {
        Failure(
            ExitStatus::Failure,
            format!("`{}` has no session header", f.path.display()),
        )
    })?;
    let cwd = PathBuf::from(&header.cwd);
    let (new, _) = store.create(&cwd, header.config.clone(), Some(header.id.clone()))?;
    let mut writer = Writer::open(&new.path)?;
    let mut copied = 0usize;
    let mut err = None;
    reader.for_each_event(|_, rec| {
        if at.is_some_and(|n| copied >= n) || err.is_some() {
            return;
        }
        if let Err(e) = writer.append(&rec) {
            err = Some(e);
        }
        copied += 1;
    })?;
    report_damage(&f.path, &reader.damage);
    if let Some(e) = err {
        return Err(e.into());
    }
    out(&format!("{}\t{}\n", new.id, new.path.display()))
}
