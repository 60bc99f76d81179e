//! The lines of a session file: the header, then tree entries with pi's field names.
//!
//! Every entry knows where its exact line is (a byte range of its session file, or the line
//! itself for migrated entries) so the file can be re-emitted byte for byte; entries March
//! writes serialise deterministically (fixed field order, sorted keys inside free-form JSON).

use std::borrow::Cow;
use std::sync::Arc;

use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::SessionError;
use super::lines::LineRef;
use super::messages::SessionMessage;
use super::time::now_iso;
use crate::message::UserBody;

/// The session format version March writes.
pub const CURRENT_VERSION: u32 = 3;

/// Keys every entry line carries; never part of an entry's own fields.
const BASE_KEYS: [&str; 4] = ["type", "id", "parentId", "timestamp"];

/// The first line of a session file; not part of the entry tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionHeader {
    /// Format version; pi's v1 files have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    /// The session id.
    pub id: String,
    /// Creation time (ISO-8601).
    #[serde(default)]
    pub timestamp: String,
    /// The working directory the session belongs to.
    #[serde(default)]
    pub cwd: String,
    /// Path of the session file this one was forked or continued from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session: Option<String>,
    /// Any other header fields (v1's `provider`, `modelId`, `thinkingLevel`, `branchedFrom`),
    /// kept as read.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl SessionHeader {
    /// A v3 header for a new session in `cwd`: a fresh time-ordered id, stamped now.
    pub fn new(cwd: impl Into<String>) -> Self {
        SessionHeader {
            version: Some(CURRENT_VERSION),
            id: super::ids::new_session_id(),
            timestamp: now_iso(),
            cwd: cwd.into(),
            parent_session: None,
            extra: Map::new(),
        }
    }

    /// The header as one JSON line (without the newline), `type` first.
    pub fn to_json_line(&self) -> Result<String, serde_json::Error> {
        #[derive(Serialize)]
        struct Out<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            #[serde(flatten)]
            header: &'a SessionHeader,
        }
        if self.extra.contains_key("type") {
            // A stray `type` in `extra` would be written twice.
            let mut clean = self.clone();
            clean.extra.remove("type");
            return clean.to_json_line();
        }
        serde_json::to_string(&Out {
            kind: "session",
            header: self,
        })
    }

    /// Parse a header line; `type` is checked by the caller.
    pub(crate) fn from_json_line(line: &str) -> Result<Self, serde_json::Error> {
        let mut header: SessionHeader = serde_json::from_str(line)?;
        header.extra.remove("type");
        Ok(header)
    }
}

/// The reasoning level changed (pi's level names: off, minimal, low, medium, high, xhigh).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingLevelChange {
    /// The new level, as written.
    pub thinking_level: String,
}

/// The model changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelChange {
    /// Provider name.
    pub provider: String,
    /// Model id.
    pub model_id: String,
}

/// History before `first_kept_entry_id` was replaced by `summary`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Compaction {
    /// The summary the model sees instead of the dropped history.
    pub summary: String,
    /// The first entry kept verbatim; empty when a migrated v1 index named no entry.
    #[serde(default)]
    pub first_kept_entry_id: String,
    /// Context tokens before compaction.
    #[serde(default)]
    pub tokens_before: u64,
    /// Extra data such as `{readFiles, modifiedFiles}`; never sent to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// True when an extension produced the summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_hook: Option<bool>,
}

/// A summary of the branch the conversation left, placed where it continues.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchSummary {
    /// The entry the abandoned branch ended at, or `root`.
    pub from_id: String,
    /// The summary text; an empty one is not sent to the model.
    pub summary: String,
    /// Extra data; never sent to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// True when an extension produced the summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_hook: Option<bool>,
}

/// Extension state; never part of the model's context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomEntry {
    /// Identifies the extension.
    pub custom_type: String,
    /// The extension's data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// An extension's message that takes part in the model's context (as a user message).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomMessageEntry {
    /// Identifies the extension.
    pub custom_type: String,
    /// Text or text/image blocks.
    pub content: UserBody,
    /// Whether UIs show it.
    #[serde(default)]
    pub display: bool,
    /// Extension data; never sent to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

/// Sets (or, with no label, clears) a bookmark on another entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Label {
    /// The labelled entry.
    pub target_id: String,
    /// The label; `None` or empty clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// Moves the leaf without adding to the conversation (pi's harness `leaf` entry): written as
/// a child of the leaf being left, it makes `target_id` the leaf, so a session closed right
/// after `/tree` reopens where the user went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LeafMove {
    /// The new leaf; `None` (written as `null`) is before the first entry.
    #[serde(default)]
    pub target_id: Option<String>,
}

/// The tools the model had from here on (pi's harness `active_tools_change`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActiveToolsChange {
    /// The tools' names, as the model saw them.
    pub active_tool_names: Vec<String>,
}

/// Session metadata: the display name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// The session's name; `None` or empty clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// An entry of a type March does not know (or a known type with fields it cannot read):
/// kept verbatim so it round-trips, and ignored when building context.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownEntry {
    /// The entry's `type`.
    pub entry_type: String,
    /// Every field except `type`, `id`, `parentId` and `timestamp`.
    pub fields: Map<String, Value>,
}

/// What an entry records.
#[derive(Debug, Clone, PartialEq)]
pub enum EntryKind {
    /// `message`: a conversation message, shared so a context built from the store
    /// ([`super::SessionStore::context`]) points at it instead of copying it.
    Message(Arc<SessionMessage>),
    /// `thinking_level_change`.
    ThinkingLevelChange(ThinkingLevelChange),
    /// `model_change`.
    ModelChange(ModelChange),
    /// `compaction`.
    Compaction(Compaction),
    /// `branch_summary`.
    BranchSummary(BranchSummary),
    /// `custom`: extension state.
    Custom(CustomEntry),
    /// `custom_message`: an extension's message in context.
    CustomMessage(CustomMessageEntry),
    /// `label`.
    Label(Label),
    /// `session_info`.
    SessionInfo(SessionInfo),
    /// `leaf`: a move of the leaf.
    Leaf(LeafMove),
    /// `active_tools_change`.
    ActiveToolsChange(ActiveToolsChange),
    /// Anything else, preserved.
    Unknown(UnknownEntry),
}

impl EntryKind {
    /// The `type` written for this entry.
    pub fn type_name(&self) -> &str {
        match self {
            EntryKind::Message(_) => "message",
            EntryKind::ThinkingLevelChange(_) => "thinking_level_change",
            EntryKind::ModelChange(_) => "model_change",
            EntryKind::Compaction(_) => "compaction",
            EntryKind::BranchSummary(_) => "branch_summary",
            EntryKind::Custom(_) => "custom",
            EntryKind::CustomMessage(_) => "custom_message",
            EntryKind::Label(_) => "label",
            EntryKind::SessionInfo(_) => "session_info",
            EntryKind::Leaf(_) => "leaf",
            EntryKind::ActiveToolsChange(_) => "active_tools_change",
            EntryKind::Unknown(u) => &u.entry_type,
        }
    }
}

impl From<SessionMessage> for EntryKind {
    fn from(m: SessionMessage) -> Self {
        EntryKind::Message(Arc::new(m))
    }
}

impl From<Arc<SessionMessage>> for EntryKind {
    fn from(m: Arc<SessionMessage>) -> Self {
        EntryKind::Message(m)
    }
}

/// One node of the session tree.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionEntry {
    /// Entry id (8 hex chars for entries March or pi made).
    pub id: String,
    /// The parent entry; `None` for a root.
    pub parent_id: Option<String>,
    /// When it was written (ISO-8601).
    pub timestamp: String,
    /// What it records.
    pub kind: EntryKind,
    /// Where the exact line is: a byte range of the session file, or (for migrated pi
    /// v1/v2 entries, whose v3 line is in no file) the line itself.
    pub(crate) line: LineRef,
}

impl SessionEntry {
    /// A new entry, stamped now; its line is set when the store writes it.
    pub(crate) fn new(id: String, parent_id: Option<String>, kind: EntryKind) -> Self {
        SessionEntry {
            id,
            parent_id,
            timestamp: now_iso(),
            kind,
            line: LineRef::Owned(Box::default()),
        }
    }

    /// The entry's JSON line, without the newline: byte for byte what the file holds (or,
    /// for a migrated pi v1/v2 entry, its v3 form).
    ///
    /// A line in the file is read from it. Should the file no longer hold it (replaced or
    /// truncated since it was loaded), this logs a warning and returns the entry as March
    /// would serialise it; [`SessionEntry::try_json_line`] reports that as an error instead.
    pub fn json_line(&self) -> Cow<'_, str> {
        match self.try_json_line() {
            Ok(line) => line,
            Err(e) => {
                tracing::warn!("{e}; re-serialising entry `{}` instead", self.id);
                self.serialize().map_or(Cow::Borrowed(""), Cow::Owned)
            }
        }
    }

    /// The entry's exact JSON line, without the newline, or why its file no longer holds it.
    pub fn try_json_line(&self) -> Result<Cow<'_, str>, SessionError> {
        self.line.read(&self.id)
    }

    /// The entry as March writes it: base fields first (as pi orders them), then the kind's.
    pub(crate) fn serialize(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(&EntryOut {
            kind: self.kind.type_name(),
            id: &self.id,
            parent_id: self.parent_id.as_deref(),
            timestamp: &self.timestamp,
            body: Body(&self.kind),
        })
    }

    /// The message, for `message` entries.
    pub fn message(&self) -> Option<&SessionMessage> {
        self.shared_message().map(|m| &**m)
    }

    /// The message as the store shares it, for `message` entries: cloning it copies a
    /// pointer, not the text.
    pub fn shared_message(&self) -> Option<&Arc<SessionMessage>> {
        match &self.kind {
            EntryKind::Message(m) => Some(m),
            _ => None,
        }
    }
}

/// Base fields read leniently: a wrong type in `parentId` or `timestamp` should not lose
/// the entry.
#[derive(Deserialize)]
struct Base {
    #[serde(rename = "type", default)]
    kind: Value,
    #[serde(default)]
    id: Value,
    #[serde(rename = "parentId", default)]
    parent_id: Value,
    #[serde(default)]
    timestamp: Value,
}

/// The `type` of a JSON line, or why it is not an entry-shaped object.
pub(crate) fn line_type(line: &str) -> Result<Option<String>, serde_json::Error> {
    let base: Base = serde_json::from_str(line)?;
    Ok(base.kind.as_str().map(str::to_string))
}

/// A parsed entry line, with a note when a known type had to be kept opaque.
pub(crate) struct ParsedEntry {
    pub entry: SessionEntry,
    pub note: Option<String>,
}

/// Parse one entry line, found at `at` (`None`: the line is held in memory); `Err` carries
/// why the line is not an entry.
pub(crate) fn parse_entry(line: &str, at: Option<LineRef>) -> Result<ParsedEntry, String> {
    let base: Base = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let Some(kind_name) = base.kind.as_str() else {
        return Err("entry has no string `type`".to_string());
    };
    if kind_name == "session" {
        return Err("a second session header; ignored".to_string());
    }
    let Some(id) = base.id.as_str() else {
        return Err(format!("`{kind_name}` entry has no string `id`"));
    };
    let (kind, note) = match parse_kind(kind_name, line) {
        Ok(kind) => (kind, None),
        Err(e) => {
            let unknown = unknown_entry(kind_name, line).map_err(|e| e.to_string())?;
            let note = format!("`{kind_name}` entry kept verbatim but ignored: {e}");
            (EntryKind::Unknown(unknown), Some(note))
        }
    };
    let entry = SessionEntry {
        id: id.to_string(),
        parent_id: base.parent_id.as_str().map(str::to_string),
        timestamp: base.timestamp.as_str().unwrap_or_default().to_string(),
        kind,
        line: at.unwrap_or_else(|| LineRef::Owned(line.into())),
    };
    Ok(ParsedEntry { entry, note })
}

fn parse_kind(kind: &str, line: &str) -> Result<EntryKind, serde_json::Error> {
    #[derive(Deserialize)]
    struct MessageIn {
        message: SessionMessage,
    }
    use serde_json::from_str;
    Ok(match kind {
        "message" => EntryKind::Message(Arc::new(from_str::<MessageIn>(line)?.message)),
        "thinking_level_change" => EntryKind::ThinkingLevelChange(from_str(line)?),
        "model_change" => EntryKind::ModelChange(from_str(line)?),
        "compaction" => EntryKind::Compaction(from_str(line)?),
        "branch_summary" => EntryKind::BranchSummary(from_str(line)?),
        "custom" => EntryKind::Custom(from_str(line)?),
        "custom_message" => EntryKind::CustomMessage(from_str(line)?),
        "label" => EntryKind::Label(from_str(line)?),
        "session_info" => EntryKind::SessionInfo(from_str(line)?),
        "leaf" => EntryKind::Leaf(from_str(line)?),
        "active_tools_change" => EntryKind::ActiveToolsChange(from_str(line)?),
        other => EntryKind::Unknown(unknown_entry(other, line)?),
    })
}

fn unknown_entry(kind: &str, line: &str) -> Result<UnknownEntry, serde_json::Error> {
    let mut fields: Map<String, Value> = serde_json::from_str(line)?;
    for key in BASE_KEYS {
        fields.remove(key);
    }
    Ok(UnknownEntry {
        entry_type: kind.to_string(),
        fields,
    })
}

/// A new entry's line: the base fields first (as pi orders them), then the kind's fields.
#[derive(Serialize)]
struct EntryOut<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    id: &'a str,
    #[serde(rename = "parentId")]
    parent_id: Option<&'a str>,
    timestamp: &'a str,
    #[serde(flatten)]
    body: Body<'a>,
}

/// The kind's own fields, flattened into the entry object.
struct Body<'a>(&'a EntryKind);

impl Serialize for Body<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct MessageOut<'a> {
            message: &'a SessionMessage,
        }
        match self.0 {
            EntryKind::Message(message) => MessageOut { message }.serialize(s),
            EntryKind::ThinkingLevelChange(e) => e.serialize(s),
            EntryKind::ModelChange(e) => e.serialize(s),
            EntryKind::Compaction(e) => e.serialize(s),
            EntryKind::BranchSummary(e) => e.serialize(s),
            EntryKind::Custom(e) => e.serialize(s),
            EntryKind::CustomMessage(e) => e.serialize(s),
            EntryKind::Label(e) => e.serialize(s),
            EntryKind::SessionInfo(e) => e.serialize(s),
            EntryKind::Leaf(e) => e.serialize(s),
            EntryKind::ActiveToolsChange(e) => e.serialize(s),
            EntryKind::Unknown(u) => {
                // Base keys come from the entry itself; a copy in `fields` would duplicate them.
                let mut map = s.serialize_map(None)?;
                for (k, v) in u
                    .fields
                    .iter()
                    .filter(|(k, _)| !BASE_KEYS.contains(&k.as_str()))
                {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}
