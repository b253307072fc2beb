//! JSON Schemas from the protocol types: the files in `schemas/` and the
//! `parameters` of every tool definition.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

use crate::protocol;

fn settings() -> SchemaSettings {
    SchemaSettings::draft2020_12()
}

/// The `parameters` schema of a tool: self-contained (no `$ref`), without
/// `$schema` or `title`, as model providers expect.
pub fn parameters_schema<T: JsonSchema>() -> Value {
    let mut settings = settings();
    settings.inline_subschemas = true;
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut value = schema.to_value();
    if let Value::Object(map) = &mut value {
        map.remove("$schema");
        map.remove("title");
    }
    drop_null_types(&mut value);
    value
}

/// The mark, set with `#[schemars(extend("x-empty-is-a-value" = true))]`,
/// of an optional field whose empty value (`""`, `false`, `[]`) means
/// something else than leaving it out: `new_string: ""` deletes. It becomes
/// `"default": null` (leaving the field out is "no value"), which tells
/// [`crate::tool::lenient`] to keep the empty value.
pub const EMPTY_IS_A_VALUE: &str = "x-empty-is-a-value";

/// Optional arguments are simply left out of a call; models handle
/// `"type": "integer"` better than `["integer", "null"]`, and some providers
/// reject the latter.
fn drop_null_types(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    map.insert("type".into(), only);
                }
            }
            if let Some(Value::Array(any)) = map.get_mut("anyOf") {
                any.retain(|s| s.get("type").and_then(Value::as_str) != Some("null"));
                if any.len() == 1
                    && let Some(Value::Object(inner)) = any.pop()
                {
                    map.remove("anyOf");
                    for (k, v) in inner {
                        map.entry(k).or_insert(v);
                    }
                }
            }
            if map.get("default") == Some(&Value::Null) {
                map.remove("default");
            }
            if map.remove(EMPTY_IS_A_VALUE) == Some(Value::Bool(true)) {
                map.insert("default".into(), Value::Null);
            }
            map.values_mut().for_each(drop_null_types);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_null_types),
        _ => {}
    }
}

/// A full schema document for a protocol type, as written to `schemas/`.
pub fn document<T: JsonSchema>() -> Value {
    settings()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// Every file of `schemas/`: its name and content.
pub fn all() -> Vec<(&'static str, Value)> {
    vec![
        (
            "tool-definition.json",
            document::<protocol::ToolDefinition>(),
        ),
        ("tool-call.json", document::<protocol::ToolCall>()),
        ("tool-result.json", document::<protocol::ToolResult>()),
        ("message.json", document::<protocol::Message>()),
        ("llm-request.json", document::<protocol::LlmRequest>()),
        ("llm-event.json", document::<protocol::LlmEvent>()),
        ("agent-command.json", document::<protocol::AgentCommand>()),
        ("agent-event.json", document::<protocol::AgentEventRecord>()),
        ("gate-request.json", document::<protocol::GateRequest>()),
        ("gate-decision.json", document::<protocol::GateDecision>()),
        ("after-request.json", document::<protocol::AfterRequest>()),
        ("after-answer.json", document::<protocol::AfterAnswer>()),
        ("session-header.json", document::<protocol::SessionHeader>()),
        ("session-record.json", document::<protocol::SessionRecord>()),
    ]
}
