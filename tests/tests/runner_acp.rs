//! `march runner` as a real child over stdio, driven by an ACP client built on the crate,
//! against the scripted model server: turns, permissions, cancellation, queueing, errors.
//! Session lifecycle and crash safety: `runner_acp_sessions.rs`.

#[path = "support/acp_client.rs"]
mod acp_client;

use acp_client::*;
use agent_client_protocol::ErrorCode;
use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, ImageContent, LoadSessionRequest, PermissionOptionKind,
    PromptRequest, SessionUpdate, StopReason, TextContent, ToolCallStatus,
};
use march_testkit::{Event, ScriptStop, Turn};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_runs_only_after_permission_is_granted() {
    let h = Harness::new(vec![
        Turn::stream(vec![
            Event::thinking("The user wants a file."),
            Event::text("Writing it."),
            write_call("call_1", "hello.txt", "hi there"),
        ]),
        Turn::text("Done."),
    ])
    .await;
    let project = h.project();
    let (_runner, mut client) = h.connect().await;

    let init = serde_json::to_value(&client.init).unwrap();
    let caps = &init["agentCapabilities"];
    assert_eq!(caps["loadSession"], true);
    assert_eq!(caps["promptCapabilities"]["image"], true);
    assert_eq!(caps["promptCapabilities"]["embeddedContext"], true);
    for cap in ["list", "resume", "close", "delete"] {
        assert!(
            caps["sessionCapabilities"][cap].is_object(),
            "{cap}: {caps}"
        );
    }
    assert_eq!(init["agentInfo"]["name"], "march");

    let session = client.new_session(&project).await;
    let options = serde_json::to_value(&session.config_options).unwrap();
    let ids: Vec<&str> = options
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "model",
            "thinking",
            "permissions",
            "max_turns",
            "tool_timeout",
            "sandbox"
        ]
    );
    assert_eq!(options[0]["currentValue"], "scripted/m");
    assert_eq!(options[0]["category"], "model");
    assert_eq!(options[1]["category"], "thought_level");
    assert_eq!(options[2]["currentValue"], "ask");
    client
        .wait_update(|u| matches!(u, SessionUpdate::AvailableCommandsUpdate(_)))
        .await;

    std::fs::write(project.join("AGENTS.md"), "PROJECT RULE: be brief").unwrap();
    let prompt = client.prompt(&session.session_id, "please write hello.txt");
    let call = client
        .wait_update(|u| matches!(u, SessionUpdate::ToolCall(_)))
        .await;
    let call = serde_json::to_value(&call).unwrap();
    assert_eq!(call["toolCallId"], "call_1");
    assert_eq!(call["kind"], "edit");
    assert_eq!(call["title"], "write hello.txt");
    assert_eq!(
        call["locations"][0]["path"],
        json!(project.join("hello.txt"))
    );
    assert_eq!(call["rawInput"]["content"], "hi there");

    let (request, responder) = client.wait_permission().await;
    assert_eq!(&*request.tool_call.tool_call_id.0, "call_1");
    assert!(
        !project.join("hello.txt").exists(),
        "nothing may be written before the answer"
    );
    // Mid-run edits of the layers' sources must not reach this run's later requests.
    std::fs::write(project.join("AGENTS.md"), "CHANGED RULE").unwrap();
    choose(&request, responder, PermissionOptionKind::AllowOnce);

    let done = client
        .wait_update(|u| is_status(u, ToolCallStatus::Completed))
        .await;
    let done = serde_json::to_value(&done).unwrap();
    assert_eq!(done["content"][0]["type"], "diff");
    assert_eq!(done["content"][0]["newText"], "hi there");
    assert!(done["content"][0]["oldText"].is_null());
    assert_eq!(done["content"][0]["path"], json!(project.join("hello.txt")));

    let response = within("the prompt response", prompt)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    assert_eq!(
        std::fs::read_to_string(project.join("hello.txt")).unwrap(),
        "hi there"
    );
    client.drain();
    let seen: Vec<String> = client.updates.iter().map(|n| describe(&n.update)).collect();
    let expected = [
        "available_commands_update",
        // The first prompt titles the session.
        "session_info_update",
        "agent_thought_chunk",
        "agent_message_chunk",
        "tool_call",
        "usage_update",
        "tool_call_update in_progress",
        "tool_call_update completed",
        "agent_message_chunk",
        "usage_update",
    ];
    assert_eq!(seen, expected);

    // Both model calls of the run share the system prompt assembled once at its start.
    let requests = h.server.requests();
    assert_eq!(requests.len(), 2);
    let first = request_messages(&requests[0].body);
    let second = request_messages(&requests[1].body);
    assert_eq!(first[0]["role"], "system");
    let system = first[0]["content"].as_str().unwrap();
    assert!(
        system.contains(&format!("Current working directory: {}", project.display())),
        "{system}"
    );
    assert!(system.contains("PROJECT RULE: be brief"), "{system}");
    assert_eq!(second[0], first[0]);
    assert!(second.iter().any(|m| m["role"] == "tool"), "{second:?}");

    let file = session_file(&h.sessions_dir());
    assert_eq!(
        roles(&file),
        ["user", "assistant", "toolResult", "assistant"]
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_call_does_not_run_and_the_model_sees_why() {
    let h = Harness::new(vec![
        Turn::stream(vec![write_call("call_1", "no.txt", "x")]),
        Turn::text("Understood."),
    ])
    .await;
    let project = h.project();
    let (_runner, mut client) = h.connect().await;
    let session = client.new_session(&project).await;
    let prompt = client.prompt(&session.session_id, "write no.txt");
    let (request, responder) = client.wait_permission().await;
    choose(&request, responder, PermissionOptionKind::RejectOnce);
    let failed = client
        .wait_update(|u| is_status(u, ToolCallStatus::Failed))
        .await;
    let failed = serde_json::to_value(&failed).unwrap();
    assert_eq!(
        failed["content"][0]["content"]["text"],
        "The user rejected this tool call."
    );
    let response = within("the prompt response", prompt)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    assert!(!project.join("no.txt").exists());
    let requests = h.server.requests();
    assert_eq!(requests.len(), 2);
    let tool_message = request_messages(&requests[1].body)
        .into_iter()
        .find(|m| m["role"] == "tool")
        .expect("the rejection goes back to the model");
    assert!(
        tool_message["content"]
            .to_string()
            .contains("The user rejected this tool call."),
        "{tool_message}"
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_answers_are_remembered_for_the_session() {
    let h = Harness::new(vec![
        Turn::stream(vec![write_call("call_1", "a.txt", "a")]),
        Turn::text("one"),
        Turn::stream(vec![write_call("call_2", "b.txt", "b")]),
        Turn::text("two"),
    ])
    .await;
    let project = h.project();
    let (_runner, mut client) = h.connect().await;
    let session = client.new_session(&project).await;
    let first = client.prompt(&session.session_id, "write a");
    let (request, responder) = client.wait_permission().await;
    choose(&request, responder, PermissionOptionKind::AllowAlways);
    let r = within("first prompt", first).await.unwrap().unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    // The second write asks nothing: wait_update fails on any permission request.
    let second = client.prompt(&session.session_id, "write b");
    client
        .wait_update(|u| {
            is_status(u, ToolCallStatus::Completed)
                && serde_json::to_value(u).unwrap()["toolCallId"] == "call_2"
        })
        .await;
    let r = within("second prompt", second).await.unwrap().unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    assert!(project.join("a.txt").exists() && project.join("b.txt").exists());
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_stream_answers_cancelled_and_the_session_goes_on() {
    let h = Harness::new(vec![
        Turn::stream(vec![
            Event::text("Working on it"),
            Event::pause(300_000),
            Event::text("never"),
        ]),
        Turn::text("After the cancel."),
        Turn::stream(vec![Event::text("Again"), Event::pause(300_000)]),
    ])
    .await;
    let (_runner, mut client) = h.connect().await;
    let session = client.new_session(&h.project()).await;
    let prompt = client.prompt(&session.session_id, "long task");
    client.wait_update(|u| is_text(u, "Working on it")).await;
    client
        .cx
        .send_notification(CancelNotification::new(session.session_id.clone()))
        .unwrap();
    let response = within("the cancelled prompt", prompt)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(response.stop_reason, StopReason::Cancelled);

    let again = client.prompt(&session.session_id, "next");
    client
        .wait_update(|u| is_text(u, "After the cancel."))
        .await;
    let r = within("the next prompt", again).await.unwrap().unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);

    // `$/cancel_request` for the prompt request itself cancels that prompt.
    let sent = client.cx.send_request(PromptRequest::new(
        session.session_id.clone(),
        vec![ContentBlock::Text(TextContent::new("and again"))],
    ));
    let handle = sent.cancellation_handle();
    let third = tokio::spawn(sent.block_task());
    client.wait_update(|u| is_text(u, "Again")).await;
    handle.cancel().unwrap();
    let r = within("the request-cancelled prompt", third)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.stop_reason, StopReason::Cancelled);
    // The interrupted answer is on disk, marked aborted.
    let file = session_file(&h.sessions_dir());
    assert_eq!(
        roles(&file),
        [
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant"
        ]
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_permission_answers_cancelled_and_runs_nothing() {
    let h = Harness::new(vec![
        Turn::stream(vec![bash_call("call_1", "touch made1.txt")]),
        Turn::stream(vec![bash_call("call_2", "touch made2.txt")]),
        Turn::text("still here"),
    ])
    .await;
    let project = h.project();
    let (_runner, mut client) = h.connect().await;
    let session = client.new_session(&project).await;

    // session/cancel while the question is open; the client then answers it `cancelled`.
    let prompt = client.prompt(&session.session_id, "make one");
    let (_request, responder) = client.wait_permission().await;
    client
        .cx
        .send_notification(CancelNotification::new(session.session_id.clone()))
        .unwrap();
    cancel_permission(responder);
    let response = within("the cancelled prompt", prompt)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(response.stop_reason, StopReason::Cancelled);

    // The `cancelled` outcome alone cancels the turn too: it is not a denial.
    let prompt = client.prompt(&session.session_id, "make two");
    let (_request, responder) = client.wait_permission().await;
    cancel_permission(responder);
    let response = within("the cancelled prompt", prompt)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(response.stop_reason, StopReason::Cancelled);
    assert!(!project.join("made1.txt").exists() && !project.join("made2.txt").exists());

    let prompt = client.prompt(&session.session_id, "hello?");
    client.wait_update(|u| is_text(u, "still here")).await;
    let r = within("the last prompt", prompt).await.unwrap().unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_tool_stops_the_command() {
    let h = Harness::new(vec![Turn::stream(vec![bash_call(
        "call_1",
        "echo started; sleep 300; touch late.txt",
    )])])
    .await;
    let project = h.project();
    let (_runner, mut client) = h.connect().await;
    let session = client.new_session(&project).await;
    set_option(&client, &session.session_id, "permissions", "yolo")
        .await
        .unwrap();
    let prompt = client.prompt(&session.session_id, "run it");
    client
        .wait_update(|u| is_status(u, ToolCallStatus::InProgress))
        .await;
    client
        .cx
        .send_notification(CancelNotification::new(session.session_id.clone()))
        .unwrap();
    // Far sooner than the command's 300 s: the process group is killed.
    let response = within("the cancelled prompt", prompt)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(response.stop_reason, StopReason::Cancelled);
    client.drain();
    let last_call = client
        .updates
        .iter()
        .rev()
        .find(|n| matches!(n.update, SessionUpdate::ToolCallUpdate(_)))
        .map(|n| describe(&n.update));
    assert_eq!(last_call.as_deref(), Some("tool_call_update failed"));
    assert!(!project.join("late.txt").exists());
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_sent_during_a_turn_waits_for_it() {
    let h = Harness::new(vec![
        Turn::stream(vec![bash_call("call_1", "echo one > one.txt")]),
        Turn::text("First done."),
        Turn::text("Second done."),
    ])
    .await;
    let project = h.project();
    let (_runner, mut client) = h.connect().await;
    let session = client.new_session(&project).await.session_id;
    let first = client.prompt(&session, "first");
    // The first turn is parked on a permission question while the second prompt arrives.
    let (request, responder) = client.wait_permission().await;
    let second = client.prompt(&session, "second");
    assert_eq!(h.server.requests().len(), 1);
    choose(&request, responder, PermissionOptionKind::AllowOnce);
    let r1 = within("first prompt", first).await.unwrap().unwrap();
    let r2 = within("second prompt", second).await.unwrap().unwrap();
    assert_eq!(
        (r1.stop_reason, r2.stop_reason),
        (StopReason::EndTurn, StopReason::EndTurn)
    );
    // The second run started after the first ended, and its context holds the first turn.
    let requests = h.server.requests();
    assert_eq!(requests.len(), 3);
    let last = request_messages(&requests[2].body);
    let users: Vec<String> = last
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .collect();
    assert_eq!(users.len(), 2, "{last:?}");
    assert!(
        users[0].contains("first") && users[1].contains("second"),
        "{users:?}"
    );
    assert_eq!(
        roles(&session_file(&h.sessions_dir())),
        [
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "user",
            "assistant"
        ]
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_errors_fail_the_prompt_and_refusals_are_a_stop_reason() {
    let h = Harness::new(vec![
        Turn::status(400).with_body(r#"{"error":{"message":"bad model parameters"}}"#),
        Turn::text("I can't help with that.").with_stop(ScriptStop::Refusal),
        Turn::text("fine"),
    ])
    .await;
    let (_runner, client) = h.connect().await;
    let session = client.new_session(&h.project()).await.session_id;
    let err = within("failing prompt", client.prompt(&session, "a"))
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::INTERNAL_ERROR);
    assert!(err.message.contains("bad model parameters"), "{err:?}");
    let r = within("refused prompt", client.prompt(&session, "b"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.stop_reason, StopReason::Refusal);
    let r = within("prompt", client.prompt(&session, "c"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_ends_the_turn_within_the_configured_bound() {
    let h = Harness::new(vec![
        Turn::Silent,
        Turn::Silent,
        Turn::Silent,
        Turn::text("answered"),
    ])
    .await;
    let config = h.march_home().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("[requests]\nfirst_byte_timeout = 0.5\nstall_retries = 1\n");
    std::fs::write(&config, text).unwrap();
    let (_runner, client) = h.connect().await;
    let session = client.new_session(&h.project()).await.session_id;
    // Two attempts of half a second each, then a clear error.
    let err = within("the stalled prompt", client.prompt(&session, "a"))
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::INTERNAL_ERROR);
    assert!(
        err.message.contains(&format!(
            "the model server at {}/chat/completions did not answer for 0.5 s (gave up after \
             2 attempts; [requests] in config.toml sets how long to wait)",
            h.server.base_url()
        )),
        "{err:?}"
    );
    assert_eq!(h.server.requests().len(), 2);
    // A cancel while the server holds the request ends the turn at once.
    let prompt = client.prompt(&session, "b");
    within(
        "the request to reach the server",
        h.server.wait_for_requests(3),
    )
    .await;
    client
        .cx
        .send_notification(CancelNotification::new(session.clone()))
        .unwrap();
    let answer = within("the cancelled prompt", prompt)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(answer.stop_reason, StopReason::Cancelled);
    let r = within("prompt", client.prompt(&session, "c"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_and_unknown_methods_get_errors_and_the_runner_lives_on() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let h = Harness::new(vec![]).await;
    let mut runner = h.spawn_runner();
    let mut stdin = runner.stdin.take().unwrap();
    let mut lines = BufReader::new(runner.stdout.take().unwrap()).lines();
    let project = h.project();
    // One line at a time, each answered before the next: ACP wants `initialize` done first.
    let exchange = [
        (None, "this is not json".to_string()),
        (
            Some(1),
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": 1}})
            .to_string(),
        ),
        (
            None,
            r#"{"jsonrpc": "2.0", "id": 9, "method": "#.to_string(),
        ),
        (
            Some(2),
            json!({"jsonrpc": "2.0", "id": 2, "method": "no/such_method", "params": {}})
                .to_string(),
        ),
        (
            Some(3),
            json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
                   "params": {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}})
            .to_string(),
        ),
        (
            Some(4),
            json!({"jsonrpc": "2.0", "id": 4, "method": "session/new",
                   "params": {"cwd": "relative/dir", "mcpServers": []}})
            .to_string(),
        ),
        (
            Some(5),
            json!({"jsonrpc": "2.0", "id": 5, "method": "session/list",
                   "params": {"cwd": project}})
            .to_string(),
        ),
    ];
    let mut answers = std::collections::BTreeMap::new();
    // Lines without an id: answers to the garbage, which must be parse errors.
    let mut anonymous = Vec::new();
    for (id, line) in &exchange {
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        stdin.flush().await.unwrap();
        let Some(id) = id else { continue };
        while !answers.contains_key(id) {
            // Every stdout line must be JSON-RPC.
            let line = within("a response line", lines.next_line())
                .await
                .unwrap()
                .unwrap_or_else(|| panic!("stdout closed; got {answers:?}"));
            let v: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not JSON on stdout: {line:?} ({e})"));
            assert_eq!(v["jsonrpc"], "2.0", "{line}");
            match v["id"].as_i64() {
                Some(got) => {
                    answers.insert(got, v);
                }
                None => anonymous.push(v),
            }
        }
    }
    assert_eq!(answers[&1]["result"]["protocolVersion"], 1);
    assert_eq!(answers[&2]["error"]["code"], -32601, "{}", answers[&2]);
    assert_eq!(answers[&3]["error"]["code"], -32002, "{}", answers[&3]);
    assert_eq!(answers[&4]["error"]["code"], -32602, "{}", answers[&4]);
    assert_eq!(answers[&5]["result"]["sessions"], json!([]));
    // Both garbage lines were answered with a parse error (id null), in order.
    assert_eq!(anonymous.len(), 2, "{anonymous:?}");
    for v in &anonymous {
        assert_eq!(v["error"]["code"], -32700, "{v}");
        assert!(v["id"].is_null(), "{v}");
    }

    // Closing stdin ends the runner cleanly.
    drop(stdin);
    let status = within("the runner to exit", runner.child.wait())
        .await
        .unwrap();
    assert!(status.success(), "{status}");
}

/// A raw JSON-RPC peer on a runner's stdio: lines out, lines in, answers kept by id.
struct RawPeer {
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    answers: std::collections::BTreeMap<i64, Value>,
    anonymous: Vec<Value>,
    notifications: Vec<Value>,
}

#[allow(clippy::unwrap_used)] // A test helper: it fails the test like the tests do.
impl RawPeer {
    fn new(runner: &mut Runner) -> RawPeer {
        use tokio::io::AsyncBufReadExt;
        RawPeer {
            stdin: runner.stdin.take().unwrap(),
            lines: tokio::io::BufReader::new(runner.stdout.take().unwrap()).lines(),
            answers: Default::default(),
            anonymous: Vec::new(),
            notifications: Vec::new(),
        }
    }

    async fn send(&mut self, bytes: &[u8]) {
        use tokio::io::AsyncWriteExt;
        self.stdin.write_all(bytes).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// Read stdout until `done` holds, sorting every line.
    async fn until(&mut self, what: &str, done: impl Fn(&RawPeer) -> bool) {
        while !done(self) {
            let line = within(what, self.lines.next_line())
                .await
                .unwrap()
                .unwrap_or_else(|| panic!("stdout closed waiting for {what}"));
            let v: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not JSON on stdout: {line:?} ({e})"));
            match (v["id"].as_i64(), v.get("method")) {
                (Some(id), None) => {
                    self.answers.insert(id, v);
                }
                (None, None) => self.anonymous.push(v),
                _ => self.notifications.push(v),
            }
        }
    }

    async fn call(&mut self, id: i64, method: &str, params: Value) -> Value {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(line.to_string().as_bytes()).await;
        self.until(method, |p| p.answers.contains_key(&id)).await;
        self.answers[&id].clone()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_bytes_and_an_oversized_line_leave_the_connection_and_a_running_turn_alone() {
    // The first session's turn streams a word, then waits while the bad lines go in.
    let h = Harness::new(vec![Turn::stream(vec![
        Event::text("half"),
        Event::pause(1500),
        Event::text(" done"),
    ])])
    .await;
    let mut runner = h.spawn_runner();
    let mut peer = RawPeer::new(&mut runner);
    let project = h.project();
    peer.call(1, "initialize", json!({"protocolVersion": 1}))
        .await;
    let new = peer
        .call(2, "session/new", json!({"cwd": project, "mcpServers": []}))
        .await;
    let session = new["result"]["sessionId"].as_str().unwrap().to_string();
    let prompt = json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}});
    peer.send(prompt.to_string().as_bytes()).await;
    peer.until("the turn's first words", |p| {
        p.notifications
            .iter()
            .any(|n| n.to_string().contains("half"))
    })
    .await;

    // Not UTF-8 at all, then invalid UTF-8 inside a JSON string, then a line over the limit.
    peer.send(b"\xff\xfe\xfd garbage").await;
    peer.send(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"session/list\",\"params\":{\"cwd\":\"\xc3\x28\"}}")
        .await;
    let mut huge =
        b"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"session/list\",\"params\":{\"x\":\"".to_vec();
    huge.resize(march_runner::wire::MAX_LINE_BYTES + 1024, b'a');
    huge.extend_from_slice(b"\"}}");
    peer.send(&huge).await;
    drop(huge);

    // Service goes on: a valid request is answered, and the running turn ends normally.
    let listed = peer.call(4, "session/list", json!({"cwd": project})).await;
    assert_eq!(
        listed["result"]["sessions"].as_array().unwrap().len(),
        1,
        "{listed}"
    );
    peer.until("the prompt's answer", |p| p.answers.contains_key(&3))
        .await;
    assert_eq!(
        peer.answers[&3]["result"]["stopReason"], "end_turn",
        "{}",
        peer.answers[&3]
    );
    let said: String = peer
        .notifications
        .iter()
        .filter_map(|n| n["params"]["update"]["content"]["text"].as_str())
        .collect();
    assert_eq!(said, "half done");
    // Each bad line got one parse error with id null; the bad requests' ids were never seen.
    assert_eq!(peer.anonymous.len(), 3, "{:?}", peer.anonymous);
    for v in &peer.anonymous {
        assert_eq!(v["error"]["code"], -32700, "{v}");
    }
    assert!(
        peer.anonymous[2]["error"]["data"]
            .to_string()
            .contains("more than")
    );
    assert!(!peer.answers.contains_key(&7) && !peer.answers.contains_key(&8));

    // Deleting with an id that cannot be a session is an unknown session, like session/load.
    let deleted = peer
        .call(
            5,
            "session/delete",
            json!({"sessionId": "../../etc/passwd"}),
        )
        .await;
    assert_eq!(deleted["error"]["code"], -32002, "{deleted}");
    drop(peer);
    let status = within("the runner to exit", runner.child.wait())
        .await
        .unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_request_carries_the_context_layers_in_order() {
    let h = Harness::new(vec![Turn::text("ok")]).await;
    // The project is a repository root with a nested package the session works in.
    let root = h.project();
    let cwd = root.join("crates/app");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::write(root.join("AGENTS.md"), "ROOT RULE").unwrap();
    std::fs::write(cwd.join("CLAUDE.md"), "CWD RULE").unwrap();
    std::fs::create_dir_all(h.march_home().join("profiles")).unwrap();
    std::fs::write(h.march_home().join("profiles/user.md"), "USER PROFILE").unwrap();
    let (_runner, client) = h.connect().await;
    let session = client.new_session(&cwd).await;
    let response = client
        .prompt(&session.session_id, "hi")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    let requests = h.server.requests();
    let system = requests[0].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    let at = |needle: &str| {
        system
            .find(needle)
            .unwrap_or_else(|| panic!("{needle} missing from the system prompt:\n{system}"))
    };
    // system_core, injections (tools), project_context (root, then cwd), profiles, identity.
    let order = [
        at("You are March"),
        at("Available tools:"),
        at("ROOT RULE"),
        at("CWD RULE"),
        at("USER PROFILE"),
        at(&format!("Current working directory: {}", cwd.display())),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}\n{system}");
    assert_eq!(requests[0].body["messages"][1]["content"], "hi");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_queued_during_a_turn_steer_it_and_follow_it_up() {
    use march_runner::steering::{
        QueueKind, QueueMessageRequest, QueueMessageResponse, UnqueueMessageRequest,
    };
    let h = Harness::new(vec![
        // The command runs until the test has queued its messages.
        Turn::stream(vec![bash_call(
            "c1",
            "while [ ! -e go ]; do sleep 0.05; done; echo went",
        )]),
        Turn::text("Steered."),
        Turn::text("Summary."),
    ])
    .await;
    let project = h.project();
    let (_runner, mut client) = h.connect().await;
    let init = client.initialize().await;
    let caps = serde_json::to_value(&init.agent_capabilities).unwrap();
    assert_eq!(
        caps["_meta"]["march"]["queue"]["queue"],
        "_march/session/queue"
    );
    let id = client.new_session(&project).await.session_id;
    set_option(&client, &id, "permissions", "yolo")
        .await
        .unwrap();
    let cx = client.cx.clone();
    let queue = |text: &str, kind| {
        cx.send_request(QueueMessageRequest {
            session_id: id.0.to_string(),
            text: text.to_string(),
            kind,
        })
        .block_task()
    };
    // Between turns nothing is queued: the client sends a prompt instead.
    let idle: QueueMessageResponse = within("queue idle", queue("x", QueueKind::Steer))
        .await
        .unwrap();
    assert_eq!(idle.id, None);

    let prompt = client.prompt(&id, "start");
    client
        .wait_update(|u| is_status(u, ToolCallStatus::InProgress))
        .await;
    let steer = within("queue steer", queue("use tabs", QueueKind::Steer))
        .await
        .unwrap()
        .id
        .unwrap();
    let follow = within(
        "queue follow-up",
        queue("then summarise", QueueKind::FollowUp),
    )
    .await
    .unwrap()
    .id
    .unwrap();
    let dropped = within("queue another", queue("drop me", QueueKind::Steer))
        .await
        .unwrap()
        .id
        .unwrap();
    let removed = within(
        "unqueue",
        client
            .cx
            .send_request(UnqueueMessageRequest {
                session_id: id.0.to_string(),
                id: dropped.clone(),
            })
            .block_task(),
    )
    .await
    .unwrap();
    assert!(removed.removed);
    std::fs::write(project.join("go"), "").unwrap();
    let r = within("prompt", prompt).await.unwrap().unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    assert!(r.meta.is_none(), "everything was delivered: {:?}", r.meta);

    // Each delivered message reached the client as the user's, marked with its queue id.
    let delivered: Vec<(String, String)> = client
        .drain()
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::UserMessageChunk(c) => Some((
                chunk_text(u).unwrap_or_default(),
                c.meta
                    .as_ref()?
                    .get("march")?
                    .get("queueId")?
                    .as_str()?
                    .to_string(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        delivered,
        [
            ("use tabs".to_string(), steer),
            ("then summarise".to_string(), follow)
        ]
    );
    // Every change of the queue was told: three queued, one taken back, two delivered.
    let told: Vec<Vec<String>> = client
        .calls
        .iter()
        .filter(|(method, _)| method == "_march/session/queue_changed")
        .map(|(_, params)| {
            params["queued"]
                .as_array()
                .map(|q| {
                    q.iter()
                        .map(|m| m["text"].as_str().unwrap_or_default().to_string())
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(
        told,
        [
            vec!["use tabs"],
            vec!["use tabs", "then summarise"],
            vec!["use tabs", "then summarise", "drop me"],
            vec!["use tabs", "then summarise"],
            vec!["then summarise"],
            vec![],
        ]
    );
    // The steering reached the next model request (after the tool result); the follow-up
    // the one after the agent would have stopped; the one taken back none.
    let requests = h.server.requests();
    let post: Vec<_> = requests.iter().filter(|r| r.model().is_some()).collect();
    assert_eq!(post.len(), 3);
    let last_user = |body: &Value| {
        request_messages(body)
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .map(|m| m["content"].to_string())
            .unwrap_or_default()
    };
    assert!(
        last_user(&post[1].body).contains("use tabs"),
        "{}",
        post[1].body
    );
    let roles: Vec<String> = request_messages(&post[1].body)
        .iter()
        .map(|m| m["role"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(roles.last().map(String::as_str), Some("user"));
    assert!(roles.iter().any(|r| r == "tool"), "{roles:?}");
    assert!(last_user(&post[2].body).contains("then summarise"));
    assert!(!requests.iter().any(|r| r.raw_body.contains("drop me")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_todo_tool_sends_the_plan_and_a_load_replays_it() {
    let todos = json!({"todos": [
        {"content": "read the parser", "status": "completed"},
        {"content": "fix nesting", "status": "in_progress", "priority": "high"},
        {"content": "add tests", "status": "pending"}
    ]});
    let h = Harness::new(vec![
        Turn::stream(vec![Event::tool_call("t1", "todo", &[&todos.to_string()])]),
        Turn::text("Working on it."),
    ])
    .await;
    let project = h.project();
    let (_runner, mut client) = h.connect().await;
    let id = client.new_session(&project).await.session_id;
    // The plan changes nothing outside the session: it never asks (ask mode).
    let r = within("prompt", client.prompt(&id, "fix the parser"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    let plan = |updates: Vec<SessionUpdate>| {
        updates.into_iter().find_map(|u| match u {
            SessionUpdate::Plan(p) => Some(serde_json::to_value(p).unwrap()),
            _ => None,
        })
    };
    let live = plan(client.drain()).expect("a plan update");
    assert_eq!(live["entries"][1]["content"], "fix nesting");
    assert_eq!(live["entries"][1]["status"], "in_progress");
    assert_eq!(live["entries"][1]["priority"], "high");
    assert_eq!(live["entries"][0]["status"], "completed");
    client.close().await;

    let (_runner, mut client) = h.connect().await;
    within(
        "session/load",
        client
            .cx
            .send_request(LoadSessionRequest::new(id.clone(), project.clone()))
            .block_task(),
    )
    .await
    .unwrap();
    let replayed = plan(client.drain()).expect("the plan replayed");
    assert_eq!(replayed, live);
}

/// A 1×1 PNG.
const TINY_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_prompt_is_refused_for_a_text_only_model_and_sent_to_one_that_sees() {
    let h = Harness::new(vec![Turn::text("A red dot.")]).await;
    let blocks = || {
        vec![
            ContentBlock::Text(TextContent::new("what is this?")),
            ContentBlock::Image(ImageContent::new(TINY_PNG, "image/png")),
        ]
    };
    // Model `m` is text-only by default: the prompt is refused, nothing reaches it.
    let (runner, client) = h.connect().await;
    let session = client.new_session(&h.project()).await.session_id;
    let err = within(
        "refused image prompt",
        client.prompt_blocks(&session, blocks()),
    )
    .await
    .unwrap()
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
    assert!(err.message.contains("does not take images"), "{err:?}");
    assert!(
        h.server.requests().is_empty(),
        "nothing was sent to the model"
    );
    client.close().await;
    drop(runner);

    h.model_takes_images();
    let (_runner, client) = h.connect().await;
    let session = client.new_session(&h.project()).await.session_id;
    let r = within("image prompt", client.prompt_blocks(&session, blocks()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    let body = h.server.requests()[0].body.to_string();
    assert!(
        body.contains(&format!("data:image/png;base64,{TINY_PNG}")),
        "the picture reaches the model: {body}"
    );
    client.close().await;
}
