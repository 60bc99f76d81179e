//! Provider tests over real HTTP against the scripted model server, for both wire formats.

use std::time::Duration;

use march_testkit::{Event, Script, ScriptStop, ScriptUsage, ScriptedServer, Turn};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::message::{AssistantContent, AssistantMessage, UserContent};
use crate::model::ReasoningFormat;

const BOTH: [Api; 2] = [Api::OpenAiCompletions, Api::AnthropicMessages];

fn model(api: Api, server: &ScriptedServer) -> Model {
    match api {
        Api::OpenAiCompletions => Model::openai_compatible("scripted", "m1", &server.base_url()),
        Api::AnthropicMessages => Model::anthropic("scripted", "m1", &server.base_url()),
    }
}

/// Where a model's requests go.
fn endpoint(m: &Model) -> String {
    match m.api {
        Api::OpenAiCompletions => format!("{}/chat/completions", m.base_url),
        Api::AnthropicMessages => format!("{}/messages", m.base_url),
    }
}

fn opts() -> StreamOptions {
    StreamOptions {
        api_key: Some("test-key".into()),
        retry: RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_secs(5),
        },
        ..StreamOptions::default()
    }
}

fn context() -> LlmContext {
    LlmContext {
        system_prompt: "sys".into(),
        messages: vec![Message::user("hi")],
        tools: vec![ToolSpec {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type":"object","properties":{"path":{"type":"string"}}}),
        }],
        response_schema: None,
    }
}

async fn collect(
    turns: Vec<Turn>,
    api: Api,
    options: StreamOptions,
) -> (Vec<AssistantStreamEvent>, AssistantMessage, ScriptedServer) {
    let server = ScriptedServer::start(Script::new(turns)).await.unwrap();
    let m = model(api, &server);
    let (events, last) = drain(&m, options, CancellationToken::new()).await;
    (events, last, server)
}

async fn drain(
    m: &Model,
    options: StreamOptions,
    cancel: CancellationToken,
) -> (Vec<AssistantStreamEvent>, AssistantMessage) {
    let provider = HttpProvider::new().unwrap();
    let mut stream = provider.stream(m, context(), options, cancel);
    let mut events = Vec::new();
    while let Some(ev) = stream.next().await {
        let terminal = match &ev {
            AssistantStreamEvent::Done { message, .. } => Some(message.clone()),
            AssistantStreamEvent::Error { error, .. } => Some(error.clone()),
            _ => None,
        };
        events.push(ev);
        if let Some(msg) = terminal {
            assert!(
                stream.next().await.is_none(),
                "nothing after the terminal event"
            );
            return (events, msg);
        }
    }
    panic!("stream ended without a terminal event: {events:?}");
}

fn kinds(events: &[AssistantStreamEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

#[tokio::test]
async fn text_thinking_tool_args_and_usage_on_both_wires() {
    for api in BOTH {
        let turn = Turn::stream(vec![
            Event::thinking_signed("let me think", "sig"),
            Event::text("Reading "),
            Event::text("it."),
            Event::tool_call("call_1", "read", &["{\"pa", "th\": \"src/", "main.rs\"}"]),
        ])
        .with_usage(ScriptUsage {
            input: 100,
            output: 20,
            cache_read: 30,
            cache_write: 0,
        });
        let (events, msg, server) = collect(vec![turn], api, opts()).await;
        assert_eq!(
            kinds(&events),
            [
                "start",
                "thinking_start",
                "thinking_delta",
                "thinking_end",
                "text_start",
                "text_delta",
                "text_delta",
                "text_end",
                "toolcall_start",
                "toolcall_delta",
                "toolcall_delta",
                "toolcall_delta",
                "toolcall_end",
                "done"
            ],
            "{api:?}"
        );
        assert_eq!(msg.stop_reason, StopReason::ToolUse);
        assert_eq!(msg.text(), "Reading it.");
        let tc = msg.tool_calls().next().unwrap();
        assert_eq!((tc.id.as_str(), tc.name.as_str()), ("call_1", "read"));
        assert_eq!(tc.arguments, json!({"path": "src/main.rs"}));
        let AssistantContent::Thinking(t) = &msg.content[0] else {
            panic!()
        };
        assert_eq!(t.thinking, "let me think");
        if api == Api::AnthropicMessages {
            assert_eq!(t.thinking_signature.as_deref(), Some("sig"));
        }
        assert_eq!(
            (msg.usage.input, msg.usage.output, msg.usage.cache_read),
            (100, 20, 30)
        );
        assert_eq!(msg.usage.total_tokens, 150);
        assert!(msg.response_id.is_some());
        // What was sent: auth, stream flag, tools.
        let req = &server.requests()[0];
        assert_eq!(req.body["stream"], true);
        match api {
            Api::OpenAiCompletions => {
                assert_eq!(req.header("authorization"), Some("Bearer test-key"));
                assert_eq!(
                    req.body["messages"][0],
                    json!({"role":"system","content":"sys"})
                );
                assert_eq!(req.body["tools"][0]["function"]["name"], "read");
            }
            Api::AnthropicMessages => {
                assert_eq!(req.header("x-api-key"), Some("test-key"));
                assert_eq!(req.header("anthropic-version"), Some("2023-06-01"));
                assert_eq!(req.body["system"][0]["text"], "sys");
                assert_eq!(req.body["tools"][0]["input_schema"]["type"], "object");
            }
        }
    }
}

#[tokio::test]
async fn retries_honour_retry_after_then_succeed() {
    for api in BOTH {
        for status in [429, 500, 503] {
            let turns = vec![Turn::status(status).with_retry_after("0"), Turn::text("ok")];
            let (_, msg, server) = collect(turns, api, opts()).await;
            assert_eq!(msg.stop_reason, StopReason::Stop, "{api:?} {status}");
            assert_eq!(msg.text(), "ok");
            assert_eq!(server.requests().len(), 2);
        }
    }
}

#[tokio::test]
async fn retries_give_up_with_the_last_error() {
    for api in BOTH {
        let turns = vec![Turn::status(500), Turn::status(500), Turn::status(500)];
        let (events, msg, server) = collect(turns, api, opts()).await;
        assert_eq!(kinds(&events), ["error"]);
        assert_eq!(msg.stop_reason, StopReason::Error);
        assert!(!msg.refused && !msg.answered());
        assert_eq!(
            msg.error_message.unwrap(),
            format!(
                "HTTP 500 Internal Server Error from {}: scripted status 500; the server \
                 itself failed (try again later, or see its log)",
                endpoint(&model(api, &server))
            )
        );
        assert_eq!(server.requests().len(), 3, "one try plus two retries");
    }
}

#[tokio::test]
async fn a_retry_after_longer_than_allowed_fails_at_once() {
    let mut o = opts();
    o.retry.max_delay = Duration::from_secs(1);
    let (_, msg, server) = collect(
        vec![Turn::status(429).with_retry_after("120"), Turn::text("no")],
        Api::OpenAiCompletions,
        o,
    )
    .await;
    assert_eq!(server.requests().len(), 1);
    assert!(
        msg.error_message
            .unwrap()
            .contains("server asked to retry after 120s"),
    );
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    for api in BOTH {
        let (_, msg, server) =
            collect(vec![Turn::status(401), Turn::text("no")], api, opts()).await;
        assert_eq!(msg.stop_reason, StopReason::Error);
        assert_eq!(server.requests().len(), 1);
        assert_eq!(
            msg.error_message.unwrap(),
            format!(
                "HTTP 401 Unauthorized from {}: scripted status 401; is the API key right?",
                endpoint(&model(api, &server))
            )
        );
    }
}

#[tokio::test]
async fn a_connection_dropped_mid_stream_keeps_the_partial_and_is_not_retried() {
    for api in BOTH {
        let turns = vec![
            Turn::stream(vec![Event::text("half an ans"), Event::Drop]),
            Turn::text("second try must not happen"),
        ];
        let (events, msg, server) = collect(turns, api, opts()).await;
        assert_eq!(kinds(&events).last().unwrap(), "error");
        assert_eq!(msg.stop_reason, StopReason::Error);
        assert_eq!(msg.text(), "half an ans");
        assert!(
            msg.error_message
                .as_deref()
                .unwrap()
                .contains("connection lost mid-stream")
                || msg
                    .error_message
                    .as_deref()
                    .unwrap()
                    .contains("ended before"),
            "{:?}",
            msg.error_message
        );
        assert_eq!(server.requests().len(), 1, "no retry after the first token");
    }
}

#[tokio::test]
async fn a_drop_before_any_content_is_retried() {
    for api in BOTH {
        let turns = vec![Turn::stream(vec![Event::Drop]), Turn::text("ok")];
        let (_, msg, server) = collect(turns, api, opts()).await;
        assert_eq!(msg.text(), "ok", "{api:?}");
        assert_eq!(server.requests().len(), 2);
    }
}

#[tokio::test]
async fn a_body_cut_off_mid_chunk_is_an_error_with_the_partial() {
    for api in BOTH {
        let turns = vec![Turn::stream(vec![Event::text("abc"), Event::CutChunk])];
        let (_, msg, _) = collect(turns, api, opts()).await;
        assert_eq!(msg.stop_reason, StopReason::Error);
        assert_eq!(msg.text(), "abc");
    }
}

#[tokio::test]
async fn malformed_sse_data_is_a_clear_error() {
    for api in BOTH {
        let turns = vec![Turn::stream(vec![
            Event::text("ok so far"),
            Event::raw_line("data: {not json"),
        ])];
        let (_, msg, _) = collect(turns, api, opts()).await;
        assert_eq!(msg.stop_reason, StopReason::Error);
        let err = msg.error_message.clone().unwrap();
        assert!(err.starts_with("malformed stream data from"), "{err}");
        assert!(err.contains("{not json"), "{err}");
        assert_eq!(msg.text(), "ok so far");
    }
}

#[tokio::test]
async fn unknown_events_and_junk_lines_are_ignored() {
    for api in BOTH {
        let turns = vec![Turn::stream(vec![
            Event::unknown("response.future_thing"),
            Event::raw_line(": keep-alive comment"),
            Event::raw_line("retry: 100"),
            Event::text("fine"),
        ])];
        let (_, msg, _) = collect(turns, api, opts()).await;
        assert_eq!(msg.stop_reason, StopReason::Stop, "{:?}", msg.error_message);
        assert_eq!(msg.text(), "fine");
    }
}

#[tokio::test]
async fn non_utf8_bytes_are_replaced_not_fatal() {
    let server = ScriptedServer::start(Script::new(vec![Turn::stream(vec![Event::raw_bytes(
        b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\xff\xfeb\"}}]}\n\n".to_vec(),
    )])]))
    .await
    .unwrap();
    let m = model(Api::OpenAiCompletions, &server);
    let (_, msg) = drain(&m, opts(), CancellationToken::new()).await;
    assert_eq!(msg.text(), "a\u{fffd}\u{fffd}b");
    assert_eq!(msg.stop_reason, StopReason::Stop);
}

#[tokio::test]
async fn an_html_error_page_is_summarised() {
    for api in BOTH {
        let page = "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>nginx</h1></body></html>";
        let turns = vec![
            Turn::html(502, page),
            Turn::html(502, page),
            Turn::html(502, page),
        ];
        let (_, msg, server) = collect(turns, api, opts()).await;
        let said = msg.error_message.unwrap();
        let want = format!(
            "HTTP 502 Bad Gateway from {}: 502 Bad Gateway;",
            endpoint(&model(api, &server))
        );
        assert!(said.starts_with(&want), "{said}");
    }
}

#[tokio::test]
async fn tool_arguments_that_are_not_json_are_kept_for_the_error_result() {
    for api in BOTH {
        let turns = vec![Turn::stream(vec![Event::tool_call(
            "c",
            "read",
            &["{\"path\": oops"],
        )])];
        let (_, msg, _) = collect(turns, api, opts()).await;
        let tc = msg.tool_calls().next().unwrap();
        assert_eq!(tc.arguments[INVALID_ARGUMENTS_KEY], "{\"path\": oops");
    }
}

#[tokio::test]
async fn length_and_refusal_stops_map_like_pi() {
    for api in BOTH {
        let (_, msg, _) = collect(
            vec![Turn::text("trunc").with_stop(ScriptStop::Length)],
            api,
            opts(),
        )
        .await;
        assert_eq!(msg.stop_reason, StopReason::Length);
        assert!(!msg.refused);
        // Anthropic's `refusal` stop reason, OpenAI's `content_filter` finish.
        let (_, msg, _) = collect(
            vec![Turn::text("no").with_stop(ScriptStop::Refusal)],
            api,
            opts(),
        )
        .await;
        assert_eq!(msg.stop_reason, StopReason::Error);
        assert!(msg.refused, "{api:?}: {:?}", msg.error_message);
        assert!(msg.answered());
    }
}

#[tokio::test]
async fn an_openai_refusal_field_is_a_refusal_whose_words_are_kept() {
    let refusal = r#"data: {"id":"r1","choices":[{"index":0,"delta":{"refusal":"I can't help with that."}}]}"#;
    let (_, msg, _) = collect(
        vec![Turn::stream(vec![Event::raw_line(refusal)])],
        Api::OpenAiCompletions,
        opts(),
    )
    .await;
    assert_eq!(msg.stop_reason, StopReason::Error);
    assert!(msg.refused);
    assert_eq!(msg.text(), "I can't help with that.");
    assert_eq!(
        msg.error_message.as_deref(),
        Some("the model refused to answer")
    );
}

#[tokio::test]
async fn abort_during_a_slow_stream() {
    for api in BOTH {
        let server = ScriptedServer::start(Script::new(vec![
            Turn::stream(vec![Event::text("a"), Event::text("b"), Event::text("c")])
                .with_delay(60_000),
        ]))
        .await
        .unwrap();
        let m = model(api, &server);
        let cancel = CancellationToken::new();
        let provider = HttpProvider::new().unwrap();
        let mut stream = provider.stream(&m, context(), opts(), cancel.clone());
        let mut last = None;
        while let Some(ev) = stream.next().await {
            if matches!(ev, AssistantStreamEvent::TextDelta { .. }) {
                cancel.cancel();
            }
            if let AssistantStreamEvent::Error { error, reason } = &ev {
                assert_eq!(*reason, StopReason::Aborted);
                last = Some(error.clone());
            }
        }
        let msg = last.expect("an aborted error event");
        assert_eq!(msg.error_message.as_deref(), Some("Request was aborted"));
        assert_eq!(msg.text(), "a");
    }
}

#[tokio::test]
async fn abort_before_the_response_arrives() {
    let server = ScriptedServer::start(Script::new(vec![Turn::text("x")]))
        .await
        .unwrap();
    let m = model(Api::AnthropicMessages, &server);
    let cancel = CancellationToken::new();
    cancel.cancel();
    let (events, msg) = drain(&m, opts(), cancel).await;
    assert_eq!(kinds(&events), ["error"]);
    assert_eq!(msg.stop_reason, StopReason::Aborted);
}

#[tokio::test]
async fn a_server_that_is_not_running_is_connection_refused_not_a_refusal() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let base = format!("http://127.0.0.1:{port}/v1");
    for m in [
        Model::openai_compatible("x", "m", &base),
        Model::anthropic("x", "m", &base),
    ] {
        let mut o = opts();
        o.retry = RetryPolicy::none();
        let (events, msg) = drain(&m, o, CancellationToken::new()).await;
        assert_eq!(kinds(&events), ["error"]);
        assert_eq!(msg.stop_reason, StopReason::Error);
        assert!(!msg.refused);
        assert!(!msg.answered(), "no model saw it: not a call");
        assert_eq!(
            msg.error_message.unwrap(),
            format!(
                "connection refused by {}; is the model server running, and is the base URL \
                 right?",
                endpoint(&m)
            )
        );
    }
}

#[tokio::test]
async fn a_host_that_does_not_resolve_says_so() {
    let m = Model::openai_compatible("x", "m", "http://nonexistent.invalid/v1");
    let mut o = opts();
    o.retry = RetryPolicy::none();
    let (_, msg) = drain(&m, o, CancellationToken::new()).await;
    let err = msg.error_message.unwrap();
    assert!(
        err.starts_with(
            "cannot look up the host of http://nonexistent.invalid/v1/chat/completions ("
        ),
        "{err}"
    );
    assert!(!msg.refused);
}

#[tokio::test]
async fn a_tcp_server_that_never_answers_times_out_naming_its_url() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    // Accepts and holds every connection without a byte of answer.
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            open.push(stream);
        }
    });
    let m = Model::anthropic("x", "m", &format!("http://127.0.0.1:{port}/v1"));
    let mut o = opts();
    o.retry = RetryPolicy::none();
    o.stall.first_byte = Duration::from_millis(200);
    let (_, msg) = drain(&m, o, CancellationToken::new()).await;
    held.abort();
    assert!(!msg.refused && !msg.answered());
    assert_eq!(
        msg.error_message.unwrap(),
        format!(
            "the model server at http://127.0.0.1:{port}/v1/messages did not answer for 0.2 s \
             (gave up after 1 attempt; [requests] in config.toml sets how long to wait)"
        )
    );
}

#[tokio::test]
async fn thinking_levels_map_per_provider_only_for_reasoning_models() {
    let server = ScriptedServer::start(Script::new(vec![])).await.unwrap();
    let base = server.base_url();
    let ctx = context();
    let with = |level| StreamOptions {
        thinking: level,
        ..StreamOptions::default()
    };
    let mut o = Model::openai_compatible("openai", "o3", &base);
    assert!(
        openai::request(&o, &ctx, &with(ThinkingLevel::High))
            .body
            .get("reasoning_effort")
            .is_none(),
        "non-reasoning models get no reasoning parameters"
    );
    o.reasoning = true;
    let effort = |m: &Model, l| openai::request(m, &ctx, &with(l)).body;
    assert_eq!(
        effort(&o, ThinkingLevel::Minimal)["reasoning_effort"],
        "minimal"
    );
    assert_eq!(effort(&o, ThinkingLevel::Xhigh)["reasoning_effort"], "high");
    assert!(
        effort(&o, ThinkingLevel::Off)
            .get("reasoning_effort")
            .is_none()
    );
    let mut ds = Model::openai_compatible("deepseek", "deepseek-reasoner", &base);
    ds.reasoning = true;
    ds.reasoning_format = ReasoningFormat::Deepseek;
    assert_eq!(
        effort(&ds, ThinkingLevel::Off)["thinking"],
        json!({"type":"disabled"})
    );
    assert_eq!(
        effort(&ds, ThinkingLevel::Medium)["thinking"],
        json!({"type":"enabled"})
    );
    let mut or = Model::openai_compatible("openrouter", "x/y", &base);
    or.reasoning = true;
    or.reasoning_format = ReasoningFormat::OpenRouter;
    assert_eq!(
        effort(&or, ThinkingLevel::Low)["reasoning"],
        json!({"effort":"low"})
    );
    let mut claude = Model::anthropic("anthropic", "claude", &base);
    claude.reasoning = true;
    let body = anthropic::request(&claude, &ctx, &with(ThinkingLevel::Medium)).body;
    assert_eq!(
        body["thinking"],
        json!({"type":"enabled","budget_tokens":10240})
    );
    assert!(body["max_tokens"].as_u64().unwrap() > 10240);
    let body = anthropic::request(&claude, &ctx, &with(ThinkingLevel::Off)).body;
    assert!(body.get("thinking").is_none());
}

#[tokio::test]
async fn tool_results_and_images_are_sent_in_each_wire_shape() {
    let server = ScriptedServer::start(Script::new(vec![])).await.unwrap();
    let base = server.base_url();
    let m = Model::anthropic("anthropic", "c", &base);
    let mut a = AssistantMessage::empty(&m);
    a.content
        .push(AssistantContent::ToolCall(crate::message::ToolCall {
            id: "t1".into(),
            name: "read".into(),
            arguments: json!({"path": "a.png"}),
            thought_signature: None,
        }));
    a.stop_reason = StopReason::ToolUse;
    let image = UserContent::Image(crate::message::ImageContent {
        data: "QUJD".into(),
        mime_type: "image/png".into(),
    });
    let ctx = LlmContext {
        messages: vec![
            Message::user("look"),
            Message::Assistant(a),
            Message::ToolResult(crate::message::ToolResultMessage {
                tool_call_id: "t1".into(),
                tool_name: "read".into(),
                content: vec![UserContent::text("an image"), image],
                details: serde_json::Value::Null,
                is_error: false,
                timestamp: 0,
                usage: None,
            }),
        ],
        ..LlmContext::default()
    };
    let body = anthropic::request(&m, &ctx, &StreamOptions::default()).body;
    let result = &body["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["content"][1]["source"]["data"], "QUJD");
    let mut o = Model::openai_compatible("openai", "gpt", &base);
    o.images = true;
    let body = openai::request(&o, &ctx, &StreamOptions::default()).body;
    let msgs = body["messages"].as_array().unwrap();
    assert_eq!(
        msgs[2],
        json!({"role":"tool","tool_call_id":"t1","content":"an image"})
    );
    assert_eq!(
        msgs[3]["content"][1]["image_url"]["url"],
        "data:image/png;base64,QUJD"
    );
}

#[test]
fn partial_json_scratch_is_not_sent_and_events_serialize_with_pi_names() {
    let ev = AssistantStreamEvent::ToolCallDelta {
        content_index: 2,
        delta: "{".into(),
    };
    assert_eq!(
        serde_json::to_value(&ev).unwrap(),
        json!({"type":"toolcall_delta","contentIndex":2,"delta":"{"})
    );
}

#[derive(Default)]
struct Observer {
    seen: std::sync::Mutex<Vec<String>>,
}

impl PayloadObserver for Observer {
    fn on_payload(&self, model: &Model, payload: &serde_json::Value) {
        self.seen
            .lock()
            .unwrap()
            .push(format!("payload {} {}", model.id, payload["model"]));
    }
    fn on_response(&self, _model: &Model, status: u16, _headers: &HeaderMap) {
        self.seen.lock().unwrap().push(format!("response {status}"));
    }
}

#[tokio::test]
async fn observers_see_the_payload_once_and_every_response() {
    let observer = std::sync::Arc::new(Observer::default());
    let mut o = opts();
    o.observer = Some(observer.clone());
    let (_, msg, _) = collect(
        vec![Turn::status(503).with_retry_after("0"), Turn::text("ok")],
        Api::OpenAiCompletions,
        o,
    )
    .await;
    assert_eq!(msg.text(), "ok");
    assert_eq!(
        *observer.seen.lock().unwrap(),
        ["payload m1 \"m1\"", "response 503", "response 200"]
    );
}

#[tokio::test]
async fn a_server_that_goes_silent_fails_the_request_instead_of_hanging() {
    for api in BOTH {
        let mut o = opts();
        o.stall.idle = Duration::from_millis(200);
        o.retry = RetryPolicy::none();
        let turns = vec![Turn::stream(vec![
            Event::text("so far"),
            Event::pause(60_000),
        ])];
        let (_, msg, server) = collect(turns, api, o).await;
        assert_eq!(msg.stop_reason, StopReason::Error);
        assert_eq!(msg.text(), "so far");
        assert!(msg.answered(), "part of an answer came");
        assert_eq!(
            msg.error_message.unwrap(),
            format!(
                "the model server at {} went silent for 0.2 s in the middle of its answer \
                 (gave up after 1 attempt; [requests] in config.toml sets how long to wait)",
                endpoint(&model(api, &server))
            )
        );
    }
}

#[tokio::test]
async fn a_server_that_never_answers_is_tried_again_once_then_the_turn_ends() {
    for api in BOTH {
        let mut o = opts();
        o.stall.first_byte = Duration::from_millis(300);
        // Plenty of ordinary retries: the stall cap is what stops it.
        o.retry.max_retries = 5;
        let turns = vec![Turn::Silent, Turn::Silent, Turn::text("never reached")];
        let (_, msg, server) = collect(turns, api, o).await;
        assert_eq!(msg.stop_reason, StopReason::Error);
        assert_eq!(
            msg.error_message.unwrap(),
            format!(
                "the model server at {} did not answer for 0.3 s \
                 (gave up after 2 attempts; [requests] in config.toml sets how long to wait)",
                endpoint(&model(api, &server))
            )
        );
        assert_eq!(server.requests().len(), 2);
    }
}

#[tokio::test]
async fn keepalive_comments_keep_a_quiet_stream_alive() {
    let mut o = opts();
    o.stall.idle = Duration::from_secs(2);
    o.retry = RetryPolicy::none();
    // Ten keepalives 300 ms apart: three seconds in all, longer than the idle limit.
    let mut events = vec![Event::text("thinking")];
    for _ in 0..10 {
        events.push(Event::pause(300));
        events.push(Event::raw_line(": keepalive"));
    }
    events.push(Event::text(" done"));
    let (_, msg, _) = collect(vec![Turn::stream(events)], Api::OpenAiCompletions, o).await;
    assert_eq!(msg.stop_reason, StopReason::Stop, "{:?}", msg.error_message);
    assert_eq!(msg.text(), "thinking done");
}

#[tokio::test]
async fn cancel_while_waiting_for_a_silent_server_ends_at_once() {
    let server = ScriptedServer::start(Script::new(vec![Turn::Silent]))
        .await
        .unwrap();
    let m = model(Api::OpenAiCompletions, &server);
    let cancel = CancellationToken::new();
    let provider = HttpProvider::new().unwrap();
    let mut stream = provider.stream(&m, context(), opts(), cancel.clone());
    // Cancel once the server holds the request (the default wait is minutes).
    tokio::time::timeout(Duration::from_secs(30), server.wait_for_requests(1))
        .await
        .expect("the request never reached the server");
    cancel.cancel();
    let last = tokio::time::timeout(Duration::from_secs(30), async {
        let mut last = None;
        while let Some(ev) = stream.next().await {
            last = Some(ev);
        }
        last
    })
    .await
    .expect("the stream did not end after cancel");
    match last {
        Some(AssistantStreamEvent::Error { error, .. }) => {
            assert_eq!(error.stop_reason, StopReason::Aborted)
        }
        other => panic!("expected an aborted error, got {other:?}"),
    }
}
