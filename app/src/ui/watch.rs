//! The control socket's watches (`watch` in docs/CONTROL.md): what watched sessions do,
//! sent as it happens: attention changes, turns that start and end, answer text as it
//! streams, tool calls and permission questions. The gateway is built on them.

use std::collections::BTreeMap;

use agent_client_protocol::v1::schema::{ContentBlock, ContentChunk, SessionUpdate};
use march_wire::WatchEvent;

use crate::server::connection::WatchEvents;
use crate::workspace::agent::AgentEvent;
use crate::workspace::router::{Attention, SessionKey};
use crate::workspace::supervisor::{SessionRow, TurnEvent};

/// What one watch was last told of a session's attention.
type Told = (Attention, String, Option<String>);

/// One watching connection.
struct Watcher {
    /// The session it watches; every session when `None`.
    session: Option<SessionKey>,
    /// Where its events go.
    events: WatchEvents,
    /// What it was last told of each session's attention.
    told: BTreeMap<SessionKey, Told>,
}

impl Watcher {
    fn watches(&self, key: SessionKey) -> bool {
        self.session.is_none_or(|s| s == key)
    }

    /// Sends `event`; `false` once the connection is gone.
    fn send(&self, event: WatchEvent) -> bool {
        self.events.send(Ok(event)).is_ok()
    }
}

/// The watches open on this workspace.
#[derive(Default)]
pub(super) struct Watchers(Vec<Watcher>);

impl Watchers {
    /// A connection watches `session` (every session without one): it is told at once what
    /// each watched session wants, then what they do. A session that is not open is refused.
    pub(super) fn add(&mut self, session: Option<u64>, events: WatchEvents, rows: &[SessionRow]) {
        let session = session.map(SessionKey);
        if let Some(key) = session
            && !rows.iter().any(|r| r.key == key)
        {
            let _ = events.send(Err(format!("no session {}", key.0)));
            return;
        }
        let mut watcher = Watcher {
            session,
            events,
            told: BTreeMap::new(),
        };
        if tell_attention(&mut watcher, rows) {
            self.0.push(watcher);
        }
    }

    /// Whether anyone watches.
    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// An agent event of session `key`, before the workspace takes it: its streamed text and
    /// the tool calls it begins.
    pub(super) fn agent_event(&mut self, key: SessionKey, event: &AgentEvent) {
        if self.0.is_empty() {
            return;
        }
        let AgentEvent::Update(notification) = event else {
            return;
        };
        let event = match &notification.update {
            SessionUpdate::AgentMessageChunk(ContentChunk {
                content: ContentBlock::Text(text),
                ..
            }) => WatchEvent::Text {
                session: key.0,
                text: text.text.clone(),
            },
            SessionUpdate::ToolCall(call) => WatchEvent::Tool {
                session: key.0,
                title: call.title.clone(),
            },
            _ => return,
        };
        self.broadcast(key, &event);
    }

    /// A step of session `key`'s turn.
    pub(super) fn turn_event(&mut self, key: SessionKey, event: &TurnEvent) {
        if self.0.is_empty() {
            return;
        }
        let event = match event {
            TurnEvent::Started(text) => WatchEvent::TurnStart {
                session: key.0,
                text: text.clone(),
            },
            TurnEvent::Asked(question) => WatchEvent::Permission {
                session: key.0,
                question: question.clone(),
            },
            TurnEvent::Ended(end) => WatchEvent::TurnEnd {
                session: key.0,
                stop_reason: end.as_ref().ok().and_then(|r| {
                    serde_json::to_value(r.stop_reason)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                }),
                error: end.as_ref().err().cloned(),
            },
        };
        self.broadcast(key, &event);
    }

    /// The sessions as they are now: each watch is told of attention that changed and of
    /// sessions that closed (a watch on one session ends with it).
    pub(super) fn sessions_now(&mut self, rows: &[SessionRow]) {
        self.0.retain_mut(|watcher| tell_attention(watcher, rows));
    }

    fn broadcast(&mut self, key: SessionKey, event: &WatchEvent) {
        self.0
            .retain(|watcher| !watcher.watches(key) || watcher.send(event.clone()));
    }
}

/// Tells `watcher` what changed in `rows` since it was last told; `false` when it is done
/// (its connection is gone, or the one session it watches closed).
fn tell_attention(watcher: &mut Watcher, rows: &[SessionRow]) -> bool {
    let watched = watcher.session;
    for row in rows.iter().filter(|r| watched.is_none_or(|s| s == r.key)) {
        let now = (row.attention, row.title.clone(), row.question.clone());
        if watcher.told.get(&row.key) == Some(&now) {
            continue;
        }
        let event = WatchEvent::Attention {
            session: row.key.0,
            attention: super::control::attention_name(row.attention).to_string(),
            title: row.title.clone(),
            question: row.question.clone(),
        };
        if !watcher.send(event) {
            return false;
        }
        watcher.told.insert(row.key, now);
    }
    let closed: Vec<SessionKey> = watcher
        .told
        .keys()
        .filter(|k| !rows.iter().any(|r| r.key == **k))
        .copied()
        .collect();
    for key in closed {
        watcher.told.remove(&key);
        if !watcher.send(WatchEvent::Closed { session: key.0 }) || watcher.session == Some(key) {
            return false;
        }
    }
    true
}
