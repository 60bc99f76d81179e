//! Tool edge cases, hooks and `continue`.

use super::*;

#[tokio::test]
async fn unknown_tools_bad_arguments_and_timeouts_become_error_results() {
    let s = server(vec![
        Turn::stream(vec![
            Event::tool_call("u", "nope", &["{}"]),
            Event::tool_call("v", "t", &["{\"x\":\"many\"}"]),
            Event::tool_call("j", "t", &["not json"]),
            Event::tool_call("h", "hang", &["{\"x\":1}"]),
        ]),
        Turn::text("fine"),
    ])
    .await;
    let mut hang = GateTool::new("hang");
    hang.hang = true;
    let mut cfg = config(&s, false);
    cfg.tool_timeouts.default = Some(Duration::from_millis(50));
    let mut rec = Recorder::new();
    let new = run(
        "go",
        ctx(vec![Arc::new(GateTool::new("t")), Arc::new(hang)]),
        cfg,
        &mut rec,
    )
    .await;
    let texts: Vec<String> = new
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => {
                assert!(r.is_error);
                Some(match &r.content[0] {
                    UserContent::Text(t) => t.text.clone(),
                    _ => String::new(),
                })
            }
            _ => None,
        })
        .collect();
    assert_eq!(texts[0], "Tool nope not found");
    assert!(
        texts[1].starts_with("Validation failed for tool \"t\":\n  - /x:"),
        "{}",
        texts[1]
    );
    assert!(
        texts[2].contains("not a JSON object") && texts[2].ends_with("not json"),
        "{}",
        texts[2]
    );
    assert_eq!(texts[3], "Tool hang timed out after 50ms");
    assert_eq!(new.last().unwrap().as_assistant().unwrap().text(), "fine");
}

struct GuardHooks {
    calls: Mutex<Vec<String>>,
}

#[async_trait]
impl AgentHooks for GuardHooks {
    async fn before_model_call(&self, call: &ModelCall<'_>) -> Result<(), String> {
        self.calls.lock().unwrap().push(format!(
            "model turn={} est>0={}",
            call.turn,
            call.budget.estimated_tokens > 0
        ));
        Ok(())
    }
    async fn before_tool_call(&self, call: &ToolCallInfo<'_>) -> Option<ToolBlock> {
        (call.tool_call.id == "a").then(|| ToolBlock {
            reason: Some("not allowed".into()),
            ends_run: None,
        })
    }
    async fn after_tool_call(
        &self,
        _call: &ToolCallInfo<'_>,
        result: &ToolOutcome,
        _is_error: bool,
    ) -> Result<Option<ToolResultPatch>, String> {
        Ok(Some(ToolResultPatch {
            content: Some(vec![UserContent::text(format!(
                "patched: {}",
                result.text_content()
            ))]),
            ..Default::default()
        }))
    }
    async fn should_stop_after_turn(&self, turn: &TurnInfo<'_>) -> bool {
        !turn.tool_results.is_empty()
    }
}

#[tokio::test]
async fn hooks_block_patch_observe_and_stop() {
    let s = server(vec![
        Turn::stream(vec![call("a", 1), call("b", 2)]),
        Turn::text("x"),
    ])
    .await;
    let hooks = Arc::new(GuardHooks {
        calls: Mutex::new(Vec::new()),
    });
    let mut cfg = config(&s, false);
    cfg.hooks = hooks.clone();
    let mut rec = Recorder::new();
    let new = run("go", ctx(vec![Arc::new(GateTool::new("t"))]), cfg, &mut rec).await;
    let results: Vec<_> = new
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some((r.is_error, r.content.clone())),
            _ => None,
        })
        .collect();
    // A blocked call never ran, so after_tool_call does not see it (as in pi).
    assert_eq!(results[0], (true, vec![UserContent::text("not allowed")]));
    assert_eq!(
        results[1],
        (false, vec![UserContent::text("patched: t got 2")])
    );
    assert_eq!(rec.labels().last().unwrap(), "agent_end");
    assert_eq!(
        s.requests().len(),
        1,
        "should_stop_after_turn ended the run"
    );
    assert_eq!(
        *hooks.calls.lock().unwrap(),
        vec!["model turn=1 est>0=true".to_string()]
    );
}

#[tokio::test]
async fn continue_requires_a_non_assistant_tail() {
    let s = server(vec![Turn::text("again")]).await;
    let mut rec = Recorder::new();
    let err = run_agent_loop_continue(
        ctx(vec![]),
        config(&s, false),
        CancellationToken::new(),
        &mut rec,
    )
    .await
    .unwrap_err();
    assert_eq!(err.to_string(), "Cannot continue: no messages in context");
    let mut c = ctx(vec![]);
    c.messages.push(Message::user("hi"));
    let new = run_agent_loop_continue(c, config(&s, false), CancellationToken::new(), &mut rec)
        .await
        .unwrap();
    assert_eq!(new.len(), 1);
    assert_eq!(
        rec.labels(),
        seq(&[
            l(&["agent_start", "turn_start"]),
            text_reply(1, "Stop"),
            l(&["turn_end 0", "agent_end"]),
        ])
    );
}

#[tokio::test]
async fn thinking_and_signatures_stream_through_the_loop() {
    let s = server(vec![Turn::stream(vec![
        Event::thinking_signed("hmm", "sig-1"),
        Event::text("answer"),
    ])])
    .await;
    let mut rec = Recorder::new();
    let new = run("go", ctx(vec![]), config(&s, true), &mut rec).await;
    let a = new[1].as_assistant().unwrap();
    assert!(matches!(&a.content[0], AssistantContent::Thinking(t)
        if t.thinking == "hmm" && t.thinking_signature.as_deref() == Some("sig-1")));
    assert!(rec.events.iter().any(|e| matches!(e, AgentEvent::MessageUpdate {
        assistant_message_event: AssistantStreamEvent::ThinkingDelta { delta, .. }, .. } if delta == "hmm")));
    assert_eq!(a.stop_reason, StopReason::Stop);
}

#[tokio::test]
async fn a_timeout_that_ends_the_run_keeps_the_batch_results_and_calls_the_model_no_more() {
    let s = server(vec![
        Turn::stream(vec![
            Event::tool_call("h", "hang", &["{\"x\":1}"]),
            Event::tool_call("v", "t", &["{\"x\":2}"]),
        ]),
        Turn::text("never asked for"),
    ])
    .await;
    let mut hang = GateTool::new("hang");
    hang.hang = true;
    let mut cfg = config(&s, false);
    // The default would let the quick tool finish; the override bounds the hanging one.
    cfg.tool_timeouts.default = Some(Duration::from_secs(600));
    cfg.tool_timeouts
        .per_tool
        .insert("hang".into(), Duration::from_millis(50));
    cfg.tool_timeouts.ends_run = true;
    let mut rec = Recorder::new();
    let new = run(
        "go",
        ctx(vec![Arc::new(GateTool::new("t")), Arc::new(hang)]),
        cfg,
        &mut rec,
    )
    .await;
    let results: Vec<(String, bool)> = new
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some((r.tool_name.clone(), r.is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(results, [("hang".into(), true), ("t".into(), false)]);
    let last = new.last().unwrap().as_assistant().unwrap();
    assert_eq!(last.stop_reason, StopReason::Error);
    let text = last.error_message.as_deref().unwrap();
    assert_eq!(text, "Turn stopped: tool hang ran past its limit of 50ms");
    assert_eq!(
        RunLimit::from_message(text),
        Some(RunLimit::ToolTimeout {
            tool: "hang".into(),
            after: Duration::from_millis(50)
        })
    );
    assert_eq!(s.requests().len(), 1, "no model call after the limit");
}

#[test]
fn run_limits_read_back_from_their_messages() {
    for limit in [
        RunLimit::MaxTurns(7),
        RunLimit::ToolTimeout {
            tool: "bash".into(),
            after: Duration::from_secs(30),
        },
        RunLimit::ToolTimeout {
            tool: "odd name ran past its limit of x".into(),
            after: Duration::from_millis(1500),
        },
    ] {
        assert_eq!(RunLimit::from_message(&limit.message()), Some(limit));
    }
    assert_eq!(RunLimit::from_message("the model request failed"), None);
    assert_eq!(
        RunLimit::from_message("Maximum number of turns (x) exceeded"),
        None
    );
}
