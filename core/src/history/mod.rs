//! The history index: every turn of every session in an embedded SQLite database with
//! full-text search (FTS5), for recall and session search.
//!
//! This is the history layer of March's state (architecture §3, invariant 7), kept apart
//! from the transcripts: the JSONL session files stay the source of truth, and the index can
//! always be rebuilt from them ([`HistoryIndex::reindex_all`]). A missing database is
//! created; one SQLite cannot read (not a database, corrupt) is moved aside to
//! `<name>.corrupt` and created afresh ([`HistoryIndex::recovered_from`] says so), so a bad
//! index is never fatal, only empty until the next indexing pass.
//!
//! A *turn* is a user message together with what follows it in the session file until the
//! next user message: the assistant's text, the names of the tools it called and the paths
//! those calls touched (their `path` argument), the model, and the summed usage. Tool
//! output is not indexed.
//!
//! Several runners may write at once: the database is in WAL mode with a busy timeout, and
//! indexing writes in short `BEGIN IMMEDIATE` transactions of at most
//! [`TURNS_PER_TRANSACTION`] turns. Indexing is incremental: for each session file the
//! index remembers its size and where its last (possibly unfinished) turn starts, so a pass
//! re-reads only files that grew and rewrites only their last turn and the new ones.

mod db;
mod index;
mod recall;
mod search;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use rusqlite::Connection;

pub use index::{IndexStats, SkippedFile, TURNS_PER_TRANSACTION};
pub use recall::{RecallQuery, RecalledTurn};
pub use search::{SNIPPET_END, SNIPPET_START, SearchHit, SearchQuery};

/// Why the history index could not be opened, written or searched.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The database could not be opened or set up (even after moving a bad file aside).
    #[error("cannot open the history index {path}: {source}")]
    Open {
        /// The database file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// A file next to the database or a sessions directory could not be read or moved.
    #[error("history index: {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// SQLite found the open database damaged; [`HistoryIndex::recreate`] replaces it.
    #[error(
        "the history index {path} is damaged ({source}); delete it and it is rebuilt from the \
         session transcripts"
    )]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// A search query with no word to look for.
    #[error("the search query has no words to look for")]
    EmptyQuery,
    /// A search query SQLite's full-text search could not run.
    #[error("cannot search for `{query}`: {reason}")]
    Query {
        /// The query as the user wrote it.
        query: String,
        /// What went wrong.
        reason: String,
    },
    /// Any other database error.
    #[error("history index {path}: {source}")]
    Sql {
        /// The database file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
}

/// The history index: one SQLite database (usually [`crate::paths::MarchPaths::history_db`]).
///
/// Each runner opens its own; they share the file safely.
#[derive(Debug)]
pub struct HistoryIndex {
    conn: Connection,
    path: PathBuf,
    recovered_from: Option<PathBuf>,
}

impl HistoryIndex {
    /// Open the index at `path`, creating it (and its directory) if missing. A file SQLite
    /// cannot read is moved aside to `<name>.corrupt` and a fresh index is created.
    pub fn open(path: &Path) -> Result<Self, HistoryError> {
        let (conn, recovered_from) = db::open(path)?;
        Ok(HistoryIndex {
            conn,
            path: path.to_path_buf(),
            recovered_from,
        })
    }

    /// Move the database at `path` aside to `<name>.corrupt` whatever its state and open a
    /// fresh, empty index there: for a database found damaged while in use
    /// ([`HistoryError::Corrupt`]).
    pub fn recreate(path: &Path) -> Result<Self, HistoryError> {
        let aside = db::move_aside(path)?;
        let mut index = Self::open(path)?;
        index.recovered_from = Some(aside);
        Ok(index)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where a damaged database was moved when this one was opened, if that happened: the
    /// index is then empty until the sessions are indexed again.
    pub fn recovered_from(&self) -> Option<&Path> {
        self.recovered_from.as_deref()
    }

    /// How many turns the index holds.
    pub fn turn_count(&self) -> Result<u64, HistoryError> {
        self.conn
            .query_row("SELECT count(*) FROM turns", [], |row| row.get::<_, i64>(0))
            .map(|n| u64::try_from(n).unwrap_or(0))
            .map_err(|e| self.sql_error(e))
    }

    /// Map a SQLite error to [`HistoryError::Corrupt`] or [`HistoryError::Sql`].
    fn sql_error(&self, source: rusqlite::Error) -> HistoryError {
        if db::is_corruption(&source) {
            HistoryError::Corrupt {
                path: self.path.clone(),
                source,
            }
        } else {
            HistoryError::Sql {
                path: self.path.clone(),
                source,
            }
        }
    }
}
