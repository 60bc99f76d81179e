//! The workspace under the user's control, end to end in a real PTY: a wait for a silent
//! model counted and cancelled, prompts queued during a turn, quitting that asks first,
//! resize keys that repeat, preset layouts and tab names, `/help`, the agent-shell toggle.

#![allow(clippy::unwrap_used)] // Helpers here unwrap like the tests they serve.

#[path = "support/acp_client.rs"]
mod acp_client;
#[path = "support/pty.rs"]
mod pty;
#[path = "support/workspace.rs"]
mod workspace;

use acp_client::bash_call;
use march_testkit::{Event, Turn};
use workspace::*;

#[test]
fn a_silent_model_server_is_shown_waiting_with_the_seconds_and_esc_cancels() {
    let h = tokio_harness(vec![Turn::Silent, Turn::text("answered this time")]);
    let mut m = start(&h);
    m.type_line("hello");
    // The counter moves while nothing comes back.
    m.wait_text("waiting for the model 1 s · esc cancels");
    m.wait_text("waiting for the model 2 s · esc cancels");
    m.send(ESC);
    let screen = m.wait_text("Cancelled");
    assert!(!screen.contains("waiting for the model"), "{screen}");
    m.type_line("again");
    m.wait_text("answered this time");
    m.quit();
}

/// The column where the second pane's border starts on the top row.
fn second_pane_x(screen: &str) -> Option<usize> {
    let top = screen.lines().next()?;
    top.chars()
        .enumerate()
        .filter(|(_, c)| *c == '┌')
        .nth(1)
        .map(|(i, _)| i)
}

#[test]
fn resize_keys_repeat_without_the_prefix_and_a_tab_can_be_renamed() {
    let h = tokio_harness(vec![]);
    let mut m = start(&h);
    m.send(PREFIX);
    m.send(b"%");
    let screen = m.wait_for("two agent panes", |t| {
        t.matches("March · project").count() >= 2
    });
    let before = second_pane_x(&screen).unwrap();
    // One prefix, then the resize key four times: each press moves the border.
    m.send(b"\x01HHHH");
    let screen = m.wait_for("the border moved four steps", |t| {
        second_pane_x(t).is_some_and(|x| x + 12 == before)
    });
    assert!(
        !screen.contains("HH"),
        "the repeats went to the prompt: {screen}"
    );
    // A preset evens the panes out again.
    m.send(PREFIX);
    m.send(b" ");
    m.wait_for("even panes", |t| second_pane_x(t) == Some(before));
    // Ctrl-a , renames the tab in the status bar.
    m.send(PREFIX);
    m.send(b",");
    m.wait_text("rename tab: project");
    m.send(b"\x15mine\r");
    m.wait_text(" 1:mine");
    m.quit();
}

#[test]
fn help_the_agent_shell_toggle_and_new_leave_nothing_stale() {
    let h = tokio_harness(vec![]);
    let mut m = start(&h);
    // /help: the slash commands and the main keys, as bound.
    m.type_line("/help");
    // The list is taller than the pane, which shows its end: the commands and the keys.
    let screen = m.wait_for("the help", |t| {
        t.contains("/resume   Resume") && t.contains("ctrl-a ?")
    });
    assert!(screen.contains("/tree"), "{screen}");
    // Ctrl-a e opens the agent shell pane; pressed again (from it) it closes.
    m.send(PREFIX);
    m.send(b"e");
    m.wait_text("commands · ");
    m.send(PREFIX);
    m.send(b"e");
    m.wait_for("the agent shell pane closed", |t| {
        !t.contains("commands · ")
    });
    // Open again, back to the agent pane, and start a new session there: the agent shell
    // pane goes on with the new session instead of saying the old one ended.
    m.send(PREFIX);
    m.send(b"e");
    m.wait_text("commands · ");
    m.send(PREFIX);
    m.send(b"k");
    m.type_line("/new");
    m.wait_for("the new session", |t| !t.contains("/resume   Resume"));
    m.wait_text("commands · ");
    let screen = m.text();
    assert!(!screen.contains("has ended"), "{screen}");
    // A second press from the agent pane closes the commands pane of its (new) session.
    m.send(PREFIX);
    m.send(b"e");
    m.wait_for("the agent shell pane closed", |t| {
        !t.contains("commands · ")
    });
    m.quit();
}

#[test]
fn a_prompt_typed_during_a_turn_is_queued_visibly_and_esc_puts_it_back_in_the_editor() {
    let h = tokio_harness(vec![
        Turn::stream(vec![bash_call("b1", "sleep 30")]),
        Turn::stream(vec![
            Event::text("second turn started"),
            Event::pause(60_000),
        ]),
    ]);
    let_commands_run_unasked(&h);
    let mut m = start(&h);
    m.type_line("run something slow");
    m.wait_text("sleep 30");
    // Typed while the turn runs: it waits under the editor, shown as steering.
    m.type_line("and then this");
    m.wait_text("⧗ steer: and then this");
    // Closing the tab asks first: a turn runs.
    m.send(PREFIX);
    m.send(b"&");
    m.wait_text("closing the tab stops a turn in March · project");
    // Esc cancels the running turn; the queued message is not dropped: it is back in the
    // editor, to send again or change.
    m.send(ESC);
    let screen = m.wait_for("the cancel and the message back", |t| {
        t.contains("Cancelled") && !t.contains("⧗") && t.contains("› and then this")
    });
    assert!(!screen.contains("second turn started"), "{screen}");
    assert_eq!(h.server.requests().len(), 1);
    m.send(ENTER);
    m.wait_text("second turn started");
    assert_eq!(h.server.requests().len(), 2);
    // Esc cancels it too.
    m.send(ESC);
    m.wait_for("the second turn cancelled", |t| {
        t.matches("Cancelled").count() >= 2
    });
    m.quit();
}

#[test]
fn quitting_during_a_turn_asks_once() {
    let h = tokio_harness(vec![Turn::stream(vec![
        Event::text("working on it"),
        Event::pause(60_000),
    ])]);
    let mut m = start(&h);
    m.type_line("go");
    m.wait_text("working on it");
    m.quit_confirming("quitting stops a turn in March · project");
}
