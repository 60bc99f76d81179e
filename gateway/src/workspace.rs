//! The gateway's link to its workspace: which server it is (by name, else the one used most
//! recently, found again for each request so a restarted workspace is found too), and the
//! control requests the gateway sends it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use march_wire::control::{self, ControlError, Watch};
use march_wire::{ControlRequest, SessionStatus, WorkspaceInfo};
use serde_json::Value;

/// How long a workspace may take to answer a request that does not wait for anything: a
/// server that stalls is taken as not answering, so the queue waits and goes on later.
pub(crate) const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// Asks `request` of the server at `socket`, within [`ANSWER_TIMEOUT`].
async fn ask_within(socket: &Path, request: ControlRequest) -> Result<Value, LinkError> {
    match tokio::time::timeout(ANSWER_TIMEOUT, control::ask(socket, request)).await {
        Ok(answer) => Ok(answer?),
        Err(_) => Err(LinkError::Unreachable(format!(
            "{} did not answer within {} s",
            socket.display(),
            ANSWER_TIMEOUT.as_secs()
        ))),
    }
}

/// Why a request did not reach a session.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum LinkError {
    /// No workspace answers: a message for it waits in the queue.
    #[error("{0}")]
    Unreachable(String),
    /// The workspace refused (no such session, nothing asked…): said to the sender.
    #[error("{0}")]
    Refused(String),
}

impl From<ControlError> for LinkError {
    fn from(e: ControlError) -> LinkError {
        match e {
            ControlError::Refused(why) => LinkError::Refused(why),
            other => LinkError::Unreachable(other.to_string()),
        }
    }
}

/// The workspace a gateway serves.
#[derive(Debug, Clone)]
pub struct WorkspaceLink {
    /// The directory of the servers' sockets.
    sockets: PathBuf,
    /// The workspace's name; the most recently used when `None`.
    name: Option<String>,
}

impl WorkspaceLink {
    /// The workspace `name` (the most recently used when `None`) among the servers whose
    /// sockets are in `sockets`.
    pub fn new(sockets: PathBuf, name: Option<String>) -> WorkspaceLink {
        WorkspaceLink { sockets, name }
    }

    /// The server's socket and what it says it is.
    pub async fn server(&self) -> Result<(PathBuf, WorkspaceInfo), LinkError> {
        let mut entries = tokio::fs::read_dir(&self.sockets).await.map_err(|e| {
            LinkError::Unreachable(format!(
                "no workspace runs ({}: {e})",
                self.sockets.display()
            ))
        })?;
        let mut best: Option<(PathBuf, WorkspaceInfo)> = None;
        while let Ok(Some(entry)) = entries.next_entry().await {
            let socket = entry.path();
            if socket.extension().is_none_or(|e| e != "sock") {
                continue;
            }
            let Ok(Ok(info)) = ask_within(&socket, ControlRequest::Info)
                .await
                .map(serde_json::from_value::<WorkspaceInfo>)
            else {
                continue;
            };
            let better = match (&self.name, &best) {
                (Some(name), _) => info.name == *name,
                (None, None) => true,
                (None, Some((_, b))) => info.last_active > b.last_active,
            };
            if better {
                best = Some((socket, info));
            }
        }
        best.ok_or_else(|| {
            LinkError::Unreachable(match &self.name {
                Some(name) => format!("workspace `{name}` is not running"),
                None => "no workspace is running".to_string(),
            })
        })
    }

    async fn socket(&self) -> Result<PathBuf, LinkError> {
        Ok(self.server().await?.0)
    }

    async fn ask(&self, request: ControlRequest) -> Result<Value, LinkError> {
        ask_within(&self.socket().await?, request).await
    }

    /// Every session of the workspace.
    pub async fn sessions(&self) -> Result<Vec<SessionStatus>, LinkError> {
        let value = self.ask(ControlRequest::Status).await?;
        serde_json::from_value(value["sessions"].clone())
            .map_err(|e| LinkError::Unreachable(format!("the workspace answered garbage: {e}")))
    }

    /// The key of the session `target` names: `N`, `WORKSPACE:N`, or four or more
    /// characters that begin its session id.
    pub async fn resolve(&self, target: &str) -> Result<u64, LinkError> {
        let sessions = self.sessions().await?;
        find_session(&sessions, target).ok_or_else(|| {
            let open: Vec<&str> = sessions.iter().map(|s| s.target.as_str()).collect();
            LinkError::Refused(format!(
                "no session `{target}` (open: {})",
                if open.is_empty() {
                    "none".to_string()
                } else {
                    open.join(", ")
                }
            ))
        })
    }

    /// Opens a session on `dir` (with `agent` from the config's `[agents]`); its key.
    pub async fn open_session(&self, dir: &Path, agent: Option<&str>) -> Result<u64, LinkError> {
        let value = self
            .ask(ControlRequest::NewPane {
                dir: dir.to_path_buf(),
                agent: agent.map(str::to_string),
                prompt: None,
            })
            .await?;
        value["key"]
            .as_u64()
            .ok_or_else(|| LinkError::Unreachable(format!("no key in the answer {value}")))
    }

    /// Sends `text` to session `key`; whether it was queued behind a running turn.
    pub async fn send(&self, key: u64, text: &str) -> Result<bool, LinkError> {
        let value = self
            .ask(ControlRequest::Send {
                session: key,
                text: text.to_string(),
            })
            .await?;
        Ok(value["queued"].as_bool().unwrap_or(false))
    }

    /// Answers session `key`'s open permission request; what it asked.
    pub async fn answer(&self, key: u64, allow: bool) -> Result<String, LinkError> {
        let value = self
            .ask(ControlRequest::Answer {
                session: key,
                allow,
            })
            .await?;
        Ok(value["answered"].as_str().unwrap_or_default().to_string())
    }

    /// Watches session `key` (every session when `None`), and says which workspace it
    /// watches.
    pub async fn watch(&self, key: Option<u64>) -> Result<(Watch, WorkspaceInfo), LinkError> {
        let (socket, info) = self.server().await?;
        Ok((Watch::start(&socket, key).await?, info))
    }

    /// The workspace's first project directory.
    pub async fn first_dir(&self) -> Result<PathBuf, LinkError> {
        let (_, info) = self.server().await?;
        info.dirs
            .into_iter()
            .next()
            .ok_or_else(|| LinkError::Refused("the workspace has no directory".into()))
    }
}

/// The session `target` names among `sessions`.
fn find_session(sessions: &[SessionStatus], target: &str) -> Option<u64> {
    let by_key = |key: &str| {
        key.parse::<u64>()
            .ok()
            .filter(|k| sessions.iter().any(|s| s.key == *k))
    };
    if let Some(key) = by_key(target) {
        return Some(key);
    }
    if let Some((workspace, key)) = target.rsplit_once(':')
        && sessions.iter().any(|s| s.workspace == workspace)
    {
        return by_key(key);
    }
    let mut by_id = sessions.iter().filter(|s| {
        target.len() >= 4
            && s.session_id
                .as_deref()
                .is_some_and(|id| id.starts_with(target))
    });
    match (by_id.next(), by_id.next()) {
        (Some(one), None) => Some(one.key),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(key: u64, id: &str) -> SessionStatus {
        SessionStatus {
            workspace: "api".into(),
            target: format!("api:{key}"),
            key,
            session_id: Some(id.into()),
            project: "/src/api".into(),
            title: String::new(),
            attention: "idle".into(),
            question: None,
            model: None,
            tokens: None,
            context_size: None,
            cost: None,
            currency: None,
            shown: true,
        }
    }

    #[test]
    fn a_session_is_named_by_key_target_or_id_prefix() {
        let sessions = [session(1, "01a2353f-aaaa"), session(3, "01a29999-bbbb")];
        assert_eq!(find_session(&sessions, "3"), Some(3));
        assert_eq!(find_session(&sessions, "api:1"), Some(1));
        assert_eq!(find_session(&sessions, "web:1"), None);
        assert_eq!(find_session(&sessions, "01a23"), Some(1));
        // Ambiguous or too short: nothing.
        assert_eq!(find_session(&sessions, "01a2"), None);
        assert_eq!(find_session(&sessions, "7"), None);
    }
}
