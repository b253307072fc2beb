//! The shim's side of the editor bridge: what `ag-acp editor-tool`, run
//! by ag-loop as a tool, sends ag-acp over the session's socket (a read, a
//! write, a command for the editor's terminal) and what comes back. The
//! serving side is in [`super::editor_fs`]; the tools that ask are
//! [`super::editor_edit`] and [`super::editor_terminal`].

use std::io::{self, BufRead, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::sandbox::Policy;

/// The most a request or a reply may hold (a file's text and its JSON).
pub const MAX_MESSAGE: u64 = 64 << 20;

/// What the shim asks ag-acp.
#[derive(Debug, Serialize, Deserialize)]
pub struct Request {
    pub session: String,
    #[serde(flatten)]
    pub op: Op,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    Read { path: PathBuf },
    Write { path: PathBuf, content: String },
    Bash(Box<Run>),
}

/// ag-acp's answer: the text read (or nothing, for a write), what a
/// command did, or why not.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Reply {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ran: Option<Ran>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One command for the editor's terminal, as the shim asks for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// The tool call it runs for (its terminal is shown there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The command, for `SHELL -c`.
    pub command: String,
    /// The shell.
    pub shell: String,
    /// Where it runs (absolute, inside the session's directory).
    pub cwd: PathBuf,
    /// How long it may run.
    pub timeout_ms: u64,
    /// The most output the editor keeps (its end).
    pub output_limit: u64,
    /// The sandbox the call runs under (None: unconfined, as ag-loop
    /// runs it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<Policy>,
}

/// What came of it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ran {
    /// The editor's terminal.
    pub terminal_id: String,
    /// The output the editor kept.
    pub output: String,
    /// The editor cut its start.
    pub truncated: bool,
    /// The exit code, if it exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<u32>,
    /// The signal that ended it, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// It ran out of time and was killed.
    pub timed_out: bool,
    /// How long it ran.
    pub duration_ms: u64,
}

/// The socket and session of this shim process.
static LINK: OnceLock<(PathBuf, String)> = OnceLock::new();

/// From now on, this process asks ag-acp at `socket`, for `session`.
pub fn connect(socket: PathBuf, session: String) {
    let _ = LINK.set((socket, session));
}

/// Asks ag-acp (and so the editor); the text read, or None for a write.
pub fn ask(op: Op) -> Result<Option<String>, String> {
    ask_reply(op).map(|r| r.text)
}

/// The editor's text of `path`.
pub fn ask_read(path: &Path) -> Result<String, String> {
    ask(Op::Read {
        path: path.to_path_buf(),
    })
    .map(Option::unwrap_or_default)
}

/// Puts `content` in the editor's buffer of `path`.
pub fn ask_write(path: &Path, content: String) -> Result<(), String> {
    ask(Op::Write {
        path: path.to_path_buf(),
        content,
    })
    .map(|_| ())
}

/// Asks ag-acp to run a command in the editor's terminal.
pub fn ask_terminal(run: Run) -> Result<Ran, String> {
    ask_reply(Op::Bash(Box::new(run)))?
        .ran
        .ok_or_else(|| "ag-acp said nothing of the command".to_string())
}

fn ask_reply(op: Op) -> Result<Reply, String> {
    let (socket, session) = LINK.get().ok_or("no socket was given")?;
    let mut stream = UnixStream::connect(socket)
        .map_err(|e| format!("cannot reach ag-acp at {}: {e}", socket.display()))?;
    let mut line = serde_json::to_vec(&Request {
        session: session.clone(),
        op,
    })
    .map_err(|e| e.to_string())?;
    line.push(b'\n');
    stream
        .write_all(&line)
        .map_err(|e| format!("cannot send to ag-acp: {e}"))?;
    let mut answer = Vec::new();
    io::BufReader::new(stream.take(MAX_MESSAGE))
        .read_until(b'\n', &mut answer)
        .map_err(|e| format!("no answer from ag-acp: {e}"))?;
    let reply: Reply =
        serde_json::from_slice(&answer).map_err(|e| format!("a bad answer from ag-acp: {e}"))?;
    match reply.error {
        Some(e) => Err(e),
        None => Ok(reply),
    }
}
