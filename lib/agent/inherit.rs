//! What a run's subagents inherit from it: the `agent` tool set up from the
//! run's flags and settings, handed down to each child ag-loop as flags.
//! It sits at the top, beside cli.rs, because it reads the settings, the
//! model and the tree; the `agent` tool itself (delegation/) needs none of
//! them.

use std::path::Path;
use std::sync::Arc;

use tokio::sync::Semaphore;

use super::ModelClient;
use super::delegation::NAME;
use super::delegation::subagent::{PARENT_ENV, SandboxFlags, Subagents, sibling_loop};
use super::delegation::tree_budget::{TREE_ENV, TURNS_ENV, Tree};
use super::setup::args::Args;
use super::setup::settings::{GateChoice, LoopConfig, SessionChoice};

/// What this run's subagents inherit, when `--max-depth` allows one more
/// level and the run is in a tree of agents (else `None`, with a warning
/// when `agent` was named); the run offers `agent` when `--tools` names
/// it, and an `@NAME` identity whose tools name it gets it too. The provider keys are read after they are withheld
/// from the tools, so that only the child ag-loop gets them back.
pub fn setup(
    args: &Args,
    resolved: &LoopConfig,
    model: &ModelClient,
    cwd: &Path,
    tree: Option<Arc<Tree>>,
) -> Option<Subagents> {
    if args.max_depth == 0 {
        if resolved.tools.iter().any(|t| t == NAME) {
            crate::cli::warn(
                "ag-loop",
                "`agent` is not offered: --max-depth 0 allows no subagent here",
            );
        }
        return None;
    }
    let tree = tree?;
    let mut flags: Vec<String> = Vec::new();
    let mut flag = |name: &str, value: Option<String>| {
        flags.push(name.to_string());
        flags.extend(value);
    };
    if let Some(u) = &args.base_url {
        flag("--base-url", Some(u.clone()));
    }
    if let Some(c) = &args.llm_cmd {
        flag("--llm-cmd", Some(c.clone()));
    }
    if let Some(c) = &args.config {
        flag("--config", Some(c.display().to_string()));
    }
    match &resolved.gates {
        GateChoice::Off => flag("--no-gate", None),
        GateChoice::Programs(list) => {
            for g in list {
                flag("--gate", Some(g.clone()));
            }
        }
        GateChoice::Default => {}
    }
    for a in &resolved.after {
        flag("--after", Some(a.clone()));
    }
    flag(
        "--gate-timeout",
        Some(resolved.gate_timeout.as_secs_f64().to_string()),
    );
    for p in &resolved.pass_env {
        flag("--pass-env", Some(p.clone()));
    }
    // --sandbox, --sandbox-mode and --allow-net go per call (an
    // identity may make them stricter).
    let sb = &resolved.sandbox;
    for w in &sb.write {
        flag("--sandbox-write", Some(w.display().to_string()));
    }
    for h in &sb.hosts {
        flag("--allow-host", Some(h.clone()));
    }
    if sb.mcp_unconfined {
        flag("--mcp-unconfined", None);
    }
    for t in &resolved.extra_tools {
        flag("--tool", Some(t.clone()));
    }
    for m in &resolved.mcp {
        flag("--mcp", Some(m.clone()));
    }
    if let Some(w) = &resolved.workspace.uri {
        flag("--workspace", Some(w.clone()));
    }
    if args.no_skills {
        flag("--no-skills", None);
    }
    for d in &args.skills {
        flag("--skills", Some(d.display().to_string()));
    }
    if resolved.sequential {
        flag("--sequential", None);
    }
    // A child cannot ask anybody: where this run's person would have been
    // asked, the child refuses (the approval policy only narrows).
    if resolved.approve_on_stdin || resolved.interactive || args.refuse_unasked {
        flag("--refuse-unasked", None);
    }
    if resolved.session == SessionChoice::Off {
        flag("--no-session", None);
    }
    let mut keys: Vec<(String, String)> = crate::proc::withheld_env()
        .into_iter()
        .filter(|n| ![TREE_ENV, TURNS_ENV, PARENT_ENV].iter().any(|t| n == t))
        .filter_map(|n| {
            let v = std::env::var_os(&n)?;
            Some((
                n.to_string_lossy().to_string(),
                v.to_string_lossy().to_string(),
            ))
        })
        .collect();
    // --api-key goes down in the provider's own variable, not in the
    // child's arguments, where `ps` would show it.
    if let (Some(key), ModelClient::Library(llm)) = (&args.api_key, model) {
        let provider = resolved.model.split('/').next().unwrap_or_default();
        if let Some(var) = llm
            .table()
            .provider(provider)
            .and_then(|p| p.key_env.first())
        {
            keys.retain(|(k, _)| k != var);
            keys.push((var.clone(), key.clone()));
        }
    }
    Some(Subagents {
        program: sibling_loop(),
        model: resolved.model.clone(),
        flags,
        tools: resolved.tools.clone(),
        sandbox: SandboxFlags {
            enforcement: sb.enforcement,
            mode: sb.mode,
            net: sb.net,
        },
        cwd: cwd.to_path_buf(),
        max_depth: args.max_depth,
        max_agents: args.max_agents,
        slots: Arc::new(Semaphore::new(args.max_agents as usize)),
        tree,
        keys,
    })
}
