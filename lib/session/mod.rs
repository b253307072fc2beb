//! Sessions: where session files live, how they are named and found, and
//! the append-only writer and streaming reader every user of them shares
//! (ag-loop writes through it, ag-session reads and manages).

pub mod checkpoints;
pub mod export;
mod lock;
mod reader;
pub mod rewind;
mod store;
mod summary;
pub mod worktrees;
mod writer;

pub mod cli;

pub use export::{Format as ExportFormat, export, export_session};
pub use lock::{Holder, LockError, SessionLock, lock_path};
pub use reader::{Damage, Reader, messages, repair};
pub use store::{SessionFile, Store, StoreError, ag_home};
pub use summary::{DayModelStats, Ending, ModelUsage, RunEnd, Summary, ending, stats};
pub use writer::Writer;

/// The current time as RFC 3339 with milliseconds, UTC.
pub fn now() -> String {
    format!("{:.3}", jiff::Timestamp::now())
}
