//! The agent loop with pi's semantics: turns, steering and follow-up injection, tool batches,
//! terminate, abort, and an event for every step, each awaited by the sink.

mod budget;
mod hooks;
mod stream;
mod tools;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

pub(crate) use budget::{assistant_chars, blocks_chars, body_chars, chars_to_tokens, text_chars};
pub use budget::{estimate_context_tokens, estimate_message_tokens};
pub use hooks::{
    AgentHooks, ContextBudget, ModelCall, NextTurn, NoHooks, ToolBlock, ToolCallInfo,
    ToolResultPatch, TurnInfo,
};
pub use tools::ABORTED_TEXT;

use crate::event::AgentEvent;
use crate::message::{Message, StopReason};
use crate::model::{Model, ThinkingLevel};
use crate::provider::{StreamFn, StreamOptions};
use crate::structured::ResponseSchema;
use crate::tool::{ExecutionMode, Tool};

/// Receives every event of a run; the loop awaits each call before going on.
#[async_trait]
pub trait EventSink: Send {
    /// Handle one event.
    async fn emit(&mut self, event: AgentEvent);
}

#[async_trait]
impl EventSink for Vec<AgentEvent> {
    async fn emit(&mut self, event: AgentEvent) {
        self.push(event);
    }
}

/// Where the loop polls for steering and follow-up messages.
pub trait MessageQueues: Send + Sync {
    /// Messages to inject at the next turn boundary.
    fn steering(&self) -> Vec<Message>;
    /// Messages to run when the agent would otherwise stop.
    fn follow_up(&self) -> Vec<Message>;
}

/// No queued messages ever.
pub struct NoQueues;

impl MessageQueues for NoQueues {
    fn steering(&self) -> Vec<Message> {
        Vec::new()
    }
    fn follow_up(&self) -> Vec<Message> {
        Vec::new()
    }
}

/// The transcript and tools a run works on.
#[derive(Clone, Default)]
pub struct LoopContext {
    /// System prompt.
    pub system_prompt: String,
    /// Messages so far.
    pub messages: Vec<Message>,
    /// Available tools.
    pub tools: Vec<Arc<dyn Tool>>,
}

/// Everything that shapes a run.
#[derive(Clone)]
pub struct LoopConfig {
    /// The model to call.
    pub model: Model,
    /// Reasoning level.
    pub thinking: ThinkingLevel,
    /// The transport.
    pub stream_fn: Arc<dyn StreamFn>,
    /// Credentials, retry policy, observers.
    pub stream_options: StreamOptions,
    /// Hooks.
    pub hooks: Arc<dyn AgentHooks>,
    /// Steering / follow-up source.
    pub queues: Arc<dyn MessageQueues>,
    /// Parallel (default) or sequential tool batches.
    pub tool_execution: ExecutionMode,
    /// How long each tool may run.
    pub tool_timeouts: ToolTimeouts,
    /// Model calls allowed per run; exceeding it ends the run with an error message.
    pub max_turns: Option<u32>,
    /// The schema the run's final answer must match; a failing answer is asked for again,
    /// with what is wrong, up to the schema's number of retries.
    pub response_schema: Option<ResponseSchema>,
}

impl LoopConfig {
    /// A config with no hooks, no queues, parallel tools and no limits.
    pub fn new(model: Model, stream_fn: Arc<dyn StreamFn>) -> Self {
        LoopConfig {
            model,
            thinking: ThinkingLevel::Off,
            stream_fn,
            stream_options: StreamOptions::default(),
            hooks: Arc::new(NoHooks),
            queues: Arc::new(NoQueues),
            tool_execution: ExecutionMode::Parallel,
            tool_timeouts: ToolTimeouts::default(),
            max_turns: None,
            response_schema: None,
        }
    }
}

/// How long tools may run: a default, overrides by tool name, and what a timeout does.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolTimeouts {
    /// The limit of every tool without an override (none: no limit).
    pub default: Option<Duration>,
    /// Limits by tool name, over the default.
    pub per_tool: std::collections::BTreeMap<String, Duration>,
    /// A timeout also ends the run (after the batch's results are in), as a user-set limit
    /// does; otherwise, as in the seed, the model sees an error result and goes on.
    pub ends_run: bool,
}

impl ToolTimeouts {
    /// The limit for the tool named `name`.
    pub fn limit_for(&self, name: &str) -> Option<Duration> {
        self.per_tool.get(name).copied().or(self.default)
    }
}

/// A user-set bound that ended a run. Its [`RunLimit::message`] is the failed assistant
/// message's error text, which [`RunLimit::from_message`] reads back (the one place both
/// the wording and its reading live).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunLimit {
    /// The run made its allowed number of model calls.
    MaxTurns(u32),
    /// A tool ran past its limit.
    ToolTimeout {
        /// The tool's name.
        tool: String,
        /// Its limit.
        after: Duration,
    },
    /// The same tool was refused automatically (a remembered "always reject") this many
    /// times in one run: the model keeps retrying what the user turned down.
    Rejected {
        /// The tool's name.
        tool: String,
        /// Refusals in the run.
        times: u32,
    },
}

const MAX_TURNS_PREFIX: &str = "Maximum number of turns (";
const TOOL_TIMEOUT_PREFIX: &str = "Turn stopped: tool ";
const REJECTED_INFIX: &str = " was rejected automatically ";
const REJECTED_SUFFIX: &str = " times in this turn (always reject)";

impl RunLimit {
    /// The error text of the message that ends the run.
    pub fn message(&self) -> String {
        match self {
            RunLimit::MaxTurns(max) => format!("{MAX_TURNS_PREFIX}{max}) exceeded"),
            RunLimit::ToolTimeout { tool, after } => format!(
                "{TOOL_TIMEOUT_PREFIX}{tool} ran past its limit of {}",
                tools::format_duration(*after)
            ),
            RunLimit::Rejected { tool, times } => {
                format!("{TOOL_TIMEOUT_PREFIX}{tool}{REJECTED_INFIX}{times}{REJECTED_SUFFIX}")
            }
        }
    }

    /// The limit a failed message's error text names.
    pub fn from_message(text: &str) -> Option<RunLimit> {
        if let Some(rest) = text.strip_prefix(MAX_TURNS_PREFIX) {
            let max = rest.strip_suffix(") exceeded")?.parse().ok()?;
            return Some(RunLimit::MaxTurns(max));
        }
        let rest = text.strip_prefix(TOOL_TIMEOUT_PREFIX)?;
        if let Some((tool, times)) = rest
            .strip_suffix(REJECTED_SUFFIX)
            .and_then(|r| r.rsplit_once(REJECTED_INFIX))
        {
            return Some(RunLimit::Rejected {
                tool: tool.to_string(),
                times: times.parse().ok()?,
            });
        }
        let (tool, after) = rest.rsplit_once(" ran past its limit of ")?;
        Some(RunLimit::ToolTimeout {
            tool: tool.to_string(),
            after: tools::parse_duration(after)?,
        })
    }
}

/// Why a run could not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoopError {
    /// `continue` on an empty transcript.
    #[error("Cannot continue: no messages in context")]
    NoMessages,
    /// `continue` after an assistant message.
    #[error("Cannot continue from message role: assistant")]
    EndsWithAssistant,
}

/// Run the loop with new prompt messages; returns the messages the run added.
pub async fn run_agent_loop(
    prompts: Vec<Message>,
    ctx: LoopContext,
    config: LoopConfig,
    cancel: CancellationToken,
    sink: &mut dyn EventSink,
    skip_initial_steering: bool,
) -> Vec<Message> {
    let mut run = Run::new(ctx, config, cancel);
    sink.emit(AgentEvent::AgentStart).await;
    sink.emit(AgentEvent::TurnStart).await;
    for p in prompts {
        run.inject(p, sink).await;
    }
    run.run(sink, skip_initial_steering).await
}

/// Continue from the current transcript (last message is user or tool result).
pub async fn run_agent_loop_continue(
    ctx: LoopContext,
    config: LoopConfig,
    cancel: CancellationToken,
    sink: &mut dyn EventSink,
) -> Result<Vec<Message>, LoopError> {
    match ctx.messages.last() {
        None => return Err(LoopError::NoMessages),
        Some(Message::Assistant(_)) => return Err(LoopError::EndsWithAssistant),
        Some(_) => {}
    }
    let run = Run::new(ctx, config, cancel);
    sink.emit(AgentEvent::AgentStart).await;
    sink.emit(AgentEvent::TurnStart).await;
    Ok(run.run(sink, false).await)
}

struct Run {
    ctx: LoopContext,
    config: LoopConfig,
    cancel: CancellationToken,
    new_messages: Vec<Message>,
    turns: u32,
    /// A limit a tool batch reached; the next turn ends the run instead of calling the model.
    limit: Option<RunLimit>,
    /// Answers asked for again because they failed the response schema.
    schema_retries: u32,
}

impl Run {
    fn new(ctx: LoopContext, config: LoopConfig, cancel: CancellationToken) -> Self {
        Run {
            ctx,
            config,
            cancel,
            new_messages: Vec::new(),
            turns: 0,
            limit: None,
            schema_retries: 0,
        }
    }

    async fn inject(&mut self, msg: Message, sink: &mut dyn EventSink) {
        sink.emit(AgentEvent::MessageStart {
            message: msg.clone(),
        })
        .await;
        sink.emit(AgentEvent::MessageEnd {
            message: msg.clone(),
        })
        .await;
        self.ctx.messages.push(msg.clone());
        self.new_messages.push(msg);
    }

    /// The request for a corrected answer when the run's answer fails its schema and
    /// retries are left.
    fn schema_retry(&mut self) -> Option<Message> {
        let schema = self.config.response_schema.as_ref()?;
        if self.schema_retries >= schema.retries() || self.cancel.is_cancelled() {
            return None;
        }
        let Some(Message::Assistant(answer)) = self.ctx.messages.last() else {
            return None;
        };
        let problem = schema.check_message(answer).err()?;
        self.schema_retries += 1;
        Some(schema.retry_message(&problem))
    }

    async fn end(self, sink: &mut dyn EventSink) -> Vec<Message> {
        sink.emit(AgentEvent::AgentEnd {
            messages: self.new_messages.clone(),
        })
        .await;
        self.new_messages
    }

    async fn run(mut self, sink: &mut dyn EventSink, skip_initial_steering: bool) -> Vec<Message> {
        let mut pending = if skip_initial_steering {
            Vec::new()
        } else {
            self.config.queues.steering()
        };
        let mut first_turn = true;
        loop {
            let mut more_tool_calls = true;
            while more_tool_calls || !pending.is_empty() {
                if !first_turn {
                    sink.emit(AgentEvent::TurnStart).await;
                }
                first_turn = false;
                for m in std::mem::take(&mut pending) {
                    self.inject(m, sink).await;
                }
                self.turns += 1;
                if let Some(max) = self.config.max_turns.filter(|max| self.turns > *max) {
                    self.limit.get_or_insert(RunLimit::MaxTurns(max));
                }
                let assistant = match &self.limit {
                    Some(limit) => {
                        let msg = stream::failed_message(
                            &self.config.model,
                            StopReason::Error,
                            limit.message(),
                        );
                        for ev in [
                            AgentEvent::MessageStart {
                                message: Message::Assistant(msg.clone()),
                            },
                            AgentEvent::MessageEnd {
                                message: Message::Assistant(msg.clone()),
                            },
                        ] {
                            sink.emit(ev).await;
                        }
                        msg
                    }
                    _ => {
                        stream::stream_assistant_response(
                            &self.ctx,
                            &self.config,
                            self.turns,
                            &self.cancel,
                            sink,
                        )
                        .await
                    }
                };
                self.ctx
                    .messages
                    .push(Message::Assistant(assistant.clone()));
                self.new_messages
                    .push(Message::Assistant(assistant.clone()));
                if assistant.stop_reason.is_failure() {
                    sink.emit(AgentEvent::TurnEnd {
                        message: Message::Assistant(assistant),
                        tool_results: Vec::new(),
                    })
                    .await;
                    return self.end(sink).await;
                }
                more_tool_calls = false;
                let mut results = Vec::new();
                if assistant.tool_calls().next().is_some() {
                    let batch = tools::execute_tool_calls(
                        &self.ctx,
                        &assistant,
                        &self.config,
                        &self.cancel,
                        sink,
                    )
                    .await;
                    let r = batch.results;
                    more_tool_calls = !batch.terminate;
                    // A timeout ends the run only when configured so; a refusal's limit always.
                    let ends = batch.limit.filter(|l| {
                        self.config.tool_timeouts.ends_run
                            || !matches!(l, RunLimit::ToolTimeout { .. })
                    });
                    if ends.is_some() && !self.cancel.is_cancelled() {
                        self.limit = ends;
                        more_tool_calls = true;
                    }
                    for res in &r {
                        self.ctx.messages.push(Message::ToolResult(res.clone()));
                        self.new_messages.push(Message::ToolResult(res.clone()));
                    }
                    results = r;
                }
                sink.emit(AgentEvent::TurnEnd {
                    message: Message::Assistant(assistant.clone()),
                    tool_results: results.clone(),
                })
                .await;
                let info = TurnInfo {
                    message: &assistant,
                    tool_results: &results,
                    messages: &self.ctx.messages,
                    new_messages: &self.new_messages,
                };
                let next = self.config.hooks.prepare_next_turn(&info).await;
                let stop = self.config.hooks.should_stop_after_turn(&info).await;
                if let Some(next) = next {
                    if let Some(m) = next.messages {
                        self.ctx.messages = m;
                    }
                    if let Some(model) = next.model {
                        self.config.model = model;
                    }
                    if let Some(t) = next.thinking {
                        self.config.thinking = t;
                    }
                }
                if stop {
                    return self.end(sink).await;
                }
                pending = self.config.queues.steering();
            }
            pending = self.config.queues.follow_up();
            if pending.is_empty() {
                match self.schema_retry() {
                    Some(retry) => pending.push(retry),
                    None => break,
                }
            }
        }
        self.end(sink).await
    }
}

#[cfg(test)]
mod tests;
