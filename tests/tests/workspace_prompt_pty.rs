//! The prompt as a composer end to end: a shell's line-editing keys, Ctrl-C, the project's
//! prompt history across a restart (Up and Ctrl-R), the unsent draft across a restart, and
//! Ctrl-G editing the prompt in `$EDITOR`.

#![allow(clippy::unwrap_used)] // Helpers here unwrap like the tests they serve.

#[path = "support/acp_client.rs"]
mod acp_client;
#[path = "support/pty.rs"]
mod pty;
#[path = "support/workspace.rs"]
mod workspace;

use march_testkit::Turn;
use pty::PtyMarch;
use workspace::*;

/// The line of the screen holding the prompt editor (after the `› ` marker under the rule).
fn prompt_line(screen: &str) -> String {
    let lines: Vec<&str> = screen.lines().collect();
    let rule = lines
        .iter()
        .rposition(|l| l.starts_with("│─") || l.starts_with("│ ─"))
        .unwrap_or(0);
    lines
        .get(rule + 1)
        .map(|l| {
            l.trim_matches(|c: char| c == '│' || c.is_whitespace())
                .to_string()
        })
        .unwrap_or_default()
}

fn wait_prompt(m: &PtyMarch, what: &str, want: &str) {
    m.wait_for(what, |t| prompt_line(t) == format!("› {want}").trim_end());
}

/// The text of the last user message the model server was sent (its first part).
fn last_prompt(h: &acp_client::Harness) -> String {
    last_user_parts(h).into_iter().next().unwrap_or_default()
}

#[test]
fn the_editing_keys_work_as_in_a_shell() {
    let h = tokio_harness(vec![Turn::text("Got it.")]);
    let mut m = start(&h);
    m.send(b"one two three");
    wait_prompt(&m, "the typed text", "one two three");
    m.send(b"\x17"); // ctrl-w
    wait_prompt(&m, "a word killed", "one two");
    m.send(b"\x1bb"); // alt-b
    m.send(b"\x0b"); // ctrl-k
    wait_prompt(&m, "killed to the end", "one");
    m.send(b"\x19"); // ctrl-y
    wait_prompt(&m, "yanked back", "one two");
    m.send(b"\x15"); // ctrl-u
    m.wait_for("killed to the start", |t| {
        prompt_line(t).contains("Message the agent")
    });
    m.send(b"\x1f"); // ctrl-_
    wait_prompt(&m, "undone", "one two");
    m.send(b"\x03"); // ctrl-c
    m.wait_for("cleared", |t| prompt_line(t).contains("Message the agent"));
    m.type_line("final words");
    m.wait_text("Got it.");
    assert_eq!(last_prompt(&h), "final words");
    m.quit();
}

#[test]
fn history_and_the_draft_survive_a_restart_and_ctrl_r_finds_a_prompt() {
    let h = tokio_harness(vec![Turn::text("First."), Turn::text("Second.")]);
    let mut m = start(&h);
    m.type_line("remember the cargo command");
    m.wait_text("First.");
    m.type_line("and the other one");
    m.wait_text("Second.");
    m.send(b"half typed, not sent");
    wait_prompt(&m, "the draft", "half typed, not sent");
    m.quit();
    let mut m = start(&h);
    wait_prompt(&m, "the draft back", "half typed, not sent");
    m.send(b"\x03");
    m.wait_for("cleared", |t| prompt_line(t).contains("Message the agent"));
    m.send(b"\x1b[A");
    wait_prompt(&m, "the newest prompt", "and the other one");
    m.send(b"\x1b[A");
    wait_prompt(&m, "the one before", "remember the cargo command");
    m.send(b"\x03");
    m.send(b"\x12cargo"); // ctrl-r
    m.wait_for("the search", |t| {
        t.contains("history search: cargo") && prompt_line(t) == "› remember the cargo command"
    });
    m.send(b"\r");
    m.wait_for("the search done", |t| !t.contains("history search"));
    wait_prompt(&m, "the match kept", "remember the cargo command");
    m.quit();
}

#[test]
fn ctrl_g_edits_the_prompt_in_the_editor() {
    let h = tokio_harness(vec![Turn::text("Edited prompt received.")]);
    // An "editor" that rewrites the file it is given, as a user would in vim.
    let editor = h.dir.path().join("edit.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nprintf 'edited: %s\\n' \"$(cat \"$1\")\" > \"$1.new\" && mv \"$1.new\" \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let home = h.dir.path().join("home");
    let mut m = PtyMarch::spawn_clean(
        &[],
        &h.project(),
        &home,
        &h.march_home(),
        &[("EDITOR", editor.as_os_str())],
    );
    m.wait_text("March · project");
    m.send(b"first draft");
    wait_prompt(&m, "the draft", "first draft");
    m.send(b"\x07"); // ctrl-g
    wait_prompt(&m, "the edited text back", "edited: first draft");
    m.send(b"\r");
    m.wait_text("Edited prompt received.");
    assert_eq!(last_prompt(&h), "edited: first draft");
    m.quit();
}

/// Every text part of the last user message the model server was sent.
fn last_user_parts(h: &acp_client::Harness) -> Vec<String> {
    let requests = h.server.requests();
    let body = &requests.last().unwrap().body;
    let messages = body["messages"].as_array().unwrap();
    let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    match &user["content"] {
        serde_json::Value::String(s) => vec![s.clone()],
        v => v
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p["text"].as_str().map(str::to_string))
            .collect(),
    }
}

#[test]
fn at_completes_a_project_file_and_the_prompt_carries_it() {
    let h = tokio_harness(vec![Turn::text("Read the file.")]);
    std::fs::create_dir_all(h.project().join("src")).unwrap();
    std::fs::write(
        h.project().join("src/hello.py"),
        "print('hello from the file')\n",
    )
    .unwrap();
    std::fs::write(h.project().join("src/other.txt"), "other\n").unwrap();
    let mut m = start(&h);
    m.send(b"explain @hel");
    m.wait_for("the popup with the file", |t| {
        t.contains("@src/hello.py") && !t.contains("other.txt")
    });
    m.send(b"\t");
    wait_prompt(&m, "the mention inserted", "explain @src/hello.py");
    // Backspace after the space, then once more: the mention goes whole.
    m.send(b"\x7f\x7f");
    wait_prompt(&m, "the mention removed whole", "explain");
    m.send(b"@src/hel");
    m.wait_text("@src/hello.py");
    m.send(b"\r");
    wait_prompt(&m, "the mention inserted by enter", "explain @src/hello.py");
    m.send(b"please\r");
    m.wait_text("Read the file.");
    let sent = last_user_parts(&h).join("\n");
    assert!(sent.contains("explain @src/hello.py please"), "{sent}");
    assert!(
        sent.contains("print('hello from the file')"),
        "the file's text went along: {sent}"
    );
    assert!(
        sent.contains("src/hello.py\""),
        "as a resource naming its uri: {sent}"
    );
    m.quit();
}
