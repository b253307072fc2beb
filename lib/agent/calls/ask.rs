//! The `ask` tool: the model asks the person a question, optionally with
//! choices, as seed 003's worker does (`WORKER_QUESTION` and
//! `WORKER_ANSWER`). It lives inside ag-loop rather than in a binary of its
//! own, because the answer comes from ag-loop's own stdin (an `answer`
//! command) or its terminal, which a tool's subprocess cannot reach.
//!
//! Who answers, in this order: the `--ask-cmd` program when there is one
//! (seed 003's auto-answer; it may decline), then a person when one can be
//! reached (the terminal, or the client on stdin, which sees a `question`
//! event), then the `--ask-default` answer, and else the model is told that
//! nobody is there and to decide itself. A question never hangs a run that
//! nobody attends: stdin that ends, an interrupt or `--ask-timeout` moves
//! it on.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::proc::{self, CaptureLimit, Input, Output, Status};
use crate::protocol::{AgentEvent, ToolDefinition, ToolResult};
use crate::tool_protocol::exec::{INTERRUPTED, aborted_result, error_result};

/// The tool's name, in tool lists and calls.
pub const NAME: &str = "ask";

/// How long the `--ask-cmd` program may take before it counts as declining.
pub const CMD_TIMEOUT: Duration = Duration::from_secs(300);

/// Bytes of the program's answer kept.
const CMD_MAX_ANSWER: usize = 64 * 1024;

/// Arguments of `ask`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskArgs {
    /// The question, as the user should read it.
    #[schemars(description = "")]
    pub question: String,
    /// Choices to offer, when there are clear ones; the user may still
    /// answer in their own words.
    #[serde(default)]
    #[schemars(description = "")]
    pub options: Vec<String>,
}

/// The definition the model sees.
pub fn definition() -> ToolDefinition {
    ToolDefinition {
        name: NAME.into(),
        label: "Ask the User".into(),
        description: "Ask the user a question, with options for clear choices. If nobody answers, decide yourself.".into(),
        parameters: crate::schema::parameters_schema::<AskArgs>(),
    }
}

/// Who can be asked in this run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Person {
    /// The person at the terminal (prompts given as arguments).
    Terminal,
    /// The client on stdin (a pipe, socket or terminal that ag-loop reads
    /// its commands from), for as long as stdin stays open.
    Stdin,
    /// Nobody: prompts from arguments without a terminal, or stdin a file.
    Nobody,
}

/// How the run answers the model's questions.
#[derive(Debug, Clone, PartialEq)]
pub struct Questions {
    /// Who can be asked.
    pub person: Person,
    /// A program asked first (`--ask-cmd`, run with `sh -c`).
    pub cmd: Option<String>,
    /// The answer when no person answers (`--ask-default`).
    pub default: Option<String>,
    /// How long a person is waited for (`--ask-timeout`).
    pub timeout: Option<Duration>,
}

impl Questions {
    /// Whether anyone or anything can answer: otherwise the default tool
    /// set leaves `ask` out, as its questions would only come back.
    pub fn answerable(&self) -> bool {
        self.person != Person::Nobody || self.cmd.is_some() || self.default.is_some()
    }
}

impl Default for Questions {
    fn default() -> Self {
        Questions {
            person: Person::Nobody,
            cmd: None,
            default: None,
            timeout: None,
        }
    }
}

/// What one `ask` call needs besides its arguments.
pub(in crate::agent) struct Asking<'a> {
    /// The run's rules.
    pub questions: &'a Questions,
    /// The answer from stdin, when the client there can answer.
    pub answer: Option<oneshot::Receiver<String>>,
    /// Where the `question` event (and any error) goes.
    pub events: &'a mpsc::UnboundedSender<AgentEvent>,
    /// The working directory (for the program).
    pub cwd: &'a std::path::Path,
    /// The session, for the program.
    pub session_id: Option<&'a str>,
}

/// Who gave the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum By {
    Person,
    Program,
    Default,
    Nobody,
}

impl By {
    fn name(self) -> &'static str {
        match self {
            By::Person => "person",
            By::Program => "program",
            By::Default => "default",
            By::Nobody => "nobody",
        }
    }
}

/// Runs one `ask` call: the answer, or why there is none, as a result.
pub(in crate::agent) async fn run(
    id: &str,
    arguments: &Value,
    mut asking: Asking<'_>,
    cancel: &CancellationToken,
) -> ToolResult {
    let args: AskArgs = match serde_json::from_value(arguments.clone()) {
        Ok(a) => a,
        Err(e) => {
            return error_result(
                id,
                "ask.invalid",
                format!(
                    "invalid arguments for `ask`: {e}. Give `question`, the text to ask, and optionally `options`, a list of answers to choose from."
                ),
            );
        }
    };
    let question = args.question.trim().to_string();
    if question.is_empty() {
        return error_result(
            id,
            "ask.empty",
            "`question` is empty; write the question the user should answer".into(),
        );
    }
    let options: Vec<String> = args
        .options
        .iter()
        .map(|o| o.trim().to_string())
        .filter(|o| !o.is_empty())
        .collect();
    let questions = asking.questions;
    let mut notes = Vec::new();
    if let Some(cmd) = &questions.cmd {
        match ask_program(cmd, id, &question, &options, &asking, cancel).await {
            Ok(Some(answer)) => return answered(id, &question, &options, &answer, By::Program),
            Ok(None) => {}
            Err(why) => {
                let _ = asking.events.send(AgentEvent::error(format!(
                    "the --ask-cmd program `{cmd}` gave no answer: {why}; the question goes on"
                )));
            }
        }
    }
    if cancel.is_cancelled() {
        return aborted_result(id, INTERRUPTED);
    }
    let person = match questions.person {
        Person::Terminal => {
            let text = terminal_text(&question, &options);
            tokio::select! {
                _ = cancel.cancelled() => return aborted_result(id, INTERRUPTED),
                a = with_limit(questions.timeout, tokio::task::spawn_blocking(move || super::tty::ask_tty(&text))) => {
                    match a {
                        Some(Ok(line)) if !line.trim().is_empty() => Some(line.trim().to_string()),
                        Some(_) => {
                            notes.push("the user gave no answer");
                            None
                        }
                        None => {
                            notes.push("nobody answered in time");
                            None
                        }
                    }
                }
            }
        }
        Person::Stdin => match asking.answer.take() {
            Some(rx) => {
                let _ = asking.events.send(AgentEvent::Question {
                    tool_call_id: id.to_string(),
                    question: question.clone(),
                    options: options.clone(),
                });
                tokio::select! {
                    _ = cancel.cancelled() => return aborted_result(id, INTERRUPTED),
                    a = with_limit(questions.timeout, rx) => match a {
                        Some(Ok(text)) if !text.trim().is_empty() => Some(text),
                        // An empty answer: the client's person declined
                        // (an editor's form, closed), as an empty line on
                        // the terminal.
                        Some(Ok(_)) => {
                            notes.push("the user gave no answer");
                            None
                        }
                        // The input ended: nobody is left to answer.
                        Some(Err(_)) => None,
                        None => {
                            notes.push("nobody answered in time");
                            None
                        }
                    },
                }
            }
            None => None,
        },
        Person::Nobody => None,
    };
    if let Some(answer) = person {
        return answered(id, &question, &options, &answer, By::Person);
    }
    match &questions.default {
        Some(default) => answered(id, &question, &options, default, By::Default),
        None => {
            let why = notes.first().copied().unwrap_or("the run is unattended");
            let mut r = answered(id, &question, &options, "", By::Nobody);
            r.output = format!(
                "Nobody is there to answer this question ({why}). Decide yourself and go on; say in your final answer what you decided and why."
            );
            r
        }
    }
}

/// The answer as the result the model reads.
fn answered(id: &str, question: &str, options: &[String], answer: &str, by: By) -> ToolResult {
    let answer = choose(answer, options);
    let output = match by {
        By::Person => format!("The user answered: {answer}"),
        By::Program => format!(
            "Answered automatically (by the run's answering program, not a person): {answer}"
        ),
        By::Default => format!("Nobody is there to answer; the run's default answer is: {answer}"),
        By::Nobody => String::new(),
    };
    let mut details = json!({
        "question": question,
        "answered_by": by.name(),
    });
    if !options.is_empty() {
        details["options"] = json!(options);
    }
    if by != By::Nobody {
        details["answer"] = json!(answer);
    }
    ToolResult {
        id: Some(id.to_string()),
        output,
        details,
        is_error: false,
        error_code: None,
        images: Vec::new(),
    }
}

/// An answer as given: one of the options (matched without regard to case
/// or surrounding space), an option's number from 1, or any other text.
pub fn choose(answer: &str, options: &[String]) -> String {
    let trimmed = answer.trim();
    if let Some(o) = options.iter().find(|o| o.eq_ignore_ascii_case(trimmed)) {
        return o.clone();
    }
    if let Ok(n) = trimmed.parse::<usize>()
        && (1..=options.len()).contains(&n)
    {
        return options[n - 1].clone();
    }
    trimmed.to_string()
}

/// The question as the terminal shows it, with numbered choices.
fn terminal_text(question: &str, options: &[String]) -> String {
    let mut text = format!("\nThe agent asks: {question}\n");
    for (i, o) in options.iter().enumerate() {
        text.push_str(&format!("  {}. {o}\n", i + 1));
    }
    text.push_str(if options.is_empty() {
        "Your answer: "
    } else {
        "Your answer (a number, or your own words): "
    });
    text
}

/// `fut`, or `None` once `limit` has passed.
async fn with_limit<F: Future>(limit: Option<Duration>, fut: F) -> Option<F::Output> {
    match limit {
        Some(d) => tokio::time::timeout(d, fut).await.ok(),
        None => Some(fut.await),
    }
}

/// Asks the `--ask-cmd` program: the question as one JSON object on its
/// stdin, its stdout (trimmed) the answer. Empty output declines; a
/// failure is an error that says why.
async fn ask_program(
    cmd: &str,
    id: &str,
    question: &str,
    options: &[String],
    asking: &Asking<'_>,
    cancel: &CancellationToken,
) -> Result<Option<String>, String> {
    let mut input = json!({
        "tool_call_id": id,
        "question": question,
        "options": options,
        "cwd": asking.cwd.display().to_string(),
    });
    if let Some(s) = asking.session_id {
        input["session_id"] = json!(s);
    }
    let out = proc::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .cwd(asking.cwd)
        .stdin(Input::Bytes(format!("{input}\n").into_bytes()))
        .output(Output::Separate {
            stdout: CaptureLimit::head_only(CMD_MAX_ANSWER),
            stderr: CaptureLimit::new(4096),
        })
        .timeout(CMD_TIMEOUT)
        .collect(cancel)
        .await
        .map_err(|e| e.to_string())?;
    if cancel.is_cancelled() {
        return Ok(None);
    }
    if out.stopped.is_some() {
        return Err(format!("it took longer than {} s", CMD_TIMEOUT.as_secs()));
    }
    if out.status != Status::Exited(0) {
        let stderr = out.stderr.lossy();
        return Err(match stderr.trim() {
            "" => format!("it ended with {}", out.status),
            t => format!("it ended with {}: {t}", out.status),
        });
    }
    let answer = out.stdout.lossy().trim().to_string();
    Ok((!answer.is_empty()).then_some(answer))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(o: &[&str]) -> Vec<String> {
        o.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn an_answer_picks_an_option_by_text_or_number_else_stays_as_typed() {
        let o = opts(&["PostgreSQL", "SQLite"]);
        assert_eq!(choose(" sqlite ", &o), "SQLite");
        assert_eq!(choose("2", &o), "SQLite");
        assert_eq!(choose("1", &o), "PostgreSQL");
        assert_eq!(choose("3", &o), "3");
        assert_eq!(choose("0", &o), "0");
        assert_eq!(choose("neither, use files", &o), "neither, use files");
        assert_eq!(choose("2", &[]), "2");
        // An option that is itself a number wins over the numbering.
        let o = opts(&["10", "2"]);
        assert_eq!(choose("2", &o), "2");
        assert_eq!(choose("1", &o), "10");
    }

    #[test]
    fn the_definition_asks_for_a_question_and_optional_options() {
        let d = definition();
        assert_eq!(d.name, "ask");
        assert_eq!(d.parameters["required"], json!(["question"]));
        assert_eq!(d.parameters["properties"]["options"]["type"], "array");
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    fn ask(
        questions: &Questions,
        answer: Option<oneshot::Receiver<String>>,
    ) -> (ToolResult, Vec<AgentEvent>) {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let dir = std::env::temp_dir();
        let asking = Asking {
            questions,
            answer,
            events: &tx,
            cwd: &dir,
            session_id: None,
        };
        let args = json!({"question": "Which database?", "options": ["PostgreSQL", "SQLite"]});
        let r = rt().block_on(run("c1", &args, asking, &CancellationToken::new()));
        let mut events = Vec::new();
        while let Ok(e) = rx.try_recv() {
            events.push(e);
        }
        (r, events)
    }

    #[test]
    fn nobody_there_hands_the_question_back_or_gives_the_default() {
        let q = Questions::default();
        let (r, events) = ask(&q, None);
        assert!(!r.is_error);
        assert!(
            r.output.starts_with("Nobody is there to answer"),
            "{}",
            r.output
        );
        assert!(r.output.contains("Decide yourself"), "{}", r.output);
        assert_eq!(r.details["answered_by"], "nobody");
        assert!(events.is_empty(), "{events:?}");
        let q = Questions {
            default: Some("2".into()),
            ..Questions::default()
        };
        let (r, _) = ask(&q, None);
        assert_eq!(r.details["answer"], "SQLite");
        assert_eq!(r.details["answered_by"], "default");
    }

    #[test]
    fn the_client_on_stdin_sees_the_question_and_its_answer_is_taken() {
        let q = Questions {
            person: Person::Stdin,
            default: Some("never used".into()),
            ..Questions::default()
        };
        let (tx, rx) = oneshot::channel();
        tx.send("postgresql".to_string()).unwrap();
        let (r, events) = ask(&q, Some(rx));
        assert_eq!(r.output, "The user answered: PostgreSQL");
        assert!(
            matches!(&events[..], [AgentEvent::Question { tool_call_id, options, .. }] if tool_call_id == "c1" && options.len() == 2),
            "{events:?}"
        );
        // Stdin ended before an answer: the default answers.
        let (tx, rx) = oneshot::channel::<String>();
        drop(tx);
        let (r, _) = ask(&q, Some(rx));
        assert_eq!(r.details["answered_by"], "default");
        // An empty answer is none (an editor's form declined): the
        // default answers, or else the model hears nobody answered.
        let (tx, rx) = oneshot::channel();
        tx.send("  ".to_string()).unwrap();
        let (r, _) = ask(&q, Some(rx));
        assert_eq!(r.details["answered_by"], "default");
        let q = Questions {
            person: Person::Stdin,
            ..Questions::default()
        };
        let (tx, rx) = oneshot::channel();
        tx.send(String::new()).unwrap();
        let (r, _) = ask(&q, Some(rx));
        assert!(r.output.contains("the user gave no answer"), "{}", r.output);
    }

    #[test]
    fn the_program_answers_first_and_may_decline() {
        let q = Questions {
            cmd: Some(r#"grep -q '"Which database?"' && echo 1"#.into()),
            ..Questions::default()
        };
        let (r, _) = ask(&q, None);
        assert_eq!(r.details["answered_by"], "program");
        assert_eq!(r.details["answer"], "PostgreSQL");
        // Declining (no output) and failing both leave it to the rest.
        let q = Questions {
            cmd: Some("cat >/dev/null".into()),
            default: Some("SQLite".into()),
            ..Questions::default()
        };
        let (r, events) = ask(&q, None);
        assert_eq!(r.details["answered_by"], "default");
        assert!(events.is_empty());
        let q = Questions {
            cmd: Some("echo broken >&2; exit 4".into()),
            ..Questions::default()
        };
        let (r, events) = ask(&q, None);
        assert_eq!(r.details["answered_by"], "nobody");
        let [AgentEvent::Error { message, .. }] = &events[..] else {
            panic!("{events:?}")
        };
        assert!(message.contains("broken"), "{message}");
    }

    #[test]
    fn a_person_who_never_answers_is_waited_for_only_up_to_the_limit() {
        let q = Questions {
            person: Person::Stdin,
            timeout: Some(Duration::from_millis(50)),
            ..Questions::default()
        };
        let (_tx, rx) = oneshot::channel::<String>();
        let (r, _) = ask(&q, Some(rx));
        assert_eq!(r.details["answered_by"], "nobody");
        assert!(r.output.contains("nobody answered in time"), "{}", r.output);
    }
}
