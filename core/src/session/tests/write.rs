//! Writing: creation, durable appends, byte-for-byte round trips, legacy files, errors.

use serde_json::{Value, json};

use super::*;
use crate::message::{ToolResultMessage, UserBody};

#[test]
fn create_writes_the_header_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let name = store
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let header = store.header();
    assert_eq!(header.version, Some(3));
    assert!(is_valid_session_id(&header.id));
    assert_eq!(name, session_file_name(&header.timestamp, &header.id));
    assert!(!name.contains(':'));

    let text = std::fs::read_to_string(store.path()).unwrap();
    assert_eq!(text.lines().count(), 1);
    let line: Value = serde_json::from_str(text.trim_end()).unwrap();
    assert_eq!(line["type"], "session");
    assert_eq!(line["version"], 3);
    assert_eq!(line["cwd"], "/work/proj");
    assert!(line.get("parentSession").is_none());
    assert!(text.starts_with(r#"{"type":"session","version":3,"id":"#));

    let (reopened, report) = SessionStore::open(store.path()).unwrap();
    assert!(report.is_clean());
    assert!(reopened.entries().is_empty());
    assert_eq!(reopened.leaf_id(), None);
    assert_eq!(reopened.header(), store.header());
}

#[test]
fn create_for_cwd_uses_the_encoded_directory() {
    let home = tempfile::tempdir().unwrap();
    let paths = crate::paths::MarchPaths::at(home.path());
    let store = SessionStore::create_for_cwd(&paths, Path::new("/srv/app")).unwrap();
    assert_eq!(
        store.path().parent().unwrap(),
        paths.sessions_dir().join("--srv-app--")
    );
    assert_eq!(store.header().cwd, "/srv/app");
}

#[test]
fn appended_lines_are_on_disk_when_append_returns() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let mut parent: Option<String> = None;
    for text in ["one", "two", "three"] {
        let id = store.append_message(user(text)).unwrap().id.clone();
        // Read through a separate handle: the line must already be there, complete.
        let disk = std::fs::read_to_string(store.path()).unwrap();
        assert!(disk.ends_with('\n'));
        let last: Value = serde_json::from_str(disk.lines().last().unwrap()).unwrap();
        assert_eq!(last["type"], "message");
        assert_eq!(last["id"], id.as_str());
        assert_eq!(
            last["parentId"],
            parent.as_deref().map_or(Value::Null, Value::from)
        );
        assert_eq!(last["message"]["content"], text);
        assert!(parse_iso_ms(last["timestamp"].as_str().unwrap()).is_some());
        assert_eq!(store.leaf_id(), Some(id.as_str()));
        parent = Some(id);
    }
}

/// A session with every entry type March writes.
fn rich_session(dir: &Path) -> SessionStore {
    let mut s = new_store(dir);
    let u1 = s.append_message(user("hello")).unwrap().id.clone();
    s.append_thinking_level("high").unwrap();
    s.append_model_change("anthropic", "claude-sonnet-4-5")
        .unwrap();
    s.append_message(assistant("hi there", "anthropic", "claude-sonnet-4-5"))
        .unwrap();
    s.append_message(SessionMessage::ToolResult(ToolResultMessage {
        tool_call_id: "call_1".into(),
        tool_name: "read".into(),
        content: vec![UserContent::text("file body")],
        details: json!({"path": "a.rs", "lines": 3}),
        is_error: false,
        timestamp: 5,
        usage: None,
    }))
    .unwrap();
    s.append_message(SessionMessage::BashExecution(BashExecutionMessage {
        command: "ls".into(),
        output: "a\nb".into(),
        exit_code: Some(2),
        cancelled: false,
        truncated: true,
        full_output_path: Some("/tmp/out".into()),
        timestamp: 6,
        exclude_from_context: false,
    }))
    .unwrap();
    s.append_compaction(
        "summary ✓ \"quoted\"\nnext",
        &u1,
        1234,
        Some(json!({"readFiles": ["a.rs"], "modifiedFiles": []})),
    )
    .unwrap();
    s.append_custom("ext", Some(json!({"count": 42, "f": 1.5})))
        .unwrap();
    s.append_custom_message("ext", UserBody::Text("injected".into()), true, None)
        .unwrap();
    s.append_label(&u1, Some("start")).unwrap();
    s.append_session_info("My\nsession ").unwrap();
    s.branch_with_summary(Some(u1.as_str()), "went elsewhere", None)
        .unwrap();
    s
}

#[test]
fn march_files_round_trip_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let store = rich_session(dir.path());
    let path = store.path().to_path_buf();
    let written = std::fs::read_to_string(&path).unwrap();
    assert_eq!(store.to_jsonl(), written);

    let (mut reopened, report) = SessionStore::open(&path).unwrap();
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(reopened.to_jsonl(), written);
    // Typed forms survive the trip too.
    assert_eq!(reopened.entries(), store.entries());
    assert_eq!(reopened.leaf_id(), store.leaf_id());
    assert_eq!(reopened.context(), store.context());

    // Appending to a reopened file keeps it round-tripping.
    reopened.append_message(user("more")).unwrap();
    let (again, _) = SessionStore::open(&path).unwrap();
    assert_eq!(again.to_jsonl(), std::fs::read_to_string(&path).unwrap());
    assert_eq!(again.entries().len(), store.entries().len() + 1);
}

#[test]
fn new_entries_serialise_deterministically_in_pi_field_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let e = store.append_model_change("openai", "gpt-4o").unwrap();
    let expected = format!(
        r#"{{"type":"model_change","id":"{}","parentId":null,"timestamp":"{}","provider":"openai","modelId":"gpt-4o"}}"#,
        e.id, e.timestamp
    );
    assert_eq!(e.json_line(), expected);
    let parent = e.id.clone();
    let e = store
        // Keys already in order: serde_json's `preserve_order` (enabled in the workspace by the
        // ACP crate) and the default sorted maps then print the same line.
        .append_custom("ext", Some(json!({"a": 2, "b": 1})))
        .unwrap();
    assert!(e.json_line().ends_with(&format!(
        r#""parentId":"{parent}","timestamp":"{}","customType":"ext","data":{{"a":2,"b":1}}}}"#,
        e.timestamp
    )));
    let e = store
        .append(EntryKind::Unknown(UnknownEntry {
            entry_type: "leaf".into(),
            fields: serde_json::from_value(json!({"targetId": "x", "id": "ignored"})).unwrap(),
        }))
        .unwrap();
    assert!(e.json_line().starts_with(r#"{"type":"leaf","id":""#));
    assert_eq!(e.json_line().matches("\"id\"").count(), 1);
}

#[test]
fn legacy_files_are_read_only_and_continue_in_a_new_file() {
    let dir = tempfile::tempdir().unwrap();
    let old = copy_fixture(dir.path(), "large-session.v1.head25.jsonl");
    let before = std::fs::read(&old).unwrap();
    let (mut store, _) = SessionStore::open(&old).unwrap();
    let migrated: Vec<String> = store.entries().iter().map(|e| e.id.clone()).collect();

    let err = store.append_message(user("more")).unwrap_err();
    assert!(
        matches!(err, SessionError::LegacyFormat { version: 1, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("v1"));
    assert!(store.branch_with_summary(None, "x", None).is_err());
    assert_eq!(std::fs::read(&old).unwrap(), before);

    let new_dir = dir.path().join("continued");
    let new_path = store.continue_in_new_file(&new_dir).unwrap().to_path_buf();
    assert_ne!(new_path, old);
    assert_eq!(store.source_version(), 3);
    assert_eq!(
        store.header().parent_session.as_deref(),
        Some(old.to_string_lossy().as_ref())
    );
    let added = store.append_message(user("more")).unwrap().id.clone();
    assert_eq!(
        std::fs::read(&old).unwrap(),
        before,
        "the old file is never touched"
    );

    let (reopened, report) = SessionStore::open(&new_path).unwrap();
    assert!(report.is_clean(), "{report:?}");
    assert_eq!((report.source_version, report.migrated), (3, false));
    assert_eq!(
        reopened.header().parent_session,
        store.header().parent_session
    );
    let ids: Vec<&str> = reopened.entries().iter().map(|e| e.id.as_str()).collect();
    assert_eq!(
        ids[..24],
        migrated.iter().map(String::as_str).collect::<Vec<_>>()[..]
    );
    let last = reopened.entries().last().unwrap();
    assert_eq!(last.id, added);
    assert_eq!(last.parent_id.as_deref(), Some(migrated[23].as_str()));
    assert_eq!(reopened.context().messages.len(), 24);
    assert_eq!(
        reopened.to_jsonl(),
        std::fs::read_to_string(&new_path).unwrap()
    );
}

#[test]
fn unwritable_directory_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    // A regular file where a directory should be: fails even for root.
    let blocker = dir.path().join("blocker");
    std::fs::write(&blocker, "").unwrap();
    let err =
        SessionStore::create(&blocker.join("sessions"), SessionHeader::new("/p")).unwrap_err();
    assert!(matches!(err, SessionError::CreateDir { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.starts_with("cannot create session directory"),
        "{text}"
    );
    assert!(text.contains("blocker"), "{text}");

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let locked = dir.path().join("locked");
        std::fs::create_dir(&locked).unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
        // Root ignores permission bits; only check where they apply.
        if std::fs::write(locked.join("probe"), "").is_err() {
            let err = SessionStore::create(&locked, SessionHeader::new("/p")).unwrap_err();
            assert!(matches!(err, SessionError::Create { .. }), "{err}");
            assert!(err.to_string().starts_with("cannot create session file"));
        }
    }
}

#[test]
fn invalid_session_ids_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut header = SessionHeader::new("/p");
    header.id = "../escape".into();
    let err = SessionStore::create(dir.path(), header).unwrap_err();
    assert!(matches!(err, SessionError::InvalidSessionId(_)), "{err}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

    let mut header = SessionHeader::new("/p");
    header.id = "my-session.1".into();
    header.parent_session = Some("/old.jsonl".into());
    let store = SessionStore::create(dir.path(), header).unwrap();
    assert!(
        store
            .path()
            .to_string_lossy()
            .ends_with("_my-session.1.jsonl")
    );
    let (reopened, _) = SessionStore::open(store.path()).unwrap();
    assert_eq!(
        reopened.header().parent_session.as_deref(),
        Some("/old.jsonl")
    );
}

#[test]
fn label_needs_an_existing_target() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let err = store.append_label("nope", Some("x")).unwrap_err();
    assert!(matches!(err, SessionError::EntryNotFound(_)));
    assert!(store.entries().is_empty());
    assert!(store.branch("nope").is_err());
}
