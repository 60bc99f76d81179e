//! Loading: pi fixtures, migrations, damaged files, unknown entries, rejected files.

use super::*;

fn is_entry_id(id: &str) -> bool {
    id.len() == 8 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

#[test]
fn large_session_fixture_loads_and_migrates() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_fixture(dir.path(), "large-session.v1.head25.jsonl");
    let before = std::fs::read(&path).unwrap();
    let (store, report) = SessionStore::open(&path).unwrap();
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "load must not touch the file"
    );

    assert_eq!((report.source_version, report.migrated), (1, true));
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(store.source_version(), 1);
    let header = store.header();
    assert_eq!(header.id, "d703a1a9-1b7b-4fb1-b512-c9738b1fe617");
    assert_eq!(header.version, Some(3));
    assert_eq!(header.cwd, "/Users/badlogic/workspaces/pi-mono");
    assert_eq!(header.extra["modelId"], "claude-sonnet-4-5");
    assert!(!header.extra.contains_key("type"));
    // Re-serialised, the migrated session is one v3 document.
    let v3 = store.to_jsonl();
    assert!(
        v3.starts_with(r#"{"type":"session","version":3,"id":"d703a1a9-"#),
        "{v3:.80}"
    );
    assert!(
        v3.lines()
            .next()
            .unwrap()
            .contains(r#""modelId":"claude-sonnet-4-5""#)
    );
    assert_eq!(v3.lines().count(), 25);

    let entries = store.entries();
    assert_eq!(entries.len(), 24);
    let messages = entries.iter().filter(|e| e.message().is_some()).count();
    assert_eq!(messages, 23);
    // v1 → v2: fresh 8-hex ids, each entry the child of the one before.
    let mut ids = std::collections::HashSet::new();
    for (i, e) in entries.iter().enumerate() {
        assert!(is_entry_id(&e.id), "{}", e.id);
        assert!(ids.insert(e.id.clone()));
        let expected = i.checked_sub(1).map(|p| entries[p].id.as_str());
        assert_eq!(e.parent_id.as_deref(), expected);
    }
    assert_eq!(entries[1].timestamp, "2025-11-20T23:33:02.351Z");
    let aborted = entries[1].message().unwrap().as_assistant().unwrap();
    assert_eq!(aborted.stop_reason, StopReason::Aborted);
    assert_eq!(
        aborted.error_message.as_deref(),
        Some("Request was aborted")
    );
    assert!(matches!(
        &entries[2].kind,
        EntryKind::ModelChange(m) if m.provider == "anthropic" && m.model_id == "claude-sonnet-4-5"
    ));
    let tool_calls = entries[4].message().unwrap().as_assistant().unwrap();
    assert_eq!(tool_calls.tool_calls().count(), 3);
    assert_eq!(store.leaf_id(), Some(entries[23].id.as_str()));

    let ctx = store.context();
    assert_eq!(ctx.messages.len(), 23);
    assert_eq!(ctx.thinking_level, "off");
    assert_eq!(
        ctx.model,
        Some(("anthropic".to_string(), "claude-sonnet-4-5".to_string()))
    );
    assert_eq!(ctx.llm_messages().len(), 23);
}

#[test]
fn before_compaction_fixture_loads_with_compaction_and_bash() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_fixture(dir.path(), "before-compaction.v1.excerpt.jsonl");
    let before = std::fs::read(&path).unwrap();
    let (store, report) = SessionStore::open(&path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), before);

    assert!(report.skipped.is_empty() && report.truncated_tail.is_none());
    // The excerpt's compaction index (293) points into lines the excerpt left out.
    assert_eq!(report.warnings.len(), 1, "{report:?}");
    assert_eq!(report.warnings[0].line, 6);
    assert!(report.warnings[0].error.contains("293"));
    assert!(store.header().extra.contains_key("branchedFrom"));
    assert_eq!(store.header().parent_session, None);

    let entries = store.entries();
    assert_eq!(entries.len(), 7);
    let levels: Vec<&str> = entries
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::ThinkingLevelChange(t) => Some(t.thinking_level.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(levels, ["minimal", "low", "medium", "high"]);
    let EntryKind::Compaction(c) = &entries[4].kind else {
        panic!("expected compaction, got {:?}", entries[4].kind)
    };
    assert_eq!(c.tokens_before, 175_004);
    assert_eq!(c.first_kept_entry_id, "");
    assert!(c.summary.starts_with("# Context Checkpoint"));
    assert!(!entries[4].json_line().contains("firstKeptEntryIndex"));
    let Some(SessionMessage::BashExecution(bash)) = entries[5].message() else {
        panic!("expected bashExecution, got {:?}", entries[5].kind)
    };
    assert_eq!((bash.command.as_str(), bash.exit_code), ("ls", Some(0)));
    assert!(!bash.cancelled && !bash.truncated);

    let ctx = store.context();
    assert_eq!(ctx.thinking_level, "high");
    assert_eq!(ctx.thinking(), Some(crate::model::ThinkingLevel::High));
    assert_eq!(
        ctx.model,
        Some(("anthropic".into(), "claude-3-opus-20240229".into()))
    );
    assert_eq!(roles(&ctx), ["compactionSummary", "bashExecution"]);
    let llm = ctx.llm_messages();
    assert_eq!(llm.len(), 2);
    let summary = llm_text(&llm[0]);
    assert!(summary.starts_with(COMPACTION_SUMMARY_PREFIX));
    assert!(summary.ends_with(COMPACTION_SUMMARY_SUFFIX));
    assert!(summary.contains("# Context Checkpoint"));
    let bash = llm_text(&llm[1]);
    assert!(bash.starts_with("Ran `ls`\n```\nAGENTS.md\n"), "{bash}");
    assert!(bash.ends_with("tsconfig.json\n\n```"), "{bash}");
}

#[test]
fn v1_migration_resolves_compaction_index_and_hook_messages() {
    let dir = tempfile::tempdir().unwrap();
    let ts = "2025-01-01T00:00:00.000Z";
    let path = write_lines(
        dir.path(),
        "v1.jsonl",
        &[
            r#"{"type":"session","id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
            &format!(
                r#"{{"type":"message","timestamp":"{ts}","message":{{"role":"user","content":"one","timestamp":1}}}}"#
            ),
            "{this line is not json",
            &format!(
                r#"{{"type":"message","timestamp":"{ts}","message":{{"role":"user","content":"two","timestamp":2}}}}"#
            ),
            &format!(
                r#"{{"type":"message","timestamp":"{ts}","message":{{"role":"user","content":"three","timestamp":3}}}}"#
            ),
            // Index 3 counts parsed lines only (header = 0), so it names "three".
            &format!(
                r#"{{"type":"compaction","timestamp":"{ts}","summary":"S","firstKeptEntryIndex":3,"tokensBefore":9}}"#
            ),
            &format!(
                r#"{{"type":"message","timestamp":"{ts}","message":{{"role":"hookMessage","customType":"x","content":"hook","display":true,"timestamp":4}}}}"#
            ),
        ],
    );
    let (store, report) = SessionStore::open(&path).unwrap();
    assert_eq!(report.skipped.len(), 1);
    assert_eq!(report.skipped[0].line, 3);
    assert!(report.warnings.is_empty(), "{report:?}");
    let e = store.entries();
    assert_eq!(e.len(), 5);
    assert_eq!(e[2].parent_id.as_deref(), Some(e[1].id.as_str()));
    let EntryKind::Compaction(c) = &e[3].kind else {
        panic!("{:?}", e[3].kind)
    };
    assert_eq!(c.first_kept_entry_id, e[2].id);
    assert!(matches!(e[4].message(), Some(SessionMessage::Custom(m)) if m.custom_type == "x"));
    assert!(e[4].json_line().contains(r#""role":"custom""#));

    let ctx = store.context();
    assert_eq!(roles(&ctx), ["compactionSummary", "user", "custom"]);
    let texts: Vec<String> = ctx.llm_messages().iter().map(llm_text).collect();
    assert_eq!(texts[1..], ["three", "hook"]);
}

#[test]
fn v2_hook_messages_become_custom_and_other_lines_stay_verbatim() {
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        r#"{"type":"session","version":2,"id":"s2","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
        r#"{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
        r#"{"type":"message","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"hookMessage","customType":"h","content":[{"type":"text","text":"x"}],"display":false,"timestamp":2}}"#,
    ];
    let path = write_lines(dir.path(), "v2.jsonl", &lines);
    let (store, report) = SessionStore::open(&path).unwrap();
    assert_eq!((report.source_version, report.migrated), (2, true));
    assert!(report.is_clean());
    let e = store.entries();
    assert_eq!(e[0].json_line(), lines[1]);
    assert_eq!(e[1].id, "bbbbbbbb");
    assert!(matches!(e[1].message(), Some(SessionMessage::Custom(_))));
    assert_eq!(roles(&store.context()), ["user", "custom"]);
}

#[test]
fn corrupt_middle_line_is_skipped_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let ids: Vec<String> = ["a", "b", "c"]
        .iter()
        .map(|t| store.append_message(user(t)).unwrap().id.clone())
        .collect();
    let path = store.path().to_path_buf();
    drop(store);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(2, r#"{"type":"message","id":"#);
    let path = write_lines(dir.path(), "corrupt.jsonl", &lines);
    let before = std::fs::read(&path).unwrap();

    let (store, report) = SessionStore::open(&path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(report.skipped.len(), 1);
    assert_eq!(report.skipped[0].line, 3);
    assert!(report.skipped[0].error.contains("EOF"), "{report:?}");
    assert!(report.truncated_tail.is_none());
    let loaded: Vec<&str> = store.entries().iter().map(|e| e.id.as_str()).collect();
    assert_eq!(loaded, ids);
    assert_eq!(store.context().messages.len(), 3);
}

#[test]
fn lost_entry_splits_the_tree_but_the_rest_loads() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    for t in ["a", "b", "c"] {
        store.append_message(user(t)).unwrap();
    }
    let text = std::fs::read_to_string(store.path()).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[2] = "garbage";
    let path = write_lines(dir.path(), "lost.jsonl", &lines);
    let (store, report) = SessionStore::open(&path).unwrap();
    assert_eq!(report.skipped.len(), 1);
    assert_eq!(store.entries().len(), 2);
    // "c" lost its parent "b": it is a root now, and the context starts there.
    assert_eq!(store.tree().roots, [0, 1]);
    assert_eq!(store.context().messages.len(), 1);
}

#[test]
fn truncated_last_line_is_reported_and_repaired_on_append() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    store.append_message(user("a")).unwrap();
    let b = store.append_message(user("b")).unwrap().id.clone();
    let path = store.path().to_path_buf();
    drop(store);
    // A crash mid-write leaves a line without its end.
    let mut torn = std::fs::read(&path).unwrap();
    torn.extend_from_slice(br#"{"type":"message","id":"deadbeef","parentId":"#);
    std::fs::write(&path, &torn).unwrap();

    let (mut store, report) = SessionStore::open(&path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), torn, "load must not repair");
    assert!(report.skipped.is_empty());
    assert_eq!(report.truncated_tail.as_ref().map(|t| t.line), Some(4));
    assert_eq!(store.entries().len(), 2);
    assert_eq!(store.leaf_id(), Some(b.as_str()));

    let c = store.append_message(user("c")).unwrap().id.clone();
    let after = std::fs::read(&path).unwrap();
    assert!(after.starts_with(&torn), "nothing may be truncated");
    assert_eq!(after[torn.len()], b'\n');

    let (store, report) = SessionStore::open(&path).unwrap();
    assert!(report.truncated_tail.is_none());
    assert_eq!(report.skipped.len(), 1);
    assert_eq!(report.skipped[0].line, 4);
    let last = store.entries().last().unwrap();
    assert_eq!(
        (last.id.as_str(), last.parent_id.as_deref()),
        (c.as_str(), Some(b.as_str()))
    );
}

#[test]
fn complete_last_line_without_newline_loads() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    store.append_message(user("a")).unwrap();
    let path = store.path().to_path_buf();
    drop(store);
    let mut text = std::fs::read(&path).unwrap();
    text.pop();
    std::fs::write(&path, &text).unwrap();
    let (mut store, report) = SessionStore::open(&path).unwrap();
    assert!(report.is_clean());
    assert_eq!(store.entries().len(), 1);
    store.append_message(user("b")).unwrap();
    let (store, report) = SessionStore::open(&path).unwrap();
    assert!(report.is_clean());
    assert_eq!(store.entries().len(), 2);
}

#[test]
fn non_utf8_line_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    store.append_message(user("a")).unwrap();
    let path = store.path().to_path_buf();
    drop(store);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(b"\xff\xfe\n");
    std::fs::write(&path, &bytes).unwrap();
    let (store, report) = SessionStore::open(&path).unwrap();
    assert_eq!(store.entries().len(), 1);
    assert_eq!(report.skipped.len(), 1);
    assert!(report.skipped[0].error.contains("UTF-8"));
}

#[test]
fn unknown_entry_types_are_preserved_and_ignored_for_context() {
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        r#"{"type":"session","version":3,"id":"s3","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
        r#"{"type":"message","id":"00000001","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
        r#"{"type":"future_entry","id":"00000002","parentId":"00000001","timestamp":"2025-01-01T00:00:02.000Z","payload":["read","bash"]}"#,
        r#"{"type":"compaction_v9","id":"00000003","parentId":"00000002","timestamp":"2025-01-01T00:00:03.000Z","targetId":"00000001"}"#,
        r#"{"type":"model_change","id":"00000004","parentId":"00000003","timestamp":"2025-01-01T00:00:04.000Z","provider":5}"#,
        r#"{"type":"message","id":"00000005","parentId":"00000004","timestamp":"2025-01-01T00:00:05.000Z","message":{"role":"user","content":"again","timestamp":5,"future":{"x":1}}}"#,
    ];
    let path = write_lines(dir.path(), "unknown.jsonl", &lines);
    let (store, report) = SessionStore::open(&path).unwrap();
    assert!(report.skipped.is_empty());
    // The malformed known type is kept, with a warning.
    assert_eq!(report.warnings.len(), 1);
    assert_eq!(report.warnings[0].line, 5);

    let e = store.entries();
    assert_eq!(e.len(), 5);
    let EntryKind::Unknown(tools) = &e[1].kind else {
        panic!("{:?}", e[1].kind)
    };
    assert_eq!(tools.entry_type, "future_entry");
    assert_eq!(tools.fields.keys().collect::<Vec<_>>(), ["payload"]);
    assert!(matches!(&e[2].kind, EntryKind::Unknown(u) if u.entry_type == "compaction_v9"));
    assert!(matches!(&e[3].kind, EntryKind::Unknown(u) if u.entry_type == "model_change"));
    assert_eq!(store.to_jsonl(), std::fs::read_to_string(&path).unwrap());

    let ctx = store.context();
    assert_eq!(roles(&ctx), ["user", "user"]);
    assert_eq!(ctx.model, None);
    assert_eq!(store.branch_path(None).len(), 5);
}

#[test]
fn file_without_a_header_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[&str], &str); 4] = [
        (
            "message-first.jsonl",
            &[
                r#"{"type":"message","id":"00000001","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi"}}"#,
            ],
            "`message` entry, not a session header",
        ),
        ("empty.jsonl", &[], "no session header"),
        ("not-an-object.jsonl", &["42"], "not an entry"),
        (
            "bad-header.jsonl",
            &[r#"{"type":"session","version":3}"#],
            "invalid session header",
        ),
    ];
    for (name, lines, expected) in cases {
        let path = write_lines(dir.path(), name, lines);
        let err = SessionStore::open(&path).unwrap_err();
        assert!(
            matches!(err, SessionError::NotASession { .. }),
            "{name}: {err}"
        );
        let text = err.to_string();
        assert!(text.contains(expected), "{name}: {text}");
        assert!(text.contains(name), "{name}: {text}");
    }
    // A torn header (crash while creating) is not a session either.
    let path = dir.path().join("torn.jsonl");
    std::fs::write(&path, r#"{"type":"session","id":"x"#).unwrap();
    let err = SessionStore::open(&path).unwrap_err().to_string();
    assert!(err.contains("torn"), "{err}");
    // Garbage before the header is skipped, as pi does.
    let path = write_lines(
        dir.path(),
        "garbage-first.jsonl",
        &[
            "not json",
            r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}"#,
        ],
    );
    let (_, report) = SessionStore::open(&path).unwrap();
    assert_eq!(report.skipped.len(), 1);
    assert_eq!(report.skipped[0].line, 1);
}

#[test]
fn missing_file_is_a_read_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = SessionStore::open(&dir.path().join("nope.jsonl")).unwrap_err();
    assert!(matches!(err, SessionError::Read { .. }));
    assert!(err.to_string().contains("nope.jsonl"));
}

#[test]
fn cyclic_parents_do_not_hang() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_lines(
        dir.path(),
        "cycle.jsonl",
        &[
            r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}"#,
            r#"{"type":"message","id":"aaaaaaaa","parentId":"bbbbbbbb","timestamp":"t","message":{"role":"user","content":"a"}}"#,
            r#"{"type":"message","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"t","message":{"role":"user","content":"b"}}"#,
            r#"{"type":"message","id":"cccccccc","parentId":"cccccccc","timestamp":"t","message":{"role":"user","content":"c"}}"#,
        ],
    );
    let (store, _) = SessionStore::open(&path).unwrap();
    assert_eq!(store.context().messages.len(), 1);
    assert_eq!(store.build_context(Some("bbbbbbbb")).messages.len(), 2);
    assert_eq!(store.tree().roots, [2]);
}

#[test]
fn usage_of_a_pi_file_is_summed_while_it_loads_and_grows_with_appends() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_fixture(dir.path(), "large-session.v1.head25.jsonl");
    let (store, _) = SessionStore::open(&path).unwrap();
    // Summed independently with Python over the fixture: 8 assistant messages, 38 input
    // tokens; the first was aborted before anything came back, so no model answered it and
    // it is no call.
    let usage = store.usage();
    assert_eq!((usage.calls, usage.input), (7, 38));
    assert!((usage.cost - 0.26804745).abs() < 1e-9, "{}", usage.cost);

    let mut store = new_store(dir.path());
    let mut paid = assistant("hi", "p", "m");
    if let SessionMessage::Assistant(a) = &mut paid {
        a.usage.input = 10;
        a.usage.cost.total = 0.5;
    }
    store.append_message(paid.clone()).unwrap();
    store.append_message(user("again")).unwrap();
    store.append_message(paid).unwrap();
    // A request that never reached a model (the server was not running) is no call; the
    // loop leaves it one empty text block.
    let mut unanswered = assistant("", "p", "m");
    if let SessionMessage::Assistant(a) = &mut unanswered {
        a.stop_reason = StopReason::Error;
        a.error_message = Some("connection refused by http://127.0.0.1:9/v1".into());
    }
    store.append_message(unanswered).unwrap();
    assert_eq!(store.usage().calls, 2);
    assert_eq!(store.usage().cost, 1.0);
    let (reopened, _) = SessionStore::open(store.path()).unwrap();
    assert_eq!(reopened.usage(), store.usage());
}
