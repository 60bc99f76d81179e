//! Messages typed while a turn runs (`_march/session/queue`): handed to the running Agent's
//! steering or follow-up queue, and tracked by id so the client can take one back, learn
//! when one is delivered, and get back those the turn never delivered.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use std::sync::Arc;

use march_core::agent::Agent;
use march_core::message::{Message, UserMessage};

use super::port::ClientPort;
use crate::steering::{QueueKind, QueuedMessage};

/// One queued message.
#[derive(Debug, Clone, PartialEq)]
struct Item {
    id: String,
    kind: QueueKind,
    text: String,
}

/// The queue of a session's running turn.
#[derive(Default)]
pub(crate) struct TurnQueue {
    inner: Mutex<Inner>,
    next: AtomicU64,
}

#[derive(Default)]
struct Inner {
    /// A prompt has the turn: from here until it ends, typed messages are its.
    open: bool,
    /// The running turn's agent; `None` between turns and while the prompt is prepared
    /// (what is queued then waits in `items` and is handed over when the run starts).
    agent: Option<Agent>,
    /// Queued and not delivered yet, oldest first.
    items: Vec<Item>,
    /// Where the running turn's changes are told.
    port: Option<Arc<dyn ClientPort>>,
}

impl Inner {
    /// What waits now, and where to tell it.
    fn changed(&self) -> Option<(Arc<dyn ClientPort>, Vec<QueuedMessage>)> {
        let port = self.port.clone()?;
        let queued = self
            .items
            .iter()
            .map(|i| QueuedMessage {
                id: i.id.clone(),
                kind: i.kind,
                text: i.text.clone(),
            })
            .collect();
        Some((port, queued))
    }
}

/// Tell the client (outside the lock).
fn tell(changed: Option<(Arc<dyn ClientPort>, Vec<QueuedMessage>)>) {
    if let Some((port, queued)) = changed {
        port.queue_changed(queued);
    }
}

fn push(agent: &Agent, item: &Item) {
    let message = Message::User(UserMessage::text(item.text.clone()));
    match item.kind {
        QueueKind::Steer => agent.steer(message),
        QueueKind::FollowUp => agent.follow_up(message),
    }
}

impl TurnQueue {
    /// A prompt took the turn: messages typed from now on are its, even before its run
    /// starts (the prompt is still expanded and recorded); its changes are told to `port`.
    pub(crate) fn opened(&self, port: Arc<dyn ClientPort>) {
        let mut inner = self.inner.lock();
        inner.open = true;
        inner.port = Some(port);
    }

    /// The prompt's run started with `agent`: what was queued meanwhile goes into it, in
    /// order.
    pub(crate) fn run_started(&self, agent: Agent) {
        let mut inner = self.inner.lock();
        for item in &inner.items {
            push(&agent, item);
        }
        inner.agent = Some(agent);
    }

    /// The turn ended: the ids of what it never delivered (the client sends or keeps them).
    pub(crate) fn run_ended(&self) -> Vec<String> {
        let (unsent, changed) = {
            let mut inner = self.inner.lock();
            inner.open = false;
            inner.agent = None;
            let unsent: Vec<String> = inner.items.drain(..).map(|i| i.id).collect();
            let changed = if unsent.is_empty() {
                None
            } else {
                inner.changed()
            };
            inner.port = None;
            (unsent, changed)
        };
        tell(changed);
        unsent
    }

    /// Queue `text` into the running turn; its id, or `None` when no turn runs.
    pub(crate) fn queue(&self, kind: QueueKind, text: String) -> Option<String> {
        let (id, changed) = {
            let mut inner = self.inner.lock();
            if !inner.open {
                return None;
            }
            let id = format!("q{}", self.next.fetch_add(1, Ordering::SeqCst) + 1);
            let item = Item { id, kind, text };
            if let Some(agent) = &inner.agent {
                push(agent, &item);
            }
            let id = item.id.clone();
            inner.items.push(item);
            (id, inner.changed())
        };
        tell(changed);
        Some(id)
    }

    /// Take `id` back; false when it is no longer queued. The agent's queues are rebuilt
    /// from what stays, in order (under the lock, so a queue or unqueue cannot interleave;
    /// the loop may take the oldest meanwhile, which then counts as delivered).
    pub(crate) fn unqueue(&self, id: &str) -> bool {
        let changed = {
            let mut inner = self.inner.lock();
            if !self.unqueue_locked(&mut inner, id) {
                return false;
            }
            inner.changed()
        };
        tell(changed);
        true
    }

    fn unqueue_locked(&self, inner: &mut Inner, id: &str) -> bool {
        let Some(at) = inner.items.iter().position(|i| i.id == id) else {
            return false;
        };
        let Some(agent) = inner.agent.clone() else {
            // Before the run: it only waited here.
            inner.items.remove(at);
            return true;
        };
        let waiting = agent.clear_queues();
        inner.items.remove(at);
        // What the loop took between the client's look and now was delivered: only items
        // still waiting in the agent go back.
        let still: Vec<Item> = inner
            .items
            .iter()
            .filter(|i| {
                waiting.iter().any(|m| match m {
                    Message::User(u) => crate::agent::turn::user_text(u) == i.text,
                    _ => false,
                })
            })
            .cloned()
            .collect();
        for item in &still {
            push(&agent, item);
        }
        true
    }

    /// A user message the loop injected: the id of the queued message it delivers, if any
    /// (the turn's own prompt is none).
    pub(crate) fn delivered(&self, text: &str) -> Option<String> {
        let (id, changed) = {
            let mut inner = self.inner.lock();
            let at = inner.items.iter().position(|i| i.text == text)?;
            let id = inner.items.remove(at).id;
            (id, inner.changed())
        };
        tell(changed);
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use march_core::agent_loop::LoopConfig;
    use march_core::model::Model;
    use std::sync::Arc;

    fn agent() -> Agent {
        let model = Model::openai_compatible("p", "m", "http://127.0.0.1:9");
        let provider = Arc::new(march_core::provider::HttpProvider::new().unwrap());
        Agent::new(LoopConfig::new(model, provider), "", Vec::new())
    }

    /// A port that keeps what it was told of the queue: the texts waiting after each change.
    #[derive(Default)]
    struct Told(parking_lot::Mutex<Vec<Vec<String>>>);

    #[async_trait::async_trait]
    impl ClientPort for Told {
        fn session_id(&self) -> agent_client_protocol::v1::schema::SessionId {
            agent_client_protocol::v1::schema::SessionId::new("s")
        }

        fn notify(&self, _update: agent_client_protocol::v1::schema::SessionUpdate) {}

        fn queue_changed(&self, queued: Vec<QueuedMessage>) {
            self.0
                .lock()
                .push(queued.into_iter().map(|m| m.text).collect());
        }

        async fn request_permission(
            &self,
            _request: agent_client_protocol::v1::schema::RequestPermissionRequest,
        ) -> Result<
            agent_client_protocol::v1::schema::RequestPermissionOutcome,
            agent_client_protocol::Error,
        > {
            Err(agent_client_protocol::Error::internal_error())
        }
    }

    #[test]
    fn what_is_queued_before_the_run_starts_goes_into_it_in_order() {
        let q = TurnQueue::default();
        q.opened(Arc::new(Told::default()));
        let early = q.queue(QueueKind::Steer, "early".into()).unwrap();
        let gone = q.queue(QueueKind::Steer, "taken back".into()).unwrap();
        let after = q.queue(QueueKind::FollowUp, "after".into()).unwrap();
        assert!(q.unqueue(&gone));
        let a = agent();
        q.run_started(a.clone());
        let texts: Vec<String> = a
            .clear_queues()
            .iter()
            .map(|m| match m {
                Message::User(u) => crate::agent::turn::user_text(u),
                _ => String::new(),
            })
            .collect();
        assert_eq!(texts, ["early", "after"]);
        // Never delivered (the queues were emptied here): both come back.
        assert_eq!(q.run_ended(), [early, after]);
        assert_eq!(q.queue(QueueKind::Steer, "between".into()), None);
    }

    #[test]
    fn nothing_queues_between_turns_and_the_unsent_come_back() {
        let q = TurnQueue::default();
        assert_eq!(q.queue(QueueKind::Steer, "early".into()), None);
        let a = agent();
        let told = Arc::new(Told::default());
        q.opened(told.clone());
        q.run_started(a.clone());
        let one = q.queue(QueueKind::Steer, "one".into()).unwrap();
        let two = q.queue(QueueKind::FollowUp, "two".into()).unwrap();
        let three = q.queue(QueueKind::Steer, "three".into()).unwrap();
        assert!(a.has_queued_messages());
        // Delivering "one" (the loop injected it) removes it.
        assert_eq!(q.delivered("one"), Some(one.clone()));
        assert_eq!(q.delivered("the turn's prompt"), None);
        // Taking "three" back leaves only "two" in the agent ("one" was delivered).
        assert!(q.unqueue(&three));
        assert!(!q.unqueue(&three));
        let left = a.clear_queues();
        assert_eq!(left.len(), 1);
        let Message::User(u) = &left[0] else {
            panic!("not a user message");
        };
        assert_eq!(crate::agent::turn::user_text(u), "two");
        assert_eq!(q.run_ended(), [two]);
        assert!(!q.unqueue(&one));
        // The client was told after each change: queued three, one delivered, three taken
        // back, the turn ended with "two" unsent.
        let told = told.0.lock().clone();
        let texts: Vec<Vec<&str>> = told
            .iter()
            .map(|q| q.iter().map(String::as_str).collect())
            .collect();
        assert_eq!(
            texts,
            [
                vec!["one"],
                vec!["one", "two"],
                vec!["one", "two", "three"],
                vec!["two", "three"],
                vec!["two"],
                vec![],
            ]
        );
    }
}
