//! `ag-loop --check`: what a run here would use, each with where it came
//! from, and whether it would work, without running anything: the model
//! and its key, one request to its server that costs no tokens, the
//! context window, the sandbox this kernel allows, the tools found, git,
//! and the project's instructions. Exit status 0 when a run would work.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::config::error::SetupError;
use super::config::file as config_file;
use super::setup::args::Args;
use super::setup::resume;
use super::setup::settings::{Env, LoopConfig};
use crate::cli::ExitStatus;
use crate::llm::error::FailureKind;
use crate::llm::ping::{Answer, KeySource};
use crate::llm::{Llm, LlmOptions};
use crate::proc::{CaptureLimit, Command, Output};
use crate::sandbox::{Enforcement, Policy};
use crate::tool_protocol::exec::ToolProgram;

/// One line of the report.
struct Item {
    /// What is checked (`model`, `key`, ...).
    name: &'static str,
    /// What was found.
    text: String,
    /// False when it stops a run.
    ok: bool,
}

/// Runs the check, prints the report (text, or one JSON object with
/// `--json`) and returns the exit status.
pub async fn run(args: &Args) -> ExitStatus {
    let items = match report(args).await {
        Ok(items) => items,
        Err(e) => {
            crate::cli::error_line("ag-loop", &e.to_string(), None);
            return ExitStatus::Input;
        }
    };
    let works = items.iter().all(|i| i.ok);
    let text = if args.json {
        let mut obj = serde_json::Map::new();
        for i in &items {
            obj.insert(
                i.name.replace(' ', "_"),
                json!({"ok": i.ok, "text": i.text}),
            );
        }
        obj.insert("works".into(), Value::Bool(works));
        format!("{}\n", Value::Object(obj))
    } else {
        let mut out = String::new();
        for i in &items {
            let mark = if i.ok { " " } else { "!" };
            out.push_str(&format!("{mark} {:<10} {}\n", i.name, i.text));
        }
        out.push_str(if works {
            "a run here would work\n"
        } else {
            "a run here would not work: see the lines marked !\n"
        });
        out
    };
    let _ = crate::cli::Stdout::new().write_all_flush(text.as_bytes());
    if works {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    }
}

async fn report(args: &Args) -> Result<Vec<Item>, SetupError> {
    let here = std::env::current_dir().map_err(SetupError::WorkingDir)?;
    let cwd = match &args.cwd {
        Some(c) => here
            .join(c)
            .canonicalize()
            .ok()
            .filter(|d| d.is_dir())
            .ok_or_else(|| SetupError::NotADirectory(c.clone()))?,
        None => here,
    };
    let config = config_file::load(args.config.as_deref())?;
    let env = Env::from_process();
    // A session to resume is read, not locked: nothing is run.
    let choice = super::setup::settings::session_choice(args);
    let existing = resume::existing(&choice, &crate::session::Store::from_env(), &cwd)?;
    let was = match &existing {
        Some(f) => resume::recorded(&f.path)?,
        None => Default::default(),
    };
    let (ident, _) = resume::identity(args, &was, &cwd)?;
    let resolved = LoopConfig::resolve(args, &config, ident.as_ref(), &env, &was)?;
    let mut items = Vec::new();
    model_items(args, &resolved, &mut items).await?;
    items.push(sandbox_item(&resolved, &cwd));
    items.push(tools_item(&resolved));
    items.push(git_item(&cwd).await);
    items.push(instructions_item(&cwd));
    Ok(items)
}

/// The model, its key, its server and its context window.
async fn model_items(
    args: &Args,
    resolved: &LoopConfig,
    items: &mut Vec<Item>,
) -> Result<(), SetupError> {
    let model = &resolved.model;
    if let Some(cmd) = &args.llm_cmd {
        items.push(Item {
            name: "model",
            text: format!("`{cmd}` answers (--llm-cmd); it is not asked here"),
            ok: true,
        });
        return Ok(());
    }
    let llm = Llm::new(LlmOptions {
        api_key: args.api_key.clone(),
        base_url: args.base_url.clone(),
        ag_home: None,
    })?;
    let known = match llm.check(model) {
        Err(f) if f.kind == FailureKind::ModelNotFound => {
            items.push(Item {
                name: "model",
                text: format!("{model}, from {}: {}", resolved.model_source, f.message),
                ok: false,
            });
            false
        }
        _ => {
            items.push(Item {
                name: "model",
                text: format!("{model}, from {}", resolved.model_source),
                ok: true,
            });
            true
        }
    };
    if !known {
        return Ok(());
    }
    let (text, ok) = match llm.key_source(model) {
        Some(KeySource::Flag) => ("set, from --api-key".to_string(), true),
        Some(KeySource::Config) => ("set, in models.json".to_string(), true),
        Some(KeySource::Env(v)) => (format!("set, from `{v}`"), true),
        Some(KeySource::NotNeeded) => ("none needed (a local server)".to_string(), true),
        Some(KeySource::Missing(vars)) => {
            let looked = if vars.is_empty() {
                "the provider names no variable; set `api_key_env` in models.json".to_string()
            } else {
                vars.iter()
                    .map(|v| format!("`{v}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let found = llm.local_servers().await;
            // The caller's own command, with the model that would work.
            let argv: Vec<String> = std::env::args().collect();
            let hint = crate::llm::local::no_key_hint(&llm, &argv, &found);
            (
                format!(
                    "not set (looked for {looked}; or pass --api-key){}",
                    hint.replace('\n', "\n             ")
                ),
                false,
            )
        }
        None => ("the provider is not configured".to_string(), false),
    };
    items.push(Item {
        name: "key",
        text,
        ok,
    });
    if !ok {
        return Ok(());
    }
    if let Some(p) = llm.ping(model).await {
        let ms = p.elapsed.as_millis();
        let (text, ok) = match &p.answer {
            Answer::Listed => (
                format!("answers: GET {} listed its models in {ms} ms", p.url),
                true,
            ),
            Answer::Status(s) => (
                format!(
                    "answers: GET {} gave HTTP {s} in {ms} ms (no model list there; the server is up)",
                    p.url
                ),
                true,
            ),
            Answer::KeyRefused(s) => (
                format!("refuses the key: GET {} gave HTTP {s}", p.url),
                false,
            ),
            Answer::Unreachable(why) => (format!("does not answer: GET {}: {why}", p.url), false),
        };
        items.push(Item {
            name: "server",
            text,
            ok,
        });
    }
    let window = match resolved.context_window {
        Some(w) => format!("{w} tokens, from $AG_CONTEXT_WINDOW"),
        None => match llm.context_window(model).await {
            Some(w) => format!("{} tokens, from {}", w.tokens, w.source),
            None => "unknown (not in the model table, and the server did not say): the conversation is never compacted; set `context_window` in models.json".to_string(),
        },
    };
    items.push(Item {
        name: "context",
        text: window,
        ok: true,
    });
    Ok(())
}

/// What the kernel lets the sandbox do for this run.
fn sandbox_item(resolved: &LoopConfig, cwd: &Path) -> Item {
    let choice = &resolved.sandbox;
    if choice.enforcement == Enforcement::Off {
        return Item {
            name: "sandbox",
            text: "off: tool calls run unconfined".into(),
            ok: true,
        };
    }
    let support = crate::sandbox::support();
    let mut policy = Policy::new(choice.mode, super::calls::sandbox::workspace(cwd));
    policy.net = choice.net;
    match support.missing(&policy) {
        None => Item {
            name: "sandbox",
            text: format!(
                "Landlock ABI {} and seccomp: every tool call is confined to {} ({}, network {})",
                support.landlock_abi,
                super::calls::sandbox::workspace(cwd).display(),
                match choice.mode {
                    crate::sandbox::Mode::ReadOnly => "read-only",
                    crate::sandbox::Mode::WorkspaceWrite => "writes in the workspace",
                },
                if choice.net { "allowed" } else { "refused" }
            ),
            ok: true,
        },
        Some(why) if choice.enforcement == Enforcement::Require => Item {
            name: "sandbox",
            text: format!("required but unavailable: {why}"),
            ok: false,
        },
        Some(why) => Item {
            name: "sandbox",
            text: format!("unavailable, so tool calls would run unconfined: {why}"),
            ok: true,
        },
    }
}

/// The tools of the run that are found, and those that are not. A name
/// in the tool list is a tool as the model sees it, and several are modes
/// of one binary (`git_status` and `git_log` are ag-git's, `edit_lines`
/// is ag-edit's): each is looked for as the run's tool set looks for it
/// (`ToolSet::load` groups the names by binary with
/// `crate::tools::offer::by_binary`), by its binary, not by its own name.
fn tools_item(resolved: &LoopConfig) -> Item {
    let (mut found, mut missing) = (Vec::new(), Vec::new());
    for name in &resolved.tools {
        let there = name == super::calls::ask::NAME
            || name == super::delegation::NAME
            || super::delegation::cli_agents::program(name).is_some()
            || ToolProgram::ag(binary_of(name)).is_some();
        if there {
            found.push(name.as_str());
        } else if binary_of(name) == name {
            missing.push(name.clone());
        } else {
            missing.push(format!("{name} (ag-{})", binary_of(name)));
        }
    }
    let mut text = format!("{} found: {}", found.len(), found.join(" "));
    if !missing.is_empty() {
        text.push_str(&format!(
            "; not found beside ag-loop or on PATH: {}",
            missing.join(" ")
        ));
    }
    text.push_str(&format!(
        "; plus {} --tool and {} --mcp",
        resolved.extra_tools.len(),
        resolved.mcp.len()
    ));
    Item {
        name: "tools",
        text,
        // A tool list that was named must be there whole; the default set
        // leaves out what is missing.
        ok: missing.is_empty() || !resolved.tools_explicit,
    }
}

/// The tool whose binary (`ag-<tool>`) makes the calls of the tool the
/// model calls `name`: the binary of a mode, else the name itself (as
/// `crate::tools::offer::by_binary` groups them).
fn binary_of(name: &str) -> &str {
    crate::tools::offer::find(name).map_or(name, |o| o.tool)
}

/// git's version, and whether the directory is in a repository (for the
/// checkpoints, which need git).
async fn git_item(cwd: &Path) -> Item {
    let cancel = CancellationToken::new();
    let run = |args: &'static [&'static str]| {
        Command::new("git")
            .args(args.iter().copied())
            .cwd(cwd)
            .timeout(Duration::from_secs(10))
            .output(Output::Separate {
                stdout: CaptureLimit::new(64 << 10),
                stderr: CaptureLimit::new(64 << 10),
            })
            .collect(&cancel)
    };
    let version = match run(&["--version"]).await {
        Ok(o) if o.code() == 0 => o.stdout.lossy().trim().to_string(),
        _ => {
            return Item {
                name: "git",
                text: "not installed: checkpoints are off (apt-get install git)".into(),
                ok: true,
            };
        }
    };
    let text = match run(&["rev-parse", "--show-toplevel"]).await {
        Ok(o) if o.code() == 0 => format!(
            "{version}; the repository at {} (checkpoints on ag's own ref)",
            o.stdout.lossy().trim()
        ),
        _ => format!("{version}; not a repository here (checkpoints use a shadow repository)"),
    };
    Item {
        name: "git",
        text,
        ok: true,
    }
}

/// The project's instructions (AGENTS.md and the like) and MEMORY.md that
/// the system prompt would carry.
fn instructions_item(cwd: &Path) -> Item {
    let mut files: Vec<String> = super::config::prompt::local_project_files(cwd)
        .iter()
        .map(|(p, text)| format!("{} ({} bytes)", p.display(), text.len()))
        .collect();
    files.extend(
        super::config::prompt::memory_files(Some(cwd))
            .iter()
            .map(|(p, text)| format!("{} ({} bytes)", p.display(), text.len())),
    );
    Item {
        name: "AGENTS.md",
        text: if files.is_empty() {
            "none found (AGENTS.md, CLAUDE.md or MEMORY.md would be read)".into()
        } else {
            files.join(", ")
        },
        ok: true,
    }
}
