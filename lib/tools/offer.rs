//! The tools as a model sees them: one tool for one job. The binaries
//! `ag-bash`, `ag-git` and `ag-todo` each keep their modes (background
//! jobs, git actions, list edits); ag-loop and ag-mcp offer the model one
//! tool per mode instead, whose every field applies to every call, because
//! a small model fills in every field it is shown (issue 34). Each offered
//! tool keeps some fields of its binary's schema and adds the fields that
//! choose the mode, so a call to it is a call of the binary.
//!
//! A call in the binary's own shape (`bash` with `list_jobs`, `git` with
//! `action`) still lands: it runs as the offered tool its fields choose,
//! when that one is offered, with a note that names it.

use serde_json::{Map, Value};

use crate::protocol::{ToolDefinition, ToolResult};
use crate::tool_protocol::{ArgsCheck, hashes};

/// One tool as the model sees it: a mode of a tool binary.
#[derive(Debug)]
pub struct Offered {
    /// The name the model calls it by.
    pub name: &'static str,
    /// The tool (binary `ag-<tool>`) whose calls it makes.
    pub tool: &'static str,
    /// A short human-readable name.
    pub label: &'static str,
    /// What it does, for the model.
    pub description: &'static str,
    /// The binary's fields it shows, in this order.
    pub fields: &'static [&'static str],
    /// Which of them a call must give.
    pub required: &'static [&'static str],
    /// The fields that choose the mode, as a JSON object: added to every
    /// call that does not set them itself.
    pub fixed: &'static str,
    /// It only looks, never changes anything.
    pub read_only: bool,
    /// What it lets the model do: a call whose fields choose a tool the run
    /// does not offer still lands when an offered tool of the same binary
    /// has the same capability (an `edit` with `line_edits` where only
    /// `edit` is offered), and is refused when none has (a background job
    /// where only `bash` is).
    pub capability: &'static str,
}

/// Every offered tool, grouped by binary in the order a tool list offers
/// them. A tool binary that is not here is offered whole.
pub const OFFERED: &[Offered] = &[
    Offered {
        name: "bash",
        tool: "bash",
        label: "Run Shell Command",
        description: "Run a shell command (bash -c, no stdin); the output ends with `exit code: N`. timeout is in seconds, default 180.",
        fields: &["command", "timeout", "cwd"],
        required: &["command"],
        fixed: "{}",
        read_only: false,
        capability: "run",
    },
    Offered {
        name: "bash_background",
        tool: "bash",
        label: "Start Background Job",
        description: "Start a shell command as a background job (a server, a watcher) and return its job id at once; its output goes to a log. The job ends with the session unless keep is true.",
        fields: &["command", "cwd", "keep"],
        required: &["command"],
        fixed: r#"{"background":true}"#,
        read_only: false,
        capability: "jobs",
    },
    Offered {
        name: "job_output",
        tool: "bash",
        label: "Background Job Output",
        description: "A background job's state and the last lines of its log (default 50).",
        fields: &["job", "lines"],
        required: &["job"],
        fixed: "{}",
        read_only: true,
        capability: "jobs",
    },
    Offered {
        name: "job_stop",
        tool: "bash",
        label: "Stop Background Job",
        description: "Stop a background job and everything it started; job `all` stops every running job.",
        fields: &["job"],
        required: &["job"],
        fixed: r#"{"stop":true}"#,
        read_only: false,
        capability: "jobs",
    },
    Offered {
        name: "job_list",
        tool: "bash",
        label: "List Background Jobs",
        description: "List the background jobs and their state.",
        fields: &[],
        required: &[],
        fixed: r#"{"list_jobs":true}"#,
        read_only: true,
        capability: "jobs",
    },
    Offered {
        name: "edit",
        tool: "edit",
        label: "Edit File",
        description: "Replace old_string with new_string in a file. Copy old_string exactly as read shows it, without the line numbers; it must occur once, unless replace_all.",
        fields: &["file_path", "old_string", "new_string", "replace_all"],
        required: &["file_path", "old_string", "new_string"],
        fixed: "{}",
        read_only: false,
        capability: "edit",
    },
    Offered {
        name: "multi_edit",
        tool: "edit",
        label: "Edit File in Several Places",
        description: "Several replacements in one file, each an old_string and a new_string as in edit, applied in order; all are made or none.",
        fields: &["file_path", "edits"],
        required: &["file_path", "edits"],
        fixed: "{}",
        read_only: false,
        capability: "edit",
    },
    Offered {
        name: "edit_lines",
        tool: "edit",
        label: "Edit File Lines",
        description: "Replace lines of a file by the numbers read shows: each line edit replaces start_line to end_line with replacement.",
        fields: &["file_path", "line_edits"],
        required: &["file_path", "line_edits"],
        fixed: "{}",
        read_only: false,
        capability: "edit",
    },
    Offered {
        name: "edit_sketch",
        tool: "edit",
        label: "Edit File by Sketch",
        description: "Edit a file by giving the new code of the changed part, unchanged code left out behind a marker line such as `// ... existing code ...` (in the file's comment syntax); begin and end each changed stretch with unchanged lines. instructions: what it changes, in one sentence.",
        fields: &["file_path", "code_edit", "instructions"],
        required: &["file_path", "code_edit"],
        fixed: "{}",
        read_only: false,
        capability: "edit",
    },
    Offered {
        name: "git_status",
        tool: "git",
        label: "Git Status",
        description: "The branch, its upstream and the staged, unstaged, untracked and conflicted files; paths narrows it.",
        fields: &["paths"],
        required: &[],
        fixed: r#"{"action":"status"}"#,
        read_only: true,
        capability: "look",
    },
    Offered {
        name: "git_diff",
        tool: "git",
        label: "Git Diff",
        description: "The unstaged changes as a unified diff, or with staged the staged ones; paths narrows it.",
        fields: &["paths", "staged"],
        required: &[],
        fixed: r#"{"action":"diff"}"#,
        read_only: true,
        capability: "look",
    },
    Offered {
        name: "git_log",
        tool: "git",
        label: "Git Log",
        description: "The latest count commits, newest first (default 10); paths narrows it.",
        fields: &["count", "paths"],
        required: &[],
        fixed: r#"{"action":"log"}"#,
        read_only: true,
        capability: "look",
    },
    Offered {
        name: "git_commit",
        tool: "git",
        label: "Git Commit",
        description: "Commit with message, never pushing: with paths, stages and commits exactly those files; without, commits what is staged.",
        fields: &["message", "paths"],
        required: &["message"],
        fixed: r#"{"action":"commit"}"#,
        read_only: false,
        capability: "commit",
    },
    Offered {
        name: "lsp_diagnostics",
        tool: "lsp",
        label: "Diagnostics",
        description: "The errors and warnings the language server finds in files.",
        fields: &["paths"],
        required: &["paths"],
        fixed: r#"{"action":"diagnostics"}"#,
        read_only: true,
        capability: "lsp",
    },
    Offered {
        name: "lsp_definition",
        tool: "lsp",
        label: "Go to Definition",
        description: "Where a symbol is defined, by the language server: symbol as the file writes it, line where it is used (or Class.method).",
        fields: &["file_path", "symbol", "line"],
        required: &["file_path", "symbol"],
        fixed: r#"{"action":"definition"}"#,
        read_only: true,
        capability: "lsp",
    },
    Offered {
        name: "lsp_references",
        tool: "lsp",
        label: "Find References",
        description: "Every use of a symbol in the project, by the language server (not a text search: a method of the same name on another class is left out). symbol as the file writes it, line where it is.",
        fields: &["file_path", "symbol", "line"],
        required: &["file_path", "symbol"],
        fixed: r#"{"action":"references"}"#,
        read_only: true,
        capability: "lsp",
    },
    Offered {
        name: "lsp_hover",
        tool: "lsp",
        label: "Symbol Info",
        description: "A symbol's type and documentation, by the language server.",
        fields: &["file_path", "symbol", "line"],
        required: &["file_path", "symbol"],
        fixed: r#"{"action":"hover"}"#,
        read_only: true,
        capability: "lsp",
    },
    Offered {
        name: "lsp_symbols",
        tool: "lsp",
        label: "File Outline",
        description: "A file's classes, functions, methods and other symbols with their lines.",
        fields: &["file_path"],
        required: &["file_path"],
        fixed: r#"{"action":"symbols"}"#,
        read_only: true,
        capability: "lsp",
    },
    Offered {
        name: "lsp_workspace_symbols",
        tool: "lsp",
        label: "Find Symbol",
        description: "The project's symbols (classes, functions, ...) whose name matches query, with where they are.",
        fields: &["query"],
        required: &["query"],
        fixed: r#"{"action":"symbols"}"#,
        read_only: true,
        capability: "lsp",
    },
    Offered {
        name: "todo",
        tool: "todo",
        label: "Task List",
        description: "Write this job's task list: items is the whole list, in order, each with content and status (pending, in_progress or done). Mark an item in_progress when you start it, done when finished.",
        fields: &["items"],
        required: &["items"],
        fixed: r#"{"action":"set"}"#,
        read_only: false,
        capability: "todo",
    },
    Offered {
        name: "browser_navigate",
        tool: "browser",
        label: "Open Page",
        description: "Open url in the browser (http://localhost:PORT for the app you run, or a file in the workspace) and return the page's snapshot.",
        fields: &["url"],
        required: &["url"],
        fixed: r#"{"action":"navigate"}"#,
        read_only: false,
        capability: "browse",
    },
    Offered {
        name: "browser_back",
        tool: "browser",
        label: "Go Back",
        description: "Go back one page in the browser and return its snapshot.",
        fields: &[],
        required: &[],
        fixed: r#"{"action":"back"}"#,
        read_only: false,
        capability: "browse",
    },
    Offered {
        name: "browser_reload",
        tool: "browser",
        label: "Reload Page",
        description: "Reload the page and return its snapshot.",
        fields: &[],
        required: &[],
        fixed: r#"{"action":"reload"}"#,
        read_only: false,
        capability: "browse",
    },
    Offered {
        name: "browser_snapshot",
        tool: "browser",
        label: "Page Snapshot",
        description: "The page as an accessibility snapshot: a line per element, with a ref (e1, e2, ...) on each control to act on. A long one is cut; offset reads on.",
        fields: &["offset"],
        required: &[],
        fixed: r#"{"action":"snapshot"}"#,
        read_only: true,
        capability: "browse",
    },
    Offered {
        name: "browser_click",
        tool: "browser",
        label: "Click",
        description: "Click the element ref (from the latest snapshot); returns the new snapshot.",
        fields: &["ref"],
        required: &["ref"],
        fixed: r#"{"action":"click"}"#,
        read_only: false,
        capability: "browse",
    },
    Offered {
        name: "browser_type",
        tool: "browser",
        label: "Type Text",
        description: "Type text into the field ref, replacing its content; submit presses Enter after. Returns the new snapshot.",
        fields: &["ref", "text", "submit"],
        required: &["ref", "text"],
        fixed: r#"{"action":"type"}"#,
        read_only: false,
        capability: "browse",
    },
    Offered {
        name: "browser_press_key",
        tool: "browser",
        label: "Press Key",
        description: "Press key in the page (Enter, Tab, Escape, ArrowDown, a character, Control+a); returns the new snapshot.",
        fields: &["key"],
        required: &["key"],
        fixed: r#"{"action":"press"}"#,
        read_only: false,
        capability: "browse",
    },
    Offered {
        name: "browser_select_option",
        tool: "browser",
        label: "Select Option",
        description: "Choose values (by value or label) in the select element ref; returns the new snapshot.",
        fields: &["ref", "values"],
        required: &["ref", "values"],
        fixed: r#"{"action":"select"}"#,
        read_only: false,
        capability: "browse",
    },
    Offered {
        name: "browser_hover",
        tool: "browser",
        label: "Hover",
        description: "Move the mouse over the element ref.",
        fields: &["ref"],
        required: &["ref"],
        fixed: r#"{"action":"hover"}"#,
        read_only: false,
        capability: "browse",
    },
    Offered {
        name: "browser_wait_for",
        tool: "browser",
        label: "Wait For",
        description: "Wait until text shows on the page (timeout seconds, default 10).",
        fields: &["text", "timeout"],
        required: &["text"],
        fixed: r#"{"action":"wait"}"#,
        read_only: true,
        capability: "browse",
    },
    Offered {
        name: "browser_screenshot",
        tool: "browser",
        label: "Screenshot",
        description: "A PNG of the page as the user sees it (full_page: all of it), or of the element ref.",
        fields: &["ref", "full_page"],
        required: &[],
        fixed: r#"{"action":"screenshot"}"#,
        read_only: true,
        capability: "browse",
    },
    Offered {
        name: "browser_console",
        tool: "browser",
        label: "Console Messages",
        description: "The page's console messages, errors and failed network requests since the last look.",
        fields: &[],
        required: &[],
        fixed: r#"{"action":"console"}"#,
        read_only: true,
        capability: "browse",
    },
    Offered {
        name: "browser_evaluate",
        tool: "browser",
        label: "Run JavaScript",
        description: "Run JavaScript in the page (an expression; a promise is awaited) and return its value as JSON.",
        fields: &["expression"],
        required: &["expression"],
        fixed: r#"{"action":"evaluate"}"#,
        read_only: false,
        capability: "script",
    },
    Offered {
        name: "browser_tabs",
        tool: "browser",
        label: "List Tabs",
        description: "The browser's open tabs, by number, with the current one marked.",
        fields: &[],
        required: &[],
        fixed: r#"{"action":"tab_list"}"#,
        read_only: true,
        capability: "browse",
    },
    Offered {
        name: "browser_tab_open",
        tool: "browser",
        label: "Open Tab",
        description: "Open a new tab (at url, if given) and make it current.",
        fields: &["url"],
        required: &[],
        fixed: r#"{"action":"tab_open"}"#,
        read_only: false,
        capability: "browse",
    },
    Offered {
        name: "browser_tab_switch",
        tool: "browser",
        label: "Switch Tab",
        description: "Make tab (its number in browser_tabs) the current tab.",
        fields: &["tab"],
        required: &["tab"],
        fixed: r#"{"action":"tab_switch"}"#,
        read_only: false,
        capability: "browse",
    },
    Offered {
        name: "browser_tab_close",
        tool: "browser",
        label: "Close Tab",
        description: "Close tab (its number in browser_tabs).",
        fields: &["tab"],
        required: &["tab"],
        fixed: r#"{"action":"tab_close"}"#,
        read_only: false,
        capability: "browse",
    },
];

/// The offered tool of this name.
pub fn find(name: &str) -> Option<&'static Offered> {
    OFFERED.iter().find(|o| o.name == name)
}

/// The offered tools that make `tool`'s calls; none when the binary is
/// offered whole.
pub fn of_tool(tool: &str) -> impl Iterator<Item = &'static Offered> + '_ {
    OFFERED.iter().filter(move |o| o.tool == tool)
}

/// What a binary's name means in a tool list that a person wrote
/// (`--tools bash`): all of its offered tools, the capability the
/// multiplexed tool had; any other name means itself.
pub fn expand_binary(name: &str) -> Vec<String> {
    if is_split(name) {
        of_tool(name).map(|o| o.name.to_string()).collect()
    } else {
        vec![name.to_string()]
    }
}

/// Groups a tool list by binary, in order: each binary with the offered
/// tools of it that were named (`git_status`; `bash` is the offered
/// command tool alone), or `None` for all of them (`git`, or a binary
/// that is offered whole).
pub fn by_binary(names: &[String]) -> Vec<(String, Option<Vec<String>>)> {
    let mut out: Vec<(String, Option<Vec<String>>)> = Vec::new();
    for name in names {
        let (tool, part) = match find(name) {
            Some(o) => (o.tool.to_string(), Some(name.clone())),
            None => (name.clone(), None),
        };
        match out.iter_mut().find(|(t, _)| *t == tool) {
            Some((_, named)) => match (named.as_mut(), part) {
                (Some(list), Some(part)) => list.push(part),
                _ => *named = None,
            },
            None => out.push((tool, part.map(|p| vec![p]))),
        }
    }
    out
}

/// True when `tool`'s binary is offered as tools of one mode each.
pub fn is_split(tool: &str) -> bool {
    of_tool(tool).next().is_some()
}

/// The offered tool a call of the whole binary runs as, from the fields
/// that choose its mode (as the binary chooses it), if one does. `None`
/// when the fields choose none (the binary then refuses or decides), or
/// choose a mode no offered tool makes (`todo` with `update`).
pub fn mode_of(tool: &str, arguments: &Value) -> Option<&'static Offered> {
    // An empty list is no mode (`"edits": []` beside a replacement).
    let given = |k: &str| {
        arguments
            .get(k)
            .is_some_and(|v| !v.is_null() && v.as_array().is_none_or(|a| !a.is_empty()))
    };
    let yes = |k: &str| arguments.get(k).and_then(Value::as_bool) == Some(true);
    let name = match tool {
        // ag-bash: a job first, then a command, then the list.
        "bash" if given("job") && yes("stop") => "job_stop",
        "bash" if given("job") => "job_output",
        "bash" if given("command") && yes("background") => "bash_background",
        "bash" if given("command") => "bash",
        "bash" if yes("list_jobs") => "job_list",
        // ag-edit makes every change a call gives, in one write: a call
        // with a replacement is an `edit` whatever else it carries, so it
        // lands wherever `edit` is offered.
        "edit" if given("old_string") || given("new_string") => "edit",
        "edit" if given("code_edit") => "edit_sketch",
        "edit" if given("line_edits") => "edit_lines",
        "edit" if given("edits") => "multi_edit",
        "lsp" if arguments.get("action").and_then(Value::as_str) == Some("symbols") => {
            if given("query") {
                "lsp_workspace_symbols"
            } else {
                "lsp_symbols"
            }
        }
        "git" | "todo" | "browser" | "lsp" => {
            let action = arguments.get("action").and_then(Value::as_str)?;
            return of_tool(tool).find(|o| o.fixed_value("action").as_deref() == Some(action));
        }
        _ => return None,
    };
    find(name)
}

impl Offered {
    /// The value this tool fixes for `field`, as JSON text's string, if a
    /// string.
    fn fixed_value(&self, field: &str) -> Option<String> {
        self.fixed_fields()
            .get(field)
            .and_then(Value::as_str)
            .map(str::to_string)
    }

    /// [`Offered::fixed`], parsed.
    pub fn fixed_fields(&self) -> Map<String, Value> {
        serde_json::from_str(self.fixed).unwrap_or_default()
    }

    /// Its definition, cut from the binary's (`whole`, from `--schema`):
    /// the fields it shows, with their schemas as the binary gives them.
    pub fn definition(&self, whole: &ToolDefinition) -> ToolDefinition {
        let mut parameters = whole.parameters.clone();
        if let Some(obj) = parameters.as_object_mut() {
            let props = obj
                .get("properties")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let kept: Map<String, Value> = self
                .fields
                .iter()
                .filter_map(|f| props.get(*f).map(|p| (f.to_string(), p.clone())))
                .collect();
            obj.insert("properties".into(), Value::Object(kept));
            set_required(obj, self.required);
        }
        ToolDefinition {
            name: self.name.to_string(),
            label: self.label.to_string(),
            description: self.description.to_string(),
            parameters,
        }
    }

    /// The check of its calls: the binary's whole schema, so that a field
    /// of another mode is the binary's to set aside or refuse, with this
    /// tool's required fields.
    pub fn check(&self, whole: &ToolDefinition) -> ArgsCheck {
        let mut schema = whole.parameters.clone();
        if let Some(obj) = schema.as_object_mut() {
            set_required(obj, self.required);
        }
        ArgsCheck::new(schema)
    }

    /// Adds the fields that choose its mode to a checked call, where the
    /// call does not set them itself (a call in the binary's own shape
    /// keeps its own).
    pub fn fill(&self, arguments: &mut Value) {
        if let Some(map) = arguments.as_object_mut() {
            for (k, v) in self.fixed_fields() {
                map.entry(k).or_insert(v);
            }
        }
    }
}

fn set_required(obj: &mut Map<String, Value>, required: &[&str]) {
    if required.is_empty() {
        obj.remove("required");
    } else {
        obj.insert(
            "required".into(),
            Value::Array(required.iter().map(|r| Value::from(*r)).collect()),
        );
    }
}

/// One offered tool of a loaded binary: its definition and its check.
pub struct Offer {
    /// What it is.
    pub offered: &'static Offered,
    /// Its definition, for the model.
    pub definition: ToolDefinition,
    check: ArgsCheck,
}

impl Offer {
    /// `offered`, cut from its binary's definition `whole`.
    pub fn new(offered: &'static Offered, whole: &ToolDefinition) -> Offer {
        Offer {
            offered,
            definition: offered.definition(whole),
            check: offered.check(whole),
        }
    }

    /// Normalizes and checks a call to it (see [`ArgsCheck::prepare`]),
    /// then adds the fields that choose its mode.
    pub fn prepare(&self, arguments: &mut Value) -> Result<(), String> {
        self.check.prepare(self.offered.name, arguments)?;
        self.offered.fill(arguments);
        Ok(())
    }
}

/// Where a call to a split binary goes.
#[derive(Debug)]
pub struct Route {
    /// The note for the result, when the call ran as another offered tool
    /// than the one it named.
    pub note: Option<String>,
}

/// A loaded binary that is offered split: its whole schema and check, and
/// the offered tools of it that a run offers.
pub struct Split {
    /// The binary's tool name (`git`).
    pub tool: String,
    /// The binary's whole parameter schema.
    pub schema: Value,
    /// The check by the whole schema, for calls in the binary's own shape.
    pub whole: ArgsCheck,
    /// The offered tools, in order.
    pub offers: Vec<Offer>,
}

impl Split {
    /// The offered tools of `whole` named in `names` (all of them when
    /// `names` is `None`).
    pub fn new(whole: &ToolDefinition, names: Option<&[String]>) -> Split {
        let offers = of_tool(&whole.name)
            .filter(|o| names.is_none_or(|n| n.iter().any(|x| x == o.name)))
            .map(|o| Offer::new(o, whole))
            .collect();
        Split {
            tool: whole.name.clone(),
            schema: whole.parameters.clone(),
            whole: ArgsCheck::new(whole.parameters.clone()),
            offers,
        }
    }

    /// True when `called` names one of its offered tools or the binary.
    pub fn answers(&self, called: &str) -> bool {
        called == self.tool || self.offers.iter().any(|o| o.offered.name == called)
    }

    /// Prepares a call named `called` (an offered tool, or the binary in
    /// its own shape) and says what it runs as. The mode the call's own
    /// fields choose wins over the name, when it is offered (`bash` with
    /// `list_jobs` lists the jobs); a mode that is not offered is refused.
    pub fn route(&self, called: &str, arguments: &mut Value) -> Result<Route, String> {
        // A caller that serves a model hides the stale-edit guard's hash
        // from it (see [`crate::tool_protocol::hashes`]): a hash the model
        // sends is a guess (`"..."`), dropped as the caller drops it for a
        // tool offered whole.
        if !crate::tool_protocol::lenient::declares(&self.schema, hashes::HASH_FIELD)
            && let Some(map) = arguments.as_object_mut()
        {
            hashes::drop_guessed_hash(map);
        }
        let named = self.offers.iter().find(|o| o.offered.name == called);
        let mut probe = arguments.clone();
        if let Value::Object(map) = &mut probe {
            // As the check will see it (empty values absent, and so on).
            let _ = crate::tool_protocol::lenient::normalize(&self.schema, map);
        }
        if let Some(o) = named {
            o.offered.fill(&mut probe);
        }
        let names: Vec<&str> = self.offers.iter().map(|o| o.offered.name).collect();
        let chosen = match (named, mode_of(&self.tool, &probe)) {
            (Some(o), Some(m)) if m.name == o.offered.name => Some(o),
            (_, Some(m)) => match self.offers.iter().find(|o| o.offered.name == m.name) {
                Some(o) => Some(o),
                // The binary runs it as it is: nothing the run did not
                // allow, and no tool named that the model does not have.
                None if self
                    .offers
                    .iter()
                    .any(|o| o.offered.capability == m.capability) =>
                {
                    None
                }
                None => {
                    return Err(format!(
                        "this call's fields make it a `{}` call, which is not among the tools here (of ag-{}'s tools, this run offers {}); nothing was run. Call one of those with the fields it takes.",
                        m.name,
                        self.tool,
                        names.join(", ")
                    ));
                }
            },
            // A mode field of the call's own that no offered tool makes
            // (`todo` with `update`): the binary's own shape.
            (Some(o), None) if !o.offered.agrees(&probe) => None,
            (named, None) => named,
        };
        match chosen {
            Some(o) => o.prepare(arguments)?,
            None => self.whole.prepare(called, arguments)?,
        }
        let note = chosen
            .filter(|o| o.offered.name != called)
            .map(|o| o.offered.ran_as(arguments));
        Ok(Route { note })
    }
}

impl Offered {
    /// True when `arguments` keep the values this tool fixes.
    fn agrees(&self, arguments: &Value) -> bool {
        self.fixed_fields()
            .iter()
            .all(|(k, v)| arguments.get(k).is_none_or(|a| a == v))
    }

    /// The note for a call that named another tool and ran as this one:
    /// the call in this tool's shape, with the call's own values.
    fn ran_as(&self, arguments: &Value) -> String {
        let shown: Map<String, Value> = self
            .fields
            .iter()
            .filter_map(|f| arguments.get(*f).map(|v| (f.to_string(), v.clone())))
            .collect();
        format!(
            "this call ran as `{}` {}; next time call `{}` like that.",
            self.name,
            Value::Object(shown),
            self.name
        )
    }
}

/// The environment variable that tells a tool binary which tools the model
/// it answers sees, comma-separated (`bash,job_output,read`): set by
/// ag-loop and ag-mcp on every call. A binary's advice then names the
/// offered tool and its call (`job_list`), never a mode field of the
/// binary the model was not shown (`list_jobs: true`), and leaves out what
/// the model has no tool for. Without it (the binary used by itself) the
/// advice is in the binary's own shape.
pub const MODEL_TOOLS_ENV: &str = "AG_MODEL_TOOLS";

/// The tools the model sees, from [`MODEL_TOOLS_ENV`]; `None` when the
/// binary is used by itself.
pub fn model_tools() -> Option<Vec<String>> {
    let list = std::env::var(MODEL_TOOLS_ENV).ok()?;
    Some(
        list.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

/// How a caller makes the call of the offered tool `name` with the fields
/// `arguments`, for advice in a binary's message: `` `job_output`
/// {"job":"3"} `` when a model sees `name` (see [`MODEL_TOOLS_ENV`]), the
/// binary's own call `{"job":"3","stop":true}` when the binary is used by
/// itself, and `None` when the model has no such tool, so that the advice
/// is left out rather than naming a tool it cannot call.
pub fn call_text(name: &str, arguments: Value) -> Option<String> {
    call_text_for(model_tools().as_deref(), name, arguments)
}

/// How a caller names another way of calling: the offered tool `name`
/// (`` `edit_lines` ``) when a model sees it, `standalone` (the binary's
/// field, `line_edits`) when the binary is used by itself, and `None` when
/// the model has no such tool.
pub fn way_text(name: &str, standalone: &str) -> Option<String> {
    match model_tools() {
        Some(seen) => seen.iter().any(|s| s == name).then(|| format!("`{name}`")),
        None => Some(standalone.to_string()),
    }
}

/// Whether the caller has the tool `name`: always when the binary is used
/// by itself, else when the model sees it (see [`MODEL_TOOLS_ENV`]).
pub fn has_tool(name: &str) -> bool {
    model_tools().is_none_or(|seen| seen.iter().any(|s| s == name))
}

/// [`call_text`] for a given list of the model's tools.
pub fn call_text_for(seen: Option<&[String]>, name: &str, arguments: Value) -> Option<String> {
    let offered = find(name)?;
    match seen {
        Some(seen) => seen
            .iter()
            .any(|s| s == name)
            .then(|| format!("`{name}` {arguments}")),
        None => {
            let mut call = arguments;
            offered.fill(&mut call);
            Some(call.to_string())
        }
    }
}

/// Adds a routing note to a result, as the tools write their notes.
pub fn add_note(result: &mut ToolResult, note: &str) {
    if !result.output.is_empty() && !result.output.ends_with('\n') {
        result.output.push('\n');
    }
    result.output.push_str(&format!("Note: {note}"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_offered_tool_fixes_an_object_and_names_its_binary_mode() {
        for o in OFFERED {
            assert!(
                serde_json::from_str::<Map<String, Value>>(o.fixed).is_ok(),
                "{}",
                o.name
            );
            for r in o.required {
                assert!(o.fields.contains(r), "{}: {r}", o.name);
            }
            // A call with just its fixed fields and its required ones is
            // its own mode.
            let mut call = Value::Object(o.fixed_fields());
            for r in o.required {
                call[*r] = json!("x");
            }
            assert_eq!(mode_of(o.tool, &call).map(|m| m.name), Some(o.name));
        }
    }

    fn split<T: crate::tool_protocol::Tool>(names: Option<&[&str]>) -> Split {
        let names: Option<Vec<String>> = names.map(|n| n.iter().map(|s| s.to_string()).collect());
        Split::new(&crate::tool_protocol::definition::<T>(), names.as_deref())
    }

    #[test]
    fn a_call_runs_as_the_offered_tool_its_fields_choose() {
        use crate::tools::bash::BashTool;
        use crate::tools::git::GitTool;
        use crate::tools::todo::TodoTool;
        let todo = split::<TodoTool>(None);
        // The offered tool's fields and its mode.
        let mut call = json!({"items": [{"content": "a"}]});
        assert!(todo.route("todo", &mut call).unwrap().note.is_none());
        assert_eq!(call["action"], "set");
        // The binary's own shape, in a mode no offered tool makes: as is.
        let mut call = json!({"action": "update", "id": 1, "status": "done"});
        assert!(todo.route("todo", &mut call).unwrap().note.is_none());
        assert_eq!(call["action"], "update");
        // The offered tool without what it needs is refused.
        let e = todo.route("todo", &mut json!({})).unwrap_err();
        assert!(e.contains("`items`"), "{e}");

        let git = split::<GitTool>(Some(&["git_status"]));
        let mut call = json!({});
        assert!(git.route("git_status", &mut call).unwrap().note.is_none());
        assert_eq!(call, json!({"action": "status"}));
        for called in ["git", "git_status"] {
            let e = git
                .route(called, &mut json!({"action": "commit", "message": "m"}))
                .unwrap_err();
            assert!(e.contains("`git_commit` call, which is not among"), "{e}");
        }

        let bash = split::<BashTool>(None);
        let note = bash
            .route("bash", &mut json!({"list_jobs": true}))
            .unwrap()
            .note
            .unwrap();
        assert!(note.starts_with("this call ran as `job_list` {}"), "{note}");
        // Empty values are no mode: `job: ""` beside a command runs it.
        let mut call = json!({"command": "ls", "job": "", "stop": false});
        assert!(bash.route("bash", &mut call).unwrap().note.is_none());
        let mut call = json!({"command": "make", "keep": true});
        let note = bash.route("bash_background", &mut call).unwrap().note;
        assert!(note.is_none(), "{note:?}");
        assert_eq!(call["background"], true);
    }

    #[test]
    fn a_mode_not_offered_lands_when_an_offered_tool_does_the_same() {
        use crate::tools::edit::EditTool;
        let mut whole = crate::tool_protocol::definition::<EditTool>();
        // As ag-loop and ag-mcp load it: the guard's hash hidden.
        crate::tool_protocol::hashes::hide_hash_field(&mut whole.parameters);
        let edit = Split::new(&whole, Some(&["edit".to_string()]));
        // Line edits where only `edit` is offered: run by the binary as
        // they are, with no note naming a tool the model does not have.
        let lines = json!([{"start_line": 1, "end_line": 1, "replacement": "x"}]);
        let mut call = json!({"file_path": "a", "line_edits": lines});
        let route = edit.route("edit", &mut call).unwrap();
        assert!(route.note.is_none(), "{route:?}");
        assert_eq!(call["line_edits"], lines);
        // A replacement beside an empty batch and a guessed hash (what
        // Qwen2.5-Coder-1.5B sent): an `edit`, the hash dropped.
        let mut call = json!({"file_path": "a", "old_string": "o", "new_string": "n",
            "edits": [], "expected_hash": "..."});
        assert!(edit.route("edit", &mut call).unwrap().note.is_none());
        assert!(call.get("expected_hash").is_none(), "{call}");
        // Named by the offered tool of another way: runs as the way its
        // fields choose, with the note that names it.
        let all = Split::new(&whole, None);
        let mut call = json!({"file_path": "a", "line_edits": lines});
        let note = all.route("edit", &mut call).unwrap().note.unwrap();
        assert!(note.starts_with("this call ran as `edit_lines`"), "{note}");
    }

    #[test]
    fn the_binarys_own_shape_finds_its_mode() {
        let mode = |tool, v: Value| mode_of(tool, &v).map(|m| m.name);
        assert_eq!(
            mode(
                "bash",
                json!({"command": "make", "keep": true, "list_jobs": true})
            ),
            Some("bash")
        );
        assert_eq!(mode("bash", json!({"list_jobs": true})), Some("job_list"));
        assert_eq!(
            mode("bash", json!({"job": "3", "stop": true})),
            Some("job_stop")
        );
        assert_eq!(
            mode("git", json!({"action": "commit", "staged": true})),
            Some("git_commit")
        );
        assert_eq!(mode("todo", json!({"action": "update", "id": 1})), None);
        assert_eq!(mode("read", json!({"path": "a"})), None);
    }
}
