//! What every provider's stream parser is built on: the [`StreamParser`]
//! trait, the [`Names`] its messages carry, and the small JSON helpers
//! the parsers share. It sits below the providers so that they and the
//! decoder in `llm/parse.rs`, which picks a parser through
//! [`super::parser_for`], depend on it and not on each other.

use serde_json::Value;

use super::super::assemble::Builder;
use super::super::error::{Failure, FailureKind};
use super::super::frames::Frame;

/// Whether the provider has said the answer is complete.
pub type Complete = bool;

/// A parser for one API's stream.
pub trait StreamParser: Send {
    /// Handles one frame; `Ok(true)` when the provider signalled the end.
    fn frame(&mut self, frame: &Frame, b: &mut Builder<'_>) -> Result<Complete, Failure>;
    /// The body ended.
    fn finish(&mut self, _b: &mut Builder<'_>) -> Result<(), Failure> {
        Ok(())
    }
}

/// Names used in messages from parsers.
#[derive(Debug, Clone, Default)]
pub struct Names {
    /// Provider id.
    pub provider: String,
    /// Model id.
    pub model: String,
}

/// Parses a frame's data as JSON, as a stream failure when it is not.
pub fn json_of(frame: &Frame, names: &Names) -> Result<Value, Failure> {
    serde_json::from_str(frame.data.trim()).map_err(|e| {
        let shown: String = frame.data.chars().take(200).collect();
        Failure::new(
            FailureKind::Stream,
            format!(
                "{} sent an event that is not JSON ({e}): {shown}",
                names.provider
            ),
        )
    })
}

/// A u64 field, 0 when absent.
pub fn u64_at(v: &Value, path: &[&str]) -> Option<u64> {
    let mut cur = v;
    for p in path {
        cur = cur.get(*p)?;
    }
    cur.as_u64()
        .or_else(|| cur.as_f64().map(|f| f.max(0.0) as u64))
}
