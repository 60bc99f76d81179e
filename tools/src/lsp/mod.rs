//! Diagnostics from real language servers, for the model and for the workspace.
//!
//! One [`LspHost`] per project owns the language servers of that project: one per (server,
//! root), started on the first file it checks, restarted with backoff when it crashes, shut
//! down when idle. Every runner child of the project shares it through a Unix socket
//! ([`HostClient`]), so two sessions in one project never start two rust-analyzers. The
//! edit and write tools hand each file they change to [`Diagnostics::check`] and append the
//! new errors to their result; the `diagnostics` tool asks on the model's behalf.

pub(crate) mod framing;
mod host;
mod report;
mod server;
mod socket;
mod tool;
mod uri;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

pub use framing::{FrameError, MAX_MESSAGE_BYTES, read_message, write_message};
pub use host::{HostEvent, LspHost};
pub use report::{errors_after_write, render_report};
pub use socket::{HostClient, run_host_process, serve_host, socket_path};
pub use tool::DiagnosticsTool;

/// How bad a diagnostic is, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Stops the code from building or running.
    Error,
    /// Probably wrong.
    Warning,
    /// Worth knowing.
    Information,
    /// A suggestion.
    Hint,
}

impl Severity {
    /// The word shown to people and the model.
    pub fn label(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Information => "info",
            Severity::Hint => "hint",
        }
    }
}

/// One problem a language server reported, with 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostic {
    /// First line (1-based).
    pub line: u32,
    /// First column (1-based, in the server's UTF-16 units).
    pub column: u32,
    /// Last line (1-based).
    pub end_line: u32,
    /// Column after the end (1-based).
    pub end_column: u32,
    /// How bad it is.
    pub severity: Severity,
    /// What the server said (one line per line of its message).
    pub message: String,
    /// Who said it: the server's `source` (`Pyflakes`, `rustc`) or the server's name.
    pub source: String,
    /// The rule or error code, when there is one (`F821`, `E0308`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// The diagnostics of one file, from every server that checks it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDiagnostics {
    /// The file (absolute).
    pub path: PathBuf,
    /// Its diagnostics, by position.
    pub diagnostics: Vec<Diagnostic>,
}

impl FileDiagnostics {
    /// How many of each severity: errors, warnings, others.
    pub fn counts(&self) -> (usize, usize, usize) {
        let of = |s: Severity| self.diagnostics.iter().filter(|d| d.severity == s).count();
        let errors = of(Severity::Error);
        let warnings = of(Severity::Warning);
        (errors, warnings, self.diagnostics.len() - errors - warnings)
    }
}

/// What a check of one file found.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Checked {
    /// The file's diagnostics, merged over its servers.
    pub diagnostics: Vec<Diagnostic>,
    /// Servers that answered in time.
    pub answered: Vec<String>,
    /// Servers that did not answer in time (their earlier diagnostics are included).
    pub pending: Vec<String>,
    /// Why a server that would check this file did not: not installed, crashed, disabled.
    pub notices: Vec<String>,
    /// The file's diagnostics before this check, when a server had it open already (so
    /// what the change brought can be told from what was there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Vec<Diagnostic>>,
}

impl Checked {
    /// Whether any server checks this kind of file at all.
    pub fn has_servers(&self) -> bool {
        !self.answered.is_empty() || !self.pending.is_empty()
    }
}

/// Something that can check files with language servers: the project's [`LspHost`] itself,
/// or a [`HostClient`] talking to it from another process.
#[async_trait]
pub trait Diagnostics: Send + Sync {
    /// Hand `text` (the file's new content, already on disk) to the servers of `path` and
    /// wait at most `wait` for their fresh diagnostics.
    async fn check(&self, path: &Path, text: &str, wait: Duration) -> Result<Checked, LspError>;

    /// The diagnostics known now: of `path` (checked from disk first, waiting at most
    /// `wait`), or of every file in the project that has any.
    async fn query(
        &self,
        path: Option<&Path>,
        wait: Duration,
    ) -> Result<Vec<FileDiagnostics>, LspError>;
}

/// Why diagnostics could not be had at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LspError {
    /// The project's host process could not be reached or started.
    #[error("the language server host is not reachable: {0}")]
    Host(String),
    /// A file could not be read.
    #[error("cannot read {path}: {reason}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}
