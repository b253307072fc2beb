//! ag: the library behind the ag binaries. The protocol types every binary
//! speaks, the tools, and the shared machinery that turns a tool into a
//! command-line program speaking JSONL.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub use ag_core::{checkpoint, cli, fsutil, llm, proc, protocol, tls};

pub mod acp;
pub mod agent;
pub mod attach;
pub mod fanout;
pub mod gate;
pub mod mcp;
pub mod pdf;
pub mod sandbox;
pub mod schema;
pub mod serve;
pub mod session;
pub mod tool_protocol;
pub mod tools;
pub mod tui;
pub mod workspace;
