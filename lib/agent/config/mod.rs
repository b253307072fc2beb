//! What ag-loop reads before it runs: the config file, agent identities,
//! skills, the project's instruction files for the system prompt, and the
//! names a tool list may hold; with the one error type of set-up. Nothing
//! here knows of a run.

pub mod error;
pub mod file;
pub mod identity;
pub mod named_sets;
pub mod prompt;
pub mod reading;
pub mod skills;
