//! Stream parsing, separate from transport: a [`StreamParser`] per API
//! turns frames into content through a [`Builder`]; [`Decoder`] ties a
//! [`Framer`] to a parser so that any byte stream (reqwest's chunks, a
//! recording, test bytes cut anywhere) can be fed to it. The parser is
//! chosen by the API kind, but the first frame can overrule that: a chat
//! completion chunk is unmistakable whatever endpoint answered it.

use serde_json::Value;

use super::assemble::Builder;
use super::error::{Failure, FailureKind};
use super::frames::{Frame, Framer};
use super::models::Api;
use super::providers::parser_for;
use super::providers::stream::{Names, StreamParser};
use crate::protocol::{AssistantMessage, LlmEvent};

/// Which API a frame's JSON belongs to, when it is unmistakable.
fn sniff(v: &Value) -> Option<Api> {
    let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
    let object = v.get("object").and_then(Value::as_str).unwrap_or("");
    if object.starts_with("chat.completion") || v.get("choices").is_some() {
        Some(Api::OpenAiChat)
    } else if ty.starts_with("response.") {
        Some(Api::OpenAiResponses)
    } else if ty.starts_with("message_") || ty.starts_with("content_block_") || ty == "ping" {
        Some(Api::Anthropic)
    } else if v.get("candidates").is_some() || v.get("usageMetadata").is_some() {
        Some(Api::Gemini)
    } else {
        None
    }
}

/// Framer plus parser: bytes in, content out.
pub struct Decoder {
    framer: Framer,
    api: Api,
    names: Names,
    parser: Option<Box<dyn StreamParser>>,
    frames: Vec<Frame>,
    complete: bool,
}

impl Decoder {
    /// A decoder expecting `api`'s stream.
    pub fn new(api: Api, names: Names) -> Decoder {
        Decoder {
            framer: Framer::new(),
            api,
            names,
            parser: None,
            frames: Vec::new(),
            complete: false,
        }
    }

    /// The API of the stream, once known.
    pub fn api(&self) -> Api {
        self.api
    }

    /// True once the provider signalled the end of the answer.
    pub fn complete(&self) -> bool {
        self.complete
    }

    /// Feeds bytes.
    pub fn feed(&mut self, bytes: &[u8], b: &mut Builder<'_>) -> Result<(), Failure> {
        self.framer.feed(bytes, &mut self.frames);
        self.drain(b)
    }

    /// The body ended.
    pub fn finish(&mut self, b: &mut Builder<'_>) -> Result<(), Failure> {
        self.framer.finish(&mut self.frames);
        self.drain(b)?;
        if let Some(p) = self.parser.as_mut() {
            p.finish(b)?;
        }
        Ok(())
    }

    fn drain(&mut self, b: &mut Builder<'_>) -> Result<(), Failure> {
        // The vector goes back afterwards, emptied but with its capacity:
        // a new one for every read grew again through every size, copying
        // the frames each time.
        let mut frames = std::mem::take(&mut self.frames);
        let done = self.parse_frames(&frames, b);
        frames.clear();
        self.frames = frames;
        done
    }

    fn parse_frames(&mut self, frames: &[Frame], b: &mut Builder<'_>) -> Result<(), Failure> {
        for frame in frames {
            if self.complete {
                break;
            }
            if self.parser.is_none() {
                let data = frame.data.trim();
                if data.is_empty() {
                    continue;
                }
                if let Ok(v) = serde_json::from_str::<Value>(data) {
                    if let Some(api) = sniff(&v) {
                        self.api = api;
                    } else if v
                        .get("error")
                        .is_some_and(|e| e.is_object() || e.is_string())
                    {
                        // An error body sent with status 200, in no API's event shape.
                        return Err(super::error::classify_stream_error(
                            &self.names.provider,
                            &self.names.model,
                            &v,
                        ));
                    }
                }
                self.parser = Some(parser_for(self.api, self.names.clone()));
            }
            if let Some(p) = self.parser.as_mut()
                && p.frame(frame, b)?
            {
                self.complete = true;
            }
        }
        Ok(())
    }
}

/// Parses a whole recorded body (chunks as given) into the final message,
/// collecting the events: the same path as a live call, without the network.
pub fn parse_chunks<'c>(
    api: Api,
    chunks: impl IntoIterator<Item = &'c [u8]>,
) -> (AssistantMessage, Vec<LlmEvent>, Option<Failure>) {
    let mut events = Vec::new();
    let mut sink = |e: LlmEvent| events.push(e);
    let mut b = Builder::new(&mut sink);
    let mut d = Decoder::new(api, Names::default());
    let mut failure = None;
    for c in chunks {
        if let Err(f) = d.feed(c, &mut b) {
            failure = Some(f);
            break;
        }
    }
    if failure.is_none()
        && let Err(f) = d.finish(&mut b)
    {
        failure = Some(f);
    }
    let (mut msg, failure) = conclude(&mut b, failure);
    msg.api = Some(d.api().as_str().to_string());
    drop(b);
    (msg, events, failure)
}

/// The message at the end of a stream, and the failure if the answer is
/// not usable: a failure met on the way, a refusal, or a stream that
/// ended before the provider said the answer was complete.
pub fn conclude(
    b: &mut Builder<'_>,
    failure: Option<Failure>,
) -> (AssistantMessage, Option<Failure>) {
    let stop = b.stop;
    let refusal = b.refusal.take();
    let had_output = b.has_output();
    let mut msg = b.take_message();
    let failure = match (failure, stop, refusal) {
        (Some(f), _, _) => Some(f),
        (None, _, Some(r)) => Some(Failure::new(FailureKind::Refusal, r)),
        (None, Some(s), None) => {
            msg.stop_reason = s;
            None
        }
        // Nothing arrived: a dropped connection, worth another attempt.
        (None, None, None) if !had_output => Some(Failure::new(
            FailureKind::Network,
            "the connection closed before the answer began",
        )),
        (None, None, None) => Some(Failure::new(
            FailureKind::Stream,
            "the stream ended before the provider finished the answer",
        )),
    };
    if let Some(f) = &failure {
        msg.stop_reason = f.stop_reason();
        msg.error_message = Some(f.message.clone());
    }
    (msg, failure)
}
