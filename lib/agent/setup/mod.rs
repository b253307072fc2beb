//! How ag-loop turns what it was told into one run's settings: its flags,
//! the config file, the identity, the environment and a resumed session's
//! record, weighed into a [`settings::LoopConfig`]; with the workspace, the
//! output schema and the `--until` checks that depend on them.

pub mod args;
pub mod output_schema;
pub mod resume;
pub mod settings;
pub mod until;
pub mod workspace;
