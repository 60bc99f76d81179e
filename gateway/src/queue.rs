//! The gateway's queue on disk: each message that came in is a file here before its sender
//! is told it was received, and is removed once the workspace took it. A gateway that
//! restarts delivers what it finds, oldest first.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use march_core::atomic_file::{FileMode, write_file};
use serde::{Deserialize, Serialize};

/// Where a message goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Target {
    /// An open session: `N`, `WORKSPACE:N` or the start of its session id.
    Session {
        /// How it is named.
        session: String,
    },
    /// A new session on a project directory.
    Project {
        /// The directory; the workspace's first when `None`.
        #[serde(default)]
        dir: Option<PathBuf>,
        /// The agent from the config's `[agents]` (default: the workspace's).
        #[serde(default)]
        agent: Option<String>,
    },
}

/// A workspace as the gateway tells one server from another: its name, its server's
/// process and when that started (a workspace that restarts is another).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceId {
    /// Its name.
    pub name: String,
    /// Its server's process.
    pub pid: u32,
    /// When its server started, seconds since the Unix epoch.
    pub started: u64,
}

impl From<march_wire::WorkspaceInfo> for WorkspaceId {
    fn from(info: march_wire::WorkspaceInfo) -> WorkspaceId {
        WorkspaceId {
            name: info.name,
            pid: info.pid,
            started: info.started,
        }
    }
}

/// A message from outside, for a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// Its id in the queue (its order: time received, then a counter).
    pub id: String,
    /// The adapter it came through (`http`, `telegram`).
    pub adapter: String,
    /// Who sent it, as the adapter names them.
    pub sender: String,
    /// The chat its answers go back to (chat adapters).
    #[serde(default)]
    pub chat: Option<String>,
    /// Where it goes.
    pub to: Target,
    /// The prompt.
    pub text: String,
    /// The workspace its session is in, when it names a session by key from an earlier
    /// conversation: refused when another workspace (a restarted one) is there now.
    #[serde(default)]
    pub workspace: Option<WorkspaceId>,
    /// Its turn is followed: a watch on its session begins before it is sent, for whoever
    /// answers its sender (even after a restart of the gateway).
    #[serde(default)]
    pub follow: bool,
}

/// The queue's directory.
#[derive(Debug)]
pub struct Queue {
    dir: PathBuf,
    /// Tells apart ids made in the same millisecond.
    counter: AtomicU64,
}

impl Queue {
    /// The queue in `dir`, made when missing (0700: prompts are the user's).
    pub fn open(dir: PathBuf) -> std::io::Result<Queue> {
        std::fs::create_dir_all(&dir)?;
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
        Ok(Queue {
            dir,
            counter: AtomicU64::new(0),
        })
    }

    fn path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    /// A new message id: later ids sort after earlier ones.
    pub fn new_id(&self) -> String {
        let ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis();
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        format!("{ms:014}-{n:06}-{}", std::process::id())
    }

    /// Writes `message` (flushed to disk before this returns), with a new id when it has
    /// none.
    pub fn push(&self, message: &mut Message) -> std::io::Result<()> {
        if message.id.is_empty() {
            message.id = self.new_id();
        }
        let body = serde_json::to_vec_pretty(message).map_err(std::io::Error::other)?;
        write_file(&self.path(&message.id), &body, FileMode::Private).map_err(std::io::Error::other)
    }

    /// Every message waiting, oldest first. A file that cannot be read is logged and left
    /// where it is for the user to look at.
    pub fn pending(&self) -> Vec<Message> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut paths: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        paths.sort();
        paths
            .into_iter()
            .filter_map(|path| match read(&path) {
                Ok(message) => Some(message),
                Err(e) => {
                    tracing::warn!("gateway queue: {} cannot be read: {e}", path.display());
                    None
                }
            })
            .collect()
    }

    /// How many messages wait.
    pub fn len(&self) -> usize {
        waiting(&self.dir)
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Message `id` was taken by the workspace (or refused for good): it leaves the queue.
    pub fn remove(&self, id: &str) {
        if let Err(e) = std::fs::remove_file(self.path(id))
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!("gateway queue: cannot remove {id}: {e}");
        }
    }
}

/// How many messages wait in the queue in `dir` (none when it does not exist: nothing is
/// made to count).
pub fn waiting(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|e| e == "json"))
            .count()
    })
}

fn read(path: &Path) -> std::io::Result<Message> {
    let text = std::fs::read(path)?;
    serde_json::from_slice(&text).map_err(std::io::Error::other)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn message(text: &str) -> Message {
        Message {
            id: String::new(),
            adapter: "http".into(),
            sender: "ci".into(),
            chat: None,
            to: Target::Session {
                session: "1".into(),
            },
            text: text.into(),
            workspace: None,
            follow: false,
        }
    }

    #[test]
    fn messages_come_back_in_order_after_a_reopen_until_removed() {
        let dir = tempfile::tempdir().unwrap();
        let queue = Queue::open(dir.path().join("q")).unwrap();
        let mut ids = Vec::new();
        for text in ["one", "two", "three"] {
            let mut m = message(text);
            queue.push(&mut m).unwrap();
            ids.push(m.id);
        }
        // A bad file is skipped, not fatal.
        std::fs::write(dir.path().join("q/0-bad.json"), "{").unwrap();
        let again = Queue::open(dir.path().join("q")).unwrap();
        let texts: Vec<String> = again.pending().into_iter().map(|m| m.text).collect();
        assert_eq!(texts, ["one", "two", "three"]);
        again.remove(&ids[1]);
        let texts: Vec<String> = again.pending().into_iter().map(|m| m.text).collect();
        assert_eq!(texts, ["one", "three"]);
        assert_eq!(again.len(), 3, "the bad file stays for the user");
    }
}
