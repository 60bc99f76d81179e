//! Compaction tests over real session stores (in temporary directories) and, for the
//! summary requests, a scripted model server on loopback.

mod branch;
mod compact;
mod cut;

use std::path::Path;

use serde_json::{Value, json};

use super::*;
use crate::message::{
    AssistantContent, AssistantMessage, StopReason, TextContent, ToolCall, ToolResultMessage,
    Usage, UserContent, UserMessage,
};
use crate::model::Model;
use crate::session::{SessionHeader, SessionMessage};

fn new_store(dir: &Path) -> SessionStore {
    SessionStore::create(dir, SessionHeader::new("/work/proj")).unwrap()
}

fn model() -> Model {
    Model::openai_compatible("p", "m", "http://127.0.0.1:9")
}

/// A user message of `chars` characters (`chars / 4` tokens), starting with `label`.
fn user(label: &str, chars: usize) -> SessionMessage {
    SessionMessage::User(UserMessage::text(padded(label, chars)))
}

fn padded(label: &str, chars: usize) -> String {
    let mut text = label.to_string();
    while text.len() < chars {
        text.push('.');
    }
    text
}

/// An assistant message with text of `chars` characters.
fn reply(label: &str, chars: usize) -> SessionMessage {
    let mut a = AssistantMessage::empty(&model());
    a.content.push(AssistantContent::Text(TextContent {
        text: padded(label, chars),
        text_signature: None,
    }));
    SessionMessage::Assistant(a)
}

/// An assistant message calling `name` with `args` (call id `id`).
fn call(id: &str, name: &str, args: Value) -> SessionMessage {
    let mut a = AssistantMessage::empty(&model());
    a.stop_reason = StopReason::ToolUse;
    a.content.push(AssistantContent::ToolCall(ToolCall {
        id: id.to_string(),
        name: name.to_string(),
        arguments: args,
        thought_signature: None,
    }));
    SessionMessage::Assistant(a)
}

/// The result of call `id`, `chars` characters long.
fn result(id: &str, name: &str, chars: usize) -> SessionMessage {
    SessionMessage::ToolResult(ToolResultMessage {
        tool_call_id: id.to_string(),
        tool_name: name.to_string(),
        content: vec![UserContent::text(padded(&format!("result {id}"), chars))],
        details: Value::Null,
        is_error: false,
        timestamp: 0,
        usage: None,
    })
}

/// An assistant reply that reports `total` context tokens.
fn reply_with_usage(label: &str, total: u64) -> SessionMessage {
    let SessionMessage::Assistant(mut a) = reply(label, 4) else {
        unreachable!()
    };
    a.usage = Usage {
        input: total,
        total_tokens: total,
        ..Default::default()
    };
    SessionMessage::Assistant(a)
}

/// Append messages, returning their entry ids.
fn append(store: &mut SessionStore, messages: Vec<SessionMessage>) -> Vec<String> {
    messages
        .into_iter()
        .map(|m| store.append_message(m).unwrap().id.clone())
        .collect()
}

/// The first text of a session message, for compact assertions.
fn label(m: &SessionMessage) -> String {
    let text = match m {
        SessionMessage::User(u) => match &u.content {
            crate::message::UserBody::Text(t) => t.clone(),
            crate::message::UserBody::Blocks(b) => match b.first() {
                Some(UserContent::Text(t)) => t.text.clone(),
                _ => String::new(),
            },
        },
        SessionMessage::Assistant(a) => match a.content.first() {
            Some(AssistantContent::Text(t)) => t.text.clone(),
            Some(AssistantContent::ToolCall(c)) => format!("call {}", c.id),
            _ => String::new(),
        },
        SessionMessage::ToolResult(r) => format!("result {}", r.tool_call_id),
        SessionMessage::BashExecution(b) => format!("bash {}", b.command),
        SessionMessage::Custom(c) => format!("custom {}", c.custom_type),
        SessionMessage::BranchSummary(s) => format!("branch {}", s.summary),
        SessionMessage::CompactionSummary(s) => format!("compaction {}", s.summary),
    };
    text.trim_end_matches('.').to_string()
}

fn labels(messages: &[std::sync::Arc<SessionMessage>]) -> Vec<String> {
    messages.iter().map(|m| label(m)).collect()
}

/// Settings keeping about `keep` tokens.
fn keep(keep: u64) -> CompactionSettings {
    CompactionSettings {
        keep_recent_tokens: keep,
        ..CompactionSettings::default()
    }
}

#[test]
fn settings_default_and_deserialize_with_either_spelling() {
    let d = CompactionSettings::default();
    assert_eq!(
        (d.enabled, d.reserve_tokens, d.keep_recent_tokens),
        (true, 16_384, 20_000)
    );
    let from_config: CompactionSettings =
        serde_json::from_value(json!({"reserve_tokens": 1000})).unwrap();
    assert_eq!(
        from_config,
        CompactionSettings {
            reserve_tokens: 1000,
            ..d
        }
    );
    let from_pi: CompactionSettings =
        serde_json::from_value(json!({"enabled": false, "keepRecentTokens": 5})).unwrap();
    assert_eq!((from_pi.enabled, from_pi.keep_recent_tokens), (false, 5));
}
