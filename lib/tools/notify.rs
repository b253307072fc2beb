//! `notify`: the model tells the person something without ending its turn
//! (a question it will not wait for, progress on a long job, a warning).
//! ag-loop turns the result into a `notify` event; a desktop notification
//! is sent too where `notify-send` exists.

use std::time::Duration;

use clap::Args;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::tool_protocol::{Context, Tool, ToolError, ToolOutput};

/// How urgent a notification is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    // Progress or a remark.
    Info,
    // Something the person should look at.
    Warning,
    // Something went wrong that needs the person.
    Urgent,
}

/// Arguments of `notify`.
#[derive(Debug, Clone, Args, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotifyArgs {
    /// What to tell the person, in a sentence or two.
    #[arg(value_name = "MESSAGE")]
    #[schemars(description = "")]
    pub message: String,
    /// `info` (default), `warning` or `urgent`.
    #[arg(long, value_enum)]
    #[serde(default)]
    #[schemars(description = "")]
    pub level: Option<Level>,
}

/// The `notify` tool.
pub struct NotifyTool;

impl Tool for NotifyTool {
    type Args = NotifyArgs;
    const NAME: &'static str = "notify";
    const LABEL: &'static str = "Notify";
    const BIN: &'static str = "ag-notify";
    const ABOUT: &'static str = "Tell the person something without ending the turn";
    const DESCRIPTION: &'static str = "Tell the person watching something now, without ending your turn: \
progress on a long job, a decision you made that they may want to know, or a warning. \
It does not wait for an answer; keep working after it. \
Shown in the agent's event stream and, where the desktop supports it, as a notification.";
    const MODEL_DESCRIPTION: &'static str = "Tell the person watching something now (progress, a decision, a warning) without ending your turn.";

    fn run(_ctx: &Context, args: NotifyArgs) -> Result<ToolOutput, ToolError> {
        let message = args.message.trim();
        if message.is_empty() {
            return Err(ToolError::new(
                "notify.empty",
                "`message` is empty; say what the person should know",
            ));
        }
        let level = args.level.unwrap_or(Level::Info);
        let urgency = match level {
            Level::Info => "low",
            Level::Warning => "normal",
            Level::Urgent => "critical",
        };
        // Best effort: without a desktop (CI, ssh) notify-send is absent or fails.
        let desktop = std::env::var_os("AG_NO_DESKTOP_NOTIFY").is_none()
            && crate::proc::Command::new("notify-send")
                .arg("--app-name=ag")
                .arg("--urgency")
                .arg(urgency)
                .arg("ag")
                .arg(message)
                .timeout(Duration::from_secs(5))
                .run()
                .is_ok_and(|o| o.code() == 0);
        let level_name = match level {
            Level::Info => "info",
            Level::Warning => "warning",
            Level::Urgent => "urgent",
        };
        Ok(ToolOutput::new(
            "The person was notified; carry on.",
            json!({"message": message, "level": level_name, "desktop": desktop}),
        ))
    }
}
