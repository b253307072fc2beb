//! ag-tui: the interactive terminal front end. It starts `ag-loop --json`
//! (or any command speaking its protocol) through `crate::proc` and is only
//! a consumer of its events and a writer of its control lines.
//!
//! - `state.rs`: the conversation as a pure function of the events.
//! - `app.rs`: keys and lines in, effects out (the UI's own state).
//! - `editor.rs`, `slash.rs`: the prompt editor and the slash commands.
//! - `question.rs`, `attach.rs`: answering the model's questions, and the
//!   files attached to the next prompt.
//! - `view.rs`, `entry_view.rs`, `markdown.rs`, `theme.rs`: drawing, with
//!   rendered rows cached per entry.
//! - `run.rs`: the terminal, the child and the event loop; `live.rs`:
//!   `--attach`, the same over a live session of ag-serve.

pub mod app;
pub mod args;
mod attach;
pub mod editor;
pub mod entry_view;
pub mod live;
pub mod markdown;
mod question;
pub mod run;
pub mod slash;
pub mod state;
pub mod theme;
pub mod view;

pub use args::Args;
pub use run::main;
