//! Whole event sequences of the loop, one scenario each.

use super::*;

#[tokio::test]
async fn pure_chat_on_both_wire_formats() {
    for anthropic in [false, true] {
        let s = server(vec![Turn::stream(vec![
            Event::text("Hel"),
            Event::text("lo"),
        ])])
        .await;
        let mut rec = Recorder::new();
        let new = run("hi", ctx(vec![]), config(&s, anthropic), &mut rec).await;
        assert_eq!(
            rec.labels(),
            seq(&[
                l(&HEAD),
                text_reply(2, "Stop"),
                l(&["turn_end 0", "agent_end"])
            ]),
            "anthropic={anthropic}"
        );
        assert_eq!(new.len(), 2);
        assert_eq!(new[1].as_assistant().unwrap().text(), "Hello");
        let AgentEvent::MessageUpdate { message, .. } = &rec.events[7] else {
            panic!()
        };
        assert_eq!(message.text(), "Hello", "partial carries the text so far");
    }
}

#[tokio::test]
async fn one_tool_then_answer() {
    let s = server(vec![
        Turn::stream(vec![Event::text("let me"), call("c1", 7)]),
        Turn::text("done"),
    ])
    .await;
    let mut rec = Recorder::new();
    let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(GateTool::new("t"))];
    let new = run("go", ctx(tools), config(&s, false), &mut rec).await;
    assert_eq!(
        rec.labels(),
        strs(&[
            "agent_start",
            "turn_start",
            "message_start user",
            "message_end user",
            "message_start assistant",
            "update text_start",
            "update text_delta",
            "update text_end",
            "update toolcall_start",
            "update toolcall_delta",
            "update toolcall_delta",
            "update toolcall_end",
            "message_end assistant ToolUse",
            "tool_start c1",
            "tool_end c1",
            "message_start toolResult",
            "message_end toolResult c1",
            "turn_end 1",
            "turn_start",
            "message_start assistant",
            "update text_start",
            "update text_delta",
            "update text_end",
            "message_end assistant Stop",
            "turn_end 0",
            "agent_end",
        ])
    );
    let Message::ToolResult(r) = &new[2] else {
        panic!()
    };
    assert_eq!(r.content, vec![UserContent::text("t got 7")]);
    // The second request carried the tool call and its result back to the model.
    let reqs = s.requests();
    let msgs = reqs[1].body["messages"].as_array().unwrap();
    assert_eq!(
        msgs[2]["tool_calls"][0]["function"]["arguments"],
        "{\"x\":7}"
    );
    assert_eq!(msgs[3]["role"], "tool");
    assert_eq!(msgs[3]["content"], "t got 7");
}

#[tokio::test]
async fn parallel_tools_end_in_completion_order_and_persist_in_source_order() {
    let gate = Arc::new(Notify::new());
    let mut slow = GateTool::new("slow");
    slow.wait_for = Some(gate.clone());
    let mut fast = GateTool::new("fast");
    fast.signal = Some(gate);
    fast.updates = 1;
    let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(slow), Arc::new(fast)];
    // Call "a" goes to slow, which waits until fast ("b") has finished.
    let s2 = server(vec![
        Turn::stream(vec![
            Event::tool_call("a", "slow", &["{\"x\":1}"]),
            Event::tool_call("b", "fast", &["{\"x\":2}"]),
        ]),
        Turn::text("ok"),
    ])
    .await;
    let mut rec = Recorder::new();
    let new = run("go", ctx(tools), config(&s2, true), &mut rec).await;
    assert_eq!(
        rec.labels(),
        seq(&[
            l(&HEAD),
            tools_reply(&[1, 1]),
            l(&[
                "tool_start a",
                "tool_start b",
                "tool_update b",
                "tool_end b",
                "tool_end a"
            ]),
            result_msgs(&["a", "b"]),
            l(&["turn_end 2", "turn_start"]),
            text_reply(1, "Stop"),
            l(&["turn_end 0", "agent_end"]),
        ])
    );
    let ids: Vec<_> = new
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some(r.tool_call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["a", "b"]);
}

#[tokio::test]
async fn a_sequential_tool_makes_the_batch_sequential() {
    let s = server(vec![
        Turn::stream(vec![call("a", 1), call("b", 2)]),
        Turn::text("ok"),
    ])
    .await;
    let mut t = GateTool::new("t");
    t.sequential = true;
    t.updates = 1;
    let mut rec = Recorder::new();
    run("go", ctx(vec![Arc::new(t)]), config(&s, false), &mut rec).await;
    assert_eq!(
        rec.labels(),
        seq(&[
            l(&HEAD),
            tools_reply(&[2, 2]),
            l(&["tool_start a", "tool_update a", "tool_end a"]),
            result_msgs(&["a"]),
            l(&["tool_start b", "tool_update b", "tool_end b"]),
            result_msgs(&["b"]),
            l(&["turn_end 2", "turn_start"]),
            text_reply(1, "Stop"),
            l(&["turn_end 0", "agent_end"]),
        ])
    );
}

#[tokio::test]
async fn steering_is_injected_after_the_turn_without_skipping_tool_calls() {
    let s = server(vec![
        Turn::stream(vec![call("a", 1), call("b", 2)]),
        Turn::text("ok"),
    ])
    .await;
    let queues = Arc::new(TestQueues::default());
    let q = queues.clone();
    let mut cfg = config(&s, false);
    cfg.queues = queues;
    cfg.tool_execution = crate::tool::ExecutionMode::Sequential;
    let mut rec = Recorder::with(move |e| {
        if matches!(e, AgentEvent::ToolExecutionStart { tool_call_id, .. } if tool_call_id == "a") {
            q.steering
                .lock()
                .unwrap()
                .push_back(Message::user("change of plan"));
        }
    });
    let new = run("go", ctx(vec![Arc::new(GateTool::new("t"))]), cfg, &mut rec).await;
    // Both calls of the turn ran although steering arrived during the first.
    assert_eq!(
        rec.labels(),
        seq(&[
            l(&HEAD),
            tools_reply(&[2, 2]),
            l(&["tool_start a", "tool_end a"]),
            result_msgs(&["a"]),
            l(&["tool_start b", "tool_end b"]),
            result_msgs(&["b"]),
            l(&[
                "turn_end 2",
                "turn_start",
                "message_start user",
                "message_end user"
            ]),
            text_reply(1, "Stop"),
            l(&["turn_end 0", "agent_end"]),
        ])
    );
    let roles: Vec<_> = new.iter().map(Message::role).collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "toolResult",
            "toolResult",
            "user",
            "assistant"
        ]
    );
    // The steering message reached the model in the second request.
    let last = s.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["content"], "change of plan");
}

#[tokio::test]
async fn steering_queued_before_the_run_is_drained_before_the_first_call() {
    let s = server(vec![Turn::text("ok")]).await;
    let queues = Arc::new(TestQueues::default());
    queues
        .steering
        .lock()
        .unwrap()
        .push_back(Message::user("early"));
    let mut cfg = config(&s, false);
    cfg.queues = queues;
    let mut rec = Recorder::new();
    run("go", ctx(vec![]), cfg, &mut rec).await;
    assert_eq!(
        rec.labels(),
        seq(&[
            l(&HEAD),
            l(&["message_start user", "message_end user"]),
            text_reply(1, "Stop"),
            l(&["turn_end 0", "agent_end"]),
        ])
    );
    assert_eq!(s.requests().len(), 1);
}

#[tokio::test]
async fn follow_ups_run_when_the_agent_would_stop() {
    let s = server(vec![Turn::text("first"), Turn::text("second")]).await;
    let queues = Arc::new(TestQueues::default());
    queues
        .follow_up
        .lock()
        .unwrap()
        .push_back(Message::user("and then?"));
    let mut cfg = config(&s, true);
    cfg.queues = queues;
    let mut rec = Recorder::new();
    let new = run("go", ctx(vec![]), cfg, &mut rec).await;
    assert_eq!(
        rec.labels(),
        seq(&[
            l(&HEAD),
            text_reply(1, "Stop"),
            l(&[
                "turn_end 0",
                "turn_start",
                "message_start user",
                "message_end user"
            ]),
            text_reply(1, "Stop"),
            l(&["turn_end 0", "agent_end"]),
        ])
    );
    assert_eq!(new.len(), 4);
}

#[tokio::test]
async fn abort_mid_stream_ends_with_aborted() {
    for anthropic in [false, true] {
        let s = server(vec![Turn::stream(vec![
            Event::text("partial"),
            Event::pause(60_000),
            Event::text("never"),
        ])])
        .await;
        let cancel = CancellationToken::new();
        let c = cancel.clone();
        let mut rec = Recorder::with(move |e| {
            if label(e) == "update text_delta" {
                c.cancel();
            }
        });
        let new = run_agent_loop(
            vec![Message::user("go")],
            ctx(vec![]),
            config(&s, anthropic),
            cancel,
            &mut rec,
            false,
        )
        .await;
        assert_eq!(
            rec.labels(),
            seq(&[
                l(&HEAD),
                l(&[
                    "message_start assistant",
                    "update text_start",
                    "update text_delta",
                    "message_end assistant Aborted",
                    "turn_end 0",
                    "agent_end"
                ])
            ])
        );
        let a = new[1].as_assistant().unwrap();
        assert_eq!(a.error_message.as_deref(), Some("Request was aborted"));
        assert_eq!(a.text(), "partial", "what arrived is kept");
    }
}

#[tokio::test]
async fn abort_mid_tool_cancels_it_and_the_next_call_is_aborted() {
    let s = server(vec![Turn::stream(vec![call("a", 1)]), Turn::text("never")]).await;
    let started = Arc::new(Notify::new());
    let mut t = GateTool::new("t");
    t.hang = true;
    t.signal = Some(started.clone());
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        started.notified().await;
        c.cancel();
    });
    let mut rec = Recorder::new();
    let new = run_agent_loop(
        vec![Message::user("go")],
        ctx(vec![Arc::new(t)]),
        config(&s, false),
        cancel,
        &mut rec,
        false,
    )
    .await;
    assert_eq!(
        rec.labels(),
        seq(&[
            l(&HEAD),
            tools_reply(&[2]),
            l(&["tool_start a", "tool_end a error"]),
            result_msgs(&["a"]),
            // The next model call returns at once as aborted, ending the run.
            l(&[
                "turn_end 1",
                "turn_start",
                "message_start assistant",
                "message_end assistant Aborted",
                "turn_end 0",
                "agent_end",
            ]),
        ])
    );
    let Message::ToolResult(r) = &new[2] else {
        panic!()
    };
    assert_eq!(r.content, vec![UserContent::text(ABORTED_TEXT)]);
    assert_eq!(s.requests().len(), 1, "no model call after the abort");
}

#[tokio::test]
async fn terminate_skips_the_next_call_only_when_every_result_asks() {
    let s = server(vec![Turn::stream(vec![call("a", 1), call("b", 2)])]).await;
    let mut t = GateTool::new("t");
    t.terminate = true;
    let mut cfg = config(&s, false);
    cfg.tool_execution = crate::tool::ExecutionMode::Sequential;
    let mut rec = Recorder::new();
    run("go", ctx(vec![Arc::new(t)]), cfg, &mut rec).await;
    assert_eq!(
        rec.labels(),
        seq(&[
            l(&HEAD),
            tools_reply(&[2, 2]),
            l(&["tool_start a", "tool_end a"]),
            result_msgs(&["a"]),
            l(&["tool_start b", "tool_end b"]),
            result_msgs(&["b"]),
            l(&["turn_end 2", "agent_end"]),
        ])
    );
    assert_eq!(s.requests().len(), 1);

    // A mixed batch (one call fails validation, so it cannot terminate) goes on.
    let s = server(vec![
        Turn::stream(vec![call("a", 1), Event::tool_call("b", "t", &["{}"])]),
        Turn::text("continued"),
    ])
    .await;
    let mut t = GateTool::new("t");
    t.terminate = true;
    let mut rec = Recorder::new();
    let new = run("go", ctx(vec![Arc::new(t)]), config(&s, false), &mut rec).await;
    assert_eq!(
        new.last().unwrap().as_assistant().unwrap().text(),
        "continued"
    );
    assert!(rec.labels().contains(&"tool_end b error".to_string()));
}

#[tokio::test]
async fn an_error_stop_ends_the_run_at_once() {
    let s = server(vec![Turn::status(400)]).await;
    let mut rec = Recorder::new();
    let new = run("go", ctx(vec![]), config(&s, true), &mut rec).await;
    assert_eq!(
        rec.labels(),
        seq(&[
            l(&HEAD),
            l(&[
                "message_start assistant",
                "message_end assistant Error",
                "turn_end 0",
                "agent_end"
            ])
        ])
    );
    let err = new[1]
        .as_assistant()
        .unwrap()
        .error_message
        .clone()
        .unwrap();
    assert!(
        err.starts_with("HTTP 400 Bad Request from http://"),
        "{err}"
    );
}

#[tokio::test]
async fn a_429_is_retried_before_the_first_token_invisibly() {
    for anthropic in [false, true] {
        let s = server(vec![
            Turn::status(429).with_retry_after("0"),
            Turn::text("ok"),
        ])
        .await;
        let mut rec = Recorder::new();
        let new = run("go", ctx(vec![]), config(&s, anthropic), &mut rec).await;
        assert_eq!(
            rec.labels(),
            seq(&[
                l(&HEAD),
                text_reply(1, "Stop"),
                l(&["turn_end 0", "agent_end"])
            ])
        );
        assert_eq!(new[1].as_assistant().unwrap().text(), "ok");
        assert_eq!(s.requests().len(), 2);
    }
}

#[tokio::test]
async fn max_turns_ends_with_an_error_message() {
    let s = server(vec![
        Turn::stream(vec![call("a", 1)]),
        Turn::stream(vec![call("b", 2)]),
    ])
    .await;
    let mut cfg = config(&s, false);
    cfg.max_turns = Some(1);
    let mut rec = Recorder::new();
    let new = run("go", ctx(vec![Arc::new(GateTool::new("t"))]), cfg, &mut rec).await;
    assert_eq!(
        rec.labels(),
        seq(&[
            l(&HEAD),
            tools_reply(&[2]),
            l(&["tool_start a", "tool_end a"]),
            result_msgs(&["a"]),
            l(&[
                "turn_end 1",
                "turn_start",
                "message_start assistant",
                "message_end assistant Error",
                "turn_end 0",
                "agent_end",
            ]),
        ])
    );
    let a = new.last().unwrap().as_assistant().unwrap();
    assert_eq!(
        a.error_message.as_deref(),
        Some("Maximum number of turns (1) exceeded")
    );
    assert_eq!(s.requests().len(), 1);
}
