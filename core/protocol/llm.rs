//! ag-llm's protocol: one request in, a stream of events out.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{AssistantMessage, Message, ToolDefinition};

/// One model call, as ag-llm reads it on stdin.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LlmRequest {
    /// The model as `provider/model-id` (`anthropic/claude-sonnet-4-5`).
    pub model: String,
    /// The system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The conversation so far.
    #[serde(default)]
    pub messages: Vec<Message>,
    /// The tools the model may call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolDefinition>,
    /// How hard the model should think, for models that reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<Reasoning>,
    /// The most tokens the answer may have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Overrides the provider's base URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Structured output (`--output-schema`): a JSON Schema the answer's
    /// text must be one JSON value of. Sent in the provider's own field
    /// where the model supports it, else as an instruction in the system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<serde_json::Value>,
    /// Whether the answer must be a tool call (`required`) or may be text
    /// (`auto`, the default). A local server (llama.cpp, Ollama, vLLM)
    /// enforces `required` with a grammar; ag-loop asks for it on the
    /// first request of a task for a small local model, whose first answer
    /// is otherwise often a claim of work it never did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
}

/// Whether the model must call a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    /// Text or tool calls, as the model chooses.
    Auto,
    /// At least one tool call.
    Required,
}

/// Reasoning effort.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reasoning {
    /// No reasoning, where the model allows it.
    Off,
    /// A little.
    Low,
    /// Some.
    Medium,
    /// A lot.
    High,
}

impl Reasoning {
    /// `low`, as the flags and the protocol write it.
    pub fn word(self) -> &'static str {
        match self {
            Reasoning::Off => "off",
            Reasoning::Low => "low",
            Reasoning::Medium => "medium",
            Reasoning::High => "high",
        }
    }
}

/// One event of ag-llm's output stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LlmEvent {
    /// The provider accepted the request and began to answer.
    Start {
        /// The model, as `provider/model`.
        model: String,
    },
    /// A piece of text.
    TextDelta {
        /// The content block's index in the assistant message.
        index: usize,
        /// The new text.
        delta: String,
    },
    /// A piece of reasoning.
    ThinkingDelta {
        /// The content block's index in the assistant message.
        index: usize,
        /// The new reasoning text.
        delta: String,
    },
    /// The model began a tool call.
    ToolCallStart {
        /// The content block's index in the assistant message.
        index: usize,
        /// The call's identifier.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// A piece of a tool call's arguments, as raw JSON text.
    ToolCallDelta {
        /// The content block's index in the assistant message.
        index: usize,
        /// The new text of the arguments.
        delta: String,
    },
    /// A tool call is complete.
    ToolCallEnd {
        /// The content block's index in the assistant message.
        index: usize,
        /// The call's identifier.
        id: String,
        /// The tool's name.
        name: String,
        /// The parsed arguments.
        arguments: serde_json::Value,
    },
    /// The answer is complete.
    Done {
        /// The whole assistant message, with usage and stop reason.
        message: AssistantMessage,
    },
    /// The call failed; the message holds what arrived before the failure.
    Error {
        /// The partial assistant message, `stop_reason` `error`, `refusal`
        /// or `aborted`.
        message: AssistantMessage,
        /// What went wrong and what to do about it.
        error: String,
    },
}
