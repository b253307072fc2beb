//! The tools: each module is one tool's logic, turned into a binary by
//! [`crate::cli::tool_main`].

pub mod find;
pub mod globs;
pub mod grep;
pub mod ls;
pub mod read;
pub mod walk;
