//! The JSONL call loop: one call per line on stdin, one result per line on
//! stdout, for as many calls as arrive. A bad line gets an error result and
//! the loop goes on.

use std::io::{self, BufRead, Write};

use serde_json::{Map, Value};

use super::{Context, Tool, ToolError, parse_arguments, to_result};
use crate::protocol::{ToolCall, ToolResult};

/// Answers one input line. Never fails: every problem becomes an error result.
pub fn answer_line<T: Tool>(ctx: &Context, line: &str) -> ToolResult {
    answer_line_with::<T>(ctx, &Map::new(), line)
}

/// Answers one input line, filling arguments the call leaves out from
/// `defaults` (the values of the tool's [`Tool::PROCESS_FLAGS`]).
pub fn answer_line_with<T: Tool>(
    ctx: &Context,
    defaults: &Map<String, Value>,
    line: &str,
) -> ToolResult {
    let value: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => {
            return to_result(
                None,
                Err(ToolError::new(
                    "call.malformed",
                    format!(
                        "the input line is not valid JSON ({e}); send one JSON object per line: {{\"id\": \"1\", \"arguments\": {{...}}}}"
                    ),
                )),
            );
        }
    };
    // Echo the id even when the rest of the call is unusable.
    let id_hint = value.get("id").and_then(|v| v.as_str().map(str::to_string));
    let mut call = match ToolCall::from_value(value) {
        Ok(c) => c,
        Err(msg) => {
            return to_result(
                id_hint,
                Err(ToolError::new("call.malformed", format!("bad call: {msg}"))),
            );
        }
    };
    for (key, value) in defaults {
        call.arguments
            .entry(key.clone())
            .or_insert_with(|| value.clone());
    }
    let outcome = parse_arguments::<T>(call.arguments).and_then(|args| T::run(ctx, args));
    to_result(call.id, outcome)
}

/// Serves calls from `input` until end of input. Returns an error only when
/// the output cannot be written (a closed pipe ends the loop quietly).
pub fn serve<T: Tool>(ctx: &Context, input: impl BufRead, output: impl Write) -> io::Result<()> {
    serve_with::<T>(ctx, &Map::new(), input, output)
}

/// [`serve`], with `defaults` for arguments that calls leave out.
pub fn serve_with<T: Tool>(
    ctx: &Context,
    defaults: &Map<String, Value>,
    input: impl BufRead,
    mut output: impl Write,
) -> io::Result<()> {
    for line in input.split(b'\n') {
        let line = line?;
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let result = answer_line_with::<T>(ctx, defaults, text);
        let mut buf = serde_json::to_vec(&result).map_err(io::Error::other)?;
        buf.push(b'\n');
        output.write_all(&buf)?;
        output.flush()?;
        // A termination signal that arrived during the call stopped what it
        // ran and was reported in its result; now the process ends.
        if crate::proc::termination_signal().is_some() {
            break;
        }
    }
    Ok(())
}
