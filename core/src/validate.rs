//! Validation of tool arguments against the tool's JSON schema, with pi's error text.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, LazyLock};

use jsonschema::Validator;
use parking_lot::Mutex;
use serde_json::{Map, Value};

/// Compiled validators by schema. Compiling is most of a check's cost (tens of µs, more than
/// a call to a local MCP server adds), and a tool's schema is the same on every call.
static VALIDATORS: LazyLock<Mutex<ValidatorCache>> = LazyLock::new(Default::default);
/// Schema hash → the schemas of that hash, each with its validator.
type ValidatorCache = HashMap<u64, Vec<(Value, Arc<Validator>)>>;
/// Schemas kept at most; past that the cache starts over (tool sets change rarely).
const CACHED_SCHEMAS: usize = 512;

/// The compiled validator of `schema`, from the cache when it was compiled before.
fn validator(schema: &Value) -> Result<Arc<Validator>, jsonschema::ValidationError<'static>> {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    hash_value(schema, &mut hasher);
    let key = hasher.finish();
    if let Some(found) = VALIDATORS
        .lock()
        .get(&key)
        .and_then(|list| list.iter().find(|(s, _)| s == schema))
    {
        return Ok(found.1.clone());
    }
    let compiled = Arc::new(jsonschema::validator_for(schema)?);
    let mut cache = VALIDATORS.lock();
    if cache.len() >= CACHED_SCHEMAS {
        cache.clear();
    }
    let list = cache.entry(key).or_default();
    // Another thread may have compiled it meanwhile: one validator per schema.
    if let Some((_, found)) = list.iter().find(|(s, _)| s == schema) {
        return Ok(found.clone());
    }
    list.push((schema.clone(), compiled.clone()));
    Ok(compiled)
}

/// Hash a JSON value (equal values hash equally whatever their objects' key order).
fn hash_value(v: &Value, h: &mut impl Hasher) {
    match v {
        Value::Null => 0u8.hash(h),
        Value::Bool(b) => (1u8, b).hash(h),
        Value::Number(n) => (2u8, n.to_string()).hash(h),
        Value::String(s) => (3u8, s).hash(h),
        Value::Array(items) => {
            (4u8, items.len()).hash(h);
            for item in items {
                hash_value(item, h);
            }
        }
        Value::Object(map) => {
            (5u8, map.len()).hash(h);
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            for k in keys {
                k.hash(h);
                hash_value(&map[k], h);
            }
        }
    }
}

/// Validate (after light coercion) `args` for the tool `name` against `schema`.
///
/// Returns the coerced arguments, or the error text the model receives as the tool result.
pub fn validate_tool_arguments(name: &str, schema: &Value, args: Value) -> Result<Value, String> {
    let args = coerce(schema, args);
    let validator = match validator(schema) {
        Ok(v) => v,
        // A tool with a broken schema is the tool's bug; don't let it block every call.
        Err(e) => {
            tracing::warn!(tool = name, error = %e, "tool schema does not compile; skipping validation");
            return Ok(args);
        }
    };
    let problems = problems(&validator, &args);
    if problems.is_empty() {
        return Ok(args);
    }
    let pretty = serde_json::to_string_pretty(&args).unwrap_or_else(|_| args.to_string());
    Err(format!(
        "Validation failed for tool \"{name}\":\n{}\n\nReceived arguments:\n{pretty}",
        problems.join("\n")
    ))
}

/// Each way `value` breaks `schema`, as `  - PATH: what is wrong` lines (none: it is valid);
/// an error when the schema itself does not compile.
pub fn schema_problems(schema: &Value, value: &Value) -> Result<Vec<String>, String> {
    let validator = validator(schema).map_err(|e| e.to_string())?;
    Ok(problems(&validator, value))
}

fn problems(validator: &Validator, value: &Value) -> Vec<String> {
    validator
        .iter_errors(value)
        .map(|e| {
            let path = e.instance_path().as_str().to_string();
            let path = if path.is_empty() {
                "root".to_string()
            } else {
                path
            };
            format!("  - {path}: {e}")
        })
        .collect()
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

    #[test]
    fn a_schema_is_compiled_once_and_a_changed_one_again() {
        let first = validator(&schema()).unwrap();
        assert!(Arc::ptr_eq(&first, &validator(&schema()).unwrap()));
        // The same schema with "limit" required is another schema.
        let mut stricter = schema();
        stricter["required"] = json!(["path", "limit"]);
        assert!(!Arc::ptr_eq(&first, &validator(&stricter).unwrap()));
        assert!(validate_tool_arguments("read", &stricter, json!({"path": "a"})).is_err());
        assert!(validate_tool_arguments("read", &schema(), json!({"path": "a"})).is_ok());
    }
}
