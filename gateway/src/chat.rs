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
use march_wire::control::Watch;
use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::deliver::{Deliverer, Outcome};
use crate::queue::{Message, Target, WorkspaceId};
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
    sessions: BTreeMap<String, Bound>,
    /// Each chat's project for its next new session, when `/new DIR` named one.
    #[serde(default)]
    projects: BTreeMap<String, PathBuf>,
}

/// A chat's session: its key in the workspace it was opened in. A workspace that restarted
/// (even while the gateway did not run) numbers its sessions anew, so the key means
/// something only in that one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Bound {
    /// The session's key.
    key: u64,
    /// Its workspace.
    workspace: WorkspaceId,
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
}

/// A batch of updates and how to say it was handled (the poller asks past it only then).
type Batch = (Vec<ChatUpdate>, oneshot::Sender<()>);

/// Serves `adapter`'s chats until `stop` is cancelled.
pub async fn run(
    adapter: Arc<dyn ChatAdapter>,
    settings: ChatSettings,
    link: WorkspaceLink,
    deliverer: Arc<Deliverer>,
    mut outcomes: broadcast::Receiver<Outcome>,
    stop: CancellationToken,
) {
    let state = ChatState::load(&settings.state);
    let (batches, mut incoming) = mpsc::channel::<Batch>(1);
    let (gone, mut closed) = mpsc::channel::<(String, u64)>(16);
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
        gone,
    };
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
            Some((chat, session)) = closed.recv() => chats.closed(&chat, session),
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

/// The engine's state.
struct Chats {
    adapter: Arc<dyn ChatAdapter>,
    settings: ChatSettings,
    link: WorkspaceLink,
    deliverer: Arc<Deliverer>,
    state: ChatState,
    /// Where the turns followed say that a chat's session closed.
    gone: mpsc::Sender<(String, u64)>,
}

const HELP: &str = "Send a message and it goes to this chat's session (a new one on the \
project the first time). /sessions lists the workspace's sessions, /to SESSION talks to \
another, /new [DIR] opens a new one with the next message, /allow and /reject answer a \
question.";

impl Chats {
    fn allowed(&self, sender: &ChatSender) -> bool {
        allowed(&self.settings.allow, sender)
    }

    /// Says `message` in `chat`, logged.
    async fn say(&self, chat: &str, message: ChatMessage) {
        say(self.adapter.as_ref(), chat, message).await;
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
                // The question was sent whole; its first line names what was answered.
                let verb = if allow { "Allowed" } else { "Rejected" };
                format!("{verb}: {}", question.lines().next().unwrap_or_default())
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
        // A session of a workspace that ended is gone: the chat starts a new one.
        if let Some(b) = self.state.sessions.get(chat).cloned()
            && let Ok((_, info)) = self.link.server().await
            && WorkspaceId::from(info) != b.workspace
        {
            self.state.sessions.remove(chat);
        }
        let bound = self.state.sessions.get(chat).cloned();
        let key = bound.as_ref().map(|b| b.key);
        let said = match command {
            "/start" | "/help" => HELP.to_string(),
            "/sessions" => match self.link.sessions().await {
                Ok(sessions) if sessions.is_empty() => "No sessions.".to_string(),
                Ok(sessions) => sessions
                    .iter()
                    .map(|s| {
                        let mark = if Some(s.key) == key { "→ " } else { "" };
                        format!("{mark}{} {} ({})", s.target, s.title, s.attention)
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
                Err(e) => format!("The workspace does not answer: {e}"),
            },
            "/to" => match self.link.resolve(rest).await {
                Ok(key) => match self.link.server().await {
                    Ok((_, info)) => {
                        let workspace = WorkspaceId::from(info);
                        let bound = Bound { key, workspace };
                        self.state.sessions.insert(chat.to_string(), bound);
                        format!("Messages go to session {key} now.")
                    }
                    Err(e) => e.to_string(),
                },
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
            "/allow" | "/reject" => match key {
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
    async fn prompt(&mut self, chat: &str, sender: &str, text: String, bound: Option<Bound>) {
        let workspace = bound.as_ref().map(|b| b.workspace.clone());
        let to = match bound {
            Some(bound) => Target::Session {
                session: bound.key.to_string(),
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
            workspace,
            follow: true,
        };
        if let Err(e) = self.deliverer.submit(message, false).await {
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
            Ok((key, workspace)) => {
                let bound = Bound { key, workspace };
                if self.state.sessions.insert(chat.clone(), bound.clone()) != Some(bound) {
                    self.state.projects.remove(&chat);
                    self.state.save(&self.settings.state);
                }
                // Its turn is followed, and its questions and answer said in the chat.
                if let Some(watch) = outcome.watch.and_then(|w| w.lock().take()) {
                    tokio::spawn(follow(
                        self.adapter.clone(),
                        chat,
                        key,
                        outcome.message.text,
                        watch,
                        self.gone.clone(),
                    ));
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

    /// A turn followed for `chat` found its session closed.
    fn closed(&mut self, chat: &str, session: u64) {
        if self
            .state
            .sessions
            .get(chat)
            .is_some_and(|b| b.key == session)
        {
            self.state.sessions.remove(chat);
            self.state.save(&self.settings.state);
        }
    }
}

/// Whether `sender` is on `allow` (ids, and `@username`s).
fn allowed(allow: &[String], sender: &ChatSender) -> bool {
    allow.iter().any(|a| {
        *a == sender.id
            || a.strip_prefix('@')
                .is_some_and(|name| sender.username.as_deref() == Some(name))
    })
}

/// Says `message` in `chat` through `adapter`, logged.
async fn say(adapter: &dyn ChatAdapter, chat: &str, message: ChatMessage) {
    let text = match &message {
        ChatMessage::Text(text) | ChatMessage::Question { text, .. } => text.clone(),
    };
    tracing::info!(adapter = adapter.name(), chat, text, "gateway: message out");
    if let Err(e) = adapter.send(chat, &message).await {
        tracing::warn!("gateway: {} did not take a message: {e}", adapter.name());
    }
}

/// Follows the turn of `prompt` in session `session` on `watch` (begun before the prompt
/// was sent): its permission questions and, when it ends, its answer are said in `chat`. A
/// session that closes is said, and told on `gone`.
async fn follow(
    adapter: Arc<dyn ChatAdapter>,
    chat: String,
    session: u64,
    prompt: String,
    mut watch: Watch,
    gone: mpsc::Sender<(String, u64)>,
) {
    let adapter = adapter.as_ref();
    let mut started = false;
    let mut answer = String::new();
    loop {
        let Ok(Some(event)) = watch.next().await else {
            let said = format!("Session {session}: the workspace closed before the answer.");
            say(adapter, &chat, ChatMessage::Text(said)).await;
            return;
        };
        match event {
            // A turn queued before this prompt ran first: it is not this answer.
            WatchEvent::TurnStart { text, .. } if !started && text == prompt => started = true,
            WatchEvent::Closed { .. } => {
                let said =
                    format!("Session {session} was closed; your next message opens a new one.");
                say(adapter, &chat, ChatMessage::Text(said)).await;
                let _ = gone.send((chat, session)).await;
                return;
            }
            _ if !started => {}
            WatchEvent::Text { text, .. } => answer.push_str(&text),
            WatchEvent::Permission { question, .. } => {
                let text = format!("Session {session} asks: {question}");
                say(adapter, &chat, ChatMessage::Question { text, session }).await;
            }
            WatchEvent::TurnEnd {
                stop_reason, error, ..
            } => {
                say(
                    adapter,
                    &chat,
                    ChatMessage::Text(ended(&answer, stop_reason, error)),
                )
                .await;
                return;
            }
            WatchEvent::Attention { .. }
            | WatchEvent::Tool { .. }
            | WatchEvent::TurnStart { .. } => {}
        }
    }
}

/// A turn's answer as the chat gets it: its text, then how it ended when not normally.
fn ended(answer: &str, stop_reason: Option<String>, error: Option<String>) -> String {
    let mut said = answer.trim().to_string();
    if let Some(error) = error {
        said = format!("{said}\n\n✗ {error}");
    } else if let Some(reason) = stop_reason.filter(|r| r != "end_turn") {
        said = format!("{said}\n\n({reason})");
    }
    let said = said.trim().to_string();
    if said.is_empty() {
        "(the turn ended without text)".to_string()
    } else {
        said
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_says_how_its_turn_ended_when_not_normally() {
        assert_eq!(ended(" Done. ", Some("end_turn".into()), None), "Done.");
        assert_eq!(
            ended("Half", Some("max_tokens".into()), None),
            "Half\n\n(max_tokens)"
        );
        assert_eq!(ended("", None, Some("boom".into())), "✗ boom");
        assert_eq!(
            ended("", Some("end_turn".into()), None),
            "(the turn ended without text)"
        );
    }

    #[test]
    fn senders_are_heard_by_id_or_user_name() {
        let allow = ["42".to_string(), "@bea".to_string()];
        let heard = |id: &str, name: Option<&str>| {
            allowed(
                &allow,
                &ChatSender {
                    id: id.into(),
                    username: name.map(str::to_string),
                },
            )
        };
        assert!(heard("42", None));
        assert!(heard("7", Some("bea")));
        assert!(!heard("7", Some("bea2")));
        assert!(!heard("4", Some("42")));
    }
}
