//! Every file change a session's agent made, in order, as the agent reported it (the diff
//! content of its tool calls): what the diff pane shows and reverts. Kept per session in the
//! data dir, one JSON change a line appended to `changes/<session id>.jsonl`, so it outlives
//! the runner and March; the transcript is not its store.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::jobs::{JobDone, Jobs};

/// The tool call named for a write the client made (`fs/write_text_file`), until the
/// agent's report says which tool call it was.
pub const CLIENT_WRITE: &str = "fs/write_text_file";

/// A file's text kept at most, before and after; a larger change is kept by its sizes only.
pub const MAX_TEXT: usize = 8 << 20;

/// One change to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// The tool call that made it.
    pub tool_call: String,
    /// The file (absolute, as the agent named it).
    pub path: PathBuf,
    /// The text before (`None`: the file was new), unless too large.
    pub before: Option<String>,
    /// The text after, unless too large.
    pub after: Option<String>,
    /// Bytes before and after, when the texts were too large to keep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub too_large: Option<(usize, usize)>,
    /// When it was recorded, in milliseconds since the epoch.
    pub at_ms: u64,
    /// The change deleted the file (`after` is then empty).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
}

impl FileChange {
    /// A change of `path` from `before` to `after` by `tool_call`, now.
    pub fn new(tool_call: &str, path: &Path, before: Option<&str>, after: &str) -> FileChange {
        let before_len = before.map_or(0, str::len);
        let large = before_len > MAX_TEXT || after.len() > MAX_TEXT;
        FileChange {
            tool_call: tool_call.to_string(),
            path: path.to_path_buf(),
            before: if large {
                None
            } else {
                before.map(str::to_string)
            },
            after: (!large).then(|| after.to_string()),
            too_large: large.then_some((before_len, after.len())),
            at_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            deleted: false,
        }
    }

    /// The deletion of `path`, whose text was `before`, by `tool_call`, now.
    pub fn deletion(tool_call: &str, path: &Path, before: &str) -> FileChange {
        FileChange {
            deleted: true,
            ..FileChange::new(tool_call, path, Some(before), "")
        }
    }

    /// Whether `other` records the same edit (an agent may report a call's diff more than
    /// once: when it starts, as it updates, when it ends).
    fn same_edit(&self, other: &FileChange) -> bool {
        self.tool_call == other.tool_call && self.same_texts(other)
    }

    /// The same file, from the same text to the same text.
    fn same_texts(&self, other: &FileChange) -> bool {
        self.path == other.path
            && self.before == other.before
            && self.after == other.after
            && self.too_large == other.too_large
            && self.deleted == other.deleted
    }
}

/// The changes of every session seen, read from the data dir when first asked for: off
/// the loop, as a job whose result [`ChangeLog::read_done`] takes (until then a session has
/// what was recorded meanwhile).
pub struct ChangeLog {
    /// Where the files are; `None` keeps changes in memory only (tests without a data dir).
    dir: Option<PathBuf>,
    sessions: HashMap<String, Vec<FileChange>>,
    /// Sessions whose file is being read.
    reading: HashSet<String>,
    /// Where the reads run.
    jobs: Jobs,
}

impl ChangeLog {
    /// A log stored under `dir`, read by `jobs`.
    pub fn new(dir: Option<PathBuf>, jobs: Jobs) -> ChangeLog {
        ChangeLog {
            dir,
            sessions: HashMap::new(),
            reading: HashSet::new(),
            jobs,
        }
    }

    /// Session `session`'s file was read: what it holds, with what was recorded meanwhile
    /// (also appended to the file, so perhaps read too) merged in after it.
    pub fn read_done(&mut self, session: String, from_disk: Vec<FileChange>) {
        if !self.reading.remove(&session) {
            return;
        }
        let meanwhile = self.sessions.remove(&session).unwrap_or_default();
        let mut all = from_disk;
        for change in meanwhile {
            merge(&mut all, change);
        }
        self.sessions.insert(session, all);
    }

    /// Records `change` for `session`: the newest, unless it repeats the last report of the
    /// same tool call and file; a later report of that call and file with other texts
    /// replaces it. Whether anything changed.
    pub fn record(&mut self, session: &str, change: FileChange) -> bool {
        let file = self.file(session);
        if !merge(self.load(session), change.clone()) {
            return false;
        }
        if let Some(file) = file
            && let Err(e) = append(&file, &change)
        {
            tracing::warn!("cannot keep a file change in {}: {e}", file.display());
        }
        true
    }

    /// The changes `session` made, oldest first.
    pub fn changes(&mut self, session: &str) -> &[FileChange] {
        self.load(session)
    }

    fn file(&self, session: &str) -> Option<PathBuf> {
        Some(log_file(self.dir.as_ref()?, session))
    }

    fn load(&mut self, session: &str) -> &mut Vec<FileChange> {
        if !self.sessions.contains_key(session)
            && let Some(file) = self.file(session)
        {
            self.reading.insert(session.to_string());
            let id = session.to_string();
            self.jobs.blocking(move || JobDone::ChangesRead {
                changes: read(&file),
                session: id,
            });
        }
        self.sessions.entry(session.to_string()).or_default()
    }
}

/// The change log of `session` in `dir` (the data dir's `changes`).
pub fn log_file(dir: &Path, session: &str) -> PathBuf {
    // Session ids are the agent's; only safe characters make the file name.
    let name: String = session
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!("{name}.jsonl"))
}

/// Appends `change` to `file` as one line.
fn append(file: &Path, change: &FileChange) -> std::io::Result<()> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut line = serde_json::to_vec(change).map_err(std::io::Error::other)?;
    line.push(b'\n');
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)?
        .write_all(&line)
}

/// The changes in `file`: a later line for the same tool call and file replaces the earlier
/// in its place; a line that does not parse (cut by a crash) is skipped.
pub fn read(file: &Path) -> Vec<FileChange> {
    let Ok(f) = std::fs::File::open(file) else {
        return Vec::new();
    };
    let mut changes: Vec<FileChange> = Vec::new();
    for line in std::io::BufReader::new(f)
        .split(b'\n')
        .map_while(Result::ok)
    {
        let Ok(change) = serde_json::from_slice::<FileChange>(&line) else {
            if !line.iter().all(u8::is_ascii_whitespace) {
                tracing::warn!("skipped a damaged line in {}", file.display());
            }
            continue;
        };
        merge(&mut changes, change);
    }
    changes
}

/// Puts `change` into `changes`; whether anything changed. A report repeating the last
/// one of its tool call and file is dropped, and a later one with other texts replaces it.
/// A write the client made for the agent (`fs/write_text_file`, [`CLIENT_WRITE`]) and the
/// agent's report of the tool call behind it are one change, named after the tool call.
fn merge(changes: &mut Vec<FileChange>, change: FileChange) -> bool {
    if let Some(last) = changes.iter_mut().rev().find(|c| c.path == change.path)
        && last.same_texts(&change)
        && (last.tool_call == CLIENT_WRITE) != (change.tool_call == CLIENT_WRITE)
    {
        if change.tool_call == CLIENT_WRITE {
            return false;
        }
        last.tool_call = change.tool_call;
        return true;
    }
    let same_call = (change.tool_call != CLIENT_WRITE)
        .then(|| {
            changes
                .iter_mut()
                .rev()
                .find(|c| c.tool_call == change.tool_call && c.path == change.path)
        })
        .flatten();
    match same_call {
        Some(same) if same.same_edit(&change) => false,
        Some(same) => {
            *same = change;
            true
        }
        None => {
            changes.push(change);
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log on `dir`, and its reads handed back to it.
    fn log_on(dir: &Path) -> (ChangeLog, tokio::sync::mpsc::UnboundedReceiver<JobDone>) {
        let (jobs, done) = Jobs::channel();
        (ChangeLog::new(Some(dir.to_path_buf()), jobs), done)
    }

    /// Hands `log` the reads it started.
    fn settle(log: &mut ChangeLog, done: &mut tokio::sync::mpsc::UnboundedReceiver<JobDone>) {
        while log.jobs.running() > 0 {
            match done.blocking_recv() {
                Some(JobDone::ChangesRead { session, changes }) => {
                    log.jobs.handled();
                    log.read_done(session, changes);
                }
                other => panic!("{other:?}"),
            }
        }
    }

    fn change(call: &str, path: &str, before: Option<&str>, after: &str) -> FileChange {
        FileChange::new(call, Path::new(path), before, after)
    }

    #[test]
    fn changes_are_kept_in_order_and_outlive_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let (mut log, mut done) = log_on(dir.path());
        assert!(log.record("s/1", change("c1", "/p/a.rs", None, "fn a() {}\n")));
        assert!(log.record("s/1", change("c2", "/p/b.rs", Some("x\n"), "y\n")));
        // The same report again changes nothing; a later one with other text replaces it.
        assert!(!log.record("s/1", change("c2", "/p/b.rs", Some("x\n"), "y\n")));
        assert!(log.record("s/1", change("c2", "/p/b.rs", Some("x\n"), "z\n")));
        assert!(log.record("other", change("c9", "/p/c.rs", None, "c\n")));
        let kept = |log: &mut ChangeLog| -> Vec<(String, Option<String>)> {
            log.changes("s/1")
                .iter()
                .map(|c| (c.tool_call.clone(), c.after.clone()))
                .collect()
        };
        let expected = vec![
            ("c1".to_string(), Some("fn a() {}\n".to_string())),
            ("c2".to_string(), Some("z\n".to_string())),
        ];
        assert_eq!(kept(&mut log), expected);
        // A new log on the same directory (March started again) reads the same.
        settle(&mut log, &mut done);
        let (mut again, mut read) = log_on(dir.path());
        assert!(again.changes("s/1").is_empty(), "being read");
        settle(&mut again, &mut read);
        assert_eq!(kept(&mut again), expected);
        again.changes("other");
        settle(&mut again, &mut read);
        assert_eq!(again.changes("other").len(), 1);
        again.changes("never");
        settle(&mut again, &mut read);
        assert!(again.changes("never").is_empty());
    }

    #[test]
    fn what_is_recorded_while_the_file_is_read_comes_after_it_once() {
        let dir = tempfile::tempdir().unwrap();
        let (mut log, mut done) = log_on(dir.path());
        assert!(log.record("s", change("c1", "/p/a.rs", None, "1\n")));
        settle(&mut log, &mut done);
        // March again: a change comes before the file is read (and is appended to it, so
        // the read may see it too).
        let (mut again, mut read) = log_on(dir.path());
        assert!(again.record("s", change("c2", "/p/b.rs", None, "2\n")));
        settle(&mut again, &mut read);
        let calls: Vec<&str> = again
            .changes("s")
            .iter()
            .map(|c| c.tool_call.as_str())
            .collect();
        assert_eq!(calls, ["c1", "c2"]);
    }

    #[test]
    fn a_damaged_line_is_skipped_and_huge_texts_are_kept_by_size() {
        let dir = tempfile::tempdir().unwrap();
        let (mut log, mut done) = log_on(dir.path());
        let huge = "x".repeat(MAX_TEXT + 1);
        assert!(log.record("s", change("c1", "/p/big.txt", Some("small"), &huge)));
        assert!(log.record("s", change("c2", "/p/ok.txt", None, "ok\n")));
        let file = dir.path().join("s.jsonl");
        let mut bytes = std::fs::read(&file).unwrap();
        bytes.extend_from_slice(b"{\"tool_call\": \"c3\", \"pa");
        std::fs::write(&file, bytes).unwrap();
        settle(&mut log, &mut done);
        let (mut again, mut read) = log_on(dir.path());
        again.changes("s");
        settle(&mut again, &mut read);
        let changes = again.changes("s");
        assert_eq!(changes.len(), 2);
        assert_eq!(changes[0].too_large, Some((5, MAX_TEXT + 1)));
        assert_eq!(
            (changes[0].before.as_deref(), changes[0].after.as_deref()),
            (None, None)
        );
        assert_eq!(changes[1].after.as_deref(), Some("ok\n"));
        assert!(
            std::fs::metadata(&file).unwrap().len() < 1024,
            "no huge text on disk"
        );
    }

    #[test]
    fn a_client_write_and_the_report_of_its_tool_call_are_one_change() {
        let dir = tempfile::tempdir().unwrap();
        let (mut log, mut done) = log_on(dir.path());
        assert!(log.record("s", change(CLIENT_WRITE, "/p/a.rs", Some("1\n"), "2\n")));
        assert!(log.record("s", change("call_7", "/p/a.rs", Some("1\n"), "2\n")));
        // The report may come first too.
        assert!(log.record("s", change("call_8", "/p/a.rs", Some("2\n"), "3\n")));
        assert!(!log.record("s", change(CLIENT_WRITE, "/p/a.rs", Some("2\n"), "3\n")));
        // Two client writes of one file are two changes.
        assert!(log.record("s", change(CLIENT_WRITE, "/p/a.rs", Some("3\n"), "4\n")));
        assert!(log.record("s", change(CLIENT_WRITE, "/p/a.rs", Some("4\n"), "5\n")));
        let calls = |log: &mut ChangeLog| -> Vec<String> {
            log.changes("s")
                .iter()
                .map(|c| c.tool_call.clone())
                .collect()
        };
        let expected = ["call_7", "call_8", CLIENT_WRITE, CLIENT_WRITE];
        assert_eq!(calls(&mut log), expected);
        // Read back from disk the same.
        settle(&mut log, &mut done);
        let (mut again, mut read) = log_on(dir.path());
        again.changes("s");
        settle(&mut again, &mut read);
        assert_eq!(calls(&mut again), expected);
    }
}
