//! The readable view of the event stream for a terminal: streamed text,
//! each tool call in short with a short result, usage and cost at the end.

use crate::protocol::{AgentEvent, ContentBlock, LlmEvent, Message, Outcome};
use crate::session::export::short_args;

/// Turns events into terminal text.
pub struct Renderer {
    color: bool,
    in_thinking: bool,
    at_line_start: bool,
}

impl Renderer {
    /// A renderer; `color` adds ANSI styles.
    pub fn new(color: bool) -> Self {
        Renderer {
            color,
            in_thinking: false,
            at_line_start: true,
        }
    }

    fn style(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    fn newline_if_needed(&mut self) -> String {
        if self.at_line_start {
            String::new()
        } else {
            self.at_line_start = true;
            "\n".into()
        }
    }

    /// The text for one event (often empty).
    pub fn render(&mut self, event: &AgentEvent) -> String {
        let text = match event {
            AgentEvent::MessageUpdate { event } => match event {
                LlmEvent::TextDelta { delta, .. } => {
                    let mut s = String::new();
                    if self.in_thinking {
                        self.in_thinking = false;
                        s.push_str(&self.newline_if_needed());
                    }
                    s.push_str(delta);
                    s
                }
                LlmEvent::ThinkingDelta { delta, .. } => {
                    self.in_thinking = true;
                    self.style("2", delta)
                }
                _ => String::new(),
            },
            AgentEvent::ToolExecutionStart {
                tool_name,
                arguments,
                ..
            } => {
                let nl = self.newline_if_needed();
                format!(
                    "{nl}{} {}\n",
                    self.style("36", &format!("→ {tool_name}")),
                    short_args(arguments)
                )
            }
            AgentEvent::ToolExecutionUpdate { output, .. } => {
                // The latest lines of a running call, dimmed under it.
                let lines: Vec<&str> = output.lines().collect();
                let mut s = self.newline_if_needed();
                for l in &lines[lines.len().saturating_sub(10)..] {
                    let l: String = l.chars().take(160).collect();
                    s.push_str(&self.style("2", &format!("  │ {l}")));
                    s.push('\n');
                }
                s
            }
            AgentEvent::Question {
                question, options, ..
            } => {
                let mut s = self.newline_if_needed();
                s.push_str(&self.style("33", &format!("The agent asks: {question}")));
                s.push('\n');
                for (i, o) in options.iter().enumerate() {
                    s.push_str(&format!("  {}. {o}\n", i + 1));
                }
                s.push_str(&self.style(
                    "2",
                    if options.is_empty() {
                        "(type your answer and press Enter)"
                    } else {
                        "(type a number or your own answer, and press Enter)"
                    },
                ));
                s.push('\n');
                s
            }
            AgentEvent::ToolExecutionEnd {
                output,
                is_error,
                details,
                ..
            } => {
                let lines = output.lines().count();
                let first: String = output
                    .lines()
                    .next()
                    .unwrap_or("")
                    .chars()
                    .take(100)
                    .collect();
                let mark = if *is_error {
                    self.style("31", "  ✗")
                } else {
                    self.style("32", "  ✓")
                };
                let mut s = format!(
                    "{mark} {first}{}\n",
                    if lines > 1 {
                        format!(" (+{} lines)", lines - 1)
                    } else {
                        String::new()
                    }
                );
                // The errors a change brought in, under it.
                if let Some(d) = crate::protocol::ChangeDiagnostics::from_details(details) {
                    let code = if d.new_errors() > 0 { "31" } else { "2" };
                    for line in d.summary(5) {
                        s.push_str(&self.style(code, &format!("    {line}")));
                        s.push('\n');
                    }
                }
                s
            }
            AgentEvent::MessageEnd {
                message: Message::Assistant(a),
            } => {
                let mut s = self.newline_if_needed();
                if let Some(e) = &a.error_message {
                    s.push_str(&self.style("31", &format!("model error: {e}\n")));
                }
                s
            }
            AgentEvent::Compaction {
                replaced, method, ..
            } => {
                let nl = self.newline_if_needed();
                format!(
                    "{nl}{}\n",
                    self.style(
                        "2",
                        &format!(
                            "[context compacted: {replaced} older messages replaced ({method})]"
                        )
                    )
                )
            }
            AgentEvent::Notify { message, level } => {
                let nl = self.newline_if_needed();
                let code = if level == "info" { "34" } else { "33" };
                format!(
                    "{nl}{}\n",
                    self.style(code, &format!("[{level}] {message}"))
                )
            }
            AgentEvent::Interrupted => {
                let nl = self.newline_if_needed();
                format!("{nl}{}\n", self.style("33", "interrupted"))
            }
            AgentEvent::Settings {
                model, reasoning, ..
            } => {
                let nl = self.newline_if_needed();
                let effort = match reasoning {
                    Some(r) => format!(", reasoning {}", r.word()),
                    None => String::new(),
                };
                format!(
                    "{nl}{}\n",
                    self.style("2", &format!("[model {model}{effort}]"))
                )
            }
            AgentEvent::AgentStart {
                agent: Some(agent), ..
            } => {
                let nl = self.newline_if_needed();
                format!("{nl}{}\n", self.style("2", &format!("[@{agent}]")))
            }
            AgentEvent::Error { message, .. } => {
                let nl = self.newline_if_needed();
                format!("{nl}{}\n", self.style("31", &format!("error: {message}")))
            }
            AgentEvent::Note { message, .. } => {
                let nl = self.newline_if_needed();
                format!("{nl}{}\n", self.style("33", &format!("note: {message}")))
            }
            AgentEvent::Withdrawn { reason } => {
                let nl = self.newline_if_needed();
                format!(
                    "{nl}{}\n",
                    self.style("33", &format!("withdrawn: {reason}"))
                )
            }
            AgentEvent::AgentEnd {
                outcome,
                usage,
                error,
                work,
                ..
            } => {
                let nl = self.newline_if_needed();
                let what = match outcome {
                    Outcome::Finished => "done",
                    Outcome::Interrupted => "interrupted",
                    Outcome::TurnLimit => "stopped at the turn limit",
                    Outcome::CostLimit => "stopped at the cost limit",
                    Outcome::ModelError => "model error",
                    Outcome::RepeatedFailure => "stopped: tool calls kept failing",
                    Outcome::RepeatedCall => "stopped: the same call again and again",
                    Outcome::InvalidOutput => "stopped: the answer did not match the output schema",
                    Outcome::CheckFailed => "stopped: the check did not pass",
                };
                let reason = error.as_ref().map(|e| format!(": {e}")).unwrap_or_default();
                // What the record says was done, beside what the model said.
                let changed = match work {
                    Some(w) => match w.changed.len() as u64 + w.more_changed {
                        0 => " · no file changed".to_string(),
                        1 => " · 1 file changed".to_string(),
                        n => format!(" · {n} files changed"),
                    },
                    None => String::new(),
                };
                format!(
                    "{nl}{}\n",
                    self.style(
                        "2",
                        &format!(
                            "[{what}{reason}{changed} · {} in, {} out, {} cached tokens · ${:.4}]",
                            usage.input, usage.output, usage.cache_read, usage.cost.total
                        )
                    )
                )
            }
            // Subagents (issue 35): one line a step, indented by depth,
            // since the streams of children running together would mix.
            AgentEvent::SubagentEvent { .. } => match event.subagent_line() {
                Some(line) => {
                    let nl = self.newline_if_needed();
                    let indent = "  ".repeat(event.subagent_depth());
                    format!("{nl}{indent}{}\n", self.style("2", &format!("↳ {line}")))
                }
                None => String::new(),
            },
            // Runs that end when a check passes (issue 35).
            AgentEvent::Check { passed, .. } => {
                let nl = self.newline_if_needed();
                let code = if *passed { "32" } else { "33" };
                let line = event.check_summary().unwrap_or_default();
                format!("{nl}{}\n", self.style(code, &format!("[{line}]")))
            }
            // Checkpoints (issue 20): silent, unless something was left out.
            AgentEvent::Checkpoint {
                note: Some(note), ..
            } => {
                let nl = self.newline_if_needed();
                format!(
                    "{nl}{}\n",
                    self.style("2", &format!("[checkpoint: {note}]"))
                )
            }
            _ => String::new(),
        };
        if !text.is_empty() {
            self.at_line_start = text.ends_with('\n');
        }
        text
    }
}

/// The text of the last assistant message, the run's answer.
pub fn final_answer(messages: &[Message]) -> String {
    messages
        .iter()
        .rev()
        .find_map(|m| match m {
            Message::Assistant(a) => Some(
                a.content
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::Text { text } => Some(text.as_str()),
                        _ => None,
                    })
                    .collect::<String>(),
            ),
            _ => None,
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_shows_in_one_line_what_ran_and_how_it_ended() {
        let check = |passed: bool, exit_code: Option<i32>, error: Option<&str>| AgentEvent::Check {
            kind: crate::protocol::CheckKind::Until,
            command: "make test".into(),
            attempt: 2,
            tries: 5,
            passed,
            exit_code,
            output: "lots of output".into(),
            error: error.map(str::to_string),
        };
        let mut r = Renderer::new(false);
        assert_eq!(
            r.render(&check(false, Some(2), None)),
            "[check 2/5 `make test` failed: exit status 2]\n"
        );
        assert_eq!(
            r.render(&check(
                false,
                None,
                Some("timed out after 600 s (--until-timeout)")
            )),
            "[check 2/5 `make test` failed: timed out after 600 s (--until-timeout)]\n"
        );
        assert_eq!(
            r.render(&check(true, Some(0), None)),
            "[check 2/5 `make test` passed]\n"
        );
        let hook = AgentEvent::Check {
            kind: crate::protocol::CheckKind::Stop,
            command: "./judge".into(),
            attempt: 1,
            tries: 3,
            passed: false,
            exit_code: None,
            output: "write the notes".into(),
            error: None,
        };
        assert_eq!(
            r.render(&hook),
            "[stop hook 1/3 `./judge` sent the model back]\n"
        );
    }

    #[test]
    fn a_checkpoint_shows_only_what_it_left_out() {
        let event = |note: Option<&str>| AgentEvent::Checkpoint {
            id: "abc".into(),
            turn: 2,
            added: vec!["a".into()],
            changed: Vec::new(),
            deleted: Vec::new(),
            more: 0,
            work_tree: "/w".into(),
            git_dir: "/w/.git".into(),
            note: note.map(str::to_string),
        };
        let mut r = Renderer::new(false);
        assert_eq!(r.render(&event(None)), "");
        assert_eq!(
            r.render(&event(Some("1 file(s) over the limit left out: big"))),
            "[checkpoint: 1 file(s) over the limit left out: big]\n"
        );
    }
}
