//! The tools: each module is one tool's logic, turned into a binary by
//! [`crate::cli::tool_main`].

pub mod delete;
pub mod edit;
mod fileops;
pub mod git;
pub mod read;
pub mod todo;
pub mod write;
