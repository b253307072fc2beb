//! How helpers that answer one request with one JSON object (tools, gates,
//! after-hooks) are read: the first non-blank line of their stdout is the
//! answer, and whatever follows it is ignored (a helper may log after it).

use serde::de::DeserializeOwned;

use super::Captured;

/// Bytes of a bad answer quoted in the error.
const QUOTE_CHARS: usize = 200;

/// Why a helper's stdout held no usable answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// Nothing but blank lines (or nothing at all).
    #[error("it printed no answer")]
    Missing,
    /// The first non-blank line is not the JSON expected.
    #[error("its answer is not what was expected ({error}): {line}")]
    Invalid {
        /// Why it does not parse.
        error: String,
        /// The start of the line.
        line: String,
    },
}

/// The answer in `stdout`: its first non-blank line, parsed as `T`.
pub fn answer<T: DeserializeOwned>(stdout: &Captured) -> Result<T, AnswerError> {
    // The head holds the start of the output: the answer, unless a huge
    // blank prefix pushed it out, which is no answer either.
    let first = stdout
        .head
        .split(|b| *b == b'\n')
        .find(|l| !l.iter().all(u8::is_ascii_whitespace))
        .ok_or(AnswerError::Missing)?;
    serde_json::from_slice(first).map_err(|e| AnswerError::Invalid {
        error: e.to_string(),
        line: String::from_utf8_lossy(first)
            .chars()
            .take(QUOTE_CHARS)
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn out(text: &str) -> Captured {
        Captured {
            head: text.as_bytes().to_vec(),
            ..Captured::default()
        }
    }

    #[test]
    fn the_first_non_blank_line_is_the_answer_and_the_rest_is_ignored() {
        let v: Value = answer(&out("\n  \n{\"a\":1}\nlog line\n{\"b\":2}\n")).unwrap();
        assert_eq!(v, json!({"a": 1}));
        let v: Value = answer(&out("{\"a\":2}")).unwrap();
        assert_eq!(v, json!({"a": 2}));
        let v: Value = answer(&out("\r\n{\"a\":3}\r\n")).unwrap();
        assert_eq!(v, json!({"a": 3}));
    }

    #[test]
    fn no_answer_and_garbage_are_told_apart() {
        assert_eq!(answer::<Value>(&out("")), Err(AnswerError::Missing));
        assert_eq!(answer::<Value>(&out(" \n\t\n")), Err(AnswerError::Missing));
        let long = format!("not json {}", "x".repeat(1000));
        match answer::<Value>(&out(&long)) {
            Err(AnswerError::Invalid { line, .. }) => {
                assert!(line.starts_with("not json"));
                assert_eq!(line.chars().count(), QUOTE_CHARS);
            }
            other => panic!("{other:?}"),
        }
    }
}
