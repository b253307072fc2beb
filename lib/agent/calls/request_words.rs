//! An edit that looks in a file for the request's own words: a weak model,
//! asked to put a sidebar "under the recipe on small screens", sent
//! `old_string: "under the recipe"` five times to a page that holds no such
//! text, each time told only that it was not found. The failure says where
//! that text came from, so the next call can take its text from the file.

use serde_json::Value;

use crate::protocol::ToolResult;

/// Shorter text is too common to say where it came from ("the", "fix").
const SHORTEST: usize = 8;

/// The note for a failed `edit` (`name` as ag's own tool) whose old_string
/// was not found and is, whole, words of the prompt's `request`.
pub fn note(request: &str, name: &str, args: &Value, r: &ToolResult) -> Option<String> {
    if name != "edit" || !r.is_error || r.error_code.as_deref() != Some("edit.not_found") {
        return None;
    }
    let old = args.get("old_string").and_then(Value::as_str)?.trim();
    if old.chars().count() < SHORTEST || old.contains('\n') {
        return None;
    }
    let file = args.get("file_path").and_then(Value::as_str)?;
    if !request.to_lowercase().contains(&old.to_lowercase()) {
        return None;
    }
    Some(format!(
        "`{old}` comes from the request's words, and `{file}` does not hold it. old_string must be text of the file, copied from what read shows: change the file's own lines that do what the request describes."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(error_code: Option<&str>) -> ToolResult {
        ToolResult {
            id: None,
            output: "old_string was not found in the file.".into(),
            details: Value::Null,
            is_error: error_code.is_some(),
            error_code: error_code.map(str::to_string),
            images: Vec::new(),
        }
    }

    fn failed(code: &str) -> ToolResult {
        result(Some(code))
    }

    const REQUEST: &str =
        "It's the wrong way round: Under the recipe on small screens, beside it on big ones.";

    #[test]
    fn the_requests_words_sent_as_old_string_are_named() {
        let args = json!({"file_path": "index.html", "old_string": " under the recipe", "new_string": "beside it"});
        let n = note(REQUEST, "edit", &args, &failed("edit.not_found")).unwrap();
        assert_eq!(
            n,
            "`under the recipe` comes from the request's words, and `index.html` does not hold it. old_string must be text of the file, copied from what read shows: change the file's own lines that do what the request describes."
        );
    }

    #[test]
    fn other_failures_and_other_text_say_nothing() {
        let args = json!({"file_path": "index.html", "old_string": "under the recipe"});
        // Found but not unique, or another tool.
        assert!(note(REQUEST, "edit", &args, &failed("edit.not_unique")).is_none());
        assert!(note(REQUEST, "write", &args, &failed("edit.not_found")).is_none());
        // Text that is not the request's, or too short to tell.
        let own = json!({"file_path": "a.css", "old_string": "flex-direction: row"});
        assert!(note(REQUEST, "edit", &own, &failed("edit.not_found")).is_none());
        let short = json!({"file_path": "a.css", "old_string": "wrong"});
        assert!(note(REQUEST, "edit", &short, &failed("edit.not_found")).is_none());
        // A success says nothing.
        let ok = result(None);
        assert!(note(REQUEST, "edit", &args, &ok).is_none());
    }
}
