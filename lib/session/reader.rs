//! Reading session files as a stream: the header, then the records, with
//! damage (a torn last line, a corrupt line in the middle) reported by line
//! number and skipped. Large sessions are never loaded whole.

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use serde_json::json;

use crate::protocol::{
    AgentEvent, AgentEventRecord, ContentBlock, Message, SessionHeader, ToolResultMessage,
};

/// A damaged line found while reading.
#[derive(Debug, Clone, PartialEq)]
pub enum Damage {
    /// The last line has no newline and is not valid JSON: a crash mid-write.
    Torn {
        /// 1-based line number.
        line: usize,
    },
    /// A line in the middle that is not a valid record.
    Corrupt {
        /// 1-based line number.
        line: usize,
        /// Why it could not be read.
        error: String,
    },
}

impl std::fmt::Display for Damage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Damage::Torn { line } => write!(
                f,
                "line {line}: torn last line (a crash mid-write), skipped"
            ),
            Damage::Corrupt { line, error } => {
                write!(f, "line {line}: corrupt record skipped: {error}")
            }
        }
    }
}

/// A streaming reader over one session file.
pub struct Reader {
    input: BufReader<File>,
    buf: Vec<u8>,
    line: usize,
    /// Damage seen so far.
    pub damage: Vec<Damage>,
}

impl Reader {
    /// Opens a session file.
    pub fn open(path: &Path) -> io::Result<Reader> {
        let file = File::open(path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot open session `{}`: {e}", path.display()),
            )
        })?;
        Ok(Reader {
            input: BufReader::with_capacity(256 * 1024, file),
            buf: Vec::with_capacity(4096),
            line: 0,
            damage: Vec::new(),
        })
    }

    /// The next raw line (without its newline) and whether it had one.
    /// Blank lines are skipped.
    pub fn next_line(&mut self) -> io::Result<Option<(usize, &[u8], bool)>> {
        loop {
            self.buf.clear();
            let n = self.input.read_until(b'\n', &mut self.buf)?;
            if n == 0 {
                return Ok(None);
            }
            self.line += 1;
            let ended = self.buf.last() == Some(&b'\n');
            let mut end = self.buf.len();
            while end > 0 && matches!(self.buf[end - 1], b'\n' | b'\r') {
                end -= 1;
            }
            if self.buf[..end].iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            return Ok(Some((self.line, &self.buf[..end], ended)));
        }
    }

    /// Parses a line into `T`, recording damage (and returning `None`) when it fails.
    pub fn parse<T: serde::de::DeserializeOwned>(
        &mut self,
        line: usize,
        bytes: &[u8],
        ended: bool,
    ) -> Option<T> {
        match serde_json::from_slice::<T>(bytes) {
            Ok(v) => Some(v),
            Err(e) => {
                self.damage.push(
                    if !ended && serde_json::from_slice::<serde_json::Value>(bytes).is_err() {
                        Damage::Torn { line }
                    } else {
                        Damage::Corrupt {
                            line,
                            error: e.to_string(),
                        }
                    },
                );
                None
            }
        }
    }

    /// Reads the header from the first line.
    pub fn header(&mut self) -> io::Result<Option<SessionHeader>> {
        let Some((line, bytes, ended)) = self.next_line()? else {
            return Ok(None);
        };
        let bytes = bytes.to_vec();
        Ok(self.parse::<SessionHeader>(line, &bytes, ended))
    }

    /// Calls `f` with every event record after the header; lines that are
    /// not events are reported as damage.
    pub fn for_each_event(&mut self, mut f: impl FnMut(usize, AgentEventRecord)) -> io::Result<()> {
        while let Some((line, bytes, ended)) = self.next_line()? {
            let bytes = bytes.to_vec();
            if let Some(rec) = self.parse::<AgentEventRecord>(line, &bytes, ended) {
                f(line, rec);
            }
        }
        Ok(())
    }

    /// Like [`Reader::for_each_event`] but only for lines that may be one of
    /// `kinds` (a byte search skips the rest unparsed, which keeps reading a
    /// long session fast: most lines are streaming updates).
    pub fn for_each_event_of(
        &mut self,
        kinds: &[&str],
        f: impl FnMut(usize, AgentEventRecord),
    ) -> io::Result<()> {
        self.events_of(kinds, true, f)
    }

    /// Like [`Reader::for_each_event_of`], but each matching line is read as
    /// a `T` (a record type that keeps only what the caller needs), and the
    /// other lines are not checked, except a last line without its newline
    /// (a torn write). For `list`, which reads every session of a directory
    /// and shows nothing of those lines: checking their syntax is most of
    /// the cost of reading a session, and the commands that show a session
    /// still report them.
    pub fn for_each_line_of_unchecked<T: serde::de::DeserializeOwned>(
        &mut self,
        kinds: &[&str],
        f: impl FnMut(usize, T),
    ) -> io::Result<()> {
        self.events_of(kinds, false, f)
    }

    fn events_of<T: serde::de::DeserializeOwned>(
        &mut self,
        kinds: &[&str],
        check_all: bool,
        mut f: impl FnMut(usize, T),
    ) -> io::Result<()> {
        let finders: Vec<memchr::memmem::Finder<'static>> = kinds
            .iter()
            .map(|k| memchr::memmem::Finder::new(k.as_bytes()).into_owned())
            .collect();
        while let Some((line, bytes, ended)) = self.next_line()? {
            if !finders.iter().any(|fd| fd.find(bytes).is_some()) {
                if !check_all && ended {
                    continue;
                }
                // Still catch damage: checking the syntax without building
                // values is several times cheaper than parsing the record.
                if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
                    self.damage.push(if ended {
                        Damage::Corrupt {
                            line,
                            error: e.to_string(),
                        }
                    } else {
                        Damage::Torn { line }
                    });
                }
                continue;
            }
            let bytes = bytes.to_vec();
            if let Some(rec) = self.parse::<T>(line, &bytes, ended) {
                f(line, rec);
            }
        }
        Ok(())
    }
}

/// The conversation a session holds, ready to resume: every completed
/// message in order, with dangling tool calls answered.
pub fn messages(path: &Path) -> io::Result<(Option<SessionHeader>, Vec<Message>, Vec<Damage>)> {
    let mut reader = Reader::open(path)?;
    let header = reader.header()?;
    let mut out = Vec::new();
    reader.for_each_event_of(&["\"message_end\"", "\"compaction\""], |_, rec| {
        match rec.event {
            AgentEvent::MessageEnd { message } => out.push(message),
            // Resume where the run left off: the summary and the kept messages.
            AgentEvent::Compaction { summary, kept, .. } => {
                let start = out.len().saturating_sub(kept);
                let mut next = vec![summary];
                next.extend(out.drain(start..));
                out = next;
            }
            _ => {}
        }
    })?;
    repair_dangling(&mut out);
    Ok((header, out, reader.damage))
}

/// Gives every tool call that has no result (the run was interrupted or
/// killed between the call and its result) a result saying so, placed with
/// the other results of its assistant message, so that every provider
/// accepts the conversation.
pub fn repair_dangling(messages: &mut Vec<Message>) {
    let mut i = 0;
    while i < messages.len() {
        let calls: Vec<(String, String)> = match &messages[i] {
            Message::Assistant(a) => a
                .tool_calls()
                .map(|(id, name, _)| (id.to_string(), name.to_string()))
                .collect(),
            _ => Vec::new(),
        };
        i += 1;
        if calls.is_empty() {
            continue;
        }
        let mut end = i;
        while let Some(Message::ToolResult(_)) = messages.get(end) {
            end += 1;
        }
        let answered: Vec<String> = messages[i..end]
            .iter()
            .filter_map(|m| match m {
                Message::ToolResult(r) => Some(r.tool_call_id.clone()),
                _ => None,
            })
            .collect();
        let missing: Vec<Message> = calls
            .into_iter()
            .filter(|(id, _)| !answered.contains(id))
            .map(|(id, name)| Message::ToolResult(interrupted_result(&id, &name)))
            .collect();
        let added = missing.len();
        messages.splice(end..end, missing);
        i = end + added;
    }
}

/// The result given to a tool call that never finished.
pub fn interrupted_result(id: &str, name: &str) -> ToolResultMessage {
    ToolResultMessage {
        tool_call_id: id.to_string(),
        tool_name: name.to_string(),
        content: vec![ContentBlock::Text {
            text: "The tool call was interrupted before it finished; its effects, if any, are unknown. Check the state and run it again if it is still needed.".into(),
        }],
        details: json!({"interrupted": true}),
        is_error: true,
        timestamp: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{AssistantMessage, StopReason};

    #[test]
    fn dangling_calls_get_results() {
        let call = |id: &str| ContentBlock::ToolCall {
            id: id.into(),
            name: "bash".into(),
            arguments: json!({}),
        };
        let mut msgs = vec![
            Message::user_text("hi"),
            Message::Assistant(AssistantMessage {
                content: vec![call("a"), call("b")],
                stop_reason: StopReason::ToolUse,
                ..Default::default()
            }),
            Message::ToolResult(interrupted_result("a", "bash")),
            Message::user_text("next"),
        ];
        repair_dangling(&mut msgs);
        assert_eq!(msgs.len(), 5);
        assert!(matches!(&msgs[3], Message::ToolResult(r) if r.tool_call_id == "b"));
        assert!(matches!(&msgs[4], Message::User { .. }));
    }
}
