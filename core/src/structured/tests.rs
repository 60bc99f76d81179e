#![allow(clippy::unwrap_used)]

use serde_json::json;

use super::*;

fn person() -> ResponseSchema {
    ResponseSchema::new(json!({
        "title": "A person",
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
        "required": ["name", "age"],
        "additionalProperties": false
    }))
    .unwrap()
}

#[test]
fn a_valid_answer_is_its_value_with_or_without_a_fence() {
    let schema = person();
    let value = json!({"name": "Ada", "age": 36});
    assert_eq!(
        schema.check(r#"{"name": "Ada", "age": 36}"#),
        Ok(value.clone())
    );
    assert_eq!(
        schema.check("\n```json\n{\"name\": \"Ada\", \"age\": 36}\n```\n"),
        Ok(value.clone())
    );
    assert_eq!(
        schema.check("```\n{\"name\":\"Ada\",\"age\":36}```"),
        Ok(value)
    );
}

#[test]
fn a_wrong_answer_says_where_and_why() {
    let schema = person();
    let err = schema.check(r#"{"name": "Ada", "age": -1}"#).unwrap_err();
    assert!(
        err.starts_with("the answer does not match the schema:\n"),
        "{err}"
    );
    assert!(err.contains("/age"), "{err}");
    let err = schema.check(r#"{"name": 7}"#).unwrap_err();
    assert!(err.contains("\"age\" is a required property"), "{err}");
    assert!(err.contains("/name"), "{err}");
    let err = schema
        .check("Sure! Here it is: {\"name\": \"Ada\"}")
        .unwrap_err();
    assert!(err.starts_with("the answer is not JSON ("), "{err}");
    assert!(
        err.ends_with("Sure! Here it is: {\"name\": \"Ada\"}"),
        "{err}"
    );
    assert_eq!(
        schema.check("  \n"),
        Err("the answer is empty; a JSON value was expected".to_string())
    );
}

#[test]
fn the_retry_message_carries_the_problem_and_is_recognised() {
    let schema = person();
    let Message::User(user) = schema.retry_message("the answer is empty") else {
        panic!("a retry is a user message");
    };
    let text = user.content.text();
    assert!(is_retry(&text), "{text}");
    assert!(
        text.contains("What is wrong: the answer is empty"),
        "{text}"
    );
    assert!(!is_retry("Your answer is fine."));
}

#[test]
fn schemas_that_cannot_be_used_are_refused() {
    assert_eq!(
        ResponseSchema::new(json!([1, 2])),
        Err(SchemaError::NotAnObject("an array"))
    );
    let err = ResponseSchema::new(json!({"type": "no-such-type"})).unwrap_err();
    assert!(matches!(err, SchemaError::Invalid(_)), "{err:?}");
}

#[test]
fn names_come_from_the_title_made_safe() {
    assert_eq!(person().name(), "A_person");
    let untitled = ResponseSchema::new(json!({"type": "object"})).unwrap();
    assert_eq!(untitled.name(), "answer");
    let long = ResponseSchema::new(json!({"title": "x".repeat(100)})).unwrap();
    assert_eq!(long.name().len(), 64);
    assert_eq!(untitled.retries(), DEFAULT_RETRIES);
    assert_eq!(untitled.with_retries(0).retries(), 0);
}

#[test]
fn only_object_roots_go_native_and_only_where_the_model_has_it() {
    let mut model = Model::openai_compatible("p", "m", "http://x");
    assert!(person().native_for(&model));
    let list = ResponseSchema::new(json!({"type": "array", "items": {"type": "string"}})).unwrap();
    assert!(!list.native_for(&model));
    let implicit = ResponseSchema::new(json!({"properties": {"a": {}}})).unwrap();
    assert!(implicit.native_for(&model));
    model.structured_output = StructuredOutputFormat::Prompt;
    assert!(!person().native_for(&model));
    assert!(
        person()
            .prompt_instructions()
            .contains("\"additionalProperties\": false")
    );
}

#[test]
fn strict_mode_needs_every_object_closed_and_fully_required() {
    assert!(person().strict_compatible());
    let open = ResponseSchema::new(json!({
        "type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]
    }))
    .unwrap();
    assert!(!open.strict_compatible());
    let optional = ResponseSchema::new(json!({
        "type": "object", "properties": {"a": {"type": "string"}}, "required": [],
        "additionalProperties": false
    }))
    .unwrap();
    assert!(!optional.strict_compatible());
    let nested_open = ResponseSchema::new(json!({
        "type": "object",
        "properties": {"items": {"type": "array", "items": {
            "type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]}}},
        "required": ["items"],
        "additionalProperties": false
    }))
    .unwrap();
    assert!(!nested_open.strict_compatible());
}
