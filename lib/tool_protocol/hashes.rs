//! The stale-edit guard of the callers that serve a model (ag-loop,
//! ag-mcp): the content hash of every file the model read, so that an edit
//! to a file that changed on disk since (a person edited it meanwhile) is
//! refused; the caller passes the remembered hash to the edit tool as
//! `expected_hash`. The model never sees a hash (only the tools' text), so
//! the field is hidden from it ([`hide_hash_field`]) and a value it sends
//! anyway is dropped ([`drop_guessed_hash`]); only the hash remembered here
//! reaches the tool.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The guard's field, which only the caller fills in.
pub const HASH_FIELD: &str = "expected_hash";

/// Removes `expected_hash` from a tool's parameter schema (properties and
/// required); true if the tool had it.
pub fn hide_hash_field(schema: &mut Value) -> bool {
    let removed = schema
        .get_mut("properties")
        .and_then(Value::as_object_mut)
        .and_then(|p| p.remove(HASH_FIELD))
        .is_some();
    if let Some(Value::Array(required)) = schema.get_mut("required") {
        required.retain(|r| r != HASH_FIELD);
    }
    removed
}

/// Drops the hash a model sent: it never saw one, so it is a guess.
pub fn drop_guessed_hash(arguments: &mut serde_json::Map<String, Value>) {
    arguments.remove(HASH_FIELD);
}

/// Remembered hashes by absolute path.
#[derive(Default)]
pub struct FileHashes {
    seen: HashMap<PathBuf, String>,
}

/// Tools that change files and take `expected_hash`.
const GUARDED: &[&str] = &["edit", "write", "delete"];

impl FileHashes {
    fn key(tool: &str, cwd: &Path, arguments: &Value) -> Option<PathBuf> {
        let field = if tool == "delete" {
            "path"
        } else {
            "file_path"
        };
        let p = arguments.get(field).and_then(Value::as_str)?;
        Some(cwd.join(p))
    }

    /// Adds `expected_hash` to an edit of a file the model read. The model's
    /// own guess was dropped before (see [`drop_guessed_hash`]).
    pub fn guard(&self, tool: &str, cwd: &Path, arguments: &mut Value) {
        if !GUARDED.contains(&tool) || arguments.get(HASH_FIELD).is_some() {
            return;
        }
        if let Some(hash) = Self::key(tool, cwd, arguments).and_then(|k| self.seen.get(&k))
            && let Some(map) = arguments.as_object_mut()
        {
            map.insert(HASH_FIELD.into(), Value::String(hash.clone()));
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
        let Some(key) = Self::key(tool, cwd, arguments) else {
            return;
        };
        match tool {
            "read" => {
                // ag-read hashes the whole file whatever range it shows.
                if let Some(h) = details.get("hash").and_then(Value::as_str) {
                    self.seen.insert(key, h.to_string());
                }
            }
            "delete" => {
                self.seen.remove(&key);
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
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hiding_the_field_removes_it_from_properties_and_required() {
        let mut schema = json!({
            "properties": {"file_path": {}, "expected_hash": {}},
            "required": ["file_path", "expected_hash"]
        });
        assert!(hide_hash_field(&mut schema));
        assert_eq!(
            schema,
            json!({"properties": {"file_path": {}}, "required": ["file_path"]})
        );
        assert!(!hide_hash_field(&mut schema));
    }

    #[test]
    fn an_edit_after_a_read_carries_the_hash_read() {
        let cwd = Path::new("/w");
        let mut h = FileHashes::default();
        let read = json!({"file_path": "a.rs"});
        h.learn("read", cwd, &read, &json!({"hash": "xxh3:1"}), false);
        let mut edit = json!({"file_path": "a.rs", "old_string": "x", "new_string": "y"});
        h.guard("edit", cwd, &mut edit);
        assert_eq!(edit[HASH_FIELD], "xxh3:1");
        // A file never read gets no hash; a failed read teaches nothing.
        let mut other = json!({"file_path": "b.rs"});
        h.learn(
            "read",
            cwd,
            &other.clone(),
            &json!({"hash": "xxh3:2"}),
            true,
        );
        h.guard("edit", cwd, &mut other);
        assert!(other.get(HASH_FIELD).is_none());
        // A delete of a file read is guarded too, and forgets it.
        let mut delete = json!({"path": "a.rs"});
        h.guard("delete", cwd, &mut delete);
        assert_eq!(delete[HASH_FIELD], "xxh3:1");
        h.learn("delete", cwd, &delete, &json!({}), false);
        let mut edit = json!({"file_path": "a.rs"});
        h.guard("edit", cwd, &mut edit);
        assert!(edit.get(HASH_FIELD).is_none());
    }
}
