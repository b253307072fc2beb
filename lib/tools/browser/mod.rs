//! `browser`: a headless Chromium the agent drives through the DevTools
//! protocol: open a page, read it as an accessibility snapshot with a ref
//! per control, click, type and press keys by ref, see a screenshot, read
//! the console and the failed requests, run JavaScript, and keep tabs.
//! Seed 003's `browser_automation`.
//!
//! One call is one run of ag-browser, as for every tool; the browser
//! itself outlives the call in a warm helper ([`crate::proc::warm`]): the
//! first call starts the server (this same binary, [`server`]) and
//! Chromium under it, later calls of the session reach it over its
//! socket, and it ends with the session, `kill -9` of ag-loop included.
//! What a page may load is judged request by request ([`confine`]).

pub mod cdp;
pub mod confine;
pub mod keys;
pub mod launch;
pub mod server;
pub mod snapshot;
pub mod wire;

use std::path::PathBuf;
use std::time::Duration;

use base64::Engine as _;
use clap::Args;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::protocol::ImageData;
use crate::tool_protocol::{Context, Note, Tool, ToolError, ToolOutput};
use wire::{Reply, Request};

/// The warm helper's name.
pub const HELPER: &str = "browser";

/// The longest `timeout` of `wait`, in seconds.
pub const MAX_WAIT_SECS: f64 = 60.0;

/// What a call does.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum BrowserAction {
    // Open `url` in the current tab.
    Navigate,
    // Go back one page.
    Back,
    // Load the page again.
    Reload,
    // The page as an accessibility snapshot, refs on its controls.
    Snapshot,
    // Click the element `ref`.
    Click,
    // Type `text` into the field `ref` (replacing what it held).
    Type,
    // Press `key` (Enter, Tab, Escape, ArrowDown, a letter, Control+a).
    Press,
    // Choose `values` in the select `ref`.
    Select,
    // Move the mouse over `ref`.
    Hover,
    // Wait until `text` shows, or `ref` is visible.
    Wait,
    // A PNG of the page, or of `ref`.
    Screenshot,
    // Console messages and failed requests since the last look.
    Console,
    // Run `expression` in the page and return its value.
    Evaluate,
    // The open tabs.
    TabList,
    // Open a tab (at `url`) and make it current.
    TabOpen,
    // Make tab `tab` current.
    TabSwitch,
    // Close tab `tab`.
    TabClose,
}

impl BrowserAction {
    /// The name in calls (`tab_open`).
    pub fn name(self) -> &'static str {
        match self {
            BrowserAction::Navigate => "navigate",
            BrowserAction::Back => "back",
            BrowserAction::Reload => "reload",
            BrowserAction::Snapshot => "snapshot",
            BrowserAction::Click => "click",
            BrowserAction::Type => "type",
            BrowserAction::Press => "press",
            BrowserAction::Select => "select",
            BrowserAction::Hover => "hover",
            BrowserAction::Wait => "wait",
            BrowserAction::Screenshot => "screenshot",
            BrowserAction::Console => "console",
            BrowserAction::Evaluate => "evaluate",
            BrowserAction::TabList => "tab_list",
            BrowserAction::TabOpen => "tab_open",
            BrowserAction::TabSwitch => "tab_switch",
            BrowserAction::TabClose => "tab_close",
        }
    }
}

/// Arguments of `browser`.
#[derive(Debug, Clone, Args, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BrowserArgs {
    /// What to do: navigate (url), back, reload, snapshot (offset), click
    /// (ref), type (ref, text, submit), press (key), select (ref, values),
    /// hover (ref), wait (text or ref, timeout), screenshot (ref,
    /// full_page), console, evaluate (expression), tab_list, tab_open
    /// (url), tab_switch (tab), tab_close (tab).
    #[arg(value_enum, value_name = "ACTION")]
    #[schemars(description = "")]
    pub action: BrowserAction,
    /// The page to open: http(s)://..., a bare host:port (taken as http),
    /// or a file path inside the workspace.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// An element's ref from the latest snapshot (e3).
    #[arg(long = "ref", value_name = "REF")]
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub element: Option<String>,
    /// For type: the text (it replaces what the field held). For wait:
    /// the text to wait for.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// For type: press Enter after the text.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub submit: bool,
    /// A key: Enter, Tab, Escape, Backspace, ArrowDown, a character, or
    /// with modifiers (Control+a, Shift+Tab).
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The options to choose, by value or by label.
    #[arg(long = "value", value_name = "VALUE")]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    /// For wait: seconds to wait at most (default 10, at most 60).
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 60))]
    pub timeout: Option<f64>,
    /// For screenshot: the whole page, not just the viewport.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub full_page: bool,
    /// For evaluate: JavaScript, an expression or a function body's value
    /// (a promise is awaited).
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expression: Option<String>,
    /// A tab's number, as tab_list shows it.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub tab: Option<u32>,
    /// For snapshot: the line to start from, to read on in a long page.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub offset: Option<u64>,
    /// For screenshot from a shell: write the PNG to FILE rather than
    /// into the result.
    #[arg(long, value_name = "FILE")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub out: Option<PathBuf>,
    /// Let HOST be loaded too, beyond loopback (repeatable): a name
    /// (`docs.rs`), every name below a domain (`*.example.org`), an
    /// address, or `*` for any public host. Under ag-loop the run's
    /// network policy is added (ag-loop --allow-host, --allow-net).
    #[arg(long = "allow-host", value_name = "HOST")]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(skip)]
    pub allow_host: Vec<String>,
}

/// The `browser` tool.
pub struct BrowserTool;

impl Tool for BrowserTool {
    type Args = BrowserArgs;
    const NAME: &'static str = "browser";
    const BIN: &'static str = "ag-browser";
    const PROCESS_FLAGS: &'static [&'static str] = &["allow_host"];
    const ABOUT: &'static str =
        "Drive a headless Chromium: open, read (accessibility snapshot), click, type, screenshot";
    const LABEL: &'static str = "Browser";
    const DESCRIPTION: &'static str = "Drive a headless Chromium through the DevTools protocol. \
The browser stays open between calls (a warm helper per session, ended with the session, or after \
15 minutes idle when run from a shell), with a fresh profile in a temporary directory. \
action=navigate opens url; back and reload. action=snapshot gives the page's accessibility tree \
as text, one line per node, with a ref (e1, e2, ...) on every control; a snapshot over 20,000 \
characters is cut, and offset reads on. click, type (text, replacing the field's content; submit \
presses Enter after), select (values, by value or label) and hover act on a ref of the latest \
snapshot; press presses key (Enter, Tab, Escape, ArrowDown, Control+a). Calls that may change the \
page return the new snapshot. wait waits for text to show or ref to be visible (timeout, default \
10 s). screenshot returns a PNG of the viewport, the whole page (full_page) or one element (ref), \
as an image in the result, or into --out FILE. console gives the console messages, page errors \
and failed requests since it was last called. evaluate runs JavaScript in the page and returns \
its value as JSON. tab_list, tab_open (url), tab_switch and tab_close (tab) handle tabs. \
Every request of every tab is judged: loopback always; other hosts only as the run's network \
policy allows (ag-loop --allow-host, --allow-net; here --allow-host); file: URLs only inside the \
workspace; a refused request fails in the page and is reported with the reason. Downloads go to \
the working directory. Chromium is $AG_BROWSER, else chromium or google-chrome on PATH.";
    const MODEL_DESCRIPTION: &'static str = "Drive a web browser.";
    const EXIT_STATUS: &'static str =
        "Exit status: 0 success, 1 the action failed or was refused, 2 usage or input error.";

    fn run(ctx: &Context, args: BrowserArgs) -> Result<ToolOutput, ToolError> {
        check(&args)?;
        let workspace = ctx.root.clone().unwrap_or_else(|| ctx.cwd.clone());
        let mut hosts: Vec<String> = std::env::var(crate::tools::fetch::policy::HOSTS_ENV)
            .map(|l| {
                l.split(',')
                    .map(str::trim)
                    .filter(|e| !e.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        hosts.extend(args.allow_host.iter().cloned());
        let request = Request {
            args: args.clone(),
            rules: confine::Rules { hosts, workspace },
            cwd: ctx.cwd.clone(),
            budget: crate::tools::budget::from_env(),
        };
        let line = serde_json::to_string(&request)
            .map_err(|e| ToolError::new("browser.io", format!("cannot encode the call: {e}")))?;
        let exe = std::env::current_exe().map_err(|e| {
            ToolError::new(
                "browser.start",
                format!("cannot find ag-browser itself: {e}"),
            )
        })?;
        let warm = crate::proc::warm::Warm::new(HELPER, exe)
            .map_err(|e| ToolError::new("browser.start", e.to_string()))?;
        let limit = Duration::from_secs(60)
            + Duration::from_secs_f64(args.timeout.unwrap_or(0.0).clamp(0.0, MAX_WAIT_SECS));
        let answer = warm.request(&line, limit).map_err(|e| {
            ToolError::new(
                "browser.helper",
                format!("the browser could not be reached: {e}"),
            )
        })?;
        let reply: Reply = serde_json::from_str(&answer).map_err(|e| {
            ToolError::new(
                "browser.helper",
                format!("the browser's helper answered badly: {e}"),
            )
        })?;
        output(&args, reply)
    }
}

/// Refuses a call that lacks what its action needs, showing it corrected
/// where it can.
fn check(args: &BrowserArgs) -> Result<(), ToolError> {
    use BrowserAction as A;
    let need = |field: &str, what: &str| {
        Err(ToolError::new(
            "browser.missing_field",
            format!(
                "`{}` needs `{field}`: {what}; nothing was done. Call it again with `{field}`.",
                args.action.name()
            ),
        ))
    };
    match args.action {
        A::Navigate if args.url.as_deref().is_none_or(|u| u.trim().is_empty()) => {
            need("url", "the page to open")
        }
        A::Click | A::Type | A::Select | A::Hover if args.element.is_none() => need(
            "ref",
            "an element's ref from the latest snapshot (take one with the snapshot action)",
        ),
        A::Type if args.text.is_none() => need("text", "what to type"),
        A::Press if args.key.as_deref().is_none_or(|k| k.is_empty()) => {
            need("key", "the key to press, such as Enter")
        }
        A::Select if args.values.is_empty() => need("values", "the options to choose"),
        A::Wait if args.text.is_none() && args.element.is_none() => need(
            "text",
            "the text to wait for (or `ref`, an element to wait for)",
        ),
        A::Evaluate
            if args
                .expression
                .as_deref()
                .is_none_or(|e| e.trim().is_empty()) =>
        {
            need("expression", "the JavaScript to run")
        }
        A::TabSwitch | A::TabClose if args.tab.is_none() => {
            need("tab", "the tab's number, as tab_list shows it")
        }
        A::Snapshot if args.offset == Some(0) => Err(ToolError::new(
            "browser.bad_offset",
            "`offset` is a line number from 1; call snapshot again with offset 1 or more",
        )),
        _ => Ok(()),
    }
}

/// The server's reply as the tool's result: secrets redacted from the
/// text, the screenshot as an image (or into `--out`).
fn output(args: &BrowserArgs, reply: Reply) -> Result<ToolOutput, ToolError> {
    let secrets = crate::llm::keys::Redactor::for_this_machine();
    let text = secrets.text(&reply.text).into_owned();
    let mut details = reply.details;
    secrets.value(&mut details);
    if let Some(code) = reply.error_code {
        let code: &'static str = error_code(&code);
        return Err(ToolError::new(code, text).with_details(details));
    }
    let notes: Vec<Note> = reply
        .notes
        .iter()
        .map(|n| Note::notice(secrets.text(n).into_owned()))
        .collect();
    let mut out = ToolOutput::new(text, details).with_notes(notes);
    if reply.notes_first {
        out = out.notes_first();
    }
    if let Some(png) = reply.png {
        match &args.out {
            Some(path) => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(png.as_bytes())
                    .map_err(|e| {
                        ToolError::new("browser.io", format!("the screenshot is not base64: {e}"))
                    })?;
                crate::fsutil::write_atomic(path, None, &bytes, || Ok(true)).map_err(|e| {
                    ToolError::new(
                        "browser.write_failed",
                        format!("cannot write the screenshot to `{}`: {e}", path.display()),
                    )
                })?;
                out.output = format!(
                    "{}\nSaved the screenshot to {}.",
                    out.output,
                    path.display()
                );
                if let Value::Object(m) = &mut out.details {
                    m.insert("out".into(), json!(path.display().to_string()));
                }
            }
            None => out.images.push(ImageData {
                data: png,
                mime_type: "image/png".into(),
            }),
        }
    }
    Ok(out)
}

/// The server's error codes, as the static strings a [`ToolError`] holds.
fn error_code(code: &str) -> &'static str {
    const CODES: &[&str] = &[
        "browser.refused",
        "browser.navigation_failed",
        "browser.unknown_ref",
        "browser.not_visible",
        "browser.not_a_select",
        "browser.no_such_option",
        "browser.bad_key",
        "browser.timeout",
        "browser.script_error",
        "browser.no_such_tab",
        "browser.no_history",
        "browser.start",
        "browser.crashed",
        "browser.protocol",
        "browser.bad_request",
        "browser.bad_offset",
    ];
    CODES
        .iter()
        .find(|c| **c == code)
        .copied()
        .unwrap_or("browser.failed")
}
