//! What a tool is: typed arguments (clap flags and a JSON Schema from one
//! struct), a run function, and the result or error it gives. The serving
//! machinery in [`serve`] and [`binary`] turns any [`Tool`] into a binary;
//! [`exec`] is the other side, running a tool binary as its callers
//! (ag-loop, ag-mcp) do.

mod args_check;
pub mod binary;
pub mod exec;
pub mod hashes;
pub mod lenient;
mod output;
mod paths;
pub mod progress;
pub mod serve;

pub use args_check::ArgsCheck;
pub use binary::{ToolFlags, tool_command, tool_main};
pub use exec::{CallOptions, SchemaError, ToolProgram, find_tool_binary};
pub use output::{Note, NoteLevel, ToolOutput};
pub use paths::{
    Context, DirItem, EntryKind, PathProblem, display_path, is_not_a_file, is_outside_root,
    normalize, real_path,
};

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::protocol::{ToolDefinition, ToolResult};

/// A tool: its name and description for the model, and what it does.
pub trait Tool {
    /// The call's arguments. One struct is the clap definition of the plain
    /// command line, the serde shape of a JSON call and the JSON Schema the
    /// model sees, so the three cannot drift apart.
    type Args: DeserializeOwned + JsonSchema + clap::Args;
    /// The name the model calls it by.
    const NAME: &'static str;
    /// The binary's name (`ag-read`).
    const BIN: &'static str;
    /// One line for `--help` and the man page's NAME section.
    const ABOUT: &'static str;
    /// A short human-readable name.
    const LABEL: &'static str;
    /// What it does, in full: the long help and the man page's description.
    const DESCRIPTION: &'static str;
    /// What it does, for the model: as short as it can be, because every
    /// request carries it. Detail the model needs only when a call goes
    /// wrong belongs in the error messages, which teach at that moment.
    const MODEL_DESCRIPTION: &'static str = Self::DESCRIPTION;
    /// Ids of `Args` fields that set up the whole process rather than one
    /// call, such as ag-todo's `--file`. Alone on the command line they do
    /// not turn the binary into a plain command, and in the JSONL loop their
    /// command-line values apply to every call that does not set them (so
    /// the id must be the field's serde name too). Hide such fields from
    /// the model with `#[schemars(skip)]`.
    const PROCESS_FLAGS: &'static [&'static str] = &[];
    /// The exit-status paragraph of `--help` and the man page; it must
    /// match [`Tool::exit_code`].
    const EXIT_STATUS: &'static str =
        "Exit status: 0 success, 1 the operation failed, 2 usage or input error.";

    /// Runs one call.
    fn run(ctx: &Context, args: Self::Args) -> Result<ToolOutput, ToolError>;

    /// The exit status of the plain command line for a call's result: 0,
    /// or 1 when the call failed. A tool whose result carries a status of
    /// its own overrides it (ag-bash exits with the command's status).
    fn exit_code(result: &ToolResult) -> u8 {
        u8::from(result.is_error)
    }
}

/// A failed call: a stable code, a message for the model that says what to
/// do instead, and optional details.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    /// A stable code such as `read.not_found`.
    pub code: &'static str,
    /// What went wrong and what call would work instead.
    pub message: String,
    /// Structured details, `null` when there are none.
    pub details: Value,
}

impl ToolError {
    /// An error with a code and a message.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        ToolError {
            code,
            message: message.into(),
            details: Value::Null,
        }
    }

    /// Adds details.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }
}

/// The definition `--schema` prints for a tool.
pub fn definition<T: Tool>() -> ToolDefinition {
    ToolDefinition {
        name: T::NAME.to_string(),
        label: T::LABEL.to_string(),
        description: T::MODEL_DESCRIPTION.to_string(),
        parameters: crate::schema::parameters_schema::<T::Args>(),
    }
}

/// Turns the outcome of a call into the protocol's result object, whose
/// `output` is the text the model reads: the output with its notes.
pub fn to_result(id: Option<String>, outcome: Result<ToolOutput, ToolError>) -> ToolResult {
    match outcome {
        Ok(mut out) => {
            let details = std::mem::take(&mut out.details);
            let images = std::mem::take(&mut out.images);
            ToolResult {
                id,
                output: out.into_text(),
                details,
                is_error: false,
                error_code: None,
                images,
            }
        }
        Err(err) => ToolResult {
            id,
            output: err.message,
            details: err.details,
            is_error: true,
            error_code: Some(err.code.to_string()),
            images: Vec::new(),
        },
    }
}

/// Parses a call's arguments into a tool's typed arguments, with an error
/// the model can act on. The arguments are first normalized by
/// [`lenient::normalize`] against the tool's schema; a call serde still
/// refuses is checked against the schema for a message that names every
/// faulty field and shows a call that works.
pub fn parse_arguments<T: Tool>(
    mut arguments: serde_json::Map<String, Value>,
) -> Result<T::Args, ToolError> {
    let schema = crate::schema::parameters_schema::<T::Args>();
    let invalid = |message: String| ToolError::new("call.invalid_arguments", message);
    lenient::normalize(&schema, &mut arguments)
        .map_err(|e| invalid(format!("invalid arguments for `{}`: {e}", T::NAME)))?;
    let value = Value::Object(arguments);
    serde_json::from_value(value.clone()).map_err(|e| {
        // Fields the tool takes only from its command line (`--file`) are
        // not in the schema but are fine in a call.
        let mut visible = value.clone();
        if let Value::Object(map) = &mut visible {
            map.retain(|k, _| lenient::declares(&schema, k) || !T::PROCESS_FLAGS.contains(&k.as_str()));
        }
        match ArgsCheck::new(schema.clone()).check(T::NAME, &visible) {
            Err(message) => invalid(message),
            Ok(()) => invalid(format!(
                "invalid arguments for `{}`: {e}. Call it again with arguments that match its schema (`ag-{} --schema`).",
                T::NAME,
                T::NAME
            )),
        }
    })
}
