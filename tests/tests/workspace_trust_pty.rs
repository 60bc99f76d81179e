//! Every approval informed, none by accident, end to end: the real `march` in an 80×24
//! pseudo-terminal against the scripted model server. A long command is reachable whole in
//! the dialog and in `march status --json` and `march answer`; keys typed while a dialog
//! opens land in the prompt and answer nothing; a rejection's words reach the model; a
//! model retrying what the user rejected for good is stopped.

#![allow(clippy::unwrap_used)] // Helpers here unwrap like the tests they serve.

#[path = "support/acp_client.rs"]
mod acp_client;
#[path = "support/pty.rs"]
mod pty;
#[path = "support/workspace.rs"]
mod workspace;

use acp_client::{Harness, bash_call};
use march_testkit::Turn;
use pty::PtyMarch;
use workspace::*;

/// `march` at 80×24 in the harness's project, its dialogs holding keys for `guard_ms`.
fn start_small(h: &Harness, guard_ms: u64) -> PtyMarch {
    let config = h.march_home().join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap().replace(
        "permission_guard_ms = 0\n",
        &format!("permission_guard_ms = {guard_ms}\n"),
    );
    std::fs::write(&config, text).unwrap();
    let m = PtyMarch::spawn_sized(
        &[],
        &h.project(),
        &h.dir.path().join("home"),
        &h.march_home(),
        &[],
        80,
        24,
    );
    m.wait_text("March · project");
    m
}

/// The session's status as `march status --json` prints it.
fn status(m: &PtyMarch) -> serde_json::Value {
    let (code, out) = m.cli(&["status", "--json"]);
    assert_eq!(code, 0, "{out}");
    let line = out.lines().find(|l| l.starts_with('{')).unwrap();
    serde_json::from_str(line).unwrap()
}

#[test]
fn long_commands_are_shown_whole_and_typed_ahead_keys_answer_nothing() {
    let long = format!(
        "cargo test {} | sed -e 's/x/y/' ; echo HIDDEN-TAIL > hidden-tail.txt",
        "--package some-crate ".repeat(18)
    );
    assert!(long.len() >= 400);
    let lines: Vec<String> = (1..=60).map(|i| format!("echo line-{i:02}")).collect();
    let sixty = format!("{} ; echo SIXTY-TAIL > sixty.txt", lines.join("\n"));
    let h = tokio_harness(vec![
        Turn::stream(vec![bash_call("b1", &long)]),
        Turn::text("Ran the long one."),
        Turn::stream(vec![bash_call("b2", &sixty)]),
        Turn::text("Ran sixty lines."),
    ]);
    let project = h.project();
    // Long enough that the test's keys surely arrive within it.
    let mut m = start_small(&h, 3000);
    m.type_line("run the long one");
    m.wait_text("Permission needed");
    // Typed as the dialog opens: to the editor, answering nothing (not N, 5, y nor Enter).
    m.send(b"N5y\r");
    let screen = m.wait_text("› N5y");
    assert!(screen.contains("keys wait until typing pauses"), "{screen}");
    assert!(screen.contains("Permission needed"), "{screen}");
    // The whole command, in the other channels too.
    let session = status(&m);
    let question = session["question"].as_str().unwrap();
    assert!(question.contains(&long), "{question}");
    // Once typing paused, the keys answer; the tail is below the dialog's rows, so an
    // allow first asks to read on.
    m.wait_text("esc cancel turn");
    m.send(b"1");
    m.wait_text("read to the end first");
    assert!(!project.join("hidden-tail.txt").exists());
    m.send(b"\x1b[F"); // End
    m.wait_for("the command's tail in the dialog", |t| {
        t.contains("hidden-tail.txt") && !t.contains("read to the end first")
    });
    m.send(b"1");
    let screen = m.wait_text("Ran the long one.");
    assert!(project.join("hidden-tail.txt").exists());
    // The typed-ahead text is still in the editor.
    assert!(screen.contains("› N5y"), "{screen}");
    m.send(b"\x15"); // Ctrl-U clears it

    // Sixty lines: `march answer` says what it allowed, every line of it.
    m.type_line("run sixty");
    m.wait_text("Permission needed");
    let session = status(&m);
    let question = session["question"].as_str().unwrap();
    assert!(question.contains(&sixty), "{question}");
    let (code, out) = m.cli(&["answer", "-t", "1", "allow"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("allowed: "), "{out}");
    for line in &lines {
        assert!(out.contains(line.as_str()), "{line} missing: {out}");
    }
    assert!(out.contains("SIXTY-TAIL"), "{out}");
    m.wait_text("Ran sixty lines.");
    assert!(project.join("sixty.txt").exists());
    m.quit();
}

#[test]
fn rejected_with_words_the_model_reads_them_and_a_rejection_loop_is_stopped() {
    let h = tokio_harness(vec![
        Turn::stream(vec![bash_call("b1", "rm -rf build")]),
        Turn::text("I will use cargo clean."),
        Turn::stream(vec![bash_call("b2", "curl example.org")]),
        Turn::stream(vec![bash_call("b3", "curl example.org")]),
        Turn::stream(vec![bash_call("b4", "curl example.org")]),
        Turn::stream(vec![bash_call("b5", "curl example.org")]),
        Turn::text("never reached"),
    ]);
    let mut m = start_small(&h, 0);
    m.type_line("clean the build");
    m.wait_text("Permission needed");
    // 6: reject, and say why.
    m.send(b"6");
    m.wait_text("why:");
    m.send(b"use cargo clean instead\r");
    m.wait_text("I will use cargo clean.");
    let second = h.server.requests()[1].raw_body.clone();
    assert!(
        second.contains("The user rejected this tool call and said: use cargo clean instead"),
        "{second}"
    );

    // 7: always reject bash here. The model tries again and again: the third automatic
    // refusal stops the turn, and the pane says why.
    m.type_line("fetch the page");
    m.wait_text("Permission needed");
    m.send(b"7");
    let screen = m.wait_text("rejected automatically 3");
    assert!(screen.contains("Stopped"), "{screen}");
    assert_eq!(
        h.server.requests().len(),
        6,
        "no model request after the stop"
    );
    m.quit();
}
