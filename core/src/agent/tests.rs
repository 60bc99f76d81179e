//! `Agent` tests: state reduction, listeners, queues, abort, continue, reset.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use march_testkit::{Event, Script, ScriptedServer, Turn};

use super::*;
use crate::agent_loop::LoopConfig;
use crate::message::StopReason;
use crate::model::Model;
use crate::provider::{HttpProvider, RetryPolicy};

async fn agent(turns: Vec<Turn>) -> (Agent, ScriptedServer) {
    let server = ScriptedServer::start(Script::new(turns)).await.unwrap();
    let model = Model::openai_compatible("scripted", "m", &server.base_url());
    let mut cfg = LoopConfig::new(model, Arc::new(HttpProvider::new().unwrap()));
    cfg.stream_options.retry = RetryPolicy::none();
    (Agent::new(cfg, "sys", vec![]), server)
}

fn record(agent: &Agent) -> Arc<Mutex<Vec<String>>> {
    let log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    agent.subscribe(move |ev, _| {
        let l = l.clone();
        async move {
            l.lock().unwrap().push(ev.kind().to_string());
        }
    });
    log
}

#[tokio::test]
async fn prompt_runs_to_completion_and_reduces_state() {
    let (agent, _s) = agent(vec![Turn::text("hello")]).await;
    let log = record(&agent);
    agent.prompt(vec![Message::user("hi")]).await.unwrap();
    let st = agent.state();
    assert!(!st.is_streaming && st.streaming_message.is_none());
    assert_eq!(st.messages.len(), 2);
    assert_eq!(st.messages[1].as_assistant().unwrap().text(), "hello");
    let log = log.lock().unwrap();
    assert_eq!(log.first().map(String::as_str), Some("agent_start"));
    assert_eq!(log.last().map(String::as_str), Some("agent_end"));
}

#[tokio::test]
async fn listeners_are_awaited_in_order_and_idle_waits_for_agent_end_listeners() {
    let (agent, _s) = agent(vec![Turn::text("x")]).await;
    let order = Arc::new(Mutex::new(Vec::new()));
    for name in ["first", "second"] {
        let o = order.clone();
        agent.subscribe(move |ev, _| {
            let o = o.clone();
            async move {
                if matches!(ev, AgentEvent::AgentEnd { .. }) {
                    // A slow listener: idle must not be reported before it finishes.
                    tokio::time::sleep(Duration::from_millis(if name == "first" { 30 } else { 0 }))
                        .await;
                    o.lock().unwrap().push(name);
                }
            }
        });
    }
    let a = agent.clone();
    let run = tokio::spawn(async move { a.prompt(vec![Message::user("hi")]).await });
    // Wait for the run to have started before asking for idle.
    while !agent.is_running() && !run.is_finished() {
        tokio::task::yield_now().await;
    }
    agent.wait_for_idle().await;
    assert_eq!(*order.lock().unwrap(), vec!["first", "second"]);
    run.await.unwrap().unwrap();
}

/// An agent whose run of "hi" is streaming (its answer started, then pauses a minute).
async fn streaming_run() -> (
    Agent,
    ScriptedServer,
    tokio::task::JoinHandle<Result<(), AgentError>>,
) {
    let (agent, server) = agent(vec![Turn::stream(vec![
        Event::text("a"),
        Event::pause(60_000),
    ])])
    .await;
    let started = Arc::new(tokio::sync::Notify::new());
    let st = started.clone();
    agent.subscribe(move |ev, _| {
        let st = st.clone();
        async move {
            if matches!(ev, AgentEvent::MessageUpdate { .. }) {
                st.notify_one();
            }
        }
    });
    let a = agent.clone();
    let run = tokio::spawn(async move { a.prompt(vec![Message::user("hi")]).await });
    started.notified().await;
    (agent, server, run)
}

#[tokio::test]
async fn prompt_while_running_is_refused_with_advice() {
    let (agent, _s, run) = streaming_run().await;
    let err = agent
        .prompt(vec![Message::user("again")])
        .await
        .unwrap_err();
    assert_eq!(err, AgentError::AlreadyRunning);
    assert!(err.to_string().contains("Use steer() or follow_up()"));
    agent.abort();
    run.await.unwrap().unwrap();
    let st = agent.state();
    let last = st.messages.last().unwrap().as_assistant().unwrap();
    assert_eq!(last.stop_reason, StopReason::Aborted);
    assert_eq!(st.error_message.as_deref(), Some("Request was aborted"));
}

#[tokio::test]
async fn steer_and_follow_up_through_the_agent() {
    let (agent, server) = agent(vec![Turn::text("a"), Turn::text("b"), Turn::text("c")]).await;
    let a = agent.clone();
    agent.subscribe(move |ev, _| {
        let a = a.clone();
        async move {
            if matches!(
                &ev,
                AgentEvent::MessageStart {
                    message: Message::Assistant(_)
                }
            ) && !a.has_queued_messages()
                && a.state().messages.len() == 1
            {
                a.follow_up(Message::user("follow"));
                a.steer(Message::user("steer"));
            }
        }
    });
    agent.prompt(vec![Message::user("hi")]).await.unwrap();
    let texts: Vec<String> = agent
        .state()
        .messages
        .iter()
        .map(|m| match m {
            Message::User(u) => format!(
                "u:{}",
                match &u.content {
                    crate::message::UserBody::Text(t) => t.clone(),
                    _ => String::new(),
                }
            ),
            Message::Assistant(a) => format!("a:{}", a.text()),
            Message::ToolResult(_) => "r".into(),
        })
        .collect();
    // Steering comes in before follow-ups: it is polled after the turn, follow-ups only
    // when the agent would stop.
    assert_eq!(texts, ["u:hi", "a:a", "u:steer", "a:b", "u:follow", "a:c"]);
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn queue_mode_all_drains_everything_at_once() {
    let (agent, server) = agent(vec![Turn::text("a"), Turn::text("b")]).await;
    agent.set_queue_modes(QueueMode::All, QueueMode::All);
    agent.follow_up(Message::user("f1"));
    agent.follow_up(Message::user("f2"));
    agent.prompt(vec![Message::user("hi")]).await.unwrap();
    assert_eq!(agent.state().messages.len(), 5);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn continue_after_assistant_uses_queues_or_refuses() {
    let (agent, _s) = agent(vec![Turn::text("a"), Turn::text("b")]).await;
    agent.prompt(vec![Message::user("hi")]).await.unwrap();
    let err = agent.continue_run().await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "Cannot continue from message role: assistant"
    );
    agent.steer(Message::user("more"));
    agent.continue_run().await.unwrap();
    assert_eq!(agent.state().messages.len(), 4);
    agent.reset().unwrap();
    assert!(agent.state().messages.is_empty());
    let err = agent.continue_run().await.unwrap_err();
    assert_eq!(err.to_string(), "Cannot continue: no messages in context");
}

#[tokio::test]
async fn clear_queues_returns_what_was_queued() {
    let (agent, _s) = agent(vec![]).await;
    agent.steer(Message::user("s"));
    agent.follow_up(Message::user("f"));
    assert!(agent.has_queued_messages());
    assert_eq!(agent.clear_queues().len(), 2);
    assert!(!agent.has_queued_messages());
}

#[tokio::test]
async fn an_abort_with_messages_queued_delivers_none_and_keeps_them_to_take_back() {
    let (agent, server, run) = streaming_run().await;
    agent.steer(Message::user("steer"));
    agent.follow_up(Message::user("follow"));
    agent.abort();
    run.await.unwrap().unwrap();
    // The aborted answer ends the run: neither queued message reached the transcript or the
    // model, and both are still there to be taken back (steering first).
    let users = agent
        .state()
        .messages
        .iter()
        .filter(|m| matches!(m, Message::User(_)))
        .count();
    assert_eq!(users, 1);
    assert_eq!(server.requests().len(), 1);
    assert!(agent.has_queued_messages());
    let back = agent.clear_queues();
    assert_eq!(back.len(), 2);
    assert!(!agent.has_queued_messages());
}
