//! The committed generated files match what the code generates now:
//! `schemas/*.json`, `man/*.1` and shell completions. `AG_BLESS=1` rewrites
//! them (`scripts/gen`).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The clap command of every binary, in the order the README lists them:
/// the source of the man pages and completions. It lives here, with the
/// only code that needs it, so that the library's `cli` layer imports no
/// module above it.
fn all_commands() -> Vec<clap::Command> {
    use ag::tool_protocol::tool_command;
    use ag::tools;
    vec![
        tool_command::<tools::read::ReadTool>(),
        tool_command::<tools::write::WriteTool>(),
        tool_command::<tools::edit::EditTool>(),
        tool_command::<tools::patch::PatchTool>(),
        tool_command::<tools::delete::DeleteTool>(),
        tool_command::<tools::bash::BashTool>(),
        tool_command::<tools::grep::GrepTool>(),
        tool_command::<tools::find::FindTool>(),
        tool_command::<tools::ls::LsTool>(),
        tool_command::<tools::fetch::FetchTool>(),
        tool_command::<tools::lsp::LspTool>(),
        tool_command::<tools::todo::TodoTool>(),
        tool_command::<tools::git::GitTool>(),
        tool_command::<tools::notify::NotifyTool>(),
        tool_command::<tools::cli_agent::ClaudeCodeTool>(),
        tool_command::<tools::cli_agent::GeminiCliTool>(),
        tool_command::<tools::cli_agent::CodexCliTool>(),
        <ag::gate::cli::Args as clap::CommandFactory>::command(),
        <ag::mcp::cli::Args as clap::CommandFactory>::command(),
        <ag::sandbox::cli::Args as clap::CommandFactory>::command(),
        ag::llm::cli::command(),
        <ag::agent::cli::Args as clap::CommandFactory>::command(),
        <ag::session::cli::Args as clap::CommandFactory>::command(),
        <ag::tui::Args as clap::CommandFactory>::command(),
        <ag::acp::Args as clap::CommandFactory>::command(),
        <ag::serve::Args as clap::CommandFactory>::command(),
        <ag::fanout::Args as clap::CommandFactory>::command(),
    ]
}

fn bless() -> bool {
    std::env::var_os("AG_BLESS").is_some_and(|v| v == "1")
}

/// Compares (or with AG_BLESS=1 writes) a set of generated files in `dir`;
/// files there that are no longer generated count as stale too.
fn check(dir: &Path, files: Vec<(String, Vec<u8>)>, sweep_ext: Option<&str>) {
    let mut stale = Vec::new();
    for (name, content) in &files {
        let path = dir.join(name);
        if std::fs::read(&path).ok().as_deref() != Some(content.as_slice()) {
            if bless() {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, content).unwrap();
            } else {
                stale.push(path.display().to_string());
            }
        }
    }
    if let (Some(ext), Ok(entries)) = (sweep_ext, std::fs::read_dir(dir)) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(ext) && !files.iter().any(|(n, _)| *n == name) {
                if bless() {
                    std::fs::remove_file(e.path()).unwrap();
                } else {
                    stale.push(format!("{} (no longer generated)", e.path().display()));
                }
            }
        }
    }
    assert!(
        stale.is_empty(),
        "generated files are stale:\n  {}\nRun `scripts/gen` (AG_BLESS=1 cargo test --test integration generated) and commit the result.",
        stale.join("\n  ")
    );
}

#[test]
fn schemas_are_current() {
    let files = ag::schema::all()
        .into_iter()
        .map(|(name, value)| {
            let mut text = serde_json::to_string_pretty(&value).unwrap();
            text.push('\n');
            (name.to_string(), text.into_bytes())
        })
        .collect();
    check(&root().join("schemas"), files, Some(".json"));
}

#[test]
fn man_pages_are_current() {
    let mut files = Vec::new();
    for cmd in all_commands() {
        let name = format!("{}.1", cmd.get_name());
        let mut out = Vec::new();
        clap_mangen::Man::new(cmd).render(&mut out).unwrap();
        files.push((name, out));
    }
    check(&root().join("man"), files, Some(".1"));
}

#[test]
fn completions_are_current() {
    use clap_complete::Shell;
    for (shell, dir) in [
        (Shell::Bash, "bash"),
        (Shell::Zsh, "zsh"),
        (Shell::Fish, "fish"),
    ] {
        let mut files = Vec::new();
        for mut cmd in all_commands() {
            let bin = cmd.get_name().to_string();
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut cmd, &bin, &mut out);
            let name = match shell {
                Shell::Bash => bin.clone(),
                Shell::Zsh => format!("_{bin}"),
                _ => format!("{bin}.fish"),
            };
            files.push((name, out));
        }
        // Bash and zsh completions have no extension; only fish's can be swept.
        let sweep = matches!(shell, Shell::Fish).then_some(".fish");
        check(&root().join("man/completions").join(dir), files, sweep);
    }
}

#[test]
fn every_command_is_well_formed() {
    for cmd in all_commands() {
        cmd.debug_assert();
    }
}

/// Golden protocol examples: each line parses into its type, serialises back
/// to the same JSON, and validates against the committed schema.
#[test]
fn protocol_examples_round_trip_and_validate() {
    use ag::protocol::*;
    fn round<T: serde::de::DeserializeOwned + serde::Serialize>(
        v: &serde_json::Value,
    ) -> serde_json::Value {
        let typed: T = serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{e}: {v}"));
        serde_json::to_value(typed).unwrap()
    }
    let dir = root().join("tests/fixtures/protocol");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let path = entry.path();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let schema_file = root().join("schemas").join(format!("{stem}.json"));
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&schema_file).unwrap()).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        for (i, line) in std::fs::read_to_string(&path).unwrap().lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            let errors: Vec<String> = validator
                .iter_errors(&value)
                .map(|e| e.to_string())
                .collect();
            assert!(
                errors.is_empty(),
                "{}:{}: {errors:?}",
                path.display(),
                i + 1
            );
            let back = match stem.as_str() {
                "tool-definition" => round::<ToolDefinition>(&value),
                "tool-call" => round::<ToolCall>(&value),
                "tool-result" => round::<ToolResult>(&value),
                "tool-progress" => round::<ToolProgress>(&value),
                "message" => round::<Message>(&value),
                "llm-request" => round::<LlmRequest>(&value),
                "llm-event" => round::<LlmEvent>(&value),
                "agent-command" => round::<AgentCommand>(&value),
                "agent-event" => round::<AgentEventRecord>(&value),
                "gate-request" => round::<GateRequest>(&value),
                "gate-decision" => round::<GateDecision>(&value),
                "session-header" => round::<SessionHeader>(&value),
                "session-record" => round::<SessionRecord>(&value),
                "after-request" => round::<AfterRequest>(&value),
                "after-answer" => round::<AfterAnswer>(&value),
                "serve-request" => round::<ServeRequest>(&value),
                "serve-message" => round::<ServeMessage>(&value),
                "stop-request" => round::<StopRequest>(&value),
                "stop-decision" => round::<StopDecision>(&value),
                other => panic!("no type for fixture {other}"),
            };
            assert_eq!(
                back,
                value,
                "{}:{} does not round-trip",
                path.display(),
                i + 1
            );
            seen += 1;
        }
    }
    assert!(seen >= 20, "only {seen} protocol examples found");
}

/// A bad document is rejected by the schema, so the validation above can fail.
#[test]
fn schemas_reject_bad_documents() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("schemas/message.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(!validator.is_valid(&serde_json::json!({"role": "robot", "content": "x"})));
    assert!(
        !validator.is_valid(&serde_json::json!({"role": "assistant", "content": "not blocks"}))
    );
    assert!(validator.is_valid(&serde_json::json!({"role": "user", "content": "hi"})));
}
