//! The tool protocol: a tool's definition (`--schema`), a call on stdin and
//! its result on stdout.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What `ag-X --schema` prints: everything a model needs to call the tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolDefinition {
    /// The name the model calls the tool by (`read`, `bash`, ...).
    pub name: String,
    /// A short human-readable name for displays.
    pub label: String,
    /// What the tool does and when to use it, written for the model.
    pub description: String,
    /// A JSON Schema (an object schema) for the call's arguments.
    pub parameters: Value,
}

/// One call of a tool, one JSON object per line on the tool's stdin.
/// A bare arguments object (without `id` and `arguments`) is accepted too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolCall {
    /// An identifier chosen by the caller, echoed in the result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The arguments, an object matching the tool's `parameters` schema.
    #[serde(default)]
    pub arguments: Map<String, Value>,
}

impl ToolCall {
    /// Reads a call from one parsed input line: `{"id","arguments"}`, or a
    /// bare arguments object when the line has any other key.
    pub fn from_value(value: Value) -> Result<Self, String> {
        let Value::Object(map) = value else {
            return Err(format!("expected a JSON object, got {}", json_kind(&value)));
        };
        let wrapped =
            map.contains_key("arguments") && map.keys().all(|k| k == "id" || k == "arguments");
        if !wrapped {
            return Ok(ToolCall {
                id: None,
                arguments: map,
            });
        }
        let id = match map.get("id") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => Some(other.to_string()),
        };
        match map.get("arguments") {
            Some(Value::Object(args)) => Ok(ToolCall {
                id,
                arguments: args.clone(),
            }),
            // Some models send the arguments as a JSON string.
            Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
                Ok(Value::Object(args)) => Ok(ToolCall {
                    id,
                    arguments: args,
                }),
                _ => Err("`arguments` must be a JSON object".into()),
            },
            Some(other) => Err(format!(
                "`arguments` must be a JSON object, got {}",
                json_kind(other)
            )),
            None => Ok(ToolCall {
                id,
                arguments: Map::new(),
            }),
        }
    }
}

/// The answer to one call, one JSON object per line on the tool's stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolResult {
    /// The `id` of the call this answers, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Text for the model.
    pub output: String,
    /// Structured data for programs and displays; its shape depends on the tool.
    #[serde(default)]
    pub details: Value,
    /// True when the call failed; `output` then says what to do instead.
    #[serde(default)]
    pub is_error: bool,
    /// A stable code naming the failure (`read.not_found`), on errors only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// Optional image blocks (tools that return pictures, such as `read` on a PNG).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageData>,
}

/// The environment variable that asks a tool for progress lines: set (to
/// `1`) by ag-loop for every call it runs. Without it a tool writes none.
pub const PROGRESS_ENV: &str = "AG_PROGRESS";

/// A line a tool may write to its stderr while a call runs, when
/// [`PROGRESS_ENV`] is set: one JSON object on a line of its own, before
/// the call's result. stdout keeps only results, so a tool's output stays
/// the same for every other caller; any other stderr line is a log line, as
/// before. ag-loop turns each into a `tool_execution_update` event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolProgress {
    /// Progress of the running call.
    Progress {
        /// The `id` of the call it belongs to, when the call had one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// What is new since the last progress line (text for a person).
        output: String,
        /// Structured data about it, if any.
        #[serde(default, skip_serializing_if = "Value::is_null")]
        details: Value,
    },
}

/// An image as base64 data with its media type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImageData {
    /// Base64-encoded bytes.
    pub data: String,
    /// Media type such as `image/png`.
    pub mime_type: String,
}

/// A short name for the kind of a JSON value, for error messages.
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
