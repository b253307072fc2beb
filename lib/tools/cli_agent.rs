//! `claude_code_cli`, `gemini_cli`, `codex_cli`: another coding agent's
//! headless mode as a tool (seed 003). The model hands a self-contained
//! task to Claude Code (`claude -p`), Gemini CLI (`gemini -p`) or Codex
//! (`codex exec`), which works in the given directory; the result is the
//! agent's final answer, with its duration, cost and turns when it reports
//! them. The agent runs through [`crate::proc`], in its own process group:
//! a time limit or ag-loop ending the call (SIGTERM to this tool) ends the
//! agent and everything it started.
//!
//! ag-loop runs these tools with the network and their provider's key,
//! which it withholds from every other tool (see `lib/agent/cli_agents.rs`).

use std::path::Path;
use std::time::Duration;

use clap::Args;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::proc::{self, Cancel, CaptureLimit, Output, Status, Stop, TerminationGuard};
use crate::tool_protocol::{Context, Tool, ToolError, ToolOutput};

/// How long a delegated task may run unless `AG_CLI_AGENT_TIMEOUT` says
/// otherwise (seconds): agents work for minutes, not hours.
const DEFAULT_TIMEOUT_SECS: u64 = 1800;
/// The variable that sets the time limit, in seconds.
pub const TIMEOUT_ENV: &str = "AG_CLI_AGENT_TIMEOUT";
/// Stdout kept from the agent (its JSON report, with the answer).
const MAX_STDOUT: usize = 4 << 20;
/// Stderr kept, for the error of a failed run.
const MAX_STDERR: usize = 16 << 10;
/// Characters of the answer handed back; the rest is cut in the middle.
const MAX_ANSWER_CHARS: usize = 50_000;

/// Arguments of a CLI agent tool (seed 003's `prompt` and
/// `workingDirectory`).
#[derive(Debug, Clone, Args, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CliAgentArgs {
    /// The task, complete and self-contained: the other agent does not see
    /// this conversation.
    #[arg(value_name = "PROMPT")]
    #[schemars(description = "")]
    pub prompt: String,
    /// The directory the agent works in (default: the current one).
    #[arg(long = "working-directory", value_name = "DIR")]
    #[serde(default, rename = "workingDirectory", alias = "working_directory")]
    #[schemars(description = "")]
    pub working_directory: Option<String>,
}

/// Which agent a tool wraps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    /// Claude Code, `claude`.
    Claude,
    /// Gemini CLI, `gemini`.
    Gemini,
    /// Codex CLI, `codex`.
    Codex,
}

impl Agent {
    /// The command looked for on `PATH`.
    pub fn command(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Gemini => "gemini",
            Agent::Codex => "codex",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Agent::Claude => "Claude Code",
            Agent::Gemini => "Gemini CLI",
            Agent::Codex => "Codex CLI",
        }
    }

    /// The headless command line: one task in, a JSON report out, no
    /// question asked (nobody is there to answer).
    fn argv(self, prompt: &str, dir: &Path) -> Vec<std::ffi::OsString> {
        let mut v: Vec<std::ffi::OsString> = Vec::new();
        let mut push = |s: &str| v.push(s.into());
        match self {
            // Edits are accepted; other permissions (shell commands outside
            // Claude's allow list) are refused rather than asked for.
            Agent::Claude => {
                for a in [
                    "-p",
                    "--output-format",
                    "json",
                    "--permission-mode",
                    "acceptEdits",
                    "--",
                ] {
                    push(a);
                }
            }
            Agent::Gemini => {
                for a in [
                    "--output-format",
                    "json",
                    "--approval-mode",
                    "auto_edit",
                    "-p",
                ] {
                    push(a);
                }
            }
            // Codex confines its own commands to the directory.
            Agent::Codex => {
                for a in [
                    "exec",
                    "--json",
                    "--skip-git-repo-check",
                    "--sandbox",
                    "workspace-write",
                    "--cd",
                ] {
                    push(a);
                }
                v.push(dir.as_os_str().to_owned());
                // The prompt is the last argument, after `--` so that one
                // starting with `-` is not read as a flag.
                v.push("--".into());
            }
        }
        v.push(prompt.into());
        v
    }
}

/// What the agent reported.
#[derive(Debug, Default, PartialEq)]
struct Report {
    answer: Option<String>,
    failed: Option<String>,
    details: Map<String, Value>,
}

/// Claude Code's `--output-format json`: one object with `result`,
/// `is_error`, `duration_ms`, `total_cost_usd`, `num_turns`, `session_id`.
fn parse_claude(stdout: &str) -> Option<Report> {
    let v: Value = stdout.lines().rev().find_map(|l| {
        serde_json::from_str::<Value>(l.trim())
            .ok()
            .filter(Value::is_object)
    })?;
    let mut r = Report {
        answer: v.get("result").and_then(Value::as_str).map(str::to_string),
        ..Report::default()
    };
    if v.get("is_error").and_then(Value::as_bool) == Some(true) {
        r.failed = Some(
            r.answer
                .clone()
                .or_else(|| v.get("subtype").and_then(Value::as_str).map(str::to_string))
                .unwrap_or_else(|| "it reported an error".into()),
        );
    }
    copy(
        &v,
        &mut r.details,
        &[
            ("duration_ms", "duration_ms"),
            ("total_cost_usd", "cost_usd"),
            ("num_turns", "num_turns"),
            ("session_id", "session_id"),
            ("usage", "usage"),
        ],
    );
    Some(r)
}

/// Gemini CLI's `--output-format json`: `response`, `stats`, `error`.
fn parse_gemini(stdout: &str) -> Option<Report> {
    let start = stdout.find('{')?;
    let v: Value = serde_json::from_str(stdout[start..].trim()).ok()?;
    let mut r = Report {
        answer: v
            .get("response")
            .and_then(Value::as_str)
            .map(str::to_string),
        ..Report::default()
    };
    if let Some(e) = v.get("error").filter(|e| !e.is_null()) {
        r.failed = Some(
            e.get("message")
                .and_then(Value::as_str)
                .map_or_else(|| e.to_string(), str::to_string),
        );
    }
    copy(
        &v,
        &mut r.details,
        &[("stats", "stats"), ("session_id", "session_id")],
    );
    Some(r)
}

/// Codex's `exec --json`: one event a line; the answer is the last
/// `agent_message`, the usage that of `turn.completed`.
fn parse_codex(stdout: &str) -> Option<Report> {
    let mut r = Report::default();
    let mut any = false;
    for v in stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
    {
        any = true;
        match v.get("type").and_then(Value::as_str) {
            Some("item.completed") => {
                let item = &v["item"];
                if item.get("type").and_then(Value::as_str) == Some("agent_message")
                    && let Some(t) = item.get("text").and_then(Value::as_str)
                {
                    r.answer = Some(t.to_string());
                }
            }
            Some("thread.started") => copy(&v, &mut r.details, &[("thread_id", "session_id")]),
            Some("turn.completed") => copy(&v, &mut r.details, &[("usage", "usage")]),
            Some("turn.failed") => {
                r.failed = v["error"]["message"].as_str().map(str::to_string);
            }
            Some("error") => {
                r.failed = v["message"].as_str().map(str::to_string);
            }
            _ => {}
        }
    }
    any.then_some(r)
}

fn copy(from: &Value, to: &mut Map<String, Value>, keys: &[(&str, &str)]) {
    for (src, dst) in keys {
        if let Some(x) = from.get(*src).filter(|x| !x.is_null()) {
            to.insert((*dst).to_string(), x.clone());
        }
    }
}

/// The time limit: `AG_CLI_AGENT_TIMEOUT` seconds, else 30 minutes.
fn timeout() -> Result<Duration, ToolError> {
    match std::env::var(TIMEOUT_ENV) {
        Err(_) => Ok(Duration::from_secs(DEFAULT_TIMEOUT_SECS)),
        Ok(s) => match s.trim().parse::<u64>() {
            Ok(n) if n > 0 => Ok(Duration::from_secs(n)),
            _ => Err(ToolError::new(
                "cli_agent.timeout",
                format!(
                    "{TIMEOUT_ENV}={s:?} is not a number of seconds; set it like {TIMEOUT_ENV}=1800"
                ),
            )),
        },
    }
}

/// Runs `agent` on the call's task.
pub fn run(agent: Agent, ctx: &Context, args: CliAgentArgs) -> Result<ToolOutput, ToolError> {
    let prompt = args.prompt.trim();
    if prompt.is_empty() {
        return Err(ToolError::new(
            "cli_agent.empty",
            "`prompt` is empty; give the whole task, as the other agent does not see this conversation",
        ));
    }
    let dir = ctx.resolve(args.working_directory.as_deref().unwrap_or("."))?;
    if !dir.is_dir() {
        return Err(ToolError::new(
            "cli_agent.dir",
            format!(
                "`workingDirectory` {} is not a directory; leave it out to work in the current one",
                ctx.show(&dir)
            ),
        ));
    }
    let limit = timeout()?;
    let label = agent.label();
    let io = |e: &dyn std::fmt::Display| {
        ToolError::new("cli_agent.io", format!("cannot run {label}: {e}"))
    };
    let cancel = Cancel::new().map_err(|e| io(&e))?;
    // ag-loop ending the call (SIGTERM) ends the agent's whole group.
    let _guard = TerminationGuard::install(&cancel).map_err(|e| io(&e))?;
    let outcome = proc::Command::new(agent.command())
        .args(agent.argv(prompt, &dir))
        .cwd(&dir)
        .timeout(limit)
        .cancel(&cancel)
        .output(Output::Separate {
            stdout: CaptureLimit::head_only(MAX_STDOUT),
            stderr: CaptureLimit::new(MAX_STDERR),
        })
        .run()
        .map_err(|e| match e {
            proc::Error::Spawn { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                ToolError::new(
                    "cli_agent.not_installed",
                    format!(
                        "`{}` is not installed (not on PATH); do the task yourself or with another tool",
                        agent.command()
                    ),
                )
            }
            other => io(&other),
        })?;
    let stdout = String::from_utf8_lossy(&outcome.stdout.head).into_owned();
    let stderr = outcome.stderr.lossy();
    let report = match agent {
        Agent::Claude => parse_claude(&stdout),
        Agent::Gemini => parse_gemini(&stdout),
        Agent::Codex => parse_codex(&stdout),
    };
    let mut details = report
        .as_ref()
        .map(|r| r.details.clone())
        .unwrap_or_default();
    details.insert("agent".into(), json!(agent.command()));
    details.insert("working_directory".into(), json!(ctx.show(&dir)));
    details
        .entry("duration_ms")
        .or_insert_with(|| json!(outcome.duration.as_millis() as u64));
    match outcome.stopped {
        Some(Stop::Timeout) => {
            return Err(ToolError::new(
                "cli_agent.timeout",
                format!(
                    "{label} did not finish within {} s and was stopped; give it a smaller task, or raise {TIMEOUT_ENV}",
                    limit.as_secs()
                ),
            )
            .with_details(Value::Object(details)));
        }
        Some(Stop::Cancelled(_)) => {
            return Err(
                ToolError::new("cli_agent.cancelled", format!("{label} was stopped"))
                    .with_details(Value::Object(details)),
            );
        }
        None => {}
    }
    let code = match outcome.status {
        Status::Exited(c) => c,
        _ => outcome.code(),
    };
    details.insert("exit_code".into(), json!(code));
    let failure = report.as_ref().and_then(|r| r.failed.clone()).or_else(|| {
        (code != 0).then(|| {
            let said = if stderr.trim().is_empty() {
                stdout.trim()
            } else {
                stderr.trim()
            };
            format!("exit {code}: {}", tail(said, 4000))
        })
    });
    if let Some(why) = failure {
        return Err(
            ToolError::new("cli_agent.failed", format!("{label} failed: {why}"))
                .with_details(Value::Object(details)),
        );
    }
    let answer = match report.and_then(|r| r.answer) {
        Some(a) => a,
        None => {
            return Err(ToolError::new(
                "cli_agent.no_answer",
                format!(
                    "{label} ended without a final answer{}",
                    match stderr.trim() {
                        "" => String::new(),
                        t => format!(": {}", tail(t, 4000)),
                    }
                ),
            )
            .with_details(Value::Object(details)));
        }
    };
    Ok(ToolOutput::new(cut(answer.trim()), Value::Object(details)))
}

/// The last `max` bytes of `s`, on a character boundary.
fn tail(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut i = s.len() - max;
    while !s.is_char_boundary(i) {
        i += 1;
    }
    &s[i..]
}

/// The answer, cut in the middle when longer than [`MAX_ANSWER_CHARS`].
fn cut(s: &str) -> String {
    let n = s.chars().count();
    if n <= MAX_ANSWER_CHARS {
        return s.to_string();
    }
    let head: String = s.chars().take(MAX_ANSWER_CHARS / 2).collect();
    let tail: String = s.chars().skip(n - MAX_ANSWER_CHARS / 2).collect();
    format!(
        "{head}\n[... {} characters of the answer cut ...]\n{tail}",
        n - MAX_ANSWER_CHARS
    )
}

macro_rules! agent_tool {
    ($ty:ident, $agent:expr, $name:literal, $bin:literal, $label:literal) => {
        #[doc = concat!("The `", $name, "` tool.")]
        pub struct $ty;

        impl Tool for $ty {
            type Args = CliAgentArgs;
            const NAME: &'static str = $name;
            const LABEL: &'static str = $label;
            const BIN: &'static str = $bin;
            const ABOUT: &'static str = concat!("Hand a coding task to ", $label);
            const DESCRIPTION: &'static str = concat!(
                "Hand a self-contained coding task to ",
                $label,
                ", another coding agent, run headless in the working directory (or `workingDirectory`); \
its final answer comes back, with its duration, and its cost when it reports one. \
Give it everything it needs in `prompt`: it does not see this conversation. \
It runs with its own configuration and key; ag-loop lets it reach its provider. \
The time limit is ",
                "AG_CLI_AGENT_TIMEOUT seconds (default 1800)."
            );
            const MODEL_DESCRIPTION: &'static str = concat!(
                "Delegate a self-contained coding task to ",
                $label,
                ", another coding agent working in the same directory; returns its final answer. \
It does not see this conversation: put everything it needs in `prompt`."
            );

            fn run(ctx: &Context, args: CliAgentArgs) -> Result<ToolOutput, ToolError> {
                run($agent, ctx, args)
            }
        }
    };
}

agent_tool!(
    ClaudeCodeTool,
    Agent::Claude,
    "claude_code_cli",
    "ag-claude-code-cli",
    "Claude Code"
);
agent_tool!(
    GeminiCliTool,
    Agent::Gemini,
    "gemini_cli",
    "ag-gemini-cli",
    "Gemini CLI"
);
agent_tool!(
    CodexCliTool,
    Agent::Codex,
    "codex_cli",
    "ag-codex-cli",
    "Codex CLI"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_report_gives_answer_cost_and_duration() {
        let out = r#"{"type":"result","subtype":"success","is_error":false,"duration_ms":1234,"num_turns":2,"result":"Done: fixed add.","session_id":"s1","total_cost_usd":0.0123}"#;
        let r = parse_claude(out).unwrap();
        assert_eq!(r.answer.as_deref(), Some("Done: fixed add."));
        assert!(r.failed.is_none());
        assert_eq!(r.details["cost_usd"], json!(0.0123));
        assert_eq!(r.details["duration_ms"], json!(1234));
        let bad = r#"{"type":"result","subtype":"error_max_turns","is_error":true}"#;
        assert_eq!(
            parse_claude(bad).unwrap().failed.as_deref(),
            Some("error_max_turns")
        );
        assert!(parse_claude("not json").is_none());
    }

    #[test]
    fn codex_events_give_the_last_message() {
        let out = concat!(
            "{\"type\":\"thread.started\",\"thread_id\":\"t1\"}\n",
            "{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"first\"}}\n",
            "{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"final\"}}\n",
            "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":5,\"output_tokens\":2}}\n"
        );
        let r = parse_codex(out).unwrap();
        assert_eq!(r.answer.as_deref(), Some("final"));
        assert_eq!(r.details["session_id"], json!("t1"));
        assert_eq!(r.details["usage"]["output_tokens"], json!(2));
        let failed = "{\"type\":\"turn.failed\",\"error\":{\"message\":\"401\"}}\n";
        assert_eq!(parse_codex(failed).unwrap().failed.as_deref(), Some("401"));
    }

    #[test]
    fn gemini_report_and_errors() {
        let r =
            parse_gemini("warning line\n{\"response\":\"ok\",\"stats\":{\"models\":{}}}").unwrap();
        assert_eq!(r.answer.as_deref(), Some("ok"));
        let e = parse_gemini("{\"error\":{\"message\":\"quota\"}}").unwrap();
        assert_eq!(e.failed.as_deref(), Some("quota"));
    }

    #[test]
    fn a_dash_prompt_stays_the_prompt() {
        for agent in [Agent::Codex, Agent::Claude] {
            let argv = agent.argv("--help me", Path::new("/w"));
            let n = argv.len();
            assert_eq!(argv[n - 2], "--");
            assert_eq!(argv[n - 1], "--help me");
        }
    }
}
