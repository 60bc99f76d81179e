//! Reading a session file: streaming, tolerant of damage, migrating old formats in memory.
//!
//! Lines are read one at a time into a reused buffer, so memory grows with the entries
//! kept, not with the file. A line that cannot be read is skipped and reported; an
//! unterminated last line that does not parse is reported as torn (a crash mid-write). The
//! first line that parses must be the session header, or the file is rejected.
//!
//! An entry read as it stands keeps only where its line is (offset, length, checksum), not
//! the line; only lines rewritten by a migration are kept in memory.

use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::SessionError;
use super::entry::{ParsedEntry, SessionEntry, SessionHeader, line_type, parse_entry};
use super::lines::LineRef;
use super::migrate::{Migrated, V1Migration, rename_hook_message};

/// A line of a session file that was not loaded as it stands, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIssue {
    /// 1-based line number in the file.
    pub line: usize,
    /// What is wrong with it.
    pub error: String,
}

/// What loading a session file found besides its entries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// The format version of the file (1 when the header has none).
    pub source_version: u32,
    /// True when entries were migrated to v3 in memory (the file is left as it is).
    pub migrated: bool,
    /// Lines skipped because they are not entries (malformed JSON, no id, not UTF-8, …).
    pub skipped: Vec<LineIssue>,
    /// The last line, when it ends without a newline and does not parse: a torn write.
    pub truncated_tail: Option<LineIssue>,
    /// Entries loaded with a caveat (kept opaque, unresolved compaction index, …).
    pub warnings: Vec<LineIssue>,
}

impl LoadReport {
    /// True when every line loaded as it stands.
    pub fn is_clean(&self) -> bool {
        self.skipped.is_empty() && self.truncated_tail.is_none() && self.warnings.is_empty()
    }

    fn damaged(&mut self, line: usize, terminated: bool, error: String) {
        let issue = LineIssue { line, error };
        if terminated {
            self.skipped.push(issue);
        } else {
            self.truncated_tail = Some(issue);
        }
    }
}

/// The contents of a session file.
pub(crate) struct Loaded {
    pub header: SessionHeader,
    pub header_line: Box<str>,
    pub entries: Vec<SessionEntry>,
    pub report: LoadReport,
}

/// Read a whole session from `reader`, the contents of the file at `file` from its start.
pub(crate) fn read_session(
    mut reader: impl BufRead,
    file: &Arc<Path>,
) -> Result<Loaded, SessionError> {
    let path: &Path = file;
    let mut report = LoadReport::default();
    let mut buf = Vec::new();
    let mut offset = 0u64;
    let mut line_no = 0;
    let mut header: Option<(SessionHeader, Box<str>)> = None;
    let mut entries = Vec::new();
    let mut v1: Option<V1Migration> = None;

    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|source| SessionError::Read {
                path: path.to_path_buf(),
                source,
            })?;
        if n == 0 {
            break;
        }
        let line_offset = offset;
        offset += n as u64;
        line_no += 1;
        let terminated = buf.last() == Some(&b'\n');
        if terminated {
            buf.pop();
        }
        let text = match std::str::from_utf8(&buf) {
            Ok(text) => text,
            Err(e) => {
                report.damaged(line_no, terminated, format!("not UTF-8: {e}"));
                continue;
            }
        };
        if text.trim().is_empty() {
            continue;
        }

        if header.is_none() {
            match read_header(text, line_no, path)? {
                Some(h) => {
                    report.source_version = h.version.unwrap_or(1);
                    if report.source_version < 2 {
                        v1 = Some(V1Migration::new());
                    }
                    report.migrated = report.source_version < 3;
                    header = Some((h, text.into()));
                }
                None => report.damaged(line_no, terminated, json_error(text)),
            }
            continue;
        }

        let owned;
        let mut verbatim = false;
        let line: &str = if let Some(migration) = v1.as_mut() {
            let value = match serde_json::from_str::<Value>(text) {
                Ok(value) => value,
                Err(e) => {
                    report.damaged(line_no, terminated, e.to_string());
                    continue;
                }
            };
            match migration.migrate(value) {
                Ok(Migrated::Entry { line, note }) => {
                    if let Some(error) = note {
                        report.warnings.push(LineIssue {
                            line: line_no,
                            error,
                        });
                    }
                    owned = line;
                    &owned
                }
                Ok(Migrated::NotAnEntry(why)) => {
                    report.damaged(line_no, terminated, why.to_string());
                    continue;
                }
                Err(e) => {
                    report.damaged(line_no, terminated, e.to_string());
                    continue;
                }
            }
        } else if report.source_version == 2 && text.contains("\"hookMessage\"") {
            match migrate_v2_line(text) {
                Some(line) => {
                    owned = line;
                    &owned
                }
                None => {
                    verbatim = true;
                    text
                }
            }
        } else {
            verbatim = true;
            text
        };

        let at = verbatim.then(|| LineRef::in_file(file, line_offset, line.as_bytes()));
        match parse_entry(line, at) {
            Ok(ParsedEntry { entry, note }) => {
                if let Some(error) = note {
                    report.warnings.push(LineIssue {
                        line: line_no,
                        error,
                    });
                }
                entries.push(entry);
            }
            Err(error) => report.damaged(line_no, terminated, error),
        }
    }

    let Some((mut header, mut header_line)) = header else {
        let reason = match &report.truncated_tail {
            Some(tail) => format!("its only line is torn ({})", tail.error),
            None => "it has no session header line".to_string(),
        };
        return Err(SessionError::NotASession {
            path: path.to_path_buf(),
            reason,
        });
    };
    if report.migrated {
        // As pi does: the in-memory header says v3 once entries are migrated, so the
        // session re-serialises as one consistent v3 document (the file stays as it is).
        header.version = Some(super::entry::CURRENT_VERSION);
        header_line = header.to_json_line()?.into();
    }
    // Growth by doubling leaves up to half the vector unused for as long as the session is
    // open; the allocator usually shrinks a large one in place, without copying.
    entries.shrink_to_fit();
    Ok(Loaded {
        header,
        header_line,
        entries,
        report,
    })
}

/// The header, `None` when the line is not JSON at all (skipped, as pi does), or an error
/// when the first JSON line is something other than a valid header.
fn read_header(
    text: &str,
    line_no: usize,
    path: &Path,
) -> Result<Option<SessionHeader>, SessionError> {
    let not_a_session = |reason: String| SessionError::NotASession {
        path: path.to_path_buf(),
        reason,
    };
    let kind = match line_type(text) {
        Ok(kind) => kind,
        Err(e) if e.is_syntax() || e.is_eof() => return Ok(None),
        Err(e) => {
            return Err(not_a_session(format!(
                "line {line_no} is not an entry: {e}"
            )));
        }
    };
    match kind.as_deref() {
        Some("session") => SessionHeader::from_json_line(text)
            .map(Some)
            .map_err(|e| not_a_session(format!("invalid session header on line {line_no}: {e}"))),
        Some(other) => Err(not_a_session(format!(
            "line {line_no} is a `{other}` entry, not a session header"
        ))),
        None => Err(not_a_session(format!(
            "line {line_no} has no `type`, so it is not a session header"
        ))),
    }
}

fn json_error(text: &str) -> String {
    match serde_json::from_str::<serde::de::IgnoredAny>(text) {
        Err(e) => e.to_string(),
        Ok(_) => "not a session entry".to_string(),
    }
}

/// A v2 line with the `hookMessage` role renamed, or `None` to use the line as it is.
fn migrate_v2_line(text: &str) -> Option<String> {
    let Ok(Value::Object(mut entry)) = serde_json::from_str::<Value>(text) else {
        return None;
    };
    if !rename_hook_message(&mut entry) {
        return None;
    }
    serde_json::to_string(&Value::Object(entry)).ok()
}
