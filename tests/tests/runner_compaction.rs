//! Compaction end to end through `march runner`: automatic when a session nears the model's
//! window, on a context-overflow error followed by one retry, and by `/compact`; the summary
//! requests seen at the scripted model server and the `compaction` entry read back by the
//! pi-format reader.

// Helpers here unwrap like the tests they serve (clippy only exempts #[test] functions).
#![allow(clippy::unwrap_used)]

#[path = "support/acp_client.rs"]
mod acp_client;

use acp_client::*;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ClientSessionCapabilities, CompactionCapabilities, CompactionStatus,
    SessionId, SessionUpdate, StopReason,
};
use march_core::compaction::SUMMARIZATION_SYSTEM_PROMPT;
use march_core::session::{EntryKind, SessionStore};
use march_testkit::{ScriptUsage, Turn};
use serde_json::Value;

/// Give model `m` a window of `window` tokens (0 keeps the default) and set `[compaction]`.
fn configure(h: &Harness, window: u64, reserve: u64, keep: u64) {
    let path = h.march_home().join("config.toml");
    let mut config = std::fs::read_to_string(&path).unwrap();
    if window > 0 {
        config = config.replacen(
            "id = \"m\"\n",
            &format!("id = \"m\"\ncontext_window = {window}\n"),
            1,
        );
    }
    config.push_str(&format!(
        "\n[compaction]\nreserve_tokens = {reserve}\nkeep_recent_tokens = {keep}\n"
    ));
    std::fs::write(&path, config).unwrap();
}

fn usage(input: u64) -> ScriptUsage {
    ScriptUsage {
        input,
        output: 50,
        cache_read: 0,
        cache_write: 0,
    }
}

/// A prompt of about `tokens` estimated tokens (4 characters each), tagged so requests can
/// be told apart.
fn long_prompt(tag: &str, tokens: usize) -> String {
    format!(
        "{tag}: {}",
        format!("{tag} ").repeat(tokens * 4 / (tag.len() + 1))
    )
}

async fn prompt(client: &AcpClient, id: &SessionId, text: &str) -> StopReason {
    within("prompt", client.prompt(id, text))
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("prompt failed: {e}"))
        .stop_reason
}

fn system_prompt(body: &Value) -> String {
    let messages = request_messages(body);
    messages
        .iter()
        .find(|m| m["role"] == "system")
        .map(|m| m["content"].to_string())
        .unwrap_or_default()
}

fn messages_text(body: &Value) -> String {
    serde_json::to_string(&request_messages(body)).unwrap()
}

/// The first user message a request carried, as text.
fn first_user(body: &Value) -> String {
    request_messages(body)
        .iter()
        .find(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .unwrap_or_default()
}

fn compactions(store: &SessionStore) -> Vec<(String, String)> {
    store
        .entries()
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Compaction(c) => Some((c.summary.clone(), c.first_kept_entry_id.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_nearing_the_window_compacts_automatically() {
    let h = Harness::new(vec![
        Turn::text("Answer one.").with_usage(usage(900)),
        // 2400 + 50 reported tokens pass 3000 - 1000: compaction after this run.
        Turn::text("Answer two.").with_usage(usage(2400)),
        Turn::text("## Goal\nSUMMARY-ONE: parse every alpha."),
        Turn::text("Answer three.").with_usage(usage(700)),
    ])
    .await;
    configure(&h, 3000, 1000, 200);
    let caps = ClientCapabilities::new()
        .session(ClientSessionCapabilities::new().compaction(CompactionCapabilities::new()));
    let (_runner, mut client) = h.connect_offering(caps).await;
    let id = client.new_session(&h.project()).await.session_id;
    assert_eq!(
        prompt(&client, &id, &long_prompt("alpha", 300)).await,
        StopReason::EndTurn
    );
    assert_eq!(
        h.server.requests().len(),
        1,
        "no compaction below the threshold"
    );
    assert_eq!(
        prompt(&client, &id, &long_prompt("beta", 300)).await,
        StopReason::EndTurn
    );

    // The summary request: the summariser's system prompt, the older turn only.
    let requests = h.server.requests();
    assert_eq!(requests.len(), 3);
    let summary_request = &requests[2].body;
    assert!(
        system_prompt(summary_request).contains("context summarization assistant"),
        "{summary_request}"
    );
    assert!(SUMMARIZATION_SYSTEM_PROMPT.contains("context summarization assistant"));
    let asked = first_user(summary_request);
    assert!(
        asked.contains("<conversation>") && asked.contains("alpha alpha"),
        "{asked}"
    );
    assert!(
        asked.contains("## Goal") && !asked.contains("beta beta"),
        "{asked}"
    );

    // The client saw it happen, summary included.
    let updates: Vec<SessionUpdate> = client.drain();
    let statuses: Vec<CompactionStatus> = updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::CompactionUpdate(c) => Some(c.status.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        statuses,
        vec![CompactionStatus::InProgress, CompactionStatus::Completed]
    );
    let completed = serde_json::to_string(&updates).unwrap();
    assert!(completed.contains("SUMMARY-ONE"), "{completed}");

    // The next run starts from the summary and the kept turn, not the old one.
    assert_eq!(
        prompt(&client, &id, "third question").await,
        StopReason::EndTurn
    );
    let requests = h.server.requests();
    let next = &requests[3].body;
    assert!(first_user(next).contains("SUMMARY-ONE"), "{next}");
    let text = messages_text(next);
    assert!(
        text.contains("beta beta") && !text.contains("alpha alpha"),
        "{text}"
    );
    client.close().await;

    // On disk: a pi `compaction` entry, read back by the pi-format reader.
    let (store, report) = SessionStore::open(&file_of(&h.sessions_dir(), &id)).unwrap();
    assert!(report.is_clean(), "{report:?}");
    let found = compactions(&store);
    assert_eq!(found.len(), 1);
    assert!(found[0].0.contains("SUMMARY-ONE"));
    let kept = store.entry(&found[0].1).unwrap();
    let EntryKind::Message(kept) = &kept.kind else {
        panic!("first kept entry is not a message");
    };
    assert_eq!(kept.role(), "user");
    let context = store.context().llm_messages();
    assert!(
        serde_json::to_string(&context[0])
            .unwrap()
            .contains("SUMMARY-ONE")
    );

    // Loading replays the compaction to a client that takes them.
    let caps = ClientCapabilities::new()
        .session(ClientSessionCapabilities::new().compaction(CompactionCapabilities::new()));
    let (_runner, mut client) = h.connect_offering(caps).await;
    let sent = client
        .cx
        .send_request(agent_client_protocol::v1::schema::LoadSessionRequest::new(
            id.clone(),
            h.project(),
        ))
        .block_task();
    within("session/load", sent).await.unwrap();
    let replayed = client.drain();
    assert!(
        replayed
            .iter()
            .any(|u| matches!(u, SessionUpdate::CompactionUpdate(c)
            if c.status == CompactionStatus::Completed)),
        "{replayed:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_context_overflow_compacts_then_retries_once() {
    let overflow = r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#;
    let h = Harness::new(vec![
        Turn::text("Answer one."),
        Turn::status(400).with_body(overflow),
        Turn::text("## Goal\nSUMMARY-OVERFLOW"),
        Turn::text("Answer after the retry."),
    ])
    .await;
    configure(&h, 0, 16_384, 200);
    let (_runner, mut client) = h.connect().await;
    let id = client.new_session(&h.project()).await.session_id;
    assert_eq!(
        prompt(&client, &id, &long_prompt("alpha", 300)).await,
        StopReason::EndTurn
    );
    client.drain();
    assert_eq!(
        prompt(&client, &id, &long_prompt("beta", 300)).await,
        StopReason::EndTurn
    );

    let requests = h.server.requests();
    assert_eq!(requests.len(), 4, "original, overflow, summary, retry");
    assert!(system_prompt(&requests[2].body).contains("context summarization assistant"));
    let retry = &requests[3].body;
    assert!(first_user(retry).contains("SUMMARY-OVERFLOW"), "{retry}");
    let text = messages_text(retry);
    assert!(
        text.contains("beta beta") && !text.contains("alpha alpha"),
        "{text}"
    );
    assert!(
        !text.contains("maximum context length"),
        "the failed answer was resent: {text}"
    );

    // Without the compaction capability the client still hears of it, and the answer streams.
    let updates = client.drain();
    let said: Vec<String> = updates.iter().filter_map(chunk_text).collect();
    assert!(
        said.iter()
            .any(|t| t.contains("Compacting the conversation")),
        "{said:?}"
    );
    assert!(
        said.iter().any(|t| t == "Answer after the retry."),
        "{said:?}"
    );
    assert!(
        !updates
            .iter()
            .any(|u| matches!(u, SessionUpdate::CompactionUpdate(_))),
        "compaction_update sent to a client that did not ask for it"
    );
    client.close().await;

    let (store, _) = SessionStore::open(&file_of(&h.sessions_dir(), &id)).unwrap();
    assert_eq!(compactions(&store).len(), 1);
    assert_eq!(
        roles(&file_of(&h.sessions_dir(), &id)),
        ["user", "assistant", "user", "assistant", "assistant"],
        "the failed answer stays in the file, the retry's answer follows"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_compact_with_instructions_and_a_failed_summary_that_changes_nothing() {
    let h = Harness::new(vec![
        Turn::text("Answer one."),
        Turn::text("Answer two."),
        // The first /compact: the summariser fails (no retry for a 400).
        Turn::status(400).with_body(r#"{"error":{"message":"invalid request"}}"#),
        Turn::text("## Goal\nSUMMARY-MANUAL"),
    ])
    .await;
    configure(&h, 0, 16_384, 200);
    let (_runner, mut client) = h.connect().await;
    let id = client.new_session(&h.project()).await.session_id;
    let announced = client
        .wait_update(|u| matches!(u, SessionUpdate::AvailableCommandsUpdate(_)))
        .await;
    let SessionUpdate::AvailableCommandsUpdate(commands) = announced else {
        unreachable!()
    };
    assert!(
        commands
            .available_commands
            .iter()
            .any(|c| c.name == "compact")
    );

    // Nothing to compact yet: no request at all.
    assert_eq!(prompt(&client, &id, "/compact").await, StopReason::EndTurn);
    assert!(h.server.requests().is_empty());
    assert!(
        client
            .drain()
            .iter()
            .filter_map(chunk_text)
            .any(|t| t.starts_with("Nothing to compact"))
    );

    prompt(&client, &id, &long_prompt("alpha", 300)).await;
    prompt(&client, &id, &long_prompt("beta", 300)).await;
    let file = file_of(&h.sessions_dir(), &id);
    let before = std::fs::read(&file).unwrap();
    assert_eq!(prompt(&client, &id, "/compact").await, StopReason::EndTurn);
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "a failed compaction wrote something"
    );
    let said: Vec<String> = client.drain().iter().filter_map(chunk_text).collect();
    assert!(
        said.iter()
            .any(|t| t.starts_with("Compaction failed; the conversation is unchanged.")),
        "{said:?}"
    );

    assert_eq!(
        prompt(&client, &id, "/compact keep the alpha decisions").await,
        StopReason::EndTurn
    );
    let requests = h.server.requests();
    assert_eq!(requests.len(), 4);
    let asked = first_user(&requests[3].body);
    assert!(
        asked.contains("Additional focus: keep the alpha decisions"),
        "{asked}"
    );
    let (store, _) = SessionStore::open(&file).unwrap();
    let found = compactions(&store);
    assert_eq!(found.len(), 1);
    assert!(found[0].0.contains("SUMMARY-MANUAL"));
    // The command is not a prompt: nothing of it is in the transcript.
    assert!(!std::fs::read_to_string(&file).unwrap().contains("/compact"));
}
