//! Structured output (seed 004 §5.6): a run whose final answer must be one JSON value valid
//! against a JSON Schema. The provider asks for it in the wire's own shape where it can (see
//! [`StructuredOutputFormat`]), the loop checks the answer and asks again with what was wrong,
//! a bounded number of times. The JSON still streams as text.

use serde_json::Value;

use crate::message::{AssistantContent, AssistantMessage, Message, UserMessage};
use crate::model::{Model, StructuredOutputFormat};

/// Answers asked again after the first one fails, unless the caller says otherwise.
pub const DEFAULT_RETRIES: u32 = 2;

/// How the request for a corrected answer starts; [`is_retry`] recognises it.
const RETRY_PREFIX: &str = "Your answer is not valid against the JSON Schema it must follow.";

/// The longest name OpenAI accepts for a `json_schema` response format.
const MAX_NAME: usize = 64;

/// Why a schema cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// Not a JSON object (a schema document is one).
    #[error("the schema must be a JSON object, not {0}")]
    NotAnObject(&'static str),
    /// Not a JSON Schema the validator understands.
    #[error("the schema is not a valid JSON Schema: {0}")]
    Invalid(String),
}

/// A schema the run's final answer must match.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseSchema {
    schema: Value,
    name: String,
    retries: u32,
}

impl ResponseSchema {
    /// Checks that `schema` compiles; its `title` (made safe) names it on the wire.
    pub fn new(schema: Value) -> Result<Self, SchemaError> {
        let kind = match &schema {
            Value::Object(_) => None,
            Value::Null => Some("null"),
            Value::Bool(_) => Some("a boolean"),
            Value::Number(_) => Some("a number"),
            Value::String(_) => Some("a string"),
            Value::Array(_) => Some("an array"),
        };
        if let Some(kind) = kind {
            return Err(SchemaError::NotAnObject(kind));
        }
        crate::validate::schema_compiles(&schema).map_err(SchemaError::Invalid)?;
        let name = schema
            .get("title")
            .and_then(Value::as_str)
            .map(wire_name)
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "answer".to_string());
        Ok(ResponseSchema {
            schema,
            name,
            retries: DEFAULT_RETRIES,
        })
    }

    /// The same schema, with `retries` answers asked again at most.
    pub fn with_retries(mut self, retries: u32) -> Self {
        self.retries = retries;
        self
    }

    /// The JSON Schema.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Its name on the wire (`[A-Za-z0-9_-]`, at most 64 characters).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many times a failing answer is asked for again.
    pub fn retries(&self) -> u32 {
        self.retries
    }

    /// Whether `model` gets the wire's own shape: both wires take only an object at the root,
    /// so any other schema goes in the prompt.
    pub fn native_for(&self, model: &Model) -> bool {
        model.structured_output == StructuredOutputFormat::Native && self.root_is_object()
    }

    fn root_is_object(&self) -> bool {
        match self.schema.get("type") {
            Some(Value::String(t)) => t == "object",
            Some(_) => false,
            None => self.schema.get("properties").is_some(),
        }
    }

    /// Whether OpenAI's strict mode takes the schema: every object closed
    /// (`additionalProperties: false`) with all its properties required.
    pub fn strict_compatible(&self) -> bool {
        closed_everywhere(&self.schema)
    }

    /// What the system prompt says when the schema is not sent in the wire's own shape.
    pub fn prompt_instructions(&self) -> String {
        let schema =
            serde_json::to_string_pretty(&self.schema).unwrap_or_else(|_| self.schema.to_string());
        format!(
            "Your final answer must be one JSON value that is valid against the JSON Schema \
             below. Write only that JSON value as your final answer: no prose before or after \
             it, no code fences.\n\n{schema}"
        )
    }

    /// The answer in `message` (its last text block: words before an answer tool's call are
    /// not part of the answer), checked.
    pub fn check_message(&self, message: &AssistantMessage) -> Result<Value, String> {
        let last = message.content.iter().rev().find_map(|c| match c {
            AssistantContent::Text(t) if !t.text.trim().is_empty() => Some(t.text.as_str()),
            _ => None,
        });
        self.check(last.unwrap_or_default())
    }

    /// `text` as a JSON value valid against the schema, or what is wrong with it. A code
    /// fence around the JSON is forgiven (models writing to a prompt often add one).
    pub fn check(&self, text: &str) -> Result<Value, String> {
        let json = unfenced(text.trim());
        if json.is_empty() {
            return Err("the answer is empty; a JSON value was expected".to_string());
        }
        let value: Value = serde_json::from_str(json).map_err(|e| {
            let excerpt: String = json.chars().take(200).collect();
            let more = if json.chars().count() > 200 {
                "…"
            } else {
                ""
            };
            format!("the answer is not JSON ({e}): {excerpt}{more}")
        })?;
        let problems = crate::validate::schema_problems(&self.schema, &value)?;
        if problems.is_empty() {
            Ok(value)
        } else {
            Err(format!(
                "the answer does not match the schema:\n{}",
                problems.join("\n")
            ))
        }
    }

    /// The user message that asks for a corrected answer, saying what was wrong.
    pub fn retry_message(&self, problem: &str) -> Message {
        Message::User(UserMessage::text(format!(
            "{RETRY_PREFIX} What is wrong: {problem}\n\nGive the corrected answer: only the \
             JSON value."
        )))
    }
}

/// Whether `text` is a request for a corrected answer ([`ResponseSchema::retry_message`]).
pub fn is_retry(text: &str) -> bool {
    text.starts_with(RETRY_PREFIX)
}

/// `title` as a wire name: letters, digits, `_` and `-`, others become `_`.
fn wire_name(title: &str) -> String {
    title
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(MAX_NAME)
        .collect()
}

/// The JSON inside one code fence (```` ```json … ``` ````), or `text` as it is.
fn unfenced(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let Some(body) = rest.strip_suffix("```") else {
        return text;
    };
    // The fence's first line names the language.
    match body.split_once('\n') {
        Some((_, inner)) => inner.trim(),
        None => text,
    }
}

/// Whether every object schema within `schema` is closed and requires all its properties.
fn closed_everywhere(schema: &Value) -> bool {
    let Value::Object(map) = schema else {
        return true;
    };
    if let Some(Value::Object(props)) = map.get("properties") {
        if map.get("additionalProperties") != Some(&Value::Bool(false)) {
            return false;
        }
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if !props.keys().all(|k| required.contains(&k.as_str())) {
            return false;
        }
    } else if map.get("type").and_then(Value::as_str) == Some("object")
        && map.get("additionalProperties") != Some(&Value::Bool(false))
    {
        return false;
    }
    map.iter().all(|(key, value)| match (key.as_str(), value) {
        // Where subschemas sit; other keys (enum, const, default…) hold data, not schemas.
        ("properties" | "$defs" | "definitions" | "patternProperties", Value::Object(subs)) => {
            subs.values().all(closed_everywhere)
        }
        ("items" | "additionalProperties" | "not" | "contains", sub) => closed_everywhere(sub),
        ("anyOf" | "allOf" | "oneOf" | "prefixItems", Value::Array(subs)) => {
            subs.iter().all(closed_everywhere)
        }
        _ => true,
    })
}

#[cfg(test)]
mod tests;
