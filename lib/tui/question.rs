//! The model's questions in the TUI: the keys that answer the question on
//! show (Up and Down through its choices, Enter to send the choice or the
//! typed text). The question itself is drawn above the editor (`view.rs`).

use crossterm::event::KeyCode;

use super::app::{App, Effect};
use super::slash;
use super::state::NoticeKind;
use crate::protocol::AgentCommand;

impl App {
    /// While the model waits for an answer: Up and Down move through its
    /// choices (with nothing typed), Enter sends the typed text or the
    /// chosen option. A slash command typed then is still a command.
    pub(super) fn question_key(&mut self, code: KeyCode, modified: bool) -> Option<Vec<Effect>> {
        let q = self.state.questions.first_mut()?;
        if modified {
            return None;
        }
        match code {
            KeyCode::Up if self.editor.is_empty() && !q.options.is_empty() => {
                q.selected = q.selected.saturating_sub(1);
                Some(Vec::new())
            }
            KeyCode::Down if self.editor.is_empty() && !q.options.is_empty() => {
                q.selected = (q.selected + 1).min(q.options.len() - 1);
                Some(Vec::new())
            }
            KeyCode::Enter if slash::parse(self.editor.text()).is_none() => {
                let answer = if self.editor.text().trim().is_empty() {
                    q.options.get(q.selected)?.clone()
                } else {
                    self.editor.take()
                };
                let id = q.tool_call_id.clone();
                self.state.question_answered(&id);
                self.state.notice(
                    NoticeKind::Info,
                    format!("you answered: {}", first_line(&answer)),
                );
                Some(vec![Effect::Send(AgentCommand::Answer {
                    tool_call_id: id,
                    answer,
                })])
            }
            _ => None,
        }
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::editor::Editor;
    use crossterm::event::{KeyEvent, KeyModifiers};
    use serde_json::{Value, json};

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn typed(app: &mut App, s: &str) {
        for c in s.chars() {
            assert!(app.on_key(key(KeyCode::Char(c))).is_empty());
        }
    }

    fn line(app: &mut App, v: Value) -> Vec<Effect> {
        app.on_line(&v.to_string())
    }

    #[test]
    fn a_question_is_answered_by_a_chosen_option_or_typed_text() {
        let mut app = App::new(Editor::default());
        let ask = |id: &str| json!({"type": "question", "tool_call_id": id, "question": "Which?", "options": ["PostgreSQL", "SQLite"]});
        line(&mut app, json!({"type": "agent_start"}));
        line(&mut app, ask("q1"));
        // Down picks the second choice; Enter sends it.
        assert!(app.on_key(key(KeyCode::Down)).is_empty());
        assert!(
            app.on_key(key(KeyCode::Down)).is_empty(),
            "stays on the last"
        );
        assert_eq!(
            app.on_key(key(KeyCode::Enter)),
            [Effect::Send(AgentCommand::Answer {
                tool_call_id: "q1".into(),
                answer: "SQLite".into(),
            })]
        );
        assert!(app.state.questions.is_empty());
        // Typed text is the answer, not a queued prompt.
        line(&mut app, ask("q2"));
        typed(&mut app, "neither");
        assert_eq!(
            app.on_key(key(KeyCode::Enter)),
            [Effect::Send(AgentCommand::Answer {
                tool_call_id: "q2".into(),
                answer: "neither".into(),
            })]
        );
        assert!(app.queue.is_empty());
        // A slash command is still a command while a question waits.
        line(&mut app, ask("q3"));
        typed(&mut app, "/cost");
        assert!(app.on_key(key(KeyCode::Enter)).is_empty());
        assert_eq!(app.state.questions.len(), 1);
    }

    fn feed(state: &mut crate::tui::state::State, events: &[Value]) {
        for e in events {
            state.apply_line(&e.to_string());
        }
    }

    #[test]
    fn a_question_waits_until_its_call_ends_and_an_attachment_shows_as_one_line() {
        let mut s = crate::tui::state::State::default();
        feed(
            &mut s,
            &[
                json!({"type": "agent_start"}),
                json!({"type": "message_start", "message": {"role": "user", "content": [
                    {"type": "text", "text": "what is this?"},
                    {"type": "text", "text": "[Attached file `a.txt` (3 bytes)]\nabc"}]}}),
                json!({"type": "tool_execution_start", "tool_call_id": "q", "tool_name": "ask", "arguments": {}}),
                json!({"type": "question", "tool_call_id": "q", "question": "Which?", "options": ["a", "b"]}),
                json!({"type": "question", "tool_call_id": "q", "question": "Which?", "options": ["a", "b"]}),
            ],
        );
        assert_eq!(
            s.entries[0],
            crate::tui::state::Entry::User(
                "what is this?\n[Attached file `a.txt` (3 bytes)]".into()
            )
        );
        assert_eq!(s.questions.len(), 1, "a repeated event is one question");
        assert_eq!(s.questions[0].options, ["a", "b"]);
        feed(
            &mut s,
            &[
                json!({"type": "tool_execution_end", "tool_call_id": "q", "tool_name": "ask", "output": "The user answered: a", "is_error": false}),
            ],
        );
        assert!(s.questions.is_empty());
    }
}
