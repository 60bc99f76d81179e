//! `march runner` sessions over ACP: load with replay, resume, list, close, delete, config
//! options, pi's v1 files, and a runner killed mid-turn. Turns and permissions: `runner_acp.rs`.

#[path = "support/acp_client.rs"]
mod acp_client;

use std::path::PathBuf;

use acp_client::*;
use agent_client_protocol::ErrorCode;
use agent_client_protocol::v1::schema::{
    LoadSessionRequest, ResumeSessionRequest, SessionId, SessionUpdate, StopReason, ToolCallStatus,
};
use march_core::session::{EntryKind, SessionStore};
use march_testkit::{Event, Turn};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pi_v1_session_loads_and_is_continued_in_a_new_file() {
    let h = Harness::new(vec![Turn::text("Hi from March.")]).await;
    let project = h.project();
    let fixture = march_e2e::workspace_root()
        .join("../shared/fixtures/pi-sessions/large-session.v1.head25.jsonl");
    let original = std::fs::read(&fixture).unwrap();
    let id = SessionId::new("d703a1a9-1b7b-4fb1-b512-c9738b1fe617");
    let dir = h.sessions_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let old = dir.join(format!("2025-11-20T23-33-50-805Z_{}.jsonl", id.0));
    std::fs::write(&old, &original).unwrap();

    let load = |client: &acp_client::AcpClient| {
        let sent = client
            .cx
            .send_request(LoadSessionRequest::new(id.clone(), project.clone()))
            .block_task();
        async move { within("session/load", sent).await.unwrap() }
    };
    let (_runner, mut client) = h.connect().await;
    load(&client).await;
    let replayed = conversation(client.drain());
    let first_user = replayed
        .iter()
        .find(|u| matches!(u, SessionUpdate::UserMessageChunk(_)))
        .and_then(chunk_text);
    assert_eq!(first_user.as_deref(), Some("/mode"));
    let calls = replayed
        .iter()
        .filter(|u| matches!(u, SessionUpdate::ToolCall(_)))
        .count();
    assert!(calls >= 2, "{replayed:?}");
    let r = within("prompt", client.prompt(&id, "hello"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    client.close().await;

    // pi's file is untouched; March's continuation names it as its parent.
    assert_eq!(std::fs::read(&old).unwrap(), original);
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| *p != old)
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let (store, _) = SessionStore::open(&files[0]).unwrap();
    assert_eq!(
        store.header().parent_session.as_deref(),
        Some(&*old.to_string_lossy())
    );

    // Loading pi's id again follows the continuation instead of starting another one.
    let (_runner, mut client) = h.connect().await;
    load(&client).await;
    let replayed = conversation(client.drain());
    assert!(
        replayed
            .iter()
            .any(|u| chunk_text(u).as_deref() == Some("Hi from March.")),
        "{replayed:?}"
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_replays_the_whole_conversation_in_a_new_runner() {
    let h = Harness::new(vec![
        Turn::stream(vec![
            Event::text("I'll write it."),
            write_call("call_1", "f.txt", "content"),
        ]),
        Turn::text("Done."),
        Turn::text("Loaded and answering."),
    ])
    .await;
    let project = h.project();
    let (mut runner, client) = h.connect().await;
    let session = client.new_session(&project).await;
    set_option(&client, &session.session_id, "permissions", "yolo")
        .await
        .unwrap();
    let prompt = client.prompt(&session.session_id, "write f.txt");
    let r = within("prompt", prompt).await.unwrap().unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    client.close().await;
    let status = within("the runner to exit on EOF", runner.child.wait())
        .await
        .unwrap();
    assert!(status.success(), "{status}");

    let (_runner, mut client) = h.connect().await;
    let loaded = within(
        "session/load",
        client
            .cx
            .send_request(LoadSessionRequest::new(
                session.session_id.clone(),
                project.clone(),
            ))
            .block_task(),
    )
    .await
    .unwrap();
    assert_eq!(loaded.config_options.map(|o| o.len()), Some(6));
    // Everything was replayed before the answer arrived.
    let replayed = conversation(client.drain());
    let kinds: Vec<String> = replayed.iter().map(describe).collect();
    assert_eq!(
        kinds,
        [
            "user_message_chunk",
            "agent_message_chunk",
            "tool_call",
            "tool_call_update completed",
            "agent_message_chunk",
            // The title and the session's usage, after the replay.
            "session_info_update",
            "usage_update",
        ]
    );
    let texts: Vec<Option<String>> = replayed.iter().map(chunk_text).collect();
    assert_eq!(texts[0].as_deref(), Some("write f.txt"));
    assert_eq!(texts[1].as_deref(), Some("I'll write it."));
    assert_eq!(texts[4].as_deref(), Some("Done."));

    let prompt = client.prompt(&session.session_id, "and now?");
    let r = within("prompt after load", prompt).await.unwrap().unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    // The loaded conversation opens the new run's transcript.
    let requests = h.server.requests();
    let last = request_messages(&requests[2].body);
    let users: Vec<&Value> = last.iter().filter(|m| m["role"] == "user").collect();
    assert_eq!(users.len(), 2, "{last:?}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_resume_close_and_delete() {
    let h = Harness::new(vec![Turn::text("hello back"), Turn::text("resumed")]).await;
    let project = h.project();
    let (_runner, mut client) = h.connect().await;
    let a = client.new_session(&project).await.session_id;
    let b = client.new_session(&project).await.session_id;
    let prompt = client.prompt(&a, "Fix the parser\nplease");
    within("prompt", prompt).await.unwrap().unwrap();

    let sessions = list(&client, Some(project.clone())).await;
    assert_eq!(sessions.len(), 2);
    let info_a = sessions.iter().find(|s| s.session_id == a).unwrap();
    assert_eq!(info_a.title.as_deref(), Some("Fix the parser"));
    assert_eq!(info_a.cwd, project);
    assert!(info_a.updated_at.is_some());
    let info_b = sessions.iter().find(|s| s.session_id == b).unwrap();
    assert_eq!(info_b.title, None);

    close(&client, &a).await.unwrap();
    let err = close(&client, &a).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::RESOURCE_NOT_FOUND);
    let err = within("prompt to a closed session", client.prompt(&a, "hi"))
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::RESOURCE_NOT_FOUND);

    client.drain();
    within(
        "session/resume",
        client
            .cx
            .send_request(ResumeSessionRequest::new(a.clone(), project.clone()))
            .block_task(),
    )
    .await
    .unwrap();
    // No replay on resume: only the session's usage.
    let sent: Vec<String> = conversation(client.drain()).iter().map(describe).collect();
    assert_eq!(sent, ["usage_update"]);
    let prompt = client.prompt(&a, "still there?");
    client.wait_update(|u| is_text(u, "resumed")).await;
    within("prompt after resume", prompt)
        .await
        .unwrap()
        .unwrap();

    let file_b = file_of(&h.sessions_dir(), &b);
    delete(&client, &b).await.unwrap();
    assert!(!file_b.exists());
    let err = delete(&client, &b).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::RESOURCE_NOT_FOUND);
    let sessions = list(&client, None).await;
    assert_eq!(
        sessions
            .iter()
            .map(|s| s.session_id.clone())
            .collect::<Vec<_>>(),
        [a]
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_options_change_the_model_of_the_next_request() {
    let h = Harness::new(vec![Turn::text("from n")]).await;
    let (_runner, client) = h.connect().await;
    let session = client.new_session(&h.project()).await.session_id;
    let options = set_option(&client, &session, "model", "scripted/n")
        .await
        .unwrap();
    assert_eq!(options.as_array().map(Vec::len), Some(6));
    assert_eq!(options[0]["currentValue"], "scripted/n");
    let options = set_option(&client, &session, "thinking", "high")
        .await
        .unwrap();
    assert_eq!(options[1]["currentValue"], "high");
    let err = set_option(&client, &session, "permissions", "sometimes")
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
    let err = set_option(&client, &session, "model", "nowhere/x")
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::INVALID_PARAMS);

    let r = within("prompt", client.prompt(&session, "hi"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    let requests = h.server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].model(), Some("n"));

    // The changes are in the transcript, as pi records them.
    let (store, _) = SessionStore::open(&session_file(&h.sessions_dir())).unwrap();
    let kinds: Vec<&str> = store.entries().iter().map(|e| e.kind.type_name()).collect();
    assert_eq!(
        kinds,
        [
            "model_change",
            "thinking_level_change",
            "message",
            "message"
        ]
    );
    assert!(matches!(
        &store.entries()[0].kind,
        EntryKind::ModelChange(m) if m.model_id == "n"
    ));
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runner_killed_mid_turn_loses_nothing_that_was_finished() {
    let h = Harness::new(vec![
        Turn::stream(vec![Event::tool_call(
            "call_1",
            "read",
            &[r#"{"path":"notes.txt"}"#],
        )]),
        Turn::stream(vec![Event::text("Partial answer"), Event::pause(300_000)]),
        Turn::text("Recovered."),
    ])
    .await;
    let project = h.project();
    std::fs::write(project.join("notes.txt"), "remember me").unwrap();
    let (mut runner, mut client) = h.connect().await;
    let session = client.new_session(&project).await.session_id;
    let _prompt = client.prompt(&session, "read my notes");
    // The result update is sent only after the result is on disk.
    client
        .wait_update(|u| is_status(u, ToolCallStatus::Completed))
        .await;
    client.wait_update(|u| is_text(u, "Partial answer")).await;
    runner.kill9().await;
    drop(client);

    let file = file_of(&h.sessions_dir(), &session);
    assert_eq!(roles(&file), ["user", "assistant", "toolResult"]);

    let (_runner, mut client) = h.connect().await;
    within(
        "session/load",
        client
            .cx
            .send_request(LoadSessionRequest::new(session.clone(), project.clone()))
            .block_task(),
    )
    .await
    .unwrap();
    let kinds: Vec<String> = conversation(client.drain()).iter().map(describe).collect();
    assert_eq!(
        kinds,
        [
            "user_message_chunk",
            "tool_call",
            "tool_call_update completed",
            "session_info_update",
            "usage_update",
        ]
    );
    let r = within("prompt after the crash", client.prompt(&session, "go on"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    assert_eq!(
        roles(&file),
        ["user", "assistant", "toolResult", "user", "assistant"]
    );
    client.close().await;
}

/// The `usage_update` a client was last sent: (used, cost, `_meta.march.usage`).
fn last_usage(updates: &[SessionUpdate]) -> (u64, Option<f64>, Value) {
    let update = updates
        .iter()
        .rev()
        .find_map(|u| match u {
            SessionUpdate::UsageUpdate(u) => Some(u.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no usage_update in {updates:?}"));
    let meta = update
        .meta
        .as_ref()
        .and_then(|m| m.get("march"))
        .map(|m| m["usage"].clone())
        .unwrap_or(Value::Null);
    (update.used, update.cost.map(|c| c.amount), meta)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cost_is_the_sessions_sum_and_comes_back_on_load_and_resume() {
    let usage = |input, output| march_testkit::ScriptUsage {
        input,
        output,
        ..Default::default()
    };
    let h = Harness::new(vec![
        Turn::text("first").with_usage(usage(100, 10)),
        Turn::text("second").with_usage(usage(200, 20)),
    ])
    .await;
    // $1000 and $2000 per million tokens: 0.12 for the first call, 0.24 for the second.
    let config = h.march_home().join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap().replace(
        "id = \"m\"\n",
        "id = \"m\"\ncost = { input = 1000.0, output = 2000.0 }\n",
    );
    std::fs::write(&config, text).unwrap();
    let project = h.project();
    let (mut runner, mut client) = h.connect().await;
    let id = client.new_session(&project).await.session_id;
    within("first prompt", client.prompt(&id, "one"))
        .await
        .unwrap()
        .unwrap();
    let (used, cost, _) = last_usage(&client.drain());
    assert_eq!(used, 110);
    assert!((cost.unwrap() - 0.12).abs() < 1e-9, "{cost:?}");
    within("second prompt", client.prompt(&id, "two"))
        .await
        .unwrap()
        .unwrap();
    // `used` is the context now; `cost` the sum of both calls, as ACP defines it.
    let (used, cost, meta) = last_usage(&client.drain());
    assert_eq!(used, 220);
    assert!((cost.unwrap() - 0.36).abs() < 1e-9, "{cost:?}");
    assert_eq!(meta["calls"], 2);
    assert_eq!(meta["input"], 300);
    assert_eq!(meta["output"], 30);
    client.close().await;
    within("runner exit", runner.child.wait()).await.unwrap();

    for how in ["load", "resume"] {
        let (mut runner, mut client) = h.connect().await;
        let request = match how {
            "load" => client
                .cx
                .send_request(LoadSessionRequest::new(id.clone(), project.clone()))
                .block_task()
                .await
                .map(drop),
            _ => client
                .cx
                .send_request(ResumeSessionRequest::new(id.clone(), project.clone()))
                .block_task()
                .await
                .map(drop),
        };
        within(how, async { request }).await.unwrap();
        let (used, cost, meta) = last_usage(&client.drain());
        assert_eq!(used, 220, "{how}");
        assert!((cost.unwrap() - 0.36).abs() < 1e-9, "{how}: {cost:?}");
        assert_eq!(meta["calls"], 2, "{how}");
        client.close().await;
        within("runner exit", runner.child.wait()).await.unwrap();
    }
}
