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
    m.wait_text("Cached it.");
    m.type_line("try an index instead");
    m.wait_text("Added an index.");

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
    m.wait_text("Back on the cache.");
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
    m.quit();
}
