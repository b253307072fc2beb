//! Files attached to the next prompt in the TUI: `/attach FILE` keeps a
//! file for it, `/attach` lists them, `/detach` drops them; the prompt
//! carries them in its `attachments` and ag-loop reads them (`@FILE` in a
//! prompt needs nothing here: ag-loop finds it in the text).

use super::app::{App, Effect};
use super::state::NoticeKind;

impl App {
    /// `/attach FILE`, or `/attach` alone (which lists them).
    pub(super) fn attach(&mut self, path: Option<String>) -> Vec<Effect> {
        let Some(path) = path else {
            let text = if self.attachments.is_empty() {
                "nothing to attach yet: /attach FILE attaches a file to the next prompt (or write @FILE in it)".to_string()
            } else {
                format!(
                    "attached to the next prompt: {} (/detach drops them)",
                    self.attachments.join(", ")
                )
            };
            self.state.notice(NoticeKind::Info, text);
            return Vec::new();
        };
        // ag-loop reads it (and says when it cannot); here only a missing
        // file is pointed out, as ag-loop may run on another machine.
        let (kind, text) = if std::path::Path::new(&path).exists() {
            (
                NoticeKind::Info,
                format!("`{path}` will be attached to the next prompt"),
            )
        } else {
            (
                NoticeKind::Warning,
                format!(
                    "`{path}` is not here; it will be attached to the next prompt if ag-loop finds it where it runs"
                ),
            )
        };
        self.attachments.push(path);
        self.state.notice(kind, text);
        Vec::new()
    }

    /// `/detach`.
    pub(super) fn detach(&mut self) -> Vec<Effect> {
        let n = self.attachments.len();
        self.attachments.clear();
        self.state.notice(
            NoticeKind::Info,
            format!("{n} file(s) will not be attached"),
        );
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::AgentCommand;
    use crate::protocol::UserContent;
    use crate::tui::editor::Editor;
    use crossterm::event::KeyCode;
    use crossterm::event::{KeyEvent, KeyModifiers};

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn typed(app: &mut App, s: &str) {
        for c in s.chars() {
            assert!(app.on_key(key(KeyCode::Char(c))).is_empty());
        }
    }

    #[test]
    fn attach_waits_for_the_next_prompt_and_detach_drops_it() {
        let mut app = App::new(Editor::default());
        typed(&mut app, "/attach shot one.png");
        assert!(app.on_key(key(KeyCode::Enter)).is_empty());
        assert_eq!(app.attachments, ["shot one.png"]);
        typed(&mut app, "what is it?");
        let e = app.on_key(key(KeyCode::Enter));
        assert_eq!(
            e,
            [Effect::Send(AgentCommand::Prompt {
                content: UserContent::Text("what is it?".into()),
                attachments: vec!["shot one.png".into()],
                data: Vec::new(),
            })]
        );
        assert!(app.attachments.is_empty());
        typed(&mut app, "/attach x.pdf");
        app.on_key(key(KeyCode::Enter));
        typed(&mut app, "/detach");
        app.on_key(key(KeyCode::Enter));
        typed(&mut app, "next");
        let e = app.on_key(key(KeyCode::Enter));
        assert!(
            matches!(&e[0], Effect::Send(AgentCommand::Prompt { attachments, .. }) if attachments.is_empty())
        );
    }
}
