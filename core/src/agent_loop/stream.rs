//! One model call: stream the assistant response and mirror it as agent events.

use std::collections::HashMap;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::budget::estimate_context_tokens;
use super::hooks::{ContextBudget, ModelCall};
use super::{EventSink, LoopConfig, LoopContext};
use crate::event::{AgentEvent, AssistantStreamEvent as Ev};
use crate::message::{
    AssistantContent, AssistantMessage, Message, StopReason, TextContent, ThinkingContent, ToolCall,
};
use crate::partial_json::parse_arguments;
use crate::provider::LlmContext;
use crate::tool::ToolSpec;

/// The assistant message as it streams in, rebuilt from events.
#[derive(Default)]
pub(crate) struct Partial {
    tool_json: HashMap<usize, String>,
}

impl Partial {
    /// Apply one stream event to `msg`.
    pub(crate) fn apply(&mut self, msg: &mut AssistantMessage, ev: &Ev) {
        let slot = |msg: &mut AssistantMessage, i: usize, block: AssistantContent| {
            if msg.content.len() <= i {
                msg.content.resize(i + 1, block);
            } else {
                msg.content[i] = block;
            }
        };
        match ev {
            Ev::TextStart { content_index } => slot(
                msg,
                *content_index,
                AssistantContent::Text(TextContent {
                    text: String::new(),
                    text_signature: None,
                }),
            ),
            Ev::ThinkingStart { content_index } => slot(
                msg,
                *content_index,
                AssistantContent::Thinking(ThinkingContent {
                    thinking: String::new(),
                    thinking_signature: None,
                    redacted: false,
                }),
            ),
            Ev::ToolCallStart {
                content_index,
                id,
                name,
            } => slot(
                msg,
                *content_index,
                AssistantContent::ToolCall(ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: serde_json::Value::Object(Default::default()),
                    thought_signature: None,
                }),
            ),
            Ev::TextDelta {
                content_index,
                delta,
            }
            | Ev::ThinkingDelta {
                content_index,
                delta,
            } => match msg.content.get_mut(*content_index) {
                Some(AssistantContent::Text(t)) => t.text.push_str(delta),
                Some(AssistantContent::Thinking(t)) => t.thinking.push_str(delta),
                _ => {}
            },
            Ev::ToolCallDelta {
                content_index,
                delta,
            } => {
                let buf = self.tool_json.entry(*content_index).or_default();
                buf.push_str(delta);
                if let Some(AssistantContent::ToolCall(tc)) = msg.content.get_mut(*content_index) {
                    tc.arguments = parse_arguments(buf);
                }
            }
            Ev::TextEnd {
                content_index,
                content,
            }
            | Ev::ThinkingEnd {
                content_index,
                content,
            } => match msg.content.get_mut(*content_index) {
                Some(AssistantContent::Text(t)) => t.text.clone_from(content),
                Some(AssistantContent::Thinking(t)) => t.thinking.clone_from(content),
                _ => {}
            },
            Ev::ToolCallEnd {
                content_index,
                tool_call,
            } => {
                self.tool_json.remove(content_index);
                slot(
                    msg,
                    *content_index,
                    AssistantContent::ToolCall(tool_call.clone()),
                );
            }
            Ev::Start | Ev::Done { .. } | Ev::Error { .. } => {}
        }
    }
}

/// An error-stop assistant message that never reached a model.
pub(crate) fn failed_message(
    model: &crate::model::Model,
    reason: StopReason,
    error: String,
) -> AssistantMessage {
    let mut msg = AssistantMessage::empty(model);
    msg.content.push(AssistantContent::Text(TextContent {
        text: String::new(),
        text_signature: None,
    }));
    msg.stop_reason = reason;
    msg.error_message = Some(error);
    msg
}

/// Call the model once and emit `message_start`, `message_update`*, `message_end`.
pub(crate) async fn stream_assistant_response(
    ctx: &LoopContext,
    config: &LoopConfig,
    turn: u32,
    cancel: &CancellationToken,
    sink: &mut dyn EventSink,
) -> AssistantMessage {
    let messages = config.hooks.transform_context(ctx.messages.clone()).await;
    let budget = ContextBudget {
        estimated_tokens: estimate_context_tokens(&ctx.system_prompt, &messages),
        context_window: config.model.context_window,
    };
    let call = ModelCall {
        model: &config.model,
        messages: &messages,
        budget,
        turn,
    };
    let mut started = false;
    let mut msg = match config.hooks.before_model_call(&call).await {
        Err(reason) => failed_message(&config.model, StopReason::Error, reason),
        Ok(()) => {
            let llm = LlmContext {
                system_prompt: ctx.system_prompt.clone(),
                messages,
                tools: ctx.tools.iter().map(|t| ToolSpec::of(t.as_ref())).collect(),
                response_schema: config.response_schema.clone(),
            };
            let mut options = config.stream_options.clone();
            options.thinking = config.thinking;
            let stream = config
                .stream_fn
                .stream(&config.model, llm, options, cancel.clone());
            consume(stream, config, cancel, sink, &mut started).await
        }
    };
    if msg.stop_reason.is_failure() && msg.content.is_empty() {
        msg.content.push(AssistantContent::Text(TextContent {
            text: String::new(),
            text_signature: None,
        }));
    }
    if !msg.stop_reason.is_failure()
        && let Err(reason) = config.hooks.after_model_call(&msg).await
    {
        msg.stop_reason = StopReason::Error;
        msg.error_message = Some(reason);
    }
    if !started {
        // Providers that never said `start` (or failed first) still get a message_start.
        sink.emit(AgentEvent::MessageStart {
            message: Message::Assistant(msg.clone()),
        })
        .await;
    }
    sink.emit(AgentEvent::MessageEnd {
        message: Message::Assistant(msg.clone()),
    })
    .await;
    msg
}

/// Drain a provider stream into `message_update` events; returns the final message.
async fn consume(
    mut stream: crate::provider::AssistantEventStream,
    config: &LoopConfig,
    cancel: &CancellationToken,
    sink: &mut dyn EventSink,
    started: &mut bool,
) -> AssistantMessage {
    let mut partial = Arc::new(AssistantMessage::empty(&config.model));
    let mut builder = Partial::default();
    loop {
        let Some(ev) = stream.next().await else {
            let reason = if cancel.is_cancelled() {
                StopReason::Aborted
            } else {
                StopReason::Error
            };
            let mut msg = (*partial).clone();
            msg.stop_reason = reason;
            msg.error_message = Some("the provider stream ended without a final event".into());
            return msg;
        };
        if !ev.is_terminal() && !*started {
            *started = true;
            sink.emit(AgentEvent::MessageStart {
                message: Message::Assistant((*partial).clone()),
            })
            .await;
        }
        match ev {
            Ev::Done { message, .. } => return message,
            Ev::Error { error, .. } => return error,
            Ev::Start => {}
            ev => {
                builder.apply(Arc::make_mut(&mut partial), &ev);
                sink.emit(AgentEvent::MessageUpdate {
                    message: partial.clone(),
                    assistant_message_event: ev,
                })
                .await;
            }
        }
    }
}
