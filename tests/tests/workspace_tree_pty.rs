//! The session tree end to end in a real PTY: `/tree` moves the leaf with a summary of the
//! branch left, and the next request to the scripted model server carries the summary and
//! not the branch; Esc Esc on an empty prompt rewinds to an earlier message.

#![allow(clippy::unwrap_used)] // Helpers here unwrap like the tests they serve.

#[path = "support/acp_client.rs"]
mod acp_client;
#[path = "support/pty.rs"]
mod pty;
#[path = "support/workspace.rs"]
mod workspace;

use march_testkit::Turn;
use workspace::*;

const UP: &[u8] = b"\x1b[A";
const DOWN: &[u8] = b"\x1b[B";

/// Waits for `text` on screen with the turn that wrote it ended (the pane no longer shows
/// the turn at work): moving in the session is refused while a turn runs.
fn wait_answer(m: &pty::PtyMarch, text: &str) {
    m.wait_for(&format!("`{text}` and the turn's end"), |t| {
        t.contains(text) && !t.contains(" working ")
    });
}

/// Every message text of the last request to the model server, joined.
fn last_request(h: &acp_client::Harness) -> String {
    let requests = h.server.requests();
    let body = &requests.last().unwrap().body;
    body["messages"].to_string()
}

#[test]
fn tree_moves_the_leaf_and_the_next_request_carries_the_summary_not_the_branch() {
    let h = tokio_harness(vec![
        Turn::text("Cached it."),
        Turn::text("Added an index."),
        Turn::text("## Goal\nIndex approach tried"),
        Turn::text("Back on the cache."),
    ]);
    let mut m = start(&h);
    m.type_line("make it fast");
    wait_answer(&m, "Cached it.");
    m.type_line("try an index instead");
    wait_answer(&m, "Added an index.");

    m.type_line("/tree");
    m.wait_text("Session tree");
    m.wait_text("◀ here");
    // From the leaf (the second answer) up to the first answer.
    m.send(UP);
    m.send(UP);
    m.send(ENTER);
    m.wait_text("Leave this branch");
    m.send(DOWN);
    m.send(ENTER);
    m.wait_text("the branch you left is summarized");
    m.wait_for("the left branch gone from the pane", |t| {
        !t.contains("Added an index.") && t.contains("Cached it.")
    });
    assert!(
        last_request(&h).contains("try an index instead"),
        "the summary request"
    );

    m.type_line("keep the cache");
    wait_answer(&m, "Back on the cache.");
    let sent = last_request(&h);
    assert!(
        sent.contains("make it fast") && sent.contains("Cached it."),
        "{sent}"
    );
    assert!(sent.contains("Index approach tried"), "the summary: {sent}");
    assert!(
        !sent.contains("try an index instead"),
        "the branch left: {sent}"
    );
    assert!(!sent.contains("Added an index."), "the branch left: {sent}");

    // /fork: the conversation so far goes on in a new pane beside this one.
    m.type_line("/fork");
    m.wait_text("Forked: the conversation so far");
    m.wait_for("the fork's pane showing the conversation", |t| {
        t.matches("keep the cache").count() >= 2
    });
    m.quit();
}

#[test]
fn esc_esc_rewinds_to_a_message_and_restores_the_files_changed_since() {
    let edit = serde_json::json!({
        "path": "notes.txt",
        "edits": [{"oldText": "first", "newText": "second"}]
    });
    let h = tokio_harness(vec![
        Turn::text("Noted."),
        Turn::stream(vec![march_testkit::Event::tool_call(
            "e1",
            "edit",
            &[&edit.to_string()],
        )]),
        Turn::text("Changed it."),
        Turn::text("Kept it."),
    ]);
    let_commands_run_unasked(&h);
    let notes = h.project().join("notes.txt");
    std::fs::write(&notes, "first\n").unwrap();
    let mut m = start(&h);
    m.type_line("remember the notes");
    wait_answer(&m, "Noted.");
    m.type_line("change the notes");
    wait_answer(&m, "Changed it.");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "second\n");

    m.send(ESC);
    m.wait_text("Esc again: go back");
    m.send(ESC);
    m.wait_text("Rewind to one of your messages");
    // The newest message is under the cursor.
    m.send(ENTER);
    m.wait_text("The session changed files since");
    m.wait_text("notes.txt: put back as it was");
    m.send(ENTER);
    m.wait_text("Restored 1 file.");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "first\n");
    m.wait_for("the message back in the editor, its turn gone", |t| {
        t.contains("› change the notes") && !t.contains("Changed it.")
    });

    // Sent again as it is: the model sees the conversation before it, once.
    m.send(ENTER);
    wait_answer(&m, "Kept it.");
    let sent = last_request(&h);
    assert!(sent.contains("remember the notes"), "{sent}");
    assert_eq!(sent.matches("change the notes").count(), 1, "{sent}");
    assert!(!sent.contains("Changed it."), "{sent}");
    m.quit();
}
