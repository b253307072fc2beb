//! The tools: each module is one tool's logic, turned into a binary by
//! [`crate::cli::tool_main`].

pub mod bash;
pub mod read;
