//! Moving the leaf: `leaf` entries (pi's harness), `active_tools_change`, and branched pi
//! files that load, navigate and continue.

use serde_json::{Value, json};

use super::*;

fn lines(store: &SessionStore) -> Vec<Value> {
    std::fs::read_to_string(store.path())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_leaf_move_is_written_under_the_old_leaf_and_reopens_there() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let u1 = store.append_message(user("one")).unwrap().id.clone();
    let a1 = store
        .append_message(assistant("two", "p", "m"))
        .unwrap()
        .id
        .clone();

    store.move_leaf(Some(&u1)).unwrap();
    assert_eq!(store.leaf_id(), Some(u1.as_str()));
    let written = lines(&store);
    let leaf = written.last().unwrap();
    assert_eq!(leaf["type"], "leaf");
    assert_eq!(leaf["parentId"], json!(a1));
    assert_eq!(leaf["targetId"], json!(u1));
    let mut keys: Vec<&String> = leaf.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["id", "parentId", "targetId", "timestamp", "type"]);

    // Reopened at the target; the next message branches there.
    let (mut reopened, report) = SessionStore::open(store.path()).unwrap();
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(reopened.leaf_id(), Some(u1.as_str()));
    assert_eq!(roles(&reopened.context()), ["user"]);
    let u2 = reopened.append_message(user("three")).unwrap();
    assert_eq!(u2.parent_id.as_deref(), Some(u1.as_str()));

    // Already there: nothing written. Before the first entry: `null`, reopened empty.
    let count = lines(&reopened).len();
    let here = reopened.leaf_id().map(str::to_string);
    reopened.move_leaf(here.as_deref()).unwrap();
    assert_eq!(lines(&reopened).len(), count);
    reopened.move_leaf(None).unwrap();
    assert_eq!(lines(&reopened).last().unwrap()["targetId"], Value::Null);
    let (root, _) = SessionStore::open(reopened.path()).unwrap();
    assert_eq!(root.leaf_id(), None);
    assert!(root.context().messages.is_empty());

    assert!(matches!(
        reopened.move_leaf(Some("nope")),
        Err(SessionError::EntryNotFound(_))
    ));
}

#[test]
fn a_leaf_entry_whose_target_is_gone_leaves_the_leaf_where_it_was_moved_from() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_lines(
        dir.path(),
        "s.jsonl",
        &[
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
            r#"{"type":"message","id":"aaaa0001","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
            r#"{"type":"leaf","id":"aaaa0002","parentId":"aaaa0001","timestamp":"2026-01-01T00:00:02.000Z","targetId":"lost0000"}"#,
        ],
    );
    let (store, _) = SessionStore::open(&path).unwrap();
    assert_eq!(store.leaf_id(), Some("aaaa0001"));
}

#[test]
fn active_tools_are_typed_written_and_follow_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let u1 = store.append_message(user("one")).unwrap().id.clone();
    assert_eq!(store.context().active_tools, None);
    let names = vec!["read".to_string(), "bash".to_string()];
    store.append_active_tools(&names).unwrap();
    assert_eq!(store.context().active_tools, Some(names.clone()));
    let line = lines(&store).pop().unwrap();
    assert_eq!(line["type"], "active_tools_change");
    assert_eq!(line["activeToolNames"], json!(["read", "bash"]));

    let (mut reopened, report) = SessionStore::open(store.path()).unwrap();
    assert!(report.is_clean());
    assert!(matches!(
        reopened.leaf_entry().unwrap().kind,
        EntryKind::ActiveToolsChange(_)
    ));
    assert_eq!(reopened.context().active_tools, Some(names));
    // Another branch never had them.
    reopened.branch(&u1).unwrap();
    assert_eq!(reopened.context().active_tools, None);
    assert_eq!(
        reopened.try_to_jsonl().unwrap(),
        std::fs::read_to_string(store.path()).unwrap()
    );
}

/// A session as pi writes one after `/tree` with a summary: the first answer, then a second
/// branch from the first user message carrying the summary of the first.
const PI_BRANCHED: &[&str] = &[
    r#"{"type":"session","version":3,"id":"019a0000-0000-7000-8000-000000000001","timestamp":"2026-01-01T10:00:00.000Z","cwd":"/work/proj"}"#,
    r#"{"type":"message","id":"11111111","parentId":null,"timestamp":"2026-01-01T10:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"make it fast"}],"timestamp":1767261601000}}"#,
    r#"{"type":"message","id":"22222222","parentId":"11111111","timestamp":"2026-01-01T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"cached it"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1767261602000}}"#,
    r#"{"type":"branch_summary","id":"33333333","parentId":"11111111","timestamp":"2026-01-01T10:00:03.000Z","fromId":"11111111","summary":"The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n## Goal\nCaching","details":{"readFiles":[],"modifiedFiles":["src/cache.rs"]}}"#,
    r#"{"type":"label","id":"44444444","parentId":"33333333","timestamp":"2026-01-01T10:00:04.000Z","targetId":"22222222","label":"cache attempt"}"#,
    r#"{"type":"message","id":"55555555","parentId":"44444444","timestamp":"2026-01-01T10:00:05.000Z","message":{"role":"user","content":[{"type":"text","text":"try an index instead"}],"timestamp":1767261605000}}"#,
];

#[test]
fn a_branched_pi_session_loads_navigates_and_continues() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_lines(dir.path(), "pi.jsonl", PI_BRANCHED);
    let before = std::fs::read(&path).unwrap();
    let (mut store, report) = SessionStore::open(&path).unwrap();
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(store.leaf_id(), Some("55555555"));
    assert_eq!(store.label("22222222"), Some("cache attempt"));
    let tree = store.tree();
    assert_eq!(tree.roots, [0]);
    assert_eq!(
        tree.children_of(0),
        [1, 2],
        "the answer and the summary branch"
    );
    assert_eq!(roles(&store.context()), ["user", "branchSummary", "user"]);

    // Back to the first answer: the summary's branch is left out of the context.
    store.move_leaf(Some("22222222")).unwrap();
    assert_eq!(roles(&store.context()), ["user", "assistant"]);
    store.append_message(user("keep the cache")).unwrap();
    let (reopened, report) = SessionStore::open(&path).unwrap();
    assert!(report.is_clean());
    assert_eq!(roles(&reopened.context()), ["user", "assistant", "user"]);
    // pi's lines are kept byte for byte; March's follow.
    let after = std::fs::read(&path).unwrap();
    assert_eq!(&after[..before.len()], &before[..]);
}

#[test]
fn a_fork_copies_the_path_with_its_labels_and_names_its_parent() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let u1 = store.append_message(user("one")).unwrap().id.clone();
    let a1 = store
        .append_message(assistant("two", "p", "m"))
        .unwrap()
        .id
        .clone();
    store.append_label(&u1, Some("start")).unwrap();
    let u2 = store.append_message(user("three")).unwrap().id.clone();
    // Another branch, left: not in the fork.
    store.branch(&a1).unwrap();
    store.append_message(user("elsewhere")).unwrap();
    store.move_leaf(Some(&u2)).unwrap();
    let before = std::fs::read(store.path()).unwrap();

    let forks = dir.path().join("forks");
    let forked = store.fork(None, &forks).unwrap();
    assert_eq!(
        std::fs::read(store.path()).unwrap(),
        before,
        "the source is untouched"
    );
    assert_eq!(
        forked.header().parent_session.as_deref(),
        Some(store.path().to_string_lossy().as_ref())
    );
    assert_ne!(forked.session_id(), store.session_id());
    let text = std::fs::read_to_string(forked.path()).unwrap();
    let types: Vec<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(types, ["session", "message", "message", "message", "label"]);
    // u2's parent was the label: it is chained to the answer now; the others are verbatim.
    let (reopened, report) = SessionStore::open(forked.path()).unwrap();
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(
        reopened.entry(&u2).unwrap().parent_id.as_deref(),
        Some(a1.as_str())
    );
    let source_line = store.entry(&a1).unwrap().json_line().into_owned();
    assert!(text.contains(&source_line));
    assert_eq!(reopened.label(&u1), Some("start"));
    assert_eq!(roles(&reopened.context()), ["user", "assistant", "user"]);
    assert!(!text.contains("elsewhere"));
    assert!(matches!(
        store.fork(Some("nope"), &forks),
        Err(SessionError::EntryNotFound(_))
    ));
}
