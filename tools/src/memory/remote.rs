//! A memory server as a session sees it (`[memory] remote`): its files mirrored in a local
//! directory, which the context and the memory tool read, refreshed at each run's start with
//! a short timeout, so a server that is down costs a notice and leaves the last mirror. An
//! append goes to the server; while it is down the append is kept in the mirror's queue (one
//! file per append, in order, surviving restarts) and applied to the mirror, and the queue is
//! sent before anything else once the server answers again.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use march_core::tool::ToolError;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// The most bytes of a server's files mirrored (past it, later files are left out).
const MAX_MIRROR_BYTES: u64 = 32 << 20;

/// An append waiting for the server.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Pending {
    file: String,
    section: String,
    text: String,
}

/// Why the server could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteError {
    /// It could not be reached (down, refused, timed out): worth trying again later.
    Unreachable(String),
    /// It answered, with an error.
    Refused(String),
}

impl std::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RemoteError::Unreachable(e) => write!(f, "unreachable: {e}"),
            RemoteError::Refused(e) => write!(f, "{e}"),
        }
    }
}

/// A memory server and its mirror.
#[derive(Debug)]
pub struct RemoteMemory {
    url: String,
    token: Option<String>,
    mirror: PathBuf,
    client: reqwest::Client,
    /// Makes queued appends' names unique within this process.
    sequence: AtomicU64,
    /// Serialises syncs and appends of this process (the queue is sent in order).
    lock: tokio::sync::Mutex<()>,
}

/// How an append went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteAppend {
    /// The server has it; whether it made the section.
    Sent {
        /// The section was made.
        new_section: bool,
    },
    /// The server is down: kept, and sent when it answers again.
    Queued,
}

impl RemoteMemory {
    /// The server at `url` (its base, e.g. `https://host:7411`), shown `token`, mirrored in
    /// `mirror`.
    pub fn new(url: &str, token: Option<String>, mirror: PathBuf) -> Result<Self, String> {
        let client = march_core::http::client_builder(Duration::from_secs(2))
            .build()
            .map_err(|e| e.to_string())?;
        Ok(RemoteMemory {
            url: url.trim_end_matches('/').to_string(),
            token,
            mirror,
            client,
            sequence: AtomicU64::new(0),
            lock: tokio::sync::Mutex::new(()),
        })
    }

    /// Where its files are mirrored.
    pub fn mirror(&self) -> &Path {
        &self.mirror
    }

    /// The server's address.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// `/v1/files/NAME[/then]` of the server, the name percent-encoded.
    fn file_url(&self, name: &str, then: Option<&str>) -> Result<reqwest::Url, RemoteError> {
        let mut url = reqwest::Url::parse(&self.url)
            .map_err(|e| RemoteError::Refused(format!("not a URL: {}: {e}", self.url)))?;
        url.path_segments_mut()
            .map_err(|()| RemoteError::Refused(format!("not a base URL: {}", self.url)))?
            .pop_if_empty()
            .extend(["v1", "files", name])
            .extend(then);
        Ok(url)
    }

    fn queue_dir(&self) -> PathBuf {
        self.mirror.join(".queued")
    }

    /// Appends kept while the server was down, not sent yet.
    pub fn queued(&self) -> usize {
        std::fs::read_dir(self.queue_dir())
            .map(|entries| entries.flatten().count())
            .unwrap_or(0)
    }

    async fn request(
        &self,
        request: reqwest::RequestBuilder,
        limit: Duration,
    ) -> Result<Value, RemoteError> {
        let Some(token) = &self.token else {
            return Err(RemoteError::Refused(
                "no token for the memory server (march memory token use TOKEN)".into(),
            ));
        };
        let answer = request
            .bearer_auth(token)
            .timeout(limit)
            .send()
            .await
            .map_err(|e| RemoteError::Unreachable(e.to_string()))?;
        let status = answer.status();
        let body: Value = answer
            .json()
            .await
            .map_err(|e| RemoteError::Unreachable(format!("an unreadable answer: {e}")))?;
        if status.is_success() {
            Ok(body)
        } else {
            Err(RemoteError::Refused(format!(
                "the memory server answered {status}: {}",
                body["error"].as_str().unwrap_or("?")
            )))
        }
    }

    /// Sends the queued appends, then mirrors the server's files (within `limit` a request).
    /// On failure the mirror stays as it was.
    pub async fn sync(&self, limit: Duration) -> Result<(), RemoteError> {
        let _one = self.lock.lock().await;
        self.send_queued(limit).await?;
        let listed = self
            .request(self.client.get(format!("{}/v1/files", self.url)), limit)
            .await?;
        let mut names = Vec::new();
        let mut total = 0u64;
        for file in listed["files"].as_array().into_iter().flatten() {
            let (Some(name), bytes) = (file["name"].as_str(), file["bytes"].as_u64()) else {
                continue;
            };
            total += bytes.unwrap_or(0);
            if total > MAX_MIRROR_BYTES {
                tracing::warn!(
                    name,
                    "remote memory: past {MAX_MIRROR_BYTES} bytes, left out"
                );
                break;
            }
            names.push(name.to_string());
        }
        let mut texts = Vec::new();
        for name in &names {
            let read = self
                .request(self.client.get(self.file_url(name, None)?), limit)
                .await?;
            texts.push((
                name.clone(),
                read["text"].as_str().unwrap_or_default().to_string(),
            ));
        }
        let mirror = self.mirror.clone();
        tokio::task::spawn_blocking(move || write_mirror(&mirror, &texts))
            .await
            .map_err(|e| RemoteError::Refused(e.to_string()))?
            .map_err(RemoteError::Refused)
    }

    /// Sends the queued appends in order; stops at the first the server does not take.
    async fn send_queued(&self, limit: Duration) -> Result<(), RemoteError> {
        let mut queued: Vec<PathBuf> = std::fs::read_dir(self.queue_dir())
            .map(|entries| entries.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        queued.sort();
        for path in queued {
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            let Ok(pending) = serde_json::from_slice::<Pending>(&bytes) else {
                tracing::warn!(path = %path.display(), "remote memory: a queued append is unreadable; dropped");
                let _ = std::fs::remove_file(&path);
                continue;
            };
            match self.post(&pending, limit).await {
                Ok(_) => {}
                // The server refuses it for good (a bad name): keeping it would block the rest.
                Err(RemoteError::Refused(e)) => {
                    tracing::warn!(
                        file = pending.file,
                        "remote memory: a queued append was refused: {e}"
                    );
                }
                Err(e) => return Err(e),
            }
            let _ = std::fs::remove_file(&path);
        }
        Ok(())
    }

    async fn post(&self, pending: &Pending, limit: Duration) -> Result<bool, RemoteError> {
        let url = self.file_url(&pending.file, Some("append"))?;
        let body = json!({ "section": pending.section, "text": pending.text });
        let answer = self
            .request(self.client.post(url).json(&body), limit)
            .await?;
        Ok(answer["newSection"].as_bool().unwrap_or(false))
    }

    /// Appends `text` under `## section` of the server's `file` (a plain `*.md` name). The
    /// mirror gets it too, so this machine reads it at once, whether the server took it now
    /// or it waits in the queue.
    pub async fn append(
        &self,
        file: &str,
        section: &str,
        text: &str,
    ) -> Result<RemoteAppend, ToolError> {
        let _one = self.lock.lock().await;
        let pending = Pending {
            file: file.to_string(),
            section: section.to_string(),
            text: text.to_string(),
        };
        let limit = Duration::from_secs(5);
        let sent = match self.send_queued(limit).await {
            Ok(()) => self.post(&pending, limit).await,
            Err(e) => Err(e),
        };
        let outcome = match sent {
            Ok(new_section) => RemoteAppend::Sent { new_section },
            Err(RemoteError::Refused(e)) => return Err(ToolError::new(e)),
            Err(RemoteError::Unreachable(e)) => {
                tracing::info!("remote memory: {e}; the append is queued");
                self.enqueue(&pending)?;
                RemoteAppend::Queued
            }
        };
        let never = CancellationToken::new();
        super::append_to(
            &self.mirror.join(file),
            section.to_string(),
            text.to_string(),
            &never,
        )
        .await?;
        Ok(outcome)
    }

    fn enqueue(&self, pending: &Pending) -> Result<(), ToolError> {
        let dir = self.queue_dir();
        let fail = |e: std::io::Error| {
            ToolError::new(format!(
                "the memory server is down and the append cannot be kept in {}: {e}",
                dir.display()
            ))
        };
        std::fs::create_dir_all(&dir).map_err(fail)?;
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let n = self.sequence.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("{stamp:020}-{}-{n:06}.json", std::process::id()));
        let bytes = serde_json::to_vec(pending).map_err(|e| ToolError::new(e.to_string()))?;
        march_core::atomic_file::write_file(&path, &bytes, march_core::atomic_file::FileMode::Kept)
            .map_err(|e| ToolError::new(e.to_string()))
    }
}

/// Makes `mirror` hold exactly `texts` (name, text) among its `*.md` files.
fn write_mirror(mirror: &Path, texts: &[(String, String)]) -> Result<(), String> {
    std::fs::create_dir_all(mirror)
        .map_err(|e| format!("cannot create {}: {e}", mirror.display()))?;
    for (name, text) in texts {
        // The server names only plain `*.md` files; anything else is not written here.
        if name.contains(['/', '\\']) || name.starts_with('.') || !name.ends_with(".md") {
            continue;
        }
        march_core::atomic_file::write_file(
            &mirror.join(name),
            text.as_bytes(),
            march_core::atomic_file::FileMode::Kept,
        )
        .map_err(|e| e.to_string())?;
    }
    for entry in std::fs::read_dir(mirror).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") && !name.starts_with('.') && !texts.iter().any(|(n, _)| *n == name)
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
