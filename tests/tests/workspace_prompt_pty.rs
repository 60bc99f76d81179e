//! The prompt as a composer end to end: a shell's line-editing keys, Ctrl-C, the project's
//! prompt history across a restart (Up and Ctrl-R), the unsent draft across a restart,
//! Ctrl-G editing the prompt in `$EDITOR`, a bracketed paste's lines whatever their line
//! ends, and Enter and Esc while a turn runs as docs/KEYMAPS.md says.

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
    prompt_rows(screen, 1)
        .into_iter()
        .next()
        .unwrap_or_default()
}

fn wait_prompt(m: &PtyMarch, what: &str, want: &str) {
    m.wait_for(what, |t| prompt_line(t) == format!("› {want}").trim_end());
}

/// The first `n` rows of the prompt editor, framing and indentation trimmed.
fn prompt_rows(screen: &str, n: usize) -> Vec<String> {
    let lines: Vec<&str> = screen.lines().collect();
    let rule = lines
        .iter()
        .rposition(|l| l.starts_with("│─") || l.starts_with("│ ─"))
        .unwrap_or(0);
    lines
        .iter()
        .skip(rule + 1)
        .take(n)
        .map(|l| {
            l.trim_matches(|c: char| c == '│' || c.is_whitespace())
                .to_string()
        })
        .collect()
}

/// Waits until the editor's first rows are `want`.
fn wait_prompt_rows(m: &PtyMarch, what: &str, want: &[&str]) -> String {
    m.wait_for(what, |t| prompt_rows(t, want.len()) == want)
}

/// The model requests the server got so far.
fn model_calls(h: &acp_client::Harness) -> Vec<march_testkit::RecordedRequest> {
    h.server
        .requests()
        .into_iter()
        .filter(|r| r.model().is_some())
        .collect()
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

#[test]
fn a_bracketed_paste_with_cr_line_ends_keeps_its_four_lines() {
    let h = tokio_harness(vec![Turn::text("Four lines read.")]);
    let mut m = start(&h);
    // What tmux's paste-buffer, xterm and VTE terminals send: CR between the lines.
    m.send(b"\x1b[200~line one\rline two\rline three\rline four\x1b[201~");
    wait_prompt_rows(
        &m,
        "the paste as four lines in the editor",
        &["› line one", "line two", "line three", "line four"],
    );
    m.send(ENTER);
    m.wait_text("Four lines read.");
    let sent = last_prompt(&h);
    assert_eq!(sent, "line one\nline two\nline three\nline four");
    assert_eq!(sent.lines().count(), 4);
    m.quit();
}

#[test]
fn enter_steers_the_running_turn_and_esc_gives_back_what_was_queued() {
    use acp_client::bash_call;
    use march_testkit::Event;
    let h = tokio_harness(vec![
        // The command runs until the test has typed its message.
        Turn::stream(vec![bash_call(
            "c1",
            "while [ ! -e go ]; do sleep 0.05; done; echo went",
        )]),
        Turn::text("Steered answer."),
        // Streams, then stays silent: no turn boundary comes to deliver what is queued.
        Turn::stream(vec![Event::text("Working on it."), Event::pause(600_000)]),
        Turn::text("Both parts read."),
    ]);
    let_commands_run_unasked(&h);
    let mut m = start(&h);
    m.type_line("start the slow thing");
    m.wait_for("the command running", |t| {
        t.contains("echo went") && t.contains("running")
    });

    // Enter during a turn steers it: marked under the editor, no prompt of its own.
    m.type_line("use tabs");
    m.wait_text("⧗ steer: use tabs");
    assert_eq!(model_calls(&h).len(), 1, "a steer starts no request");
    std::fs::write(h.project().join("go"), "").unwrap();
    m.wait_for("the steered answer, the queue empty", |t| {
        t.contains("Steered answer.") && !t.contains("⧗")
    });
    // It went into the running turn: the request right after the command's result has it.
    let calls = model_calls(&h);
    let bodies: Vec<&str> = calls.iter().map(|c| c.raw_body.as_str()).collect();
    assert_eq!(calls.len(), 2, "{bodies:#?}");
    assert!(calls[1].raw_body.contains("went"), "{bodies:#?}");
    assert!(calls[1].raw_body.contains("use tabs"), "{bodies:#?}");

    // Esc with a message queued and another half typed: the turn is cancelled and both
    // are in the editor, the queued one first; nothing runs until it is sent again.
    m.type_line("look again");
    m.wait_text("Working on it.");
    m.type_line("first queued");
    m.wait_text("⧗ steer: first queued");
    m.send(b"half typed");
    wait_prompt(&m, "the draft under the queue", "half typed");
    m.send(ESC);
    m.wait_for("the cancel", |t| {
        t.contains("Cancelled") && !t.contains("⧗")
    });
    wait_prompt_rows(
        &m,
        "the queued message and the draft in the editor",
        &["› first queued", "", "half typed"],
    );
    assert_eq!(model_calls(&h).len(), 3, "nothing queued ran on its own");
    m.send(ENTER);
    m.wait_text("Both parts read.");
    let calls = model_calls(&h);
    assert_eq!(calls.len(), 4, "sent once, as one prompt");
    assert_eq!(last_prompt(&h), "first queued\n\nhalf typed");
    m.quit();
}
