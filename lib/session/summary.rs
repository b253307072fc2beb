//! What `list` and `stats` show of a session: first prompt, message count,
//! tokens and cost, read in one streaming pass; and what `show` and
//! `export` add to a transcript: how each run ended, and the totals.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use super::reader::{Damage, Reader};
use super::store::SessionFile;
use crate::protocol::{AgentEvent, Message, Outcome, Usage, UserContent};

/// One session in `list`.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// The session id.
    pub id: String,
    /// The session file.
    pub path: String,
    /// When it began.
    pub timestamp: String,
    /// The working directory it ran in.
    pub cwd: String,
    /// The session it was forked from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// The first user prompt.
    pub first_prompt: String,
    /// Completed messages.
    pub messages: u64,
    /// Tokens and cost summed over the assistant messages.
    pub usage: Usage,
    /// Damaged lines found.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub damage: Vec<String>,
}

/// Reads a session's summary.
pub fn summarize(file: &SessionFile) -> io::Result<Summary> {
    let mut reader = Reader::open(&file.path)?;
    let header = reader.header()?;
    let mut s = Summary {
        id: header
            .as_ref()
            .map(|h| h.id.clone())
            .unwrap_or_else(|| file.id.clone()),
        path: file.path.display().to_string(),
        timestamp: header
            .as_ref()
            .map(|h| h.timestamp.clone())
            .unwrap_or_default(),
        cwd: header.as_ref().map(|h| h.cwd.clone()).unwrap_or_default(),
        parent: header.as_ref().and_then(|h| h.parent.clone()),
        first_prompt: String::new(),
        messages: 0,
        usage: Usage::default(),
        damage: Vec::new(),
    };
    reader.for_each_line_of_unchecked(&["\"message_end\""], |_, end: MessageEnd| {
        if !end.is_message_end {
            return;
        }
        s.messages += 1;
        match end.message {
            Some(Brief::User(content)) if s.first_prompt.is_empty() => {
                s.first_prompt = content.text();
            }
            Some(Brief::Assistant(usage)) => s.usage.add(&usage),
            _ => {}
        }
    })?;
    s.damage = reader.damage.iter().map(Damage::to_string).collect();
    Ok(s)
}

impl Summary {
    /// Reads a session's summary.
    pub fn of(file: &SessionFile) -> io::Result<Summary> {
        summarize(file)
    }

    /// The summaries of many sessions, in their order, read on as many
    /// threads as there are cores (at most 8): `list` reads every session
    /// of a directory, and one file does not depend on another.
    pub fn of_all(files: &[SessionFile]) -> Vec<io::Result<Summary>> {
        let threads = std::thread::available_parallelism()
            .map(usize::from)
            .unwrap_or(1)
            .clamp(1, 8)
            .min(files.len());
        if threads <= 1 {
            return files.iter().map(summarize).collect();
        }
        // Interleaved, so that each thread gets old and new sessions alike.
        let mut all: Vec<(usize, io::Result<Summary>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    scope.spawn(move || {
                        files
                            .iter()
                            .enumerate()
                            .skip(t)
                            .step_by(threads)
                            .map(|(i, f)| (i, summarize(f)))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| match h.join() {
                    Ok(part) => part,
                    Err(panic) => std::panic::resume_unwind(panic),
                })
                .collect()
        });
        all.sort_by_key(|(i, _)| *i);
        all.into_iter().map(|(_, s)| s).collect()
    }
}

/// How one run (one prompt) of a session ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunEnd {
    /// How it ended: finished, turn_limit, ...
    pub outcome: Outcome,
    /// Why it stopped, when it did not finish (the turn limit it reached).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Tokens and cost of the run.
    pub usage: Usage,
    /// Structured output (`--output-schema`): the run's valid answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<serde_json::Value>,
    // Runs that end when a check passes (issue 35).
    /// The run's checks (`--until`, stop hooks), one line each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<String>,
}

/// How a session's runs ended, and its totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Ending {
    /// Every run that ended, in order.
    pub runs: Vec<RunEnd>,
    /// The last run began and never ended (ag-loop was killed, or is
    /// still running).
    pub unfinished: bool,
    /// Tokens and cost over the whole session: each ended run's own
    /// count, and the model calls of a run that did not end.
    pub usage: Usage,
    /// The model calls by model, in the order the models were first used:
    /// a session whose model was switched (`set_model`, a flag on resume)
    /// or that `@NAME` prompts answered shows what each one cost.
    pub models: Vec<ModelUsage>,
    // Subagents (issue 35).
    /// Each step of the subagents, in order: the `agent` call it ran
    /// under, its depth (1: a child's own) and what it said in one line.
    #[serde(skip)]
    pub subagent_steps: Vec<(String, usize, String)>,
}

/// What one model of a session did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ModelUsage {
    /// The model, as `provider/model`.
    pub model: String,
    /// Its calls (assistant messages, and the summarising calls of
    /// compactions).
    pub calls: u64,
    /// Their tokens and cost.
    pub usage: Usage,
}

/// The model a session's calls go to, as its header and `settings` events
/// say, for an answer that does not name its own (an `--llm-cmd` program
/// may leave it out).
struct CurrentModel(String);

impl CurrentModel {
    fn of_header(header: Option<&crate::protocol::SessionHeader>) -> CurrentModel {
        let model = header
            .and_then(|h| h.config.get("model"))
            .and_then(serde_json::Value::as_str)
            .unwrap_or("unknown");
        CurrentModel(model.to_string())
    }

    /// The model of `message`, else the session's at that point.
    fn of(&self, model: Option<&String>) -> String {
        model.cloned().unwrap_or_else(|| self.0.clone())
    }
}

fn add_model(models: &mut Vec<ModelUsage>, model: String, usage: &Usage) {
    let i = match models.iter().position(|m| m.model == model) {
        Some(i) => i,
        None => {
            models.push(ModelUsage {
                model,
                ..Default::default()
            });
            models.len() - 1
        }
    };
    models[i].calls += 1;
    models[i].usage.add(usage);
}

/// Reads how a session's runs ended.
pub fn ending(path: &Path) -> io::Result<Ending> {
    let mut reader = Reader::open(path)?;
    let header = reader.header()?;
    let mut current = CurrentModel::of_header(header.as_ref());
    let mut e = Ending::default();
    // The model calls of the run under way; its end brings its own count.
    let mut running = Usage::default();
    // The checks of the run under way.
    let mut checks: Vec<String> = Vec::new();
    reader.for_each_event_of(
        &[
            "\"agent_start\"",
            "\"agent_end\"",
            "\"message_end\"",
            "\"settings\"",
            "\"compaction\"",
            "\"check\"",
            "\"subagent_event\"",
        ],
        |_, rec| match rec.event {
            AgentEvent::AgentStart { .. } => {
                e.unfinished = true;
                running = Usage::default();
                checks.clear();
            }
            AgentEvent::AgentEnd {
                outcome,
                usage,
                error,
                output,
                ..
            } => {
                e.unfinished = false;
                running = Usage::default();
                e.usage.add(&usage);
                e.runs.push(RunEnd {
                    outcome,
                    error,
                    usage,
                    output,
                    checks: std::mem::take(&mut checks),
                });
            }
            AgentEvent::MessageEnd {
                message: Message::Assistant(a),
            } => {
                running.add(&a.usage);
                add_model(&mut e.models, current.of(a.model.as_ref()), &a.usage);
            }
            AgentEvent::Settings { model, .. } => current = CurrentModel(model),
            ref check @ AgentEvent::Check { .. } => {
                checks.extend(check.check_summary());
            }
            AgentEvent::Compaction { usage, .. } if usage.total_tokens() > 0 => {
                add_model(&mut e.models, current.0.clone(), &usage);
            }
            ref sub @ AgentEvent::SubagentEvent {
                ref tool_call_id, ..
            } => {
                if let Some(line) = sub.subagent_line() {
                    let depth = sub.subagent_depth();
                    e.subagent_steps.push((tool_call_id.clone(), depth, line));
                }
            }
            _ => {}
        },
    )?;
    e.usage.add(&running);
    Ok(e)
}

/// What `list` needs of a `message_end` line: the user's text or the
/// assistant's usage. Read with a visitor that skips everything else
/// unbuilt (tool results, assistant content), which makes reading a
/// directory of sessions several times faster than parsing whole records.
struct MessageEnd {
    is_message_end: bool,
    message: Option<Brief>,
}

enum Brief {
    User(UserContent),
    Assistant(Usage),
    Other,
}

/// A key or string value of interest, read without allocating.
#[derive(PartialEq)]
enum Word {
    Type,
    Message,
    MessageEnd,
    Role,
    Content,
    Usage,
    User,
    Assistant,
    Other,
}

impl<'de> Deserialize<'de> for Word {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct W;
        impl Visitor<'_> for W {
            type Value = Word;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Word, E> {
                Ok(match v {
                    "type" => Word::Type,
                    "message" => Word::Message,
                    "message_end" => Word::MessageEnd,
                    "role" => Word::Role,
                    "content" => Word::Content,
                    "usage" => Word::Usage,
                    "user" => Word::User,
                    "assistant" => Word::Assistant,
                    _ => Word::Other,
                })
            }
        }
        d.deserialize_str(W)
    }
}

impl<'de> Deserialize<'de> for MessageEnd {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Line;
        impl<'de> Visitor<'de> for Line {
            type Value = MessageEnd;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an event record")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MessageEnd, A::Error> {
                let mut end = MessageEnd {
                    is_message_end: false,
                    message: None,
                };
                while let Some(key) = map.next_key::<Word>()? {
                    match key {
                        Word::Type => {
                            end.is_message_end = map.next_value::<Word>()? == Word::MessageEnd;
                        }
                        Word::Message => end.message = Some(map.next_value::<Brief>()?),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(end)
            }
        }
        d.deserialize_map(Line)
    }
}

impl<'de> Deserialize<'de> for Brief {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Msg;
        impl<'de> Visitor<'de> for Msg {
            type Value = Brief;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a message")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Brief, A::Error> {
                let mut role: Option<Word> = None;
                // ag-loop writes the role first; should another writer not,
                // the content is kept until the role is known.
                let mut early: Option<serde_json::Value> = None;
                let mut content: Option<UserContent> = None;
                let mut usage: Option<Usage> = None;
                while let Some(key) = map.next_key::<Word>()? {
                    match (key, &role) {
                        (Word::Role, _) => role = Some(map.next_value()?),
                        (Word::Content, Some(Word::User)) => content = Some(map.next_value()?),
                        (Word::Content, None) => early = Some(map.next_value()?),
                        (Word::Usage, _) => usage = Some(map.next_value()?),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(match role {
                    Some(Word::User) => {
                        let content = match (content, early) {
                            (Some(c), _) => c,
                            (None, Some(v)) => {
                                serde_json::from_value(v).map_err(serde::de::Error::custom)?
                            }
                            (None, None) => return Err(serde::de::Error::missing_field("content")),
                        };
                        Brief::User(content)
                    }
                    Some(Word::Assistant) => Brief::Assistant(usage.unwrap_or_default()),
                    Some(_) => Brief::Other,
                    None => return Err(serde::de::Error::missing_field("role")),
                })
            }
        }
        d.deserialize_map(Msg)
    }
}

/// Tokens and cost of one model on one day.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DayModelStats {
    /// The day (UTC), `YYYY-MM-DD`.
    pub day: String,
    /// The model.
    pub model: String,
    /// Assistant messages.
    pub calls: u64,
    /// Tokens and cost.
    pub usage: Usage,
}

/// Usage per day and model over some sessions. A call is counted under
/// the model its answer names, else the session's model at that point (its
/// header's, then each `settings` event's).
pub fn stats(files: &[SessionFile]) -> io::Result<Vec<DayModelStats>> {
    let mut table: BTreeMap<(String, String), DayModelStats> = BTreeMap::new();
    for file in files {
        let mut reader = Reader::open(&file.path)?;
        let header = reader.header()?;
        let mut current = CurrentModel::of_header(header.as_ref());
        reader.for_each_event_of(&["\"message_end\"", "\"settings\""], |_, rec| {
            if let AgentEvent::Settings { model, .. } = &rec.event {
                current = CurrentModel(model.clone());
            }
            if let AgentEvent::MessageEnd {
                message: Message::Assistant(a),
            } = rec.event
            {
                let day = a
                    .timestamp
                    .as_deref()
                    .unwrap_or(&rec.timestamp)
                    .chars()
                    .take(10)
                    .collect::<String>();
                let model = current.of(a.model.as_ref());
                let entry = table
                    .entry((day.clone(), model.clone()))
                    .or_insert_with(|| DayModelStats {
                        day,
                        model,
                        ..Default::default()
                    });
                entry.calls += 1;
                entry.usage.add(&a.usage);
            }
        })?;
    }
    Ok(table.into_values().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn session(dir: &Path, n: usize, tail: &str) -> SessionFile {
        let id = format!("00000000-0000-0000-0000-{n:012}");
        let path = dir.join(format!("2025-01-01T00-00-{n:02}-000Z_{id}.jsonl"));
        let mut text = format!(
            "{{\"type\":\"session\",\"version\":1,\"id\":\"{id}\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"cwd\":\"/p\",\"config\":{{}}}}\n"
        );
        text.push_str("{\"timestamp\":\"t\",\"type\":\"agent_start\"}\n");
        text.push_str("{not json in the middle\n");
        for i in 0..=n {
            text.push_str(&format!(
                "{{\"timestamp\":\"t\",\"type\":\"message_end\",\"message\":{{\"role\":\"user\",\"content\":\"prompt {n}.{i}\"}}}}\n"
            ));
        }
        text.push_str(tail);
        std::fs::write(&path, text).unwrap();
        SessionFile {
            id,
            path,
            stamp: String::new(),
        }
    }

    #[test]
    fn message_end_lines_are_read_for_their_prompt_and_usage_only() {
        let read = |line: &str| serde_json::from_str::<MessageEnd>(line).unwrap();
        let user = read(
            r#"{"timestamp":"t","type":"message_end","message":{"content":[{"type":"text","text":"fix it"}],"role":"user"}}"#,
        );
        assert!(user.is_message_end);
        assert!(matches!(user.message, Some(Brief::User(c)) if c.text() == "fix it"));
        let asst = read(
            r#"{"type":"message_end","message":{"role":"assistant","content":[{"type":"tool_call","id":"a","name":"read","arguments":{"x":[1,{"y":"z"}]}}],"usage":{"input":3,"output":4,"cost":{"total":0.5}}}}"#,
        );
        assert!(matches!(asst.message, Some(Brief::Assistant(u)) if u.input == 3 && u.output == 4));
        let tool = read(
            r#"{"type":"message_end","message":{"role":"tool_result","tool_call_id":"a","content":[{"type":"text","text":"\"message_end\""}]}}"#,
        );
        assert!(matches!(tool.message, Some(Brief::Other)));
        // A line that only mentions message_end is not one.
        let other = read(r#"{"type":"tool_execution_end","output":"\"message_end\""}"#);
        assert!(!other.is_message_end);
        assert!(
            serde_json::from_str::<MessageEnd>(
                r#"{"type":"message_end","message":{"content":"x"}}"#
            )
            .is_err()
        );
    }

    #[test]
    fn summaries_of_many_files_keep_their_order() {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<SessionFile> = (0..13).map(|n| session(dir.path(), n, "")).collect();
        let all = Summary::of_all(&files);
        assert_eq!(all.len(), files.len());
        for (n, s) in all.into_iter().enumerate() {
            let s = s.unwrap();
            assert_eq!(s.id, files[n].id);
            assert_eq!(s.messages, n as u64 + 1);
            assert_eq!(s.first_prompt, format!("prompt {n}.0"));
        }
    }

    #[test]
    fn list_reports_a_torn_last_line_but_does_not_check_lines_it_does_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let f = session(dir.path(), 1, "{\"timestamp\":\"t\",\"type\":\"turn_");
        let s = summarize(&f).unwrap();
        assert_eq!(s.messages, 2);
        assert_eq!(s.damage.len(), 1, "{:?}", s.damage);
        assert!(s.damage[0].contains("torn"), "{:?}", s.damage);
        // Reading the conversation checks every line.
        let (_, msgs, damage) = super::super::reader::messages(&f.path).unwrap();
        assert_eq!(msgs.len(), 2);
        assert_eq!(damage.len(), 2, "{damage:?}");
    }
}
