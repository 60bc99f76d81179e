//! The driver's calls of March's ACP extensions (`docs/PROTOCOL.md`, Extensions): messages
//! for the running turn, commands the user ran, diagnostics and MCP servers. An agent
//! without an extension is not asked; what needs an answer says so.

use std::path::PathBuf;

use std::future::Future;
use std::sync::Arc;

use march_runner::client::{ClientError, Connection};

use super::{AgentDriver, AgentEvent, describe};

/// Why the session's tree is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreePurpose {
    /// `/tree`: the whole tree.
    Tree,
    /// `/rewind` (or Esc Esc): the user messages of the current path.
    Rewind,
    /// Kept for the next `/tree` (after a turn), shown nowhere now.
    Keep,
}

impl AgentDriver {
    /// Make `call` on the agent's connection off the loop, for this session, and send the
    /// event `done` makes of its outcome. False (nothing called) when the agent is not up.
    fn call<T, Fut>(
        &self,
        call: impl FnOnce(Arc<Connection>, String) -> Fut + Send + 'static,
        done: impl FnOnce(Result<T, String>) -> AgentEvent + Send + 'static,
    ) -> bool
    where
        Fut: Future<Output = Result<T, ClientError>> + Send,
        T: Send + 'static,
    {
        let Some((runner, session)) = self.runner_and_session() else {
            return false;
        };
        let (key, events) = (self.key, self.events.clone());
        tokio::spawn(async move {
            let result = match runner.connection().await {
                Ok(connection) => call(connection, session.0.to_string())
                    .await
                    .map_err(describe),
                Err(e) => Err(describe(e)),
            };
            let _ = events.send((key, done(result)));
        });
        true
    }

    /// Hand a message typed during the turn to the agent (`_march/session/queue`);
    /// [`AgentEvent::Queued`] follows. An agent without March's extension takes nothing:
    /// the message then runs as the next prompt.
    pub fn queue(&self, local: u64, text: String, kind: march_panes::agent::QueuedKind) {
        use march_panes::agent::QueuedKind;
        use march_runner::client::{QueueKind, QueueMessageRequest};
        let (key, events) = (self.key, self.events.clone());
        let kind = match kind {
            QueuedKind::Steer => QueueKind::Steer,
            QueuedKind::FollowUp => QueueKind::FollowUp,
            QueuedKind::Next => {
                let _ = events.send((key, AgentEvent::Queued { local, id: None }));
                return;
            }
        };
        let Some((runner, session)) = self.runner_and_session() else {
            let _ = events.send((key, AgentEvent::Queued { local, id: None }));
            return;
        };
        tokio::spawn(async move {
            let request = QueueMessageRequest {
                session_id: session.0.to_string(),
                text,
                kind,
            };
            let id = match runner.connection().await {
                Ok(connection) => match connection.queue_message(request).await {
                    Ok(response) => response.id,
                    Err(e) => {
                        tracing::debug!("message not queued in the turn: {}", describe(e));
                        None
                    }
                },
                Err(_) => None,
            };
            let _ = events.send((key, AgentEvent::Queued { local, id }));
        });
    }

    /// Whether the agent records commands the user ran from the prompt.
    pub fn records_bash(&self) -> bool {
        self.shared
            .lock()
            .runner
            .as_ref()
            .and_then(|r| r.current())
            .is_some_and(|c| c.offers_bash_record())
    }

    /// Record a `!command` that ended (`_march/session/bash`); the agent shows it back as a
    /// user message. A failure is said in the pane.
    pub fn record_bash(&self, mut request: march_runner::client::RecordBashRequest) {
        let Some((runner, session)) = self.runner_and_session() else {
            return;
        };
        request.session_id = session.0.to_string();
        let (key, events) = (self.key, self.events.clone());
        tokio::spawn(async move {
            let result = match runner.connection().await {
                Ok(connection) => connection.record_bash(request).await.map(drop),
                Err(e) => Err(e),
            };
            if let Err(e) = result {
                let why = format!("the command's output was not recorded: {}", describe(e));
                let _ = events.send((key, AgentEvent::NotRecorded(why)));
            }
        });
    }

    /// Take queued message `id` back from the running turn (`_march/session/unqueue`).
    pub fn unqueue(&self, id: String) {
        let Some((runner, session)) = self.runner_and_session() else {
            return;
        };
        tokio::spawn(async move {
            let request = march_runner::client::UnqueueMessageRequest {
                session_id: session.0.to_string(),
                id,
            };
            if let Ok(connection) = runner.connection().await
                && let Err(e) = connection.unqueue_message(request).await
            {
                tracing::debug!("message not taken back: {}", describe(e));
            }
        });
    }

    /// Whether the agent reports its session's MCP servers.
    pub fn reports_mcp(&self) -> bool {
        self.shared
            .lock()
            .runner
            .as_ref()
            .and_then(|r| r.current())
            .is_some_and(|c| c.offers_mcp_status())
    }

    /// Ask the agent for its session's MCP servers (`_march/session/mcp`), starting them
    /// first when `start`; the answer is kept in [`RunnerStatus::mcp`] and comes back as
    /// [`AgentEvent::Mcp`] with `show`. False when the agent does not report them.
    pub fn refresh_mcp(&self, start: bool, show: bool) -> bool {
        if !self.reports_mcp() {
            return false;
        }
        let Some((runner, session)) = self.runner_and_session() else {
            return false;
        };
        let (key, events, shared) = (self.key, self.events.clone(), self.shared.clone());
        tokio::spawn(async move {
            let request = march_runner::client::McpStatusRequest {
                session_id: session.0.to_string(),
                start,
            };
            let result = match runner.connection().await {
                Ok(connection) => connection
                    .mcp_status(request)
                    .await
                    .map(|r| r.servers)
                    .map_err(describe),
                Err(e) => Err(describe(e)),
            };
            if let Ok(servers) = &result {
                shared.lock().status.mcp = servers.clone();
            }
            let _ = events.send((key, AgentEvent::Mcp { result, show }));
        });
        true
    }

    /// Have the session's project check `paths` again from disk (March changed them); the
    /// news comes back as `_march/diagnostics`. Agents without it are not asked.
    pub fn refresh_diagnostics(&self, paths: Vec<PathBuf>) {
        let Some((runner, session)) = self.runner_and_session() else {
            return;
        };
        tokio::spawn(async move {
            let request = march_runner::client::RefreshDiagnosticsRequest {
                session_id: session.0.to_string(),
                paths,
            };
            if let Ok(connection) = runner.connection().await
                && let Err(e) = connection.refresh_diagnostics(request).await
            {
                tracing::debug!("diagnostics not refreshed: {e}");
            }
        });
    }

    /// Whether the agent shows and moves in its session tree.
    pub fn offers_tree(&self) -> bool {
        self.shared
            .lock()
            .runner
            .as_ref()
            .and_then(|r| r.current())
            .is_some_and(|c| c.offers_tree())
    }

    /// Ask for the session's tree from its `from`-th entry (`_march/session/tree`);
    /// [`AgentEvent::Tree`] follows.
    /// False when the agent has no tree to show.
    pub fn session_tree(&self, purpose: TreePurpose, from: u64) -> bool {
        self.offers_tree()
            && self.call(
                move |connection, session_id| async move {
                    let request = march_runner::client::SessionTreeRequest { session_id, from };
                    connection.session_tree(request).await
                },
                move |result| AgentEvent::Tree { purpose, result },
            )
    }

    /// Move the session's leaf (`_march/session/navigate`); the branch notification and the
    /// new path's replay come first, then [`AgentEvent::Navigated`].
    pub fn navigate(
        &self,
        request: march_runner::client::NavigateRequest,
        chosen: march_panes::agent::TreeMove,
    ) {
        let (key, events) = (self.key, self.events.clone());
        let unsent = chosen.clone();
        let called = self.call(
            move |connection, session_id| async move {
                let request = march_runner::client::NavigateRequest {
                    session_id,
                    ..request
                };
                connection.navigate(request).await
            },
            move |result| AgentEvent::Navigated { chosen, result },
        );
        if !called {
            let result = Err("the agent is not ready".into());
            let chosen = unsent;
            let _ = events.send((key, AgentEvent::Navigated { chosen, result }));
        }
    }

    /// Set or clear an entry's label (`_march/session/label`); a failure is said in the pane
    /// (the open tree already shows the label).
    pub fn label_entry(&self, entry_id: String, label: Option<String>) {
        self.call(
            move |connection, session_id| async move {
                let request = march_runner::client::LabelEntryRequest {
                    session_id,
                    entry_id,
                    label,
                };
                connection.label_entry(request).await
            },
            |result| match result {
                Ok(_) => AgentEvent::Quiet,
                Err(e) => AgentEvent::NotRecorded(format!("the label was not set: {e}")),
            },
        );
    }

    /// Copy the session's path into a new session (`_march/session/fork`);
    /// [`AgentEvent::Forked`] follows.
    pub fn fork(&self) -> bool {
        self.offers_tree()
            && self.call(
                |connection, session_id| async move {
                    let request = march_runner::client::ForkSessionRequest { session_id };
                    connection.fork_session(request).await
                },
                AgentEvent::Forked,
            )
    }

    /// Have the agent replay the session's current path whole (`_march/session/navigate`
    /// with `replayOnly`), after the pane could not keep its view through a move.
    pub fn replay_path(&self) {
        self.call(
            |connection, session_id| async move {
                let request = march_runner::client::NavigateRequest {
                    session_id,
                    entry_id: String::new(),
                    summarize: false,
                    instructions: None,
                    replace_instructions: false,
                    label: None,
                    replay_only: true,
                    held: None,
                };
                connection.navigate(request).await
            },
            |result| match result {
                Ok(_) => AgentEvent::Quiet,
                Err(e) => {
                    AgentEvent::NotRecorded(format!("the conversation was not shown again: {e}"))
                }
            },
        );
    }
}
