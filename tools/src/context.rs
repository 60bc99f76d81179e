//! What every tool needs to know about the session it works for.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use march_core::lsp_config::LspServerConfig;
use march_core::memory::Memory;

use crate::exec::{CommandExecutor, LocalExecutor};
use crate::lsp::Diagnostics;
use crate::paths::{ResolvedPath, resolve};

/// Writes the final text of a file somewhere other than straight to disk: through an ACP
/// client (`fs/write_text_file`), so the client sees the edit and can show it.
///
/// Only writing goes through it. The edit and write tools still read, check, lock and compute
/// everything locally: the runner works on the same disk the client does, so reading through
/// the client would only add a round trip.
#[async_trait]
pub trait FileWriter: Send + Sync {
    /// Replace the whole file at `path` (absolute, symbolic links already followed; missing
    /// parent directories already created) with `content`. The error is shown to the model
    /// after "Cannot write <path>: ".
    async fn write_text(&self, path: &Path, content: &str) -> Result<(), String>;
}

/// The session's working directory, where shell commands run and where file writes go.
#[derive(Clone)]
pub struct ToolContext {
    /// The project directory; relative paths resolve against it.
    pub cwd: PathBuf,
    /// Runs bash commands (locally, or in a client-owned terminal).
    pub executor: Arc<dyn CommandExecutor>,
    /// Where edit and write hand their final content; `None` writes locally (atomically).
    pub writer: Option<Arc<dyn FileWriter>>,
    /// Where the memory tool's files are; `None` when memory is off (the tool says so).
    pub memory: Option<Memory>,
    /// The memory server of `[memory] remote`, whose files `memory` mirrors.
    pub remote_memory: Option<Arc<crate::memory::remote::RemoteMemory>>,
    /// The project's language servers; `None` when diagnostics are off.
    pub lsp: Option<LspAccess>,
    /// The socket of the workspace server the session runs in; `None` outside one.
    pub workspace: Option<PathBuf>,
    /// How far web fetches may go (`[web]`).
    pub web: crate::web::FetchLimits,
    /// The search API of `[web.search]`; `None` when none is configured.
    pub search: Option<crate::web::SearchApi>,
    /// The browser daemon; `None` when no browser can be driven.
    pub browser: Option<crate::browser::BrowserAccess>,
    /// The image model of `[images]`; `None` when none is configured.
    pub images: Option<crate::image::Images>,
    /// Where agents' avatars live (`<config>/profiles/avatars`); `None`: no avatar tool.
    pub avatars: Option<PathBuf>,
}

/// Files larger than this are not handed to language servers after a write.
pub const MAX_CHECKED_BYTES: usize = 8 << 20;

/// How a session reaches its project's language servers.
#[derive(Clone)]
pub struct LspAccess {
    /// The host (in this process or over its socket).
    pub source: Arc<dyn Diagnostics>,
    /// The servers the host runs, to know which files have one.
    pub servers: Arc<Vec<LspServerConfig>>,
    /// How long edit and write wait for fresh diagnostics.
    pub wait: Duration,
}

impl LspAccess {
    /// Whether some server checks `path`.
    pub fn handles(&self, path: &Path) -> bool {
        self.servers.iter().any(|s| s.handles(path))
    }

    /// What edit and write append to their result after changing `path` (already on disk):
    /// its errors, in one compact line each. `None` when there is nothing to say.
    pub async fn note_after_write(&self, path: &Path, shown: &str) -> Option<String> {
        if !self.handles(path) {
            return None;
        }
        let bytes = tokio::fs::read(path).await.ok()?;
        // Binary files mean nothing to a language server, and huge ones only stall it.
        if bytes.contains(&0) || bytes.len() > MAX_CHECKED_BYTES {
            return None;
        }
        let text = String::from_utf8_lossy(&bytes);
        match self.source.check(path, &text, self.wait).await {
            Ok(checked) => {
                crate::lsp::errors_after_write(shown, &checked, self.wait.as_millis() as u64)
            }
            Err(e) => {
                tracing::warn!(path = %path.display(), "diagnostics after a write failed: {e}");
                None
            }
        }
    }
}

impl ToolContext {
    /// A context that runs commands and writes files locally.
    pub fn local(cwd: impl Into<PathBuf>) -> Self {
        ToolContext {
            cwd: cwd.into(),
            executor: Arc::new(LocalExecutor::default()),
            writer: None,
            memory: None,
            remote_memory: None,
            lsp: None,
            workspace: None,
            web: crate::web::FetchLimits::default(),
            search: None,
            browser: None,
            images: None,
            avatars: None,
        }
    }

    /// The same context, running commands through `executor`.
    pub fn with_executor(mut self, executor: Arc<dyn CommandExecutor>) -> Self {
        self.executor = executor;
        self
    }

    /// The same context, handing file writes to `writer`.
    pub fn with_writer(mut self, writer: Arc<dyn FileWriter>) -> Self {
        self.writer = Some(writer);
        self
    }

    /// The same context, with memory files for the memory tool.
    pub fn with_memory(mut self, memory: Memory) -> Self {
        self.memory = Some(memory);
        self
    }

    /// The same context, with the project's language servers.
    pub fn with_lsp(mut self, lsp: LspAccess) -> Self {
        self.lsp = Some(lsp);
        self
    }

    /// The same context, fetching from the web within `limits`.
    pub fn with_web(mut self, limits: crate::web::FetchLimits) -> Self {
        self.web = limits;
        self
    }

    /// The same context, searching the web through `api`.
    pub fn with_search(mut self, api: crate::web::SearchApi) -> Self {
        self.search = Some(api);
        self
    }

    /// The same context, driving the browser daemon through `access`.
    pub fn with_browser(mut self, access: crate::browser::BrowserAccess) -> Self {
        self.browser = Some(access);
        self
    }

    /// The same context, making images with `images`.
    pub fn with_images(mut self, images: crate::image::Images) -> Self {
        self.images = Some(images);
        self
    }

    /// The same context, with `remote` as the memory server of its memory.
    pub fn with_remote_memory(mut self, remote: Arc<crate::memory::remote::RemoteMemory>) -> Self {
        self.remote_memory = Some(remote);
        self
    }

    /// The same context, setting avatars in `dir`.
    pub fn with_avatars(mut self, dir: PathBuf) -> Self {
        self.avatars = Some(dir);
        self
    }

    /// The same context, in the workspace served at `socket`.
    pub fn with_workspace(mut self, socket: PathBuf) -> Self {
        self.workspace = Some(socket);
        self
    }

    /// Resolve a path argument against the working directory.
    pub fn resolve(&self, raw: &str) -> ResolvedPath {
        resolve(&self.cwd, raw)
    }

    /// A path as shown to the model.
    pub fn display(&self, path: &Path) -> String {
        ResolvedPath {
            absolute: path.to_path_buf(),
            inside_project: path.starts_with(&self.cwd),
        }
        .display(&self.cwd)
    }
}

/// A [`FileWriter`] for tests: records what it is handed, writes nothing, and fails on
/// request.
#[cfg(test)]
pub(crate) mod recording {
    use parking_lot::Mutex;
    use std::path::{Path, PathBuf};

    use async_trait::async_trait;

    use super::FileWriter;

    /// Every write handed over, in order; `fail` makes each write fail with that message.
    #[derive(Default)]
    pub(crate) struct RecordingWriter {
        pub writes: Mutex<Vec<(PathBuf, String)>>,
        pub fail: Option<String>,
    }

    impl RecordingWriter {
        /// The writes so far.
        pub(crate) fn writes(&self) -> Vec<(PathBuf, String)> {
            self.writes.lock().clone()
        }
    }

    #[async_trait]
    impl FileWriter for RecordingWriter {
        async fn write_text(&self, path: &Path, content: &str) -> Result<(), String> {
            self.writes
                .lock()
                .push((path.to_path_buf(), content.to_string()));
            match &self.fail {
                Some(message) => Err(message.clone()),
                None => Ok(()),
            }
        }
    }
}
