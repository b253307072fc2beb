//! Every event goes out through one emitter: stamped, cleared of provider
//! keys, printed (as JSONL, readably, or not at all) and appended to the
//! session file, so that a session file holds exactly what ag-loop printed.

use std::io;
use std::sync::Arc;

use super::render::Renderer;
use crate::cli::Stdout;
use crate::llm::keys::Redactor;
use crate::protocol::{AgentEvent, AgentEventRecord, LlmEvent};
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
    /// What the prompt under way did, gathered from its events: the run's
    /// work in `agent_end`, and what `--result-line` reports.
    result: super::run_summary::RunSummary,
    /// The end of the last streamed piece, held back while it could be
    /// the start of a key that the next piece completes.
    held: Option<Held>,
}

/// A streamed piece's tail that is not yet let out.
struct Held {
    /// Which stream: the delta event with the held text as its delta.
    event: LlmEvent,
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
            held: None,
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

    /// What the prompt under way did so far, from its events.
    pub fn work(&self) -> crate::protocol::Work {
        self.result.work()
    }

    /// The secrets this emitter hides.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// Emits one event. Redaction works on each event whole, and a key
    /// that the model writes out may come split over several deltas: so a
    /// delta's tail that could begin a key is held back until the next
    /// event settles it (a key, hidden whole, or not one, let out as it
    /// was, before that event).
    pub fn emit(&mut self, event: AgentEvent) -> io::Result<()> {
        if self.redactor.is_empty() {
            return self.write(event);
        }
        let AgentEvent::MessageUpdate { event: piece } = event else {
            if let Some(held) = self.held.take() {
                self.write(AgentEvent::MessageUpdate { event: held.event })?;
            }
            return self.write(event);
        };
        let Some((index, delta)) = delta_of(&piece) else {
            if let Some(held) = self.held.take() {
                self.write(AgentEvent::MessageUpdate { event: held.event })?;
            }
            return self.write(AgentEvent::MessageUpdate { event: piece });
        };
        let mut text = String::new();
        match self.held.take() {
            Some(held) if same_stream(&held.event, &piece) => {
                text.push_str(delta_of(&held.event).map_or("", |(_, d)| d));
            }
            Some(held) => self.write(AgentEvent::MessageUpdate { event: held.event })?,
            None => {}
        }
        text.push_str(delta);
        let text = self.redactor.text(&text).into_owned();
        let keep = text.len() - self.redactor.unsettled_tail(&text);
        let (now, later) = text.split_at(keep);
        if !later.is_empty() {
            self.held = Some(Held {
                event: with_delta(&piece, index, later.to_string()),
            });
        }
        if now.is_empty() {
            return Ok(());
        }
        self.write(AgentEvent::MessageUpdate {
            event: with_delta(&piece, index, now.to_string()),
        })
    }

    /// Stamps, redacts, records and prints one event.
    fn write(&mut self, event: AgentEvent) -> io::Result<()> {
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
        // Every mode keeps the summary: the runner reads the run's work
        // from it, and --result-line prints it.
        self.result.note(&record.event);
        if self.stdout_closed {
            if matches!(record.event, AgentEvent::AgentEnd { .. }) {
                self.result = self.result.fresh();
            }
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
        if self.mode != OutputMode::Result && matches!(record.event, AgentEvent::AgentEnd { .. }) {
            self.result = self.result.fresh();
        }
        match res {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.stdout_closed = true;
                Ok(())
            }
            other => other,
        }
    }
}

/// A streamed piece of text, thinking or tool arguments: its block and text.
fn delta_of(event: &LlmEvent) -> Option<(usize, &str)> {
    match event {
        LlmEvent::TextDelta { index, delta }
        | LlmEvent::ThinkingDelta { index, delta }
        | LlmEvent::ToolCallDelta { index, delta } => Some((*index, delta)),
        _ => None,
    }
}

/// Two pieces of one stream: the same kind, in the same block.
fn same_stream(a: &LlmEvent, b: &LlmEvent) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
        && delta_of(a).map(|(i, _)| i) == delta_of(b).map(|(i, _)| i)
}

/// `like`'s kind of piece, with other text.
fn with_delta(like: &LlmEvent, index: usize, delta: String) -> LlmEvent {
    match like {
        LlmEvent::ThinkingDelta { .. } => LlmEvent::ThinkingDelta { index, delta },
        LlmEvent::ToolCallDelta { .. } => LlmEvent::ToolCallDelta { index, delta },
        _ => LlmEvent::TextDelta { index, delta },
    }
}
