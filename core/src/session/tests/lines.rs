//! Entry lines are re-read from the session file: byte for byte while it holds them, and a
//! clear error (never a panic, never someone else's bytes) once it was replaced or truncated.

use super::*;

/// A March session with three messages, and its lines.
fn written_session(dir: &Path) -> (PathBuf, Vec<String>) {
    let mut store = new_store(dir);
    for text in ["one", "two", "three"] {
        store.append_message(user(text)).unwrap();
    }
    let path = store.path().to_path_buf();
    let text = std::fs::read_to_string(&path).unwrap();
    (path, text.lines().map(str::to_string).collect())
}

fn jsonl(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn loaded_and_appended_lines_come_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (path, lines) = written_session(dir.path());
    let (mut store, _) = SessionStore::open(&path).unwrap();
    for (entry, line) in store.entries().iter().zip(&lines[1..]) {
        assert_eq!(entry.try_json_line().unwrap(), *line);
        assert_eq!(entry.json_line(), *line);
    }
    assert_eq!(store.try_to_jsonl().unwrap(), jsonl(&lines));

    let added = store.append_message(user("four")).unwrap().clone();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(added.try_json_line().unwrap(), text.lines().last().unwrap());
    assert_eq!(store.try_to_jsonl().unwrap(), text);
}

#[test]
fn a_rewritten_file_is_reported_not_re_emitted() {
    let dir = tempfile::tempdir().unwrap();
    let (path, lines) = written_session(dir.path());
    let (mut store, _) = SessionStore::open(&path).unwrap();
    // Same length, other bytes.
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace(r#""two""#, r#""TWO""#)).unwrap();

    let two = &store.entries()[1];
    let err = two.try_json_line().unwrap_err();
    assert!(
        matches!(&err, SessionError::Changed { id, .. } if *id == two.id),
        "{err}"
    );
    assert!(
        err.to_string().contains("changed since it was loaded"),
        "{err}"
    );
    assert_eq!(store.entries()[0].try_json_line().unwrap(), lines[1]);
    assert!(matches!(
        store.try_to_jsonl(),
        Err(SessionError::Changed { .. })
    ));
    // The infallible forms fall back to the entry as March writes it: for an entry March
    // wrote, its original line.
    assert_eq!(two.json_line(), lines[2]);
    assert_eq!(store.to_jsonl(), jsonl(&lines));

    // Continuing fails as a whole: no partial file, the store unchanged.
    let next = dir.path().join("next");
    let err = store.continue_in_new_file(&next).unwrap_err();
    assert!(matches!(err, SessionError::Changed { .. }), "{err}");
    assert_eq!(std::fs::read_dir(&next).unwrap().count(), 0);
    assert_eq!(store.path(), path);
    assert_eq!(store.context().messages.len(), 3);
}

#[test]
fn a_truncated_or_deleted_file_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let (path, lines) = written_session(dir.path());
    let (store, _) = SessionStore::open(&path).unwrap();

    std::fs::write(&path, jsonl(&lines[..2])).unwrap();
    assert_eq!(store.entries()[0].try_json_line().unwrap(), lines[1]);
    let err = store.entries()[2].try_json_line().unwrap_err();
    assert!(matches!(err, SessionError::Changed { .. }), "{err}");
    assert!(err.to_string().contains("ends before"), "{err}");

    std::fs::remove_file(&path).unwrap();
    let err = store.entries()[0].try_json_line().unwrap_err();
    assert!(matches!(err, SessionError::Read { .. }), "{err}");
    assert!(store.try_to_jsonl().is_err());
    assert_eq!(store.to_jsonl(), jsonl(&lines));
    // What is in memory stays usable.
    assert_eq!(store.context().messages.len(), 3);
}

#[test]
fn lines_appended_after_a_torn_tail_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let (path, lines) = written_session(dir.path());
    let mut torn = jsonl(&lines);
    torn.push_str(r#"{"type":"message","id":"dead"#);
    std::fs::write(&path, &torn).unwrap();

    let (mut store, report) = SessionStore::open(&path).unwrap();
    assert!(report.truncated_tail.is_some());
    let added = store.append_message(user("after")).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let last = text.lines().last().unwrap();
    assert_eq!(added.try_json_line().unwrap(), last);
    assert_eq!(
        store.try_to_jsonl().unwrap(),
        format!("{}{last}\n", jsonl(&lines))
    );
}

#[test]
fn continued_sessions_read_every_line_from_the_new_file() {
    let dir = tempfile::tempdir().unwrap();
    let old = copy_fixture(dir.path(), "large-session.v1.head25.jsonl");
    let (mut store, _) = SessionStore::open(&old).unwrap();
    let v3 = store.to_jsonl();
    let new_path = store
        .continue_in_new_file(&dir.path().join("next"))
        .unwrap()
        .to_path_buf();
    // Migrated lines included: nothing is read from the old file any more.
    std::fs::remove_file(&old).unwrap();
    let text = std::fs::read_to_string(&new_path).unwrap();
    assert_eq!(store.try_to_jsonl().unwrap(), text);
    let entries: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(entries, v3.lines().skip(1).collect::<Vec<_>>());
    for (entry, line) in store.entries().iter().zip(&entries) {
        assert_eq!(entry.try_json_line().unwrap(), *line);
    }
}
