//! ag-core: the ground floors of ag's library, a crate of their own. The
//! types every binary speaks, the one way to start a child process and to
//! write a file, the command-line plumbing every binary shares,
//! checkpoints and the model client. The `ag` crate re-exports each module
//! under its own name (`ag::protocol`, `ag::llm`, ...), so the code above
//! sees one library. Being a crate apart, these floors build while the
//! upper ones' dependencies do, and keep opt-level 3 where the rest of the
//! library is built for a shorter install (ARCHITECTURE.md).
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod checkpoint;
pub mod cli;
pub mod fsutil;
pub mod llm;
pub mod proc;
pub mod protocol;
pub mod tls;
