//! The content hash of every file the model read, so that an edit to a file
//! that changed on disk since (a person edited it meanwhile) is refused: the
//! loop passes the remembered hash to the edit tool as `expected_hash`.
//! The model never sees a hash (only the tools' text), so the field is
//! hidden from it and a value it sends anyway is dropped (see
//! [`super::toolset`]); only the hash remembered here reaches the tool.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// Remembered hashes by absolute path.
#[derive(Default)]
pub struct FileHashes {
    seen: HashMap<PathBuf, String>,
}

/// Tools that change files and take `expected_hash`.
const GUARDED: &[&str] = &["edit", "write"];

impl FileHashes {
    fn key(cwd: &Path, arguments: &Value) -> Option<PathBuf> {
        let p = arguments.get("file_path").and_then(Value::as_str)?;
        Some(cwd.join(p))
    }

    /// Adds `expected_hash` to an edit of a file the model read. The model's
    /// own guess was dropped before (see `ToolSpec::validate`).
    pub fn guard(&self, tool: &str, cwd: &Path, arguments: &mut Value) {
        if !GUARDED.contains(&tool) || arguments.get("expected_hash").is_some() {
            return;
        }
        if let Some(hash) = Self::key(cwd, arguments).and_then(|k| self.seen.get(&k))
            && let Some(map) = arguments.as_object_mut()
        {
            map.insert("expected_hash".into(), Value::String(hash.clone()));
        }
    }

    /// Learns from a finished call: a read records the hash it saw; a
    /// successful change records the file's new content hash.
    pub fn learn(
        &mut self,
        tool: &str,
        cwd: &Path,
        arguments: &Value,
        details: &Value,
        is_error: bool,
    ) {
        if is_error {
            return;
        }
        let Some(key) = Self::key(cwd, arguments) else {
            return;
        };
        match tool {
            "read" => {
                // ag-read hashes the whole file whatever range it shows.
                if let Some(h) = details.get("hash").and_then(Value::as_str) {
                    self.seen.insert(key, h.to_string());
                }
            }
            t if GUARDED.contains(&t) => match details.get("hash").and_then(Value::as_str) {
                Some(h) => {
                    self.seen.insert(key, h.to_string());
                }
                None => match std::fs::read(&key) {
                    Ok(bytes) => {
                        self.seen.insert(key, crate::fsutil::content_hash(&bytes));
                    }
                    Err(_) => {
                        self.seen.remove(&key);
                    }
                },
            },
            "delete" => {
                self.seen.remove(&key);
            }
            _ => {}
        }
    }
}
