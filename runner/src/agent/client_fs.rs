//! What the client offered in `initialize`, and the file writer over `fs/write_text_file`.
//!
//! Writes go through the client when it offers `fs.writeTextFile`, so it sees every edit and
//! can show it (a diff pane, an open buffer brought up to date). `fs/read_text_file` is not
//! used: the runner works on the same disk as the client, so its tools read files directly.

use march_tools::exec::LocalExecutor;
use march_tools::exec::sandbox::Sandbox;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{ClientCapabilities, SessionId, WriteTextFileRequest};
use async_trait::async_trait;
use march_tools::ToolContext;
use march_tools::context::FileWriter;

use super::client_terminal::{ClientTerminalExecutor, ClientTerminals};

/// The client capabilities the runner uses; everything else the client offers is ignored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ClientCaps {
    /// `fs.writeTextFile`: edits and writes are handed to the client.
    pub write_text_file: bool,
    /// `terminal`: bash runs in a terminal the client owns.
    pub terminal: bool,
    /// `session.compaction`: compaction progress goes out as `compaction_update`.
    pub compaction: bool,
    /// `session.notices`: other progress may go out as `notice`.
    pub notices: bool,
    /// `_meta.march.diagnostics`: the client wants `_march/diagnostics` notifications.
    pub diagnostics: bool,
}

impl ClientCaps {
    /// What the runner will use of what the client offered.
    pub(crate) fn offered(caps: &ClientCapabilities) -> Self {
        let session = caps.session.as_ref();
        ClientCaps {
            write_text_file: caps.fs.write_text_file,
            terminal: caps.terminal,
            compaction: session.is_some_and(|s| s.compaction.is_some()),
            notices: session.is_some_and(|s| s.notices.is_some()),
            diagnostics: caps
                .meta
                .as_ref()
                .and_then(|m| m.get("march"))
                .and_then(|m| m.get(crate::diagnostics::EXTENSION_KEY))
                .is_some_and(|v| v.as_bool() == Some(true)),
        }
    }

    /// The tools' context for a session: local, except where the client offered to write
    /// files or run commands.
    pub(crate) fn tool_context(
        self,
        cwd: &Path,
        cx: &ConnectionTo<Client>,
        session_id: &str,
        terminals: &Arc<ClientTerminals>,
        sandbox: &Sandbox,
    ) -> ToolContext {
        let mut ctx = ToolContext::local(cwd)
            .with_executor(Arc::new(LocalExecutor::sandboxed(sandbox.clone())));
        if self.write_text_file {
            ctx = ctx.with_writer(Arc::new(ClientFileWriter {
                cx: cx.clone(),
                session_id: session_id.to_string().into(),
            }));
        }
        if self.terminal {
            ctx = ctx.with_executor(Arc::new(ClientTerminalExecutor::new(
                cx.clone(),
                session_id,
                terminals.clone(),
                sandbox.clone(),
            )));
        }
        ctx
    }
}

/// Hands a file's final text to the client with `fs/write_text_file`.
pub(crate) struct ClientFileWriter {
    cx: ConnectionTo<Client>,
    session_id: SessionId,
}

#[async_trait]
impl FileWriter for ClientFileWriter {
    async fn write_text(&self, path: &Path, content: &str) -> Result<(), String> {
        let request =
            WriteTextFileRequest::new(self.session_id.clone(), PathBuf::from(path), content);
        // Called from a tool's own task, never from the dispatch loop.
        match self.cx.send_request(request).block_task().await {
            Ok(_) => Ok(()),
            Err(e) => {
                tracing::warn!(session = %self.session_id, path = %path.display(), "fs/write_text_file failed: {e}");
                Err(format!("the client could not write it ({})", e.message))
            }
        }
    }
}
