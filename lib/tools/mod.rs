//! The tools: each module is one tool's logic, turned into a binary by
//! [`crate::tool_protocol::tool_main`], through its entry point in [`mains`].

pub mod after_change;
pub mod bash;
pub mod browser;
pub mod budget;
pub mod cli_agent;
pub mod code_fence;
pub mod data_syntax;
pub mod delete;
pub mod edit;
pub mod fetch;
pub(crate) mod fileops;
pub mod find;
pub mod git;
pub mod globs;
pub mod grep;
pub(crate) mod lost_escapes;
pub mod ls;
pub mod lsp;
pub mod mains;
pub(crate) mod matching;
pub mod notify;
pub mod offer;
pub mod patch;
pub mod read;
pub mod todo;
pub mod walk;
pub mod write;
pub(crate) mod write_content;
