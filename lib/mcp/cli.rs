//! `ag-mcp`: the command line. Picks the tools, then serves them as an MCP
//! server on stdin and stdout (or lists them with `--list`).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use super::convert::to_mcp_tool;
use super::server::{ServeOptions, serve_stdio};
use super::tools::{DEFAULT_TOOLS, Selection, ToolBox};
use crate::cli::{ExitStatus, Stdout, error_line, warn};

const BIN: &str = "ag-mcp";

/// Serve ag's tools to any MCP client (Claude Code, Codex, Cursor, VS Code,
/// goose, ...) over stdio.
///
/// Speaks the Model Context Protocol on stdin and stdout: `tools/list` gives
/// each tool's `--schema` definition, and `tools/call` runs the tool binary
/// as a subprocess in its own process group, so a crash in one call cannot
/// take the server down. A cancelled call (`notifications/cancelled`) ends
/// the call's whole process group, and so does ag-mcp's end, even by
/// SIGKILL (a watchdog process, ag-watchdog in ps, outlives ag-mcp just long
/// enough to end the running calls). Relative paths resolve against the
/// directory ag-mcp runs in. The stale-edit guard is the server's: write,
/// edit and delete do not offer `expected_hash` (the client's model never
/// sees a hash); ag-mcp passes the hash of the client's last read of the
/// file itself, so a change of a file edited on disk since is refused.
/// Every request that is JSON gets
/// exactly one response with its id, malformed or not, with JSON-RPC's
/// error codes (-32700 not JSON, always with a null id, -32600 not a valid request, -32601 unknown
/// method, -32602 params that do not fit the method, among them bytes that
/// are not UTF-8 and nesting deeper than 126 levels); lines past 64 MiB are
/// refused. Add it to a client with, for example,
/// `claude mcp add ag -- ag-mcp`.
#[derive(Debug, Parser)]
#[command(
    name = "ag-mcp",
    version,
    after_help = "Exit status: 0 the client closed the session, 2 usage error or a tool could not be loaded, 128+N ended by signal N."
)]
pub struct Args {
    /// The ag tools to serve, comma-separated (`read,grep,find,ls`), or
    /// `none`. Default: read, write, edit, delete, patch, bash, grep, find,
    /// ls, git_status, git_diff, git_log and git_commit, those that are
    /// installed (beside ag-mcp, else on PATH). Clients see one tool per job:
    /// a binary's name serves all of its tools (bash: bash, bash_background,
    /// job_output, job_stop, job_list; git: its four), the default's bash is
    /// the command tool alone.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub tools: Option<Vec<String>>,
    /// Also serve CMD, any executable that speaks ag's tool protocol
    /// (answers `CMD --schema`, takes JSONL calls on stdin). CMD is a shell
    /// command line, quoted as in a shell (`my-tool --flag "a b"`), run by
    /// `sh -c`. Repeatable.
    #[arg(long = "tool", value_name = "CMD")]
    pub tool: Vec<String>,
    /// Run in DIR, as if started there: relative paths in calls, `--root`
    /// and `--tool` resolve against it. For clients that start servers
    /// somewhere else than the project.
    #[arg(long, short = 'C', value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Confine every path the ag tools touch to DIR (passed to each as
    /// `--root DIR`).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Leave the tools' details (file hash, line counts, exit code...) out
    /// of results' `_meta`, sending only the text and pictures. Results
    /// never carry `structuredContent`, which clients such as Claude Code and
    /// Codex show the model in place of the text; the details are in
    /// `_meta["ag/details"]`, which clients do not show the model.
    #[arg(long)]
    pub text_only: bool,
    /// Let the tools inherit the provider key variable NAME (repeatable). By
    /// default none of the key variables ag knows (the built-in providers'
    /// *_API_KEY names and every `api_key_env` of $AG_HOME/models.json)
    /// reaches a tool or anything it starts.
    #[arg(long = "pass-env", value_name = "NAME")]
    pub pass_env: Vec<String>,
    /// Print the MCP definitions of the tools that would be served, one JSON
    /// object per line, and exit.
    #[arg(long)]
    pub list: bool,
}

impl Args {
    /// The tools these flags select.
    pub fn selection(&self) -> Selection {
        let names = self.tools.as_ref().map(|list| {
            let mut out: Vec<String> = Vec::new();
            for n in list.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
                let n = n.strip_prefix("ag-").unwrap_or(n);
                if n != "none" && !out.iter().any(|o| o == n) {
                    out.push(n.to_string());
                }
            }
            out
        });
        Selection {
            names,
            commands: self.tool.clone(),
            root: self.root.clone(),
        }
    }
}

/// Runs `ag-mcp`.
pub fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => return ExitStatus::from_clap(e, BIN).code(),
    };
    // Before any thread exists: a tool must not read the provider keys in
    // this process's /proc/PID/environ (see `hide_own_environment`).
    crate::proc::hide_own_environment_or_warn(BIN);
    // As with `git -C`, everything after it (`--root`, `--tool` paths) is
    // seen from DIR. Set before any thread starts: the tools inherit it.
    if let Some(dir) = &args.cwd
        && let Err(e) = std::env::set_current_dir(dir)
    {
        error_line(
            BIN,
            &format!("cannot work in `{}`: {e}", dir.display()),
            Some("give --cwd an existing directory"),
        );
        return ExitStatus::Input.code();
    }
    let runtime = match crate::cli::runtime(BIN) {
        Ok(r) => r,
        Err(status) => return status.code(),
    };
    let status = runtime.block_on(run(args));
    // A blocking read of a terminal stdin may still be pending: do not wait
    // for it.
    runtime.shutdown_background();
    status.code()
}

async fn run(args: Args) -> ExitStatus {
    if let Some(root) = &args.root
        && !root.is_dir()
    {
        error_line(
            BIN,
            &format!("`{}` is not a directory", root.display()),
            Some("give --root an existing directory"),
        );
        return ExitStatus::Input;
    }
    // A tool (a `bash` call asking for `env`) never sees a provider key.
    let table = crate::llm::ModelTable::load(&crate::llm::models::default_ag_home())
        .unwrap_or_else(|e| {
            warn(
                BIN,
                &format!("{e}; only the built-in key variables are withheld"),
            );
            crate::llm::ModelTable::builtin()
        });
    crate::proc::withhold_env(
        crate::llm::keys::key_env_names(&table)
            .into_iter()
            .filter(|n| !args.pass_env.contains(n)),
    );
    // A fetch URL is checked for them before it runs (the tool never has them).
    crate::llm::keys::hold(std::sync::Arc::new(crate::llm::keys::Redactor::for_keys(
        &table,
        &[],
    )));
    let tools = match ToolBox::load(&args.selection()).await {
        Ok(t) => t,
        Err(e) => {
            error_line(BIN, &e.to_string(), None);
            return ExitStatus::Input;
        }
    };
    for e in &tools.skipped {
        warn(BIN, &format!("left out: {e}"));
    }
    if tools.tools().is_empty() {
        warn(
            BIN,
            &format!(
                "no tools to serve: none of ag-{{{}}} is beside ag-mcp or on PATH, and no --tool was given",
                crate::tools::offer::by_binary(
                    &DEFAULT_TOOLS
                        .iter()
                        .map(|s| s.to_string())
                        .collect::<Vec<_>>()
                )
                .into_iter()
                .map(|(binary, _)| binary)
                .collect::<Vec<_>>()
                .join(",")
            ),
        );
    }
    if args.list {
        return list(&tools);
    }
    if std::io::stdin().is_terminal() {
        warn(
            BIN,
            "serving MCP on stdin and stdout; this is meant to be started by an MCP client (e.g. `claude mcp add ag -- ag-mcp`)",
        );
    }
    let options = ServeOptions {
        details: !args.text_only,
    };
    match serve_stdio(tools, options).await {
        Ok(None) => ExitStatus::Success,
        Ok(Some(signal)) => ExitStatus::Signal(signal),
        Err(e) => {
            error_line(BIN, &e, None);
            ExitStatus::Failure
        }
    }
}

fn list(tools: &ToolBox) -> ExitStatus {
    let mut out = Stdout::new();
    for (definition, read_only) in tools.listed() {
        let tool = to_mcp_tool(&definition, read_only);
        let line = match serde_json::to_string(&tool) {
            Ok(l) => l + "\n",
            Err(e) => {
                error_line(BIN, &format!("cannot print `{}`: {e}", tool.name), None);
                return ExitStatus::Failure;
            }
        };
        if out.write_all_flush(line.as_bytes()).is_err() {
            // A closed stdout (`ag-mcp --list | head -1`) is a quiet end.
            return ExitStatus::Success;
        }
    }
    ExitStatus::Success
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_is_well_formed() {
        Args::command().debug_assert();
    }

    #[test]
    fn tool_names_are_trimmed_deduplicated_and_none_is_nothing() {
        let a = Args::try_parse_from(["ag-mcp", "--tools", "read, ag-grep,read"]).unwrap();
        assert_eq!(
            a.selection().names,
            Some(vec!["read".into(), "grep".into()])
        );
        let a = Args::try_parse_from(["ag-mcp", "--tools", "none", "--tool", "x y"]).unwrap();
        let s = a.selection();
        assert_eq!(s.names, Some(vec![]));
        assert_eq!(s.commands, vec!["x y".to_string()]);
        let a = Args::try_parse_from(["ag-mcp"]).unwrap();
        assert_eq!(a.selection().names, None);
    }
}
