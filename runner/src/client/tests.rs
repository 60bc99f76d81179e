//! The client against a small ACP agent built with the crate inside the test (a real peer
//! over the crate's in-memory transport), and the process handling against real children.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, CloseSessionRequest, CloseSessionResponse, ContentBlock,
    ContentChunk, InitializeRequest, InitializeResponse, ListSessionsRequest, LoadSessionRequest,
    LoadSessionResponse, NewSessionRequest, NewSessionResponse, PermissionOption,
    PermissionOptionKind, PromptRequest, PromptResponse, RequestPermissionOutcome,
    RequestPermissionRequest, SessionCapabilities, SessionCloseCapabilities, SessionId,
    SessionNotification, SessionUpdate, StopReason, ToolCallUpdate, ToolCallUpdateFields,
};
use agent_client_protocol::{Agent, Channel};
use tokio::sync::Notify;

use super::*;
use march_testkit::process::{read_pids, wait_gone};

const LIMIT: Duration = Duration::from_secs(30);

/// The text of an agent message chunk, if `event` is one.
fn chunk_text(event: &RunnerEvent) -> Option<String> {
    match event {
        RunnerEvent::Update(SessionNotification {
            update:
                SessionUpdate::AgentMessageChunk(ContentChunk {
                    content: ContentBlock::Text(text),
                    ..
                }),
            ..
        }) => Some(text.text.clone()),
        _ => None,
    }
}

async fn next(events: &mut EventReceiver) -> RunnerEvent {
    tokio::time::timeout(LIMIT, events.recv())
        .await
        .expect("timed out waiting for an event")
        .expect("the event stream ended")
}

async fn next_text(events: &mut EventReceiver) -> String {
    let event = next(events).await;
    chunk_text(&event).unwrap_or_else(|| panic!("expected a text chunk, got {event:?}"))
}

async fn next_permission(events: &mut EventReceiver) -> Pending<RequestPermissionRequest> {
    match next(events).await {
        RunnerEvent::Request(AgentRequest::Permission(pending)) => pending,
        other => panic!("expected a permission request, got {other:?}"),
    }
}

fn text_update(session_id: SessionId, text: &str) -> SessionNotification {
    SessionNotification::new(
        session_id,
        SessionUpdate::AgentMessageChunk(ContentChunk::new(text.into())),
    )
}

fn prompt_text(request: &PromptRequest) -> String {
    request
        .prompt
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.clone()),
            _ => None,
        })
        .collect()
}

/// The test agent's behaviour per prompt text:
/// - `ask`: "Hello", a permission request, then "outcome: <option id | cancelled | error
///   code>", end_turn;
/// - `fail`: an error answer;
/// - `hang`: waits for `session/cancel`, then answers `cancelled`.
///
/// `session/load` replays "replayed" before answering. It advertises load and close but
/// not list, resume or delete.
fn spawn_agent(channel: Channel) {
    let cancelled = Arc::new(Notify::new());
    let on_cancel = Arc::clone(&cancelled);
    let agent = Agent
        .v1()
        .on_receive_request(
            async |request: InitializeRequest, responder, _cx| {
                responder.respond(
                    InitializeResponse::new(request.protocol_version).agent_capabilities(
                        AgentCapabilities::new()
                            .load_session(true)
                            .session_capabilities(
                                SessionCapabilities::new().close(SessionCloseCapabilities::new()),
                            ),
                    ),
                )
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async |_request: NewSessionRequest, responder, _cx| {
                responder.respond(NewSessionResponse::new("s1"))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async |request: LoadSessionRequest, responder, cx| {
                cx.send_notification(text_update(request.session_id, "replayed"))?;
                responder.respond(LoadSessionResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async |_request: CloseSessionRequest, responder, _cx| {
                responder.respond(CloseSessionResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |_notification: CancelNotification, _cx| {
                on_cancel.notify_one();
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, cx| {
                let cancelled = Arc::clone(&cancelled);
                let worker = cx.clone();
                // Never block the dispatch loop: the turn runs on its own task.
                cx.spawn(async move {
                    let session = request.session_id.clone();
                    match prompt_text(&request).as_str() {
                        "ask" => {
                            worker.send_notification(text_update(session.clone(), "Hello"))?;
                            let tool_call = ToolCallUpdate::new(
                                "call-1",
                                ToolCallUpdateFields::new().title("write notes.txt"),
                            );
                            let options = vec![
                                PermissionOption::new(
                                    "allow",
                                    "Allow",
                                    PermissionOptionKind::AllowOnce,
                                ),
                                PermissionOption::new(
                                    "reject",
                                    "Reject",
                                    PermissionOptionKind::RejectOnce,
                                ),
                            ];
                            let answer = worker
                                .send_request(RequestPermissionRequest::new(
                                    session.clone(),
                                    tool_call,
                                    options,
                                ))
                                .block_task()
                                .await;
                            let outcome = match answer.map(|answer| answer.outcome) {
                                Ok(RequestPermissionOutcome::Selected(selected)) => {
                                    selected.option_id.to_string()
                                }
                                Ok(_) => "cancelled".to_string(),
                                Err(error) => format!("error {}", error.code.value()),
                            };
                            worker.send_notification(text_update(
                                session,
                                &format!("outcome: {outcome}"),
                            ))?;
                            responder.respond(PromptResponse::new(StopReason::EndTurn))
                        }
                        "fail" => responder.respond_with_error(
                            agent_client_protocol::Error::internal_error()
                                .data("model error: 400 bad request"),
                        ),
                        _ => {
                            cancelled.notified().await;
                            responder.respond(PromptResponse::new(StopReason::Cancelled))
                        }
                    }
                })
            },
            agent_client_protocol::on_receive_request!(),
        );
    tokio::spawn(async move {
        let _ = agent.connect_to(channel).await;
    });
}

async fn connected() -> (Connection, EventReceiver) {
    let (client_end, agent_end) = Channel::duplex();
    spawn_agent(agent_end);
    tokio::time::timeout(
        LIMIT,
        Connection::connect(client_end, &ConnectOptions::default()),
    )
    .await
    .expect("connect timed out")
    .expect("connect failed")
}

fn prompt(session: &SessionId, text: &str) -> PromptRequest {
    PromptRequest::new(session.clone(), vec![text.into()])
}

#[tokio::test]
async fn a_turn_streams_typed_events_and_a_permission_round_trip() {
    let (connection, mut events) = connected().await;
    assert!(connection.agent_capabilities().load_session);
    let session = connection
        .new_session(NewSessionRequest::new("/project"))
        .await
        .unwrap()
        .session_id;
    assert_eq!(session.to_string(), "s1");

    let connection = Arc::new(connection);
    let turn = tokio::spawn({
        let connection = Arc::clone(&connection);
        let request = prompt(&session, "ask");
        async move { connection.prompt(request).await }
    });
    assert_eq!(next_text(&mut events).await, "Hello");
    let permission = next_permission(&mut events).await;
    assert_eq!(permission.session_id(), &session);
    assert_eq!(
        permission.request.tool_call.fields.title.as_deref(),
        Some("write notes.txt")
    );
    let chosen = permission
        .select_kind(&[PermissionOptionKind::AllowOnce])
        .unwrap()
        .unwrap_or_else(|_| panic!("allow_once is offered"));
    assert_eq!(chosen, PermissionOptionKind::AllowOnce);
    let response = tokio::time::timeout(LIMIT, turn)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    // Every update of the turn is queued by the time the prompt call returned.
    assert_eq!(
        events
            .try_recv()
            .ok()
            .and_then(|e| chunk_text(&e))
            .as_deref(),
        Some("outcome: allow")
    );
    assert!(events.try_recv().is_err());
}

#[tokio::test]
async fn a_rejected_permission_reaches_the_agent_by_kind() {
    let (connection, mut events) = connected().await;
    let session = connection
        .new_session(NewSessionRequest::new("/project"))
        .await
        .unwrap()
        .session_id;
    let connection = Arc::new(connection);
    let turn = tokio::spawn({
        let connection = Arc::clone(&connection);
        let request = prompt(&session, "ask");
        async move { connection.prompt(request).await }
    });
    assert_eq!(next_text(&mut events).await, "Hello");
    let permission = next_permission(&mut events).await;
    // Not offered: the request comes back unanswered.
    let permission = match permission
        .select_kind(&[PermissionOptionKind::RejectAlways])
        .unwrap()
    {
        Ok(kind) => panic!("reject_always is not offered, yet {kind:?} was chosen"),
        Err(permission) => permission,
    };
    let reject = permission
        .option_of_kind(&[
            PermissionOptionKind::RejectAlways,
            PermissionOptionKind::RejectOnce,
        ])
        .unwrap()
        .option_id
        .clone();
    permission.select(reject).unwrap();
    assert_eq!(next_text(&mut events).await, "outcome: reject");
    let response = turn.await.unwrap().unwrap();
    assert_eq!(response.stop_reason, StopReason::EndTurn);
}

#[tokio::test]
async fn cancel_answers_pending_permissions_and_ends_the_turn_cancelled() {
    let (connection, mut events) = connected().await;
    let session = connection
        .new_session(NewSessionRequest::new("/project"))
        .await
        .unwrap()
        .session_id;
    let connection = Arc::new(connection);

    // A permission answered `cancelled` is reported to the agent as such.
    let turn = tokio::spawn({
        let connection = Arc::clone(&connection);
        let request = prompt(&session, "ask");
        async move { connection.prompt(request).await }
    });
    assert_eq!(next_text(&mut events).await, "Hello");
    next_permission(&mut events).await.cancel().unwrap();
    assert_eq!(next_text(&mut events).await, "outcome: cancelled");
    turn.await.unwrap().unwrap();

    // session/cancel ends a running turn with stop reason `cancelled`.
    let turn = tokio::spawn({
        let connection = Arc::clone(&connection);
        let request = prompt(&session, "hang");
        async move { connection.prompt(request).await }
    });
    connection.cancel(session.clone()).unwrap();
    let response = tokio::time::timeout(LIMIT, turn)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(response.stop_reason, StopReason::Cancelled);
}

#[tokio::test]
async fn an_unanswered_request_dropped_by_the_app_fails_on_the_agent_side() {
    let (connection, mut events) = connected().await;
    let session = connection
        .new_session(NewSessionRequest::new("/project"))
        .await
        .unwrap()
        .session_id;
    let connection = Arc::new(connection);
    let turn = tokio::spawn({
        let connection = Arc::clone(&connection);
        let request = prompt(&session, "ask");
        async move { connection.prompt(request).await }
    });
    assert_eq!(next_text(&mut events).await, "Hello");
    drop(next_permission(&mut events).await);
    // The agent gets an internal error instead of waiting forever.
    assert_eq!(next_text(&mut events).await, "outcome: error -32603");
    let response = tokio::time::timeout(LIMIT, turn)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(response.stop_reason, StopReason::EndTurn);
}

#[tokio::test]
async fn agent_errors_are_typed_with_their_message() {
    let (connection, _events) = connected().await;
    let session = connection
        .new_session(NewSessionRequest::new("/project"))
        .await
        .unwrap()
        .session_id;
    let error = connection
        .prompt(prompt(&session, "fail"))
        .await
        .unwrap_err();
    assert_eq!(error.rpc_code(), Some(-32603));
    assert!(
        error.to_string().contains("model error: 400 bad request"),
        "{error}"
    );
}

#[tokio::test]
async fn sessions_are_tracked_and_load_replays_before_it_returns() {
    let (connection, mut events) = connected().await;
    let session = connection
        .new_session(NewSessionRequest::new("/project"))
        .await
        .unwrap()
        .session_id;
    let open = connection.open_sessions();
    assert_eq!(open.len(), 1);
    assert_eq!(open[0].cwd, Path::new("/project"));

    connection.close_session(session.clone()).await.unwrap();
    assert!(connection.open_sessions().is_empty());

    connection
        .load_session(LoadSessionRequest::new(session.clone(), "/project"))
        .await
        .unwrap();
    assert_eq!(
        events
            .try_recv()
            .ok()
            .and_then(|e| chunk_text(&e))
            .as_deref(),
        Some("replayed")
    );
    assert_eq!(connection.open_sessions().len(), 1);

    // Not advertised: refused locally, never sent.
    assert!(matches!(
        connection.list_sessions(ListSessionsRequest::new()).await,
        Err(ClientError::Unsupported("session/list"))
    ));
    assert!(matches!(
        connection.delete_session(session).await,
        Err(ClientError::Unsupported("session/delete"))
    ));
}

#[tokio::test]
async fn a_vanished_agent_fails_calls_as_disconnected() {
    let (client_end, agent_end) = Channel::duplex();
    // An agent that answers initialize and then goes away.
    let agent = Agent.v1().on_receive_request(
        async |request: InitializeRequest, responder, _cx| {
            responder.respond(InitializeResponse::new(request.protocol_version))
        },
        agent_client_protocol::on_receive_request!(),
    );
    let (gone_tx, gone_rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = agent
            .connect_with(agent_end, async |_cx| {
                let _ = gone_rx.await;
                Ok(())
            })
            .await;
    });
    let (connection, _events) = Connection::connect(client_end, &ConnectOptions::default())
        .await
        .unwrap();
    drop(gone_tx);
    tokio::time::timeout(LIMIT, connection.closed())
        .await
        .unwrap();
    assert!(connection.is_closed());
    let error = connection
        .new_session(NewSessionRequest::new("/project"))
        .await
        .unwrap_err();
    assert!(error.is_disconnect(), "{error:?}");
}

// --- processes ---------------------------------------------------------------------------

/// A fake "agent" that starts a background sleeper and never answers; it writes the shell's
/// pid and the sleeper's to `pids`.
fn silent_agent(dir: &Path) -> RunnerCommand {
    RunnerCommand::new("sh")
        .arg("-c")
        .arg("echo $$ > pids; sleep 1000 & echo $! >> pids; sleep 1000")
        .cwd(dir)
}

#[tokio::test]
async fn dropping_the_process_kills_and_reaps_the_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let process = RunnerProcess::spawn(&silent_agent(dir.path())).unwrap();
    let pids = read_pids(&dir.path().join("pids"), 2).await;
    assert_eq!(pids[0], process.id());
    drop(process);
    assert!(
        wait_gone(pids[0], false).await,
        "the runner {} was not reaped",
        pids[0]
    );
    assert!(
        wait_gone(pids[1], true).await,
        "its child {} survived",
        pids[1]
    );
}

#[tokio::test]
async fn a_silent_agent_times_out_and_its_group_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let options = ConnectOptions {
        init_timeout: Duration::from_millis(500),
        ..ConnectOptions::default()
    };
    let error = RunnerClient::spawn(&silent_agent(dir.path()), &options)
        .await
        .unwrap_err();
    assert!(matches!(error, ClientError::InitTimeout(_)), "{error:?}");
    let pids = read_pids(&dir.path().join("pids"), 2).await;
    assert!(
        wait_gone(pids[0], false).await,
        "the runner {} was not reaped",
        pids[0]
    );
    assert!(
        wait_gone(pids[1], true).await,
        "its child {} survived",
        pids[1]
    );
}

#[tokio::test]
async fn a_runner_dying_at_start_is_reported_with_its_stderr() {
    let command = RunnerCommand::new("sh")
        .arg("-c")
        .arg("echo \"config is broken: $MARCH_TEST_VALUE\" >&2; exit 3")
        .env("MARCH_TEST_VALUE", "42");
    let error = RunnerClient::spawn(&command, &ConnectOptions::default())
        .await
        .unwrap_err();
    match &error {
        ClientError::Exited { exit, stderr_tail } => {
            assert_eq!(*exit, RunnerExit::Code(3));
            assert_eq!(stderr_tail, "config is broken: 42");
        }
        other => panic!("expected Exited, got {other:?}"),
    }
    assert!(
        error
            .to_string()
            .starts_with("the runner exited with code 3"),
        "{error}"
    );
}

#[tokio::test]
async fn a_missing_program_is_a_spawn_error() {
    let error = RunnerClient::spawn(
        &RunnerCommand::new("/nonexistent/march-runner"),
        &ConnectOptions::default(),
    )
    .await
    .unwrap_err();
    assert!(matches!(error, ClientError::Spawn { .. }), "{error:?}");
    assert!(
        error.to_string().contains("/nonexistent/march-runner"),
        "{error}"
    );
}

#[tokio::test]
async fn the_stderr_tail_is_bounded_and_keeps_the_end() {
    let process = RunnerProcess::spawn(
        &RunnerCommand::new("sh")
            .arg("-c")
            .arg("i=0; while [ $i -lt 3000 ]; do echo \"line $i of noise\" >&2; i=$((i+1)); done; echo last >&2"),
    )
    .unwrap();
    assert_eq!(
        tokio::time::timeout(LIMIT, process.wait()).await.unwrap(),
        RunnerExit::Code(0)
    );
    let tail = process.stderr_tail();
    assert!(tail.len() <= STDERR_TAIL_BYTES, "{}", tail.len());
    assert!(
        tail.ends_with("line 2999 of noise\nlast"),
        "{}",
        &tail[tail.len() - 40..]
    );
}

#[tokio::test]
async fn kill_reports_the_signal() {
    let dir = tempfile::tempdir().unwrap();
    let mut process = RunnerProcess::spawn(&silent_agent(dir.path())).unwrap();
    let pids = read_pids(&dir.path().join("pids"), 2).await;
    process.kill();
    let exit = tokio::time::timeout(LIMIT, process.wait()).await.unwrap();
    assert_eq!(exit, RunnerExit::Signal(9));
    assert_eq!(process.exit(), Some(RunnerExit::Signal(9)));
    assert!(
        wait_gone(pids[1], true).await,
        "its child {} survived",
        pids[1]
    );
}

/// A third-party "agent" in Python that prints garbage on stdout before each answer (bytes
/// that are not UTF-8, then a line over the limit) and logs every line it receives to `log`.
fn garbage_printing_agent(dir: &Path) -> RunnerCommand {
    let script = r#"
import json, sys
log = open("log", "a")
for raw in sys.stdin.buffer:
    log.write(raw.decode("utf-8", "replace")); log.flush()
    msg = json.loads(raw)
    if "id" not in msg or "method" not in msg:
        continue
    out = sys.stdout.buffer
    out.write(b"\xff\xfe not utf-8\n")
    out.write(b"x" * (int(sys.argv[1]) + 10) + b"\n")
    if msg["method"] == "initialize":
        result = {"protocolVersion": 1, "agentCapabilities": {}}
    elif msg["method"] == "session/new":
        result = {"sessionId": "s1"}
    else:
        result = {}
    out.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode() + b"\n")
    out.flush()
"#;
    RunnerCommand::new("python3")
        .arg("-c")
        .arg(script)
        .arg(crate::wire::MAX_LINE_BYTES.to_string())
        .cwd(dir)
}

#[tokio::test]
async fn an_agent_printing_garbage_keeps_its_connection() {
    let dir = tempfile::tempdir().unwrap();
    let (client, _events) = tokio::time::timeout(
        LIMIT,
        RunnerClient::spawn(
            &garbage_printing_agent(dir.path()),
            &ConnectOptions::default(),
        ),
    )
    .await
    .expect("connect timed out")
    .expect("connect failed");
    let session = tokio::time::timeout(
        LIMIT,
        client
            .connection()
            .new_session(NewSessionRequest::new(dir.path())),
    )
    .await
    .expect("session/new timed out")
    .expect("session/new failed");
    assert_eq!(session.session_id.0.as_ref(), "s1");
    // The agent was told of each bad line with a parse error, id null. The answers to the
    // first two exchanges' garbage went out before a third request, so once that is answered
    // the agent has read (and logged) them.
    tokio::time::timeout(
        LIMIT,
        client
            .connection()
            .new_session(NewSessionRequest::new(dir.path())),
    )
    .await
    .expect("the second session/new timed out")
    .expect("the second session/new failed");
    let log = std::fs::read_to_string(dir.path().join("log")).unwrap();
    let lines: Vec<serde_json::Value> = log
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    // Up to the third request: what came after it may not be read yet.
    let third = lines
        .iter()
        .rposition(|v| v.get("method").is_some())
        .unwrap();
    let errors: Vec<&serde_json::Value> = lines[..third]
        .iter()
        .filter(|v| v.get("error").is_some())
        .collect();
    assert_eq!(errors.len(), 4, "{log}");
    assert!(
        errors
            .iter()
            .all(|e| e["error"]["code"] == -32700 && e["id"].is_null())
    );
    assert!(!client.connection().is_closed());
}
