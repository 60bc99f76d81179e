//! March's structured output over ACP: a `session/prompt` whose `_meta.march.responseSchema`
//! holds a JSON Schema gets a final answer valid against it (the model asked in its wire's own
//! shape, a failing answer asked for again with what was wrong), and its answer carries the
//! value, or the last validation error, in `_meta.march.structuredOutput`. Each request for a
//! corrected answer reaches the client as a `user_message_chunk` marked
//! `_meta.march.schemaRetry`. See `docs/PROTOCOL.md`.

use agent_client_protocol::v1::schema::{ContentChunk, PromptResponse};
use march_core::structured::ResponseSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The key under `_meta.march` of a prompt that asks for structured output.
pub const PROMPT_KEY: &str = "responseSchema";
/// The key under `_meta.march` of the prompt's answer.
pub const RESULT_KEY: &str = "structuredOutput";
/// The key under `_meta.march` of a `user_message_chunk` that asks for a corrected answer.
pub const RETRY_KEY: &str = "schemaRetry";

/// `_meta.march.responseSchema` of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SchemaRequest {
    /// The JSON Schema the final answer must match (an object at the top).
    pub schema: Value,
    /// Answers asked for again after a failing one (default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<u32>,
}

impl SchemaRequest {
    /// A request for `schema`, checked as the runner will check it.
    pub fn new(schema: Value, retries: Option<u32>) -> Result<Self, String> {
        ResponseSchema::new(schema.clone()).map_err(|e| e.to_string())?;
        Ok(SchemaRequest { schema, retries })
    }

    /// The `_meta` a client sends with its prompt.
    pub fn prompt_meta(&self) -> Map<String, Value> {
        let mut march = Map::new();
        march.insert(
            PROMPT_KEY.to_string(),
            serde_json::to_value(self).unwrap_or_default(),
        );
        let mut meta = Map::new();
        meta.insert("march".to_string(), Value::Object(march));
        meta
    }
}

/// `_meta.march.structuredOutput` of a prompt's answer: the value, or why there is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StructuredResult {
    /// The final answer, valid against the schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    /// What is wrong with the last answer, when no answer was valid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How many answers the model gave.
    pub answers: u32,
}

/// The schema a prompt's `_meta` asks for, if any; an error says what is wrong with it.
pub fn requested_schema(
    meta: Option<&Map<String, Value>>,
) -> Result<Option<ResponseSchema>, String> {
    let Some(request) = meta.and_then(|m| m.get("march")?.get(PROMPT_KEY)) else {
        return Ok(None);
    };
    let request: SchemaRequest = serde_json::from_value(request.clone())
        .map_err(|e| format!("_meta.march.{PROMPT_KEY}: {e}"))?;
    let schema = ResponseSchema::new(request.schema)
        .map_err(|e| format!("_meta.march.{PROMPT_KEY}: {e}"))?;
    Ok(Some(match request.retries {
        Some(retries) => schema.with_retries(retries),
        None => schema,
    }))
}

impl StructuredResult {
    /// The structured output a prompt's answer carries, if any.
    pub fn of(response: &PromptResponse) -> Option<StructuredResult> {
        let result = response.meta.as_ref()?.get("march")?.get(RESULT_KEY)?;
        serde_json::from_value(result.clone()).ok()
    }
}

/// Whether `chunk` is the runner asking for a corrected answer.
pub fn is_retry_chunk(chunk: &ContentChunk) -> bool {
    chunk
        .meta
        .as_ref()
        .and_then(|m| m.get("march")?.get(RETRY_KEY))
        .is_some_and(|v| v == &Value::Bool(true))
}

/// `response` with `value` at `_meta.march.KEY`, beside what `_meta.march` already holds.
pub fn with_march_meta(mut response: PromptResponse, key: &str, value: Value) -> PromptResponse {
    let meta = response.meta.get_or_insert_with(Default::default);
    let march = meta
        .entry("march")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(march) = march.as_object_mut() {
        march.insert(key.to_string(), value);
    }
    response
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use agent_client_protocol::v1::schema::StopReason;
    use serde_json::json;

    #[test]
    fn a_prompt_meta_round_trips_to_the_schema() {
        let request =
            SchemaRequest::new(json!({"type": "object", "title": "Plan"}), Some(1)).unwrap();
        let meta = request.prompt_meta();
        assert_eq!(
            Value::Object(meta.clone()),
            json!({"march": {"responseSchema": {"schema": {"type": "object", "title": "Plan"}, "retries": 1}}})
        );
        let schema = requested_schema(Some(&meta)).unwrap().unwrap();
        assert_eq!(schema.name(), "Plan");
        assert_eq!(schema.retries(), 1);
        assert_eq!(requested_schema(None), Ok(None));
        let other = json!({"march": {"preview": true}});
        assert_eq!(requested_schema(other.as_object()), Ok(None));
    }

    #[test]
    fn a_bad_schema_is_a_clear_error() {
        assert_eq!(
            SchemaRequest::new(json!("string"), None),
            Err("the schema must be a JSON object, not a string".to_string())
        );
        let meta = json!({"march": {"responseSchema": {"schema": [1]}}});
        let err = requested_schema(meta.as_object()).unwrap_err();
        assert_eq!(
            err,
            "_meta.march.responseSchema: the schema must be a JSON object, not an array"
        );
        let meta = json!({"march": {"responseSchema": {"retries": 1}}});
        let err = requested_schema(meta.as_object()).unwrap_err();
        assert!(err.contains("missing field `schema`"), "{err}");
    }

    #[test]
    fn the_result_sits_beside_other_march_meta() {
        let response = with_march_meta(
            PromptResponse::new(StopReason::EndTurn),
            "unsent",
            json!(["q1"]),
        );
        let result = StructuredResult {
            value: Some(json!({"a": 1})),
            error: None,
            answers: 2,
        };
        let response =
            with_march_meta(response, RESULT_KEY, serde_json::to_value(&result).unwrap());
        assert_eq!(StructuredResult::of(&response), Some(result));
        let meta = Value::Object(response.meta.unwrap());
        assert_eq!(meta["march"]["unsent"], json!(["q1"]));
        assert_eq!(
            StructuredResult::of(&PromptResponse::new(StopReason::EndTurn)),
            None
        );
    }
}
