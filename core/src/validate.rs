//! Validation of tool arguments against the tool's JSON schema, with pi's error text.

use serde_json::{Map, Value};

/// Validate (after light coercion) `args` for the tool `name` against `schema`.
///
/// Returns the coerced arguments, or the error text the model receives as the tool result.
pub fn validate_tool_arguments(name: &str, schema: &Value, args: Value) -> Result<Value, String> {
    let args = coerce(schema, args);
    let validator = match jsonschema::validator_for(schema) {
        Ok(v) => v,
        // A tool with a broken schema is the tool's bug; don't let it block every call.
        Err(e) => {
            tracing::warn!(tool = name, error = %e, "tool schema does not compile; skipping validation");
            return Ok(args);
        }
    };
    let problems: Vec<String> = validator
        .iter_errors(&args)
        .map(|e| {
            let path = e.instance_path().as_str().to_string();
            let path = if path.is_empty() {
                "root".to_string()
            } else {
                path
            };
            format!("  - {path}: {e}")
        })
        .collect();
    if problems.is_empty() {
        return Ok(args);
    }
    let pretty = serde_json::to_string_pretty(&args).unwrap_or_else(|_| args.to_string());
    Err(format!(
        "Validation failed for tool \"{name}\":\n{}\n\nReceived arguments:\n{pretty}",
        problems.join("\n")
    ))
}

/// Whether `schema` is a JSON schema arguments can be checked against; why not.
pub fn schema_compiles(schema: &Value) -> Result<(), String> {
    jsonschema::validator_for(schema)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// Convert top-level scalar strings to the number or boolean the schema asks for, as models
/// often quote them.
fn coerce(schema: &Value, args: Value) -> Value {
    let (Value::Object(mut map), Some(props)) = (args.clone(), schema.get("properties")) else {
        return args;
    };
    let Some(props) = props.as_object() else {
        return args;
    };
    for (key, prop) in props {
        let Some(Value::String(s)) = map.get(key) else {
            continue;
        };
        let converted = match prop.get("type").and_then(Value::as_str) {
            Some("integer") => s.trim().parse::<i64>().ok().map(Value::from),
            Some("number") => s
                .trim()
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number),
            Some("boolean") => match s.trim() {
                "true" => Some(Value::Bool(true)),
                "false" => Some(Value::Bool(false)),
                _ => None,
            },
            _ => None,
        };
        if let Some(v) = converted {
            map.insert(key.clone(), v);
        }
    }
    Value::Object(Map::from_iter(map))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["path"],
            "additionalProperties": false
        })
    }

    #[test]
    fn valid_arguments_pass_and_numbers_are_coerced() {
        let out = validate_tool_arguments("read", &schema(), json!({"path": "a", "limit": "5"}));
        assert_eq!(out, Ok(json!({"path": "a", "limit": 5})));
    }

    #[test]
    fn invalid_arguments_produce_pi_style_text() {
        let err = validate_tool_arguments("read", &schema(), json!({"limit": "many"})).unwrap_err();
        assert!(
            err.starts_with("Validation failed for tool \"read\":\n  - "),
            "{err}"
        );
        assert!(err.contains("\"path\" is a required property"), "{err}");
        assert!(err.contains("/limit"), "{err}");
        assert!(
            err.ends_with("Received arguments:\n{\n  \"limit\": \"many\"\n}"),
            "{err}"
        );
    }
}
