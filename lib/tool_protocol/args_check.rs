//! Checking a call's arguments against its tool's JSON Schema before the
//! tool runs, so that the model hears every problem at once and can correct
//! its call. The arguments are first put in the shape the schema asks for
//! by [`super::lenient`], so the tool receives what the model meant.

use std::sync::OnceLock;

use jsonschema::{Draft, Validator};
use serde_json::{Map, Value};

use super::lenient;

/// A tool's parameter schema, compiled on the first call that needs it.
///
/// Compiling is deferred because most tools of a session are never called,
/// and the first compile of a draft also builds that draft's meta-schema
/// validator, which jsonschema keeps for the life of the process.
pub struct ArgsCheck {
    schema: Value,
    compiled: OnceLock<Option<Validator>>,
}

impl ArgsCheck {
    /// Keeps `schema` for checking later calls.
    pub fn new(schema: Value) -> Self {
        Self {
            schema,
            compiled: OnceLock::new(),
        }
    }

    /// Applies [`lenient::normalize`] to `arguments` in place, then checks
    /// them: what the tool is given is the normalized call. The error lists
    /// every problem and, when leaving out the offending optional or unknown
    /// fields gives a valid call, shows it.
    pub fn prepare(&self, tool: &str, arguments: &mut Value) -> Result<(), String> {
        if let Value::Object(map) = arguments {
            lenient::normalize(&self.schema, map)
                .map_err(|e| format!("The arguments for `{tool}` are not usable: {e}"))?;
        }
        self.check(tool, arguments)
    }

    /// Checks `arguments` of a call to `tool` as they are; the error lists
    /// every problem and asks for the call again. A schema that does not
    /// compile checks nothing: the tool still gets its calls and reports bad
    /// arguments itself.
    pub fn check(&self, tool: &str, arguments: &Value) -> Result<(), String> {
        let Some(validator) = self.compiled.get_or_init(|| compile(&self.schema)) else {
            return Ok(());
        };
        let mut culprits: Vec<String> = Vec::new();
        let problems: Vec<String> = validator
            .iter_errors(arguments)
            .map(|e| {
                let at = e.instance_path.to_string();
                if let Some(field) = at.trim_start_matches('/').split('/').next() {
                    culprits.push(field.replace("~1", "/").replace("~0", "~"));
                }
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("at `{at}`: {e}")
                }
            })
            .collect();
        if problems.is_empty() {
            return Ok(());
        }
        let mut advice: Vec<String> = self.shapes(arguments, &culprits);
        match self.working_call(validator, arguments) {
            Some(call) => advice.push(format!("A call that works: {call}")),
            None if advice.is_empty() => {
                advice.push("Call it again with corrected arguments.".to_string());
            }
            None => advice.push("Call it again with those shapes.".to_string()),
        }
        let advice = advice.join("\n");
        Err(format!(
            "The arguments for `{tool}` do not match its schema:\n- {}\n{advice}",
            problems.join("\n- ")
        ))
    }

    /// The call without its undeclared fields, if that is valid. Faulty
    /// declared fields are not simply left out: without them a call can
    /// mean something else (`set` without `items` clears a list).
    fn working_call(&self, validator: &Validator, arguments: &Value) -> Option<String> {
        let map: &Map<String, Value> = arguments.as_object()?;
        let call =
            lenient::working_call(&self.schema, map, |k, _| lenient::declares(&self.schema, k))?;
        let candidate: Value = serde_json::from_str(&call).ok()?;
        validator.is_valid(&candidate).then_some(call)
    }

    /// What each faulty or missing field takes, from the schema.
    fn shapes(&self, arguments: &Value, culprits: &[String]) -> Vec<String> {
        let Some(props) = self.schema.get("properties").and_then(Value::as_object) else {
            return Vec::new();
        };
        let missing = self
            .schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|r| arguments.get(*r).is_none());
        let mut named: Vec<&str> = Vec::new();
        for field in culprits.iter().map(String::as_str).chain(missing) {
            if props.contains_key(field) && !named.contains(&field) {
                named.push(field);
            }
        }
        named
            .into_iter()
            .map(|f| format!("`{f}` takes {}", lenient::shape(&props[f])))
            .collect()
    }
}

/// A schema that names no `$schema` is read as draft 7, the dialect that
/// function-calling schemas are written in. jsonschema would otherwise
/// assume 2020-12, whose meta-schema validator alone takes some 20 MB.
fn compile(schema: &Value) -> Option<Validator> {
    let declared = schema.get("$schema").is_some();
    let options = if declared {
        jsonschema::options()
    } else {
        jsonschema::options().with_draft(Draft::Draft7)
    };
    options.build(schema).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1}
            },
            "required": ["file_path"],
            "additionalProperties": false
        })
    }

    #[test]
    fn good_arguments_pass() {
        let check = ArgsCheck::new(read_schema());
        assert_eq!(check.check("read", &json!({"file_path": "a.rs"})), Ok(()));
    }

    #[test]
    fn every_problem_is_listed() {
        let check = ArgsCheck::new(read_schema());
        let err = check
            .check("read", &json!({"limit": 0, "color": "red"}))
            .unwrap_err();
        assert!(err.contains("`read`"), "{err}");
        assert!(err.contains("file_path"), "{err}");
        assert!(err.contains("at `/limit`"), "{err}");
        assert!(err.contains("color"), "{err}");
        assert!(err.ends_with("Call it again with those shapes."), "{err}");
    }

    #[test]
    fn a_working_call_is_shown_when_dropping_unknown_fields_gives_one() {
        let check = ArgsCheck::new(read_schema());
        let err = check
            .check("read", &json!({"file_path": "a.rs", "color": "red"}))
            .unwrap_err();
        assert!(err.contains("color"), "{err}");
        assert!(
            err.ends_with(r#"A call that works: {"file_path":"a.rs"}"#),
            "{err}"
        );
    }

    #[test]
    fn a_faulty_or_missing_field_is_shown_with_its_shape() {
        let check = ArgsCheck::new(read_schema());
        let err = check.check("read", &json!({"limit": -1})).unwrap_err();
        assert!(err.contains("`limit` takes <integer >= 1>"), "{err}");
        assert!(err.contains("`file_path` takes <string>"), "{err}");
        assert!(!err.contains("A call that works"), "{err}");
    }

    #[test]
    fn prepare_hands_on_the_normalized_call() {
        let check = ArgsCheck::new(read_schema());
        let mut args = json!({"file_path": "a.rs", "limit": "0", "explanation": "x"});
        assert_eq!(check.prepare("read", &mut args), Ok(()));
        assert_eq!(args, json!({"file_path": "a.rs"}));
        let mut args = json!({"file_path": "a.rs", "limit": "5"});
        assert_eq!(check.prepare("read", &mut args), Ok(()));
        assert_eq!(args, json!({"file_path": "a.rs", "limit": 5}));
    }

    #[test]
    fn a_declared_draft_is_honoured() {
        // `prefixItems` exists in 2020-12 only.
        let check = ArgsCheck::new(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "array",
            "prefixItems": [{"type": "string"}]
        }));
        assert!(check.check("t", &json!([1])).is_err());
        assert!(check.check("t", &json!(["a"])).is_ok());
    }

    #[test]
    fn an_unusable_schema_checks_nothing() {
        let check = ArgsCheck::new(json!({"type": 12}));
        assert_eq!(check.check("t", &json!({"anything": true})), Ok(()));
    }
}
