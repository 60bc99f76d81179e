//! Reviewing an agent's edit end to end: the real `march` in a pseudo-terminal, its agent
//! answered by the scripted model server, a real language server (ruff) checking the file.
//! The edit introduces an error: the model is told in the tool result, the diagnostics pane
//! and the status bar show it, the diff pane shows the change; undoing the hunk from the
//! diff pane clears the diagnostic.

#![allow(clippy::unwrap_used)] // Helpers here unwrap like the tests they serve.

#[path = "support/acp_client.rs"]
mod acp_client;
#[path = "support/pty.rs"]
mod pty;

use acp_client::{Harness, request_messages};
use march_testkit::{Event, Turn};
use pty::PtyMarch;
use serde_json::json;

const PREFIX: &[u8] = b"\x01";

#[test]
fn an_edit_that_breaks_the_code_is_reported_reviewed_and_undone() {
    let ruff = march_testkit::test_tools::ruff();
    let edit = json!({
        "path": "app.py",
        "edits": [{"oldText": "print('ok')", "newText": "print(undefined_name)"}]
    });
    let h = Harness::on_own_runtime(vec![
        Turn::stream(vec![Event::tool_call("e1", "edit", &[&edit.to_string()])]),
        Turn::text("Edited app.py."),
    ]);
    let config = h.march_home().join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        format!(
            "permission_mode = \"yolo\"\n{text}\n[lsp]\nwait_ms = 30000\n\
             [lsp.servers.pyright]\nenabled = false\n[lsp.servers.pylsp]\nenabled = false\n\
             [lsp.servers.ruff]\ncommand = \"{}\"\n",
            ruff.display()
        ),
    )
    .unwrap();
    let project = h.project();
    std::fs::write(project.join("app.py"), "import sys\n\nprint('ok')\n").unwrap();
    // The "editor" the diagnostics pane opens: it notes its arguments and fixes the file.
    let editor = h.dir.path().join("fix-editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\necho \"$@\" > \"$0.args\"\nprintf 'print(\\047fixed\\047)\\n' > \"$2\"\n",
    )
    .unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&editor)
        .status()
        .unwrap();
    let mut m = PtyMarch::spawn_clean(
        &[],
        &project,
        &h.dir.path().join("home"),
        &h.march_home(),
        &[("EDITOR", editor.as_os_str())],
    );
    m.wait_text("March · project");
    m.type_line("break it");
    m.wait_text("Edited app.py.");

    // The model was told, in the edit's result.
    let requests = h.server.requests();
    let result = request_messages(&requests[1].body)
        .into_iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    let result = result["content"].as_str().unwrap().to_string();
    assert!(
        result.contains("Diagnostics: 1 error in app.py after this change:\n3:7 error: Undefined name `undefined_name` [F821] (Ruff)"),
        "{result}"
    );
    // The status bar counts it.
    m.wait_text("1 error");

    // The diff pane shows the change.
    m.send(PREFIX);
    m.send(b"v");
    m.wait_text("+print(undefined_name)");
    // The diagnostics pane (below the diff pane) shows the error and the unused import.
    m.send(PREFIX);
    m.send(b"D");
    let screen = m.wait_text("Undefined name `undefined_name`");
    assert!(screen.contains("app.py  1 E  1 W"), "{screen}");
    // Back to the diff pane: undo the hunk (r twice).
    m.send(PREFIX);
    m.send(b"k");
    m.send(b"r");
    m.wait_text("press r again");
    m.send(b"r");
    m.wait_text("reverted a change in app.py");
    assert_eq!(
        std::fs::read_to_string(project.join("app.py")).unwrap(),
        "import sys\n\nprint('ok')\n"
    );
    // The language server looked again: the error is gone, the warning stays.
    m.wait_for("the error cleared", |s| {
        !s.contains("Undefined name `undefined_name`") && s.contains("app.py  1 W")
    });
    // The warning opens in $EDITOR at its line; when the editor is done, the file is checked
    // again.
    m.send(PREFIX);
    m.send(b"j");
    m.send(b"\r");
    m.wait_for("the file checked again", |s| {
        s.contains("no diagnostics (the language servers")
    });
    assert_eq!(
        std::fs::read_to_string(format!("{}.args", editor.display())).unwrap(),
        format!("+1 {}\n", project.join("app.py").display())
    );
    assert_eq!(
        std::fs::read_to_string(project.join("app.py")).unwrap(),
        "print('fixed')\n"
    );
    m.quit();
}
