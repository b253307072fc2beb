//! What a tool's definition shows the model of its parameters. All of them,
//! or only those a call needs (`--tool-params needed`): a small model fills
//! in every optional parameter it is shown with a guess (`skip: 1` on a
//! search with one match, `offset` and `limit` slices of a ten-line file,
//! `dry_run: true` on every patch: docs/models.md), and each guess costs it
//! a turn. The call is still checked against the tool's whole schema, so a
//! parameter left out of the definition is taken when a call sends it.

use serde_json::{Map, Value};

use crate::protocol::ToolDefinition;

/// `definition` with only the parameters a call needs: the required ones,
/// the optional text and lists (a path to narrow to, a glob, the files of
/// a commit), and the options its description names (`timeout is in
/// seconds`, `unless replace_all`), since the description would otherwise
/// speak of a parameter the model is not shown. Optional numbers, yes/no
/// switches and fixed choices are left out: the tool's defaults apply.
pub fn needed_only(definition: &ToolDefinition) -> ToolDefinition {
    let mut out = definition.clone();
    let Some(schema) = out.parameters.as_object_mut() else {
        return out;
    };
    let required: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return out;
    };
    let kept: Map<String, Value> = properties
        .iter()
        .filter(|(name, property)| {
            required.iter().any(|r| r == *name)
                || !is_option(property)
                || names_word(&definition.description, name)
        })
        .map(|(name, property)| (name.clone(), property.clone()))
        .collect();
    schema.insert("properties".into(), Value::Object(kept));
    out
}

/// A number, a yes/no switch or a fixed choice: a setting with a default,
/// not something the call is about.
fn is_option(property: &Value) -> bool {
    if property.get("enum").is_some() {
        return true;
    }
    let kinds: Vec<&str> = match property.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => return false,
    };
    !kinds.is_empty()
        && kinds
            .iter()
            .all(|k| matches!(*k, "integer" | "number" | "boolean" | "null"))
}

/// True when `text` has `word` as a word of its own (`replace_all` in
/// "unless replace_all.", not `count` in "counts").
fn names_word(text: &str, word: &str) -> bool {
    let is_part = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_part) && !after.is_some_and(is_part)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn definition(description: &str, parameters: Value) -> ToolDefinition {
        ToolDefinition {
            name: "grep".into(),
            label: String::new(),
            description: description.into(),
            parameters,
        }
    }

    fn names(d: &ToolDefinition) -> Vec<&str> {
        d.parameters["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect()
    }

    #[test]
    fn keeps_required_text_lists_and_named_options() {
        let d = definition(
            "Search under path; case is ignored unless case_sensitive is set.",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "path": {"type": "string"},
                    "paths": {"type": "array", "items": {"type": "string"}},
                    "case_sensitive": {"type": "boolean"},
                    "skip": {"type": "integer", "minimum": 1},
                    "timeout": {"type": ["number", "null"]},
                    "sort": {"type": "string", "enum": ["modified", "path"]},
                    "dry_run": {"type": "boolean"},
                    "count": {"type": "integer"}
                },
                "required": ["query", "count"]
            }),
        );
        let needed = needed_only(&d);
        assert_eq!(
            names(&needed),
            ["query", "path", "paths", "case_sensitive", "count"]
        );
        // The rest of the schema and the description are as they were.
        assert_eq!(needed.parameters["required"], json!(["query", "count"]));
        assert_eq!(needed.description, d.description);
    }

    #[test]
    fn a_name_inside_another_word_is_not_named() {
        assert!(names_word("with staged, the staged ones", "staged"));
        assert!(!names_word("the latest commits (counts)", "count"));
        assert!(!names_word("limit_more", "limit"));
        assert!(names_word("`limit`", "limit"));
    }

    #[test]
    fn a_schema_without_properties_is_left_alone() {
        let d = definition("Anything.", json!({"type": "object"}));
        assert_eq!(needed_only(&d).parameters, d.parameters);
    }
}
