//! Delivery: one task takes the queue's messages in order to the workspace. A message the
//! workspace took, or refused for good (no such session), leaves the queue; while no
//! workspace answers, it and those after it wait, and are sent when one is back.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use march_wire::control::Watch;
use parking_lot::Mutex;
use tokio::sync::{Notify, broadcast, oneshot};
use tokio_util::sync::CancellationToken;

use crate::queue::{Message, Queue, Target, WorkspaceId};
use crate::workspace::{ANSWER_TIMEOUT, LinkError, WorkspaceLink};

/// How often a queue that waits for its workspace tries again.
const RETRY: Duration = Duration::from_secs(2);

/// What became of a message.
pub enum Delivery {
    /// The workspace took it for session `session` (queued behind a running turn when
    /// `queued`); `watch`, when one was asked for, began before it was sent.
    Taken {
        /// The session's key.
        session: u64,
        /// It waits behind a running turn.
        queued: bool,
        /// A watch on the session, started before the message was sent.
        watch: Option<Watch>,
    },
    /// The workspace refused it (no such session…); it left the queue.
    Refused(String),
    /// No workspace answers: it stays queued and is sent when one is back.
    Waiting(String),
}

/// A watch one of several may take.
pub type SharedWatch = Arc<Mutex<Option<Watch>>>;

/// A message's outcome, for the adapter it came through.
#[derive(Clone)]
pub struct Outcome {
    /// The message.
    pub message: Message,
    /// The session that took it and the workspace it is in, or why it was refused.
    pub result: Result<(u64, WorkspaceId), String>,
    /// The watch on its session, for a message followed that nobody waited on.
    pub watch: Option<SharedWatch>,
}

/// Someone waits on a message: its outcome goes there (with the watch of a message
/// followed).
struct Waiter {
    tell: oneshot::Sender<Delivery>,
}

/// The delivery task's handle.
pub struct Deliverer {
    queue: Arc<Queue>,
    wake: Arc<Notify>,
    waiters: Arc<Mutex<HashMap<String, Waiter>>>,
    outcomes: broadcast::Sender<Outcome>,
    /// The task, until it is started.
    task: Mutex<Option<Task>>,
}

impl Deliverer {
    /// A deliverer of `queue`'s messages to `link`, not yet started (so the adapters hear
    /// the outcomes of the messages left from before, too).
    pub fn new(queue: Queue, link: WorkspaceLink) -> Deliverer {
        let queue = Arc::new(queue);
        let wake = Arc::new(Notify::new());
        let waiters = Arc::new(Mutex::new(HashMap::new()));
        let outcomes = broadcast::channel(256).0;
        let task = Task {
            queue: queue.clone(),
            wake: wake.clone(),
            waiters: waiters.clone(),
            outcomes: outcomes.clone(),
            link,
        };
        Deliverer {
            queue,
            wake,
            waiters,
            outcomes,
            task: Mutex::new(Some(task)),
        }
    }

    /// Starts delivering, the messages left from before first, until `stop` is cancelled.
    pub fn start(&self, stop: CancellationToken) {
        if let Some(task) = self.task.lock().take() {
            tokio::spawn(task.run(stop));
        }
    }

    /// Queues `message` (on disk before this returns) and returns its id; with `wait`,
    /// also where its outcome is told.
    pub async fn submit(
        &self,
        mut message: Message,
        wait: bool,
    ) -> std::io::Result<(String, Option<oneshot::Receiver<Delivery>>)> {
        // Whoever waits is known before the delivery task can see the message.
        message.id = self.queue.new_id();
        let id = message.id.clone();
        let receiver = wait.then(|| {
            let (tell, receiver) = oneshot::channel();
            self.waiters.lock().insert(id.clone(), Waiter { tell });
            receiver
        });
        let queue = self.queue.clone();
        let written = tokio::task::spawn_blocking(move || {
            queue.push(&mut message)?;
            Ok::<_, std::io::Error>(message)
        })
        .await
        .map_err(std::io::Error::other)
        .and_then(|written| written);
        let message = match written {
            Ok(message) => message,
            Err(e) => {
                self.waiters.lock().remove(&id);
                return Err(e);
            }
        };
        tracing::info!(
            adapter = message.adapter,
            sender = message.sender,
            id = message.id,
            to = ?message.to,
            text = message.text,
            "gateway: message in"
        );
        self.wake.notify_one();
        Ok((id, receiver))
    }

    /// The outcomes of every message from now on.
    pub fn outcomes(&self) -> broadcast::Receiver<Outcome> {
        self.outcomes.subscribe()
    }

    /// How many messages wait in the queue.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }
}

struct Task {
    queue: Arc<Queue>,
    wake: Arc<Notify>,
    waiters: Arc<Mutex<HashMap<String, Waiter>>>,
    outcomes: broadcast::Sender<Outcome>,
    link: WorkspaceLink,
}

impl Task {
    async fn run(self, stop: CancellationToken) {
        // Said once per outage, not on every retry.
        let mut down: Option<String> = None;
        loop {
            let queue = self.queue.clone();
            let pending = tokio::task::spawn_blocking(move || queue.pending())
                .await
                .unwrap_or_default();
            let mut waiting = false;
            for message in pending {
                match deliver(&self.link, &message).await {
                    Err(LinkError::Unreachable(why)) => {
                        if down.as_ref() != Some(&why) {
                            tracing::warn!("gateway: messages wait: {why}");
                            down = Some(why.clone());
                        }
                        // Its sender hears it waits; it is sent when the workspace is back.
                        if let Some(waiter) = self.waiters.lock().remove(&message.id) {
                            let _ = waiter.tell.send(Delivery::Waiting(why));
                        }
                        waiting = true;
                        break;
                    }
                    result => {
                        down = None;
                        self.finished(message, result);
                    }
                }
            }
            tokio::select! {
                () = stop.cancelled() => return,
                () = self.wake.notified() => {}
                () = tokio::time::sleep(RETRY), if waiting => {}
            }
        }
    }

    /// `message` was taken or refused: it leaves the queue; whoever waits is told.
    fn finished(&self, message: Message, result: Result<Taken, LinkError>) {
        self.queue.remove(&message.id);
        let waiter = self.waiters.lock().remove(&message.id);
        let mut shared = None;
        let (delivery, outcome) = match result {
            Ok(Taken {
                session,
                queued,
                watch,
                workspace,
            }) => {
                tracing::info!(
                    adapter = message.adapter,
                    sender = message.sender,
                    id = message.id,
                    session,
                    queued,
                    "gateway: message delivered"
                );
                // Nobody waits (the gateway restarted, the sender was told it waits): the
                // adapter follows the turn.
                let watch = match waiter {
                    Some(_) => watch,
                    None => {
                        shared = watch.map(|w| Arc::new(Mutex::new(Some(w))));
                        None
                    }
                };
                (
                    Delivery::Taken {
                        session,
                        queued,
                        watch,
                    },
                    Ok((session, workspace)),
                )
            }
            Err(e) => {
                let why = e.to_string();
                tracing::warn!(
                    adapter = message.adapter,
                    sender = message.sender,
                    id = message.id,
                    "gateway: message refused: {why}"
                );
                (Delivery::Refused(why.clone()), Err(why))
            }
        };
        if let Some(waiter) = waiter {
            let _ = waiter.tell.send(delivery);
        }
        let _ = self.outcomes.send(Outcome {
            message,
            result: outcome,
            watch: shared,
        });
    }
}

/// A message the workspace took.
struct Taken {
    /// The session.
    session: u64,
    /// It waits behind a running turn.
    queued: bool,
    /// A watch on the session, when one was asked for.
    watch: Option<Watch>,
    /// The workspace.
    workspace: WorkspaceId,
}

/// Sends `message` to its session (opened first for a project); a message followed has a
/// watch on the session begin before it is sent, so nothing its turn does is missed.
async fn deliver(link: &WorkspaceLink, message: &Message) -> Result<Taken, LinkError> {
    let (_, info) = link.server().await?;
    let workspace = WorkspaceId::from(info);
    // A key from an earlier conversation means nothing in a workspace that restarted.
    if message.workspace.as_ref().is_some_and(|w| *w != workspace) {
        return Err(LinkError::Refused(
            "its session was in a workspace that has ended".into(),
        ));
    }
    let key = match &message.to {
        Target::Session { session } => link.resolve(session).await?,
        Target::Project { dir, agent } => {
            let dir = match dir {
                Some(dir) => dir.clone(),
                None => link.first_dir().await?,
            };
            link.open_session(&dir, agent.as_deref()).await?
        }
    };
    let watch = if message.follow {
        let (mut watch, _) = link.watch(Some(key)).await?;
        // Its first event (the session's attention) says the workspace holds the watch.
        tokio::time::timeout(ANSWER_TIMEOUT, watch.next())
            .await
            .map_err(|_| {
                LinkError::Unreachable("the workspace did not start the watch".into())
            })??;
        Some(watch)
    } else {
        None
    };
    let queued = link.send(key, &message.text).await?;
    Ok(Taken {
        session: key,
        queued,
        watch,
        workspace,
    })
}
