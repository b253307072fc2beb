//! `todo`: the task list the model keeps for the current session, so that a
//! long job stays planned and visible. One call shows or changes the list
//! and answers with the whole list as a checklist; `details.items` carries
//! it as JSON for programs and displays.

pub mod list;
pub mod store;

use clap::Args;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::tool_protocol::{Context, Tool, ToolError, ToolOutput};
use list::{ItemSpec, TodoList, TodoStatus, lenient_id, parse_item_arg};
use store::Store;

/// What a call does to the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum TodoAction {
    // Show the list.
    List,
    // Replace the whole list with `items`.
    Set,
    // Append `items` to the list.
    Add,
    // Change the `status` and/or `content` of item `id`.
    Update,
    // Delete item `id`.
    Remove,
}

/// Arguments of `todo`.
#[derive(Debug, Clone, Args, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoArgs {
    /// `list` shows the list; `set` replaces the whole list with `items`; `add` appends `items`; `update` changes item `id` (its `status` and/or `content`); `remove` deletes item `id`.
    #[arg(value_enum, value_name = "ACTION")]
    #[schemars(description = "")]
    pub action: TodoAction,
    /// For `set` (the whole new list, in order) and `add` (appended): the items, each `{"content": "...", "status": "pending"}`; `status` defaults to `pending`.
    #[arg(
        value_name = "ITEM",
        value_parser = parse_item_arg,
        help = "For `set` and `add`: one argument per item, its text optionally behind `[x] `, `[~] ` or `[ ] ` to give its status"
    )]
    #[serde(default)]
    #[schemars(description = "")]
    pub items: Vec<ItemSpec>,
    /// For `update` and `remove`: the item's id, as the list shows it (`#3` is id 3).
    #[arg(long)]
    #[serde(default, deserialize_with = "lenient_id")]
    #[schemars(range(min = 1))]
    #[schemars(description = "")]
    pub id: Option<u32>,
    /// For `update`: the new status, `pending`, `in_progress` or `done`.
    #[arg(long, value_enum)]
    #[serde(default)]
    #[schemars(description = "")]
    pub status: Option<TodoStatus>,
    /// For `update`: the item's new text.
    #[arg(long)]
    #[serde(default)]
    #[schemars(description = "")]
    pub content: Option<String>,
    /// The list's file, used instead of the session's `todo.json` (`$AG_SESSION_DIR/todo.json`) or the run's (`$AG_TODO_FILE`, set by `ag-loop --no-session`); needed when not running under ag-loop.
    #[arg(long, value_name = "FILE")]
    #[serde(default)]
    #[schemars(skip)]
    pub file: Option<String>,
}

/// The `todo` tool.
pub struct TodoTool;

impl Tool for TodoTool {
    type Args = TodoArgs;
    const NAME: &'static str = "todo";
    const BIN: &'static str = "ag-todo";
    const ABOUT: &'static str = "Keep the session's task list: set, add, update, remove, list";
    const LABEL: &'static str = "Task List";
    const DESCRIPTION: &'static str = "Keep a task list for the current job, so that multi-step work stays planned and visible. \
Plan at the start with action=set and items, each with its content (set replaces the whole list). \
Mark progress as you go: action=update with id and status (`in_progress` when you start an item, `done` as soon as it is finished); \
keep one item in progress at a time. action=add appends items, action=remove deletes one, action=list shows the list. \
Every call answers with the whole list as a checklist: `[x]` done, `[~]` in progress, `[ ]` pending, each with its id (#3). \
A field of another action is set aside with a note when ignoring it changes nothing (anything beside list; id beside set or add); \
a call that would lose what it gave is refused (set or add with content but no items, remove with status or content).";
    const MODEL_DESCRIPTION: &'static str = "Keep this job's task list: set (replace it with items), add (items), update (item id's status or content), remove (item id), list. Mark an item in_progress when you start it, done when finished.";
    const PROCESS_FLAGS: &'static [&'static str] = &["file"];

    fn run(ctx: &Context, args: TodoArgs) -> Result<ToolOutput, ToolError> {
        let aside = check_arguments(&args)?;
        let store = Store::locate(ctx, args.file.as_deref())?;
        let (list, summary, changed) = match args.action {
            TodoAction::List => (store.load()?, None, Vec::new()),
            TodoAction::Set => {
                let (list, ids) = store.modify(|l| l.set(args.items))?;
                let n = ids.len();
                let summary = if n == 0 {
                    "Cleared the task list.".to_string()
                } else {
                    format!("Set the task list ({n} item{}).", plural(n))
                };
                (list, Some(summary), ids)
            }
            TodoAction::Add => {
                let (list, ids) = store.modify(|l| l.add(args.items))?;
                let names: Vec<String> = ids.iter().map(|i| format!("#{i}")).collect();
                (list, Some(format!("Added {}.", names.join(", "))), ids)
            }
            TodoAction::Update => {
                let id = required_id(&args, "update")?;
                let (list, what) =
                    store.modify(|l| l.update(id, args.status, args.content.as_deref()))?;
                (list, Some(format!("Updated #{id}: {what}.")), vec![id])
            }
            TodoAction::Remove => {
                let id = required_id(&args, "remove")?;
                let (list, gone) = store.modify(|l| l.remove(id))?;
                let summary = format!("Removed #{id} ({}).", gone.content);
                (list, Some(summary), vec![id])
            }
        };
        Ok(answer(&store, &args.action, &list, summary, changed).with_notes(aside))
    }
}

fn answer(
    store: &Store,
    action: &TodoAction,
    list: &TodoList,
    summary: Option<String>,
    changed: Vec<u32>,
) -> ToolOutput {
    let checklist = list.render();
    let output = match summary {
        Some(s) if checklist.is_empty() => s,
        Some(s) => format!("{s}\n{checklist}"),
        None => checklist,
    };
    // An empty list is no lines of output (a pipeline counts zero items);
    // the note says it is empty.
    let empty = list
        .items
        .is_empty()
        .then(|| "The task list is empty.".to_string());
    let mut details = json!({
        "action": action_name(*action),
        "file": store.shown,
        "items": list.items,
        "counts": list.counts(),
    });
    if let Some(id) = &store.session_id {
        details["session_id"] = json!(id);
    }
    if !changed.is_empty() {
        details["changed"] = json!(changed);
    }
    ToolOutput::new(output, details).with_notes(empty)
}

/// Sets aside the fields that belong to another action when ignoring them
/// cannot do what the model did not mean, and says so in a note: `list`
/// only reads, and `set`, `add` and `update` still do what their own fields
/// say. Refused, with the model's call corrected, are a call whose own
/// fields are missing but which carries another action's (`add` with
/// `content` and no `items` would add nothing; `set` would clear the list)
/// and `remove` beside `status` or `content`, which may have meant `update`.
fn check_arguments(args: &TodoArgs) -> Result<Option<String>, ToolError> {
    let action = action_name(args.action);
    let by_id = matches!(args.action, TodoAction::Update | TodoAction::Remove);
    let mut stray = Vec::new();
    if !args.items.is_empty() && args.action != TodoAction::Set && args.action != TodoAction::Add {
        stray.push("`items`".to_string());
    }
    if let (Some(id), false) = (args.id, by_id) {
        stray.push(format!("`id: {id}`"));
    }
    if let (Some(st), false) = (args.status, args.action == TodoAction::Update) {
        stray.push(format!("`status: {}`", json!(st)));
    }
    if let (Some(c), false) = (&args.content, args.action == TodoAction::Update) {
        stray.push(format!("`content: {}`", json!(c)));
    }
    if stray.is_empty() {
        return Ok(None);
    }
    let refuse = |msg: String| Err(ToolError::new("todo.bad_arguments", msg));
    match args.action {
        TodoAction::Set | TodoAction::Add if args.items.is_empty() => {
            let mut item = serde_json::Map::new();
            item.insert(
                "content".into(),
                json!(args.content.clone().unwrap_or_default()),
            );
            if let Some(st) = args.status {
                item.insert("status".into(), json!(st));
            }
            let fixed = json!({"action": action, "items": [item]});
            let hint = if args.content.is_some() {
                format!(" Call again with the item in `items`: {fixed}")
            } else {
                " Give the items in `items`, each with its `content`.".to_string()
            };
            return refuse(format!(
                "`{action}` takes its items in `items`, not {}; nothing was changed.{hint}",
                stray.join(" or ")
            ));
        }
        TodoAction::Update if args.status.is_none() && args.content.is_none() => {
            return refuse(format!(
                "`update` changes item `id`'s `status` or `content`, and this call gave neither, only {}; nothing was changed. To append items, use `add` with them.",
                stray.join(" or ")
            ));
        }
        TodoAction::Remove if args.status.is_some() || args.content.is_some() => {
            let mut fixed = serde_json::Map::new();
            fixed.insert("action".into(), json!("update"));
            if let Some(id) = args.id {
                fixed.insert("id".into(), json!(id));
            }
            if let Some(st) = args.status {
                fixed.insert("status".into(), json!(st));
            }
            if let Some(c) = &args.content {
                fixed.insert("content".into(), json!(c));
            }
            let remove = match args.id {
                Some(id) => format!(
                    " To delete the item, call {}.",
                    json!({"action": "remove", "id": id})
                ),
                None => String::new(),
            };
            return refuse(format!(
                "`remove` does not take {}; nothing was removed. To change the item, call {}.{remove}",
                stray.join(" or "),
                serde_json::Value::Object(fixed)
            ));
        }
        _ => {}
    }
    let them = if stray.len() == 1 {
        "it is"
    } else {
        "they are"
    };
    Ok(Some(format!(
        "Set aside {}: {them} not used by `{action}`.",
        stray.join(", ")
    )))
}

fn required_id(args: &TodoArgs, action: &str) -> Result<u32, ToolError> {
    args.id.ok_or_else(|| {
        ToolError::new(
            "todo.missing_id",
            format!(
                "`{action}` needs the `id` of an item, as the list shows it (`#3` is id 3); nothing was changed. Call {{\"action\":\"list\"}} to see the ids"
            ),
        )
    })
}

fn action_name(action: TodoAction) -> &'static str {
    match action {
        TodoAction::List => "list",
        TodoAction::Set => "set",
        TodoAction::Add => "add",
        TodoAction::Update => "update",
        TodoAction::Remove => "remove",
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: TodoArgs,
    }

    #[test]
    fn command_line_is_consistent() {
        Cli::command().debug_assert();
        crate::tool_protocol::tool_command::<TodoTool>().debug_assert();
    }

    #[test]
    fn stray_arguments_are_set_aside_unless_ignoring_them_changes_the_call() {
        let args: TodoArgs =
            serde_json::from_value(json!({"action": "list", "status": "done"})).unwrap();
        let note = check_arguments(&args).unwrap().unwrap();
        assert_eq!(
            note,
            "Set aside `status: \"done\"`: it is not used by `list`."
        );
        let args: TodoArgs =
            serde_json::from_value(json!({"action": "add", "content": "ship it"})).unwrap();
        let err = check_arguments(&args).unwrap_err();
        assert_eq!(err.code, "todo.bad_arguments");
        assert!(
            err.message
                .contains(r#"{"action":"add","items":[{"content":"ship it"}]}"#),
            "{}",
            err.message
        );
        let args: TodoArgs =
            serde_json::from_value(json!({"action": "remove", "id": 4, "status": "done"})).unwrap();
        let err = check_arguments(&args).unwrap_err();
        assert!(
            err.message
                .contains(r#"{"action":"update","id":4,"status":"done"}"#),
            "{}",
            err.message
        );
        let args: TodoArgs =
            serde_json::from_value(json!({"action": "update", "id": "2", "status": "done"}))
                .unwrap();
        assert_eq!(check_arguments(&args).unwrap(), None);
        assert_eq!(args.id, Some(2));
    }

    #[test]
    fn the_file_flag_is_not_shown_to_the_model() {
        let schema = crate::schema::parameters_schema::<TodoArgs>();
        assert!(schema["properties"].get("file").is_none(), "{schema}");
        assert_eq!(schema["required"], json!(["action"]));
    }
}
