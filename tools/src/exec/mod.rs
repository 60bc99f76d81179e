//! How bash commands run: the interface the runner can route to a client-owned terminal, and
//! the local implementation.

mod local;
pub mod sandbox;

use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

pub use local::LocalExecutor;

/// The program commands run in, as `SHELL -c COMMAND` (a client terminal is asked for it too).
pub const SHELL: &str = "bash";

/// A command to run with `bash -c`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRequest {
    /// The command line.
    pub command: String,
    /// Working directory.
    pub cwd: PathBuf,
    /// Kill the command after this long.
    pub timeout: Option<Duration>,
    /// The tool call the command runs for, so an executor showing it elsewhere (a client's
    /// terminal) can attach it to that call.
    pub tool_call_id: Option<String>,
}

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandExit {
    /// Exited with a status code.
    Code(i32),
    /// Killed by a signal it did not expect (number).
    Signal(i32),
    /// Killed because it ran past its timeout.
    TimedOut,
    /// Killed because the run was aborted.
    Aborted,
}

/// Receives output bytes (stdout and stderr merged) as they arrive.
pub type OutputSink = Box<dyn FnMut(&[u8]) + Send>;

/// Why a command could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The working directory is missing.
    #[error("Working directory does not exist: {0}")]
    MissingCwd(PathBuf),
    /// The working directory is a file or something else that is not a directory.
    #[error("Working directory is not a directory: {0}")]
    CwdNotDirectory(PathBuf),
    /// The shell could not be started.
    #[error("Could not start bash: {0}")]
    Spawn(std::io::Error),
    /// Reading output or waiting failed.
    #[error("Command failed: {0}")]
    Io(std::io::Error),
    /// The client that runs commands in its own terminal failed to.
    #[error("The client's terminal failed: {0}")]
    Client(String),
    /// The sandbox the command must run in cannot be enforced here.
    #[error("The command was not run: its sandbox cannot be enforced: {0}")]
    Sandbox(sandbox::SandboxError),
}

/// Runs commands; must leave no process behind when it returns.
#[async_trait]
pub trait CommandExecutor: Send + Sync {
    /// Run to completion, timeout or abort, streaming output into `output`.
    ///
    /// Dropping the returned future mid-run must also leave no process behind.
    async fn run(
        &self,
        request: CommandRequest,
        cancel: CancellationToken,
        output: OutputSink,
    ) -> Result<CommandExit, ExecError>;

    /// What to tell the model and the user about a command of the tool call `call_id` that
    /// failed with `output` (a confined command's refusal); none by default.
    fn failure_note(&self, _call_id: Option<&str>, _output: &str) -> Option<String> {
        None
    }
}
