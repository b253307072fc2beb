//! MCP, the Model Context Protocol, both ways. [`server`] is ag-mcp: ag's
//! tool binaries (or any command that speaks the tool protocol) served to
//! MCP clients over stdio. [`client`] is the other way: another MCP
//! server's tools, listed as ag [`ToolDefinition`](crate::protocol::ToolDefinition)s
//! and called for ag [`ToolResult`](crate::protocol::ToolResult)s. Both use
//! the official Rust SDK, `rmcp`; [`convert`] maps between its types and ag's,
//! and [`wire`] checks each incoming line before rmcp sees it; [`headers`]
//! are an HTTP server's headers and [`env`](mod@env) a stdio server's variables,
//! both given outside the command line.

pub mod cli;
pub mod client;
pub mod convert;
pub mod env;
pub mod headers;
pub mod secrets_by_server;
pub mod server;
pub mod tools;
pub mod wire;
