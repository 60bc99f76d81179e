//! Taking text out of an agent pane end to end: copy mode and mouse selection copy what
//! the agent wrote (its markdown source, a code block's lines uncut) through OSC 52, and
//! search marks its matches.

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

const PARAGRAPH: &str = "Start of a **long** paragraph that the pane must wrap over more \
than one row, with `inline code` and a [link](https://example.com) in it, ending here.";
const CODE: &str = "fn main() {\n    println!(\"a line far longer than the pane is wide so that the pane cuts it at its right edge, which copying must not do\");\n}";

fn answer() -> String {
    format!(
        "{PARAGRAPH}\n\n```rust\n{CODE}\n```\n\nThe needle is here.\n\nAnd another needle there.\n"
    )
}

/// The screen position (column, row; 0-based) where `needle` first shows.
fn find(m: &PtyMarch, needle: &str) -> (u16, u16) {
    m.with_screen(|s| {
        let (rows, cols) = s.size();
        for row in 0..rows {
            let text = s.contents_between(row, 0, row, cols);
            if let Some(at) = text.find(needle) {
                return (text[..at].chars().count() as u16, row);
            }
        }
        panic!("{needle:?} is not on screen:\n{}", s.contents())
    })
}

/// An SGR mouse report: button `b` at 0-based column, row; `press` or release.
fn mouse(b: u8, (col, row): (u16, u16), press: bool) -> Vec<u8> {
    let end = if press { 'M' } else { 'm' };
    format!("\x1b[<{b};{};{}{end}", col + 1, row + 1).into_bytes()
}

#[test]
fn copy_mode_copies_a_wrapped_paragraph_and_a_code_block_as_written() {
    let h = tokio_harness(vec![Turn::text(answer())]);
    let mut m = start(&h);
    m.type_line("show me");
    m.wait_text("And another needle there.");
    // Copy mode, the paragraph's rows whole (search moves the cursor), copied.
    m.send(PREFIX);
    m.send(b"[");
    let entered = m.wait_text("copy [");
    let status = |t: &str| t.lines().find(|l| l.contains("copy [")).map(str::to_string);
    let at_entry = status(&entered);
    m.send(b"?Start of\r");
    m.wait_for("the search to move the cursor", |t| {
        status(t).is_some() && status(t) != at_entry
    });
    m.send(b"V");
    m.wait_text("copy · lines");
    m.send(b"/ending here\r");
    m.send(b"y");
    assert_eq!(m.wait_clipboard(1), PARAGRAPH);
    // The code block: its three rows, copied uncut.
    m.send(PREFIX);
    m.send(b"[");
    let entered = m.wait_text("copy [");
    let at_entry = status(&entered);
    m.send(b"?fn main\r");
    m.wait_for("the search to move the cursor", |t| {
        status(t).is_some() && status(t) != at_entry
    });
    m.send(b"Vjj");
    m.send(b"y");
    assert_eq!(m.wait_clipboard(2), CODE);
    m.quit();
}

#[test]
fn a_mouse_drag_copies_the_paragraph_and_search_marks_matches() {
    let h = tokio_harness(vec![Turn::text(answer())]);
    let mut m = start(&h);
    m.type_line("show me");
    m.wait_text("And another needle there.");
    let start = find(&m, "Start of");
    let (end_col, end_row) = find(&m, "ending here.");
    let end = (end_col + "ending here.".len() as u16 - 1, end_row);
    assert!(end_row > start.1, "the paragraph wraps");
    let mut drag = mouse(0, start, true);
    drag.extend(mouse(32, (start.0 + 5, start.1 + 1), true));
    drag.extend(mouse(32, end, true));
    drag.extend(mouse(0, end, false));
    m.send(&drag);
    assert_eq!(m.wait_clipboard(1), PARAGRAPH);
    // A double click copies a word.
    let (col, row) = find(&m, "paragraph");
    let mut click = mouse(0, (col + 2, row), true);
    click.extend(mouse(0, (col + 2, row), false));
    click.extend(click.clone());
    m.send(&click);
    assert_eq!(m.wait_clipboard(2), "paragraph");
    // Search in copy mode marks every match on screen, and n moves to the next.
    m.send(PREFIX);
    m.send(b"[");
    m.wait_text("copy [");
    m.send(b"gg/needle\r");
    let first = m.wait_for("the first match", |t| t.contains("copy ["));
    let (a, a_row) = find(&m, "The needle");
    let (b, b_row) = find(&m, "another needle");
    let marked =
        |s: &vt100::Screen, (col, row): (u16, u16)| s.cell(row, col).is_some_and(|c| c.inverse());
    m.wait_screen("both matches marked", |s| {
        marked(s, (a + 4, a_row)) && marked(s, (b + 8, b_row))
    });
    let position = |t: &str| t.lines().find(|l| l.contains("copy [")).map(str::to_string);
    let before = position(&first);
    m.send(b"n");
    m.wait_for("n to move", |t| position(t) != before);
    m.send(b"q");
    m.wait_for("copy mode to end", |t| !t.contains("copy ["));
    m.quit();
}

#[test]
fn slash_export_and_copy_and_march_export_write_the_session_as_markdown() {
    let h = tokio_harness(vec![
        Turn::stream(vec![acp_client::write_call(
            "w1",
            "notes.txt",
            "first line",
        )]),
        Turn::text("Wrote **the notes**."),
    ]);
    let mut m = start(&h);
    m.type_line("/mode yolo");
    m.type_line("write the notes");
    m.wait_text("Wrote the notes.");
    m.type_line("/export exported.md");
    m.wait_text("Exported to");
    let doc = std::fs::read_to_string(h.project().join("exported.md")).unwrap();
    assert!(doc.contains("## Prompt\n\nwrite the notes"), "{doc}");
    assert!(doc.contains("```diff\n--- "), "the write as a diff: {doc}");
    assert!(doc.contains("+first line"), "{doc}");
    assert!(
        doc.contains("Wrote **the notes**."),
        "the answer's markdown: {doc}"
    );
    m.type_line("/copy");
    let copied = m.wait_clipboard(1);
    assert!(
        copied.starts_with(doc.trim_end()) && copied.contains("Exported to"),
        "/copy copies the same document, with what came since: {copied}"
    );
    m.quit();
    // From the command line, with no workspace: the session replayed by its runner.
    let file = acp_client::session_file(&h.sessions_dir());
    let name = file.file_stem().unwrap().to_string_lossy().into_owned();
    let id = name.rsplit('_').next().unwrap().to_string();
    let out = h.dir.path().join("cli.md");
    let (code, _) = m.cli(&["export", &id, "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0);
    let from_cli = std::fs::read_to_string(&out).unwrap();
    assert!(
        from_cli.contains("## Prompt\n\nwrite the notes"),
        "{from_cli}"
    );
    assert!(from_cli.contains("+first line"), "{from_cli}");
    assert!(from_cli.contains("Wrote **the notes**."), "{from_cli}");
    let (code, _) = m.cli(&["export", "no-such-session"]);
    assert_ne!(code, 0, "an unknown session is an error");
}

#[test]
fn the_switcher_finds_a_session_by_a_word_of_its_answer_and_shows_that_turn() {
    let h = tokio_harness(vec![
        Turn::text("The xylophone answer is here."),
        Turn::text("Another topic entirely."),
    ]);
    let mut m = start(&h);
    m.type_line("first question");
    m.wait_text("The xylophone answer is here.");
    m.type_line("/new");
    m.wait_for("a new session", |t| !t.contains("xylophone"));
    m.type_line("second question");
    m.wait_text("Another topic entirely.");
    m.send(PREFIX);
    m.send(b"s");
    m.wait_text("Sessions");
    m.send(b"xylophone");
    // Found by the text of its turn, not its title.
    m.wait_for("the matching turn listed", |t| {
        t.contains("≡") && t.contains("turn")
    });
    m.send(ENTER);
    m.wait_for("the first session shown at that turn", |t| {
        t.contains("The xylophone answer is here.") && !t.contains("Another topic entirely.")
    });
    m.quit();
}
