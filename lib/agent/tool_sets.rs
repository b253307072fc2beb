//! The names a tool list may hold (`--tools`, `tools:` in a config or an
//! identity): the named sets, ag's tool names and other agents' names for
//! them. Plain names only, so that set-up, errors and the loop can all use
//! them without reaching into the tool set itself.

use serde_json::Value;

/// The core tools (files, shell, git, search, the task list), `notify`
/// and `ask`: seed 003's `minimal`, by tool name (binary `ag-<name>`;
/// `ask` is ag-loop's own, answered by the loop; the default set offers it
/// only when someone can answer).
pub const DEFAULT_TOOLS: &[&str] = &[
    "read", "write", "edit", "patch", "delete", "bash", "grep", "find", "ls", "todo", "git",
    "notify", "ask",
];

/// The sets a tool list may name (seed 003's `full`, `minimal` and `chat`,
/// and two of ag's own), each with what it holds, for help and errors.
pub const SETS: &[(&str, &str)] = &[
    ("full", "minimal and the installed CLI agents; the default"),
    (
        "minimal",
        "read, write, edit, patch, delete, bash, grep, find, ls, todo, git, notify, ask",
    ),
    ("basic", "read, write, edit, bash: seed 002's four"),
    ("readonly", "read, grep, find, ls"),
    ("chat", "notify and ask: the model talks"),
];

/// The tools of a named set; `full` adds `cli_agents`, the CLI agent tools
/// that are installed (found by set-up).
pub fn named_set(name: &str, cli_agents: &[String]) -> Option<Vec<String>> {
    let names: &[&str] = match name {
        "full" => {
            let mut all: Vec<String> = DEFAULT_TOOLS.iter().map(|s| s.to_string()).collect();
            all.extend(cli_agents.iter().cloned());
            return Some(all);
        }
        "minimal" => DEFAULT_TOOLS,
        "basic" => &["read", "write", "edit", "bash"],
        "readonly" => &["read", "grep", "find", "ls"],
        "chat" => &["notify", "ask"],
        _ => return None,
    };
    Some(names.iter().map(|s| s.to_string()).collect())
}

/// The names other agents give ag's tools: seed 003's registry (`read_file`,
/// `git_status`, `glob`, `notify_user`, ...) and seed 001's Cursor tools
/// (`grep_search`, `list_dir`, `delete_file`), so that their tool lists
/// work as written.
pub fn own_name(name: &str) -> &str {
    match name {
        "read_file" => "read",
        "write_file" => "write",
        "edit_file" => "edit",
        "delete_file" => "delete",
        "list_dir" => "ls",
        "grep_search" => "grep",
        "glob" => "find",
        "git_status" | "git_commit" | "git_diff" => "git",
        "notify_user" => "notify",
        other => other,
    }
}

/// What another agent's tool name says about the call that ag's tool takes
/// as an argument: seed 003's `git_status` is ag-git with `action: status`.
/// Added when the call does not say it itself.
pub fn imply_arguments(called: &str, arguments: &mut Value) {
    let action = match called {
        "git_status" => "status",
        "git_diff" => "diff",
        "git_commit" => "commit",
        _ => return,
    };
    if let Some(map) = arguments.as_object_mut() {
        map.entry("action")
            .or_insert_with(|| Value::String(action.into()));
    }
}

/// Expands a tool list: set names (which may be mixed with tool names),
/// other agents' names for ag's tools, each tool once.
pub fn expand(list: &[String], cli_agents: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in list.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        let names = named_set(item, cli_agents).unwrap_or_else(|| vec![own_name(item).to_string()]);
        for name in names {
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_and_other_agents_names_expand_to_ag_tools() {
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            expand(&strings(&["chat"]), &[]),
            strings(&["notify", "ask"])
        );
        assert_eq!(expand(&strings(&["minimal"]), &[]), strings(DEFAULT_TOOLS));
        let agents = strings(&["codex_cli"]);
        let full = expand(&strings(&["full"]), &agents);
        assert_eq!(full.len(), DEFAULT_TOOLS.len() + 1);
        assert_eq!(full.last().map(String::as_str), Some("codex_cli"));
        // Seed 003's registry names, each ag tool once.
        assert_eq!(
            expand(
                &strings(&[
                    "read_file",
                    "git_status",
                    "git_diff",
                    "glob",
                    "grep",
                    "notify_user",
                    "bash"
                ]),
                &[]
            ),
            strings(&["read", "git", "find", "grep", "notify", "bash"])
        );
        // Every set named in the help expands.
        for (name, _) in SETS {
            assert!(named_set(name, &[]).is_some(), "{name}");
        }
    }
}
