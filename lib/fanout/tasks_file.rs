//! The tasks file: one JSON object a line; blank lines and lines starting
//! with `#` are not tasks. A line is read and checked only by the task that
//! runs it, so that one bad line never stops the others: it becomes that
//! task's `invalid_task` result.

use std::path::{Path, PathBuf};

use serde_json::{Map, Number, Value};

/// The fields a task may have; any other is refused, so that a typo does
/// not go unnoticed.
const FIELDS: [&str; 9] = [
    "args",
    "check",
    "check_timeout",
    "check_tries",
    "dir",
    "id",
    "model",
    "prompt",
    "repo",
];

/// A tasks file, read whole.
pub struct TasksFile {
    /// Its absolute path: relative `dir`s are taken from its directory.
    pub path: PathBuf,
    /// Its lines, without their ends.
    pub lines: Vec<Vec<u8>>,
}

impl TasksFile {
    /// Reads the file at `path`.
    pub fn read(path: &Path) -> Result<TasksFile, String> {
        let path = std::path::absolute(path)
            .map_err(|e| format!("cannot read tasks file `{}`: {e}", path.display()))?;
        let bytes = std::fs::read(&path)
            .map_err(|e| format!("cannot read tasks file `{}`: {e}", path.display()))?;
        let mut lines: Vec<Vec<u8>> = bytes.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
        // The end of the last line, not a line.
        if lines.last().is_some_and(Vec::is_empty) {
            lines.pop();
        }
        Ok(TasksFile { path, lines })
    }

    /// The numbers (from 1) of the lines that are tasks.
    pub fn task_numbers(&self) -> Vec<u64> {
        (1..=self.lines.len() as u64)
            .filter(|n| is_task(&self.lines[*n as usize - 1]))
            .collect()
    }

    /// The directory relative `dir`s are taken from.
    pub fn base(&self) -> PathBuf {
        self.path
            .parent()
            .map_or_else(|| PathBuf::from("/"), Path::to_path_buf)
    }

    /// The task of line `n` (from 1), checked; the error says what is wrong
    /// and names the line.
    pub fn task(&self, n: u64) -> Result<Task, String> {
        parse(&self.lines[n as usize - 1], n, &self.lines)
    }
}

/// Whether a line is a task rather than a blank or a comment.
pub fn is_task(raw: &[u8]) -> bool {
    let s = raw.trim_ascii();
    !s.is_empty() && !s.starts_with(b"#")
}

/// One task, as its line gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// Its name in the result line.
    pub id: String,
    /// Where ag-loop works, relative to the tasks file.
    pub dir: Option<String>,
    /// The prompt.
    pub prompt: String,
    /// provider/model.
    pub model: Option<String>,
    /// A repository cloned into `dir` first.
    pub repo: Option<String>,
    /// More ag-loop flags.
    pub args: Vec<String>,
    /// A command that exits 0 when the task is done (ag-loop's `--until`).
    pub check: Option<String>,
    /// `--until-tries`.
    pub check_tries: Option<u64>,
    /// `--until-timeout`, as the line wrote the number.
    pub check_timeout: Option<Number>,
}

fn parse(raw: &[u8], n: u64, lines: &[Vec<u8>]) -> Result<Task, String> {
    let text = std::str::from_utf8(raw).map_err(|_| format!("line {n}: not UTF-8"))?;
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("line {n}: not JSON: {e}"))?;
    let Value::Object(obj) = value else {
        return Err(format!("line {n}: not a JSON object"));
    };
    let mut unknown: Vec<&String> = obj
        .keys()
        .filter(|k| !FIELDS.contains(&k.as_str()))
        .collect();
    unknown.sort();
    if let Some(k) = unknown.first() {
        return Err(format!(
            "line {n}: unknown field `{k}` (fields: {})",
            FIELDS.join(", ")
        ));
    }
    let text_field = |key: &str| -> Result<Option<String>, String> {
        match obj.get(key) {
            None => Ok(None),
            Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
            Some(_) => Err(format!("line {n}: `{key}` must be a non-empty string")),
        }
    };
    let dir = text_field("dir")?;
    let prompt = text_field("prompt")?;
    let model = text_field("model")?;
    let repo = text_field("repo")?;
    let check = text_field("check")?;
    let Some(prompt) = prompt else {
        return Err(format!("line {n}: `prompt` is missing"));
    };
    if dir.is_none() && repo.is_none() {
        return Err(format!("line {n}: `dir` (or `repo`) is missing"));
    }
    let check_tries =
        check_number(&obj, "check_tries", n, check.is_some())?.map(|v| v.as_u64().unwrap_or(1));
    let check_timeout = check_number(&obj, "check_timeout", n, check.is_some())?;
    let args = match obj.get("args") {
        None => Vec::new(),
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(|a| a.as_str().map(str::to_string))
            .collect(),
        Some(_) => return Err(format!("line {n}: `args` must be a list of strings")),
    };
    let id = match obj.get("id") {
        None => n.to_string(),
        Some(v) => {
            let id = id_text(v)
                .filter(|s| !s.is_empty())
                .ok_or_else(|| format!("line {n}: `id` must be a non-empty string or a number"))?;
            // Two tasks of one name would make results ambiguous (and
            // --summary count one of them only), so the later one is refused.
            if let Some(m) = earlier_with_id(lines, n, &id) {
                return Err(format!("line {n}: id `{id}` is already the id of line {m}"));
            }
            id
        }
    };
    Ok(Task {
        id,
        dir,
        prompt,
        model,
        repo,
        args,
        check,
        check_tries,
        check_timeout,
    })
}

/// `check_tries` (a whole number, 1 or more) or `check_timeout` (seconds,
/// more than 0 and at most 3600), which only go with a check.
fn check_number(
    obj: &Map<String, Value>,
    key: &str,
    n: u64,
    has_check: bool,
) -> Result<Option<Number>, String> {
    let Some(v) = obj.get(key) else {
        return Ok(None);
    };
    if !has_check {
        return Err(format!(
            "line {n}: `{key}` goes with `check` (a command that exits 0 when the task is done)"
        ));
    }
    let ok = match (key, v) {
        ("check_tries", Value::Number(x)) => x.as_u64().is_some_and(|t| t >= 1),
        (_, Value::Number(x)) => x.as_f64().is_some_and(|t| t > 0.0 && t <= 3600.0),
        _ => false,
    };
    match v {
        Value::Number(x) if ok => Ok(Some(x.clone())),
        _ => {
            let what = if key == "check_tries" {
                "a whole number, 1 or more"
            } else {
                "seconds, more than 0 and at most 3600"
            };
            Err(format!("line {n}: `{key}` must be {what} (got {v})"))
        }
    }
}

/// An id as its result names it: a string, or a whole number's digits.
fn id_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(x) if x.is_i64() || x.is_u64() => Some(x.to_string()),
        _ => None,
    }
}

/// The first task line before line `n` whose id is `id`.
fn earlier_with_id(lines: &[Vec<u8>], n: u64, id: &str) -> Option<u64> {
    for (m, other) in (1..n).zip(lines) {
        if !is_task(other) {
            continue;
        }
        let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(other) else {
            continue;
        };
        let other_id = match o.get("id") {
            None => Some(m.to_string()),
            Some(v) => id_text(v),
        };
        if other_id.as_deref() == Some(id) {
            return Some(m);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<Vec<u8>> {
        text.lines().map(|l| l.as_bytes().to_vec()).collect()
    }

    fn task(text: &str, n: u64) -> Result<Task, String> {
        let all = lines(text);
        parse(&all[n as usize - 1], n, &all)
    }

    #[test]
    fn a_task_takes_its_fields_and_its_line_number_for_an_id() {
        let t = task(
            r#"{"dir": "a", "prompt": "p", "args": ["--max-turns", "3"], "check": "true", "check_timeout": 1.5}"#,
            1,
        )
        .unwrap();
        assert_eq!(t.id, "1");
        assert_eq!(t.args, ["--max-turns", "3"]);
        assert_eq!(t.check_timeout.unwrap().to_string(), "1.5");
        assert_eq!(
            task(r#"{"id": 7, "repo": "r", "prompt": "p"}"#, 1)
                .unwrap()
                .id,
            "7"
        );
    }

    #[test]
    fn a_bad_line_says_what_is_wrong_and_where() {
        for (text, n, says) in [
            ("{\"dir\": \"a\", \"prompt\": ", 1, "line 1: not JSON"),
            ("[1]", 1, "line 1: not a JSON object"),
            (r#"{"dir": "a", "promt": "p"}"#, 1, "unknown field `promt`"),
            (r#"{"dir": "a"}"#, 1, "`prompt` is missing"),
            (r#"{"prompt": "p"}"#, 1, "`dir` (or `repo`) is missing"),
            (
                r#"{"dir": "", "prompt": "p"}"#,
                1,
                "`dir` must be a non-empty string",
            ),
            (
                r#"{"dir": "a", "prompt": "p", "check_tries": 2}"#,
                1,
                "`check_tries` goes with `check`",
            ),
            (
                r#"{"dir": "a", "prompt": "p", "check": "x", "check_tries": 0}"#,
                1,
                "must be a whole number, 1 or more (got 0)",
            ),
            (
                r#"{"dir": "a", "prompt": "p", "check": "x", "check_tries": 2.0}"#,
                1,
                "(got 2.0)",
            ),
            (
                r#"{"dir": "a", "prompt": "p", "check": "x", "check_timeout": 0}"#,
                1,
                "more than 0 and at most 3600",
            ),
            (
                r#"{"dir": "a", "prompt": "p", "args": [1]}"#,
                1,
                "`args` must be a list of strings",
            ),
            (
                r#"{"dir": "a", "prompt": "p", "id": true}"#,
                1,
                "`id` must be a non-empty string or a number",
            ),
            (
                "{\"id\": \"x\", \"dir\": \"a\", \"prompt\": \"p\"}\n\n{\"id\": \"x\", \"dir\": \"a\", \"prompt\": \"p\"}",
                3,
                "line 3: id `x` is already the id of line 1",
            ),
            (
                "{\"dir\": \"a\", \"prompt\": \"p\"}\n{\"id\": 1, \"dir\": \"a\", \"prompt\": \"p\"}",
                2,
                "id `1` is already the id of line 1",
            ),
        ] {
            let e = task(text, n).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn blank_and_comment_lines_are_no_tasks() {
        assert!(!is_task(b"  "));
        assert!(!is_task(b"  # note"));
        assert!(is_task(b"{}"));
    }
}
