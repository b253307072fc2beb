//! The model behind the loop: the library client in-process (one HTTP
//! client, so connections are reused across turns), or any program that
//! speaks ag-llm's protocol (`--llm-cmd`).

use std::process::Stdio;
use std::sync::Arc;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;

use crate::llm::Llm;
use crate::protocol::{AssistantMessage, ContentBlock, LlmEvent, LlmRequest, StopReason};

/// Where model calls go.
pub enum ModelClient {
    /// The library client.
    Library(Arc<Llm>),
    /// A shell command that reads one request on stdin and streams events.
    Command(String),
}

impl ModelClient {
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

async fn stream_command(
    cmd: &str,
    req: &LlmRequest,
    sink: &mut (dyn FnMut(LlmEvent) + Send),
    cancel: &CancellationToken,
) -> AssistantMessage {
    let mut acc = Accumulator::default();
    let fail = |acc: Accumulator, sink: &mut (dyn FnMut(LlmEvent) + Send), msg: String| {
        let message = acc.finish(StopReason::Error, Some(msg.clone()));
        sink(LlmEvent::Error {
            message: message.clone(),
            error: msg,
        });
        message
    };
    let mut child = match crate::proc::tokio_command("sh", &["-c", cmd], None)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => return fail(acc, sink, format!("cannot start --llm-cmd `{cmd}`: {e}")),
    };
    let mut line = match serde_json::to_vec(req) {
        Ok(l) => l,
        Err(e) => return fail(acc, sink, format!("cannot encode the request: {e}")),
    };
    line.push(b'\n');
    if let Some(mut stdin) = child.stdin.take() {
        // A program that exits without reading is reported below by its output.
        let _ = stdin.write_all(&line).await;
    }
    let (Some(stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return fail(acc, sink, "--llm-cmd: no pipes".into());
    };
    let err_task = tokio::spawn(async move {
        let mut buf = Vec::new();
        let _ = (&mut stderr).take(64 * 1024).read_to_end(&mut buf).await;
        String::from_utf8_lossy(&buf).into_owned()
    });
    let mut lines = BufReader::new(stdout).lines();
    let mut finished: Option<AssistantMessage> = None;
    loop {
        tokio::select! {
            _ = cancel.cancelled() => {
                crate::proc::kill_group(&mut child, true).await;
                let message = acc.finish(StopReason::Aborted, None);
                sink(LlmEvent::Done { message: message.clone() });
                return message;
            }
            next = lines.next_line() => match next {
                Ok(Some(l)) if l.trim().is_empty() => {}
                Ok(Some(l)) => match serde_json::from_str::<LlmEvent>(&l) {
                    Ok(ev) => {
                        acc.push(&ev);
                        if let LlmEvent::Done { message } | LlmEvent::Error { message, .. } = &ev {
                            finished = Some(message.clone());
                        }
                        sink(ev);
                        if finished.is_some() {
                            break;
                        }
                    }
                    Err(e) => {
                        crate::proc::kill_group(&mut child, false).await;
                        return fail(acc, sink, format!("--llm-cmd printed a line that is not an ag-llm event ({e}): {}", l.chars().take(200).collect::<String>()));
                    }
                },
                Ok(None) => break,
                Err(e) => return fail(acc, sink, format!("cannot read --llm-cmd output: {e}")),
            }
        }
    }
    let status = child.wait().await;
    let stderr_text = err_task.await.unwrap_or_default();
    match finished {
        Some(m) => m,
        None => fail(
            acc,
            sink,
            format!(
                "--llm-cmd `{cmd}` ended ({}) without a done or error event{}",
                status
                    .map(|s| s.to_string())
                    .unwrap_or_else(|e| e.to_string()),
                if stderr_text.trim().is_empty() {
                    String::new()
                } else {
                    format!(": {}", stderr_text.trim())
                }
            ),
        ),
    }
}
