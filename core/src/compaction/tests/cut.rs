//! Cut points and preparation over real session paths.

use super::*;
use crate::message::UserBody;
use crate::session::{BashExecutionMessage, EntryKind};

/// u1 · read a.rs · edit b.rs · reply · u2 · bash · read d.rs · reply, with tool results.
fn coding_session(store: &mut SessionStore) -> Vec<String> {
    append(
        store,
        vec![
            user("u1", 400),
            call("c1", "read", json!({"path": "a.rs"})),
            result("c1", "read", 800),
            call(
                "c2",
                "edit",
                json!({"path": "b.rs", "oldText": "x", "newText": "y"}),
            ),
            result("c2", "edit", 800),
            reply("a1", 400),
            user("u2", 400),
            call("c3", "bash", json!({"command": "make"})),
            result("c3", "bash", 2000),
            call("c4", "read", json!({"path": "d.rs"})),
            result("c4", "read", 400),
            reply("a2", 400),
        ],
    )
}

/// Tokens of the path's messages from `from` on, as the cut point counts them.
fn tokens_from(path: &[&SessionEntry], from: usize) -> u64 {
    path[from..]
        .iter()
        .filter_map(|e| e.message())
        .map(estimate_session_message_tokens)
        .sum()
}

fn is_tool_result(entry: &SessionEntry) -> bool {
    matches!(entry.message(), Some(SessionMessage::ToolResult(_)))
}

#[test]
fn the_cut_never_separates_a_tool_result_from_its_call() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    coding_session(&mut store);
    let path = store.branch_path(None);
    let total = tokens_from(&path, 0);
    let mut cut_at_a_call = false;
    for keep in (1..=total + 10).step_by(3) {
        let cut = find_cut_point(&path, 0, path.len(), keep);
        let kept = &path[cut.first_kept_index..];
        assert!(
            !is_tool_result(kept[0]),
            "keep {keep}: cut on a tool result"
        );
        for entry in kept {
            let Some(SessionMessage::ToolResult(r)) = entry.message() else {
                continue;
            };
            let call_kept = kept.iter().any(|e| {
                e.message()
                    .and_then(SessionMessage::as_assistant)
                    .is_some_and(|a| a.tool_calls().any(|c| c.id == r.tool_call_id))
            });
            assert!(
                call_kept,
                "keep {keep}: result {} kept without its call",
                r.tool_call_id
            );
        }
        cut_at_a_call |= matches!(kept[0].message(), Some(SessionMessage::Assistant(_)));
    }
    assert!(
        cut_at_a_call,
        "some budget must cut at an assistant message"
    );
}

#[test]
fn a_budget_reached_on_a_tool_result_cuts_at_the_next_call_and_splits_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let ids = coding_session(&mut store);
    let path = store.branch_path(None);
    // Reached at the bash result (index 8): the next valid cut is the `read d.rs` call.
    let keep = tokens_from(&path, 8);
    let cut = find_cut_point(&path, 0, path.len(), keep);
    assert_eq!(cut.first_kept_index, 9);
    assert_eq!(cut.turn_start_index, Some(6), "turn started at u2");
    assert!(cut.is_split_turn());

    let prep = prepare_compaction(&path, &keep_settings(keep)).unwrap();
    assert_eq!(prep.first_kept_entry_id, ids[9]);
    assert!(prep.is_split_turn);
    assert_eq!(
        labels(&prep.messages_to_summarize),
        ["u1", "call c1", "result c1", "call c2", "result c2", "a1"]
    );
    assert_eq!(
        labels(&prep.turn_prefix_messages),
        ["u2", "call c3", "result c3"]
    );
    assert_eq!(prep.previous_summary, None);
    // The kept `read d.rs` is not among the summarised files.
    assert_eq!(prep.file_ops.read_files(), ["a.rs"]);
    assert_eq!(prep.file_ops.modified_files(), ["b.rs"]);
    assert_eq!(prep.tokens_before, tokens_from(&path, 0));
}

fn keep_settings(tokens: u64) -> CompactionSettings {
    keep(tokens)
}

#[test]
fn a_cut_at_a_user_message_does_not_split() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let ids = coding_session(&mut store);
    let path = store.branch_path(None);
    let cut = find_cut_point(&path, 0, path.len(), tokens_from(&path, 6));
    assert_eq!(cut.first_kept_index, 6);
    assert_eq!(cut.turn_start_index, None);

    let prep = prepare_compaction(&path, &keep(tokens_from(&path, 6))).unwrap();
    assert_eq!(prep.first_kept_entry_id, ids[6]);
    assert!(!prep.is_split_turn);
    assert!(prep.turn_prefix_messages.is_empty());
    assert_eq!(prep.messages_to_summarize.len(), 6);
}

#[test]
fn shell_commands_and_extension_messages_start_turns() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    append(&mut store, vec![user("u1", 400), reply("a1", 400)]);
    store
        .append_message(SessionMessage::BashExecution(BashExecutionMessage {
            command: "ls".into(),
            output: "x".repeat(400),
            exit_code: Some(0),
            cancelled: false,
            truncated: false,
            full_output_path: None,
            timestamp: 0,
            exclude_from_context: false,
        }))
        .unwrap();
    append(
        &mut store,
        vec![
            call("c1", "read", json!({"path": "x"})),
            result("c1", "read", 40),
            reply("a2", 400),
        ],
    );
    let path = store.branch_path(None);
    assert_eq!(find_turn_start(&path, 5, 0), Some(2));
    assert_eq!(
        find_turn_start(&path, 5, 3),
        None,
        "not before the range start"
    );
    let cut = find_cut_point(&path, 0, path.len(), tokens_from(&path, 3));
    assert_eq!((cut.first_kept_index, cut.turn_start_index), (3, Some(2)));

    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    append(&mut store, vec![user("u1", 400), reply("a1", 400)]);
    store
        .append_custom_message("note", UserBody::Text("injected".into()), true, None)
        .unwrap();
    append(
        &mut store,
        vec![
            call("c1", "read", json!({"path": "x"})),
            result("c1", "read", 40),
            call("c2", "read", json!({"path": "y"})),
            result("c2", "read", 40),
        ],
    );
    let path = store.branch_path(None);
    let cut = find_cut_point(&path, 0, path.len(), tokens_from(&path, 5));
    assert_eq!((cut.first_kept_index, cut.turn_start_index), (5, Some(2)));
    let prep = prepare_compaction(&path, &keep(tokens_from(&path, 5))).unwrap();
    assert_eq!(labels(&prep.messages_to_summarize), ["u1", "a1"]);
    assert_eq!(
        labels(&prep.turn_prefix_messages),
        ["custom note", "call c1", "result c1"]
    );

    // Right above the cut, the extension message is kept with it and the turn is whole.
    let cut = find_cut_point(&path, 0, path.len(), tokens_from(&path, 3));
    assert_eq!((cut.first_kept_index, cut.turn_start_index), (2, None));
}

#[test]
fn entries_just_before_the_cut_are_kept_and_do_not_split_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let ids = append(
        &mut store,
        vec![
            user("u1", 400),
            reply("a1", 400),
            user("u2", 400),
            reply("a2", 400),
        ],
    );
    let thinking = store.append_thinking_level("high").unwrap().id.clone();
    store.append_model_change("anthropic", "claude").unwrap();
    store.append_label(&ids[0], Some("start")).unwrap();
    append(&mut store, vec![user("u3", 400), reply("a3", 400)]);
    let path = store.branch_path(None);
    let cut = find_cut_point(&path, 0, path.len(), tokens_from(&path, 7));
    assert_eq!(
        cut.first_kept_index, 4,
        "the three entries above u3 come along"
    );
    assert_eq!(cut.turn_start_index, None, "u2 · a2 is a complete turn");

    let prep = prepare_compaction(&path, &keep(tokens_from(&path, 7))).unwrap();
    assert_eq!(prep.first_kept_entry_id, thinking);
    assert!(!prep.is_split_turn);
    assert_eq!(
        labels(&prep.messages_to_summarize),
        ["u1", "a1", "u2", "a2"]
    );
}

#[test]
fn pulling_entries_in_stops_at_a_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let ids = append(
        &mut store,
        vec![
            user("u1", 400),
            reply("a1", 400),
            user("u2", 400),
            reply("a2", 400),
        ],
    );
    store.append_compaction("S1", &ids[2], 500, None).unwrap();
    let model_change = store.append_model_change("p", "m").unwrap().id.clone();
    append(&mut store, vec![user("u3", 400), reply("a3", 400)]);
    let path = store.branch_path(None);
    let cut = find_cut_point(&path, 2, path.len(), tokens_from(&path, 6));
    assert_eq!(cut.first_kept_index, 5);
    let prep = prepare_compaction(&path, &keep(tokens_from(&path, 6))).unwrap();
    assert_eq!(prep.first_kept_entry_id, model_change);
    assert_eq!(labels(&prep.messages_to_summarize), ["u2", "a2"]);
}

#[test]
fn the_boundary_is_the_previous_compactions_first_kept_entry() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let ids = append(
        &mut store,
        vec![
            user("u1", 400),
            reply("a1", 400),
            user("u2", 400),
            reply("a2", 400),
            user("u3", 400),
            reply("a3", 400),
        ],
    );
    let details = json!({"readFiles": ["old.rs"], "modifiedFiles": ["m.rs"]});
    store
        .append_compaction("S1", &ids[2], 1000, Some(details))
        .unwrap();
    let later = append(
        &mut store,
        vec![
            user("u4", 400),
            call("c1", "read", json!({"path": "x.rs"})),
            result("c1", "read", 40),
            reply("a4", 400),
            user("u5", 400),
            reply("a5", 400),
        ],
    );
    let path = store.branch_path(None);
    let prep = prepare_compaction(&path, &keep(150)).unwrap();
    assert_eq!(prep.first_kept_entry_id, later[4], "cut at u5");
    assert_eq!(
        labels(&prep.messages_to_summarize),
        ["u2", "a2", "u3", "a3", "u4", "call c1", "result c1", "a4"],
        "what the previous compaction kept is summarised now; what it summarised is not"
    );
    assert_eq!(prep.previous_summary.as_deref(), Some("S1"));
    assert_eq!(prep.file_ops.read_files(), ["old.rs", "x.rs"]);
    assert_eq!(prep.file_ops.modified_files(), ["m.rs"]);
    // The estimate is of the context the model sees now: summary, kept, newer.
    let context = store.context();
    assert_eq!(context.messages.len(), 11);
    assert_eq!(
        prep.tokens_before,
        estimate_session_tokens(&context.messages).tokens
    );

    // Everything since the boundary fits: nothing to do, and nothing before it is touched.
    assert_eq!(prepare_compaction(&path, &keep(1_000_000)), None);
}

#[test]
fn a_missing_first_kept_entry_puts_the_boundary_after_the_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    append(&mut store, vec![user("u1", 400), reply("a1", 400)]);
    store.append_compaction("S1", "gone", 1000, None).unwrap();
    append(
        &mut store,
        vec![
            user("u2", 400),
            reply("a2", 400),
            user("u3", 400),
            reply("a3", 400),
        ],
    );
    let path = store.branch_path(None);
    let prep = prepare_compaction(&path, &keep(150)).unwrap();
    assert_eq!(labels(&prep.messages_to_summarize), ["u2", "a2"]);
    assert_eq!(prep.previous_summary.as_deref(), Some("S1"));
}

#[test]
fn nothing_to_compact() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let empty: Vec<&SessionEntry> = Vec::new();
    assert_eq!(prepare_compaction(&empty, &keep(1)), None);

    let ids = append(
        &mut store,
        vec![user("u1", 400), reply("a1", 400), user("u2", 400)],
    );
    let path = store.branch_path(None);
    assert_eq!(
        prepare_compaction(&path, &CompactionSettings::default()),
        None,
        "all fits"
    );
    assert!(prepare_compaction(&path, &keep(100)).is_some());

    store.append_compaction("S", &ids[2], 10, None).unwrap();
    let path = store.branch_path(None);
    assert!(matches!(
        path.last().unwrap().kind,
        EntryKind::Compaction(_)
    ));
    assert_eq!(prepare_compaction(&path, &keep(1)), None, "just compacted");

    // Only a model change since: what the compaction kept (u2) still fits.
    store.append_model_change("p", "m").unwrap();
    let path = store.branch_path(None);
    assert_eq!(prepare_compaction(&path, &keep(1)), None);
}

#[test]
fn a_huge_last_tool_result_still_lets_older_history_go() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let ids = append(
        &mut store,
        vec![
            user("u1", 400),
            reply("a1", 400),
            user("u2", 400),
            call("c1", "read", json!({"path": "huge.log"})),
            result("c1", "read", 200_000),
        ],
    );
    let path = store.branch_path(None);
    let prep = prepare_compaction(&path, &CompactionSettings::default()).unwrap();
    assert_eq!(
        prep.first_kept_entry_id, ids[3],
        "kept from the call of the huge result"
    );
    assert!(prep.is_split_turn);
    assert_eq!(labels(&prep.messages_to_summarize), ["u1", "a1"]);
    assert_eq!(labels(&prep.turn_prefix_messages), ["u2"]);
}

#[test]
fn the_estimate_before_compacting_anchors_on_reported_usage() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    append(
        &mut store,
        vec![
            user("u1", 40_000),
            reply_with_usage("a1", 12_345),
            user("u2", 400),
            reply("a2", 40),
        ],
    );
    let path = store.branch_path(None);
    let prep = prepare_compaction(&path, &keep(50)).unwrap();
    assert_eq!(prep.tokens_before, 12_345 + 100 + 10);
}
