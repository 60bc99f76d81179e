//! `Agent`: the stateful wrapper around the loop — transcript, queues, listeners, abort.

use parking_lot::Mutex;
use std::collections::{BTreeSet, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::agent_loop::{
    EventSink, LoopConfig, LoopContext, LoopError, MessageQueues, run_agent_loop,
    run_agent_loop_continue,
};
use crate::event::AgentEvent;
use crate::message::{AssistantMessage, Message};
use crate::tool::Tool;

/// How many queued messages one drain point takes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum QueueMode {
    /// Only the oldest (pi's default).
    #[default]
    OneAtATime,
    /// Everything queued.
    All,
}

/// Why an `Agent` call was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    /// A run is in progress.
    #[error(
        "Agent is already processing a prompt. Use steer() or follow_up() to queue messages, or wait for it to finish."
    )]
    AlreadyRunning,
    /// The transcript cannot be continued.
    #[error(transparent)]
    Loop(#[from] LoopError),
}

/// Observable state of an agent.
#[derive(Clone, Default)]
pub struct AgentState {
    /// System prompt.
    pub system_prompt: String,
    /// The transcript.
    pub messages: Vec<Message>,
    /// Tools.
    pub tools: Vec<Arc<dyn Tool>>,
    /// True from the start of a run until its `agent_end` listeners settle.
    pub is_streaming: bool,
    /// The assistant message being streamed.
    pub streaming_message: Option<Arc<AssistantMessage>>,
    /// Ids of tool calls that are running.
    pub pending_tool_calls: BTreeSet<String>,
    /// The error of the last failed turn.
    pub error_message: Option<String>,
}

type ListenerFn =
    dyn Fn(AgentEvent, CancellationToken) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync;

/// A handle that removes its listener when passed to [`Agent::unsubscribe`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subscription(u64);

#[derive(Default)]
struct Queues {
    steering: Mutex<VecDeque<Message>>,
    follow_up: Mutex<VecDeque<Message>>,
    steering_mode: Mutex<QueueMode>,
    follow_up_mode: Mutex<QueueMode>,
}

fn drain(q: &Mutex<VecDeque<Message>>, mode: QueueMode) -> Vec<Message> {
    let mut q = q.lock();
    match mode {
        QueueMode::OneAtATime => q.pop_front().into_iter().collect(),
        QueueMode::All => q.drain(..).collect(),
    }
}

impl MessageQueues for Queues {
    fn steering(&self) -> Vec<Message> {
        drain(&self.steering, *self.steering_mode.lock())
    }
    fn follow_up(&self) -> Vec<Message> {
        drain(&self.follow_up, *self.follow_up_mode.lock())
    }
}

struct Inner {
    state: Mutex<AgentState>,
    config: Mutex<LoopConfig>,
    listeners: Mutex<Vec<(u64, Arc<ListenerFn>)>>,
    next_listener: Mutex<u64>,
    queues: Arc<Queues>,
    run: Mutex<Option<CancellationToken>>,
    idle: watch::Sender<bool>,
}

/// A stateful agent; clones share the same agent.
#[derive(Clone)]
pub struct Agent {
    inner: Arc<Inner>,
}

impl Agent {
    /// An agent with a loop config, a system prompt and tools.
    pub fn new(
        config: LoopConfig,
        system_prompt: impl Into<String>,
        tools: Vec<Arc<dyn Tool>>,
    ) -> Self {
        let queues = Arc::new(Queues::default());
        let mut config = config;
        config.queues = queues.clone();
        Agent {
            inner: Arc::new(Inner {
                state: Mutex::new(AgentState {
                    system_prompt: system_prompt.into(),
                    tools,
                    ..AgentState::default()
                }),
                config: Mutex::new(config),
                listeners: Mutex::new(Vec::new()),
                next_listener: Mutex::new(0),
                queues,
                run: Mutex::new(None),
                idle: watch::Sender::new(true),
            }),
        }
    }

    /// A snapshot of the state.
    pub fn state(&self) -> AgentState {
        self.inner.state.lock().clone()
    }

    /// Change the loop configuration used by the next run (model, thinking, hooks, limits).
    pub fn update_config(&self, f: impl FnOnce(&mut LoopConfig)) {
        let mut cfg = self.inner.config.lock();
        f(&mut cfg);
        cfg.queues = self.inner.queues.clone();
    }

    /// Replace the transcript (e.g. when a session is loaded).
    pub fn set_messages(&self, messages: Vec<Message>) {
        self.inner.state.lock().messages = messages;
    }

    /// Set the queue modes for steering and follow-up.
    pub fn set_queue_modes(&self, steering: QueueMode, follow_up: QueueMode) {
        *self.inner.queues.steering_mode.lock() = steering;
        *self.inner.queues.follow_up_mode.lock() = follow_up;
    }

    /// Add a listener; it is awaited for every event, in registration order.
    pub fn subscribe<F, Fut>(&self, f: F) -> Subscription
    where
        F: Fn(AgentEvent, CancellationToken) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let mut next = self.inner.next_listener.lock();
        *next += 1;
        let id = *next;
        let f: Arc<ListenerFn> = Arc::new(move |ev, c| Box::pin(f(ev, c)));
        self.inner.listeners.lock().push((id, f));
        Subscription(id)
    }

    /// Remove a listener.
    pub fn unsubscribe(&self, sub: Subscription) {
        self.inner.listeners.lock().retain(|(id, _)| *id != sub.0);
    }

    /// Queue a message to inject at the next turn boundary.
    pub fn steer(&self, msg: Message) {
        self.inner.queues.steering.lock().push_back(msg);
    }

    /// Queue a message to run when the agent would otherwise stop.
    pub fn follow_up(&self, msg: Message) {
        self.inner.queues.follow_up.lock().push_back(msg);
    }

    /// Whether anything is queued.
    pub fn has_queued_messages(&self) -> bool {
        !self.inner.queues.steering.lock().is_empty()
            || !self.inner.queues.follow_up.lock().is_empty()
    }

    /// Take every queued message back (steering first), e.g. to restore them to an editor.
    pub fn clear_queues(&self) -> Vec<Message> {
        let mut out: Vec<Message> = self.inner.queues.steering.lock().drain(..).collect();
        out.extend(self.inner.queues.follow_up.lock().drain(..));
        out
    }

    /// Abort the running run, if any: the stream and running tools are cancelled.
    pub fn abort(&self) {
        if let Some(c) = self.inner.run.lock().as_ref() {
            c.cancel();
        }
    }

    /// Wait until no run is in progress (after `agent_end` listeners settled).
    pub async fn wait_for_idle(&self) {
        let mut rx = self.inner.idle.subscribe();
        let _ = rx.wait_for(|idle| *idle).await;
    }

    /// Whether a run is in progress.
    pub fn is_running(&self) -> bool {
        self.inner.run.lock().is_some()
    }

    /// Clear transcript, queues and errors. Refused while running.
    pub fn reset(&self) -> Result<(), AgentError> {
        if self.is_running() {
            return Err(AgentError::AlreadyRunning);
        }
        let mut st = self.inner.state.lock();
        st.messages.clear();
        st.streaming_message = None;
        st.pending_tool_calls.clear();
        st.error_message = None;
        drop(st);
        self.clear_queues();
        Ok(())
    }

    /// Run a prompt to completion.
    pub async fn prompt(&self, messages: Vec<Message>) -> Result<(), AgentError> {
        let (ctx, config, cancel) = self.begin()?;
        let mut sink = AgentSink {
            inner: self.inner.clone(),
            cancel: cancel.clone(),
        };
        run_agent_loop(messages, ctx, config, cancel, &mut sink, false).await;
        self.finish();
        Ok(())
    }

    /// Continue from the transcript: after an assistant message, run queued steering (or
    /// follow-ups as a prompt); otherwise ask the model again.
    pub async fn continue_run(&self) -> Result<(), AgentError> {
        let (ctx, config, cancel) = self.begin()?;
        let mut sink = AgentSink {
            inner: self.inner.clone(),
            cancel: cancel.clone(),
        };
        let result = if matches!(ctx.messages.last(), Some(Message::Assistant(_))) {
            let steering = self.inner.queues.steering();
            let (prompts, skip) = if !steering.is_empty() {
                (steering, true)
            } else {
                (self.inner.queues.follow_up(), false)
            };
            if prompts.is_empty() {
                Err(AgentError::Loop(LoopError::EndsWithAssistant))
            } else {
                run_agent_loop(prompts, ctx, config, cancel, &mut sink, skip).await;
                Ok(())
            }
        } else {
            run_agent_loop_continue(ctx, config, cancel, &mut sink)
                .await
                .map(|_| ())
                .map_err(AgentError::from)
        };
        self.finish();
        result
    }

    fn begin(&self) -> Result<(LoopContext, LoopConfig, CancellationToken), AgentError> {
        let mut run = self.inner.run.lock();
        if run.is_some() {
            return Err(AgentError::AlreadyRunning);
        }
        let cancel = CancellationToken::new();
        *run = Some(cancel.clone());
        self.inner.idle.send_replace(false);
        let mut st = self.inner.state.lock();
        st.is_streaming = true;
        st.error_message = None;
        let ctx = LoopContext {
            system_prompt: st.system_prompt.clone(),
            messages: st.messages.clone(),
            tools: st.tools.clone(),
        };
        Ok((ctx, self.inner.config.lock().clone(), cancel))
    }

    fn finish(&self) {
        {
            let mut st = self.inner.state.lock();
            st.is_streaming = false;
            st.streaming_message = None;
            st.pending_tool_calls.clear();
        }
        *self.inner.run.lock() = None;
        self.inner.idle.send_replace(true);
    }
}

/// Reduces events into the agent state, then awaits each listener in order.
struct AgentSink {
    inner: Arc<Inner>,
    cancel: CancellationToken,
}

#[async_trait]
impl EventSink for AgentSink {
    async fn emit(&mut self, event: AgentEvent) {
        {
            let mut st = self.inner.state.lock();
            match &event {
                AgentEvent::MessageStart {
                    message: Message::Assistant(a),
                } => {
                    st.streaming_message = Some(Arc::new(a.clone()));
                }
                AgentEvent::MessageUpdate { message, .. } => {
                    st.streaming_message = Some(message.clone());
                }
                AgentEvent::MessageEnd { message } => {
                    st.streaming_message = None;
                    st.messages.push(message.clone());
                }
                AgentEvent::ToolExecutionStart { tool_call_id, .. } => {
                    st.pending_tool_calls.insert(tool_call_id.clone());
                }
                AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
                    st.pending_tool_calls.remove(tool_call_id);
                }
                AgentEvent::TurnEnd {
                    message: Message::Assistant(a),
                    ..
                } if a.error_message.is_some() => {
                    st.error_message.clone_from(&a.error_message);
                }
                AgentEvent::AgentEnd { .. } => st.streaming_message = None,
                _ => {}
            }
        }
        let listeners: Vec<Arc<ListenerFn>> = self
            .inner
            .listeners
            .lock()
            .iter()
            .map(|(_, f)| f.clone())
            .collect();
        for f in listeners {
            f(event.clone(), self.cancel.clone()).await;
        }
    }
}

#[cfg(test)]
mod tests;
