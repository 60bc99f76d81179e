//! Session transcripts: append-only JSONL files in pi's v3 format (a header line, then
//! entries whose `id`/`parentId` form a tree), read tolerantly and written durably.
//!
//! This is the transcript layer of March's state (architecture §3, invariant 7): the
//! agent's own record. Workspace state, March session metadata, the history index and
//! memory live elsewhere.
//!
//! Where March deliberately differs from pi's `SessionManager`:
//! - Loading never writes. pi v1/v2 files are migrated in memory only (ids assigned,
//!   parent = previous entry, `firstKeptEntryIndex` → `firstKeptEntryId`, `hookMessage` →
//!   `custom`), and such a file stays read-only: appending v3 lines to it would leave a
//!   file of mixed layouts that pi would rewrite on its next load. It is continued with
//!   [`SessionStore::continue_in_new_file`], which writes a v3 file whose header's
//!   `parentSession` names the old one.
//! - The header is written when the session is created, not with the first assistant
//!   message, so an empty session is visible.
//! - Each append is `sync_data`'d before it returns; a torn last line (crash mid-write) is
//!   reported on load and, on the next append, ended with a newline — never truncated.
//! - Damaged lines are reported in a [`LoadReport`] instead of being skipped silently.
//!   Entries after a lost line may point at a parent that no longer exists; they become
//!   roots, as in pi.
//! - Entries of unknown types, and known types whose fields cannot be read, are kept
//!   verbatim (they round-trip and stay in the tree) but add nothing to the context.
//! - Migrated lines are re-serialised with sorted keys; lines read from v3 files are kept
//!   byte for byte.
//!
//! Performance: files are read line by line through a `BufReader` into one reused buffer.
//! Each entry keeps its parsed form and only the place of its line in the file (offset,
//! length, checksum); the exact bytes are read again when the session is re-emitted, and a
//! file changed since it was loaded is reported ([`SessionError::Changed`]) rather than
//! re-emitted wrongly. Messages are held behind an `Arc`, so a [`SessionContext`] shares them
//! with the entries instead of copying them. `benches/session_load.rs` loads a 100 MB session.

mod context;
mod entry;
mod ids;
mod lines;
mod location;
mod messages;
mod migrate;
mod read;
mod store;
mod time;

#[cfg(test)]
mod tests;

use std::path::PathBuf;

pub use context::{SessionContext, SessionTree};
pub use entry::{
    ActiveToolsChange, BranchSummary, CURRENT_VERSION, Compaction, CustomEntry, CustomMessageEntry,
    EntryKind, Label, LeafMove, ModelChange, SessionEntry, SessionHeader, SessionInfo,
    ThinkingLevelChange, UnknownEntry,
};
pub use ids::{is_valid_session_id, new_session_id};
pub use location::{march_session_dir, session_dir, session_file_name};
pub use messages::{
    BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX, BashExecutionMessage, BranchSummaryMessage,
    COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX, CompactionSummaryMessage, CustomMessage,
    SessionMessage, bash_execution_to_text, convert_to_llm,
};
pub use read::{LineIssue, LoadReport};
pub use store::SessionStore;
pub use time::{format_iso_ms, now_iso, parse_iso_ms};

/// Why a session could not be read, created or written.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The file could not be opened or read.
    #[error("cannot read session file {path}: {source}")]
    Read {
        /// The session file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The first entry of the file is not a session header.
    #[error("{path} is not a session file: {reason}")]
    NotASession {
        /// The file.
        path: PathBuf,
        /// What was found instead.
        reason: String,
    },
    /// The session directory could not be created.
    #[error("cannot create session directory {path}: {source}")]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A new session file could not be created or written.
    #[error("cannot create session file {path}: {source}")]
    Create {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// An entry could not be appended and synced.
    #[error("cannot append to session file {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is in an older pi format, which March reads but never appends to.
    #[error(
        "session file {path} is in pi's v{version} format; March does not append to it \
         (continue it in a new file, which records this one as its parent)"
    )]
    LegacyFormat {
        /// The file.
        path: PathBuf,
        /// Its format version.
        version: u32,
    },
    /// No entry has this id.
    #[error("no entry `{0}` in this session")]
    EntryNotFound(String),
    /// A session id that cannot be used in a file name.
    #[error(
        "invalid session id `{0}`: use letters, digits, `.`, `_` and `-`, \
         starting and ending with a letter or digit"
    )]
    InvalidSessionId(String),
    /// An entry's line is no longer in the session file it was read from or written to:
    /// the file was replaced or truncated since.
    #[error(
        "session file {path} changed since it was loaded: entry `{id}` is no longer in it \
         ({reason}); reload the session"
    )]
    Changed {
        /// The file.
        path: PathBuf,
        /// The entry whose line is missing.
        id: String,
        /// What was found instead.
        reason: String,
    },
    /// An entry could not be serialised (a non-finite number in free-form JSON, say).
    #[error("cannot serialise session entry: {0}")]
    Serialize(#[from] serde_json::Error),
}
