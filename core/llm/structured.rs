//! Structured answers: an answer that must be one JSON value valid against
//! a JSON Schema (`--output-schema` of ag-llm and ag-loop). This module owns
//! loading and checking such a schema, reading an answer against it, and
//! deciding per model whether the schema goes to the provider natively
//! (constrained decoding) or only as an instruction in the system prompt.
//! Each API's wire shape is written by its module in [`super::providers`].
//!
//! A schema is never rewritten to suit a provider: when an API's rules
//! (OpenAI's strict mode, Anthropic's keyword subset) do not accept it as it
//! is, it is sent in a looser mode or not at all, and the answer is still
//! validated here, so a wrong answer is caught and can be asked for again.

use std::path::Path;

use jsonschema::{Draft, Validator};
use serde_json::Value;

use super::models::{Api, ModelInfo, Provider};

pub use super::models::Support;

/// What a model supports when neither models.json nor the table says:
/// OpenAI Responses always; Chat Completions servers unless the provider's
/// `compat.structured_output` is off (Groq refuses it with streaming and
/// tools, DeepSeek has only `json_object`); Claude from 4.5 on; Gemini 3 and
/// later with tools, earlier Gemini without.
pub fn support(info: &ModelInfo, provider: &Provider) -> Support {
    if let Some(s) = info.structured_output {
        return s;
    }
    match info.api {
        Api::OpenAiResponses => Support::Yes,
        Api::OpenAiChat if provider.compat.structured_output => Support::Yes,
        Api::OpenAiChat => Support::No,
        Api::Anthropic => match version_after(&info.id, "claude") {
            Some(v) if v >= (4, 5) => Support::Yes,
            _ => Support::No,
        },
        Api::Gemini => match version_after(&info.id, "gemini") {
            Some(v) if v >= (3, 0) => Support::Yes,
            _ => Support::WithoutTools,
        },
    }
}

/// The first `major[-.]minor` in a model id after `family`
/// (`claude-sonnet-4-5-20250929` is 4.5, `claude-3-5-haiku` 3.5,
/// `gemini-2.5-flash` 2.5); a date is not a minor version.
fn version_after(id: &str, family: &str) -> Option<(u32, u32)> {
    let id = id.to_ascii_lowercase();
    let rest = id.strip_prefix(family)?;
    let mut parts = rest
        .split(['-', '.'])
        .skip_while(|p| p.parse::<u32>().is_err());
    let major: u32 = parts.next()?.parse().ok()?;
    let minor = parts
        .next()
        .filter(|p| p.len() <= 2)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    Some((major, minor))
}

/// How a request carries its schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// In the API's own field; `strict` when the schema meets OpenAI's strict
    /// mode (every object closed, every property required).
    Native {
        /// Ask for strict (constrained) decoding.
        strict: bool,
    },
    /// Only as an instruction in the system prompt.
    Prompted,
}

/// How `schema` goes to `info`'s API in a request with or without tools.
pub fn plan(info: &ModelInfo, provider: &Provider, schema: &Value, has_tools: bool) -> Plan {
    let native = match support(info, provider) {
        Support::Yes => true,
        Support::WithoutTools => !has_tools,
        Support::No => false,
    };
    if !native {
        return Plan::Prompted;
    }
    let strict = strict_ok(schema);
    let openai = info.api == Api::OpenAiResponses || provider.id == "openai";
    match info.api {
        // OpenAI's json_schema format wants an object at the root.
        _ if openai && !is_object_schema(schema) => Plan::Prompted,
        // Anthropic refuses a schema outside its subset rather than loosening it.
        Api::Anthropic if !anthropic_ok(schema) => Plan::Prompted,
        _ => Plan::Native { strict },
    }
}

/// The name OpenAI's APIs want for a schema (`^[a-zA-Z0-9_-]{1,64}$`):
/// the schema's `title` made to fit, else `answer`.
pub fn schema_name(schema: &Value) -> String {
    let title: String = schema
        .get("title")
        .and_then(Value::as_str)
        .unwrap_or("")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if title.trim_matches('_').is_empty() {
        "answer".into()
    } else {
        title
    }
}

/// The system prompt's paragraph for a schema the API does not get natively.
pub fn instruction(schema: &Value) -> String {
    format!(
        "Your final answer (the message in which you call no tool) must be exactly one JSON value, valid against the JSON Schema below, with no other text before or after it and no markdown fence.\n\nJSON Schema of the final answer:\n{schema}"
    )
}

/// The request with its schema told in the system prompt instead of sent
/// in the API's own field.
pub fn prompted(req: &crate::protocol::LlmRequest) -> crate::protocol::LlmRequest {
    let mut r = req.clone();
    if let Some(schema) = r.output_schema.take() {
        let text = instruction(&schema);
        r.system = Some(match r.system.as_deref().filter(|s| !s.trim().is_empty()) {
            Some(s) => format!("{s}\n\n{text}"),
            None => text,
        });
    }
    r
}

fn is_object_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// Every subschema, the root first.
fn subschemas(schema: &Value) -> Vec<&Value> {
    let mut out = Vec::new();
    let mut stack = vec![schema];
    while let Some(s) = stack.pop() {
        let Value::Object(map) = s else { continue };
        out.push(s);
        for (k, v) in map {
            match (k.as_str(), v) {
                (
                    "properties" | "$defs" | "definitions" | "patternProperties",
                    Value::Object(m),
                ) => stack.extend(m.values()),
                ("anyOf" | "allOf" | "oneOf" | "prefixItems", Value::Array(a)) => {
                    stack.extend(a.iter())
                }
                ("items" | "additionalProperties" | "not" | "if" | "then" | "else", v) => {
                    stack.push(v)
                }
                _ => {}
            }
        }
    }
    out
}

fn is_object_type(s: &Value) -> bool {
    match s.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => s.get("properties").is_some(),
    }
}

/// OpenAI's strict mode: every object lists all its properties as required
/// and allows no others, and no keyword outside what strict mode takes.
pub fn strict_ok(schema: &Value) -> bool {
    const REFUSED: &[&str] = &[
        "allOf",
        "not",
        "if",
        "then",
        "else",
        "dependentRequired",
        "dependentSchemas",
        "patternProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
        "propertyNames",
        "contains",
    ];
    let every = subschemas(schema);
    let refused = every
        .iter()
        .any(|s| REFUSED.iter().any(|k| s.get(*k).is_some()));
    if refused || schema.get("anyOf").is_some() {
        return false;
    }
    every.into_iter().filter(|s| is_object_type(s)).all(|s| {
        let closed = s.get("additionalProperties") == Some(&Value::Bool(false));
        let required: Vec<&str> = s
            .get("required")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let all = s
            .get("properties")
            .and_then(Value::as_object)
            .is_none_or(|p| p.keys().all(|k| required.contains(&k.as_str())));
        closed && all
    })
}

/// Anthropic's subset: every object closed; no numeric or length bounds
/// beyond `minItems` 0 or 1; no `$ref` back to the root (recursion).
pub fn anthropic_ok(schema: &Value) -> bool {
    const REFUSED: &[&str] = &[
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "maxItems",
        "uniqueItems",
        "patternProperties",
        "minProperties",
        "maxProperties",
    ];
    subschemas(schema).into_iter().all(|s| {
        let Value::Object(map) = s else { return true };
        let bounded = REFUSED.iter().any(|k| map.contains_key(*k));
        let min_items = map
            .get("minItems")
            .and_then(Value::as_u64)
            .is_some_and(|n| n > 1);
        let recursive = map.get("$ref").and_then(Value::as_str) == Some("#");
        let open =
            is_object_type(s) && map.get("additionalProperties") != Some(&Value::Bool(false));
        !(bounded || min_items || recursive || open)
    })
}

/// A compiled output schema.
pub struct OutputSchema {
    /// The schema as given.
    pub schema: Value,
    validator: Validator,
}

impl std::fmt::Debug for OutputSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputSchema")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl OutputSchema {
    /// Reads `spec`: inline JSON when it starts with `{`, else a file
    /// (relative paths against `base`). The error says what is wrong.
    pub fn load(spec: &str, base: &Path) -> Result<OutputSchema, String> {
        let text = spec.trim_start();
        let (json, origin) = if text.starts_with('{') {
            (text.to_string(), "the inline output schema".to_string())
        } else {
            let path = base.join(spec);
            let json = std::fs::read_to_string(&path).map_err(|e| {
                format!(
                    "cannot read the output schema `{}`: {e}; give a file or inline JSON starting with `{{`",
                    path.display()
                )
            })?;
            (json, format!("the output schema `{}`", path.display()))
        };
        let schema: Value =
            serde_json::from_str(&json).map_err(|e| format!("{origin} is not JSON: {e}"))?;
        OutputSchema::new(schema).map_err(|e| format!("{origin}: {e}"))
    }

    /// Compiles a schema; one that is no schema (not an object, a keyword
    /// of the wrong kind, a `$ref` that leads nowhere) is refused.
    pub fn new(schema: Value) -> Result<OutputSchema, String> {
        if !schema.is_object() {
            return Err(format!(
                "a JSON Schema is an object, not {}",
                crate::protocol::json_kind(&schema)
            ));
        }
        // Without `$schema`, the dialect the providers document: 2020-12.
        let options = if schema.get("$schema").is_some() {
            jsonschema::options()
        } else {
            jsonschema::options().with_draft(Draft::Draft202012)
        };
        let validator = options
            .build(&schema)
            .map_err(|e| format!("not a valid JSON Schema: {e}"))?;
        Ok(OutputSchema { schema, validator })
    }

    /// The answer's value, or every reason it is not one: not JSON, or
    /// JSON that breaks the schema (each problem with where it is).
    pub fn check(&self, answer: &str) -> Result<Value, Vec<String>> {
        let value = parse_answer(answer)?;
        let problems: Vec<String> = self
            .validator
            .iter_errors(&value)
            .map(|e| {
                let at = e.instance_path.to_string();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("at `{at}`: {e}")
                }
            })
            .collect();
        if problems.is_empty() {
            Ok(value)
        } else {
            Err(problems)
        }
    }
}

/// The JSON value of an answer: the text itself, or the inside of one
/// markdown fence around it (```json ... ```, which small models write).
pub fn parse_answer(answer: &str) -> Result<Value, Vec<String>> {
    let text = answer.trim();
    if text.is_empty() {
        return Err(vec![
            "the answer is empty; it must be one JSON value".into(),
        ]);
    }
    let inner = unfence(text).unwrap_or(text);
    serde_json::from_str(inner).map_err(|e| {
        vec![format!(
            "the answer is not one JSON value ({e}); write only the JSON, with no text around it"
        )]
    })
}

/// The body of a text that is one fenced block, if it is one.
fn unfence(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("```")?;
    let body_start = rest.find('\n')?;
    let lang = rest[..body_start].trim();
    if !(lang.is_empty() || lang.eq_ignore_ascii_case("json")) {
        return None;
    }
    let body = rest[body_start + 1..].strip_suffix("```")?;
    Some(body.trim())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::llm::models::ModelTable;

    fn info(model: &str) -> (ModelInfo, Provider) {
        let t = ModelTable::builtin();
        let i = t.resolve(model).unwrap();
        let p = t.provider(&i.provider).unwrap().clone();
        (i, p)
    }

    #[test]
    fn versions_from_model_ids() {
        assert_eq!(
            version_after("claude-sonnet-4-5-20250929", "claude"),
            Some((4, 5))
        );
        assert_eq!(
            version_after("claude-sonnet-4-20250514", "claude"),
            Some((4, 0))
        );
        assert_eq!(
            version_after("claude-3-5-haiku-latest", "claude"),
            Some((3, 5))
        );
        assert_eq!(version_after("claude-opus-4-1", "claude"), Some((4, 1)));
        assert_eq!(version_after("gemini-2.5-flash", "gemini"), Some((2, 5)));
        assert_eq!(
            version_after("gemini-3-pro-preview", "gemini"),
            Some((3, 0))
        );
        assert_eq!(version_after("gpt-4o", "claude"), None);
    }

    #[test]
    fn support_by_api_provider_and_model() {
        let s = |m: &str| {
            let (i, p) = info(m);
            support(&i, &p)
        };
        assert_eq!(s("openai/gpt-5"), Support::Yes);
        assert_eq!(s("anthropic/claude-sonnet-4-5"), Support::Yes);
        assert_eq!(s("anthropic/claude-opus-4-1"), Support::No);
        assert_eq!(s("anthropic/claude-3-5-haiku-latest"), Support::No);
        assert_eq!(s("google/gemini-2.5-pro"), Support::WithoutTools);
        assert_eq!(s("google/gemini-3-pro-preview"), Support::Yes);
        assert_eq!(s("ollama/qwen3"), Support::Yes);
        assert_eq!(s("llamacpp/any"), Support::Yes);
        assert_eq!(s("groq/llama-3.3-70b-versatile"), Support::No);
        assert_eq!(s("deepseek/deepseek-chat"), Support::No);
    }

    #[test]
    fn strict_needs_closed_objects_with_every_property_required() {
        let closed = json!({"type": "object", "properties": {"a": {"type": "string"}},
            "required": ["a"], "additionalProperties": false});
        assert!(strict_ok(&closed));
        let open =
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        assert!(!strict_ok(&open));
        let optional = json!({"type": "object", "properties": {"a": {}, "b": {}},
            "required": ["a"], "additionalProperties": false});
        assert!(!strict_ok(&optional));
        let nested_open = json!({"type": "object", "properties": {"a": {"type": "object"}},
            "required": ["a"], "additionalProperties": false});
        assert!(!strict_ok(&nested_open));
        let mut all_of = closed.clone();
        all_of["allOf"] = json!([{"required": ["a"]}]);
        assert!(!strict_ok(&all_of));
    }

    #[test]
    fn anthropic_subset() {
        let closed = |extra: Value| {
            let mut s = json!({"type": "object", "properties": {"a": {"type": "array"}},
                "required": ["a"], "additionalProperties": false});
            s["properties"]["a"]
                .as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            s
        };
        assert!(anthropic_ok(&closed(json!({}))));
        assert!(anthropic_ok(&closed(json!({"minItems": 1}))));
        assert!(!anthropic_ok(&closed(json!({"minItems": 2}))));
        assert!(!anthropic_ok(&closed(json!({"maxItems": 3}))));
        assert!(!anthropic_ok(&closed(json!({"items": {"$ref": "#"}}))));
        assert!(!anthropic_ok(&closed(json!({"items": {"type": "object"}}))));
        assert!(anthropic_ok(&closed(
            json!({"items": {"type": "object", "additionalProperties": false}})
        )));
    }

    #[test]
    fn plans_never_change_the_schema_but_fall_back() {
        let (gpt, openai) = info("openai/gpt-5");
        let closed = json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}},
            "required": ["n"], "additionalProperties": false});
        let open = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        assert_eq!(
            plan(&gpt, &openai, &closed, true),
            Plan::Native { strict: true }
        );
        assert_eq!(
            plan(&gpt, &openai, &open, true),
            Plan::Native { strict: false }
        );
        assert_eq!(
            plan(&gpt, &openai, &json!({"type": "array"}), true),
            Plan::Prompted
        );
        let (claude, anthropic) = info("anthropic/claude-sonnet-4-5");
        // `minimum` is outside Anthropic's subset: prompted, not stripped.
        assert_eq!(plan(&claude, &anthropic, &closed, true), Plan::Prompted);
        assert_eq!(plan(&claude, &anthropic, &open, true), Plan::Prompted);
        let plain = json!({"type": "object", "properties": {"n": {"type": "integer"}},
            "required": ["n"], "additionalProperties": false});
        assert_eq!(
            plan(&claude, &anthropic, &plain, true),
            Plan::Native { strict: true }
        );
        let (flash, google) = info("google/gemini-2.5-flash");
        assert_eq!(plan(&flash, &google, &open, true), Plan::Prompted);
        assert_eq!(
            plan(&flash, &google, &open, false),
            Plan::Native { strict: false }
        );
        let (local, vllm) = info("vllm/qwen");
        assert_eq!(
            plan(&local, &vllm, &json!({"type": "array"}), true),
            Plan::Native { strict: true }
        );
    }

    #[test]
    fn answers_are_json_maybe_fenced_and_checked() {
        let s = OutputSchema::new(
            json!({"type": "object", "properties": {"n": {"type": "integer"}},
            "required": ["n"]}),
        )
        .unwrap();
        assert_eq!(s.check("{\"n\": 3}").unwrap(), json!({"n": 3}));
        assert_eq!(
            s.check("```json\n{\"n\": 3}\n```").unwrap(),
            json!({"n": 3})
        );
        assert_eq!(
            s.check("  ```\n{\"n\": 4}\n```\n").unwrap(),
            json!({"n": 4})
        );
        let e = s.check("{\"n\": \"three\"}").unwrap_err();
        assert!(e[0].contains("at `/n`"), "{e:?}");
        let e = s.check("Here it is: {\"n\": 3}").unwrap_err();
        assert!(e[0].contains("not one JSON value"), "{e:?}");
        assert!(s.check("").is_err());
        assert!(s.check("```python\n{\"n\": 3}\n```").is_err());
    }

    #[test]
    fn broken_schemas_are_refused_with_the_reason() {
        assert!(OutputSchema::new(json!([1])).unwrap_err().contains("array"));
        let e = OutputSchema::new(json!({"type": "objekt"})).unwrap_err();
        assert!(e.contains("not a valid JSON Schema"), "{e}");
        let e = OutputSchema::new(json!({"$ref": "#/$defs/missing"})).unwrap_err();
        assert!(e.contains("not a valid JSON Schema"), "{e}");
        let e = OutputSchema::load("{not json", Path::new("/")).unwrap_err();
        assert!(e.contains("inline output schema is not JSON"), "{e}");
        let e = OutputSchema::load("nosuch.json", Path::new("/nonexistent")).unwrap_err();
        assert!(e.contains("cannot read the output schema"), "{e}");
    }

    #[test]
    fn names_fit_openai_rules() {
        assert_eq!(schema_name(&json!({"title": "Bug report!"})), "Bug_report_");
        assert_eq!(schema_name(&json!({})), "answer");
    }
}
