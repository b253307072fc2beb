//! One prompt's run: the runner's turns of a model call and its tool calls,
//! and what the runner does along the way (approvals, escalation out of the
//! sandbox, updates of running calls, compaction, checkpoints, the checks
//! of a final answer, attachments and what a prompt shows, the choice of
//! profile). Each file here adds its part to [`runner::Agent`]; nothing
//! below imports this room.

pub mod approval;
pub mod attachments;
pub mod checkpoint_ledger;
pub mod checkpoints;
pub mod compaction;
pub mod control;
pub mod copied_calls;
pub mod escalate;
pub mod evidence;
pub mod final_checks;
pub mod model;
pub mod profile;
pub mod prompt_context;
pub mod routing;
pub mod runner;
pub mod stuck_text;
pub mod updates;
pub mod window;
