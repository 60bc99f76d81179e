//! March's extension for typing while a turn runs: `_march/session/queue` puts a message into
//! the running turn (steering, delivered at the next turn boundary; or a follow-up, run when
//! the agent would stop), `_march/session/unqueue` takes one back before it is delivered.
//! `_march/session/queue_changed` tells clients what is queued after every change (queued,
//! taken back, delivered, the turn ended). Advertised as `agentCapabilities._meta.march.queue`.
//! See `docs/PROTOCOL.md`.

use agent_client_protocol::{JsonRpcNotification, JsonRpcRequest, JsonRpcResponse};
use serde::{Deserialize, Serialize};

/// The extension's key under `_meta.march` in the agent's capabilities.
pub const EXTENSION_KEY: &str = "queue";
/// The method that queues a message.
pub const QUEUE_METHOD: &str = "_march/session/queue";
/// The method that takes a queued message back.
pub const UNQUEUE_METHOD: &str = "_march/session/unqueue";
/// The notification of the queue's messages after a change.
pub const CHANGED_NOTIFICATION: &str = "_march/session/queue_changed";
/// The key of the `_meta.march` of a `user_message_chunk` that delivers a queued message,
/// and of a prompt answer listing the queued messages its turn never delivered.
pub const QUEUE_ID_KEY: &str = "queueId";
/// See [`QUEUE_ID_KEY`].
pub const UNSENT_KEY: &str = "unsent";

/// When a queued message is delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueKind {
    /// At the next turn boundary (after the running tool calls), before the next model call.
    Steer,
    /// When the agent would otherwise stop.
    FollowUp,
}

/// `_march/session/queue`: put `text` into the session's running turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonRpcRequest)]
#[request(method = "_march/session/queue", response = QueueMessageResponse)]
#[serde(rename_all = "camelCase")]
pub struct QueueMessageRequest {
    /// The session.
    pub session_id: String,
    /// The message.
    pub text: String,
    /// When it is delivered.
    pub kind: QueueKind,
}

/// `_march/session/queue` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonRpcResponse)]
#[serde(rename_all = "camelCase")]
pub struct QueueMessageResponse {
    /// The message's id in the queue; `None` when no turn runs (send it as a prompt).
    pub id: Option<String>,
}

/// `_march/session/unqueue`: take a queued message back before it is delivered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonRpcRequest)]
#[request(method = "_march/session/unqueue", response = UnqueueMessageResponse)]
#[serde(rename_all = "camelCase")]
pub struct UnqueueMessageRequest {
    /// The session.
    pub session_id: String,
    /// The id `_march/session/queue` gave.
    pub id: String,
}

/// `_march/session/unqueue` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonRpcResponse)]
#[serde(rename_all = "camelCase")]
pub struct UnqueueMessageResponse {
    /// Whether it was still queued (false: already delivered, or its turn ended).
    pub removed: bool,
}

/// A message waiting in a running turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueuedMessage {
    /// Its id.
    pub id: String,
    /// When it is delivered.
    pub kind: QueueKind,
    /// The message.
    pub text: String,
}

/// `_march/session/queue_changed`: what waits in the session's running turn now, oldest
/// first (empty when the turn ended or delivered the last).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonRpcNotification)]
#[notification(method = "_march/session/queue_changed")]
#[serde(rename_all = "camelCase")]
pub struct QueueChangedNotification {
    /// The session.
    pub session_id: String,
    /// The messages not delivered yet.
    pub queued: Vec<QueuedMessage>,
}
