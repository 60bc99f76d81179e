//! March's extension for the session tree: `_march/session/tree` lists a session's entries,
//! `_march/session/navigate` moves its leaf (writing pi's `branch_summary` of the branch left
//! when asked), `_march/session/label` bookmarks an entry, and the `_march/session/branch`
//! notification tells the client the leaf moved, before the new path's replay;
//! `_march/session/fork` copies the path so far into a new session. Advertised as
//! `agentCapabilities._meta.march.tree`. See `docs/PROTOCOL.md`.

use agent_client_protocol::{JsonRpcNotification, JsonRpcRequest, JsonRpcResponse};
use serde::{Deserialize, Serialize};

/// The extension's key under `_meta.march` in the agent's capabilities.
pub const EXTENSION_KEY: &str = "tree";
/// The method listing the tree.
pub const TREE_METHOD: &str = "_march/session/tree";
/// The method moving the leaf.
pub const NAVIGATE_METHOD: &str = "_march/session/navigate";
/// The method setting or clearing a label.
pub const LABEL_METHOD: &str = "_march/session/label";
/// The method copying the path into a new session.
pub const FORK_METHOD: &str = "_march/session/fork";
/// The notification of a leaf move.
pub const BRANCH_NOTIFICATION: &str = "_march/session/branch";

/// `_march/session/tree`: the entries of a session's tree, from the `from`-th in file order
/// (the file is append-only: a client that keeps what it was sent asks for the rest only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonRpcRequest)]
#[request(method = "_march/session/tree", response = SessionTreeResponse)]
#[serde(rename_all = "camelCase")]
pub struct SessionTreeRequest {
    /// The session.
    pub session_id: String,
    /// The first entry wanted, by its place in file order (0, or absent: all of them).
    #[serde(default)]
    pub from: u64,
}

/// `_march/session/tree` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonRpcResponse)]
#[serde(rename_all = "camelCase")]
pub struct SessionTreeResponse {
    /// The current leaf; `None` before the first entry.
    pub leaf_id: Option<String>,
    /// The place of the first entry sent: `from`, or 0 when the session has fewer entries
    /// than that (a client then drops what it kept).
    #[serde(default)]
    pub from: u64,
    /// The entries from there, in file order (a parent before its children).
    pub entries: Vec<TreeEntry>,
    /// Every entry's label now (labelled entries sent earlier may have new ones).
    #[serde(default)]
    pub labels: Vec<EntryLabel>,
}

/// An entry's label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryLabel {
    /// The entry.
    pub id: String,
    /// Its label.
    pub label: String,
}

/// One entry of the tree, as a client shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeEntry {
    /// The entry id.
    pub id: String,
    /// Its parent; `None` for a root.
    pub parent_id: Option<String>,
    /// What it records.
    pub kind: TreeEntryKind,
    /// A one-line preview (at most a few hundred characters; not sanitised).
    pub text: String,
    /// The label set on it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// When it was written (ISO 8601).
    pub timestamp: String,
}

/// What a tree entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TreeEntryKind {
    /// A user message: choosing it puts its text back in the editor.
    User,
    /// The model's answer.
    Assistant,
    /// A tool's result.
    ToolResult,
    /// A command the user ran (`!`).
    Bash,
    /// An extension's message in the context: chosen like a user message.
    CustomMessage,
    /// The summary of a branch left.
    BranchSummary,
    /// A compaction's summary.
    Compaction,
    /// A model, thinking level or tools change.
    Settings,
    /// A label, leaf move, name or extension state: not conversation.
    Meta,
    /// A kind this client does not know.
    #[serde(other)]
    Other,
}

/// `_march/session/navigate`: move the session's leaf to an entry (pi's `/tree`). A user
/// message (or extension message) chosen puts the leaf on its parent and its text in the
/// answer, to edit and send again; any other entry becomes the leaf. Refused while a turn
/// runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonRpcRequest)]
#[request(method = "_march/session/navigate", response = NavigateResponse)]
#[serde(rename_all = "camelCase")]
pub struct NavigateRequest {
    /// The session.
    pub session_id: String,
    /// The chosen entry.
    pub entry_id: String,
    /// Summarise the branch left (a `branch_summary` entry where the path continues).
    #[serde(default)]
    pub summarize: bool,
    /// A focus for the summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// `instructions` replace the summary's instructions instead of adding to them.
    #[serde(default)]
    pub replace_instructions: bool,
    /// A label for the summary entry (or, without a summary, the chosen entry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Move nothing: replay the current path whole (`entryId` is ignored). A client that
    /// could not keep its view as a `_march/session/branch` asked sends this.
    #[serde(default)]
    pub replay_only: bool,
    /// The conversation the client held when the leaf left an earlier place: when the move
    /// lands there, nothing is replayed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<HeldConversation>,
}

/// A path's conversation a client holds: what it showed when the leaf left `leafId`
/// (`_march/session/branch`'s `previousLeafId`). A path never changes once written (entries
/// are only appended), so it stays what that path shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HeldConversation {
    /// The leaf the path ends at.
    pub leaf_id: String,
}

/// `_march/session/navigate` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonRpcResponse)]
#[serde(rename_all = "camelCase")]
pub struct NavigateResponse {
    /// The new leaf; `None` before the first entry.
    pub leaf_id: Option<String>,
    /// The chosen message's text, for the editor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub editor_text: Option<String>,
    /// The `branch_summary` entry written, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary_id: Option<String>,
}

/// `_march/session/label`: set (or with no label, clear) an entry's label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonRpcRequest)]
#[request(method = "_march/session/label", response = LabelEntryResponse)]
#[serde(rename_all = "camelCase")]
pub struct LabelEntryRequest {
    /// The session.
    pub session_id: String,
    /// The entry.
    pub entry_id: String,
    /// The label; `None` or empty clears it.
    #[serde(default)]
    pub label: Option<String>,
}

/// `_march/session/label` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonRpcResponse)]
#[serde(rename_all = "camelCase")]
pub struct LabelEntryResponse {}

/// `_march/session/branch`: the session's leaf moved. A client showing the conversation
/// clears it: the new path's replay follows as `session/update`s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonRpcNotification)]
#[notification(method = "_march/session/branch")]
#[serde(rename_all = "camelCase")]
pub struct BranchNotification {
    /// The session.
    pub session_id: String,
    /// The new leaf; `None` before the first entry.
    pub leaf_id: Option<String>,
    /// The `branch_summary` entry written, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary_id: Option<String>,
    /// What of the conversation the client shows is unchanged; absent, the whole path is
    /// replayed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<KeptConversation>,
    /// The leaf left: a client may hold the conversation it cuts off, and send it as the
    /// `held` of a later move back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_leaf_id: Option<String>,
    /// The request's `held` conversation is the new path's: nothing is replayed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub held: bool,
}

/// The start of the conversation a leaf move leaves as it was: a client showing the old path
/// keeps everything before its `(userMessages + 1)`-th user message and gets only the rest
/// replayed. One that does not show exactly `of` user messages, the last kept reading
/// `lastUserText`, clears its view and asks for the whole path (`replayOnly`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeptConversation {
    /// User messages (and commands the user ran) kept.
    pub user_messages: u32,
    /// User messages on the path the client showed.
    pub of: u32,
    /// The text of the last one kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_user_text: Option<String>,
}

/// `_march/session/fork`: copy the session's path so far into a new session (pi's branched
/// session file, its header's `parentSession` naming this one), to open with `session/load`.
/// Refused while a turn runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonRpcRequest)]
#[request(method = "_march/session/fork", response = ForkSessionResponse)]
#[serde(rename_all = "camelCase")]
pub struct ForkSessionRequest {
    /// The session.
    pub session_id: String,
}

/// `_march/session/fork` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonRpcResponse)]
#[serde(rename_all = "camelCase")]
pub struct ForkSessionResponse {
    /// The new session.
    pub session_id: String,
    /// Its file.
    pub path: std::path::PathBuf,
}
