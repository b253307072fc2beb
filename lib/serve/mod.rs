//! ag-serve: a broker that keeps ag-loop sessions alive apart from any one
//! client. It holds no agent logic: it runs `ag-loop --json
//! --approve-on-stdin` children through `crate::proc`, passes ag-loop's
//! commands to them, and hands their events, as their session files hold
//! them, to every client attached.
//!
//! - `tail.rs`: a session file as the numbered sequence of its events.
//! - `hub.rs`: one live session's clients, their bounded queues, its state
//!   and its approvals.
//! - `feed.rs`: what one client is sent: the replay, then the live events.
//! - `live.rs`: one session's ag-loop child.
//! - `broker.rs`: the table of live sessions and the operations on them;
//!   `listing.rs`, `registry.rs`: what `list` shows, and remembers.
//! - `socket.rs`: the Unix socket's connections; `client.rs`: the client
//!   commands (`ag-serve attach` is a bridge, as `tmux attach` is).
//! - `http.rs`, `guard.rs`, `conns.rs`, `page/`: the same over HTTP, its
//!   checks, the bounds of its connections, and the web page.
//! - `paths.rs`, `args.rs`, `cli.rs`: files, flags, set-up.

pub mod args;
pub mod broker;
mod cli;
mod client;
mod conns;
pub mod feed;
mod guard;
mod http;
pub mod hub;
mod listing;
pub mod live;
pub mod paths;
mod registry;
pub mod socket;
pub mod tail;

pub use args::Args;
pub use cli::main;
