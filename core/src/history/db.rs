//! Opening the database: pragmas (WAL, busy timeout), the schema, and recovery from a file
//! SQLite cannot read.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, TransactionBehavior};

use super::HistoryError;

/// The schema version, kept in SQLite's `user_version`; an index of another version is
/// dropped and rebuilt (it only ever holds what the transcripts hold).
const SCHEMA_VERSION: i64 = 1;

/// How long a writer waits for another one before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Tables, the full-text index over them and the triggers that keep the two in step.
///
/// `files` remembers, per session file, how far it was indexed: its size then, and the entry
/// index and sequence number where its last (possibly unfinished) turn starts.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    size INTEGER NOT NULL,
    open_from INTEGER NOT NULL,
    open_seq INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS turns (
    id INTEGER PRIMARY KEY,
    file TEXT NOT NULL,
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    entry_id TEXT NOT NULL,
    project TEXT NOT NULL,
    time_ms INTEGER NOT NULL,
    model TEXT,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost REAL NOT NULL,
    user_text TEXT NOT NULL,
    assistant_text TEXT NOT NULL,
    tools TEXT NOT NULL,
    paths TEXT NOT NULL,
    UNIQUE (file, seq)
);
CREATE INDEX IF NOT EXISTS turns_session ON turns (session_id, seq);
CREATE INDEX IF NOT EXISTS turns_project_time ON turns (project, time_ms);
CREATE INDEX IF NOT EXISTS turns_time ON turns (time_ms);
CREATE VIRTUAL TABLE IF NOT EXISTS turns_fts USING fts5 (
    user_text, assistant_text, tools, paths,
    content = 'turns', content_rowid = 'id', tokenize = 'unicode61'
);
CREATE TRIGGER IF NOT EXISTS turns_ai AFTER INSERT ON turns BEGIN
    INSERT INTO turns_fts (rowid, user_text, assistant_text, tools, paths)
    VALUES (new.id, new.user_text, new.assistant_text, new.tools, new.paths);
END;
CREATE TRIGGER IF NOT EXISTS turns_ad AFTER DELETE ON turns BEGIN
    INSERT INTO turns_fts (turns_fts, rowid, user_text, assistant_text, tools, paths)
    VALUES ('delete', old.id, old.user_text, old.assistant_text, old.tools, old.paths);
END;
";

/// Drops everything [`SCHEMA`] creates.
const DROP: &str = "
DROP TRIGGER IF EXISTS turns_ai;
DROP TRIGGER IF EXISTS turns_ad;
DROP TABLE IF EXISTS turns_fts;
DROP TABLE IF EXISTS turns;
DROP TABLE IF EXISTS files;
";

/// Open (creating if needed) the database at `path`; a file SQLite cannot read is moved
/// aside and replaced. Returns where the bad file went, if it was moved.
pub(super) fn open(path: &Path) -> Result<(Connection, Option<PathBuf>), HistoryError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| HistoryError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    match open_when_free(path) {
        Ok(conn) => Ok((conn, None)),
        Err(e) if is_corruption(&e) => {
            tracing::warn!(
                "history index {} is damaged ({e}); moving it aside and rebuilding",
                path.display()
            );
            let aside = move_aside(path)?;
            let conn = open_when_free(path).map_err(|source| HistoryError::Open {
                path: path.to_path_buf(),
                source,
            })?;
            Ok((conn, Some(aside)))
        }
        Err(source) => Err(HistoryError::Open {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Whether SQLite says the file is damaged or not a database at all.
pub(super) fn is_corruption(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
    )
}

/// Drop and recreate every table (in one transaction), leaving an empty index.
pub(super) fn reset(conn: &mut Connection) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute_batch(DROP)?;
    tx.execute_batch(SCHEMA)?;
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    tx.commit()
}

/// [`try_open`], tried again while another connection holds a lock SQLite will not wait
/// for: two runners creating the file at once race for the switch to WAL, and SQLite
/// answers that race with `SQLITE_BUSY` at once instead of calling the busy handler.
fn open_when_free(path: &Path) -> rusqlite::Result<Connection> {
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    let mut pause = Duration::from_millis(5);
    loop {
        match try_open(path) {
            Err(e) if is_busy(&e) && std::time::Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(200));
            }
            result => return result,
        }
    }
}

/// Whether SQLite refused because another connection holds a lock.
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

fn try_open(path: &Path) -> rusqlite::Result<Connection> {
    let mut conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // The first statement reads the header: a file that is not a database fails here.
    // WAL is stored in the file, so it is only switched on once, by whoever comes first.
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        let _mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
    }
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if version != SCHEMA_VERSION {
        // Another runner may be creating it at the same moment: check again under the lock.
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let version: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
        if version != SCHEMA_VERSION {
            if version != 0 {
                tracing::info!("history index schema v{version} replaced by v{SCHEMA_VERSION}");
            }
            tx.execute_batch(DROP)?;
            tx.execute_batch(SCHEMA)?;
            tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        }
        tx.commit()?;
    }
    // Reads the schema, so a damaged first page or schema is found now, not mid-run.
    let _tables: i64 =
        conn.query_row("SELECT count(*) FROM sqlite_master", [], |row| row.get(0))?;
    Ok(conn)
}

/// Move the database to `<name>.corrupt` and remove its WAL and shared-memory files.
pub(super) fn move_aside(path: &Path) -> Result<PathBuf, HistoryError> {
    let with_suffix = |suffix: &str| {
        let mut name = path.as_os_str().to_os_string();
        name.push(suffix);
        PathBuf::from(name)
    };
    let aside = with_suffix(".corrupt");
    match std::fs::rename(path, &aside) {
        Ok(()) => {}
        // Another runner moved it first.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => {
            return Err(HistoryError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    }
    for suffix in ["-wal", "-shm"] {
        let file = with_suffix(suffix);
        match std::fs::remove_file(&file) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(HistoryError::Io { path: file, source }),
        }
    }
    Ok(aside)
}
