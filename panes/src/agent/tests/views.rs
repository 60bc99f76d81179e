//! Snapshots of what the pane draws (symbols), with style checks on key cells.

use agent_client_protocol::v1::schema::{
    Diff, SessionUpdate, ToolCallContent, ToolCallStatus, ToolCallUpdateFields, ToolKind,
    UsageUpdate,
};
use ratatui::buffer::Buffer;

use super::*;
use crate::test_support::{dark, light, rows};
use crate::theme::Slot;

const ANSWER: &str = "\
## Plan

I will:

1. read `main.rs`
2. fix the **bug**

```rust
fn main() {
    println!(\"hi\");
}
```
";

/// The position of the first cell of `needle` on screen.
fn find(buf: &Buffer, needle: &str) -> (u16, u16) {
    for (y, row) in rows(buf).iter().enumerate() {
        if let Some(byte) = row.find(needle) {
            let x = row[..byte].chars().count();
            return (x as u16, y as u16);
        }
    }
    panic!("{needle:?} not on screen:\n{}", rows(buf).join("\n"));
}

#[test]
fn markdown_and_code() {
    let mut pane = AgentPane::new("agent 1");
    pane.submit_local("fix the bug please");
    pane.apply(&agent(ANSWER));
    let theme = dark();
    let t = draw(&mut pane, &theme, 60, 24);
    insta::assert_snapshot!(t.backend());
    let buf = t.backend().buffer();
    assert!(
        !rows(buf)
            .iter()
            .any(|r| r.contains("**") || r.contains("```")),
        "markdown is rendered, not shown raw"
    );
    let (x, y) = find(buf, "fn main");
    assert_eq!(buf[(x, y)].style().bg, theme.style(Slot::CodeBlock).bg);
    let (x, y) = find(buf, "2. fix the bug");
    assert_eq!(
        buf[(x + 11, y)].style().fg,
        theme.style(Slot::Agent).patch(theme.style(Slot::Strong)).fg
    );
}

#[test]
fn thinking_collapsed_and_expanded() {
    let mut pane = pane_with(&[
        (
            0,
            thought("Let me look at the file.\nThen decide.\nMaybe tests."),
        ),
        (0, agent("Done.")),
    ]);
    let theme = dark();
    insta::assert_snapshot!(
        "thinking_collapsed",
        draw(&mut pane, &theme, 50, 10).backend()
    );
    pane.toggle_thinking();
    insta::assert_snapshot!(
        "thinking_expanded",
        draw(&mut pane, &theme, 50, 12).backend()
    );
}

fn tool_pane() -> AgentPane {
    let diff = Diff::new("/work/src/lib.rs", "fn a() {}\nfn b() { 2 }\nfn c() {}\n")
        .old_text("fn a() {}\nfn b() { 1 }\nfn c() {}\n".to_string());
    pane_with(&[
        (
            0,
            call(
                "1",
                "read src/lib.rs",
                ToolKind::Read,
                ToolCallStatus::Pending,
            ),
        ),
        (
            0,
            call(
                "2",
                "bash: cargo test",
                ToolKind::Execute,
                ToolCallStatus::InProgress,
            ),
        ),
        (
            0,
            call(
                "3",
                "edit src/lib.rs",
                ToolKind::Edit,
                ToolCallStatus::InProgress,
            ),
        ),
        (
            1250,
            update(
                "3",
                ToolCallUpdateFields::new()
                    .status(ToolCallStatus::Completed)
                    .content(vec![ToolCallContent::Diff(diff)]),
            ),
        ),
        (
            0,
            call(
                "4",
                "grep TODO",
                ToolKind::Search,
                ToolCallStatus::InProgress,
            ),
        ),
        (
            300,
            update(
                "4",
                ToolCallUpdateFields::new()
                    .status(ToolCallStatus::Failed)
                    .content(vec![ToolCallContent::from(text(
                        "error: no such dir\nsecond line",
                    ))]),
            ),
        ),
    ])
}

#[test]
fn tool_calls_collapsed_with_inline_diff() {
    let mut pane = tool_pane();
    let theme = dark();
    let t = draw(&mut pane, &theme, 60, 20);
    insta::assert_snapshot!(t.backend());
    let buf = t.backend().buffer();
    let (x, y) = find(buf, "+fn b() { 2 }");
    assert_eq!(buf[(x, y)].style().fg, theme.style(Slot::DiffAdded).fg);
    assert_eq!(buf[(x, y)].style().bg, theme.style(Slot::DiffAdded).bg);
    let (x, y) = find(buf, "-fn b() { 1 }");
    assert_eq!(buf[(x, y)].style().fg, theme.style(Slot::DiffRemoved).fg);
    let (x, y) = find(buf, "✗");
    assert_eq!(buf[(x, y)].style().fg, theme.style(Slot::ToolFailed).fg);
}

#[test]
fn tool_calls_expanded() {
    let mut pane = tool_pane();
    pane.toggle_tools();
    insta::assert_snapshot!(draw(&mut pane, &dark(), 60, 26).backend());
}

#[test]
fn permission_modal() {
    let mut pane = pane_with(&[(
        0,
        call(
            "call-1",
            "bash: rm -rf build",
            ToolKind::Execute,
            ToolCallStatus::Pending,
        ),
    )]);
    pane.turn_started();
    pane.show_permission(permission_request());
    let theme = dark();
    let t = draw(&mut pane, &theme, 60, 18);
    insta::assert_snapshot!(t.backend());
    let buf = t.backend().buffer();
    let (x, y) = find(buf, "Allow once");
    assert_eq!(buf[(x, y)].style().bg, theme.style(Slot::Selection).bg);
    assert!(pane.status().waiting_for_permission);
    assert_eq!(pane.cursor_position(), None, "no cursor under a modal");
}

#[test]
fn the_edit_dialog_shows_the_diff_and_scrolls_it() {
    use crate::scroll::Scroll;
    let old: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    let new = old
        .replace("line 3\n", "line three\n")
        .replace("line 30\n", "line thirty\n");
    let mut request = permission_request();
    request.tool_call.fields = ToolCallUpdateFields::new()
        .title("edit src/notes.txt".to_string())
        .kind(ToolKind::Edit)
        .content(vec![ToolCallContent::Diff(
            Diff::new("/work/proj/src/notes.txt", new).old_text(old),
        )]);
    let mut pane = AgentPane::new("agent 1");
    pane.turn_started();
    pane.show_permission(request);
    let theme = dark();
    let t = draw(&mut pane, &theme, 70, 26);
    insta::assert_snapshot!(t.backend());
    let text = rows(t.backend().buffer()).join("\n");
    assert!(text.contains("+line three"), "{text}");
    assert!(
        !text.contains("+line thirty"),
        "the second hunk is below: {text}"
    );
    pane.scroll(Scroll::Pages(1));
    let t = draw(&mut pane, &theme, 70, 26);
    let text = rows(t.backend().buffer()).join("\n");
    assert!(text.contains("+line thirty"), "{text}");
    // A new file says so; a command shows itself and where it runs.
    let mut request = permission_request();
    request.tool_call.fields = ToolCallUpdateFields::new()
        .title("write a.txt".to_string())
        .kind(ToolKind::Edit)
        .content(vec![ToolCallContent::Diff(Diff::new("/p/a.txt", "hi\n"))]);
    let mut pane = AgentPane::new("agent 1");
    pane.show_permission(request);
    let text = rows(draw(&mut pane, &theme, 70, 24).backend().buffer()).join("\n");
    assert!(
        text.contains("/p/a.txt (new file)") && text.contains("+hi"),
        "{text}"
    );
    let mut request = permission_request();
    request.tool_call.fields = ToolCallUpdateFields::new()
        .title("bash ls".to_string())
        .kind(ToolKind::Execute)
        .raw_input(serde_json::json!({"command": "ls", "timeout": 5}));
    let mut pane = AgentPane::new("agent 1");
    pane.show_permission(request);
    let text = rows(draw(&mut pane, &theme, 70, 24).backend().buffer()).join("\n");
    assert!(
        text.contains("\"timeout\": 5"),
        "arguments pretty-printed: {text}"
    );
}

#[test]
fn slash_completion_popup() {
    let mut pane = AgentPane::new("agent 1");
    pane.apply(&SessionUpdate::AvailableCommandsUpdate(
        agent_client_protocol::v1::schema::AvailableCommandsUpdate::new(vec![
            agent_client_protocol::v1::schema::AvailableCommand::new(
                "review",
                "Review the working tree",
            ),
        ]),
    ));
    type_text(&mut pane, "/re");
    let t = draw(&mut pane, &dark(), 60, 12);
    insta::assert_snapshot!(t.backend());
    // Border, padding, the `› ` marker, then `/re`: the cursor sits after the `e`.
    assert_eq!(pane.cursor_position(), Some((7, 10)));
}

#[test]
fn streaming_appends_to_the_last_block() {
    let mut pane = AgentPane::new("agent 1");
    pane.submit_local("count to five");
    pane.turn_started();
    let theme = dark();
    let hl = Highlighter::new();
    for chunk in ["One, ", "two, ", "three"] {
        pane.apply(&agent_id(chunk, "m1"));
        draw_with(&mut pane, &theme, &hl, 40, 8);
    }
    let before = pane.layout_count();
    pane.apply(&agent_id(", four, five.", "m1"));
    let t = draw_with(&mut pane, &theme, &hl, 40, 8);
    assert_eq!(
        pane.layout_count(),
        before + 1,
        "only the streaming block is laid out"
    );
    insta::assert_snapshot!(t.backend());
}

#[test]
fn scrolled_up_stays_put_and_counts_new_lines() {
    let mut pane = AgentPane::new("agent 1");
    for i in 0..30 {
        pane.submit_local(&format!("question {i}"));
        pane.apply(&agent(&format!("answer {i}")));
    }
    let theme = dark();
    let hl = Highlighter::new();
    draw_with(&mut pane, &theme, &hl, 40, 12);
    pane.scroll(crate::scroll::Scroll::Lines(-9));
    let t = draw_with(&mut pane, &theme, &hl, 40, 12);
    let before = rows(t.backend().buffer());
    pane.apply(&agent("\n\nmore\n\nand more"));
    let t = draw_with(&mut pane, &theme, &hl, 40, 12);
    let after = rows(t.backend().buffer());
    assert_eq!(before[1..5], after[1..5], "the view did not move");
    insta::assert_snapshot!(t.backend());
    assert!(after.iter().any(|r| r.contains("new lines")), "{after:#?}");
    pane.scroll(crate::scroll::Scroll::Bottom);
    let t = draw_with(&mut pane, &theme, &hl, 40, 12);
    assert!(
        rows(t.backend().buffer())
            .iter()
            .any(|r| r.contains("and more"))
    );
}

#[test]
fn escape_sequences_are_shown_inert() {
    let mut pane = pane_with(&[
        (
            0,
            agent("Clear: \x1b[2J done. Clip: \x1b]52;c;ZXZpbA==\x07 end."),
        ),
        (
            0,
            call(
                "1",
                "bash: \x1b]0;pwned\x07ls",
                ToolKind::Execute,
                ToolCallStatus::Completed,
            ),
        ),
    ]);
    pane.toggle_tools();
    pane.apply(&update(
        "1",
        ToolCallUpdateFields::new().content(vec![ToolCallContent::from(text(
            "\x1b[31mred\x1b[0m\r\nline\x07bell",
        ))]),
    ));
    let t = draw(&mut pane, &dark(), 60, 12);
    insta::assert_snapshot!(t.backend());
    for cell in t.backend().buffer().content() {
        assert!(
            !cell.symbol().chars().any(char::is_control),
            "control character drawn: {:?}",
            cell.symbol()
        );
    }
}

#[test]
fn status_in_the_border() {
    let mut pane = AgentPane::new("agent 1");
    pane.set_config_options(&model_options());
    pane.apply(&SessionUpdate::UsageUpdate(
        UsageUpdate::new(45_600, 200_000)
            .cost(agent_client_protocol::v1::schema::Cost::new(0.42, "USD")),
    ));
    pane.turn_started();
    insta::assert_snapshot!(draw(&mut pane, &dark(), 70, 6).backend());
    let status = pane.status();
    assert_eq!(status.model.as_deref(), Some("Claude Sonnet"));
    assert_eq!(status.thinking.as_deref(), Some("high"));
    assert_eq!(
        (status.context_used, status.context_size),
        (Some(45_600), Some(200_000))
    );
}

#[test]
fn light_theme() {
    let mut pane = tool_pane();
    pane.submit_local("fix it");
    pane.apply(&agent("Fixed `b`, see **diff** above."));
    let t = draw(&mut pane, &light(), 60, 18);
    // Debug output lists each cell's style, so light and dark differ in the snapshot.
    insta::assert_snapshot!(format!("{:?}", t.backend().buffer()));
}

#[test]
fn dark_theme_styles() {
    let mut pane = tool_pane();
    pane.submit_local("fix it");
    pane.apply(&agent("Fixed `b`, see **diff** above."));
    let t = draw(&mut pane, &dark(), 60, 18);
    insta::assert_snapshot!(format!("{:?}", t.backend().buffer()));
}

#[test]
fn multiline_prompt_grows_to_a_third_of_the_pane() {
    let mut pane = pane_with(&[(0, agent("Ready."))]);
    pane.paste("first line\nsecond line\nthird\nfourth\nfifth\nsixth");
    let t = draw(&mut pane, &dark(), 40, 12);
    insta::assert_snapshot!(t.backend());
    let (_, y) = pane.cursor_position().unwrap();
    assert_eq!(y, 10, "the cursor follows the last line");
}

#[test]
fn a_narrow_pane_cuts_its_title_and_status_with_ellipses() {
    let mut pane = AgentPane::new("March · project");
    pane.set_config_options(&model_options());
    pane.apply(&SessionUpdate::SessionInfoUpdate(
        agent_client_protocol::v1::schema::SessionInfoUpdate::new()
            .title("fix the failing parser test"),
    ));
    pane.apply(&SessionUpdate::UsageUpdate(
        UsageUpdate::new(45_600, 200_000)
            .cost(agent_client_protocol::v1::schema::Cost::new(0.42, "USD")),
    ));
    pane.turn_started();
    for width in [28u16, 40, 60] {
        let t = draw(&mut pane, &dark(), width, 5);
        let top: String = (0..width)
            .map(|x| t.backend().buffer()[(x, 0)].symbol().to_string())
            .collect();
        assert!(top.starts_with("┌ March"), "{width}: {top}");
        assert!(top.ends_with(" ┐"), "{width}: {top}");
        // The title and the status never run into each other.
        assert!(top.contains("… "), "{width}: {top}");
        assert_eq!(crate::wrap::width(&top), usize::from(width), "{top}");
    }
    insta::assert_snapshot!(draw(&mut pane, &dark(), 28, 5).backend());
    assert_eq!(
        super::super::frame::share_border("title", "status", 10),
        ("title".to_string(), String::new())
    );
    assert_eq!(
        super::super::frame::share_border("a", "b", 10),
        ("a".to_string(), "b".to_string())
    );
}
