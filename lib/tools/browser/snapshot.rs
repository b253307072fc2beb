//! A page's accessibility tree as compact text: one line per node that
//! says something (a role with a name, a text, a control's value), indented
//! by depth, and a ref (`e1`, `e2`, ...) on each element the model can act
//! on. Containers that say nothing (`generic`, ignored nodes) are left out
//! and their children moved up, and a text that only repeats its parent's
//! name is dropped, so a button reads `- button "Save" [ref=e3]`.
//!
//! Refs are given in document order, so the same page gives the same refs;
//! they hold until the next snapshot, which every call that changes the
//! page takes.

use std::collections::HashMap;

use serde_json::Value;

/// Characters of a snapshot shown in one result; the rest is read with
/// `offset` (a line number), as `read` pages a file.
pub const MAX_CHARS: usize = 20_000;

/// Roles the model acts on: each gets a ref.
const ACTIONABLE: &[&str] = &[
    "button",
    "link",
    "textbox",
    "searchbox",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "option",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "tab",
    "switch",
    "slider",
    "spinbutton",
    "treeitem",
    "textField",
    "TextField",
    "PopUpButton",
];

/// Roles that say nothing of their own: their children take their place.
const SILENT: &[&str] = &[
    "generic",
    "none",
    "presentation",
    "GenericContainer",
    "InlineTextBox",
    "LineBreak",
    "Ignored",
    "IgnoredRole",
];

/// Properties worth a word, in the order they are shown.
const SHOWN: &[&str] = &[
    "level", "checked", "pressed", "selected", "expanded", "disabled", "required", "readonly",
];

/// A snapshot: its lines, and each ref's DOM node.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// The text, a line each.
    pub lines: Vec<String>,
    /// `e3` → the node's `backendDOMNodeId`.
    pub refs: HashMap<String, i64>,
}

/// The snapshot of `Accessibility.getFullAXTree`'s nodes.
pub fn render(nodes: &[Value]) -> Snapshot {
    let by_id: HashMap<&str, &Value> = nodes
        .iter()
        .filter_map(|n| Some((n.get("nodeId")?.as_str()?, n)))
        .collect();
    let root = nodes
        .iter()
        .find(|n| n.get("parentId").is_none())
        .or_else(|| nodes.first());
    let mut snap = Snapshot::default();
    if let Some(root) = root {
        walk(root, &by_id, 0, "", &mut snap);
    }
    snap
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key)
        .and_then(|x| x.get("value"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn walk(
    node: &Value,
    by_id: &HashMap<&str, &Value>,
    depth: usize,
    parent_name: &str,
    snap: &mut Snapshot,
) {
    let ignored = node.get("ignored").and_then(Value::as_bool) == Some(true);
    let role = text(node, "role");
    let name = text(node, "name").trim();
    let mut child_depth = depth;
    let mut name_for_children = parent_name.to_string();
    let is_root = matches!(role, "RootWebArea" | "WebArea");
    if !ignored && !is_root && !SILENT.contains(&role) {
        if let Some(line) = line_of(node, role, name, parent_name, snap) {
            snap.lines.push(format!("{}{line}", "  ".repeat(depth)));
            child_depth = depth + 1;
            // A text child that repeats the name or the value says nothing.
            name_for_children = format!("{name}\n{}", text(node, "value").trim());
        }
    } else if is_root && !name.is_empty() && snap.lines.is_empty() {
        snap.lines
            .push(format!("- document \"{}\"", clip(name, 200)));
    }
    let children = node
        .get("childIds")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    for c in children {
        if let Some(child) = c.as_str().and_then(|id| by_id.get(id)) {
            walk(child, by_id, child_depth, &name_for_children, snap);
        }
    }
}

/// The line of one node, or `None` when it says nothing.
fn line_of(
    node: &Value,
    role: &str,
    name: &str,
    parent_name: &str,
    snap: &mut Snapshot,
) -> Option<String> {
    if role == "StaticText" || role == "text" {
        if name.is_empty() || name == parent_name || parent_name.contains(name) {
            return None;
        }
        return Some(format!("- text: {}", clip(name, 500)));
    }
    let dom = node.get("backendDOMNodeId").and_then(Value::as_i64);
    let props: HashMap<&str, &Value> = node
        .get("properties")
        .and_then(Value::as_array)
        .map(|ps| {
            ps.iter()
                .filter_map(|p| Some((p.get("name")?.as_str()?, p.get("value")?.get("value")?)))
                .collect()
        })
        .unwrap_or_default();
    let focusable = props.get("focusable").and_then(|v| v.as_bool()) == Some(true);
    let actionable = ACTIONABLE.contains(&role) || (focusable && role != "RootWebArea");
    let value = text(node, "value").trim();
    if name.is_empty() && value.is_empty() && !actionable && role != "img" {
        // A container with nothing of its own (a list, a section without
        // a label) still groups its children when it has a role that says
        // what they are.
        if !matches!(
            role,
            "list"
                | "listitem"
                | "table"
                | "row"
                | "cell"
                | "navigation"
                | "main"
                | "form"
                | "dialog"
                | "heading"
                | "paragraph"
        ) {
            return None;
        }
    }
    let mut line = format!("- {role}");
    if !name.is_empty() {
        line.push_str(&format!(" \"{}\"", clip(name, 200).replace('"', "\\\"")));
    }
    for key in SHOWN {
        match props.get(key) {
            Some(Value::Bool(true)) => line.push_str(&format!(" [{key}]")),
            Some(Value::String(s)) if s != "false" => line.push_str(&format!(" [{key}={s}]")),
            Some(Value::Number(n)) => line.push_str(&format!(" [{key}={n}]")),
            _ => {}
        }
    }
    if actionable && let Some(id) = dom {
        let r = format!("e{}", snap.refs.len() + 1);
        line.push_str(&format!(" [ref={r}]"));
        snap.refs.insert(r, id);
    }
    if !value.is_empty() {
        line.push_str(&format!(": {}", clip(value, 200)));
    }
    if role == "link"
        && let Some(Value::String(url)) = props.get("url")
    {
        line.push_str(&format!(" -> {}", clip(url, 200)));
    }
    Some(line)
}

/// `s` cut to `max` characters, with `…` when cut; on one line.
fn clip(s: &str, max: usize) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= max {
        one
    } else {
        let mut c: String = one.chars().take(max).collect();
        c.push('…');
        c
    }
}

/// One page of a snapshot's lines from `offset` (1-based) within
/// `max_chars`; the page's text and the line after it, if any.
pub fn page(lines: &[String], offset: usize, max_chars: usize) -> (String, Option<usize>) {
    let start = offset.saturating_sub(1).min(lines.len());
    let mut out = String::new();
    let mut end = start;
    for l in &lines[start..] {
        if !out.is_empty() && out.len() + l.len() + 1 > max_chars {
            break;
        }
        out.push_str(l);
        out.push('\n');
        end += 1;
    }
    (out, (end < lines.len()).then_some(end + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(id: &str, role: &str, name: &str, children: &[&str], dom: i64) -> Value {
        json!({"nodeId": id, "ignored": false, "role": {"value": role},
               "name": {"value": name}, "childIds": children, "backendDOMNodeId": dom})
    }

    #[test]
    fn controls_get_refs_and_repeated_text_is_dropped() {
        let mut root = node("1", "RootWebArea", "Form", &["2"], 1);
        root.as_object_mut().unwrap().remove("parentId");
        let nodes = vec![
            root,
            node("2", "generic", "", &["3", "5", "6"], 2),
            node("3", "button", "Save", &["4"], 3),
            node("4", "StaticText", "Save", &[], 4),
            node("5", "StaticText", "Hello there", &[], 5),
            json!({"nodeId": "6", "ignored": false, "role": {"value": "textbox"},
                   "name": {"value": "Name"}, "value": {"value": "Ann"}, "childIds": [],
                   "backendDOMNodeId": 6}),
        ];
        let s = render(&nodes);
        assert_eq!(
            s.lines,
            vec![
                "- document \"Form\"",
                "- button \"Save\" [ref=e1]",
                "- text: Hello there",
                "- textbox \"Name\" [ref=e2]: Ann",
            ]
        );
        assert_eq!(s.refs["e1"], 3);
        assert_eq!(s.refs["e2"], 6);
    }

    #[test]
    fn pages_of_lines_within_the_limit() {
        let lines: Vec<String> = (1..=10).map(|i| format!("line {i}")).collect();
        let (text, next) = page(&lines, 1, 20);
        assert_eq!(text, "line 1\nline 2\n");
        assert_eq!(next, Some(3));
        let (text, next) = page(&lines, 9, 1000);
        assert_eq!(text, "line 9\nline 10\n");
        assert_eq!(next, None);
    }
}
