//! One live session: its `ag-loop --json --approve-on-stdin --session ID`
//! child, started through `crate::proc` (its own session and group, ended
//! with everything it started when ag-serve ends, by the watchdog should
//! ag-serve be killed outright), its stdin fed from a queue of command
//! lines, and its events published to the hub. Each line on the child's
//! stdout only rings the bell: the events themselves are read from the
//! session file (see `tail.rs`), which ag-loop writes first.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::hub::{Hub, Seen};
use super::tail::Tail;
use crate::llm::keys::Redactor;
use crate::proc::{CaptureLimit, Command, Input, LineLimits};
use crate::protocol::ServeMessage;

/// Lines of the child's stderr kept for the `session_ended` message.
const STDERR_TAIL: usize = 12;

/// What a new live session needs.
pub struct Spawn {
    /// The session's id.
    pub id: String,
    /// Its file (it exists, with its header at least).
    pub path: PathBuf,
    /// The working directory.
    pub cwd: PathBuf,
    /// The ag-loop program.
    pub program: PathBuf,
    /// The client's ag-loop flags.
    pub args: Vec<String>,
    /// The bytes a client may have queued.
    pub client_buffer: usize,
    /// What no line that ag-serve sends may carry.
    pub redactor: Arc<Redactor>,
    /// Cancelled when ag-serve shuts down: the child is stopped.
    pub shutdown: CancellationToken,
}

/// A session with its ag-loop running (or just ended).
pub struct Live {
    /// The session's id.
    pub id: String,
    /// Its file.
    pub path: PathBuf,
    /// Its working directory.
    pub cwd: PathBuf,
    /// The flags it was started with.
    pub args: Vec<String>,
    /// Its clients and state.
    pub hub: Hub,
    /// Lines to the child's stdin; `None` once closed.
    input: Mutex<Option<mpsc::UnboundedSender<Vec<u8>>>>,
    /// Set when the child has ended and its last events are published.
    ended: watch::Receiver<bool>,
}

impl Live {
    /// Starts ag-loop on the session; `on_end` runs once it has ended and
    /// its last events are out.
    pub fn spawn(
        spec: Spawn,
        on_end: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<Arc<Live>> {
        let tail = Tail::open(&spec.path)?;
        let seen = if tail.count() > 0 {
            super::hub::seen_in(&spec.path)?.0
        } else {
            Seen::default()
        };
        let seen = Seen {
            model: seen.model.or_else(|| model_flag(&spec.args)),
            ..seen
        };
        // Through `sh`, which leads the child's process group and stays
        // in it: ag-loop hides its own environment (the provider keys),
        // and with it the mark by which the watchdog finds what ag-serve
        // started; the shell shows the mark, so should ag-serve be killed
        // outright, the watchdog finds the shell and ends its group,
        // ag-loop with it (SIGTERM, then SIGKILL), as a kill of ag-loop
        // would. `; exit $?` keeps the shell from exec'ing ag-loop.
        let cmd = Command::new("sh")
            .arg("-c")
            .arg("\"$0\" \"$@\"; exit $?")
            .arg(&spec.program)
            .arg("--json")
            .arg("--approve-on-stdin")
            .arg("--session")
            .arg(&spec.id)
            .args(&spec.args)
            .cwd(&spec.cwd)
            .stdin(Input::Pipe)
            // No controlling terminal: nothing the child runs can take one.
            .new_session();
        let limits = LineLimits {
            // The lines are only a bell; their content is read from the file.
            max_line: 64 << 20,
            max_total: None,
            stderr: CaptureLimit::new(64 << 10),
        };
        let streaming = cmd
            .stream_lines(limits, &spec.shutdown)
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        let (input_tx, mut input_rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let (ended_tx, ended_rx) = watch::channel(false);
        let live = Arc::new(Live {
            hub: Hub::new(spec.id.clone(), tail.count(), seen, spec.client_buffer),
            id: spec.id,
            path: spec.path,
            cwd: spec.cwd,
            args: spec.args,
            input: Mutex::new(Some(input_tx)),
            ended: ended_rx,
        });
        // Stdin on a task of its own: a child slow to read never holds up
        // its events.
        if let Some(mut stdin) = streaming.stdin {
            tokio::spawn(async move {
                while let Some(line) = input_rx.recv().await {
                    if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
                        break;
                    }
                }
                // Dropping stdin closes it: ag-loop finishes and exits.
            });
        }
        let driven = live.clone();
        let mut lines = streaming.lines;
        let running = streaming.running;
        let redactor = spec.redactor;
        tokio::spawn(async move {
            let mut tail = tail;
            while lines.next().await.is_some() {
                // Whatever else rang meanwhile is read in the same pass.
                publish(&driven, &mut tail, &redactor);
            }
            let ended = running.wait().await;
            publish(&driven, &mut tail, &redactor);
            let (status, stderr) = match ended {
                Ok(o) => (o.status.to_string(), o.stderr.lossy()),
                Err(e) => (format!("could not be watched: {e}"), String::new()),
            };
            let stderr = stderr_tail(&stderr, &redactor);
            driven.close_input();
            driven.hub.end(ServeMessage::SessionEnded {
                session: driven.id.clone(),
                offset: tail.count(),
                status,
                stderr,
                resumable: driven.path.is_file(),
            });
            let _ = ended_tx.send(true);
            on_end();
        });
        Ok(live)
    }

    /// Queues a line (with its newline) for ag-loop's stdin; false when
    /// its stdin is closed.
    pub fn send(&self, line: Vec<u8>) -> bool {
        match &*self.input.lock().unwrap_or_else(|p| p.into_inner()) {
            Some(tx) => tx.send(line).is_ok(),
            None => false,
        }
    }

    /// Closes ag-loop's stdin once the queued lines are written: it
    /// finishes what it was given and exits.
    pub fn close_input(&self) {
        self.input.lock().unwrap_or_else(|p| p.into_inner()).take();
    }

    /// Whether ag-loop has ended.
    pub fn has_ended(&self) -> bool {
        *self.ended.borrow()
    }

    /// Waits until ag-loop has ended and its last events are out, at most
    /// `limit`; true when it has.
    pub async fn wait_ended(&self, limit: Duration) -> bool {
        let mut rx = self.ended.clone();
        tokio::time::timeout(limit, rx.wait_for(|e| *e))
            .await
            .is_ok_and(|r| r.is_ok())
    }
}

fn publish(live: &Live, tail: &mut Tail, redactor: &Redactor) {
    match tail.take_new() {
        Ok(mut events) => {
            if !redactor.is_empty() {
                for (_, line) in &mut events {
                    let mut owned = line.to_vec();
                    if redactor.json_line(&mut owned) {
                        *line = Arc::from(owned);
                    }
                }
            }
            live.hub.publish(&events);
        }
        Err(e) => crate::cli::warn(
            "ag-serve",
            &format!("cannot read session `{}`: {e}", live.path.display()),
        ),
    }
}

/// The last lines of the child's stderr, keys hidden; `None` when empty.
fn stderr_tail(stderr: &str, redactor: &Redactor) -> Option<String> {
    let lines: Vec<&str> = stderr.lines().collect();
    let start = lines.len().saturating_sub(STDERR_TAIL);
    let text = lines[start..].join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| redactor.text(text).into_owned())
}

/// The model a client's flags ask for, until the session says.
fn model_flag(args: &[String]) -> Option<String> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "-m" || a == "--model" {
            return it.next().cloned();
        }
        if let Some(m) = a.strip_prefix("--model=") {
            return Some(m.to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_flag_is_found_in_each_spelling() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(model_flag(&v(&["-m", "a/b"])).as_deref(), Some("a/b"));
        assert_eq!(
            model_flag(&v(&["--tools", "x", "--model=c/d"])).as_deref(),
            Some("c/d")
        );
        assert_eq!(model_flag(&v(&["--tools", "x"])), None);
    }

    #[test]
    fn the_stderr_tail_hides_keys_and_keeps_the_last_lines() {
        let mut r = Redactor::default();
        r.add("sk-secret-123456789", "OPENAI_API_KEY");
        let err: String = (0..20).map(|i| format!("line {i}\n")).collect::<String>()
            + "failed with sk-secret-123456789\n";
        let t = stderr_tail(&err, &r).unwrap();
        assert_eq!(t.lines().count(), STDERR_TAIL);
        assert!(t.ends_with("failed with [OPENAI_API_KEY redacted]"), "{t}");
        assert_eq!(stderr_tail("  \n", &r), None);
    }
}
