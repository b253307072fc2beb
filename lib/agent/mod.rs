//! The agent loop behind `ag-loop`: prompts in, events out, every tool call
//! run as a subprocess of a tool binary, every event appended to the session.
//!
//! The rooms, from the ground up (a room imports only rooms below it):
//! `config` and `events` (what is read before a run; what goes out of it),
//! `delegation` (the `agent` tool and the other agents' CLIs), `calls` (one
//! tool call), `setup` (one run's settings), `run` (one prompt's run), and
//! at the top `cli.rs`, which wires them into ag-loop.

pub mod calls;
pub mod check;
pub mod cli;
pub mod config;
pub mod delegation;
pub mod events;
pub mod inherit;
pub mod run;
pub mod setup;
mod stdin_hint;
mod stdin_lines;

pub use calls::toolset::{ToolSet, ToolSpec};
pub use config::named_sets::{DEFAULT_TOOLS, named_set};
pub use config::prompt::system_prompt;
pub use events::emit::{Emitter, OutputMode};
pub use run::checkpoint_ledger::CheckpointState;
pub use run::control::Control;
pub use run::model::{Accumulator, ModelClient};
pub use run::runner::{Agent, AgentSettings};
