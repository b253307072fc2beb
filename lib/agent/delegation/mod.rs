//! Delegation: the `agent` tool and the other agents' CLIs. This file is
//! what the loop knows of the `agent` tool: its name, the budget a call
//! starts with, and a [`Delegate`] that runs the call. subagent.rs runs a
//! call as a child ag-loop; tree_budget.rs is the budget that a whole tree
//! of agents shares; cli_agents.rs names the other coding agents that seed
//! 003 makes tools. What a child inherits from its parent's settings is
//! set up above all this, in `inherit.rs`, so that the tool set and the
//! runner, which hold only the trait, need nothing from up there.

pub mod cli_agents;
pub mod subagent;
pub mod tree_budget;

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::protocol::{AgentEvent, ToolDefinition, ToolResult};

/// The tool's name.
pub const NAME: &str = "agent";

/// What is left of the parent's budget when a call starts.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Model calls (of the whole tree below this agent's limit).
    pub turns: u32,
    /// Dollars, when the parent has a limit.
    pub cost: Option<f64>,
}

/// Runs `agent` calls.
pub trait Delegate: Send + Sync {
    /// The definition the model sees.
    fn definition(&self) -> ToolDefinition;

    /// Runs one call to its end (or the parent's interrupt); the child's
    /// events go to `events`, wrapped in `subagent_event`.
    fn run<'a>(
        &'a self,
        id: &'a str,
        args: &'a Value,
        budget: Budget,
        events: &'a mpsc::UnboundedSender<AgentEvent>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, ToolResult>;

    /// The same for an `@NAME` prompt's identity: its tools (which its
    /// children may only narrow) and its model; the sandbox, gates and
    /// budget stay the run's.
    fn for_profile(&self, tools: &[String], model: &str) -> Arc<dyn Delegate>;
}
