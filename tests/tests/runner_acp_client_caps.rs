//! Client capabilities used when offered: edits and writes handed to the client with
//! `fs/write_text_file`, bash run in a client-owned terminal (`terminal/*`). The test client
//! really writes the files and really runs the commands. Without the capabilities the tools
//! run locally (`runner_acp.rs`).

#[path = "support/acp_client.rs"]
mod acp_client;

use acp_client::*;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, FileSystemCapabilities, PermissionOptionKind,
    SessionUpdate, StopReason, ToolCallStatus,
};
use march_testkit::{Event, Turn};
use serde_json::{Value, json};

fn offering_writes() -> ClientCapabilities {
    ClientCapabilities::new().fs(FileSystemCapabilities::new().write_text_file(true))
}

fn offering_terminal() -> ClientCapabilities {
    ClientCapabilities::new().terminal(true)
}

/// The text of the tool result for `id` in the messages a model request carried.
fn tool_result(body: &Value, id: &str) -> String {
    request_messages(body)
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .unwrap_or_else(|| panic!("no result for {id} in {body}"))
}

fn timed_bash(id: &str, command: &str, timeout: u64) -> Event {
    Event::tool_call(
        id,
        "bash",
        &[&json!({ "command": command, "timeout": timeout }).to_string()],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_and_edits_go_through_the_client_after_permission() {
    let edit = json!({
        "path": "notes/hello.txt",
        "edits": [{"oldText": "there", "newText": "there, friend"}]
    });
    let h = Harness::new(vec![
        Turn::stream(vec![write_call("call_1", "notes/hello.txt", "hi there")]),
        Turn::stream(vec![Event::tool_call(
            "call_2",
            "edit",
            &[&edit.to_string()],
        )]),
        Turn::stream(vec![write_call("call_3", "refuse.txt", "nope")]),
        Turn::text("Done."),
    ])
    .await;
    let project = h.project();
    let (mut runner, mut client) = h.connect_offering(offering_writes()).await;
    let session = client.new_session(&project).await;
    let prompt = client.prompt(&session.session_id, "write, then edit");

    // Nothing reaches the client before the user allowed it.
    let (request, responder) = client.wait_permission().await;
    assert_eq!(&*request.tool_call.tool_call_id.0, "call_1");
    assert!(client.calls.is_empty(), "{:?}", client.calls);
    choose(&request, responder, PermissionOptionKind::AllowAlways);
    let write = client.wait_call("fs/write_text_file").await;
    assert_eq!(write["sessionId"], json!(session.session_id));
    assert_eq!(write["path"], json!(project.join("notes/hello.txt")));
    assert_eq!(write["content"], "hi there");
    let done = client
        .wait_update(|u| is_status(u, ToolCallStatus::Completed))
        .await;
    let done = serde_json::to_value(&done).unwrap();
    assert_eq!(done["content"][0]["type"], "diff");
    assert_eq!(done["content"][0]["newText"], "hi there");

    // The edit asks on its own, then hands over the whole new text.
    let (request, responder) = client.wait_permission().await;
    assert_eq!(&*request.tool_call.tool_call_id.0, "call_2");
    choose(&request, responder, PermissionOptionKind::AllowOnce);
    let write = client.wait_call("fs/write_text_file").await;
    assert_eq!(write["path"], json!(project.join("notes/hello.txt")));
    assert_eq!(write["content"], "hi there, friend");

    // "Always" covers the next write; the client refuses it, and nothing is written here.
    let write = client.wait_call("fs/write_text_file").await;
    assert_eq!(write["path"], json!(project.join("refuse.txt")));
    let response = within("the prompt response", prompt)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    assert!(!project.join("refuse.txt").exists());
    assert_eq!(
        std::fs::read_to_string(project.join("notes/hello.txt")).unwrap(),
        "hi there, friend"
    );
    client.drain();
    assert_eq!(
        client.call_methods(),
        [
            "fs/write_text_file",
            "fs/write_text_file",
            "fs/write_text_file"
        ]
    );

    // The model saw each outcome.
    let requests = h.server.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(
        tool_result(&requests[1].body, "call_1"),
        "Successfully wrote 8 bytes to notes/hello.txt"
    );
    assert_eq!(
        tool_result(&requests[2].body, "call_2"),
        "Successfully replaced 1 block(s) in notes/hello.txt."
    );
    let refused = tool_result(&requests[3].body, "call_3");
    assert_eq!(
        refused,
        format!(
            "Cannot write {}: the client could not write it (the user keeps this file read-only)",
            project.join("refuse.txt").display()
        )
    );
    // Sessions hold the connection for their writes; the runner still ends with stdin.
    client.close().await;
    let status = within("the runner to exit", runner.child.wait())
        .await
        .unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_runs_in_a_client_terminal_shown_in_the_tool_call() {
    let command = "touch ran.txt; echo out; echo err >&2; exit 3";
    let h = Harness::new(vec![
        Turn::stream(vec![bash_call("call_1", command)]),
        Turn::text("Seen."),
    ])
    .await;
    let project = h.project();
    let (_runner, mut client) = h.connect_offering(offering_terminal()).await;
    let session = client.new_session(&project).await;
    let prompt = client.prompt(&session.session_id, "run it");

    let (request, responder) = client.wait_permission().await;
    assert!(client.calls.is_empty(), "nothing runs before the answer");
    choose(&request, responder, PermissionOptionKind::AllowOnce);
    let create = client.wait_call("terminal/create").await;
    assert_eq!(create["sessionId"], json!(session.session_id));
    // Confined (workspace-write in ask mode): March's launcher runs the shell.
    assert_eq!(
        create["command"],
        json!(march_e2e::march_bin().display().to_string())
    );
    assert_eq!(
        create["args"],
        json!([
            "sandbox",
            "--mode",
            "workspace-write",
            "--write",
            project,
            "--",
            "bash",
            "-c",
            command
        ])
    );
    assert_eq!(create["cwd"], json!(project));
    assert_eq!(create["outputByteLimit"], 1024 * 1024);

    let shown = client
        .wait_update(
            |u| matches!(u, SessionUpdate::ToolCallUpdate(c) if c.fields.content.is_some()),
        )
        .await;
    let shown = serde_json::to_value(&shown).unwrap();
    assert_eq!(shown["toolCallId"], "call_1");
    assert_eq!(
        shown["content"],
        json!([{"type": "terminal", "terminalId": "term-1"}])
    );

    let response = within("the prompt response", prompt)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    client.drain();
    assert_eq!(
        client.call_methods(),
        [
            "terminal/create",
            "terminal/wait_for_exit",
            "terminal/output",
            "terminal/release"
        ]
    );
    assert!(
        client.calls[1..]
            .iter()
            .all(|(_, p)| p["terminalId"] == "term-1")
    );
    assert_eq!(client.host.open_terminals(), 0);
    // The command really ran, in the project.
    assert!(project.join("ran.txt").exists());

    // The client keeps showing the terminal; its text is not repeated as content.
    let seen: Vec<String> = client.updates.iter().map(|n| describe(&n.update)).collect();
    assert_eq!(
        seen,
        [
            "available_commands_update",
            // The first prompt titles the session.
            "session_info_update",
            "tool_call",
            "usage_update",
            "tool_call_update in_progress",
            "tool_call_update",
            "tool_call_update failed",
            "agent_message_chunk",
            "usage_update",
        ]
    );
    let last = client
        .updates
        .iter()
        .rev()
        .find(|n| matches!(n.update, SessionUpdate::ToolCallUpdate(_)))
        .unwrap();
    let last = serde_json::to_value(&last.update).unwrap();
    assert_eq!(
        last["content"],
        json!([{"type": "terminal", "terminalId": "term-1"}])
    );
    let raw = last["rawOutput"]["output"].as_str().unwrap();
    assert!(raw.ends_with("Command exited with code 3"), "{raw}");

    // The model read the output and the exit code.
    let requests = h.server.requests();
    let result = tool_result(&requests[1].body, "call_1");
    assert!(
        result.contains("out\n") && result.contains("err\n"),
        "{result}"
    );
    assert!(
        result.ends_with("\n\nCommand exited with code 3"),
        "{result}"
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_kills_the_client_terminal_then_releases_it() {
    let h = Harness::new(vec![
        Turn::stream(vec![timed_bash("call_1", "echo started; sleep 600", 1)]),
        Turn::text("Too slow."),
    ])
    .await;
    let project = h.project();
    let (_runner, mut client) = h.connect_offering(offering_terminal()).await;
    let session = client.new_session(&project).await;
    set_option(&client, &session.session_id, "permissions", "yolo")
        .await
        .unwrap();
    let prompt = client.prompt(&session.session_id, "run it");
    let response = within("the prompt response", prompt)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    client.drain();
    assert_eq!(
        client.call_methods(),
        [
            "terminal/create",
            "terminal/wait_for_exit",
            "terminal/kill",
            "terminal/output",
            "terminal/release"
        ]
    );
    assert_eq!(client.host.open_terminals(), 0);
    let requests = h.server.requests();
    let result = tool_result(&requests[1].body, "call_1");
    assert_eq!(result, "started\n\n\nCommand timed out after 1 seconds");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_kills_and_releases_the_terminal_before_the_turn_answers() {
    let h = Harness::new(vec![Turn::stream(vec![bash_call(
        "call_1",
        "echo started; sleep 600",
    )])])
    .await;
    let project = h.project();
    let (_runner, mut client) = h.connect_offering(offering_terminal()).await;
    let session = client.new_session(&project).await;
    set_option(&client, &session.session_id, "permissions", "yolo")
        .await
        .unwrap();
    let prompt = client.prompt(&session.session_id, "run it");
    client
        .wait_update(
            |u| matches!(u, SessionUpdate::ToolCallUpdate(c) if c.fields.content.is_some()),
        )
        .await;
    client.wait_call("terminal/wait_for_exit").await;
    client
        .cx
        .send_notification(CancelNotification::new(session.session_id.clone()))
        .unwrap();
    let response = within("the cancelled prompt", prompt)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(response.stop_reason, StopReason::Cancelled);
    // Everything the runner asked before answering has been seen by now.
    client.drain();
    assert_eq!(
        client.call_methods(),
        [
            "terminal/create",
            "terminal/wait_for_exit",
            "terminal/kill",
            "terminal/output",
            "terminal/release"
        ]
    );
    assert_eq!(client.host.open_terminals(), 0);
    let last = client
        .updates
        .iter()
        .rev()
        .find(|n| matches!(n.update, SessionUpdate::ToolCallUpdate(_)))
        .unwrap();
    let last = serde_json::to_value(&last.update).unwrap();
    assert_eq!(last["status"], "failed");
    assert_eq!(last["content"][0]["type"], "terminal");
    client.close().await;
}
