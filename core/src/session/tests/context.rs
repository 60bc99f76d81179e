//! Context building, branching, the tree, labels and names.

use serde_json::json;

use super::*;
use crate::message::{ImageContent, UserBody};

/// u1 → a1 → u2 → a2, returning the ids.
fn linear(store: &mut SessionStore) -> [String; 4] {
    let mut id = |m: SessionMessage| store.append_message(m).unwrap().id.clone();
    [
        id(user("u1")),
        id(assistant("a1", "anthropic", "claude")),
        id(user("u2")),
        id(assistant("a2", "anthropic", "claude")),
    ]
}

fn texts(ctx: &SessionContext) -> Vec<String> {
    ctx.messages
        .iter()
        .map(|m| match &**m {
            SessionMessage::Assistant(a) => a.text(),
            other => other.to_llm().map(|m| llm_text(&m)).unwrap_or_default(),
        })
        .collect()
}

#[test]
fn branching_records_the_parent_and_builds_the_branch_context() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let [u1, a1, _u2, a2] = linear(&mut store);
    assert_eq!(texts(&store.context()), ["u1", "a1", "u2", "a2"]);

    store.branch(&a1).unwrap();
    let u3 = store.append_message(user("u3")).unwrap();
    assert_eq!(u3.parent_id.as_deref(), Some(a1.as_str()));
    let u3 = u3.id.clone();
    assert_eq!(texts(&store.context()), ["u1", "a1", "u3"]);
    assert_eq!(
        texts(&store.build_context(Some(a2.as_str()))),
        ["u1", "a1", "u2", "a2"]
    );
    assert!(store.build_context(None).messages.is_empty());
    assert_eq!(store.build_context(None).thinking_level, "off");
    // pi falls back to the last entry for an unknown leaf.
    assert_eq!(
        texts(&store.build_context(Some("missing"))),
        ["u1", "a1", "u3"]
    );

    // The leaf is not persisted: on load it is the last entry in file order.
    let (reopened, _) = SessionStore::open(store.path()).unwrap();
    assert_eq!(reopened.leaf_id(), Some(u3.as_str()));
    assert_eq!(reopened.context(), store.context());

    let tree = reopened.tree();
    assert_eq!(tree.roots, [0]);
    assert_eq!(tree.children_of(0), [1]);
    assert_eq!(
        tree.children_of(1),
        [2, 4],
        "a1 has two children, oldest first"
    );
    assert!(tree.children_of(99).is_empty());
    let children: Vec<&str> = reopened
        .children(&a1)
        .iter()
        .map(|e| e.id.as_str())
        .collect();
    assert_eq!(children.len(), 2);
    let path: Vec<&str> = reopened
        .branch_path(Some(u3.as_str()))
        .iter()
        .map(|e| e.id.as_str())
        .collect();
    assert_eq!(path, [u1.as_str(), a1.as_str(), u3.as_str()]);

    store.reset_leaf();
    let root = store.append_message(user("fresh")).unwrap();
    assert_eq!(root.parent_id, None);
    assert_eq!(store.tree().roots.len(), 2);
}

#[test]
fn compaction_keeps_the_summary_then_kept_entries_then_later_ones() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let [_u1, _a1, u2, _a2] = linear(&mut store);
    store
        .append_compaction("the gist", &u2, 1234, None)
        .unwrap();
    store.append_message(user("u3")).unwrap();

    let ctx = store.context();
    assert_eq!(
        roles(&ctx),
        ["compactionSummary", "user", "assistant", "user"]
    );
    assert!(matches!(
        &*ctx.messages[0],
        SessionMessage::CompactionSummary(c) if c.tokens_before == 1234 && c.summary == "the gist"
    ));
    assert_eq!(texts(&ctx)[1..], ["u2", "a2", "u3"]);
    let llm = ctx.llm_messages();
    assert_eq!(
        llm_text(&llm[0]),
        format!("{COMPACTION_SUMMARY_PREFIX}the gist{COMPACTION_SUMMARY_SUFFIX}")
    );

    // A later compaction wins; its kept range starts at its own first kept entry.
    let u3 = store.leaf_id().unwrap().to_string();
    store.append_compaction("newer", &u3, 99, None).unwrap();
    let ctx = store.context();
    assert_eq!(roles(&ctx), ["compactionSummary", "user"]);
    assert!(
        matches!(&*ctx.messages[0], SessionMessage::CompactionSummary(c) if c.summary == "newer")
    );
}

#[test]
fn model_and_thinking_level_follow_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let first = store.append_message(user("u1")).unwrap().id.clone();
    assert_eq!(store.context().model, None);
    store.append_thinking_level("medium").unwrap();
    store.append_model_change("openai", "gpt-4o").unwrap();
    let ctx = store.context();
    assert_eq!(ctx.thinking_level, "medium");
    assert_eq!(ctx.model, Some(("openai".into(), "gpt-4o".into())));
    store
        .append_message(assistant("a", "anthropic", "claude-x"))
        .unwrap();
    assert_eq!(
        store.context().model,
        Some(("anthropic".into(), "claude-x".into()))
    );
    // Another branch does not see those changes.
    store.branch(&first).unwrap();
    store.append_message(user("other")).unwrap();
    let ctx = store.context();
    assert_eq!((ctx.thinking_level.as_str(), ctx.model), ("off", None));
}

#[test]
fn custom_messages_and_branch_summaries_join_the_context() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let [u1, ..] = linear(&mut store);
    store.append_custom("state", Some(json!({"n": 1}))).unwrap();
    store.append_label(&u1, Some("start")).unwrap();
    let image = UserContent::Image(ImageContent {
        data: "AAAA".into(),
        mime_type: "image/png".into(),
    });
    store
        .append_custom_message(
            "ext",
            UserBody::Blocks(vec![UserContent::text("see"), image]),
            false,
            None,
        )
        .unwrap();
    let ctx = store.context();
    assert_eq!(
        roles(&ctx),
        ["user", "assistant", "user", "assistant", "custom"]
    );
    let SessionMessage::Custom(custom) = &*ctx.messages[4] else {
        panic!()
    };
    assert_eq!(custom.custom_type, "ext");
    assert!(
        custom.timestamp > 1_700_000_000_000,
        "from the entry's ISO timestamp"
    );
    assert_eq!(llm_text(&ctx.llm_messages()[4]), "see<image>");

    let summary = store
        .branch_with_summary(Some(u1.as_str()), "tried X", None)
        .unwrap();
    assert_eq!(summary.parent_id.as_deref(), Some(u1.as_str()));
    let ctx = store.context();
    assert_eq!(roles(&ctx), ["user", "branchSummary"]);
    assert_eq!(
        llm_text(&ctx.llm_messages()[1]),
        format!("{BRANCH_SUMMARY_PREFIX}tried X{BRANCH_SUMMARY_SUFFIX}")
    );
    // An empty summary adds nothing; from the root it has no parent and fromId "root".
    let root = store.branch_with_summary(None, "", None).unwrap();
    assert_eq!(root.parent_id, None);
    assert!(matches!(&root.kind, EntryKind::BranchSummary(b) if b.from_id == "root"));
    assert!(store.context().messages.is_empty());
}

#[test]
fn labels_and_session_name_use_the_latest_entry() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let [u1, a1, ..] = linear(&mut store);
    assert_eq!(store.session_name(), None);
    store.append_label(&u1, Some("start")).unwrap();
    store.append_label(&a1, Some("answer")).unwrap();
    store.append_label(&a1, None).unwrap();
    store.append_session_info("  First\nname ").unwrap();
    assert_eq!(store.label(&u1), Some("start"));
    assert_eq!(store.label(&a1), None);
    assert_eq!(store.session_name(), Some("First name"));
    store.append_session_info("Second").unwrap();
    assert_eq!(store.session_name(), Some("Second"));

    let (reopened, _) = SessionStore::open(store.path()).unwrap();
    assert_eq!(reopened.label(&u1), Some("start"));
    assert_eq!(reopened.label(&a1), None);
    assert_eq!(reopened.session_name(), Some("Second"));
    // Labels and names are not part of the conversation.
    assert_eq!(reopened.context().messages.len(), 4);

    store.append_session_info(" ").unwrap();
    assert_eq!(store.session_name(), None, "an empty name clears it");
}

#[test]
fn bash_execution_text_matches_pi() {
    let mut bash = BashExecutionMessage {
        command: "make".into(),
        output: String::new(),
        exit_code: Some(0),
        cancelled: false,
        truncated: false,
        full_output_path: None,
        timestamp: 7,
        exclude_from_context: false,
    };
    assert_eq!(bash_execution_to_text(&bash), "Ran `make`\n(no output)");
    bash.output = "err".into();
    bash.exit_code = Some(2);
    assert_eq!(
        bash_execution_to_text(&bash),
        "Ran `make`\n```\nerr\n```\n\nCommand exited with code 2"
    );
    bash.cancelled = true;
    bash.truncated = true;
    bash.full_output_path = Some("/tmp/full".into());
    assert_eq!(
        bash_execution_to_text(&bash),
        "Ran `make`\n```\nerr\n```\n\n(command cancelled)\n\n[Output truncated. Full output: /tmp/full]"
    );
    bash.exit_code = None;
    bash.cancelled = false;
    bash.full_output_path = None;
    assert_eq!(bash_execution_to_text(&bash), "Ran `make`\n```\nerr\n```");

    let msg = SessionMessage::BashExecution(bash.clone());
    let llm = msg.to_llm().unwrap();
    assert!(matches!(&llm, crate::message::Message::User(u) if u.timestamp == 7));
    bash.exclude_from_context = true;
    let hidden = SessionMessage::BashExecution(bash);
    assert_eq!(hidden.to_llm(), None);
    assert_eq!(convert_to_llm(&[hidden, msg]).len(), 1);
}

#[test]
fn session_messages_keep_pi_role_names() {
    let custom = SessionMessage::Custom(CustomMessage {
        custom_type: "t".into(),
        content: UserBody::Text("c".into()),
        display: true,
        details: None,
        timestamp: 1,
    });
    let v = serde_json::to_value(&custom).unwrap();
    assert_eq!(
        v,
        json!({"role": "custom", "customType": "t", "content": "c", "display": true, "timestamp": 1})
    );
    let back: SessionMessage = serde_json::from_value(v).unwrap();
    assert_eq!(back, custom);
    let m: SessionMessage = crate::message::Message::user("x").into();
    assert_eq!(m.role(), "user");
    let summary: SessionMessage = serde_json::from_value(
        json!({"role": "branchSummary", "summary": "s", "fromId": "root", "timestamp": 2}),
    )
    .unwrap();
    assert_eq!(summary.role(), "branchSummary");
}
