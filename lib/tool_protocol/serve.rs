//! The JSONL call loop: one call per line on stdin, one result per line on
//! stdout, for as many calls as arrive. A bad line gets an error result and
//! the loop goes on: one that is not JSON, not UTF-8, nested too deep, or
//! longer than [`MAX_LINE_BYTES`] (which is never held in memory whole).
//! The answer carries the call's `id` whenever the line's top level can be
//! read.

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
                top_level_id(line),
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
    super::progress::set_call_id(call.id.clone());
    let outcome = parse_arguments::<T>(call.arguments).and_then(|args| T::run(ctx, args));
    super::progress::set_call_id(None);
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
    mut input: impl BufRead,
    mut output: impl Write,
) -> io::Result<()> {
    while let Some(line) = read_line_capped(&mut input, MAX_LINE_BYTES)? {
        let result = match line {
            InputLine::TooLong { bytes, head } => to_result(
                // The id usually comes first: read from the line's start.
                top_level_id(String::from_utf8_lossy(&head).trim()),
                Err(ToolError::new(
                    "call.too_long",
                    format!(
                        "the input line is {bytes} bytes long, more than the {} MiB a call may take; it was not read. Send large content in parts (write a file, then append with edit).",
                        MAX_LINE_BYTES / 1024 / 1024
                    ),
                )),
            ),
            InputLine::Line(bytes) => {
                if bytes.trim_ascii().is_empty() {
                    continue;
                }
                match std::str::from_utf8(&bytes) {
                    Ok(text) => answer_line_with::<T>(ctx, defaults, text.trim()),
                    Err(e) => not_utf8(&bytes, &e),
                }
            }
        };
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

/// The answer to a line that is not UTF-8. Its arguments are not guessed
/// at (a file name or content with U+FFFD in place of the bad bytes would
/// be a different one), but its id is kept when it can be read.
fn not_utf8(bytes: &[u8], err: &std::str::Utf8Error) -> ToolResult {
    let lossy = String::from_utf8_lossy(bytes);
    to_result(
        top_level_id(lossy.trim()),
        Err(ToolError::new(
            "call.invalid_utf8",
            format!(
                "the input line is not valid UTF-8 (a bad byte at offset {}), so the call was not run; JSON text must be UTF-8. Send file names and content as UTF-8 (escape other characters as \\uXXXX).",
                err.valid_up_to()
            ),
        )),
    )
}

/// The longest input line read (64 MiB): far more than any real call, and
/// a bound on the memory one line can take.
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// How much of the start of a line past the limit is kept: enough for the
/// members before a large value (a call's `id`, a request's `tool`).
pub const KEPT_OF_LONG_LINE: usize = 64 * 1024;

/// One line of input, without its newline.
#[derive(Debug, PartialEq, Eq)]
pub enum InputLine {
    /// The line's bytes.
    Line(Vec<u8>),
    /// A line longer than the limit: its length was counted, and only its
    /// first [`KEPT_OF_LONG_LINE`] bytes kept.
    TooLong {
        /// Its length in bytes.
        bytes: u64,
        /// Its first bytes.
        head: Vec<u8>,
    },
}

/// Reads one line of at most `cap` bytes from `input`; `None` at the end of
/// the input. A longer line is read through to its end without being kept
/// (but for its first bytes), so that it costs no more memory than `cap`,
/// and the next line is read as usual.
pub fn read_line_capped(input: &mut impl BufRead, cap: usize) -> io::Result<Option<InputLine>> {
    let mut line = Vec::new();
    let mut total = 0u64;
    let mut too_long = false;
    let mut any = false;
    loop {
        let available = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            if !any {
                return Ok(None);
            }
            break;
        }
        any = true;
        let newline = memchr::memchr(b'\n', available);
        let chunk = &available[..newline.unwrap_or(available.len())];
        total += chunk.len() as u64;
        if !too_long && line.len() + chunk.len() > cap {
            too_long = true;
            line.truncate(KEPT_OF_LONG_LINE);
            line.shrink_to_fit();
        }
        if too_long {
            let more = KEPT_OF_LONG_LINE
                .saturating_sub(line.len())
                .min(chunk.len());
            line.extend_from_slice(&chunk[..more]);
        } else {
            line.extend_from_slice(chunk);
        }
        let used = chunk.len() + usize::from(newline.is_some());
        input.consume(used);
        if newline.is_some() {
            break;
        }
    }
    Ok(Some(if too_long {
        InputLine::TooLong {
            bytes: total,
            head: line,
        }
    } else {
        InputLine::Line(line)
    }))
}

/// The `id` of a call whose line is a JSON object at its top level, even
/// when what is inside cannot be parsed (nested deeper than the parser
/// goes, say): the top level is scanned without recursion, each member's
/// value skipped by counting brackets, until the member `id`.
pub fn top_level_id(line: &str) -> Option<String> {
    let bytes = line.as_bytes();
    let mut i = skip_ws(bytes, 0);
    if bytes.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_ws(bytes, i);
        if bytes.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(bytes, i)?;
        let key: String = serde_json::from_str(&line[i..key_end]).ok()?;
        i = skip_ws(bytes, key_end);
        if bytes.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(bytes, i + 1);
        let value_end = value_end(bytes, i)?;
        if key == "id" {
            return match serde_json::from_str::<Value>(&line[i..value_end]).ok()? {
                Value::String(s) => Some(s),
                _ => None,
            };
        }
        i = skip_ws(bytes, value_end);
        match bytes.get(i) {
            Some(b',') => i += 1,
            _ => return None,
        }
    }
}

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

/// The index just past the JSON string that starts at `start` (a `"`).
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The index just past the JSON value that starts at `start`, found by
/// counting brackets outside strings (no recursion, whatever the depth).
fn value_end(bytes: &[u8], start: usize) -> Option<usize> {
    match bytes.get(start)? {
        b'"' => string_end(bytes, start),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = start;
            while i < bytes.len() {
                match bytes[i] {
                    b'"' => {
                        i = string_end(bytes, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let mut i = start;
            while i < bytes.len() && !matches!(bytes[i], b',' | b'}' | b']') {
                i += 1;
            }
            Some(i)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_survive_what_the_parser_refuses() {
        let deep = format!(
            r#"{{"id":"7","arguments":{{"x":{}1{}}}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert!(serde_json::from_str::<Value>(&deep).is_err());
        assert_eq!(top_level_id(&deep).as_deref(), Some("7"));
        let late = format!(
            r#"{{"arguments":{{"x":{}1{}}},"id":"8"}}"#,
            "[".repeat(500),
            "]".repeat(500)
        );
        assert_eq!(top_level_id(&late).as_deref(), Some("8"));
        assert_eq!(
            top_level_id(r#"{"a":"}\"{","b":[1,{"c":"]"}],"id":"9"}"#).as_deref(),
            Some("9")
        );
        assert_eq!(top_level_id(r#"{"id":5}"#), None);
        assert_eq!(top_level_id(r#"["id","x"]"#), None);
        assert_eq!(top_level_id(r#"{"arguments":[[["#), None);
    }

    #[test]
    fn long_lines_are_counted_not_kept() {
        let mut input =
            io::BufReader::with_capacity(7, &b"short\nthis one is too long\n\nlast"[..]);
        let mut got = Vec::new();
        while let Some(line) = read_line_capped(&mut input, 10).unwrap() {
            got.push(line);
        }
        assert_eq!(
            got,
            vec![
                InputLine::Line(b"short".to_vec()),
                InputLine::TooLong {
                    bytes: 20,
                    head: b"this one is too long".to_vec()
                },
                InputLine::Line(Vec::new()),
                InputLine::Line(b"last".to_vec()),
            ]
        );
    }
}
