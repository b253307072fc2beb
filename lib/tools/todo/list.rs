//! The task list itself: items, their statuses, the changes a call can make
//! (each validated so that a bad call leaves the list as it was), and the
//! checklist the model and a terminal see.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Value, json};

use crate::tool_protocol::ToolError;

/// The most items a list may hold: a plan, not a backlog.
pub const MAX_ITEMS: usize = 500;

/// Where an item stands.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum TodoStatus {
    // Not started.
    Pending,
    // Being worked on now.
    #[serde(alias = "in-progress")]
    #[value(alias = "in-progress")]
    InProgress,
    // Finished.
    #[serde(alias = "completed")]
    #[value(alias = "completed")]
    Done,
}

impl TodoStatus {
    /// The checkbox shown before an item.
    pub fn mark(self) -> &'static str {
        match self {
            TodoStatus::Pending => "[ ]",
            TodoStatus::InProgress => "[~]",
            TodoStatus::Done => "[x]",
        }
    }

    /// The name used in JSON and messages.
    pub fn name(self) -> &'static str {
        match self {
            TodoStatus::Pending => "pending",
            TodoStatus::InProgress => "in_progress",
            TodoStatus::Done => "done",
        }
    }
}

/// One task of the list, as stored and as `details.items` carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoItem {
    /// Stable within the list; `update` and `remove` name items by it.
    pub id: u32,
    /// What the task is.
    pub content: String,
    /// Where it stands.
    pub status: TodoStatus,
}

/// An item as a call gives it to `set` or `add`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
pub struct ItemSpec {
    /// With `set`, keeps this id for the item; omit it to get the next free id.
    #[serde(default, deserialize_with = "lenient_id")]
    #[schemars(range(min = 1))]
    #[schemars(description = "")]
    pub id: Option<u32>,
    /// The task, one short imperative sentence ("Add tests for the parser").
    #[schemars(description = "")]
    pub content: String,
    /// `pending` (the default), `in_progress` or `done`.
    #[serde(default)]
    #[schemars(description = "")]
    pub status: Option<TodoStatus>,
}

/// Parses an item written on the command line: its text, optionally behind
/// the checkbox the list shows (`[x] `, `[~] `, `[ ] `).
pub fn parse_item_arg(arg: &str) -> Result<ItemSpec, String> {
    let (status, content) = match arg.get(..4) {
        Some("[x] ") | Some("[X] ") => (Some(TodoStatus::Done), &arg[4..]),
        Some("[~] ") => (Some(TodoStatus::InProgress), &arg[4..]),
        Some("[ ] ") => (Some(TodoStatus::Pending), &arg[4..]),
        _ => (None, arg),
    };
    Ok(ItemSpec {
        id: None,
        content: content.to_string(),
        status,
    })
}

/// Accepts `3` and `"3"`: models often quote ids.
pub fn lenient_id<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    use serde::de::Error;
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n > 0)
            .map(Some)
            .ok_or_else(|| D::Error::custom(format!("invalid id {n}: ids are positive integers"))),
        Some(Value::String(s)) => s
            .trim()
            .trim_start_matches('#')
            .parse::<u32>()
            .ok()
            .filter(|n| *n > 0)
            .map(Some)
            .ok_or_else(|| {
                D::Error::custom(format!("invalid id {s:?}: ids are positive integers"))
            }),
        Some(other) => Err(D::Error::custom(format!(
            "invalid id {other}: ids are positive integers"
        ))),
    }
}

/// The whole list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoList {
    /// The items in the order they were planned.
    #[serde(default)]
    pub items: Vec<TodoItem>,
}

impl TodoList {
    /// Replaces every item; ids given are kept, the others numbered after
    /// the largest. Returns the ids of the new list.
    pub fn set(&mut self, specs: Vec<ItemSpec>) -> Result<Vec<u32>, ToolError> {
        check_count(specs.len())?;
        let mut seen = BTreeSet::new();
        for id in specs.iter().filter_map(|s| s.id) {
            if !seen.insert(id) {
                return Err(ToolError::new(
                    "todo.duplicate_id",
                    format!(
                        "id {id} is given to two items; give each item its own id, or leave ids out to have them numbered"
                    ),
                ));
            }
        }
        let mut next = seen.last().copied().unwrap_or(0) + 1;
        let mut items = Vec::with_capacity(specs.len());
        for (i, spec) in specs.into_iter().enumerate() {
            let content = check_content(&spec.content, &format!("item {}", i + 1))?;
            let content = self.read_back(content);
            let id = match spec.id {
                Some(id) => id,
                None => {
                    let id = next;
                    next += 1;
                    id
                }
            };
            items.push(TodoItem {
                id,
                content,
                status: spec.status.unwrap_or(TodoStatus::Pending),
            });
        }
        let ids = items.iter().map(|i| i.id).collect();
        self.items = items;
        Ok(ids)
    }

    /// Appends items; an id given must be free. Returns the new ids.
    pub fn add(&mut self, specs: Vec<ItemSpec>) -> Result<Vec<u32>, ToolError> {
        if specs.is_empty() {
            return Err(ToolError::new(
                "todo.no_items",
                "`add` needs `items`, a list of items each with its `content` (the task); nothing was added",
            ));
        }
        check_count(self.items.len() + specs.len())?;
        let mut items = self.items.clone();
        let mut added = Vec::with_capacity(specs.len());
        for (i, spec) in specs.into_iter().enumerate() {
            let content = check_content(&spec.content, &format!("item {}", i + 1))?;
            let content = self.read_back(content);
            let id = match spec.id {
                Some(id) => {
                    if let Some(taken) = items.iter().find(|it| it.id == id) {
                        return Err(ToolError::new(
                            "todo.duplicate_id",
                            format!(
                                "id {id} is already taken by \"{}\"; leave `id` out to get a new one, or use `update` to change that item",
                                taken.content
                            ),
                        ));
                    }
                    id
                }
                None => items.iter().map(|it| it.id).max().unwrap_or(0) + 1,
            };
            items.push(TodoItem {
                id,
                content,
                status: spec.status.unwrap_or(TodoStatus::Pending),
            });
            added.push(id);
        }
        self.items = items;
        Ok(added)
    }

    /// Changes the status and/or content of one item. Returns a phrase
    /// saying what changed.
    pub fn update(
        &mut self,
        id: u32,
        status: Option<TodoStatus>,
        content: Option<&str>,
    ) -> Result<String, ToolError> {
        if status.is_none() && content.is_none() {
            return Err(ToolError::new(
                "todo.nothing_to_update",
                format!(
                    "`update` of item {id} needs `status` (`pending`, `in_progress` or `done`) and/or `content` (its new text); nothing was changed"
                ),
            ));
        }
        let content = content
            .map(|c| check_content(c, "`content`"))
            .transpose()?
            .map(|c| self.read_back(c));
        let known = self.known_ids();
        let Some(item) = self.items.iter_mut().find(|it| it.id == id) else {
            return Err(unknown_id(id, &known));
        };
        let mut changes = Vec::new();
        if let Some(s) = status {
            if s != item.status {
                changes.push(format!("{} -> {}", item.status.name(), s.name()));
            }
            item.status = s;
        }
        if let Some(c) = content {
            if c != item.content {
                changes.push("new text".to_string());
            }
            item.content = c;
        }
        Ok(if changes.is_empty() {
            "unchanged".to_string()
        } else {
            changes.join(", ")
        })
    }

    /// Removes one item and returns it.
    pub fn remove(&mut self, id: u32) -> Result<TodoItem, ToolError> {
        let known = self.known_ids();
        match self.items.iter().position(|it| it.id == id) {
            Some(i) => Ok(self.items.remove(i)),
            None => Err(unknown_id(id, &known)),
        }
    }

    /// An item's text as the list shows it, read back: `#2 Run the tests`
    /// or `[ ] #2 Run the tests` where item 2 is "Run the tests" is that
    /// text. A weak model copied the checklist's line into the next call,
    /// and each call grew the item by another `#2 `. A mark that is not
    /// the list's own (`#12 Fix the login` beside no item 12 holding
    /// "Fix the login") is the item's text.
    fn read_back(&self, content: String) -> String {
        let unmarked = ["[x] ", "[X] ", "[~] ", "[ ] "]
            .iter()
            .find_map(|m| content.strip_prefix(m))
            .unwrap_or(&content);
        let own = unmarked
            .strip_prefix('#')
            .and_then(|rest| rest.split_once(' '))
            .and_then(|(id, text)| Some((id.parse::<u32>().ok()?, text.trim())))
            .and_then(|(id, text)| {
                self.items
                    .iter()
                    .find(|it| it.id == id && it.content == text)
            });
        match own {
            Some(item) => item.content.clone(),
            None => content,
        }
    }

    fn known_ids(&self) -> String {
        if self.items.is_empty() {
            return "the list is empty".to_string();
        }
        let ids: Vec<String> = self.items.iter().map(|i| i.id.to_string()).collect();
        format!("the ids are {}", ids.join(", "))
    }

    /// How many items have each status.
    pub fn counts(&self) -> Value {
        let count = |s| self.items.iter().filter(|i| i.status == s).count();
        json!({
            "pending": count(TodoStatus::Pending),
            "in_progress": count(TodoStatus::InProgress),
            "done": count(TodoStatus::Done),
            "total": self.items.len(),
        })
    }

    /// The list as a checklist, one item a line, and a closing tally;
    /// nothing for an empty list.
    pub fn render(&self) -> String {
        if self.items.is_empty() {
            return String::new();
        }
        let mut out = String::new();
        for item in &self.items {
            let head = format!("{} #{} ", item.status.mark(), item.id);
            let indent = " ".repeat(head.chars().count());
            for (i, line) in item.content.lines().enumerate() {
                out.push_str(if i == 0 { &head } else { &indent });
                out.push_str(line);
                out.push('\n');
            }
        }
        let done = self.count(TodoStatus::Done);
        let active = self.count(TodoStatus::InProgress);
        out.push_str(&format!("{done} of {} done", self.items.len()));
        if active > 0 {
            out.push_str(&format!(", {active} in progress"));
        }
        out
    }

    fn count(&self, status: TodoStatus) -> usize {
        self.items.iter().filter(|i| i.status == status).count()
    }
}

fn check_count(n: usize) -> Result<(), ToolError> {
    if n > MAX_ITEMS {
        return Err(ToolError::new(
            "todo.too_many",
            format!(
                "a task list holds at most {MAX_ITEMS} items and this would make {n}; plan in larger steps or remove finished items"
            ),
        ));
    }
    Ok(())
}

/// The content with surrounding blank space removed; empty is an error.
fn check_content(content: &str, what: &str) -> Result<String, ToolError> {
    let trimmed = content.trim();
    if trimmed.is_empty() {
        return Err(ToolError::new(
            "todo.empty_content",
            format!(
                "{what} has empty content; say what the task is, for example \"Run the tests\""
            ),
        ));
    }
    Ok(trimmed.to_string())
}

fn unknown_id(id: u32, known: &str) -> ToolError {
    ToolError::new(
        "todo.unknown_id",
        format!(
            "there is no item {id} in the task list ({known}); call {{\"action\":\"list\"}} to see it"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(content: &str) -> ItemSpec {
        ItemSpec {
            id: None,
            content: content.into(),
            status: None,
        }
    }

    #[test]
    fn set_keeps_given_ids_and_numbers_the_rest_after_them() {
        let mut l = TodoList::default();
        let mut a = spec("a");
        a.id = Some(7);
        let ids = l.set(vec![spec("first"), a, spec("b")]).unwrap();
        assert_eq!(ids, vec![8, 7, 9]);
        let mut dup = spec("c");
        dup.id = Some(7);
        let mut dup2 = spec("d");
        dup2.id = Some(7);
        assert_eq!(
            l.set(vec![dup, dup2]).unwrap_err().code,
            "todo.duplicate_id"
        );
        assert_eq!(l.items.len(), 3, "a failed set leaves the list alone");
    }

    #[test]
    fn add_update_remove_validate() {
        let mut l = TodoList::default();
        assert_eq!(l.add(vec![spec("one"), spec("two")]).unwrap(), vec![1, 2]);
        assert_eq!(
            l.add(vec![spec("three"), spec("  ")]).unwrap_err().code,
            "todo.empty_content"
        );
        assert_eq!(l.items.len(), 2, "a failed add adds nothing");
        assert_eq!(
            l.update(2, Some(TodoStatus::Done), None).unwrap(),
            "pending -> done"
        );
        let err = l.update(5, Some(TodoStatus::Done), None).unwrap_err();
        assert_eq!(err.code, "todo.unknown_id");
        assert!(err.message.contains("the ids are 1, 2"), "{}", err.message);
        assert_eq!(
            l.update(1, None, None).unwrap_err().code,
            "todo.nothing_to_update"
        );
        assert_eq!(l.remove(1).unwrap().content, "one");
        assert_eq!(l.add(vec![spec("again")]).unwrap(), vec![3]);
    }

    #[test]
    fn checklist() {
        let mut l = TodoList::default();
        l.set(vec![
            parse_item_arg("[x] Parse").unwrap(),
            parse_item_arg("[~] Test\nall of it").unwrap(),
            parse_item_arg("Ship").unwrap(),
        ])
        .unwrap();
        assert_eq!(
            l.render(),
            "[x] #1 Parse\n[~] #2 Test\n       all of it\n[ ] #3 Ship\n1 of 3 done, 1 in progress"
        );
    }

    #[test]
    fn the_lists_own_line_read_back_is_the_items_text() {
        let mut l = TodoList::default();
        l.set(vec![spec("Change the sizes"), spec("Run it")])
            .unwrap();
        // The line as the checklist shows it, with or without its box.
        l.set(vec![spec("#1 Change the sizes"), spec("[ ] #2 Run it")])
            .unwrap();
        assert_eq!(l.items[0].content, "Change the sizes");
        assert_eq!(l.items[1].content, "Run it");
        l.add(vec![spec("#1 Change the sizes")]).unwrap();
        assert_eq!(l.items[2].content, "Change the sizes");
        l.update(2, None, Some("[x] #2 Run it")).unwrap();
        assert_eq!(l.items[1].content, "Run it");
        // A number that is not the list's own line stays part of the text.
        l.set(vec![spec("#12 Fix the login"), spec("#1 Something else")])
            .unwrap();
        assert_eq!(l.items[0].content, "#12 Fix the login");
        assert_eq!(l.items[1].content, "#1 Something else");
    }

    #[test]
    fn ids_and_statuses_are_read_leniently() {
        let s: ItemSpec =
            serde_json::from_value(json!({"id": "4", "content": "x", "status": "completed"}))
                .unwrap();
        assert_eq!(s.id, Some(4));
        assert_eq!(s.status, Some(TodoStatus::Done));
        assert!(serde_json::from_value::<ItemSpec>(json!({"id": 0, "content": "x"})).is_err());
        assert!(
            serde_json::from_value::<ItemSpec>(json!({"content": "x", "status": "maybe"})).is_err()
        );
    }
}
