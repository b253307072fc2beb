//! Every type that crosses a process boundary: tool calls and results,
//! messages, ag-llm's requests and stream events, ag-loop's commands and
//! events, gate requests and decisions, session records, ag-serve's
//! requests and messages, ag-fanout's result lines. Defined once here; `schemas/` is generated from
//! them. This module imports nothing else from the library.

mod agent;
mod diagnostics;
mod fanout;
mod gate;
mod llm;
mod message;
mod serve;
mod session;
mod tool;

pub use agent::*;
pub use diagnostics::*;
pub use fanout::*;
pub use gate::*;
pub use llm::*;
pub use message::*;
pub use serve::*;
pub use session::*;
pub use tool::*;
