//! Session files on disk: finding one by id and listing them for `session/list`.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use march_core::message::UserBody;
use march_core::session::{format_iso_ms, is_valid_session_id, session_dir};
use serde_json::Value;

/// Longest title derived from a first user message.
const MAX_TITLE_CHARS: usize = 80;

/// Longest preview of the last answer.
const MAX_PREVIEW_CHARS: usize = 160;

/// What `session/list` shows of one session file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Summary {
    /// The session id from the header.
    pub id: String,
    /// The working directory from the header.
    pub cwd: PathBuf,
    /// The latest `session_info` name, else the first user text.
    pub title: Option<String>,
    /// Last modification of the file (ISO-8601).
    pub updated_at: Option<String>,
    /// The start of the last assistant text, for a switcher's preview.
    pub preview: Option<String>,
    /// The file.
    pub path: PathBuf,
}

/// The directories to look in: the one for `cwd` if given, else every session directory.
fn dirs(sessions_dir: &Path, cwd: Option<&Path>) -> Vec<PathBuf> {
    match cwd {
        Some(cwd) => vec![session_dir(sessions_dir, cwd)],
        None => std::fs::read_dir(sessions_dir)
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.is_dir())
                    .collect()
            })
            .unwrap_or_default(),
    }
}

fn session_files(dir: &Path) -> impl Iterator<Item = PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl") && p.is_file())
}

/// The file of session `id`: looked for under `cwd`'s directory first, then everywhere.
pub(crate) fn find(sessions_dir: &Path, cwd: Option<&Path>, id: &str) -> Option<PathBuf> {
    if !is_valid_session_id(id) {
        return None;
    }
    let suffix = format!("_{id}.jsonl");
    let matches = |p: &PathBuf| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with(&suffix))
    };
    let preferred = cwd.map(|c| dirs(sessions_dir, Some(c))).unwrap_or_default();
    preferred
        .into_iter()
        .chain(dirs(sessions_dir, None))
        .find_map(|dir| session_files(&dir).find(matches))
}

/// The newest v3 file in `dir` that continues `parent` (its header's `parentSession`), so a
/// pi file that March already continued is not continued a second time.
pub(crate) fn continuation(dir: &Path, parent: &Path) -> Option<PathBuf> {
    let parent = parent.to_string_lossy();
    let mut found: Vec<PathBuf> = session_files(dir)
        .filter(|p| {
            header(p).is_some_and(|h| {
                h.get("parentSession").and_then(Value::as_str) == Some(&*parent)
                    && h.get("version").and_then(Value::as_u64) == Some(3)
            })
        })
        .collect();
    // File names start with the creation time, so the last one is the newest.
    found.sort();
    found.pop()
}

/// The first line of a session file as JSON, if it is a session header.
fn header(path: &Path) -> Option<Value> {
    let mut buf = Vec::new();
    BufReader::new(File::open(path).ok()?)
        .read_until(b'\n', &mut buf)
        .ok()?;
    let header: Value = serde_json::from_slice(&buf).ok()?;
    (header.get("type").and_then(Value::as_str) == Some("session")).then_some(header)
}

/// The sessions of `cwd` (or of every directory), most recently updated first.
pub(crate) fn list(sessions_dir: &Path, cwd: Option<&Path>) -> Vec<Summary> {
    let mut out: Vec<Summary> = dirs(sessions_dir, cwd)
        .iter()
        .flat_map(|d| session_files(d))
        .filter_map(|p| summarize(&p))
        .collect();
    out.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then(a.id.cmp(&b.id)));
    out
}

/// Read a file's header, latest name and first user text, line by line (files can be large).
pub(crate) fn summarize(path: &Path) -> Option<Summary> {
    let file = File::open(path).ok()?;
    let updated_at = file
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| format_iso_ms(d.as_millis() as i64));
    let mut reader = BufReader::new(file);
    let mut buf = Vec::new();
    reader.read_until(b'\n', &mut buf).ok()?;
    let header: Value = serde_json::from_slice(&buf).ok()?;
    if header.get("type").and_then(Value::as_str) != Some("session") {
        return None;
    }
    let id = header.get("id").and_then(Value::as_str)?.to_string();
    let cwd = PathBuf::from(
        header
            .get("cwd")
            .and_then(Value::as_str)
            .unwrap_or_default(),
    );
    let mut name: Option<String> = None;
    let mut first_user: Option<String> = None;
    let mut last_answer: Option<String> = None;
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let Ok(line) = std::str::from_utf8(&buf) else {
            continue;
        };
        // Cheap substring checks first: most lines are neither.
        let maybe_info = line.contains("\"session_info\"");
        let maybe_user = first_user.is_none() && line.contains("\"user\"");
        let maybe_answer = line.contains("\"assistant\"");
        if !maybe_info && !maybe_user && !maybe_answer {
            continue;
        }
        let Ok(entry) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        match entry.get("type").and_then(Value::as_str) {
            Some("session_info") => {
                name = entry
                    .get("name")
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(str::to_string);
            }
            Some("message") => {
                let message = entry.get("message").unwrap_or(&Value::Null);
                match message.get("role").and_then(Value::as_str) {
                    Some("user") if first_user.is_none() => {
                        first_user = user_text(message.get("content").unwrap_or(&Value::Null));
                    }
                    Some("assistant") => {
                        if let Some(text) =
                            answer_text(message.get("content").unwrap_or(&Value::Null))
                        {
                            last_answer = Some(text);
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    Some(Summary {
        id,
        cwd,
        title: name.or(first_user),
        updated_at,
        preview: last_answer,
        path: path.to_path_buf(),
    })
}

/// The start of an assistant message's text (its text blocks; thinking and tool calls
/// left out), on one line and shortened; none when it has no text.
fn answer_text(content: &Value) -> Option<String> {
    let blocks = content.as_array()?;
    let text: String = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.is_empty() {
        return None;
    }
    Some(match line.char_indices().nth(MAX_PREVIEW_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line,
    })
}

/// The first non-empty line of a user message's text, shortened to a title.
fn user_text(content: &Value) -> Option<String> {
    let text = match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return None,
    };
    title_from_text(&text)
}

/// The title of a user message: its text's first non-empty line, shortened.
pub(crate) fn user_title(body: &UserBody) -> Option<String> {
    match body {
        UserBody::Text(text) => title_from_text(text),
        UserBody::Blocks(_) => title_from_text(&body.text()),
    }
}

/// The first non-empty line of `text`, shortened to a title.
pub(crate) fn title_from_text(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(if line.chars().count() > MAX_TITLE_CHARS {
        let cut: String = line.chars().take(MAX_TITLE_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use march_core::message::Message;
    use march_core::session::{SessionHeader, SessionStore};

    #[test]
    fn finds_and_lists_sessions_with_titles() {
        let root = tempfile::tempdir().unwrap();
        let sessions = root.path().join("sessions");
        let cwd = Path::new("/work/proj");
        let dir = session_dir(&sessions, cwd);
        let mut a = SessionStore::create(&dir, SessionHeader::new("/work/proj")).unwrap();
        a.append_message(Message::user("\n  fix the parser please\nmore"))
            .unwrap();
        let mut b = SessionStore::create(&dir, SessionHeader::new("/work/proj")).unwrap();
        b.append_message(Message::user("first")).unwrap();
        b.append_session_info("Named session").unwrap();
        let other = session_dir(&sessions, Path::new("/elsewhere"));
        let c = SessionStore::create(&other, SessionHeader::new("/elsewhere")).unwrap();
        std::fs::write(dir.join("junk.jsonl"), "not json\n").unwrap();

        let listed = list(&sessions, Some(cwd));
        let mut titles: Vec<_> = listed
            .iter()
            .map(|s| (s.id.clone(), s.title.clone()))
            .collect();
        titles.sort();
        let mut expected = vec![
            (
                a.session_id().to_string(),
                Some("fix the parser please".to_string()),
            ),
            (
                b.session_id().to_string(),
                Some("Named session".to_string()),
            ),
        ];
        expected.sort();
        assert_eq!(titles, expected);
        assert!(
            listed
                .iter()
                .all(|s| s.cwd == cwd && s.updated_at.is_some())
        );
        assert_eq!(list(&sessions, None).len(), 3);
        assert!(listed.iter().all(|s| s.preview.is_none()), "no answers yet");

        // The preview is the last answer's text, thinking left out, on one line.
        let answer = |text: &str| {
            serde_json::json!({"type": "message", "message": {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "private"},
                {"type": "text", "text": text}
            ]}})
            .to_string()
        };
        let lines = format!(
            "{}\n{}\n",
            answer("old"),
            answer("The parser\n  keeps comments.")
        );
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(a.path())
            .unwrap();
        std::io::Write::write_all(&mut file, lines.as_bytes()).unwrap();
        let summary = summarize(a.path()).unwrap();
        assert_eq!(
            summary.preview.as_deref(),
            Some("The parser keeps comments.")
        );
        let long = answer(&"word ".repeat(100));
        std::io::Write::write_all(&mut file, format!("{long}\n").as_bytes()).unwrap();
        let preview = summarize(a.path()).unwrap().preview.unwrap();
        assert_eq!(preview.chars().count(), MAX_PREVIEW_CHARS + 1);
        assert!(preview.ends_with('…'));

        assert_eq!(
            find(&sessions, Some(cwd), c.session_id()),
            Some(c.path().to_path_buf())
        );
        assert_eq!(
            find(&sessions, None, a.session_id()),
            Some(a.path().to_path_buf())
        );
        assert_eq!(find(&sessions, Some(cwd), "nope"), None);
        assert_eq!(find(&sessions, Some(cwd), "../x"), None);
    }
}
