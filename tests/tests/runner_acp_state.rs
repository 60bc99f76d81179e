//! March's own session state (title, timeline, restore data) over ACP: kept in
//! `<data>/march-sessions/<id>.json` apart from the transcript, restored by a new runner,
//! rebuilt when damaged, deleted with the session; and session directories that cannot be
//! written.

#[path = "support/acp_client.rs"]
mod acp_client;

use std::path::{Path, PathBuf};

use acp_client::*;
use agent_client_protocol::ErrorCode;
use agent_client_protocol::v1::schema::{
    LoadSessionRequest, LoadSessionResponse, NewSessionRequest, SessionId, StopReason,
};
use march_testkit::Turn;
use serde_json::Value;

fn state_dir(h: &Harness) -> PathBuf {
    h.march_home().join("data/march-sessions")
}

fn state_file(h: &Harness, id: &SessionId) -> PathBuf {
    state_dir(h).join(format!("{}.json", id.0))
}

fn read_json(path: &Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parse {}: {e}", path.display()))
}

fn timeline(state: &Value) -> Vec<String> {
    let events = state["timeline"].as_array().cloned().unwrap_or_default();
    events
        .iter()
        .map(|e| e["kind"].as_str().unwrap_or("?").to_string())
        .collect()
}

/// `currentValue` of each config option, by id.
fn current(options: &Value) -> Vec<(String, String)> {
    let options = options.as_array().cloned().unwrap_or_default();
    options
        .iter()
        .map(|o| {
            (
                o["id"].as_str().unwrap_or("?").to_string(),
                o["currentValue"].as_str().unwrap_or("?").to_string(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

async fn load(client: &AcpClient, id: &SessionId, cwd: &Path) -> LoadSessionResponse {
    let sent = client
        .cx
        .send_request(LoadSessionRequest::new(id.clone(), cwd.to_path_buf()));
    within("session/load", sent.block_task())
        .await
        .unwrap_or_else(|e| panic!("session/load failed: {e}"))
}

async fn quit(runner: &mut Runner, client: AcpClient) {
    client.close().await;
    let status = within("the runner to exit on EOF", runner.child.wait())
        .await
        .unwrap_or_else(|e| panic!("wait for the runner: {e}"));
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_come_back_in_a_new_runner_and_delete_removes_both_files() {
    let h = Harness::new(vec![
        Turn::text("first answer"),
        Turn::stream(vec![write_call("call_1", "f.txt", "content")]),
        Turn::text("Written."),
    ])
    .await;
    let project = h.project();
    let (mut runner, client) = h.connect().await;
    let id = client.new_session(&project).await.session_id;
    let file = state_file(&h, &id);
    let created = read_json(&file);
    assert_eq!(timeline(&created), ["created"]);
    assert_eq!(created["permissionMode"], "ask");
    assert_eq!(created["model"], "scripted/m");

    set_option(&client, &id, "permissions", "yolo")
        .await
        .unwrap();
    set_option(&client, &id, "model", "scripted/n")
        .await
        .unwrap();
    set_option(&client, &id, "thinking", "high").await.unwrap();
    let r = within("prompt", client.prompt(&id, "Plan the refactor\nin detail"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    close(&client, &id).await.unwrap();
    quit(&mut runner, client).await;

    // The state lives apart from the transcript, and the transcript knows nothing of it.
    let transcript = file_of(&h.sessions_dir(), &id);
    assert_ne!(file.parent(), transcript.parent());
    let state = read_json(&file);
    assert_eq!(state["id"], *id.0);
    assert_eq!(state["cwd"], *project.to_string_lossy());
    assert_eq!(state["transcript"], *transcript.to_string_lossy());
    assert_eq!(state["title"], "Plan the refactor");
    assert_eq!(state["model"], "scripted/n");
    assert_eq!(state["thinking"], "high");
    assert_eq!(state["permissionMode"], "yolo");
    assert!(state["createdAt"].is_string() && state["updatedAt"].is_string());
    assert_eq!(
        timeline(&state),
        [
            "created",
            "permission_change",
            "model_change",
            "thinking_change",
            "prompt",
            "closed"
        ]
    );
    assert_eq!(state["timeline"][1]["detail"], "yolo");
    assert_eq!(state["timeline"][2]["detail"], "scripted/n");
    assert_eq!(state["timeline"][4]["detail"], "Plan the refactor");
    let jsonl = std::fs::read_to_string(&transcript).unwrap();
    assert!(
        !jsonl.contains("yolo") && !jsonl.contains("timeline"),
        "{jsonl}"
    );

    // session/list shows March's title when it has one.
    let mut renamed = state.clone();
    renamed["title"] = Value::from("Renamed in March");
    std::fs::write(&file, serde_json::to_string(&renamed).unwrap()).unwrap();

    let (mut runner, mut client) = h.connect().await;
    let loaded = load(&client, &id, &project).await;
    let options = serde_json::to_value(loaded.config_options).unwrap();
    assert_eq!(
        current(&options),
        pairs(&[
            ("model", "scripted/n"),
            ("thinking", "high"),
            ("permissions", "yolo"),
            ("max_turns", "none"),
            ("tool_timeout", "none"),
            // No sandbox was chosen: it follows yolo.
            ("sandbox", "full")
        ])
    );
    client.drain();
    let sessions = list(&client, Some(project.clone())).await;
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].title.as_deref(), Some("Renamed in March"));

    // yolo really applies: the write runs without a permission request (one would fail
    // the test in `drain`), and the restored model serves the request.
    let r = within("prompt after load", client.prompt(&id, "write f.txt"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    client.drain();
    assert_eq!(
        std::fs::read_to_string(project.join("f.txt")).unwrap(),
        "content"
    );
    let requests = h.server.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests.iter().all(|r| r.model() == Some("n")));
    let state = read_json(&file);
    assert_eq!(
        &timeline(&state)[6..],
        ["loaded", "prompt"],
        "{:?}",
        timeline(&state)
    );
    assert_eq!(state["title"], "Renamed in March");

    delete(&client, &id).await.unwrap();
    assert!(!file.exists());
    assert!(!transcript.exists());
    assert_eq!(list(&client, None).await.len(), 0);
    quit(&mut runner, client).await;
    // Nothing wrote the state again after the delete (not even the disconnect).
    assert!(!file.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_state_file_is_set_aside_and_rebuilt_from_the_transcript() {
    let h = Harness::new(vec![Turn::text("answer")]).await;
    let project = h.project();
    let (mut runner, client) = h.connect().await;
    let id = client.new_session(&project).await.session_id;
    set_option(&client, &id, "model", "scripted/n")
        .await
        .unwrap();
    set_option(&client, &id, "permissions", "yolo")
        .await
        .unwrap();
    within("prompt", client.prompt(&id, "first question"))
        .await
        .unwrap()
        .unwrap();
    quit(&mut runner, client).await;
    let file = state_file(&h, &id);
    // The client going away closed the session.
    assert_eq!(timeline(&read_json(&file)).last().unwrap(), "closed");
    std::fs::write(&file, "{\"id\": \"trunc").unwrap();

    let (mut runner, mut client) = h.connect().await;
    let loaded = load(&client, &id, &project).await;
    client.drain();
    // The model comes from the transcript's model_change; the permission mode only lived in
    // the lost state, so it is `ask` again.
    let options = serde_json::to_value(loaded.config_options).unwrap();
    assert_eq!(
        current(&options),
        pairs(&[
            ("model", "scripted/n"),
            ("thinking", "off"),
            ("permissions", "ask"),
            ("max_turns", "none"),
            ("tool_timeout", "none"),
            ("sandbox", "workspace-write")
        ])
    );
    let state = read_json(&file);
    assert_eq!(timeline(&state), ["loaded"]);
    assert_eq!(state["title"], "first question");
    assert_eq!(state["permissionMode"], "ask");
    let aside = state_dir(&h).join(format!("{}.json.corrupt", id.0));
    assert_eq!(std::fs::read_to_string(aside).unwrap(), "{\"id\": \"trunc");
    quit(&mut runner, client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_limit_set_as_an_option_ends_its_turns_and_is_kept_across_runners() {
    let h = Harness::new(vec![
        // Each prompt's second model call is never made: the server answers in order.
        Turn::stream(vec![write_call("w1", "a.txt", "one")]),
        Turn::stream(vec![write_call("w2", "b.txt", "two")]),
    ])
    .await;
    let project = h.project();
    let (mut runner, mut client) = h.connect().await;
    let id = client.new_session(&project).await.session_id;
    set_option(&client, &id, "permissions", "yolo")
        .await
        .unwrap();
    let options = set_option(&client, &id, "max_turns", "1").await.unwrap();
    assert_eq!(current(&options)[3], ("max_turns".into(), "1".into()));
    let err = set_option(&client, &id, "tool_timeout", "0")
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
    let r = within("prompt", client.prompt(&id, "write a"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.stop_reason, StopReason::MaxTurnRequests);
    let meta = Value::Object(r.meta.unwrap());
    assert_eq!(meta["march"]["limit"]["kind"], "max_turns");
    assert_eq!(meta["march"]["limit"]["value"], 1);
    client.drain();
    assert_eq!(h.server.requests().len(), 1);
    let state = read_json(&state_file(&h, &id));
    assert_eq!(state["limits"]["maxTurns"], 1);
    assert_eq!(timeline(&state)[2], "limit_change");
    quit(&mut runner, client).await;

    // A new runner keeps the session's own limit.
    let (mut runner, mut client) = h.connect().await;
    let loaded = load(&client, &id, &project).await;
    let options = serde_json::to_value(loaded.config_options).unwrap();
    assert_eq!(current(&options)[3], ("max_turns".into(), "1".into()));
    client.drain();
    let r = within("prompt after load", client.prompt(&id, "write b"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.stop_reason, StopReason::MaxTurnRequests);
    client.drain();
    assert_eq!(h.server.requests().len(), 2);
    assert_eq!(
        std::fs::read_to_string(project.join("b.txt")).unwrap(),
        "two"
    );
    quit(&mut runner, client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_set_mode_switches_the_permission_mode_and_both_views_agree() {
    use agent_client_protocol::v1::schema::{SessionUpdate, SetSessionModeRequest};
    let h = Harness::new(vec![
        Turn::stream(vec![write_call("w1", "a.txt", "one")]),
        Turn::text("Written."),
    ])
    .await;
    let project = h.project();
    let (mut runner, mut client) = h.connect().await;
    let session = client.new_session(&project).await;
    let id = session.session_id.clone();
    let modes = session.modes.unwrap();
    assert_eq!(*modes.current_mode_id.0, *"ask");
    let ids: Vec<&str> = modes.available_modes.iter().map(|m| &*m.id.0).collect();
    assert_eq!(ids, ["ask", "auto-edit", "yolo"]);

    let set_mode = |mode: &str| {
        client
            .cx
            .send_request(SetSessionModeRequest::new(id.clone(), mode.to_string()))
            .block_task()
    };
    let err = within("set_mode bogus", set_mode("sometimes"))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
    within("set_mode auto-edit", set_mode("auto-edit"))
        .await
        .unwrap();
    // Clients that follow config options hear of it.
    let update = client
        .wait_update(|u| matches!(u, SessionUpdate::ConfigOptionUpdate(_)))
        .await;
    let SessionUpdate::ConfigOptionUpdate(update) = update else {
        unreachable!()
    };
    let options = serde_json::to_value(update.config_options).unwrap();
    assert_eq!(
        current(&options)[2],
        ("permissions".into(), "auto-edit".into())
    );
    // auto-edit: the write in the project runs without a permission request (one would
    // fail the test in `drain`).
    let r = within("prompt", client.prompt(&id, "write a"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    client.drain();
    assert_eq!(
        std::fs::read_to_string(project.join("a.txt")).unwrap(),
        "one"
    );
    assert_eq!(
        read_json(&state_file(&h, &id))["permissionMode"],
        "auto-edit"
    );

    // The option the other way: clients that follow modes hear of it.
    set_option(&client, &id, "permissions", "ask")
        .await
        .unwrap();
    let update = client
        .wait_update(|u| matches!(u, SessionUpdate::CurrentModeUpdate(_)))
        .await;
    let SessionUpdate::CurrentModeUpdate(update) = update else {
        unreachable!()
    };
    assert_eq!(*update.current_mode_id.0, *"ask");
    quit(&mut runner, client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unwritable_session_dir_fails_session_new_and_the_runner_keeps_serving() {
    let h = Harness::new(vec![Turn::text("works again")]).await;
    let project = h.project();
    // A regular file where the sessions directory belongs: even root cannot create it.
    let blocker = h.march_home().join("data/sessions");
    std::fs::create_dir_all(blocker.parent().unwrap()).unwrap();
    std::fs::write(&blocker, "not a directory").unwrap();

    let (mut runner, client) = h.connect().await;
    let sent = client.cx.send_request(NewSessionRequest::new(&project));
    let err = within("session/new", sent.block_task()).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::INTERNAL_ERROR, "{err:?}");
    assert!(
        err.message.contains(&*blocker.to_string_lossy()),
        "{}",
        err.message
    );
    // No state was left for a session that does not exist.
    assert!(!state_dir(&h).exists());

    // The runner still serves: a listing answers, and once the path is fixed sessions work.
    assert_eq!(list(&client, None).await.len(), 0);
    std::fs::remove_file(&blocker).unwrap();
    let id = client.new_session(&project).await.session_id;
    let r = within("prompt", client.prompt(&id, "hi"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    quit(&mut runner, client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unwritable_state_dir_is_logged_and_the_session_goes_on() {
    let h = Harness::new(vec![Turn::text("still answering")]).await;
    let project = h.project();
    let blocker = state_dir(&h);
    std::fs::create_dir_all(blocker.parent().unwrap()).unwrap();
    std::fs::write(&blocker, "not a directory").unwrap();

    let (mut runner, client) = h.connect().await;
    let id = client.new_session(&project).await.session_id;
    set_option(&client, &id, "permissions", "yolo")
        .await
        .unwrap();
    let r = within("prompt", client.prompt(&id, "hi"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    assert_eq!(
        roles(&file_of(&h.sessions_dir(), &id)),
        ["user", "assistant"]
    );
    quit(&mut runner, client).await;
    // Each runner logs to its own `runner.<pid>.log`.
    let logs = h.march_home().join("data/logs");
    let log: String = std::fs::read_dir(&logs)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("runner."))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    assert!(log.contains("cannot save March session state"), "{log}");
    assert!(log.contains(&*blocker.to_string_lossy()), "{log}");
}
