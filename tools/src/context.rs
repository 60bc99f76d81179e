//! What every tool needs to know about the session it works for.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::exec::{CommandExecutor, LocalExecutor};
use crate::paths::{ResolvedPath, resolve};

/// The session's working directory and where shell commands run.
#[derive(Clone)]
pub struct ToolContext {
    /// The project directory; relative paths resolve against it.
    pub cwd: PathBuf,
    /// Runs bash commands (locally, or in a client-owned terminal).
    pub executor: Arc<dyn CommandExecutor>,
}

impl ToolContext {
    /// A context that runs commands locally.
    pub fn local(cwd: impl Into<PathBuf>) -> Self {
        ToolContext {
            cwd: cwd.into(),
            executor: Arc::new(LocalExecutor),
        }
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
