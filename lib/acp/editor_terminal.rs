//! `--editor-terminal`: the model's `bash` commands run in the editor's
//! terminal (`terminal/create`, shown live in the tool call), where the
//! client offers one. The shim and the socket are `editor_fs`'s: ag-loop
//! runs `ag-acp editor-tool bash` as its `bash` tool, in its sandbox and
//! behind its gates like any tool; the shim asks ag-acp, which asks the
//! editor.
//!
//! The sandbox goes with the command: the shim sends the policy it runs
//! under (`$AG_SANDBOX`, set by ag-loop's confinement), and the editor is
//! asked to run `ag-sandbox` (by its absolute path) with that policy,
//! then `SHELL -c CMD`. ag-acp takes such a request only from a shim that
//! this session's ag-loop started (directly or through `sh`), so that a
//! confined command cannot reach the socket and ask for a terminal without
//! the policy.
//!
//! What the terminal cannot do (a background job, `list_jobs`, `job`,
//! `stdin`), the shim does as ag-bash does, in its own sandbox.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use agent_client_protocol::v1::schema::{
    CreateTerminalRequest, KillTerminalRequest, ReleaseTerminalRequest, SessionUpdate, Terminal,
    TerminalOutputRequest, ToolCallContent, ToolCallUpdate, ToolCallUpdateFields,
    WaitForTerminalExitRequest,
};
use serde_json::{Value, json};

use super::editor_link::{Ran, Run};
use super::peer::Peer;
use crate::proc::sibling;
use crate::sandbox::{Denial, Op as DeniedOp, Policy};
use crate::tool_protocol::{Context, Tool, ToolError, ToolOutput};
use crate::tools::bash::{self, BashArgs, BashTool, render};

/// The editor's terminals by the tool call they show in, so that the
/// call's last update keeps showing its terminal.
pub type Terminals = Arc<Mutex<HashMap<String, String>>>;

/// The program and arguments the editor runs for `run`: confined by
/// `ag-sandbox` (`sandbox`, an absolute path) with the call's policy when
/// it has one, and `--sandbox require` since the kernel confined the call
/// already.
pub fn command_line(run: &Run, sandbox: &Path) -> (String, Vec<String>) {
    let shell = [run.shell.clone(), "-c".to_string(), run.command.clone()];
    let Some(p) = &run.policy else {
        return (shell[0].clone(), shell[1..].to_vec());
    };
    let mode = serde_json::to_value(p.mode)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| "read-only".to_string());
    let mut args: Vec<String> = vec![
        "--sandbox".into(),
        "require".into(),
        "--mode".into(),
        mode,
        "--workspace".into(),
        p.workspace.display().to_string(),
    ];
    for w in &p.write {
        args.extend(["--write".to_string(), w.display().to_string()]);
    }
    for d in &p.deny_read {
        args.extend(["--deny-read".to_string(), d.display().to_string()]);
    }
    if p.net {
        args.push("--net".into());
    }
    args.push("--".into());
    args.extend(shell);
    (sandbox.display().to_string(), args)
}

/// Runs `run` in the editor's terminal of session `session`: created,
/// shown in its tool call, waited for (killed when its time is up, or
/// when `gone` ends first: the shim was stopped, the call cancelled), its
/// output read, and released whatever happened.
pub async fn run(
    run: Run,
    session: &str,
    peer: &Peer,
    terminals: &Terminals,
    gone: impl Future<Output = ()>,
) -> Result<Ran, String> {
    let sandbox = sibling("ag-sandbox");
    // The editor would look a bare name up on its own PATH: a confined
    // call runs the ag-sandbox installed with ag-acp, or not at all.
    if run.policy.is_some() && !sandbox.is_absolute() {
        return Err(
            "ag-sandbox is not installed beside ag-acp, so the command cannot run confined in the editor's terminal; install it there".into(),
        );
    }
    let (program, args) = command_line(&run, &sandbox);
    let cx = &peer.cx;
    let created = cx
        .send_request(
            CreateTerminalRequest::new(session.to_string(), program)
                .args(args)
                .cwd(run.cwd.clone())
                .output_byte_limit(run.output_limit),
        )
        .block_task()
        .await
        .map_err(|e| format!("the editor could not open a terminal: {e}"))?;
    let tid = created.terminal_id;
    if let Some(id) = &run.tool_call_id {
        if let Ok(mut t) = terminals.lock() {
            t.insert(id.clone(), tid.to_string());
        }
        peer.update(
            session,
            SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                id.clone(),
                ToolCallUpdateFields::new()
                    .content(vec![ToolCallContent::Terminal(Terminal::new(tid.clone()))]),
            )),
        );
    }
    let start = Instant::now();
    enum End {
        Exited(Result<(), String>),
        TimedOut,
        Gone,
    }
    let end = {
        let wait = cx
            .send_request(WaitForTerminalExitRequest::new(
                session.to_string(),
                tid.clone(),
            ))
            .block_task();
        tokio::select! {
            r = wait => End::Exited(r.map(|_| ()).map_err(|e| e.to_string())),
            () = tokio::time::sleep(Duration::from_millis(run.timeout_ms)) => End::TimedOut,
            () = gone => End::Gone,
        }
    };
    let kill = || async {
        let _ = cx
            .send_request(KillTerminalRequest::new(session.to_string(), tid.clone()))
            .block_task()
            .await;
    };
    let result = match end {
        End::Gone => {
            kill().await;
            Err("the call was cancelled".to_string())
        }
        End::Exited(Err(e)) => {
            kill().await;
            Err(format!("the editor did not say how the command ended: {e}"))
        }
        End::Exited(Ok(())) | End::TimedOut => {
            let timed_out = matches!(end, End::TimedOut);
            if timed_out {
                kill().await;
            }
            cx.send_request(TerminalOutputRequest::new(session.to_string(), tid.clone()))
                .block_task()
                .await
                .map_err(|e| format!("the editor did not give the command's output: {e}"))
                .map(|o| Ran {
                    terminal_id: tid.to_string(),
                    output: o.output,
                    truncated: o.truncated,
                    exit_code: o.exit_status.as_ref().and_then(|s| s.exit_code),
                    signal: o.exit_status.and_then(|s| s.signal),
                    timed_out,
                    duration_ms: u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX),
                })
        }
    };
    let _ = cx
        .send_request(ReleaseTerminalRequest::new(session.to_string(), tid))
        .block_task()
        .await;
    result
}

/// Whether the process `pid` (the peer of a socket) is a shim that the
/// ag-loop `loop_pid` started: this executable, whose parent is that
/// ag-loop, or an `sh` that it started (`--tool` runs a command line with
/// `sh -c`). A command the model runs never qualifies: its parents include
/// ag-bash, a shell of its own or the editor. (A subagent's shim, a child
/// ag-loop's, does not either: ag-acp gives ag-loop no `agent` tool when
/// the editor's tools are on.)
pub fn started_by(pid: u32, loop_pid: u32) -> bool {
    let Ok(me) = std::env::current_exe().and_then(std::fs::canonicalize) else {
        return false;
    };
    if loop_pid == 0 || std::fs::read_link(format!("/proc/{pid}/exe")).ok() != Some(me) {
        return false;
    }
    let mut at = parent_of(pid);
    // The shim's parent, then at most two `sh` (one may not exec).
    for _ in 0..3 {
        match at {
            Some(p) if p == loop_pid => return true,
            Some(p) if is_sh(p) => at = parent_of(p),
            _ => return false,
        }
    }
    false
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name (in parentheses) may hold spaces: the fields follow its end.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// `sh` as ag-loop runs it for `--tool` (dash or bash under that name).
fn is_sh(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .is_ok_and(|c| matches!(c.trim(), "sh" | "dash"))
}

/// The call id of the shim's call (read from its input line).
pub static CALL_ID: OnceLock<String> = OnceLock::new();

/// `bash`, in the editor's terminal.
pub struct EditorBash;

impl Tool for EditorBash {
    type Args = BashArgs;
    const NAME: &'static str = BashTool::NAME;
    const BIN: &'static str = BashTool::BIN;
    const ABOUT: &'static str = BashTool::ABOUT;
    const LABEL: &'static str = BashTool::LABEL;
    const DESCRIPTION: &'static str = BashTool::DESCRIPTION;
    const MODEL_DESCRIPTION: &'static str = BashTool::MODEL_DESCRIPTION;
    const PROCESS_FLAGS: &'static [&'static str] = BashTool::PROCESS_FLAGS;

    fn run(ctx: &Context, args: BashArgs) -> Result<ToolOutput, ToolError> {
        let aside = bash::check_modes(&args)?;
        // Jobs and input the terminal cannot take: ag-bash's own way, in
        // the sandbox this shim runs in.
        if args.background || args.command.is_none() || args.stdin.is_some() {
            return BashTool::run(ctx, args);
        }
        let command = args.command.clone().unwrap_or_default();
        if command.trim().is_empty() {
            return Err(ToolError::new(
                "bash.empty_command",
                "`command` is empty; give the shell command to run",
            ));
        }
        let cwd = bash::resolve_cwd(ctx, args.cwd.as_deref())?;
        let shell = bash::shell_of(args.shell.as_deref())?;
        let timeout = bash::timeout_of(&args)?;
        let limit = bash::max_output_of(&args)?;
        let policy = Policy::from_env();
        let request = Run {
            tool_call_id: CALL_ID.get().cloned(),
            command: command.clone(),
            shell,
            cwd: cwd.clone(),
            timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
            output_limit: u64::try_from(limit).unwrap_or(u64::MAX),
            policy: policy.clone(),
        };
        let ran = super::editor_link::ask_terminal(request).map_err(|e| {
            ToolError::new(
                "bash.editor",
                format!("the editor's terminal could not run the command: {e}"),
            )
        })?;
        let out = report(
            ctx,
            &command,
            &cwd,
            timeout,
            &ran,
            args.raw,
            policy.as_ref(),
        );
        Ok(out.with_notes(aside))
    }
}

/// The result, in ag-bash's shape: the output, notes, `exit code: N`.
fn report(
    ctx: &Context,
    command: &str,
    cwd: &Path,
    timeout: Duration,
    ran: &Ran,
    raw: bool,
    policy: Option<&Policy>,
) -> ToolOutput {
    let shown = if raw {
        ran.output.clone()
    } else {
        String::from_utf8_lossy(&render::clean(ran.output.as_bytes())).into_owned()
    };
    let mut text = String::new();
    if ran.truncated {
        text.push_str(&format!(
            "[... the start of the output was cut: the editor's terminal keeps its last {} ...]\n",
            bash::human_bytes(shown.len() as u64)
        ));
    }
    text.push_str(&shown);
    if text.is_empty() {
        text.push_str("(no output)");
    }
    bash::end_line(&mut text);
    text.push('\n');
    let denied: Vec<Denial> = policy
        .map(|p| crate::sandbox::explain_in(p, cwd, &ran.output))
        .unwrap_or_default();
    let attributed: Vec<String> = denied
        .iter()
        .filter(|d| d.op != DeniedOp::Unknown)
        .map(Denial::describe)
        .collect();
    if !attributed.is_empty() {
        text.push_str(&format!(
            "blocked by the sandbox: {}. The command runs confined: it may write only in the workspace{}; do without, or ask the user.\n",
            attributed.join("; "),
            if policy.is_some_and(|p| p.net) {
                ""
            } else {
                " and has no network"
            }
        ));
    }
    let signal_no = ran.signal.as_deref().and_then(signal_number);
    let code: i64 = if ran.timed_out {
        124
    } else if let Some(c) = ran.exit_code {
        i64::from(c)
    } else if let Some(n) = signal_no {
        128 + i64::from(n)
    } else {
        1
    };
    if ran.timed_out {
        text.push_str(&format!(
            "timed out after {}: the command was stopped (the editor killed its terminal). Run it again with a larger `timeout` (at most {} s), or with background=true if it is meant to keep running.\n",
            bash::human_secs(timeout),
            bash::MAX_TIMEOUT_SECS
        ));
    }
    text.push_str(&format!("exit code: {code}"));
    if let Some(sig) = &ran.signal
        && !ran.timed_out
    {
        text.push_str(&format!(" (killed by {sig})"));
    }
    text.push('\n');
    let mut details = json!({
        "command": command,
        "exit_code": code,
        "duration_ms": ran.duration_ms,
        "truncated": ran.truncated,
        "timed_out": ran.timed_out,
        "cwd": ctx.show(cwd),
        "output_bytes": ran.output.len(),
        "terminal": ran.terminal_id,
    });
    if let Some(sig) = &ran.signal {
        details["signal"] = Value::String(sig.clone());
    }
    if !denied.is_empty() {
        details["sandbox"] = json!({ "denied": denied });
    }
    ToolOutput::new(text, details)
}

/// `SIGKILL` (or `KILL`) as its number.
fn signal_number(name: &str) -> Option<i32> {
    let name = if name.starts_with("SIG") {
        name.to_string()
    } else {
        format!("SIG{name}")
    };
    name.parse::<nix::sys::signal::Signal>()
        .ok()
        .map(|s| s as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a_run(policy: Option<Policy>) -> Run {
        Run {
            tool_call_id: Some("c1".into()),
            command: "echo hi > out.txt".into(),
            shell: "bash".into(),
            cwd: "/w".into(),
            timeout_ms: 1000,
            output_limit: 1024,
            policy,
        }
    }

    #[test]
    fn a_confined_call_runs_in_ag_sandbox_with_its_policy_and_an_unconfined_one_in_the_shell() {
        let (program, args) = command_line(&a_run(None), Path::new("/opt/ag/ag-sandbox"));
        assert_eq!(program, "bash");
        assert_eq!(args, ["-c", "echo hi > out.txt"]);
        let mut p = Policy::new(crate::sandbox::Mode::WorkspaceWrite, "/w".into());
        p.write = vec!["/cache".into()];
        let (program, args) =
            command_line(&a_run(Some(p.clone())), Path::new("/opt/ag/ag-sandbox"));
        assert_eq!(program, "/opt/ag/ag-sandbox");
        let joined = args.join(" ");
        assert!(
            joined.starts_with(
                "--sandbox require --mode workspace-write --workspace /w --write /cache"
            ),
            "{joined}"
        );
        assert!(joined.ends_with("-- bash -c echo hi > out.txt"), "{joined}");
        assert!(!joined.contains("--net"));
        // Every path the policy keeps from being read stays kept.
        for d in &p.deny_read {
            assert!(joined.contains(&format!("--deny-read {}", d.display())));
        }
        p.mode = crate::sandbox::Mode::ReadOnly;
        p.net = true;
        let (_, args) = command_line(&a_run(Some(p)), Path::new("/s"));
        let joined = args.join(" ");
        assert!(joined.contains("--mode read-only") && joined.contains("--net --"));
    }

    #[test]
    fn the_result_has_ag_bashs_shape() {
        let ctx = Context::new(None).unwrap();
        let cwd = ctx.cwd.clone();
        let ran = Ran {
            terminal_id: "t1".into(),
            output: "\u{1b}[31mred\u{1b}[0m\n".into(),
            exit_code: Some(3),
            duration_ms: 5,
            ..Ran::default()
        };
        let out = report(&ctx, "x", &cwd, Duration::from_secs(1), &ran, false, None);
        assert_eq!(out.output, "red\n\nexit code: 3\n");
        assert_eq!(out.details["exit_code"], 3);
        assert_eq!(out.details["terminal"], "t1");
        let timed = Ran {
            output: "tail\n".into(),
            truncated: true,
            timed_out: true,
            signal: Some("SIGKILL".into()),
            ..ran.clone()
        };
        let out = report(&ctx, "x", &cwd, Duration::from_secs(2), &timed, false, None);
        assert!(
            out.output
                .starts_with("[... the start of the output was cut")
        );
        assert!(out.output.contains("timed out after 2 s"));
        assert!(out.output.ends_with("exit code: 124\n"), "{}", out.output);
        let killed = Ran {
            exit_code: None,
            signal: Some("SIGTERM".into()),
            ..ran
        };
        let out = report(
            &ctx,
            "x",
            &cwd,
            Duration::from_secs(2),
            &killed,
            false,
            None,
        );
        assert!(out.output.ends_with("exit code: 143 (killed by SIGTERM)\n"));
    }

    #[test]
    fn only_a_process_of_this_executable_started_by_the_loop_is_served() {
        let me = std::process::id();
        let parent = std::os::unix::process::parent_id();
        assert_eq!(parent_of(me), Some(parent));
        // This executable, started by `parent`: served when `parent` is the
        // session's ag-loop, not when another process is.
        assert!(started_by(me, parent));
        assert!(!started_by(me, me));
        assert!(!started_by(me, 0));
        // A process of another executable (cargo, a shell) never is.
        let grandparent = parent_of(parent).unwrap_or(1);
        assert!(!started_by(parent, grandparent));
        // Nor one whose parent (cargo, not sh) is not the loop.
        if grandparent > 1 {
            assert!(!started_by(me, grandparent));
        }
    }
}
