//! The shell that turns a [`Tool`] into a binary: the flags every tool
//! binary has, `--schema`, the JSONL call loop on stdin, and one plain call
//! from the command line with its notes on stderr. A tool binary is one
//! call to [`tool_main`].

use std::io::{self, IsTerminal};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, Args, Command, FromArgMatches};
use serde_json::{Map, Value};

use super::{Context, Tool, definition, serve, to_result};
use crate::cli::{ExitStatus, Stdout, error_line, note, print_json, warn};

/// Flags every tool binary has.
#[derive(Debug, Clone, Default, Args)]
pub struct ToolFlags {
    /// Print the tool's definition (name, description, JSON Schema of its
    /// arguments) as one JSON object and exit.
    #[arg(long)]
    pub schema: bool,
    /// Print the result as a JSON object (`{"output","details","is_error"}`,
    /// the notes inside `output`) instead of the plain output text.
    #[arg(long)]
    pub json: bool,
    /// Confine every path to DIR (after symlinks are resolved); paths outside
    /// it are refused. Each file is opened from DIR in one step (openat2
    /// RESOLVE_BENEATH, or a walk with O_NOFOLLOW where the kernel lacks
    /// it, or when AG_NO_OPENAT2=1), so a symlink swapped mid-call cannot
    /// lead outside; symlinks that stay inside DIR work.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

/// How the binary runs, for `--help` and the man page.
fn usage_help(bin: &str) -> String {
    format!(
        "With no tool arguments (flags such as --root alone do not count), reads calls from stdin, one JSON object per line \
({{\"id\": \"1\", \"arguments\": {{...}}}} or a bare arguments object), and writes \
one result per line: {{\"id\", \"output\", \"details\", \"is_error\"}}. A line that is not UTF-8 \
(error call.invalid_utf8; its arguments are never guessed at), not JSON or nested too deep (call.malformed), \
or longer than 64 MiB (call.too_long, counted without being held in memory) gets an error result that \
keeps the call's id whenever the line's top level can be read, and the next line is read as usual.

With AG_PROGRESS=1 in the environment, a tool that has something to report while a call runs \
writes progress lines to stderr before the result, {{\"type\":\"progress\",\"id\":\"1\",\"output\":\"...\"}} \
(schemas/tool-progress.json); stdout keeps one result per call either way.

With tool arguments, runs one call: the results go to stdout and nothing else; notes about them \
(what was cut short, skipped or not found, and how to see more) go to stderr as `{bin}: note: ...`, \
errors as `{bin}: error: ...`. With --json the result object goes to stdout, its output holding the \
notes as the model reads them.

Arguments as models send them: in a JSON call, an optional field sent as null, \"\", [], {{}}, false, \
or a 0 it cannot mean counts as absent (an empty value the schema marks as a choice, such as \
new_string: \"\", is kept); a number or boolean sent as a string (\"10\", \"true\") is taken when it \
reads as exactly one; an `explanation` field is ignored. Other unknown fields and real conflicts are \
errors that name the field and show a call that works."
    )
}

/// The full clap command of a tool binary, as `--help` and the man page show it.
pub fn tool_command<T: Tool>() -> Command {
    let cmd = Command::new(T::BIN).version(env!("CARGO_PKG_VERSION"));
    // Set after the flattened structs, whose doc comments would replace it.
    ToolFlags::augment_args(T::Args::augment_args(cmd))
        .about(T::ABOUT)
        .long_about(T::DESCRIPTION)
        .after_help(format!("{}\n\n{}", usage_help(T::BIN), T::EXIT_STATUS))
}

/// Runs a tool binary: parse, then schema, serve or one plain call.
/// Set when the call came as flags on the command line (a person, a
/// script), not as JSON (a model, through ag-loop or ag-mcp).
static FROM_FLAGS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether this process's call came as flags on the command line. A value
/// that is surely a model's slip (a `timeout` of `0.001` s) is taken as
/// given from a person, who means it.
pub fn called_with_flags() -> bool {
    FROM_FLAGS.load(std::sync::atomic::Ordering::Relaxed)
}

pub fn tool_main<T: Tool>() -> ExitCode {
    let bin = T::BIN;
    let full = tool_command::<T>();
    // The tool's own arguments are optional on the command line: without
    // them the binary serves calls on stdin.
    let tool_ids: Vec<String> = T::Args::augment_args(Command::new(bin))
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .filter(|id| !T::PROCESS_FLAGS.contains(&id.as_str()))
        .collect();
    let relaxed = full.clone().mut_args(|a| a.required(false));
    let matches = match relaxed.try_get_matches() {
        Ok(m) => m,
        // Help is rendered from the strict command so that it shows what is required.
        Err(e) => {
            let e = full.clone().try_get_matches().err().unwrap_or(e);
            return ExitStatus::from_clap(e, bin).code();
        }
    };
    let flags = match ToolFlags::from_arg_matches(&matches) {
        Ok(f) => f,
        Err(e) => return ExitStatus::from_clap(e, bin).code(),
    };
    if flags.schema {
        return print_json(bin, &definition::<T>());
    }
    let ctx = match Context::new(flags.root.as_deref()) {
        Ok(c) => c,
        Err(msg) => {
            error_line(bin, &msg, None);
            return ExitStatus::Input.code();
        }
    };
    if !any_given(&matches, &tool_ids) {
        if io::stdin().is_terminal() {
            warn(
                bin,
                "reading JSON calls from the terminal, one per line (Ctrl-D to end); see --help for the plain command line",
            );
        }
        let defaults = process_flag_values::<T>(&full, &matches);
        let stdin = io::stdin().lock();
        return match serve::serve_with::<T>(&ctx, &defaults, stdin, Stdout::new()) {
            Ok(()) => match crate::proc::termination_signal() {
                Some(sig) => ExitStatus::Signal(sig).code(),
                None => ExitStatus::Success.code(),
            },
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitStatus::Success.code(),
            Err(e) => {
                error_line(bin, &format!("I/O error: {e}"), None);
                ExitStatus::Input.code()
            }
        };
    }
    // Re-parse strictly so that a missing required argument is a usage error.
    let args = match full
        .try_get_matches()
        .and_then(|m| T::Args::from_arg_matches(&m))
    {
        Ok(a) => a,
        Err(e) => return ExitStatus::from_clap(e, bin).code(),
    };
    FROM_FLAGS.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut outcome = T::run(&ctx, args);
    // The plain command line keeps stdout for the results alone, as grep or
    // ls would: the notes about them go to stderr. `--json` keeps them in
    // the output text, as the model reads it.
    let notes = match &mut outcome {
        Ok(out) if !flags.json => std::mem::take(&mut out.notes),
        _ => Vec::new(),
    };
    let result = to_result(None, outcome);
    let failed = result.is_error;
    let status = match crate::proc::termination_signal() {
        Some(sig) => ExitStatus::Signal(sig).code(),
        None => ExitCode::from(T::exit_code(&result)),
    };
    if flags.json {
        let code = print_json(bin, &result);
        if code != ExitStatus::Success.code() {
            return code;
        }
    } else if failed {
        let (message, hint) = split_hint(&result.output);
        error_line(bin, message, hint);
    } else {
        let mut out = result.output;
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        match Stdout::new().write_all_flush(out.as_bytes()) {
            Ok(()) => {
                for n in &notes {
                    note(bin, n.text.trim());
                }
            }
            // The reader stopped reading: the notes about the rest are moot.
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
            Err(e) => {
                error_line(bin, &format!("cannot write the output: {e}"), None);
                return ExitStatus::Input.code();
            }
        }
    }
    status
}

fn any_given(matches: &ArgMatches, ids: &[String]) -> bool {
    ids.iter().any(|id| {
        matches!(
            matches.value_source(id),
            Some(ValueSource::CommandLine | ValueSource::EnvVariable)
        )
    })
}

/// The values of the tool's process flags given on the command line, as
/// JSON arguments for every call of the loop: a string, an array of strings
/// for a repeated flag, `true` for a switch.
fn process_flag_values<T: Tool>(cmd: &Command, matches: &ArgMatches) -> Map<String, Value> {
    let mut out = Map::new();
    for arg in cmd.get_arguments() {
        let id = arg.get_id().as_str();
        if !T::PROCESS_FLAGS.contains(&id) || !any_given(matches, &[id.to_string()]) {
            continue;
        }
        let value = if !arg.get_action().takes_values() {
            Value::Bool(true)
        } else {
            let mut raw: Vec<Value> = matches
                .get_raw(id)
                .into_iter()
                .flatten()
                .map(|v| Value::String(v.to_string_lossy().into_owned()))
                .collect();
            if matches!(arg.get_action(), ArgAction::Append) {
                Value::Array(raw)
            } else if let Some(last) = raw.pop() {
                last
            } else {
                continue;
            }
        };
        out.insert(id.to_string(), value);
    }
    out
}

/// Splits a trailing `hint:` paragraph off a message.
fn split_hint(msg: &str) -> (&str, Option<&str>) {
    match msg.find("\nhint: ") {
        Some(i) => (&msg[..i], Some(&msg[i + 7..])),
        None => (msg, None),
    }
}
