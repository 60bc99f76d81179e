//! The sandbox in an agent pane, end to end: the real `march` in a pseudo-terminal, its agent
//! answered by the scripted model server. The border names the sandbox, `/sandbox` switches
//! it, the permission dialog lets one command out of it, and a command it refuses is said to
//! be the sandbox's.

#![allow(clippy::unwrap_used)] // Helpers here unwrap like the tests they serve.

#[path = "support/acp_client.rs"]
mod acp_client;
#[path = "support/pty.rs"]
mod pty;
#[path = "support/workspace.rs"]
mod workspace;

use acp_client::{Harness, bash_call};
use march_testkit::Turn;
use workspace::*;

#[test]
fn the_border_names_the_sandbox_and_the_dialog_lets_one_command_out() {
    let h: Harness = tokio_harness(vec![
        Turn::stream(vec![bash_call("b1", "echo out > outside-run.txt")]),
        Turn::text("Ran it outside."),
        Turn::stream(vec![bash_call("b2", "echo in > inside-run.txt")]),
        Turn::text("Tried it inside."),
    ]);
    let project = h.project();
    let mut m = start(&h);
    m.wait_for("the sandbox in the border", |t| {
        t.contains("sandbox workspace-write")
    });
    m.type_line("/sandbox read-only");
    m.wait_for("the new sandbox in the border", |t| {
        t.contains("sandbox read-only")
    });

    // Let out once: the command writes though the sandbox is read-only.
    m.type_line("write outside the sandbox");
    m.wait_text("Allow once, outside the sandbox");
    m.send(b"4");
    let screen = m.wait_text("Ran it outside.");
    // The call says it ran outside.
    assert!(screen.contains("unsandboxed"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(project.join("outside-run.txt")).unwrap(),
        "out\n"
    );

    // Allowed in the sandbox: refused, and the pane says whose refusal it is.
    m.type_line("write inside the sandbox");
    m.wait_text("Allow once, outside the sandbox");
    m.send(b"1");
    let screen = m.wait_text("Tried it inside.");
    assert!(
        screen.contains("read-only sandbox") || screen.contains("cannot be enforced"),
        "{screen}"
    );
    assert!(!project.join("inside-run.txt").exists());
    m.quit();
}
