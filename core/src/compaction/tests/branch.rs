//! Branch summaries: what a move leaves behind, what is summarised within the budget, and the
//! request over HTTP to the scripted model server, stored as pi's `branch_summary`.

use march_testkit::{Script, ScriptedServer, Turn};
use tokio_util::sync::CancellationToken;

use super::compact::{options, request_parts, server_model};
use super::*;
use crate::model::Api;
use crate::provider::HttpProvider;
use crate::session::{BRANCH_SUMMARY_PREFIX, EntryKind};

/// root u1 · a1, then branch A: u2 (read x.rs) · call/result · a2; branch B from a1: u3.
fn forked(store: &mut SessionStore) -> (Vec<String>, Vec<String>) {
    let trunk = append(store, vec![user("u1", 40), reply("a1", 40)]);
    let a = append(
        store,
        vec![
            user("u2 try approach A", 40),
            call("c1", "read", json!({"path": "src/x.rs"})),
            result("c1", "read", 40),
            call(
                "c2",
                "edit",
                json!({"path": "src/y.rs", "oldText": "a", "newText": "b"}),
            ),
            result("c2", "edit", 40),
            reply("a2 approach A done", 40),
        ],
    );
    (trunk, a)
}

#[test]
fn the_entries_left_behind_run_from_the_old_leaf_back_to_where_the_paths_meet() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let (trunk, a) = forked(&mut store);
    let leaf = store.leaf_id().map(str::to_string);

    let left = entries_left_behind(&store, leaf.as_deref(), Some(&trunk[1]));
    let ids: Vec<&str> = left.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(holds_conversation(&left));

    // Going to the root's start leaves everything; going deeper on the same path nothing.
    assert_eq!(entries_left_behind(&store, leaf.as_deref(), None).len(), 8);
    assert!(entries_left_behind(&store, leaf.as_deref(), leaf.as_deref()).is_empty());
    assert!(entries_left_behind(&store, None, Some(&trunk[0])).is_empty());
    // Settings entries alone are not conversation.
    store.branch(&trunk[1]).unwrap();
    let t = store.append_thinking_level("high").unwrap().id.clone();
    let left = entries_left_behind(&store, Some(&t), Some(&trunk[0]));
    assert!(!holds_conversation(&left[1..]));
}

#[test]
fn preparation_keeps_the_newest_within_budget_and_every_file_operation() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let (_, a) = forked(&mut store);
    let path = store.branch_path(None);
    let left: Vec<&SessionEntry> = path.iter().copied().filter(|e| a.contains(&e.id)).collect();

    let all = prepare_branch_entries(&left, 0);
    // Tool results are left out: four messages of six entries.
    assert_eq!(
        labels(&all.messages),
        [
            "u2 try approach A",
            "call c1",
            "call c2",
            "a2 approach A done"
        ]
    );
    assert_eq!(all.file_ops.read_files(), ["src/x.rs"]);
    assert_eq!(all.file_ops.modified_files(), ["src/y.rs"]);

    // A budget of ~one message keeps the newest, but file operations of all.
    let small = prepare_branch_entries(&left, 12);
    assert_eq!(labels(&small.messages), ["a2 approach A done"]);
    assert_eq!(small.file_ops.read_files(), ["src/x.rs"]);
}

#[test]
fn earlier_branch_summaries_carry_their_files_and_count_as_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let (trunk, _) = forked(&mut store);
    let details = json!({"readFiles": ["old/r.rs"], "modifiedFiles": ["old/m.rs"]});
    let summary = store
        .branch_with_summary(Some(&trunk[1]), "earlier branch", Some(details))
        .unwrap()
        .id
        .clone();
    let u = append(&mut store, vec![user("u4", 40)]);
    let path = store.branch_path(None);
    let left: Vec<&SessionEntry> = path
        .iter()
        .copied()
        .filter(|e| e.id == summary || e.id == u[0])
        .collect();
    let prep = prepare_branch_entries(&left, 0);
    assert_eq!(labels(&prep.messages), ["branch earlier branch", "u4"]);
    assert_eq!(prep.file_ops.read_files(), ["old/r.rs"]);
    assert_eq!(prep.file_ops.modified_files(), ["old/m.rs"]);
}

#[tokio::test]
async fn a_branch_summary_is_asked_for_over_http_and_stored_where_the_path_continues() {
    let server = ScriptedServer::start(Script::new(vec![Turn::text(
        "## Goal\nApproach A for the parser",
    )]))
    .await
    .unwrap();
    let model = server_model(&server, Api::OpenAiCompletions);
    let provider = HttpProvider::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let (trunk, a) = forked(&mut store);
    let old_leaf = store.leaf_id().map(str::to_string);

    let left = entries_left_behind(&store, old_leaf.as_deref(), Some(&trunk[1]));
    let made = summarize_branch(
        &provider,
        &model,
        &options(),
        &left,
        BranchSummaryAsk {
            reserve_tokens: 16_384,
            instructions: Some("the parser"),
            replace_instructions: false,
        },
        CancellationToken::new(),
    )
    .await
    .unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let (system, text) = request_parts(&requests[0]);
    assert_eq!(system, SUMMARIZATION_SYSTEM_PROMPT);
    assert!(text.starts_with("<conversation>\n[User]: u2 try approach A"));
    assert!(text.contains("[Assistant tool calls]: read(path=\"src/x.rs\")"));
    assert!(
        !text.contains("[Tool result]"),
        "results are left out: {text}"
    );
    assert!(text.contains(BRANCH_SUMMARY_PROMPT));
    assert!(text.ends_with("Additional focus: the parser"));
    let body = &requests[0].body;
    let max = body["max_tokens"].as_u64();
    assert_eq!(max.or(body["max_completion_tokens"].as_u64()), Some(2048));

    assert!(made.summary.starts_with(BRANCH_SUMMARY_PREAMBLE));
    assert!(made.summary.contains("## Goal\nApproach A for the parser"));
    assert!(made.summary.ends_with(
        "<read-files>\nsrc/x.rs\n</read-files>\n\n<modified-files>\nsrc/y.rs\n</modified-files>"
    ));
    let summary_id = store
        .branch_with_summary(
            Some(&trunk[1]),
            made.summary.clone(),
            Some(made.details.clone()),
        )
        .unwrap()
        .id
        .clone();

    // Reopened: the leaf is the summary; the context is the trunk, then the summary, not A.
    let (reopened, _) = SessionStore::open(store.path()).unwrap();
    assert_eq!(reopened.leaf_id(), Some(summary_id.as_str()));
    let entry = reopened.entry(&summary_id).unwrap();
    assert_eq!(entry.parent_id.as_deref(), Some(trunk[1].as_str()));
    let EntryKind::BranchSummary(b) = &entry.kind else {
        panic!("{entry:?}")
    };
    // pi's code writes the entry the branch continues from here (its docs say the old leaf).
    assert_eq!(b.from_id, trunk[1]);
    assert_eq!(
        b.details.as_ref().unwrap()["modifiedFiles"],
        json!(["src/y.rs"])
    );
    let context = reopened.context();
    assert_eq!(
        labels(&context.messages)[..2],
        ["u1".to_string(), "a1".to_string()]
    );
    let llm = serialize_conversation(&context.llm_messages());
    assert!(llm.contains(BRANCH_SUMMARY_PREFIX.trim()));
    assert!(
        !llm.contains("approach A done"),
        "the left branch is not in the context"
    );
    assert!(
        a.iter().all(|id| reopened.entry(id).is_some()),
        "nothing is lost"
    );
}

#[tokio::test]
async fn a_branch_without_messages_is_not_sent_to_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let trunk = append(&mut store, vec![user("u1", 40)]);
    let t = store.append_thinking_level("high").unwrap().id.clone();
    let left = entries_left_behind(&store, Some(&t), Some(&trunk[0]));
    // Nothing listens at this model's address: a request would fail.
    let made = summarize_branch(
        &HttpProvider::new().unwrap(),
        &model(),
        &options(),
        &left,
        BranchSummaryAsk::default(),
        CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(made.summary, NO_CONTENT_TO_SUMMARIZE);
}
