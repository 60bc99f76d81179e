//! A session's memory server (`[memory] remote`): made when the session opens, its files
//! mirrored at each run's start with a short timeout, so the run's context carries them. A
//! server that cannot be reached costs one notice per outage (the run goes on with the
//! mirror of the last contact), and the appends kept meanwhile go out at the next contact.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use agent_client_protocol::v1::schema::{Notice, NoticeSeverity, SessionUpdate};
use march_core::auth::AuthStore;
use march_core::paths::MarchPaths;
use march_tools::memory::remote::RemoteMemory;

use super::port::ClientPort;

/// How long a run's start waits on the memory server, a request.
const SYNC_LIMIT: Duration = Duration::from_secs(2);

/// The memory server of a session.
pub(crate) struct SessionRemote {
    /// The server and its mirror.
    pub(crate) memory: Arc<RemoteMemory>,
    /// The last contact failed and the user was told.
    down: AtomicBool,
}

impl SessionRemote {
    /// The server at `url`, mirrored under the data directory; its token from
    /// `MARCH_MEMORY_TOKEN` or auth.json.
    pub(crate) fn open(paths: &MarchPaths, url: &str) -> Result<Self, String> {
        let auth = AuthStore::load(paths).map_err(|e| e.to_string())?;
        let token = crate::memory_server::remote_token(&auth);
        let mirror = crate::memory_server::mirror_dir(paths, url);
        let memory = RemoteMemory::new(url, token, mirror)?;
        Ok(SessionRemote {
            memory: Arc::new(memory),
            down: AtomicBool::new(false),
        })
    }

    /// Mirrors the server for a run; says so once when it cannot be reached.
    pub(crate) async fn sync_for_run(&self, port: &Arc<dyn ClientPort>, notices: bool) {
        match self.memory.sync(SYNC_LIMIT).await {
            Ok(()) => {
                if self.down.swap(false, Ordering::Relaxed) {
                    tracing::info!(url = self.memory.url(), "remote memory reachable again");
                }
            }
            Err(e) => {
                tracing::warn!(url = self.memory.url(), "remote memory: {e}");
                if self.down.swap(true, Ordering::Relaxed) || !notices {
                    return;
                }
                let queued = self.memory.queued();
                let mut text = format!(
                    "{}: {e}. This run uses the copy from the last contact.",
                    self.memory.url()
                );
                if queued > 0 {
                    text.push_str(&format!(
                        " {queued} appended entr{} wait to be sent.",
                        if queued == 1 { "y" } else { "ies" }
                    ));
                }
                port.notify(SessionUpdate::Notice(
                    Notice::new(NoticeSeverity::Warning, "Remote memory unavailable")
                        .description(text),
                ));
            }
        }
    }
}
