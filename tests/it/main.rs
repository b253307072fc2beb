//! Integration tests: the built binaries driven as a user would.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

// The generated files (schemas/, man/, completions) are current.
mod generated;
// The shared tool protocol: --schema, the JSONL loop, plain mode, exit statuses.
mod protocol;
// ag-read.
mod read;
// ag-llm against local HTTP servers replaying real provider streams.
mod llm;
// ag-llm's command line: stdin requests, record/replay, config, usage.
mod llm_cli;
// The scripted HTTP server the ag-llm tests talk to.
mod llm_server;
// Recorded provider streams parsed by ag-llm's parsers, cut at awkward places.
mod llm_wire;
