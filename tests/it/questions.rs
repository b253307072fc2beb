//! The model asks (ag-loop's `ask` tool): a `question` event answered by an
//! `answer` line or a typed line on stdin, and a run nobody attends, which
//! answers with `--ask-default`, through `--ask-cmd`, or hands the question
//! back to the model; stdin that ends while a question waits never hangs.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use crate::agent::{scripted_model, text_turn, tool_turn};
use crate::bin;
use crate::util::{Env, of_type, run};
use serde_json::{Value, json};

/// A model that asks which database to use, then answers "noted".
fn asking_model(env: &Env) -> String {
    scripted_model(
        env,
        &[
            tool_turn(&[(
                "q1",
                "ask",
                json!({"question": "Which database?", "options": ["PostgreSQL", "SQLite"]}),
            )]),
            text_turn("noted"),
        ],
    )
}

fn ag_loop(env: &Env, model: &str, extra: &[&str]) -> Command {
    let mut c = env.cmd(bin!("ag-loop"));
    c.args([
        "--llm-cmd",
        model,
        "--tools",
        "ask",
        "--json",
        "--no-session",
    ]);
    c.args(extra);
    c
}

/// The `ask` call's result as the model read it in its second request.
fn told(env: &Env) -> Value {
    let req: Value = serde_json::from_slice(&env.read(".model/request1.json")).unwrap();
    let msgs = req["messages"].as_array().unwrap();
    msgs.iter()
        .find(|m| m["role"] == "tool_result")
        .cloned()
        .unwrap_or_else(|| panic!("no tool result in {req}"))
}

/// Runs ag-loop with `prompt` on a piped stdin, answering each `question`
/// with `reply(event)` (a line to write, or none), and closes stdin after
/// the first `agent_end`. Returns every event; ag-loop must exit with 0.
fn converse(c: Command, prompt: Value, reply: impl Fn(&Value) -> Option<String>) -> Vec<Value> {
    let (events, code) = converse_status(c, prompt, reply);
    assert_eq!(code, Some(0), "{events:?}");
    events
}

/// [`converse`], with ag-loop's exit status.
fn converse_status(
    mut c: Command,
    prompt: Value,
    reply: impl Fn(&Value) -> Option<String>,
) -> (Vec<Value>, Option<i32>) {
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut stdin = Some(child.stdin.take().unwrap());
    if let Some(w) = stdin.as_mut() {
        w.write_all(format!("{prompt}\n").as_bytes()).unwrap();
    }
    let mut events = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let e: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if e["type"] == "question"
            && let (Some(l), Some(w)) = (reply(&e), stdin.as_mut())
        {
            w.write_all(format!("{l}\n").as_bytes()).unwrap();
        }
        if e["type"] == "agent_end" {
            stdin = None;
        }
        events.push(e);
    }
    let out = child.wait_with_output().unwrap();
    (events, out.status.code())
}

#[test]
fn a_question_under_json_is_answered_on_stdin() {
    let env = Env::new();
    let model = asking_model(&env);
    let events = converse(
        ag_loop(&env, &model, &[]),
        json!({"type": "prompt", "content": "set up the service"}),
        |q| {
            Some(
                json!({"type": "answer", "tool_call_id": q["tool_call_id"], "answer": "2"})
                    .to_string(),
            )
        },
    );
    let asked = of_type(&events, "question");
    assert_eq!(asked.len(), 1, "{events:?}");
    assert_eq!(asked[0]["tool_call_id"], "q1");
    assert_eq!(asked[0]["question"], "Which database?");
    assert_eq!(asked[0]["options"], json!(["PostgreSQL", "SQLite"]));
    // The question comes between the call's start and its end.
    let pos = |t: &str| events.iter().position(|e| e["type"] == t).unwrap();
    assert!(pos("tool_execution_start") < pos("question"));
    assert!(pos("question") < pos("tool_execution_end"));
    let end = of_type(&events, "tool_execution_end")[0];
    // "2" picks the second option.
    assert_eq!(end["output"], "The user answered: SQLite");
    assert_eq!(end["details"]["answered_by"], "person");
    assert_eq!(end["is_error"], false);
    assert_eq!(
        told(&env)["content"][0]["text"],
        "The user answered: SQLite"
    );
}

#[test]
fn a_typed_line_answers_a_waiting_question() {
    let env = Env::new();
    let model = asking_model(&env);
    let events = converse(
        ag_loop(&env, &model, &[]),
        json!({"type": "prompt", "content": "set up the service"}),
        |_| Some("whatever is simplest".into()),
    );
    let end = of_type(&events, "tool_execution_end")[0];
    assert_eq!(end["output"], "The user answered: whatever is simplest");
    // Taken as the answer, not as another prompt.
    assert_eq!(of_type(&events, "agent_start").len(), 1, "{events:?}");
}

#[test]
fn an_answer_nobody_waits_for_is_reported_in_the_stream() {
    let env = Env::new();
    let model = scripted_model(&env, &[text_turn("hi")]);
    let mut c = ag_loop(&env, &model, &[]);
    let input = concat!(
        "{\"type\":\"answer\",\"tool_call_id\":\"nope\",\"answer\":\"yes\"}\n",
        "{\"type\":\"prompt\",\"content\":\"hello\"}\n"
    );
    c.stdin(Stdio::piped());
    let r = run(c, Some(input.as_bytes()));
    r.ok();
    let events = r.json_lines();
    let errors = of_type(&events, "error");
    assert_eq!(errors.len(), 1, "{r}");
    let msg = errors[0]["message"].as_str().unwrap();
    assert!(
        msg.contains("answer for `nope` ignored: no question with that id is waiting"),
        "{msg}"
    );
    assert_eq!(of_type(&events, "agent_end").len(), 1);
}

#[test]
fn unattended_the_default_answers() {
    let env = Env::new();
    let model = asking_model(&env);
    // Prompts as arguments and no terminal: nobody to ask.
    let r = run(
        ag_loop(
            &env,
            &model,
            &["--ask-default", "use SQLite", "set up the service"],
        ),
        None,
    );
    r.ok();
    let events = r.json_lines();
    assert!(of_type(&events, "question").is_empty(), "{r}");
    let end = of_type(&events, "tool_execution_end")[0];
    assert_eq!(
        end["output"],
        "Nobody is there to answer; the run's default answer is: use SQLite"
    );
    assert_eq!(end["details"]["answered_by"], "default");
}

#[test]
fn unattended_without_a_default_the_model_is_told_to_decide() {
    let env = Env::new();
    let model = asking_model(&env);
    // Stdin a file (here /dev/null via run's default): nobody either.
    let r = run(ag_loop(&env, &model, &["set up the service"]), None);
    r.ok();
    let events = r.json_lines();
    let end = of_type(&events, "tool_execution_end")[0];
    let out = end["output"].as_str().unwrap();
    assert!(
        out.starts_with(
            "Nobody is there to answer this question (the run is unattended). Decide yourself"
        ),
        "{out}"
    );
    assert_eq!(end["is_error"], false);
    assert_eq!(told(&env)["content"][0]["text"], out);
    // Prompts read from a file: the same, and the next prompt still runs.
    let env = Env::new();
    let model = asking_model(&env);
    env.write(
        "prompts.jsonl",
        "{\"type\":\"prompt\",\"content\":\"set up the service\"}\n",
    );
    let mut c = ag_loop(&env, &model, &[]);
    c.stdin(std::fs::File::open(env.join("prompts.jsonl")).unwrap());
    let out = c.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let end = of_type(&events, "tool_execution_end")[0];
    assert_eq!(end["details"]["answered_by"], "nobody", "{events:?}");
    assert!(of_type(&events, "question").is_empty());
}

#[test]
fn the_answering_program_answers_first_with_the_question_on_its_stdin() {
    let env = Env::new();
    let model = asking_model(&env);
    let r = run(
        ag_loop(
            &env,
            &model,
            &[
                "--ask-cmd",
                "cat > asked.json; echo PostgreSQL",
                "set up the service",
            ],
        ),
        None,
    );
    r.ok();
    let asked: Value = serde_json::from_slice(&env.read("asked.json")).unwrap();
    assert_eq!(asked["tool_call_id"], "q1");
    assert_eq!(asked["question"], "Which database?");
    assert_eq!(asked["options"], json!(["PostgreSQL", "SQLite"]));
    let end = of_type(&r.json_lines(), "tool_execution_end")[0].clone();
    assert_eq!(end["details"]["answered_by"], "program");
    assert_eq!(end["details"]["answer"], "PostgreSQL");
    // A program that declines (prints nothing) leaves it to the default.
    let env = Env::new();
    let model = asking_model(&env);
    let r = run(
        ag_loop(
            &env,
            &model,
            &["--ask-cmd", "true", "--ask-default", "SQLite", "go"],
        ),
        None,
    );
    let end = of_type(&r.json_lines(), "tool_execution_end")[0].clone();
    assert_eq!(end["details"]["answered_by"], "default", "{r}");
}

#[test]
fn stdin_that_ends_while_a_question_waits_moves_the_run_on() {
    let env = Env::new();
    let model = asking_model(&env);
    // The prompt, then the end of input: whether the question was asked
    // before or after stdin ended, nobody is left to answer it.
    let mut c = ag_loop(&env, &model, &[]);
    c.stdin(Stdio::piped());
    let r = run(
        c,
        Some(b"{\"type\":\"prompt\",\"content\":\"set up the service\"}\n"),
    );
    r.ok();
    let events = r.json_lines();
    let end = of_type(&events, "tool_execution_end")[0];
    assert_eq!(end["details"]["answered_by"], "nobody", "{r}");
    assert_eq!(of_type(&events, "agent_end")[0]["outcome"], "finished");
}

#[test]
fn an_interrupt_while_a_question_waits_ends_the_call_and_the_run() {
    let env = Env::new();
    let model = asking_model(&env);
    let (events, code) = converse_status(
        ag_loop(&env, &model, &[]),
        json!({"type": "prompt", "content": "set up the service"}),
        |_| Some(json!({"type": "interrupt"}).to_string()),
    );
    assert_eq!(code, Some(130), "{events:?}");
    let end = of_type(&events, "tool_execution_end")[0];
    assert_eq!(end["is_error"], true, "{end}");
    assert!(
        end["output"].as_str().unwrap().starts_with("aborted"),
        "{end}"
    );
    assert_eq!(of_type(&events, "agent_end")[0]["outcome"], "interrupted");
}

#[test]
fn a_question_without_a_question_is_an_error_the_model_can_fix() {
    let env = Env::new();
    let model = scripted_model(
        &env,
        &[
            tool_turn(&[("q1", "ask", json!({"question": "  "}))]),
            text_turn("ok"),
        ],
    );
    let r = run(ag_loop(&env, &model, &["go"]), None);
    r.ok();
    let end = of_type(&r.json_lines(), "tool_execution_end")[0].clone();
    assert_eq!(end["is_error"], true);
    assert!(
        end["output"]
            .as_str()
            .unwrap()
            .contains("`question` is empty"),
        "{end}"
    );
}
