//! The Runner Process Client: what the app uses to run an ACP agent (March's `march runner`
//! or any other ACP agent command) as a child process and talk to it.
//!
//! - [`RunnerProcess`] spawns the child in its own process group and kills the whole group
//!   on drop; [`Connection`] is the ACP client side (initialize, then typed session calls);
//!   [`RunnerEvent`] is the one ordered stream of what the runner sends (updates, requests
//!   with their responders, lifecycle).
//! - [`RunnerClient`] is a process plus its connection; [`SupervisedRunner`] restarts a
//!   crashed runner with backoff and reopens its sessions.
//!
//! The ACP message types are re-exported as [`schema`] so users need no direct dependency.

mod connection;
mod error;
mod events;
mod open;
mod process;
mod supervise;

#[cfg(test)]
mod tests;

use std::time::Duration;

pub use agent_client_protocol::Error as RpcError;
pub use agent_client_protocol::v1::schema;

pub use crate::diagnostics::{
    Diagnostic, DiagnosticsNotification, FileDiagnostics, HostEvent, RefreshDiagnosticsRequest,
    RefreshDiagnosticsResponse, Severity,
};
pub use crate::mcp_status::{McpStatusRequest, McpStatusResponse, ServerPhase, ServerStatus};
pub use crate::session_tree::{
    BranchNotification, EntryLabel, ForkSessionRequest, ForkSessionResponse, HeldConversation,
    LabelEntryRequest, NavigateRequest, NavigateResponse, SessionTreeRequest, SessionTreeResponse,
    TreeEntry, TreeEntryKind,
};
pub use crate::steering::{
    QueueKind, QueueMessageRequest, QueueMessageResponse, UNSENT_KEY, UnqueueMessageRequest,
    UnqueueMessageResponse,
};
pub use crate::structured_output::{SchemaRequest, StructuredResult, is_retry_chunk};
pub use crate::user_shell::{RecordBashRequest, RecordBashResponse};
pub use connection::{ConnectOptions, Connection, DEFAULT_INIT_TIMEOUT, OpenSession};
pub use error::ClientError;
pub use events::{AgentRequest, EventReceiver, Pending, RunnerEvent};
pub use march_core::restart::{RestartCounter, RestartDecision, RestartPolicy};
pub use open::{
    OpenError, OpenedSession, SessionSettings, SessionTarget, Setting, find_config_option,
    open_session,
};
pub use process::{
    ExitWatcher, RunnerCommand, RunnerExit, RunnerProcess, STDERR_TAIL_BYTES, StdioTransport,
};
pub use supervise::SupervisedRunner;

use events::EventSender;

/// How long a runner that failed to initialize gets to exit, so its stderr can be reported.
const EXIT_REPORT_GRACE: Duration = Duration::from_secs(2);

/// A runner process and the ACP connection over its stdio.
///
/// Dropping it closes the connection and kills the runner's process group.
#[derive(Debug)]
pub struct RunnerClient {
    // Dropped first: the runner sees its stdin close before the group is killed.
    connection: Connection,
    process: RunnerProcess,
}

impl RunnerClient {
    /// Spawns `command`, connects and initializes. An [`RunnerEvent::Exited`] event follows
    /// the updates when the runner ends.
    pub async fn spawn(
        command: &RunnerCommand,
        options: &ConnectOptions,
    ) -> Result<(RunnerClient, EventReceiver), ClientError> {
        let (events, receiver) = tokio::sync::mpsc::unbounded_channel();
        let client = RunnerClient::spawn_with_events(command, options, events).await?;
        Ok((client, receiver))
    }

    pub(crate) async fn spawn_with_events(
        command: &RunnerCommand,
        options: &ConnectOptions,
        events: EventSender,
    ) -> Result<RunnerClient, ClientError> {
        let mut process = RunnerProcess::spawn(command)?;
        let transport = process.take_transport().ok_or(ClientError::Disconnected)?;
        let connection =
            match Connection::connect_with_events(transport, options, events.clone()).await {
                Ok(connection) => connection,
                Err(error) => return Err(explain_start_failure(error, &process).await),
            };
        let exit = process.exit_watcher();
        tokio::spawn(async move {
            let (exit, stderr_tail) = exit.wait().await;
            let _ = events.send(RunnerEvent::Exited { exit, stderr_tail });
        });
        Ok(RunnerClient {
            connection,
            process,
        })
    }

    /// The ACP connection.
    pub fn connection(&self) -> &Connection {
        &self.connection
    }

    /// The runner process.
    pub fn process(&self) -> &RunnerProcess {
        &self.process
    }

    /// Explains a failed call: when the runner died, how it ended and what it said on stderr.
    pub async fn explain(&self, error: ClientError) -> ClientError {
        if !error.is_disconnect() {
            return error;
        }
        match tokio::time::timeout(EXIT_REPORT_GRACE, self.process.wait()).await {
            Ok(exit) => ClientError::Exited {
                exit,
                stderr_tail: self.process.stderr_tail(),
            },
            Err(_) => error,
        }
    }

    /// Closes the connection (the runner's stdin), gives the runner `grace` to exit, then
    /// kills its group. Returns how it ended.
    pub async fn shutdown(self, grace: Duration) -> RunnerExit {
        let RunnerClient {
            connection,
            mut process,
        } = self;
        drop(connection);
        match tokio::time::timeout(grace, process.wait()).await {
            Ok(exit) => exit,
            Err(_) => {
                process.kill();
                process.wait().await
            }
        }
    }
}

/// A runner that failed before answering `initialize` usually died: say how, with its stderr.
async fn explain_start_failure(error: ClientError, process: &RunnerProcess) -> ClientError {
    if !matches!(error, ClientError::Disconnected) {
        return error;
    }
    match tokio::time::timeout(EXIT_REPORT_GRACE, process.wait()).await {
        Ok(exit) => ClientError::Exited {
            exit,
            stderr_tail: process.stderr_tail(),
        },
        Err(_) => error,
    }
}
