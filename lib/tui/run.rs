//! The event loop: the terminal set up and restored (on exit, on SIGTERM
//! or SIGHUP, after a panic), ag-loop started through `crate::proc` and
//! restarted when a slash command asks, keys read on a thread of their
//! own, and a frame drawn after each batch of input. Lines from ag-loop are
//! taken in batches before a frame is drawn, so a fast stream costs one
//! frame per batch and a key never waits behind a backlog of frames.

use std::io::{self, Stdout};
use std::path::Path;
use std::process::ExitCode;
use std::task::Poll;
use std::time::Duration;

use crossterm::event::{DisableBracketedPaste, EnableBracketedPaste, Event};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::app::{App, Child, Effect, Then};
use super::args::Args;
use super::editor::Editor;
use super::state::NoticeKind;
use super::theme::Theme;
use super::view::View;
use crate::cli::{ExitStatus, error_line};
use crate::proc::{CaptureLimit, Command, Input, LineLimits, Lines, Output, Running, sibling};
use crate::protocol::AgentEventRecord;
use crate::session::{Reader, Store, ag_home};

const BIN: &str = "ag-tui";

/// Lines taken from ag-loop before a frame is drawn, at most.
const BATCH: usize = 512;

/// Runs `ag-tui`.
pub fn main() -> ExitCode {
    let (args, runtime) = match crate::cli::start::<Args>(BIN) {
        Ok(started) => started,
        Err(code) => return code,
    };
    let code = runtime.block_on(run(args));
    runtime.shutdown_background();
    code.code()
}

/// The terminal in raw mode on the alternate screen; put back on drop.
struct Screen {
    terminal: Terminal<CrosstermBackend<Stdout>>,
}

impl Screen {
    fn open() -> io::Result<Screen> {
        enable_raw_mode()?;
        let restore_on_panic = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            restore_on_panic(info);
        }));
        let mut out = io::stdout();
        execute!(out, EnterAlternateScreen, EnableBracketedPaste)?;
        Ok(Screen {
            terminal: Terminal::new(CrosstermBackend::new(out))?,
        })
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        restore();
        let _ = self.terminal.show_cursor();
    }
}

/// Puts the terminal back as it was: cooked mode, main screen, no paste mode.
fn restore() {
    let _ = execute!(io::stdout(), DisableBracketedPaste, LeaveAlternateScreen);
    let _ = disable_raw_mode();
}

/// The ag-loop in use.
struct Agent {
    lines: Option<Lines>,
    stdin: Option<ChildStdin>,
    running: Option<Running>,
}

/// What the key thread reads.
enum KeyInput {
    Term(Event),
    Gone(String),
}

async fn run(args: Args) -> ExitStatus {
    let cwd = match crate::cli::working_dir(BIN) {
        Ok(d) => d,
        Err(status) => return status,
    };
    if !crossterm::tty::IsTty::is_tty(&io::stdin()) || !crossterm::tty::IsTty::is_tty(&io::stdout())
    {
        error_line(
            BIN,
            "stdin and stdout must be a terminal",
            Some("for a script, use `ag-loop --json`"),
        );
        return ExitStatus::Input;
    }
    let mut screen = match Screen::open() {
        Ok(s) => s,
        Err(e) => {
            restore();
            error_line(BIN, &format!("cannot set up the terminal: {e}"), None);
            return ExitStatus::Input;
        }
    };
    let mut view = View::new(Theme::from_env());
    let mut app = App::new(Editor::with_history(Some(
        ag_home().join("tui-history.jsonl"),
    )));
    app.model = args.model.clone();
    // A usable prompt first; everything else comes after the first frame.
    let _ = screen.terminal.draw(|f| view.draw(f, &app));

    let (keys_tx, mut keys) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        loop {
            match crossterm::event::read() {
                Ok(ev) => {
                    if keys_tx.send(KeyInput::Term(ev)).is_err() {
                        return;
                    }
                }
                Err(e) => {
                    let _ = keys_tx.send(KeyInput::Gone(e.to_string()));
                    return;
                }
            }
        }
    });
    let (done_tx, mut done) = mpsc::unbounded_channel::<(Then, bool, String, String)>();
    let cancel = CancellationToken::new();

    // The session to resume, shown as it stands before ag-loop adds to it.
    let mut first_session = Vec::new();
    let resume = if args.attach.is_some() {
        // ag-serve replays the session itself.
        None
    } else if args.continue_ {
        Store::from_env().latest(&cwd).ok().flatten()
    } else if let Some(id) = &args.session {
        match Store::from_env().find(id) {
            Ok(f) => Some(f),
            Err(e) => {
                app.state
                    .notice(NoticeKind::Error, format!("session `{id}`: {e}"));
                None
            }
        }
    } else {
        None
    };
    if let Some(f) = &resume {
        replay(&mut app, &f.path);
        app.session = Some(f.id.clone());
        first_session = vec!["--session".to_string(), f.id.clone()];
    } else if let Some(id) = &args.attach {
        first_session = vec!["--session".to_string(), id.clone()];
    } else if args.continue_ {
        first_session = vec!["--continue".to_string()];
    }
    let mut agent = start(&args, &mut app, &first_session, args.model.as_deref());
    if let Some(p) = &args.prompt {
        let effects = vec![Effect::Send(crate::protocol::AgentCommand::Prompt {
            content: crate::protocol::UserContent::Text(p.clone()),
            attachments: args.files.clone(),
            data: Vec::new(),
        })];
        apply_effects(
            effects, &args, &mut app, &mut agent, &done_tx, &cancel, &cwd,
        )
        .await;
    }

    let mut failure = None;
    let mut term = crate::cli::Signal::new(tokio::signal::unix::SignalKind::terminate());
    let mut hup = crate::cli::Signal::new(tokio::signal::unix::SignalKind::hangup());
    loop {
        if screen.terminal.draw(|f| view.draw(f, &app)).is_err() {
            break;
        }
        let mut effects = Vec::new();
        let output_over = agent.lines.is_none();
        tokio::select! {
            line = next_line(&mut agent.lines) => {
                match line {
                    Some(l) => {
                        effects.extend(take_line(&mut app, l));
                        // Whatever else is already there, before drawing.
                        for _ in 0..BATCH {
                            let Some(lines) = agent.lines.as_mut() else { break };
                            let next = std::future::poll_fn(|cx| Poll::Ready(lines.poll_next(cx))).await;
                            match next {
                                Poll::Ready(Some(l)) => effects.extend(take_line(&mut app, l)),
                                Poll::Ready(None) => { agent.lines = None; break }
                                Poll::Pending => break,
                            }
                        }
                    }
                    None => agent.lines = None,
                }
            }
            ended = child_end(agent.running.as_ref(), output_over) => {
                agent.running = None;
                agent.stdin = None;
                app.state.working = false;
                app.state.approvals.clear();
                app.child = Child::Ended(ended);
            }
            ev = keys.recv() => {
                match ev {
                    Some(KeyInput::Term(Event::Key(k))) => effects.extend(app.on_key(k)),
                    Some(KeyInput::Term(Event::Paste(t))) => app.on_paste(&t),
                    Some(KeyInput::Term(_)) => {}
                    Some(KeyInput::Gone(e)) => {
                        failure = Some(e);
                        break;
                    }
                    None => break,
                }
                // Keys typed ahead are handled before the frame.
                while let Ok(ev) = keys.try_recv() {
                    match ev {
                        KeyInput::Term(Event::Key(k)) => effects.extend(app.on_key(k)),
                        KeyInput::Term(Event::Paste(t)) => app.on_paste(&t),
                        _ => {}
                    }
                }
            }
            Some((then, ok, out, err)) = done.recv() => {
                effects.extend(app.on_session_output(then, ok, &out, &err));
            }
            _ = term.recv() => break,
            _ = hup.recv() => break,
        }
        if effects.contains(&Effect::Quit) {
            break;
        }
        apply_effects(
            effects, &args, &mut app, &mut agent, &done_tx, &cancel, &cwd,
        )
        .await;
    }
    cancel.cancel();
    drop(screen);
    stop(agent);
    if let Some(e) = failure {
        error_line(BIN, &format!("cannot read the terminal: {e}"), None);
        return ExitStatus::Input;
    }
    ExitStatus::Success
}

fn take_line(app: &mut App, line: crate::proc::Line) -> Vec<Effect> {
    match line {
        Ok(bytes) => app.on_line(&String::from_utf8_lossy(&bytes)),
        Err(e) => {
            app.state
                .notice(NoticeKind::Warning, format!("ag-loop: {e}"));
            Vec::new()
        }
    }
}

async fn apply_effects(
    effects: Vec<Effect>,
    args: &Args,
    app: &mut App,
    agent: &mut Agent,
    done: &mpsc::UnboundedSender<(Then, bool, String, String)>,
    cancel: &CancellationToken,
    cwd: &Path,
) {
    for effect in effects {
        match effect {
            Effect::Quit => {}
            Effect::Send(command) => {
                let Some(stdin) = agent.stdin.as_mut() else {
                    app.state.notice(
                        NoticeKind::Error,
                        "ag-loop is not running: /clear or /resume starts it again".into(),
                    );
                    continue;
                };
                let mut line = serde_json::to_string(&command).unwrap_or_default();
                line.push('\n');
                if let Err(e) = stdin.write_all(line.as_bytes()).await {
                    app.state
                        .notice(NoticeKind::Error, format!("cannot write to ag-loop: {e}"));
                    agent.stdin = None;
                }
            }
            Effect::Restart {
                session,
                model,
                replay: file,
            } => {
                let old = std::mem::replace(
                    agent,
                    Agent {
                        lines: None,
                        stdin: None,
                        running: None,
                    },
                );
                // Ended before the next starts: a session has one writer,
                // and the next ag-loop may resume the same one (/model).
                stop_and_wait(old).await;
                // The render cache needs no reset: revisions only grow, so
                // a cleared conversation's entries are never taken for old ones.
                // Attached, ag-serve replays the session it joins.
                if let Some(wanted) = file.filter(|_| args.attach.is_none()) {
                    match Store::from_env().find(&wanted) {
                        Ok(f) => replay(app, &f.path),
                        Err(e) => app
                            .state
                            .notice(NoticeKind::Error, format!("session `{wanted}`: {e}")),
                    }
                }
                *agent = start(args, app, &session, model.as_deref());
            }
            Effect::Tools(id) => show_tools(app, &id),
            Effect::Session(..) | Effect::Skills => {
                let (name, session_args, then) = match effect {
                    Effect::Session(a, then) => ("ag-session", a, then),
                    // ag-loop says which skills a run here would list.
                    _ => ("ag-loop", vec!["--list-skills".into()], Then::Show),
                };
                let program = sibling(name);
                let cmd = Command::new(program)
                    .args(&session_args)
                    .cwd(cwd)
                    .timeout(Duration::from_secs(30))
                    .output(Output::Separate {
                        stdout: CaptureLimit::new(4 << 20),
                        stderr: CaptureLimit::new(64 << 10),
                    });
                let done = done.clone();
                let run = cmd.collect(cancel);
                tokio::spawn(async move {
                    let r = run.await;
                    let msg = match r {
                        Ok(o) => (then, o.code() == 0, o.stdout.lossy(), o.stderr.lossy()),
                        Err(e) => (
                            then,
                            false,
                            String::new(),
                            format!("cannot run {name}: {e}"),
                        ),
                    };
                    let _ = done.send(msg);
                });
            }
        }
    }
}

/// Starts ag-loop (or `--loop-cmd`) with the session and model flags.
fn start(args: &Args, app: &mut App, session: &[String], model: Option<&str>) -> Agent {
    let mut extra: Vec<String> = Vec::new();
    if let Some(m) = model {
        extra.push("-m".into());
        extra.push(m.into());
    }
    extra.extend(session.iter().cloned());
    // ag-loop asks a person only when its stdin is a terminal; here a
    // person answers through the TUI.
    extra.push("--approve-on-stdin".into());
    extra.extend(args.loop_args.iter().cloned());
    let cmd = match &args.loop_cmd {
        _ if args.attach.is_some() => Command::new(sibling("ag-serve"))
            .args(super::live::bridge_args(session, model, &args.loop_args)),
        loop_cmd => crate::proc::loop_command(loop_cmd.as_deref(), &extra),
    };
    // A session of its own: nothing the child runs can take the terminal
    // (an ssh password prompt would write over the screen).
    let cmd = cmd.stdin(Input::Pipe).new_session();
    let limits = LineLimits {
        max_line: 16 << 20,
        max_total: None,
        stderr: CaptureLimit::new(64 << 10),
    };
    app.child = Child::Running;
    match cmd.stream_lines(limits, &CancellationToken::new()) {
        Ok(s) => Agent {
            lines: Some(s.lines),
            stdin: s.stdin,
            running: Some(s.running),
        },
        Err(e) => {
            app.child = Child::Ended(format!("cannot start ag-loop: {e}"));
            Agent {
                lines: None,
                stdin: None,
                running: None,
            }
        }
    }
}

/// Ends a child: its stdin closed (ag-loop's way to finish), then stopped
/// if it lingers. Done in the background so the screen does not wait.
/// Stops an ag-loop and waits until it has exited (1 s for a running
/// prompt, then it is stopped), which frees its session for the next.
async fn stop_and_wait(agent: Agent) {
    drop(agent.stdin);
    drop(agent.lines);
    if let Some(r) = agent.running {
        let _ = r.finish(Duration::from_secs(1)).await;
    }
}

fn stop(agent: Agent) {
    drop(agent.stdin);
    drop(agent.lines);
    if let Some(r) = agent.running {
        tokio::spawn(async move {
            let _ = r.finish(Duration::from_secs(1)).await;
        });
    }
}

async fn next_line(lines: &mut Option<Lines>) -> Option<crate::proc::Line> {
    match lines.as_mut() {
        Some(l) => l.next().await,
        None => std::future::pending().await,
    }
}

/// How the child ended, once its output is over.
async fn child_end(running: Option<&Running>, output_over: bool) -> String {
    let Some(r) = running.filter(|_| output_over) else {
        return std::future::pending().await;
    };
    match r.wait().await {
        Ok(o) => {
            let how = match o.signal() {
                Some(n) => format!("ag-loop was killed by signal {n}"),
                None => format!("ag-loop exited with status {}", o.code()),
            };
            let err = o.stderr.lossy();
            let tail: Vec<&str> = err.lines().rev().take(12).collect();
            let mut s = how;
            for l in tail.into_iter().rev() {
                s.push('\n');
                s.push_str(l);
            }
            s
        }
        Err(e) => format!("ag-loop ended: {e}"),
    }
}

/// Shows a session's history by running its events through the state.
fn replay(app: &mut App, path: &Path) {
    let mut reader = match Reader::open(path) {
        Ok(r) => r,
        Err(e) => {
            app.state.notice(
                NoticeKind::Error,
                format!("cannot read `{}`: {e}", path.display()),
            );
            return;
        }
    };
    let _ = reader.header();
    let r = reader.for_each_event(|_, record: AgentEventRecord| {
        app.state.apply(&record.event, Some(&record.timestamp));
    });
    if let Err(e) = r {
        app.state.notice(
            NoticeKind::Error,
            format!("cannot read `{}`: {e}", path.display()),
        );
    }
    // A run cut short in the file is not running now.
    app.state.working = false;
    app.state.approvals.clear();
}

fn show_tools(app: &mut App, id: &str) {
    let header = Store::from_env()
        .find(id)
        .ok()
        .and_then(|f| Reader::open(&f.path).ok())
        .and_then(|mut r| r.header().ok().flatten());
    let tools = header
        .as_ref()
        .and_then(|h| h.config.get("tools"))
        .and_then(|t| t.as_array())
        .map(|t| {
            t.iter()
                .filter_map(|v| v.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        });
    match tools {
        Some(t) => app.state.notice(NoticeKind::Info, format!("tools: {t}")),
        None => app.state.notice(
            NoticeKind::Info,
            "the session does not record its tools".into(),
        ),
    }
}
