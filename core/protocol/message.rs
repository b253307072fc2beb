//! The conversation: messages, content blocks, usage and stop reasons,
//! shared by ag-llm, ag-loop and session files.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// What the person (or a script) said.
    User {
        /// Plain text, or a list of text and image blocks.
        content: UserContent,
        /// When the message was made (RFC 3339), if known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timestamp: Option<String>,
    },
    /// What the model answered.
    Assistant(AssistantMessage),
    /// The result of one tool call, answering a `tool_call` block.
    ToolResult(ToolResultMessage),
}

impl Message {
    /// A user message holding plain text.
    pub fn user_text(text: impl Into<String>) -> Self {
        Message::User {
            content: UserContent::Text(text.into()),
            timestamp: None,
        }
    }
}

/// The content of a user message: a string, or blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum UserContent {
    /// Plain text.
    Text(String),
    /// Text and image blocks.
    Blocks(Vec<ContentBlock>),
}

impl UserContent {
    /// The text of the content, blocks joined by newlines, images left out.
    pub fn text(&self) -> String {
        self.texts().join("\n")
    }

    /// The text blocks, images left out. The first is the prompt's own
    /// words: what a front end attaches (files, piped data) comes after it.
    pub fn texts(&self) -> Vec<&str> {
        match self {
            UserContent::Text(t) => vec![t.as_str()],
            UserContent::Blocks(blocks) => blocks
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect(),
        }
    }

    /// True when there is nothing to send: no text but whitespace, and no
    /// block other than such text (`""`, `"  "`, `[]`).
    pub fn is_blank(&self) -> bool {
        match self {
            UserContent::Text(t) => t.trim().is_empty(),
            UserContent::Blocks(blocks) => blocks
                .iter()
                .all(|b| matches!(b, ContentBlock::Text { text } if text.trim().is_empty())),
        }
    }

    /// The content with `more` blocks after it (as it is without any).
    pub fn with_blocks(self, more: Vec<ContentBlock>) -> UserContent {
        if more.is_empty() {
            return self;
        }
        let mut blocks = match self {
            UserContent::Text(t) if t.is_empty() => Vec::new(),
            UserContent::Text(text) => vec![ContentBlock::Text { text }],
            UserContent::Blocks(b) => b,
        };
        blocks.extend(more);
        UserContent::Blocks(blocks)
    }
}

/// A message from the model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AssistantMessage {
    /// Text, thinking and tool calls, in the order the model produced them.
    pub content: Vec<ContentBlock>,
    /// Tokens used and their cost.
    #[serde(default)]
    pub usage: Usage,
    /// Why the model stopped.
    #[serde(default)]
    pub stop_reason: StopReason,
    /// The model that answered, as `provider/model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The API kind that carried the answer (`openai-chat`, `anthropic`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    /// What went wrong, when `stop_reason` is `error` or `refusal`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// When the answer was finished (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

impl AssistantMessage {
    /// The text blocks joined.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("")
    }

    /// The tool calls the model asked for, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        self.content.iter().filter_map(|b| match b {
            ContentBlock::ToolCall {
                id,
                name,
                arguments,
            } => Some((id.as_str(), name.as_str(), arguments)),
            _ => None,
        })
    }
}

/// The result of a tool call as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolResultMessage {
    /// The `id` of the `tool_call` block this answers.
    pub tool_call_id: String,
    /// The name of the tool that was called.
    pub tool_name: String,
    /// The tool's output: text, and images for tools that return them.
    pub content: Vec<ContentBlock>,
    /// The tool's structured details (not sent to the model).
    #[serde(default)]
    pub details: Value,
    /// True when the call failed.
    #[serde(default)]
    pub is_error: bool,
    /// When the result arrived (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

/// One block of message content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// The model's reasoning.
    Thinking {
        /// The reasoning text (may be a summary, or empty when the provider hides it).
        thinking: String,
        /// The provider's signature or encrypted reasoning, needed to send it back.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
        /// True when the provider redacted the reasoning (only `signature` is meaningful).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        redacted: bool,
    },
    /// A request from the model to run a tool.
    ToolCall {
        /// The call's identifier, echoed by the result.
        id: String,
        /// The tool's name.
        name: String,
        /// The arguments, an object.
        arguments: Value,
    },
    /// A picture.
    Image {
        /// Base64-encoded bytes.
        data: String,
        /// Media type such as `image/png`.
        mime_type: String,
    },
}

/// Tokens used by one answer (or summed over many) and what they cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Usage {
    /// Input tokens not read from the cache.
    #[serde(default)]
    pub input: u64,
    /// Output tokens, reasoning included.
    #[serde(default)]
    pub output: u64,
    /// Input tokens read from the provider's prompt cache.
    #[serde(default)]
    pub cache_read: u64,
    /// Input tokens written to the provider's prompt cache.
    #[serde(default)]
    pub cache_write: u64,
    /// Cost in US dollars, from the model table's prices.
    #[serde(default)]
    pub cost: Cost,
}

impl Usage {
    /// Adds another usage to this one.
    pub fn add(&mut self, other: &Usage) {
        self.input += other.input;
        self.output += other.output;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.cost.input += other.cost.input;
        self.cost.output += other.cost.output;
        self.cost.cache_read += other.cost.cache_read;
        self.cost.cache_write += other.cost.cache_write;
        self.cost.total += other.cost.total;
    }

    /// All tokens counted.
    pub fn total_tokens(&self) -> u64 {
        self.input + self.output + self.cache_read + self.cache_write
    }
}

/// Cost in US dollars, by kind of token.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Cost {
    /// Cost of the input tokens.
    #[serde(default)]
    pub input: f64,
    /// Cost of the output tokens.
    #[serde(default)]
    pub output: f64,
    /// Cost of the cache reads.
    #[serde(default)]
    pub cache_read: f64,
    /// Cost of the cache writes.
    #[serde(default)]
    pub cache_write: f64,
    /// The sum.
    #[serde(default)]
    pub total: f64,
}

/// Why a model stopped answering.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// It finished.
    #[default]
    Stop,
    /// It reached the output token limit.
    Length,
    /// It asked for tools to be run.
    ToolUse,
    /// The call failed; see `error_message`.
    Error,
    /// The model, or the provider's content filter, declined to answer;
    /// `error_message` says which.
    Refusal,
    /// The call was interrupted.
    Aborted,
}
