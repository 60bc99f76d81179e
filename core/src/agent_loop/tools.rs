//! Tool execution for one assistant message: preflight, run (parallel or sequential), finalize.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::hooks::{ToolCallInfo, ToolResultPatch};
use super::{EventSink, LoopConfig, LoopContext, RunLimit};
use crate::event::{AgentEvent, ToolOutcome};
use crate::message::{AssistantMessage, Message, ToolCall, ToolResultMessage, now_ms};
use crate::provider::INVALID_ARGUMENTS_KEY;
use crate::tool::{ExecutionMode, Tool, ToolUpdates};
use crate::validate::validate_tool_arguments;

/// Text of the result for a call made after the run was aborted.
pub const ABORTED_TEXT: &str = "Operation aborted";

/// A call ready to run, or already answered.
enum Prepared {
    Run {
        tool: Arc<dyn Tool>,
        args: Value,
    },
    Done {
        outcome: ToolOutcome,
        is_error: bool,
        /// A refusal that ends the run (the permission gate's loop guard); boxed, as it is
        /// rare and the variant large.
        limit: Option<Box<RunLimit>>,
    },
}

fn error_outcome(text: impl Into<String>) -> ToolOutcome {
    ToolOutcome {
        details: Value::Object(Default::default()),
        ..ToolOutcome::text(text)
    }
}

/// What a tool batch came to.
pub(crate) struct Batch {
    /// The results, in source order.
    pub results: Vec<ToolResultMessage>,
    /// Every tool asked to terminate the run.
    pub terminate: bool,
    /// The first call (in source order) that ran past its limit, or whose refusal ends the
    /// run.
    pub limit: Option<RunLimit>,
}

/// How a spawned call ended: its index, outcome, whether that is an error, and the limit it
/// ran past.
type Settled = (usize, ToolOutcome, bool, Option<Duration>);

/// Run the tool calls of `assistant`.
pub(crate) async fn execute_tool_calls(
    ctx: &LoopContext,
    assistant: &AssistantMessage,
    config: &LoopConfig,
    cancel: &CancellationToken,
    sink: &mut dyn EventSink,
) -> Batch {
    let calls: Vec<ToolCall> = assistant.tool_calls().cloned().collect();
    let sequential = config.tool_execution == ExecutionMode::Sequential
        || calls.iter().any(|c| {
            find(ctx, &c.name).is_some_and(|t| t.execution_mode() == ExecutionMode::Sequential)
        });
    let finals = if sequential {
        run_sequential(ctx, assistant, &calls, config, cancel, sink).await
    } else {
        run_parallel(ctx, assistant, &calls, config, cancel, sink).await
    };
    let terminate = !finals.is_empty() && finals.iter().all(|f| f.1.terminate);
    let limit = finals.iter().find_map(|f| f.3.clone());
    let results = finals
        .into_iter()
        .map(|(call, outcome, is_error, _)| ToolResultMessage {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            content: outcome.content,
            details: outcome.details,
            is_error,
            timestamp: now_ms(),
            usage: outcome.usage,
        })
        .collect();
    Batch {
        results,
        terminate,
        limit,
    }
}

/// One call's end: the call, its outcome, whether that is an error, the limit it reached.
type Final = (ToolCall, ToolOutcome, bool, Option<RunLimit>);

/// The limit a call that ran past `after` reached.
fn timeout_limit(call: &ToolCall, after: Option<Duration>) -> Option<RunLimit> {
    after.map(|after| RunLimit::ToolTimeout {
        tool: call.name.clone(),
        after,
    })
}

fn find(ctx: &LoopContext, name: &str) -> Option<Arc<dyn Tool>> {
    ctx.tools.iter().find(|t| t.name() == name).cloned()
}

async fn emit_result_message(
    sink: &mut dyn EventSink,
    call: &ToolCall,
    o: &ToolOutcome,
    err: bool,
) {
    let message = Message::ToolResult(ToolResultMessage {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        content: o.content.clone(),
        details: o.details.clone(),
        is_error: err,
        timestamp: now_ms(),
        usage: o.usage,
    });
    sink.emit(AgentEvent::MessageStart {
        message: message.clone(),
    })
    .await;
    sink.emit(AgentEvent::MessageEnd { message }).await;
}

async fn run_sequential(
    ctx: &LoopContext,
    assistant: &AssistantMessage,
    calls: &[ToolCall],
    config: &LoopConfig,
    cancel: &CancellationToken,
    sink: &mut dyn EventSink,
) -> Vec<Final> {
    let mut out = Vec::new();
    for call in calls {
        if cancel.is_cancelled() {
            break;
        }
        let limit;
        let (outcome, is_error) = match prepare(ctx, assistant, call, config, cancel, sink).await {
            Prepared::Done {
                outcome,
                is_error,
                limit: ends,
            } => {
                limit = ends.map(|l| *l);
                (outcome, is_error)
            }
            Prepared::Run { tool, args } => {
                let (tx, mut rx) = mpsc::unbounded_channel();
                let handle = spawn_tool(tool, call, args.clone(), 0, config, cancel, tx);
                let mut handle = std::pin::pin!(handle);
                let (outcome, is_error, after) = loop {
                    tokio::select! {
                        biased;
                        Some((_, partial)) = rx.recv() => emit_update(sink, call, &partial).await,
                        (_, outcome, is_error, after) = &mut handle => {
                            break (outcome, is_error, after);
                        }
                    }
                };
                limit = timeout_limit(call, after);
                while let Ok((_, partial)) = rx.try_recv() {
                    emit_update(sink, call, &partial).await;
                }
                finalize(ctx, assistant, call, &args, outcome, is_error, config).await
            }
        };
        emit_end(sink, call, &outcome, is_error).await;
        emit_result_message(sink, call, &outcome, is_error).await;
        out.push((call.clone(), outcome, is_error, limit));
    }
    out
}

async fn run_parallel(
    ctx: &LoopContext,
    assistant: &AssistantMessage,
    calls: &[ToolCall],
    config: &LoopConfig,
    cancel: &CancellationToken,
    sink: &mut dyn EventSink,
) -> Vec<Final> {
    let mut slots: Vec<Option<(ToolOutcome, bool)>> = vec![None; calls.len()];
    let mut limits: Vec<Option<RunLimit>> = vec![None; calls.len()];
    let mut args_of: Vec<Value> = vec![Value::Null; calls.len()];
    let mut running = FuturesUnordered::new();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut prepared = Vec::new();
    for (i, call) in calls.iter().enumerate() {
        if cancel.is_cancelled() {
            break;
        }
        match prepare(ctx, assistant, call, config, cancel, sink).await {
            Prepared::Done {
                outcome,
                is_error,
                limit,
            } => {
                emit_end(sink, call, &outcome, is_error).await;
                slots[i] = Some((outcome, is_error));
                limits[i] = limit.map(|l| *l);
            }
            Prepared::Run { tool, args } => {
                args_of[i] = args.clone();
                prepared.push((i, tool, args));
            }
        }
    }
    // Start together only after preflight, as pi does.
    for (i, tool, args) in prepared {
        running.push(spawn_tool(
            tool,
            &calls[i],
            args,
            i,
            config,
            cancel,
            tx.clone(),
        ));
    }
    drop(tx);
    let mut settled = vec![false; calls.len()];
    while !running.is_empty() {
        tokio::select! {
            biased;
            Some((i, partial)) = rx.recv() => {
                if !settled[i] {
                    emit_update(sink, &calls[i], &partial).await;
                }
            }
            Some((i, outcome, is_error, after)) = running.next() => {
                limits[i] = timeout_limit(&calls[i], after);
                // Updates sent before the tool returned still count; later ones are ignored.
                while let Ok((j, partial)) = rx.try_recv() {
                    if !settled[j] {
                        emit_update(sink, &calls[j], &partial).await;
                    }
                }
                settled[i] = true;
                let (outcome, is_error) =
                    finalize(ctx, assistant, &calls[i], &args_of[i], outcome, is_error, config).await;
                emit_end(sink, &calls[i], &outcome, is_error).await;
                slots[i] = Some((outcome, is_error));
            }
        }
    }
    let mut out = Vec::new();
    for ((call, slot), limit) in calls.iter().zip(slots).zip(limits) {
        if let Some((outcome, is_error)) = slot {
            emit_result_message(sink, call, &outcome, is_error).await;
            out.push((call.clone(), outcome, is_error, limit));
        }
    }
    out
}

async fn emit_end(
    sink: &mut dyn EventSink,
    call: &ToolCall,
    outcome: &ToolOutcome,
    is_error: bool,
) {
    sink.emit(AgentEvent::ToolExecutionEnd {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        result: outcome.clone(),
        is_error,
    })
    .await;
}

async fn emit_update(sink: &mut dyn EventSink, call: &ToolCall, partial: &ToolOutcome) {
    sink.emit(AgentEvent::ToolExecutionUpdate {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        args: call.arguments.clone(),
        partial_result: partial.clone(),
    })
    .await;
}

/// Emit `tool_execution_start` and decide whether the call may run.
async fn prepare(
    ctx: &LoopContext,
    assistant: &AssistantMessage,
    call: &ToolCall,
    config: &LoopConfig,
    cancel: &CancellationToken,
    sink: &mut dyn EventSink,
) -> Prepared {
    sink.emit(AgentEvent::ToolExecutionStart {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        args: call.arguments.clone(),
    })
    .await;
    let fail = |text: String| Prepared::Done {
        outcome: error_outcome(text),
        is_error: true,
        limit: None,
    };
    let Some(tool) = find(ctx, &call.name) else {
        return fail(format!("Tool {} not found", call.name));
    };
    if let Some(raw) = call
        .arguments
        .get(INVALID_ARGUMENTS_KEY)
        .and_then(Value::as_str)
    {
        return fail(format!(
            "Invalid arguments for tool \"{}\": not a JSON object.\n\nReceived arguments:\n{raw}",
            call.name
        ));
    }
    let args = tool.prepare_arguments(call.arguments.clone());
    let args = match validate_tool_arguments(&call.name, tool.parameters(), args) {
        Ok(a) => a,
        Err(text) => return fail(text),
    };
    let info = ToolCallInfo {
        assistant,
        tool_call: call,
        args: &args,
        messages: &ctx.messages,
    };
    if let Some(block) = config.hooks.before_tool_call(&info).await {
        return Prepared::Done {
            outcome: error_outcome(
                block
                    .reason
                    .unwrap_or_else(|| "Tool execution was blocked".into()),
            ),
            is_error: true,
            limit: block.ends_run.map(Box::new),
        };
    }
    if cancel.is_cancelled() {
        return fail(ABORTED_TEXT.into());
    }
    Prepared::Run { tool, args }
}

/// Run a tool on its own task, bounded by the timeout and the run's abort.
fn spawn_tool(
    tool: Arc<dyn Tool>,
    call: &ToolCall,
    args: Value,
    index: usize,
    config: &LoopConfig,
    cancel: &CancellationToken,
    updates: mpsc::UnboundedSender<(usize, ToolOutcome)>,
) -> impl std::future::Future<Output = Settled> + use<> {
    let id = call.id.clone();
    let name = call.name.clone();
    let timeout = config.tool_timeouts.limit_for(&call.name);
    let run_cancel = cancel.clone();
    let tool_cancel = cancel.child_token();
    let handle = tokio::spawn(async move {
        let sink = ToolUpdates::new(move |partial| {
            let _ = updates.send((index, partial));
        });
        let exec = tool.execute(&id, args, tool_cancel.clone(), sink);
        let limit = async {
            match timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        // Biased: an abort wins over whatever the cancelled tool returns on its own.
        let result = tokio::select! {
            biased;
            _ = run_cancel.cancelled() => Err((ABORTED_TEXT.to_string(), None)),
            r = exec => r.map_err(|e| (e.0, None)),
            _ = limit => {
                let after = timeout.unwrap_or_default();
                Err((format!("Tool {name} timed out after {}", format_duration(after)), Some(after)))
            }
        };
        tool_cancel.cancel();
        result
    });
    let name = call.name.clone();
    async move {
        match handle.await {
            Ok(Ok(outcome)) => (index, outcome, false, None),
            Ok(Err((text, limit))) => (index, error_outcome(text), true, limit),
            Err(join) => (
                index,
                error_outcome(format!("Tool {name} crashed: {join}")),
                true,
                None,
            ),
        }
    }
}

/// `d` as `250ms`, `30s` or `1.5s`.
pub(super) fn format_duration(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{}ms", d.as_millis())
    } else if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

/// A duration [`format_duration`] wrote.
pub(super) fn parse_duration(text: &str) -> Option<Duration> {
    if let Some(ms) = text.strip_suffix("ms") {
        return ms.parse().ok().map(Duration::from_millis);
    }
    let secs: f64 = text.strip_suffix('s')?.parse().ok()?;
    Duration::try_from_secs_f64(secs).ok()
}

/// Apply `after_tool_call`.
async fn finalize(
    ctx: &LoopContext,
    assistant: &AssistantMessage,
    call: &ToolCall,
    args: &Value,
    outcome: ToolOutcome,
    is_error: bool,
    config: &LoopConfig,
) -> (ToolOutcome, bool) {
    let info = ToolCallInfo {
        assistant,
        tool_call: call,
        args,
        messages: &ctx.messages,
    };
    match config
        .hooks
        .after_tool_call(&info, &outcome, is_error)
        .await
    {
        Ok(None) => (outcome, is_error),
        Ok(Some(ToolResultPatch {
            content,
            details,
            is_error: patched_error,
            terminate,
        })) => (
            ToolOutcome {
                content: content.unwrap_or(outcome.content),
                details: details.unwrap_or(outcome.details),
                terminate: terminate.unwrap_or(outcome.terminate),
                change: outcome.change,
                usage: outcome.usage,
            },
            patched_error.unwrap_or(is_error),
        ),
        Err(text) => (error_outcome(text), true),
    }
}
