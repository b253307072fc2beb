//! The agent loop behind `ag-loop`: prompts in, events out, every tool call
//! run as a subprocess of a tool binary, every event appended to the session.

mod approval;
mod args;
pub mod ask;
mod attachments;
mod check;
mod checkpoint_state;
mod checkpoints;
pub mod cli;
mod cli_agents;
pub mod compact;
mod compaction;
pub mod config;
mod control;
mod emit;
pub mod error;
mod escalate;
pub mod gates;
pub mod identity;
mod model;
pub mod output;
mod prefixes;
mod profile;
mod prompt;
mod render;
mod repeats;
mod resume;
mod runner;
pub mod sandbox;
pub mod setup;
pub mod skills;
mod stdin_hint;
pub mod subagent;
mod toolset;
mod until;
mod updates;
mod workspace;

pub use checkpoint_state::CheckpointState;
pub use control::Control;
pub use emit::{Emitter, OutputMode};
pub use model::{Accumulator, ModelClient};
pub use prompt::system_prompt;
pub use runner::{Agent, AgentSettings};
pub use toolset::{DEFAULT_TOOLS, ToolSet, ToolSpec};
