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
/// `$schema` or `title`, as model providers expect, and without what a
/// model does not need (every request carries it): the arguments struct's
/// own description, `format`, `maximum`, `null` among an enum's values,
/// the doc comments of enum and array item types, empty descriptions (a field whose name says
/// it all is given `#[schemars(description = "")]`), and `default: false`,
/// `default: []` or an enum's default string, which the descriptions say
/// and which [`crate::tool_protocol::lenient`] treats as leaving the field out anyway
/// (`"default": null` and `true` stay: there the empty value is a choice).
pub fn parameters_schema<T: JsonSchema>() -> Value {
    let mut settings = settings();
    settings.inline_subschemas = true;
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut value = schema.to_value();
    if let Value::Object(map) = &mut value {
        map.remove("$schema");
        map.remove("title");
        map.remove("description");
    }
    drop_null_types(&mut value);
    drop_noise(&mut value, true);
    value
}

/// See [`parameters_schema`]. Nested objects keep their fields but lose
/// `additionalProperties`: the tool itself names an unknown field there.
fn drop_noise(value: &mut Value, top: bool) {
    match value {
        Value::Object(map) => {
            map.remove("format");
            // Each tool checks its upper bounds itself, with a message that
            // says what to do instead.
            map.remove("maximum");
            if map.get("description").and_then(Value::as_str) == Some("") {
                map.remove("description");
            }
            let empty_default = match map.get("default") {
                Some(Value::Bool(false) | Value::String(_)) => true,
                Some(Value::Array(a)) => a.is_empty(),
                _ => false,
            };
            if empty_default {
                map.remove("default");
            }
            if !top && map.get("additionalProperties") == Some(&Value::Bool(false)) {
                map.remove("additionalProperties");
            }
            // An enum's values speak for themselves, and `null` in one is
            // the same as leaving the field out.
            if let Some(Value::Array(values)) = map.get_mut("enum") {
                values.retain(|v| !v.is_null());
                map.remove("description");
            }
            // The items of an array are described by the array's field
            // (the text here is the item type's own doc comment).
            if let Some(Value::Object(item)) = map.get_mut("items") {
                item.remove("description");
            }
            if let Some(Value::Object(props)) = map.get_mut("properties") {
                // A property may be named `format` or `default`: only its
                // schema is cleaned, never the map of names.
                props.values_mut().for_each(|v| drop_noise(v, false));
            }
            for (key, v) in map.iter_mut() {
                if key != "properties" {
                    drop_noise(v, false);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| drop_noise(v, false)),
        _ => {}
    }
}

/// The mark, set with `#[schemars(extend("x-empty-is-a-value" = true))]`,
/// of an optional field whose empty value (`""`, `false`, `[]`) means
/// something else than leaving it out: `new_string: ""` deletes. It becomes
/// `"default": null` (leaving the field out is "no value"), which tells
/// [`crate::tool_protocol::lenient`] to keep the empty value.
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
        ("tool-progress.json", document::<protocol::ToolProgress>()),
        (
            "edit-diagnostics.json",
            document::<protocol::ChangeDiagnostics>(),
        ),
        ("message.json", document::<protocol::Message>()),
        ("llm-request.json", document::<protocol::LlmRequest>()),
        ("llm-event.json", document::<protocol::LlmEvent>()),
        ("agent-command.json", document::<protocol::AgentCommand>()),
        ("agent-event.json", document::<protocol::AgentEventRecord>()),
        ("gate-request.json", document::<protocol::GateRequest>()),
        ("gate-decision.json", document::<protocol::GateDecision>()),
        ("after-request.json", document::<protocol::AfterRequest>()),
        ("after-answer.json", document::<protocol::AfterAnswer>()),
        ("stop-request.json", document::<protocol::StopRequest>()),
        ("stop-decision.json", document::<protocol::StopDecision>()),
        ("session-header.json", document::<protocol::SessionHeader>()),
        ("session-record.json", document::<protocol::SessionRecord>()),
        ("serve-request.json", document::<protocol::ServeRequest>()),
        ("serve-message.json", document::<protocol::ServeMessage>()),
        ("fanout-record.json", document::<protocol::FanoutRecord>()),
    ]
}
