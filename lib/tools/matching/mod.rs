//! The text engine that ag-edit and ag-patch share: finding the stretch of
//! a file that a model's text means (exactly, or forgiving the whitespace
//! and punctuation a model gets wrong), explaining a miss with the closest
//! text (and the file's own spelling of a word that is off by a letter), applying line-range edits to the bytes while keeping the file's
//! BOM and line endings, and the diff that reports the change. It works on
//! text in memory: reading and replacing files, and what the tools answer,
//! stay with each tool.

pub(crate) mod closest;
pub(crate) mod diff;
pub(crate) mod ladder;
pub(crate) mod lines;
pub(crate) mod misspelt;
pub(crate) mod normalize;
pub(crate) mod seek;
pub(crate) mod text;
pub(crate) mod tolerant;
pub(crate) mod unescaped;
