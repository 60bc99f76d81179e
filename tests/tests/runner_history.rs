//! The history layer end to end: turns indexed by the runner, found through
//! `_march/history/search` and `march history`, recalled into later prompts of the same
//! project, and an index that cannot be written never failing a turn.

// Helpers here unwrap like the tests they serve (clippy only exempts #[test] functions).
#![allow(clippy::unwrap_used)]

#[path = "support/acp_client.rs"]
mod acp_client;

use std::path::PathBuf;

use acp_client::*;
use agent_client_protocol::v1::schema::{SessionId, StopReason};
use agent_client_protocol::{ErrorCode, JsonRpcRequest, JsonRpcResponse};
use march_testkit::Turn;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The extension request as a client writes it (its own copy: clients do not link March).
#[derive(Debug, Clone, Serialize, Deserialize, JsonRpcRequest)]
#[request(method = "_march/history/search", response = SearchResult)]
struct Search(Value);

#[derive(Debug, Clone, Serialize, Deserialize, JsonRpcResponse)]
struct SearchResult(Value);

async fn search(
    client: &AcpClient,
    params: Value,
) -> Result<Vec<Value>, agent_client_protocol::Error> {
    let sent = client.cx.send_request(Search(params)).block_task();
    let result = within("_march/history/search", sent).await?;
    Ok(result.0["hits"].as_array().cloned().unwrap_or_default())
}

/// A second project directory beside the harness's.
fn other_project(h: &Harness) -> PathBuf {
    let dir = h.dir.path().join("other");
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

/// `march history ARGS` against the harness's home: (exit ok, stdout, stderr).
fn history_cli(h: &Harness, args: &[&str]) -> (bool, String, String) {
    let mut all = vec!["history"];
    all.extend_from_slice(args);
    let (code, out, err) = h.run_march(&all);
    (code == 0, out, err)
}

/// (session id, turn number) of each hit, in order.
fn keys(hits: &[Value]) -> Vec<(String, i64)> {
    hits.iter()
        .map(|h| {
            (
                h["sessionId"].as_str().unwrap_or_default().to_string(),
                h["seq"].as_i64().unwrap_or(-1),
            )
        })
        .collect()
}

fn cli_hits(h: &Harness, args: &[&str]) -> Vec<Value> {
    let (ok, stdout, stderr) = history_cli(h, args);
    assert!(ok, "march history {args:?} failed: {stderr}");
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turns_are_searchable_through_the_extension_and_the_command_line() {
    let h = Harness::new(vec![
        Turn::text("The parser now handles nested brackets."),
        Turn::text("Release notes written."),
        Turn::text("Guarded the empty input in beta."),
    ])
    .await;
    let (project, other) = (h.project(), other_project(&h));
    let (_runner, client) = h.connect().await;
    let meta = client
        .init
        .as_ref()
        .and_then(|i| i.agent_capabilities.meta.clone())
        .unwrap_or_default();
    assert_eq!(
        meta["march"]["historySearch"]["method"],
        "_march/history/search"
    );
    let a = client.new_session(&project).await.session_id;
    prompt_ok(&client, &a, "fix the parser bug in the lexer").await;
    prompt_ok(&client, &a, "write release notes").await;
    let b = client.new_session(&other).await.session_id;
    prompt_ok(&client, &b, "the parser crashes on empty input").await;

    let hits = search(&client, json!({ "query": "parser" })).await.unwrap();
    assert_eq!(hits.len(), 2, "{hits:#?}");
    let sessions: Vec<&str> = hits
        .iter()
        .filter_map(|h| h["sessionId"].as_str())
        .collect();
    assert!(sessions.contains(&&*a.0) && sessions.contains(&&*b.0));
    assert!(hits[0]["snippet"].as_str().unwrap().contains("**parser**"));
    assert_eq!(hits[0]["model"], "m");

    let only_a = search(
        &client,
        json!({ "query": "parser", "project": project.to_string_lossy() }),
    )
    .await
    .unwrap();
    assert_eq!(keys(&only_a), vec![(a.0.to_string(), 0)]);
    assert!(only_a[0]["snippet"].as_str().unwrap().contains("lexer"));
    let release = search(&client, json!({ "query": "release", "sessionId": a.0 }))
        .await
        .unwrap();
    assert_eq!(keys(&release), vec![(a.0.to_string(), 1)]);
    let future = search(&client, json!({ "query": "parser", "since": "2999-01-01" }))
        .await
        .unwrap();
    assert!(future.is_empty());

    // Bad input is a clear invalid-params error, never SQL.
    let err = search(&client, json!({ "query": "  \"()\" " }))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
    assert!(err.message.contains("no words"), "{}", err.message);
    let err = search(&client, json!({ "query": "parser", "since": "yesterday" }))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
    assert!(err.message.contains("since"), "{}", err.message);
    let odd = search(&client, json!({ "query": "parser AND (NOT \"x" })).await;
    assert!(odd.unwrap().is_empty());
    client.close().await;

    // The command line finds the same turns, in the same order.
    let cli = cli_hits(&h, &["search", "parser", "--json"]);
    assert_eq!(keys(&cli), keys(&hits));
    let (ok, text, _) = history_cli(&h, &["search", "nested", "brackets"]);
    assert!(ok);
    assert!(
        text.contains(&*a.0) && text.contains("**nested**"),
        "{text}"
    );
    let (ok, _, stderr) = history_cli(&h, &["search", "kubernetes"]);
    assert!(ok && stderr.contains("no turn matches"), "{stderr}");
    let (ok, _, stderr) = history_cli(&h, &["search", "parser", "--since", "soon"]);
    assert!(!ok && stderr.contains("--since wants a date"), "{stderr}");

    // Rebuilt from the transcripts, or from nothing: the same answers.
    let (ok, stdout, stderr) = history_cli(&h, &["reindex"]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("indexed 3 turns from 2 session files"),
        "{stdout}"
    );
    assert_eq!(
        keys(&cli_hits(&h, &["search", "parser", "--json"])),
        keys(&hits)
    );
    let db = h.march_home().join("data/history.sqlite");
    std::fs::remove_file(&db).unwrap();
    assert_eq!(
        keys(&cli_hits(&h, &["search", "parser", "--json"])),
        keys(&hits)
    );
    // A damaged file is set aside and rebuilt.
    std::fs::write(&db, "not a database\n".repeat(300)).unwrap();
    let (ok, stdout, stderr) = history_cli(&h, &["search", "parser", "--json"]);
    assert!(ok, "{stderr}");
    assert!(stderr.contains("damaged"), "{stderr}");
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
}

/// The text of the last model request's messages.
fn last_request_text(h: &Harness) -> String {
    let requests = h.server.requests();
    let last = requests
        .last()
        .unwrap_or_else(|| panic!("no model request"));
    serde_json::to_string(&request_messages(&last.body)).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_recall_earlier_turns_of_the_same_project_only() {
    let h = Harness::new(vec![
        Turn::text("Use Builder::new_multi_thread with worker_threads(4)."),
        Turn::text("BETA-ONLY: the beta service pins one worker."),
        Turn::text("Recalled and answered."),
        Turn::text("Answered without recall."),
    ])
    .await;
    let (project, other) = (h.project(), other_project(&h));
    let (_runner, client) = h.connect().await;
    let a = client.new_session(&project).await.session_id;
    prompt_ok(
        &client,
        &a,
        "how do I configure the tokio runtime worker threads",
    )
    .await;
    let b = client.new_session(&other).await.session_id;
    prompt_ok(
        &client,
        &b,
        "configure the tokio runtime worker threads for beta",
    )
    .await;

    let c = client.new_session(&project).await.session_id;
    prompt_ok(&client, &c, "tokio worker threads again: what did we pick?").await;
    let sent = last_request_text(&h);
    assert!(sent.contains("<recalled_context>"), "{sent}");
    assert!(
        sent.contains("how do I configure the tokio runtime"),
        "{sent}"
    );
    assert!(sent.contains("Builder::new_multi_thread"), "{sent}");
    assert!(
        !sent.contains("BETA-ONLY"),
        "another project's turn was recalled: {sent}"
    );
    // Context, not transcript: the session file never holds it.
    let file = file_of(&h.sessions_dir(), &c);
    let transcript = std::fs::read_to_string(&file).unwrap();
    assert!(!transcript.contains("recalled_context"), "{transcript}");
    assert!(transcript.contains("what did we pick?"));
    client.close().await;

    // Switched off in config, a new session's prompt carries no recall.
    let config = h.march_home().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("\n[recall]\nenabled = false\n");
    std::fs::write(&config, text).unwrap();
    let (_runner, client) = h.connect().await;
    let d = client.new_session(&project).await.session_id;
    prompt_ok(&client, &d, "tokio worker threads again: what did we pick?").await;
    let sent = last_request_text(&h);
    assert!(!sent.contains("<recalled_context>"), "{sent}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_that_cannot_be_written_never_fails_a_turn_and_catches_up() {
    let h = Harness::new(vec![Turn::text("Still answered."), Turn::text("Again.")]).await;
    // A directory where the database file should be: SQLite cannot open it.
    let db = h.march_home().join("data/history.sqlite");
    std::fs::create_dir_all(db.join("in-the-way")).unwrap();
    let (_runner, client) = h.connect().await;
    let a = client.new_session(&h.project()).await.session_id;
    prompt_ok(&client, &a, "index me later please").await;
    let err = search(&client, json!({ "query": "later" }))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::INTERNAL_ERROR);
    assert!(err.message.contains("history index"), "{}", err.message);

    // Once the way is clear, the next search catches up with the transcript.
    std::fs::remove_dir_all(&db).unwrap();
    let hits = search(&client, json!({ "query": "later" })).await.unwrap();
    assert_eq!(keys(&hits), vec![(a.0.to_string(), 0)]);
    prompt_ok(&client, &a, "and index this one at once").await;
    let hits = search(&client, json!({ "query": "once" })).await.unwrap();
    assert_eq!(keys(&hits), vec![(a.0.to_string(), 1)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_runner_processes_index_into_one_database_at_once() {
    const EACH: usize = 6;
    let turns = (0..2 * EACH)
        .map(|i| Turn::text(format!("answer {i}")))
        .collect();
    let h = Harness::new(turns).await;
    let (_r1, c1) = h.connect().await;
    let (_r2, c2) = h.connect().await;
    let s1 = c1.new_session(&h.project()).await.session_id;
    let s2 = c2.new_session(&h.project()).await.session_id;
    let drive = |client: &AcpClient, id: &SessionId, who: &'static str| {
        let prompts: Vec<_> = (0..EACH)
            .map(|i| client.prompt(id, &format!("{who} concurrent question {i}")))
            .collect();
        async move {
            for p in prompts {
                let r = within("prompt", p).await.unwrap().unwrap();
                assert_eq!(r.stop_reason, StopReason::EndTurn);
            }
        }
    };
    tokio::join!(drive(&c1, &s1, "alpha"), drive(&c2, &s2, "beta"));
    let hits = search(&c1, json!({ "query": "concurrent", "limit": 100 }))
        .await
        .unwrap();
    assert_eq!(hits.len(), 2 * EACH, "{hits:#?}");
    for (id, who) in [(&s1, "alpha"), (&s2, "beta")] {
        let mine = search(
            &c2,
            json!({ "query": who, "sessionId": id.0, "limit": 100 }),
        )
        .await
        .unwrap();
        let mut seqs: Vec<i64> = mine.iter().filter_map(|h| h["seq"].as_i64()).collect();
        seqs.sort_unstable();
        assert_eq!(seqs, (0..EACH as i64).collect::<Vec<_>>());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_while_indexing_still_completes_the_turn() {
    let h = Harness::new(vec![
        Turn::text("Answered on a full disk."),
        Turn::text("Again."),
    ])
    .await;
    // Files may not grow past 24 KiB: the session file and the log stay below it, the
    // index (schema pages plus its write-ahead log) cannot be written.
    let runner = h.spawn_runner_with_file_limit(24 * 1024);
    let (_runner, client) = h.connect_to(runner).await;
    let a = client.new_session(&h.project()).await.session_id;
    prompt_ok(&client, &a, "remember the quokka").await;
    let file = file_of(&h.sessions_dir(), &a);
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("Answered on a full disk.")
    );
    let err = search(&client, json!({ "query": "quokka" }))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::INTERNAL_ERROR, "{}", err.message);
    client.close().await;

    // With room again, the index catches up with the turn it missed.
    let (_runner, client) = h.connect().await;
    let hits = search(&client, json!({ "query": "quokka" })).await.unwrap();
    assert_eq!(keys(&hits), vec![(a.0.to_string(), 0)]);
}
