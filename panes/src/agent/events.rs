//! What the pane tells the app, how a turn ended, and scrolling requests.

use agent_client_protocol::v1::schema::{
    PromptResponse, RequestPermissionOutcome, SessionConfigId, SessionConfigValueId, SessionId,
    SessionModeId, StopReason, ToolCallId,
};

use super::PermissionId;

/// What the app should do after the pane handled something.
#[derive(Debug, Clone, PartialEq)]
pub enum PaneEvent {
    /// Nothing changed.
    None,
    /// The pane changed; draw it again.
    Redraw,
    /// Send this prompt (call [`AgentPane::submit_local`] when it is sent, to show it).
    Submit(String),
    /// A slash command: a built-in (aliases resolved: `/quit` is `exit`) or the agent's.
    Slash {
        /// The command name without the slash.
        name: String,
        /// The rest of the line, trimmed.
        args: String,
    },
    /// The answer to a permission request.
    Permission {
        /// The request, as returned by [`AgentPane::show_permission`].
        id: PermissionId,
        /// The tool call it was about.
        tool_call_id: ToolCallId,
        /// What the user chose (`Cancelled` means cancel the turn).
        outcome: RequestPermissionOutcome,
    },
    /// Cancel the running turn (`session/cancel`).
    CancelTurn,
    /// Hand a message typed during the turn to the agent (`_march/session/queue`); answer
    /// with [`super::AgentPane::queue_taken`].
    Queue {
        /// The pane's number for it.
        local: u64,
        /// The message.
        text: String,
        /// When it is delivered.
        kind: QueuedKind,
    },
    /// Take a queued message back from the agent (`_march/session/unqueue`).
    Unqueue(String),
    /// Switch the session's mode (`session/set_mode`), for agents that offer modes.
    SetMode(SessionModeId),
    /// Set a session config option (`session/set_config_option`).
    SetConfigOption {
        /// The option.
        config_id: SessionConfigId,
        /// Its new value.
        value: SessionConfigValueId,
    },
    /// Show this earlier session in the pane (chosen from the `/resume` list).
    ResumeSession(SessionId),
    /// List the project's files for the `@` popup ([`super::AgentPane::set_files`]).
    ListFiles,
    /// Put this text on the clipboard (copy mode or a mouse selection copied it).
    Copy(String),
    /// Attach the picture at `path` to the prompt ([`super::AgentPane::attach`]); when
    /// it came from a paste that cannot be read as a picture, the pasted text goes into
    /// the prompt instead ([`super::AgentPane::paste_text`]).
    AttachImage {
        /// The picture file.
        path: std::path::PathBuf,
        /// The text pasted, when it was a paste.
        pasted: Option<String>,
    },
    /// Move the session's leaf to an entry chosen in the tree or the rewind list.
    Navigate(super::TreeMove),
    /// A message chosen in the rewind list: look at the files the session changed since,
    /// then [`super::AgentPane::offer_restore`] (or, with none, make the move).
    RewindCheck(super::TreeMove),
    /// Set (or with `None`, clear) a tree entry's label.
    LabelEntry {
        /// The entry.
        entry_id: String,
        /// The label.
        label: Option<String>,
    },
    /// A click at screen position `x`, `y` that the pane did not take (no selection
    /// was made): the app may act on what is there.
    Click {
        /// Column.
        x: u16,
        /// Row.
        y: u16,
    },
}

/// When a message typed during a turn is delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueuedKind {
    /// Steering: at the next turn boundary, before the agent's next model call.
    Steer,
    /// When the agent would otherwise stop.
    FollowUp,
    /// After the turn, as a prompt of its own (from outside the pane, or for an agent that
    /// takes nothing into a running turn).
    Next,
}

impl QueuedKind {
    /// How the queue line names it.
    pub fn label(self) -> &'static str {
        match self {
            QueuedKind::Steer => "steer",
            QueuedKind::FollowUp => "follow-up",
            QueuedKind::Next => "next",
        }
    }
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnOutcome {
    /// The agent finished.
    EndTurn,
    /// The turn was cancelled.
    Cancelled,
    /// The reply hit the token limit.
    MaxTokens,
    /// A limit ended the turn (too many model requests, a tool past its timeout); the
    /// runner's words for it when it gave them.
    MaxTurnRequests(Option<String>),
    /// The agent refused.
    Refusal,
    /// The prompt request failed.
    Error(String),
}

impl From<&PromptResponse> for TurnOutcome {
    fn from(response: &PromptResponse) -> Self {
        match response.stop_reason {
            StopReason::Cancelled => TurnOutcome::Cancelled,
            StopReason::MaxTokens => TurnOutcome::MaxTokens,
            // March's runner names the limit in `_meta.march.limit.message`.
            StopReason::MaxTurnRequests => TurnOutcome::MaxTurnRequests(
                response
                    .meta
                    .as_ref()
                    .and_then(|m| m.get("march")?.get("limit")?.get("message")?.as_str())
                    .map(|text| crate::sanitize::sanitize_line(text).into_owned()),
            ),
            StopReason::Refusal => TurnOutcome::Refusal,
            _ => TurnOutcome::EndTurn,
        }
    }
}
