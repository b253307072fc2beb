//! The names a tool list may hold (`--tools`, `tools:` in a config or an
//! identity): the named sets, ag's tool names and other agents' names for
//! them. Plain names only, so that set-up, errors and the loop can all use
//! them without reaching into the tool set itself.

/// The core tools (files, shell, git, search, the task list), `notify`
/// and `ask`: seed 003's `minimal`, by the names the model sees (binary
/// `ag-<name>`, or the binary of an offered tool, see
/// [`crate::tools::offer`]; `ask` is ag-loop's own, answered by the loop;
/// the default set offers it only when someone can answer). `bash` here
/// is the command tool alone: the background-job tools cost every request
/// about 1,200 characters, and are offered when asked for (`--tools bash`).
/// ag-edit's ways of editing are a tool each: `edit` (a replacement) and
/// `edit_lines` here; `multi_edit` (`patch` does several changes at once)
/// and `edit_sketch` when asked for (`--tools edit`), each about 550
/// characters a request. A call in their shape lands anyway (see
/// [`crate::tools::offer::Offered::capability`]). `fetch` is offered when
/// named (`--tools full,fetch`): its definition would take the default
/// first request past its budget (tests/it/prompt_size.rs), and it is of
/// use only in a run whose network policy names hosts (`--allow-host`).
/// ag-browser's tools (`browser`, or seed 003's `browser_automation`) come
/// with `full` named in a list where Chromium is found, or when named;
/// their seventeen definitions would take the default first request past
/// its budget too (tests/it/prompt_size.rs).
pub const DEFAULT_TOOLS: &[&str] = &[
    "read",
    "write",
    "edit",
    "edit_lines",
    "patch",
    "delete",
    "bash",
    "grep",
    "find",
    "ls",
    "todo",
    "git_status",
    "git_diff",
    "git_log",
    "git_commit",
    "notify",
    "ask",
];

/// What the default set leaves out for a model with a small window
/// ([`SMALL_CONTEXT`]): `delete`. Measured on Qwen2.5-Coder-1.5B, such a
/// model called it in six runs, each time on a file it was asked to edit
/// (a function to delete, a debug print to remove), once on every file of
/// the project, and no task needed it; `bash` still removes a file, and
/// `--tools` (or a config or identity's `tools`) naming it offers it.
/// Such a run's patches delete no file either (`*** Delete File:`, a diff
/// to `/dev/null`): the model sent patches deleting every file it was
/// shown once `delete` was gone (see [`crate::tools::patch::NO_DELETE_ENV`]).
pub const SMALL_WINDOW_LEAVES_OUT: &[&str] = &["delete"];

/// Whether a run of the default set (`default_set`) with a model whose
/// `window` is small leaves out [`SMALL_WINDOW_LEAVES_OUT`].
pub fn small_window(default_set: bool, window: Option<u64>) -> bool {
    default_set && window.is_some_and(|w| w <= SMALL_CONTEXT)
}

/// The tools to load of `tools` as resolved: all of them, but for the
/// default set (`default_set`) and a model whose `window` is small, less
/// [`SMALL_WINDOW_LEAVES_OUT`].
pub fn for_window(tools: &[String], default_set: bool, window: Option<u64>) -> Vec<String> {
    let small = small_window(default_set, window);
    tools
        .iter()
        .filter(|n| !(small && SMALL_WINDOW_LEAVES_OUT.contains(&n.as_str())))
        .cloned()
        .collect()
}

/// The sets a tool list may name (seed 003's `full`, `minimal` and `chat`,
/// and two of ag's own), each with what it holds, for help and errors.
pub const SETS: &[(&str, &str)] = &[
    (
        "full",
        "minimal and the installed CLI agents; the default; named, it adds the browser's tools where Chromium is found",
    ),
    (
        "minimal",
        "read, write, edit, edit_lines, patch, delete, bash (commands; its jobs only by name), grep, find, ls, todo, git_status, git_diff, git_log, git_commit, notify, ask",
    ),
    (
        "basic",
        "read, write, edit (replacements), bash (commands): seed 002's four",
    ),
    (
        "small",
        "read, write, edit (replacements), bash (commands), grep, find, ls: a shorter prompt",
    ),
    ("readonly", "read, grep, find, ls"),
    ("chat", "notify and ask: the model talks"),
];

/// The `small` set: a tool for each everyday job and nothing else, as
/// pi offers (read, write, edit, bash, grep, find, ls).
pub const SMALL_TOOLS: &[&str] = &["read", "write", "edit", "bash", "grep", "find", "ls"];

/// Context windows up to this many tokens are a small model's: the small
/// models that struggle are served with windows this size (llama.cpp's
/// Qwen2.5-Coder-1.5B at 32,768). Their first call of a task is asked to
/// be a tool call (`--first-call`). They used to get [`SMALL_TOOLS`] by
/// default; measured with scripts/realmodel on that model, the default set
/// solved 14 of 74 task runs and `small` 8 (docs/models.md), so they keep
/// the default set, and `--tools small` is there for a tighter prompt. A
/// model whose window is unknown is not taken for a small one: the servers
/// small models run on all say their window when asked
/// (`crate::llm::discover`).
pub const SMALL_CONTEXT: u64 = 32_768;

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
        "small" => SMALL_TOOLS,
        "readonly" => &["read", "grep", "find", "ls"],
        "chat" => &["notify", "ask"],
        _ => return None,
    };
    Some(names.iter().map(|s| s.to_string()).collect())
}

/// The names other agents give ag's tools: seed 003's registry (`read_file`,
/// `git_status`, `glob`, `notify_user`, ...) and seed 001's Cursor tools
/// (`grep_search`, `list_dir`, `delete_file`), and the web fetch tools of
/// Gemini CLI, opencode and Claude Code, so that their tool lists work as
/// written. Seed 003's `git_status`, `git_diff` and `git_commit`
/// are ag's own names (see [`crate::tools::offer`]).
pub fn own_name(name: &str) -> &str {
    match name {
        "read_file" => "read",
        "write_file" => "write",
        "edit_file" => "edit",
        "delete_file" => "delete",
        "list_dir" => "ls",
        "grep_search" => "grep",
        "glob" => "find",
        "notify_user" => "notify",
        "web_fetch" | "webfetch" | "WebFetch" => "fetch",
        // Seed 003's browser tool: all of ag-browser's tools.
        "browser_automation" => "browser",
        other => other,
    }
}

/// Expands a tool list: set names (which may be mixed with tool names),
/// other agents' names for ag's tools, each tool once.
pub fn expand(list: &[String], cli_agents: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in list.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        // A set's members are offered tools as they are (`basic`'s `bash`
        // is the command tool alone); a binary named in the list is all of
        // its tools (`bash` with its jobs), as the one tool it was.
        let names = named_set(item, cli_agents)
            .unwrap_or_else(|| crate::tools::offer::expand_binary(own_name(item)));
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
            strings(&[
                "read",
                "git_status",
                "git_diff",
                "find",
                "grep",
                "notify",
                "bash",
                "bash_background",
                "job_output",
                "job_stop",
                "job_list"
            ])
        );
        // A binary's name is all of its tools; a set's `bash` is the
        // command tool alone.
        assert_eq!(
            expand(&strings(&["git", "basic"]), &[]),
            strings(&[
                "git_status",
                "git_diff",
                "git_log",
                "git_commit",
                "read",
                "write",
                "edit",
                "bash"
            ])
        );
        // Every set named in the help expands.
        for (name, _) in SETS {
            assert!(named_set(name, &[]).is_some(), "{name}");
        }
    }
}
