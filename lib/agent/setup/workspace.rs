//! ag-loop's side of `--workspace URI` (issue 22): which URI the flag, a
//! personal identity or the config file give (a project identity's is set
//! aside: it would send the calls, and what they read, to a host the code
//! under work chose), opening it once the tools are loaded, moving the ag
//! tools' calls there, and the events that say what changed (binaries
//! copied, no sandbox, no checkpoints). The transport is `crate::workspace`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::args::Args;
use crate::agent::calls::toolset::ToolSet;
use crate::agent::config::error::SetupError;
use crate::agent::config::file::Config;
use crate::agent::config::identity::Identity;
use crate::agent::events::emit::Emitter;
use crate::protocol::AgentEvent;
use crate::workspace::Workspace;

/// The workspace asked for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Choice {
    /// The URI, if any.
    pub uri: Option<String>,
    /// A project identity's URI, set aside (warned about at start).
    pub ignored: Option<String>,
}

/// The flag, else a personal identity's, else the config file's.
pub fn resolve(args: &Args, config: &Config, ident: Option<&Identity>) -> Choice {
    let mut choice = Choice::default();
    let mut from_identity = None;
    if let Some(i) = ident
        && let Some(uri) = &i.workspace
    {
        if i.path.starts_with(crate::session::ag_home()) {
            from_identity = Some(uri.clone());
        } else {
            choice.ignored = Some(uri.clone());
        }
    }
    choice.uri = args
        .workspace
        .clone()
        .or(from_identity)
        .or_else(|| config.workspace.clone())
        .filter(|u| !u.trim().is_empty());
    choice
}

/// Opens the workspace, if one is asked for, and moves the ag tools' calls
/// there.
/// `check` is the ag-bash of the `--until` command, which runs there too.
pub async fn open(
    choice: &Choice,
    tools: &mut ToolSet,
    check: Option<&mut ToolSet>,
    here: &Path,
) -> Result<Option<Arc<Workspace>>, SetupError> {
    if let Some(uri) = &choice.ignored {
        crate::cli::warn(
            "ag-loop",
            &format!(
                "the agent identity's `workspace: {uri}` set aside: an identity from the project may not send the tool calls elsewhere; use --workspace or $AG_HOME/config.toml"
            ),
        );
    }
    let Some(uri) = &choice.uri else {
        return Ok(None);
    };
    let mut binaries = tools.ag_binaries();
    for b in check.as_ref().map(|c| c.ag_binaries()).unwrap_or_default() {
        if !binaries.contains(&b) {
            binaries.push(b);
        }
    }
    let ws = Workspace::open(uri, &binaries)
        .await
        .map_err(|e| SetupError::Workspace(e.to_string()))?;
    let ws = Arc::new(ws);
    tools.run_in(ws.clone(), here);
    if let Some(check) = check {
        check.run_in(ws.clone(), here);
    }
    Ok(Some(ws))
}

/// The directory the model works in and the project files it reads: the
/// workspace's, else the local ones.
pub fn cwd_and_files(ws: Option<&Workspace>, cwd: &Path) -> (PathBuf, Vec<(PathBuf, String)>) {
    match ws {
        Some(ws) => (ws.cwd().to_path_buf(), ws.project_files().to_vec()),
        None => (
            cwd.to_path_buf(),
            crate::agent::config::prompt::local_project_files(cwd),
        ),
    }
}

/// Tells the stream what the workspace changed: binaries copied there, and
/// that the sandbox and checkpoints (both local) do not apply there.
pub fn announce(ws: Option<&Workspace>, emitter: &mut Emitter) -> Result<(), SetupError> {
    let Some(ws) = ws else {
        return Ok(());
    };
    let place = ws.uri().describe();
    let mut events: Vec<(String, &str)> = ws.notes().iter().map(|n| (n.clone(), "info")).collect();
    events.push((
        format!(
            "workspace: tool calls run on {place} in `{}`, without ag's sandbox (it confines local processes only) and without checkpoints (they record local trees)",
            ws.cwd().display()
        ),
        "warning",
    ));
    for (message, level) in events {
        emitter
            .emit(AgentEvent::Notify {
                message,
                level: level.to_string(),
            })
            .map_err(|e| SetupError::Workspace(format!("cannot write an event: {e}")))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    fn args(flags: &[&str]) -> Args {
        Args::try_parse_from(std::iter::once("ag-loop").chain(flags.iter().copied())).unwrap()
    }

    #[test]
    fn flag_then_personal_identity_then_config_and_a_project_identity_is_set_aside() {
        let config = Config {
            workspace: Some("ssh://config/w".into()),
            ..Config::default()
        };
        let personal = Identity {
            workspace: Some("ssh://personal/w".into()),
            path: crate::session::ag_home().join("agents/a.md"),
            ..Identity::default()
        };
        let project = Identity {
            workspace: Some("ssh://evil/w".into()),
            path: PathBuf::from("/repo/.ag/agents/a.md"),
            ..Identity::default()
        };
        let flag = args(&["--workspace", "docker://c/w"]);
        let none = args(&[]);
        assert_eq!(
            resolve(&flag, &config, Some(&personal)).uri.as_deref(),
            Some("docker://c/w")
        );
        assert_eq!(
            resolve(&none, &config, Some(&personal)).uri.as_deref(),
            Some("ssh://personal/w")
        );
        let c = resolve(&none, &config, Some(&project));
        assert_eq!(c.uri.as_deref(), Some("ssh://config/w"));
        assert_eq!(c.ignored.as_deref(), Some("ssh://evil/w"));
        assert_eq!(resolve(&none, &Config::default(), None), Choice::default());
    }
}
