//! `--editor-fs`: ag's `read` and `write` through the editor, so that the
//! model reads and writes the editor's buffers (unsaved changes included)
//! where the client offers `fs/read_text_file` and `fs/write_text_file`;
//! and the socket and shim that `--editor-terminal` (`editor_terminal`)
//! uses too. No agent logic moves here: ag-loop gets the tools as `--tool`
//! commands (`ag-acp editor-tool read|write|bash`, a shim with ag-read's,
//! ag-write's and ag-bash's own schema, numbering and messages), run in
//! its sandbox like any tool; a call reaches the session's ag-acp over a
//! Unix socket in a private directory, and ag-acp asks the editor.
//!
//! The socket speaks one JSON line each way per connection: a
//! `Request`, then a `Reply`. Both halves are this file, so the shape
//! is private to it.

use std::io::{self, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use agent_client_protocol::v1::schema::{ReadTextFileRequest, WriteTextFileRequest};
use clap::Parser;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};

use super::editor_edit::EditorEdit;
use super::editor_link::{self, MAX_MESSAGE, Op, Reply, Request, ask};
use super::editor_terminal::{self, EditorBash, Terminals};
use super::modes::shell_quote;
use super::peer::Peer;
use crate::cli::{ExitStatus, error_line};
use crate::fsutil::content_hash;
use crate::tool_protocol::{self, Context, Tool, ToolError, ToolOutput, hashes};
use crate::tools::bash::BashTool;
use crate::tools::edit::EditTool;
use crate::tools::fileops::check_hash;
use crate::tools::read::{self, ReadArgs, ReadTool};
use crate::tools::write::{WriteArgs, WriteTool};
use crate::tools::write_content;

/// The subcommand that runs the shim (`ag-acp editor-tool read ...`).
pub const SUBCOMMAND: &str = "editor-tool";

/// `ag-acp editor-tool`: one of ag's tools, through the editor of an
/// ag-acp session. ag-acp starts ag-loop with it; it is not for people.
#[derive(Debug, Parser)]
#[command(name = "ag-acp editor-tool")]
pub struct ShimArgs {
    /// The tool.
    #[arg(value_enum)]
    pub tool: Which,
    /// The session's socket.
    #[arg(long, value_name = "PATH")]
    pub socket: PathBuf,
    /// The ACP session.
    #[arg(long, value_name = "ID")]
    pub session: String,
    /// Print the tool's definition (ag-read's, ag-write's or ag-bash's).
    #[arg(long)]
    pub schema: bool,
}

/// The tools that can go through the editor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Which {
    /// `read`, through `fs/read_text_file`.
    Read,
    /// `write`, through `fs/write_text_file`.
    Write,
    /// `edit`, on the buffer (`fs/read_text_file`, `fs/write_text_file`).
    Edit,
    /// `bash`, in the editor's terminal (`terminal/create`).
    Bash,
}

/// Runs `ag-acp editor-tool` (`args` without the program name).
pub fn shim_main(args: impl IntoIterator<Item = String>) -> ExitCode {
    const BIN: &str = "ag-acp editor-tool";
    let args = match ShimArgs::try_parse_from(std::iter::once(BIN.to_string()).chain(args)) {
        Ok(a) => a,
        Err(e) => return ExitStatus::from_clap(e, "ag-acp").code(),
    };
    if args.schema {
        let mut def = match args.tool {
            Which::Read => tool_protocol::definition::<ReadTool>(),
            Which::Write => tool_protocol::definition::<WriteTool>(),
            Which::Edit => tool_protocol::definition::<EditTool>(),
            Which::Bash => tool_protocol::definition::<BashTool>(),
        };
        // What the model sees of ag-write and ag-edit: ag-loop fills the
        // hash in.
        hashes::hide_hash_field(&mut def.parameters);
        return crate::cli::print_json(BIN, &def);
    }
    // The session's directory is the root, as ag's --root: a path that
    // leads out of it is refused before anything is asked.
    let ctx = match Context::new(Some(Path::new("."))) {
        Ok(c) => c,
        Err(msg) => {
            error_line(BIN, &msg, None);
            return ExitStatus::Input.code();
        }
    };
    editor_link::connect(args.socket, args.session);
    let stdin = io::stdin();
    if args.tool == Which::Bash {
        // The call's id names the tool call the terminal shows in: read
        // from the line before it is served (ag-loop sends one call).
        let mut input = Vec::new();
        if let Err(e) = stdin.lock().take(MAX_MESSAGE).read_to_end(&mut input) {
            error_line(BIN, &format!("cannot read the call: {e}"), None);
            return ExitStatus::Input.code();
        }
        let id = input
            .split(|b| *b == b'\n')
            .find(|l| !l.trim_ascii().is_empty())
            .and_then(|l| serde_json::from_slice::<serde_json::Value>(l).ok())
            .and_then(|v| v.get("id").and_then(|i| i.as_str()).map(str::to_string));
        if let Some(id) = id {
            let _ = editor_terminal::CALL_ID.set(id);
        }
        return match tool_protocol::serve::serve::<EditorBash>(&ctx, &input[..], io::stdout()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                error_line(BIN, &format!("cannot write the result: {e}"), None);
                ExitCode::FAILURE
            }
        };
    }
    let served = match args.tool {
        Which::Read => tool_protocol::serve::serve::<EditorRead>(&ctx, stdin.lock(), io::stdout()),
        Which::Write => {
            tool_protocol::serve::serve::<EditorWrite>(&ctx, stdin.lock(), io::stdout())
        }
        Which::Edit => tool_protocol::serve::serve::<EditorEdit>(&ctx, stdin.lock(), io::stdout()),
        Which::Bash => unreachable!("served above"),
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            error_line(BIN, &format!("cannot write the result: {e}"), None);
            ExitCode::FAILURE
        }
    }
}

/// `read`, from the editor's buffer.
struct EditorRead;

impl Tool for EditorRead {
    type Args = ReadArgs;
    const NAME: &'static str = ReadTool::NAME;
    const BIN: &'static str = ReadTool::BIN;
    const ABOUT: &'static str = ReadTool::ABOUT;
    const LABEL: &'static str = ReadTool::LABEL;
    const DESCRIPTION: &'static str = ReadTool::DESCRIPTION;
    const MODEL_DESCRIPTION: &'static str = ReadTool::MODEL_DESCRIPTION;

    fn run(ctx: &Context, mut args: ReadArgs) -> Result<ToolOutput, ToolError> {
        let meant = crate::tools::fileops::take_path_meant(ctx, &mut args.file_path);
        read_buffer(ctx, args).map(|out| out.with_notes(meant))
    }
}

/// What `read` gives through the editor: its buffer, or ag-read's answer
/// for what it cannot hold.
fn read_buffer(ctx: &Context, args: ReadArgs) -> Result<ToolOutput, ToolError> {
    let path = ctx.resolve(&args.file_path)?;
    // What the editor cannot hold as text (a directory, an image, a
    // binary file) is read as ag-read reads it.
    if read::not_text(ctx, &path) {
        return ReadTool::run(ctx, args);
    }
    let shown = ctx.show(&path);
    match ask(Op::Read { path: path.clone() }) {
        Ok(text) => read::page_of_text(
            &shown,
            &args,
            text.unwrap_or_default().as_bytes(),
            crate::tools::budget::from_env(),
        ),
        // Not in the editor and not on disk: ag-read's message, with
        // the names that are there.
        Err(_) if ctx.metadata(&path).is_err() => ReadTool::run(ctx, args),
        Err(e) => Err(ToolError::new(
            "read.editor",
            format!("the editor could not read `{shown}`: {e}"),
        )),
    }
}

/// `write`, to the editor's buffer (the editor decides when it is saved).
struct EditorWrite;

impl Tool for EditorWrite {
    type Args = WriteArgs;
    const NAME: &'static str = WriteTool::NAME;
    const BIN: &'static str = WriteTool::BIN;
    const ABOUT: &'static str = WriteTool::ABOUT;
    const LABEL: &'static str = WriteTool::LABEL;
    const DESCRIPTION: &'static str = WriteTool::DESCRIPTION;
    const MODEL_DESCRIPTION: &'static str = WriteTool::MODEL_DESCRIPTION;

    fn run(ctx: &Context, args: WriteArgs) -> Result<ToolOutput, ToolError> {
        let Some(content) = args.content else {
            return Err(ToolError::new(
                "write.missing_content",
                "`content` is missing: give the full text of the file (an empty string for an empty file).",
            ));
        };
        let path = ctx.resolve(&args.file_path)?;
        let shown = ctx.show(&path);
        let meta = ctx.metadata(&path).ok();
        if args.file_path.ends_with('/') || meta.as_ref().is_some_and(|m| m.is_dir()) {
            return Err(ToolError::new(
                "write.is_directory",
                format!("`{shown}` is a directory; give the path of a file inside it."),
            ));
        }
        if meta.as_ref().is_some_and(|m| !m.is_file()) {
            return Err(ToolError::new(
                "write.not_a_file",
                format!(
                    "`{shown}` is not a regular file (a device, socket or pipe); write only writes regular files."
                ),
            ));
        }
        if meta.is_none() {
            crate::tools::fileops::refuse_repeated_working_directory(ctx, &path, &shown)?;
        }
        // What the buffer holds: the hash ag-loop remembers is of what the
        // model read, the editor's text, so that is what it is checked
        // against; and the content is made ready beside it as ag-write
        // makes it ready beside the file (write_content).
        let before = match ask(Op::Read { path: path.clone() }) {
            Ok(text) => Some(text.unwrap_or_default()),
            // A new file, in no buffer yet.
            Err(_) if meta.is_none() => None,
            Err(e) if args.expected_hash.is_some() => {
                return Err(ToolError::new(
                    "write.editor",
                    format!("the editor could not read `{shown}` to check it: {e}"),
                ));
            }
            // Nothing to compare with: the content is written as given.
            Err(_) => None,
        };
        if args.expected_hash.is_some() {
            check_hash(
                "write.stale",
                &shown,
                args.expected_hash.as_deref(),
                before
                    .as_deref()
                    .map(|t| content_hash(t.as_bytes()))
                    .as_deref(),
            )?;
        }
        let compared = before
            .as_deref()
            .map(str::as_bytes)
            .filter(|b| b.len() as u64 <= write_content::COMPARED_UP_TO);
        let prepared = write_content::prepare(&shown, compared, content.into_bytes());
        if let Some(unchanged) = prepared.unchanged(&shown, |t| compared == Some(t)) {
            return Ok(unchanged);
        }
        // As ag-write refuses them: an elision mark over a file, and a
        // data file that would stop being one.
        if let Some(b) = &before
            && let Some(why) =
                write_content::elision_mark_over(&shown, b.len() as u64, &prepared.content)
        {
            return Err(ToolError::new("write.elision_mark", why));
        }
        if let Some(b) = compared
            && let Some(why) =
                crate::tools::data_syntax::refused_write(&shown, b, &prepared.content)
        {
            return Err(ToolError::new("write.breaks_format", why));
        }
        // As ag-write says it: a new file one slip from a file beside it.
        let near = meta
            .is_none()
            .then(|| crate::tools::fileops::near_names_beside(&ctx.cwd, &path))
            .flatten();
        // Made from the content's text, so still text: nothing is lost.
        let text = String::from_utf8_lossy(&prepared.content).into_owned();
        ask(Op::Write {
            path,
            content: text,
        })
        .map_err(|e| {
            ToolError::new(
                "write.editor",
                format!("the editor could not write `{shown}`: {e}"),
            )
        })?;
        let (mut output, mut details) =
            write_content::written(&shown, &prepared.content, meta.is_none());
        prepared.note(
            compared,
            before
                .as_ref()
                .map(|b| b.len() as u64)
                .or(meta.as_ref().map(|m| m.len())),
            &mut output,
            &mut details,
        );
        if let Some((near, said)) = near {
            output.push_str(&format!("; {said}"));
            details["near_names_beside"] = serde_json::json!(near);
        }
        Ok(ToolOutput::new(output, details))
    }
}

/// The ag-loop flags that put the tools through the editor: `tools`
/// (the list ag-loop would offer, by name) without those replaced, and a
/// `--tool` for each that is. `which` are the ones the editor can do.
pub fn loop_flags(tools: &[&str], which: &[Which], bridge: &Bridge, session: &str) -> Vec<String> {
    let me = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("ag-acp"));
    let name = |w: Which| match w {
        Which::Read => ReadTool::NAME,
        Which::Write => WriteTool::NAME,
        Which::Edit => EditTool::NAME,
        Which::Bash => BashTool::NAME,
    };
    let replaced: Vec<Which> = which
        .iter()
        .copied()
        .filter(|w| tools.contains(&name(*w)))
        .collect();
    // The model's other tools made of a replaced binary (edit_lines of
    // ag-edit, say) go too: the editor's tool takes all of its calls, and
    // ag-edit's own would write to disk under the editor's buffer.
    let of_replaced = |t: &str| {
        replaced.iter().any(|w| {
            name(*w) == t || crate::tools::offer::find(t).is_some_and(|o| o.tool == name(*w))
        })
    };
    let kept: Vec<&str> = tools.iter().copied().filter(|t| !of_replaced(t)).collect();
    let mut flags = vec!["--tools".to_string(), kept.join(",")];
    for w in replaced {
        flags.push("--tool".into());
        flags.push(format!(
            "{} {SUBCOMMAND} {} --socket {} --session {}",
            shell_quote(&me.display().to_string()),
            name(w),
            shell_quote(&bridge.socket.display().to_string()),
            shell_quote(session)
        ));
    }
    flags
}

/// A session's socket, served while it lives; the directory goes with it.
pub struct Bridge {
    socket: PathBuf,
    task: tokio::task::JoinHandle<()>,
    _dir: tempfile::TempDir,
    served: Arc<Served>,
}

impl Bridge {
    /// The editor's terminals by tool call (`--editor-terminal`).
    pub fn terminals(&self) -> Terminals {
        self.served.terminals.clone()
    }

    /// The session's ag-loop is now this process: only the shims it
    /// starts may run commands in the editor's terminal.
    pub fn set_loop_pid(&self, pid: u32) {
        self.served.loop_pid.store(pid, Ordering::Relaxed);
    }

    /// Waits, at most `limit`, until no shim's request is being answered.
    /// A cancelled call's terminal is killed and released after its shim
    /// is gone, which may be after ag-loop ended the prompt; ACP wants
    /// those requests sent before the prompt answers `cancelled`.
    pub async fn settled(&self, limit: Duration) {
        let mut busy = self.served.busy.subscribe();
        let _ = tokio::time::timeout(limit, busy.wait_for(|n| *n == 0)).await;
    }
}

/// One request being answered, counted in `Served::busy` while it lives
/// (so a task that ends any way, aborted included, is uncounted).
struct Answering(Arc<Served>);

impl Answering {
    fn new(served: Arc<Served>) -> Answering {
        served.busy.send_modify(|n| *n += 1);
        Answering(served)
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.busy.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What a session's socket serves, and for whom.
struct Served {
    session: String,
    root: PathBuf,
    peer: Peer,
    /// The editor's terminal runs `bash` (`--editor-terminal`).
    terminal: bool,
    terminals: Terminals,
    loop_pid: AtomicU32,
    /// The requests being answered (see `Bridge::settled`).
    busy: tokio::sync::watch::Sender<usize>,
}

/// Opens the socket of session `session` in `cwd`: in a directory only
/// this user can enter, itself only this user's. `terminal`: commands may
/// run in the editor's terminal.
pub fn open(session: &str, cwd: &Path, peer: Peer, terminal: bool) -> io::Result<Bridge> {
    let dir = tempfile::Builder::new().prefix("ag-acp-").tempdir()?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))?;
    let socket = dir.path().join("fs.sock");
    let listener = tokio::net::UnixListener::bind(&socket)?;
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))?;
    let served = Arc::new(Served {
        session: session.to_string(),
        root: crate::tool_protocol::real_path(cwd),
        peer,
        terminal,
        terminals: Terminals::default(),
        loop_pid: AtomicU32::new(0),
        busy: tokio::sync::watch::Sender::new(0),
    });
    let serving = served.clone();
    let task = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            // Counted from the accept, before the task runs.
            let answering = Answering::new(serving.clone());
            tokio::spawn(answer(stream, answering));
        }
    });
    Ok(Bridge {
        socket,
        task,
        _dir: dir,
        served,
    })
}

/// Answers one request of a shim.
async fn answer(stream: tokio::net::UnixStream, answering: Answering) {
    let served = &answering.0;
    let peer_pid = stream
        .peer_cred()
        .ok()
        .and_then(|c| c.pid())
        .and_then(|p| u32::try_from(p).ok());
    let (rd, mut wr) = stream.into_split();
    let mut line = Vec::new();
    let mut reader = tokio::io::BufReader::new(rd.take(MAX_MESSAGE));
    let read = reader.read_until(b'\n', &mut line).await;
    // The shim sends nothing more: the end of its side is its end (the
    // call was cancelled, or its time ran out in ag-loop).
    let gone = async move {
        let mut buf = [0u8; 64];
        while let Ok(n) = reader.read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
    };
    let reply = match read {
        Err(e) => Reply {
            error: Some(format!("cannot read the request: {e}")),
            ..Reply::default()
        },
        Ok(_) => match serde_json::from_slice::<Request>(&line) {
            Err(e) => Reply {
                error: Some(format!("a bad request: {e}")),
                ..Reply::default()
            },
            Ok(req) => serve(req, served, peer_pid, gone).await,
        },
    };
    if let Ok(mut out) = serde_json::to_vec(&reply) {
        out.push(b'\n');
        let _ = wr.write_all(&out).await;
    }
}

async fn serve(
    req: Request,
    served: &Served,
    peer_pid: Option<u32>,
    gone: impl Future<Output = ()>,
) -> Reply {
    let error = |e: String| Reply {
        error: Some(e),
        ..Reply::default()
    };
    let session = served.session.as_str();
    if let Some(why) = refusal(&req, session, &served.root) {
        return error(why);
    }
    let cx = &served.peer.cx;
    match req.op {
        Op::Read { path } => match cx
            .send_request(ReadTextFileRequest::new(session.to_string(), path))
            .block_task()
            .await
        {
            Ok(r) => Reply {
                text: Some(r.content),
                ..Reply::default()
            },
            Err(e) => error(e.to_string()),
        },
        Op::Write { path, content } => match cx
            .send_request(WriteTextFileRequest::new(
                session.to_string(),
                path,
                content,
            ))
            .block_task()
            .await
        {
            Ok(_) => Reply::default(),
            Err(e) => error(e.to_string()),
        },
        Op::Bash(run) => {
            if !served.terminal {
                return error("this session does not run commands in the editor's terminal".into());
            }
            let loop_pid = served.loop_pid.load(Ordering::Relaxed);
            if !peer_pid.is_some_and(|p| editor_terminal::started_by(p, loop_pid)) {
                return error(
                    "only the bash tool of this session's ag-loop may run commands in the editor's terminal"
                        .into(),
                );
            }
            match editor_terminal::run(*run, session, &served.peer, &served.terminals, gone).await {
                Ok(ran) => Reply {
                    ran: Some(ran),
                    ..Reply::default()
                },
                Err(e) => error(e),
            }
        }
    }
}

/// Why ag-acp will not pass a request on: another session's, or a path
/// outside the session's directory (checked here too: the socket is the
/// boundary, not the shim).
fn refusal(req: &Request, session: &str, root: &Path) -> Option<String> {
    if req.session != session {
        return Some(format!(
            "this socket serves session {session}, not {}",
            req.session
        ));
    }
    let path = match &req.op {
        Op::Read { path } | Op::Write { path, .. } => path,
        Op::Bash(run) => &run.cwd,
    };
    (!path.is_absolute() || !crate::tool_protocol::real_path(path).starts_with(root)).then(|| {
        format!(
            "`{}` is outside the session's directory `{}`",
            path.display(),
            root.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acp::editor_link::Run;

    fn read(session: &str, path: &Path) -> Request {
        Request {
            session: session.into(),
            op: Op::Read { path: path.into() },
        }
    }

    #[test]
    fn only_this_sessions_paths_inside_its_directory_pass() {
        let dir = tempfile::tempdir().unwrap();
        let root = crate::tool_protocol::real_path(dir.path());
        std::fs::write(root.join("a.txt"), "x").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("out")).unwrap();
        assert_eq!(refusal(&read("s1", &root.join("a.txt")), "s1", &root), None);
        // A new file inside is fine too.
        assert_eq!(
            refusal(&read("s1", &root.join("new/b.txt")), "s1", &root),
            None
        );
        for bad in [
            read("s2", &root.join("a.txt")),
            read("s1", Path::new("a.txt")),
            read("s1", &root.join("../x")),
            read("s1", &root.join("out")),
            read("s1", Path::new("/etc/passwd")),
            Request {
                session: "s1".into(),
                op: Op::Write {
                    path: "/tmp/elsewhere".into(),
                    content: String::new(),
                },
            },
            // A command to run elsewhere.
            Request {
                session: "s1".into(),
                op: Op::Bash(Box::new(Run {
                    tool_call_id: None,
                    command: "true".into(),
                    shell: "bash".into(),
                    cwd: "/".into(),
                    timeout_ms: 1000,
                    output_limit: 1024,
                    policy: None,
                })),
            },
        ] {
            assert!(refusal(&bad, "s1", &root).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn the_shims_schemas_are_ag_reads_and_ag_writes_as_the_model_sees_them() {
        let read = tool_protocol::definition::<ReadTool>();
        assert_eq!(tool_protocol::definition::<EditorRead>(), read);
        let mut write = tool_protocol::definition::<WriteTool>();
        assert!(hashes::hide_hash_field(&mut write.parameters));
        let mut shim = tool_protocol::definition::<EditorWrite>();
        hashes::hide_hash_field(&mut shim.parameters);
        assert_eq!(shim, write);
        assert_eq!(
            tool_protocol::definition::<EditorBash>(),
            tool_protocol::definition::<BashTool>()
        );
        assert_eq!(
            tool_protocol::definition::<EditorEdit>(),
            tool_protocol::definition::<EditTool>()
        );
    }
}
