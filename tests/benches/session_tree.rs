//! The session tree's cost (issue 22): on a session of 10,000 entries with 50 branches,
//! `/tree` opening (the runner lists the tree over ACP, the pane builds its view and draws it;
//! the whole list, and as the workspace does it, the pane's copy kept current by asking for
//! the entries appended since)
//! and a leaf move without a summary as the workspace makes it (`_march/session/navigate`
//! answered, the branch notification and the replay of what changed applied to a pane that
//! shows the session, the pane drawn), to the newest other branch, to one in the middle of
//! the session, and back to the last leaf (whose conversation the pane holds), against
//! loading the same file (`SessionStore::open` in process, and `session/load` through the
//! runner), interleaved in one run.
//!
//! Run: `cargo bench -p march-e2e --bench session_tree` (about three minutes after the build).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A bench: failing loudly is the point.

#[path = "support/samples.rs"]
mod samples;

#[path = "../tests/support/acp_client.rs"]
mod acp_client;

use samples::report;
use std::time::Instant;

use acp_client::{AcpClient, Harness, within};
use agent_client_protocol::v1::schema::{LoadSessionRequest, SessionId};
use march_core::message::{
    AssistantContent, AssistantMessage, StopReason, TextContent, ToolCall, ToolResultMessage,
    UserContent, UserMessage,
};
use march_core::model::Model;
use march_core::session::{SessionHeader, SessionMessage, SessionStore};
use march_panes::agent::{AgentPane, BranchMove, TreeNode, TreeNodeKind};
use march_panes::highlight::Highlighter;
use march_panes::theme::Theme;
use march_runner::session_tree::{
    HeldConversation, NavigateRequest, SessionTreeRequest, SessionTreeResponse, TreeEntry,
    TreeEntryKind,
};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// Entries in the session.
const ENTRIES: usize = 10_000;
/// Branch points in it.
const BRANCHES: usize = 50;
/// Timed rounds.
const ROUNDS: usize = 30;

fn text(label: &str, chars: usize) -> String {
    let mut s = format!("{label} ");
    while s.len() < chars {
        s.push_str("lorem ipsum dolor sit amet ");
    }
    s
}

fn assistant(content: Vec<AssistantContent>) -> SessionMessage {
    let mut a = AssistantMessage::empty(&Model::openai_compatible("p", "m", "http://127.0.0.1:9"));
    a.content = content;
    a.stop_reason = StopReason::Stop;
    SessionMessage::Assistant(a)
}

/// A session of [`ENTRIES`] entries: turns of a user message, a tool call, its result and an
/// answer; every `ENTRIES / BRANCHES` entries the conversation goes back 40 entries and
/// branches there. Returns the session id, the leaves of the newest and of a middle branch
/// left, and the last leaf.
fn build(h: &Harness) -> (SessionId, String, String, String) {
    let header = SessionHeader::new(h.project().to_string_lossy());
    let mut store = SessionStore::create(&h.sessions_dir(), header).unwrap();
    let mut leaves = Vec::new();
    let mut n = 0;
    while store.entries().len() < ENTRIES {
        n += 1;
        if n % 4 == 1 && store.entries().len() / (ENTRIES / BRANCHES) > leaves.len() {
            let here = store.leaf_id().unwrap().to_string();
            leaves.push(here);
            let back = store.branch_path(None);
            let to = back[back.len().saturating_sub(40)].id.clone();
            store.branch(&to).unwrap();
        }
        let message = match n % 4 {
            1 => SessionMessage::User(UserMessage::text(text(&format!("request {n}"), 160))),
            2 => assistant(vec![AssistantContent::ToolCall(ToolCall {
                id: format!("c{n}"),
                name: "read".into(),
                arguments: serde_json::json!({"path": format!("src/file{n}.rs")}),
                thought_signature: None,
            })]),
            3 => SessionMessage::ToolResult(ToolResultMessage {
                tool_call_id: format!("c{}", n - 1),
                tool_name: "read".into(),
                content: vec![UserContent::text(text("fn main() {}", 1200))],
                details: serde_json::Value::Null,
                is_error: false,
                timestamp: 0,
                usage: None,
            }),
            _ => assistant(vec![AssistantContent::Text(TextContent {
                text: text(&format!("answer {n}"), 600),
                text_signature: None,
            })]),
        };
        store.append_message(message).unwrap();
    }
    let last = store.leaf_id().unwrap().to_string();
    (
        SessionId::new(store.session_id().to_string()),
        leaves[leaves.len() - 1].clone(),
        leaves[BRANCHES / 2].clone(),
        last,
    )
}

fn node(e: TreeEntry) -> TreeNode {
    TreeNode {
        id: e.id,
        parent_id: e.parent_id,
        kind: match e.kind {
            TreeEntryKind::User => TreeNodeKind::User,
            TreeEntryKind::Assistant => TreeNodeKind::Assistant,
            TreeEntryKind::ToolResult => TreeNodeKind::ToolResult,
            _ => TreeNodeKind::Other,
        },
        text: e.text,
        label: e.label,
        at_ms: None,
    }
}

/// The session's tree from its `from`-th entry.
async fn tree_from(client: &AcpClient, id: &SessionId, from: u64) -> SessionTreeResponse {
    client
        .cx
        .send_request(SessionTreeRequest {
            session_id: id.0.to_string(),
            from,
        })
        .block_task()
        .await
        .unwrap()
}

/// Move the leaf to `entry` as the workspace does, and show the move in `pane`: the request
/// (saying which conversation the pane holds), the branch notification and the replay that
/// come before its answer, the pane's view kept, put back or replayed, and drawn.
async fn navigate(
    client: &mut AcpClient,
    id: &SessionId,
    entry: &str,
    pane: &mut AgentPane,
    draw: &mut impl FnMut(&mut AgentPane),
) {
    client
        .cx
        .send_request(NavigateRequest {
            session_id: id.0.to_string(),
            entry_id: entry.to_string(),
            summarize: false,
            instructions: None,
            replace_instructions: false,
            label: None,
            replay_only: false,
            held: pane.held_leaf().map(|leaf| HeldConversation {
                leaf_id: leaf.to_string(),
            }),
        })
        .block_task()
        .await
        .unwrap();
    let note = client.wait_call("_march/session/branch").await;
    let n = |v: &serde_json::Value| v.as_u64().unwrap() as usize;
    let kept = note.get("kept").map(|k| {
        (
            n(&k["userMessages"]),
            n(&k["of"]),
            k["lastUserText"].as_str(),
        )
    });
    let moved = BranchMove {
        kept,
        left: note["previousLeafId"].as_str(),
        leaf: note["leafId"].as_str(),
        held: note["held"] == true,
    };
    assert!(pane.branch_moved(&moved), "the pane kept its view: {note}");
    for update in client.drain() {
        pane.apply(&update);
    }
    draw(pane);
}

async fn load(client: &AcpClient, id: &SessionId, h: &Harness) {
    let sent = client
        .cx
        .send_request(LoadSessionRequest::new(id.clone(), h.project()));
    within("session/load", sent.block_task()).await.unwrap();
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let h = Harness::new(Vec::new()).await;
    let (id, near_leaf, middle_leaf, last_leaf) = build(&h);
    let file = acp_client::file_of(&h.sessions_dir(), &id);
    println!(
        "session: {ENTRIES} entries, {BRANCHES} branches, {:.1} MB",
        std::fs::metadata(&file).unwrap().len() as f64 / 1e6
    );
    let (_runner, mut client) = h.connect().await;
    client.initialize().await;
    load(&client, &id, &h).await;
    // The pane the moves are shown in, showing the session as loaded.
    let mut shown = AgentPane::new("moves");
    for update in client.drain() {
        shown.apply(&update);
    }

    {
        // Where the list's time goes, in this process: made from the store, and taken
        // through JSON values as the ACP crate passes messages.
        let (store, _) = SessionStore::open(&file).unwrap();
        let t = Instant::now();
        let listing = march_runner::agent::bench::tree_listing(&store);
        let made = t.elapsed();
        let t = Instant::now();
        let value = serde_json::to_value(&listing).unwrap();
        let line = serde_json::to_string(&value).unwrap();
        let sent = t.elapsed();
        let t = Instant::now();
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        let back: march_runner::session_tree::SessionTreeResponse =
            serde_json::from_value(value).unwrap();
        let read = t.elapsed();
        println!(
            "tree listing: made {made:?}, through a value to text {sent:?}, back {read:?}; {} \
             entries, {:.1} MB",
            back.entries.len(),
            line.len() as f64 / 1e6
        );
    }
    let theme = Theme::default();
    let hl = Highlighter::new();
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let (mut open_file, mut acp_load) = (Vec::new(), Vec::new());
    let (mut first_open, mut kept_open, mut view_alone) = (Vec::new(), Vec::new(), Vec::new());
    let (mut near_move, mut far_move, mut back_move) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let t = Instant::now();
        let (store, _) = SessionStore::open(&file).unwrap();
        open_file.push(t.elapsed());
        drop(store);

        let t = Instant::now();
        load(&client, &id, &h).await;
        acp_load.push(t.elapsed());
        client.drain();

        // A pane that kept nothing: the whole list. Then, as after a turn, one that kept it:
        // only what was appended since (the moves below append their `leaf` entries).
        let mut pane = AgentPane::new("bench");
        let mut draw = |pane: &mut AgentPane| {
            terminal
                .draw(|f| {
                    let area = f.area();
                    pane.render(area, f.buffer_mut(), &theme, &hl, true);
                })
                .unwrap();
        };
        for samples in [&mut first_open, &mut kept_open] {
            let t = Instant::now();
            let tree = within("tree", tree_from(&client, &id, pane.tree_known())).await;
            let t_view = Instant::now();
            let labels: Vec<(String, String)> =
                tree.labels.into_iter().map(|l| (l.id, l.label)).collect();
            let nodes: Vec<TreeNode> = tree.entries.into_iter().map(node).collect();
            let from = usize::try_from(tree.from).unwrap();
            pane.update_tree(from, nodes, &labels, tree.leaf_id);
            assert!(pane.open_kept_tree(false));
            draw(&mut pane);
            samples.push(t.elapsed());
            view_alone.push(t_view.elapsed());
            pane.close_tree();
        }

        // There and back: to the other branch, then to the last leaf again, whose
        // conversation the pane holds by then.
        let (to, samples) = if round % 2 == 0 {
            (&near_leaf, &mut near_move)
        } else {
            (&middle_leaf, &mut far_move)
        };
        for (target, samples) in [(to, &mut *samples), (&last_leaf, &mut back_move)] {
            let t = Instant::now();
            let moving = navigate(&mut client, &id, target, &mut shown, &mut draw);
            within("navigate", moving).await;
            samples.push(t.elapsed());
        }
    }
    report("load the file (SessionStore::open)", open_file);
    report("load the session (session/load over ACP)", acp_load);
    report("/tree opens, the whole list asked for", first_open);
    report("/tree opens, the pane's copy kept current", kept_open);
    report("  of which the view built and drawn", view_alone);
    report("move to the newest other branch", near_move);
    report("move to a branch in the middle", far_move);
    report("move back to the last leaf (held)", back_move);
    client.close().await;
}
