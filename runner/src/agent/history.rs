//! The runner's use of the history index: each finished turn is indexed, prompts get recall
//! hints, and clients search through `_march/history/search`.
//!
//! The index is a cache of the transcripts, so nothing here may fail a turn: errors are
//! logged and the next indexing pass catches up (indexing is incremental per file).

use parking_lot::Mutex;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_client_protocol::{Error, JsonRpcRequest, JsonRpcResponse};
use march_core::history::{
    HistoryError, HistoryIndex, RecallQuery, RecalledTurn, SearchHit, SearchQuery,
};
use march_core::session::parse_iso_ms;
use serde::{Deserialize, Serialize};

use super::errors;

/// The extension method clients call to search the history.
pub(crate) const SEARCH_METHOD: &str = "_march/history/search";

/// `_march/history/search` parameters.
#[derive(Debug, Clone, Serialize, Deserialize, JsonRpcRequest)]
#[request(method = "_march/history/search", response = HistorySearchResponse)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HistorySearchRequest {
    /// The words to look for (all must occur; `*` after a word matches a prefix).
    pub query: String,
    /// Only turns of sessions in this working directory.
    #[serde(default)]
    pub project: Option<String>,
    /// Only turns of this session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Only turns at or after this time: an ISO-8601 date or date-time.
    #[serde(default)]
    pub since: Option<String>,
    /// Only turns before this time: an ISO-8601 date or date-time.
    #[serde(default)]
    pub until: Option<String>,
    /// At most this many results (default 20).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// `_march/history/search` result.
#[derive(Debug, Clone, Serialize, Deserialize, JsonRpcResponse)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HistorySearchResponse {
    /// Matching turns, best first.
    pub hits: Vec<SearchHit>,
}

/// A time bound of a search, as milliseconds since the epoch.
fn time_bound(name: &str, value: Option<&str>) -> Result<Option<i64>, Error> {
    value
        .map(|v| {
            parse_iso_ms(v.trim()).ok_or_else(|| {
                errors::invalid_params(format!(
                    "`{name}` must be an ISO-8601 date or date-time such as 2026-11-30, got `{v}`"
                ))
            })
        })
        .transpose()
}

impl HistorySearchRequest {
    /// The core query this asks for.
    fn to_query(&self) -> Result<SearchQuery, Error> {
        Ok(SearchQuery {
            text: self.query.clone(),
            project: self.project.clone(),
            session_id: self.session_id.clone(),
            since_ms: time_bound("since", self.since.as_deref())?,
            until_ms: time_bound("until", self.until.as_deref())?,
            limit: self.limit.unwrap_or(0),
        })
    }
}

/// One connection to the index, opened on first use and dropped after a failure so the
/// next use opens it afresh (a damaged file is then moved aside and rebuilt).
struct Slot {
    db: PathBuf,
    index: Mutex<Option<HistoryIndex>>,
}

impl Slot {
    /// Run `f` on the open index. When SQLite finds the file damaged, it is moved aside, a
    /// fresh index is created and `f` runs once more on it.
    fn with<T>(
        &self,
        mut f: impl FnMut(&mut HistoryIndex) -> Result<T, HistoryError>,
    ) -> Result<T, HistoryError> {
        let mut slot = self.index.lock();
        let mut index = match slot.take() {
            Some(index) => index,
            None => {
                let index = HistoryIndex::open(&self.db)?;
                if let Some(aside) = index.recovered_from() {
                    tracing::warn!(
                        "history index was unreadable; moved to {} and rebuilding",
                        aside.display()
                    );
                }
                index
            }
        };
        let result = match f(&mut index) {
            Err(HistoryError::Corrupt { .. }) => {
                drop(index);
                tracing::warn!("history index found damaged; rebuilding it from the transcripts");
                index = HistoryIndex::recreate(&self.db)?;
                f(&mut index)
            }
            other => other,
        };
        // After another failure the connection is dropped: the next use reopens the file.
        if result.is_ok() {
            *slot = Some(index);
        }
        result
    }
}

/// The history index as the runner uses it: a writer connection for indexing and a reader
/// connection for recall and search, so a long indexing pass never delays a prompt.
pub(crate) struct History {
    sessions_dir: PathBuf,
    writer: Slot,
    reader: Slot,
}

impl History {
    /// The index at `db` over the transcripts under `sessions_dir`.
    pub(crate) fn new(db: PathBuf, sessions_dir: PathBuf) -> Arc<Self> {
        Arc::new(History {
            sessions_dir,
            writer: Slot {
                db: db.clone(),
                index: Mutex::new(None),
            },
            reader: Slot {
                db,
                index: Mutex::new(None),
            },
        })
    }

    /// Index what is new in one session file; a failure is logged, never returned.
    pub(crate) async fn index_session(self: &Arc<Self>, file: PathBuf) {
        let history = self.clone();
        let done = tokio::task::spawn_blocking(move || {
            history.writer.with(|index| index.index_session(&file))
        })
        .await;
        match done {
            Ok(Ok(stats)) => tracing::debug!(?stats, "history indexed"),
            Ok(Err(e)) => tracing::warn!("history index not updated (it catches up later): {e}"),
            Err(e) => tracing::warn!("history indexing task failed: {e}"),
        }
    }

    /// Index every session file that changed since the last pass (runner start, search).
    pub(crate) fn catch_up_blocking(&self) -> Result<(), HistoryError> {
        let stats = self
            .writer
            .with(|index| index.update_all(&self.sessions_dir))?;
        if stats.turns_written > 0 || !stats.skipped.is_empty() {
            tracing::info!(?stats, "history index caught up");
        }
        Ok(())
    }

    /// Catch up in the background.
    pub(crate) fn catch_up(self: &Arc<Self>) {
        let history = self.clone();
        tokio::task::spawn_blocking(move || {
            if let Err(e) = history.catch_up_blocking() {
                tracing::warn!("history index catch-up failed: {e}");
            }
        });
    }

    /// Turns of `project` relevant to `prompt`, outside `session`; empty on any failure.
    pub(crate) async fn recall(
        self: &Arc<Self>,
        prompt: String,
        project: &Path,
        session: String,
        limit: usize,
    ) -> Vec<RecalledTurn> {
        let history = self.clone();
        let project = project.to_string_lossy().into_owned();
        let found = tokio::task::spawn_blocking(move || {
            history.reader.with(|index| {
                index.recall(&RecallQuery {
                    prompt: &prompt,
                    project: &project,
                    exclude_session: Some(&session),
                    limit,
                })
            })
        })
        .await;
        match found {
            Ok(Ok(turns)) => turns,
            Ok(Err(e)) => {
                tracing::warn!("recall skipped: {e}");
                Vec::new()
            }
            Err(e) => {
                tracing::warn!("recall task failed: {e}");
                Vec::new()
            }
        }
    }

    /// Answer `_march/history/search`: catch up with the transcripts, then search.
    pub(crate) async fn search(
        self: &Arc<Self>,
        req: HistorySearchRequest,
    ) -> Result<HistorySearchResponse, Error> {
        let query = req.to_query()?;
        let history = self.clone();
        let found = tokio::task::spawn_blocking(move || {
            // A failed catch-up still leaves what is indexed searchable.
            if let Err(e) = history.catch_up_blocking() {
                tracing::warn!("history index catch-up failed: {e}");
            }
            history.reader.with(|index| index.search(&query))
        })
        .await
        .map_err(|e| errors::internal(format!("history search failed: {e}")))?;
        match found {
            Ok(hits) => Ok(HistorySearchResponse { hits }),
            Err(e @ (HistoryError::EmptyQuery | HistoryError::Query { .. })) => {
                Err(errors::invalid_params(e.to_string()))
            }
            Err(e) => Err(errors::internal(e.to_string())),
        }
    }
}
