use std::time::{Duration, Instant};

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandsUpdate, CompactionSummaryChunk, CompactionUpdate,
    ContentBlock, ContentChunk, Cost, Diff, MessageId, Notice, NoticeSeverity, Plan, PlanEntry,
    PlanEntryPriority, PlanEntryStatus, SessionInfoUpdate, SessionUpdate, TextContent, ToolCall,
    ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind, UsageUpdate,
};

use super::*;

fn text(s: &str) -> ContentBlock {
    ContentBlock::Text(TextContent::new(s))
}

fn agent(s: &str, id: Option<&str>) -> SessionUpdate {
    let chunk = ContentChunk::new(text(s));
    SessionUpdate::AgentMessageChunk(match id {
        Some(id) => chunk.message_id(MessageId::new(id)),
        None => chunk,
    })
}

fn messages(t: &Transcript) -> Vec<(Role, String)> {
    t.blocks()
        .iter()
        .filter_map(|b| match b {
            Block::Message(m) => Some((m.role, m.text.clone())),
            _ => None,
        })
        .collect()
}

fn tool(t: &Transcript, i: usize) -> &ToolCallView {
    match &t.blocks()[i] {
        Block::Tool(tc) => tc,
        other => panic!("block {i} is not a tool call: {other:?}"),
    }
}

#[test]
fn chunks_group_by_message_id() {
    let mut t = Transcript::default();
    let now = Instant::now();
    t.apply(&agent("Hel", Some("m1")), now);
    t.apply(&agent("lo", Some("m1")), now);
    t.apply(&agent("Other", Some("m2")), now);
    // A late chunk of m1 still lands in m1.
    t.apply(&agent("!", Some("m1")), now);
    assert_eq!(
        messages(&t),
        [
            (Role::Agent, "Hello!".into()),
            (Role::Agent, "Other".into())
        ]
    );
}

#[test]
fn chunks_without_id_continue_the_last_block_of_their_kind() {
    let mut t = Transcript::default();
    let now = Instant::now();
    t.push_user("question");
    t.apply(&agent("a", None), now);
    t.apply(&agent("b", None), now);
    t.apply(
        &SessionUpdate::AgentThoughtChunk(ContentChunk::new(text("hmm"))),
        now,
    );
    t.apply(&agent("c", None), now);
    assert_eq!(
        messages(&t),
        [
            (Role::User, "question".into()),
            (Role::Agent, "ab".into()),
            (Role::Thought, "hmm".into()),
            (Role::Agent, "c".into()),
        ]
    );
}

#[test]
fn replayed_user_chunks_make_user_blocks() {
    let mut t = Transcript::default();
    let now = Instant::now();
    let user = |s: &str| SessionUpdate::UserMessageChunk(ContentChunk::new(text(s)));
    t.apply(&user("first "), now);
    t.apply(&user("prompt"), now);
    t.apply(&agent("answer", None), now);
    t.apply(&user("second"), now);
    assert_eq!(
        messages(&t),
        [
            (Role::User, "first prompt".into()),
            (Role::Agent, "answer".into()),
            (Role::User, "second".into()),
        ]
    );
}

#[test]
fn tool_call_lifecycle_with_duration() {
    let mut t = Transcript::default();
    let t0 = Instant::now();
    t.apply(
        &SessionUpdate::ToolCall(
            ToolCall::new("call-1", "bash: ls")
                .kind(ToolKind::Execute)
                .status(ToolCallStatus::Pending),
        ),
        t0,
    );
    assert_eq!(tool(&t, 0).state, ToolState::Pending);
    assert_eq!(tool(&t, 0).duration(), None);

    let update = |fields: ToolCallUpdateFields| {
        SessionUpdate::ToolCallUpdate(ToolCallUpdate::new("call-1", fields))
    };
    // Waiting for permission does not count: the clock starts when it runs.
    t.apply(
        &update(ToolCallUpdateFields::new().status(ToolCallStatus::InProgress)),
        t0 + Duration::from_secs(5),
    );
    assert_eq!(tool(&t, 0).state, ToolState::Running);
    t.apply(
        &update(
            ToolCallUpdateFields::new()
                .status(ToolCallStatus::Completed)
                .content(vec![ToolCallContent::from(text("file.txt\n"))]),
        ),
        t0 + Duration::from_millis(7250),
    );
    let tc = tool(&t, 0);
    assert_eq!(tc.state, ToolState::Done);
    assert_eq!(tc.duration(), Some(Duration::from_millis(2250)));
    assert_eq!(tc.body, [ToolBody::Text("file.txt\n".into())]);
    assert_eq!(tc.kind, ToolKind::Execute);
    assert_eq!(tc.title, "bash: ls");
}

#[test]
fn content_is_replaced_and_updates_for_unknown_calls_create_one() {
    let mut t = Transcript::default();
    let now = Instant::now();
    let update = |fields: ToolCallUpdateFields| {
        SessionUpdate::ToolCallUpdate(ToolCallUpdate::new("late", fields))
    };
    t.apply(
        &update(ToolCallUpdateFields::new().content(vec![ToolCallContent::from(text("one"))])),
        now,
    );
    t.apply(
        &update(
            ToolCallUpdateFields::new()
                .status(ToolCallStatus::Failed)
                .content(vec![ToolCallContent::Diff(
                    Diff::new("/p/a.rs", "new\n").old_text("old\n".to_string()),
                )]),
        ),
        now,
    );
    let tc = tool(&t, 0);
    assert_eq!(tc.title, "tool call");
    assert_eq!(tc.state, ToolState::Failed);
    assert_eq!(
        tc.body,
        [ToolBody::Diff {
            path: "/p/a.rs".into(),
            old: Some("old\n".into()),
            new: "new\n".into()
        }]
    );
    assert_eq!(tc.duration(), Some(Duration::ZERO));
}

#[test]
fn raw_output_is_read_from_string_or_output_field() {
    let mut t = Transcript::default();
    let now = Instant::now();
    let json: SessionUpdate = serde_json::from_value(serde_json::json!({
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "status": "completed",
        "content": [{"type": "terminal", "terminalId": "term-1"}],
        "rawOutput": {"output": "\u{1b}[32mok\u{1b}[0m\nexit 0"}
    }))
    .unwrap();
    t.apply(&json, now);
    let tc = tool(&t, 0);
    assert_eq!(tc.raw_output.as_deref(), Some("ok\nexit 0"));
    assert_eq!(tc.body, [ToolBody::Terminal("term-1".into())]);
}

#[test]
fn a_terminals_live_tail_goes_to_the_call_that_shows_it() {
    let mut t = Transcript::default();
    let json: SessionUpdate = serde_json::from_value(serde_json::json!({
        "sessionUpdate": "tool_call",
        "toolCallId": "c",
        "title": "bash",
        "kind": "execute",
        "status": "in_progress",
        "content": [{"type": "terminal", "terminalId": "term-7"}]
    }))
    .unwrap();
    t.apply(&json, Instant::now());
    let _ = t.take_changes();
    assert!(!t.set_terminal_tail("term-8", vec!["x".into()]));
    assert!(t.set_terminal_tail("term-7", vec!["name?".into()]));
    assert_eq!(tool(&t, 0).terminal_tail, ["name?"]);
    assert_eq!(t.take_changes().0, [0], "the call is laid out again");
    assert!(t.set_terminal_tail("term-7", vec!["name?".into()]));
    assert!(
        t.take_changes().0.is_empty(),
        "an unchanged tail changes nothing"
    );
}

#[test]
fn cancelling_marks_open_calls() {
    let mut t = Transcript::default();
    let t0 = Instant::now();
    t.apply(&SessionUpdate::ToolCall(ToolCall::new("a", "read")), t0);
    t.apply(
        &SessionUpdate::ToolCall(ToolCall::new("b", "write").status(ToolCallStatus::Completed)),
        t0,
    );
    t.end_turn(true, t0 + Duration::from_secs(1));
    assert_eq!(tool(&t, 0).state, ToolState::Cancelled);
    assert_eq!(tool(&t, 1).state, ToolState::Done);
}

#[test]
fn plans_replace_themselves_within_a_turn() {
    let mut t = Transcript::default();
    let now = Instant::now();
    let plan = |status| {
        SessionUpdate::Plan(Plan::new(vec![PlanEntry::new(
            "step",
            PlanEntryPriority::High,
            status,
        )]))
    };
    t.apply(&plan(PlanEntryStatus::Pending), now);
    t.apply(&plan(PlanEntryStatus::Completed), now);
    assert_eq!(t.len(), 1);
    t.begin_turn();
    t.apply(&plan(PlanEntryStatus::Pending), now);
    assert_eq!(t.len(), 2);
}

#[test]
fn session_facts() {
    let mut t = Transcript::default();
    let now = Instant::now();
    t.apply(
        &SessionUpdate::UsageUpdate(UsageUpdate::new(1200, 200_000).cost(Cost::new(0.5, "USD"))),
        now,
    );
    t.apply(
        &SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(vec![
            AvailableCommand::new("review\x1b[2J", "Review the diff"),
        ])),
        now,
    );
    t.apply(
        &SessionUpdate::SessionInfoUpdate(SessionInfoUpdate::new().title("Fix bug".to_string())),
        now,
    );
    assert_eq!(t.len(), 0, "facts are not blocks");
    let usage = t.facts.usage.clone().unwrap();
    assert_eq!((usage.used, usage.size), (1200, 200_000));
    assert_eq!(usage.cost, Some((0.5, "USD".into())));
    assert_eq!(t.facts.commands[0].name, "review␛[2J");
    assert_eq!(t.facts.title.as_deref(), Some("Fix bug"));
    let clear: SessionUpdate = serde_json::from_value(serde_json::json!({
        "sessionUpdate": "session_info_update", "title": null
    }))
    .unwrap();
    t.apply(&clear, now);
    assert_eq!(t.facts.title, None);
}

#[test]
fn notices_and_compaction() {
    let mut t = Transcript::default();
    let now = Instant::now();
    t.apply(
        &SessionUpdate::Notice(Notice::new(NoticeSeverity::Warning, "Rate limited")),
        now,
    );
    t.apply(
        &SessionUpdate::CompactionUpdate(CompactionUpdate::new("c1", CompactionStatus::InProgress)),
        now,
    );
    t.apply(
        &SessionUpdate::CompactionSummaryChunk(CompactionSummaryChunk::new("c1", text("We did"))),
        now,
    );
    t.apply(
        &SessionUpdate::CompactionUpdate(CompactionUpdate::new("c1", CompactionStatus::Completed)),
        now,
    );
    assert_eq!(t.len(), 2);
    match &t.blocks()[1] {
        Block::Compaction(c) => {
            assert_eq!(c.status, CompactionStatus::Completed);
            assert_eq!(c.summary, "We did");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_text_is_sanitised() {
    let mut t = Transcript::default();
    let now = Instant::now();
    t.apply(&agent("\x1b]52;c;ZXZpbA==\x07hi", None), now);
    t.apply(
        &SessionUpdate::ToolCall(
            ToolCall::new("x", "title\x1b[2J\nsecond")
                .content(vec![ToolCallContent::from(text("\x1b[31mred\x1b[0m"))]),
        ),
        now,
    );
    assert_eq!(messages(&t)[0].1, "␛]52;c;ZXZpbA==␇hi");
    assert_eq!(tool(&t, 1).title, "title␛[2J second");
    assert_eq!(tool(&t, 1).body, [ToolBody::Text("red".into())]);
}

#[test]
fn changes_are_reported_once() {
    let mut t = Transcript::default();
    let now = Instant::now();
    t.push_user("q");
    t.apply(&agent("a", None), now);
    t.apply(&agent("b", None), now);
    assert_eq!(t.take_changes(), (vec![0, 1], false));
    assert_eq!(t.take_changes(), (vec![], false));
    t.apply(&agent("c", None), now);
    assert_eq!(t.take_changes(), (vec![1], false));
    // Facts change no block.
    t.apply(&SessionUpdate::UsageUpdate(UsageUpdate::new(1, 2)), now);
    assert_eq!(t.take_changes(), (vec![], false));
    t.clear();
    assert_eq!(t.take_changes(), (vec![], true));
}
