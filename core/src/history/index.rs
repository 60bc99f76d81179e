//! Indexing: turns of session files into the database, incrementally.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::{HistoryError, HistoryIndex, db};
use crate::message::AssistantContent;
use crate::session::{SessionEntry, SessionMessage, SessionStore, parse_iso_ms};

/// At most this many turns are written per transaction, so other writers wait briefly.
pub const TURNS_PER_TRANSACTION: usize = 256;

/// How deep below the sessions directory session files are looked for.
const MAX_DEPTH: usize = 4;

/// What an indexing pass did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IndexStats {
    /// Session files found.
    pub files_seen: usize,
    /// Files read again because they were new or had changed.
    pub files_indexed: usize,
    /// Turns written (new ones, and the last turn of a file that grew, written again).
    pub turns_written: usize,
    /// Turns the index holds now that it did not hold before.
    pub turns_added: usize,
    /// Files that could not be read as sessions.
    pub skipped: Vec<SkippedFile>,
}

/// A file an indexing pass could not read as a session.
#[derive(Debug, Clone, PartialEq)]
pub struct SkippedFile {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub reason: String,
}

/// One turn as stored.
#[derive(Debug, Default)]
struct Turn {
    /// Index in the store's entries of its user message.
    start: usize,
    seq: i64,
    entry_id: String,
    time_ms: i64,
    model: Option<String>,
    input_tokens: u64,
    output_tokens: u64,
    cost: f64,
    user_text: String,
    assistant_text: String,
    tools: Vec<String>,
    paths: Vec<String>,
}

/// How far a file was indexed.
struct FileState {
    session_id: String,
    size: i64,
    open_from: usize,
    open_seq: i64,
}

impl HistoryIndex {
    /// Index what is new in every session file under `sessions_dir` (searched a few levels
    /// deep for `*.jsonl`), and forget files that are gone. A missing directory has no
    /// sessions.
    pub fn update_all(&mut self, sessions_dir: &Path) -> Result<IndexStats, HistoryError> {
        let mut files = Vec::new();
        collect_sessions(sessions_dir, 0, &mut files)?;
        // Session file names start with their creation time: turns go in roughly in time order.
        files.sort_by(|a, b| (a.file_name(), a).cmp(&(b.file_name(), b)));
        let mut stats = IndexStats::default();
        for file in &files {
            self.index_into(file, &mut stats)?;
        }
        self.forget_missing(sessions_dir, &files)?;
        Ok(stats)
    }

    /// Rebuild the index from the transcripts: drop everything, then index every session
    /// file under `sessions_dir`.
    pub fn reindex_all(&mut self, sessions_dir: &Path) -> Result<IndexStats, HistoryError> {
        db::reset(&mut self.conn).map_err(|e| self.sql_error(e))?;
        self.update_all(sessions_dir)
    }

    /// Index what is new in one session file.
    pub fn index_session(&mut self, file: &Path) -> Result<IndexStats, HistoryError> {
        let mut stats = IndexStats::default();
        self.index_into(file, &mut stats)?;
        Ok(stats)
    }

    fn index_into(&mut self, file: &Path, stats: &mut IndexStats) -> Result<(), HistoryError> {
        stats.files_seen += 1;
        let key = file.to_string_lossy().into_owned();
        let size = match std::fs::metadata(file) {
            Ok(meta) => i64::try_from(meta.len()).unwrap_or(i64::MAX),
            Err(e) => {
                stats.skipped.push(SkippedFile {
                    path: file.to_path_buf(),
                    reason: e.to_string(),
                });
                return Ok(());
            }
        };
        let state = self.file_state(&key)?;
        if state.as_ref().is_some_and(|s| s.size == size) {
            return Ok(());
        }
        let (store, report) = match SessionStore::open(file) {
            Ok(opened) => opened,
            Err(e) => {
                stats.skipped.push(SkippedFile {
                    path: file.to_path_buf(),
                    reason: e.to_string(),
                });
                return Ok(());
            }
        };
        if !report.is_clean() {
            tracing::debug!("indexing {} despite damaged lines", file.display());
        }
        stats.files_indexed += 1;
        let session_id = store.session_id().to_string();
        // Start over when the file shrank, was replaced, or is another session now.
        let (open_from, open_seq) = match state {
            Some(s)
                if s.session_id == session_id
                    && s.size <= size
                    && s.open_from <= store.entries().len() =>
            {
                (s.open_from, s.open_seq)
            }
            _ => (0, 0),
        };
        let turns = build_turns(store.entries(), open_from, open_seq);
        let project = store.header().cwd.as_str();
        let mut chunks = turns.chunks(TURNS_PER_TRANSACTION).peekable();
        if chunks.peek().is_none() {
            let removed = self
                .write_chunk(
                    &key,
                    &session_id,
                    project,
                    &[],
                    open_seq,
                    (size, open_from, open_seq),
                )
                .map_err(|e| self.sql_error(e))?;
            stats.turns_added = stats.turns_added.saturating_sub(removed);
            return Ok(());
        }
        let mut first = true;
        while let Some(chunk) = chunks.next() {
            // A file is done when its last chunk is in; until then a pass resumes at the
            // first turn not yet written (size -1 makes it read the file again).
            let next = match chunks.peek().and_then(|c| c.first()) {
                Some(t) => (-1, t.start, t.seq),
                None => {
                    let last = chunk
                        .last()
                        .map_or((open_from, open_seq), |t| (t.start, t.seq));
                    (size, last.0, last.1)
                }
            };
            // Each chunk first drops what it replaces, so a writer indexing the same file at
            // the same time never collides with this one; the last to write wins, and both
            // write the same turns.
            let delete_from = if first {
                open_seq
            } else {
                chunk.first().map_or(i64::MAX, |t| t.seq)
            };
            first = false;
            let removed = self
                .write_chunk(&key, &session_id, project, chunk, delete_from, next)
                .map_err(|e| self.sql_error(e))?;
            stats.turns_written += chunk.len();
            stats.turns_added = (stats.turns_added + chunk.len()).saturating_sub(removed);
        }
        Ok(())
    }

    /// In one short transaction: drop the file's turns from `delete_from` on, insert
    /// `turns`, record the file's new state. Returns how many turns were dropped.
    fn write_chunk(
        &mut self,
        file: &str,
        session_id: &str,
        project: &str,
        turns: &[Turn],
        delete_from: i64,
        (size, open_from, open_seq): (i64, usize, i64),
    ) -> rusqlite::Result<usize> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let removed = tx.execute(
            "DELETE FROM turns WHERE file = ?1 AND seq >= ?2",
            params![file, delete_from],
        )?;
        {
            let mut insert = tx.prepare_cached(
                "INSERT INTO turns (file, session_id, seq, entry_id, project, time_ms, model,
                     input_tokens, output_tokens, cost, user_text, assistant_text, tools, paths)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            )?;
            for t in turns {
                insert.execute(params![
                    file,
                    session_id,
                    t.seq,
                    t.entry_id,
                    project,
                    t.time_ms,
                    t.model,
                    i64::try_from(t.input_tokens).unwrap_or(i64::MAX),
                    i64::try_from(t.output_tokens).unwrap_or(i64::MAX),
                    t.cost,
                    t.user_text,
                    t.assistant_text,
                    t.tools.join("\n"),
                    t.paths.join("\n"),
                ])?;
            }
        }
        tx.execute(
            "INSERT INTO files (path, session_id, size, open_from, open_seq)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (path) DO UPDATE SET session_id = ?2, size = ?3, open_from = ?4,
                 open_seq = ?5",
            params![
                file,
                session_id,
                size,
                i64::try_from(open_from).unwrap_or(i64::MAX),
                open_seq
            ],
        )?;
        tx.commit()?;
        Ok(removed)
    }

    fn file_state(&self, key: &str) -> Result<Option<FileState>, HistoryError> {
        self.conn
            .query_row(
                "SELECT session_id, size, open_from, open_seq FROM files WHERE path = ?1",
                [key],
                |row| {
                    Ok(FileState {
                        session_id: row.get(0)?,
                        size: row.get(1)?,
                        open_from: usize::try_from(row.get::<_, i64>(2)?).unwrap_or(0),
                        open_seq: row.get(3)?,
                    })
                },
            )
            .optional()
            .map_err(|e| self.sql_error(e))
    }

    /// Remove the turns of indexed files under `dir` that are no longer among `present`.
    fn forget_missing(&mut self, dir: &Path, present: &[PathBuf]) -> Result<(), HistoryError> {
        let present: HashSet<String> = present
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let known: Vec<String> = {
            let mut stmt = self
                .conn
                .prepare("SELECT path FROM files")
                .map_err(|e| self.sql_error(e))?;
            let rows = stmt
                .query_map([], |row| row.get::<_, String>(0))
                .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>());
            rows.map_err(|e| self.sql_error(e))?
        };
        for path in known {
            if Path::new(&path).starts_with(dir) && !present.contains(&path) {
                let tx = self
                    .conn
                    .transaction_with_behavior(TransactionBehavior::Immediate)
                    .and_then(|tx| {
                        tx.execute("DELETE FROM turns WHERE file = ?1", [&path])?;
                        tx.execute("DELETE FROM files WHERE path = ?1", [&path])?;
                        tx.commit()
                    });
                tx.map_err(|e| self.sql_error(e))?;
            }
        }
        Ok(())
    }
}

/// The turns starting at entry `from` (numbered from `seq`): each user message and what
/// follows it up to the next one. Entries before the first user message belong to no turn.
fn build_turns(entries: &[SessionEntry], from: usize, seq: i64) -> Vec<Turn> {
    let mut turns: Vec<Turn> = Vec::new();
    for (index, entry) in entries.iter().enumerate().skip(from) {
        match entry.message() {
            Some(SessionMessage::User(user)) => {
                let time_ms = parse_iso_ms(&entry.timestamp).unwrap_or(user.timestamp);
                turns.push(Turn {
                    start: index,
                    seq: seq + i64::try_from(turns.len()).unwrap_or(i64::MAX - seq),
                    entry_id: entry.id.clone(),
                    time_ms,
                    user_text: user.content.text(),
                    ..Turn::default()
                });
            }
            Some(SessionMessage::Assistant(a)) => {
                let Some(turn) = turns.last_mut() else {
                    continue;
                };
                for block in &a.content {
                    match block {
                        AssistantContent::Text(t) => {
                            if !turn.assistant_text.is_empty() {
                                turn.assistant_text.push('\n');
                            }
                            turn.assistant_text.push_str(&t.text);
                        }
                        AssistantContent::ToolCall(call) => {
                            if !turn.tools.contains(&call.name) {
                                turn.tools.push(call.name.clone());
                            }
                            if let Some(path) = call.arguments.get("path").and_then(|p| p.as_str())
                                && !turn.paths.iter().any(|p| p == path)
                            {
                                turn.paths.push(path.to_string());
                            }
                        }
                        AssistantContent::Thinking(_) => {}
                    }
                }
                if !a.model.is_empty() {
                    turn.model = Some(a.model.clone());
                }
                turn.input_tokens = turn.input_tokens.saturating_add(a.usage.input);
                turn.output_tokens = turn.output_tokens.saturating_add(a.usage.output);
                turn.cost += a.usage.cost.total;
            }
            _ => {}
        }
    }
    turns
}

/// The `*.jsonl` files under `dir`, at most [`MAX_DEPTH`] levels down.
fn collect_sessions(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> Result<(), HistoryError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if depth == 0 && e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        // An unreadable subdirectory holds no sessions we can index.
        Err(_) if depth > 0 => return Ok(()),
        Err(source) => {
            return Err(HistoryError::Io {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            if depth < MAX_DEPTH {
                collect_sessions(&path, depth + 1, out)?;
            }
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
    Ok(())
}
