//! Event-sequence tests: the loop against the scripted model server over real HTTP.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use march_testkit::{Event, Script, ScriptedServer, Turn};
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::event::{AssistantStreamEvent, ToolOutcome};
use crate::message::{AssistantContent, StopReason, UserContent};
use crate::provider::{HttpProvider, RetryPolicy};
use crate::tool::{Tool, ToolError, ToolUpdates};

// ---------- fixtures ----------

fn label(e: &AgentEvent) -> String {
    match e {
        AgentEvent::MessageStart { message } => format!("message_start {}", message.role()),
        AgentEvent::MessageEnd { message } => match message {
            Message::Assistant(a) => format!("message_end assistant {:?}", a.stop_reason),
            Message::ToolResult(r) => format!("message_end toolResult {}", r.tool_call_id),
            m => format!("message_end {}", m.role()),
        },
        AgentEvent::MessageUpdate {
            assistant_message_event,
            ..
        } => {
            let v = serde_json::to_value(assistant_message_event).unwrap();
            format!("update {}", v["type"].as_str().unwrap())
        }
        AgentEvent::ToolExecutionStart { tool_call_id, .. } => format!("tool_start {tool_call_id}"),
        AgentEvent::ToolExecutionUpdate { tool_call_id, .. } => {
            format!("tool_update {tool_call_id}")
        }
        AgentEvent::ToolExecutionEnd {
            tool_call_id,
            is_error,
            ..
        } => format!(
            "tool_end {tool_call_id}{}",
            if *is_error { " error" } else { "" }
        ),
        AgentEvent::TurnEnd { tool_results, .. } => format!("turn_end {}", tool_results.len()),
        e => e.kind().to_string(),
    }
}

type Trigger = Box<dyn FnMut(&AgentEvent) + Send>;

/// Records events and runs a trigger on each (to abort or steer at a precise point).
struct Recorder {
    events: Vec<AgentEvent>,
    trigger: Option<Trigger>,
}

#[async_trait]
impl EventSink for Recorder {
    async fn emit(&mut self, event: AgentEvent) {
        if let Some(t) = self.trigger.as_mut() {
            t(&event);
        }
        self.events.push(event);
    }
}

impl Recorder {
    fn new() -> Self {
        Recorder {
            events: Vec::new(),
            trigger: None,
        }
    }
    fn with(trigger: impl FnMut(&AgentEvent) + Send + 'static) -> Self {
        Recorder {
            events: Vec::new(),
            trigger: Some(Box::new(trigger)),
        }
    }
    fn labels(&self) -> Vec<String> {
        self.events.iter().map(label).collect()
    }
}

#[derive(Default)]
struct TestQueues {
    steering: Mutex<VecDeque<Message>>,
    follow_up: Mutex<VecDeque<Message>>,
}

impl MessageQueues for TestQueues {
    fn steering(&self) -> Vec<Message> {
        self.steering
            .lock()
            .unwrap()
            .pop_front()
            .into_iter()
            .collect()
    }
    fn follow_up(&self) -> Vec<Message> {
        self.follow_up
            .lock()
            .unwrap()
            .pop_front()
            .into_iter()
            .collect()
    }
}

/// A tool whose completion order is controlled by notifications, not time.
struct GateTool {
    name: String,
    wait_for: Option<Arc<Notify>>,
    signal: Option<Arc<Notify>>,
    updates: usize,
    terminate: bool,
    sequential: bool,
    hang: bool,
}

impl GateTool {
    fn new(name: &str) -> Self {
        GateTool {
            name: name.into(),
            wait_for: None,
            signal: None,
            updates: 0,
            terminate: false,
            sequential: false,
            hang: false,
        }
    }
}

fn schema() -> &'static Value {
    static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(
        || json!({"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}),
    )
}

#[async_trait]
impl Tool for GateTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        "test tool"
    }
    fn parameters(&self) -> &Value {
        schema()
    }
    fn execution_mode(&self) -> crate::tool::ExecutionMode {
        if self.sequential {
            crate::tool::ExecutionMode::Sequential
        } else {
            crate::tool::ExecutionMode::Parallel
        }
    }
    async fn execute(
        &self,
        _id: &str,
        args: Value,
        cancel: CancellationToken,
        updates: ToolUpdates,
    ) -> Result<ToolOutcome, ToolError> {
        for i in 0..self.updates {
            updates.text(format!("progress {i}"));
        }
        if self.hang {
            if let Some(s) = &self.signal {
                s.notify_one();
            }
            cancel.cancelled().await;
            return Err(ToolError::new("cancelled by the tool itself"));
        }
        if let Some(w) = &self.wait_for {
            w.notified().await;
        }
        if let Some(s) = &self.signal {
            s.notify_one();
        }
        let mut out = ToolOutcome::text(format!("{} got {}", self.name, args["x"]));
        out.terminate = self.terminate;
        Ok(out)
    }
}

async fn server(turns: Vec<Turn>) -> ScriptedServer {
    ScriptedServer::start(Script::new(turns)).await.unwrap()
}

fn config(server: &ScriptedServer, anthropic: bool) -> LoopConfig {
    let model = if anthropic {
        Model::anthropic("scripted", "scripted-model", &server.base_url())
    } else {
        Model::openai_compatible("scripted", "scripted-model", &server.base_url())
    };
    let mut c = LoopConfig::new(model, Arc::new(HttpProvider::new().unwrap()));
    c.stream_options.retry = RetryPolicy {
        max_retries: 2,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_secs(5),
    };
    c
}

fn ctx(tools: Vec<Arc<dyn Tool>>) -> LoopContext {
    LoopContext {
        system_prompt: "be brief".into(),
        messages: Vec::new(),
        tools,
    }
}

async fn run(
    prompt: &str,
    ctx: LoopContext,
    config: LoopConfig,
    rec: &mut Recorder,
) -> Vec<Message> {
    run_agent_loop(
        vec![Message::user(prompt)],
        ctx,
        config,
        CancellationToken::new(),
        rec,
        false,
    )
    .await
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// Labels of a text reply with `deltas` text deltas.
fn text_reply(deltas: usize, stop: &str) -> Vec<String> {
    let mut v = strs(&["message_start assistant", "update text_start"]);
    v.extend(std::iter::repeat_n("update text_delta".to_string(), deltas));
    v.push("update text_end".into());
    v.push(format!("message_end assistant {stop}"));
    v
}

/// Labels of a reply made only of tool calls, each streamed in `chunks` argument pieces.
fn tools_reply(chunks: &[usize]) -> Vec<String> {
    let mut v = strs(&["message_start assistant"]);
    for &n in chunks {
        v.push("update toolcall_start".into());
        v.extend(std::iter::repeat_n("update toolcall_delta".to_string(), n));
        v.push("update toolcall_end".into());
    }
    v.push("message_end assistant ToolUse".into());
    v
}

/// Concatenate label groups.
fn seq(parts: &[Vec<String>]) -> Vec<String> {
    parts.concat()
}

fn l(v: &[&str]) -> Vec<String> {
    strs(v)
}

fn result_msgs(ids: &[&str]) -> Vec<String> {
    ids.iter()
        .flat_map(|id| {
            [
                "message_start toolResult".to_string(),
                format!("message_end toolResult {id}"),
            ]
        })
        .collect()
}

const HEAD: [&str; 4] = [
    "agent_start",
    "turn_start",
    "message_start user",
    "message_end user",
];

fn call(id: &str, x: u32) -> Event {
    Event::tool_call(id, "t", &["{\"x\"", &format!(":{x}}}")])
}

// ---------- sequences ----------

#[tokio::test]
async fn pure_chat_on_both_wire_formats() {
    for anthropic in [false, true] {
        let s = server(vec![Turn::stream(vec![
            Event::text("Hel"),
            Event::text("lo"),
        ])])
        .await;
        let mut rec = Recorder::new();
        let new = run("hi", ctx(vec![]), config(&s, anthropic), &mut rec).await;
        assert_eq!(
            rec.labels(),
            seq(&[
                l(&HEAD),
                text_reply(2, "Stop"),
                l(&["turn_end 0", "agent_end"])
            ]),
            "anthropic={anthropic}"
        );
        assert_eq!(new.len(), 2);
        assert_eq!(new[1].as_assistant().unwrap().text(), "Hello");
        let AgentEvent::MessageUpdate { message, .. } = &rec.events[7] else {
            panic!()
        };
        assert_eq!(message.text(), "Hello", "partial carries the text so far");
    }
}

#[tokio::test]
async fn one_tool_then_answer() {
    let s = server(vec![
        Turn::stream(vec![Event::text("let me"), call("c1", 7)]),
        Turn::text("done"),
    ])
    .await;
    let mut rec = Recorder::new();
    let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(GateTool::new("t"))];
    let new = run("go", ctx(tools), config(&s, false), &mut rec).await;
    assert_eq!(
        rec.labels(),
        strs(&[
            "agent_start",
            "turn_start",
            "message_start user",
            "message_end user",
            "message_start assistant",
            "update text_start",
            "update text_delta",
            "update text_end",
            "update toolcall_start",
            "update toolcall_delta",
            "update toolcall_delta",
            "update toolcall_end",
            "message_end assistant ToolUse",
            "tool_start c1",
            "tool_end c1",
            "message_start toolResult",
            "message_end toolResult c1",
            "turn_end 1",
            "turn_start",
            "message_start assistant",
            "update text_start",
            "update text_delta",
            "update text_end",
            "message_end assistant Stop",
            "turn_end 0",
            "agent_end",
        ])
    );
    let Message::ToolResult(r) = &new[2] else {
        panic!()
    };
    assert_eq!(r.content, vec![UserContent::text("t got 7")]);
    // The second request carried the tool call and its result back to the model.
    let reqs = s.requests();
    let msgs = reqs[1].body["messages"].as_array().unwrap();
    assert_eq!(
        msgs[2]["tool_calls"][0]["function"]["arguments"],
        "{\"x\":7}"
    );
    assert_eq!(msgs[3]["role"], "tool");
    assert_eq!(msgs[3]["content"], "t got 7");
}

#[tokio::test]
async fn parallel_tools_end_in_completion_order_and_persist_in_source_order() {
    let gate = Arc::new(Notify::new());
    let mut slow = GateTool::new("slow");
    slow.wait_for = Some(gate.clone());
    let mut fast = GateTool::new("fast");
    fast.signal = Some(gate);
    fast.updates = 1;
    let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(slow), Arc::new(fast)];
    // Call "a" goes to slow, which waits until fast ("b") has finished.
    let s2 = server(vec![
        Turn::stream(vec![
            Event::tool_call("a", "slow", &["{\"x\":1}"]),
            Event::tool_call("b", "fast", &["{\"x\":2}"]),
        ]),
        Turn::text("ok"),
    ])
    .await;
    let mut rec = Recorder::new();
    let new = run("go", ctx(tools), config(&s2, true), &mut rec).await;
    assert_eq!(
        rec.labels(),
        seq(&[
            l(&HEAD),
            tools_reply(&[1, 1]),
            l(&[
                "tool_start a",
                "tool_start b",
                "tool_update b",
                "tool_end b",
                "tool_end a"
            ]),
            result_msgs(&["a", "b"]),
            l(&["turn_end 2", "turn_start"]),
            text_reply(1, "Stop"),
            l(&["turn_end 0", "agent_end"]),
        ])
    );
    let ids: Vec<_> = new
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some(r.tool_call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["a", "b"]);
}

#[tokio::test]
async fn a_sequential_tool_makes_the_batch_sequential() {
    let s = server(vec![
        Turn::stream(vec![call("a", 1), call("b", 2)]),
        Turn::text("ok"),
    ])
    .await;
    let mut t = GateTool::new("t");
    t.sequential = true;
    t.updates = 1;
    let mut rec = Recorder::new();
    run("go", ctx(vec![Arc::new(t)]), config(&s, false), &mut rec).await;
    assert_eq!(
        rec.labels(),
        seq(&[
            l(&HEAD),
            tools_reply(&[2, 2]),
            l(&["tool_start a", "tool_update a", "tool_end a"]),
            result_msgs(&["a"]),
            l(&["tool_start b", "tool_update b", "tool_end b"]),
            result_msgs(&["b"]),
            l(&["turn_end 2", "turn_start"]),
            text_reply(1, "Stop"),
            l(&["turn_end 0", "agent_end"]),
        ])
    );
}

#[tokio::test]
async fn steering_is_injected_after_the_turn_without_skipping_tool_calls() {
    let s = server(vec![
        Turn::stream(vec![call("a", 1), call("b", 2)]),
        Turn::text("ok"),
    ])
    .await;
    let queues = Arc::new(TestQueues::default());
    let q = queues.clone();
    let mut cfg = config(&s, false);
    cfg.queues = queues;
    cfg.tool_execution = crate::tool::ExecutionMode::Sequential;
    let mut rec = Recorder::with(move |e| {
        if matches!(e, AgentEvent::ToolExecutionStart { tool_call_id, .. } if tool_call_id == "a") {
            q.steering
                .lock()
                .unwrap()
                .push_back(Message::user("change of plan"));
        }
    });
    let new = run("go", ctx(vec![Arc::new(GateTool::new("t"))]), cfg, &mut rec).await;
    // Both calls of the turn ran although steering arrived during the first.
    assert_eq!(
        rec.labels(),
        seq(&[
            l(&HEAD),
            tools_reply(&[2, 2]),
            l(&["tool_start a", "tool_end a"]),
            result_msgs(&["a"]),
            l(&["tool_start b", "tool_end b"]),
            result_msgs(&["b"]),
            l(&[
                "turn_end 2",
                "turn_start",
                "message_start user",
                "message_end user"
            ]),
            text_reply(1, "Stop"),
            l(&["turn_end 0", "agent_end"]),
        ])
    );
    let roles: Vec<_> = new.iter().map(Message::role).collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "toolResult",
            "toolResult",
            "user",
            "assistant"
        ]
    );
    // The steering message reached the model in the second request.
    let last = s.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["content"], "change of plan");
}

#[tokio::test]
async fn steering_queued_before_the_run_is_drained_before_the_first_call() {
    let s = server(vec![Turn::text("ok")]).await;
    let queues = Arc::new(TestQueues::default());
    queues
        .steering
        .lock()
        .unwrap()
        .push_back(Message::user("early"));
    let mut cfg = config(&s, false);
    cfg.queues = queues;
    let mut rec = Recorder::new();
    run("go", ctx(vec![]), cfg, &mut rec).await;
    assert_eq!(
        rec.labels(),
        seq(&[
            l(&HEAD),
            l(&["message_start user", "message_end user"]),
            text_reply(1, "Stop"),
            l(&["turn_end 0", "agent_end"]),
        ])
    );
    assert_eq!(s.requests().len(), 1);
}

#[tokio::test]
async fn follow_ups_run_when_the_agent_would_stop() {
    let s = server(vec![Turn::text("first"), Turn::text("second")]).await;
    let queues = Arc::new(TestQueues::default());
    queues
        .follow_up
        .lock()
        .unwrap()
        .push_back(Message::user("and then?"));
    let mut cfg = config(&s, true);
    cfg.queues = queues;
    let mut rec = Recorder::new();
    let new = run("go", ctx(vec![]), cfg, &mut rec).await;
    assert_eq!(
        rec.labels(),
        seq(&[
            l(&HEAD),
            text_reply(1, "Stop"),
            l(&[
                "turn_end 0",
                "turn_start",
                "message_start user",
                "message_end user"
            ]),
            text_reply(1, "Stop"),
            l(&["turn_end 0", "agent_end"]),
        ])
    );
    assert_eq!(new.len(), 4);
}

#[tokio::test]
async fn abort_mid_stream_ends_with_aborted() {
    for anthropic in [false, true] {
        let s = server(vec![Turn::stream(vec![
            Event::text("partial"),
            Event::pause(60_000),
            Event::text("never"),
        ])])
        .await;
        let cancel = CancellationToken::new();
        let c = cancel.clone();
        let mut rec = Recorder::with(move |e| {
            if label(e) == "update text_delta" {
                c.cancel();
            }
        });
        let new = run_agent_loop(
            vec![Message::user("go")],
            ctx(vec![]),
            config(&s, anthropic),
            cancel,
            &mut rec,
            false,
        )
        .await;
        assert_eq!(
            rec.labels(),
            seq(&[
                l(&HEAD),
                l(&[
                    "message_start assistant",
                    "update text_start",
                    "update text_delta",
                    "message_end assistant Aborted",
                    "turn_end 0",
                    "agent_end"
                ])
            ])
        );
        let a = new[1].as_assistant().unwrap();
        assert_eq!(a.error_message.as_deref(), Some("Request was aborted"));
        assert_eq!(a.text(), "partial", "what arrived is kept");
    }
}

#[tokio::test]
async fn abort_mid_tool_cancels_it_and_the_next_call_is_aborted() {
    let s = server(vec![Turn::stream(vec![call("a", 1)]), Turn::text("never")]).await;
    let started = Arc::new(Notify::new());
    let mut t = GateTool::new("t");
    t.hang = true;
    t.signal = Some(started.clone());
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        started.notified().await;
        c.cancel();
    });
    let mut rec = Recorder::new();
    let new = run_agent_loop(
        vec![Message::user("go")],
        ctx(vec![Arc::new(t)]),
        config(&s, false),
        cancel,
        &mut rec,
        false,
    )
    .await;
    assert_eq!(
        rec.labels(),
        seq(&[
            l(&HEAD),
            tools_reply(&[2]),
            l(&["tool_start a", "tool_end a error"]),
            result_msgs(&["a"]),
            // The next model call returns at once as aborted, ending the run.
            l(&[
                "turn_end 1",
                "turn_start",
                "message_start assistant",
                "message_end assistant Aborted",
                "turn_end 0",
                "agent_end",
            ]),
        ])
    );
    let Message::ToolResult(r) = &new[2] else {
        panic!()
    };
    assert_eq!(r.content, vec![UserContent::text(ABORTED_TEXT)]);
    assert_eq!(s.requests().len(), 1, "no model call after the abort");
}

#[tokio::test]
async fn terminate_skips_the_next_call_only_when_every_result_asks() {
    let s = server(vec![Turn::stream(vec![call("a", 1), call("b", 2)])]).await;
    let mut t = GateTool::new("t");
    t.terminate = true;
    let mut cfg = config(&s, false);
    cfg.tool_execution = crate::tool::ExecutionMode::Sequential;
    let mut rec = Recorder::new();
    run("go", ctx(vec![Arc::new(t)]), cfg, &mut rec).await;
    assert_eq!(
        rec.labels(),
        seq(&[
            l(&HEAD),
            tools_reply(&[2, 2]),
            l(&["tool_start a", "tool_end a"]),
            result_msgs(&["a"]),
            l(&["tool_start b", "tool_end b"]),
            result_msgs(&["b"]),
            l(&["turn_end 2", "agent_end"]),
        ])
    );
    assert_eq!(s.requests().len(), 1);

    // A mixed batch (one call fails validation, so it cannot terminate) goes on.
    let s = server(vec![
        Turn::stream(vec![call("a", 1), Event::tool_call("b", "t", &["{}"])]),
        Turn::text("continued"),
    ])
    .await;
    let mut t = GateTool::new("t");
    t.terminate = true;
    let mut rec = Recorder::new();
    let new = run("go", ctx(vec![Arc::new(t)]), config(&s, false), &mut rec).await;
    assert_eq!(
        new.last().unwrap().as_assistant().unwrap().text(),
        "continued"
    );
    assert!(rec.labels().contains(&"tool_end b error".to_string()));
}

#[tokio::test]
async fn an_error_stop_ends_the_run_at_once() {
    let s = server(vec![Turn::status(400)]).await;
    let mut rec = Recorder::new();
    let new = run("go", ctx(vec![]), config(&s, true), &mut rec).await;
    assert_eq!(
        rec.labels(),
        seq(&[
            l(&HEAD),
            l(&[
                "message_start assistant",
                "message_end assistant Error",
                "turn_end 0",
                "agent_end"
            ])
        ])
    );
    let err = new[1]
        .as_assistant()
        .unwrap()
        .error_message
        .clone()
        .unwrap();
    assert!(err.starts_with("HTTP 400 Bad Request: "), "{err}");
}

#[tokio::test]
async fn a_429_is_retried_before_the_first_token_invisibly() {
    for anthropic in [false, true] {
        let s = server(vec![
            Turn::status(429).with_retry_after("0"),
            Turn::text("ok"),
        ])
        .await;
        let mut rec = Recorder::new();
        let new = run("go", ctx(vec![]), config(&s, anthropic), &mut rec).await;
        assert_eq!(
            rec.labels(),
            seq(&[
                l(&HEAD),
                text_reply(1, "Stop"),
                l(&["turn_end 0", "agent_end"])
            ])
        );
        assert_eq!(new[1].as_assistant().unwrap().text(), "ok");
        assert_eq!(s.requests().len(), 2);
    }
}

#[tokio::test]
async fn max_turns_ends_with_an_error_message() {
    let s = server(vec![
        Turn::stream(vec![call("a", 1)]),
        Turn::stream(vec![call("b", 2)]),
    ])
    .await;
    let mut cfg = config(&s, false);
    cfg.max_turns = Some(1);
    let mut rec = Recorder::new();
    let new = run("go", ctx(vec![Arc::new(GateTool::new("t"))]), cfg, &mut rec).await;
    assert_eq!(
        rec.labels(),
        seq(&[
            l(&HEAD),
            tools_reply(&[2]),
            l(&["tool_start a", "tool_end a"]),
            result_msgs(&["a"]),
            l(&[
                "turn_end 1",
                "turn_start",
                "message_start assistant",
                "message_end assistant Error",
                "turn_end 0",
                "agent_end",
            ]),
        ])
    );
    let a = new.last().unwrap().as_assistant().unwrap();
    assert_eq!(
        a.error_message.as_deref(),
        Some("Maximum number of turns (1) exceeded")
    );
    assert_eq!(s.requests().len(), 1);
}

// ---------- tool edge cases and hooks ----------

#[tokio::test]
async fn unknown_tools_bad_arguments_and_timeouts_become_error_results() {
    let s = server(vec![
        Turn::stream(vec![
            Event::tool_call("u", "nope", &["{}"]),
            Event::tool_call("v", "t", &["{\"x\":\"many\"}"]),
            Event::tool_call("j", "t", &["not json"]),
            Event::tool_call("h", "hang", &["{\"x\":1}"]),
        ]),
        Turn::text("fine"),
    ])
    .await;
    let mut hang = GateTool::new("hang");
    hang.hang = true;
    let mut cfg = config(&s, false);
    cfg.tool_timeout = Some(Duration::from_millis(50));
    let mut rec = Recorder::new();
    let new = run(
        "go",
        ctx(vec![Arc::new(GateTool::new("t")), Arc::new(hang)]),
        cfg,
        &mut rec,
    )
    .await;
    let texts: Vec<String> = new
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => {
                assert!(r.is_error);
                Some(match &r.content[0] {
                    UserContent::Text(t) => t.text.clone(),
                    _ => String::new(),
                })
            }
            _ => None,
        })
        .collect();
    assert_eq!(texts[0], "Tool nope not found");
    assert!(
        texts[1].starts_with("Validation failed for tool \"t\":\n  - /x:"),
        "{}",
        texts[1]
    );
    assert!(
        texts[2].contains("not a JSON object") && texts[2].ends_with("not json"),
        "{}",
        texts[2]
    );
    assert_eq!(texts[3], "Tool hang timed out after 50ms");
    assert_eq!(new.last().unwrap().as_assistant().unwrap().text(), "fine");
}

struct GuardHooks {
    calls: Mutex<Vec<String>>,
}

#[async_trait]
impl AgentHooks for GuardHooks {
    async fn before_model_call(&self, call: &ModelCall<'_>) -> Result<(), String> {
        self.calls.lock().unwrap().push(format!(
            "model turn={} est>0={}",
            call.turn,
            call.budget.estimated_tokens > 0
        ));
        Ok(())
    }
    async fn before_tool_call(&self, call: &ToolCallInfo<'_>) -> Option<ToolBlock> {
        (call.tool_call.id == "a").then(|| ToolBlock {
            reason: Some("not allowed".into()),
        })
    }
    async fn after_tool_call(
        &self,
        _call: &ToolCallInfo<'_>,
        result: &ToolOutcome,
        _is_error: bool,
    ) -> Result<Option<ToolResultPatch>, String> {
        Ok(Some(ToolResultPatch {
            content: Some(vec![UserContent::text(format!(
                "patched: {}",
                result.text_content()
            ))]),
            ..Default::default()
        }))
    }
    async fn should_stop_after_turn(&self, turn: &TurnInfo<'_>) -> bool {
        !turn.tool_results.is_empty()
    }
}

#[tokio::test]
async fn hooks_block_patch_observe_and_stop() {
    let s = server(vec![
        Turn::stream(vec![call("a", 1), call("b", 2)]),
        Turn::text("x"),
    ])
    .await;
    let hooks = Arc::new(GuardHooks {
        calls: Mutex::new(Vec::new()),
    });
    let mut cfg = config(&s, false);
    cfg.hooks = hooks.clone();
    let mut rec = Recorder::new();
    let new = run("go", ctx(vec![Arc::new(GateTool::new("t"))]), cfg, &mut rec).await;
    let results: Vec<_> = new
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some((r.is_error, r.content.clone())),
            _ => None,
        })
        .collect();
    // A blocked call never ran, so after_tool_call does not see it (as in pi).
    assert_eq!(results[0], (true, vec![UserContent::text("not allowed")]));
    assert_eq!(
        results[1],
        (false, vec![UserContent::text("patched: t got 2")])
    );
    assert_eq!(rec.labels().last().unwrap(), "agent_end");
    assert_eq!(
        s.requests().len(),
        1,
        "should_stop_after_turn ended the run"
    );
    assert_eq!(
        *hooks.calls.lock().unwrap(),
        vec!["model turn=1 est>0=true".to_string()]
    );
}

#[tokio::test]
async fn continue_requires_a_non_assistant_tail() {
    let s = server(vec![Turn::text("again")]).await;
    let mut rec = Recorder::new();
    let err = run_agent_loop_continue(
        ctx(vec![]),
        config(&s, false),
        CancellationToken::new(),
        &mut rec,
    )
    .await
    .unwrap_err();
    assert_eq!(err.to_string(), "Cannot continue: no messages in context");
    let mut c = ctx(vec![]);
    c.messages.push(Message::user("hi"));
    let new = run_agent_loop_continue(c, config(&s, false), CancellationToken::new(), &mut rec)
        .await
        .unwrap();
    assert_eq!(new.len(), 1);
    assert_eq!(
        rec.labels(),
        seq(&[
            l(&["agent_start", "turn_start"]),
            text_reply(1, "Stop"),
            l(&["turn_end 0", "agent_end"]),
        ])
    );
}

#[tokio::test]
async fn thinking_and_signatures_stream_through_the_loop() {
    let s = server(vec![Turn::stream(vec![
        Event::thinking_signed("hmm", "sig-1"),
        Event::text("answer"),
    ])])
    .await;
    let mut rec = Recorder::new();
    let new = run("go", ctx(vec![]), config(&s, true), &mut rec).await;
    let a = new[1].as_assistant().unwrap();
    assert!(matches!(&a.content[0], AssistantContent::Thinking(t)
        if t.thinking == "hmm" && t.thinking_signature.as_deref() == Some("sig-1")));
    assert!(rec.events.iter().any(|e| matches!(e, AgentEvent::MessageUpdate {
        assistant_message_event: AssistantStreamEvent::ThinkingDelta { delta, .. }, .. } if delta == "hmm")));
    assert_eq!(a.stop_reason, StopReason::Stop);
}
