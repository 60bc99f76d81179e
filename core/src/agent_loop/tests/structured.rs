//! Structured output: the wire shapes each model gets, and the bounded retry with the
//! validation error, against the scripted server.

use super::*;
use crate::model::StructuredOutputFormat;
use crate::structured::{ResponseSchema, is_retry};

fn point() -> ResponseSchema {
    ResponseSchema::new(json!({
        "title": "point",
        "type": "object",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
        "required": ["x", "y"],
        "additionalProperties": false
    }))
    .unwrap()
}

fn with_schema(server: &ScriptedServer, anthropic: bool, schema: ResponseSchema) -> LoopConfig {
    let mut config = config(server, anthropic);
    config.response_schema = Some(schema);
    config
}

/// The text of a user message.
fn user_text(message: &Message) -> Option<String> {
    match message {
        Message::User(u) => Some(u.content.text()),
        _ => None,
    }
}

/// The text of the last message of a recorded request (OpenAI wire).
fn last_text(body: &Value) -> String {
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    match &last["content"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[tokio::test]
async fn a_failing_answer_is_asked_for_again_with_the_error() {
    let s = server(vec![
        Turn::text(r#"{"x": 1}"#),
        Turn::text(r#"{"x": 1, "y": 2}"#),
    ])
    .await;
    let mut rec = Recorder::new();
    let new = run(
        "where?",
        ctx(vec![]),
        with_schema(&s, false, point()),
        &mut rec,
    )
    .await;
    let reqs = s.requests();
    assert_eq!(reqs.len(), 2);
    // OpenAI's own shape, strict since every object is closed and fully required.
    let format = &reqs[0].body["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "point");
    assert_eq!(format["json_schema"]["strict"], true);
    assert_eq!(format["json_schema"]["schema"], *point().schema());
    assert!(
        !reqs[0].body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("JSON Schema")
    );
    let retry = last_text(&reqs[1].body);
    assert!(is_retry(&retry), "{retry}");
    assert!(retry.contains("\"y\" is a required property"), "{retry}");
    // prompt, answer, retry, answer; the retry is shown like any injected message.
    assert_eq!(new.len(), 4);
    assert!(is_retry(&user_text(&new[2]).unwrap()));
    let answer = new[3].as_assistant().unwrap();
    assert_eq!(point().check_message(answer), Ok(json!({"x": 1, "y": 2})));
    assert_eq!(
        rec.labels()
            .iter()
            .filter(|l| *l == "message_end user")
            .count(),
        2
    );
}

#[tokio::test]
async fn retries_are_bounded_and_the_last_answer_stays() {
    let s = server(vec![
        Turn::text("no JSON here"),
        Turn::text(r#"{"x": "one", "y": 2}"#),
        Turn::text("never reached"),
    ])
    .await;
    let mut rec = Recorder::new();
    let config = with_schema(&s, false, point().with_retries(1));
    let new = run("where?", ctx(vec![]), config, &mut rec).await;
    assert_eq!(s.requests().len(), 2, "one retry, then the run ends");
    assert!(last_text(&s.requests()[1].body).contains("the answer is not JSON"));
    let last = new.last().unwrap().as_assistant().unwrap();
    let err = point().check_message(last).unwrap_err();
    assert!(err.contains("/x"), "{err}");
    assert_eq!(rec.labels().last().unwrap(), "agent_end");
}

#[tokio::test]
async fn tools_run_before_the_answer_is_checked() {
    let s = server(vec![
        Turn::stream(vec![call("c1", 3)]),
        Turn::text(r#"{"x": 3, "y": 0}"#),
    ])
    .await;
    let mut rec = Recorder::new();
    let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(GateTool::new("t"))];
    let new = run("go", ctx(tools), with_schema(&s, false, point()), &mut rec).await;
    assert_eq!(s.requests().len(), 2);
    assert!(!new.iter().filter_map(user_text).any(|t| is_retry(&t)));
}

#[tokio::test]
async fn anthropic_is_made_to_call_an_answer_tool_whose_input_is_the_answer() {
    let s = server(vec![
        Turn::stream(vec![Event::tool_call(
            "toolu_1",
            "final_answer",
            &["{\"x\": 4, ", "\"y\": 5}"],
        )]),
        Turn::stream(vec![call("c1", 1)]),
        Turn::stream(vec![Event::tool_call(
            "toolu_2",
            "final_answer",
            &["{\"x\": 1, \"y\": 1}"],
        )]),
    ])
    .await;
    let mut rec = Recorder::new();
    let new = run(
        "where?",
        ctx(vec![]),
        with_schema(&s, true, point()),
        &mut rec,
    )
    .await;
    let body = &s.requests()[0].body;
    assert_eq!(
        body["tool_choice"],
        json!({"type": "tool", "name": "final_answer"})
    );
    let tools = body["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0]["input_schema"], *point().schema());
    // The call arrives as the answer's text: nothing to run, the turn ends.
    let answer = new[1].as_assistant().unwrap();
    assert_eq!(answer.stop_reason, StopReason::Stop);
    assert_eq!(answer.tool_calls().count(), 0);
    assert_eq!(answer.text(), "{\"x\": 4, \"y\": 5}");
    assert!(rec.labels().contains(&"update text_delta".to_string()));
    assert_eq!(new.len(), 2);

    // With tools of its own, some tool on every step; the answer tool ends the run.
    let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(GateTool::new("t"))];
    let mut rec = Recorder::new();
    let new = run("go", ctx(tools), with_schema(&s, true, point()), &mut rec).await;
    let body = &s.requests()[1].body;
    assert_eq!(body["tool_choice"], json!({"type": "any"}));
    assert_eq!(body["tools"].as_array().unwrap().len(), 2);
    let last = new.last().unwrap().as_assistant().unwrap();
    assert_eq!(point().check_message(last), Ok(json!({"x": 1, "y": 1})));
}

#[tokio::test]
async fn a_thinking_anthropic_model_is_told_to_call_the_answer_tool() {
    let s = server(vec![Turn::stream(vec![
        Event::text("Here it comes."),
        Event::tool_call("toolu_1", "final_answer", &["{\"x\": 0, \"y\": 0}"]),
    ])])
    .await;
    let mut config = with_schema(&s, true, point());
    config.model.reasoning = true;
    config.thinking = crate::model::ThinkingLevel::Low;
    let mut rec = Recorder::new();
    let new = run("where?", ctx(vec![]), config, &mut rec).await;
    let body = &s.requests()[0].body;
    assert!(
        body.get("tool_choice").is_none(),
        "thinking cannot force a tool"
    );
    let system = body["system"][0]["text"].as_str().unwrap();
    assert!(
        system.contains("calling the `final_answer` tool"),
        "{system}"
    );
    // Words before the call are not part of the answer.
    let answer = new[1].as_assistant().unwrap();
    assert_eq!(point().check_message(answer), Ok(json!({"x": 0, "y": 0})));
    assert_eq!(s.requests().len(), 1);
}

#[tokio::test]
async fn without_a_wire_shape_the_schema_goes_in_the_system_prompt() {
    let list = ResponseSchema::new(json!({"type": "array", "items": {"type": "string"}})).unwrap();
    let s = server(vec![
        Turn::text("```json\n[\"a\", \"b\"]\n```"),
        Turn::text("[]"),
    ])
    .await;
    // A root that is not an object, on a model that has the shape.
    let mut rec = Recorder::new();
    let new = run(
        "list",
        ctx(vec![]),
        with_schema(&s, false, list.clone()),
        &mut rec,
    )
    .await;
    let body = &s.requests()[0].body;
    assert!(body.get("response_format").is_none());
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with("be brief\n\nYour final answer must be one JSON value"));
    assert!(system.contains("\"items\""), "{system}");
    assert_eq!(
        list.check_message(new[1].as_assistant().unwrap()),
        Ok(json!(["a", "b"]))
    );
    // A model that has no shape at all (DeepSeek), even for an object.
    let mut config = with_schema(&s, false, point());
    config.model.structured_output = StructuredOutputFormat::Prompt;
    let mut rec = Recorder::new();
    run("where?", ctx(vec![]), config, &mut rec).await;
    let body = &s.requests()[1].body;
    assert!(body.get("response_format").is_none());
    assert!(
        body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("\"required\"")
    );
}
