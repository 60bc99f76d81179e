//! Chat bots: the trait a chat platform's adapter implements ([`ChatAdapter`]), and the one
//! engine that serves every platform: senders on the allow-list only, a chat's messages to
//! its session (a new one on the project the first time, `/to` another), answers sent back
//! whole when the turn ends, permission requests as questions with allow and reject
//! buttons, and the chats' state (which session, how far the updates were read) on disk.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use march_core::atomic_file::{FileMode, write_file};
use march_wire::WatchEvent;
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::deliver::{Deliverer, Outcome};
use crate::queue::{Message, Target};
use crate::workspace::WorkspaceLink;

/// How long to wait before asking a platform or a workspace that failed again.
const RETRY: Duration = Duration::from_secs(2);

/// Why a chat platform did not do what was asked.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ChatError(pub String);

/// Who sent something.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatSender {
    /// The platform's id of the user.
    pub id: String,
    /// Their user name, without `@`, when they have one.
    pub username: Option<String>,
}

impl ChatSender {
    /// How logs name them.
    pub fn label(&self) -> String {
        match &self.username {
            Some(name) => format!("{}(@{name})", self.id),
            None => self.id.clone(),
        }
    }
}

/// What came in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChatInput {
    /// A text message.
    Text(String),
    /// A button of an earlier message pressed: its id (to acknowledge) and its data.
    Press {
        /// The press's id.
        id: String,
        /// The button's data (`allow:3`, `reject:3`).
        data: String,
    },
    /// Something the gateway does not read (a sticker, an edit): only counted.
    Other,
}

/// One update from the platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatUpdate {
    /// Its number: the next poll asks for those after it.
    pub number: i64,
    /// The chat it is in.
    pub chat: String,
    /// Who sent it.
    pub sender: ChatSender,
    /// What it is.
    pub input: ChatInput,
}

/// What the gateway says in a chat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChatMessage {
    /// Text.
    Text(String),
    /// A permission request of session `session`, with allow and reject buttons.
    Question {
        /// What is asked.
        text: String,
        /// The session asking.
        session: u64,
    },
}

/// A chat platform's bot: Telegram's now; Matrix or Slack would be more of these.
#[async_trait]
pub trait ChatAdapter: Send + Sync + 'static {
    /// Its name, in logs and the queue (`telegram`).
    fn name(&self) -> &'static str;
    /// The updates after `after` (all unread ones without), waiting for some up to the
    /// platform's long-poll limit. Asking past an update confirms it.
    async fn updates(&self, after: Option<i64>) -> Result<Vec<ChatUpdate>, ChatError>;
    /// Says `message` in `chat`.
    async fn send(&self, chat: &str, message: &ChatMessage) -> Result<(), ChatError>;
    /// Acknowledges the button press `press` with a short `text`.
    async fn acknowledge(&self, press: &str, text: &str) -> Result<(), ChatError>;
}

/// How the chats of one adapter are served.
#[derive(Debug, Clone)]
pub struct ChatSettings {
    /// The senders heard: ids, or `@username`s.
    pub allow: Vec<String>,
    /// Where a chat's first message opens a session (default: the workspace's first
    /// directory).
    pub project: Option<PathBuf>,
    /// The chats' state file.
    pub state: PathBuf,
}

/// What is kept of the chats between runs.
#[derive(Debug, Default, Serialize, Deserialize)]
struct ChatState {
    /// The last update handled.
    #[serde(default)]
    last_update: Option<i64>,
    /// Each chat's session, by chat.
    #[serde(default)]
    sessions: BTreeMap<String, u64>,
    /// Each chat's project for its next new session, when `/new DIR` named one.
    #[serde(default)]
    projects: BTreeMap<String, PathBuf>,
}

impl ChatState {
    fn load(path: &std::path::Path) -> ChatState {
        match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                tracing::warn!("{}: {e}; the chats start afresh", path.display());
                ChatState::default()
            }),
            Err(_) => ChatState::default(),
        }
    }

    fn save(&self, path: &std::path::Path) {
        let body = serde_json::to_vec_pretty(self).unwrap_or_default();
        if let Err(e) = write_file(path, &body, FileMode::Private) {
            tracing::warn!("gateway: cannot save the chats' state: {e}");
        }
    }

    /// The chats whose session is `session`.
    fn chats_of(&self, session: u64) -> Vec<String> {
        self.sessions
            .iter()
            .filter(|(_, s)| **s == session)
            .map(|(chat, _)| chat.clone())
            .collect()
    }
}

/// A batch of updates and how to say it was handled (the poller asks past it only then).
type Batch = (Vec<ChatUpdate>, oneshot::Sender<()>);

/// Serves `adapter`'s chats until `stop` is cancelled.
pub async fn run(
    adapter: Arc<dyn ChatAdapter>,
    settings: ChatSettings,
    link: WorkspaceLink,
    deliverer: Arc<Deliverer>,
    stop: CancellationToken,
) {
    let state = ChatState::load(&settings.state);
    let (batches, mut incoming) = mpsc::channel::<Batch>(1);
    // The workspace is watched before the first update is read, so no answer to it is
    // missed.
    let (events, mut watched) = mpsc::channel::<Option<WatchEvent>>(256);
    let (ready, watching) = oneshot::channel();
    tokio::spawn(watch(link.clone(), events, ready, stop.clone()));
    tokio::select! {
        () = stop.cancelled() => return,
        _ = watching => {}
    }
    tokio::spawn(poll(
        adapter.clone(),
        state.last_update,
        batches,
        stop.clone(),
    ));
    let mut chats = Chats {
        adapter,
        settings,
        link,
        deliverer: deliverer.clone(),
        state,
        answers: BTreeMap::new(),
        asking: BTreeMap::new(),
    };
    let mut outcomes = deliverer.outcomes();
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            Some((updates, handled)) = incoming.recv() => {
                for update in updates {
                    chats.update(update).await;
                }
                chats.state.save(&chats.settings.state);
                let _ = handled.send(());
            }
            Ok(outcome) = outcomes.recv() => chats.outcome(outcome).await,
            Some(event) = watched.recv() => match event {
                Some(event) => chats.event(event).await,
                None => chats.workspace_ended(),
            },
        }
    }
}

/// Polls `adapter` for updates, each batch handed on and confirmed (asked past) only once
/// it was handled.
async fn poll(
    adapter: Arc<dyn ChatAdapter>,
    mut last: Option<i64>,
    batches: mpsc::Sender<Batch>,
    stop: CancellationToken,
) {
    let mut failing = false;
    loop {
        let updates = tokio::select! {
            () = stop.cancelled() => return,
            updates = adapter.updates(last) => updates,
        };
        match updates {
            Ok(updates) if updates.is_empty() => {}
            Ok(updates) => {
                failing = false;
                let newest = updates.iter().map(|u| u.number).max();
                let (handled, done) = oneshot::channel();
                if batches.send((updates, handled)).await.is_err() || done.await.is_err() {
                    return;
                }
                last = newest.or(last);
            }
            Err(e) => {
                if !failing {
                    tracing::warn!("gateway: {} does not answer: {e}", adapter.name());
                    failing = true;
                }
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(RETRY) => {}
                }
            }
        }
    }
}

/// Watches every session of the workspace, watching again when it restarts; `None` says a
/// watched workspace ended.
async fn watch(
    link: WorkspaceLink,
    events: mpsc::Sender<Option<WatchEvent>>,
    ready: oneshot::Sender<()>,
    stop: CancellationToken,
) {
    let mut ready = Some(ready);
    loop {
        let watched = link.watch(None).await;
        // The first try, whatever came of it, lets the updates be read.
        if let Some(ready) = ready.take() {
            let _ = ready.send(());
        }
        if let Ok(mut watch) = watched {
            loop {
                let event = tokio::select! {
                    () = stop.cancelled() => return,
                    event = watch.next() => event,
                };
                match event {
                    Ok(Some(event)) => {
                        if events.send(Some(event)).await.is_err() {
                            return;
                        }
                    }
                    _ => {
                        if events.send(None).await.is_err() {
                            return;
                        }
                        break;
                    }
                }
            }
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(RETRY) => {}
        }
    }
}

/// The engine's state.
struct Chats {
    adapter: Arc<dyn ChatAdapter>,
    settings: ChatSettings,
    link: WorkspaceLink,
    deliverer: Arc<Deliverer>,
    state: ChatState,
    /// Each session's answer so far in its running turn.
    answers: BTreeMap<u64, String>,
    /// Each session's open question (held until a chat is known for it).
    asking: BTreeMap<u64, String>,
}

const HELP: &str = "Send a message and it goes to this chat's session (a new one on the \
project the first time). /sessions lists the workspace's sessions, /to SESSION talks to \
another, /new [DIR] opens a new one with the next message, /allow and /reject answer a \
question.";

impl Chats {
    fn allowed(&self, sender: &ChatSender) -> bool {
        self.settings.allow.iter().any(|a| {
            *a == sender.id
                || a.strip_prefix('@')
                    .is_some_and(|name| sender.username.as_deref() == Some(name))
        })
    }

    /// Says `message` in `chat`, logged.
    async fn say(&self, chat: &str, message: ChatMessage) {
        let text = match &message {
            ChatMessage::Text(text) | ChatMessage::Question { text, .. } => text.clone(),
        };
        tracing::info!(
            adapter = self.adapter.name(),
            chat,
            text,
            "gateway: message out"
        );
        if let Err(e) = self.adapter.send(chat, &message).await {
            tracing::warn!(
                "gateway: {} did not take a message: {e}",
                self.adapter.name()
            );
        }
    }

    async fn update(&mut self, update: ChatUpdate) {
        self.state.last_update = Some(update.number);
        if update.input == ChatInput::Other {
            return;
        }
        let sender = update.sender.label();
        let chat = update.chat.clone();
        if !self.allowed(&update.sender) {
            tracing::warn!(
                adapter = self.adapter.name(),
                sender,
                chat,
                input = ?update.input,
                "gateway: refused a sender not on the allow-list"
            );
            self.say(
                &chat,
                ChatMessage::Text("You are not on this gateway's allow-list.".into()),
            )
            .await;
            return;
        }
        match update.input {
            ChatInput::Text(text) => {
                tracing::info!(
                    adapter = self.adapter.name(),
                    sender,
                    chat,
                    text,
                    "gateway: chat message in"
                );
                self.text(&chat, &sender, text).await;
            }
            ChatInput::Press { id, data } => {
                tracing::info!(
                    adapter = self.adapter.name(),
                    sender,
                    chat,
                    data,
                    "gateway: button pressed"
                );
                let said = match data.split_once(':').map(|(a, k)| (a, k.parse::<u64>())) {
                    Some(("allow", Ok(key))) => self.answer(key, true).await,
                    Some(("reject", Ok(key))) => self.answer(key, false).await,
                    _ => "That button is not March's.".to_string(),
                };
                if let Err(e) = self.adapter.acknowledge(&id, &said).await {
                    tracing::warn!("gateway: a press was not acknowledged: {e}");
                }
                self.say(&chat, ChatMessage::Text(said)).await;
            }
            ChatInput::Other => {}
        }
    }

    /// Answers session `key`'s question; what to say.
    async fn answer(&mut self, key: u64, allow: bool) -> String {
        match self.link.answer(key, allow).await {
            Ok(question) => {
                self.asking.remove(&key);
                let verb = if allow { "Allowed" } else { "Rejected" };
                format!("{verb}: {question}")
            }
            Err(e) => format!("Not answered: {e}"),
        }
    }

    async fn text(&mut self, chat: &str, sender: &str, text: String) {
        let (command, rest) = match text.split_once(char::is_whitespace) {
            Some((command, rest)) => (command, rest.trim()),
            None => (text.as_str(), ""),
        };
        // In a group, commands name the bot: `/help@MarchBot`.
        let command = match command.split_once('@') {
            Some((command, _)) if command.starts_with('/') => command,
            _ => command,
        };
        let bound = self.state.sessions.get(chat).copied();
        let said = match command {
            "/start" | "/help" => HELP.to_string(),
            "/sessions" => match self.link.sessions().await {
                Ok(sessions) if sessions.is_empty() => "No sessions.".to_string(),
                Ok(sessions) => sessions
                    .iter()
                    .map(|s| {
                        let mark = if Some(s.key) == bound { "→ " } else { "" };
                        format!("{mark}{} {} ({})", s.target, s.title, s.attention)
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
                Err(e) => format!("The workspace does not answer: {e}"),
            },
            "/to" => match self.link.resolve(rest).await {
                Ok(key) => {
                    self.state.sessions.insert(chat.to_string(), key);
                    format!("Messages go to session {key} now.")
                }
                Err(e) => e.to_string(),
            },
            "/new" => {
                self.state.sessions.remove(chat);
                if rest.is_empty() {
                    self.state.projects.remove(chat);
                } else {
                    self.state
                        .projects
                        .insert(chat.to_string(), PathBuf::from(rest));
                }
                "Your next message opens a new session.".to_string()
            }
            "/allow" | "/reject" => match bound {
                Some(key) => self.answer(key, command == "/allow").await,
                None => "This chat has no session yet.".to_string(),
            },
            _ => {
                if let Some(why) = crate::refused_prompt(&text) {
                    why.to_string()
                } else {
                    self.prompt(chat, sender, text.clone(), bound).await;
                    return;
                }
            }
        };
        self.say(chat, ChatMessage::Text(said)).await;
    }

    /// Queues `text` for the chat's session, or a new one.
    async fn prompt(&mut self, chat: &str, sender: &str, text: String, bound: Option<u64>) {
        let to = match bound {
            Some(key) => Target::Session {
                session: key.to_string(),
            },
            // The workspace's first directory when none is named, found at delivery.
            None => Target::Project {
                dir: self
                    .state
                    .projects
                    .get(chat)
                    .or(self.settings.project.as_ref())
                    .cloned(),
                agent: None,
            },
        };
        let message = Message {
            id: String::new(),
            adapter: self.adapter.name().to_string(),
            sender: sender.to_string(),
            chat: Some(chat.to_string()),
            to,
            text,
        };
        if let Err(e) = self.deliverer.submit(message, None).await {
            self.say(chat, ChatMessage::Text(format!("Not queued: {e}")))
                .await;
        }
    }

    /// A message of this adapter was delivered or refused.
    async fn outcome(&mut self, outcome: Outcome) {
        if outcome.message.adapter != self.adapter.name() {
            return;
        }
        let Some(chat) = outcome.message.chat else {
            return;
        };
        match outcome.result {
            Ok(key) => {
                if self.state.sessions.insert(chat.clone(), key) != Some(key) {
                    self.state.projects.remove(&chat);
                    self.state.save(&self.settings.state);
                }
                // A question asked before the chat was known for the session.
                if let Some(question) = self.asking.get(&key).cloned() {
                    self.ask(&[chat], key, question).await;
                }
            }
            Err(why) => {
                // A session that is gone is forgotten: the next message opens a new one.
                if let Target::Session { .. } = outcome.message.to {
                    self.state.sessions.remove(&chat);
                    self.state.save(&self.settings.state);
                }
                let said = format!("Not delivered: {why}. Your next message opens a new session.");
                self.say(&chat, ChatMessage::Text(said)).await;
            }
        }
    }

    async fn ask(&self, chats: &[String], session: u64, question: String) {
        for chat in chats {
            let text = format!("Session {session} asks: {question}");
            self.say(chat, ChatMessage::Question { text, session })
                .await;
        }
    }

    /// The workspace ended: its session keys mean nothing to the next one, so each chat's
    /// next message opens a new session.
    fn workspace_ended(&mut self) {
        self.answers.clear();
        self.asking.clear();
        if !self.state.sessions.is_empty() {
            self.state.sessions.clear();
            self.state.save(&self.settings.state);
        }
    }

    /// What a session did.
    async fn event(&mut self, event: WatchEvent) {
        let session = event.session();
        let chats = self.state.chats_of(session);
        match event {
            WatchEvent::TurnStart { .. } => {
                self.answers.insert(session, String::new());
            }
            WatchEvent::Text { text, .. } => {
                self.answers.entry(session).or_default().push_str(&text);
            }
            WatchEvent::Permission { question, .. } => {
                self.asking.insert(session, question.clone());
                self.ask(&chats, session, question).await;
            }
            WatchEvent::TurnEnd {
                stop_reason, error, ..
            } => {
                self.asking.remove(&session);
                let answer = self.answers.remove(&session).unwrap_or_default();
                let mut said = answer.trim().to_string();
                if let Some(error) = error {
                    said = format!("{said}\n\n✗ {error}").trim().to_string();
                } else if stop_reason.as_deref().is_some_and(|r| r != "end_turn") {
                    said = format!("{said}\n\n({})", stop_reason.unwrap_or_default())
                        .trim()
                        .to_string();
                }
                if said.is_empty() {
                    said = "(the turn ended without text)".into();
                }
                for chat in &chats {
                    self.say(chat, ChatMessage::Text(said.clone())).await;
                }
            }
            WatchEvent::Closed { .. } => {
                for chat in &chats {
                    self.state.sessions.remove(chat);
                    let said =
                        format!("Session {session} was closed; your next message opens a new one.");
                    self.say(chat, ChatMessage::Text(said)).await;
                }
                if !chats.is_empty() {
                    self.state.save(&self.settings.state);
                }
            }
            WatchEvent::Attention { .. } | WatchEvent::Tool { .. } => {}
        }
    }
}
