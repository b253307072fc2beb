//! ag-llm's command line: flags, turning a prompt or a JSON request on
//! stdin into an [`LlmRequest`], the two output modes (plain text as it
//! streams, or the JSONL event stream), `--list-models`, signals that
//! abort the call, and the exit status.

use std::future::Future;
use std::io::{self, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};

use clap::{CommandFactory, FromArgMatches, Parser, ValueEnum};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::structured::{self, OutputSchema};
use super::{Llm, LlmOptions};
use crate::cli::{ExitStatus, Stdout, error_line, warn};
use crate::protocol::{
    AssistantMessage, LlmEvent, LlmRequest, Message, Reasoning, StopReason, ToolDefinition,
};

const BIN: &str = "ag-llm";

/// How hard the model should think.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReasoningArg {
    /// No reasoning, or the least the model takes (OpenAI: "none" for
    /// GPT-5.1 and later, "minimal" for GPT-5, "low" for Codex and o-series).
    Off,
    /// A little.
    Low,
    /// Some.
    Medium,
    /// A lot.
    High,
}

impl From<ReasoningArg> for Reasoning {
    fn from(r: ReasoningArg) -> Reasoning {
        match r {
            ReasoningArg::Off => Reasoning::Off,
            ReasoningArg::Low => Reasoning::Low,
            ReasoningArg::Medium => Reasoning::Medium,
            ReasoningArg::High => Reasoning::High,
        }
    }
}

/// One model call, any provider, streamed.
///
/// `ag-llm -m provider/model "prompt"` prints the answer as it streams.
/// With no prompt, stdin is the prompt; a JSON request object on stdin
/// (`{"model","system","messages","tools",...}`) or `--json` gives the
/// JSONL event stream instead: `start`, `text_delta`, `thinking_delta`,
/// `tool_call_start`, `tool_call_delta`, `tool_call_end`, then `done` or
/// `error` carrying the whole assistant message with usage and cost.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "ag-llm",
    version,
    after_help = "Keys come from OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, OPENROUTER_API_KEY, \
GROQ_API_KEY, DEEPSEEK_API_KEY, XAI_API_KEY, MISTRAL_API_KEY (or --api-key). Providers and models \
are added in $AG_HOME/models.json (AG_HOME defaults to ~/.ag).

A response that sends nothing for --idle-timeout seconds (default 300) is tried once more, then \
reported as the server having gone silent and for how long: a call waits on a silent server twice \
the idle timeout at most (10 minutes by default). A local server that is not running (connection refused on \
127.0.0.1 or localhost) and a host name that does not resolve fail at once.

SIGINT or SIGTERM ends the call at once: the event stream ends with `done`, stop reason `aborted`, \
holding what had arrived.

Exit status: 0 success, 1 the model call failed (or its answer did not match --output-schema), 2 usage, input or set-up error (an unknown \
provider or model id, a missing key: reported before any event), 128+N ended by signal N."
)]
pub struct LlmArgs {
    /// The model, as provider/model (`anthropic/claude-sonnet-4-5`, `openai/gpt-5`,
    /// `google/gemini-2.5-pro`, `ollama/qwen3`).
    /// Without it, the `AG_MODEL` environment variable names the model.
    #[arg(short, long, value_name = "MODEL")]
    pub model: Option<String>,
    /// The prompt. Without it stdin is read: a JSON request object, or the
    /// prompt text. With it, text piped on stdin is added after the prompt.
    #[arg(value_name = "PROMPT")]
    pub prompt: Vec<String>,
    /// Print the JSONL event stream instead of the answer's text.
    #[arg(long)]
    pub json: bool,
    /// The system prompt.
    #[arg(short, long, value_name = "TEXT")]
    pub system: Option<String>,
    /// How hard the model should think, for models that reason.
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub reasoning: Option<ReasoningArg>,
    /// The most tokens the answer may have (default: the model's `max_output` from the model
    /// table or models.json, sent on every API).
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u64>,
    /// Sampling temperature, 0 or more (default: the provider's own).
    #[arg(long, value_name = "T", allow_negative_numbers = true, value_parser = parse_temperature)]
    pub temperature: Option<f64>,
    /// Send the request to this base URL instead of the provider's
    /// (`http://127.0.0.1:8080/v1`).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// The API key, instead of the provider's environment variable.
    #[arg(long, value_name = "KEY")]
    pub api_key: Option<String>,
    /// Tool definitions the model may call: a JSON array, or one definition
    /// per line as `ag-read --schema` prints them.
    #[arg(long, value_name = "FILE")]
    pub tools: Option<PathBuf>,
    /// List the configured providers and models, and exit.
    #[arg(long)]
    pub list_models: bool,
    /// Save each request and the raw response stream in DIR.
    #[arg(long, value_name = "DIR", conflicts_with = "replay")]
    pub record: Option<PathBuf>,
    /// Answer from the recordings in DIR (made with --record), with no network.
    #[arg(long, value_name = "DIR")]
    pub replay: Option<PathBuf>,
    /// Give up on a response that sends nothing (no byte, before or after its headers) for
    /// SECONDS; the attempt is tried once more, and a second silence ends the call (so a call
    /// waits twice SECONDS at most on a silent server). Default 300, enough for a CPU
    /// server's silent prompt processing; a provider's `idle_timeout` in models.json sets its
    /// own; 0 waits forever.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub idle_timeout: Option<std::time::Duration>,
    /// Make the answer one JSON value valid against this JSON Schema: a file, or
    /// inline JSON starting with `{` (a request's `output_schema` field says the
    /// same). Sent in the provider's own structured-output field where the model
    /// supports it (`--list-models` shows which), else as an instruction in the
    /// system prompt. The answer is checked (a ```json fence around it is
    /// accepted); one that does not match exits 1 with the problems on stderr.
    /// A broken schema exits 2.
    #[arg(long, value_name = "FILE|JSON")]
    pub output_schema: Option<String>,
}

/// Parses a number of seconds, fractions allowed, 0 or more.
pub fn parse_seconds(s: &str) -> Result<std::time::Duration, String> {
    let n: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    std::time::Duration::try_from_secs_f64(n)
        .map_err(|_| format!("`{s}` is not a number of seconds, 0 or more"))
}

/// Whether `t` is a sampling temperature: a finite number, 0 or more (the
/// flags', a config file's and an identity's alike).
pub fn is_temperature(t: f64) -> bool {
    t.is_finite() && t >= 0.0
}

/// A `--temperature`: a number, 0 or more (how high a provider goes is
/// its own to say: 2 for OpenAI's, 1 for Anthropic's).
pub fn parse_temperature(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(t) if is_temperature(t) => Ok(t),
        Ok(t) if t < 0.0 => Err(format!(
            "`{s}` is below 0, the lowest temperature (the most predictable answers): \
             --temperature 0"
        )),
        _ => Err(format!(
            "`{s}` is not a temperature: give a number, 0 or more (0 for the most predictable \
             answers)"
        )),
    }
}

/// ag-llm's clap command, for `--help`, the man page and completions.
pub fn command() -> clap::Command {
    LlmArgs::command()
}

/// Runs ag-llm.
pub fn main() -> ExitCode {
    let args = match command()
        .try_get_matches()
        .and_then(|m| LlmArgs::from_arg_matches(&m))
    {
        Ok(a) => a,
        Err(e) => return ExitStatus::from_clap(e, BIN).code(),
    };
    run(args).code()
}

fn usage_error(message: &str, hint: Option<&str>) -> ExitStatus {
    error_line(BIN, message, Some(hint.unwrap_or("Try `ag-llm --help`")));
    ExitStatus::Input
}

/// Runs parsed arguments.
pub fn run(args: LlmArgs) -> ExitStatus {
    let opts = LlmOptions {
        api_key: args.api_key.clone(),
        base_url: args.base_url.clone(),
        ag_home: None,
    };
    let mut llm = match Llm::new(opts) {
        Ok(l) => l,
        Err(e) => return usage_error(&e.to_string(), Some("fix the file, or move it away")),
    };
    if args.list_models {
        return list_models(&llm, args.json);
    }
    if let Some(dir) = args.record.clone() {
        llm = llm.with_record(dir);
    }
    if let Some(dir) = args.replay.clone() {
        llm = llm.with_replay(dir);
    }
    llm = llm.with_idle_timeout(args.idle_timeout);
    let (req, json) = match build_request(&args) {
        Ok(r) => r,
        Err((msg, hint)) => return usage_error(&msg, hint.as_deref()),
    };
    // A bad model id or a missing key is a set-up error: no event at all.
    if let Err(f) = llm.check(&req.model) {
        let (message, hint) = match f.message.find("\nhint: ") {
            Some(i) => (&f.message[..i], Some(&f.message[i + 7..])),
            None => (f.message.as_str(), None),
        };
        return usage_error(message, hint);
    }
    let runtime = match crate::cli::runtime(BIN) {
        Ok(r) => r,
        Err(status) => return status,
    };
    runtime.block_on(call(llm, req, json))
}

async fn call(llm: Llm, req: LlmRequest, json: bool) -> ExitStatus {
    let cancel = CancellationToken::new();
    let signal = Arc::new(AtomicI32::new(0));
    watch_signals(&cancel, &signal);
    // Events are rendered into `pending` and written out whenever the call
    // waits for more bytes (and when much is pending): nothing waits in the
    // buffer while the network is quiet, and a burst of events already
    // received costs one write instead of one per event.
    let pending = Arc::new(Mutex::new(Rendered {
        json,
        ..Default::default()
    }));
    let broken = Arc::new(AtomicBool::new(false));
    let sink_pending = pending.clone();
    let (sink_broken, sink_cancel) = (broken.clone(), cancel.clone());
    let mut sink = |ev: LlmEvent| {
        let Ok(mut out) = sink_pending.lock() else {
            return;
        };
        out.render(&ev);
        // A long burst is written before it all arrives.
        if out.buf.len() >= 64 * 1024 {
            write_out(&mut out.buf, &sink_broken, &sink_cancel);
        }
    };
    let flush = || {
        if let Ok(mut out) = pending.lock() {
            write_out(&mut out.buf, &broken, &cancel);
        }
    };
    let msg = {
        let mut call = std::pin::pin!(llm.stream(&req, &mut sink, &cancel));
        std::future::poll_fn(|cx| {
            let polled = call.as_mut().poll(cx);
            flush();
            polled
        })
        .await
    };
    flush();
    if broken.load(Ordering::SeqCst) {
        return ExitStatus::Success;
    }
    let (printed_text, ends_newline) = pending
        .lock()
        .map(|o| (o.printed_text, o.ends_newline))
        .unwrap_or((false, true));
    let mut out = Stdout::new();
    if !json && printed_text && !ends_newline {
        let _ = out.write_all_flush(b"\n");
    }
    match msg.stop_reason {
        StopReason::Error | StopReason::Refusal => {
            if !json {
                let text = msg
                    .error_message
                    .as_deref()
                    .unwrap_or("the model call failed");
                let (message, hint) = match text.find("\nhint: ") {
                    Some(i) => (&text[..i], Some(&text[i + 7..])),
                    None => (text, None),
                };
                error_line(BIN, message, hint);
            }
            ExitStatus::Failure
        }
        StopReason::Aborted => match signal.load(Ordering::SeqCst) {
            0 => ExitStatus::Failure,
            n => ExitStatus::Signal(n),
        },
        _ => match output_problems(&req, &msg) {
            Some(problems) => {
                error_line(BIN, &problems, None);
                ExitStatus::Failure
            }
            None => ExitStatus::Success,
        },
    }
}

/// Output rendered from events and not yet written.
#[derive(Default)]
struct Rendered {
    json: bool,
    buf: Vec<u8>,
    printed_text: bool,
    ends_newline: bool,
}

impl Rendered {
    /// Appends an event: a JSON line, or in plain mode its text (tool
    /// calls as one JSON line each).
    fn render(&mut self, ev: &LlmEvent) {
        if self.json {
            if serde_json::to_writer(&mut self.buf, ev).is_ok() {
                self.buf.push(b'\n');
            }
            return;
        }
        match ev {
            LlmEvent::TextDelta { delta, .. } => {
                self.printed_text = true;
                self.ends_newline = delta.ends_with('\n');
                self.buf.extend_from_slice(delta.as_bytes());
            }
            LlmEvent::ToolCallEnd {
                id,
                name,
                arguments,
                ..
            } => {
                if self.printed_text && !self.ends_newline {
                    self.buf.push(b'\n');
                }
                let call = serde_json::json!({"tool_call": {"id": id, "name": name, "arguments": arguments}});
                self.buf.extend_from_slice(call.to_string().as_bytes());
                self.buf.push(b'\n');
                self.printed_text = true;
                self.ends_newline = true;
            }
            _ => {}
        }
    }
}

/// Writes and flushes what is buffered; a failed write (nobody reads any
/// more: `ag-llm ... | head`) stops the call quietly.
fn write_out(buf: &mut Vec<u8>, broken: &AtomicBool, cancel: &CancellationToken) {
    if !buf.is_empty()
        && !broken.load(Ordering::SeqCst)
        && let Err(e) = Stdout::new().write_all_flush(buf)
    {
        if e.kind() != io::ErrorKind::BrokenPipe {
            warn(BIN, &format!("cannot write the output: {e}"));
        }
        broken.store(true, Ordering::SeqCst);
        cancel.cancel();
    }
    buf.clear();
}

/// SIGINT and SIGTERM cancel the call; the signal is remembered for the exit status.
fn watch_signals(cancel: &CancellationToken, which: &Arc<AtomicI32>) {
    use tokio::signal::unix::{SignalKind, signal};
    for (kind, number) in [
        (
            SignalKind::interrupt(),
            libc_number(nix::sys::signal::Signal::SIGINT),
        ),
        (
            SignalKind::terminate(),
            libc_number(nix::sys::signal::Signal::SIGTERM),
        ),
    ] {
        let Ok(mut stream) = signal(kind) else {
            continue;
        };
        let cancel = cancel.clone();
        let which = which.clone();
        tokio::spawn(async move {
            if stream.recv().await.is_some() {
                which.store(number, Ordering::SeqCst);
                cancel.cancel();
            }
        });
    }
}

fn libc_number(s: nix::sys::signal::Signal) -> i32 {
    s as i32
}

type InputError = (String, Option<String>);

/// The request from the flags and stdin, and whether to print events.
fn build_request(args: &LlmArgs) -> Result<(LlmRequest, bool), InputError> {
    let stdin_tty = io::stdin().is_terminal();
    let mut json = args.json;
    let prompt = args.prompt.join(" ");
    let mut req = if prompt.is_empty() {
        if stdin_tty {
            warn(
                BIN,
                "reading the prompt from the terminal (end it with Ctrl-D); see --help",
            );
        }
        let input = read_stdin()?;
        let trimmed = input.trim_start();
        if trimmed.starts_with('{') {
            json = true;
            let v: Value = serde_json::from_str(trimmed)
                .map_err(|e| (format!("stdin is not a valid JSON request: {e}"), None))?;
            let mut v = v;
            // The model may come from -m alone.
            if let (Some(obj), Some(m)) = (v.as_object_mut(), &args.model)
                && !obj.contains_key("model")
            {
                obj.insert("model".into(), Value::String(m.clone()));
            }
            // Tool definitions as other agents and APIs write them.
            if let Some(Value::Array(tools)) = v.get_mut("tools") {
                for t in tools.iter_mut() {
                    *t = normalize_tool(std::mem::take(t));
                }
            }
            serde_json::from_value::<LlmRequest>(v).map_err(|e| {
                (
                    format!("stdin is a JSON object but not a valid request: {e}"),
                    Some("see `schemas/llm-request.json`: {\"model\", \"messages\", ...}".into()),
                )
            })?
        } else if trimmed.is_empty() {
            return Err((
                "no prompt: give one as an argument or on stdin".into(),
                None,
            ));
        } else {
            LlmRequest {
                messages: vec![Message::user_text(input.trim_end())],
                ..Default::default()
            }
        }
    } else {
        let mut text = prompt;
        if !stdin_tty {
            let piped = read_stdin()?;
            if !piped.trim().is_empty() {
                text.push_str("\n\n");
                text.push_str(piped.trim_end());
            }
        }
        LlmRequest {
            messages: vec![Message::user_text(text)],
            ..Default::default()
        }
    };
    if let Some(m) = &args.model {
        req.model = m.clone();
    } else if req.model.trim().is_empty()
        && let Ok(m) = std::env::var("AG_MODEL")
    {
        req.model = m;
    }
    if req.model.trim().is_empty() {
        return Err((
            "no model: pass `-m provider/model` (or set AG_MODEL)".into(),
            Some("`ag-llm --list-models` shows the models it knows".into()),
        ));
    }
    if let Some(s) = &args.system {
        req.system = Some(s.clone());
    }
    if let Some(r) = args.reasoning {
        req.reasoning = Some(r.into());
    }
    if let Some(n) = args.max_tokens {
        req.max_tokens = Some(n);
    }
    if let Some(t) = args.temperature {
        req.temperature = Some(t);
    }
    if let Some(path) = &args.tools {
        req.tools = read_tools(path)?;
    }
    let here = std::env::current_dir().unwrap_or_default();
    if let Some(spec) = &args.output_schema {
        let schema = OutputSchema::load(spec, &here).map_err(|e| (e, None))?;
        req.output_schema = Some(schema.schema);
    } else if let Some(s) = req.output_schema.take() {
        let schema = OutputSchema::new(s)
            .map_err(|e| (format!("the request's `output_schema`: {e}"), None))?;
        req.output_schema = Some(schema.schema);
    }
    Ok((req, json))
}

/// An answer that must match an output schema and does not: the problems,
/// for stderr. Tool calls are no answer yet, so nothing to check.
fn output_problems(req: &LlmRequest, msg: &AssistantMessage) -> Option<String> {
    let schema = OutputSchema::new(req.output_schema.clone()?).ok()?;
    if msg.tool_calls().next().is_some() {
        return None;
    }
    let problems = schema.check(&msg.text()).err()?;
    Some(format!(
        "the answer does not match the output schema:\n- {}",
        problems.join("\n- ")
    ))
}

fn read_stdin() -> Result<String, InputError> {
    let mut bytes = Vec::new();
    io::stdin()
        .read_to_end(&mut bytes)
        .map_err(|e| (format!("cannot read stdin: {e}"), None))?;
    String::from_utf8(bytes).map_err(|_| ("stdin is not UTF-8 text".into(), None))
}

/// Tool definitions from a JSON array, one object, or JSON lines.
fn read_tools(path: &std::path::Path) -> Result<Vec<ToolDefinition>, InputError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        (
            format!("cannot read the tools file `{}`: {e}", path.display()),
            None,
        )
    })?;
    let values: Vec<Value> = match serde_json::from_str::<Value>(text.trim()) {
        Ok(Value::Array(items)) => items,
        Ok(v @ Value::Object(_)) => vec![v],
        _ => text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(serde_json::from_str::<Value>)
            .collect::<Result<_, _>>()
            .map_err(|e| {
                (
                    format!("the tools file `{}` is not JSON: {e}", path.display()),
                    Some("give a JSON array of {\"name\",\"description\",\"parameters\"}, or one per line".into()),
                )
            })?,
    };
    values
        .into_iter()
        .map(|v| {
            serde_json::from_value::<ToolDefinition>(normalize_tool(v)).map_err(|e| {
                (
                    format!("a tool in `{}` is not a definition: {e}", path.display()),
                    Some("each needs at least a \"name\" and a JSON Schema \"parameters\"".into()),
                )
            })
        })
        .collect()
}

/// A tool definition in any common shape made into ag's: OpenAI's
/// `{"type":"function","function":{...}}` unwrapped, Anthropic's
/// `input_schema` taken as `parameters`, and a missing `label`,
/// `description` or `parameters` filled in (the name, nothing, an object
/// with no properties).
fn normalize_tool(mut v: Value) -> Value {
    if v.get("type").and_then(Value::as_str) == Some("function")
        && let Some(inner) = v.get_mut("function").filter(|f| f.is_object())
    {
        v = inner.take();
    }
    if let Some(obj) = v.as_object_mut() {
        if let Some(schema) = obj.remove("input_schema") {
            obj.entry("parameters").or_insert(schema);
        }
        let name = obj.get("name").cloned().unwrap_or(Value::Null);
        obj.entry("label").or_insert(name);
        if obj.get("description").is_none_or(Value::is_null) {
            obj.insert("description".into(), Value::String(String::new()));
        }
        if obj.get("parameters").is_none_or(Value::is_null) {
            obj.insert(
                "parameters".into(),
                serde_json::json!({"type": "object", "properties": {}}),
            );
        }
    }
    v
}

fn list_models(llm: &Llm, json: bool) -> ExitStatus {
    let table = llm.table();
    let key_state = |pid: &str| -> &'static str {
        match table.provider(pid) {
            Some(p) if p.api_key.is_some() => "config",
            Some(p)
                if p.key_env
                    .iter()
                    .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty())) =>
            {
                "set"
            }
            Some(p) if p.key_optional => "not needed",
            _ => "missing",
        }
    };
    // Native structured output (--output-schema), by the model's rule.
    let schema_state = |m: &super::ModelInfo| {
        table
            .provider(&m.provider)
            .map_or(structured::Support::No, |p| structured::support(m, p))
    };
    let mut out = Vec::new();
    if json {
        for m in table.models() {
            let mut v = serde_json::to_value(m).unwrap_or(Value::Null);
            v["model"] = Value::String(m.full_id());
            v["key"] = Value::String(key_state(&m.provider).into());
            v["structured_output"] = Value::String(schema_state(m).as_str().into());
            out.push(v.to_string());
        }
    } else {
        out.push(format!(
            "{:<40} {:<17} {:>9} {:>8} {:>8} {:>8}  {:<13}  key",
            "model", "api", "context", "max out", "$in/M", "$out/M", "schema"
        ));
        for m in table.models() {
            out.push(format!(
                "{:<40} {:<17} {:>9} {:>8} {:>8} {:>8}  {:<13}  {}",
                m.full_id(),
                m.api.as_str(),
                m.context_window,
                m.max_output,
                m.prices.input,
                m.prices.output,
                schema_state(m).as_str(),
                key_state(&m.provider)
            ));
        }
        for p in table.providers() {
            // Claude and Gemini go by the version in the model's id.
            let schema = match p.api {
                super::Api::Anthropic | super::Api::Gemini => "by model",
                _ => table
                    .resolve(&format!("{}/-", p.id))
                    .map_or(structured::Support::No, |m| structured::support(&m, p))
                    .as_str(),
            };
            out.push(format!(
                "{:<40} {:<17} {:>9} {:>8} {:>8} {:>8}  {:<13}  {}",
                format!("{}/*", p.id),
                p.api.as_str(),
                "-",
                "-",
                "-",
                "-",
                schema,
                key_state(&p.id)
            ));
        }
    }
    let mut text = out.join("\n");
    text.push('\n');
    match Stdout::new()
        .write_all(text.as_bytes())
        .and_then(|()| Stdout::new().flush())
    {
        Ok(()) => ExitStatus::Success,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitStatus::Success,
        Err(e) => {
            error_line(BIN, &format!("cannot write the output: {e}"), None);
            ExitStatus::Input
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_is_well_formed() {
        command().debug_assert();
    }

    #[test]
    fn a_temperature_is_a_number_0_or_more() {
        assert_eq!(parse_temperature("0"), Ok(0.0));
        assert_eq!(parse_temperature(" 0.2 "), Ok(0.2));
        let below = parse_temperature("-0.5").unwrap_err();
        assert!(below.contains("`-0.5` is below 0"), "{below}");
        assert!(below.ends_with("--temperature 0"), "{below}");
        for bad in ["high", "NaN", "inf", ""] {
            let e = parse_temperature(bad).unwrap_err();
            assert!(e.contains("is not a temperature"), "{bad}: {e}");
        }
    }
}
