//! Every event goes out through one emitter: stamped, cleared of provider
//! keys, printed (as JSONL, readably, or not at all) and appended to the
//! session file, so that a session file holds exactly what ag-loop printed.

use std::io;
use std::sync::Arc;

use super::render::Renderer;
use crate::cli::Stdout;
use crate::llm::keys::Redactor;
use crate::protocol::{AgentEvent, AgentEventRecord};
use crate::session::{Writer, now};

/// How events are shown on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputMode {
    /// One JSON event per line.
    Json,
    /// Readable, for a terminal.
    Pretty,
    /// Only the final answer.
    Quiet,
    // Subagents (issue 35).
    /// One result line per prompt (`--result-line`).
    Result,
}

/// Stamps, prints and records events.
pub struct Emitter {
    mode: OutputMode,
    out: Stdout,
    session: Option<Writer>,
    renderer: Renderer,
    /// Set when stdout was closed; events still go to the session.
    stdout_closed: bool,
    /// Key values that no event may carry.
    redactor: Arc<Redactor>,
    /// Structured output is asked for: `--quiet` prints its value or nothing.
    structured: bool,
    /// What `--result-line` reports of the prompt under way.
    result: super::run_summary::RunSummary,
}

impl Emitter {
    /// An emitter for a mode and an optional session file.
    pub fn new(mode: OutputMode, session: Option<Writer>, color: bool) -> Self {
        Emitter {
            mode,
            out: Stdout::new(),
            session,
            renderer: Renderer::new(color),
            stdout_closed: false,
            redactor: Arc::default(),
            structured: false,
            result: Default::default(),
        }
    }

    /// With an output schema, `--quiet` prints only a valid answer's value:
    /// never prose that a pipeline would take for it.
    pub fn with_structured_output(mut self, on: bool) -> Self {
        self.structured = on;
        self
    }

    /// `--result-line` names changed files relative to `cwd`.
    pub fn with_result_dir(mut self, cwd: &std::path::Path) -> Self {
        self.result = super::run_summary::RunSummary::in_dir(cwd);
        self
    }

    /// Hides these secrets in every event from now on.
    pub fn with_redactor(mut self, redactor: Arc<Redactor>) -> Self {
        self.redactor = redactor;
        self
    }

    /// True when events are shown readably on stdout (a note there needs
    /// no copy on stderr).
    pub fn is_pretty(&self) -> bool {
        self.mode == OutputMode::Pretty
    }

    /// The secrets this emitter hides.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// Emits one event.
    pub fn emit(&mut self, event: AgentEvent) -> io::Result<()> {
        let mut record = AgentEventRecord {
            timestamp: now(),
            event,
        };
        let mut line = serde_json::to_vec(&record).map_err(io::Error::other)?;
        // Wherever a key hides in the event (a prompt, a tool's output, a
        // model's text), it is replaced before the event goes anywhere.
        if self.redactor.json_line(&mut line) {
            record = serde_json::from_slice(&line).map_err(io::Error::other)?;
        }
        line.push(b'\n');
        if let Some(w) = &mut self.session {
            w.append_line(&line)?;
        }
        if self.stdout_closed {
            return Ok(());
        }
        let res = match self.mode {
            OutputMode::Json => self.out.write_all_flush(&line),
            OutputMode::Pretty => {
                let text = self.renderer.render(&record.event);
                if text.is_empty() {
                    Ok(())
                } else {
                    self.out.write_all_flush(text.as_bytes())
                }
            }
            OutputMode::Result => {
                self.result.note(&record.event);
                if matches!(record.event, AgentEvent::AgentEnd { .. }) {
                    let fresh = self.result.fresh();
                    let line = std::mem::replace(&mut self.result, fresh).line();
                    self.out.write_all_flush(format!("{line}\n").as_bytes())
                } else {
                    Ok(())
                }
            }
            OutputMode::Quiet => match &record.event {
                // Structured output: exactly the value, on one line.
                AgentEvent::AgentEnd {
                    output: Some(value),
                    ..
                } => self.out.write_all_flush(format!("{value}\n").as_bytes()),
                AgentEvent::AgentEnd { .. } if self.structured => Ok(()),
                AgentEvent::AgentEnd { messages, .. } => {
                    let answer = super::render::final_answer(messages);
                    if answer.is_empty() {
                        Ok(())
                    } else {
                        self.out.write_all_flush(format!("{answer}\n").as_bytes())
                    }
                }
                _ => Ok(()),
            },
        };
        match res {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.stdout_closed = true;
                Ok(())
            }
            other => other,
        }
    }
}
