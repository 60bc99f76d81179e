//! The control socket's watches (`watch` in docs/CONTROL.md): what watched sessions do,
//! sent as it happens: attention changes, turns that start and end, answer text as it
//! streams, tool calls and permission questions. The gateway is built on them.

use std::collections::BTreeMap;

use agent_client_protocol::v1::schema::{ContentBlock, ContentChunk, SessionUpdate};
use march_wire::WatchEvent;
use tokio::sync::mpsc;

use crate::server::connection::WatchEvents;
use crate::workspace::agent::AgentEvent;
use crate::workspace::router::{Attention, SessionKey};
use crate::workspace::supervisor::{SessionState, TurnEvent};

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

    /// Sends `event`; `false` once the connection is gone, or so far behind that it is
    /// let go (its connection closes; the watcher can watch again).
    fn send(&self, event: WatchEvent) -> bool {
        match self.events.try_send(Ok(event)) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                tracing::warn!("a watch stopped reading: let go");
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }
}

/// The watches open on this workspace.
#[derive(Default)]
pub(super) struct Watchers(Vec<Watcher>);

impl Watchers {
    /// A connection watches `session` (every session without one): it is told at once what
    /// each watched session wants, then what they do. A session that is not open is refused.
    pub(super) fn add(
        &mut self,
        session: Option<u64>,
        events: WatchEvents,
        rows: &[SessionState<'_>],
    ) {
        let session = session.map(SessionKey);
        if let Some(key) = session
            && !rows.iter().any(|r| r.key == key)
        {
            let _ = events.try_send(Err(format!("no session {}", key.0)));
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
    pub(super) fn sessions_now(&mut self, rows: &[SessionState<'_>]) {
        self.0.retain_mut(|watcher| tell_attention(watcher, rows));
    }

    fn broadcast(&mut self, key: SessionKey, event: &WatchEvent) {
        self.0
            .retain(|watcher| !watcher.watches(key) || watcher.send(event.clone()));
    }
}

/// Tells `watcher` what changed in `rows` since it was last told; `false` when it is done
/// (its connection is gone, or the one session it watches closed).
fn tell_attention(watcher: &mut Watcher, rows: &[SessionState<'_>]) -> bool {
    let watched = watcher.session;
    for row in rows.iter().filter(|r| watched.is_none_or(|s| s == r.key)) {
        let same = watcher
            .told
            .get(&row.key)
            .is_some_and(|(attention, title, question)| {
                *attention == row.attention
                    && title == row.title
                    && question.as_deref() == row.question
            });
        if same {
            continue;
        }
        let event = WatchEvent::Attention {
            session: row.key.0,
            attention: super::control::attention_name(row.attention).to_string(),
            title: row.title.to_string(),
            question: row.question.map(str::to_string),
        };
        if !watcher.send(event) {
            return false;
        }
        let told = (
            row.attention,
            row.title.to_string(),
            row.question.map(str::to_string),
        );
        watcher.told.insert(row.key, told);
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use agent_client_protocol::v1::schema::{
        ContentBlock, ContentChunk, PromptResponse, SessionNotification, SessionUpdate, StopReason,
        TextContent,
    };

    fn drain(rx: &mut mpsc::Receiver<Result<WatchEvent, String>>) -> Vec<WatchEvent> {
        std::iter::from_fn(|| rx.try_recv().ok())
            .map(|e| e.unwrap())
            .collect()
    }

    #[tokio::test]
    async fn a_watch_hears_attention_turns_and_text_of_its_session_only() {
        let (mut ws, _bus) = crate::workspace::test_workspace_on(&["/work/api", "/work/web"]);
        ws.select_tab(1);
        let web = ws.focused_session().unwrap();
        ws.select_tab(0);
        let api = ws.focused_session().unwrap();
        let mut watchers = Watchers::default();
        let (one, mut one_rx) = mpsc::channel(64);
        let (all, mut all_rx) = mpsc::channel(64);
        watchers.add(Some(api.0), one, &ws.session_states());
        watchers.add(None, all, &ws.session_states());
        // At once: what each watched session wants.
        let first = drain(&mut one_rx);
        assert!(
            matches!(&first[..], [WatchEvent::Attention { session, attention, .. }]
                if *session == api.0 && attention == "idle"),
            "{first:?}"
        );
        assert_eq!(drain(&mut all_rx).len(), 2);

        // A turn of the api session: its start, text and end, and the attention change.
        watchers.turn_event(api, &TurnEvent::Started("fix it".into()));
        ws.test_attention(api, Attention::Working);
        watchers.sessions_now(&ws.session_states());
        let chunk = AgentEvent::Update(SessionNotification::new(
            "s",
            SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(
                TextContent::new("done"),
            ))),
        ));
        watchers.agent_event(api, &chunk);
        watchers.agent_event(web, &chunk);
        watchers.turn_event(
            api,
            &TurnEvent::Ended(Ok(PromptResponse::new(StopReason::EndTurn))),
        );
        let heard = drain(&mut one_rx);
        let WatchEvent::Attention { title, .. } = &heard[1] else {
            panic!("{heard:?}");
        };
        let title = title.clone();
        assert_eq!(
            heard,
            [
                WatchEvent::TurnStart {
                    session: api.0,
                    text: "fix it".into()
                },
                WatchEvent::Attention {
                    session: api.0,
                    attention: "working".into(),
                    title,
                    question: None
                },
                WatchEvent::Text {
                    session: api.0,
                    text: "done".into()
                },
                WatchEvent::TurnEnd {
                    session: api.0,
                    stop_reason: Some("end_turn".into()),
                    error: None
                },
            ]
        );
        // The watch of every session heard the web session's text too.
        let all = drain(&mut all_rx);
        assert!(all.iter().any(|e| e.session() == web.0), "{all:?}");

        // The api session closes: its watch is told and ends; the other goes on.
        ws.select_tab(0);
        ws.close_pane(ws.focused());
        watchers.sessions_now(&ws.session_states());
        assert_eq!(drain(&mut one_rx), [WatchEvent::Closed { session: api.0 }]);
        assert!(one_rx.recv().await.is_none(), "the watch ended");
        assert_eq!(drain(&mut all_rx), [WatchEvent::Closed { session: api.0 }]);
        // A watch of a session that is not open is refused.
        let (gone, mut gone_rx) = mpsc::channel(1);
        watchers.add(Some(api.0), gone, &ws.session_states());
        assert!(gone_rx.try_recv().unwrap().is_err());
    }

    #[tokio::test]
    async fn a_watch_that_stops_reading_is_let_go() {
        let (ws, _bus) = crate::workspace::test_workspace_on(&["/work/api"]);
        let api = ws.focused_session().unwrap();
        let mut watchers = Watchers::default();
        let (slow, mut slow_rx) = mpsc::channel(3);
        watchers.add(Some(api.0), slow, &ws.session_states());
        for _ in 0..3 {
            watchers.turn_event(api, &TurnEvent::Started("again".into()));
        }
        assert!(watchers.is_empty(), "let go once its queue was full");
        // What it had queued is still read, then its connection ends.
        assert_eq!(drain(&mut slow_rx).len(), 3);
        assert!(slow_rx.recv().await.is_none());
    }
}
