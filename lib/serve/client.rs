//! The client commands: `list` and `end` ask and print; `start` and
//! `attach` bridge a pipe to a session, as `tmux attach` does a terminal:
//! the broker's lines go to stdout as they come, stdin's lines go to the
//! session, and the end of stdin detaches (the session goes on). A bridge
//! dropped for falling behind attaches again from where it left off, so
//! whoever reads it (ag-tui) sees every event once. `ag-tui --attach` runs
//! `ag-serve attach`.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use super::args::ClientCommand;
use crate::cli::{ExitStatus, Stdout, error_line};
use crate::protocol::{ServeMessage, ServeRequest, SessionInfo};

const BIN: &str = "ag-serve";

/// Runs a client command against the broker at `socket`.
pub async fn run(command: ClientCommand, socket: &Path) -> ExitStatus {
    let stream = match UnixStream::connect(socket).await {
        Ok(s) => s,
        Err(e) => {
            error_line(
                BIN,
                &format!("cannot connect to ag-serve at `{}`: {e}", socket.display()),
                Some("start the broker first: `ag-serve &` (or give its --socket)"),
            );
            return ExitStatus::Input;
        }
    };
    match command {
        ClientCommand::List { all, json } => list(stream, all, json).await,
        ClientCommand::End { session } => end(stream, session).await,
        ClientCommand::Start { cwd, client, args } => {
            let cwd = match cwd.map(absolute).transpose() {
                Ok(c) => c,
                Err(e) => {
                    error_line(
                        BIN,
                        &format!("cannot read the working directory: {e}"),
                        None,
                    );
                    return ExitStatus::Input;
                }
            };
            let req = ServeRequest::Start {
                cwd: cwd.map(|c| c.display().to_string()),
                args,
                prompt: None,
                client: Some(client.clone()),
            };
            bridge(stream, socket, req, client).await
        }
        ClientCommand::Attach {
            session,
            from,
            resume,
            client,
            args,
        } => {
            let req = ServeRequest::Attach {
                session,
                from,
                resume,
                args,
                client: Some(client.clone()),
            };
            bridge(stream, socket, req, client).await
        }
    }
}

fn absolute(p: PathBuf) -> io::Result<PathBuf> {
    Ok(std::env::current_dir()?.join(p))
}

/// One request, one answer.
async fn ask(stream: UnixStream, req: &ServeRequest) -> Result<ServeMessage, String> {
    let (read, mut write) = stream.into_split();
    send(&mut write, req).await.map_err(|e| e.to_string())?;
    let mut lines = BufReader::new(read).lines();
    loop {
        match lines.next_line().await {
            Ok(Some(l)) => {
                if let Ok(m) = serde_json::from_str::<ServeMessage>(&l) {
                    return Ok(m);
                }
            }
            Ok(None) => return Err("ag-serve closed the connection".into()),
            Err(e) => return Err(e.to_string()),
        }
    }
}

async fn send(write: &mut OwnedWriteHalf, req: &ServeRequest) -> io::Result<()> {
    let mut line = serde_json::to_vec(req).map_err(io::Error::other)?;
    line.push(b'\n');
    write.write_all(&line).await
}

async fn list(stream: UnixStream, all: bool, json: bool) -> ExitStatus {
    match ask(stream, &ServeRequest::List { all }).await {
        Ok(ServeMessage::Sessions { sessions }) => {
            let text = if json {
                sessions
                    .iter()
                    .filter_map(|s| serde_json::to_string(s).ok())
                    .map(|l| l + "\n")
                    .collect()
            } else {
                table(&sessions)
            };
            let _ = Stdout::new().write_all_flush(text.as_bytes());
            ExitStatus::Success
        }
        Ok(other) => unexpected(&other),
        Err(e) => lost(&e),
    }
}

/// The sessions as a table: id, state, clients, model, cost, last activity, cwd, first prompt.
fn table(sessions: &[SessionInfo]) -> String {
    if sessions.is_empty() {
        return String::new();
    }
    let mut out =
        String::from("ID\tSTATE\tCLIENTS\tMODEL\tCOST\tLAST ACTIVITY\tCWD\tFIRST PROMPT\n");
    for s in sessions {
        let state = serde_json::to_value(s.state)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let state = if s.resumable {
            format!("{state} (resumable)")
        } else {
            state
        };
        let prompt: String = s
            .first_prompt
            .as_deref()
            .unwrap_or("")
            .chars()
            .take(60)
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        out.push_str(&format!(
            "{}\t{state}\t{}\t{}\t${:.4}\t{}\t{}\t{prompt}\n",
            s.id,
            s.clients,
            s.model.as_deref().unwrap_or("-"),
            s.cost,
            s.last_activity.as_deref().unwrap_or("-"),
            s.cwd,
        ));
    }
    out
}

async fn end(stream: UnixStream, session: String) -> ExitStatus {
    match ask(
        stream,
        &ServeRequest::End {
            session: Some(session),
        },
    )
    .await
    {
        Ok(ServeMessage::Ending { .. }) => ExitStatus::Success,
        Ok(ServeMessage::Refused { message }) => {
            error_line(BIN, &message, None);
            ExitStatus::Input
        }
        Ok(other) => unexpected(&other),
        Err(e) => lost(&e),
    }
}

fn unexpected(m: &ServeMessage) -> ExitStatus {
    error_line(
        BIN,
        &format!("unexpected answer from ag-serve: {m:?}"),
        None,
    );
    ExitStatus::Failure
}

fn lost(e: &str) -> ExitStatus {
    error_line(
        BIN,
        &format!("the connection to ag-serve was lost: {e}"),
        None,
    );
    ExitStatus::Failure
}

/// How a bridged connection ended.
enum Over {
    /// Detached or the session ended: done.
    Done,
    /// Dropped for falling behind: attach again from this offset.
    Again { session: String, offset: u64 },
    /// The first answer refused the request.
    Refused(String),
    /// The connection broke.
    Lost(String),
}

/// Bridges stdin and stdout to a session until stdin ends (detach) or the
/// session does.
async fn bridge(
    stream: UnixStream,
    socket: &Path,
    first: ServeRequest,
    client: String,
) -> ExitStatus {
    let (stdin_tx, mut stdin_rx) = tokio::sync::mpsc::unbounded_channel::<Option<Vec<u8>>>();
    // Stdin is read once, for every connection the bridge makes.
    tokio::spawn(async move {
        let mut lines = BufReader::new(tokio::io::stdin());
        loop {
            let mut line = Vec::new();
            match lines.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => {
                    let _ = stdin_tx.send(None);
                    return;
                }
                Ok(_) => {
                    if !line.ends_with(b"\n") {
                        line.push(b'\n');
                    }
                    if stdin_tx.send(Some(line)).is_err() {
                        return;
                    }
                }
            }
        }
    });
    let mut stream = stream;
    let mut req = first;
    let mut first_answer = true;
    let (mut last, mut stuck) = (None, 0);
    loop {
        let (read, write) = stream.into_split();
        match one_connection(read, write, &req, &mut stdin_rx, first_answer).await {
            Over::Done => return ExitStatus::Success,
            Over::Refused(m) => {
                error_line(BIN, &m, None);
                return ExitStatus::Input;
            }
            Over::Lost(e) => return lost(&e),
            Over::Again { session, offset } => {
                // Coming back must get somewhere: a broker that keeps
                // letting go at the same offset is given up on.
                stuck = if last == Some(offset) { stuck + 1 } else { 0 };
                last = Some(offset);
                if stuck >= 3 {
                    return lost(&format!(
                        "ag-serve keeps letting go of this client at event {offset}"
                    ));
                }
                first_answer = false;
                req = ServeRequest::Attach {
                    session,
                    from: offset,
                    resume: false,
                    args: Vec::new(),
                    client: Some(client.clone()),
                };
                stream = match UnixStream::connect(socket).await {
                    Ok(s) => s,
                    Err(e) => return lost(&e.to_string()),
                };
            }
        }
    }
}

async fn one_connection(
    read: OwnedReadHalf,
    mut write: OwnedWriteHalf,
    req: &ServeRequest,
    stdin: &mut tokio::sync::mpsc::UnboundedReceiver<Option<Vec<u8>>>,
    first_answer: bool,
) -> Over {
    if let Err(e) = send(&mut write, req).await {
        return Over::Lost(e.to_string());
    }
    let mut lines = BufReader::new(read);
    let mut out = tokio::io::stdout();
    let mut awaiting_first = first_answer;
    let mut stdin_open = true;
    // Where this connection is in its session: where to come back to if
    // it breaks.
    let mut at: Option<(String, u64)> = None;
    let mut line = Vec::new();
    loop {
        tokio::select! {
            // Not cancel-safe, but what it read stays in `line` for the next call.
            got = lines.read_until(b'\n', &mut line) => {
                match got {
                    Ok(0) | Err(_) => {
                        // A connection closed under a client that was
                        // attached goes on where it was.
                        return match at {
                            Some((session, offset)) => Over::Again { session, offset },
                            None => Over::Lost("ag-serve closed the connection".into()),
                        };
                    }
                    Ok(_) => {}
                }
                if !line.ends_with(b"\n") {
                    continue;
                }
                let kind = message_kind(&line);
                if awaiting_first && kind.as_deref() == Some("refused") {
                    let m = serde_json::from_slice::<ServeMessage>(&line).ok();
                    if let Some(ServeMessage::Refused { message }) = m {
                        return Over::Refused(message);
                    }
                }
                awaiting_first = false;
                if out.write_all(&line).await.is_err() || out.flush().await.is_err() {
                    // Nobody reads: leave the session running.
                    return Over::Done;
                }
                match kind.as_deref() {
                    None => {
                        if let Some((_, offset)) = &mut at {
                            *offset += 1;
                        }
                    }
                    Some("attached") => {
                        if let Ok(ServeMessage::Attached { session, from, .. }) =
                            serde_json::from_slice::<ServeMessage>(&line)
                        {
                            at = Some((session, from));
                        }
                    }
                    Some("detached") | Some("session_ended") => return Over::Done,
                    Some("dropped") => {
                        if let Ok(ServeMessage::Dropped { session, offset, .. }) =
                            serde_json::from_slice::<ServeMessage>(&line)
                        {
                            return Over::Again { session, offset };
                        }
                    }
                    _ => {}
                }
                line.clear();
            }
            next = stdin.recv(), if stdin_open => match next {
                Some(Some(l)) => {
                    if let Err(e) = write.write_all(&l).await {
                        return Over::Lost(e.to_string());
                    }
                }
                Some(None) | None => {
                    stdin_open = false;
                    if let Err(e) = send(&mut write, &ServeRequest::Detach).await {
                        return Over::Lost(e.to_string());
                    }
                }
            },
        }
    }
}

/// The `type` of a broker message (not of an event: events have a timestamp).
fn message_kind(line: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(line).ok()?;
    if v.get("timestamp").is_some() {
        return None;
    }
    v.get("type").and_then(Value::as_str).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_broker_messages_have_a_kind_here() {
        assert_eq!(
            message_kind(br#"{"type":"detached","session":"s","offset":3}"#).as_deref(),
            Some("detached")
        );
        assert_eq!(
            message_kind(br#"{"type":"agent_end","timestamp":"t"}"#),
            None
        );
        assert_eq!(message_kind(b"not json"), None);
    }
}
