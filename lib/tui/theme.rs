//! The styles the view draws with. Under `NO_COLOR` every colour goes and
//! only attributes remain (bold, dim, reverse), so the screen still reads.

use ratatui::style::{Color, Modifier, Style};

/// Styles by role.
#[derive(Debug, Clone, Copy)]
pub struct Theme {
    /// Secondary text: markers, durations, collapsed thinking.
    pub dim: Style,
    /// Headings.
    pub heading: Style,
    /// Code blocks.
    pub code: Style,
    /// A code block's language label.
    pub label: Style,
    /// `inline code`.
    pub inline_code: Style,
    /// Links.
    pub link: Style,
    /// The person's prompts.
    pub user: Style,
    /// A running call.
    pub running: Style,
    /// Success.
    pub ok: Style,
    /// Failure.
    pub error: Style,
    /// Warnings and questions.
    pub warning: Style,
    /// Added diff lines.
    pub added: Style,
    /// Removed diff lines.
    pub removed: Style,
    /// The footer and selections.
    pub bar: Style,
}

impl Theme {
    /// Colours, or none when `no_color`.
    pub fn new(no_color: bool) -> Theme {
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let dim = Style::default().add_modifier(Modifier::DIM);
        if no_color {
            return Theme {
                dim,
                heading: bold,
                code: Style::default(),
                label: dim,
                inline_code: bold,
                link: Style::default().add_modifier(Modifier::UNDERLINED),
                user: bold,
                running: Style::default(),
                ok: Style::default(),
                error: bold,
                warning: bold,
                added: Style::default(),
                removed: Style::default(),
                bar: Style::default().add_modifier(Modifier::REVERSED),
            };
        }
        Theme {
            dim,
            heading: bold.fg(Color::Cyan),
            code: Style::default().fg(Color::Yellow),
            label: dim.fg(Color::Cyan),
            inline_code: Style::default().fg(Color::Yellow),
            link: Style::default()
                .fg(Color::Blue)
                .add_modifier(Modifier::UNDERLINED),
            user: bold.fg(Color::Green),
            running: Style::default().fg(Color::Cyan),
            ok: Style::default().fg(Color::Green),
            error: Style::default().fg(Color::Red),
            warning: Style::default().fg(Color::Yellow),
            added: Style::default().fg(Color::Green),
            removed: Style::default().fg(Color::Red),
            bar: Style::default().add_modifier(Modifier::REVERSED),
        }
    }

    /// By the environment: `NO_COLOR` set to anything non-empty means none.
    pub fn from_env() -> Theme {
        Theme::new(std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()))
    }
}
