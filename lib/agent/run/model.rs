//! The model behind the loop: the library client in-process (one HTTP
//! client, so connections are reused across turns), or any program that
//! speaks ag-llm's protocol (`--llm-cmd`).

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::llm::Llm;
use crate::proc::{self, CaptureLimit, Input, LineLimits, Lines, Streaming};
use crate::protocol::{AssistantMessage, ContentBlock, LlmEvent, LlmRequest, StopReason};

/// Where model calls go.
pub enum ModelClient {
    /// The library client.
    Library(Arc<Llm>),
    /// A shell command that reads one request on stdin and streams events.
    Command(String),
}

impl ModelClient {
    /// A new prompt: servers that went silent in the last one are asked
    /// again (the library's silence limit holds per prompt).
    pub fn forget_silence(&self) {
        if let ModelClient::Library(llm) = self {
            llm.forget_silence();
        }
    }

    /// Streams one model call; see [`Llm::stream`].
    pub async fn stream(
        &self,
        req: &LlmRequest,
        sink: &mut (dyn FnMut(LlmEvent) + Send),
        cancel: &CancellationToken,
    ) -> AssistantMessage {
        match self {
            ModelClient::Library(llm) => llm.stream(req, sink, cancel).await,
            ModelClient::Command(cmd) => stream_command(cmd, req, sink, cancel).await,
        }
    }

    /// Whether `model` can be called (a known provider, a well-formed id,
    /// a key); an `--llm-cmd` program decides for itself.
    pub fn check(&self, model: &str) -> Result<(), String> {
        match self {
            ModelClient::Library(llm) => llm.check(model).map_err(|f| f.message),
            ModelClient::Command(_) => Ok(()),
        }
    }

    /// The context window of `model`, when the model table or its server
    /// says (an `--llm-cmd` program's is not known).
    pub async fn context_window(&self, model: &str) -> Option<u64> {
        match self {
            ModelClient::Library(llm) => llm.context_window(model).await.map(|w| w.tokens),
            ModelClient::Command(_) => None,
        }
    }

    /// Whether `model` takes images, as the model table (with models.json)
    /// says; a model it does not know is taken to.
    pub fn takes_images(&self, model: &str) -> bool {
        match self {
            ModelClient::Library(llm) => llm.model_info(model).is_none_or(|m| m.images),
            ModelClient::Command(_) => {
                crate::llm::ModelTable::load(&crate::llm::models::default_ag_home())
                    .ok()
                    .and_then(|t| t.resolve(model))
                    .is_none_or(|m| m.images)
            }
        }
    }
}

/// Builds the assistant message from stream events, so that an interrupted
/// or failed stream still leaves its partial content.
#[derive(Default)]
pub struct Accumulator {
    /// The message so far.
    pub message: AssistantMessage,
    /// Indexes of the tool calls whose arguments are complete.
    ended: Vec<usize>,
}

impl Accumulator {
    fn slot(&mut self, index: usize, make: impl FnOnce() -> ContentBlock) -> &mut ContentBlock {
        while self.message.content.len() <= index {
            self.message.content.push(ContentBlock::Text {
                text: String::new(),
            });
        }
        let fresh = make();
        let block = &mut self.message.content[index];
        if std::mem::discriminant(&*block) != std::mem::discriminant(&fresh) {
            *block = fresh;
        }
        block
    }

    /// Adds one event.
    pub fn push(&mut self, event: &LlmEvent) {
        match event {
            LlmEvent::Start { model } => self.message.model = Some(model.clone()),
            LlmEvent::TextDelta { index, delta } => {
                if let ContentBlock::Text { text } = self.slot(*index, || ContentBlock::Text {
                    text: String::new(),
                }) {
                    text.push_str(delta);
                }
            }
            LlmEvent::ThinkingDelta { index, delta } => {
                if let ContentBlock::Thinking { thinking, .. } =
                    self.slot(*index, || ContentBlock::Thinking {
                        thinking: String::new(),
                        signature: None,
                        redacted: false,
                    })
                {
                    thinking.push_str(delta);
                }
            }
            LlmEvent::ToolCallStart { index, id, name } => {
                let (id, name) = (id.clone(), name.clone());
                *self.slot(*index, || ContentBlock::ToolCall {
                    id: String::new(),
                    name: String::new(),
                    arguments: Value::Null,
                }) = ContentBlock::ToolCall {
                    id,
                    name,
                    arguments: Value::Object(Default::default()),
                };
            }
            // The raw argument text is only for displays; the end event
            // carries the parsed arguments.
            LlmEvent::ToolCallDelta { .. } => {}
            LlmEvent::ToolCallEnd {
                index,
                id,
                name,
                arguments,
            } => {
                self.ended.push(*index);
                *self.slot(*index, || ContentBlock::Text {
                    text: String::new(),
                }) = ContentBlock::ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: arguments.clone(),
                };
            }
            LlmEvent::Done { message } | LlmEvent::Error { message, .. } => {
                self.message = message.clone()
            }
        }
    }

    /// The partial message, ended with `reason`: tool calls whose arguments
    /// never completed are dropped, since nothing can run them.
    pub fn finish(mut self, reason: StopReason, error: Option<String>) -> AssistantMessage {
        let mut index = 0;
        let ended = std::mem::take(&mut self.ended);
        self.message.content.retain(|b| {
            let keep = !matches!(b, ContentBlock::ToolCall { .. }) || ended.contains(&index);
            index += 1;
            keep
        });
        self.message
            .content
            .retain(|b| !matches!(b, ContentBlock::Text { text } if text.is_empty()));
        self.message.stop_reason = reason;
        self.message.error_message = error;
        self.message
    }
}

/// How long an `--llm-cmd` that has sent its last event gets to exit by
/// itself before its group is stopped.
const EXIT_WAIT: Duration = Duration::from_secs(1);

/// The limits of an `--llm-cmd`'s stdout: one event a line (a `done` event
/// repeats the whole message), and a total no real answer comes near.
fn llm_cmd_limits() -> LineLimits {
    LineLimits {
        max_line: 16 * 1024 * 1024,
        max_total: Some(256 * 1024 * 1024),
        stderr: CaptureLimit::new(64 * 1024),
    }
}

async fn stream_command(
    cmd: &str,
    req: &LlmRequest,
    sink: &mut (dyn FnMut(LlmEvent) + Send),
    cancel: &CancellationToken,
) -> AssistantMessage {
    let acc = Accumulator::default();
    let fail = |acc: Accumulator, sink: &mut (dyn FnMut(LlmEvent) + Send), msg: String| {
        let message = acc.finish(StopReason::Error, Some(msg.clone()));
        sink(LlmEvent::Error {
            message: message.clone(),
            error: msg,
        });
        message
    };
    let mut line = match serde_json::to_vec(req) {
        Ok(l) => l,
        Err(e) => return fail(acc, sink, format!("cannot encode the request: {e}")),
    };
    line.push(b'\n');
    let mut command = proc::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(Input::Bytes(line));
    // The one exception to the withheld provider keys: this program makes
    // the model call itself (ag-llm, or a wrapper around it), so it gets
    // them back, from this process's own environment.
    for name in proc::withheld_env() {
        if let Some(value) = std::env::var_os(&name) {
            command = command.env(&name, value);
        }
    }
    let Streaming {
        mut lines, running, ..
    } = match command.stream_lines(llm_cmd_limits(), cancel) {
        Ok(s) => s,
        Err(e) => return fail(acc, sink, format!("cannot start --llm-cmd `{cmd}`: {e}")),
    };
    let (acc, finished, problem) = read_events(&mut lines, acc, sink, cancel).await;
    // Done with its output: it gets a moment to exit (none when it broke
    // the protocol), then its group, and whatever it left on the pipe, is
    // ended.
    drop(lines);
    if problem.is_some() {
        running.stop();
    }
    let ended = running.finish(EXIT_WAIT).await;
    match (finished, problem) {
        (Some(m), _) => m,
        (None, _) if cancel.is_cancelled() => {
            let message = acc.finish(StopReason::Aborted, None);
            sink(LlmEvent::Done {
                message: message.clone(),
            });
            message
        }
        (None, Some(problem)) => fail(acc, sink, problem),
        (None, None) => {
            let (status, stderr) = match &ended {
                Ok(o) => (o.status.to_string(), o.stderr.lossy()),
                Err(e) => (e.to_string(), String::new()),
            };
            fail(
                acc,
                sink,
                format!(
                    "--llm-cmd `{cmd}` ended ({status}) without a done or error event{}",
                    match stderr.trim() {
                        "" => String::new(),
                        t => format!(": {t}"),
                    }
                ),
            )
        }
    }
}

/// Reads events until the final one (`done` or `error`), the end of the
/// output, a line that is not an event, or cancellation; returns the
/// accumulated message, the final message if one came, and what went wrong.
async fn read_events(
    lines: &mut Lines,
    mut acc: Accumulator,
    sink: &mut (dyn FnMut(LlmEvent) + Send),
    cancel: &CancellationToken,
) -> (Accumulator, Option<AssistantMessage>, Option<String>) {
    loop {
        let next = tokio::select! {
            _ = cancel.cancelled() => return (acc, None, None),
            next = lines.next() => next,
        };
        let line = match next {
            None => return (acc, None, None),
            Some(Err(e)) => return (acc, None, Some(format!("--llm-cmd: {e}"))),
            Some(Ok(l)) => l,
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<LlmEvent>(&line) {
            Ok(ev) => {
                acc.push(&ev);
                let finished = match &ev {
                    LlmEvent::Done { message } | LlmEvent::Error { message, .. } => {
                        Some(message.clone())
                    }
                    _ => None,
                };
                sink(ev);
                if finished.is_some() {
                    return (acc, finished, None);
                }
            }
            Err(e) => {
                let text: String = String::from_utf8_lossy(&line).chars().take(200).collect();
                let problem =
                    format!("--llm-cmd printed a line that is not an ag-llm event ({e}): {text}");
                return (acc, None, Some(problem));
            }
        }
    }
}
