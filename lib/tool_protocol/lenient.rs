//! Arguments as models send them: the one rule, driven by a tool's JSON
//! Schema, that turns what a model meant into what the schema asks for
//! before the arguments are checked or parsed. The tool binaries apply it
//! before serde, and ag-loop and ag-mcp before their schema check, so ag's
//! own tools and foreign ones (`--tool`, MCP) are treated alike.
//!
//! The rule, for each field the schema declares:
//! - a string where the schema wants a number, an integer or a boolean is
//!   converted when it reads as exactly one (`"10"`, `"1.5"`, `"true"`),
//!   and so is a whole number written with a fraction (`5.0`) where an
//!   integer is wanted;
//!   a string holding a JSON array or object is taken where one is wanted;
//! - an optional field sent empty (`null`, `""`, `[]`, `{}`, `false`, `0`)
//!   counts as absent, unless the empty value is a real choice: a `0` the
//!   field accepts (the schema's `minimum` allows it and its `default` is
//!   not 0), or a value the schema's `default` says differs from leaving
//!   the field out (`false` where the default is `true`; anything where
//!   the schema gives `"default": null`, ag's mark for such fields);
//! - `explanation`, which some prompts teach models to add to every call,
//!   is dropped unless the schema declares it;
//! - a field under another agent's name for it (seed 001's `target_file`
//!   and `relative_workspace_path`, seed 003's `path` for a file) is
//!   renamed to the field the schema declares, when it declares that one
//!   and not the other name.
//!
//! Anything else is left for the schema check or the tool to refuse, with
//! a message that names the field; [`working_call`] gives those messages a
//! call that works.

use serde_json::{Map, Value};

/// The field some prompts tell models to add to every call.
const EXPLANATION: &str = "explanation";

/// Other agents' names for a field, each with the names it stands for, in
/// the order they are tried: Cursor's, which seed 001's tools use
/// (`target_file`, `relative_workspace_path`), and the plain `path` of seed
/// 003's file tools. A schema that declares the other name keeps it.
const OTHER_NAMES: &[(&str, &[&str])] = &[
    ("target_file", &["file_path", "path"]),
    ("relative_workspace_path", &["path"]),
    ("path", &["file_path"]),
    ("file_path", &["path"]),
];

/// Applies the rule to `args` in place. The errors are a call whose values
/// are the parameter names themselves (copied from a description or a
/// template), which no tool can mean, and a field given under two names
/// with two values.
pub fn normalize(schema: &Value, args: &mut Map<String, Value>) -> Result<(), String> {
    rename_other_names(schema, args)?;
    normalize_object(schema, args);
    names_as_values(schema, args)
}

/// Renames the fields sent under another agent's name ([`OTHER_NAMES`]) to
/// the schema's. The same value under both names is taken once; two
/// different values are refused, since either could be the one meant.
fn rename_other_names(schema: &Value, args: &mut Map<String, Value>) -> Result<(), String> {
    for (other, targets) in OTHER_NAMES {
        if !args.contains_key(*other) || declares(schema, other) {
            continue;
        }
        let Some(target) = targets.iter().find(|t| declares(schema, t)) else {
            continue;
        };
        let Some(value) = args.remove(*other) else {
            continue;
        };
        match args.get(*target) {
            Some(given) if *given != value => {
                let call = short_json(&Value::Object(args.clone()));
                return Err(format!(
                    "`{other}` and `{target}` name the same field, with different values ({} and {}); send it once, as `{target}`: {call}",
                    short_json(&value),
                    short_json(given)
                ));
            }
            Some(_) => {}
            None => {
                args.insert((*target).to_string(), value);
            }
        }
    }
    Ok(())
}

fn normalize_object(schema: &Value, args: &mut Map<String, Value>) {
    let props = schema.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if props.is_none_or(|p| !p.contains_key(EXPLANATION)) {
        args.remove(EXPLANATION);
    }
    let Some(props) = props else {
        return;
    };
    let mut absent = Vec::new();
    for (name, value) in args.iter_mut() {
        let Some(field) = props.get(name) else {
            continue;
        };
        convert(field, value);
        nested(field, value);
        if !required.contains(&name.as_str()) && counts_as_absent(field, value) {
            absent.push(name.clone());
        }
    }
    for name in absent {
        args.remove(&name);
    }
}

/// Applies the rule inside objects and arrays of objects.
fn nested(field: &Value, value: &mut Value) {
    match value {
        Value::Object(inner) if field.get("properties").is_some() => {
            normalize_object(field, inner);
        }
        Value::Array(items) => {
            if let Some(item) = field.get("items").filter(|i| i.get("properties").is_some()) {
                for v in items.iter_mut() {
                    if let Value::Object(inner) = v {
                        normalize_object(item, inner);
                    }
                }
            }
        }
        _ => {}
    }
}

/// The JSON types a field accepts (from `type`, or the alternatives of
/// `anyOf` / `oneOf`); empty when the schema does not say.
fn types(field: &Value) -> Vec<&str> {
    let mut out: Vec<&str> = match field.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(alts)) = field.get(key) {
            for alt in alts {
                out.extend(types(alt));
            }
        }
    }
    out
}

/// Converts a string the field cannot take as a string into the one value
/// it reads as, when there is exactly one.
fn convert(field: &Value, value: &mut Value) {
    let wanted = types(field);
    // `5.0` where an integer is wanted is 5 (JSON Schema agrees; serde
    // would refuse it).
    if let Value::Number(n) = value
        && wanted.contains(&"integer")
        && !wanted.contains(&"number")
        && n.is_f64()
        && let Some(f) = n.as_f64()
        && f.fract() == 0.0
        && f.abs() < 9.0e15
    {
        #[allow(clippy::cast_possible_truncation)]
        let whole = f as i64;
        *value = Value::from(whole);
        return;
    }
    let Value::String(text) = value else {
        return;
    };
    if wanted.is_empty() || wanted.contains(&"string") {
        return;
    }
    let t = text.trim();
    let numeric = (wanted.contains(&"integer") && is_integer(t))
        || (wanted.contains(&"number") && is_decimal(t));
    let converted = if numeric {
        // serde_json reads neither `.5` nor `-.5`.
        let padded = match t.strip_prefix('-') {
            Some(rest) if rest.starts_with('.') => format!("-0{rest}"),
            _ if t.starts_with('.') => format!("0{t}"),
            _ => t.to_string(),
        };
        serde_json::from_str::<Value>(&padded).ok()
    } else if wanted.contains(&"boolean") && t.eq_ignore_ascii_case("true") {
        Some(Value::Bool(true))
    } else if wanted.contains(&"boolean") && t.eq_ignore_ascii_case("false") {
        Some(Value::Bool(false))
    } else if (wanted.contains(&"array") && t.starts_with('['))
        || (wanted.contains(&"object") && t.starts_with('{'))
    {
        serde_json::from_str::<Value>(t)
            .ok()
            .filter(|v| v.is_array() || v.is_object())
    } else {
        None
    };
    if let Some(v) = converted {
        *value = v;
    }
}

/// `-12`, `7`: digits with an optional minus, nothing else (no `1e3`, no
/// `0x10`, no `5.0`, which an integer field would have to guess at).
fn is_integer(t: &str) -> bool {
    let digits = t.strip_prefix('-').unwrap_or(t);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// `1.5`, `-2`, `.5`: a plain decimal number.
fn is_decimal(t: &str) -> bool {
    let body = t.strip_prefix('-').unwrap_or(t);
    let mut parts = body.splitn(2, '.');
    let whole = parts.next().unwrap_or("");
    let frac = parts.next();
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let shown = !whole.is_empty() || frac.is_some_and(|f| !f.is_empty());
    shown && digits(whole) && frac.is_none_or(digits)
}

fn is_zero(value: &Value) -> bool {
    value.as_f64() == Some(0.0)
}

/// Whether an optional field's value is an empty one that means "not given".
fn counts_as_absent(field: &Value, value: &Value) -> bool {
    let empty = match value {
        Value::Null => return true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Bool(b) => !b,
        Value::Number(_) => is_zero(value),
    };
    if !empty || !accepts(field, value) {
        // A value the field cannot take at all is only absent if empty.
        return empty;
    }
    match field.get("default") {
        Some(default) if default == value => true,
        Some(default) if is_zero(value) => is_zero(default),
        // The schema says leaving the field out means something else, so
        // the empty value is a choice.
        Some(_) => false,
        // A number field that takes 0 means it (`strip: 0`, `context: 0`).
        None => !is_zero(value),
    }
}

/// Whether the field's own bounds allow `value`: its enum, its minimum,
/// and the least length of a string, array or object.
fn accepts(field: &Value, value: &Value) -> bool {
    if let Some(Value::Array(options)) = field.get("enum")
        && !options.contains(value)
    {
        return false;
    }
    if let Some(c) = field.get("const")
        && c != value
    {
        return false;
    }
    let wanted = types(field);
    let type_ok = match value {
        Value::Null => true,
        Value::Bool(_) => wanted.contains(&"boolean"),
        Value::Number(_) => wanted.contains(&"number") || wanted.contains(&"integer"),
        Value::String(_) => wanted.contains(&"string"),
        Value::Array(_) => wanted.contains(&"array"),
        Value::Object(_) => wanted.contains(&"object"),
    };
    if !wanted.is_empty() && !type_ok {
        return false;
    }
    let at_least = |key: &str, n: usize| {
        field
            .get(key)
            .and_then(Value::as_u64)
            .is_none_or(|min| n as u64 >= min)
    };
    match value {
        Value::Number(_) => {
            let v = value.as_f64().unwrap_or(0.0);
            let min_ok = field
                .get("minimum")
                .and_then(Value::as_f64)
                .is_none_or(|m| v >= m);
            let xmin_ok = field
                .get("exclusiveMinimum")
                .and_then(Value::as_f64)
                .is_none_or(|m| v > m);
            min_ok && xmin_ok
        }
        Value::String(s) => at_least("minLength", s.chars().count()),
        Value::Array(a) => at_least("minItems", a.len()),
        Value::Object(o) => at_least("minProperties", o.len()),
        _ => true,
    }
}

/// Refuses a call in which two or more string fields hold their own names
/// (`{"old_string": "old_string", "new_string": "new_string"}`): a model
/// copied a template instead of filling it in. One such field alone can be
/// real (a search for the word `query`).
fn names_as_values(schema: &Value, args: &Map<String, Value>) -> Result<(), String> {
    let props = schema.get("properties").and_then(Value::as_object);
    let copied: Vec<&str> = args
        .iter()
        .filter(|(name, value)| {
            props.is_some_and(|p| p.contains_key(name.as_str()))
                && value.as_str().is_some_and(|v| {
                    let v = v
                        .trim()
                        .trim_matches(|c| matches!(c, '<' | '>' | '{' | '}'));
                    v == name.as_str()
                })
        })
        .map(|(name, _)| name.as_str())
        .collect();
    if copied.len() < 2 {
        return Ok(());
    }
    let fields: Vec<String> = copied.iter().map(|n| format!("`{n}`")).collect();
    Err(format!(
        "{} hold their own names, not values: that is the shape of a call, copied. Put the real values in their place.",
        fields.join(" and "),
    ))
}

/// A call that works, for an error message: the model's own call without
/// the fields that `keep` refuses, when what is left still has every
/// required field.
pub fn working_call(
    schema: &Value,
    args: &Map<String, Value>,
    keep: impl Fn(&str, &Value) -> bool,
) -> Option<String> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let kept: Map<String, Value> = args
        .iter()
        .filter(|(k, v)| keep(k, v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if kept.len() == args.len() || required.iter().any(|r| !kept.contains_key(*r)) {
        return None;
    }
    Some(short_json(&Value::Object(kept)))
}

/// A call as JSON for a message, its long strings shortened.
pub fn short_json(value: &Value) -> String {
    fn shorten(v: &Value) -> Value {
        match v {
            Value::String(s) if s.chars().count() > 60 => {
                let head: String = s.chars().take(57).collect();
                Value::String(format!("{head}..."))
            }
            Value::Array(items) => Value::Array(items.iter().map(shorten).collect()),
            Value::Object(map) => {
                Value::Object(map.iter().map(|(k, v)| (k.clone(), shorten(v))).collect())
            }
            other => other.clone(),
        }
    }
    shorten(value).to_string()
}

/// What a field takes, for an error message: `<string>`, `<integer >= 1>`,
/// `"a"|"b"`, `[{"content": <string>, ...}, ...]`.
pub fn shape(field: &Value) -> String {
    if let Some(Value::Array(options)) = field.get("enum") {
        let shown: Vec<String> = options.iter().map(Value::to_string).collect();
        return shown.join("|");
    }
    let wanted = types(field);
    let first = wanted
        .iter()
        .find(|t| **t != "null")
        .copied()
        .unwrap_or("value");
    match first {
        "array" => match field.get("items") {
            Some(item) => format!("[{}, ...]", shape(item)),
            None => "[...]".to_string(),
        },
        "object" => {
            let Some(props) = field.get("properties").and_then(Value::as_object) else {
                return "{...}".to_string();
            };
            let required: Vec<&str> = field
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut parts: Vec<String> = props
                .iter()
                .filter(|(k, _)| required.contains(&k.as_str()))
                .map(|(k, v)| format!("\"{k}\": {}", shape(v)))
                .collect();
            if props.len() > parts.len() {
                parts.push("...".to_string());
            }
            format!("{{{}}}", parts.join(", "))
        }
        "integer" | "number" => match field.get("minimum").and_then(Value::as_f64) {
            Some(min) => format!("<{first} >= {min}>"),
            None => format!("<{first}>"),
        },
        other => format!("<{other}>"),
    }
}

/// Whether the schema declares `name` as a field.
pub fn declares(schema: &Value, name: &str) -> bool {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| p.contains_key(name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string"},
                "job": {"type": "string"},
                "list_jobs": {"type": "boolean", "default": false},
                "color": {"type": "boolean", "default": true},
                "case_sensitive": {"type": "boolean"},
                "new_string": {"type": "string", "default": null},
                "timeout": {"type": "number", "minimum": 0.001},
                "limit": {"type": "integer", "minimum": 1},
                "strip": {"type": "integer", "minimum": 0},
                "context": {"type": "integer", "default": 0},
                "sort": {"type": "string", "enum": ["modified", "path"], "default": "modified"},
                "paths": {"type": "array", "items": {"type": "string"}},
                "edits": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"old_string": {"type": "string"}, "new_string": {"type": "string"}, "all": {"type": "boolean"}},
                    "required": ["old_string", "new_string"]
                }},
                "opts": {"type": "object"},
                "file_path": {"type": "string"}
            },
            "required": ["file_path"],
            "additionalProperties": false
        })
    }

    fn norm(args: Value) -> Value {
        let Value::Object(mut map) = args else {
            panic!("not an object")
        };
        normalize(&schema(), &mut map).unwrap();
        Value::Object(map)
    }

    #[test]
    fn empty_optional_fields_count_as_absent() {
        let got = norm(json!({
            "file_path": "a", "command": "ls", "job": "", "list_jobs": false, "timeout": 0,
            "limit": 0, "paths": [], "opts": {}, "sort": "", "case_sensitive": false,
            "context": 0, "edits": null
        }));
        assert_eq!(got, json!({"file_path": "a", "command": "ls"}));
    }

    #[test]
    fn meaningful_empty_values_are_kept() {
        let args = json!({"file_path": "a", "color": false, "new_string": "", "strip": 0});
        assert_eq!(norm(args.clone()), args);
    }

    #[test]
    fn required_fields_are_never_dropped() {
        assert_eq!(norm(json!({"file_path": ""})), json!({"file_path": ""}));
    }

    #[test]
    fn strings_become_the_number_or_boolean_the_field_wants() {
        assert_eq!(
            norm(json!({"file_path": "a", "timeout": ".5"}))["timeout"],
            json!(0.5)
        );
        let got = norm(json!({
            "file_path": "7", "limit": " 5 ", "timeout": "1.5", "list_jobs": "TRUE",
            "color": "false", "paths": "[\"a\", \"b\"]", "opts": "{\"x\": 1}"
        }));
        assert_eq!(
            got,
            json!({"file_path": "7", "limit": 5, "timeout": 1.5, "list_jobs": true,
                   "color": false, "paths": ["a", "b"], "opts": {"x": 1}})
        );
    }

    #[test]
    fn a_whole_float_is_an_integer_where_one_is_wanted() {
        let got = norm(json!({"file_path": "a", "limit": 5.0, "timeout": 2.0}));
        assert_eq!(got["limit"].as_u64(), Some(5));
        assert!(got["timeout"].is_f64(), "a number field keeps its float");
        let half = norm(json!({"file_path": "a", "limit": 5.5}));
        assert_eq!(half["limit"], json!(5.5));
    }

    #[test]
    fn ambiguous_strings_are_left_for_the_check_to_refuse() {
        let args = json!({"file_path": "a", "limit": "5.0", "timeout": "1e3", "list_jobs": "yes", "paths": "a,b"});
        assert_eq!(norm(args.clone()), args);
    }

    #[test]
    fn a_string_zero_converts_and_then_counts_as_absent() {
        assert_eq!(
            norm(json!({"file_path": "a", "limit": "0", "timeout": "0"})),
            json!({"file_path": "a"})
        );
    }

    #[test]
    fn explanation_is_dropped_unless_declared() {
        assert_eq!(
            norm(json!({"file_path": "a", "explanation": "look"})),
            json!({"file_path": "a"})
        );
        let declared = json!({"properties": {"explanation": {"type": "string"}}});
        let mut args = json!({"explanation": "why"}).as_object().cloned().unwrap();
        normalize(&declared, &mut args).unwrap();
        assert_eq!(args.get("explanation"), Some(&json!("why")));
    }

    #[test]
    fn other_unknown_fields_stay_for_the_check_to_name() {
        assert_eq!(
            norm(json!({"file_path": "a", "colour": ""})),
            json!({"file_path": "a", "colour": ""})
        );
    }

    #[test]
    fn items_of_arrays_follow_the_rule_too() {
        let got = norm(json!({"file_path": "a", "edits": [
            {"old_string": "x", "new_string": "", "all": "false", "explanation": "e"}
        ]}));
        assert_eq!(
            got,
            json!({"file_path": "a", "edits": [{"old_string": "x", "new_string": ""}]})
        );
    }

    #[test]
    fn names_as_values_are_refused_with_the_fields_named() {
        let mut args = json!({"file_path": "a", "command": "command", "job": "<job>"})
            .as_object()
            .cloned()
            .unwrap();
        let err = normalize(&schema(), &mut args).unwrap_err();
        assert!(err.contains("`command` and `job`"), "{err}");
        let mut one = json!({"file_path": "a", "command": "command"})
            .as_object()
            .cloned()
            .unwrap();
        assert!(normalize(&schema(), &mut one).is_ok());
    }

    #[test]
    fn other_agents_names_become_the_schemas_own() {
        // Seed 001: read_file, list_dir and delete_file as Cursor calls them.
        let read =
            json!({"properties": {"file_path": {"type": "string"}, "limit": {"type": "integer"}}});
        let ls = json!({"properties": {"path": {"type": "string"}}});
        let run = |schema: &Value, args: Value| {
            let mut map = args.as_object().cloned().unwrap();
            normalize(schema, &mut map).map(|()| Value::Object(map))
        };
        assert_eq!(
            run(&read, json!({"target_file": "a.rs", "explanation": "look"})),
            Ok(json!({"file_path": "a.rs"}))
        );
        assert_eq!(
            run(
                &ls,
                json!({"relative_workspace_path": "src", "explanation": "x"})
            ),
            Ok(json!({"path": "src"}))
        );
        assert_eq!(
            run(&ls, json!({"target_file": "old.rs"})),
            Ok(json!({"path": "old.rs"}))
        );
        // Seed 003's read_file takes `path`.
        assert_eq!(
            run(&read, json!({"path": "a.rs"})),
            Ok(json!({"file_path": "a.rs"}))
        );
        // The same value twice is taken once; two values are refused with
        // the caller's call, as it would work.
        assert_eq!(
            run(&read, json!({"target_file": "a.rs", "file_path": "a.rs"})),
            Ok(json!({"file_path": "a.rs"}))
        );
        let err = run(&read, json!({"target_file": "a.rs", "file_path": "b.rs"})).unwrap_err();
        assert!(err.contains("`target_file` and `file_path`"), "{err}");
        assert!(err.contains(r#"{"file_path":"b.rs"}"#), "{err}");
        // A schema that declares the name keeps it as it is.
        let both =
            json!({"properties": {"path": {"type": "string"}, "file_path": {"type": "string"}}});
        assert_eq!(
            run(&both, json!({"path": "a", "file_path": "b"})),
            Ok(json!({"path": "a", "file_path": "b"}))
        );
        // A schema with neither field leaves it for the check to name.
        let other = json!({"properties": {"query": {"type": "string"}}});
        assert_eq!(
            run(&other, json!({"target_file": "a"})),
            Ok(json!({"target_file": "a"}))
        );
    }

    #[test]
    fn foreign_schemas_without_types_are_left_alone() {
        let loose = json!({"properties": {"x": {}}});
        let mut args = json!({"x": "5", "y": ""}).as_object().cloned().unwrap();
        normalize(&loose, &mut args).unwrap();
        assert_eq!(Value::Object(args), json!({"x": "5", "y": ""}));
    }

    #[test]
    fn any_of_types_are_understood() {
        let s = json!({"properties": {"n": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}});
        let mut args = json!({"n": "3"}).as_object().cloned().unwrap();
        normalize(&s, &mut args).unwrap();
        assert_eq!(args["n"], json!(3));
    }

    #[test]
    fn a_working_call_leaves_out_the_refused_fields() {
        let args = json!({"file_path": "a", "colour": "red"});
        let call = working_call(&schema(), args.as_object().unwrap(), |k, _| {
            declares(&schema(), k)
        });
        assert_eq!(call.as_deref(), Some(r#"{"file_path":"a"}"#));
        let missing = json!({"colour": "red"});
        assert_eq!(
            working_call(&schema(), missing.as_object().unwrap(), |k, _| declares(
                &schema(),
                k
            )),
            None
        );
    }
}
