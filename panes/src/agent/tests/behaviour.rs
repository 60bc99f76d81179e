//! The events the pane gives back for keys and commands.

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, RequestPermissionOutcome, SelectedPermissionOutcome,
    SessionConfigOptionCategory, TextContent,
};

use super::*;
use crate::agent::{PaneEvent, PermissionId, TurnOutcome};
use crate::test_support::dark;

#[test]
fn submit_gives_prompts_and_commands() {
    let mut pane = AgentPane::new("a");
    type_text(&mut pane, "hello");
    assert_eq!(pane.submit(), PaneEvent::Submit("hello".into()));
    assert_eq!(pane.submit(), PaneEvent::None, "nothing left to send");
    type_text(&mut pane, "/quit");
    assert_eq!(
        pane.submit(),
        PaneEvent::Slash {
            name: "exit".into(),
            args: String::new()
        }
    );
    type_text(&mut pane, "//model is a path");
    assert_eq!(pane.submit(), PaneEvent::Submit("/model is a path".into()));
    type_text(&mut pane, "/etc/hosts?");
    assert_eq!(pane.submit(), PaneEvent::Submit("/etc/hosts?".into()));
}

#[test]
fn completion_is_accepted_by_tab_or_submit() {
    let mut pane = AgentPane::new("a");
    type_text(&mut pane, "/mo");
    assert_eq!(pane.handle_key(key(KeyCode::Tab)), PaneEvent::Redraw);
    type_text(&mut pane, "opus");
    assert_eq!(
        pane.submit(),
        PaneEvent::Slash {
            name: "model".into(),
            args: "opus".into()
        }
    );
    type_text(&mut pane, "/he");
    assert_eq!(
        pane.submit(),
        PaneEvent::Slash {
            name: "help".into(),
            args: String::new()
        }
    );
}

#[test]
fn arrows_move_in_the_popup_and_esc_closes_it() {
    let mut pane = AgentPane::new("a");
    type_text(&mut pane, "/");
    pane.history_next();
    pane.handle_key(key(KeyCode::Down));
    assert_eq!(pane.complete(), PaneEvent::Redraw);
    assert_eq!(
        pane.submit(),
        PaneEvent::Slash {
            name: "model".into(),
            args: String::new()
        }
    );
    type_text(&mut pane, "/");
    assert_eq!(
        pane.cancel(),
        PaneEvent::Redraw,
        "esc closes the popup first"
    );
    pane.turn_started();
    assert_eq!(pane.handle_key(key(KeyCode::Esc)), PaneEvent::CancelTurn);
}

#[test]
fn esc_without_a_turn_only_arms_the_rewind() {
    let mut pane = AgentPane::new("a");
    type_text(&mut pane, "x");
    assert_eq!(pane.cancel(), PaneEvent::None);
    let mut pane = AgentPane::new("a");
    assert_eq!(pane.cancel(), PaneEvent::Redraw, "Esc again would rewind");
}

#[test]
fn permission_answers_in_order() {
    let mut pane = AgentPane::new("a");
    pane.set_permission_hold(std::time::Duration::ZERO);
    let first = pane.show_permission(permission_request());
    let second = pane.show_permission(permission_request());
    assert_eq!((first, second), (PermissionId(1), PermissionId(2)));
    // Not a key of the dialog: typing for the editor.
    type_text(&mut pane, "x");
    assert_eq!(pane.prompt_text(), "x");
    match pane.handle_key(key(KeyCode::Char('2'))) {
        PaneEvent::Permission { id, outcome, .. } => {
            assert_eq!(id, first);
            assert_eq!(
                outcome,
                RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                    "always".to_string()
                ))
            );
        }
        other => panic!("{other:?}"),
    }
    match pane.cancel() {
        PaneEvent::Permission { id, outcome, .. } => {
            assert_eq!(id, second);
            assert_eq!(outcome, RequestPermissionOutcome::Cancelled);
        }
        other => panic!("{other:?}"),
    }
    assert!(!pane.status().waiting_for_permission);
    // Keys typed while the modal was open that were not its own stayed in the prompt.
    assert_eq!(pane.submit(), PaneEvent::Submit("x".to_string()));
}

#[test]
fn withdrawn_and_cleared_permissions() {
    let mut pane = AgentPane::new("a");
    let a = pane.show_permission(permission_request());
    let b = pane.show_permission(permission_request());
    assert!(pane.dismiss_permission(a));
    assert!(!pane.dismiss_permission(a));
    assert_eq!(pane.clear_permissions(), [b]);
}

#[test]
fn config_picker_sets_an_option() {
    let mut pane = AgentPane::new("a");
    assert!(!pane.open_config_picker(&SessionConfigOptionCategory::Model));
    pane.set_config_options(&model_options());
    assert!(pane.open_config_picker(&SessionConfigOptionCategory::Model));
    insta::assert_snapshot!(draw(&mut pane, &dark(), 50, 10).backend());
    pane.history_next();
    match pane.submit() {
        PaneEvent::SetConfigOption { config_id, value } => {
            assert_eq!(config_id.0.as_ref(), "model");
            assert_eq!(value.0.as_ref(), "opus");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn shift_tab_cycles_the_mode_option_or_the_agents_modes() {
    use agent_client_protocol::v1::schema::{
        SessionConfigKind, SessionConfigOption, SessionConfigSelect, SessionConfigSelectOption,
        SessionMode, SessionModeState,
    };
    let mut pane = AgentPane::new("a");
    // Neither: said, nothing sent.
    assert_eq!(pane.cycle_mode(), PaneEvent::Redraw);
    assert!(
        pane.capture(None).contains("no modes"),
        "{}",
        pane.capture(None)
    );

    // An agent with legacy modes only: the next one, wrapping; the border names it.
    let modes = SessionModeState::new(
        "default",
        vec![
            SessionMode::new("default", "Default"),
            SessionMode::new("plan", "Plan"),
        ],
    );
    pane.set_modes(Some(&modes));
    assert_eq!(pane.status().mode.as_deref(), Some("Default"));
    assert_eq!(
        pane.cycle_mode(),
        PaneEvent::SetMode("plan".to_string().into())
    );
    pane.mode_set("plan");
    assert_eq!(pane.status().mode.as_deref(), Some("Plan"));
    assert_eq!(
        pane.cycle_mode(),
        PaneEvent::SetMode("default".to_string().into())
    );

    // A mode config option wins over modes.
    let mut options = model_options();
    options.push(
        SessionConfigOption::new(
            "permissions",
            "Permissions",
            SessionConfigKind::Select(SessionConfigSelect::new(
                "yolo",
                vec![
                    SessionConfigSelectOption::new("ask", "Ask"),
                    SessionConfigSelectOption::new("auto-edit", "Auto-edit"),
                    SessionConfigSelectOption::new("yolo", "Yolo"),
                ],
            )),
        )
        .category(SessionConfigOptionCategory::Mode),
    );
    pane.set_config_options(&options);
    match pane.cycle_mode() {
        PaneEvent::SetConfigOption { config_id, value } => {
            assert_eq!(config_id.0.as_ref(), "permissions");
            assert_eq!(value.0.as_ref(), "ask", "wraps after the last");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(pane.status().mode.as_deref(), Some("Yolo"));
    assert!(
        pane.status().summary().contains("Yolo"),
        "{}",
        pane.status().summary()
    );
}

#[test]
fn session_picker_resumes_the_chosen_session() {
    use agent_client_protocol::v1::schema::SessionId;

    use crate::agent::SessionChoice;
    let mut pane = AgentPane::new("a");
    assert!(!pane.open_session_picker(&[], None));
    let sessions = [
        SessionChoice {
            id: SessionId::new("s-new"),
            title: Some("second topic".into()),
            updated_at: Some("2026-11-30T07:02:10Z".into()),
        },
        SessionChoice {
            id: SessionId::new("s-old"),
            title: Some("explain the parser".into()),
            updated_at: Some("2026-11-29T18:45:00Z".into()),
        },
    ];
    assert!(pane.open_session_picker(&sessions, Some(&SessionId::new("s-new"))));
    insta::assert_snapshot!(draw(&mut pane, &dark(), 60, 10).backend());
    pane.history_next();
    assert_eq!(
        pane.submit(),
        PaneEvent::ResumeSession(SessionId::new("s-old"))
    );
}

#[test]
fn copy_targets() {
    let pane = pane_with(&[
        (0, agent("First:\n```sh\nls\n```\n")),
        (0, thought("thinking")),
        (0, agent_id("Second, no code.", "m2")),
    ]);
    assert_eq!(
        pane.last_message_text().as_deref(),
        Some("Second, no code.")
    );
    assert_eq!(pane.last_code_block().as_deref(), Some("ls\n"));
}

#[test]
fn turn_outcomes_leave_a_line_and_set_status() {
    let mut pane = pane_with(&[(
        0,
        call(
            "1",
            "bash: sleep",
            ToolKind::Execute,
            ToolCallStatus::InProgress,
        ),
    )]);
    pane.turn_started();
    assert!(pane.status().busy);
    pane.turn_ended(TurnOutcome::Cancelled);
    assert!(!pane.status().busy);
    pane.turn_started();
    pane.turn_ended(TurnOutcome::Error("connection lost".into()));
    assert_eq!(pane.status().error.as_deref(), Some("connection lost"));
    let t = draw(&mut pane, &dark(), 50, 9);
    insta::assert_snapshot!(t.backend());
    pane.turn_started();
    assert_eq!(pane.status().error, None);
}

#[test]
fn a_limit_that_ended_the_turn_is_named_from_the_runners_meta() {
    use agent_client_protocol::v1::schema::{PromptResponse, StopReason};
    let mut meta = serde_json::Map::new();
    meta.insert(
        "march".into(),
        serde_json::json!({"limit": {"kind": "tool_timeout",
            "message": "Turn stopped: tool bash ran past its limit of 30s\u{1b}[2J"}}),
    );
    let response = PromptResponse::new(StopReason::MaxTurnRequests).meta(meta);
    let outcome = TurnOutcome::from(&response);
    assert_eq!(
        outcome,
        TurnOutcome::MaxTurnRequests(Some(
            "Turn stopped: tool bash ran past its limit of 30s\u{241b}[2J".into()
        ))
    );
    let mut pane = AgentPane::new("a");
    pane.turn_started();
    pane.turn_ended(outcome);
    let text = pane.capture(None);
    assert!(
        text.contains("Stopped at a limit: Turn stopped: tool bash ran past its limit of 30s"),
        "{text}"
    );
    // Another agent's bare stop reason still says what it means.
    let bare = TurnOutcome::from(&PromptResponse::new(StopReason::MaxTurnRequests));
    assert_eq!(bare, TurnOutcome::MaxTurnRequests(None));
}

#[test]
fn unread_until_drawn_focused() {
    let mut pane = AgentPane::new("a");
    pane.apply(&agent("hi"));
    assert!(pane.status().unread);
    draw(&mut pane, &dark(), 30, 6);
    assert!(!pane.status().unread);
}

#[test]
fn paste_and_newline_make_multiline_prompts() {
    let mut pane = AgentPane::new("a");
    pane.paste("line one\nline two");
    pane.newline();
    type_text(&mut pane, "three");
    assert_eq!(
        pane.submit(),
        PaneEvent::Submit("line one\nline two\nthree".into())
    );
    pane.history_prev();
    assert_eq!(
        pane.submit(),
        PaneEvent::Submit("line one\nline two\nthree".into())
    );
}

#[test]
fn a_paste_with_cr_line_ends_is_sent_as_its_lines() {
    // What tmux's paste-buffer, xterm and VTE send inside a bracketed paste.
    let mut pane = AgentPane::new("a");
    pane.paste("line one\rline two\r\nline three\rline four");
    assert_eq!(
        pane.submit(),
        PaneEvent::Submit("line one\nline two\nline three\nline four".into())
    );
}

#[test]
fn tiny_areas_do_not_panic() {
    let mut pane = pane_with(&[(0, agent("some **text** and `code`"))]);
    pane.show_permission(permission_request());
    for w in 0..8 {
        for h in 0..8 {
            draw(&mut pane, &dark(), w, h);
        }
    }
}

#[test]
fn the_wait_for_the_model_is_counted_until_it_answers_and_again_after_tools() {
    let mut pane = AgentPane::new("agent 1");
    assert_eq!(pane.model_wait(), None);
    pane.turn_started();
    assert!(pane.model_wait().is_some(), "a new turn waits on the model");
    // Shown with the seconds counting.
    pane.model_wait = Some(Instant::now() - Duration::from_secs(42));
    let shown = format!("{}", draw(&mut pane, &dark(), 70, 6).backend());
    assert!(
        shown.contains("waiting for the model 42 s · esc cancels"),
        "{shown}"
    );
    // Narrow panes get the short form.
    let narrow = format!("{}", draw(&mut pane, &dark(), 30, 6).backend());
    assert!(narrow.contains("model 42 s · esc"), "{narrow}");

    pane.apply(&agent("Looking"));
    assert_eq!(pane.model_wait(), None, "text from the model ends the wait");
    pane.apply(&call(
        "c1",
        "Read a.txt",
        ToolKind::Read,
        ToolCallStatus::Pending,
    ));
    pane.apply(&call(
        "c2",
        "Read b.txt",
        ToolKind::Read,
        ToolCallStatus::Pending,
    ));
    pane.apply(&update(
        "c1",
        ToolCallUpdateFields::new().status(ToolCallStatus::Completed),
    ));
    assert_eq!(pane.model_wait(), None, "a tool call still runs");
    pane.apply(&update(
        "c2",
        ToolCallUpdateFields::new().status(ToolCallStatus::Failed),
    ));
    assert!(
        pane.model_wait().is_some(),
        "results went back to the model"
    );
    // A permission request is what waits then, not the model.
    pane.show_permission(permission_request());
    assert_eq!(pane.model_wait(), None);
    pane.clear_permissions();
    assert!(pane.model_wait().is_some());
    pane.turn_ended(TurnOutcome::Cancelled);
    assert_eq!(pane.model_wait(), None);
    let shown = format!("{}", draw(&mut pane, &dark(), 70, 6).backend());
    assert!(!shown.contains("waiting"), "{shown}");
}

#[test]
fn a_call_the_user_rejected_is_labelled_rejected_not_failed() {
    let mut pane = AgentPane::new("agent 1");
    pane.turn_started();
    pane.apply(&call(
        "call-1",
        "Write a.txt",
        ToolKind::Edit,
        ToolCallStatus::Pending,
    ));
    pane.apply(&call(
        "call-2",
        "Write b.txt",
        ToolKind::Edit,
        ToolCallStatus::Pending,
    ));
    pane.show_permission(permission_request());
    assert!(matches!(
        pane.answer_question(PermissionOptionKind::RejectOnce),
        PaneEvent::Permission { .. }
    ));
    let failed = ToolCallUpdateFields::new().status(ToolCallStatus::Failed);
    pane.apply(&update("call-1", failed.clone()));
    pane.apply(&update("call-2", failed));
    let shown = format!("{}", draw(&mut pane, &dark(), 60, 12).backend());
    assert!(shown.contains("rejected"), "{shown}");
    // The other call failed on its own: it says so.
    assert!(shown.contains("failed"), "{shown}");
    // A replay (no permission asked here) says so through March's marker.
    let mut replayed = AgentPane::new("agent 1");
    replayed.apply(&call(
        "call-9",
        "Write c.txt",
        ToolKind::Edit,
        ToolCallStatus::Pending,
    ));
    let mut meta = serde_json::Map::new();
    meta.insert("march".into(), serde_json::json!({"rejected": true}));
    replayed.apply(&SessionUpdate::ToolCallUpdate(
        ToolCallUpdate::new(
            "call-9".to_string(),
            ToolCallUpdateFields::new().status(ToolCallStatus::Failed),
        )
        .meta(meta),
    ));
    let shown = format!("{}", draw(&mut replayed, &dark(), 60, 8).backend());
    assert!(
        shown.contains("rejected") && !shown.contains("failed"),
        "{shown}"
    );
}

#[test]
fn messages_typed_during_a_turn_queue_with_their_kind_and_survive_a_cancel() {
    use crate::agent::QueuedKind;
    let mut pane = AgentPane::new("agent 1");
    pane.turn_started();
    type_text(&mut pane, "use tabs");
    assert_eq!(
        pane.submit(),
        PaneEvent::Queue {
            local: 1,
            text: "use tabs".into(),
            kind: QueuedKind::Steer
        },
        "queued for the turn, not sent as a prompt"
    );
    type_text(&mut pane, "then summarise");
    assert_eq!(
        pane.follow_up(),
        PaneEvent::Queue {
            local: 2,
            text: "then summarise".into(),
            kind: QueuedKind::FollowUp
        }
    );
    // On its way to the agent, it says so: the turn may still end before it arrives.
    let shown = format!("{}", draw(&mut pane, &dark(), 70, 14).backend());
    assert!(shown.contains("⧗ steer (sending): use tabs"), "{shown}");
    assert!(
        shown.contains("⧗ follow-up (sending): then summarise"),
        "{shown}"
    );
    assert_eq!(pane.queue_taken(1, Some("q1".into())), None);
    assert_eq!(pane.queue_taken(2, Some("q2".into())), None);
    let shown = format!("{}", draw(&mut pane, &dark(), 70, 14).backend());
    assert!(shown.contains("⧗ steer: use tabs"), "{shown}");
    assert!(shown.contains("⧗ follow-up: then summarise"), "{shown}");
    assert!(shown.contains("working 0 s"), "{shown}");
    // Nothing runs as a prompt while the turn does, nor what the agent took.
    assert_eq!(pane.next_queued(), None);
    // Delivered: it leaves the queue and shows as the user's message.
    let mut meta = serde_json::Map::new();
    meta.insert("march".into(), serde_json::json!({"queueId": "q1"}));
    pane.apply(&SessionUpdate::UserMessageChunk(
        ContentChunk::new(ContentBlock::Text(TextContent::new("use tabs"))).meta(meta),
    ));
    assert_eq!(
        pane.queued().collect::<Vec<_>>(),
        [("then summarise", QueuedKind::FollowUp)]
    );
    // Up on an empty prompt takes the last one back, from the agent too.
    assert_eq!(pane.history_prev(), PaneEvent::Unqueue("q2".into()));
    assert_eq!(pane.queued().count(), 0);
    // Esc with two queued: the turn is cancelled and both are back in the editor.
    pane.submit();
    type_text(&mut pane, "another");
    pane.follow_up();
    assert_eq!(pane.queued().count(), 2);
    assert_eq!(pane.cancel(), PaneEvent::CancelTurn);
    assert_eq!(pane.queued().count(), 0);
    pane.turn_ended_with(TurnOutcome::Cancelled, &["q3".into()]);
    let editor = pane.prompt_text();
    assert!(
        editor.contains("then summarise") && editor.contains("another"),
        "{editor}"
    );
    assert_eq!(pane.next_queued(), None, "nothing is sent after a cancel");
    // Slash commands act at once, even during a turn.
    assert!(matches!(pane.submit(), PaneEvent::Submit(_)));
    pane.turn_started();
    type_text(&mut pane, "/help");
    assert!(matches!(pane.submit(), PaneEvent::Slash { .. }));
}

#[test]
fn what_a_turn_never_delivered_runs_next_and_an_agent_without_the_queue_gets_prompts() {
    let mut pane = AgentPane::new("agent 1");
    pane.turn_started();
    type_text(&mut pane, "taken");
    pane.submit();
    type_text(&mut pane, "not taken");
    pane.submit();
    assert_eq!(pane.queue_taken(1, Some("q1".into())), None);
    // The agent lacks the extension: it stays, to run as the next prompt, and says so.
    assert_eq!(pane.queue_taken(2, None), None);
    let shown = format!("{}", draw(&mut pane, &dark(), 70, 14).backend());
    assert!(shown.contains("⧗ next: not taken"), "{shown}");
    // The turn ended by error before delivering q1: back to the editor, with the other.
    pane.turn_ended_with(TurnOutcome::EndTurn, &["q1".into()]);
    assert_eq!(pane.next_queued().as_deref(), Some("taken"));
    assert_eq!(pane.next_queued().as_deref(), Some("not taken"));
    assert_eq!(pane.next_queued(), None);
}

#[test]
fn a_message_taken_back_while_on_its_way_is_taken_back_from_the_agent_too() {
    let mut pane = AgentPane::new("agent 1");
    pane.turn_started();
    type_text(&mut pane, "never mind");
    pane.submit();
    // Up before the agent answered: nothing to unqueue yet.
    assert_eq!(pane.history_prev(), PaneEvent::Redraw);
    assert_eq!(pane.prompt_text(), "never mind");
    // The agent's answer names what it holds: the pane asks for it back.
    assert_eq!(
        pane.queue_taken(1, Some("q1".into())),
        Some("q1".to_string())
    );
    // An answer for a message gone that the agent did not take asks nothing.
    assert_eq!(pane.queue_taken(7, None), None);
}

#[test]
fn a_message_still_on_its_way_when_the_turn_ends_runs_next() {
    let mut pane = AgentPane::new("agent 1");
    pane.turn_started();
    type_text(&mut pane, "late");
    pane.submit();
    pane.turn_ended_with(TurnOutcome::EndTurn, &[]);
    // The agent's late answer changes nothing: its turn is over.
    assert_eq!(pane.queue_taken(1, Some("q1".into())), None);
    assert_eq!(pane.next_queued().as_deref(), Some("late"));
}

#[test]
fn ctrl_c_clears_the_prompt_then_cancels_the_turn() {
    let mut pane = AgentPane::new("a");
    assert_eq!(
        pane.interrupt(),
        PaneEvent::None,
        "nothing to clear or cancel"
    );
    type_text(&mut pane, "typed");
    pane.turn_started();
    assert_eq!(pane.interrupt(), PaneEvent::Redraw);
    assert_eq!(pane.prompt_text(), "", "the prompt is cleared first");
    assert_eq!(
        pane.interrupt(),
        PaneEvent::CancelTurn,
        "then the turn is cancelled"
    );
    assert_eq!(
        pane.edit_prompt(crate::agent::PromptEdit::Yank),
        PaneEvent::Redraw
    );
    assert_eq!(
        pane.prompt_text(),
        "typed",
        "what Ctrl-C cleared yanks back"
    );
}

#[test]
fn a_history_search_ends_on_enter_or_esc_without_sending() {
    let mut pane = AgentPane::new("a");
    pane.set_history(vec!["cargo test".into(), "ls".into()]);
    type_text(&mut pane, "draft");
    pane.history_search();
    type_text(&mut pane, "car");
    assert_eq!(pane.prompt_text(), "cargo test");
    assert_eq!(
        pane.submit(),
        PaneEvent::Redraw,
        "Enter keeps the match, sends nothing"
    );
    assert_eq!(pane.prompt_text(), "cargo test");
    assert_eq!(pane.submit(), PaneEvent::Submit("cargo test".into()));
    type_text(&mut pane, "draft");
    pane.history_search();
    type_text(&mut pane, "ls");
    assert_eq!(pane.cancel(), PaneEvent::Redraw);
    assert_eq!(pane.prompt_text(), "draft", "Esc gives the search up");
}

#[test]
fn keys_typed_as_a_dialog_opens_stay_in_the_editor() {
    let mut pane = AgentPane::new("a");
    pane.set_permission_hold(std::time::Duration::from_secs(60));
    pane.turn_started();
    pane.show_permission(permission_request());
    type_text(&mut pane, "N5y");
    assert_eq!(pane.submit(), PaneEvent::Redraw);
    assert_eq!(pane.prompt_text(), "N5y");
    assert!(pane.status().waiting_for_permission);
}

#[test]
fn a_call_shows_its_whole_command_when_expanded_and_says_it_ran_outside_the_sandbox() {
    let command = format!("cargo test {} ; echo TAIL-OF-IT", "-p crate ".repeat(30));
    let mut pane = AgentPane::new("a");
    // As March's runner announces a call: a cut title, the arguments whole.
    let announced = match call(
        "b1",
        &format!("bash {}…", &command[..40]),
        ToolKind::Execute,
        ToolCallStatus::Pending,
    ) {
        SessionUpdate::ToolCall(tc) => {
            SessionUpdate::ToolCall(tc.raw_input(serde_json::json!({ "command": command })))
        }
        other => other,
    };
    pane.apply(&announced);
    let mut meta = serde_json::Map::new();
    meta.insert("march".into(), serde_json::json!({ "sandbox": "outside" }));
    pane.apply(&SessionUpdate::ToolCallUpdate(
        agent_client_protocol::v1::schema::ToolCallUpdate::new(
            "b1",
            ToolCallUpdateFields::new().status(ToolCallStatus::Completed),
        )
        .meta(meta),
    ));
    let theme = dark();
    let shown = |pane: &mut AgentPane| {
        crate::test_support::rows(draw(pane, &theme, 80, 24).backend().buffer()).join("\n")
    };
    let collapsed = shown(&mut pane);
    assert!(collapsed.contains("unsandboxed"), "{collapsed}");
    assert!(!collapsed.contains("TAIL-OF-IT"), "{collapsed}");
    pane.toggle_tools();
    let expanded = shown(&mut pane);
    assert!(expanded.contains("TAIL-OF-IT"), "{expanded}");
    let doc = pane.export_markdown();
    assert!(doc.contains("ran outside the sandbox"), "{doc}");
    assert!(doc.contains(&command), "{doc}");
}
