//! One Agent Run: context assembled once, the core `Agent` driven to the end, every finished
//! message persisted before its updates go out, and the stop reason ACP wants.

use parking_lot::Mutex;
use std::sync::Arc;

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, PromptResponse, SessionUpdate, StopReason, TextContent,
};
use async_trait::async_trait;
use march_core::agent::Agent;
use march_core::agent_loop::{
    AgentHooks, LoopConfig, NextTurn, RunLimit, ToolBlock, ToolCallInfo, ToolResultPatch, TurnInfo,
};
use march_core::compaction::{estimate_context_tokens, is_context_overflow, should_compact};
use march_core::context::{ContextEngine, ContextRequest, RecallHints};
use march_core::event::{AgentEvent, ToolOutcome};
use march_core::message::{AssistantMessage, Message, StopReason as CoreStop, UserMessage, now_ms};
use march_core::model::{Model, ThinkingLevel};
use march_core::session::SessionStore;
use march_core::structured::{ResponseSchema, is_retry};
use tokio_util::sync::CancellationToken;

use super::compaction::{self, Outcome, Trigger};
use super::errors;
use super::gate::PermissionGate;
use super::options::Settings;
use super::port::ClientPort;
use super::session::Session;
use super::updates::UpdateMapper;
use crate::structured_output;

/// The hooks of one run: the permission gate, and settings changed mid-run applied to the
/// next model request.
struct RunHooks {
    gate: PermissionGate,
    settings: Arc<Mutex<Settings>>,
    /// The model and level the run's requests use now.
    applied: Mutex<(Model, ThinkingLevel)>,
}

#[async_trait]
impl AgentHooks for RunHooks {
    async fn before_tool_call(&self, call: &ToolCallInfo<'_>) -> Option<ToolBlock> {
        self.gate.check(call.tool_call).await
    }

    async fn after_tool_call(
        &self,
        call: &ToolCallInfo<'_>,
        result: &ToolOutcome,
        _is_error: bool,
    ) -> Result<Option<ToolResultPatch>, String> {
        Ok(self.gate.result_patch(&call.tool_call.id, result))
    }

    async fn prepare_next_turn(&self, _turn: &TurnInfo<'_>) -> Option<NextTurn> {
        let (model, thinking) = {
            let s = self.settings.lock();
            (s.model.clone(), s.thinking)
        };
        let mut applied = self.applied.lock();
        if applied.0 == model && applied.1 == thinking {
            return None;
        }
        *applied = (model.clone(), thinking);
        Some(NextTurn {
            messages: None,
            model: Some(model),
            thinking: Some(thinking),
        })
    }
}

/// Persists each finished message, then sends the updates for every event.
struct Listener {
    store: Arc<Mutex<SessionStore>>,
    port: Arc<dyn ClientPort>,
    settings: Arc<Mutex<Settings>>,
    mapper: Mutex<UpdateMapper>,
    /// Why the transcript could not be written; the run is stopped when set.
    failure: Mutex<Option<String>>,
    stop: CancellationToken,
    last_assistant: Mutex<Option<AssistantMessage>>,
    /// Messages queued into the run: an injected one is shown to the client as the user's.
    queue: Arc<super::queue::TurnQueue>,
    /// The run holds its answer to a schema.
    structured: bool,
    /// Requests for a corrected answer (structured output) the run made.
    schema_retries: Mutex<u32>,
    /// A user message being written while the request goes out.
    writing: Mutex<Option<Writing>>,
}

/// A user message's write the run did not wait for, and its event, told once written.
type Writing = (tokio::task::JoinHandle<Result<(), String>>, AgentEvent);

impl Listener {
    async fn on_event(&self, event: AgentEvent) {
        self.flush().await;
        if self.failure.lock().is_some() {
            return;
        }
        if let AgentEvent::MessageEnd { message } = &event {
            // On disk before anyone hears of it.
            let write = self.write(message.clone());
            if matches!(message, Message::User(_)) {
                // The model request can leave while it is written: nothing is told, and
                // nothing else written, before it is on disk (the next event waits).
                *self.writing.lock() = Some((write, event));
                return;
            }
            if !self.written(write).await {
                return;
            }
        }
        self.tell(&event);
    }

    /// Waits for a user message's write still under way, then tells its event.
    async fn flush(&self) {
        let Some((write, event)) = self.writing.lock().take() else {
            return;
        };
        if self.written(write).await {
            self.tell(&event);
        }
    }

    /// Appends `message` to the session file, off the async thread.
    fn write(&self, message: Message) -> tokio::task::JoinHandle<Result<(), String>> {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || {
            store
                .lock()
                .append_message(message)
                .map(drop)
                .map_err(|e| e.to_string())
        })
    }

    /// Whether the write succeeded; when not, the run stops with the reason.
    async fn written(&self, write: tokio::task::JoinHandle<Result<(), String>>) -> bool {
        let error = match write.await {
            Ok(Ok(())) => return true,
            Ok(Err(e)) => e,
            Err(e) => format!("writing the session failed: {e}"),
        };
        tracing::error!("{error}");
        *self.failure.lock() = Some(error);
        self.stop.cancel();
        false
    }

    /// Sends the updates for `event` (its message is on disk).
    fn tell(&self, event: &AgentEvent) {
        if let AgentEvent::MessageEnd { message } = event {
            if let Message::User(u) = message {
                let text = user_text(u);
                if let Some(id) = self.queue.delivered(&text) {
                    self.port.notify(queued_delivery(u, &id));
                } else if self.structured && is_retry(&text) {
                    *self.schema_retries.lock() += 1;
                    self.port.notify(schema_retry(u));
                }
            }
            if let Message::Assistant(a) = message {
                *self.last_assistant.lock() = Some(a.clone());
                let window = self.settings.lock().model.context_window;
                let usage = self.store.lock().usage();
                let mut mapper = self.mapper.lock();
                mapper.set_context_window(window);
                mapper.set_session_usage(usage);
            }
        }
        let updates = self.mapper.lock().map(event);
        for update in updates {
            self.port.notify(update);
        }
    }
}

/// The ACP answer for how a run ended; a provider failure is an error response. A limit the
/// user set ends with `max_turn_requests` and names itself in `_meta.march.limit`.
pub(crate) fn stop_reason(last: Option<&AssistantMessage>) -> Result<PromptResponse, Error> {
    let Some(last) = last else {
        return Ok(PromptResponse::new(StopReason::EndTurn));
    };
    let stop = match last.stop_reason {
        CoreStop::Stop | CoreStop::ToolUse => StopReason::EndTurn,
        CoreStop::Length => StopReason::MaxTokens,
        CoreStop::Aborted => StopReason::Cancelled,
        // Only the provider's own stop reason makes a refusal: an error's words never do
        // ("Connection refused" is a server that is not running).
        CoreStop::Error if last.refused => StopReason::Refusal,
        CoreStop::Error => {
            let message = last
                .error_message
                .clone()
                .unwrap_or_else(|| "the model request failed".to_string());
            if let Some(limit) = RunLimit::from_message(&message) {
                return Ok(PromptResponse::new(StopReason::MaxTurnRequests)
                    .meta(limit_meta(&limit, &message)));
            }
            return Err(errors::internal(message));
        }
    };
    Ok(PromptResponse::new(stop))
}

/// `_meta` of a turn a limit ended: `{"march": {"limit": {kind, value, message}}}`.
fn limit_meta(limit: &RunLimit, message: &str) -> serde_json::Map<String, serde_json::Value> {
    let limit = match limit {
        RunLimit::MaxTurns(max) => serde_json::json!({
            "kind": "max_turns", "value": max, "message": message,
        }),
        RunLimit::ToolTimeout { tool, after } => serde_json::json!({
            "kind": "tool_timeout", "tool": tool, "seconds": after.as_secs_f64(),
            "message": message,
        }),
        RunLimit::Rejected { tool, times } => serde_json::json!({
            "kind": "rejected", "tool": tool, "times": times, "message": message,
        }),
    };
    let mut meta = serde_json::Map::new();
    meta.insert("march".into(), serde_json::json!({ "limit": limit }));
    meta
}

/// A queued message the loop delivered, as the user's message the client shows, marked with
/// its queue id (`_meta.march.queueId`) so the client can drop it from its queue.
fn queued_delivery(user: &UserMessage, id: &str) -> SessionUpdate {
    marked_user_message(user, crate::steering::QUEUE_ID_KEY, serde_json::json!(id))
}

/// `user` as the user's message the client shows, with `value` at `_meta.march.KEY`.
fn marked_user_message(user: &UserMessage, key: &str, value: serde_json::Value) -> SessionUpdate {
    let mut march = serde_json::Map::new();
    march.insert(key.to_string(), value);
    let mut meta = serde_json::Map::new();
    meta.insert("march".into(), serde_json::Value::Object(march));
    SessionUpdate::UserMessageChunk(
        ContentChunk::new(ContentBlock::Text(TextContent::new(user_text(user)))).meta(meta),
    )
}

/// The text of a prompt (its text blocks), for recall.
pub(crate) fn user_text(user: &UserMessage) -> String {
    user.content.text()
}

/// pi's check after a run: a context overflow compacts and, when the run failed on it,
/// retries once from the compacted context; a context near the window compacts. Compaction
/// failures are reported to the client and leave the session and the run's outcome alone.
async fn compact_after_run(
    session: &Session,
    agent: &Agent,
    listener: &Listener,
    port: &Arc<dyn ClientPort>,
    stop: &CancellationToken,
) -> Result<(), Error> {
    let settings = session.config.compaction;
    if !settings.enabled {
        return Ok(());
    }
    let Some(last) = listener.last_assistant.lock().clone() else {
        return Ok(());
    };
    let window = session.settings.lock().model.context_window;
    if is_context_overflow(&last, window) {
        let outcome = compaction::compact(session, port, Trigger::Overflow, stop.clone()).await;
        if last.stop_reason != CoreStop::Error || outcome_is_failure(&outcome) {
            return Ok(());
        }
        // The failed answer stays in the file but not in what the model sees next.
        let mut messages = session.store.lock().context().llm_messages();
        while matches!(messages.last(), Some(Message::Assistant(a)) if a.stop_reason.is_failure()) {
            messages.pop();
        }
        agent.set_messages(messages);
        tracing::info!(session = %session.id, "retrying the run once after compaction");
        let retry = agent.continue_run();
        tokio::pin!(retry);
        let result = tokio::select! {
            biased;
            result = &mut retry => result,
            () = stop.cancelled() => {
                agent.abort();
                retry.await
            }
        };
        return result.map_err(|e| errors::internal(e.to_string()));
    }
    if last.stop_reason.is_failure() {
        return Ok(());
    }
    let messages = session.store.lock().context().llm_messages();
    let tokens = estimate_context_tokens(&messages).tokens;
    if should_compact(tokens, window, &settings) {
        compaction::compact(session, port, Trigger::Threshold, stop.clone()).await;
    }
    Ok(())
}

/// Whether a compaction left nothing to retry from.
fn outcome_is_failure(outcome: &Outcome) -> bool {
    !matches!(outcome, Outcome::Compacted { .. })
}

/// Run `user` as one Agent Run of `session`, its final answer held to `schema` when given;
/// `cancel` stops it.
pub(super) async fn run(
    session: &Session,
    user: UserMessage,
    schema: Option<ResponseSchema>,
    port: Arc<dyn ClientPort>,
    cancel: CancellationToken,
) -> Result<PromptResponse, Error> {
    let stop = cancel.child_token();
    // MCP servers start when the session's first run needs them; their tools join the
    // built-in ones for this run.
    session.mcp.prepare(&port, &stop).await;
    // The memory server's files, as fresh as it answers, for the context below.
    if let Some(remote) = &session.remote_memory {
        remote.sync_for_run(&port, session.client.notices).await;
    }
    let mcp = session.mcp.hub();
    let mut tools = session.tools.clone();
    tools.extend(mcp.tools());
    let settings = session.settings.lock().clone();
    // The layers are assembled here, once; later requests of the run continue the transcript.
    let transcript = session.store.lock().context().llm_messages();
    let recall = if session.config.recall.enabled {
        let turns = session
            .history
            .recall(
                user_text(&user),
                &session.cwd,
                session.id.clone(),
                session.config.recall.max_turns,
            )
            .await;
        RecallHints::render(turns, session.config.recall.budget_tokens)
    } else {
        RecallHints::default()
    };
    let mut assembled = ContextEngine.assemble(ContextRequest {
        model: &settings.model,
        cwd: session.cwd.clone(),
        workspace_dirs: Vec::new(),
        config_dir: Some(session.config_dir.clone()),
        memory: session.notes.clone(),
        tools: &tools,
        extensions: mcp.instructions(),
        skills: session.commands.skills(),
        transcript,
    });
    let hooks = Arc::new(RunHooks {
        gate: PermissionGate::new(
            session.cwd.clone(),
            tools.clone(),
            session.settings.clone(),
            session.memory.clone(),
            port.clone(),
            stop.clone(),
            session.sandbox.clone(),
        ),
        settings: session.settings.clone(),
        applied: Mutex::new((settings.model.clone(), settings.thinking)),
    });
    let mut config = LoopConfig::new(settings.model.clone(), session.provider.clone());
    config.thinking = settings.thinking;
    config.stream_options.stall = session.config.requests.stall_policy();
    config.max_turns = settings.limits.max_turns;
    config.tool_timeouts = session.config.limits.tool_timeouts();
    config.tool_timeouts.default = settings.limits.tool_timeout;
    config.hooks = hooks.clone();
    config.response_schema = schema.clone();
    // Recalled turns open the run after the recent ones; they are context, not transcript,
    // so they are never written to the session file.
    if let Some(recalled) = recall.message {
        tracing::debug!(turns = recall.turns.len(), "recall hints added");
        assembled.messages.push(recalled);
    }
    let agent = Agent::new(config, assembled.system_prompt, tools.clone());
    agent.set_messages(assembled.messages);
    // What was typed since the prompt took the turn, and from here on, goes into this run
    // (`_march/session/queue`).
    session.queue.run_started(agent.clone());
    let port_for_compaction = port.clone();
    let listener = Arc::new(Listener {
        store: session.store.clone(),
        port,
        settings: session.settings.clone(),
        mapper: Mutex::new(
            UpdateMapper::new(
                tools,
                settings.model.context_window,
                // Unique per run, also across runner restarts, so chunk groups never merge.
                format!("{:x}-{}", now_ms(), session.next_run()),
            )
            .with_terminals(session.terminals.clone()),
        ),
        failure: Mutex::new(None),
        stop: stop.clone(),
        last_assistant: Mutex::new(None),
        queue: session.queue.clone(),
        structured: schema.is_some(),
        schema_retries: Mutex::new(0),
        writing: Mutex::new(None),
    });
    let events = listener.clone();
    agent.subscribe(move |event, _| {
        let events = events.clone();
        async move { events.on_event(event).await }
    });

    let prompt = agent.prompt(vec![Message::User(user)]);
    tokio::pin!(prompt);
    // Biased so the run has started (and can be aborted) before a stop is looked at.
    let result = tokio::select! {
        biased;
        result = &mut prompt => result,
        () = stop.cancelled() => {
            agent.abort();
            prompt.await
        }
    };
    // The run's events all went out; a write it ended on is waited for here.
    listener.flush().await;
    result.map_err(|e| errors::internal(e.to_string()))?;
    if let Some(failure) = listener.failure.lock().clone() {
        return Err(errors::internal(failure));
    }
    if !stop.is_cancelled() {
        compact_after_run(session, &agent, &listener, &port_for_compaction, &stop).await?;
        if let Some(failure) = listener.failure.lock().clone() {
            return Err(errors::internal(failure));
        }
    }
    if cancel.is_cancelled() || hooks.gate.user_cancelled() {
        return Ok(PromptResponse::new(StopReason::Cancelled));
    }
    let last = listener.last_assistant.lock().clone();
    let response = stop_reason(last.as_ref())?;
    Ok(match (schema, last) {
        (Some(schema), Some(last)) if response.stop_reason == StopReason::EndTurn => {
            let answers = 1 + *listener.schema_retries.lock();
            with_structured_result(response, &schema, &last, answers)
        }
        _ => response,
    })
}

/// `response` with the run's structured output: the answer's value, or what is wrong with it.
fn with_structured_result(
    response: PromptResponse,
    schema: &ResponseSchema,
    last: &AssistantMessage,
    answers: u32,
) -> PromptResponse {
    let (value, error) = match schema.check_message(last) {
        Ok(value) => (Some(value), None),
        Err(error) => (None, Some(error)),
    };
    let result = structured_output::StructuredResult {
        value,
        error,
        answers,
    };
    structured_output::with_march_meta(
        response,
        structured_output::RESULT_KEY,
        serde_json::to_value(result).unwrap_or_default(),
    )
}

/// A request for a corrected answer, as the user's message the client shows, marked
/// `_meta.march.schemaRetry`.
fn schema_retry(user: &UserMessage) -> SessionUpdate {
    marked_user_message(
        user,
        structured_output::RETRY_KEY,
        serde_json::Value::Bool(true),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(stop: CoreStop, error: Option<&str>) -> AssistantMessage {
        let mut a = AssistantMessage::empty(&Model::openai_compatible("p", "m", "http://x"));
        a.stop_reason = stop;
        a.error_message = error.map(str::to_string);
        a
    }

    /// An error the provider called a refusal.
    fn refused(error: &str) -> AssistantMessage {
        AssistantMessage {
            refused: true,
            ..ended(CoreStop::Error, Some(error))
        }
    }

    #[test]
    fn stop_reasons_map_to_acp() {
        let r = |stop, error| stop_reason(Some(&ended(stop, error))).map(|r| r.stop_reason);
        assert_eq!(r(CoreStop::Stop, None), Ok(StopReason::EndTurn));
        assert_eq!(r(CoreStop::ToolUse, None), Ok(StopReason::EndTurn));
        assert_eq!(r(CoreStop::Length, None), Ok(StopReason::MaxTokens));
        assert_eq!(r(CoreStop::Aborted, None), Ok(StopReason::Cancelled));
        for words in [
            "the model refused to answer (stop reason: refusal)",
            "the provider's content filter blocked the response",
        ] {
            assert_eq!(
                stop_reason(Some(&refused(words))).map(|r| r.stop_reason),
                Ok(StopReason::Refusal)
            );
        }
        let err = r(CoreStop::Error, Some("HTTP 500: overloaded")).unwrap_err();
        assert_eq!(err.message, "HTTP 500: overloaded");
        assert_eq!(err.code, agent_client_protocol::ErrorCode::INTERNAL_ERROR);
        // Words are not a refusal: a server that is not running is an error that says so.
        for words in [
            "connection refused by http://127.0.0.1:9/v1/chat/completions; is the model \
             server running, and is the base URL right?",
            "the model refused to answer (stop reason: refusal)",
            "blocked by the content filter",
        ] {
            let err = r(CoreStop::Error, Some(words)).unwrap_err();
            assert_eq!(err.message, words);
        }
        assert_eq!(
            stop_reason(None).map(|r| r.stop_reason),
            Ok(StopReason::EndTurn)
        );
        let limit = RunLimit::ToolTimeout {
            tool: "bash".into(),
            after: std::time::Duration::from_secs(30),
        };
        let response = stop_reason(Some(&ended(CoreStop::Error, Some(&limit.message())))).unwrap();
        assert_eq!(response.stop_reason, StopReason::MaxTurnRequests);
        let meta = serde_json::Value::Object(response.meta.unwrap());
        assert_eq!(meta["march"]["limit"]["kind"], "tool_timeout");
        assert_eq!(meta["march"]["limit"]["tool"], "bash");
        assert_eq!(meta["march"]["limit"]["seconds"], 30.0);
        let response = stop_reason(Some(&ended(
            CoreStop::Error,
            Some(&RunLimit::MaxTurns(3).message()),
        )))
        .unwrap();
        assert_eq!(response.stop_reason, StopReason::MaxTurnRequests);
        let meta = serde_json::Value::Object(response.meta.unwrap());
        assert_eq!(meta["march"]["limit"]["value"], 3);
    }
}
