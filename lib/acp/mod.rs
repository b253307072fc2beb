//! ag-acp: ag as an Agent Client Protocol agent, for editors. A translator
//! in front of ag-loop with no agent logic of its own: the
//! `agent-client-protocol` crate speaks JSON-RPC over stdio, each session
//! runs an `ag-loop --json --approve-on-stdin` through `crate::proc`, and
//! its events become `session/update` notifications.
//!
//! - `run.rs`: the runtime and the connection; `server.rs`: the requests.
//! - `session.rs`: one session's ag-loop, prompts, cancel, permissions.
//! - `translate.rs`, `tools.rs`: events as updates (tool kinds, diffs).
//! - `prompt.rs`, `commands.rs`, `skills.rs`, `modes.rs`: prompts in, slash
//!   commands (the skills among them), the modes as ag-loop flags.
//! - `refused.rs`: how a prompt ag-loop did not run is told from one it
//!   runs.
//! - `questions.rs`: what the editor is asked: approvals, and the model's
//!   questions as elicitation forms (or permission requests).
//! - `editor_fs.rs`: `--editor-fs`, read and write through the editor (and
//!   the socket and shim the editor's tools share).
//! - `editor_edit.rs`: `--editor-fs` for edit, on the editor's buffer.
//! - `editor_terminal.rs`: `--editor-terminal`, bash in the editor's
//!   terminal, confined.
//! - `transport.rs`: stdio with bounded lines and a bounded outbox;
//!   `envelope.rs`: each line judged first, so that a bad request is
//!   answered with its id.

pub mod args;
pub mod commands;
pub mod editor_edit;
pub mod editor_fs;
pub mod editor_link;
pub mod editor_terminal;
pub mod envelope;
pub mod modes;
pub mod peer;
pub mod prompt;
pub mod questions;
pub mod refused;
pub mod run;
pub mod server;
pub mod session;
pub mod skills;
pub mod tools;
pub mod translate;
pub mod transport;

pub use args::Args;
pub use run::main;
