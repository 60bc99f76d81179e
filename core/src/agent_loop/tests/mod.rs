//! Loop tests against the scripted model server over real HTTP: shared fixtures here,
//! whole event sequences in `sequences.rs`, tool edge cases and hooks in `tool_cases.rs`,
//! answers held to a JSON Schema in `structured.rs`.

mod sequences;
mod structured;
mod tool_cases;

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
