//! The session tree through a real runner (`_march/session/tree`, `navigate`, `label`):
//! moving the leaf with and without pi's branch summary, what the next request to the
//! scripted model server carries, what the session file records, and a move refused while a
//! turn runs or when the summary fails.

#[path = "support/acp_client.rs"]
mod acp_client;

use acp_client::*;
use agent_client_protocol::v1::schema::SessionId;
use march_runner::session_tree::{
    ForkSessionRequest, ForkSessionResponse, HeldConversation, LabelEntryRequest,
    LabelEntryResponse, NavigateRequest, NavigateResponse, SessionTreeRequest, SessionTreeResponse,
    TreeEntryKind,
};
use march_testkit::{Script, Turn};
use serde_json::Value;

async fn tree(client: &AcpClient, id: &SessionId) -> SessionTreeResponse {
    let sent = client.cx.send_request(SessionTreeRequest {
        session_id: id.0.to_string(),
        from: 0,
    });
    within("session tree", sent.block_task())
        .await
        .unwrap_or_else(|e| panic!("tree: {e:?}"))
}

async fn navigate(
    client: &AcpClient,
    id: &SessionId,
    entry: &str,
    summarize: bool,
    label: Option<&str>,
) -> Result<NavigateResponse, agent_client_protocol::Error> {
    let sent = client.cx.send_request(NavigateRequest {
        session_id: id.0.to_string(),
        entry_id: entry.to_string(),
        summarize,
        instructions: None,
        replace_instructions: false,
        label: label.map(str::to_string),
        replay_only: false,
        held: None,
    });
    within("navigate", sent.block_task()).await
}

/// The id of the first tree entry of `kind` whose preview starts with `text`.
fn entry(tree: &SessionTreeResponse, kind: TreeEntryKind, text: &str) -> String {
    tree.entries
        .iter()
        .find(|e| e.kind == kind && e.text.starts_with(text))
        .unwrap_or_else(|| panic!("no {kind:?} `{text}` in {tree:#?}"))
        .id
        .clone()
}

/// The text of every message of a request to the model, joined.
fn request_text(body: &Value) -> String {
    request_messages(body)
        .iter()
        .map(|m| m["content"].to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The branch notification's params and the replayed messages after it.
async fn branch_and_replay(client: &mut AcpClient) -> (Value, Vec<String>) {
    let note = client.wait_call("_march/session/branch").await;
    let shown = client.drain().iter().filter_map(chunk_text).collect();
    (note, shown)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaving_a_branch_with_a_summary_sends_the_summary_and_not_the_branch() {
    let h = Harness::new(vec![
        Turn::text("Cached it."),
        Turn::text("Added an index."),
        Turn::text("## Goal\nIndex approach was tried"),
        Turn::text("Back on the cache."),
    ])
    .await;
    let (_runner, mut client) = h.connect().await;
    let init = client.initialize().await;
    let caps = serde_json::to_value(&init.agent_capabilities).unwrap_or_default();
    assert_eq!(
        caps["_meta"]["march"]["tree"]["navigate"],
        "_march/session/navigate"
    );
    let id = client.new_session(&h.project()).await.session_id;
    prompt_ok(&client, &id, "make it fast").await;
    prompt_ok(&client, &id, "try an index instead").await;

    let before = tree(&client, &id).await;
    let a1 = entry(&before, TreeEntryKind::Assistant, "Cached it.");
    let a2 = entry(&before, TreeEntryKind::Assistant, "Added an index.");
    assert_eq!(before.leaf_id.as_deref(), Some(a2.as_str()));
    client.drain();

    let moved = navigate(&client, &id, &a1, true, Some("cache path"))
        .await
        .unwrap_or_else(|e| panic!("navigate: {e:?}"));
    assert_eq!(moved.editor_text, None);
    let summary_id = moved
        .summary_id
        .clone()
        .unwrap_or_else(|| panic!("no summary"));
    // The client keeps the first turn; the summary is no message of the conversation.
    let (note, shown) = branch_and_replay(&mut client).await;
    assert_eq!(
        note["kept"],
        serde_json::json!({"userMessages": 1, "of": 2, "lastUserText": "make it fast"})
    );
    assert!(shown.is_empty(), "{shown:?}");

    // The summary request saw the branch left, and only it.
    let requests = h.server.requests();
    assert_eq!(requests.len(), 3);
    let asked = request_text(&requests[2].body);
    assert!(asked.contains("try an index instead") && asked.contains("Added an index."));
    assert!(!asked.contains("make it fast"), "{asked}");

    prompt_ok(&client, &id, "keep the cache then").await;
    let next = request_text(&h.server.requests()[3].body);
    assert!(
        next.contains("make it fast") && next.contains("Cached it."),
        "{next}"
    );
    assert!(
        next.contains("Index approach was tried"),
        "the summary: {next}"
    );
    assert!(
        !next.contains("try an index instead"),
        "the branch left: {next}"
    );
    assert!(!next.contains("Added an index."), "the branch left: {next}");

    // The tree shows the summary, labelled, as a child of the answer it continues from.
    let after = tree(&client, &id).await;
    let summary = after
        .entries
        .iter()
        .find(|e| e.id == summary_id)
        .unwrap_or_else(|| panic!("no summary entry"));
    assert_eq!(summary.kind, TreeEntryKind::BranchSummary);
    assert_eq!(summary.parent_id.as_deref(), Some(a1.as_str()));
    assert_eq!(summary.label.as_deref(), Some("cache path"));
    assert!(
        summary.text.contains("Index approach was tried"),
        "{summary:?}"
    );

    // In the file, the summary has the shape pi writes.
    let file = std::fs::read_to_string(file_of(&h.sessions_dir(), &id)).unwrap_or_default();
    let line: Value = file
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap_or_default())
        .find(|v| v["type"] == "branch_summary")
        .unwrap_or_else(|| panic!("no branch_summary line"));
    let keys: Vec<&String> = line
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        [
            "type",
            "id",
            "parentId",
            "timestamp",
            "fromId",
            "summary",
            "details"
        ]
    );
    assert_eq!(line["fromId"], Value::String(a1.clone()));
    assert_eq!(line["parentId"], Value::String(a1));
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn choosing_a_user_message_returns_its_text_and_the_move_survives_a_reload() {
    let h = Harness::new(vec![
        Turn::text("First answer."),
        Turn::text("Second answer."),
        Turn::text("Other answer."),
    ])
    .await;
    let (runner, mut client) = h.connect().await;
    client.initialize().await;
    let id = client.new_session(&h.project()).await.session_id;
    prompt_ok(&client, &id, "first").await;
    prompt_ok(&client, &id, "second").await;
    let before = tree(&client, &id).await;
    let u2 = entry(&before, TreeEntryKind::User, "second");
    let a1 = entry(&before, TreeEntryKind::Assistant, "First answer.");
    client.drain();

    let moved = navigate(&client, &id, &u2, false, None)
        .await
        .unwrap_or_else(|e| panic!("navigate: {e:?}"));
    assert_eq!(moved.editor_text.as_deref(), Some("second"));
    assert_eq!(moved.leaf_id.as_deref(), Some(a1.as_str()));
    assert_eq!(moved.summary_id, None);
    // The client keeps what it shows before the second message: nothing to replay.
    let (note, shown) = branch_and_replay(&mut client).await;
    assert_eq!(note["kept"]["userMessages"], 1, "{note}");
    assert!(shown.is_empty(), "{shown:?}");
    assert_eq!(h.server.requests().len(), 2, "no summary was asked for");

    // The move is in the file: a new runner loads the session where the user went.
    client.close().await;
    drop(runner);
    let (_runner, mut client) = h.connect().await;
    client.initialize().await;
    let sent = client
        .cx
        .send_request(agent_client_protocol::v1::schema::LoadSessionRequest::new(
            id.clone(),
            h.project(),
        ));
    within("load", sent.block_task())
        .await
        .unwrap_or_else(|e| panic!("load: {e:?}"));
    let replay: Vec<String> = client.drain().iter().filter_map(chunk_text).collect();
    assert_eq!(replay, ["first", "First answer."]);

    prompt_ok(&client, &id, "other").await;
    let next = request_text(&h.server.requests()[2].body);
    assert!(next.contains("first") && next.contains("other"), "{next}");
    assert!(!next.contains("Second answer."), "{next}");
    let labelled: LabelEntryResponse = within(
        "label",
        client
            .cx
            .send_request(LabelEntryRequest {
                session_id: id.0.to_string(),
                entry_id: a1.clone(),
                label: Some("good point".into()),
            })
            .block_task(),
    )
    .await
    .unwrap_or_else(|e| panic!("label: {e:?}"));
    assert_eq!(labelled, LabelEntryResponse {});
    let after = tree(&client, &id).await;
    let a1_entry = after.entries.iter().find(|e| e.id == a1);
    assert_eq!(
        a1_entry.and_then(|e| e.label.as_deref()),
        Some("good point")
    );

    // A fork copies the path so far into a session of its own, which names its parent.
    let forked: ForkSessionResponse = within(
        "fork",
        client
            .cx
            .send_request(ForkSessionRequest {
                session_id: id.0.to_string(),
            })
            .block_task(),
    )
    .await
    .unwrap_or_else(|e| panic!("fork: {e:?}"));
    let header = std::fs::read_to_string(&forked.path).unwrap_or_default();
    let header: Value =
        serde_json::from_str(header.lines().next().unwrap_or_default()).unwrap_or_default();
    let parent = file_of(&h.sessions_dir(), &id);
    assert_eq!(
        header["parentSession"],
        Value::String(parent.display().to_string())
    );
    let fork_id = SessionId::new(forked.session_id.clone());
    client.drain();
    let sent = client
        .cx
        .send_request(agent_client_protocol::v1::schema::LoadSessionRequest::new(
            fork_id.clone(),
            h.project(),
        ));
    within("load the fork", sent.block_task())
        .await
        .unwrap_or_else(|e| panic!("load fork: {e:?}"));
    let replay: Vec<String> = client.drain().iter().filter_map(chunk_text).collect();
    assert_eq!(replay, ["first", "First answer.", "other", "Other answer."]);
    let fork_tree = tree(&client, &fork_id).await;
    let labelled = fork_tree.entries.iter().find(|e| e.id == a1);
    assert_eq!(
        labelled.and_then(|e| e.label.as_deref()),
        Some("good point")
    );
    assert!(
        !fork_tree
            .entries
            .iter()
            .any(|e| e.text.starts_with("Second answer."))
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_is_refused_while_a_turn_runs_and_a_failed_summary_moves_nothing() {
    let h = Harness::with_script(Script::new(vec![
        Turn::text("Done."),
        Turn::stream(vec![bash_call("c1", "true")]),
        Turn::status(400),
    ]))
    .await;
    let (_runner, mut client) = h.connect().await;
    client.initialize().await;
    let id = client.new_session(&h.project()).await.session_id;
    prompt_ok(&client, &id, "one").await;
    let a1 = entry(&tree(&client, &id).await, TreeEntryKind::Assistant, "Done.");

    // A turn waits on a permission: the move is refused, the turn goes on.
    let running = client.prompt(&id, "run it");
    let (_request, responder) = client.wait_permission().await;
    let refused = navigate(&client, &id, &a1, false, None).await;
    let error = refused
        .err()
        .unwrap_or_else(|| panic!("a move during a turn"));
    assert!(error.message.contains("a turn is running"), "{error:?}");
    cancel_permission(responder);
    within("the turn", running).await.ok();

    // The summary request fails: the leaf stays and nothing is written.
    let before = tree(&client, &id).await;
    let failed = navigate(&client, &id, &a1, true, None).await;
    let error = failed
        .err()
        .unwrap_or_else(|| panic!("a move without its summary"));
    assert!(error.message.contains("not summarised"), "{error:?}");
    let after = tree(&client, &id).await;
    assert_eq!(after, before);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_replays_only_what_changed_after_the_shared_start() {
    let h = Harness::new(vec![
        Turn::text("One."),
        Turn::text("Two."),
        Turn::text("Three."),
    ])
    .await;
    let (_runner, mut client) = h.connect().await;
    client.initialize().await;
    let id = client.new_session(&h.project()).await.session_id;
    for text in ["first", "second", "third"] {
        prompt_ok(&client, &id, text).await;
    }
    let u3 = entry(&tree(&client, &id).await, TreeEntryKind::User, "third");
    client.drain();
    let moved = navigate(&client, &id, &u3, false, None)
        .await
        .unwrap_or_else(|e| panic!("navigate: {e:?}"));
    assert_eq!(moved.editor_text.as_deref(), Some("third"));
    let (note, shown) = branch_and_replay(&mut client).await;
    let left_from = note.clone();
    // Up the same path: the client keeps what it shows before the third message, and
    // nothing is replayed.
    assert_eq!(
        note["kept"],
        serde_json::json!({"userMessages": 2, "of": 3, "lastUserText": "second"})
    );
    assert!(shown.is_empty(), "{shown:?}");

    // A client that cannot keep its view asks for the whole path.
    let sent = client.cx.send_request(NavigateRequest {
        session_id: id.0.to_string(),
        entry_id: String::new(),
        summarize: false,
        instructions: None,
        replace_instructions: false,
        label: None,
        replay_only: true,
        held: None,
    });
    let again = within("replay", sent.block_task())
        .await
        .unwrap_or_else(|e| panic!("replay: {e:?}"));
    assert_eq!(again.leaf_id, moved.leaf_id);
    let (note, shown) = branch_and_replay(&mut client).await;
    assert!(note.get("kept").is_none(), "{note}");
    assert_eq!(shown, ["first", "One.", "second", "Two."]);

    // Back down to the third turn: replayed, since the client says it holds another leaf's
    // conversation. Up again, and down with the third turn's held: nothing is replayed.
    let a3 = entry(
        &tree(&client, &id).await,
        TreeEntryKind::Assistant,
        "Three.",
    );
    assert_eq!(left_from["previousLeafId"], a3.as_str());
    let back = |held: &str| NavigateRequest {
        session_id: id.0.to_string(),
        entry_id: a3.clone(),
        summarize: false,
        instructions: None,
        replace_instructions: false,
        label: None,
        replay_only: false,
        held: Some(HeldConversation {
            leaf_id: held.to_string(),
        }),
    };
    let sent = client.cx.send_request(back("elsewhere"));
    within("down", sent.block_task())
        .await
        .unwrap_or_else(|e| panic!("down: {e:?}"));
    let (note, shown) = branch_and_replay(&mut client).await;
    assert!(note.get("held").is_none(), "{note}");
    assert_eq!(shown, ["third", "Three."]);
    navigate(&client, &id, &u3, false, None)
        .await
        .unwrap_or_else(|e| panic!("up: {e:?}"));
    branch_and_replay(&mut client).await;
    let sent = client.cx.send_request(back(&a3));
    within("back", sent.block_task())
        .await
        .unwrap_or_else(|e| panic!("back: {e:?}"));
    let (note, shown) = branch_and_replay(&mut client).await;
    assert_eq!(note["held"], true, "{note}");
    assert!(shown.is_empty(), "{shown:?}");
    client.close().await;
}
