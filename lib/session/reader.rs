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
    /// Tool results away from their calls: two processes appended to the
    /// session at once (ag before one writer per session). The
    /// conversation was put back in order for the model.
    Interleaved {
        /// Results moved to follow their calls.
        moved: usize,
        /// Results dropped: they answered no call before them, or a call
        /// already answered.
        dropped: usize,
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
            Damage::Interleaved { moved, dropped } => write!(
                f,
                "two processes wrote this session at once: {moved} tool result(s) moved after their calls, {dropped} dropped (they answered no call, or one already answered); the conversation is resumed in that order"
            ),
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
    reader.for_each_event_of(
        &["\"message_end\"", "\"compaction\"", "\"withdrawn\""],
        |_, rec| match rec.event {
            AgentEvent::MessageEnd { message } => out.push(message),
            // The run asked the model again without this answer.
            AgentEvent::Withdrawn { .. } => {
                if matches!(out.last(), Some(Message::Assistant(_))) {
                    out.pop();
                }
            }
            // Resume where the run left off: the summary and the kept messages.
            AgentEvent::Compaction { summary, kept, .. } => {
                let start = out.len().saturating_sub(kept);
                let mut next = vec![summary];
                next.extend(out.drain(start..));
                out = next;
            }
            _ => {}
        },
    )?;
    let mut damage = reader.damage;
    if let Some(d) = repair(&mut out) {
        damage.push(d);
    }
    Ok((header, out, damage))
}

/// Makes a conversation every provider accepts: each assistant message's
/// tool calls are followed at once by one result each. A call left without
/// a result (the run was interrupted or killed between the call and its
/// result) gets one saying so. Results elsewhere (two processes appended
/// to the session at once) are moved after their call, and results that
/// answer no call before them, or a call already answered, are dropped;
/// that is reported as [`Damage::Interleaved`].
pub fn repair(messages: &mut Vec<Message>) -> Option<Damage> {
    // The new order is worked out first, as places in the old one, so that
    // a well-formed conversation (nearly always) is left as it is and any
    // other is rebuilt by moving messages, never copying them: a long
    // session's messages would otherwise be held twice.
    enum Slot {
        Old(usize),
        Interrupted(String, String),
    }
    let old = &*messages;
    let mut order: Vec<Slot> = Vec::with_capacity(old.len());
    let mut used = vec![false; old.len()];
    let (mut moved, mut dropped) = (0usize, 0usize);
    for i in 0..old.len() {
        if used[i] {
            continue;
        }
        used[i] = true;
        let calls: Vec<(String, String)> = match &old[i] {
            Message::ToolResult(_) => {
                // Not taken by a call before it.
                dropped += 1;
                continue;
            }
            Message::Assistant(a) => a
                .tool_calls()
                .map(|(id, name, _)| (id.to_string(), name.to_string()))
                .collect(),
            _ => Vec::new(),
        };
        order.push(Slot::Old(i));
        let mut next = i + 1;
        for (id, name) in calls {
            match result_for(old, &used, i, &id) {
                Some(j) => {
                    used[j] = true;
                    // In place when only this message's results lie between.
                    while next < old.len() && used[next] && next <= j {
                        next += 1;
                    }
                    if next <= j {
                        moved += 1;
                    }
                    order.push(Slot::Old(j));
                }
                None => order.push(Slot::Interrupted(id, name)),
            }
        }
    }
    let unchanged = order.len() == old.len()
        && order
            .iter()
            .enumerate()
            .all(|(at, slot)| matches!(slot, Slot::Old(k) if *k == at));
    if !unchanged {
        let mut old: Vec<Option<Message>> =
            std::mem::take(messages).into_iter().map(Some).collect();
        messages.extend(order.into_iter().filter_map(|slot| match slot {
            Slot::Old(k) => old[k].take(),
            Slot::Interrupted(id, name) => {
                Some(Message::ToolResult(interrupted_result(&id, &name)))
            }
        }));
    }
    (moved + dropped > 0).then_some(Damage::Interleaved { moved, dropped })
}

/// Where the first result for call `id` of the assistant message at `at`
/// lies: the first unused one after it, before any later assistant message
/// that makes a call of the same id (whose result it would be).
fn result_for(messages: &[Message], used: &[bool], at: usize, id: &str) -> Option<usize> {
    for (j, m) in messages.iter().enumerate().skip(at + 1) {
        match m {
            Message::ToolResult(r) if !used[j] && r.tool_call_id == id => return Some(j),
            Message::Assistant(a) if a.tool_calls().any(|(other, ..)| other == id) => {
                return None;
            }
            _ => {}
        }
    }
    None
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

    fn call(id: &str) -> ContentBlock {
        ContentBlock::ToolCall {
            id: id.into(),
            name: "bash".into(),
            arguments: json!({}),
        }
    }

    fn asking(ids: &[&str]) -> Message {
        Message::Assistant(AssistantMessage {
            content: ids.iter().map(|id| call(id)).collect(),
            stop_reason: StopReason::ToolUse,
            ..Default::default()
        })
    }

    fn result(id: &str, text: &str) -> Message {
        let mut r = interrupted_result(id, "bash");
        r.content = vec![ContentBlock::Text { text: text.into() }];
        r.is_error = false;
        Message::ToolResult(r)
    }

    /// A short picture of a conversation: u, a(ids), r(id:text).
    fn shape(msgs: &[Message]) -> Vec<String> {
        msgs.iter()
            .map(|m| match m {
                Message::User { .. } => "u".to_string(),
                Message::Assistant(a) => {
                    let ids: Vec<&str> = a.tool_calls().map(|(id, ..)| id).collect();
                    format!("a({})", ids.join(","))
                }
                Message::ToolResult(r) => {
                    let text = match r.content.first() {
                        Some(ContentBlock::Text { text }) if !r.is_error => text.clone(),
                        _ => "interrupted".into(),
                    };
                    format!("r({}:{text})", r.tool_call_id)
                }
            })
            .collect()
    }

    #[test]
    fn interleaved_writers_are_put_in_order() {
        // Two runs appended at once: A's and B's turns mixed, B's call id
        // the same as A's (one scripted model), and A's result twice.
        let mut msgs = vec![
            Message::user_text("A"),
            Message::user_text("B"),
            asking(&["a1"]),
            asking(&["b1", "c"]),
            result("b1", "B1"),
            result("a1", "A1"),
            result("a1", "A1 again"),
            Message::user_text("steer"),
            result("c", "C"),
            result("zz", "orphan"),
        ];
        let damage = repair(&mut msgs);
        assert_eq!(
            shape(&msgs),
            [
                "u", "u", "a(a1)", "r(a1:A1)", "a(b1,c)", "r(b1:B1)", "r(c:C)", "u"
            ]
        );
        assert_eq!(
            damage,
            Some(Damage::Interleaved {
                moved: 2,
                dropped: 2
            })
        );
    }

    #[test]
    fn a_call_id_used_again_later_keeps_each_result_with_its_own_call() {
        // Killed before a1's result; the next run's model used the id again.
        let mut msgs = vec![
            Message::user_text("go"),
            asking(&["a1"]),
            Message::user_text("again"),
            asking(&["a1"]),
            result("a1", "second"),
        ];
        assert_eq!(repair(&mut msgs), None);
        assert_eq!(
            shape(&msgs),
            [
                "u",
                "a(a1)",
                "r(a1:interrupted)",
                "u",
                "a(a1)",
                "r(a1:second)"
            ]
        );
    }

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
        assert_eq!(repair(&mut msgs), None);
        assert_eq!(msgs.len(), 5);
        assert!(matches!(&msgs[3], Message::ToolResult(r) if r.tool_call_id == "b"));
        assert!(matches!(&msgs[4], Message::User { .. }));
    }

    #[test]
    fn a_withdrawn_answer_is_left_out_of_the_resumed_conversation() {
        // A first answer in text, withdrawn, then the answer asked again.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(
            &path,
            concat!(
                r#"{"type":"session","version":1,"id":"00000000-0000-0000-0000-000000000001","timestamp":"2025-01-01T00:00:00Z","cwd":"/p","config":{}}"#,
                "\n",
                r#"{"timestamp":"t","type":"message_end","message":{"role":"user","content":"fix it"}}"#,
                "\n",
                r#"{"timestamp":"t","type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"I fixed it."}],"stop_reason":"stop"}}"#,
                "\n",
                r#"{"timestamp":"t","type":"withdrawn","reason":"a tool call was asked for"}"#,
                "\n",
                r#"{"timestamp":"t","type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"Let me look."}],"stop_reason":"stop"}}"#,
                "\n",
            ),
        )
        .unwrap();
        let (_, msgs, damage) = messages(&path).unwrap();
        assert!(damage.is_empty(), "{damage:?}");
        assert_eq!(msgs.len(), 2);
        assert!(matches!(&msgs[1], Message::Assistant(a) if a.text() == "Let me look."));
    }
}
