//! What the person's keys and ag-loop's lines do to the TUI: the
//! conversation state, the editor, queued prompts, the session picker, and
//! the effects (lines to write, a child to restart, a command to run) that
//! the event loop in `run.rs` carries out. Everything here is synchronous
//! and pure apart from those effects, so it is tested without a terminal.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use serde_json::Value;

use super::editor::Editor;
use super::slash::{self, Slash};
use super::state::{NoticeKind, State};
use crate::protocol::{AgentCommand, UserContent};

/// Something for the event loop to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Write this command to ag-loop's stdin.
    Send(AgentCommand),
    /// Leave.
    Quit,
    /// Stop ag-loop and start it again with these session arguments
    /// (`--session ID`, none for a new session) and this model, if any.
    Restart {
        /// `--session ID` or `--continue`; empty for a new session.
        session: Vec<String>,
        /// A model to switch to.
        model: Option<String>,
        /// Replay this session's events (an id or a file) into the view first.
        replay: Option<String>,
    },
    /// Show the tools recorded in this session's header.
    Tools(String),
    /// Run `ag-session` with these arguments; `then` says what its answer is for.
    Session(Vec<String>, Then),
    /// Show the skills ag-loop finds here (`ag-loop --list-skills`).
    Skills,
}

/// What an `ag-session` run's output is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Then {
    /// `list --json`: open the picker.
    Pick,
    /// `fork`: continue in the new session.
    Continue,
    /// Show what it printed.
    Show,
}

/// One session in the `/resume` picker.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    /// Its id.
    pub id: String,
    /// Its file.
    pub path: String,
    /// When it began.
    pub when: String,
    /// Its first prompt.
    pub prompt: String,
}

/// The picker shown by `/resume`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Picker {
    /// The sessions, newest first.
    pub choices: Vec<Choice>,
    /// The one selected.
    pub selected: usize,
}

/// The child's state as the person should see it.
#[derive(Debug, Clone, PartialEq)]
pub enum Child {
    /// Running.
    Running,
    /// Ended: how, and the end of its stderr.
    Ended(String),
}

/// The TUI's state.
pub struct App {
    /// The conversation.
    pub state: State,
    /// The prompt being written.
    pub editor: Editor,
    /// Prompts written while the agent worked, sent when it is done.
    pub queue: Vec<String>,
    /// The `/resume` picker, when open.
    pub picker: Option<Picker>,
    /// Rows scrolled up from the bottom of the conversation.
    pub scroll: usize,
    /// ag-loop's state.
    pub child: Child,
    /// The session ag-loop writes to, when known.
    pub session: Option<String>,
    /// The model asked for on the command line or by `/model`, for a new
    /// session (`/clear`); a resumed one keeps its own.
    pub model: Option<String>,
    /// Files `/attach` named, sent with the next prompt.
    pub attachments: Vec<String>,
}

impl App {
    /// A new app with this editor.
    pub fn new(editor: Editor) -> App {
        App {
            state: State::default(),
            editor,
            queue: Vec::new(),
            picker: None,
            scroll: 0,
            child: Child::Running,
            session: None,
            model: None,
            attachments: Vec::new(),
        }
    }

    /// Takes one line of ag-loop's stdout.
    pub fn on_line(&mut self, line: &str) -> Vec<Effect> {
        // With --attach, ag-serve's own lines come between the events.
        if super::live::take_line(&mut self.state, &mut self.session, line) {
            return Vec::new();
        }
        let was_working = self.state.working;
        self.state.apply_line(line);
        // A model ag-loop switched to is the one a new session starts with.
        if let Some(model) = self.state.switched_model.take() {
            self.model = Some(model);
        }
        if let Some(id) = self.state.started_session.take() {
            self.session = Some(id);
        }
        let mut effects = Vec::new();
        if was_working && !self.state.working && !self.queue.is_empty() {
            let next = self.queue.remove(0);
            effects.push(self.prompt(next));
        }
        effects
    }

    /// Takes one key.
    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        if self.picker.is_some() {
            return self.picker_key(key.code);
        }
        if self.editor.search.is_some() {
            match key.code {
                KeyCode::Char('r') if ctrl => self.editor.search_next(),
                KeyCode::Char(c) if !ctrl => self.editor.search_type(Some(c)),
                KeyCode::Backspace => self.editor.search_type(None),
                KeyCode::Enter => self.editor.search_end(true),
                _ => self.editor.search_end(false),
            }
            return Vec::new();
        }
        // An approval question takes y, n and a while nothing is typed.
        if self.editor.is_empty()
            && !ctrl
            && !alt
            && let Some(a) = self.state.approvals.first().cloned()
            && let KeyCode::Char(c) = key.code
        {
            // "Always" is remembered by ag-loop, which asks no more for
            // what it covers.
            let (approved, always) = match c.to_ascii_lowercase() {
                'y' => (true, false),
                'n' => (false, false),
                'a' => (true, true),
                _ => return Vec::new(),
            };
            self.state.answered(&a.tool_call_id, approved);
            return vec![Effect::Send(AgentCommand::Approval {
                tool_call_id: a.tool_call_id,
                approved,
                always,
            })];
        }
        if let Some(effects) = self.question_key(key.code, ctrl || alt || shift) {
            return effects;
        }
        match key.code {
            KeyCode::Enter if alt || shift => self.editor.insert('\n'),
            KeyCode::Char('j') if ctrl => self.editor.insert('\n'),
            KeyCode::Enter => return self.submit(),
            KeyCode::Esc if self.state.working => {
                return vec![Effect::Send(AgentCommand::Interrupt)];
            }
            KeyCode::Char('c') if ctrl => {
                if self.editor.is_empty() {
                    return vec![Effect::Quit];
                }
                self.editor.clear();
            }
            KeyCode::Char('d') if ctrl && self.editor.is_empty() => return vec![Effect::Quit],
            KeyCode::Char('s') if ctrl => return self.steer(),
            KeyCode::Char('o') if ctrl => {
                if let Some(i) = self.state.last_tool() {
                    self.state.toggle(i);
                }
            }
            KeyCode::Char('r') if ctrl => self.editor.search_next(),
            KeyCode::Char('a') if ctrl => self.editor.home(),
            KeyCode::Char('e') if ctrl => self.editor.end(),
            KeyCode::Char('w') if ctrl => self.editor.kill_word(),
            KeyCode::Char('u') if ctrl => self.editor.kill_to_start(),
            KeyCode::Char('k') if ctrl => self.editor.kill_to_end(),
            KeyCode::Char('b') if ctrl => self.editor.left(),
            KeyCode::Char('f') if ctrl => self.editor.right(),
            KeyCode::Backspace if alt => self.editor.kill_word(),
            KeyCode::Char(c) if !ctrl => self.editor.insert(c),
            KeyCode::Tab => {
                if let Some(done) = slash::complete(self.editor.text()) {
                    self.editor.set(&done);
                }
            }
            KeyCode::Backspace => self.editor.backspace(),
            KeyCode::Delete => self.editor.delete(),
            KeyCode::Left => self.editor.left(),
            KeyCode::Right => self.editor.right(),
            KeyCode::Home => self.editor.home(),
            KeyCode::End => self.editor.end(),
            KeyCode::Up if shift => self.scroll += 1,
            KeyCode::Down if shift => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::Up => self.editor.up(),
            KeyCode::Down => self.editor.down(),
            KeyCode::PageUp => self.scroll += 10,
            KeyCode::PageDown => self.scroll = self.scroll.saturating_sub(10),
            _ => {}
        }
        Vec::new()
    }

    /// Pasted text goes into the editor whole (Enter inside it is a newline).
    pub fn on_paste(&mut self, text: &str) {
        if self.picker.is_none() {
            self.editor.paste(text);
        }
    }

    fn picker_key(&mut self, code: KeyCode) -> Vec<Effect> {
        let Some(p) = self.picker.as_mut() else {
            return Vec::new();
        };
        match code {
            KeyCode::Up => p.selected = p.selected.saturating_sub(1),
            KeyCode::Down => p.selected = (p.selected + 1).min(p.choices.len().saturating_sub(1)),
            KeyCode::Enter => {
                let choice = p.choices.get(p.selected).cloned();
                self.picker = None;
                if let Some(c) = choice {
                    return self.switch_to(c.id, Some(c.path));
                }
            }
            KeyCode::Esc | KeyCode::Char('q') => self.picker = None,
            _ => {}
        }
        Vec::new()
    }

    /// Continue in another session: a fresh view with its history
    /// replayed, and the session's own model (ag-loop resumes with it).
    pub fn switch_to(&mut self, id: String, path: Option<String>) -> Vec<Effect> {
        self.reset_view();
        self.session = Some(id.clone());
        vec![Effect::Restart {
            session: vec!["--session".into(), id],
            model: None,
            replay: path,
        }]
    }

    fn reset_view(&mut self) {
        self.state.clear();
        self.queue.clear();
        self.scroll = 0;
    }

    /// Sends a steer: the text typed, else the first queued prompt.
    fn steer(&mut self) -> Vec<Effect> {
        let text = if self.editor.is_empty() {
            if self.queue.is_empty() {
                return Vec::new();
            }
            self.queue.remove(0)
        } else {
            self.editor.take()
        };
        if !self.state.working {
            return vec![self.prompt(text)];
        }
        self.state
            .notice(NoticeKind::Info, format!("steer: {}", first_line(&text)));
        vec![Effect::Send(AgentCommand::Steer {
            content: UserContent::Text(text),
        })]
    }

    fn submit(&mut self) -> Vec<Effect> {
        if self.editor.text().trim().is_empty() {
            return Vec::new();
        }
        let text = self.editor.take();
        if let Some(command) = slash::parse(&text) {
            return self.slash(command);
        }
        if matches!(self.child, Child::Ended(_)) {
            self.state.notice(
                NoticeKind::Error,
                "ag-loop is not running: /clear or /resume starts it again".into(),
            );
            return Vec::new();
        }
        self.scroll = 0;
        if self.state.working {
            self.queue.push(text);
            return Vec::new();
        }
        // Sent now; the conversation shows it when ag-loop takes it.
        vec![self.prompt(text)]
    }

    /// A prompt to send, with the files waiting to be attached.
    fn prompt(&mut self, text: String) -> Effect {
        Effect::Send(AgentCommand::Prompt {
            content: UserContent::Text(text),
            attachments: std::mem::take(&mut self.attachments),
            data: Vec::new(),
        })
    }

    /// Whether ag-loop runs to take a command; says so when it does not.
    fn running(&mut self) -> bool {
        if matches!(self.child, Child::Ended(_)) {
            self.state.notice(
                NoticeKind::Error,
                "ag-loop is not running: /clear or /resume starts it again".into(),
            );
            return false;
        }
        true
    }

    fn slash(&mut self, command: Result<Slash, String>) -> Vec<Effect> {
        let command = match command {
            Ok(c) => c,
            Err(e) => {
                self.state.notice(NoticeKind::Error, e);
                return Vec::new();
            }
        };
        let need_session = |app: &mut App| -> Option<String> {
            let s = app.session.clone();
            if s.is_none() {
                app.state.notice(
                    NoticeKind::Error,
                    "no session is known for this conversation (ag-loop runs with --no-session, or elsewhere)".into(),
                );
            }
            s
        };
        match command {
            Slash::Help => self.state.notice(NoticeKind::Info, slash::help()),
            Slash::Quit => return vec![Effect::Quit],
            Slash::Clear => {
                self.reset_view();
                self.session = None;
                return vec![Effect::Restart {
                    session: Vec::new(),
                    model: self.model.clone(),
                    replay: None,
                }];
            }
            Slash::Cost => {
                let u = &self.state.usage;
                self.state.notice(
                    NoticeKind::Info,
                    format!(
                        "tokens: {} in, {} out, {} cache read, {} cache write · cost ${:.4}",
                        u.input, u.output, u.cache_read, u.cache_write, u.cost.total
                    ),
                );
            }
            Slash::Model(None) => {
                let m = self
                    .state
                    .model
                    .clone()
                    .or_else(|| self.model.clone())
                    .unwrap_or_else(|| "ag-loop's default".into());
                self.state
                    .notice(NoticeKind::Info, format!("model: {m} (/model ID switches)"));
            }
            Slash::Model(Some(m)) => {
                if !self.running() {
                    return Vec::new();
                }
                // ag-loop switches from its next prompt on and says so with
                // a `settings` event, which the view shows (or refuses it
                // with an `error` event).
                return vec![Effect::Send(AgentCommand::SetModel { model: m })];
            }
            Slash::Thinking(None) => {
                let level = self
                    .state
                    .reasoning
                    .and_then(|r| serde_json::to_value(r).ok())
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_else(|| "the model's default".into());
                self.state.notice(
                    NoticeKind::Info,
                    format!("reasoning: {level} (/thinking off|low|medium|high switches)"),
                );
            }
            Slash::Thinking(Some(level)) => {
                if !self.running() {
                    return Vec::new();
                }
                return vec![Effect::Send(AgentCommand::SetReasoning { level })];
            }
            Slash::Tools => {
                let Some(id) = need_session(self) else {
                    return Vec::new();
                };
                return vec![Effect::Tools(id)];
            }
            Slash::Skills => return vec![Effect::Skills],
            Slash::Export(file) => {
                let Some(id) = need_session(self) else {
                    return Vec::new();
                };
                let file = file.unwrap_or_else(|| format!("session-{}.md", short(&id)));
                return vec![Effect::Session(
                    vec!["export".into(), id, "-o".into(), file],
                    Then::Show,
                )];
            }
            // Queued by ag-loop behind a running prompt, like a prompt.
            Slash::Compact => return vec![Effect::Send(AgentCommand::Compact)],
            Slash::Attach(path) => return self.attach(path),
            Slash::Detach => return self.detach(),
            Slash::Fork => {
                let Some(id) = need_session(self) else {
                    return Vec::new();
                };
                return vec![Effect::Session(vec!["fork".into(), id], Then::Continue)];
            }
            Slash::Resume => {
                return vec![Effect::Session(
                    vec!["list".into(), "--json".into()],
                    Then::Pick,
                )];
            }
            Slash::Rewind(None) => {
                let turns: Vec<String> = self
                    .state
                    .checkpoints
                    .iter()
                    .filter_map(|c| c.get("turn").map(Value::to_string))
                    .collect();
                let text = if turns.is_empty() {
                    "no checkpoint recorded in this run; /rewind N rewinds to before turn N".into()
                } else {
                    format!("checkpoints before turns {}: /rewind N", turns.join(", "))
                };
                self.state.notice(NoticeKind::Info, text);
            }
            Slash::Rewind(Some(n)) => {
                let Some(id) = need_session(self) else {
                    return Vec::new();
                };
                // The files go back, the conversation forks at that turn,
                // and the TUI goes on in the fork.
                let args = vec!["rewind".into(), id, "--turn".into(), n.to_string()];
                return vec![Effect::Session(args, Then::Continue)];
            }
        }
        Vec::new()
    }

    /// What an `ag-session` run answered.
    pub fn on_session_output(
        &mut self,
        then: Then,
        ok: bool,
        stdout: &str,
        stderr: &str,
    ) -> Vec<Effect> {
        if !ok {
            let msg = stderr.trim();
            self.state.notice(
                NoticeKind::Error,
                if msg.is_empty() {
                    "ag-session failed".into()
                } else {
                    msg.to_string()
                },
            );
            return Vec::new();
        }
        match then {
            Then::Pick => {
                let choices: Vec<Choice> = stdout
                    .lines()
                    .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                    .filter_map(|v| {
                        Some(Choice {
                            id: v.get("id")?.as_str()?.to_string(),
                            path: v.get("path")?.as_str()?.to_string(),
                            when: v
                                .get("timestamp")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string(),
                            prompt: v
                                .get("first_prompt")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string(),
                        })
                    })
                    .collect();
                if choices.is_empty() {
                    self.state
                        .notice(NoticeKind::Info, "no sessions in this directory".into());
                } else {
                    self.picker = Some(Picker {
                        choices,
                        selected: 0,
                    });
                }
            }
            Then::Continue => {
                // `fork` prints "ID<TAB>PATH", `rewind` the new id.
                let id = stdout.split_whitespace().next().unwrap_or("");
                if id.is_empty() {
                    self.state
                        .notice(NoticeKind::Error, "ag-session printed no session id".into());
                    return Vec::new();
                }
                let effects = self.switch_to(id.to_string(), Some(id.to_string()));
                self.state
                    .notice(NoticeKind::Info, format!("now in session {}", short(id)));
                return effects;
            }
            Then::Show => {
                let text = if !stdout.trim().is_empty() {
                    stdout
                } else if !stderr.trim().is_empty() {
                    stderr
                } else {
                    "(none)"
                };
                self.state
                    .notice(NoticeKind::Info, text.trim_end().to_string());
            }
        }
        Vec::new()
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

fn short(id: &str) -> &str {
    id.get(..13).unwrap_or(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn ctrl(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    fn typed(app: &mut App, s: &str) {
        for c in s.chars() {
            assert!(app.on_key(key(KeyCode::Char(c))).is_empty());
        }
    }

    fn prompt_of(e: &Effect) -> Option<&str> {
        match e {
            Effect::Send(AgentCommand::Prompt {
                content: UserContent::Text(t),
                ..
            }) => Some(t),
            _ => None,
        }
    }

    fn line(app: &mut App, v: Value) -> Vec<Effect> {
        app.on_line(&v.to_string())
    }

    #[test]
    fn enter_sends_alt_enter_breaks_the_line() {
        let mut app = App::new(Editor::default());
        typed(&mut app, "one");
        app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
        typed(&mut app, "two");
        let e = app.on_key(key(KeyCode::Enter));
        assert_eq!(prompt_of(&e[0]), Some("one\ntwo"));
        assert!(app.editor.is_empty());
        // An empty line sends nothing.
        assert!(app.on_key(key(KeyCode::Enter)).is_empty());
    }

    #[test]
    fn prompts_typed_while_working_queue_then_go_when_the_run_ends_or_steer() {
        let mut app = App::new(Editor::default());
        line(&mut app, json!({"type": "agent_start"}));
        typed(&mut app, "next task");
        assert!(app.on_key(key(KeyCode::Enter)).is_empty());
        typed(&mut app, "later task");
        app.on_key(key(KeyCode::Enter));
        assert_eq!(app.queue, ["next task", "later task"]);
        // Ctrl+S with nothing typed steers with the first queued prompt.
        let e = app.on_key(ctrl('s'));
        assert_eq!(
            e,
            [Effect::Send(AgentCommand::Steer {
                content: UserContent::Text("next task".into())
            })]
        );
        let e = line(
            &mut app,
            json!({"type": "agent_end", "messages": [], "outcome": "finished", "usage": {}}),
        );
        assert_eq!(prompt_of(&e[0]), Some("later task"));
        assert!(app.queue.is_empty());
    }

    #[test]
    fn esc_interrupts_only_a_running_turn_and_ctrl_c_clears_then_quits() {
        let mut app = App::new(Editor::default());
        assert!(app.on_key(key(KeyCode::Esc)).is_empty());
        line(&mut app, json!({"type": "agent_start"}));
        assert_eq!(
            app.on_key(key(KeyCode::Esc)),
            [Effect::Send(AgentCommand::Interrupt)]
        );
        typed(&mut app, "draft");
        assert!(app.on_key(ctrl('c')).is_empty());
        assert!(app.editor.is_empty());
        assert_eq!(app.on_key(ctrl('c')), [Effect::Quit]);
    }

    #[test]
    fn approvals_take_y_n_and_always_which_ag_loop_remembers() {
        let mut app = App::new(Editor::default());
        let ask = |id: &str, tool: &str| json!({"type": "approval_request", "tool_call_id": id, "tool_name": tool, "arguments": {}, "reason": "r", "always": "`rm`"});
        line(&mut app, ask("1", "bash"));
        // Other keys do not answer.
        assert!(app.on_key(key(KeyCode::Char('x'))).is_empty());
        assert_eq!(
            app.on_key(key(KeyCode::Char('n'))),
            [Effect::Send(AgentCommand::Approval {
                tool_call_id: "1".into(),
                approved: false,
                always: false,
            })]
        );
        line(&mut app, ask("2", "bash"));
        assert_eq!(app.state.approvals[0].always.as_deref(), Some("`rm`"));
        assert_eq!(
            app.on_key(key(KeyCode::Char('a'))),
            [Effect::Send(AgentCommand::Approval {
                tool_call_id: "2".into(),
                approved: true,
                always: true,
            })]
        );
        assert!(app.state.approvals.is_empty());
        // The TUI answers nothing by itself: a later request is a question.
        assert!(line(&mut app, ask("3", "bash")).is_empty());
        assert_eq!(app.state.approvals.len(), 1);
    }

    #[test]
    fn the_session_comes_from_agent_start() {
        let mut app = App::new(Editor::default());
        line(
            &mut app,
            json!({"type": "agent_start", "session_id": "0199-new"}),
        );
        assert_eq!(app.session.as_deref(), Some("0199-new"));
        // Without a session (--no-session) the one known stays.
        line(&mut app, json!({"type": "agent_start"}));
        assert_eq!(app.session.as_deref(), Some("0199-new"));
    }

    #[test]
    fn resume_lists_sessions_and_the_pick_restarts_with_its_history() {
        let mut app = App::new(Editor::default());
        typed(&mut app, "/resume");
        let e = app.on_key(key(KeyCode::Enter));
        assert_eq!(
            e,
            [Effect::Session(
                vec!["list".into(), "--json".into()],
                Then::Pick
            )]
        );
        let listed = [
            json!({"id": "0195-new", "path": "/s/new.jsonl", "timestamp": "2026-01-02T10:00:00Z", "first_prompt": "second"}),
            json!({"id": "0195-old", "path": "/s/old.jsonl", "timestamp": "2026-01-01T10:00:00Z", "first_prompt": "first"}),
        ]
        .map(|v| v.to_string())
        .join("\n");
        assert!(
            app.on_session_output(Then::Pick, true, &listed, "")
                .is_empty()
        );
        app.on_key(key(KeyCode::Down));
        let e = app.on_key(key(KeyCode::Enter));
        assert_eq!(
            e,
            [Effect::Restart {
                session: vec!["--session".into(), "0195-old".into()],
                model: None,
                replay: Some("/s/old.jsonl".into())
            }]
        );
        assert!(app.picker.is_none());
        assert_eq!(app.session.as_deref(), Some("0195-old"));
    }

    #[test]
    fn model_and_thinking_are_commands_to_the_running_ag_loop() {
        let mut app = App::new(Editor::default());
        typed(&mut app, "/model openai/gpt-5");
        assert_eq!(
            app.on_key(key(KeyCode::Enter)),
            [Effect::Send(AgentCommand::SetModel {
                model: "openai/gpt-5".into()
            })]
        );
        // Not until ag-loop took it.
        assert_eq!(app.model, None);
        typed(&mut app, "/thinking high");
        assert_eq!(
            app.on_key(key(KeyCode::Enter)),
            [Effect::Send(AgentCommand::SetReasoning {
                level: crate::protocol::Reasoning::High
            })]
        );
        // What ag-loop recorded is what /thinking and /model show.
        line(
            &mut app,
            json!({"type": "settings", "model": "openai/gpt-5", "reasoning": "high"}),
        );
        assert_eq!(app.state.model.as_deref(), Some("openai/gpt-5"));
        // A new session (/clear) starts with it.
        assert_eq!(app.model.as_deref(), Some("openai/gpt-5"));
        typed(&mut app, "/thinking");
        assert!(app.on_key(key(KeyCode::Enter)).is_empty());
        assert!(matches!(
            app.state.entries.last(),
            Some(super::super::state::Entry::Notice(NoticeKind::Info, t)) if t.starts_with("reasoning: high")
        ));
        typed(&mut app, "/thinking hard");
        assert!(app.on_key(key(KeyCode::Enter)).is_empty());
        assert!(matches!(
            app.state.entries.last(),
            Some(super::super::state::Entry::Notice(NoticeKind::Error, t)) if t.contains("off, low, medium or high")
        ));
        // With ag-loop gone nothing is sent.
        app.child = Child::Ended("exit 1".into());
        typed(&mut app, "/model a/b");
        assert!(app.on_key(key(KeyCode::Enter)).is_empty());
    }

    #[test]
    fn session_commands_need_a_session_and_say_so() {
        let mut app = App::new(Editor::default());
        typed(&mut app, "/fork");
        assert!(app.on_key(key(KeyCode::Enter)).is_empty());
        assert!(matches!(
            app.state.entries.last(),
            Some(super::super::state::Entry::Notice(NoticeKind::Error, _))
        ));
        app.session = Some("abc".into());
        typed(&mut app, "/fork");
        assert_eq!(
            app.on_key(key(KeyCode::Enter)),
            [Effect::Session(
                vec!["fork".into(), "abc".into()],
                Then::Continue
            )]
        );
        let e = app.on_session_output(Then::Continue, true, "def\t/s/def.jsonl\n", "");
        assert!(
            matches!(&e[0], Effect::Restart { session, .. } if session == &["--session", "def"])
        );
    }
}
