//! The run's events on their way out: one emitter for all of them, the
//! readable view of a terminal, and the summary that a run's events add up
//! to.

pub mod emit;
pub mod render;
pub mod run_summary;
